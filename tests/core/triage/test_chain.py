"""The hash chain's invariants (crp_core.triage.chain), on logs built without a database."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.decisions import COLUMNS, Decision
from crp_core.triage.chain import CHAINED_FIELDS, GENESIS, chained, jsonl_lines, verify_chain

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


def _log(notes: list[str]) -> list[dict]:
    rows, prev = [], GENESIS
    for i, note in enumerate(notes, 1):
        d = chained(Decision.dismiss("A", f"B{i}", operator="ann", note=note, decided_at=f"t{i}"), prev)
        rows.append({**d.to_dict(), "id": i})
        prev = d.entry_hash
    return rows


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8), st.data())
def test_any_change_to_one_field_is_named_at_that_entry(notes, data):
    rows = _log(notes)
    assert verify_chain(rows).ok and verify_chain(rows).head == rows[-1]["entry_hash"]
    k = data.draw(st.integers(0, len(rows) - 1))
    field = data.draw(st.sampled_from([f for f in CHAINED_FIELDS if f != "prev_hash"]))
    new = data.draw(texts.filter(lambda v: v != rows[k][field]))
    rows[k] = {**rows[k], field: new}
    v = verify_chain(rows)
    assert (v.ok, v.first_broken_id, v.entries) == (False, k + 1, k + 1)
    assert "a field of this entry was changed" in v.reason


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, min_size=3, max_size=8), st.data())
def test_removing_or_swapping_an_entry_breaks_the_chain_after_it(notes, data):
    rows = _log(notes)
    k = data.draw(st.integers(0, len(rows) - 2))
    removed = rows[:k] + rows[k + 1 :]
    v = verify_chain(removed)
    assert (v.ok, v.first_broken_id) == (False, rows[k + 1]["id"]) and "changed, removed or inserted" in v.reason
    swapped = rows[:k] + [rows[k + 1], rows[k]] + rows[k + 2 :]
    assert verify_chain(swapped).first_broken_id == rows[k + 1]["id"]


def test_removing_the_newest_entries_is_seen_only_through_the_head():
    rows = _log(["a", "b", "c"])
    short = verify_chain(rows[:2])
    head = verify_chain(rows).head
    assert short.ok and short.head != head
    kept = verify_chain(rows[:2], kept_head=head)
    assert (kept.ok, kept.first_broken_id, kept.entries, kept.total) == (False, None, 2, 2)
    assert kept.reason.startswith(f"the kept head {head[:16]}... is not an entry of this log")
    assert verify_chain(rows, kept_head=rows[0]["entry_hash"].upper()).ok  # entries appended since: fine


def test_a_broken_chain_counts_the_whole_log_and_has_no_head():
    rows = _log(["a", "b", "c", "d"])
    rows[1] = {**rows[1], "note": "edited"}
    v = verify_chain(rows)
    assert (v.ok, v.first_broken_id, v.entries, v.total, v.head) == (False, rows[1]["id"], 2, 4, None)
    assert v.to_dict()["total"] == 4


def test_a_value_no_version_writes_is_a_broken_entry_not_a_crash():
    rows = _log(["a", "b"])
    rows[1] = {**rows[1], "note": b"blob"}
    v = verify_chain(rows)
    assert (v.ok, v.first_broken_id) == (False, 2) and "a field holds a value the schema refuses" in v.reason


def test_jsonl_lines_keep_the_column_order():
    d = chained(Decision.dismiss("A", "B", operator="ann", decided_at="t"), GENESIS)
    line = jsonl_lines([d])
    assert line.endswith("\n") and line.count("\n") == 1
    assert line.startswith('{"id": null, "pair_key": "A|B", "fact_a": "A", "fact_b": "B", "kind": "dismiss"')
    assert list(COLUMNS)[-2:] == ["prev_hash", "entry_hash"]

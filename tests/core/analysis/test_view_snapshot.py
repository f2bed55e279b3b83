"""The view snapshot format (crp_core.analysis.view_snapshot): written and read back equal, every refusal
names its line and field, the KB check names both knowledge bases."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crp_core import CRPConfig, Decision, DecisionSet, ViewSnapshotError, read_view_snapshot, view_snapshot_bytes
from crp_core.analysis.view_snapshot import MAX_VIEW_SNAPSHOT_BYTES

SCENARIO = {"name": "s", "query": {"text": "ports"}, "sub_queries": [], "fanout_width": 3}


def _decisions() -> DecisionSet:
    rows = [
        Decision.override("E1", "E2", winner="E2", operator="fay", id=1, decided_at="2026-11-01T00:00:00Z"),
        Decision.mark_status("T1", "T2", fact="T2", status="STALE", operator="hal", id=2, role="admin"),
        Decision.dismiss("X1", "X2", operator="ida", id=3, origin="dashboard", note="two services"),
    ]
    return DecisionSet.from_decisions(rows)


def _bytes(**over: object) -> bytes:
    parts: dict[str, object] = dict(
        kb_fingerprint="ab" * 32,
        kb_origin="sample",
        kb_name="knowledge_base.jsonl",
        scenario_name="payments.json",
        scenario_edited=True,
        scenario=SCENARIO,
        config=CRPConfig().with_set_args(["envelope_fact_budget=3", "ttl_days.news=10"]),
        decisions=_decisions(),
        page="tuning",
        params={"tab": "Before / after", "ba_width": "4"},
    )
    parts.update(over)
    return view_snapshot_bytes(**parts)


def test_a_snapshot_reads_back_what_was_written():
    snap = read_view_snapshot(_bytes())
    assert (snap.kb_fingerprint, snap.kb_origin, snap.kb_name) == ("ab" * 32, "sample", "knowledge_base.jsonl")
    assert (snap.scenario_name, snap.scenario_edited, dict(snap.scenario)) == ("payments.json", True, SCENARIO)
    assert dict(snap.config) == {"envelope_fact_budget": 3, "ttl_days.news": 10}
    assert (snap.page, dict(snap.params)) == ("tuning", {"ba_width": "4", "tab": "Before / after"})
    assert [(d.id, d.kind, d.winner, d.target_fact, d.operator, d.role) for d in snap.decisions] == [
        (1, "override", "E2", None, "fay", "operator"),
        (2, "mark_status", None, "T2", "hal", "admin"),
        (3, "dismiss", None, None, "ida", "operator"),
    ]
    ds = snap.decision_set()
    assert ds.to_dict() == _decisions().to_dict()
    assert snap.kb_mismatch("ab" * 32, "knowledge_base.jsonl") is None
    why = snap.kb_mismatch("cd" * 32, "mine.jsonl")
    assert why is not None
    assert "taken on KB knowledge_base.jsonl (bundled sample), fingerprint abababababababab…" in why
    assert "the loaded KB is mine.jsonl, fingerprint cdcdcdcdcdcdcdcd…" in why


def _refused(doc_or_bytes: object) -> list[str]:
    data = doc_or_bytes if isinstance(doc_or_bytes, bytes) else json.dumps(doc_or_bytes, indent=2).encode()
    with pytest.raises(ViewSnapshotError) as err:
        read_view_snapshot(data, "s.json")
    return [str(p) for p in err.value.problems]


def test_every_refusal_names_its_line_and_field():
    doc = json.loads(_bytes())
    doc["format"] = "something else"
    doc["kb"]["origin"] = "the moon"
    doc["config"]["no_such_key"] = 1
    doc["decisions"][0]["kind"] = "shred"
    doc["decisions"][1]["operator"] = 5
    doc["view"]["params"]["tab"] = 5
    doc["extra"] = True
    got = _refused(doc)
    fields = [p.split("field '")[1].split("'")[0] for p in got]
    assert fields == [
        "extra",
        "format",
        "kb.origin",
        "config",
        "decisions[0].kind",
        "decisions[1].operator",
        "view.params.tab",
    ], got
    assert all(p.startswith("line ") for p in got), got


def test_not_json_too_large_and_not_an_object_are_refused():
    assert _refused(b'{"format": 1,\n,}') == [
        "line 2, field '(document)': Expecting property name enclosed in double quotes at line 2, column 1"
    ]
    assert "more than the 4194304" in _refused(b" " * (MAX_VIEW_SNAPSHOT_BYTES + 1))[0]
    assert _refused(b"[1, 2]") == ["line 1, field '(document)': must be an object, not a list"]
    assert "not UTF-8" in _refused(b'{"a": "\xff"}')[0]


@given(st.binary(max_size=300))
def test_any_bytes_are_read_or_refused_never_raise_otherwise(data: bytes):
    try:
        read_view_snapshot(data)
    except ViewSnapshotError as exc:
        assert exc.problems

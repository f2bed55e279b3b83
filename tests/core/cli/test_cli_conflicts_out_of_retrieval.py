"""``crp-inspect conflicts`` and the pairs an operator's QUARANTINED / DELETED mark took out of the scan: listed
apart, as the Conflicts page's "Out of retrieval" list (docs/decisions/triage.md, "Out of retrieval";
docs/reference/reports.md#conflicts---json-and---csv). The summary always lists them under their own heading;
``--json`` / ``--csv`` are the scan's pairs alone, byte for byte, unless ``--out-of-retrieval`` appends them, their
ruling null (no envelope holds them: nothing to act on) and their marks in ``out_of_retrieval``.

The CKF of :mod:`tests.support.conflict_rows`: conflicting pairs G1|G2 (a tie), F1|F2 and F2|F3."""

from __future__ import annotations

import csv
import io
import json

import pytest

from crp_core.cli.conflicts import ASIDE_CSV_COLUMNS, CSV_COLUMNS, RULING_FIELDS
from crp_core.decisions import Decision
from crp_core.triage import DecisionStore
from tests.support.conflict_rows import NOW, ROWS, fact, run, write_rows


@pytest.fixture
def store(tmp_path):
    """A triage store in which ana overrode G1|G2 (a pair of the scan) and F1|F2, then rosa quarantined F2 (a note
    saying why): F1|F2 and F2|F3 are out of retrieval."""
    db = tmp_path / "team.sqlite"
    with DecisionStore(db) as s:
        s.record(Decision.override("G1", "G2", winner="G2", operator="ana"))
        s.record(Decision.override("F1", "F2", winner="F2", operator="ana"))
        s.record(Decision.mark_status("F1", "F2", fact="F2", status="QUARANTINED", operator="rosa", note="old page"))
    return str(db)


@pytest.fixture
def args(tmp_path):
    return ("--ckf", write_rows(tmp_path / "kb.jsonl"), "--now", NOW, "--cache-dir", str(tmp_path / "c"))


def _scan_alone(ckf: str, db: str) -> tuple[str, str]:
    """The JSON and CSV of the scan alone, as the command wrote them before it listed the pairs out of retrieval:
    the store's statuses applied to the CKF, then the scan of that CKF under the store's pair decisions."""
    from crp_core.analysis.scan_input import scan_corpus
    from crp_core.cli.common import now_arg
    from crp_core.cli.conflicts import csv_text, json_text
    from crp_core.config import layered_config
    from crp_core.engines import scan_with_engine
    from crp_core.io.ckf import load_ckf
    from crp_core.triage import apply_to_kb

    config = layered_config(None, None, [])
    with DecisionStore(db, create=False, readonly=True) as s:
        decisions = s.current()
    kb = apply_to_kb(load_ckf(ckf), decisions)
    now = now_arg(NOW)
    assert now is not None
    scan = scan_with_engine(scan_corpus(kb, config=config), config, now, decisions=decisions)
    return json_text(scan, kb, config) + "\n", csv_text(scan, kb)


def test_the_summary_lists_the_pairs_out_of_retrieval_apart_with_the_mark_and_names_the_flag(args, store, capsys):
    status, out, err = run(capsys, *args, "--triage-db", store)
    assert status == 0, err
    assert "conflicting pairs: 1 (0 tied, unresolved)\n" in out  # G1|G2 only (overridden): F2 reaches no envelope
    head = (
        "\nout of retrieval: 2 pairs whose fact an operator marked QUARANTINED or DELETED (out of the scan and its "
        "counts above; an ACTIVE or STALE mark brings a pair back); in --json / --csv with --out-of-retrieval\n"
    )
    assert head in out
    lines = out[out.index(head) + len(head) :].splitlines()
    assert lines[0].startswith("   1. F1 vs F2  NUMBER_CHANGED  F2 QUARANTINED by rosa (decision #3, ")
    assert lines[0].endswith("): old page  (operator: override)")
    assert lines[1].startswith("   2. F2 vs F3  NUMBER_CHANGED  F2 QUARANTINED by rosa (decision #3, ")
    assert lines[1].endswith("): old page")
    assert lines[2] == ""  # then the timings
    status, out, _ = run(capsys, *args, "--triage-db", store, "--top", "1")
    assert "brings a pair back); first 1; in --json / --csv with --out-of-retrieval\n" in out
    assert "   1. F1 vs F2  NUMBER_CHANGED" in out and "F2 vs F3" not in out.split("out of retrieval:")[1]


def test_without_a_mark_out_of_retrieval_the_summary_says_nothing_of_it(args, capsys, tmp_path):
    db = tmp_path / "stale.sqlite"
    with DecisionStore(db) as s:
        s.record(Decision.mark_status("F1", "F2", fact="F2", status="STALE", operator="rosa"))
    for extra in (("--triage-db", str(db)), ("--no-triage-db",)):
        status, out, _ = run(capsys, *args, *extra)
        assert status == 0 and "out of retrieval" not in out


@pytest.mark.parametrize("fmt", ["--json", "--csv"])
def test_by_default_json_and_csv_are_the_scan_alone_byte_for_byte_under_a_quarantine(args, store, capsys, fmt):
    """A script reading the report by default reads what it read before pairs out of retrieval were listed: the
    same items, the same columns, the same bytes; nothing of the pairs out of retrieval."""
    status, out, err = run(capsys, *args, "--triage-db", store, fmt)
    assert status == 0, err
    alone_json, alone_csv = _scan_alone(args[1], store)
    assert out == (alone_json if fmt == "--json" else alone_csv)
    if fmt == "--json":
        (pair,) = json.loads(out)  # G1|G2: F1|F2 and F2|F3 are not in the list
        assert "out_of_retrieval" not in pair and (pair["fact_a"], pair["kept"]) == ("G1", ["G2"])
    else:
        head, *body = list(csv.reader(io.StringIO(out)))
        assert tuple(head) == CSV_COLUMNS and "out_of_retrieval" not in head
        assert [(r[0], r[1]) for r in body] == [("G1", "G2")]


def test_json_with_the_flag_appends_the_pairs_apart_with_their_marks_and_no_ruling(args, store, capsys):
    """The scan's pairs as without the flag, then the pairs out of retrieval in triage order: their detection,
    texts and the pair's decision in the store, the marks in force, and every ruling field null."""
    _, alone, _ = run(capsys, *args, "--triage-db", store, "--json")
    status, out, err = run(capsys, *args, "--triage-db", store, "--json", "--out-of-retrieval")
    assert status == 0, err
    got = json.loads(out)
    assert out.startswith(alone[: -len("\n]\n")]) and json.loads(alone) == got[:1]
    apart = got[1:]
    assert [(p["fact_a"], p["fact_b"]) for p in apart] == [("F1", "F2"), ("F2", "F3")]
    (mark,) = apart[0]["out_of_retrieval"]
    assert mark == {
        "fact": "F2",
        "status": "QUARANTINED",
        "decision_id": 3,
        "operator": "rosa",
        "decided_at": mark["decided_at"],
        "note": "old page",
    }
    assert mark["decided_at"].endswith("Z") and apart[1]["out_of_retrieval"] == [mark]
    for p in apart:
        assert {k: p[k] for k in RULING_FIELDS} == dict.fromkeys(RULING_FIELDS)
        assert list(p) == [*got[0], "out_of_retrieval"]  # the scan's keys in their order, then the marks
        assert p["patterns"] == ["NUMBER_CHANGED"] and set(p["authority"]) == {p["fact_a"], p["fact_b"]}
    assert {"kept", "suppressed", "tied", "margin", "close_margin"} <= set(RULING_FIELDS)
    assert (apart[0]["decision"], apart[1]["decision"]) == ("override", None)  # recorded, not applied
    assert apart[0]["content_b"] == ROWS[1]["content"]


def test_the_flag_appends_nothing_when_no_mark_takes_a_fact_out(args, capsys):
    _, plain, _ = run(capsys, *args, "--no-triage-db", "--json")
    status, out, _ = run(capsys, *args, "--no-triage-db", "--json", "--out-of-retrieval")
    assert status == 0 and out == plain and len(json.loads(out)) == 3


def test_csv_with_the_flag_carries_the_marks_in_a_last_column_and_no_ruling(args, store, capsys):
    status, out, err = run(capsys, *args, "--triage-db", store, "--csv", "--out-of-retrieval")
    assert status == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert tuple(rows[0]) == ASIDE_CSV_COLUMNS == (*CSV_COLUMNS, "out_of_retrieval")
    body = [dict(zip(ASIDE_CSV_COLUMNS, r, strict=True)) for r in rows[1:]]
    assert [(r["fact_a"], r["fact_b"], r["out_of_retrieval"] != "") for r in body] == [
        ("G1", "G2", False),
        ("F1", "F2", True),
        ("F2", "F3", True),
    ]
    assert (body[0]["kept"], body[0]["tied"]) == ("G2", "false")  # the scan's pair keeps its ruling
    cell = body[1]["out_of_retrieval"]
    assert cell.startswith("F2 QUARANTINED by rosa (decision #3, ") and cell.endswith("): old page")
    for r in body[1:]:
        assert [r[c] for c in ("tied", "kept", "suppressed", "margin")] == ["", "", "", ""]
        assert r["patterns"] == "NUMBER_CHANGED" and r["authority_a"] != ""
    assert body[1]["decision"] == "override"


def test_the_flag_without_json_or_csv_is_refused_before_anything_is_read(capsys, tmp_path):
    status, out, err = run(capsys, "--ckf", str(tmp_path / "absent.jsonl"), "--out-of-retrieval")
    assert status == 2 and out == ""
    assert err == (
        "crp-inspect: error: --out-of-retrieval applies to --json / --csv (the summary always lists those pairs)\n"
    )


def test_the_mark_in_a_csv_cell_cannot_run_as_a_formula_nor_a_note_break_the_summary(tmp_path, capsys):
    """A fact id a spreadsheet would run as a formula heads the cell: written with the apostrophe of every CSV
    report; a note on two lines stays on its line of the summary."""
    rows = [
        fact("=cmd|' /C calc'!A0", "etcd port is 2379", [1, 0.3, 0, 0, 0, 0, 0, 0]),
        fact("@SUM(1+1)", "etcd port is 4001", [1, 0, 0.3, 0, 0, 0, 0, 0], source_type="community"),
    ]
    path = tmp_path / "kb.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    db = tmp_path / "t.sqlite"
    with DecisionStore(db) as s:
        pair = sorted(r["fact_id"] for r in rows)
        note = '=HYPERLINK("http://x")\nsecond line'
        s.record(Decision.mark_status(*pair, fact="@SUM(1+1)", status="DELETED", operator="rosa", note=note))
    args = ("--ckf", str(path), "--now", NOW, "--cache-dir", str(tmp_path / "c"), "--triage-db", str(db))
    status, out, err = run(capsys, *args, "--csv")
    assert status == 0, err
    assert out == ",".join(CSV_COLUMNS) + "\n"  # the only pair is out of retrieval: the header alone
    status, out, err = run(capsys, *args, "--csv", "--out-of-retrieval")
    assert status == 0, err
    (row,) = [dict(zip(ASIDE_CSV_COLUMNS, r, strict=True)) for r in list(csv.reader(io.StringIO(out)))[1:]]
    assert row["out_of_retrieval"].startswith("'@SUM(1+1) DELETED by rosa")
    for cell in row.values():
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    status, out, _ = run(capsys, *args)
    (line,) = [x for x in out.splitlines() if "DELETED by rosa" in x]
    assert line.endswith(': =HYPERLINK("http://x")\\nsecond line')

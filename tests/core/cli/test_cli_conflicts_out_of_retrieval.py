"""``crp-inspect conflicts`` and the pairs an operator's QUARANTINED / DELETED mark took out of the scan: listed
apart, as the Conflicts page's "Out of retrieval" list (docs/decisions/triage.md, "Out of retrieval";
docs/reference/reports.md#conflicts---json-and---csv). The scan itself is the scan of the CKF with every status in
force, byte for byte, before the pairs apart.

The CKF of :mod:`tests.support.conflict_rows`: conflicting pairs G1|G2 (a tie), F1|F2 and F2|F3."""

from __future__ import annotations

import csv
import io
import json

import pytest

from crp_core.cli.conflicts import CSV_COLUMNS
from crp_core.decisions import Decision
from crp_core.triage import DecisionStore
from tests.support.conflict_rows import NOW, ROWS, fact, run, write_rows


@pytest.fixture
def store(tmp_path):
    """A triage store in which rosa quarantined F2 (a note saying why) after ana overrode F1|F2."""
    db = tmp_path / "team.sqlite"
    with DecisionStore(db) as s:
        s.record(Decision.override("F1", "F2", winner="F2", operator="ana"))
        s.record(Decision.mark_status("F1", "F2", fact="F2", status="QUARANTINED", operator="rosa", note="old page"))
    return str(db)


@pytest.fixture
def args(tmp_path):
    return ("--ckf", write_rows(tmp_path / "kb.jsonl"), "--now", NOW, "--cache-dir", str(tmp_path / "c"))


def test_the_summary_lists_the_pairs_out_of_retrieval_apart_with_the_mark(args, store, capsys):
    status, out, err = run(capsys, *args, "--triage-db", store)
    assert status == 0, err
    assert "conflicting pairs: 1 (1 tied, unresolved)\n" in out  # G1|G2 only: F2 reaches no envelope
    head = (
        "\nout of retrieval: 2 pairs whose fact an operator marked QUARANTINED or DELETED (out of the scan and its "
        "counts above; an ACTIVE or STALE mark brings a pair back)\n"
    )
    assert head in out
    lines = out[out.index(head) + len(head) :].splitlines()
    assert lines[0].startswith("   1. F1 vs F2  NUMBER_CHANGED  F2 QUARANTINED by rosa (decision #2, ")
    assert lines[0].endswith("): old page  (operator: override)")
    assert lines[1].startswith("   2. F2 vs F3  NUMBER_CHANGED  F2 QUARANTINED by rosa (decision #2, ")
    assert lines[1].endswith("): old page")
    assert lines[2] == ""  # then the timings
    status, out, _ = run(capsys, *args, "--triage-db", store, "--top", "1")
    assert "brings a pair back); first 1, --json / --csv list every one\n" in out
    assert "   1. F1 vs F2  NUMBER_CHANGED" in out and "F2 vs F3" not in out.split("out of retrieval:")[1]


def test_without_a_mark_out_of_retrieval_the_summary_says_nothing_of_it(args, capsys, tmp_path):
    db = tmp_path / "stale.sqlite"
    with DecisionStore(db) as s:
        s.record(Decision.mark_status("F1", "F2", fact="F2", status="STALE", operator="rosa"))
    for extra in (("--triage-db", str(db)), ("--no-triage-db",)):
        status, out, _ = run(capsys, *args, *extra)
        assert status == 0 and "out of retrieval" not in out


def test_json_lists_the_scan_of_every_status_then_the_pairs_apart(args, store, capsys, tmp_path):
    """The pairs of the scan are the bytes of a scan of the CKF whose F2 is QUARANTINED; the pairs apart follow in
    triage order, each a conflict pair with ``out_of_retrieval``: the mark in force."""
    status, out, err = run(capsys, *args, "--triage-db", store, "--json")
    assert status == 0, err
    got = json.loads(out)
    rows = [dict(r, status="QUARANTINED") if r["fact_id"] == "F2" else r for r in ROWS]
    marked = tmp_path / "marked.jsonl"
    marked.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    _, alone, _ = run(capsys, "--ckf", str(marked), *args[2:], "--no-triage-db", "--json")
    assert out.startswith(alone[: -len("\n]\n")]) and json.loads(alone) == got[:1]
    assert "out_of_retrieval" not in got[0]
    apart = got[1:]
    assert [(p["fact_a"], p["fact_b"]) for p in apart] == [("F1", "F2"), ("F2", "F3")]
    (mark,) = apart[0]["out_of_retrieval"]
    assert mark == {
        "fact": "F2",
        "status": "QUARANTINED",
        "decision_id": 2,
        "operator": "rosa",
        "decided_at": mark["decided_at"],
        "note": "old page",
    }
    assert mark["decided_at"].endswith("Z") and apart[1]["out_of_retrieval"] == [mark]
    assert (apart[0]["decision"], apart[0]["kept"], apart[0]["suppressed"]) == ("override", ["F2"], "F1")
    assert apart[0]["content_b"] == ROWS[1]["content"] and "relative_margin" in apart[0]


def test_csv_carries_the_mark_in_its_last_column(args, store, capsys):
    status, out, err = run(capsys, *args, "--triage-db", store, "--csv")
    assert status == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert tuple(rows[0]) == CSV_COLUMNS and CSV_COLUMNS[-1] == "out_of_retrieval"
    body = [dict(zip(CSV_COLUMNS, r)) for r in rows[1:]]
    assert [(r["fact_a"], r["fact_b"], r["out_of_retrieval"] != "") for r in body] == [
        ("G1", "G2", False),
        ("F1", "F2", True),
        ("F2", "F3", True),
    ]
    cell = body[1]["out_of_retrieval"]
    assert cell.startswith("F2 QUARANTINED by rosa (decision #2, ") and cell.endswith("): old page")
    assert body[1]["decision"] == "override"


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
    (row,) = [dict(zip(CSV_COLUMNS, r)) for r in list(csv.reader(io.StringIO(out)))[1:]]
    assert row["out_of_retrieval"].startswith("'@SUM(1+1) DELETED by rosa")
    for cell in row.values():
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    status, out, _ = run(capsys, *args)
    (line,) = [x for x in out.splitlines() if "DELETED by rosa" in x]
    assert line.endswith(': =HYPERLINK("http://x")\\nsecond line')

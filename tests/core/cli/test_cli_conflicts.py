"""``crp-inspect conflicts``: JSON / CSV / summary output of the whole-CKF scan."""

from __future__ import annotations

import csv
import io
import json

import pytest

from crp_core.cli import main
from crp_core.cli.conflicts import CSV_COLUMNS
from tests.support.conflict_rows import NOW, ROWS, fact, run, write_rows


@pytest.fixture
def ckf(tmp_path):
    return write_rows(tmp_path / "kb.jsonl")


def test_json_lists_pairs_in_triage_order(ckf, tmp_path, capsys):
    status, out, err = run(capsys, "--ckf", ckf, "--now", NOW, "--cache-dir", str(tmp_path / "c"), "--json")
    assert status == 0, err
    pairs = json.loads(out)
    assert [(p["fact_a"], p["fact_b"]) for p in pairs] == [("G1", "G2"), ("F1", "F2"), ("F2", "F3")]
    tie, won, won2 = pairs
    assert tie["tied"] is True and tie["suppressed"] is None and tie["kept"] == ["G1", "G2"]
    assert tie["margin"] == 0.0 and tie["patterns"] == ["NUMBER_CHANGED"]
    assert won["kept"] == ["F1"] and won["suppressed"] == "F2" and won["tied"] is False
    # F1: 0.80 x 1.0 x 0.80 = 0.64 ; F2: community 0.75 x 0.30 (past its 365-day ttl) x 0.60 = 0.135
    assert won["authority"]["F1"]["authority"] == pytest.approx(0.64)
    assert won["authority"]["F2"] == {
        "source_type": "community",
        "source_authority": 0.75,
        "recency_factor": 0.3,
        "importance_weight": 0.6,
        "authority": pytest.approx(0.135),
    }
    assert won["margin"] == pytest.approx(0.505)
    assert won["content_a"] == ROWS[0]["content"] and won["content_b"] == ROWS[1]["content"]
    assert won["diffs"] == [
        {
            "pattern": "NUMBER_CHANGED",
            "tokens_a": ["2379"],
            "tokens_b": ["4001"],
            "span_a": [32, 36],
            "span_b": [32, 36],
        }
    ]
    for key in ("fact_a", "fact_b", "similarity", "patterns", "authority", "kept", "suppressed", "tied", "margin"):
        assert key in won  # docs/reference/reports.md conflict fields + margin
    assert won2["suppressed"] == "F2"  # each pair arbitrated on its own


def test_json_is_byte_identical_for_the_same_input(ckf, tmp_path, capsys):
    args = ("--ckf", ckf, "--now", NOW, "--cache-dir", str(tmp_path / "c"), "--json")
    _, first, _ = run(capsys, *args)
    _, second, _ = run(capsys, *args)
    assert first == second and first.endswith("]\n")


def test_csv_one_flat_row_per_pair(ckf, tmp_path, capsys):
    status, out, _ = run(capsys, "--ckf", ckf, "--now", NOW, "--cache-dir", str(tmp_path / "c"), "--csv")
    assert status == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert tuple(rows[0]) == CSV_COLUMNS
    body = [dict(zip(CSV_COLUMNS, r)) for r in rows[1:]]
    assert [(r["fact_a"], r["fact_b"]) for r in body] == [("G1", "G2"), ("F1", "F2"), ("F2", "F3")]
    r = body[1]
    assert r["patterns"] == "NUMBER_CHANGED" and r["tied"] == "false" and r["suppressed"] == "F2"
    assert r["kept"] == "F1" and float(r["authority_b"]) == pytest.approx(0.135)
    assert r["source_type_b"] == "community" and r["recency_factor_b"] == "0.3"
    assert r["changes"] == "NUMBER_CHANGED: 2379 -> 4001"
    assert r["content_a"] == ROWS[0]["content"] and r["content_b"] == ROWS[1]["content"]
    assert body[0]["tied"] == "true" and body[0]["kept"] == "G1;G2" and body[0]["suppressed"] == ""
    assert {r["learned"] for r in body} == {"false"}  # the rules found every pair


def test_summary_counts_and_top_pairs(ckf, tmp_path, capsys):
    status, out, _ = run(capsys, "--ckf", ckf, "--now", NOW, "--cache-dir", str(tmp_path / "c"))
    assert status == 0
    assert "6 retrievable fact(s) scanned" in out
    assert "conflicting pairs: 3 (1 tied, unresolved)" in out
    assert "NUMBER_CHANGED       3" in out
    assert "G1 vs G2" in out and "TIED" in out and "winner F1, suppress F2" in out


def test_set_changes_the_threshold(ckf, tmp_path, capsys):
    status, out, _ = run(
        capsys,
        "--ckf",
        ckf,
        "--now",
        NOW,
        "--cache-dir",
        str(tmp_path / "c"),
        "--set",
        "contradiction_similarity=0.95",
        "--json",
    )
    assert status == 0 and json.loads(out) == []


def test_bad_inputs_are_clear_errors(ckf, tmp_path, capsys):
    status, _, err = run(capsys, "--ckf", ckf, "--set", "no_such_key=1", "--json")
    assert status == 2 and "no_such_key" in err and "Traceback" not in err
    status, _, err = run(capsys, "--ckf", ckf, "--now", "yesterday", "--json")
    assert status == 2 and "--now" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"fact_id": "x", "content": "c", "source_type": "blog"}) + "\n", encoding="utf-8")
    status, _, err = run(capsys, "--ckf", str(bad), "--json")
    assert status == 2 and "line 1" in err and "source_type" in err
    with pytest.raises(SystemExit):
        main(["conflicts", "--ckf", ckf, "--json", "--csv"])


def test_csv_cells_that_look_like_formulas_are_written_as_text(tmp_path, capsys):
    """Ids and contents a spreadsheet would run as a formula get an apostrophe (issue 32, hostile item 6)."""
    rows = [
        fact("=cmd|' /C calc'!A0", '=HYPERLINK("http://x") etcd port is 2379', [1, 0.3, 0, 0, 0, 0, 0, 0]),
        fact("@SUM(1+1)", "-1+1 etcd port is 4001", [1, 0, 0.3, 0, 0, 0, 0, 0], source_type="community"),
    ]
    path = tmp_path / "kb.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    status, out, err = run(capsys, "--ckf", str(path), "--now", NOW, "--cache-dir", str(tmp_path / "c"), "--csv")
    assert status == 0, err
    body = [dict(zip(CSV_COLUMNS, r)) for r in list(csv.reader(io.StringIO(out)))[1:]]
    assert len(body) == 1
    row = body[0]
    assert {row["fact_a"], row["fact_b"]} == {"'=cmd|' /C calc'!A0", "'@SUM(1+1)"}
    assert row["content_a"].startswith("'") and row["content_b"].startswith("'")
    for cell in row.values():
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    assert float(row["similarity"]) > 0 and float(row["authority_a"]) > 0  # numbers stay numbers


# ---- the winner's flags: a close margin, both facts expired (figures by hand) ----------------------
LATER = "2027-07-01T00:00:00Z"  # F1's 365-day TTL ended 2027-05-01, F2's long before


def _pairs(capsys, ckf, tmp_path, *extra):
    status = main(["conflicts", "--ckf", ckf, "--cache-dir", str(tmp_path / "c"), "--json", *extra])
    out, err = capsys.readouterr()
    assert status == 0, err
    return {(p["fact_a"], p["fact_b"]): p for p in json.loads(out)}


def test_json_carries_the_flags(ckf, tmp_path, capsys):
    pairs = _pairs(capsys, ckf, tmp_path, "--now", "2026-06-01T00:00:00Z")
    won = pairs["F1", "F2"]
    # F1 0.80 x 1.0 x 0.80 = 0.64 ; F2 0.75 x 0.30 x 0.60 = 0.135: margin 0.505, 0.505 / 0.64 of the larger
    assert won["relative_margin"] == pytest.approx(0.505 / 0.64)
    assert won["close_margin"] is False and won["both_expired"] is False
    tie = pairs["G1", "G2"]
    assert tie["relative_margin"] == 0.0 and tie["close_margin"] is False  # a tie is not a close call


def test_both_expired_and_a_close_margin(ckf, tmp_path, capsys):
    pairs = _pairs(capsys, ckf, tmp_path, "--now", LATER)
    won = pairs["F1", "F2"]
    # both at the floor: F1 0.80 x 0.30 x 0.80 = 0.192 ; F2 0.135: relative margin 0.057 / 0.192
    assert won["both_expired"] is True
    assert won["relative_margin"] == pytest.approx(0.057 / 0.192)
    assert won["close_margin"] is False
    pairs = _pairs(capsys, ckf, tmp_path, "--now", LATER, "--set", "winner_margin_warn=0.3")
    assert pairs["F1", "F2"]["close_margin"] is True


def test_the_summary_warns(ckf, tmp_path, capsys):
    argv = ["conflicts", "--ckf", ckf, "--cache-dir", str(tmp_path / "c"), "--now", LATER]
    assert main([*argv, "--set", "winner_margin_warn=0.3"]) == 0
    out = capsys.readouterr().out
    assert (
        "WARNING: close call: the margin 0.0570 is 29.69% of the larger authority, below winner_margin_warn 30.00%"
        in out
    )
    assert "WARNING: both facts expired (past their TTL or STALE)" in out
    assert main([*argv[:-2], "--now", "2026-06-01T00:00:00Z"]) == 0
    assert "WARNING" not in capsys.readouterr().out


LEARNED_ROWS = [
    fact("T1", "Tickets cost 12 euros for adults and 6 euros for children.", [1, 0.33, 0], source_type="internal"),
    fact("T2", "Children pay 12 euros and adults pay 6 euros.", [1, 0, 0.33], source_type="internal"),
]


def test_a_pair_of_the_learned_comparison_says_so_and_the_switch_turns_it_off(tmp_path, capsys):
    path = tmp_path / "learned.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in LEARNED_ROWS) + "\n", encoding="utf-8")
    args = ("--ckf", str(path), "--now", NOW, "--cache-dir", str(tmp_path / "c"))
    status, out, err = run(capsys, *args, "--json")
    assert status == 0, err
    (pair,) = json.loads(out)
    assert (pair["patterns"], pair["learned"]) == (["NUMBER_CHANGED"], True)
    status, out, _ = run(capsys, *args)
    assert status == 0 and "T1 vs T2" in out and "NUMBER_CHANGED (learned)" in out
    status, out, _ = run(capsys, *args, "--csv")
    (row,) = [dict(zip(CSV_COLUMNS, r)) for r in list(csv.reader(io.StringIO(out)))[1:]]
    assert status == 0 and (row["patterns"], row["learned"]) == ("NUMBER_CHANGED", "true")
    status, out, _ = run(capsys, *args, "--json", "--set", "detector_learned=false")
    assert status == 0 and json.loads(out) == []


def test_a_pair_of_the_rules_carries_no_learned_field(ckf, tmp_path, capsys):
    _, out, _ = run(capsys, "--ckf", ckf, "--now", NOW, "--cache-dir", str(tmp_path / "c"), "--json")
    assert all("learned" not in p for p in json.loads(out))


@pytest.mark.parametrize("top, said", [("-1", "must be at least 0, got -1"), ("x", "not a whole number: 'x'")])
def test_a_negative_or_bad_top_is_refused(ckf, capsys, top, said):
    with pytest.raises(SystemExit) as exc:
        main(["conflicts", "--ckf", str(ckf), "--top", top])
    assert exc.value.code == 2 and f"argument --top: {said}" in capsys.readouterr().err


def test_the_operators_decisions_apply_as_in_the_dashboards_queue(ckf, tmp_path, capsys, monkeypatch):
    """As every pipeline command: the store's pair decisions arbitrate the scan's pairs (an override names the
    winner, a dismissal leaves the pair alone) and the summary names the store; --no-triage-db applies none."""
    from crp_core.decisions import Decision
    from crp_core.triage import DecisionStore

    monkeypatch.delenv("CRP_INSPECT_TRIAGE_DB")
    db = tmp_path / "team.sqlite"
    with DecisionStore(db) as store:
        store.record(Decision.override("F1", "F2", winner="F2", operator="alice"))
        store.record(Decision.dismiss("G1", "G2", operator="bob"))
    args = ("--ckf", ckf, "--now", NOW, "--cache-dir", str(tmp_path / "c"))
    status, out, err = run(capsys, *args, "--json", "--triage-db", str(db))
    assert status == 0, err
    got = {(p["fact_a"], p["fact_b"]): (p["decision"], p["kept"], p["suppressed"]) for p in json.loads(out)}
    assert got[("F1", "F2")] == ("override", ["F2"], "F1")
    assert got[("G1", "G2")] == ("dismiss", ["G1", "G2"], None)
    assert got[("F2", "F3")][0] is None  # no decision on that pair: authority decides
    status, out, _ = run(capsys, *args, "--triage-db", str(db))
    assert status == 0 and f"operator decisions: 2 in force from {db}\n" in out
    assert "winner F2, suppress F1 (operator: override)" in out and "dismissed by the operator" in out
    status, out, _ = run(capsys, *args, "--json", "--no-triage-db")
    assert {p["decision"] for p in json.loads(out)} == {None}


def test_run_warns_and_marks_a_pair_as_conflicts_does(ckf, tmp_path, capsys):
    """`run` lists the pairs of its envelope with the flags and the learned mark `conflicts` prints (a
    walk-through saw the both-expired warning and "(learned)" in one and not in the other)."""
    from crp_core.io.scenario import dump_scenario
    from tests.support.factories import make_scenario

    def scenario(dim: int) -> str:
        path = tmp_path / f"s{dim}.json"
        path.write_text(dump_scenario(make_scenario([1] + [0] * (dim - 1), now=LATER), "json"), encoding="utf-8")
        return str(path)

    argv = ["run", "--ckf", ckf, "--scenario", scenario(8), "--cache-dir", str(tmp_path / "c"), "--no-triage-db"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("  F1 vs F2:") or x.startswith("  F2 vs F1:"))
    after = out.splitlines()[out.splitlines().index(line) + 1]
    assert after == (
        "      WARNING: both facts expired (past their TTL or STALE): recency no longer separates them, "
        "source authority x importance decides"
    )
    path = tmp_path / "learned.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in LEARNED_ROWS) + "\n", encoding="utf-8")
    assert (
        main(
            ["run", "--ckf", str(path), "--scenario", scenario(3), "--cache-dir", str(tmp_path / "d"), "--no-triage-db"]
        )
        == 0
    )
    assert "NUMBER_CHANGED (learned)" in capsys.readouterr().out

"""The operator decisions every pipeline command applies (``crp_core.cli.operator_decisions``): ``--triage-db``,
else ``$CRP_INSPECT_TRIAGE_DB`` when it names an existing store, ``--no-triage-db`` for none; the same numbers
the dashboard's Suite tab shows, said on stderr when they come from the environment and carried in the reports.

On the tiny suite of ``tests.support.suites`` (no model): scenario ``s1`` expects A (official, fresh) to win
over B (version-specific, expired) and must include A, C, D. A person's override "B wins" suppresses A, so B is
packed: recall 2/3 -> 1/3 (A gone; D is on another axis and was never selected), leaks {E} -> {E, B}, wrong
winners 1 -> 2 (A/B now too), expired facts packed 1 -> 2 (B).
"""

from __future__ import annotations

import json

import pytest

from crp_core.analysis.gate import gate, read_baseline
from crp_core.cli import main
from crp_core.decisions import Decision
from crp_core.io.ckf import load_ckf
from crp_core.triage import DecisionStore
from tests.support.suites import scenario_docs, write_ckf, write_suite

ENV = "CRP_INSPECT_TRIAGE_DB"


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("CRP_INSPECT_HISTORY", "off")
    ckf, suite = write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite")
    db = tmp_path / "team.sqlite"
    with DecisionStore(db) as store:
        store.record(
            Decision.override("A", "B", winner="B", operator="alice", ckf_fingerprint=load_ckf(ckf).fingerprint)
        )
    return ckf, suite, db


def _check(capsys, ckf, suite, *extra):
    code = main(["check", "--ckf", str(ckf), "--suite", str(suite), "--no-history", "--json", *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _s1(doc):
    return doc["scenarios"]["s1"]["metrics"]


def test_check_applies_the_named_store_and_reports_it(files, capsys):
    ckf, suite, db = files
    code, before, err = _check(capsys, ckf, suite)
    assert code == 0 and "operator decision" not in err
    assert before["operator_decisions"] == {"store": None, "named_by": None, "in_force": 0, "digest": ""}
    m = _s1(before)
    assert (m["recall"], m["leaks"], m["wrong_winners"], m["expired"]) == (pytest.approx(2 / 3), 1, 1, 1)
    code, after, err = _check(capsys, ckf, suite, "--triage-db", str(db))
    assert code == 1  # max_leaks 1 and max_wrong_winners 1 now broken
    od = after["operator_decisions"]
    assert (od["store"], od["named_by"], od["in_force"]) == (str(db), "--triage-db", 1) and len(od["digest"]) == 20
    m = _s1(after)
    assert (m["recall"], m["leaks"], m["wrong_winners"], m["expired"]) == (pytest.approx(1 / 3), 2, 2, 2)
    assert "operator decision" not in err  # named on the command line: nothing to explain


def test_the_environments_store_is_the_default_said_on_stderr_and_refusable(files, capsys, monkeypatch):
    ckf, suite, db = files
    monkeypatch.setenv(ENV, str(db))
    code, doc, err = _check(capsys, ckf, suite)
    assert code == 1 and doc["operator_decisions"]["named_by"] == f"${ENV}"
    assert f"crp-inspect: note: 1 operator decision(s) in force from ${ENV} ({db}); --no-triage-db applies none" in err
    code, doc, err = _check(capsys, ckf, suite, "--no-triage-db")
    assert code == 0 and doc["operator_decisions"]["in_force"] == 0 and "note" not in err
    # a store the environment names but nobody created yet: no decision, no error
    monkeypatch.setenv(ENV, str(db.parent / "not-yet.sqlite"))
    code, doc, err = _check(capsys, ckf, suite)
    assert code == 0 and doc["operator_decisions"]["store"] is None and not (db.parent / "not-yet.sqlite").exists()


def test_a_named_store_that_is_not_there_is_refused(files, capsys):
    ckf, suite, db = files
    code = main(["check", "--ckf", str(ckf), "--suite", str(suite), "--no-history", "--triage-db", str(db) + ".x"])
    err = capsys.readouterr().err
    assert code == 2 and "team.sqlite.x" in err and "Traceback" not in err
    with pytest.raises(SystemExit):  # the two flags exclude each other
        main(["check", "--ckf", str(ckf), "--suite", str(suite), "--triage-db", str(db), "--no-triage-db"])


def test_a_store_that_cannot_be_read_is_refused_with_the_way_out(files, capsys, monkeypatch, tmp_path):
    ckf, suite, _ = files
    bad = tmp_path / "not-a-db.sqlite"
    bad.write_text("this is not a database, it is text long enough to be read as a header" * 3)
    monkeypatch.setenv(ENV, str(bad))
    code = main(["check", "--ckf", str(ckf), "--suite", str(suite), "--no-history"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"crp-inspect: error: the operator decisions of ${ENV} cannot be read: ")
    assert "not an SQLite database" in err and err.rstrip().endswith("(--no-triage-db runs without them)")
    assert bad.read_text().startswith("this is not a database")  # nothing written over it


def test_text_output_names_the_store(files, capsys):
    ckf, suite, db = files
    assert main(["check", "--ckf", str(ckf), "--suite", str(suite), "--no-history", "--triage-db", str(db)]) == 1
    out = capsys.readouterr().out
    assert f"operator decisions: 1 in force from {db}\n" in out and "leaked: E, B" in out


def test_a_baseline_recorded_with_other_decisions_gets_a_note(files, capsys, tmp_path):
    ckf, suite, db = files
    base = tmp_path / "base.json"
    argv = ["check", "--ckf", str(ckf), "--suite", str(suite), "--no-history"]
    assert main([*argv, "--write-baseline", str(base), "--triage-db", str(db)]) == 0
    capsys.readouterr()
    recorded = read_baseline(str(base))
    assert recorded.decisions_in_force == 1 and recorded.decisions_digest
    # the same decisions: no note
    code, doc, _ = _check(capsys, ckf, suite, "--baseline", str(base), "--triage-db", str(db))
    assert not [n for n in doc["gate"]["notes"] if "operator decisions" in n]
    # one decision too, but another one ("A wins" instead of "B wins"): the digest tells them apart
    other = tmp_path / "other.sqlite"
    with DecisionStore(other) as store:
        store.record(Decision.override("A", "B", winner="A", operator="bob"))
    code, doc, _ = _check(capsys, ckf, suite, "--baseline", str(base), "--triage-db", str(other))
    assert (
        f"the baseline {base} was recorded with other operator decisions in force (1 there, 1 in this run)"
        in (doc["gate"]["notes"])
    )
    code, doc, _ = _check(capsys, ckf, suite, "--baseline", str(base))
    assert (
        f"the baseline {base} was recorded with other operator decisions in force (1 there, 0 in this run)"
        in (doc["gate"]["notes"])
    )


def test_gate_notes_other_decisions_and_a_baseline_silent_about_them(files):
    from crp_core.analysis.gate import MetricsBaseline
    from crp_core.analysis.metrics import suite_metrics
    from crp_core.analysis.suite import load_suite

    empty = suite_metrics(())
    s = load_suite(str(files[1]))
    silent = MetricsBaseline(scenarios={}, source="b.json")
    known = MetricsBaseline(scenarios={}, source="b.json", decisions_in_force=3, decisions_digest="d3")
    assert gate(empty, s, silent, decisions=None).notes == ()
    assert gate(empty, s, silent, decisions=(0, "")).notes == ()
    assert gate(empty, s, silent, decisions=(2, "d2")).notes == (
        "the baseline b.json does not say which operator decisions were in force; this run applies 2",
    )
    assert gate(empty, s, known, decisions=None).notes == ()
    assert gate(empty, s, known, decisions=(3, "d3")).notes == ()
    other = ("the baseline b.json was recorded with other operator decisions in force (3 there, 3 in this run)",)
    assert gate(empty, s, known, decisions=(3, "x")).notes == other


def test_the_dashboards_default_store_is_the_commands_default_too(files, capsys, monkeypatch, tmp_path):
    """Neither flag nor environment: ./.crp_triage.sqlite, where the dashboard records by default, when it
    exists; said on stderr."""
    ckf, suite, db = files
    monkeypatch.chdir(tmp_path)
    code, doc, err = _check(capsys, ckf, suite)
    assert code == 0 and doc["operator_decisions"]["store"] is None  # no such file yet: no decision
    import shutil

    shutil.copy(db, tmp_path / ".crp_triage.sqlite")
    code, doc, err = _check(capsys, ckf, suite)
    assert code == 1 and doc["operator_decisions"]["named_by"] == "default"
    assert "crp-inspect: note: 1 operator decision(s) in force from .crp_triage.sqlite; --no-triage-db" in err


def test_decisions_are_applied_by_fact_id_whatever_ckf_they_were_taken_on(files, capsys, tmp_path):
    """As the dashboard does (docs/decisions/triage.md "In force"): a decision stamped with another CKF's
    fingerprint applies to facts of the same ids; one naming facts this CKF lacks is not counted."""
    ckf, suite, _ = files
    db = tmp_path / "other-kb.sqlite"
    with DecisionStore(db) as store:
        store.record(Decision.override("A", "B", winner="B", operator="ann", ckf_fingerprint="f" * 64))
        store.record(Decision.override("X1", "X2", winner="X2", operator="ann", ckf_fingerprint="f" * 64))
    code, doc, _ = _check(capsys, ckf, suite, "--triage-db", str(db))
    assert code == 1 and doc["operator_decisions"]["in_force"] == 1
    assert _s1(doc)["recall"] == pytest.approx(1 / 3)


def test_an_empty_store_name_is_refused(files, capsys):
    ckf, suite, _ = files
    code = main(["check", "--ckf", str(ckf), "--suite", str(suite), "--no-history", "--triage-db", " "])
    err = capsys.readouterr().err
    assert code == 2 and "--triage-db is empty" in err


def test_an_operators_pair_is_not_counted_as_a_detection(files, capsys, tmp_path):
    """conflicts_detected counts the expected pairs stage 4 found: a pair an operator's accept put there
    (C / G, far below the similarity threshold) is theirs, not a detection."""
    ckf, _, _ = files
    docs = scenario_docs()
    docs["s1"]["expect"]["conflicts"].append({"fact_a": "C", "fact_b": "G", "winner": "C"})
    suite = write_suite(tmp_path / "suite2", docs)
    db = tmp_path / "cg.sqlite"
    with DecisionStore(db) as store:
        store.record(Decision.accept("C", "G", operator="ann"))
    _, before, _ = _check(capsys, ckf, suite)
    _, after, _ = _check(capsys, ckf, suite, "--triage-db", str(db))
    assert after["operator_decisions"]["in_force"] == 1
    assert _s1(after)["conflicts_detected"] == _s1(before)["conflicts_detected"]
    assert ["C", "G"] in after["scenarios"]["s1"]["details"]["conflicts_undetected"]


def test_fanout_runs_with_the_decisions(files, capsys):
    ckf, suite, db = files
    argv = ["fanout", "--ckf", str(ckf), "--scenario", str(suite / "s1.json"), "--json"]
    assert main([*argv, "--triage-db", str(db)]) == 0
    assert json.loads(capsys.readouterr().out)["operator_decisions"]["in_force"] == 1
    assert main([*argv[:-1], "--triage-db", str(db)]) == 0
    assert f"operator decisions: 1 in force from {db}" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_sweep_and_tune_run_with_the_decisions_and_say_so(files, capsys, command):
    ckf, suite, db = files
    extra = ["--param", "contradiction_similarity=0.90:0.95:2"] if command == "sweep" else ["--trials", "1"]
    argv = [command, "--ckf", str(ckf), "--suite", str(suite), "--no-history", "--json", *extra]
    # the start point's suite recall (sweep: its baseline; tune: trial 0 at the base config)
    recall = (
        (lambda d: d["baseline"]["recall.mean"])
        if command == "sweep"
        else (lambda d: d["trials"][0]["metrics"]["recall.mean"])
    )
    assert main([*argv, "--triage-db", str(db)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["operator_decisions"]["store"] == str(db) and doc["operator_decisions"]["in_force"] == 1
    assert recall(doc) == pytest.approx(1 / 3)
    assert main([*argv, "--no-triage-db"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["operator_decisions"]["in_force"] == 0 and recall(doc) == pytest.approx(2 / 3)


def test_run_reports_the_decisions_it_ran_with(files, capsys, tmp_path):
    ckf, suite, db = files
    argv = ["run", "--ckf", str(ckf), "--scenario", str(suite / "s1.json")]
    assert main([*argv, "--json", "--triage-db", str(db)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["operator_decisions"]["in_force"] == 1
    assert "B" in doc["envelope"]["order"] and "A" not in doc["envelope"]["order"]
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["operator_decisions"]["in_force"] == 0 and "A" in doc["envelope"]["order"]
    assert main([*argv, "--triage-db", str(db)]) == 0
    assert f"operator decisions: 1 in force from {db}\n" in capsys.readouterr().out

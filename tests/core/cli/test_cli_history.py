"""``crp-inspect history`` (the listing and ``--compare``, exact text and JSON) and the runs ``check`` and
``tune`` keep in it (``--no-history``, ``$CRP_INSPECT_HISTORY=off``, a history that cannot be written)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from crp_core.cli import main
from crp_core.history import Experiment, ExperimentStore, list_experiments
from tests.support.cli_notes import missing_store_note
from tests.support.suites import write_ckf, write_suite


def _clock():
    t = [datetime(2026, 3, 1, 12, 0, tzinfo=UTC)]

    def now() -> datetime:
        t[0] += timedelta(minutes=1)
        return t[0]

    return now


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "h.sqlite")
    with ExperimentStore(path, clock=_clock()) as store:
        store.record(
            Experiment(
                kind="check",
                recorded_by="ann",
                metrics={"recall.mean": 0.75, "leaks.total": 1.0},
                kb_name="kb.jsonl",
                suite_name="suite",
                origin="cli",
                note="baseline run",
            )
        )
        store.record(
            Experiment(
                kind="tune",
                recorded_by="bob",
                metrics={"recall.mean": 1.0, "leaks.total": 0.0, "ndcg@10.mean": 0.5},
                config_diff={"stale_floor": (0.3, 0.55), "ttl_days.news": (30.0, 45.0)},
                kb_name="kb.jsonl",
                suite_name="suite",
                summary={"best_trial": 4},
                origin="cli",
                note="wider space\nsecond line",
            )
        )
    return path


def _run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_history_lists_newest_first_exactly(db, capsys):
    rc, out, err = _run(capsys, "history", "--db", db)
    assert rc == 0 and err == ""
    assert out == (
        f"2 experiment(s) in {db}, newest first\n"
        "\n"
        "id  recorded (UTC)       kind   by   kb        suite  changed  verdict  recall.mean  leaks.total"
        "  wrong_winners.total  tokens.mean  note\n" + "-" * 146 + "\n"
        " 2  2026-03-01 12:02:00  tune   bob  kb.jsonl  suite        2  -                  1            0"
        "                    -            -  wider space...\n"
        " 1  2026-03-01 12:01:00  check  ann  kb.jsonl  suite        0  -              0.750            1"
        "                    -            -  baseline run\n"
    )
    rc, out, _ = _run(capsys, "history", "--db", db, "--kind", "check", "--limit", "5")
    assert rc == 0 and out.splitlines()[0] == f"1 experiment(s) in {db}, newest first"
    rc, out, _ = _run(capsys, "history", "--db", db, "--kb", "other.jsonl")
    assert (rc, out) == (0, f"no experiments in {db}\n")


def test_history_compare_puts_metrics_and_config_side_by_side(db, capsys):
    rc, out, err = _run(capsys, "history", "--db", db, "--compare", "1", "2")
    assert rc == 0 and err == ""
    assert out == (
        "                #1                   #2\n" + "-" * 56 + "\n"
        "kind            check                tune\n"
        "recorded (UTC)  2026-03-01 12:01:00  2026-03-01 12:02:00\n"
        "by              ann                  bob\n"
        "kb              kb.jsonl             kb.jsonl\n"
        "suite           suite                suite\n"
        "\n"
        "metric           #1     #2\n"
        "--------------------------\n"
        "recall.mean   0.750      1\n"
        "leaks.total       1      0\n"
        "ndcg@10.mean      -  0.500\n"
        "\n"
        "config key     default  #1     #2\n"
        "---------------------------------\n"
        "stale_floor      0.300   =  0.550\n"
        "ttl_days.news       30   =     45\n"
        "(=: the default)\n"
        "\n"
        "#1: baseline run\n"
        "#2: wider space\\nsecond line\n"
    )


def test_history_json_and_errors(db, capsys, tmp_path):
    rc, out, _ = _run(capsys, "history", "--db", db, "--json", "--compare", "2")
    doc = json.loads(out)
    assert rc == 0 and doc["database"] == db and [e["id"] for e in doc["experiments"]] == [2]
    assert doc["experiments"][0]["config_diff"] == {"stale_floor": [0.3, 0.55], "ttl_days.news": [30.0, 45.0]}
    assert doc["experiments"][0]["summary"] == {"best_trial": 4}
    rc, _, err = _run(capsys, "history", "--db", db, "--compare", "1", "9")
    assert rc == 2 and "field 'id': no experiment #9" in err and "Traceback" not in err
    missing = str(tmp_path / "none.sqlite")
    rc, out, _ = _run(capsys, "history", "--db", missing)
    assert (rc, out) == (0, f"no experiments in {missing}\n")
    assert not (tmp_path / "none.sqlite").exists()  # reading creates nothing
    rc, _, err = _run(capsys, "history", "--db", db, "--limit", "0")
    assert rc == 2 and "field 'limit': must be a whole number from 1 to 1000, got 0" in err


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("CRP_INSPECT_HISTORY", "on")
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "runs.sqlite"))
    return write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite"), str(tmp_path / "runs.sqlite")


def test_check_and_tune_keep_their_runs(files, capsys, monkeypatch):
    ckf, suite, db = files
    monkeypatch.setattr("crp_core.cli.history.os_user", lambda: "ci-user")
    rc, out, err = _run(capsys, "check", "--ckf", str(ckf), "--suite", str(suite), "--set", "stale_floor=0.5",
                        "--history-note", "try 0.5")  # fmt: skip
    # the store the variable names does not exist until the run is kept in it: said, no decision applied
    assert rc == 0 and err == missing_store_note(db) + f"kept as experiment #1 in {db} (crp-inspect history)\n"
    rc, out, err = _run(capsys, "tune", "--ckf", str(ckf), "--suite", str(suite), "--trials", "2", "--json")
    assert (
        rc == 0 and json.loads(out)["best"] and err.endswith(f"kept as experiment #2 in {db} (crp-inspect history)\n")
    )
    tune_run, check_run = list_experiments(db)
    assert check_run.kind == "check" and check_run.recorded_by == "ci-user" and check_run.origin == "cli"
    assert check_run.config_diff == {"stale_floor": (0.3, 0.5)} and check_run.note == "try 0.5"
    assert check_run.kb_name == "kb.jsonl" and check_run.suite_name == "suite"
    assert check_run.metrics["recall.mean"] == pytest.approx(2 / 3) and check_run.metrics["leaks.total"] == 1.0
    # the gate's verdict is kept with the run, and the listing shows it
    assert check_run.summary is not None and check_run.summary["verdict"] == "PASS"
    assert check_run.summary["baseline"] is False and check_run.summary["bounds_broken"] == 0
    _, listing, _ = _run(capsys, "history")
    assert " PASS " in listing.splitlines()[-1] + " "
    assert tune_run.kind == "tune" and tune_run.summary is not None
    assert set(tune_run.summary) == {
        "objective",
        "trials",
        "seed",
        "best_trial",
        "best_values",
        "feasible",
        "params",
        "operator_decisions",
    }
    assert check_run.summary["operator_decisions"] == {"store": None, "named_by": None, "in_force": 0, "digest": ""}
    assert tune_run.summary["trials"] == 2 and tune_run.summary["objective"] == "recall"
    assert (
        tune_run.kb_fingerprint == check_run.kb_fingerprint
        and tune_run.suite_fingerprint == check_run.suite_fingerprint
    )


def test_no_history_and_the_switch_keep_nothing(files, capsys, monkeypatch):
    ckf, suite, db = files
    rc, _, err = _run(capsys, "check", "--ckf", str(ckf), "--suite", str(suite), "--no-history")
    assert rc == 0 and err == missing_store_note(db)
    monkeypatch.setenv("CRP_INSPECT_HISTORY", "off")
    rc, _, err = _run(capsys, "check", "--ckf", str(ckf), "--suite", str(suite))
    assert rc == 0 and err == missing_store_note(db)
    import os

    assert not os.path.exists(db)


def test_a_history_that_cannot_be_written_keeps_the_exit_status(files, capsys, monkeypatch, tmp_path):
    ckf, suite, _ = files
    bad = tmp_path / "not-a-db.sqlite"
    bad.write_text("this is not a database, it is text long enough to be read as a header" * 3)
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(bad))
    # the operator decisions of that store are not read (--no-triage-db): only the history is at stake
    rc, out, err = _run(capsys, "check", "--ckf", str(ckf), "--suite", str(suite), "--no-triage-db")
    assert rc == 0 and "PASS" in out
    assert err.startswith("crp-inspect: note: this run was not kept in the experiment history: ")
    assert "not an SQLite database" in err


def test_a_sweep_is_kept_through_record_run(files, capsys, tmp_path):
    """What the sweep command calls: the run at the sweep's base configuration, with the grid's summary."""
    import argparse
    from types import SimpleNamespace

    from crp_core.analysis.evaluate import prepare_suite, run_suite
    from crp_core.analysis.suite import load_suite
    from crp_core.cli.history import record_run, sweep_summary
    from crp_core.config import CRPConfig
    from tests.support.suites import corpus

    _ckf, suite_dir, db = files
    c = corpus()
    prepared = prepare_suite(c, load_suite(suite_dir))
    from crp_core.cli.operator_decisions import OperatorDecisions

    od = OperatorDecisions(None, "team.sqlite", "--triage-db", 3, "d")
    inp = SimpleNamespace(kb=c.kb, prepared=prepared, config=CRPConfig(), set_args=("stale_floor=0.4",), decisions=od)
    metrics = run_suite(prepared, CRPConfig().with_set_args(inp.set_args)).metrics
    summary = sweep_summary(["stale_floor", "now"], 400, {"stale_floor": 0.5})
    args = argparse.Namespace(no_history=False, history_note="grid")
    assert record_run(args, "sweep", inp, metrics, summary=summary) == 1
    (kept,) = list_experiments(db)
    assert kept.kind == "sweep" and kept.note == "grid" and kept.config_diff == {"stale_floor": (0.3, 0.4)}
    assert kept.summary == {
        "keys": ["stale_floor", "now"],
        "points": 400,
        "best": {"stale_floor": 0.5},
        "operator_decisions": {"store": "team.sqlite", "named_by": "--triage-db", "in_force": 3, "digest": "d"},
    }
    assert kept.metrics == metrics.flat()
    assert capsys.readouterr().err == f"kept as experiment #1 in {db} (crp-inspect history)\n"
    assert record_run(argparse.Namespace(no_history=True), "sweep", inp, metrics) is None

"""The experiment store over SQLite and PostgreSQL: what is recorded is read back exactly, newest first,
filtered and paged; the triage log beside it is untouched; a schema-2 (and a schema-1) triage database
gains the history's tables without losing a decision; bad experiments are refused field by field."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.decisions import Decision, TriageStoreError
from crp_core.history import (
    HISTORY_SCHEMA_VERSION,
    MAX_NOTE_CHARS,
    Experiment,
    ExperimentError,
    ExperimentStore,
    list_experiments,
    record_experiment,
)
from crp_core.triage import DecisionStore
from tests.core.triage.conftest import raw_sql
from tests.support.triage_cli import V1_ROWS, make_v1_db


def _clock(start: datetime = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)):
    t = [start]

    def now() -> datetime:
        t[0] += timedelta(minutes=1)
        return t[0]

    return now


def _exp(kind: str = "check", **kw) -> Experiment:
    base = dict(
        kind=kind,
        recorded_by="ann",
        metrics={"recall.mean": 0.75, "leaks.total": 1.0, "ndcg@10.mean": None},
        config_diff={"stale_floor": (0.3, 0.5)},
        kb_name="kb.jsonl",
        kb_fingerprint="f" * 64,
        suite_name="suite",
        suite_fingerprint="s" * 64,
        origin="cli",
    )
    base.update(kw)
    return Experiment(**base)


def test_recorded_experiments_read_back_exactly_newest_first(target):
    with ExperimentStore(target, clock=_clock()) as store:
        a = store.record(_exp(note="first run\nwith two lines"))
        b = store.record(_exp("tune", summary={"best_trial": 3, "params": {"stale_floor": 0.4}}, kb_name="other.jsonl"))
        c = store.record(_exp("suite-run", origin="dashboard", recorded_by="bob@example.org", config_diff={}))
        assert (a.id, b.id, c.id) == (1, 2, 3)
        assert a.recorded_at == "2026-03-01T12:01:00Z" and c.recorded_at == "2026-03-01T12:03:00Z"
        got = store.list()
        assert got == [c, b, a]
        assert got[2].metrics == {"recall.mean": 0.75, "leaks.total": 1.0, "ndcg@10.mean": None}
        assert list(got[2].metrics) == ["recall.mean", "leaks.total", "ndcg@10.mean"]  # order kept
        assert got[2].config_diff == {"stale_floor": (0.3, 0.5)} and got[2].note == "first run\nwith two lines"
        assert got[1].summary == {"best_trial": 3, "params": {"stale_floor": 0.4}}
        assert [e.id for e in store.list(kind="tune")] == [2]
        assert [e.id for e in store.list(kb="kb.jsonl")] == [3, 1]
        assert [e.id for e in store.list(kb="f" * 64)] == [3, 2, 1]  # the fingerprint names it too
        assert [e.id for e in store.list(suite="suite", kind="check")] == [1]
        assert [e.id for e in store.list(limit=1, offset=1)] == [2]
        assert [e.id for e in store.get([3, 1])] == [3, 1]
        assert len(store) == 3
    assert [e.id for e in list_experiments(target, kind="suite-run")] == [3]


def test_the_triage_log_beside_it_is_untouched(target):
    with DecisionStore(target) as ds:
        d = ds.record(Decision.dismiss("F1", "F2", operator="ann"))
        head = ds.verify()
    record_experiment(target, _exp())
    with ExperimentStore(target) as store:
        store.record(_exp("sweep"))
        assert len(store) == 2
        assert store.decisions.all() == [d]
    with DecisionStore(target) as ds:  # the triage store opens the database with the history in it
        assert ds.verify() == head and len(ds) == 1
        ds.record(Decision.dismiss("F3", "F4", operator="ann"))
        assert ds.verify().ok and ds.verify().entries == 2
    assert raw_sql(target, "SELECT version, note FROM crp_history_schema") == [
        (HISTORY_SCHEMA_VERSION, "crp-inspect experiment history: tables added")
    ]


def test_a_schema_2_database_gains_the_history_and_keeps_every_decision(tmp_path):
    db = str(tmp_path / "v2.sqlite")
    with DecisionStore(db) as ds:
        kept = [ds.record(Decision.dismiss(f"F{i}", f"G{i}", operator="ann")) for i in range(3)]
    names = {r[0] for r in raw_sql(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "experiments" not in names
    assert list_experiments(db) == []  # reading adds nothing
    assert "experiments" not in {r[0] for r in raw_sql(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    record_experiment(db, _exp())
    with DecisionStore(db, create=False) as ds:
        assert ds.all() == kept and ds.verify().ok
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 2  # the triage schema did not move
    assert con.execute("SELECT max(version) FROM crp_triage_schema").fetchone()[0] == 2
    con.close()


def test_a_schema_1_database_is_migrated_then_gains_the_history(tmp_path):
    db = make_v1_db(tmp_path / "v1.sqlite")
    assert list_experiments(db) == []  # read-only: nothing migrated, nothing added
    rec = record_experiment(db, _exp())
    assert rec.id == 1
    with DecisionStore(db, create=False) as ds:
        assert [d.id for d in ds.all()] == [r[0] for r in V1_ROWS] and ds.verify().ok


def test_a_newer_history_schema_is_refused(target):
    record_experiment(target, _exp())
    raw_sql(target, "INSERT INTO crp_history_schema (version, applied_at, note) VALUES (9, 'x', 'later')")
    with pytest.raises(TriageStoreError, match="experiment history schema 9 is newer"):
        list_experiments(target)
    with pytest.raises(TriageStoreError, match="schema 9 is newer"):
        record_experiment(target, _exp())


def test_a_row_another_tool_broke_is_refused_naming_it(target):
    record_experiment(target, _exp())
    raw_sql(target, "UPDATE experiments SET metrics = 'not json' WHERE id = 1")
    with pytest.raises(TriageStoreError, match="experiment #1 cannot be read"):
        list_experiments(target)


def test_unknown_ids_are_named(target):
    record_experiment(target, _exp())
    with ExperimentStore(target) as store, pytest.raises(ExperimentError, match="no experiment #7"):
        store.get([1, 7])


@pytest.mark.parametrize(
    ("change", "field", "said"),
    [
        ({"kind": "bench"}, "kind", "'bench' is not one of check, sweep, tune, suite-run"),
        ({"recorded_by": "  "}, "recorded_by", "empty"),
        ({"recorded_by": "ann\x1b[2J"}, "recorded_by", "control character U+001B at position 3"),
        ({"note": "x" * (MAX_NOTE_CHARS + 1)}, "note", f"{MAX_NOTE_CHARS + 1} characters, at most {MAX_NOTE_CHARS}"),
        ({"note": "a\rb"}, "note", "control character U+000D"),
        ({"kb_name": "k\u2028b"}, "kb_name", "control character U+2028"),
        ({"metrics": {"recall.mean": "high"}}, "metrics", "must be a number or None, got str"),
        ({"metrics": {f"m{i}": 1.0 for i in range(501)}}, "metrics", "501 metrics, at most 500"),
        ({"config_diff": {"k": 1}}, "config_diff", "must be a (default, value) pair"),
        ({"summary": {"x": object()}}, "summary", "not JSON data"),
        ({"summary": {"x": "y" * 70_000}}, "summary", "at most 64000"),
        ({"origin": "web"}, "origin", "'web' is not one of"),
    ],
)
def test_bad_experiments_are_refused_field_by_field(tmp_path, change, field, said):
    db = str(tmp_path / "h.sqlite")
    with pytest.raises(ExperimentError) as got:
        record_experiment(db, _exp(**change))
    assert [f for f, _ in got.value.problems] == [field]
    assert said in got.value.problems[0][1]


def test_a_recorded_experiment_is_not_recorded_twice_and_reading_needs_a_database(tmp_path):
    db = str(tmp_path / "h.sqlite")
    rec = record_experiment(db, _exp())
    with pytest.raises(ExperimentError, match="already recorded"):
        record_experiment(db, rec)
    with pytest.raises(TriageStoreError, match="no such decision database"):
        list_experiments(str(tmp_path / "missing.sqlite"))
    assert not (tmp_path / "missing.sqlite").exists()


def test_listing_arguments_are_checked(tmp_path):
    db = str(tmp_path / "h.sqlite")
    record_experiment(db, _exp())
    with pytest.raises(ExperimentError) as got:
        list_experiments(db, kind="bench", limit=0, offset=-1)
    assert [f for f, _ in got.value.problems] == ["kind", "limit", "offset"]


def test_a_readonly_store_records_nothing(tmp_path):
    db = str(tmp_path / "h.sqlite")
    record_experiment(db, _exp())
    with ExperimentStore(db, create=False, readonly=True) as store:
        assert len(store) == 1
        with pytest.raises(TriageStoreError, match="experiments cannot be recorded: opened read-only"):
            store.record(_exp())


_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=40)
_NUM = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=64), st.integers(-(10**6), 10**6))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(("check", "sweep", "tune", "suite-run")),
    by=_TEXT.filter(lambda s: s.strip()),
    metrics=st.dictionaries(_TEXT, _NUM, max_size=12),
    diff=st.dictionaries(_TEXT, st.tuples(_NUM, st.one_of(_NUM, _TEXT, st.booleans())), max_size=6),
    note=st.text(st.characters(blacklist_categories=("Cs",), whitelist_characters="\n\t"), max_size=60).map(
        lambda s: (
            "".join(c for c in s if c in "\n\t" or not (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F))
            .replace("\u2028", "")
            .replace("\u2029", "")
        )
    ),
    name=st.one_of(st.none(), _TEXT),
)
def test_any_valid_experiment_reads_back_as_checked(tmp_path, kind, by, metrics, diff, note, name):
    """Invariant: what the store returns from ``record`` is what it reads back, and is the validated
    experiment (numbers as floats, blanks around the operator and note stripped)."""
    db = str(tmp_path / "prop.sqlite")
    e = Experiment(kind=kind, recorded_by=by, metrics=metrics, config_diff=diff, kb_name=name, note=note)
    with ExperimentStore(db) as store:
        rec = store.record(e)
        (back,) = store.get([rec.id])
    assert back == rec
    assert back.metrics == {k: None if v is None else float(v) for k, v in metrics.items()}
    assert list(back.metrics) == list(metrics)
    assert back.config_diff == diff and back.note == note.strip() and back.recorded_by == by.strip()

"""Suite metrics hand-checked on the tiny suite of ``suite_support`` (docs/decisions/suites.md §3)."""

from __future__ import annotations

import pytest

from crp_core.analysis.evaluate import prepare_suite, run_suite, sweep_suite
from crp_core.analysis.metrics import METRIC_NAMES, Contradiction, WrongWinner
from crp_core.analysis.suite import load_suite
from crp_core.config import CRPConfig
from tests.support.suites import corpus, write_suite


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    suite = load_suite(write_suite(tmp_path_factory.mktemp("suite")))
    return prepare_suite(corpus(), suite)


@pytest.fixture(scope="module")
def run(prepared):
    return run_suite(prepared, CRPConfig(), reference=CRPConfig().with_overrides({"cdr_min_relevance": 0.72}))


def test_scenario_one_by_hand(run):
    s1 = run.scenario("s1")
    # B loses C01-style arbitration (0.64 vs 0.80 * 0.30 * 0.85 = 0.204); D and F are below the gate
    assert set(s1.envelope) == {"A", "C", "E", "G", "H1", "H2"}
    assert s1.recall == pytest.approx(2 / 3) and s1.included == ("A", "C") and s1.missing == ("D",)
    assert s1.leaks == ("E",)
    # E packed, its winner F never passed the gate (relevance 0)
    assert s1.wrong_winners == (WrongWinner(loser="E", winner="F", winner_state="gated"),)
    assert s1.expired == ("G",)  # official, modified 2024-01-01: 882 days >= 365
    assert s1.ageing == ("C",)  # 243 days: 1 - 0.7 * (243 - 182.5) / 182.5
    assert s1.recency["C"] == pytest.approx(1 - 0.7 * (243 - 182.5) / 182.5)
    assert s1.recency["G"] == pytest.approx(0.30)
    # the tied pair is handed to the model with its NOTE (expected tie, detected)
    assert s1.contradictions == (Contradiction("H1", "H2", expected=True, detected=True, noted=True),)
    assert s1.conflicts_detected == (("A", "B"), ("H1", "H2")) and s1.conflicts_undetected == (("E", "F"),)
    assert s1.duplicates == ()
    assert s1.tokens == run.result("s1").envelope.tokens_used and not s1.over_tokens
    # the reference (gate 0.72) packs A and G only: Jaccard 2 / 6
    assert set(s1.reference) == {"A", "G"}
    assert s1.overlap == pytest.approx(2 / 6)
    assert set(s1.entering) == {"C", "E", "H1", "H2"} and s1.leaving == ()


def test_scenario_two_by_hand(run):
    s2 = run.scenario("s2")
    assert set(s2.envelope) == {"C", "D"}  # cos 0.785 and 1.0 to e3; nothing else reaches 0.55
    assert s2.recall is None and s2.leaks == () and s2.wrong_winners == ()
    assert s2.expired == () and s2.ageing == ("C",) and s2.contradictions == ()
    # C's cosine to e3 is sqrt(1 - 0.62^2) = 0.785, above the reference gate 0.72 as well: same envelope
    assert set(s2.reference) == {"C", "D"} and s2.overlap == 1.0 and s2.entering == s2.leaving == ()


def test_suite_summary_by_hand(run):
    m = run.metrics.summary
    assert m["recall"].mean == pytest.approx(2 / 3) and m["recall"].count == 1 and m["recall"].total is None
    assert m["recall"].worst_scenario == "s1"
    assert (m["leaks"].mean, m["leaks"].worst, m["leaks"].total, m["leaks"].worst_scenario) == (0.5, 1.0, 1.0, "s1")
    assert (m["wrong_winners"].total, m["expired"].total, m["ageing"].total) == (1.0, 1.0, 2.0)
    assert (m["ageing"].mean, m["ageing"].worst) == (1.0, 1.0)
    assert m["contradictions"].mean == 0.5 and m["duplicates"].total == 0.0
    flat = run.metrics.flat()
    assert flat["leaks.total"] == 1.0 and "recall.total" not in flat
    assert set(k.split(".")[0] for k in flat) == set(METRIC_NAMES)


def test_a_new_config_reuses_the_prepared_vectors(prepared, monkeypatch):
    import crp_core.analysis.evaluate as ev

    def boom(*a, **k):
        raise AssertionError("embedded again")

    monkeypatch.setattr(ev, "embed_scenario", boom)
    r = run_suite(prepared, CRPConfig().with_overrides({"stale_floor": 0.1}))
    assert r.scenario("s1").recency["G"] == pytest.approx(0.1)


def test_suite_sweep_points(prepared):
    sw = sweep_suite(prepared, CRPConfig(), "cdr_min_relevance", [0.5, 0.72])
    assert [p.value for p in sw.points] == [0.5, 0.72]
    assert set(sw.points[1].run.scenario("s1").envelope) == {"A", "G"}
    assert sw.baseline.metrics.flat() == run_suite(prepared, CRPConfig()).metrics.flat()


def test_noted_reads_the_envelopes_note_blocks(run):
    """``noted`` is "the envelope carries a NOTE block listing both facts" (their tie group's, read from
    Envelope.tie_groups), not "stage 4 tied it": the same run with the NOTE block taken out of the envelope
    says detected, not noted."""
    import dataclasses

    from crp_core.analysis.metrics import scenario_metrics
    from crp_core.records import TieGroup
    from crp_core.stages.tie_groups import note_block

    result = run.result("s1")
    kb = result.corpus.kb
    h1, h2 = kb.get("H1").content, kb.get("H2").content
    assert len(result.envelope.notes) == 1 and result.envelope.notes[0] in (note_block(h1, h2), note_block(h2, h1))
    tied = [p for p in result.resolution.pairs if {p.fact_a, p.fact_b} == {"H1", "H2"}]
    assert len(tied) == 1 and tied[0].tied
    measured = run.metrics.scenario("s1")
    bare = dataclasses.replace(result, envelope=dataclasses.replace(result.envelope, notes=(), tie_groups=()))
    got = scenario_metrics(bare, prepared_expect(run, "s1"), name="s1")
    assert got.contradictions == (Contradiction("H1", "H2", expected=True, detected=True, noted=False),)
    assert measured.contradictions[0].noted is True
    # a NOTE block of another pair does not note this one
    ac = note_block(kb.get("A").content, kb.get("C").content)
    group = TieGroup(("A", "C"), (("A", "C"),), ("A", "C"), (), (), ac)
    other = dataclasses.replace(result, envelope=dataclasses.replace(result.envelope, notes=(ac,), tie_groups=(group,)))
    assert scenario_metrics(other, prepared_expect(run, "s1"), name="s1").contradictions[0].noted is False
    # integrity counts contradictions without a NOTE: one more without it
    from crp_core.analysis.metrics import suite_metrics
    from crp_core.analysis.tune import OBJECTIVES

    with_note = OBJECTIVES["integrity"].evaluate(suite_metrics([measured]), None)[0][0]
    without = OBJECTIVES["integrity"].evaluate(suite_metrics([got]), None)[0][0]
    assert without == with_note + 1


def prepared_expect(run, name):
    return run.result(name).scenario.expect


def test_counts_are_whole_numbers_fractions_floats(run):
    s1 = run.scenario("s1")
    assert s1.value("leaks") == 1 and type(s1.value("leaks")) is int and type(s1.value("tokens")) is int
    assert type(s1.value("recall")) is float and type(s1.value("overlap")) is float
    m = run.metrics.summary
    assert type(m["leaks"].total) is int and type(m["leaks"].worst) is int and type(m["leaks"].mean) is float
    assert type(m["recall"].worst) is float and m["recall"].total is None


def test_reference_envelopes_are_cached_per_known_mode(prepared):
    import crp_core.analysis.evaluate as ev

    fresh = ev.PreparedSuite(prepared.corpus, prepared.suite, prepared.vectors, prepared.nows, 0.0)
    a = run_suite(fresh, CRPConfig().with_overrides({"stale_floor": 0.1}), known="none")
    b = run_suite(fresh, CRPConfig().with_overrides({"stale_floor": 0.1}), known="scan")
    assert sorted(mode for _, mode in fresh.reference_runs) == ["none", "scan"]
    assert {toml for toml, _ in fresh.reference_runs} == {CRPConfig().to_toml()}
    assert a.metrics.flat() == b.metrics.flat()  # flag: the guard never changes the envelope


def test_reference_none_means_the_defaults_false_means_no_overlap(prepared):
    dflt = run_suite(prepared, CRPConfig().with_overrides({"cdr_min_relevance": 0.72}))
    explicit = run_suite(prepared, CRPConfig().with_overrides({"cdr_min_relevance": 0.72}), reference=CRPConfig())
    assert dflt.reference == CRPConfig() and dflt.metrics.flat() == explicit.metrics.flat()
    assert dflt.scenario("s1").overlap == pytest.approx(2 / 6)
    off = run_suite(prepared, CRPConfig(), reference=False)
    assert off.reference is None and off.scenario("s1").overlap is None and off.scenario("s1").reference is None


def test_a_pair_labelled_no_conflict_that_stage_4_flags_is_a_false_conflict(tmp_path, capsys):
    """``expect.not_conflicts``: A / B (flagged by stage 4 in s1's run) counts as a false conflict, C / G (never
    paired) does not; ``max_false_conflicts = 0`` fails the gate naming the pair; a scenario without the label
    leaves the metric undefined."""
    import json

    from crp_core.cli import main
    from tests.support.suites import scenario_docs, write_ckf

    doc = scenario_docs()["s1"]
    doc["expect"] = {
        "not_conflicts": [{"fact_a": "A", "fact_b": "B"}, {"fact_a": "C", "fact_b": "G"}],
        "max_false_conflicts": 0,
    }
    suite = write_suite(tmp_path / "suite", {"s1": doc, "s2": scenario_docs()["s2"]})
    got = run_suite(prepare_suite(corpus(), load_suite(suite)), CRPConfig())
    s1 = got.scenario("s1")
    assert s1.false_conflicts == (("A", "B"),) and s1.not_conflicts_kept == (("C", "G"),)
    assert s1.value("false_conflicts") == 1 and got.scenario("s2").value("false_conflicts") is None
    summary = got.metrics.summary["false_conflicts"]
    assert (summary.count, summary.total, summary.worst_scenario) == (1, 1, "s1")
    ckf = write_ckf(tmp_path / "kb.jsonl")
    assert main(["check", "--ckf", str(ckf), "--suite", str(suite)]) == 1
    out = capsys.readouterr().out
    assert "s1: false_conflicts 1 breaks expect.max_false_conflicts (must be <= 0)" in out
    assert "flagged though labelled no conflict: A + B" in out
    assert main(["check", "--ckf", str(ckf), "--suite", str(suite), "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["scenarios"]["s1"]["metrics"]["false_conflicts"] == 1

"""Suite metrics hand-checked on the tiny suite of ``suite_support`` (docs/decisions/suites.md §3)."""
from __future__ import annotations

import pytest
from suite_support import corpus, write_suite

from crp_core.analysis.evaluate import prepare_suite, run_suite, sweep_suite
from crp_core.analysis.metrics import METRIC_NAMES, Contradiction, WrongWinner
from crp_core.analysis.suite import load_suite
from crp_core.config import CRPConfig


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

"""Near conflicts (crp_core.near_threshold, ``PipelineResult.near_conflicts``): packed pairs within
``near_conflict_margin`` below ``contradiction_similarity`` whose texts value-conflict are named; pairs above the
threshold (stage 4's), below the margin, or without a value difference are not.

Query e0, graph retrieval off, budget 4. Cosines by construction (unit vectors):
  N1 = (.9, .436, 0, ...)                N2 = (.9, .0459, .4334, ...)   N1.N2 = .81 + .436 * .0459 = .830
  P1 = (.8, 0, 0, .6, 0, 0)              P2 = (.8, 0, 0, .36, .48, 0)   P1.P2 = .64 + .216 = .856 (> .85: stage 4)
  Q  = (.7, 0, 0, 0, 0, .714)            Q.N1 = .63 (below .80: outside the margin)
N1/N2 flip a negation at .830 (in (.80, .85]); P1/P2 change a number above the threshold (stage 4 arbitrates).
"""

from __future__ import annotations

import math

import pytest

from crp_core import NearConflict
from tests.support.factories import make_scenario
from tests.support.near_conflict_world import near_conflict_run, unit


def test_a_negation_just_below_the_threshold_is_named_and_stage_4s_pair_is_not():
    r = near_conflict_run()
    packed = {p.fact_id for p in r.envelope.order}
    assert {"N1", "N2"} <= packed
    assert [(p.fact_a, p.fact_b) for p in r.resolution.pairs] == [("P1", "P2")]  # stage 4's own
    (n,) = r.near_conflicts
    assert ({n.fact_a, n.fact_b}, n.patterns, n.learned) == ({"N1", "N2"}, ("NEGATION_FLIP",), False)
    order = [p.fact_id for p in r.envelope.order]
    assert order.index(n.fact_a) < order.index(n.fact_b)  # fact_a packed first
    want = math.fsum(x * y for x, y in zip(unit(0.9, 0.436), unit(0.9, 0.0459, 0.4334), strict=True))
    assert n.similarity == pytest.approx(want, abs=1e-6)  # float32 vectors
    assert n.to_dict()["patterns"] == ["NEGATION_FLIP"]


def test_a_run_asks_the_detector_about_them_once(monkeypatch):
    import crp_core.near_threshold as near

    asked: list[tuple[str, str]] = []
    real = near.values_conflict

    def counting(a, b, *rest):
        asked.append((a, b))
        return real(a, b, *rest)

    monkeypatch.setattr(near, "values_conflict", counting)
    r = near_conflict_run()
    assert asked == []  # a run that never reads them (a sweep, a tuning trial) asks nothing
    first = tuple(r.near_conflicts)
    n_asked = len(asked)
    assert n_asked >= 1 and all(isinstance(n, NearConflict) for n in first)
    assert r.near_conflicts == first and len(asked) == n_asked  # the report, the story, the page: one answer


def test_the_margin_bounds_it():
    # .02 below .85 is .83: N1.N2 (.830 by construction, .8299 after normalising) falls outside; 0 reports none
    assert near_conflict_run(near_conflict_margin=0.01).near_conflicts == ()
    assert near_conflict_run(near_conflict_margin=0.0).near_conflicts == ()
    # a lower threshold makes the pair stage 4's: no longer a hint
    r = near_conflict_run(contradiction_similarity=0.82)
    assert ("N1", "N2") in {(p.fact_a, p.fact_b) for p in r.resolution.pairs} and r.near_conflicts == ()


def test_the_run_summary_the_report_and_the_story_say_them(tmp_path, capsys):
    from crp_core.analysis.baseline import before_after
    from crp_core.cli import main
    from crp_core.io.ckf import write_ckf
    from crp_core.io.scenario import dump_scenario
    from crp_core.report import run_report

    r = near_conflict_run()
    (n,) = r.near_conflicts
    assert run_report(r)["near_conflicts"] == [n.to_dict()]
    heads = dict(before_after(r.corpus, make_scenario([1, 0, 0, 0, 0, 0]), r.config).headlines())
    assert "But 1 more pair of the SPEC-027 envelope read as a value conflict" in " ".join(heads.values())
    write_ckf(r.corpus.kb, tmp_path / "kb.jsonl")
    (tmp_path / "s.json").write_text(dump_scenario(make_scenario([1, 0, 0, 0, 0, 0]), "json"), encoding="utf-8")
    argv = ["run", "--ckf", str(tmp_path / "kb.jsonl"), "--scenario", str(tmp_path / "s.json"), "--no-triage-db"]
    assert main([*argv, "--set", "graph_retrieval=false", "--set", "envelope_fact_budget=5"]) == 0
    out = capsys.readouterr().out
    assert "near conflicts (packed, cosine just below contradiction_similarity 0.85; not resolved)" in out
    assert f"  {n.fact_a} vs {n.fact_b}: cos={n.similarity:.3f} NEGATION_FLIP; both reach the model" in out


def test_an_operators_dismissal_silences_it_in_the_run_the_report_the_story_and_the_cli(tmp_path, capsys):
    """A dismissal is a person saying "not a conflict": it counts wherever the pair appears, below the threshold
    too (docs/decisions/near-conflicts.md). Another pair's dismissal silences nothing; an accept makes the pair
    stage 4's (arbitrated), no longer a hint."""
    from crp_core.analysis.baseline import before_after
    from crp_core.cli import main
    from crp_core.io.ckf import write_ckf
    from crp_core.io.scenario import dump_scenario
    from crp_core.report import run_report
    from crp_core.triage import Decision, DecisionSet

    (n,) = near_conflict_run().near_conflicts
    dismissed = DecisionSet.from_decisions([Decision.dismiss(n.fact_b, n.fact_a, operator="rosa")])
    r = near_conflict_run(decisions=dismissed)
    assert r.near_conflicts == () and run_report(r)["near_conflicts"] == []
    story = dict(before_after(r.corpus, make_scenario([1, 0, 0, 0, 0, 0]), r.config, decisions=dismissed).headlines())
    assert "read as a value conflict just below" not in " ".join(story.values())
    other = DecisionSet.from_decisions([Decision.dismiss("P1", "Q", operator="rosa")])
    assert near_conflict_run(decisions=other).near_conflicts == (n,)
    accepted = near_conflict_run(
        decisions=DecisionSet.from_decisions([Decision.accept(n.fact_a, n.fact_b, operator="rosa")])
    )
    stage4 = {frozenset((p.fact_a, p.fact_b)) for p in accepted.resolution.pairs}
    assert accepted.near_conflicts == () and frozenset((n.fact_a, n.fact_b)) in stage4

    # the command line: the run says how to decide it; `triage record` dismisses it; the run no longer reports it
    kb, db = tmp_path / "kb.jsonl", tmp_path / "triage.sqlite"
    write_ckf(r.corpus.kb, kb)
    (tmp_path / "s.json").write_text(dump_scenario(make_scenario([1, 0, 0, 0, 0, 0]), "json"), encoding="utf-8")
    run = ["run", "--ckf", str(kb), "--scenario", str(tmp_path / "s.json")]
    run += ["--set", "graph_retrieval=false", "--set", "envelope_fact_budget=5"]
    assert main([*run, "--no-triage-db"]) == 0
    out = capsys.readouterr().out
    assert (
        f"  an operator's decision settles one: crp-inspect triage record --ckf {kb} --pair {n.fact_a} {n.fact_b} "
        "--kind dismiss --operator NAME (not a conflict: no longer reported)"
    ) in out
    record = ["triage", "record", "--db", str(db), "--ckf", str(kb), "--pair", n.fact_a, n.fact_b]
    assert main([*record, "--kind", "dismiss", "--operator", "rosa", "--note", "two different rules"]) == 0
    assert "a run no longer reports them as a near conflict" in capsys.readouterr().err
    assert main([*run, "--triage-db", str(db)]) == 0
    assert "near conflicts" not in capsys.readouterr().out

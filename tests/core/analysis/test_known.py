"""The known-conflict guard (beyond SPEC-027): conflicts known from the whole-CKF scan and operator
decisions, checked against a run's selection (flag, pull the winner in, drop the loser)."""

from __future__ import annotations

import json

import pytest

from crp_core.analysis.known import known_conflicts
from crp_core.cli import main
from crp_core.records import (
    ACTION_FLAGGED,
    ACTION_LOSER_DROPPED,
    ACTION_WINNER_PULLED,
    SOURCE_OPERATOR,
    SOURCE_SCAN,
    KnownConflict,
)
from crp_core.stages.known import guard_selection
from crp_core.triage import Decision, DecisionSet
from tests.support.factories import fact, make_kb
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
KB = make_kb([fact("win"), fact("lose"), fact("other"), fact("gone", status="DELETED")])
RETR = [True, True, True, False]
KNOWN = (
    KnownConflict(winner="win", loser="lose", source=SOURCE_SCAN, patterns=("NUMBER_CHANGED",)),
    KnownConflict(winner="gone", loser="other", source=SOURCE_SCAN),
)


def test_flag_keeps_the_selection_and_names_the_loser():
    g = guard_selection(KB, [1, 2], RETR, KNOWN, "flag")
    assert g.rows == (1, 2)
    assert [(f.loser, f.winner, f.action) for f in g.flags] == [("lose", "win", ACTION_FLAGGED)]
    assert "loses a known conflict (NUMBER_CHANGED) to 'win'" in g.flags[0].message


def test_no_flag_when_the_winner_is_selected_or_not_retrievable():
    assert guard_selection(KB, [0, 1], RETR, KNOWN, "flag").flags == ()  # stage 4 arbitrates this pair itself
    assert guard_selection(KB, [2], RETR, KNOWN, "flag").flags == ()  # the winner is DELETED


def test_pull_winner_takes_the_losers_slot_and_drop_loser_removes_it():
    pulled = guard_selection(KB, [2, 1], RETR, KNOWN, "pull_winner")
    assert pulled.rows == (2, 0) and pulled.pulled == ((0, 1),)
    assert pulled.flags[0].action == ACTION_WINNER_PULLED
    dropped = guard_selection(KB, [2, 1], RETR, KNOWN, "drop_loser")
    assert dropped.rows == (2,) and dropped.flags[0].action == ACTION_LOSER_DROPPED
    assert guard_selection(KB, [2, 1], RETR, KNOWN, "off") == guard_selection(KB, [2, 1], RETR, (), "flag")


def test_operator_decisions_override_and_dismiss_scan_knowledge():
    ds = DecisionSet.from_decisions(
        [
            Decision.override("win", "lose", winner="lose", operator="op"),
            Decision.dismiss("other", "gone", operator="op"),
        ]
    )
    got = known_conflicts(None, ds)
    assert got == (KnownConflict(winner="lose", loser="win", source=SOURCE_OPERATOR),)


@pytest.mark.model
def test_a_shorter_official_ttl_no_longer_lets_the_loser_through_silently(capsys):
    """etcd_upgrade with official documentation at 180 days: the unverified k8s-0069 ("Apache Software
    Foundation") is packed while k8s-0068, which wins their conflict, is not retrieved."""
    args = [
        "run",
        "--ckf",
        str(ROOT / "sample_ckf" / "knowledge_base.jsonl"),
        "--scenario",
        str(ROOT / "sample_ckf" / "scenarios" / "etcd_upgrade.json"),
        "--set",
        "ttl_days.official_documentation=180",
        "--json",
    ]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    flags = [(f["loser"], f["winner"], f["action"]) for f in report["known_conflicts"]]
    assert ("k8s-0069", "k8s-0068", "flagged") in flags
    assert "k8s-0069" in report["envelope"]["order"]
    assert any(e["event"] == "KNOWN_CONFLICT_GUARD" for e in report["audit"])
    assert main(args + ["--set", "known_conflict_action=pull_winner"]) == 0
    pulled = json.loads(capsys.readouterr().out)
    assert "k8s-0068" in pulled["envelope"]["order"] and "k8s-0069" not in pulled["envelope"]["order"]
    # the text output names each finding once, in the guard's section (it was listed again under warnings)
    assert main(args[:-1]) == 0
    out = capsys.readouterr().out
    (message,) = [f["message"] for f in report["known_conflicts"] if f["loser"] == "k8s-0069"]
    assert message in report["warnings"] and out.count(message) == 1
    assert out.index("known-conflict guard (") < out.index(message)


def test_a_known_winner_stage_4_suppressed_is_neither_pulled_back_nor_a_reason_to_drop():
    """'lose' loses a known conflict to 'win', but this run's stage 4 took 'win' out (it lost to a fact the run
    kept): pulling it back would pack a suppressed fact beside its own winner, dropping 'lose' would remove a fact
    for a winner that lost (a walk-through saw both)."""
    for action in ("flag", "pull_winner", "drop_loser"):
        g = guard_selection(KB, [2, 1], RETR, KNOWN, action, lost=[0])
        assert (g.rows, g.flags, g.pulled) == ((2, 1), (), ()), action


def test_the_pipeline_never_packs_back_a_fact_stage_4_suppressed():
    """OLD (official, 2024: 1,000 a minute) and NEW (official, 2026: 600 a minute) conflict at cos .99: NEW wins
    by recency. NEWS (news, 2026) agrees with NEW; the scan knows NEWS loses to OLD. Under pull_winner the guard
    used to put OLD back in NEWS's slot, beside NEW; under drop_loser it dropped NEWS."""
    import numpy as np

    from crp_core.config import CRPConfig
    from crp_core.pipeline import run_pipeline
    from tests.support.factories import make_corpus, make_scenario
    from tests.support.near_conflict_world import unit

    facts = [
        fact("OLD", "The API allows 1,000 requests per minute per key.", modified_at="2024-03-01"),
        fact("NEW", "The API allows 600 requests per minute per key.", modified_at="2026-04-01"),
        fact(
            "NEWS",
            "From April the per-key limit falls to 600 requests a minute.",
            source_type="news",
            modified_at="2026-04-02",
        ),
    ]
    vecs = np.array([unit(0.9, 0.43), unit(0.9, 0.44), unit(0.8, 0, 0.6)])
    known = (KnownConflict(winner="OLD", loser="NEWS", source=SOURCE_SCAN, patterns=("NUMBER_CHANGED",)),)
    for action in ("pull_winner", "drop_loser", "flag"):
        config = CRPConfig(graph_retrieval=False, known_conflict_action=action)
        r = run_pipeline(
            make_corpus(facts, vecs, config), make_scenario([1, 0, 0, 0, 0, 0]), config, known_conflicts=known
        )
        assert [(p.fact_a, p.fact_b, p.suppressed) for p in r.resolution.pairs] == [("NEW", "OLD", "OLD")], action
        assert {p.fact_id for p in r.envelope.order} == {"NEW", "NEWS"}, action
        assert r.known_conflicts == (), action

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

"""SPEC-027 arbitration against the crprotocol SDK's superseded_by (crp_core.analysis.sdk_agreement)."""
from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from crp_core.analysis.sdk_agreement import (
    PairAgreement,
    SdkSupersession,
    has_sdk_data,
    pair_agreement,
    sdk_agreement,
    sdk_supersessions,
)
from crp_core.io.ckf import load_ckf
from crp_core.model import Fact, KnowledgeBase
from crp_core.records import Authority, ConflictPair, ValueConflict
from crp_core.report import sdk_agreement_dict

SUP = Path(__file__).parent / "data" / "sdk" / "supersessions.json"


def _pair(a: str, b: str, *, winner: str | None, skipped: bool = False) -> ConflictPair:
    auth = {x: Authority(x, "internal", 0.75, 1.0, 0.7, 0.525) for x in (a, b)}
    loser = None if winner is None else (b if winner == a else a)
    return ConflictPair(a, b, 0.9, ("NUMBER_CHANGED",), ValueConflict(("NUMBER_CHANGED",), ()), auth,
                        kept=(a, b) if winner is None else (winner,), suppressed=loser, tied=winner is None,
                        skipped=skipped)


def test_verdicts_by_hand():
    sup = {"old": "new", "x": "elsewhere"}
    assert pair_agreement(_pair("old", "new", winner="new"), sup) == PairAgreement(
        "old", "new", "agrees", "both keep new and drop old", "new", "old")
    assert pair_agreement(_pair("new", "old", winner="old"), sup) == PairAgreement(
        "new", "old", "disagrees", "SPEC-027 keeps old; the SDK superseded it by new", "old", "old")
    assert pair_agreement(_pair("old", "new", winner=None), sup) == PairAgreement(
        "old", "new", "disagrees", "SPEC-027 ties (both kept with a NOTE); the SDK superseded old by new", None, "old")
    assert pair_agreement(_pair("p", "q", winner="p"), sup) == PairAgreement(
        "p", "q", "silent", "the SDK superseded neither fact", "p", None)
    assert pair_agreement(_pair("x", "q", winner="q"), sup).reason == \
        "the SDK superseded x by elsewhere, outside this pair"
    both = pair_agreement(_pair("a", "b", winner="a"), {"a": "b", "b": "a"})
    assert (both.verdict, both.reason) == ("disagrees", "the SDK superseded each fact by the other")


def _kb(sup: dict[str, str]) -> KnowledgeBase:
    ids = ["a", "b", "c", "d", "e"]
    return KnowledgeBase(tuple(Fact(i, f"text {i}", metadata={"superseded_by": sup[i]} if i in sup else {})
                               for i in ids))


def test_report_counts_and_unpaired():
    kb = _kb({"a": "b", "c": "d", "e": "gone"})
    pairs = [_pair("a", "b", winner="b"), _pair("b", "c", winner="c"), _pair("d", "e", winner="d", skipped=True)]
    ag = sdk_agreement(pairs, kb)
    assert [p.verdict for p in ag.pairs] == ["agrees", "silent"]  # the skipped pair is left out
    assert (ag.count("agrees"), ag.count("disagrees"), ag.count("silent")) == (1, 0, 1)
    # c -> d is in no arbitrated pair; e -> gone names no fact of the CKF
    assert ag.unpaired == (SdkSupersession("c", "d"),)
    assert ag.of("b", "a") is ag.pairs[0] and ag.of("a", "e") is None
    with pytest.raises(FrozenInstanceError):
        ag.pairs[0].verdict = "silent"  # type: ignore[misc]
    assert sdk_agreement_dict(ag.pairs[0]) == {"verdict": "agrees", "reason": "both keep b and drop a",
                                               "sdk_superseded": "a"}


def test_sdk_data_detection():
    kb = load_ckf(SUP)
    assert has_sdk_data(kb) and sdk_supersessions(kb) == {"f-rate-old": "f-rate-new", "f-owner-old": "f-owner-new"}
    assert not has_sdk_data(KnowledgeBase((Fact("a", "x"),)))
    assert has_sdk_data(KnowledgeBase((Fact("a", "x", metadata={"extraction_stage": 2}),)))


@pytest.mark.model
def test_conflicts_json_carries_sdk_agreement(capsys):
    """The real snapshot through the conflicts scan (MiniLM): the rate-limit pair (SDK: f-rate-old superseded
    by f-rate-new; SPEC-027 keeps f-rate-new, the STALE one has the stale-floor recency) agrees; the etcd port
    pair is one the SDK did not supersede; the ownership supersession is in no pair (no value conflict found)."""
    from crp_core.cli import main

    assert main(["conflicts", "--ckf", str(SUP), "--now", "2026-06-01T00:00:00Z", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    got = {(r["fact_a"], r["fact_b"]): r["sdk_agreement"] for r in rows}
    assert got == {
        ("f-port-new", "f-port-old"): {"verdict": "silent", "reason": "the SDK superseded neither fact",
                                       "sdk_superseded": None},
        ("f-rate-new", "f-rate-old"): {"verdict": "agrees", "reason": "both keep f-rate-new and drop f-rate-old",
                                       "sdk_superseded": "f-rate-old"}}
    assert main(["conflicts", "--ckf", str(SUP), "--now", "2026-06-01T00:00:00Z"]) == 0
    assert ("SDK supersessions: 1 pair(s) agree, 0 disagree, 1 SDK silent; 1 SDK supersession(s) in no pair"
            in capsys.readouterr().out)

"""SPEC-027 arbitration against the crprotocol SDK's superseded_by (crp_core.analysis.sdk_agreement): the
independent arbitration (the SDK's STALE read as ACTIVE) and the as-loaded one, with hand-computed
authorities (docs/reference/pipeline.md §2 table; recency SPEC-027 §3.2)."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.reports import sdk_agreement_dict
from crp_core.analysis.sdk_agreement import (
    Judgement,
    OperatorSupersession,
    SdkSupersession,
    has_sdk_data,
    judge,
    neutral_authorities,
    operator_supersessions,
    sdk_agreement,
    sdk_supersessions,
)
from crp_core.config import SOURCE_TYPES, CRPConfig
from crp_core.factors.recency import fact_attributes
from crp_core.io.ckf import load_ckf
from crp_core.model import Fact, KnowledgeBase
from crp_core.records import ConflictPair, ValueConflict
from crp_core.stages.contradictions import arbitrate, authority_of
from tests.support.paths import TEST_DATA

SDK = TEST_DATA / "sdk"
SUP = SDK / "supersessions.json"
DIS = SDK / "disagreement.json"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
CFG = CRPConfig()


def _fact(fid: str, source_type: str, days: float, *, by: str | None = None, status: str | None = None) -> Fact:
    """A fact modified ``days`` before NOW; ``by``: superseded by that fact (the SDK's STALE)."""
    meta = {"superseded_by": by} if by is not None else {}
    st_ = status or ("STALE" if by is not None else "ACTIVE")
    return Fact(
        fid,
        f"text of {fid}",
        source_type=source_type,
        status=st_,
        modified_at=NOW - timedelta(days=days),
        metadata=meta,
    )


def _scanned(kb: KnowledgeBase, a: str, b: str, decision: str | None = None) -> ConflictPair:
    """The pair as the whole-CKF scan arbitrates it (the statuses as loaded)."""
    factor = fact_attributes(kb, NOW, CFG).factor
    aa, ab = (authority_of(kb.get(x), float(factor[kb.index_of(x)]), CFG) for x in (a, b))  # type: ignore[arg-type]
    arb = arbitrate(aa, ab, CFG, decision, None)
    return ConflictPair(
        a,
        b,
        0.9,
        ("NUMBER_CHANGED",),
        ValueConflict(("NUMBER_CHANGED",), ()),
        {a: aa, b: ab},
        arb.kept,
        arb.suppressed,
        arb.tied,
        margin=abs(aa.authority - ab.authority),
        decision=arb.decision,
    )


def test_judge_by_hand():
    sup = {"old": "new", "x": "elsewhere"}
    assert judge("old", "new", "new", "old", sup) == (Judgement("agrees", "both keep new and drop old", "new"), "old")
    assert judge("new", "old", "old", "new", sup) == (
        Judgement("disagrees", "SPEC-027 keeps old; the SDK superseded it by new", "old"),
        "old",
    )
    assert judge("old", "new", None, None, sup, who="SPEC-027 on its own") == (
        Judgement("disagrees", "SPEC-027 on its own ties (both kept with a NOTE); the SDK superseded old by new", None),
        "old",
    )
    assert judge("p", "q", "p", "q", sup) == (Judgement("silent", "the SDK superseded neither fact", "p"), None)
    assert judge("x", "q", "q", "x", sup)[0].reason == "the SDK superseded x by elsewhere, outside this pair"
    assert judge("a", "b", "a", "b", {"a": "b", "b": "a"})[0] == Judgement(
        "disagrees", "the SDK superseded each fact by the other", "a"
    )
    assert judge("old", "new", None, None, sup, dismissed=True)[0] == Judgement(
        "disagrees", "an operator dismissed the pair (not a conflict); the SDK superseded old by new", None
    )


def test_sdk_supersedes_the_fact_spec027_prefers():
    """An older regulatory fact (TTL 1825 d, 30 d old: recency 1.0) superseded by a newer web remark.
    On its own: 0.9 * 1.0 * 0.9 = 0.81 vs 0.7 * 1.0 * 0.5 = 0.35 -> keeps old: disagrees. As loaded the
    old fact is STALE: 0.9 * 0.3 * 0.9 = 0.243 < 0.35 -> keeps new: agrees (by construction)."""
    kb = KnowledgeBase((_fact("new", "web", 1), _fact("old", "regulatory", 30, by="new")))
    pair = _scanned(kb, "new", "old")
    assert pair.authority["old"].authority == 0.9 * 0.3 * 0.9 and pair.kept == ("new",)
    (rec,) = sdk_agreement([pair], kb, CFG, NOW).pairs
    assert rec.sdk_superseded == "old" and rec.neutralised == ("old",)
    assert rec.independent == Judgement(
        "disagrees", "SPEC-027 on its own keeps old; the SDK superseded it by new", "old"
    )
    assert rec.as_loaded == Judgement("agrees", "both keep new and drop old", "new")
    assert rec.verdict == "disagrees"
    a, b = rec.authority_a, rec.authority_b
    assert (a.fact_id, a.source_authority, a.recency_factor, a.importance_weight, a.authority) == (
        "new",
        0.7,
        1.0,
        0.5,
        0.7 * 1.0 * 0.5,
    )
    assert (b.fact_id, b.source_authority, b.recency_factor, b.importance_weight, b.authority) == (
        "old",
        0.9,
        1.0,
        0.9,
        0.9 * 1.0 * 0.9,
    )
    assert rec.margin == 0.9 * 1.0 * 0.9 - 0.7 * 1.0 * 0.5
    d = sdk_agreement_dict(rec)
    assert d == {
        "sdk_superseded": "old",
        "independent": {
            "verdict": "disagrees",
            "reason": "SPEC-027 on its own keeps old; the SDK superseded it by new",
            "winner": "old",
            "margin": rec.margin,
            "neutralised": ["old"],
            "authority": {
                "new": {
                    "source_authority": 0.7,
                    "recency_factor": 1.0,
                    "importance_weight": 0.5,
                    "authority": 0.7 * 1.0 * 0.5,
                    "source_type": "web",
                },
                "old": {
                    "source_authority": 0.9,
                    "recency_factor": 1.0,
                    "importance_weight": 0.9,
                    "authority": 0.9 * 1.0 * 0.9,
                    "source_type": "regulatory",
                },
            },
        },
        "as_loaded": {"verdict": "agrees", "reason": "both keep new and drop old", "winner": "new"},
    }
    with pytest.raises(FrozenInstanceError):
        rec.independent = rec.as_loaded  # type: ignore[misc]


def test_neutral_recency_is_the_facts_own_age():
    """official_documentation, 273.75 d old: fresh until 182.5 d, TTL 365 ->
    1 - 0.7 * (273.75 - 182.5) / 182.5 = 0.65; authority 0.8 * 0.65 * 0.8. The newer user_provided fact
    (no expiry) has 0.8 * 1.0 * 0.6 = 0.48 and wins both ways: agrees on its own too."""
    kb = KnowledgeBase((_fact("doc", "official_documentation", 273.75, by="chat"), _fact("chat", "user_provided", 2)))
    (rec,) = sdk_agreement([_scanned(kb, "chat", "doc")], kb, CFG, NOW).pairs
    doc = rec.authority_b
    assert doc.recency_factor == pytest.approx(0.65, abs=1e-12)
    assert doc.authority == pytest.approx(0.8 * 0.65 * 0.8, abs=1e-12)
    assert rec.authority_a.authority == 0.8 * 1.0 * 0.6
    assert rec.independent.verdict == rec.as_loaded.verdict == "agrees"


def test_tie_on_its_own_and_statuses_not_the_sdks():
    """Both unverified and fresh: 0.7 * 1.0 * 0.5 each, a tie on its own (disagrees); as loaded the STALE one
    loses. A STALE without superseded_by is the CKF's own status: kept at the floor, not neutralised."""
    kb = KnowledgeBase(
        (
            _fact("a", "unverified", 10, by="b"),
            _fact("b", "unverified", 5),
            _fact("c", "unverified", 3, status="STALE"),
            _fact("d", "unverified", 3),
        )
    )
    ag = sdk_agreement([_scanned(kb, "a", "b"), _scanned(kb, "c", "d")], kb, CFG, NOW)
    ab, cd = ag.pairs
    assert ab.independent.verdict == "disagrees" and ab.independent.winner is None
    assert ab.as_loaded == Judgement("agrees", "both keep b and drop a", "b")
    assert cd.neutralised == () and cd.authority_a.recency_factor == 0.3
    assert cd.independent.verdict == cd.as_loaded.verdict == "silent"
    assert (ag.count("agrees"), ag.count("disagrees"), ag.count("silent")) == (0, 1, 1)
    assert (ag.count("agrees", as_loaded=True), ag.count("disagrees", as_loaded=True)) == (1, 0)
    assert neutral_authorities(["a", "b", "c", "zz"], kb, CFG, NOW).keys() == {"a"}


def test_dismissed_pair_and_unpaired():
    kb = KnowledgeBase(
        (
            _fact("a", "regulatory", 30, by="b"),
            _fact("b", "web", 1),
            _fact("c", "web", 1, by="d"),
            _fact("d", "web", 1),
            _fact("e", "web", 1, by="gone"),
        )
    )
    dismissed = _scanned(kb, "a", "b", decision="dismiss")
    skipped = ConflictPair("c", "d", 0.9, (), ValueConflict((), ()), dismissed.authority, (), None, False, skipped=True)
    ag = sdk_agreement([dismissed, skipped], kb, CFG, NOW)
    (rec,) = ag.pairs  # the skipped pair is left out
    assert rec.as_loaded.verdict == "disagrees" and rec.as_loaded.reason.startswith("an operator dismissed")
    assert rec.independent.winner == "a"  # authority alone: 0.81 vs 0.35
    # c -> d is in no arbitrated pair; e -> gone names no fact of the CKF
    assert ag.unpaired == (SdkSupersession("c", "d"),)
    assert ag.of("b", "a") is rec and ag.of("a", "e") is None


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(SOURCE_TYPES), st.sampled_from(SOURCE_TYPES), st.floats(0, 3000), st.floats(0, 3000), st.booleans()
)
def test_neutralising_only_raises_the_superseded_facts_authority(st_old, st_new, age_old, age_new, old_is_a):
    """The stale floor is the least recency factor, so the SDK-superseded fact's independent authority is >=
    its as-loaded one, the other fact's is unchanged; hence an as-loaded "SPEC-027 keeps the superseded
    fact" stays a disagreement on its own, and an independent agreement was one as loaded."""
    kb = KnowledgeBase((_fact("old", st_old, age_old, by="new"), _fact("new", st_new, age_new)))
    a, b = ("old", "new") if old_is_a else ("new", "old")
    pair = _scanned(kb, a, b)
    (rec,) = sdk_agreement([pair], kb, CFG, NOW).pairs
    ind = {x.fact_id: x for x in (rec.authority_a, rec.authority_b)}
    assert ind["old"].authority >= pair.authority["old"].authority
    assert ind["new"] == pair.authority["new"]
    if rec.as_loaded.winner == "old":
        assert rec.independent.verdict == "disagrees" and rec.independent.winner == "old"
    if rec.independent.verdict == "agrees":
        assert rec.as_loaded.verdict == "agrees"


def test_sdk_data_detection():
    kb = load_ckf(SUP)
    assert has_sdk_data(kb) and sdk_supersessions(kb) == {"f-rate-old": "f-rate-new", "f-owner-old": "f-owner-new"}
    assert not has_sdk_data(KnowledgeBase((Fact("a", "x"),)))
    assert has_sdk_data(KnowledgeBase((Fact("a", "x", metadata={"extraction_stage": 2}),)))


def _json(capsys, *argv: str) -> dict:
    from crp_core.cli import main

    assert main(["conflicts", *argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    return {(r["fact_a"], r["fact_b"]): r["sdk_agreement"] for r in rows}


@pytest.mark.model
def test_conflicts_json_on_the_real_snapshots(capsys):
    """The SDK's own output through the conflicts scan (MiniLM). supersessions.json at 2026-06-01: the
    rate-limit pair (the SDK superseded f-rate-old, 124 d old, by f-rate-new) agrees as loaded (stale floor)
    but on its own is a tie under the default mapping (both unverified, fresh: 0.7 * 1.0 * 0.5) and prefers
    f-rate-old under mapping.toml (official_documentation 0.8 * 1.0 * 0.8 vs user_provided 0.8 * 1.0 * 0.6).
    disagreement.json with its mapping at the SDK's clock: regulatory 0.9 * 1.0 * 0.9 vs web 0.7 * 1.0 * 0.5."""
    now = ["--now", "2026-06-01T00:00:00Z"]
    got = _json(capsys, "--ckf", str(SUP), *now)
    assert got[("f-port-new", "f-port-old")]["independent"]["verdict"] == "silent"
    rate = got[("f-rate-new", "f-rate-old")]
    assert rate["as_loaded"] == {
        "verdict": "agrees",
        "reason": "both keep f-rate-new and drop f-rate-old",
        "winner": "f-rate-new",
    }
    assert (rate["independent"]["verdict"], rate["independent"]["winner"]) == ("disagrees", None)
    assert rate["independent"]["authority"]["f-rate-old"]["authority"] == 0.7 * 1.0 * 0.5
    mapped = _json(capsys, "--ckf", str(SUP), "--sdk-map", str(SDK / "mapping.toml"), *now)
    ind = mapped[("f-rate-new", "f-rate-old")]["independent"]
    assert (ind["verdict"], ind["winner"], ind["neutralised"]) == ("disagrees", "f-rate-old", ["f-rate-old"])
    assert ind["authority"]["f-rate-old"]["authority"] == 0.8 * 1.0 * 0.8
    assert ind["authority"]["f-rate-new"]["authority"] == 0.8 * 1.0 * 0.6
    assert mapped[("f-rate-new", "f-rate-old")]["as_loaded"]["winner"] == "f-rate-new"
    dis = _json(
        capsys, "--ckf", str(DIS), "--sdk-map", str(SDK / "disagreement_mapping.toml"), "--now", "2026-05-28T20:26:40Z"
    )
    (rec,) = dis.values()
    assert rec["sdk_superseded"] == "g-retention-old"
    assert rec["independent"]["winner"] == "g-retention-old" and rec["independent"]["verdict"] == "disagrees"
    assert rec["independent"]["authority"]["g-retention-old"]["authority"] == 0.9 * 1.0 * 0.9
    assert rec["independent"]["authority"]["g-retention-new"]["authority"] == 0.7 * 1.0 * 0.5
    assert rec["as_loaded"]["verdict"] == "agrees"
    from crp_core.cli import main

    assert main(["conflicts", "--ckf", str(SUP), *now]) == 0
    out = capsys.readouterr().out
    # the ownership supersession (f-owner-old "owned by the platform team" / f-owner-new "... the payments
    # team") is a pair of the scan since the detector reads lower-case names as values: all supersessions paired
    assert (
        "SDK supersessions vs SPEC-027 on its own (the SDK's STALE read as ACTIVE): 0 pair(s) agree, 2 disagree, "
        "1 SDK silent; as loaded (STALE in force): 2 agree, 0 disagree; 0 SDK supersession(s) in no pair"
    ) in out


def test_an_operators_supersession_is_never_the_sdks():
    """``old`` superseded by ``new`` by an operator (a cleaned CKF's metadata): the SDK is silent on it,
    the reason names the operator, and its STALE is read as ACTIVE on its own (authority alone)."""
    record = {"operator": "alice", "decided_at": "2026-05-30T10:00:00Z", "kind": "override", "note": "moved"}
    old = Fact(
        "old",
        "text of old",
        source_type="regulatory",
        status="STALE",
        modified_at=NOW - timedelta(days=30),
        metadata={"superseded_by": "new", "superseded_by_origin": "operator", "triage": record},
    )
    kb = KnowledgeBase((_fact("new", "web", 1), old))
    assert sdk_supersessions(kb) == {} and not has_sdk_data(kb)
    (op,) = operator_supersessions(kb).values()
    assert op == OperatorSupersession("old", "new", "alice", "2026-05-30T10:00:00Z", "override", "moved")
    assert op.describe() == "operator superseded old by new (alice, 2026-05-30T10:00:00Z)"
    (rec,) = sdk_agreement([_scanned(kb, "new", "old")], kb, CFG, NOW).pairs  # as loaded: 0.243 vs 0.35
    assert rec.sdk_superseded is None and rec.operator_superseded == op and rec.neutralised == ("old",)
    said = (
        "the SDK superseded neither fact (operator superseded old by new (alice, 2026-05-30T10:00:00Z): not the SDK's)"
    )
    assert rec.independent == Judgement("silent", said, "old")  # on its own: regulatory 0.81 vs web 0.35
    assert rec.as_loaded.verdict == "silent" and rec.as_loaded.winner == "new"
    both = KnowledgeBase((_fact("new", "web", 1), _fact("old", "regulatory", 30, by="new")))  # the SDK's own
    assert sdk_supersessions(both) == {"old": "new"} and operator_supersessions(both) == {} and has_sdk_data(both)

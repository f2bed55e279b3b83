"""Does SPEC-027 arbitration agree with the crprotocol SDK's supersessions? (docs/decisions/sdk-snapshots.md)

An SDK snapshot marks the fact it replaced with ``superseded_by`` (kept as ``metadata.superseded_by``
by :mod:`crp_core.io.ckf.sdk`, which also sets that fact's status to ``STALE``). Each conflicting pair
SPEC-027 §2.3-2.5 arbitrated is compared with the SDK twice:

* **independent** (the fair comparison): the pair arbitrated again *as if the SDK had not decided*:
  a fact whose ``STALE`` comes from the SDK's ``superseded_by`` is read at its pre-supersession status
  (``ACTIVE``: an SDK fact has no other) for the authority of this pair only, so its recency is its
  own age's, not the ``stale_floor`` (SPEC-027 §3.2); authority alone, no operator decision;
* **as loaded**: the arbitration of the scan (the SDK's ``STALE`` in force, operator decisions
  applied). It leans towards the SDK by construction: the superseded fact has the floor recency.

Each gives a verdict: ``agrees`` when the SDK superseded the loser by the winner; ``disagrees`` when it
superseded the winner by the loser, superseded one fact of a pair SPEC-027 ties (or an operator
dismissed), or superseded each fact by the other; ``silent`` when the SDK superseded neither fact of
the pair by the other. SDK supersessions between two facts that no arbitrated pair holds are listed
apart (``unpaired``): SPEC-027 did not see a value conflict there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from crp_core.config import DEFAULT_STATUS, CRPConfig
from crp_core.factors.recency import fact_attributes
from crp_core.model import Fact, KnowledgeBase
from crp_core.records import Authority, ConflictPair
from crp_core.stages.contradictions import arbitrate, authority_of

Verdict = Literal["agrees", "disagrees", "silent"]
VERDICTS: tuple[Verdict, ...] = ("agrees", "disagrees", "silent")


@dataclass(frozen=True)
class Judgement:
    """One arbitration of a pair against the SDK: the verdict, why (in words) and the winner (None: tie
    or dismissed)."""

    verdict: Verdict
    reason: str
    winner: str | None


@dataclass(frozen=True)
class PairAgreement:
    """One arbitrated pair against the SDK: the independent and the as-loaded judgements, and the
    authority components of the independent arbitration (SPEC-027 §2.3)."""

    fact_a: str
    fact_b: str
    sdk_superseded: str | None  # the fact of the pair the SDK superseded by the other, if any
    independent: Judgement  # SPEC-027 with the SDK's STALE neutralised (module docstring)
    as_loaded: Judgement  # the scan's arbitration (the SDK's STALE in force, operator decisions applied)
    authority_a: Authority  # the independent arbitration's components of fact_a
    authority_b: Authority
    neutralised: tuple[str, ...] = ()  # facts of the pair whose SDK STALE was read as ACTIVE

    @property
    def margin(self) -> float:
        """|authority_a - authority_b| of the independent arbitration."""
        return abs(self.authority_a.authority - self.authority_b.authority)

    @property
    def verdict(self) -> Verdict:
        """The independent verdict (the one the counts and the queue show first)."""
        return self.independent.verdict


@dataclass(frozen=True)
class SdkSupersession:
    """``old`` superseded by ``new`` in the snapshot."""

    old: str
    new: str


@dataclass(frozen=True)
class SdkAgreement:
    """Every arbitrated pair's judgements, in the pairs' order, and the SDK supersessions no pair holds."""

    pairs: tuple[PairAgreement, ...]
    unpaired: tuple[SdkSupersession, ...]

    def count(self, verdict: Verdict, *, as_loaded: bool = False) -> int:
        """Pairs with this independent verdict (``as_loaded=True``: this as-loaded verdict)."""
        return sum(1 for p in self.pairs if (p.as_loaded if as_loaded else p.independent).verdict == verdict)

    def of(self, fact_a: str, fact_b: str) -> PairAgreement | None:
        """The record of the pair of these two facts (in either order)."""
        key = frozenset((fact_a, fact_b))
        return next((p for p in self.pairs if frozenset((p.fact_a, p.fact_b)) == key), None)


def sdk_supersessions(kb: KnowledgeBase) -> dict[str, str]:
    """Fact id -> the id that superseded it, from ``metadata.superseded_by`` (strings only)."""
    return {f.fact_id: s for f in kb.facts if isinstance(s := f.metadata.get("superseded_by"), str)}


def has_sdk_data(kb: KnowledgeBase) -> bool:
    """Was ``kb`` read from an SDK snapshot, or exported from one (facts carrying the SDK's fields)?"""
    if kb.imported is not None:
        return True
    return any("superseded_by" in f.metadata or "extraction_stage" in f.metadata for f in kb.facts)


def sdk_stale(fact: Fact) -> bool:
    """Is the fact's ``STALE`` the SDK's (a ``superseded_by`` string set), so its own status is ACTIVE?"""
    return fact.status == "STALE" and isinstance(fact.metadata.get("superseded_by"), str)


def neutral_authorities(
    fact_ids: Iterable[str], kb: KnowledgeBase, config: CRPConfig, now: datetime
) -> dict[str, Authority]:
    """Fact id -> SPEC-027 §2.3 authority at ``now`` with the fact read at status ACTIVE, for each fact
    of ``fact_ids`` whose STALE is the SDK's (:func:`sdk_stale`); other facts are left out. The recency
    is SPEC-027 §3.2's of the fact's own age and TTL (one vectorised pass over those facts)."""
    facts = [f for fid in dict.fromkeys(fact_ids) if (f := kb.get(fid)) is not None and sdk_stale(f)]
    if not facts:
        return {}
    neutral = tuple(replace(f, status=DEFAULT_STATUS) for f in facts)
    factor = fact_attributes(KnowledgeBase(neutral), now, config).factor.tolist()
    return {f.fact_id: authority_of(f, r, config) for f, r in zip(neutral, factor)}


def judge(
    fact_a: str,
    fact_b: str,
    winner: str | None,
    loser: str | None,
    sup: dict[str, str],
    *,
    dismissed: bool = False,
    who: str = "SPEC-027",
) -> tuple[Judgement, str | None]:
    """(judgement, the fact of the pair the SDK superseded by the other) of one arbitration outcome
    (module docstring); ``winner`` / ``loser`` None for a tie; ``sup`` from :func:`sdk_supersessions`."""
    a, b = fact_a, fact_b
    sdk_old = a if sup.get(a) == b else b if sup.get(b) == a else None
    if sdk_old is None:
        out = [f"the SDK superseded {x} by {sup[x]}, outside this pair" for x in (a, b) if x in sup]
        return Judgement("silent", "; ".join(out) if out else "the SDK superseded neither fact", winner), None
    sdk_new = b if sdk_old == a else a
    if dismissed:
        return Judgement(
            "disagrees",
            f"an operator dismissed the pair (not a conflict); the SDK superseded {sdk_old} by {sdk_new}",
            None,
        ), sdk_old
    if winner is None or loser is None:
        return Judgement(
            "disagrees", f"{who} ties (both kept with a NOTE); the SDK superseded {sdk_old} by {sdk_new}", None
        ), sdk_old
    if sup.get(sdk_new) == sdk_old:
        return Judgement("disagrees", "the SDK superseded each fact by the other", winner), sdk_old
    if sdk_old == loser:
        return Judgement("agrees", f"both keep {winner} and drop {loser}", winner), sdk_old
    return Judgement("disagrees", f"{who} keeps {winner}; the SDK superseded it by {loser}", winner), sdk_old


def pair_agreement(
    pair: ConflictPair, sup: dict[str, str], neutral: dict[str, Authority], config: CRPConfig
) -> PairAgreement:
    """Both judgements of one pair; ``neutral`` from :func:`neutral_authorities` (facts it lacks keep
    the scan's authority)."""
    a, b = pair.fact_a, pair.fact_b
    dismissed = pair.decision == "dismiss"
    loaded_winner = None if pair.tied or dismissed or not pair.kept else pair.kept[0]
    as_loaded, sdk_old = judge(
        a, b, loaded_winner, None if loaded_winner is None else pair.suppressed, sup, dismissed=dismissed
    )
    auth_a, auth_b = neutral.get(a, pair.authority[a]), neutral.get(b, pair.authority[b])
    arb = arbitrate(auth_a, auth_b, config, None, None)  # authority alone: no operator decision
    winner = None if arb.tied else arb.kept[0]
    independent, _ = judge(a, b, winner, arb.suppressed, sup, who="SPEC-027 on its own")
    return PairAgreement(
        a, b, sdk_old, independent, as_loaded, auth_a, auth_b, tuple(x for x in (a, b) if x in neutral)
    )


def sdk_agreement(pairs: Sequence[ConflictPair], kb: KnowledgeBase, config: CRPConfig, now: datetime) -> SdkAgreement:
    """Each arbitrated pair (skipped ones left out) against the SDK's supersessions of ``kb``; ``config``
    and ``now`` must be the scan's (the independent recency is computed at ``now``)."""
    sup = sdk_supersessions(kb)
    live = [p for p in pairs if not p.skipped]
    neutral = neutral_authorities((x for p in live for x in (p.fact_a, p.fact_b)), kb, config, now)
    recs = tuple(pair_agreement(p, sup, neutral, config) for p in live)
    seen = {frozenset((r.fact_a, r.fact_b)) for r in recs}
    unpaired = tuple(
        SdkSupersession(old, new)
        for old, new in sup.items()
        if frozenset((old, new)) not in seen and kb.get(new) is not None
    )
    return SdkAgreement(recs, unpaired)

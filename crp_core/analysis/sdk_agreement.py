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

A supersession an operator made (``metadata.superseded_by_origin`` = ``"operator"``: a triage
decision carried by a cleaned CKF or an SDK export) is never the SDK's: it is
:func:`operator_supersessions`, named on the pair (``operator_superseded``) and in the reasons, and
the SDK is silent on it. Its STALE is read as ACTIVE in the independent arbitration too (authority
alone, no operator decision), so a re-scan of an export judges the pair as the scan before it did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from crp_core.config import DEFAULT_STATUS, CRPConfig
from crp_core.factors.recency import fact_attributes
from crp_core.model import (
    META_SUPERSEDED_BY,
    META_SUPERSEDED_BY_ORIGIN,
    META_TRIAGE,
    ORIGIN_OPERATOR,
    Fact,
    KnowledgeBase,
)
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
class OperatorSupersession:
    """``old`` superseded by ``new`` by an operator's decision (who, when, which kind, why)."""

    old: str
    new: str
    operator: str
    decided_at: str | None
    kind: str
    note: str

    def describe(self) -> str:
        """``operator superseded A by B (alice, 2026-06-01T10:00:00Z)``."""
        when = f", {self.decided_at}" if self.decided_at else ""
        return f"operator superseded {self.old} by {self.new} ({self.operator}{when})"


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
    neutralised: tuple[str, ...] = ()  # facts of the pair whose supersession's STALE was read as ACTIVE
    operator_superseded: OperatorSupersession | None = None  # an operator's supersession within the pair

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


def operator_made(fact: Fact) -> bool:
    """Did an operator set the fact's ``superseded_by`` (a triage decision an export carries)?"""
    return fact.metadata.get(META_SUPERSEDED_BY_ORIGIN) == ORIGIN_OPERATOR


def sdk_supersessions(kb: KnowledgeBase) -> dict[str, str]:
    """Fact id -> the id that superseded it, from ``metadata.superseded_by`` (strings only), the
    producer's own: an operator's (:func:`operator_made`) is not the SDK's."""
    return {
        f.fact_id: s
        for f in kb.facts
        if isinstance(s := f.metadata.get(META_SUPERSEDED_BY), str) and not operator_made(f)
    }


def operator_supersessions(kb: KnowledgeBase) -> dict[str, OperatorSupersession]:
    """Fact id -> the operator's supersession of it (:func:`operator_made`), with the triage record's
    operator, time, kind and note ("?" / empty where the record lacks them)."""
    out: dict[str, OperatorSupersession] = {}
    for f in kb.facts:
        new = f.metadata.get(META_SUPERSEDED_BY)
        if not operator_made(f) or not isinstance(new, str):
            continue
        rec = f.metadata.get(META_TRIAGE)
        rec = rec if isinstance(rec, Mapping) else {}

        def text(key: str, default: str, r: Mapping[str, object] = rec) -> str:
            v = r.get(key)
            return v if isinstance(v, str) and v else default

        when = rec.get("decided_at")
        out[f.fact_id] = OperatorSupersession(
            f.fact_id,
            new,
            text("operator", "?"),
            when if isinstance(when, str) else None,
            text("kind", "override"),
            text("note", ""),
        )
    return out


def has_sdk_data(kb: KnowledgeBase) -> bool:
    """Was ``kb`` read from an SDK snapshot, or exported from one (facts carrying the SDK's fields or
    supersessions; an operator's supersession alone is not the SDK's)?"""
    if kb.imported is not None:
        return True
    return any(
        (META_SUPERSEDED_BY in f.metadata and not operator_made(f)) or "extraction_stage" in f.metadata
        for f in kb.facts
    )


def sdk_stale(fact: Fact) -> bool:
    """Is the fact's ``STALE`` a supersession's (a ``superseded_by`` string set: the SDK's, or an
    operator's carried by an export), so its own status is ACTIVE?"""
    return fact.status == "STALE" and isinstance(fact.metadata.get(META_SUPERSEDED_BY), str)


def neutral_authorities(
    fact_ids: Iterable[str], kb: KnowledgeBase, config: CRPConfig, now: datetime
) -> dict[str, Authority]:
    """Fact id -> SPEC-027 §2.3 authority at ``now`` with the fact read at status ACTIVE, for each fact
    of ``fact_ids`` whose STALE is a supersession's (:func:`sdk_stale`); other facts are left out. The recency
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
    operator: OperatorSupersession | None = None,
) -> tuple[Judgement, str | None]:
    """(judgement, the fact of the pair the SDK superseded by the other) of one arbitration outcome
    (module docstring); ``winner`` / ``loser`` None for a tie; ``sup`` from :func:`sdk_supersessions`;
    ``operator``: an operator's supersession within the pair, named in a silent verdict's reason."""
    a, b = fact_a, fact_b
    sdk_old = a if sup.get(a) == b else b if sup.get(b) == a else None
    if sdk_old is None:
        out = [f"the SDK superseded {x} by {sup[x]}, outside this pair" for x in (a, b) if x in sup]
        said = "; ".join(out) if out else "the SDK superseded neither fact"
        if operator is not None:
            said += f" ({operator.describe()}: not the SDK's)"
        return Judgement("silent", said, winner), None
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
    pair: ConflictPair,
    sup: dict[str, str],
    neutral: dict[str, Authority],
    config: CRPConfig,
    operator: dict[str, OperatorSupersession] | None = None,
) -> PairAgreement:
    """Both judgements of one pair; ``neutral`` from :func:`neutral_authorities` (facts it lacks keep
    the scan's authority); ``operator`` from :func:`operator_supersessions`."""
    a, b = pair.fact_a, pair.fact_b
    ops = operator or {}
    op = next((ops[x] for x in (a, b) if x in ops and ops[x].new in (a, b)), None)
    dismissed = pair.decision == "dismiss"
    loaded_winner = None if pair.tied or dismissed or not pair.kept else pair.kept[0]
    as_loaded, sdk_old = judge(
        a, b, loaded_winner, None if loaded_winner is None else pair.suppressed, sup, dismissed=dismissed, operator=op
    )
    auth_a, auth_b = neutral.get(a, pair.authority[a]), neutral.get(b, pair.authority[b])
    arb = arbitrate(auth_a, auth_b, config, None, None)  # authority alone: no operator decision
    winner = None if arb.tied else arb.kept[0]
    independent, _ = judge(a, b, winner, arb.suppressed, sup, who="SPEC-027 on its own", operator=op)
    return PairAgreement(
        a, b, sdk_old, independent, as_loaded, auth_a, auth_b, tuple(x for x in (a, b) if x in neutral), op
    )


def sdk_agreement(pairs: Sequence[ConflictPair], kb: KnowledgeBase, config: CRPConfig, now: datetime) -> SdkAgreement:
    """Each arbitrated pair (skipped ones left out) against the SDK's supersessions of ``kb``; ``config``
    and ``now`` must be the scan's (the independent recency is computed at ``now``)."""
    sup, ops = sdk_supersessions(kb), operator_supersessions(kb)
    live = [p for p in pairs if not p.skipped]
    neutral = neutral_authorities((x for p in live for x in (p.fact_a, p.fact_b)), kb, config, now)
    recs = tuple(pair_agreement(p, sup, neutral, config, ops) for p in live)
    seen = {frozenset((r.fact_a, r.fact_b)) for r in recs}
    unpaired = tuple(
        SdkSupersession(old, new)
        for old, new in sup.items()
        if frozenset((old, new)) not in seen and kb.get(new) is not None
    )
    return SdkAgreement(recs, unpaired)

"""Does SPEC-027 arbitration agree with the crprotocol SDK's supersessions? (docs/decisions/sdk-snapshots.md)

An SDK snapshot marks the fact it replaced with ``superseded_by`` (kept as ``metadata.superseded_by``
by :mod:`crp_core.io.ckf.sdk`). For each conflicting pair SPEC-027 §2.3-2.5 arbitrated:

* ``agrees``: the SDK superseded our loser by our winner;
* ``disagrees``: the SDK superseded our winner by our loser, or superseded one of a pair we tie;
* ``silent``: the SDK superseded neither fact of the pair by the other.

SDK supersessions between two facts that no arbitrated pair holds are listed apart (``unpaired``):
SPEC-027 did not see a value conflict there.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from crp_core.model import KnowledgeBase
from crp_core.records import ConflictPair

Verdict = Literal["agrees", "disagrees", "silent"]
VERDICTS: tuple[Verdict, ...] = ("agrees", "disagrees", "silent")


@dataclass(frozen=True)
class PairAgreement:
    """One arbitrated pair against the SDK: the verdict and why, in words."""

    fact_a: str
    fact_b: str
    verdict: Verdict
    reason: str
    winner: str | None  # ours (None: tied)
    sdk_superseded: str | None  # the fact of the pair the SDK superseded by the other, if any


@dataclass(frozen=True)
class SdkSupersession:
    """``old`` superseded by ``new`` in the snapshot."""

    old: str
    new: str


@dataclass(frozen=True)
class SdkAgreement:
    """Every arbitrated pair's verdict, in the pairs' order, and the SDK supersessions no pair holds."""

    pairs: tuple[PairAgreement, ...]
    unpaired: tuple[SdkSupersession, ...]

    def count(self, verdict: Verdict) -> int:
        return sum(1 for p in self.pairs if p.verdict == verdict)

    def of(self, fact_a: str, fact_b: str) -> PairAgreement | None:
        """The verdict of the pair of these two facts (in either order)."""
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


def pair_agreement(pair: ConflictPair, sup: dict[str, str]) -> PairAgreement:
    """The verdict on one pair (module docstring); ``sup`` from :func:`sdk_supersessions`."""
    a, b = pair.fact_a, pair.fact_b
    sdk_old = a if sup.get(a) == b else b if sup.get(b) == a else None
    winner = None if pair.tied else (pair.kept[0] if pair.kept else None)
    loser = pair.suppressed
    if sdk_old is None:
        out = [f"the SDK superseded {x} by {sup[x]}, outside this pair" for x in (a, b) if x in sup]
        reason = "; ".join(out) if out else "the SDK superseded neither fact"
        return PairAgreement(a, b, "silent", reason, winner, None)
    sdk_new = b if sdk_old == a else a
    both = sup.get(sdk_new) == sdk_old
    if winner is None or loser is None:
        return PairAgreement(a, b, "disagrees", f"SPEC-027 ties (both kept with a NOTE); the SDK superseded "
                                                f"{sdk_old} by {sdk_new}", None, sdk_old)
    if both:
        return PairAgreement(a, b, "disagrees", "the SDK superseded each fact by the other", winner, sdk_old)
    if sdk_old == loser:
        return PairAgreement(a, b, "agrees", f"both keep {winner} and drop {loser}", winner, sdk_old)
    return PairAgreement(a, b, "disagrees", f"SPEC-027 keeps {winner}; the SDK superseded it by {loser}",
                         winner, sdk_old)


def sdk_agreement(pairs: Iterable[ConflictPair], kb: KnowledgeBase) -> SdkAgreement:
    """Each arbitrated pair (skipped ones left out) against the SDK's supersessions of ``kb``."""
    sup = sdk_supersessions(kb)
    recs = tuple(pair_agreement(p, sup) for p in pairs if not p.skipped)
    seen = {frozenset((r.fact_a, r.fact_b)) for r in recs}
    unpaired = tuple(SdkSupersession(old, new) for old, new in sup.items()
                     if frozenset((old, new)) not in seen and kb.get(new) is not None)
    return SdkAgreement(recs, unpaired)

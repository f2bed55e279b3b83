"""Arbitration of one conflicting pair (SPEC-027 §2.3-§2.5): higher authority wins, a tie keeps
both behind a NOTE block, an operator decision dismisses or overrides (its audit event is
:mod:`.audit`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from crp_core.config import CRPConfig
from crp_core.decisions import Decisions, pair_decision_map, pair_key, split_pair_key
from crp_core.factors.recency import fact_attributes
from crp_core.model import Fact, KnowledgeBase
from crp_core.records import Authority, ConflictPair, Resolution
from crp_core.stages.contradictions.authority import authority_of
from crp_core.stages.tie_groups import note_block

DECISION_KINDS = ("dismiss", "override", "accept")
#: authorities and margins are ordered on this many decimals, so float noise never decides an order
AUTHORITY_DECIMALS = 12


def decision_for(decisions: Decisions, a: str, b: str) -> tuple[str | None, str | None]:
    """(kind, winner) of the operator decision on {a, b}, or (None, None)."""
    pairs = pair_decision_map(decisions)
    if not pairs:
        return None, None
    d = pairs.get(pair_key(a, b))
    if d is None:
        return None, None
    kind, winner = d.get("kind"), d.get("winner")
    if kind not in DECISION_KINDS:
        raise ValueError(
            f"decision on pair {a!r}/{b!r}: unknown kind {kind!r}; expected one of {', '.join(DECISION_KINDS)}"
        )
    if kind == "override" and winner not in (a, b):
        raise ValueError(f"decision on pair {a!r}/{b!r}: override winner {winner!r} is not one of the pair")
    return kind, winner


# ================================================================================================
# Arbitration of one pair
# ================================================================================================


@dataclass(frozen=True)
class Arbitration:
    kept: tuple[str, ...]
    suppressed: str | None
    tied: bool
    decision: str | None
    dismissed: bool


def has_pair_decisions(decisions: Decisions) -> bool:
    """Whether ``decisions`` holds any pair decision (else :func:`decision_for` is (None, None) for every pair)."""
    return bool(pair_decision_map(decisions))


#: the decisions that say a pair conflicts: an operator's accept (authority decides) or override (they decide)
ASSERTING_KINDS = frozenset({"accept", "override"})


def asserted_pairs(ids: list[str], decisions: Decisions) -> list[tuple[int, int]]:
    """Positions ``(p, q)``, ``p < q``, sorted, of each pair of ``ids`` (distinct fact ids) an operator accepted
    or overrode: a conflict by their word, whatever the cosine or the detector says (stage 4 arbitrates it,
    docs/decisions/triage.md "A decided pair is a conflict"). Reads whichever is fewer, the decisions or the
    pairs of ``ids``."""
    pairs = pair_decision_map(decisions)
    if not pairs:
        return []
    pos = {fid: p for p, fid in enumerate(ids)}
    n = len(ids)
    if len(pairs) <= n * (n - 1) // 2:
        keys = [k for k, d in pairs.items() if d.get("kind") in ASSERTING_KINDS]
        found = ((pos.get(a), pos.get(b)) for a, b in map(split_pair_key, keys))
        return sorted((min(p, q), max(p, q)) for p, q in found if p is not None and q is not None)
    return [(p, q) for p in range(n) for q in range(p + 1, n) if asserts(pairs, ids[p], ids[q])]


def asserts(pairs: Mapping[str, Mapping[str, Any]], a: str, b: str) -> bool:
    """Whether an operator accepted or overrode the pair {a, b} (``pairs``: :func:`pair_decision_map`'s)."""
    d = pairs.get(pair_key(a, b))
    return d is not None and d.get("kind") in ASSERTING_KINDS


#: one pair's arbitration as plain values: (kept ids, suppressed id or None, tied, decision applied)
Outcome = tuple[tuple[str, ...], str | None, bool, str | None]


def outcome(a: Authority, b: Authority, config: CRPConfig, kind: str | None, winner: str | None) -> Outcome:
    """Higher authority wins; |a1 - a2| <= authority_tie_tolerance is a tie (SPEC-027 §2.3, §2.5).
    An operator ``dismiss`` leaves the pair alone; an ``override`` names the winner. The values of
    :func:`arbitrate`'s record, for stage 4's loop over every conflicting pair of a run."""
    if kind == "dismiss":
        return (a.fact_id, b.fact_id), None, False, "dismiss"
    if kind == "override":
        loser = b.fact_id if winner == a.fact_id else a.fact_id
        return (winner,), loser, False, "override"  # type: ignore[return-value]
    if abs(a.authority - b.authority) <= config.authority_tie_tolerance:
        return (a.fact_id, b.fact_id), None, True, kind
    win, lose = (a, b) if a.authority > b.authority else (b, a)
    return (win.fact_id,), lose.fact_id, False, kind


def changed_by_decision(pair: ConflictPair, config: CRPConfig) -> bool:
    """Whether the operator's decision on ``pair`` changed what stage 4 did with it: a dismissal always (the pair
    is left alone instead of arbitrated), an accept or override that made the pair a conflict (``asserted``), and
    an override whose winner authority would not have chosen alone (the other fact, or a tie). An accept of a
    pair the detector found, or an override naming authority's own winner, changes nothing."""
    if pair.decision is None:
        return False
    if pair.decision == "dismiss" or pair.asserted:
        return True
    if pair.decision != "override":
        return False
    a, b = pair.authority[pair.fact_a], pair.authority[pair.fact_b]
    _kept, loser, tied, _kind = outcome(a, b, config, None, None)
    return tied or loser != pair.suppressed


def tied_and_losers(
    a: np.ndarray, b: np.ndarray, pos_a: np.ndarray, pos_b: np.ndarray, config: CRPConfig
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`outcome` without an operator decision for many pairs at once: (tied, loser) per pair, from the
    authorities ``a`` and ``b`` of its two sides (float64) and their positions; a tied pair's loser is
    meaningless. The same float comparisons as :func:`outcome`, elementwise: a NaN authority ties nothing,
    and a pair whose ``a > b`` is false (a NaN on either side included) loses its ``a`` side, as there."""
    tied = np.abs(a - b) <= config.authority_tie_tolerance
    return tied, np.where(a > b, pos_b, pos_a)


def arbitrate(a: Authority, b: Authority, config: CRPConfig, kind: str | None, winner: str | None) -> Arbitration:
    """Higher authority wins; |a1 - a2| <= authority_tie_tolerance is a tie (SPEC-027 §2.3, §2.5).
    An operator ``dismiss`` leaves the pair alone; an ``override`` names the winner (:func:`outcome`)."""
    kept, suppressed, tied, decision = outcome(a, b, config, kind, winner)
    return Arbitration(kept, suppressed, tied, decision, decision == "dismiss")


def tied_rows(resolution: Resolution, kb: Any) -> tuple[tuple[int, int], ...]:
    """(row_a, row_b) of every tied, arbitrated pair (not skipped, not dismissed), processing order: what the
    packer joins into tie groups, one NOTE block each (docs/reference/pipeline.md §6). Stage 4 keeps them in
    :attr:`Resolution.tied_rows`; ``kb`` is the knowledge base the rows index."""
    del kb  # the rows are stage 4's own
    return tuple(map(tuple, resolution.tied_rows.tolist()))


def note_for(fact_a: Fact, fact_b: Fact) -> str:
    """The SPEC-027 §2.5 NOTE block for a tied pair, in the packer's exact format: the envelope's NOTE of a
    tie group of these two facts, both packed (a larger group's NOTE lists all its packed facts)."""
    return note_block(fact_a.content, fact_b.content)


def authority_winner(pair: ConflictPair, config: CRPConfig) -> str | None:
    """The winner of ``pair`` by authority alone (SPEC-027 §2.3), None for a tie (§2.5): what an
    operator's "accept" records."""
    return _winner(pair.authority[pair.fact_a], pair.authority[pair.fact_b], config)


def winner_by_authority(kb: KnowledgeBase, a: str, b: str, config: CRPConfig, now: datetime) -> str | None:
    """The winner of facts ``a`` and ``b`` of ``kb`` by authority alone at ``now`` (SPEC-027 §2.3), None for a
    tie (§2.5): what an accept records when no arbitrated pair is at hand (``triage record`` without
    ``--winner``). The facts must be in ``kb``."""
    factor = fact_attributes(kb, now, config).factor
    ia, ib = kb.index_of(a), kb.index_of(b)
    auth_a = authority_of(kb.facts[ia], float(factor[ia]), config)
    auth_b = authority_of(kb.facts[ib], float(factor[ib]), config)
    return _winner(auth_a, auth_b, config)


def _winner(a: Authority, b: Authority, config: CRPConfig) -> str | None:
    """The fact of higher authority, None for a tie: arbitration with no operator decision."""
    arb = arbitrate(a, b, config, None, None)
    return None if arb.tied else arb.kept[0]

"""The known-conflict guard (beyond SPEC-027; docs/decisions/known-conflicts.md).

Stage 4 (SPEC-027 §2) arbitrates only the facts an envelope selected: when the higher-authority
side of a conflict is not retrieved, the loser reaches the model unopposed. Conflicts are known
outside one run, from the whole-CKF scan (:func:`crp_core.analysis.scan.scan_ckf`, every pair
arbitrated by authority) and from operator decisions (an override or an accepted arbitration names
a winner). :func:`known_conflicts` collects them; :func:`guard_selection` checks a run's selection
against them, and the pipeline flags, pulls the winner in or drops the loser as
``known_conflict_action`` says.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from crp_core.analysis.scan import ConflictScan
from crp_core.model import KnowledgeBase
from crp_core.records import (
    ACTION_FLAGGED,
    ACTION_LOSER_DROPPED,
    ACTION_WINNER_PULLED,
    SOURCE_OPERATOR,
    SOURCE_SCAN,
    KnownConflict,
    KnownConflictFlag,
)
from crp_core.triage.decisions import DecisionSet, split_pair_key

EVENT_KNOWN_CONFLICT = "KNOWN_CONFLICT_GUARD"


def known_conflicts(
    scan: ConflictScan | None = None, decisions: DecisionSet | None = None
) -> tuple[KnownConflict, ...]:
    """The conflicts with a decided winner: arbitrated (not tied, not dismissed) pairs of the scan and
    the operators' overrides and accepted arbitrations. An operator decision on a pair wins over the
    scan's arbitration of it; the result is sorted by (loser, winner)."""
    by_pair: dict[frozenset[str], KnownConflict] = {}
    if scan is not None:
        for p in scan.pairs:
            if p.skipped or p.tied or p.suppressed is None or p.decision == "dismiss" or not p.kept:
                continue
            by_pair[frozenset((p.fact_a, p.fact_b))] = KnownConflict(
                winner=p.kept[0],
                loser=p.suppressed,
                source=SOURCE_OPERATOR if p.decision else SOURCE_SCAN,
                patterns=tuple(p.patterns),
                margin=float(p.margin),
            )
    if decisions is not None:
        for key, d in decisions.pair_decisions.items():
            a, b = split_pair_key(key)
            pair = frozenset((a, b))
            winner = d.get("winner")
            if d.get("kind") == "dismiss":
                by_pair.pop(pair, None)
            elif winner in (a, b):
                loser = b if winner == a else a
                patterns = by_pair[pair].patterns if pair in by_pair else ()
                by_pair[pair] = KnownConflict(
                    winner=str(winner), loser=loser, source=SOURCE_OPERATOR, patterns=patterns
                )
    return tuple(sorted(by_pair.values(), key=lambda k: (k.loser, k.winner)))


@dataclass(frozen=True)
class GuardResult:
    """What :func:`guard_selection` found and changed."""

    rows: tuple[int, ...]  # the selection after the action (selection order kept)
    flags: tuple[KnownConflictFlag, ...]
    pulled: tuple[tuple[int, int], ...]  # (winner row, loser row) for pull_winner


def guard_selection(
    kb: KnowledgeBase,
    selected: Sequence[int] | np.ndarray,
    retrievable: Sequence[bool] | np.ndarray,
    known: Iterable[KnownConflict],
    action: str,
) -> GuardResult:
    """Check the selected rows against ``known``: a selected loser whose retrievable winner is not
    selected is flagged; ``pull_winner`` puts the winner in the loser's slot (once; a winner already
    pulled for another loser drops that loser), ``drop_loser`` takes the loser out, ``flag`` changes
    nothing, ``off`` checks nothing."""
    rows = selected.tolist() if isinstance(selected, np.ndarray) else [int(r) for r in selected]
    if action == "off":
        return GuardResult(tuple(rows), (), ())
    beaten: dict[str, list[KnownConflict]] = {}
    for k in known:
        beaten.setdefault(k.loser, []).append(k)
    if not beaten:  # no known conflict: nothing to check
        return GuardResult(tuple(rows), (), ())
    chosen = {kb.facts[r].fact_id for r in rows}
    flags: list[KnownConflictFlag] = []
    out: list[int] = []
    pulled: list[tuple[int, int]] = []
    taken = set(chosen)
    act = {"flag": ACTION_FLAGGED, "pull_winner": ACTION_WINNER_PULLED, "drop_loser": ACTION_LOSER_DROPPED}[action]
    for r in rows:
        fid = kb.facts[r].fact_id
        hit = next(
            (
                k
                for k in beaten.get(fid, ())
                if k.winner not in chosen and kb.get(k.winner) is not None and bool(retrievable[kb.index_of(k.winner)])
            ),
            None,
        )
        if hit is None:
            out.append(r)
            continue
        flags.append(
            KnownConflictFlag(loser=fid, winner=hit.winner, source=hit.source, patterns=hit.patterns, action=act)
        )
        if action == "flag":
            out.append(r)
        elif action == "pull_winner" and hit.winner not in taken:
            w = kb.index_of(hit.winner)
            out.append(w)
            pulled.append((w, r))
            taken.add(hit.winner)
    return GuardResult(tuple(out), tuple(flags), tuple(pulled))

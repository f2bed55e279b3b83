"""The known-conflict guard (beyond SPEC-027; docs/decisions/known-conflicts.md), run by the pipeline
after stage 4.

Stage 4 (SPEC-027 §2) arbitrates only the facts an envelope selected: when the higher-authority
side of a conflict is not retrieved, the loser reaches the model unopposed. :func:`guard_selection`
checks a run's selection against the conflicts known outside the run (:class:`KnownConflict`, from
the whole-CKF scan and operator decisions: ``crp_core.analysis.known.known_conflicts``) and flags,
pulls the winner in or drops the loser as ``known_conflict_action`` says; :func:`known_flag_data` is
the data of its audit event (:data:`EVENT_KNOWN_CONFLICT`) and of the report's ``known_conflicts``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from crp_core.model import KnowledgeBase
from crp_core.records import (
    ACTION_FLAGGED,
    ACTION_LOSER_DROPPED,
    ACTION_WINNER_PULLED,
    KnownConflict,
    KnownConflictFlag,
)

EVENT_KNOWN_CONFLICT = "KNOWN_CONFLICT_GUARD"

#: what the guard is given: the known conflicts, or a lookup it calls with the selected rows when it checks
#: them (``crp_core.analysis.known.SelectionKnownConflicts``: only the selection's own pairs are found)
KnownSource: TypeAlias = Iterable[KnownConflict] | Callable[[np.ndarray], Iterable[KnownConflict]]


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
    known: KnownSource,
    action: str,
    lost: Iterable[int] = (),
) -> GuardResult:
    """Check the selected rows against ``known``: a selected loser whose retrievable winner is not
    selected is flagged; ``pull_winner`` puts the winner in the loser's slot (once; a winner already
    pulled for another loser drops that loser), ``drop_loser`` takes the loser out, ``flag`` changes
    nothing, ``off`` checks nothing (a lookup is not called).

    ``lost``: the rows stage 4 of this run took out of the selection (a contradiction's loser, a near-duplicate
    of a kept fact). A known winner among them is no winner here: it lost to, or is repeated by, a fact the run
    kept, so the guard neither pulls it back (that would pack a fact stage 4 suppressed beside its own winner)
    nor drops its loser for it."""
    rows = selected.tolist() if isinstance(selected, np.ndarray) else [int(r) for r in selected]
    if action == "off" or not rows:
        return GuardResult(tuple(rows), (), ())
    found = known(np.asarray(rows, dtype=np.int64)) if callable(known) else known
    beaten: dict[str, list[KnownConflict]] = {}
    for k in found:
        beaten.setdefault(k.loser, []).append(k)
    if not beaten:  # no known conflict: nothing to check
        return GuardResult(tuple(rows), (), ())
    chosen = {kb.facts[r].fact_id for r in rows}
    out_of_run = {kb.facts[int(r)].fact_id for r in lost}
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
                if k.winner not in chosen
                and k.winner not in out_of_run
                and kb.get(k.winner) is not None
                and bool(retrievable[kb.index_of(k.winner)])
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


def known_flag_data(flag: KnownConflictFlag) -> dict[str, Any]:
    """One finding of the known-conflict guard (report key ``known_conflicts``, audit event data)."""
    return {
        "loser": flag.loser,
        "winner": flag.winner,
        "source": flag.source,
        "patterns": list(flag.patterns),
        "action": flag.action,
        "message": flag.message,
    }

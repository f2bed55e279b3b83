"""SPEC-003 §6.6 near-duplicates in stage 3 (docs/reference/pipeline.md §3, §2.8): anchors are picked in CDR order
skipping a near-duplicate of an already chosen one (:class:`AnchorPicker`), connectors are chosen
skipping a near-duplicate of an anchor (:func:`choose_connectors`); a pair that value-conflicts is
never a near-duplicate (both stay, stage 4 arbitrates).

Rows are screened with one float32 product per block: a screening cosine :data:`COSINE_SLACK` below
``dedup_similarity`` decides the comparison exactly as the recorded evaluation would, and a row the
screen flags is decided by the exact per-row check (whose cosines are the ones recorded).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact
from crp_core.records import ValueConflict
from crp_core.stages.bits import row_bits
from crp_core.support.frozen import DeferredTuple

#: ``values_conflict(text_a, text_b)``: the value conflict between two texts, or None
ConflictFn = Callable[[str, str], ValueConflict | None]

#: bound on |a - b| for two float32 evaluations of one cosine of unit vectors (dimension <= ~1000:
#: each is within d * 2**-24 of the exact value): a screening cosine this far below a threshold
#: decides the comparison exactly as the recorded evaluation would
COSINE_SLACK = 1e-4
#: rows screened per window beyond the ones still needed: a small window keeps the screening product
#: small, and most rows pass
WINDOW_SPARE = 4


class AnchorPicker:
    """Anchors taken from ``ranked_rows`` (CDR order) skipping SPEC-003 §6.6 near-duplicates of the rows
    already chosen that do not value-conflict with them. ``chosen`` (the rows taken so far, extended
    by every :meth:`take`) and ``near_duplicates`` (``(skipped row, chosen row, cosine)``, appended)
    are shared by the stage's two picks: the anchors, then the extra anchors of unused connector slots.
    """

    def __init__(
        self,
        corpus: Corpus,
        ranked_rows: np.ndarray,
        *,
        config: CRPConfig,
        values_conflict: ConflictFn,
        chosen: list[int] | None = None,
    ) -> None:
        self.corpus = corpus
        self.ranked_rows = ranked_rows
        self.config = config
        self.values_conflict = values_conflict
        self.chosen: list[int] = [] if chosen is None else chosen
        self.near_duplicates: list[tuple[int, int, float]] = []

    def take(self, count: int, *, start: int, exclude: set[int]) -> tuple[list[int], int]:
        """Up to ``count`` rows from ``ranked_rows[start:]`` not in ``exclude``: (picked rows, next start).

        The rows are screened a block at a time with one product against the chosen rows and the block
        itself, each row's screening test a bit mask over those columns (:func:`row_bits`). A row whose
        screening cosine with every row chosen before it stays :data:`COSINE_SLACK` below
        ``dedup_similarity`` cannot be a near-duplicate and is taken; so is a row that value-conflicts
        with every chosen row it comes that close to (the exact check's candidates are among those);
        any other row is decided by the exact per-row check (whose cosines are the ones recorded).
        """
        picked: list[int] = []
        chosen = self.chosen
        ranked = self.ranked_rows
        p = start
        while len(picked) < count and p < ranked.size:
            block = ranked[p : p + count - len(picked) + WINDOW_SPARE]
            n0 = len(chosen)
            basis = chosen + block.tolist()  # the fact row of each screening column
            hot = self._screen(block, n0)
            cols = (1 << n0) - 1  # the columns of the rows chosen so far
            for j, row in enumerate(basis[n0:]):
                p += 1
                if row in exclude:
                    continue
                near = hot[j] & cols
                if near and not self._conflicts_all(row, near, basis):
                    dup_of = _near_duplicate_of(self.corpus, chosen, row, self.config, self.values_conflict)
                    if dup_of is not None:
                        self.near_duplicates.append((row, dup_of[0], dup_of[1]))
                        continue
                picked.append(row)
                chosen.append(row)
                cols |= 1 << (n0 + j)
                if len(picked) == count:
                    break
        return picked, p

    def _screen(self, block: np.ndarray, n0: int) -> list[int]:
        """Per block row, the bit mask of the screening columns (the ``n0`` chosen rows, then the block)
        whose screening cosine with it reaches ``dedup_similarity - COSINE_SLACK``."""
        vecs = self.corpus.vectors
        bv = vecs[block]  # gathered once: the block is also the product's last columns
        basis = np.concatenate([vecs[self.chosen], bv]) if n0 else bv
        return row_bits(bv @ basis.T > self.config.dedup_similarity - COSINE_SLACK)

    def _conflicts_all(self, row: int, near: int, basis: list[int]) -> bool:
        """Whether ``row`` value-conflicts with every screening column of the mask ``near``."""
        facts = self.corpus.kb.facts
        text = facts[row].content
        values_conflict = self.values_conflict
        while near:
            low = near & -near
            near ^= low
            if not values_conflict(facts[basis[low.bit_length() - 1]].content, text):
                return False
        return True


def _near_duplicate_of(
    corpus: Corpus, chosen: list[int], row: int, config: CRPConfig, values_conflict: ConflictFn
) -> tuple[int, float] | None:
    """The closest row of ``chosen`` whose cosine with ``row`` exceeds ``dedup_similarity`` and that
    does not value-conflict with it, with that cosine; None when there is none (SPEC-003 §6.6)."""
    vecs = corpus.vectors
    return _closest_kept(
        vecs[chosen] @ vecs[row], chosen, corpus.kb.facts, row, config.dedup_similarity, values_conflict
    )


def _closest_kept(
    sims: np.ndarray, others: list[int], facts: Sequence[Fact], row: int, dedup: float, values_conflict: ConflictFn
) -> tuple[int, float] | None:
    """Of ``others`` (cosines ``sims`` with ``row``), the closest above ``dedup`` (ties by position) that
    does not value-conflict with ``row``, with its cosine; None when there is none."""
    close = np.flatnonzero(sims > dedup)
    text = facts[row].content
    for c in close[np.argsort(-sims[close], kind="stable")].tolist():
        other = others[c]
        if not values_conflict(facts[other].content, text):
            return other, float(sims[c])
    return None


def connector_near_duplicates(
    corpus: Corpus,
    anchors: np.ndarray,
    cands: np.ndarray,
    pos: np.ndarray,
    *,
    config: CRPConfig,
    values_conflict: ConflictFn,
    cand_vectors: np.ndarray | None = None,
) -> list[tuple[int, int, float]]:
    """Connector candidates ``cands[pos]`` that are SPEC-003 §6.6 near-duplicates of an anchor (cosine
    > ``dedup_similarity``) and do not value-conflict with it: dropped before the connectors are chosen
    (docs/reference/pipeline.md §6), so the next candidate takes the slot. A candidate that value-conflicts with every
    such anchor stays (stage 4 arbitrates).

    Returns (candidate row, anchor row, cosine), the closest non-conflicting anchor for each, by row.
    One (candidates x anchors) screening product; the rows it flags get :meth:`DuplicateScreen.duplicate_of`'s
    exact check (its cosines are the ones recorded, whatever rows were screened together).
    ``cand_vectors`` = ``corpus.vectors[cands]`` when the caller already gathered them.
    """
    if pos.size == 0 or anchors.size == 0:
        return []
    screen = DuplicateScreen(corpus, anchors, config, values_conflict)
    rows = cands[pos]
    flagged = screen.flags(rows, None if cand_vectors is None else cand_vectors[pos])
    found = [screen.duplicate_of(r) for r in rows[flagged].tolist()]
    return sorted(f for f in found if f is not None)


class DuplicateScreen:
    """The connector candidates' near-duplicate check against the anchors (SPEC-003 §6.6, docs/reference/
    §2.8): :meth:`flags` screens rows with one product (a row whose cosine with every anchor stays
    :data:`COSINE_SLACK` below ``dedup_similarity`` cannot be a near-duplicate), :meth:`duplicate_of`
    decides a flagged row exactly."""

    __slots__ = ("vecs", "anchor_list", "anchor_vecs", "texts", "dedup", "values_conflict")

    def __init__(self, corpus: Corpus, anchors: np.ndarray, config: CRPConfig, values_conflict: ConflictFn):
        self.vecs = corpus.vectors
        self.anchor_list: list[int] = anchors.tolist()
        self.anchor_vecs = corpus.vectors[anchors]
        self.texts = corpus.kb.facts
        self.dedup = config.dedup_similarity
        self.values_conflict = values_conflict

    def flags(self, rows: np.ndarray, row_vectors: np.ndarray | None = None) -> np.ndarray:
        """(len(rows),) bool: True where a row's screening cosine with some anchor reaches the limit."""
        got = self.vecs[rows] if row_vectors is None else row_vectors
        return (got @ self.anchor_vecs.T > self.dedup - COSINE_SLACK).any(axis=1)

    def near_bits(self, rows: np.ndarray) -> list[int]:
        """Per row, the bit mask of the anchors (anchor order) whose screening cosine with it reaches
        ``dedup_similarity - COSINE_SLACK``: the only anchors it can be a near-duplicate of."""
        return row_bits(self.vecs[rows] @ self.anchor_vecs.T > self.dedup - COSINE_SLACK)

    def duplicate_of_near(self, row: int, near: int) -> tuple[int, int, float] | None:
        """:meth:`duplicate_of` for a row whose screening mask is ``near``: None without the exact check when
        the row value-conflicts with every anchor of the mask (the exact check's candidates are among them)."""
        if not near:
            return None
        facts = self.texts
        text = facts[row].content
        anchors = self.anchor_list
        while near:
            low = near & -near
            near ^= low
            if not self.values_conflict(facts[anchors[low.bit_length() - 1]].content, text):
                return self.duplicate_of(row)
        return None

    def duplicate_of(self, row: int) -> tuple[int, int, float] | None:
        """(row, anchor row, cosine) for the closest anchor above ``dedup_similarity`` that does not
        value-conflict with ``row`` (ties by anchor order); None when there is none. One product of the
        anchors with this row alone, so the cosine does not depend on which rows were screened with it."""
        got = _closest_kept(
            self.anchor_vecs @ self.vecs[row], self.anchor_list, self.texts, row, self.dedup, self.values_conflict
        )
        return None if got is None else (row, got[0], got[1])


def choose_connectors(
    corpus: Corpus,
    anchors: np.ndarray,
    cands: np.ndarray,
    order: np.ndarray,
    slots: int,
    *,
    config: CRPConfig,
    values_conflict: ConflictFn,
) -> tuple[np.ndarray, Sequence[tuple[int, int, float]]]:
    """The selected connector positions (the first ``slots`` of ``order``, best first, that are not
    near-duplicates of an anchor) and every near-duplicate among ``order`` (:func:`connector_near_duplicates`,
    by row).

    Only as many candidates as the slots need are screened here, a window at a time in ``order``; the
    near-duplicates among the rest are listed when the record is first read (a sweep never reads them).
    A row is decided by :class:`DuplicateScreen` the same way on either side, so the listing is what one
    pass over every candidate gives.
    """
    if anchors.size == 0:
        return order[:slots].astype(np.int64), ()
    screen = DuplicateScreen(corpus, anchors, config, values_conflict)
    taken: list[int] = []
    found: list[tuple[int, int, float]] = []
    p = 0
    while len(taken) < slots and p < order.size:
        window = order[p : p + slots - len(taken) + WINDOW_SPARE]
        rows = cands[window]
        for at, row, mask in zip(window.tolist(), rows.tolist(), screen.near_bits(rows)):
            p += 1
            dup = screen.duplicate_of_near(row, mask)
            if dup is None:
                taken.append(at)
                if len(taken) == slots:
                    break
            else:
                found.append(dup)
    rest = order[p:]

    def listing() -> list[tuple[int, int, float]]:
        later = connector_near_duplicates(corpus, anchors, cands, rest, config=config, values_conflict=values_conflict)
        return sorted(found + later)

    near: Sequence[tuple[int, int, float]] = DeferredTuple(listing) if rest.size else tuple(sorted(found))
    return np.asarray(taken, dtype=np.int64), near

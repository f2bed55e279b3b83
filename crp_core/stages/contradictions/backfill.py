"""Stage 4, step 4: backfill (SPEC-027 §2, docs/reference/pipeline.md §4, §2.8). Each slot freed by a
suppressed loser or a deduplicated fact goes to the next fact of the ranked pool that is not selected, is
retrievable, and neither near-duplicates nor value-conflicts a kept fact: screened with bit masks of one
product per block of pool rows (:class:`BackfillScreen`), the exact check (:func:`backfill_obstacle`) near a
threshold. A fact passed over is kept with what was in its way, so its outcome says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.decisions import Decisions, pair_decision_map
from crp_core.stages.bits import row_bits
from crp_core.stages.contradictions.arbitration import asserts
from crp_core.stages.contradictions.values import values_conflict
from crp_core.stages.near_duplicates import COSINE_SLACK

#: why the backfill passed over a pool fact: it near-duplicates a kept fact, value-conflicts with one, or an
#: operator accepted or overrode its pair with one
NEAR_DUPLICATE = "near-duplicate"
VALUE_CONFLICT = "value conflict"
DECIDED_CONFLICT = "operator decision"
#: (kept fact row, why) of a pool fact that does not fit; None when it fits
Obstacle = tuple[int, str] | None


def backfill_slots(
    corpus: Corpus,
    sel_rows: list[int],
    freed: list[int],
    kept_rows: list[int],
    ranked_pool: Sequence[int] | np.ndarray,
    config: CRPConfig,
    decisions: Decisions = None,
) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]]:
    """Step 4: (new row, row whose slot it took) for each freed position, in order, while the pool lasts, and
    (pool row, kept row, why) of each pool fact passed over on the way (:data:`Obstacle`); ``kept_rows`` is
    extended with the backfilled rows. A pool fact an operator decided conflicts with a kept fact (an accept
    or an override) does not fit, as a value conflict does not."""
    if not freed:
        return [], []
    kb = corpus.kb
    backfilled: list[tuple[int, int]] = []
    passed_over: list[tuple[int, int, str]] = []
    taken = set(sel_rows)
    retrievable = np.asarray(corpus.retrievable, dtype=bool)
    pool = np.asarray(ranked_pool, dtype=np.int64).reshape(-1)
    screen = BackfillScreen(np.asarray(corpus.vectors, dtype=np.float32), pool, kept_rows, config)
    pairs = pair_decision_map(decisions)
    cursor = 0
    for loser in freed:
        while cursor < pool.size:
            c = int(pool[cursor])
            cursor += 1
            if c in taken or not retrievable[c]:
                continue
            taken.add(c)
            why = screen.obstacle(cursor - 1, kb, config) or decided_against(pairs, kb, c, kept_rows)
            if why is not None:
                passed_over.append((c, *why))
                continue
            backfilled.append((c, sel_rows[loser]))
            kept_rows.append(c)
            screen.kept(cursor - 1)
            break
    return backfilled, passed_over


def decided_against(pairs: Mapping[str, Mapping[str, Any]], kb: Any, c: int, kept_rows: list[int]) -> Obstacle:
    """The first kept row whose pair with fact row ``c`` an operator accepted or overrode."""
    if not pairs:
        return None
    facts, cid = kb.facts, kb.facts[c].fact_id
    r = next((r for r in kept_rows if asserts(pairs, cid, facts[r].fact_id)), None)
    return None if r is None else (r, DECIDED_CONFLICT)


#: pool rows screened per product
_SCREEN_ROWS = 32


class BackfillScreen:
    """Screening cosines of the backfill pool against the kept rows, one product per block of pool
    rows (the kept rows at the block's start, plus the block itself for the rows it backfills).

    Each block row's three threshold tests (within ``COSINE_SLACK`` of a threshold, above
    ``dedup_similarity``, above ``contradiction_similarity``) are bit masks over the block's columns,
    and the kept columns are one more mask, so screening a pool row is a few integer ``&``s and only
    the close kept facts go to :func:`values_conflict`."""

    def __init__(self, vecs: np.ndarray, pool: np.ndarray, kept_rows: list[int], config: CRPConfig) -> None:
        self.vecs, self.pool, self.kept_rows = vecs, pool, kept_rows
        self.dedup, self.close = float(config.dedup_similarity), float(config.contradiction_similarity)
        self.start = -1
        self.n0 = 0
        self.basis: list[int] = []  # fact row of each column
        self.near: list[int] = []
        self.dup: list[int] = []
        self.closer: list[int] = []
        self.cols = 0  # the kept columns

    def _block(self, i: int) -> None:
        self.start = i
        block = self.pool[i : i + _SCREEN_ROWS]
        self.n0 = len(self.kept_rows)
        self.basis = self.kept_rows + block.tolist()
        basis = np.asarray(self.basis, dtype=np.int64)
        # float32 products compared in float64, as Python compares the floats ``tolist`` gives
        cos = (self.vecs[block] @ self.vecs[basis].T).astype(np.float64)
        near = (np.abs(cos - self.dedup) <= COSINE_SLACK) | (np.abs(cos - self.close) <= COSINE_SLACK)
        r = cos.shape[0]
        bits = row_bits(np.concatenate([near, cos > self.dedup, cos > self.close]))  # one packing for the three
        self.near, self.dup, self.closer = bits[:r], bits[r : 2 * r], bits[2 * r :]
        self.cols = (1 << self.n0) - 1

    def obstacle(self, i: int, kb: Any, config: CRPConfig) -> Obstacle:
        """:func:`backfill_obstacle` for pool position ``i``, decided on the screening cosines; a cosine within
        ``COSINE_SLACK`` of a threshold takes the exact check. The columns are the kept rows in their order,
        so the lowest bit names the first kept fact in the way, as the exact check does."""
        if self.start < 0 or not self.start <= i < self.start + _SCREEN_ROWS:
            self._block(i)
        j = i - self.start
        cols = self.cols
        if not cols:
            return None
        c = int(self.pool[i])
        if self.near[j] & cols:
            return backfill_obstacle(c, self.kept_rows, self.vecs, kb, config)
        basis = self.basis
        dup = self.dup[j] & cols
        if dup:
            return basis[(dup & -dup).bit_length() - 1], NEAR_DUPLICATE
        close = self.closer[j] & cols
        if close:
            facts = kb.facts
            text = facts[c].content
            while close:
                low = close & -close
                close ^= low
                k = basis[low.bit_length() - 1]
                if values_conflict(text, facts[k].content, config.detector_learned) is not None:
                    return k, VALUE_CONFLICT
        return None

    def kept(self, i: int) -> None:
        """Pool position ``i`` (screened by the last :meth:`obstacle` call, which found none) was appended to the
        kept rows."""
        self.cols |= 1 << (self.n0 + (i - self.start))


def backfill_obstacle(c: int, kept_rows: list[int], vecs: np.ndarray, kb: Any, config: CRPConfig) -> Obstacle:
    """What keeps fact row ``c`` from backfilling: the first kept fact it near-duplicates, else the first it
    value-conflicts with (None: it fits)."""
    if not kept_rows:
        return None
    cos = vecs[kept_rows] @ vecs[c]
    dup = np.flatnonzero(cos > config.dedup_similarity)
    if dup.size:
        return kept_rows[int(dup[0])], NEAR_DUPLICATE
    text = kb.facts[c].content
    for k in np.flatnonzero(cos > config.contradiction_similarity):
        if values_conflict(text, kb.facts[kept_rows[int(k)]].content, config.detector_learned) is not None:
            return kept_rows[int(k)], VALUE_CONFLICT
    return None

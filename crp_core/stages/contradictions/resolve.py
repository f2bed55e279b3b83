"""Stage 4: contradiction resolution over the selected facts (SPEC-027 §2, SPEC_NOTES §2.6).

Detects the conflicting pairs (cosine above ``contradiction_similarity`` and :func:`values_conflict`),
applies SPEC-003 §6.6 dedup to the pairs that do not conflict, arbitrates by authority, suppresses
the losers and backfills their slots. Pure: no I/O, every constant from :class:`CRPConfig`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.decisions import Decisions
from crp_core.records import AuditEvent, ConflictPair, Resolution, ValueConflict
from crp_core.stages.bits import row_bits
from crp_core.stages.contradictions.arbitration import AUTHORITY_DECIMALS, arbitrate, decision_for, note_for
from crp_core.stages.contradictions.audit import conflict_event
from crp_core.stages.contradictions.authority import RecencySource, authority_of, recency_factors
from crp_core.stages.contradictions.values import values_conflict
from crp_core.stages.near_duplicates import COSINE_SLACK
from crp_core.support.frozen import frozen_array


def _score_of(scores: Any, row: int) -> float:
    try:
        return float(scores[row])
    except (KeyError, IndexError, TypeError):
        return 0.0


def _unique_rows(rows: Iterable[int]) -> np.ndarray:
    seen = dict.fromkeys(np.asarray(rows, dtype=np.int64).reshape(-1).tolist())
    return np.fromiter(seen, dtype=np.int64, count=len(seen))


def resolve_contradictions(
    corpus: Corpus,
    selected_rows: Sequence[int] | np.ndarray,
    roles: Mapping[int, str],
    scores: Mapping[int, float],
    ranked_pool: Sequence[int] | np.ndarray,
    recency: RecencySource,
    config: CRPConfig,
    decisions: Decisions = None,
    *,
    now: datetime | None = None,
) -> Resolution:
    """Contradiction resolution over the selected facts (SPEC-027 §2, SPEC_NOTES §2.6).

    1. One Gram matrix of the selected vectors; pairs above ``min(contradiction_similarity,
       dedup_similarity)`` go to :func:`values_conflict`.
    2. SPEC-003 §6.6 dedup over the pairs that do NOT value-conflict (cos > dedup_similarity):
       greedy in score order (ties by fact id), the higher score is kept; an anchor is always kept
       over a connector (a connector score is on another scale than a CDR, SPEC_NOTES §2.8).
    3. Conflicting pairs (cos > contradiction_similarity) among the survivors, ordered by the pair's
       higher authority (descending) then fact ids; a pair with an already-suppressed fact is
       ``skipped``; otherwise the higher authority wins, a tie keeps both (NOTE block), an operator
       decision (``decisions[pair_key]``) dismisses or overrides.
    4. Backfill (``config.backfill``): each slot freed by suppression (losers, in processing order)
       or by dedup (in selection order) goes to the next fact of ``ranked_pool`` that is not
       selected, conflicts with no kept fact and is no near-duplicate of one (SPEC_NOTES §2.6, §2.8).

    ``recency``: the run's :class:`FactAttributes` (or a RecencyTable, or a row -> factor mapping; rows
    it lacks are read at ``now``). ``roles`` (row -> "anchor"/"connector") goes into the audit events;
    ``scores`` (row -> CDR or connector score) orders the dedup. ``decisions``: pair key ->
    ``{"kind", "winner"}`` (or a triage ``DecisionSet``).
    """
    kb = corpus.kb
    sel = _unique_rows(selected_rows)
    sel_rows = sel.tolist()
    ids = [kb.facts[r].fact_id for r in sel_rows]
    vecs = np.asarray(corpus.vectors, dtype=np.float32)
    V = vecs[sel]
    G = V @ V.T if sel.size else np.zeros((0, 0), dtype=np.float32)
    low = min(config.contradiction_similarity, config.dedup_similarity)
    iu, ju = np.nonzero(G > low)  # row-major: the upper triangle's pairs in the order triu gives them
    upper = iu < ju
    iu, ju = iu[upper], ju[upper]

    conflicts: dict[tuple[int, int], ValueConflict] = {}  # positions (p, q), p < q
    near_dups: list[tuple[int, int]] = []
    # the thresholds compared as numpy compares the float32 Gram entries (one pass each, not per pair)
    pair_sims = G[iu, ju]
    above_close = (pair_sims > config.contradiction_similarity).tolist()
    above_dedup = (pair_sims > config.dedup_similarity).tolist()
    contents = [kb.facts[r].content for r in sel_rows]
    for p, q, close, dup in zip(iu.tolist(), ju.tolist(), above_close, above_dedup):
        vc = values_conflict(contents[p], contents[q])
        if vc is not None:
            if close:
                conflicts[(p, q)] = vc
        elif dup:
            near_dups.append((p, q))

    # --- 2. SPEC-003 §6.6 dedup (non-conflicting pairs only) --------------------------------------
    dup_of: dict[int, list[int]] = {}
    for p, q in near_dups:
        dup_of.setdefault(p, []).append(q)
        dup_of.setdefault(q, []).append(p)
    # the dedup order's key of each position: anchors first, higher score first, then fact id
    keep_keys = [(roles.get(r) == "connector", -_score_of(scores, r), ids[p]) for p, r in enumerate(sel_rows)]
    keep_key = keep_keys.__getitem__
    order = sorted(range(sel.size), key=keep_key)
    alive: set[int] = set()
    deduplicated: list[tuple[int, int]] = []
    dropped: set[int] = set()
    for p in order:
        keepers = [q for q in dup_of.get(p, ()) if q in alive]
        if keepers:
            best = min(keepers, key=keep_key)
            deduplicated.append((sel_rows[p], sel_rows[best]))
            dropped.add(p)
        else:
            alive.add(p)

    # --- 3. arbitration ------------------------------------------------------------------------
    live_pairs = [(p, q) for (p, q) in conflicts if p not in dropped and q not in dropped]
    involved = sorted({p for pq in live_pairs for p in pq})
    factors = recency_factors(corpus, sel[involved] if involved else np.zeros(0, np.int64), recency, now, config)
    auth = {p: authority_of(kb.facts[sel_rows[p]], factors[sel_rows[p]], config) for p in involved}

    def order_key(pq: tuple[int, int]) -> tuple:
        p, q = pq
        lo, hi = sorted((ids[p], ids[q]))
        # authority rounded to AUTHORITY_DECIMALS: 0.8 * 0.65 * 0.9 and 0.9 * 0.65 * 0.8 differ by one ulp,
        # and float noise must not decide which pair is arbitrated first
        return (-round(max(auth[p].authority, auth[q].authority), AUTHORITY_DECIMALS), lo, hi)

    suppressed_pos: list[int] = []
    suppressed_set: set[int] = set()
    pairs: list[ConflictPair] = []
    audit: list[AuditEvent] = []
    notes: list[str] = []
    for p, q in sorted(live_pairs, key=order_key):
        if ids[q] < ids[p]:
            p, q = q, p  # fact_a is the smaller id
        a, b = auth[p], auth[q]
        vc = conflicts[(min(p, q), max(p, q))]
        if p > q:  # detected in selection order: the diffs' *_a sides must describe fact_a's text
            vc = values_conflict(contents[p], contents[q]) or vc
        sim = float(G[p, q])
        margin = abs(a.authority - b.authority)
        if p in suppressed_set or q in suppressed_set:
            pairs.append(
                ConflictPair.make(
                    ids[p],
                    ids[q],
                    sim,
                    vc.patterns,
                    vc,
                    {ids[p]: a, ids[q]: b},
                    tuple(i for k, i in ((p, ids[p]), (q, ids[q])) if k not in suppressed_set),
                    None,
                    False,
                    skipped=True,
                    margin=margin,
                )
            )
            continue
        kind, winner = decision_for(decisions, ids[p], ids[q])
        arb = arbitrate(a, b, config, kind, winner)
        pair = ConflictPair.make(
            ids[p],
            ids[q],
            sim,
            vc.patterns,
            vc,
            {ids[p]: a, ids[q]: b},
            arb.kept,
            arb.suppressed,
            arb.tied,
            skipped=False,
            margin=margin,
            decision=arb.decision,
        )
        pairs.append(pair)
        audit.append(
            conflict_event(
                pair, roles={ids[p]: str(roles.get(sel_rows[p], "")), ids[q]: str(roles.get(sel_rows[q], ""))}
            )
        )
        if arb.suppressed is not None:
            loser = p if arb.suppressed == ids[p] else q
            suppressed_pos.append(loser)
            suppressed_set.add(loser)
        if arb.tied:
            notes.append(note_for(kb.facts[sel_rows[p]], kb.facts[sel_rows[q]]))

    # --- 4. backfill -----------------------------------------------------------------------------
    kept_rows = [r for p, r in enumerate(sel_rows) if p not in dropped and p not in suppressed_set]
    backfilled: list[tuple[int, int]] = []
    freed = suppressed_pos + sorted(dropped)
    if config.backfill and freed:
        taken = set(sel_rows)
        retrievable = np.asarray(corpus.retrievable, dtype=bool)
        pool = np.asarray(ranked_pool, dtype=np.int64).reshape(-1)
        screen = _Screen(vecs, pool, kept_rows, config)
        cursor = 0
        for loser in freed:
            while cursor < pool.size:
                c = int(pool[cursor])
                cursor += 1
                if c in taken or not retrievable[c]:
                    continue
                taken.add(c)
                if screen.fits(cursor - 1, kb, config):
                    backfilled.append((c, sel_rows[loser]))
                    kept_rows.append(c)
                    screen.kept(cursor - 1)
                    break

    # --- final selection: selection order, a backfill in its loser's slot -------------------------
    fill_for = {old: new for new, old in backfilled}
    final: list[int] = []
    for p, r in enumerate(sel_rows):
        if p in dropped or p in suppressed_set:
            if r in fill_for:
                final.append(fill_for[r])
            continue
        final.append(r)
    return Resolution(
        selected=frozen_array(np.array(final, dtype=np.int64)),
        pairs=tuple(pairs),
        suppressed=frozen_array(np.array([sel_rows[p] for p in suppressed_pos], dtype=np.int64)),
        deduplicated=tuple(deduplicated),
        backfilled=tuple(backfilled),
        notes=tuple(notes),
        audit=tuple(audit),
    )


#: pool rows screened per product
_SCREEN_ROWS = 32


class _Screen:
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

    def fits(self, i: int, kb: Any, config: CRPConfig) -> bool:
        """:func:`_fits` for pool position ``i``, decided on the screening cosines; a cosine within
        ``COSINE_SLACK`` of a threshold takes the exact check."""
        if self.start < 0 or not self.start <= i < self.start + _SCREEN_ROWS:
            self._block(i)
        j = i - self.start
        cols = self.cols
        if not cols:
            return True
        c = int(self.pool[i])
        if self.near[j] & cols:
            return _fits(c, self.kept_rows, self.vecs, kb, config)
        if self.dup[j] & cols:
            return False
        close = self.closer[j] & cols
        if close:
            facts = kb.facts
            text = facts[c].content
            basis = self.basis
            while close:
                low = close & -close
                close ^= low
                if values_conflict(text, facts[basis[low.bit_length() - 1]].content) is not None:
                    return False
        return True

    def kept(self, i: int) -> None:
        """Pool position ``i`` (screened by the last :meth:`fits` call) was appended to the kept rows."""
        self.cols |= 1 << (self.n0 + (i - self.start))


def _fits(c: int, kept_rows: list[int], vecs: np.ndarray, kb: Any, config: CRPConfig) -> bool:
    """A backfill candidate: no near-duplicate of a kept fact, no value conflict with one."""
    if not kept_rows:
        return True
    cos = vecs[kept_rows] @ vecs[c]
    if np.any(cos > config.dedup_similarity):
        return False
    text = kb.facts[c].content
    for k in np.flatnonzero(cos > config.contradiction_similarity):
        if values_conflict(text, kb.facts[kept_rows[int(k)]].content) is not None:
            return False
    return True

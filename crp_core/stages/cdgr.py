"""Stage 3: coverage-differential graph retrieval, CDGR (SPEC-025 §2; SPEC_NOTES §2.5).

Phase A (seed): anchors = the top ``config.anchor_budget`` gated-in candidates by CDR, skipping a
candidate whose cosine with an already chosen anchor exceeds ``dedup_similarity`` (SPEC-003 §6.6)
unless the pair value-conflicts (then both stay and stage 4 arbitrates).
Phase B (expand): connector candidates = retrievable facts within ``max_hops`` of an anchor, not
anchors. Phase C (bridge): touched anchors = anchors at graph distance 1 or 2;
``bridge_value = (touched-anchor pairs with no direct edge) * mean_path_weight`` where
``mean_path_weight`` pools the edges of the connector's strongest shortest path to each touched
anchor (shortest in hops; among those, the one with the highest total weight).
``connector_score = bridge_value * novelty * recency_factor * max(relevance, min_connector_relevance)``
(SPEC-027 §3.3). Connectors with bridge value 0 are dropped, and so is a connector candidate that
is a near-duplicate of an anchor (cosine > ``dedup_similarity``, SPEC-003 §6.6) with no value conflict
with it (SPEC_NOTES §2.8: before the connectors are chosen, so the next candidate takes the slot);
the best fill the connector slots (``envelope_fact_budget - anchor_budget``); unused slots go to the
next CDR candidates (``extra_anchors``). With graph retrieval off, anchors take the whole budget.

The walk over the similarity graph, the bridge values and the edge listing are
:mod:`crp_core.stages.graph_walk` (it touches only the anchors' 2-hop neighbourhood, never the whole
matrix). A connector candidate stage 2 already scored keeps stage 2's relevance, coverage score and
residual pull (one value per fact).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, SupportsIndex, TypeVar, cast, overload

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.factors.ngram import NGram
from crp_core.factors.recency import RecencyTable, compute_recency, row_positions
from crp_core.model import Fact
from crp_core.records import CDGRResult, CDRTable, ConnectorTable, ValueConflict
from crp_core.stages.bits import bits_of, row_bits
from crp_core.stages.cdr import cdr_ranking, score_cdr
from crp_core.stages.contradictions.values import values_conflict as default_values_conflict
from crp_core.stages.graph_walk import bridge_values, bridged_anchor_positions, edges_among, walk_with_paths
from crp_core.support.frozen import DeferredTuple, frozen_array

if TYPE_CHECKING:
    from crp_core.factors.coverage import CoverageView

#: ``values_conflict(text_a, text_b)``: the value conflict between two texts, or None
ConflictFn = Callable[[str, str], ValueConflict | None]
_T = TypeVar("_T")
_U = TypeVar("_U")


# ---- Phase A: anchors ---------------------------------------------------------------------------
#: bound on |a - b| for two float32 evaluations of one cosine of unit vectors (dimension <= ~1000:
#: each is within d * 2**-24 of the exact value): a screening cosine this far below a threshold
#: decides the comparison exactly as the recorded evaluation would
COSINE_SLACK = 1e-4


def pick_anchors(
    corpus: Corpus,
    ranked_rows: np.ndarray,
    count: int,
    chosen: list[int],
    *,
    start: int,
    exclude: set[int],
    config: CRPConfig,
    values_conflict: ConflictFn,
    near_duplicates: list[tuple[int, int, float]],
) -> tuple[list[int], int]:
    """Take up to ``count`` rows from ``ranked_rows[start:]`` (CDR order), skipping SPEC-003 §6.6
    near-duplicates of rows in ``chosen`` that do not value-conflict with them.

    Returns (picked rows, next start position). ``chosen`` is extended in place (local list).
    The rows are screened a window at a time with one product against the chosen rows and the
    window itself: the window's leading rows whose screening cosine with every chosen row and every
    earlier window row stays :data:`COSINE_SLACK` below ``dedup_similarity`` are all taken at once
    (none of them can be a near-duplicate); the first row that does not is decided by the exact
    per-row check (whose cosines are the ones recorded), and the next window starts after it.
    """
    picked: list[int] = []
    vecs = corpus.vectors
    limit = config.dedup_similarity - COSINE_SLACK
    excluded = list(exclude)
    p = start
    while len(picked) < count and p < ranked_rows.size:
        need = count - len(picked)
        window = ranked_rows[p : p + need + WINDOW_SPARE]
        w = window.size
        n0 = len(chosen)
        free = ~np.isin(window, excluded) if excluded else None
        if n0 + w > 1:
            wv = vecs[window]  # gathered once: the window is also the product's last w columns
            basis = np.concatenate([vecs[chosen], wv]) if n0 else wv
            hot = wv @ basis.T > limit  # (w, n0 + w): screening cosine above the limit
            # row i meets the chosen rows and the (free) window rows before it, all taken while the prefix holds
            inner = hot[:, n0:]
            inner &= _strictly_lower(w)
            if free is not None:
                inner &= free
            flagged = hot.any(axis=1)
            if free is not None:
                flagged &= free
            first = int(flagged.argmax()) if flagged.any() else w
        else:
            first = w
        # the prefix before the first flagged row, cut where ``need`` rows are taken
        if free is None:
            stop = min(first, need)
            rows = window[:stop].tolist()
        else:
            taken = np.cumsum(free[:first])
            stop = first if not taken.size or taken[-1] < need else int(np.searchsorted(taken, need)) + 1
            rows = window[:stop][free[:stop]].tolist()
        picked += rows
        chosen += rows
        p += stop
        if stop == first < w and len(picked) < count:
            row = int(window[first])
            p += 1
            dup_of = _near_duplicate_of(corpus, chosen, row, config, values_conflict)
            if dup_of is None:
                picked.append(row)
                chosen.append(row)
            else:
                near_duplicates.append((row, dup_of[0], dup_of[1]))
    return picked, p


#: rows screened per window beyond the ones still needed: a small window keeps the screening product
#: small (one thread's work), and most rows pass
WINDOW_SPARE = 4
_LOWER: dict[int, np.ndarray] = {}


def _strictly_lower(w: int) -> np.ndarray:
    """(w, w) bool, True below the diagonal (row i sees the rows before it); cached, read-only."""
    got = _LOWER.get(w)
    if got is None:
        got = np.tri(w, w, -1, dtype=bool)
        got.setflags(write=False)
        _LOWER[w] = got
    return got


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
    (SPEC_NOTES §2.8), so the next candidate takes the slot. A candidate that value-conflicts with every
    such anchor stays (stage 4 arbitrates).

    Returns (candidate row, anchor row, cosine), the closest non-conflicting anchor for each, by row.
    One (candidates x anchors) screening product; the rows it flags get :meth:`_DuplicateScreen.duplicate_of`'s
    exact check (its cosines are the ones recorded, whatever rows were screened together).
    ``cand_vectors`` = ``corpus.vectors[cands]`` when the caller already gathered them.
    """
    if pos.size == 0 or anchors.size == 0:
        return []
    screen = _DuplicateScreen(corpus, anchors, config, values_conflict)
    rows = cands[pos]
    flagged = screen.flags(rows, None if cand_vectors is None else cand_vectors[pos])
    found = [screen.duplicate_of(r) for r in rows[flagged].tolist()]
    return sorted(f for f in found if f is not None)


class _DuplicateScreen:
    """The connector candidates' near-duplicate check against the anchors (SPEC-003 §6.6, SPEC_NOTES
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
    A row is decided by :class:`_DuplicateScreen` the same way on either side, so the listing is what one
    pass over every candidate gives.
    """
    if anchors.size == 0:
        return order[:slots].astype(np.int64), ()
    screen = _DuplicateScreen(corpus, anchors, config, values_conflict)
    taken: list[int] = []
    found: list[tuple[int, int, float]] = []
    p = 0
    while len(taken) < slots and p < order.size:
        window = order[p : p + slots - len(taken) + WINDOW_SPARE]
        for at, flagged in zip(window.tolist(), screen.flags(cands[window]).tolist()):
            p += 1
            dup = screen.duplicate_of(int(cands[at])) if flagged else None
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


# ---- the stage ----------------------------------------------------------------------------------
def expand_graph_with_recency(
    corpus: Corpus,
    cdr: CDRTable,
    *,
    query_vector: np.ndarray,
    coverage: CoverageView | None,
    residual_vectors: np.ndarray | None,
    blacklist: frozenset[NGram],
    now: datetime,
    config: CRPConfig,
    values_conflict: ConflictFn = default_values_conflict,
) -> tuple[CDGRResult, RecencyTable]:
    """Stage 3; also returns the recency table of the connector candidates (for the run's record)."""
    gate = cdr.passed_gate if cdr.passed_gate is not None else np.ones(cdr.idx.size, dtype=bool)
    ranked = cdr.idx[cdr_ranking(cdr, gate)]
    near: list[tuple[int, int, float]] = []
    chosen: list[int] = []
    anchors_l, next_pos = pick_anchors(
        corpus,
        ranked,
        config.anchor_budget,
        chosen,
        start=0,
        exclude=set(),
        config=config,
        values_conflict=values_conflict,
        near_duplicates=near,
    )
    anchors = np.asarray(anchors_l, dtype=np.int64)
    conn_near: Sequence[tuple[int, int, float]] = ()
    slots = config.envelope_fact_budget - config.anchor_budget
    empty_i = np.zeros(0, dtype=np.int64)
    empty_f = np.zeros(0, dtype=np.float64)

    if config.graph_retrieval and anchors.size:
        matrix = corpus.graph(config).matrix
        cands, dist, hops, wsum, aa = walk_with_paths(matrix, anchors, config.max_hops, corpus.retrievable)
        count, mean_w, bridge, non_adj = bridge_values(aa, hops, wsum)
        relevance, cov, pull = _scored_in_stage2(corpus, cdr, cands, query_vector, coverage, residual_vectors)
        recency = compute_recency(corpus.kb, cands, now, config)
        ccdr = score_cdr(
            corpus,
            cands,
            relevance,
            coverage=coverage,
            residual_vectors=residual_vectors,
            blacklist=blacklist,
            recency=recency,
            config=config,
            passed_gate=relevance >= config.cdr_min_relevance,
            coverage_score=cov,
            residual_pull=pull,
        )
        score = bridge * ccdr.novelty * ccdr.recency_factor * np.maximum(relevance, config.min_connector_relevance)
        eligible = np.flatnonzero(bridge > 0)
        order = eligible[np.lexsort((cands[eligible], -score[eligible]))]
        sel_pos, conn_near = choose_connectors(
            corpus, anchors, cands, order, max(slots, 0), config=config, values_conflict=values_conflict
        )
        selected = np.zeros(cands.size, dtype=bool)
        selected[sel_pos] = True
        selected_rows = cands[sel_pos]
        touched_tuples, pair_tuples = _touched_and_pairs(anchors, hops, count, non_adj)
        # the lazy rows stand in for the record's tuples (same items, equality, slicing and pickling)
        table = ConnectorTable(
            idx=frozen_array(cands),
            hop_distance=frozen_array(dist),
            touched_anchors=cast("tuple[tuple[int, ...], ...]", touched_tuples),
            bridged_pairs=cast("tuple[tuple[tuple[int, int], ...], ...]", pair_tuples),
            mean_path_weight=frozen_array(mean_w),
            bridge_value=frozen_array(bridge),
            relevance=frozen_array(relevance),
            novelty=ccdr.novelty,
            recency_factor=ccdr.recency_factor,
            connector_score=frozen_array(score),
            selected=frozen_array(selected),
        )
        hop_count = config.max_hops
    else:
        matrix = None
        recency = compute_recency(corpus.kb, empty_i, now, config)
        ccdr = score_cdr(
            corpus,
            empty_i,
            empty_f,
            coverage=coverage,
            residual_vectors=residual_vectors,
            blacklist=blacklist,
            recency=recency,
            config=config,
            passed_gate=np.zeros(0, dtype=bool),
        )
        table = ConnectorTable(
            idx=frozen_array(empty_i),
            hop_distance=frozen_array(empty_i),
            touched_anchors=(),
            bridged_pairs=(),
            mean_path_weight=frozen_array(empty_f),
            bridge_value=frozen_array(empty_f),
            relevance=frozen_array(empty_f),
            novelty=frozen_array(empty_f),
            recency_factor=frozen_array(empty_f),
            connector_score=frozen_array(empty_f),
            selected=frozen_array(np.zeros(0, dtype=bool)),
        )
        selected_rows = empty_i
        hop_count = config.max_hops if config.graph_retrieval else 0

    unused = max(slots, 0) - selected_rows.size if config.graph_retrieval else 0
    extra_l: list[int] = []
    if unused > 0:
        extra_l, _ = pick_anchors(
            corpus,
            ranked,
            unused,
            chosen,
            start=next_pos,
            exclude=set(selected_rows.tolist()),
            config=config,
            values_conflict=values_conflict,
            near_duplicates=near,
        )
    extra = np.asarray(extra_l, dtype=np.int64)

    # the edges among the selected facts are for drawing (the report and the graph page): listed when
    # first read
    edges: Sequence[tuple[int, int, float]] = ()
    if matrix is not None:
        graph, drawn = matrix, np.concatenate([anchors, extra, selected_rows])
        edges = DeferredTuple(lambda: edges_among(graph, drawn))

    result = CDGRResult(
        anchors=frozen_array(anchors),
        connectors=table,
        selected_connectors=frozen_array(selected_rows),
        extra_anchors=frozen_array(extra),
        graph_edges=cast("tuple[tuple[int, int, float], ...]", edges),
        hops=hop_count,
        near_duplicates=tuple(near),
        connector_cdr=ccdr,
        connector_near_duplicates=cast("tuple[tuple[int, int, float], ...]", conn_near),
    )
    return result, recency


def _scored_in_stage2(
    corpus: Corpus,
    cdr: CDRTable,
    cands: np.ndarray,
    query_vector: np.ndarray,
    coverage: CoverageView | None,
    residual_vectors: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The connector candidates' relevance, coverage score and residual pull (float64, aligned with
    ``cands``; the last two None when the Coverage Set is empty, as stage 2 then fills them without
    arithmetic). A candidate stage 2 scored keeps stage 2's values (the same formulas on the same
    fact: the breakdown shows one value per fact); only the others are computed, from their vectors."""
    from crp_core.stages.cdr import factors_from_columns

    m = cands.size
    pos, found = row_positions(cdr.idx, cands)
    empty = coverage is None or len(coverage) == 0
    relevance = np.empty(m, dtype=np.float64)
    cov = None if empty else np.empty(m, dtype=np.float64)
    pull = None if empty else np.empty(m, dtype=np.float64)
    have = pos[found]
    relevance[found] = cdr.relevance[have]
    if cov is not None and pull is not None:
        cov[found] = cdr.coverage_score[have]
        pull[found] = cdr.residual_pull[have]
    if not found.all():
        new = ~found
        vecs = corpus.vectors[cands[new]]
        query = np.asarray(query_vector, dtype=np.float32).reshape(1, -1)
        if cov is None or pull is None or coverage is None:
            relevance[new] = vecs @ query[0]
        else:
            # one product with the query, the Coverage Set entries and the residual sub-queries (these
            # rows have no stage-2 value to agree with), read by stage 2's formulas
            entries = np.asarray(coverage.embeddings, dtype=np.float32).reshape(len(coverage), -1)
            res = (
                np.zeros((0, query.shape[1]), dtype=np.float32)
                if residual_vectors is None
                else np.asarray(residual_vectors, dtype=np.float32).reshape(-1, query.shape[1])
            )
            cos = vecs @ np.concatenate([query, entries, res]).T
            c = entries.shape[0]
            relevance[new] = cos[:, 0]
            cov[new], pull[new] = factors_from_columns(
                cos, range(1, 1 + c), range(1 + c, 1 + c + res.shape[0]), coverage
            )
    return relevance, cov, pull


def expand_graph(
    corpus: Corpus,
    cdr: CDRTable,
    *,
    query_vector: np.ndarray,
    coverage: CoverageView | None,
    residual_vectors: np.ndarray | None,
    blacklist: frozenset[NGram],
    now: datetime,
    config: CRPConfig,
    values_conflict: ConflictFn = default_values_conflict,
) -> CDGRResult:
    """Stage 3 (SPEC_NOTES §2.5). ``cdr`` is the stage-2 table (with ``passed_gate``)."""
    return expand_graph_with_recency(
        corpus,
        cdr,
        query_vector=query_vector,
        coverage=coverage,
        residual_vectors=residual_vectors,
        blacklist=blacklist,
        now=now,
        config=config,
        values_conflict=values_conflict,
    )[0]


class LazyRows(Sequence[_T]):
    """A read-only tuple-like sequence whose items are computed on first access (then cached).

    Used for the per-connector ``touched_anchors`` / ``bridged_pairs`` so that scoring hundreds of
    connector candidates does not build thousands of Python tuples nobody reads.
    """

    __slots__ = ("_n", "_item", "_cache")

    def __init__(self, n: int, item: Callable[[int], _T]):
        self._n = int(n)
        self._item = item
        self._cache: dict[int, _T] = {}

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: SupportsIndex) -> _T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[_T, ...]: ...

    def __getitem__(self, i: SupportsIndex | slice) -> _T | tuple[_T, ...]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._n)))
        return self._memo(self._cache, self._item, i)

    def _memo(self, cache: dict[int, _U], make: Callable[[int], _U], i: SupportsIndex) -> _U:
        """``make(i)`` for row ``i`` (negative counts from the end), computed once into ``cache``."""
        j = int(i)
        if j < 0:
            j += self._n
        if not 0 <= j < self._n:
            raise IndexError(i)
        got = cache.get(j)
        if got is None:
            got = make(j)
            cache[j] = got
        return got

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    # no __hash__: defining __eq__ alone sets ``__hash__ = None``, so a LazyRows is unhashable

    def __reduce__(self) -> tuple[type[tuple[_T, ...]], tuple[tuple[_T, ...]]]:
        return (tuple, (tuple(self),))  # pickles / deep-copies as the plain tuple it stands for

    def __repr__(self) -> str:
        return f"LazyRows({tuple(self)!r})"


class BridgedPairs(LazyRows[tuple[tuple[int, int], ...]]):
    """The connectors' ``bridged_pairs`` rows (a :class:`LazyRows`), plus :meth:`anchors`: the anchors
    those pairs name, in order of first appearance, read off the same bit masks without building the
    pairs (what packing needs per selected connector)."""

    __slots__ = ("_anchors_of", "_anchor_cache")

    def __init__(
        self, n: int, item: Callable[[int], tuple[tuple[int, int], ...]], anchors_of: Callable[[int], tuple[int, ...]]
    ):
        super().__init__(n, item)
        self._anchors_of = anchors_of
        self._anchor_cache: dict[int, tuple[int, ...]] = {}

    def anchors(self, i: int) -> tuple[int, ...]:
        """``tuple(dict.fromkeys(itertools.chain.from_iterable(self[i])))``: each anchor of row ``i``'s
        bridged pairs once, in the order the pairs name them."""
        return self._memo(self._anchor_cache, self._anchors_of, i)


def _touched_and_pairs(
    anchors: np.ndarray, hops: np.ndarray, count: np.ndarray, non_adj: np.ndarray
) -> tuple[LazyRows[tuple[int, ...]], BridgedPairs]:
    anchor_list = anchors.tolist()
    # a connector's bridged pairs: its touched anchors' non-adjacent pairs (a < b in anchor order),
    # row-major; the (s, s) adjacency as nested lists, so a row costs one numpy call and a few
    # dozen list lookups. Everything here is built on a row's first read (most runs read a handful of
    # rows, for the packed connectors' bridged anchors), nothing per candidate up front
    apart: list[list[bool]] = []
    # for the bridged anchors alone, anchor position k is bit k: ``later[a]`` = the anchors after a with
    # no direct edge to it, so a's partners among the touched anchors T are ``later[a] & T``
    later: list[int] = []

    def touched_positions(i: int) -> list[int]:
        return np.flatnonzero(hops[i] > 0).tolist()

    def touched(i: int) -> tuple[int, ...]:
        return tuple(anchor_list[k] for k in touched_positions(i))

    def pairs(i: int) -> tuple[tuple[int, int], ...]:
        if count[i] == 0:
            return ()
        if not apart:
            apart.extend(non_adj.tolist())
        ts = touched_positions(i)
        return tuple((anchor_list[a], anchor_list[b]) for k, a in enumerate(ts) for b in ts[k + 1 :] if apart[a][b])

    def bridged(i: int) -> tuple[int, ...]:
        if count[i] == 0:
            return ()
        compiled = bridged_anchor_positions(hops, non_adj, i)
        if compiled is not None:
            return tuple(anchor_list[k] for k in compiled)
        if not later:
            later.extend(_later_masks(non_adj))
        mask = bits_of(hops[i] > 0)  # bit k set when anchor position k is touched (this row alone)
        seen = 0
        out: list[int] = []
        rest = mask
        while rest:  # the touched anchors, in anchor order
            low = rest & -rest
            rest ^= low
            a = low.bit_length() - 1
            partners = later[a] & mask
            if not partners:
                continue
            if not seen >> a & 1:
                out.append(a)
                seen |= 1 << a
            new = partners & ~seen
            seen |= new
            while new:
                low = new & -new
                new ^= low
                out.append(low.bit_length() - 1)
        return tuple(anchor_list[k] for k in out)

    m = hops.shape[0]
    return LazyRows(m, touched), BridgedPairs(m, pairs, bridged)


def _later_masks(non_adj: np.ndarray) -> list[int]:
    """Per anchor position a: the int whose bit b is set for each later anchor b (b > a) with no direct edge
    to a (``non_adj[a, b]``)."""
    return row_bits(np.triu(non_adj, 1))

"""The whole-CKF conflict scan: SPEC-027 §2 detection and arbitration applied to every pair of
retrievable facts whose cosine is above ``contradiction_similarity``.

The pairs above the threshold are found exactly (no approximate index): the upper triangle of the
Gram matrix in bounded tiles for small CKFs, and above ``GRAM_MAX_FACTS`` facts the same products
restricted by centroid blocks, where the triangle inequality of angles on the unit sphere proves
that every skipped product is below the threshold (:func:`exact_pairs`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from crp_core.analysis.scan_check import Found, check_candidates
from crp_core.analysis.scan_search import TILE_ELEMENTS, centroid_blocks, estimated_products, hits, pruned_pairs
from crp_core.carried import with_carried_decisions
from crp_core.config import CRPConfig
from crp_core.corpus.index import QUERY_THREADS
from crp_core.decisions import Decisions
from crp_core.factors.recency import RecencyTable
from crp_core.records import Authority, ConflictPair
from crp_core.stages.contradictions.arbitration import AUTHORITY_DECIMALS, arbitrate, decision_for
from crp_core.stages.contradictions.authority import authority_of
from crp_core.stages.contradictions.values import PATTERNS
from crp_core.stages.near_duplicates import COSINE_SLACK
from crp_core.support.blas import one_blas_thread
from crp_core.support.costs import StageClock
from crp_core.support.memo import LRU

if TYPE_CHECKING:
    from crp_core.model import KnowledgeBase

#: how a pair search found its pairs: the Gram triangle, the centroid-pruned search, or the products of a few
#: rows with every row (:mod:`crp_core.analysis.scan_rows`)
SearchMethod = Literal["gram", "centroid-pruned", "rows"]

#: at or below this many facts the whole upper triangle of the Gram matrix is computed (the pruned
#: search gains nothing at this size); above it the pruned search is tried
GRAM_MAX_FACTS = 8192
#: rows of one band of the Gram triangle at most, and bands at least (a band also computes its own square)
GRAM_BAND_ROWS = 512
GRAM_MIN_BANDS = 8
#: the pruned search runs when its estimated products are at most this share of the Gram triangle's;
#: otherwise (a geometry without tight clusters) the Gram triangle is computed
PRUNED_MAX_SHARE = 0.5
#: worker threads of the pair search (as many as the index's batched queries use)
SEARCH_THREADS = QUERY_THREADS
#: pair searches kept per process (one per vectors fingerprint and threshold, most recent last)
SEARCH_CACHE_SIZE = 4


class ScanSource(Protocol):
    """What the scan reads of a prepared CKF: a :class:`~crp_core.corpus.prepared.Corpus`, or the
    index-free :class:`~crp_core.analysis.scan_input.ScanCorpus` of the command line."""

    @property
    def kb(self) -> KnowledgeBase: ...

    @property
    def vectors(self) -> np.ndarray: ...  # (n, d) float32 unit rows, aligned with kb.facts

    @property
    def retrievable(self) -> np.ndarray: ...  # (n,) bool

    @property
    def fingerprint(self) -> str: ...  # identifies the vectors (the pair-search cache key)

    @property
    def dim(self) -> int: ...


@dataclass(frozen=True, eq=False)
class ConflictScan:
    """Every conflicting pair of the CKF's retrievable facts, each arbitrated on its own (SPEC-027 §2)."""

    pairs: tuple[ConflictPair, ...]  # triage order: ties first, then smallest margin, then ids
    counts: Mapping[str, int]  # pattern -> number of pairs showing it (dismissed pairs excluded)
    n_facts: int  # retrievable facts scanned
    n_candidates: int  # distinct pairs with cosine > contradiction_similarity (text-checked)
    k: int  # most partners above the threshold of one fact (the depth a neighbour search would need)
    threshold: float
    now: datetime
    recency: RecencyTable | None  # recency of the facts in a pair (None when no pair)
    timings_ms: Mapping[str, float]  # "neighbours" (the exact pair search), "text_check", "arbitration", "total"
    rows: Mapping[str, int] = field(default_factory=dict)  # fact id -> row, for the facts in a pair
    method: SearchMethod = "gram"  # how the pairs above the threshold were found (:func:`exact_pairs`)
    products: int = 0  # dot products of the pair search over every fact (the Gram triangle has n(n-1)/2)
    from_cache: bool = False  # its pair search and text check were read from a cache folder (timings: the original's)

    @property
    def tied(self) -> int:
        return sum(1 for p in self.pairs if p.tied)

    @property
    def dismissed(self) -> int:
        return sum(1 for p in self.pairs if p.decision == "dismiss")


@dataclass(frozen=True, eq=False)
class PairSearch:
    """The pairs of an exact search above a cosine threshold (SPEC-027 §2.2 candidates)."""

    pairs: np.ndarray  # (m, 2) int64, i < j, sorted; rows of the searched vectors
    method: SearchMethod
    products: int  # dot products computed

    @property
    def max_partners(self) -> int:
        """Most pairs one row takes part in (0 when there is no pair)."""
        if not self.pairs.size:
            return 0
        return int(np.bincount(self.pairs.reshape(-1)).max())


def float32_slack(dim: int) -> float:
    """The slack on float32 cosines, so a pair near the threshold is never lost between a tile product and
    the per-pair dot product: ``COSINE_SLACK`` (each one's worst-case rounding is d * 2^-24), or more
    when the float32 rounding bound of a ``dim``-term dot product is larger."""
    return max(COSINE_SLACK, 4.0 * dim * 2.0**-24)


def _band_pairs(v: np.ndarray, start: int, stop: int, cut: float) -> tuple[np.ndarray, int]:
    """Pairs above ``cut`` of rows ``start:stop`` with every later row (one band of the Gram triangle)."""
    i, j = hits(v[start:stop], v[start:], cut)
    keep = j > i  # both offset by start: the strict upper triangle
    return np.stack([i[keep] + start, j[keep] + start], axis=1), (stop - start) * (v.shape[0] - start)


def _gram_pairs(v: np.ndarray, cut: float) -> tuple[list[np.ndarray], int]:
    """Upper triangle of ``v @ v.T`` in row bands of at most ``TILE_ELEMENTS`` products: pairs above
    ``cut``. A band also computes its own square, so bands are at most ``GRAM_BAND_ROWS`` rows and at
    least ``GRAM_MIN_BANDS`` bands are used (little of the lower triangle is computed)."""
    m = v.shape[0]
    band = max(1, min(GRAM_BAND_ROWS, TILE_ELEMENTS // m, -(-m // GRAM_MIN_BANDS)))
    found: list[np.ndarray] = []
    products = 0
    starts = range(0, m, band)
    with ThreadPoolExecutor(max_workers=SEARCH_THREADS) as pool, one_blas_thread():
        for got, n in pool.map(lambda s: _band_pairs(v, s, min(m, s + band), cut), starts):
            found.append(got)
            products += n
    return found, products


def _pruned_pairs(
    v: np.ndarray, cut: float, slack: float, estimate: bool = True
) -> tuple[list[np.ndarray], int] | None:
    """Products restricted by centroid blocks (:mod:`crp_core.analysis.scan_search`: the blocks, their
    shells and guests, and why no pair above the threshold is skipped), or None when (``estimate``) the
    estimated products say the Gram triangle is cheaper. The block groups run in ``SEARCH_THREADS``
    worker threads, numpy's BLAS on one thread each."""
    m = v.shape[0]
    blocks = centroid_blocks(v, cut, slack)
    if estimate and estimated_products(v, blocks) > PRUNED_MAX_SHARE * m * (m - 1) / 2:
        return None
    return pruned_pairs(v, blocks, cut, SEARCH_THREADS)


def exact_pairs(vectors: np.ndarray, threshold: float, method: SearchMethod | None = None) -> PairSearch:
    """Every pair (i, j), i < j, of unit ``vectors`` whose float32 cosine ``vectors[i] @ vectors[j]`` is
    above ``threshold`` (SPEC-027 §2.2): exact, in tiles of bounded memory, deterministic.

    ``method`` None chooses by cost: up to ``GRAM_MAX_FACTS`` rows the Gram triangle, above them the
    centroid-pruned search (:func:`_pruned_pairs`) unless its estimated products exceed
    ``PRUNED_MAX_SHARE`` of the triangle's; "gram" / "centroid-pruned" force one (both are exact).
    Candidates are taken at ``threshold`` minus a float32 slack (:func:`float32_slack`) and then filtered with
    one einsum dot per pair, so the pair set does not depend on which product found it.
    """
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    m = v.shape[0]
    if m < 2:
        return PairSearch(np.zeros((0, 2), dtype=np.int64), method or "gram", 0)
    slack = float32_slack(v.shape[1])
    cut = float(threshold) - slack
    got = None
    if method == "centroid-pruned" or (method is None and m > GRAM_MAX_FACTS):
        got = _pruned_pairs(v, cut, slack, estimate=method is None)
    used: SearchMethod = "gram" if got is None else "centroid-pruned"
    found, products = _gram_pairs(v, cut) if got is None else got
    return PairSearch(pairs_above(v, found, threshold), used, products)


def pairs_above(v: np.ndarray, found: list[np.ndarray], threshold: float) -> np.ndarray:
    """The raw candidate pairs ``found`` (any order, repeats) as distinct ``(i, j)``, i < j, sorted, kept
    when their one exact per-pair cosine (the brute-force check's arithmetic) is above ``threshold``."""
    raw = np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)
    pairs = np.unique(np.sort(raw, axis=1), axis=0) if raw.size else np.zeros((0, 2), dtype=np.int64)
    if pairs.size:
        pairs = pairs[pair_cosines(v, pairs) > threshold]
    return pairs.astype(np.int64)


def pair_cosines(v: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """``v[i] @ v[j]`` of each pair ``(i, j)``, one einsum dot per pair (the brute-force check's arithmetic),
    gathered a tile of pairs at a time: both sides of every pair at once would take ``2 * d`` floats per
    pair, and near-duplicates make the pairs quadratic in the facts."""
    out = np.empty(pairs.shape[0], dtype=np.float32)
    step = max(1, TILE_ELEMENTS // (2 * max(1, v.shape[1])))
    for a in range(0, pairs.shape[0], step):
        part = pairs[a : a + step]
        out[a : a + part.shape[0]] = np.einsum("ij,ij->i", v[part[:, 0]], v[part[:, 1]])
    return out


_SEARCHES: LRU[tuple[str, int, float], PairSearch] = LRU(SEARCH_CACHE_SIZE, locked=True)


def candidate_pairs(corpus: ScanSource, config: CRPConfig, threshold: float | None = None) -> tuple[np.ndarray, int]:
    """Distinct (row_i, row_j), i < j, of retrievable facts with cosine > ``threshold`` (default
    ``contradiction_similarity``): every such pair (:func:`search_pairs`, SPEC-027 §2.2).

    Returns ``(pairs (m, 2) int64 sorted, most partners of one fact)``.
    """
    search = search_pairs(corpus, config, threshold)
    return search.pairs, search.max_partners


#: an exact pair search ``(unit vectors, threshold) -> PairSearch`` with the result of :func:`exact_pairs`
#: (another engine: crp_core.engines)
PairSearcher = Callable[[np.ndarray, float], PairSearch]


def search_pairs(
    corpus: ScanSource, config: CRPConfig, threshold: float | None = None, searcher: PairSearcher | None = None
) -> PairSearch:
    """The pairs above the threshold among the retrievable facts, as corpus rows (SPEC-027 §2.2).

    One :func:`exact_pairs` over every fact per (vectors, threshold), kept in a small per-process
    cache, then filtered by the corpus's statuses: a re-scan after an operator decision (the same
    vectors with other statuses, or other pair decisions) does not search again. A ``searcher``
    (another engine) always searches and is not cached.
    """
    thr = config.contradiction_similarity if threshold is None else float(threshold)
    key = (corpus.fingerprint, corpus.dim, thr)
    if searcher is not None:
        got = searcher(corpus.vectors, thr)
    else:
        got = _SEARCHES.get_or_build(key, lambda: exact_pairs(corpus.vectors, thr))
    ok = np.asarray(corpus.retrievable, dtype=bool)
    keep = ok[got.pairs[:, 0]] & ok[got.pairs[:, 1]]
    return PairSearch(got.pairs[keep], got.method, got.products)


def clear_search_cache() -> None:
    """Forget the cached pair searches (tests that change the search constants)."""
    _SEARCHES.clear()


def triage_order(pair: ConflictPair) -> tuple[bool, bool, float, str, str]:
    """Ties first, then the smallest authority margin (rounded to ``AUTHORITY_DECIMALS``), then ids;
    dismissed pairs last."""
    return (pair.decision == "dismiss", not pair.tied, round(pair.margin, AUTHORITY_DECIMALS), pair.fact_a, pair.fact_b)


#: the configuration fields :func:`scan_ckf` reads: the candidate threshold (SPEC-027 §2.2), the recency
#: factor of each side (SPEC-027 §3: TTL tables, stale floor, fresh fraction), its authority (source
#: authority and importance tables, SPEC-009 §4.4) and the tie tolerance of arbitration (§2.3); no other
#: field changes a scan (tests/core/analysis/test_scan_config_key.py records every field a scan reads)
SCAN_CONFIG_FIELDS: tuple[str, ...] = (
    "contradiction_similarity",
    "ttl_days",
    "stale_floor",
    "fresh_fraction",
    "source_authority",
    "importance",
    "authority_tie_tolerance",
    "detector_learned",
)
#: the fields of :data:`SCAN_CONFIG_FIELDS` that :func:`check_ckf` reads (the rest are arbitration's)
CHECK_CONFIG_FIELDS: tuple[str, ...] = ("contradiction_similarity", "detector_learned")
#: ``(field, value)`` of the scan's fields (:func:`scan_config_key`)
ScanConfigKey = tuple[tuple[str, object], ...]


def scan_config_key(config: CRPConfig, fields: tuple[str, ...] = SCAN_CONFIG_FIELDS) -> ScanConfigKey:
    """``(field, value)`` of each of ``fields`` of ``config`` (hashable): the same key gives the same :func:`scan_ckf`
    result (with :data:`CHECK_CONFIG_FIELDS`, :func:`check_ckf`'s), so a cached scan is keyed by this, not the
    whole configuration (a change of the relevance gate does not rescan)."""
    return tuple((name, getattr(config, name)) for name in fields)


def _arbitrated(
    found: Sequence[Found], corpus: ScanSource, config: CRPConfig, now: datetime, decisions: Decisions
) -> tuple[list[ConflictPair], dict[str, int], RecencyTable | None, np.ndarray]:
    """Each conflicting pair arbitrated on its own, in triage order; the counts per pattern (dismissed pairs
    excluded), the recency of the facts in a pair and their rows."""
    from crp_core.factors.recency import compute_recency

    kb, facts = corpus.kb, corpus.kb.facts
    involved = np.array(sorted({r for i, j, _ in found for r in (i, j)}), dtype=np.int64)
    rec = compute_recency(kb, involved, now, config) if involved.size else None
    factor = {} if rec is None else dict(zip(rec.idx.tolist(), rec.factor.tolist()))
    auth = {r: authority_of(facts[r], factor[r], config) for r in involved.tolist()}
    v = np.asarray(corpus.vectors, dtype=np.float32)
    pairs: list[ConflictPair] = []
    for i, j, vc in found:  # fact i has the smaller id: the diffs' *_a sides describe its text
        a, b = auth[i], auth[j]
        ruled = ruling(a, b, config, decisions)
        pairs.append(ConflictPair(a.fact_id, b.fact_id, float(v[i] @ v[j]), vc.patterns, vc, skipped=False, **ruled))
    pairs.sort(key=triage_order)
    counts = {pat: 0 for pat in PATTERNS}
    for p in pairs:
        count_patterns(counts, p, +1)
    return pairs, counts, rec, involved


def ruling(a: Authority, b: Authority, config: CRPConfig, decisions: Decisions) -> dict[str, Any]:
    """The fields of a :class:`ConflictPair` that its two authorities and the decision in force for the pair
    decide (SPEC-027 §2.3-§2.5): ``authority``, ``kept``, ``suppressed``, ``tied``, ``decision``, ``margin``.
    Each pair is arbitrated on its own: nothing here reads another pair."""
    kind, winner = decision_for(decisions, a.fact_id, b.fact_id)
    arb = arbitrate(a, b, config, kind, winner)
    return {
        "authority": {a.fact_id: a, b.fact_id: b},
        "kept": arb.kept,
        "suppressed": arb.suppressed,
        "tied": arb.tied,
        "decision": arb.decision,
        "margin": abs(a.authority - b.authority),
    }


def count_patterns(counts: dict[str, int], pair: ConflictPair, step: int) -> None:
    """Add ``step`` to the count of each pattern of ``pair`` (a dismissed pair counts for none)."""
    if pair.decision != "dismiss":
        for pat in pair.patterns:
            counts[pat] = counts.get(pat, 0) + step


def scan_timings(search_ms: float, check_ms: float, arbitration_ms: float) -> dict[str, float]:
    """A scan's ``timings_ms``: the pair search (key ``neighbours``), the text check, the arbitration, their total."""
    total = search_ms + check_ms + arbitration_ms
    return {"neighbours": search_ms, "text_check": check_ms, "arbitration": arbitration_ms, "total": total}


@dataclass(frozen=True, eq=False)
class CheckedPairs:
    """The scan's first two steps, which operator pair decisions and ``now`` do not change: the candidate pairs
    (:func:`search_pairs`) and those whose texts value-conflict, as (row a, row b, conflict) with fact a the
    smaller id. :func:`arbitrate_checked` turns them into a :class:`ConflictScan` for a time and decisions."""

    search: PairSearch
    found: tuple[Found, ...]
    search_ms: float
    check_ms: float
    from_cache: bool = False  # read from a cache folder (``scan_store.load_checked``); timings: the original's


def check_ckf(
    corpus: ScanSource,
    config: CRPConfig,
    progress: Callable[[int, int], None] | None = None,
    *,
    searcher: PairSearcher | None = None,
    check_pool: Executor | None = None,
    clock: StageClock | None = None,
    check_workers: int = 1,
) -> CheckedPairs:
    """The pair search and the text check of :func:`scan_ckf` (its arguments), timed into ``clock``.
    Without ``check_pool``, ``check_workers > 1`` checks the texts in that many new worker processes
    when the candidates are enough to pay for their start (``scan_check.check_candidates``)."""
    clock = clock if clock is not None else StageClock()
    t0 = time.perf_counter()
    with clock.stage("pair search"):
        search = search_pairs(corpus, config, searcher=searcher)
    t1 = time.perf_counter()
    with clock.stage("text check"):
        found = check_candidates(
            search.pairs, corpus.kb.facts, config.detector_learned, check_pool, progress, clock.add_cpu, check_workers
        )
    t2 = time.perf_counter()
    return CheckedPairs(search, tuple(found), (t1 - t0) * 1e3, (t2 - t1) * 1e3)


def arbitrate_checked(
    checked: CheckedPairs,
    corpus: ScanSource,
    config: CRPConfig,
    now: datetime,
    decisions: Decisions = None,
    clock: StageClock | None = None,
) -> ConflictScan:
    """Each conflicting pair of ``checked`` (found over ``corpus`` with ``config``) arbitrated on its own at
    ``now``, with ``decisions`` over those the CKF carries from an export."""
    clock = clock if clock is not None else StageClock()
    kb = corpus.kb
    decisions = with_carried_decisions(kb, decisions)  # an exported CKF's operator decisions
    t2 = time.perf_counter()
    with clock.stage("arbitration"):
        pairs, counts, rec, involved = _arbitrated(checked.found, corpus, config, now, decisions)
    arbitration_ms = (time.perf_counter() - t2) * 1e3
    facts, search = kb.facts, checked.search
    return ConflictScan(
        pairs=tuple(pairs),
        counts=counts,
        n_facts=int(np.count_nonzero(corpus.retrievable)),
        n_candidates=int(search.pairs.shape[0]),
        k=search.max_partners,
        threshold=float(config.contradiction_similarity),
        now=now,
        recency=rec,
        timings_ms=scan_timings(checked.search_ms, checked.check_ms, arbitration_ms),
        rows={facts[r].fact_id: r for r in involved.tolist()},
        method=search.method,
        products=search.products,
        from_cache=checked.from_cache,
    )


def scan_ckf(
    corpus: ScanSource,
    config: CRPConfig,
    now: datetime,
    decisions: Decisions = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    searcher: PairSearcher | None = None,
    check_pool: Executor | None = None,
    clock: StageClock | None = None,
) -> ConflictScan:
    """Whole-CKF conflict scan (SPEC-027 §2 applied to every retrievable pair).

    Candidate pairs are every retrievable pair above ``contradiction_similarity``, found exactly
    (:func:`search_pairs`); each goes through ``values_conflict`` (streamed in chunks, in the processes of
    ``check_pool`` when given: :func:`crp_core.analysis.scan_check.conflicting_pairs`), and each
    conflicting pair is arbitrated independently (no suppression chain: the scan reports, the envelope
    decides). Recency is computed at ``now``. ``decisions`` apply over those the CKF carries from an export.
    ``progress(done, total)`` counts the candidate pairs text-checked: ``(0, n)`` once the neighbour
    search is done, then at most ``scan_check.PROGRESS_STEPS`` increasing counts, the last one ``(n, n)``.
    ``searcher`` replaces the pair search by an engine's (same pairs: :data:`PairSearcher`).
    ``clock`` times the stages "pair search", "text check" and "arbitration" (``--profile``); it is
    :func:`arbitrate_checked` of :func:`check_ckf`.
    """
    clock = clock if clock is not None else StageClock()
    checked = check_ckf(corpus, config, progress, searcher=searcher, check_pool=check_pool, clock=clock)
    return arbitrate_checked(checked, corpus, config, now, decisions, clock)

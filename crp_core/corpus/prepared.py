"""The prepared CKF every stage reads: vectors, token counts, HNSW index and similarity graph.

``prepare_corpus`` uses the CKF's own embeddings when it carries them (no model is loaded),
otherwise embeds the contents with the MiniLM model through the persistent cache. The index and
the neighbour table are persisted next to the embedding cache, keyed by a fingerprint of the
vectors and the parameters, and reused while the CKF is unchanged. Embeddings of two different
models never mix (SPEC-024 §2.5): ``EmbeddingModelMismatch``.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from crp_core.config import NEVER_RETRIEVED, STATUSES, CRPConfig
from crp_core.corpus.embedding import (
    MINILM_IDS,
    CancelFlag,
    Embedder,
    Progress,
    already_unit,
    count_tokens,
    default_cache_dir,
    embed_texts,
    near_unit,
    shared_cache,
    word_token_estimate,
)
from crp_core.corpus.embedding_models import configured_embedder, embedder_for_vectors, refuse_mixing
from crp_core.errors import CKFError, EmbeddingModelMismatch, Problem, ScenarioError, ValidationError
from crp_core.model import KnowledgeBase, Scenario
from crp_core.support.digest import Digest, content_digest_bytes
from crp_core.support.files import cache_file_present, write_cache_file

if TYPE_CHECKING:  # imported where used: hnswlib and scipy only load when an index or a graph is needed
    from crp_core.corpus.graph import NeighbourTable, SimilarityGraph
    from crp_core.corpus.index import FactIndex


#: a one-line message about a long preparation step (the CLI prints it on a terminal)
Notify = Callable[[str], None]

_D = TypeVar("_D")


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.flags.writeable:
        a = a.view()
        a.setflags(write=False)
    return a


#: rows normalised at a time (bounds the float64 temporaries: 2 x rows x d x 8 bytes)
NORMALISE_ROWS = 32768


def unit_rows(emb: np.ndarray, kb: KnowledgeBase) -> np.ndarray:
    """The CKF's own embeddings as unit float32 rows, read-only: a row whose float64 norm is within the unit
    tolerance (:func:`already_unit`) is kept bit for bit, any other is divided by its float64 norm; a zero or
    non-finite row is refused by line and field. Normalised in chunks of :data:`NORMALISE_ROWS` rows (the
    arithmetic is per row, so the chunking changes no bit); the given array itself (a memory-mapped file
    stays mapped) when every row is unit already."""
    emb = np.asarray(emb, dtype=np.float32)
    if emb.ndim != 2 or emb.shape[0] != len(kb):
        raise CKFError(
            f"CKF {kb.source}", [Problem(0, "embedding", f"embeddings have shape {emb.shape}, expected ({len(kb)}, d)")]
        )
    out: np.ndarray | None = None
    bad: list[int] = []
    for s in range(0, emb.shape[0], NORMALISE_ROWS):
        part = emb[s : s + NORMALISE_ROWS]
        norms = np.linalg.norm(part.astype(np.float64), axis=1)  # float64: values near 3e38 square without overflow
        bad += (s + np.flatnonzero(~np.isfinite(norms) | (norms == 0))).tolist()
        if bad:
            continue  # refused below, with every such row
        keep = near_unit(norms)  # already_unit(part), from the norms just computed
        if keep.all():
            if out is not None:
                out[s : s + part.shape[0]] = part
            continue
        if out is None:  # the first row that changes: from here on the rows are copied
            out = np.empty(emb.shape, dtype=np.float32)
            out[:s] = emb[:s]
        got = np.ascontiguousarray(part.astype(np.float64) / norms[:, None], dtype=np.float32)
        got[keep] = part[keep]
        out[s : s + part.shape[0]] = got
    if bad:
        raise no_direction_error(kb, bad)
    result = np.ascontiguousarray(emb if out is None else out)
    if result.flags.writeable:
        result = result.view()
        result.setflags(write=False)
    return result


def no_direction_error(kb: KnowledgeBase, rows: Sequence[int]) -> CKFError:
    """The refusal of facts whose embedding has no direction (all zeros or not finite), by line and id."""
    return CKFError(
        f"CKF {kb.source}",
        [
            Problem(
                kb.facts[i].line,
                "embedding",
                "embedding is all zeros or not finite; it has no direction",
                kb.facts[i].fact_id,
            )
            for i in rows
        ],
    )


def retrievable_mask(kb: KnowledgeBase) -> np.ndarray:
    """(n,) bool: status not DELETED / QUARANTINED (SPEC-009 §2.2)."""
    return np.fromiter((f.status not in NEVER_RETRIEVED for f in kb.facts), dtype=bool, count=len(kb))


@dataclass(frozen=True, eq=False)
class Corpus:
    """A prepared CKF. Arrays are read-only and aligned with ``kb.facts``."""

    kb: KnowledgeBase
    vectors: np.ndarray  # (n, d) float32, L2-normalised
    model_id: str
    token_counts: np.ndarray  # (n,) int64
    retrievable: np.ndarray  # (n,) bool
    index: FactIndex
    config: CRPConfig = field(default_factory=CRPConfig)  # the config the index was built with
    cache_dir: Path | None = None  # where index / neighbour tables persist (None: memory only)
    # ("index", m, ef_construction) -> FactIndex, ("nbr", k, ...) -> NeighbourTable, ("graph", ...) -> SimilarityGraph
    _cache: dict[tuple[str | int | float, ...], FactIndex | NeighbourTable | SimilarityGraph] = field(
        default_factory=dict, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _derived: dict[Hashable, Any] = field(default_factory=dict, repr=False)  # see derived()

    def __post_init__(self) -> None:
        for name in ("vectors", "token_counts", "retrievable"):
            object.__setattr__(self, name, _ro(getattr(self, name)))
        n = len(self.kb)
        if self.vectors.shape[0] != n or self.token_counts.shape != (n,) or self.retrievable.shape != (n,):
            raise ValueError("corpus arrays must have one row per fact")

    # ---- basic facts ----------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.kb)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def fingerprint(self) -> str:
        return self.index.fingerprint

    # ---- construction ---------------------------------------------------------------------------
    @classmethod
    def from_vectors(
        cls,
        kb: KnowledgeBase,
        vectors: np.ndarray,
        model_id: str = "test",
        config: CRPConfig = CRPConfig(),
        token_counts: np.ndarray | None = None,
    ) -> Corpus:
        """A corpus from given vectors (normalised here), index built in memory (tests, benches)."""
        from crp_core.corpus.index import FactIndex

        vecs = unit_rows(vectors, kb)
        if token_counts is None:
            token_counts = word_token_estimate([f.content for f in kb.facts])
        index = FactIndex.build(vecs, config)
        return cls(
            kb,
            index.vectors,
            model_id,
            np.asarray(token_counts, dtype=np.int64),
            retrievable_mask(kb),
            index,
            config,
            None,
        )

    def with_statuses(self, mapping: Mapping[str, str]) -> Corpus:
        """Operator decisions: new statuses, same vectors and index; graph recomputed."""
        problems = []
        for fid, st in mapping.items():
            if self.kb.get(fid) is None:
                problems.append(Problem(0, "fact_id", f"no fact with id {fid!r} in this CKF", fid))
            elif st not in STATUSES:
                problems.append(
                    Problem(0, "status", f"unknown status {st!r}; expected one of {', '.join(STATUSES)}", fid)
                )
        if problems:
            raise ValidationError("status decisions refused", problems)
        kb = self.kb.with_statuses(mapping)
        return Corpus(
            kb,
            self.vectors,
            self.model_id,
            self.token_counts,
            retrievable_mask(kb),
            self.index,
            self.config,
            self.cache_dir,
        )

    # ---- per-corpus derived data (the pipeline stages' caches) -------------------------------------------
    def derived(self, key: Hashable, build: Callable[[], _D]) -> _D:
        """``build()``, computed once per corpus and ``key`` and kept with it (e.g. the envelope's
        ``[fact_id]`` prefix token counts). ``build`` must depend on this corpus alone."""
        with self._lock:
            if key in self._derived:
                return self._derived[key]
        got = build()
        with self._lock:
            return self._derived.setdefault(key, got)

    # ---- index access -----------------------------------------------------------------------------
    def index_for(self, config: CRPConfig | None = None) -> FactIndex:
        """The index built with ``config``'s M / ef_construction (this corpus's index when they match)."""
        from crp_core.corpus.index import FactIndex

        config = config or self.config
        if (config.hnsw_m, config.hnsw_ef_construction) == (self.index.m, self.index.ef_construction):
            return self.index
        key = ("index", config.hnsw_m, config.hnsw_ef_construction)
        with self._lock:
            got = self._cache.get(key)
            if not isinstance(got, FactIndex):  # not built yet (an "index" key holds only FactIndex)
                got = load_or_build_index(self.vectors, config, self.cache_dir, self.index.fingerprint)
                self._cache[key] = got
            return got

    def search(self, vectors: np.ndarray, k: int, config: CRPConfig | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k retrievable facts per query vector (SPEC-009 §3.2): ``(ids (q,k), sims (q,k))``,
        id -1 / sim NaN padding when fewer than k facts are retrievable."""
        config = config or self.config
        return self.index_for(config).query(vectors, k, self.retrievable, ef_search=config.hnsw_ef_search)

    # ---- neighbour table and graph -----------------------------------------------------------------
    def neighbours(
        self, k: int | None = None, config: CRPConfig | None = None, progress: Progress | None = None
    ) -> NeighbourTable:
        """Each retrievable fact's k nearest retrievable neighbours (cached, persisted); ``progress(queried, n)``
        follows a build (nothing when it is read)."""
        from crp_core.corpus.graph import NeighbourTable

        config = config or self.config
        k = config.graph_k if k is None else int(k)
        index = self.index_for(config)
        key = ("nbr", k, index.m, index.ef_construction, config.hnsw_ef_search)
        with self._lock:
            cached = self._cache.get(key)
            if isinstance(cached, NeighbourTable):  # an "nbr" key holds only NeighbourTable
                return cached
        got = self._neighbour_table(k, config, progress)
        with self._lock:
            self._cache[key] = got
        return got

    def _neighbour_table(self, k: int, config: CRPConfig, progress: Progress | None) -> NeighbourTable:
        """The table read from its file, else built (and saved); not kept in memory: the graph is its one reader,
        and the graph is kept."""
        from crp_core.corpus.graph import NeighbourTable

        index = self.index_for(config)
        path = self._index_file(index, f"nbr-k{k}-ef{config.hnsw_ef_search}")
        got = _load_neighbours(path, self.n, k) if path is not None else None
        if got is None:
            got = NeighbourTable.from_index(
                index, self.vectors, k, self.retrievable, ef_search=config.hnsw_ef_search, progress=progress
            )
            if path is not None:
                _save_neighbours(path, got)
        return got

    def graph(self, config: CRPConfig | None = None, progress: Progress | None = None) -> SimilarityGraph:
        """The similarity graph (SPEC-009 §5.2) for ``config``'s graph_k / graph_edge_min / HNSW params;
        ``progress`` follows its neighbour table's queries when the table is built."""
        from crp_core.corpus.graph import SimilarityGraph

        config = config or self.config
        key = (
            "graph",
            config.graph_k,
            float(config.graph_edge_min),
            config.hnsw_m,
            config.hnsw_ef_construction,
            config.hnsw_ef_search,
        )
        with self._lock:
            cached = self._cache.get(key)
        got = cached if isinstance(cached, SimilarityGraph) else None  # a "graph" key holds only graphs
        if got is None:
            edge_min = float(config.graph_edge_min).hex()
            path = self._index_file(
                self.index_for(config), f"graph-k{config.graph_k}-ef{config.hnsw_ef_search}-min{edge_min}"
            )
            got = _load_graph(path, self.retrievable, config) if path is not None else None
            if got is None:
                table = self._neighbour_table(config.graph_k, config, progress)
                got = SimilarityGraph.build(table, self.vectors, self.retrievable, config)
                del table
                if path is not None:
                    write_cache_file(path, got.save, "similarity graph")
            with self._lock:
                self._cache[key] = got
        return got

    def _index_file(self, index: FactIndex, what: str) -> Path | None:
        """Where a table built from ``index`` persists (None without a cache): the index's file stem, ``what``
        (the kind and its parameters) and the retrievable mask's digest."""
        if self.cache_dir is None:
            return None
        from crp_core.corpus.index import index_key, mask_digest

        stem = index_key(index.fingerprint, index.m, index.ef_construction)
        return Path(self.cache_dir) / "index" / f"{stem}-{what}-{mask_digest(self.retrievable)}.npz"


# ---- persistence helpers --------------------------------------------------------------------------
#: seconds an index build runs before ``notify`` is told about it (a short build says nothing)
INDEX_NOTICE_AFTER_S = 1.0


def _build_index(
    vectors: np.ndarray, config: CRPConfig, fp: str, notify: Notify | None, progress: Progress | None = None
) -> FactIndex:
    """``FactIndex.build`` (``progress(inserted, n)`` between its chunks); when it runs over
    :data:`INDEX_NOTICE_AFTER_S`, ``notify`` hears that it started (with the count) and how long it took."""
    from crp_core.corpus.index import FactIndex

    if notify is None:
        return FactIndex.build(vectors, config, fingerprint=fp, progress=progress)
    n = int(vectors.shape[0])
    timer = threading.Timer(INDEX_NOTICE_AFTER_S, notify, (f"building the HNSW index for {n:,} facts ...",))
    timer.daemon = True
    t0 = time.monotonic()
    timer.start()
    try:
        return FactIndex.build(vectors, config, fingerprint=fp, progress=progress)
    finally:
        timer.cancel()
        if timer.finished.is_set() and time.monotonic() - t0 >= INDEX_NOTICE_AFTER_S:
            notify(f"HNSW index for {n:,} facts built in {time.monotonic() - t0:.1f} s")


def load_or_build_index(
    vectors: np.ndarray,
    config: CRPConfig,
    cache_dir: Path | None,
    fingerprint: str | None = None,
    notify: Notify | None = None,
    progress: Progress | None = None,
) -> FactIndex:
    """The HNSW index of ``vectors``: the one persisted under ``cache_dir`` when it matches, else built
    (and persisted there, ``progress(inserted, n)`` during the build); a build slower than
    :data:`INDEX_NOTICE_AFTER_S` is said through ``notify``."""
    from crp_core.corpus.index import FactIndex, index_key, vectors_fingerprint

    fp = fingerprint or vectors_fingerprint(vectors)
    if cache_dir is None:
        return _build_index(vectors, config, fp, notify, progress)
    path = Path(cache_dir) / "index" / (index_key(fp, config.hnsw_m, config.hnsw_ef_construction) + ".bin")
    got = FactIndex.load(path, vectors, config, fingerprint=fp)
    if got is None:
        got = _build_index(vectors, config, fp, notify, progress)
        try:
            got.save(path)
        except OSError as exc:
            warnings.warn(f"could not persist the HNSW index to {path}: {exc}", RuntimeWarning, stacklevel=2)
    return got


def _load_neighbours(path: Path, n: int, k: int) -> NeighbourTable | None:
    from crp_core.corpus.graph import NeighbourTable

    if not cache_file_present(path):
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            ids, sims = np.asarray(z["ids"]), np.asarray(z["sims"])
        if ids.shape != (n, k) or sims.shape != (n, k) or ids.dtype != np.int64 or sims.dtype != np.float32:
            raise ValueError("shape or dtype mismatch")
        return NeighbourTable(ids, sims)
    except Exception as exc:  # noqa: BLE001 - a damaged file is rebuilt
        warnings.warn(f"neighbour table {path} ignored ({exc}); rebuilding it", RuntimeWarning, stacklevel=3)
        return None


def _save_neighbours(path: Path, table: NeighbourTable) -> None:
    write_cache_file(path, lambda fh: np.savez(fh, ids=table.ids, sims=table.sims), "neighbour table")


def _load_graph(path: Path, retrievable: np.ndarray, config: CRPConfig) -> SimilarityGraph | None:
    """The similarity graph persisted at ``path``, or None (absent, or damaged: said, then rebuilt)."""
    from crp_core.corpus.graph import SimilarityGraph

    if not cache_file_present(path):
        return None
    try:
        return SimilarityGraph.load(path, retrievable, config)
    except Exception as exc:  # noqa: BLE001 - a damaged file is rebuilt
        warnings.warn(f"similarity graph {path} ignored ({exc}); rebuilding it", RuntimeWarning, stacklevel=3)
        return None


def _cached_token_counts(texts: list[str], model_id: str, embedder: Embedder | None, cache_dir: Path) -> np.ndarray:
    """Tokenizer counts, persisted per (model, exact list of texts) so a warm load needs no tokenizer."""
    h = Digest(model_id, b"\x00")
    for t in texts:
        h.update(content_digest_bytes(t))
    path = cache_dir / "tokens" / f"tokens-{h.hex(32)}.npy"
    if cache_file_present(path):
        try:
            got = np.load(path, allow_pickle=False)
            if got.shape == (len(texts),) and got.dtype == np.int64 and (got >= 0).all():
                return got
            raise ValueError("shape or dtype mismatch")
        except Exception as exc:  # noqa: BLE001 - a damaged file is recomputed
            warnings.warn(f"token count cache {path} ignored ({exc}); recounting", RuntimeWarning, stacklevel=3)
    counts = np.asarray(count_tokens(texts, model_id, embedder), dtype=np.int64)
    write_cache_file(path, lambda fh: np.save(fh, counts), "token counts")
    return counts


def prepare_corpus(
    kb: KnowledgeBase,
    *,
    embedder: Embedder | None = None,
    cache_dir: str | Path | None = None,
    config: CRPConfig = CRPConfig(),
    progress: Progress | None = None,
    cancel: CancelFlag | None = None,
    notify: Notify | None = None,
    index_progress: Progress | None = None,
) -> Corpus:
    """Vectors, token counts and index for a CKF (SPEC-009 §3).

    If the CKF carries embeddings they are used (normalised; no model is loaded; model id =
    ``kb.embedding_model`` or ``"unknown"``; a configured ``embedding_model`` that is another model is
    refused, ``EmbeddingModelMismatch``). Otherwise the contents are embedded with ``embedder`` (default:
    the configuration's ``embedding_model``, the process-wide MiniLM when unset) through the cache in ``cache_dir``
    (default ``$CRP_CACHE_DIR`` or ``~/.cache/crp-inspect``); only cache misses reach the model.
    The embedding is resumable: it runs in chunks persisted to the cache, and ``cancel()`` (polled
    between batches) stops it with ``EmbeddingCancelled``, keeping every finished chunk.
    ``notify(message)`` hears about an index build that runs over a second (the CLI prints it);
    ``index_progress(inserted, n)`` follows an index build (none when the persisted index is loaded).
    """
    cache_path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    texts = [f.content for f in kb.facts]
    if kb.embeddings is not None:
        vectors = unit_rows(kb.embeddings, kb)
        model_id = kb.embedding_model or "unknown"
        refuse_mixing(model_id, config.embedding_model)
        if progress is not None:
            progress(len(kb), len(kb))
    else:
        embedder = embedder if embedder is not None else configured_embedder(config.embedding_model)
        vectors = embed_texts(texts, embedder, shared_cache(cache_path), progress, cancel=cancel)
        model_id = embedder.model_id
    if model_id in MINILM_IDS:  # the MiniLM tokenizer counts tokens for both MiniLM ids
        tokens = _cached_token_counts(texts, model_id, embedder, cache_path)
    else:
        tokens = word_token_estimate(texts)
    vectors = _ro(np.ascontiguousarray(vectors, dtype=np.float32))
    index = load_or_build_index(vectors, config, cache_path, notify=notify, progress=index_progress)
    return Corpus(kb, index.vectors, model_id, tokens, retrievable_mask(kb), index, config, cache_path)


# ---- scenario vectors ---------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ScenarioVectors:
    """The scenario's query and sub-query vectors (normalised), sub-queries in scenario order."""

    query: np.ndarray  # (d,)
    sub_queries: np.ndarray  # (m, d)
    ids: tuple[str, ...]
    model_id: str
    _pos: dict[str, int] = field(init=False, repr=False, compare=False)  # sub-query id -> row, set below

    def __post_init__(self) -> None:
        object.__setattr__(self, "query", _ro(self.query))
        object.__setattr__(self, "sub_queries", _ro(self.sub_queries))
        object.__setattr__(self, "_pos", {sid: i for i, sid in enumerate(self.ids)})

    def for_ids(self, ids: Sequence[str]) -> np.ndarray:
        """(k, d) rows for these sub-query ids, in the order given."""
        pos = self._pos
        missing = [i for i in ids if i not in pos]
        if missing:
            raise KeyError(f"unknown sub-query id(s): {', '.join(map(repr, missing))}")
        if not ids:
            return np.zeros(
                (0, self.sub_queries.shape[1] if self.sub_queries.ndim == 2 else self.query.shape[0]), dtype=np.float32
            )
        return self.sub_queries[[pos[i] for i in ids]]


def embed_scenario(scenario: Scenario, corpus: Corpus, embedder: Embedder | None = None) -> ScenarioVectors:
    """Vectors for the scenario's query and sub-queries (docs/reference/scenarios.md, SPEC-024 §2.5).

    Embeddings given in the scenario are used as they are (normalised); texts without one are
    embedded with ``embedder`` (default: MiniLM, cached), which must be the corpus's model.
    A scenario declaring another ``embedding_model`` than the corpus's is refused.
    """
    if scenario.embedding_model is not None and scenario.embedding_model != corpus.model_id:
        raise EmbeddingModelMismatch(
            f"the scenario's embeddings come from {scenario.embedding_model!r} but the CKF was embedded "
            f"with {corpus.model_id!r}; embeddings of two models cannot be compared (SPEC-024 §2.5)"
        )
    fields_ = ["query.embedding"] + [f"sub_queries[{i}].embedding" for i in range(len(scenario.sub_queries))]
    texts = [scenario.query] + [sq.text for sq in scenario.sub_queries]
    given = [scenario.query_embedding] + [sq.embedding for sq in scenario.sub_queries]
    d = corpus.dim
    problems = [
        Problem(0, f, f"embedding has dimension {len(g)}, the CKF's vectors have {d}")
        for f, g in zip(fields_, given)
        if g is not None and len(g) != d
    ]
    out = np.zeros((len(texts), d), dtype=np.float32)
    have = [g is not None for g in given]
    if any(have):
        # float64, each row scaled by its largest |value| first: any finite vector validate accepts
        # normalises (3e38 overflowed float32, 1e300 overflows a float64 sum of squares)
        arr = np.asarray([g for g in given if g is not None and len(g) == d], dtype=np.float64).reshape(-1, d)
        peak = np.abs(arr).max(axis=1, keepdims=True) if arr.size else np.ones((0, 1))
        arr = arr / np.where(peak > 0, peak, 1.0)
        norms = np.linalg.norm(arr, axis=1)
        good = [f for f, g in zip(fields_, given) if g is not None and len(g) == d]
        problems += [
            Problem(0, f, "embedding is all zeros or not finite")
            for f, nm in zip(good, norms)
            if not (np.isfinite(nm) and nm > 0)
        ]
        if problems:
            raise ScenarioError(f"scenario {scenario.name or ''}".strip(), problems)
        rows = [i for i, g in enumerate(given) if g is not None and len(g) == d]  # have[i]: g is not None
        out[rows] = arr / norms[:, None]
        # a given vector that is a float32 unit vector (e.g. the sample's shipped embeddings) is kept
        # bit for bit, as the CKF's: the same vector the model path would give for its text
        with np.errstate(over="ignore"):
            as32 = np.asarray([given[i] for i in rows], dtype=np.float64).astype(np.float32).reshape(-1, d)
        for j in np.flatnonzero(already_unit(as32)):
            out[rows[j]] = as32[j]
    elif problems:
        raise ScenarioError(f"scenario {scenario.name or ''}".strip(), problems)
    missing = [i for i, h in enumerate(have) if not h]
    if missing:
        if embedder is None:  # the corpus's vectors decide the model (the configured one when it is theirs)
            refuse_mixing(corpus.model_id, corpus.config.embedding_model)
            embedder = embedder_for_vectors(corpus.model_id, corpus.config.embedding_model)
            if embedder is None:
                raise ScenarioError(
                    f"scenario {scenario.name or ''}".strip(),
                    [
                        Problem(
                            0,
                            fields_[i],
                            f"no embedding given, and the CKF's model {corpus.model_id!r} is "
                            "not available here to embed this text; give embeddings in the scenario",
                        )
                        for i in missing
                    ],
                )
        if embedder.model_id != corpus.model_id:
            raise EmbeddingModelMismatch(
                f"the CKF was embedded with {corpus.model_id!r} but the active model is "
                f"{embedder.model_id!r}; embeddings of two models cannot be compared (SPEC-024 §2.5). "
                "Give the scenario's embeddings, or load a CKF embedded with the active model"
            )
        if embedder.dim != d:
            raise EmbeddingModelMismatch(
                f"model {embedder.model_id!r} has dimension {embedder.dim}, the CKF's vectors have {d}"
            )
        cache = shared_cache(corpus.cache_dir) if corpus.cache_dir is not None else None
        out[missing] = embed_texts([texts[i] for i in missing], embedder, cache)
    model_id = corpus.model_id
    ids = tuple(sq.id for sq in scenario.sub_queries)
    return ScenarioVectors(out[0].copy(), out[1:].copy(), ids, model_id)

"""The HNSW fact index (SPEC-009 §3.2): hnswlib, cosine space, M / ef_construction / ef_search from config.

The index holds ALL fact vectors (label = fact row). Facts outside an ``allowed`` mask (DELETED /
QUARANTINED, SPEC-009 §3.3 "deletion set") are excluded at query time by hnswlib's deletion marks
(``mark_deleted``, synchronised with each query's mask under a lock): hnswlib still walks through
them but never returns them, so a query still returns k results when many facts are excluded. Returned
similarities are exact float32 cosines recomputed from the stored vectors, and each row is sorted by them.

An HNSW search's answer depends only on the graph (fixed once built), the unit query vector, k, ef and
the deletion marks: each index keeps the found ids of its last :data:`QUERY_CACHE_SIZE` searches under
exactly those (the vector's bytes, k, ef, the mask's digest), so a scenario run again (the dashboard's
reruns, a sweep, a suite) searches only for vectors it has not seen under that mask.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import hnswlib
import numpy as np

from crp_core.config import CRPConfig
from crp_core.support.cores import default_cores
from crp_core.support.digest import Digest, array_part, content_digest, content_digest_bytes, file_digest
from crp_core.support.files import PRIVATE_FILE_MODE, cache_file_present, replaced_atomically, write_atomic
from crp_core.support.memo import LRU

#: worker threads for batched queries (the machine's cores, at most 2)
QUERY_THREADS = default_cores()
#: batched queries use QUERY_THREADS only from this much work (queries x ef) on
PARALLEL_QUERY_WORK = 4096
#: when at most this many facts are allowed, queries are answered by exact brute force
BRUTE_FORCE_MAX_ALLOWED = 2048
#: queries per chunk in brute force and in the exact similarity recomputation (bounds memory)
QUERY_CHUNK = 1024
#: HNSW searches (one query vector each) whose found ids an index keeps (0: none kept)
QUERY_CACHE_SIZE = 1024
#: hnswlib's fixed random seed: with single-threaded insertion the build is deterministic
HNSW_SEED = 100
#: vectors inserted per ``add_items`` call of a build (progress is reported between calls; insertion stays
#: one thread in row order, so the chunking changes no link of the graph)
BUILD_CHUNK = 20_000


def vectors_fingerprint(vectors: np.ndarray) -> str:
    """sha256 of the float32 vector bytes and shape."""
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    h = Digest(f"{v.shape[0]}x{v.shape[1] if v.ndim == 2 else 0}")
    h.update(array_part(v))
    return h.hex()


def index_key(fingerprint: str, m: int, ef_construction: int) -> str:
    """File stem of a persisted index: the vectors' fingerprint plus the build parameters."""
    return f"hnsw-{fingerprint[:32]}-M{m}-efc{ef_construction}"


def mask_digest(mask: np.ndarray | None) -> str:
    if mask is None:
        return "all"
    return content_digest(np.packbits(np.asarray(mask, dtype=bool)).tobytes(), length=16)


@dataclass(eq=False)
class FactIndex:
    """hnswlib index over every fact vector. ``origin`` is ``"built"`` or ``"loaded"``."""

    vectors: np.ndarray  # (n, d) float32 normalised, read-only (shared with the Corpus)
    m: int
    ef_construction: int
    fingerprint: str
    origin: str
    ef_search: int = 100  # default query-time ef (config.hnsw_ef_search)
    _index: hnswlib.Index | None = field(repr=False, default=None)
    _marked: np.ndarray | None = field(default=None, repr=False)  # labels currently mark_deleted
    _marks_key: bytes = field(default=b"", repr=False)  # digest of _marked (b"": none marked), kept with it
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # (unit query bytes, k, ef, mask digest) -> found ids (k,) int64, read-only
    _found: LRU[tuple[bytes, int, int, bytes], np.ndarray] = field(
        default_factory=lambda: LRU(QUERY_CACHE_SIZE), repr=False
    )

    #: how many indexes this process has built (tests prove reuse with it)
    builds = 0

    @property
    def n(self) -> int:
        return int(self.vectors.shape[0])

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def marked(self) -> np.ndarray | None:
        """A copy of the deletion marks in force (True: excluded from searches), None before any mask."""
        return None if self._marked is None else self._marked.copy()

    @property
    def marks_digest(self) -> bytes:
        """The digest of the deletion marks in force (b"" when none is marked): the mask part of the
        search memo's key."""
        return self._marks_key

    @property
    def kept_searches(self) -> int:
        """How many searches the index keeps (at most :data:`QUERY_CACHE_SIZE`)."""
        return len(self._found)

    # ---- construction ----------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        config: CRPConfig = CRPConfig(),
        *,
        fingerprint: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        chunk: int = BUILD_CHUNK,
    ) -> FactIndex:
        """Insert every vector (label = row), single-threaded in row order so the graph is deterministic;
        ``progress(inserted, n)`` hears after every ``chunk`` rows (the graph does not depend on ``chunk``)."""
        vectors = _readonly(vectors)
        n, d = vectors.shape
        fp = fingerprint or vectors_fingerprint(vectors)
        index = None
        if n > 0:
            index = hnswlib.Index(space="cosine", dim=d)
            index.init_index(
                max_elements=n, M=config.hnsw_m, ef_construction=config.hnsw_ef_construction, random_seed=HNSW_SEED
            )
            step = max(1, int(chunk))
            if progress is not None:
                progress(0, n)
            for s in range(0, n, step):
                e = min(n, s + step)
                index.add_items(vectors[s:e], np.arange(s, e, dtype=np.int64), num_threads=1)
                if progress is not None:
                    progress(e, n)
        FactIndex.builds += 1
        return cls(vectors, config.hnsw_m, config.hnsw_ef_construction, fp, "built", config.hnsw_ef_search, index)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write ``<path>`` (hnswlib binary) and ``<path>.json`` (parameters + file digest), atomically."""
        path = Path(path)
        with replaced_atomically(path, parents=True, mode=PRIVATE_FILE_MODE) as tmp:  # a cache file, as its .json
            if self._index is not None:
                with self._lock:  # the file never carries deletion marks
                    self._apply_mask(None)
                    self._index.save_index(tmp)
            digest = file_digest(tmp)
        meta = {
            "n": self.n,
            "dim": self.dim,
            "m": self.m,
            "ef_construction": self.ef_construction,
            "fingerprint": self.fingerprint,
            "file_sha256": digest,
            "space": "cosine",
        }
        write_atomic(Path(str(path) + ".json"), json.dumps(meta).encode("utf-8"), mode=PRIVATE_FILE_MODE)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        vectors: np.ndarray,
        config: CRPConfig = CRPConfig(),
        *,
        fingerprint: str | None = None,
    ) -> FactIndex | None:
        """The index persisted at ``path`` if it matches these vectors and build parameters, else
        None (a damaged or mismatching file is reported with a warning and ignored)."""
        path = Path(path)
        meta_path = Path(str(path) + ".json")
        if not cache_file_present(path) or not cache_file_present(meta_path):
            return None
        vectors = _readonly(vectors)
        n, d = vectors.shape
        fp = fingerprint or vectors_fingerprint(vectors)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            ok = (
                meta.get("n") == n
                and meta.get("dim") == d
                and meta.get("m") == config.hnsw_m
                and meta.get("ef_construction") == config.hnsw_ef_construction
                and meta.get("fingerprint") == fp
                and meta.get("file_sha256") == file_digest(path)  # read in chunks: the file is not held twice
            )
        except (OSError, ValueError) as exc:
            ok = False
            meta = {"error": str(exc)}
        if not ok:
            warnings.warn(
                f"persisted HNSW index {path} does not match the vectors or is damaged; rebuilding it",
                RuntimeWarning,
                stacklevel=2,
            )
            return None
        index = None
        if n > 0:
            index = hnswlib.Index(space="cosine", dim=d)
            try:
                index.load_index(str(path), max_elements=n)
            except RuntimeError as exc:
                warnings.warn(
                    f"persisted HNSW index {path} could not be read ({exc}); rebuilding it",
                    RuntimeWarning,
                    stacklevel=2,
                )
                return None
        return cls(vectors, config.hnsw_m, config.hnsw_ef_construction, fp, "loaded", config.hnsw_ef_search, index)

    # ---- queries -----------------------------------------------------------------------------
    def _hnsw(self) -> hnswlib.Index:
        """The hnswlib index: every index over at least one vector has one (one over none is never
        searched nor marked)."""
        if self._index is None:
            raise ValueError("this FactIndex holds no vectors, hence no hnswlib index")
        return self._index

    def _apply_mask(self, allowed: np.ndarray | None) -> None:
        """Bring the index's deletion marks to ``~allowed`` (call with ``self._lock`` held).

        Only the difference to the current marks is applied (``mark_deleted`` / ``unmark_deleted``),
        so alternating status sets costs one call per changed fact and no copy of the index. The
        marks' digest (the search memo's mask key) is recomputed only when the marks change.
        """
        marked = self._marked
        if marked is None:
            if allowed is None:
                return
            marked = self._marked = np.zeros(self.n, dtype=bool)
        # a fact must change where it is marked and allowed, or unmarked and excluded: one pass
        differs = marked if allowed is None else marked == allowed
        if not differs.any():
            return
        change = np.flatnonzero(differs)
        index = self._hnsw()
        for label, was_marked in zip(change.tolist(), marked[change].tolist()):
            if was_marked:
                index.unmark_deleted(label)
            else:
                index.mark_deleted(label)
        if allowed is None:
            self._marked, self._marks_key = np.zeros(self.n, dtype=bool), b""
        else:
            self._marked = ~allowed
            self._marks_key = content_digest_bytes(np.packbits(self._marked).tobytes())

    def query(
        self,
        vectors: np.ndarray,
        k: int,
        allowed: np.ndarray | None = None,
        *,
        ef_search: int | None = None,
        num_threads: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k facts per query vector: ``(ids (q, k) int64, sims (q, k) float32)``.

        Rows are sorted by cosine, descending (ties by fact row). Facts whose ``allowed`` is False
        never appear. When fewer than k facts are allowed, the row is padded with id -1 and sim NaN.
        ``ef_search`` defaults to the build config's ``hnsw_ef_search``; hnswlib needs ef >= k.
        """
        q, got_ids, k = self._labels(vectors, k, allowed, ef_search, num_threads)
        nq = q.shape[0]
        ids = np.full((nq, k), -1, dtype=np.int64)
        sims = np.full((nq, k), np.nan, dtype=np.float32)
        if got_ids.size:
            got_ids, got_sims = self._exact_sorted(q, got_ids)
            k_eff = got_ids.shape[1]
            ids[:, :k_eff] = got_ids
            sims[:, :k_eff] = got_sims
        return ids, sims

    def query_ids(
        self,
        vectors: np.ndarray,
        k: int,
        allowed: np.ndarray | None = None,
        *,
        ef_search: int | None = None,
        num_threads: int | None = None,
    ) -> np.ndarray:
        """The same facts as :meth:`query` without their cosines: ``(q, min(k, allowed))`` int64,
        each row in no particular order (no similarity recomputation, no sort: candidate gathering
        only needs the sets)."""
        return self._labels(vectors, k, allowed, ef_search, num_threads)[1]

    def _labels(
        self, vectors: np.ndarray, k: int, allowed: np.ndarray | None, ef_search: int | None, num_threads: int | None
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """(unit queries, found ids (q, k_eff) unsorted, k) for :meth:`query` / :meth:`query_ids`."""
        q = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if q.ndim != 2 or (q.shape[0] and q.shape[1] != self.dim):
            raise ValueError(f"query vectors must be (q, {self.dim}), got {np.shape(vectors)}")
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        nq = q.shape[0]
        if allowed is not None:
            allowed = np.asarray(allowed, dtype=bool)
            if allowed.shape != (self.n,):
                raise ValueError(f"allowed mask must have shape ({self.n},), got {allowed.shape}")
            n_allowed = int(np.count_nonzero(allowed))
            if n_allowed == self.n:
                allowed = None
        else:
            n_allowed = self.n
        k_eff = min(k, n_allowed)
        if nq == 0 or k_eff == 0:
            return q, np.zeros((nq, 0), dtype=np.int64), k
        q = unit_rows(q)
        if allowed is not None and n_allowed <= BRUTE_FORCE_MAX_ALLOWED:
            return q, self._brute(q, k_eff, allowed), k
        ef = max(ef_search if ef_search is not None else self.ef_search, k_eff)
        if num_threads is not None:
            threads = num_threads
        else:  # a thread team costs more than it saves on a few short searches (same results either way)
            threads = QUERY_THREADS if nq * ef >= PARALLEL_QUERY_WORK else 1
        try:
            return q, self._searched(q, k_eff, ef, allowed, threads), k
        except RuntimeError:  # too few reachable allowed nodes for k: answer exactly
            return q, self._brute(q, k_eff, allowed), k

    def _searched(self, q: np.ndarray, k: int, ef: int, allowed: np.ndarray | None, threads: int) -> np.ndarray:
        """HNSW ids ``(q, k)`` of the unit queries ``q``: the rows searched before under the same k, ef
        and deletion marks are read from the index's memo, the others searched in one batched call."""
        size = QUERY_CACHE_SIZE
        index = self._hnsw()
        with self._lock:  # marks + ef + query (and the memo) must not interleave with another thread's
            self._apply_mask(allowed)
            if size <= 0 or q.shape[0] > size:  # no memo, or a batch it could not hold (a neighbour table's rows)
                index.set_ef(ef)
                return _as_rows(index.knn_query(q, k=k, num_threads=threads)[0])
            found = self._found
            found.size = size  # the bound as it is at this search (the constant may change while an index lives)
            keys = [(row.tobytes(), k, ef, self._marks_key) for row in q]
            out = np.empty((q.shape[0], k), dtype=np.int64)
            missing = []
            for i, key in enumerate(keys):
                got = found.get(key)
                if got is None:
                    missing.append(i)
                else:
                    out[i] = got
            if missing:
                index.set_ef(ef)
                todo = q if len(missing) == q.shape[0] else q[missing]
                out[missing] = _as_rows(index.knn_query(todo, k=k, num_threads=threads)[0])
                for i in missing:
                    row = out[i].copy()
                    row.setflags(write=False)
                    found.put(keys[i], row)
            return out

    def _exact_sorted(self, q: np.ndarray, got: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact float32 cosines for the returned ids; each row sorted by (-cos, id)."""
        out_s = np.empty(got.shape, dtype=np.float32)
        for s in range(0, q.shape[0], QUERY_CHUNK):
            e = s + QUERY_CHUNK
            out_s[s:e] = np.einsum("qkd,qd->qk", self.vectors[got[s:e]], q[s:e], dtype=np.float32)
        order = np.lexsort((got, -out_s), axis=-1)
        return np.take_along_axis(got, order, -1), np.take_along_axis(out_s, order, -1)

    def _brute(self, q: np.ndarray, k: int, allowed: np.ndarray | None) -> np.ndarray:
        rows = np.arange(self.n) if allowed is None else np.flatnonzero(allowed)
        cand = self.vectors[rows]
        out = np.empty((q.shape[0], k), dtype=np.int64)
        for s in range(0, q.shape[0], QUERY_CHUNK):
            sim = q[s : s + QUERY_CHUNK] @ cand.T
            if k < sim.shape[1]:
                part = np.argpartition(-sim, k - 1, axis=1)[:, :k]
            else:
                part = np.broadcast_to(np.arange(sim.shape[1]), sim.shape)
            out[s : s + QUERY_CHUNK] = rows[part]
        return out


def _readonly(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors)
    if v.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array, got shape {v.shape}")
    if v.dtype != np.float32 or not v.flags.c_contiguous:
        v = np.ascontiguousarray(v, dtype=np.float32)
    if v.flags.writeable:
        v = v.view()
        v.setflags(write=False)
    return v


def _as_rows(labels: np.ndarray) -> np.ndarray:
    """hnswlib's labels as int64 fact rows: its uint64 labels (rows < 2**63) reinterpreted, not copied."""
    return labels.view(np.int64) if labels.dtype == np.uint64 else labels.astype(np.int64)


def unit_rows(q: np.ndarray) -> np.ndarray:
    """Rows of ``q`` (float32) divided by their L2 norm (zero rows kept): ``np.linalg.norm``'s own
    formula for real rows (``sqrt`` of the pairwise ``add.reduce`` of the squares), without its
    dispatch, so the unit rows are bit for bit those of ``q / np.linalg.norm(q, axis=1)``."""
    norms = np.sqrt(np.add.reduce(q * q, axis=1, keepdims=True))
    norms[~(norms > 0)] = 1.0  # zero (or NaN) norm: the row is left as it is
    return np.divide(q, norms, dtype=np.float32, order="C")  # C rows whatever the input layout

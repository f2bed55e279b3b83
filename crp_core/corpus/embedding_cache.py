"""The persistent embedding cache (SPEC-009 §3): vectors keyed by (model id, sha256(text)), stored as
atomic ``.npz`` shards per model; a damaged shard is dropped with a warning and its texts embedded again.
Decisions: ``docs/decisions/embedding-index.md`` ("Embedding cache").
"""

from __future__ import annotations

import os
import re
import threading
import uuid
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np

from crp_core.support.digest import content_digest
from crp_core.support.files import PRIVATE_FILE_MODE, write_atomic

#: when a model's cache directory holds more shards than this, they are merged into one on load
CACHE_MAX_SHARDS = 32
_DIGEST_BYTES = 32


def default_cache_dir() -> Path:
    """``$CRP_CACHE_DIR`` or ``~/.cache/crp-inspect``."""
    env = os.environ.get("CRP_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "crp-inspect"


def _slug(model_id: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)[:60]
    return f"{safe}-{content_digest(model_id, length=12)}"


class _ModelShelf:
    """The loaded shards of one model: digest -> vector row."""

    def __init__(self) -> None:
        self.rows: dict[bytes, tuple[int, int]] = {}  # digest -> (block number, row)
        self.blocks: list[np.ndarray] = []
        self.dim: int | None = None

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        b = len(self.blocks)
        self.blocks.append(vectors)
        raw = keys.tobytes()
        rows = self.rows
        for r in range(keys.shape[0]):
            rows[raw[r * _DIGEST_BYTES : (r + 1) * _DIGEST_BYTES]] = (b, r)
        if self.dim is None and vectors.ndim == 2:
            self.dim = vectors.shape[1]


class EmbeddingCache:
    """Persistent embedding cache keyed by (model id, sha256(text)).

    Layout: ``<dir>/embeddings/<model slug>/shard-<uuid>.npz``, each shard holding ``keys``
    ((m, 32) uint8 digests), ``vectors`` ((m, d) float32) and ``model_id``. Shards are written
    atomically (temp file + rename); a shard that cannot be read or fails its checks is ignored,
    removed and reported with a warning, so its texts are simply embedded again.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self._shelves: dict[str, _ModelShelf] = {}
        self._lock = threading.Lock()
        self.warnings: list[str] = []
        #: set when a shard could not be written: the rows stay in memory, and no later write is tried
        self.unwritable: str | None = None

    def model_dir(self, model_id: str) -> Path:
        return self.directory / "embeddings" / _slug(model_id)

    def _warn(self, msg: str) -> None:
        self.warnings.append(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)

    def _read_shard(self, path: Path, model_id: str) -> tuple[np.ndarray, np.ndarray] | None:
        try:
            with np.load(path, allow_pickle=False) as z:
                keys = np.asarray(z["keys"])
                vectors = np.asarray(z["vectors"])
                mid = str(z["model_id"])
        except Exception as exc:  # noqa: BLE001 - any unreadable file is a corrupt shard
            self._drop(path, f"unreadable ({type(exc).__name__}: {exc})")
            return None
        ok = (
            mid == model_id
            and keys.dtype == np.uint8
            and keys.ndim == 2
            and keys.shape[1] == _DIGEST_BYTES
            and vectors.dtype == np.float32
            and vectors.ndim == 2
            and vectors.shape[0] == keys.shape[0]
            and bool(np.isfinite(vectors).all())
        )
        if not ok:
            self._drop(path, "wrong model, shape, dtype or non-finite values")
            return None
        return keys, vectors

    def _drop(self, path: Path, why: str) -> None:
        self._warn(f"embedding cache file {path} ignored and removed: {why}; its texts will be re-embedded")
        try:
            path.unlink()
        except OSError:
            pass

    def _shelf(self, model_id: str) -> _ModelShelf:
        with self._lock:
            shelf = self._shelves.get(model_id)
            if shelf is not None:
                return shelf
            shelf = _ModelShelf()
            d = self.model_dir(model_id)
            paths = sorted(d.glob("shard-*.npz")) if os.path.isdir(d) else []  # unreachable: an empty cache
            loaded: list[tuple[Path, np.ndarray, np.ndarray]] = []
            for p in paths:
                got = self._read_shard(p, model_id)
                if got is None:
                    continue
                keys, vectors = got
                if shelf.dim is not None and vectors.shape[1] != shelf.dim:
                    self._drop(p, f"dimension {vectors.shape[1]} differs from {shelf.dim}")
                    continue
                shelf.add(keys, vectors)
                loaded.append((p, keys, vectors))
            if len(loaded) > CACHE_MAX_SHARDS:
                self._compact(model_id, loaded)
            self._shelves[model_id] = shelf
            return shelf

    def _compact(self, model_id: str, loaded: list[tuple[Path, np.ndarray, np.ndarray]]) -> None:
        keys = np.concatenate([k for _, k, _ in loaded])
        vectors = np.concatenate([v for _, _, v in loaded])
        self._write_shard(model_id, keys, vectors)
        for p, _, _ in loaded:  # the merged shard is on disk before any old one goes
            try:
                p.unlink()
            except OSError:
                pass

    def _write_shard(self, model_id: str, keys: np.ndarray, vectors: np.ndarray) -> Path:
        path = self.model_dir(model_id) / f"shard-{uuid.uuid4().hex}.npz"

        def write(fh: BinaryIO) -> None:
            np.savez(fh, keys=keys, vectors=vectors, model_id=np.array(model_id))

        write_atomic(path, write, parents=True, mode=PRIVATE_FILE_MODE)
        return path

    def lookup(self, model_id: str, digests: Sequence[bytes]) -> tuple[np.ndarray | None, np.ndarray]:
        """``(vectors, found)``: vectors (n, d) with zero rows where ``found`` is False (None if the
        model has nothing cached)."""
        shelf = self._shelf(model_id)
        found = np.zeros(len(digests), dtype=bool)
        if shelf.dim is None:
            return None, found
        out = np.zeros((len(digests), shelf.dim), dtype=np.float32)
        rows = shelf.rows
        blocks = shelf.blocks
        for i, dg in enumerate(digests):
            hit = rows.get(dg)
            if hit is not None:
                out[i] = blocks[hit[0]][hit[1]]
                found[i] = True
        return out, found

    def store(self, model_id: str, digests: Sequence[bytes], vectors: np.ndarray) -> None:
        """Persist rows (one shard), and make them visible to later lookups in this process; a cache that
        cannot be written warns once and keeps them in memory."""
        if len(digests) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        keys = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), _DIGEST_BYTES).copy()
        shelf = self._shelf(model_id)
        if shelf.dim is not None and shelf.dim != vectors.shape[1]:
            raise ValueError(f"cache for {model_id!r} holds dimension {shelf.dim}, got {vectors.shape[1]}")
        if self.unwritable is None:
            try:
                self._write_shard(model_id, keys, vectors)
            except OSError as exc:
                self.unwritable = f"{self.directory}: {exc.strerror or exc}"
                self._warn(f"embeddings are not cached ({self.unwritable}); they are kept for this process only")
        with self._lock:
            shelf.add(keys, vectors)


_shared_caches: dict[str, EmbeddingCache] = {}
_shared_lock = threading.Lock()


def shared_cache(directory: str | os.PathLike[str] | None = None) -> EmbeddingCache:
    """One ``EmbeddingCache`` per directory per process, so its shards are read from disk once."""
    path = Path(directory) if directory is not None else default_cache_dir()
    key = str(path.expanduser().resolve())
    with _shared_lock:
        got = _shared_caches.get(key)
        if got is None:
            got = _shared_caches[key] = EmbeddingCache(path)
        return got

"""Stage 5's coverage scopes: disjoint partitions of the ResidualSet (SPEC-027 §1.4, docs/reference/pipeline.md §5).

``|ResidualSet| <= width`` gives one sub-query per partition; otherwise scikit-learn KMeans on the
L2-normalised sub-query embeddings. The labels are kept by their exact input (embeddings, k, seed,
restarts, scikit-learn version) in memory, in ``<cache>/partitions/``, and, for the bundled sample's
scenarios, in the package's seed table ``crp_core/data/kmeans_seeds.json`` (written by
``sample_ckf/_build.py`` with the real KMeans): a run that finds its labels there imports no
scikit-learn, whose import is most of a cold ``crp-inspect run`` (docs/decisions/fanout.md).
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from crp_core.config import CRPConfig
from crp_core.support.digest import content_digest
from crp_core.support.files import PRIVATE_FILE_MODE, write_atomic
from crp_core.support.memo import LRU

__all__ = [
    "RULE_ONE_EACH",
    "RULE_KMEANS",
    "RULE_SINGLE",
    "SEED_FILE",
    "fanout_active",
    "partition_rule",
    "partition_residual_for_fanout",
    "needs_kmeans",
    "kmeans_seed_entries",
]

RULE_ONE_EACH = "one sub-query per partition"
RULE_KMEANS = "k-means"
RULE_SINGLE = "single partition"  # width 1: sequential behaviour (SPEC-027 §5)

#: k-means labels of the bundled scenarios' ResidualSets: {"entries": {key: [label, ...]}}
SEED_FILE = Path(__file__).resolve().parent.parent / "data" / "kmeans_seeds.json"


def fanout_active(width: int | None, residual_size: int) -> bool:
    """Fan-out is active when the width is at least 2 and the ResidualSet is not empty (docs/reference/scenarios.md)."""
    return width is not None and int(width) > 1 and residual_size > 0


def partition_rule(residual_size: int, width: int) -> str:
    """Which branch of SPEC-027 §1.4 applies for this ResidualSet size and width."""
    w = max(int(width), 1)
    if residual_size <= w:
        return RULE_ONE_EACH
    if w == 1:
        return RULE_SINGLE
    return RULE_KMEANS


def partition_residual_for_fanout(
    residual_ids: Sequence[str],
    residual_vectors: npt.ArrayLike,
    width: int,
    config: CRPConfig,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
) -> tuple[tuple[str, ...], ...]:
    """Disjoint, covering partitions of the ResidualSet (SPEC-027 §1.4, docs/reference/pipeline.md §5).

    ``|ResidualSet| <= width``: one sub-query per partition. Otherwise scikit-learn KMeans
    (k = width, ``random_state = kmeans_seed``, ``n_init = kmeans_n_init``) on the L2-normalised
    sub-query embeddings. Clusters left empty by k-means (duplicated points) are refilled
    deterministically: the largest partition (earliest on ties) gives up its last sub-query to a new
    partition until there are ``width`` of them. Partitions are ordered by their first sub-query's
    position in the ResidualSet; sub-queries inside keep ResidualSet order. An empty ResidualSet gives
    ``()``; a width below 1 counts as 1 (one partition: sequential behaviour, SPEC-027 §5).
    With ``cache_dir`` the labels persist there, keyed by their exact input (:func:`_kmeans_labels`).
    """
    ids = tuple(residual_ids)
    n = len(ids)
    if len(set(ids)) != n:
        raise ValueError("partition_residual_for_fanout: duplicate sub-query id in the ResidualSet")
    if n == 0:
        return ()
    w = max(int(width), 1)
    rule = partition_rule(n, w)
    if rule == RULE_ONE_EACH:
        return tuple((sq,) for sq in ids)
    if rule == RULE_SINGLE:
        return (ids,)
    x = _unit_rows(residual_vectors, n)
    labels = _kmeans_labels(x, w, config, cache_dir)
    groups: dict[int, list[int]] = {}
    for pos, lab in enumerate(labels.tolist()):
        groups.setdefault(int(lab), []).append(pos)
    parts = sorted(groups.values(), key=lambda g: g[0])
    while len(parts) < w:  # a cluster came back empty: split the largest partition
        donor = max(range(len(parts)), key=lambda i: (len(parts[i]), -parts[i][0]))
        moved = parts[donor].pop()
        parts.append([moved])
        parts.sort(key=lambda g: g[0])
    return tuple(tuple(ids[p] for p in g) for g in parts)


def needs_kmeans(
    residual_vectors: npt.ArrayLike, width: int, config: CRPConfig, cache_dir: str | os.PathLike[str] | None = None
) -> bool:
    """True when partitioning this ResidualSet runs scikit-learn KMeans: the k-means rule applies and
    its labels are neither in ``cache_dir`` nor in the seed table (the pipeline imports scikit-learn
    ahead of the stage timings only then)."""
    x = np.asarray(residual_vectors, dtype=np.float64)
    n, w = (x.shape[0] if x.ndim == 2 else 0), max(int(width), 1)
    if n == 0 or partition_rule(n, w) != RULE_KMEANS:
        return False
    x = np.ascontiguousarray(_unit_rows(x, n))
    key = _labels_key(x, w, int(config.kmeans_seed), int(config.kmeans_n_init))
    return _known_labels(key, n, w, cache_dir)[0] is None


def kmeans_seed_entries(
    residual_vectors: npt.ArrayLike, widths: Iterable[int], config: CRPConfig
) -> dict[str, list[int]]:
    """Seed-table entries (key -> labels, computed with scikit-learn) for one ResidualSet at each
    width the k-means rule applies to (``sample_ckf/_build.py`` writes them into :data:`SEED_FILE`)."""
    x0 = np.asarray(residual_vectors, dtype=np.float64)
    n = x0.shape[0] if x0.ndim == 2 else 0
    x = np.ascontiguousarray(_unit_rows(x0, n))
    seed, n_init = int(config.kmeans_seed), int(config.kmeans_n_init)
    out: dict[str, list[int]] = {}
    for w in sorted(set(int(w) for w in widths)):
        if n and partition_rule(n, w) == RULE_KMEANS:
            out[_labels_key(x, w, seed, n_init)] = _kmeans_fit(x, w, seed, n_init).tolist()
    return out


def _unit_rows(residual_vectors: npt.ArrayLike, n: int) -> np.ndarray:
    """The ``n`` sub-query embeddings as float64 unit rows (a zero row stays zero)."""
    x = np.asarray(residual_vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != n:
        raise ValueError(
            f"partition_residual_for_fanout: expected {n} sub-query embeddings, got an array of shape {x.shape}"
        )
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def _kmeans_labels(
    x: np.ndarray, k: int, config: CRPConfig, cache_dir: str | os.PathLike[str] | None = None
) -> np.ndarray:
    """KMeans labels, single-threaded: the ResidualSet is tiny, and one OpenMP thread makes the result
    independent of the machine's core count.

    Kept by the exact input (the embeddings' bytes, k, seed, restarts, scikit-learn version): a suite
    evaluation or a sweep re-runs the same scenario under many configurations whose partitions cannot
    differ. Looked up in the seed table, the process memo, then ``<cache>/partitions/`` (so a later
    process reads them without importing scikit-learn); fitted ones are written there; an unreadable
    or implausible file is fitted again (by the next process that reads it)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    k, seed, n_init = int(k), int(config.kmeans_seed), int(config.kmeans_n_init)
    key = _labels_key(x, k, seed, n_init)
    labels, source = _known_labels(key, x.shape[0], k, cache_dir)
    if labels is None:
        labels = _kmeans_fit(x, k, seed, n_init)
        _remember(key, labels)
        source = "fit"
    path = _labels_path(Path(cache_dir), key) if cache_dir is not None else None
    # kept in the cache when fitted here, or fitted earlier in this process for another cache (a file this
    # process wrote or found is not looked for again: one stat per run saved)
    if path is not None and source == "file":
        _ON_DISK.add(path)
    elif path is not None and (source == "fit" or (source == "memo" and path not in _ON_DISK)):
        if source == "memo" and path.exists():
            _ON_DISK.add(path)
        else:
            kept = labels
            try:
                write_atomic(
                    path, lambda fh: np.save(fh, kept, allow_pickle=False), parents=True, mode=PRIVATE_FILE_MODE
                )
                _ON_DISK.add(path)
            except OSError:  # a read-only or full cache: the labels are simply not kept
                pass
    return labels.copy()


@functools.cache
def _sklearn_version() -> str:
    """The installed scikit-learn's version, read once per process (a package metadata lookup)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scikit-learn")
    except PackageNotFoundError:
        return "unknown"


def _labels_key(x: np.ndarray, k: int, seed: int, n_init: int) -> str:
    """The labels' key: sha256 of the scikit-learn version, the shape, k, seed, restarts and the
    unit rows' bytes (32 hex digits)."""
    return content_digest(f"kmeans|{_sklearn_version()}|{x.shape}|{k}|{seed}|{n_init}|", x.tobytes(), length=32)


def _labels_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / "partitions" / f"kmeans-{key}.npy"


def _plausible(got: np.ndarray, n: int, k: int) -> bool:
    """``n`` int64 labels in ``[0, k)``."""
    return got.dtype == np.int64 and got.shape == (n,) and not (n and (int(got.min()) < 0 or int(got.max()) >= k))


def _read_labels(path: Path, n: int, k: int) -> np.ndarray | None:
    """Stored labels when the file holds ``n`` int64 labels in ``[0, k)``, else None."""
    try:
        got = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    return np.asarray(got) if _plausible(got, n, k) else None


@functools.cache
def _seed_table() -> dict[str, tuple[int, ...]]:
    """:data:`SEED_FILE`'s entries (empty when the file is missing or not the expected shape)."""
    try:
        doc = json.loads(SEED_FILE.read_text(encoding="utf-8"))
        entries = doc["entries"]
        return {str(k): tuple(int(v) for v in labels) for k, labels in entries.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _seeded_labels(key: str, n: int, k: int) -> np.ndarray | None:
    got = _seed_table().get(key)
    if got is None:
        return None
    labels = np.asarray(got, dtype=np.int64)
    return labels if _plausible(labels, n, k) else None


#: label files of ``<cache>/partitions/`` this process wrote or read (not looked for again)
_ON_DISK: set[Path] = set()
#: labels found (seed table, cache file) or fitted in this process, by key (read-only arrays)
_KNOWN: LRU[str, np.ndarray] = LRU(512)


def _remember(key: str, labels: np.ndarray) -> np.ndarray:
    kept = np.array(labels, dtype=np.int64)
    kept.setflags(write=False)
    return _KNOWN.put(key, kept)


def _known_labels(key: str, n: int, k: int, cache_dir: str | os.PathLike[str] | None) -> tuple[np.ndarray | None, str]:
    """(labels, where found: "seed", "memo", "file" or "") under ``key`` without fitting: the seed
    table, the process memo, then the cache file (a file hit is remembered, so the pipeline's check
    and the stage read it once per process)."""
    got = _seeded_labels(key, n, k)
    if got is not None:
        return got, "seed"
    got = _KNOWN.get(key)
    if got is not None and _plausible(got, n, k):
        return got, "memo"
    if cache_dir is not None:
        got = _read_labels(_labels_path(Path(cache_dir), key), n, k)
        if got is not None:
            return _remember(key, got), "file"
    return None, ""


def _kmeans_fit(x: np.ndarray, k: int, seed: int, n_init: int) -> np.ndarray:
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="openmp"):
        warnings.simplefilter("ignore", ConvergenceWarning)  # fewer distinct points than k: repaired
        km = KMeans(n_clusters=k, random_state=seed, n_init=n_init)
        labels = np.asarray(km.fit_predict(x), dtype=np.int64)
    labels.setflags(write=False)
    return labels

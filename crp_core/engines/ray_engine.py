"""The Ray engine: MiniLM embedding as a Ray Data ``map_batches`` over actors that load the model once,
and the whole-CKF pair search as one Ray task per unit of centroid blocks (SPEC-027 §2.2, SPEC-009 §3).

Ray is an optional extra (``pip install -e .[ray]``) and is imported inside these functions only.
Without ``--address`` a private local cluster is started: ``num_cpus`` = the workers, no dashboard,
bound to the loopback address, worker logs kept off the terminal.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from crp_core.analysis.scan import PairSearch, PairSearcher
from crp_core.corpus.embedding import DEFAULT_BATCH
from crp_core.engines.blocking import UNITS_PER_WORKER, BlockPlan, UnitResult, blocked_pairs, unit_pairs
from crp_core.errors import ConfigError
from crp_core.support.blas import one_blas_thread

#: what to say when Ray is missing
INSTALL_HINT = "the Ray engine needs Ray: install the extra with  pip install -e '.[ray]'  (or pip install 'ray[data]')"
#: texts per Ray Data block handed to the embedding actors
EMBED_BLOCK_ROWS = 2048


def require_ray() -> Any:
    """The ``ray`` module, or a :class:`ConfigError` (exit 2) saying how to install the extra."""
    try:
        import ray
        import ray.data  # the embedding needs Ray Data too
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    return ray


def ray_available() -> bool:
    try:
        require_ray()
    except ConfigError:
        return False
    return True


def _quiet(ray: Any) -> None:
    """Ray Data's progress bars and per-dataset log lines off (the CLI prints its own summary)."""
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    ctx.verbose_stats_logs = False


#: seconds to wait for a cluster's address to accept a connection before Ray is asked to join it
CONNECT_TIMEOUT_S = 5.0


def _reachable(address: str) -> str | None:
    """Why ``host:port`` does not accept a TCP connection within :data:`CONNECT_TIMEOUT_S`, or None
    (Ray itself retries an unreachable address for minutes). ``auto`` and ``ray://`` are left to Ray."""
    host, sep, port = address.rpartition(":")
    if address == "auto" or address.startswith("ray://") or not sep or not port.isdigit():
        return None
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=CONNECT_TIMEOUT_S):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def _connect(ray: Any, address: str | None, workers: int, kwargs: dict[str, Any]) -> None:
    """``ray.init`` for a cluster at ``address`` or a private local one; any failure becomes a
    :class:`ConfigError` saying what was tried, and whatever Ray had started is shut down."""
    if address:
        why = _reachable(address)
        if why is not None:
            raise ConfigError(f"no Ray cluster answers at {address} ({why}); start one or leave out --address")
    try:
        if address:
            ray.init(address=address, **kwargs)
        else:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(num_cpus=max(1, int(workers)), _node_ip_address="127.0.0.1", **kwargs)
    except Exception as exc:  # noqa: BLE001  Ray raises ConnectionError, RuntimeError, TimeoutError, ValueError, its own types
        try:
            ray.shutdown()  # stops whatever part of a local cluster had started
        except Exception:  # noqa: BLE001  best effort: the first failure is the one to report
            pass
        what = f"connect to the Ray cluster at {address}" if address else "start a local Ray cluster"
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise ConfigError(f"could not {what}: {reason}") from None


@contextmanager
def ray_session(address: str | None = None, workers: int = 2) -> Iterator[Any]:
    """A connected Ray: the one already initialised in this process, the cluster at ``address``, or a
    private local cluster of ``workers`` CPUs (loopback only, no dashboard), shut down on exit when
    this call started it."""
    ray = require_ray()
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            "configure_logging": True,
        }
        _connect(ray, address, workers, kwargs)
        started = True
    _quiet(ray)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def _cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# ---- the pair search -------------------------------------------------------------------------------
def _unit_task(plan: BlockPlan, g0: int, g1: int) -> UnitResult:
    with one_blas_thread():  # one core per task: the tasks share the node
        return unit_pairs(plan, g0, g1)


def ray_searcher(workers: int | None = None, units_per_worker: int = UNITS_PER_WORKER) -> PairSearcher:
    """A :data:`PairSearcher` running each unit of centroid blocks as a Ray task (Ray must be connected:
    :func:`ray_session`); ``workers`` None = the cluster's CPUs. Same pairs as the local search
    (:mod:`crp_core.engines.blocking`)."""

    def search(vectors: np.ndarray, threshold: float) -> PairSearch:
        ray = require_ray()
        n_workers = workers if workers is not None else _cluster_cpus(ray)
        remote = ray.remote(num_cpus=1)(_unit_task)

        def run(plan: BlockPlan, units: Sequence[tuple[int, int]]) -> Iterable[UnitResult]:
            ref = ray.put(plan)  # the vectors and blocks once in the object store, read by every task
            return ray.get([remote.remote(ref, g0, g1) for g0, g1 in units])

        return blocked_pairs(vectors, threshold, run, n_units=max(1, n_workers) * units_per_worker)

    return search


# ---- embedding ------------------------------------------------------------------------------------
class EmbedActor:
    """One Ray Data actor: the MiniLM model loaded once, then every batch it is given encoded."""

    def __init__(self, batch_size: int = DEFAULT_BATCH, threads: int = 1) -> None:
        import torch

        from crp_core.corpus.embedding import MiniLMEmbedder

        torch.set_num_threads(max(1, int(threads)))
        self.batch_size = batch_size
        self.embedder = MiniLMEmbedder()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        texts = [str(t) for t in batch["text"]]
        return {
            "row": np.asarray(batch["row"], dtype=np.int64),
            "embedding": self.embedder.encode(texts, batch_size=self.batch_size),
        }


def ray_embed(
    texts: Sequence[str],
    workers: int | None = None,
    *,
    batch_size: int = DEFAULT_BATCH,
    block_rows: int = EMBED_BLOCK_ROWS,
) -> np.ndarray:
    """(n, 384) float32 unit MiniLM vectors of ``texts`` in their order, embedded by ``workers`` actors
    (default: the cluster's CPUs) each loading the model once (Ray must be connected: :func:`ray_session`)."""
    import pyarrow as pa

    from crp_core.corpus.embedding import DIM

    ray = require_ray()
    n = len(texts)
    out = np.zeros((n, DIM), dtype=np.float32)
    if n == 0:
        return out
    n_workers = max(1, workers if workers is not None else _cluster_cpus(ray))
    step = max(1, int(block_rows))
    tables = [
        pa.table(
            {
                "row": pa.array(np.arange(s, min(n, s + step), dtype=np.int64)),
                "text": pa.array(list(texts[s : s + step]), type=pa.string()),
            }
        )
        for s in range(0, n, step)
    ]
    # a pool of n_workers actors (``concurrency=`` before Ray 2.51, ``compute=`` since)
    pool: dict[str, Any] = (
        {"compute": ray.data.ActorPoolStrategy(size=n_workers)}
        if hasattr(ray.data, "ActorPoolStrategy")
        else {"concurrency": n_workers}
    )
    ds = ray.data.from_arrow(tables).map_batches(
        EmbedActor,
        fn_constructor_kwargs={"batch_size": batch_size},
        num_cpus=1,
        batch_size=min(step, 512),
        batch_format="numpy",
        **pool,
    )
    seen = np.zeros(n, dtype=bool)
    for b in ds.iter_batches(batch_format="numpy", batch_size=None):
        rows = np.asarray(b["row"], dtype=np.int64)
        out[rows] = np.asarray(b["embedding"], dtype=np.float32)
        seen[rows] = True
    if not seen.all():
        raise RuntimeError(f"the Ray embedding returned {int(seen.sum())} of {n} rows")
    return out

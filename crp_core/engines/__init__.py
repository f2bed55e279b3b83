"""Engines for the whole-CKF work that outgrows one machine: embedding every fact (SPEC-009 §3) and the
whole-CKF conflict scan (SPEC-027 §2). ``local`` runs in this process; ``ray`` on a Ray cluster (the
optional ``[ray]`` extra, imported lazily). Both give the same pairs, winners and report
(:mod:`crp_core.engines.blocking` states why). Decisions: ``docs/scaling.md``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.analysis.scan import CheckedPairs, ConflictScan, ScanSource
    from crp_core.analysis.scan_update import RetrievableSplit
    from crp_core.config import CRPConfig
    from crp_core.decisions import Decisions
    from crp_core.model import KnowledgeBase
    from crp_core.support.costs import StageClock

Engine = Literal["local", "ray"]
ENGINES: tuple[str, ...] = ("local", "ray")


@dataclass(frozen=True)
class EmbedRun:
    """What :func:`embed_kb` did: texts, how many the cache already held, seconds, engine and workers."""

    texts: int
    cached: int
    seconds: float
    engine: str
    workers: int

    @property
    def texts_per_second(self) -> float:
        embedded = self.texts - self.cached
        return embedded / self.seconds if self.seconds > 0 and embedded else 0.0


def _engine(engine: str) -> Engine:
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    return "ray" if engine == "ray" else "local"


def embed_kb(
    kb: KnowledgeBase,
    *,
    engine: str = "local",
    address: str | None = None,
    workers: int = 2,
    batch_size: int | None = None,
    cache_dir: str | Path | None = None,
    model: str = "",
) -> tuple[KnowledgeBase, EmbedRun]:
    """``kb`` with embeddings of every fact's content by ``model`` (a configuration's ``embedding_model``;
    empty: the process-wide MiniLM, ``MODEL_ID`` unless ``CRP_EMBED_BACKEND=onnx-int8``), stamped with that
    model's id (embeddings it carried are replaced). The persistent cache answers first; the misses are
    embedded by ``engine`` and stored. ``batch_size``: texts per model call (default ``DEFAULT_BATCH``)."""
    from crp_core.corpus.embedding import DEFAULT_BATCH, MODEL_ID, text_digest
    from crp_core.corpus.embedding_models import configured_embedder
    from crp_core.engines.local import embedding_cache, local_embed

    which = _engine(engine)
    batch_size = DEFAULT_BATCH if batch_size is None else batch_size
    embedder = configured_embedder(model)
    model_id = embedder.model_id  # the vectors' id: the one the local path embeds with
    if which == "ray" and model_id != MODEL_ID:
        raise ConfigError(
            f"the Ray engine embeds with {MODEL_ID!r} only; unset CRP_EMBED_BACKEND "
            f"(or --backend onnx / torch) and embedding_model for --engine ray"
        )
    texts = [f.content for f in kb.facts]
    t0 = time.perf_counter()
    cache = embedding_cache(cache_dir)
    digests = [text_digest(t) for t in texts]
    cached, found = cache.lookup(model_id, digests)
    n_cached = int(found.sum()) if cached is not None else 0
    if which == "local":
        vectors = local_embed(texts, cache_dir, batch_size=batch_size, embedder=embedder)
        used = 1
    else:
        from crp_core.engines.ray_engine import ray_embed, ray_session

        vectors = np.zeros((len(texts), 384), dtype=np.float32)
        if cached is not None:
            vectors[found] = cached[found]
        miss = np.flatnonzero(~found) if cached is not None else np.arange(len(texts))
        with ray_session(address, workers) as ray:
            used = workers if not address else max(1, int(ray.cluster_resources().get("CPU", 1)))
            if miss.size:
                got = ray_embed([texts[i] for i in miss], used, batch_size=batch_size)
                vectors[miss] = got
                cache.store(model_id, [digests[i] for i in miss], got)
    out = dataclasses.replace(kb, embeddings=np.ascontiguousarray(vectors, dtype=np.float32), embedding_model=model_id)
    return out, EmbedRun(len(texts), n_cached, time.perf_counter() - t0, which, used)


def scan_with_engine(  # noqa: PLR0913  the scan's inputs plus the engine's and the text check's settings
    corpus: ScanSource,
    config: CRPConfig,
    now: datetime,
    *,
    engine: str = "local",
    address: str | None = None,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
    check_pool: Executor | None = None,
    clock: StageClock | None = None,
    decisions: Decisions = None,
) -> ConflictScan:
    """The whole-CKF conflict scan (``crp_core.analysis.scan.scan_ckf``) with its pair search on ``engine``:
    the same pairs, winners and report on either. ``progress(done, total)`` counts candidate pairs checked;
    ``check_pool`` (``crp_core.analysis.scan_check.check_pool``) runs the text check; ``clock`` times the
    scan's stages; ``decisions``: the operators' pair decisions the arbitration applies."""
    from crp_core.analysis.scan import arbitrate_checked

    clock = _clock(clock)
    checked = _checked(corpus, config, engine, address, workers, progress, check_pool, clock)
    return arbitrate_checked(checked, corpus, config, now, decisions, clock)


def split_with_engine(  # noqa: PLR0913  as scan_with_engine, plus the corpus the scan is cut to
    corpus: ScanSource,
    applied: ScanSource,
    config: CRPConfig,
    now: datetime,
    *,
    engine: str = "local",
    address: str | None = None,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
    check_pool: Executor | None = None,
    clock: StageClock | None = None,
    decisions: Decisions = None,
) -> RetrievableSplit:
    """The whole-CKF scan of ``applied`` (every operator status in force) and the pairs the operators'
    QUARANTINED / DELETED marks took out of it (docs/decisions/triage.md, "Out of retrieval"): :func:`scan_with_engine`
    of ``corpus`` (the same facts and vectors, those facts retrievable:
    ``crp_core.analysis.scan_input.in_force_sources``) cut by ``crp_core.within_retrievable``, the cut the
    dashboard's triage queue makes. ``applied`` retrieving the facts ``corpus`` retrieves gives the scan itself and
    no pair aside."""
    from crp_core.analysis.scan import arbitrate_checked
    from crp_core.analysis.scan_update import within_retrievable

    clock = _clock(clock)
    checked = _checked(corpus, config, engine, address, workers, progress, check_pool, clock)
    scan = arbitrate_checked(checked, corpus, config, now, decisions, clock)
    return within_retrievable(scan, checked, applied)


def _clock(clock: StageClock | None) -> StageClock:
    from crp_core.support.costs import StageClock

    return clock if clock is not None else StageClock()


def _checked(
    corpus: ScanSource,
    config: CRPConfig,
    engine: str,
    address: str | None,
    workers: int,
    progress: Callable[[int, int], None] | None,
    check_pool: Executor | None,
    clock: StageClock,
) -> CheckedPairs:
    """The pair search (on ``engine``) and the text check of the scan (``crp_core.analysis.scan.check_ckf``)."""
    from crp_core.analysis.scan import check_ckf

    if _engine(engine) == "local":
        return check_ckf(corpus, config, progress, check_pool=check_pool, clock=clock)
    from crp_core.engines.ray_engine import ray_searcher, ray_session

    with ray_session(address, workers):
        searcher = ray_searcher(None if address else workers)
        return check_ckf(corpus, config, progress, searcher=searcher, check_pool=check_pool, clock=clock)


__all__ = ["ENGINES", "EmbedRun", "Engine", "embed_kb", "scan_with_engine", "split_with_engine"]

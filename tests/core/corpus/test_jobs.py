"""Resumable, cancellable embedding (crp_core.corpus.embedding.embed_texts with chunks and a cancel
flag) and the background jobs around it (crp_core.corpus.jobs), with a fake embedder: no model loads."""

from __future__ import annotations

import numpy as np
import pytest

from crp_core.corpus.embedding import EmbeddingCache, EmbeddingCancelled, embed_texts
from crp_core.corpus.jobs import EmbeddingProgress, JobRegistry, PreparationJob
from crp_core.corpus.prepared import prepare_corpus
from crp_core.model import Fact, KnowledgeBase
from tests.support.embedders import GatedEmbedder, HashingEmbedder

TEXTS = [f"fact number {i} about service {i % 7} on port {2000 + i}" for i in range(1000)]


class CancelAfter:
    """A cancel flag that turns True once ``embedder`` has embedded ``n`` texts."""

    def __init__(self, embedder: HashingEmbedder, n: int) -> None:
        self.embedder, self.n = embedder, n

    def __call__(self) -> bool:
        return self.embedder.texts_encoded >= self.n


def test_cancel_midway_then_restart_embeds_only_the_remainder(tmp_path):
    e = HashingEmbedder()
    with pytest.raises(EmbeddingCancelled) as info:
        embed_texts(TEXTS, e, EmbeddingCache(tmp_path), cancel=CancelAfter(e, 300), chunk_rows=100, batch_size=50)
    assert info.value.done == 300 and info.value.total == 1000  # three whole chunks, then stopped
    assert e.texts_encoded == 300
    # a new process: a fresh cache object reads the three persisted chunks
    e2 = HashingEmbedder()
    seen: list[tuple[int, int]] = []
    got = embed_texts(TEXTS, e2, EmbeddingCache(tmp_path), progress=lambda d, t: seen.append((d, t)), chunk_rows=100)
    assert e2.texts_encoded == 700  # only the remainder went to the model
    assert seen[0] == (300, 1000) and seen[-1] == (1000, 1000)
    np.testing.assert_allclose(got, HashingEmbedder().encode(TEXTS), atol=1e-6)


def test_cancel_inside_a_chunk_drops_only_that_chunk(tmp_path):
    e = HashingEmbedder()
    # the flag turns True after the first batch of the second chunk: that chunk is not stored
    with pytest.raises(EmbeddingCancelled) as info:
        embed_texts(TEXTS[:400], e, EmbeddingCache(tmp_path), cancel=CancelAfter(e, 250), chunk_rows=200, batch_size=50)
    assert info.value.done == 200
    e2 = HashingEmbedder()
    embed_texts(TEXTS[:400], e2, EmbeddingCache(tmp_path), chunk_rows=200)
    assert e2.texts_encoded == 200


def test_duplicate_texts_count_in_progress(tmp_path):
    texts = ["same text"] * 5 + TEXTS[:5]
    seen: list[tuple[int, int]] = []
    embed_texts(
        texts,
        HashingEmbedder(),
        EmbeddingCache(tmp_path),
        progress=lambda d, t: seen.append((d, t)),
        chunk_rows=3,
        batch_size=1,
    )
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and dones[-1] == 10
    assert seen[1][0] == 5  # the first embedded text resolves its five copies


def test_progress_rate_and_eta_count_only_this_runs_work():
    now = [100.0]
    p = EmbeddingProgress(clock=lambda: now[0])
    p.update(400, 1000)  # 400 cache hits at once
    now[0] = 130.0  # 30 s of model loading
    p.update(500, 1000)  # the first batch: the rate starts here
    snap = p.snapshot()
    assert snap.resumed == 400 and snap.done == 500 and snap.rate is None and snap.eta_s is None
    now[0] = 140.0
    p.update(700, 1000)
    snap = p.snapshot()
    assert snap.rate == pytest.approx(20.0)  # 200 facts in 10 s, not counting the hits or the load
    assert snap.eta_s == pytest.approx(15.0)  # 300 left at 20/s
    assert snap.fraction == pytest.approx(0.7) and snap.elapsed_s == pytest.approx(40.0)
    p.update(650, 1000)  # never backwards
    assert p.snapshot().done == 700
    assert not p.cancelled()
    p.request_cancel()
    assert p.cancelled() and p.snapshot().cancel_requested


def _kb(n: int) -> KnowledgeBase:
    facts = tuple(Fact(fact_id=f"f{i}", content=TEXTS[i], source_type="web", line=i + 1) for i in range(n))
    return KnowledgeBase(facts=facts, source="mem")


def test_job_runs_prepare_corpus_in_the_background_and_can_be_cancelled(tmp_path, monkeypatch):
    from crp_core.corpus import embedding

    batch = embedding.DEFAULT_BATCH
    monkeypatch.setattr(embedding, "CACHE_SHARD_ROWS", batch)  # one chunk = one batch of the embedder
    kb = _kb(600)
    emb = GatedEmbedder()
    reg = JobRegistry()

    def work(p: EmbeddingProgress):
        return prepare_corpus(kb, embedder=emb, cache_dir=tmp_path, progress=p.update, cancel=p.cancelled)

    job = reg.get_or_start("kb", work)
    assert job.state == "running" and not job.wait(0.3)  # blocked on the gate: still running
    assert reg.get_or_start("kb", work) is job and reg.started == 1  # re-attached, not restarted
    assert 0 < job.progress.snapshot().done < 600
    job.cancel()
    emb.gate.set()
    assert job.wait(10) and job.state == "cancelled"
    assert isinstance(job.error, EmbeddingCancelled)
    assert emb.texts_encoded == 2 * batch  # chunk 2 was under way at the cancel: it finished, then the run stopped
    # asking again after a cancel starts a new run, which resumes from the cache
    emb2 = HashingEmbedder()
    job2 = reg.get_or_start(
        "kb", lambda p: prepare_corpus(kb, embedder=emb2, cache_dir=tmp_path, progress=p.update, cancel=p.cancelled)
    )
    assert job2 is not job and job2.wait(30) and job2.state == "done", job2.error
    assert reg.started == 2
    assert emb2.texts_encoded == 600 - 2 * batch  # resumed: the two stored chunks are not embedded again
    assert job2.result is not None and job2.result.n == 600
    assert reg.get_or_start("kb", work) is job2  # a finished job is reused


def test_a_failing_job_reports_its_error():
    def work(p: EmbeddingProgress) -> None:
        raise ValueError("embedder returned shape (3, 2)")

    job = PreparationJob("k", work).start()
    assert job.wait(5) and job.state == "failed"
    assert isinstance(job.error, ValueError) and job.result is None


def test_registry_keeps_a_bounded_number_of_finished_jobs():
    reg = JobRegistry(max_finished=2)
    for k in range(5):
        reg.get_or_start(k, lambda p, k=k: k).wait(5)
    reg.get_or_start("last", lambda p: None).wait(5)
    assert reg.get(0) is None and reg.get("last") is not None
    assert reg.running() == []


def test_index_build_progress_has_its_own_fraction_and_time_left():
    now = [10.0]
    p = EmbeddingProgress(clock=lambda: now[0])
    p.update(1000, 1000)  # the CKF's own embeddings
    assert not p.snapshot().indexing and p.snapshot().fraction == 1.0
    p.indexing(0, 1000)  # the build starts
    now[0] = 30.0
    p.indexing(250, 1000)  # 250 vectors in 20 s: 750 left take 60 s
    snap = p.snapshot()
    assert snap.indexing and snap.index_done == 250 and snap.index_total == 1000
    assert snap.fraction == pytest.approx(0.25) and snap.index_eta_s == pytest.approx(60.0)
    p.indexing(1000, 1000)
    assert not p.snapshot().indexing and p.snapshot().fraction == 1.0


def test_the_neighbour_table_s_queries_follow_the_index_build_with_their_own_fraction_and_time_left():
    now = [0.0]
    p = EmbeddingProgress(clock=lambda: now[0])
    p.update(1000, 1000)
    p.indexing(1000, 1000)  # the index is built
    p.linking(0, 800)  # 800 retrievable facts to query
    now[0] = 4.0
    p.linking(200, 800)  # 200 facts in 4 s: 600 left take 12 s
    snap = p.snapshot()
    assert snap.linking and not snap.indexing
    assert (snap.graph_done, snap.graph_total) == (200, 800)
    assert snap.fraction == pytest.approx(0.25) and snap.graph_eta_s == pytest.approx(12.0)
    assert snap.index_eta_s is None  # the index phase had one reading only: no pace
    p.linking(800, 800)
    assert not p.snapshot().linking and p.snapshot().fraction == 1.0

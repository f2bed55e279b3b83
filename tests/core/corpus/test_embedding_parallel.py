"""Data parallelism of the ONNX backends (docs/decisions/embedding-index.md, "Data parallelism").

Without the model: ``OnnxEncoder.encode_batches`` hands results back in batch order, keeps at most
``workers`` batches in flight, runs a single batch split only when rows are independent of their
batch-mates (fp32 and int8-v2; the retired dynamic int8-v1 was not), and closing it early (a cancel)
starts no further batch and waits for the running ones. ``CRP_EMBED_SCHEDULE`` is validated. With the
real model (``-m model``): both schedules and both thread counts give the same vectors bit for bit, for
fp32 and int8, and a call from several threads at once gives each caller its own vectors; a text's
int8-v2 vector is the same bits alone, in batches of any size, with any batch-mates, on 1 or 2 threads,
in either schedule.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import crp_core.corpus.embedding as emb
from crp_core.corpus.embedding import EmbeddingCancelled, MiniLMEmbedder, embed_texts
from crp_core.corpus.onnx_backend import BatchRunner, OnnxEncoder
from crp_core.errors import ConfigError
from tests.support.paths import REPO_ROOT

SAMPLE = REPO_ROOT / "sample_ckf"


class _Probe:
    """Stands in for the ONNX session: row ``[k, ...]`` -> vector filled with k; records concurrency.
    ``meet``: the first calls wait (up to 10 s) until that many run at once, so the peak does not hang
    on thread start-up timing; a sequential encoder never gets there and the peak stays 1."""

    def __init__(self, delay: float = 0.01, meet: int = 1) -> None:
        self.delay = delay
        self.meet = meet
        self.lock = threading.Condition()
        self.running = 0
        self.peak = 0
        self.calls: list[list[int]] = []

    def __call__(self, rows: list[list[int]]) -> np.ndarray:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self.calls.append([r[0] for r in rows])
            self.lock.notify_all()
            self.lock.wait_for(lambda: self.peak >= self.meet, timeout=10)
        time.sleep(self.delay)
        with self.lock:
            self.running -= 1
        return np.array([[float(r[0])] * 3 for r in rows], dtype=np.float32)


def _encoder(workers: int, rows_independent: bool, probe: _Probe) -> OnnxEncoder:
    enc = object.__new__(OnnxEncoder)  # the scheduling alone: no session, no tokenizer
    enc.workers = workers
    enc.rows_independent = rows_independent
    enc.runner = BatchRunner(probe, workers, rows_independent)
    return enc


def _batches(n: int, size: int) -> list[list[list[int]]]:
    return [[[k] for k in range(s, min(n, s + size))] for s in range(0, n, size)]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_results_come_back_in_batch_order_with_at_most_workers_in_flight(workers):
    probe = _Probe(meet=workers)
    enc = _encoder(workers, False, probe)
    got = list(enc.encode_batches(_batches(50, 4)))
    assert [g[:, 0].tolist() for g in got] == [[float(k) for k in range(s, min(50, s + 4))] for s in range(0, 50, 4)]
    assert probe.peak == workers  # 13 batches: every worker busy at once, never more


def test_a_single_batch_is_split_over_the_workers_only_when_rows_are_independent():
    probe = _Probe()
    got = list(_encoder(2, True, probe).encode_batches(_batches(7, 64)))
    assert len(got) == 1 and got[0][:, 0].tolist() == list(map(float, range(7)))
    assert sorted(probe.calls) == [[0, 1, 2, 3], [4, 5, 6]]
    probe = _Probe()
    got = list(_encoder(2, False, probe).encode_batches(_batches(7, 64)))  # int8: its batch stays whole
    assert probe.calls == [list(range(7))] and got[0][:, 0].tolist() == list(map(float, range(7)))


def test_closing_early_starts_no_further_batch_and_waits_for_the_running_ones():
    probe = _Probe(delay=0.05)
    gen = _encoder(2, False, probe).encode_batches(_batches(40, 4))
    next(gen)
    gen.close()
    assert probe.running == 0  # nothing still runs once close() returns
    assert len(probe.calls) <= 3  # the first two, and the one started before the first was handed back
    time.sleep(0.15)
    assert len(probe.calls) <= 3


def test_a_cancel_between_batches_stops_the_parallel_encoder(tmp_path, monkeypatch):
    probe = _Probe()
    enc = _encoder(2, False, probe)
    enc.tokenize = lambda texts: [[i] for i in range(len(texts))]  # type: ignore[method-assign]
    m = MiniLMEmbedder(cache_dir=tmp_path)
    monkeypatch.setattr(m, "load", lambda: enc)
    m.dim = 3
    stop = {"now": False}

    def progress(done: int, total: int) -> None:
        stop["now"] = done >= 8

    with pytest.raises(EmbeddingCancelled):
        embed_texts(
            [f"text {i}" for i in range(64)],
            m,
            progress=progress,
            batch_size=4,
            cancel=lambda: stop["now"],
            chunk_rows=64,
        )
    assert probe.running == 0 and len(probe.calls) <= 5  # of 16: stopped after the third, two ahead at most


def test_schedule_env(monkeypatch):
    monkeypatch.delenv(emb.SCHEDULE_ENV, raising=False)
    assert emb.embed_schedule() == "batches"
    monkeypatch.setenv(emb.SCHEDULE_ENV, " Intra ")
    assert emb.embed_schedule() == "intra"
    monkeypatch.setenv(emb.SCHEDULE_ENV, "pipeline")
    with pytest.raises(ConfigError, match="CRP_EMBED_SCHEDULE='pipeline': expected one of batches, intra"):
        emb.embed_schedule()


# ---- with the real model ---------------------------------------------------------------------------
def _facts() -> list[str]:
    return [
        json.loads(line)["content"]
        for line in (SAMPLE / "knowledge_base.jsonl").read_text(encoding="utf-8").splitlines()
    ]


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("onnxcache")
    for backend in ("onnx", "onnx-int8"):
        MiniLMEmbedder(backend=backend, cache_dir=cache).load()
    return cache


@pytest.mark.model
@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_schedules_and_thread_counts_give_the_same_vectors_bit_for_bit(backend, model_cache, monkeypatch):
    texts = _facts()[:150]
    got = {}
    for sched, threads in (("intra", "2"), ("batches", "2"), ("intra", "1"), ("batches", "3")):
        monkeypatch.setenv(emb.SCHEDULE_ENV, sched)
        monkeypatch.setenv(emb.THREADS_ENV, threads)
        m = MiniLMEmbedder(backend=backend, cache_dir=model_cache)
        got[sched, threads] = (m.encode(texts, batch_size=32), m.encode(texts[:40]))  # 5 batches; one batch
        assert m.encoder is not None and m.encoder.schedule == sched  # type: ignore[union-attr]
    first = got["intra", "2"]
    for key, (many, one) in got.items():
        assert np.array_equal(many, first[0]) and np.array_equal(one, first[1]), key


@pytest.mark.model
def test_fp32_rows_do_not_depend_on_their_batch_mates(model_cache):
    """Why a lone fp32 batch may be split over the threads."""
    texts = _facts()[:40]
    fp32 = MiniLMEmbedder(backend="onnx", cache_dir=model_cache)
    assert np.array_equal(fp32.encode(texts, batch_size=40), fp32.encode(texts, batch_size=7))


@pytest.mark.model
def test_an_int8_vector_is_a_function_of_its_text_alone(model_cache, monkeypatch):
    """docs/reference/scenarios.md: the cache keys a vector by (model id, text), so the int8-v2 vector of a text must be
    the same bits whatever it is batched with: alone, in batches of 1 / 3 / 16 / 64 / 128, among other
    texts (shuffled, the longest fact, short queries), over 1 or 2 threads, in either schedule."""
    facts = _facts()
    texts = facts[:24]
    alone = {}
    monkeypatch.setenv(emb.SCHEDULE_ENV, "intra")
    monkeypatch.setenv(emb.THREADS_ENV, "1")
    one = MiniLMEmbedder(backend="onnx-int8", cache_dir=model_cache)
    for t in texts:
        alone[t] = one.encode([t])[0]
    assert one.encoder is not None and one.encoder.rows_independent  # type: ignore[union-attr]
    rng = np.random.default_rng(7)
    longest = max(facts, key=len)
    for sched, threads in (("intra", "1"), ("intra", "2"), ("batches", "1"), ("batches", "2")):
        monkeypatch.setenv(emb.SCHEDULE_ENV, sched)
        monkeypatch.setenv(emb.THREADS_ENV, threads)
        m = MiniLMEmbedder(backend="onnx-int8", cache_dir=model_cache)
        for size in (1, 3, 16, 64, 128):
            mates = [facts[i] for i in rng.permutation(len(facts))[:90]] + [longest, "etcd port", "tls"]
            batch = [*texts, *mates]
            order = rng.permutation(len(batch))
            got = m.encode([batch[i] for i in order], batch_size=size)
            for row, i in enumerate(order):
                if i < len(texts):
                    assert np.array_equal(got[row], alone[texts[i]]), (sched, threads, size, i)


@pytest.mark.model
def test_concurrent_callers_each_get_their_own_vectors(model_cache, monkeypatch):
    monkeypatch.setenv(emb.SCHEDULE_ENV, "batches")
    texts = _facts()
    m = MiniLMEmbedder(backend="onnx", cache_dir=model_cache)
    parts = [texts[0:120], texts[120:260], texts[260:455]]
    want = [m.encode(p, batch_size=16) for p in parts]
    with ThreadPoolExecutor(3) as ex:
        got = list(ex.map(lambda p: m.encode(p, batch_size=16), parts))
    for a, b in zip(got, want):
        assert np.array_equal(a, b)

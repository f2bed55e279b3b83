"""Benchmark: model load, embedding throughput, embedding cache, HNSW build / query / recall, graph.

    .venv/bin/python bench/embed_index.py              # everything (the first 10k MiniLM embedding takes a while)
    .venv/bin/python bench/embed_index.py --skip-model # vectors only
    .venv/bin/python bench/embed_index.py --sizes 10000
    .venv/bin/python bench/embed_index.py --backends-only  # the MiniLM backends on the sample's texts
    .venv/bin/python bench/embed_index.py --backends-only --backends onnx,onnx-int8 --batches 16
    .venv/bin/python bench/embed_index.py --backends-only --schedules batches,intra  # A/B, passes alternated

The backends table embeds the sample's 455 fact texts with each backend (``onnx``, ``torch``,
``onnx-int8``; ``--backends``) at batch sizes 16 / 32 / 64 (``--batches``; best of 3 passes, texts sorted
by length as the embedder does), with texts per CPU-second of the process (all its threads) and the
load average next to each figure; the ONNX backends run under each ``--schedules`` entry (``batches``:
data parallelism, ``intra``: intra-op threads; default ``batches``), their passes alternated; the ONNX export and the
int8 build (once per weights digest, into a temporary cache unless ``--cache-dir``) are timed apart in
the load row. Each ONNX backend's facts embedded one text per call against batch 64 (a text's vector must
not depend on its batch-mates). Then each backend against torch: cosine of the fact vectors, and the
top-10 overlap of brute-force retrieval for the bundled scenarios' queries and sub-queries.

Prints one markdown table. Synthetic vectors come from bench/make_synthetic_ckf.py (clustered, seeded).
Caches go to a fresh temporary directory (removed at the end), never to the user's cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hnswlib
import make_synthetic_ckf as synth

import crp_core.corpus.embedding as emb_mod
from crp_core.config import CRPConfig
from crp_core.corpus.embedding import EmbeddingCache, MiniLMEmbedder, embed_texts
from crp_core.corpus.index import FactIndex
from crp_core.corpus.prepared import Corpus, prepare_corpus
from crp_core.model import Fact, KnowledgeBase

ROWS: list[tuple[str, str, str]] = []
CACHE_DIR: str | None = None  # --cache-dir: keep the embedding cache between runs


def row(what: str, value: str, note: str = "") -> None:
    ROWS.append((what, value, note))
    print(f"  {what}: {value} {note}", file=sys.stderr, flush=True)


def timed(fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t


def kb_from_lines(lines, statuses=True) -> KnowledgeBase:
    return KnowledgeBase(
        tuple(Fact(f["fact_id"], f["content"], status=f["status"] if statuses else "ACTIVE") for f in lines)
    )


def bench_model(n_texts: int, tmp: str) -> None:
    lines, _, _ = synth.generate(n_texts, seed=7)
    texts = [f["content"] for f in lines]
    m = MiniLMEmbedder()
    _, t = timed(m._load)
    row("MiniLM cold load", f"{t:.2f} s", f"backend {m.backend}, bundled weights, offline")
    sample = texts[:1000]
    _, t = timed(m.encode, sample, batch_size=64)
    row("MiniLM embedding throughput", f"{len(sample) / t:.0f} texts/s", f"{len(sample)} texts, batch 64, CPU")
    tk = MiniLMEmbedder()
    _, t = timed(tk.count_tokens, texts)
    row(
        f"token counting ({n_texts} texts, tokenizer only)",
        f"{t:.2f} s",
        f"tokenizer loads: {tk.tokenizer_load_count}, model loads: {tk.load_count}",
    )
    cache_dir = CACHE_DIR or os.path.join(tmp, "cache")
    kb = kb_from_lines(lines)
    e1 = MiniLMEmbedder()
    c1, t1 = timed(prepare_corpus, kb, embedder=e1, cache_dir=cache_dir)
    row(
        f"prepare_corpus {n_texts} texts, first load in this run",
        f"{t1:.1f} s",
        f"embedded {e1.texts_encoded}, model loads {e1.load_count}, index {c1.index.origin}",
    )
    e2 = MiniLMEmbedder()
    emb_mod._shared_caches.clear()  # as a new process: shards are read from disk again
    c2, t2 = timed(prepare_corpus, kb, embedder=e2, cache_dir=cache_dir)
    row(
        f"prepare_corpus {n_texts} texts, warm cache (read from disk)",
        f"{t2:.2f} s",
        f"embedded {e2.texts_encoded}, model loads {e2.load_count}, index {c2.index.origin}",
    )
    e3 = MiniLMEmbedder()
    _, t3 = timed(embed_texts, texts, e3, EmbeddingCache(cache_dir))
    row(f"embed_texts {n_texts} texts, cache hit only", f"{t3 * 1000:.0f} ms", f"embedded {e3.texts_encoded}")
    ids, _ = c2.search(c2.vectors[:200], 11)
    x = c2.vectors
    bf = np.argsort(-(x[:200] @ x[c2.retrievable].T), axis=1)[:, :10]
    bf = np.flatnonzero(c2.retrievable)[bf]
    rec = np.mean([len(set(a[:10]) & set(b)) / 10 for a, b in zip(ids, bf)])
    row(f"recall@10 on real MiniLM vectors ({n_texts})", f"{rec:.4f}", "200 fact queries, brute force reference")


def _load() -> str:
    return ", ".join(f"{v:.1f}" for v in os.getloadavg())


def _sample_texts() -> tuple[list[str], list[str]]:
    """The sample's fact texts and its scenarios' query + sub-query texts."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "sample_ckf"
    facts = [
        json.loads(line)["content"] for line in (root / "knowledge_base.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    queries = []
    for f in sorted((root / "scenarios").glob("*.json")):
        sc = json.loads(f.read_text(encoding="utf-8"))
        q = sc["query"]
        queries.append(q["text"] if isinstance(q, dict) else q)
        queries += [sq["text"] for sq in sc.get("sub_queries", [])]
    return facts, queries


def _top10_overlap(fa: np.ndarray, qa: np.ndarray, fb: np.ndarray, qb: np.ndarray) -> float:
    """Mean share of the top-10 facts (brute force, by cosine) two backends' vectors agree on."""
    ta = np.argsort(-(qa @ fa.T), axis=1, kind="stable")[:, :10]
    tb = np.argsort(-(qb @ fb.T), axis=1, kind="stable")[:, :10]
    return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ta, tb)]))


def _timed_cpu(fn, *a, **k) -> tuple[float, float]:
    """(wall s, process CPU s: every thread of the process) of one call."""
    w, c = time.perf_counter(), time.process_time()
    fn(*a, **k)
    return time.perf_counter() - w, time.process_time() - c


def bench_backends(
    backends: tuple[str, ...] = emb_mod.BACKENDS,
    batches: tuple[int, ...] = (16, 32, 64),
    repeats: int = 3,
    schedules: tuple[str, ...] = ("batches",),
) -> None:
    """texts/s of each MiniLM backend on the sample's fact texts (one backend after the other, in this
    process; an ONNX backend once per schedule, the schedules' passes alternated), and each backend's
    agreement with torch (cosine) and retrieval agreement (top-10)."""
    texts, queries = _sample_texts()
    facts: dict[str, np.ndarray] = {}
    qvec: dict[str, np.ndarray] = {}
    cache = tempfile.mkdtemp(prefix="crp-bench-onnx-") if CACHE_DIR is None else CACHE_DIR
    for backend in backends:
        runs: dict[str, MiniLMEmbedder] = {}
        for sched in schedules if backend != "torch" else ("-",):
            os.environ[emb_mod.SCHEDULE_ENV] = sched if sched != "-" else ""
            m = MiniLMEmbedder(backend=backend, cache_dir=cache)
            _, t = timed(m._load)
            row(
                f"MiniLM {backend}{'' if sched == '-' else ', ' + sched}: load",
                f"{t:.2f} s",
                f"model id {m.model_id}; ONNX files made: {m.builds} (export / int8 build, once per weights "
                f"digest); threads {emb_mod._threads()}; load avg {_load()}",
            )
            m.encode(texts[:32])  # warm-up (first session run allocates)
            runs[sched] = m
        os.environ.pop(emb_mod.SCHEDULE_ENV, None)
        for bs in batches:
            got: dict[str, list[tuple[float, float]]] = {sched: [] for sched in runs}
            for _ in range(repeats):
                for sched, m in runs.items():  # A, B, A, B, ...: the load changes under both alike
                    got[sched].append(_timed_cpu(m.encode, texts, batch_size=bs))
            for sched, times in got.items():
                wall = min(w for w, _ in times)
                cpu = min(c for _, c in times)
                row(
                    f"MiniLM {backend}{'' if sched == '-' else ', ' + sched}: {len(texts)} sample texts, batch {bs}",
                    f"{len(texts) / wall:.0f} texts/s",
                    f"best of {repeats}; {len(texts) / cpu:.0f} texts per "
                    f"CPU-second (best); load avg {_load()} at {time.strftime('%H:%M:%S', time.gmtime())} UTC",
                )
        m = next(iter(runs.values()))
        facts[backend] = m.encode(texts)
        qvec[backend] = m.encode(queries)
        for sched, other in list(runs.items())[1:]:
            same = np.array_equal(other.encode(texts), facts[backend]) and np.array_equal(
                other.encode(queries), qvec[backend]
            )
            row(
                f"{backend}: schedule {sched} vs {next(iter(runs))}",
                "bit for bit" if same else "DIFFERENT",
                f"{len(texts)} facts and {len(queries)} queries",
            )
        if backend != "torch":  # one model id, one function of the text: a vector must not depend on its batch-mates
            alone = m.encode(texts, batch_size=1)
            cos1 = (alone.astype(np.float64) * facts[backend]).sum(axis=1)
            row(
                f"{backend}: each text alone vs batch 64",
                "bit for bit" if np.array_equal(alone, facts[backend]) else f"DIFFERENT (min cosine {cos1.min():.6f})",
                f"{len(texts)} facts",
            )
        del m, runs
    ref = "torch" if "torch" in facts else next(iter(facts))
    for backend in facts:
        if backend == ref:
            continue
        cos = (facts[backend].astype(np.float64) * facts[ref]).sum(axis=1)
        qcos = (qvec[backend].astype(np.float64) * qvec[ref]).sum(axis=1)
        row(
            f"{backend} vs {ref} agreement",
            f"min cosine {cos.min():.8f}, mean {cos.mean():.8f}",
            f"{len(texts)} facts; queries min {qcos.min():.6f}; max |difference| "
            f"{np.abs(facts[backend] - facts[ref]).max():.2e}",
        )
        overlap = _top10_overlap(facts[ref], qvec[ref], facts[backend], qvec[backend])
        row(
            f"{backend} vs {ref} retrieval",
            f"top-10 overlap {overlap:.3f}",
            f"{len(queries)} scenario queries + sub-queries; facts as queries: "
            f"{_top10_overlap(facts[ref], facts[ref], facts[backend], facts[backend]):.3f}",
        )
    if CACHE_DIR is None:
        shutil.rmtree(cache, ignore_errors=True)


def clustered(n: int):
    lines, vectors, info = synth.generate(n, seed=0)
    return lines, vectors, info


def bench_index(n: int, cfg: CRPConfig, tmp: str, *, threads_compare: bool) -> None:
    lines, x, info = clustered(n)
    kb = kb_from_lines(lines)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    idx, t = timed(FactIndex.build, x, cfg)
    row(
        f"HNSW build {n} x 384 (1 thread, deterministic)",
        f"{t:.1f} s",
        f"M={cfg.hnsw_m}, ef_construction={cfg.hnsw_ef_construction}",
    )
    if threads_compare:
        h = hnswlib.Index(space="cosine", dim=x.shape[1])
        h.init_index(max_elements=n, M=cfg.hnsw_m, ef_construction=cfg.hnsw_ef_construction, random_seed=100)
        _, t2 = timed(h.add_items, x, np.arange(n), num_threads=2)
        row(f"HNSW build {n} (2 threads, for comparison)", f"{t2:.1f} s", "not deterministic, not used")
    path = os.path.join(tmp, f"idx{n}.bin")
    _, ts = timed(idx.save, path)
    _, tl = timed(FactIndex.load, path, x, cfg)
    row(f"HNSW save / load {n}", f"{ts * 1000:.0f} / {tl * 1000:.0f} ms", "load verifies sha256 of the file")
    rng = np.random.default_rng(1)
    centres = info["centres"]
    q = centres[rng.integers(0, len(centres), 1000)] + rng.standard_normal((1000, 384)) * 0.35 / np.sqrt(384)
    q = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    allowed = np.array([f["status"] not in ("DELETED", "QUARANTINED") for f in lines])
    lat = []
    for i in range(300):
        _, t = timed(idx.query, q[i : i + 1], cfg.candidate_k, None, ef_search=cfg.hnsw_ef_search)
        lat.append(t * 1000)
    lat.sort()
    row(
        f"query k={cfg.candidate_k} {n}, single vector, no mask",
        f"p50 {lat[150]:.2f} / p95 {lat[284]:.2f} ms",
        f"ef_search={cfg.hnsw_ef_search}",
    )

    def switch(mask):
        with idx._lock:
            idx._apply_mask(mask)

    _, tmark = timed(switch, allowed)
    row(
        f"apply deletion marks {n} ({(~allowed).sum()} excluded)",
        f"{tmark * 1000:.1f} ms",
        "first masked query of a status set (mark_deleted)",
    )
    other = allowed.copy()
    other[rng.choice(n, 20, replace=False)] ^= True
    _, tsw = timed(switch, other)
    row(f"switch status set {n} (20 facts change)", f"{tsw * 1000:.2f} ms", "mark / unmark the difference")
    lat = []
    for i in range(300):
        _, t = timed(idx.query, q[i : i + 1], cfg.candidate_k, allowed, ef_search=cfg.hnsw_ef_search)
        lat.append(t * 1000)
    lat.sort()
    row(f"query k={cfg.candidate_k} {n}, single vector, masked", f"p50 {lat[150]:.2f} / p95 {lat[284]:.2f} ms", "")
    _, tb = timed(idx.query, q, cfg.candidate_k, allowed, ef_search=cfg.hnsw_ef_search)
    row(f"batch query 1000 x k={cfg.candidate_k} {n}, masked", f"{1000 / tb:.0f} queries/s", "2 threads")
    # the filter-callable alternative, for the decision record
    h = idx._index
    h.set_ef(cfg.hnsw_ef_search)
    _, tf = timed(h.knn_query, q[:200], k=cfg.candidate_k, num_threads=1, filter=lambda i: bool(allowed[i]))
    row(f"hnswlib filter= callable, 200 queries {n}", f"{tf / 200 * 1000:.2f} ms/query", "alternative not used")
    sims = q[:200] @ x.T
    sims[:, ~allowed] = -np.inf
    bf = np.argsort(-sims, axis=1)[:, :10]
    got, _ = idx.query(q[:200], 10, allowed, ef_search=cfg.hnsw_ef_search)
    rec = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, bf)])
    row(
        f"recall@10 vs brute force {n}",
        f"{rec:.4f}",
        f"200 near-centre queries, masked, ef_search={cfg.hnsw_ef_search}",
    )
    fq = x[rng.choice(np.flatnonzero(allowed), 500, replace=False)]
    sims = fq @ x.T
    sims[:, ~allowed] = -np.inf
    bf = np.argsort(-sims, axis=1)[:, :10]
    got, _ = idx.query(fq, 10, allowed, ef_search=cfg.hnsw_ef_search)
    rec = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, bf)])
    row(f"recall@10 vs brute force {n}, fact vectors as queries", f"{rec:.4f}", "500 queries, masked")
    # graph
    corpus = Corpus(kb, idx.vectors, "synthetic", np.zeros(n, dtype=np.int64), allowed, idx, cfg, None)
    table, tn = timed(corpus.neighbours, cfg.graph_k)
    row(f"neighbour table {n} (k={cfg.graph_k}, one batched query)", f"{tn:.1f} s", "persisted next to the index")
    g, tg = timed(corpus.graph, cfg)
    row(
        f"similarity graph {n} from the table",
        f"{tg * 1000:.0f} ms",
        f"{g.n_edges} edges, mean degree {g.degree().mean():.1f}",
    )
    anchors = np.flatnonzero(allowed)[rng.choice(allowed.sum(), cfg.anchor_budget, replace=False)]
    walks = []
    for _ in range(20):
        _, t = timed(g.hop_distances, anchors, cfg.max_hops)
        walks.append(t * 1000)
    row(f"hop_distances {len(anchors)} anchors, {cfg.max_hops} hops, {n}", f"{statistics.median(walks):.2f} ms", "")
    walks = []
    for _ in range(20):
        hp, t = timed(g.hop_paths, anchors, cfg.max_hops)
        walks.append(t * 1000)
    row(
        f"hop_paths (strongest paths) {len(anchors)} anchors, {n}",
        f"{statistics.median(walks):.2f} ms",
        f"{int((hp.dist > 0).sum())} (anchor, fact) pairs reached",
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--model-texts", type=int, default=10000)
    ap.add_argument("--skip-model", action="store_true")
    ap.add_argument("--backends-only", action="store_true", help="only the MiniLM backends table")
    ap.add_argument(
        "--backends",
        default=",".join(emb_mod.BACKENDS),
        help=f"MiniLM backends to time (default {','.join(emb_mod.BACKENDS)})",
    )
    ap.add_argument("--batches", default="16,32,64", help="batch sizes of the backends table (default 16,32,64)")
    ap.add_argument(
        "--schedules",
        default="batches",
        help="ONNX thread schedules to compare, passes alternated (batches, intra; default batches)",
    )
    ap.add_argument("--cache-dir", default=None, help="keep the embedding cache here (a second run is warm)")
    args = ap.parse_args(argv)
    global CACHE_DIR
    CACHE_DIR = args.cache_dir
    cfg = CRPConfig()
    tmp = tempfile.mkdtemp(prefix="crp-bench-")
    try:
        if not args.skip_model:
            bench_backends(
                tuple(b.strip() for b in args.backends.split(",") if b.strip()),
                tuple(int(b) for b in args.batches.split(",") if b.strip()),
                schedules=tuple(x.strip() for x in args.schedules.split(",") if x.strip()),
            )
        if args.backends_only:
            args.sizes = ""
        elif not args.skip_model:
            bench_model(args.model_texts, tmp)
        for n in (int(s) for s in args.sizes.split(",") if s.strip()):
            bench_index(n, cfg, tmp, threads_compare=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(
        f"\nmachine: {os.cpu_count()} CPUs, load average at the end {load} (other jobs share the CPUs), "
        f"hnswlib cosine, numpy {np.__version__}\n"
    )
    print("| measure | value | note |\n|---|---|---|")
    for r in ROWS:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

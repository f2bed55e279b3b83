"""Benchmark: whole-CKF conflict scan (``crp_core.analysis.scan.scan_ckf``).

    .venv/bin/python bench/conflict_scan.py                      # sample CKF + synthetic 10k + 100k
    .venv/bin/python bench/conflict_scan.py --sizes 10000        # synthetic sizes only
    .venv/bin/python bench/conflict_scan.py --no-sample

Prints one markdown table: load, corpus preparation (HNSW build), and the scan split into its
phases (neighbours from the index, text check, arbitration), cold (the neighbour table is computed)
and warm (the table is reused from the corpus cache, as it is once the similarity graph exists).
Synthetic CKFs come from
``bench/make_synthetic_ckf.py`` (generated under ``bench/data/`` when missing); their
``metadata.variant_of`` marks planted conflicting variants, so the table also shows how many of the
planted pairs above the threshold the scan found. The sample CKF (no embeddings) is embedded with
MiniLM through a temporary cache. Caches go to a fresh temporary directory, removed at the end.
Target: scan <= 60 s at 100k facts on the 2-core reference machine.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from crp_core.analysis.scan import scan_ckf  # noqa: E402
from crp_core.config import CRPConfig  # noqa: E402
from crp_core.corpus.prepared import prepare_corpus  # noqa: E402
from crp_core.io.ckf import load_ckf  # noqa: E402

SAMPLE = os.path.join(ROOT, "sample_ckf", "knowledge_base.jsonl")
SYNTH_NOW = datetime(2026, 11, 1, tzinfo=UTC)  # make_synthetic_ckf.NOW
SAMPLE_NOW = datetime(2026, 11, 30, tzinfo=UTC)


def synthetic_path(n: int) -> str:
    name = f"synth{n // 1000}k" if n % 1000 == 0 else f"synth{n}"
    path = os.path.join(HERE, "data", name)
    if not os.path.exists(os.path.join(path, "facts.jsonl")):
        print(f"  generating {path} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_synthetic_ckf.py"), "--facts", str(n),
                        "--out", path], check=True)
    return path


def planted_recall(corpus, scan, threshold: float) -> str:
    """Planted variant pairs (metadata.variant_of) with cosine > threshold that the scan reported."""
    kb = corpus.kb
    found = {(p.fact_a, p.fact_b) for p in scan.pairs}
    planted = 0
    hit = 0
    v = corpus.vectors
    for i, f in enumerate(kb.facts):
        parent = (f.metadata or {}).get("variant_of") if isinstance(f.metadata, dict) else None
        if not parent or kb.get(parent) is None:
            continue
        j = kb.index_of(parent)
        if not (corpus.retrievable[i] and corpus.retrievable[j]) or float(v[i] @ v[j]) <= threshold:
            continue
        if kb.facts[i].content == kb.facts[j].content:
            continue
        planted += 1
        hit += tuple(sorted((f.fact_id, parent))) in found
    return f"{hit}/{planted}" if planted else "-"


def exact_recall(corpus, scan, threshold: float, limit: int = 20_000) -> str:
    """Share of the exact (blocked brute-force) pairs above the threshold that the HNSW neighbour
    search proposed; only for CKFs up to ``limit`` retrievable facts (the check itself is n^2)."""
    rows = np.flatnonzero(corpus.retrievable)
    if rows.size > limit:
        return "n/a"
    v = np.asarray(corpus.vectors, dtype=np.float32)[rows]
    total = 0
    for s in range(0, rows.size, 2048):
        sims = v[s:s + 2048] @ v.T
        i, j = np.nonzero(sims > threshold)
        total += int(np.count_nonzero(j > i + s))
    return f"{scan.n_candidates / total:.3f} ({scan.n_candidates}/{total})" if total else "-"


def bench_one(label: str, path: str, now: datetime, cache: str, config: CRPConfig) -> list[str]:
    print(f"  {label}: loading {path}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    kb = load_ckf(path, max_bytes=config.ckf_max_bytes)
    t1 = time.perf_counter()
    corpus = prepare_corpus(kb, cache_dir=cache, config=config)
    t2 = time.perf_counter()
    c2 = time.process_time()
    scan = scan_ckf(corpus, config, now)  # cold: the neighbour table is computed (then cached)
    t3 = time.perf_counter()
    c3 = time.process_time()
    warm = scan_ckf(corpus, config, now)  # warm: the table is reused, as after the graph was built
    t4 = time.perf_counter()
    tm, wm = scan.timings_ms, warm.timings_ms
    row = [label, f"{len(kb):,}", f"{scan.n_facts:,}", f"{t1 - t0:.1f}", f"{t2 - t1:.1f}",
           f"{tm['neighbours'] / 1e3:.2f}", f"{tm['text_check'] / 1e3:.2f}", f"{tm['arbitration'] / 1e3:.2f}",
           f"**{t3 - t2:.2f}**", f"{c3 - c2:.1f}", f"{wm['neighbours'] / 1e3:.2f}", f"{wm['text_check'] / 1e3:.2f}",
           f"**{t4 - t3:.2f}**", f"{scan.k}", f"{scan.n_candidates:,}", f"{len(scan.pairs):,}", f"{scan.tied:,}",
           exact_recall(corpus, scan, config.contradiction_similarity),
           planted_recall(corpus, scan, config.contradiction_similarity)]
    print("  " + " | ".join(row), file=sys.stderr, flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--no-sample", action="store_true", help="skip the sample CKF (it needs the MiniLM model)")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    config = CRPConfig()
    load0 = os.getloadavg()[0]
    cache = tempfile.mkdtemp(prefix="crp-bench-conflicts-")
    rows = []
    try:
        if not args.no_sample and os.path.exists(SAMPLE):
            rows.append(bench_one("sample_ckf", SAMPLE, SAMPLE_NOW, cache, config))
        for n in args.sizes:
            rows.append(bench_one(f"synthetic {n // 1000}k" if n >= 1000 else f"synthetic {n}",
                                  synthetic_path(n), SYNTH_NOW, cache, config))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    head = ["CKF", "facts", "retrievable", "load s", "prepare s (embed+HNSW)", "cold: neighbours s",
            "cold: text check s", "cold: arbitration s", "cold scan s", "cold scan CPU s (all threads)",
            "warm: neighbours s", "warm: text check s", "warm scan s", "k", "candidate pairs", "conflicts", "tied",
            "HNSW pair recall vs exact",
            "planted found"]
    print(f"\nWhole-CKF conflict scan (contradiction_similarity {config.contradiction_similarity}, "
          f"graph_k {config.graph_k}, ef_search {config.hnsw_ef_search}; {os.cpu_count()} CPU, load average "
          f"{os.getloadavg()[0]:.1f} at the end, started at {load0:.1f})\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

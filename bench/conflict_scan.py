"""Benchmark: whole-CKF conflict scan (``crp_core.analysis.scan.scan_ckf``, SPEC-027 §2).

    .venv/bin/python bench/conflict_scan.py                      # sample CKF + synthetic 10k + 100k
    .venv/bin/python bench/conflict_scan.py --sizes 10000        # synthetic sizes only
    .venv/bin/python bench/conflict_scan.py --no-sample --cache-dir /tmp/crp-bench   # index built once
    .venv/bin/python bench/conflict_scan.py --exact-max 100000   # brute-force reference at 100k too

Prints one markdown table: corpus preparation (embedding + HNSW build, which the scan itself does
not use), the scan split into its phases (the exact pair search, text check, arbitration), how the
pairs were searched (over every fact, once per vectors and threshold) and how many dot products that
took against the N(N-1)/2 of the whole Gram triangle, and recall:

* exact recall: the scan's candidate pairs against an independent brute-force reference (float32
  Gram bands, every pair above the threshold), for CKFs up to ``--exact-max`` retrievable facts;
* planted recall: synthetic CKFs come from ``bench/make_synthetic_ckf.py`` (generated under
  ``bench/data/`` when missing), whose ``metadata.variant_of`` marks planted conflicting variants.
  Of the planted pairs above the threshold: how many are candidates, how many the scan reports, and
  how many it reports of those whose texts ``values_conflict`` flags (variants of "bridge" facts
  rewrite the whole sentence, so their texts show no value change to detect).

The scan runs twice; the second run must give the same pairs (determinism) and reuses the cached
pair search, as a re-scan after an operator decision does. The load average is printed per row and
for the whole run (a shared machine's figures move with its load).
The sample CKF (no embeddings) is embedded with MiniLM through the cache. Caches go to a fresh
temporary directory removed at the end, unless ``--cache-dir`` names a persistent one.
Target: scan <= 60 s at 100k facts, candidate recall >= 99.5 %.
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

from crp_core.analysis.scan import ConflictScan, scan_ckf, search_pairs  # noqa: E402
from crp_core.config import CRPConfig  # noqa: E402
from crp_core.corpus.prepared import Corpus, prepare_corpus  # noqa: E402
from crp_core.io.ckf import load_ckf  # noqa: E402
from crp_core.stages.contradictions.values import values_conflict  # noqa: E402

SAMPLE = os.path.join(ROOT, "sample_ckf", "knowledge_base.jsonl")
SYNTH_NOW = datetime(2026, 11, 1, tzinfo=UTC)  # make_synthetic_ckf.NOW
SAMPLE_NOW = datetime(2026, 11, 30, tzinfo=UTC)
#: rows per band of the brute-force reference
REFERENCE_BAND = 2048
#: candidates are taken this far below the threshold, then re-checked with one dot per pair
REFERENCE_SLACK = 1e-4


def synthetic_path(n: int) -> str:
    name = f"synth{n // 1000}k" if n % 1000 == 0 else f"synth{n}"
    path = os.path.join(HERE, "data", name)
    if not os.path.exists(os.path.join(path, "facts.jsonl")):
        print(f"  generating {path} ...", file=sys.stderr, flush=True)
        subprocess.run(
            [sys.executable, os.path.join(HERE, "make_synthetic_ckf.py"), "--facts", str(n), "--out", path], check=True
        )
    return path


def pair_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for a, b in pairs.tolist()}


def reference_pairs(corpus: Corpus, threshold: float) -> set[tuple[int, int]]:
    """Every retrievable pair (row_i < row_j) above the threshold: the whole Gram matrix in bands,
    written independently of the scan's search (same float32 arithmetic for the final check)."""
    rows = np.flatnonzero(corpus.retrievable)
    v = np.ascontiguousarray(corpus.vectors[rows], dtype=np.float32)
    found = []
    for s in range(0, rows.size, REFERENCE_BAND):
        i, j = np.nonzero(v[s : s + REFERENCE_BAND] @ v.T > threshold - REFERENCE_SLACK)
        i = i + s
        keep = j > i
        found.append(np.stack([i[keep], j[keep]], axis=1))
    cand = np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)
    cand = cand[np.einsum("ij,ij->i", v[cand[:, 0]], v[cand[:, 1]]) > threshold]
    return pair_set(rows[cand])


def planted_pairs(corpus: Corpus, threshold: float) -> list[tuple[int, int]]:
    """Planted variant pairs (metadata.variant_of) of two retrievable facts with different texts and
    cosine above the threshold, as (row_i < row_j). A pair whose parent the generator later rewrote as
    a *bridge* text (metadata.bridges: a whole new sentence) is no planted value conflict any more and
    is left out (its texts share no statement whose value changed)."""
    kb = corpus.kb
    v = corpus.vectors
    out = []
    for i, f in enumerate(kb.facts):
        parent = (f.metadata or {}).get("variant_of") if isinstance(f.metadata, dict) else None
        if not parent or kb.get(parent) is None:
            continue
        j = kb.index_of(parent)
        if not (corpus.retrievable[i] and corpus.retrievable[j]) or float(v[i] @ v[j]) <= threshold:
            continue
        if kb.facts[i].content == kb.facts[j].content:
            continue
        if any(isinstance(kb.facts[r].metadata, dict) and kb.facts[r].metadata.get("bridges") for r in (i, j)):
            continue
        out.append((min(i, j), max(i, j)))
    return sorted(set(out))


def ratio(hit: int, total: int) -> str:
    return f"{hit / total:.4f} ({hit:,}/{total:,})" if total else "-"


def recall_cells(
    corpus: Corpus, scan: ConflictScan, candidates: set[tuple[int, int]], threshold: float, exact_max: int
) -> list[str]:
    if scan.n_facts <= exact_max:
        t = time.perf_counter()
        ref = reference_pairs(corpus, threshold)
        print(f"    brute-force reference: {len(ref):,} pairs in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        exact = ratio(len(ref & candidates), len(ref))
        if candidates - ref:
            exact += f", {len(candidates - ref)} not in the reference"
    else:
        exact = "n/a"
    planted = planted_pairs(corpus, threshold)
    if not planted:
        return [exact, "-", "-", "-"]
    kb = corpus.kb
    reported = {(kb.index_of(p.fact_a), kb.index_of(p.fact_b)) for p in scan.pairs}
    reported = {(min(a, b), max(a, b)) for a, b in reported}
    flagged = [p for p in planted if values_conflict(kb.facts[p[0]].content, kb.facts[p[1]].content) is not None]
    return [
        exact,
        ratio(sum(p in candidates for p in planted), len(planted)),
        ratio(sum(p in reported for p in planted), len(planted)),
        ratio(sum(p in reported for p in flagged), len(flagged)),
    ]


def bench_one(label: str, path: str, now: datetime, cache: str, config: CRPConfig, exact_max: int) -> list[str]:
    print(f"  {label}: loading {path}", file=sys.stderr, flush=True)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    kb = load_ckf(path, max_bytes=config.ckf_max_bytes)
    t1 = time.perf_counter()
    corpus = prepare_corpus(kb, cache_dir=cache, config=config)
    t2 = time.perf_counter()
    c2 = time.process_time()
    scan = scan_ckf(corpus, config, now)
    t3 = time.perf_counter()
    c3 = time.process_time()
    again = scan_ckf(corpus, config, now)
    t4 = time.perf_counter()
    same = [(p.fact_a, p.fact_b, p.patterns, p.kept) for p in scan.pairs] == [
        (p.fact_a, p.fact_b, p.patterns, p.kept) for p in again.pairs
    ]
    load1 = os.getloadavg()[0]
    candidates = pair_set(search_pairs(corpus, config).pairs)  # the pairs the scan text-checked
    n = scan.n_facts
    tm = scan.timings_ms
    row = [
        label,
        f"{len(kb):,}",
        f"{n:,}",
        f"{t1 - t0:.1f}",
        f"{t2 - t1:.1f}",
        f"**{t3 - t2:.2f}**",
        f"{tm['neighbours'] / 1e3:.2f}",
        f"{tm['text_check'] / 1e3:.2f}",
        f"{tm['arbitration'] / 1e3:.2f}",
        f"{c3 - c2:.1f}",
        f"{t4 - t3:.2f}{'' if same else ' (DIFFERENT)'}",
        scan.method,
        f"{scan.products / max(1, corpus.n * (corpus.n - 1) // 2):.4f}",
        f"{scan.k}",
        f"{scan.n_candidates:,}",
        f"{len(scan.pairs):,}",
        f"{scan.tied:,}",
    ]
    row += recall_cells(corpus, scan, candidates, config.contradiction_similarity, exact_max)
    row.append(f"{load0:.1f} / {load1:.1f}")
    print("  " + " | ".join(row), file=sys.stderr, flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--no-sample", action="store_true", help="skip the sample CKF (it needs the MiniLM model)")
    ap.add_argument(
        "--cache-dir",
        help="persistent cache directory (embeddings, HNSW index), kept after the run "
        "so the 100k index is built once; default: a fresh temporary directory",
    )
    ap.add_argument(
        "--exact-max",
        type=int,
        default=20_000,
        metavar="N",
        help="brute-force reference for CKFs up to N retrievable facts (default 20000; 100k: ~90 s)",
    )
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    config = CRPConfig()
    load0 = os.getloadavg()[0]
    cache = args.cache_dir or tempfile.mkdtemp(prefix="crp-bench-conflicts-")
    rows = []
    try:
        if not args.no_sample and os.path.exists(SAMPLE):
            rows.append(bench_one("sample_ckf", SAMPLE, SAMPLE_NOW, cache, config, args.exact_max))
        for n in args.sizes:
            rows.append(
                bench_one(
                    f"synthetic {n // 1000}k" if n >= 1000 else f"synthetic {n}",
                    synthetic_path(n),
                    SYNTH_NOW,
                    cache,
                    config,
                    args.exact_max,
                )
            )
    finally:
        if not args.cache_dir:
            shutil.rmtree(cache, ignore_errors=True)
    head = [
        "CKF",
        "facts",
        "retrievable",
        "load s",
        "prepare s (embed+HNSW)",
        "scan s",
        "pair search s",
        "text check s",
        "arbitration s",
        "scan CPU s",
        "repeat scan s",
        "search",
        "products / N(N-1)/2 (N: all facts)",
        "k",
        "candidate pairs",
        "conflicts",
        "tied",
        "exact recall",
        "planted: candidates",
        "planted: reported",
        "planted with a value change: reported",
        "load (1 min) before / after",
    ]
    print(
        f"\nWhole-CKF conflict scan (contradiction_similarity {config.contradiction_similarity}; "
        f"{os.cpu_count()} CPU, load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)\n"
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

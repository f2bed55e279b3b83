"""Benchmark: the whole-CKF scan's text check (``crp_core.analysis.scan_check``) on its own.

    .venv/bin/python bench/text_check.py --ckf bench/data/synth100k
    .venv/bin/python bench/text_check.py --ckf bench/data/synth1m --max-bytes 2000000000 --workers 2

Loads a CKF folder as ``crp-inspect conflicts`` does (vectors memory-mapped, no index), runs the exact
pair search, then checks the candidate pairs' texts in a pool of ``--workers`` processes as the scan
does and prints one markdown table: candidate pairs, distinct text pairs, distinct texts, chunks, the
detector's per-text analyses the chunking implies (a worker forgets its memos between chunks, so each
chunk analyses each of its texts once: the sum of the chunks' distinct texts) and that sum per distinct
text (1.0: each text analysed once), the workers' CPU seconds, the wall time and the conflicting pairs.
The load average is printed beside them (a shared machine's CPU seconds move with its load).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from crp_core.analysis.scan import search_pairs  # noqa: E402
from crp_core.analysis.scan_check import (  # noqa: E402
    CHECK_CHUNK_PAIRS,
    check_pool,
    chunk_order,
    conflicting_pairs,
    text_pairs,
)
from crp_core.analysis.scan_input import scan_corpus  # noqa: E402
from crp_core.config import CRPConfig  # noqa: E402
from crp_core.io.ckf import load_ckf  # noqa: E402


def analyses(distinct: np.ndarray, chunks: list[np.ndarray]) -> int:
    """The per-text analyses of a check in these chunks by workers that forget their memos between chunks."""
    return sum(int(np.unique(distinct[c].reshape(-1)).size) for c in chunks)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckf", required=True, help="a CKF folder with embeddings (bench/make_synthetic_ckf.py)")
    ap.add_argument("--max-bytes", type=int, default=2_000_000_000, help="the CKF size limit (ckf_max_bytes)")
    ap.add_argument("--workers", type=int, default=2, help="text-check processes (1: this process)")
    args = ap.parse_args(argv)
    config = CRPConfig()
    load0 = os.getloadavg()[0]
    with check_pool(args.workers) as pool:  # forked before the CKF is loaded, as the command does
        kb = load_ckf(args.ckf, max_bytes=args.max_bytes, map_vectors=True)
        corpus = scan_corpus(kb, config=config)
        pairs = search_pairs(corpus, config).pairs
        tp = text_pairs(pairs, kb.facts)
        chunks = chunk_order(tp.distinct, CHECK_CHUNK_PAIRS)
        texts = int(np.unique(tp.distinct.reshape(-1)).size)
        made = analyses(tp.distinct, chunks)
        worker_cpu: list[float] = []
        w0, c0 = time.perf_counter(), time.process_time()
        found = conflicting_pairs(
            pairs, kb.facts, learned=config.detector_learned, pool=pool, worker_cpu=worker_cpu.append
        )
        wall, here = time.perf_counter() - w0, time.process_time() - c0
    cpu = sum(worker_cpu) + here
    print(
        "| candidate pairs | distinct text pairs | distinct texts | chunks | analyses | per text | CPU s | wall s "
        "| conflicting pairs | load (1 min) |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    print(
        f"| {pairs.shape[0]:,} | {tp.distinct.shape[0]:,} | {texts:,} | {len(chunks)} | {made:,} "
        f"| {made / max(1, texts):.4f} | {cpu:.1f} | {wall:.1f} | {len(found):,} "
        f"| {load0:.1f}-{os.getloadavg()[0]:.1f} |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

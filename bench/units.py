"""Benchmark: the cost of the pair search's work units, the figures a cluster plan is sized from.

    .venv/bin/python bench/units.py --ckf bench/data/synth1m [--units 32]

The Ray engine runs the whole-CKF pair search as units of consecutive centroid blocks
(``crp_core.engines.blocking``: every unit a pure function of the shared plan and its block range). This
script measures, in this process and on one BLAS thread (what one Ray task on one CPU does):

* the plan: k-means centroids, home blocks, shells and guest cutoffs (the driver's part), CPU and the bytes a
  node receives (the unit vectors plus the blocks);
* each unit, cut as the Ray engine cuts them (``BlockPlan.units``): blocks, home facts, dot products, raw
  candidates, CPU seconds, and so the products per CPU-second;
* the merge (deduplicate and filter by the per-pair dot product: the driver's part again).

Prints one table per unit and the totals; docs/scaling.md sizes the 10M and 100M plan from them.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

from crp_core.analysis.scan_input import scan_corpus  # noqa: E402
from crp_core.config import CRPConfig  # noqa: E402
from crp_core.engines.blocking import merge_pairs, plan_blocks, unit_pairs  # noqa: E402
from crp_core.io.ckf import load_ckf  # noqa: E402
from crp_core.support.blas import one_blas_thread  # noqa: E402


def _cpu() -> float:
    return time.process_time()


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--ckf", required=True, help="a CKF with embeddings (bench/make_synthetic_ckf.py)")
    ap.add_argument("--units", type=int, default=32, help="units to cut the blocks into (Ray: 4 per worker)")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    config = CRPConfig(ckf_max_bytes=4_000_000_000)
    corpus = scan_corpus(load_ckf(args.ckf, max_bytes=config.ckf_max_bytes, map_vectors=True), config=config)
    v = np.ascontiguousarray(corpus.vectors[corpus.retrievable], dtype=np.float32)
    threshold = config.contradiction_similarity
    with one_blas_thread():
        c0, w0 = _cpu(), time.perf_counter()
        plan = plan_blocks(v, threshold)
        plan_cpu, plan_wall = _cpu() - c0, time.perf_counter() - w0
        b = plan.blocks
        blocks_bytes = sum(a.nbytes for a in (b.centroids, b.home, b.shell_block, b.cutoffs, *b.shell_rows))
        print(f"{v.shape[0]:,} rows x {v.shape[1]}, {plan.n_blocks:,} blocks; load average {load0:.1f}")
        print(
            f"plan: {plan_cpu:.1f} CPU-s ({plan_wall:.1f} s wall); a node receives {v.nbytes / 1e9:.2f} GB of vectors"
        )
        print(f"  and {blocks_bytes / 1e6:.1f} MB of block arrays")
        print("| unit | blocks | home facts | dot products | raw candidates | CPU s | products per CPU-s |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        results, total_cpu, total_products = [], 0.0, 0
        sizes = np.bincount(plan.blocks.home, minlength=plan.n_blocks)
        for k, (g0, g1) in enumerate(plan.units(args.units)):
            c0 = _cpu()
            raw, products = unit_pairs(plan, g0, g1)
            cpu = _cpu() - c0
            results.append((raw, products))
            total_cpu += cpu
            total_products += products
            rate = products / cpu if cpu > 0 else 0.0
            home = int(sizes[g0:g1].sum())
            print(f"| {k} | {g1 - g0} | {home:,} | {products:,} | {raw.shape[0]:,} | {cpu:.2f} | {rate / 1e6:,.0f} M |")
        c0 = _cpu()
        merged = merge_pairs(v, threshold, results)
        merge_cpu = _cpu() - c0
    print(
        f"units: {total_cpu:.1f} CPU-s for {total_products:,} products ({total_products / total_cpu / 1e6:,.0f} M per "
        f"CPU-s); merge {merge_cpu:.1f} CPU-s to {merged.pairs.shape[0]:,} pairs; peak resident "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB; load average {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

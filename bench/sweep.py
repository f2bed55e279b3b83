"""Wall time of a what-if sweep: the round grid of about 20 values of one key (``grid_axis``, as the CLI and the
dashboard make it) on the 10k synthetic CKF, corpus prepared and scenario embedded before timing (target: under
10 s for 20 points; another range gives the grid's own count).

    python bench/sweep.py                                   # bench/data/synth10k, ttl_days.official_documentation
    python bench/sweep.py --key cdr_min_relevance --start 0.3 --stop 0.8
    python bench/sweep.py --data bench/data/synth100k --values 20

Data: ``bench/make_synthetic_ckf.py --facts 10000 --out bench/data/synth10k`` (facts + embeddings + scenarios);
no model is loaded. Prints the per-point table (ms), the totals and the load average.
"""

from __future__ import annotations

import argparse
import gc
import glob
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from crp_core.analysis.sweep import sweep
from crp_core.analysis.sweep_grid import AxisSpec, grid_axis
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import embed_scenario, prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_core.io.scenario import load_scenario

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(HERE, "data", "synth10k"))
    ap.add_argument("--key", default="ttl_days.official_documentation")
    ap.add_argument("--start", type=float, default=50.0)
    ap.add_argument("--stop", type=float, default=1000.0)
    ap.add_argument("--values", type=int, default=20, help="about how many (the round grid's count closest to it)")
    ap.add_argument("--scenario", default="scenario.json")
    ap.add_argument("--repeat", type=int, default=2, help="sweeps to run (the table shows the last; min total)")
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print(f"{args.data} missing: python bench/make_synthetic_ckf.py --facts 10000 --out {args.data}")
        return 2
    config = CRPConfig()
    t = time.perf_counter()
    kb = load_ckf(args.data, max_bytes=config.ckf_max_bytes)
    corpus = prepare_corpus(kb, config=config)
    corpus.graph(config)
    prep_s = time.perf_counter() - t
    scen = load_scenario(os.path.join(args.data, args.scenario))
    vectors = embed_scenario(scen, corpus)
    gc.collect()
    gc.freeze()
    values = grid_axis(AxisSpec(args.key, args.start, args.stop, args.values), None).values
    totals = []
    res = None
    for _ in range(max(1, args.repeat)):
        t = time.perf_counter()
        res = sweep(corpus, scen, config, args.key, values, vectors=vectors, keep_results=False)
        totals.append(time.perf_counter() - t)
    assert res is not None
    print(
        f"CKF {args.data}: {len(kb)} facts; prepare + graph {prep_s:.1f} s (untimed below); "
        f"scenario {os.path.basename(glob.glob(os.path.join(args.data, args.scenario))[0])}"
    )
    print(f"sweep of {args.key}: {len(values)} values from {values[0]} to {values[-1]} (+1 baseline run)\n")
    print(
        f"{'value':>10} {'ms':>8} {'envelope':>8} {'jaccard':>7} {'resolved':>8} {'tied':>4} "
        f"{'rec.pen':>7} {'mean_rec':>8} {'in':>3} {'out':>3}"
    )
    print(f"{'baseline':>10} {res.baseline.elapsed_ms:8.1f} {len(res.baseline.envelope):8d}")
    for p in res.points:
        print(
            f"{p.value!s:>10} {p.elapsed_ms:8.1f} {len(p.envelope):8d} {p.jaccard:7.3f} "
            f"{p.conflicts_resolved:8d} {p.conflicts_unresolved:4d} {p.recency_penalised:7d} "
            f"{p.mean_recency:8.3f} {len(p.entering):3d} {len(p.leaving):3d}"
        )
    per = [p.elapsed_ms for p in res.points]
    print(
        "\ntotal (20 points + baseline, per sweep): "
        + ", ".join(f"{x:.2f} s" for x in totals)
        + f"; min {min(totals):.2f} s"
    )
    print(f"per point: median {np.median(per):.1f} ms, max {max(per):.1f} ms")
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

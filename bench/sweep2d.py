"""Wall time of a 2-D suite sweep: a 20 x 20 grid (about 20 round values per key, plus each key's current
value) over the 12-scenario sample suite, every point a whole-suite run (target: <= 60 s).

    python bench/sweep2d.py                                      # ttl_days.official_documentation x cdr_min_relevance
    python bench/sweep2d.py --param now=2026-01-01:2027-12-31:20 --param cdr_min_relevance=0.36:0.74:20
    python bench/sweep2d.py --profile 25                         # cProfile: the 25 costliest functions

The sample CKF is prepared and the scenarios embedded (embedding cache) before timing, with one
untimed warm-up suite run (tokenizer load, reference envelopes); the grid runs through
:func:`crp_core.analysis.sweep_grid.sweep_grid` as ``crp-inspect sweep`` does. Prints the grid's size,
the total, the time per point and per scenario run, and the load average.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.suite import load_suite
from crp_core.analysis.sweep_grid import grid_axis, parse_axis, suite_current, sweep_grid
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_PARAMS = ("ttl_days.official_documentation=10:400:20", "cdr_min_relevance=0.36:0.74:20")


def _load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.2f} {b:.2f} {c:.2f} on {os.cpu_count()} CPUs"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--param", action="append", default=None, metavar="KEY=LO:HI:N", help="twice (default: %s)")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="profile the grid, print the N costliest")
    args = ap.parse_args()
    params = tuple(args.param or DEFAULT_PARAMS)
    t = time.perf_counter()
    kb = load_ckf(os.path.join(ROOT, "sample_ckf", "knowledge_base.jsonl"))
    corpus = prepare_corpus(kb)
    prepared = prepare_suite(corpus, load_suite(os.path.join(ROOT, "sample_ckf", "scenarios")))
    config = CRPConfig()
    run_suite(prepared, config, keep_results=False)  # one-off costs, untimed
    prep = time.perf_counter() - t
    axes = []
    for text in params:
        spec = parse_axis(text)
        axes.append(grid_axis(spec, suite_current(prepared.suite, config, spec.key, prepared.nows)))
    print(
        f"sample CKF: {len(kb)} facts, suite of {len(prepared.suite)} scenarios; prepare + embed + warm-up "
        f"{prep:.1f} s (untimed); {_load()}"
    )
    for a in axes:
        print(f"  {a.key}: {len(a.values)} values, {a.values[0]} .. {a.values[-1]}, current {a.current}")
    gc.collect()
    prof = cProfile.Profile() if args.profile else None
    t = time.perf_counter()
    if prof is not None:
        prof.enable()
    grid = sweep_grid(prepared, config, axes)
    if prof is not None:
        prof.disable()
    total = time.perf_counter() - t
    points = len(grid.points)
    runs = grid.runs * len(prepared.suite)
    print(
        f"\n{' x '.join(str(len(a.values)) for a in axes)} = {points} points + baseline, {runs} scenario runs: "
        f"total {total:.1f} s (target <= 60 s); {1e3 * total / (points + 1):.1f} ms per point, "
        f"{1e3 * total / runs:.2f} ms per scenario run; {_load()}"
    )
    if prof is not None:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(args.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Wall time of suite evaluation (docs/decisions/suites.md): 20 Optuna trials over the 12-scenario
sample suite (target: under 20 s once the embeddings are cached) and a suite sweep of 20 round values
(``grid_axis``) on the 10k synthetic CKF with 10 scenarios (target: under 30 s). Corpora are prepared,
scenarios embedded and the one-off process costs (tokenizer load) paid before timing; the tables show
where the time goes.

    python bench/tune.py                               # both parts
    python bench/tune.py --skip-synthetic              # the sample only
    python bench/tune.py --trials 40 --objective integrity

Synthetic data: ``bench/make_synthetic_ckf.py --facts 10000 --scenarios 10 --out bench/data/synth10k-s10``
(run here when missing; no model). Prints the load average.
"""

from __future__ import annotations

import argparse
import gc
import glob
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from crp_core.analysis.evaluate import prepare_suite, run_suite, sweep_suite
from crp_core.analysis.suite import load_suite
from crp_core.analysis.sweep_grid import AxisSpec, grid_axis
from crp_core.analysis.tune import tune
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.2f} {b:.2f} {c:.2f} on {os.cpu_count()} CPUs"


def bench_tune(trials: int, objective: str, seed: int) -> float:
    t = time.perf_counter()
    kb = load_ckf(os.path.join(ROOT, "sample_ckf", "knowledge_base.jsonl"))
    corpus = prepare_corpus(kb)
    prepared = prepare_suite(corpus, load_suite(os.path.join(ROOT, "sample_ckf", "scenarios")))
    run_suite(prepared, CRPConfig(), keep_results=False)  # tokenizer load, reference envelopes: one-off
    prep = time.perf_counter() - t
    print(
        f"sample CKF: {len(kb)} facts, suite of {len(prepared.suite)} scenarios; prepare + embed + warm-up "
        f"{prep:.1f} s (untimed below); {_load()}"
    )
    gc.collect()
    t = time.perf_counter()
    res = tune(corpus, prepared, CRPConfig(), objective, trials=trials, seed=seed)
    total = time.perf_counter() - t
    print(f"\n{trials} TPE trials ({objective}, seed {seed}), {len(res.space)} searched keys\n")
    print(
        f"{'trial':>5} {'ms':>7} {'value':>9} {'feasible':>8} {'recall':>6} {'leaks':>5} {'wrong':>5} "
        f"{'expired':>7} {'tokens':>7}"
    )
    for tr in res.trials:
        m = tr.metrics
        print(
            f"{tr.number:>5} {tr.elapsed_ms:7.0f} {tr.value:9.4f} {'yes' if tr.feasible else 'no':>8} "
            f"{m.get('recall.mean') or 0:6.3f} {m.get('leaks.total'):5.0f} {m.get('wrong_winners.total'):5.0f} "
            f"{m.get('expired.total'):7.0f} {m.get('tokens.mean'):7.1f}"
        )
    per = [tr.elapsed_ms for tr in res.trials]
    print(f"\nbest: trial {res.best.number}, value {res.best.value:.4f} (start {res.baseline.value:.4f})")
    print(
        f"total {total:.2f} s for {trials} trials (target <= 20 s); per trial median {np.median(per):.0f} ms, "
        f"max {max(per):.0f} ms; {_load()}"
    )
    return total


def bench_sweep(data: str, values: int, key: str, start: float, stop: float) -> float:
    if not os.path.isdir(data):
        print(f"\nwriting {data} (bench/make_synthetic_ckf.py --facts 10000 --scenarios 10) ...")
        subprocess.run(
            [
                sys.executable,
                os.path.join(HERE, "make_synthetic_ckf.py"),
                "--facts",
                "10000",
                "--scenarios",
                "10",
                "--out",
                data,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    config = CRPConfig()
    t = time.perf_counter()
    kb = load_ckf(data, max_bytes=config.ckf_max_bytes)
    corpus = prepare_corpus(kb, config=config)
    corpus.graph(config)
    files = sorted(glob.glob(os.path.join(data, "scenario*.json")))
    prepared = prepare_suite(corpus, load_suite(files))
    run_suite(prepared, config, keep_results=False)
    prep = time.perf_counter() - t
    print(
        f"\nsynthetic CKF {data}: {len(kb)} facts, {len(prepared.suite)} scenarios; prepare + graph + warm-up "
        f"{prep:.1f} s (untimed below); {_load()}"
    )
    vals = grid_axis(AxisSpec(key, start, stop, values), None).values
    gc.collect()
    done: list[float] = []
    t = time.perf_counter()
    sw = sweep_suite(prepared, config, key, vals, progress=lambda d, n, label: done.append(time.perf_counter()))
    total = time.perf_counter() - t
    n = len(prepared.suite)
    print(
        f"\nsuite sweep of {key}: {len(vals)} values from {vals[0]} to {vals[-1]} (+1 baseline), {n} scenarios each\n"
    )
    print(
        f"{'value':>10} {'ms':>8} {'expired':>7} {'ageing':>6} {'contra':>6} {'dups':>4} {'tokens':>7} "
        f"{'overlap':>7} {'worst ov':>8}"
    )
    for label, run in [("baseline", sw.baseline)] + [(str(p.value), p.run) for p in sw.points]:
        m = run.metrics
        print(
            f"{label:>10} {run.elapsed_ms:8.0f} {m.get('expired.total'):7.0f} {m.get('ageing.total'):6.0f} "
            f"{m.get('contradictions.total'):6.0f} {m.get('duplicates.total'):4.0f} {m.get('tokens.mean'):7.1f} "
            f"{m.get('overlap.mean'):7.3f} {m.get('overlap.worst'):8.3f}"
        )
    runs = n * (len(vals) + 1)
    print(
        f"\ntotal {total:.2f} s for {runs} pipeline runs (target <= 30 s); {1e3 * total / runs:.1f} ms per run; "
        f"{_load()}"
    )
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--objective", default="recall")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=os.path.join(HERE, "data", "synth10k-s10"))
    ap.add_argument("--values", type=int, default=20)
    ap.add_argument("--key", default="ttl_days.official_documentation")
    ap.add_argument("--start", type=float, default=50.0)
    ap.add_argument("--stop", type=float, default=1000.0)
    ap.add_argument("--skip-synthetic", action="store_true")
    args = ap.parse_args()
    bench_tune(args.trials, args.objective, args.seed)
    if not args.skip_synthetic:
        bench_sweep(args.data, args.values, args.key, args.start, args.stop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

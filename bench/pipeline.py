"""Per-stage latency of the SPEC-027 §4 pipeline (SPEC-027 promises < 3 ms added; target <= 1 ms p50
for stages 2-6 together at ~500 candidates and a 20-fact envelope).

    python bench/pipeline.py                       # bench/data/synth10k and synth100k if present
    python bench/pipeline.py --runs 300 --candidate-k 150

Data: ``bench/make_synthetic_ckf.py`` directories (facts.jsonl + embeddings.npy + scenario*.json);
no model is loaded. Timings come from ``PipelineResult.timings_ms`` (``time.perf_counter`` around each
stage); the similarity graph and HNSW index are corpus preparation, built once before timing.
Prints plain tables (ms).
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

from crp_core.ckf import load_ckf  # noqa: E402
from crp_core.config import CRPConfig  # noqa: E402
from crp_core.corpus import embed_scenario, prepare_corpus  # noqa: E402
from crp_core.pipeline import STAGES, run_pipeline  # noqa: E402
from crp_core.scenario import load_scenario  # noqa: E402

LATE = ("cdr", "cdgr", "contradictions", "fanout", "packing")


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def load(path: str, config: CRPConfig):
    t = time.perf_counter()
    kb = load_ckf(path, max_bytes=config.ckf_max_bytes)
    t_load = time.perf_counter() - t
    t = time.perf_counter()
    corpus = prepare_corpus(kb, config=config)
    t_prep = time.perf_counter() - t
    t = time.perf_counter()
    corpus.graph(config)
    t_graph = time.perf_counter() - t
    scenarios = [load_scenario(p) for p in sorted(glob.glob(os.path.join(path, "scenario*.json")))]
    # the loaded CKF is long-lived: keep it out of the cyclic GC's generations, as a server would, so a
    # full collection over ~10^6 fact objects does not land inside a timed stage
    gc.collect()
    gc.freeze()
    return corpus, scenarios, (t_load, t_prep, t_graph)


def bench_stages(corpus, scenarios, config: CRPConfig, runs: int) -> tuple[dict[str, list[float]], dict[str, float]]:
    times: dict[str, list[float]] = {s: [] for s in STAGES}
    times["stages 2-6"] = []
    sizes = {"candidates": [], "gated_in": [], "connector_candidates": [], "envelope": []}
    prepared = [(s, embed_scenario(s, corpus)) for s in scenarios]
    for s, v in prepared:  # warm-up (lazy per-KB caches, imports)
        run_pipeline(corpus, s, config, vectors=v)
    for i in range(runs):
        s, v = prepared[i % len(prepared)]
        r = run_pipeline(corpus, s, config, vectors=v)
        for k in STAGES:
            times[k].append(r.timings_ms[k])
        times["stages 2-6"].append(sum(r.timings_ms[k] for k in LATE))
        sizes["candidates"].append(r.candidates.idx.size)
        sizes["gated_in"].append(int(r.candidates.passed_gate.sum()))
        sizes["connector_candidates"].append(r.cdgr.connectors.idx.size)
        sizes["envelope"].append(len(r.envelope.order))
    return times, {k: float(np.mean(v)) for k, v in sizes.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--candidate-k", type=int, default=150,
                    help="HNSW top-K per query (150 x (1 query + 3 sub-queries) ~ 500 candidates)")
    args = ap.parse_args()
    config = CRPConfig(candidate_k=args.candidate_k, envelope_fact_budget=20)
    base = CRPConfig()
    sets = [d for d in ("synth10k", "synth100k") if os.path.isdir(os.path.join(args.data, d))]
    if not sets:
        print(f"no synthetic CKF under {args.data}; run bench/make_synthetic_ckf.py first", file=sys.stderr)
        return 1
    print(f"pipeline bench: runs={args.runs}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"stage table: scenarios run without fan-out; fan-out timed separately. config, envelope_fact_budget=20, candidate_k={args.candidate_k} "
          f"(stages 2-6) / {base.candidate_k} (stage 1 table)\n")
    gather: dict[str, tuple[float, float, float, int]] = {}
    for name in sets:
        corpus, scenarios, (t_load, t_prep, t_graph) = load(os.path.join(args.data, name), config)
        print(f"{name}: {corpus.n} facts, {len(scenarios)} scenarios; load {t_load:.2f} s, "
              f"prepare {t_prep:.2f} s, graph {t_graph:.2f} s ({corpus.graph(config).n_edges} edges)")
        plain = [sc.replace(fanout_width=0) for sc in scenarios]
        times, sizes = bench_stages(corpus, plain, config, args.runs)
        print(f"  mean sizes: {sizes['candidates']:.0f} candidates, {sizes['gated_in']:.0f} gated in, "
              f"{sizes['connector_candidates']:.0f} connector candidates, {sizes['envelope']:.1f} facts packed")
        print(f"  {'stage':<16}{'p50 ms':>10}{'p95 ms':>10}{'min ms':>10}")
        for k in [x for x in STAGES if x != "fanout"] + ["stages 2-6"]:
            print(f"  {k:<16}{pct(times[k], 50):>10.3f}{pct(times[k], 95):>10.3f}{min(times[k]):>10.3f}")
        fanned = [sc for sc in scenarios if sc.fanout_width > 1]
        if fanned:
            tf, _ = bench_stages(corpus, fanned, config, max(args.runs // 4, 10))
            print(f"  {'fanout':<16}{pct(tf['fanout'], 50):>10.3f}{pct(tf['fanout'], 95):>10.3f}"
                  f"{min(tf['fanout']):>10.3f}   ({len(fanned)} scenario(s) with fanout_width > 1; stage 5 is the fan-out module's)")
        t1, _ = bench_stages(corpus, plain, base, max(args.runs // 2, 20))
        gather[name] = (pct(t1["candidates"], 50), pct(t1["candidates"], 95), min(t1["candidates"]), corpus.n)
        print()
    print(f"stage 1 (candidate gathering, candidate_k={base.candidate_k}, query + sub-queries)")
    print(f"  {'CKF':<12}{'facts':>8}{'p50 ms':>10}{'p95 ms':>10}{'min ms':>10}")
    for name, (p50, p95, lo, n) in gather.items():
        print(f"  {name:<12}{n:>8}{p50:>10.3f}{p95:>10.3f}{lo:>10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the local and the Ray engine of the whole-CKF work (docs/scaling.md).

    .venv/bin/python bench/ray_scan.py                          # synth10k and synth100k if present
    .venv/bin/python bench/ray_scan.py --sets synth10k --embed-texts 512 --workers 1 2

Prints two markdown tables. The conflict scan (``scan_ckf``: exact pair search, text check,
arbitration) of each CKF on the local engine and on a private local Ray cluster of 1 and 2 CPUs (the
pair search as Ray tasks over centroid-block units), after one untimed warm-up scan so that every row
finds the text checks' caches alike: total and pair-search seconds, pairs, dot products, and whether
the JSON report is identical. Then MiniLM embedding texts/s of ``--embed-texts`` texts of the first
CKF, local (this process, torch's own threads, model loaded before timing) and Ray Data actors (1 CPU
and 1 torch thread each, the model loaded once per actor inside the time). Each row prints the
1-minute load average when it finished (a shared machine's figures move with its load). Ray is
needed (the [ray] extra). Caches go to ``--cache-dir`` (default a temporary folder; the embedding runs
always use a fresh one).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crp_core.analysis.scan import clear_search_cache, scan_ckf  # noqa: E402
from crp_core.cli.conflicts import json_text  # noqa: E402
from crp_core.config import CRPConfig  # noqa: E402
from crp_core.corpus.prepared import prepare_corpus  # noqa: E402
from crp_core.engines.local import local_embed  # noqa: E402
from crp_core.engines.ray_engine import ray_embed, ray_searcher, ray_session, require_ray  # noqa: E402
from crp_core.io.ckf import load_ckf  # noqa: E402

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="*", default=["synth10k", "synth100k"])
    ap.add_argument("--workers", nargs="*", type=int, default=[1, 2])
    ap.add_argument("--embed-texts", type=int, default=1024)
    ap.add_argument("--cache-dir", default=None)
    args = ap.parse_args(argv)
    ray = require_ray()
    cache = args.cache_dir or tempfile.mkdtemp(prefix="crp-ray-bench-")
    config = CRPConfig()
    rows = [
        "| CKF | facts | engine | workers | scan s | pair search s | pairs | products | same JSON | load |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    first_kb = None
    for name in args.sets:
        path = ROOT / "bench" / "data" / name
        if not (path / "facts.jsonl").is_file():
            print(f"skip {name}: {path} missing (bench/make_synthetic_ckf.py)", file=sys.stderr)
            continue
        kb = load_ckf(path)
        first_kb = first_kb or kb
        corpus = prepare_corpus(kb, cache_dir=cache, config=config)
        scan_ckf(corpus, config, NOW)  # warm-up: the text checks' parse caches filled for every row alike
        clear_search_cache()
        t0 = time.perf_counter()
        local = scan_ckf(corpus, config, NOW)
        t_local = time.perf_counter() - t0
        ref = json_text(local, kb)
        rows.append(
            f"| {name} | {len(kb)} | local | - | {t_local:.1f} | {local.timings_ms['neighbours'] / 1e3:.1f} | "
            f"{local.n_candidates} | {local.products:.3g} | - | {load()} |"
        )
        print(rows[-1], flush=True)
        for w in args.workers:
            with ray_session(None, w):
                t0 = time.perf_counter()
                remote = scan_ckf(corpus, config, NOW, searcher=ray_searcher(w))
                t_ray = time.perf_counter() - t0
                same = json_text(remote, kb) == ref
            rows.append(
                f"| {name} | {len(kb)} | ray | {w} | {t_ray:.1f} | {remote.timings_ms['neighbours'] / 1e3:.1f} "
                f"| {remote.n_candidates} | {remote.products:.3g} | {'yes' if same else 'NO'} | {load()} |"
            )
            print(rows[-1], flush=True)
        del corpus  # one corpus at a time in memory
    emb_rows = ["| embedding | workers | texts | s | texts/s | load |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    if first_kb is not None and args.embed_texts > 0:
        texts = [f.content for f in first_kb.facts[: args.embed_texts]]
        local_embed(["warm-up"], tempfile.mkdtemp(prefix="crp-emb-"))  # the model loaded once, not timed
        t0 = time.perf_counter()
        local_embed(texts, tempfile.mkdtemp(prefix="crp-emb-"))
        dt = time.perf_counter() - t0
        emb_rows.append(
            f"| local (torch threads: {__import__('torch').get_num_threads()}) | 1 | {len(texts)} | "
            f"{dt:.1f} | {len(texts) / dt:.1f} | {load()} |"
        )
        print(emb_rows[-1], flush=True)
        for w in args.workers:
            with ray_session(None, w):
                t0 = time.perf_counter()
                ray_embed(texts, w, block_rows=max(64, len(texts) // (4 * w)))
                dt = time.perf_counter() - t0
            emb_rows.append(
                f"| ray actors (model load inside) | {w} | {len(texts)} | {dt:.1f} | {len(texts) / dt:.1f} | {load()} |"
            )
            print(emb_rows[-1], flush=True)
    print()
    print("\n".join(rows))
    print()
    print("\n".join(emb_rows))
    print(f"\nray {ray.__version__}, {os.cpu_count()} cores, load average at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Instructions per pipeline run, counted by valgrind (callgrind): a figure that does not move with the
machine's load, for saying "better" about a change of a few percent.

    python bench/instructions.py                                # synth10k, the dense and the anchors case, 40 runs
    python bench/instructions.py --sets synth10k --runs 80
    python bench/instructions.py --repo ../other-checkout        # the same workload on another tree's crp_core
    python bench/instructions.py --sets --anchors                 # only the SDK benchmark's shape (tied anchors)

On a shared machine the wall-clock p50 of one tree moves from one ``bench/pipeline.py`` run to the next
(other tenants, a shared cache), which hides a change of a few percent. Counted instructions do not: the
same tree, data and runs give the same count within about 0.1 %, busy machine or not.

What is counted: the child process (this script with ``--child``) loads the CKF, prepares the corpus
(graph and HNSW index from the corpus cache when present), embeds nothing (the synthetic scenarios carry
their vectors), warms up with two passes over the scenarios, then runs ``run_pipeline`` ``--runs`` times
cycling the scenarios with fan-out off, as ``bench/pipeline.py``'s stage 2-6 table does (stage 1 answered
by the index's search memo, stage 3's walk by its per-anchor-set memo and stage 4's detections by their
per-selection memo, as on a rerun; ``--walk-every-run`` keeps neither, as for new anchors; the headers
included). The same child with 0 runs is counted too, in parallel, and subtracted: the difference / runs
is the instructions of one run. Counts are taken with ``PYTHONHASHSEED=0`` and one BLAS thread (a thread
team's spinning is not work). callgrind runs the child far slower than natively, so a case takes minutes.

The **anchors case** (``--anchors``): ``bench/pipeline.py``'s case of the same name, the crprotocol SDK
benchmark's shape built in memory by ``tests/support/tie_worlds.py`` (500 tied facts in one cluster, no data
directory), counted the same way.

Data: ``bench/make_synthetic_ckf.py`` directories (``bench/pipeline.py`` writes the dense one when missing).
Needs ``valgrind`` (Debian package ``valgrind``); prints a clear message when it is missing.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: candidate_k per data set, as bench/pipeline.py runs them
CASES = {"synth10k": 300, "synth100k": 300, "synth10k-dense": 500}
#: the in-memory case's name (``tests/support/tie_worlds.py::tied_cluster``)
ANCHORS = "anchors"
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def child(repo: str, data: str, name: str, k: int, runs: int, walk_every_run: bool = False) -> int:
    """The counted workload (see the module docstring)."""
    sys.path.insert(0, repo)
    if walk_every_run:
        import crp_core.stages.cdgr as cdgr
        import crp_core.stages.contradictions.resolve as resolve

        cdgr.WALKS_KEPT = 0
        resolve.DETECTIONS_KEPT = 0
    from crp_core.config import CRPConfig
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario
    from crp_core.pipeline import run_pipeline

    if name == ANCHORS:
        from tests.support.tie_worlds import tied_cluster

        world = tied_cluster()
        corpus, config = world.corpus, world.config
        scenarios = [world.scenario.replace(fanout_width=0)]
    else:
        path = os.path.join(data, name)
        config = CRPConfig(candidate_k=k, envelope_fact_budget=20)
        corpus = prepare_corpus(load_ckf(path, max_bytes=config.ckf_max_bytes), config=config)
        corpus.graph(config)
        scenarios = [
            load_scenario(p).replace(fanout_width=0) for p in sorted(glob.glob(os.path.join(path, "scenario*.json")))
        ]
    prepared = [(s, embed_scenario(s, corpus)) for s in scenarios]
    for s, v in prepared * 2:  # warm-up: lazy per-corpus caches, imports, the search memo
        run_pipeline(corpus, s, config, vectors=v)
    for i in range(runs):
        s, v = prepared[i % len(prepared)]
        run_pipeline(corpus, s, config, vectors=v)
    return 0


def counted(
    repo: str, data: str, name: str, k: int, runs: int, log: str, walk_every_run: bool = False
) -> subprocess.Popen[bytes]:
    env = dict(
        os.environ,
        PYTHONHASHSEED="0",
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    cmd = [
        "valgrind",
        "--tool=callgrind",
        f"--log-file={log}",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        "--repo",
        repo,
        "--data",
        data,
        "--case",
        name,
        str(k),
        str(runs),
    ] + (["--walk-every-run"] if walk_every_run else [])
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def read_count(log: str) -> int:
    with open(log, encoding="utf-8", errors="replace") as f:
        got = _COLLECTED.findall(f.read())
    if not got:
        raise RuntimeError(f"no instruction count in {log}")
    return int(got[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="*", default=["synth10k", "synth10k-dense"], choices=sorted(CASES))
    ap.add_argument(
        "--anchors",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also count the SDK benchmark's shape: 500 tied facts in one cluster (tests/support/tie_worlds.py)",
    )
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--repo", default=ROOT, help="the checkout whose crp_core is counted (default: this one)")
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument(
        "--walk-every-run",
        action="store_true",
        help="keep no stage-3 walk and no stage-4 detections between runs (crp_core.stages.cdgr.WALKS_KEPT = 0, "
        "crp_core.stages.contradictions.resolve.DETECTIONS_KEPT = 0): every run walks and detects, as new anchors do",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--case", nargs=3, metavar=("NAME", "K", "RUNS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        name, k, runs = args.case
        return child(os.path.abspath(args.repo), args.data, name, int(k), int(runs), args.walk_every_run)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind); nothing counted", file=sys.stderr)
        return 1
    repo = os.path.abspath(args.repo)
    print(
        f"instructions per run_pipeline run (callgrind), crp_core from {repo}; {args.runs} runs per case, "
        f"fan-out off, envelope_fact_budget=20; load average {os.getloadavg()[0]:.1f} (it does not matter here)"
    )
    print(f"  {'CKF':<16}{'K':>5}{'runs':>6}{'per run (M instr)':>19}{'setup (M instr)':>17}{'wall (s)':>10}")
    for name in args.sets + ([ANCHORS] if args.anchors else []):
        if name != ANCHORS and not os.path.isdir(os.path.join(args.data, name)):
            print(f"  {name:<16} missing under {args.data} (bench/make_synthetic_ckf.py, bench/pipeline.py)")
            continue
        k = CASES.get(name, 0)
        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            logs = [os.path.join(tmp, f"{n}.log") for n in (0, args.runs)]
            procs = [
                counted(repo, args.data, name, k, n, log, args.walk_every_run) for n, log in zip((0, args.runs), logs)
            ]
            if any(p.wait() != 0 for p in procs):
                print(
                    f"  {name:<16} the counted child failed (run it without valgrind: "
                    f"python bench/instructions.py --child --case {name} {k} 1)"
                )
                continue
            base, full = read_count(logs[0]), read_count(logs[1])
        per_run = (full - base) / max(args.runs, 1)
        print(
            f"  {name:<16}{k:>5}{args.runs:>6}{per_run / 1e6:>19.2f}{base / 1e6:>17.0f}{time.perf_counter() - t:>10.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the whole-CKF conflict scan at scale, one bounded child process per row.

    .venv/bin/python bench/scale.py                                  # 100k and 1M, local engine
    .venv/bin/python bench/scale.py --sizes 100000 300000 --data /tmp/crp-data
    .venv/bin/python bench/scale.py --sizes 1000000 --reference-max 0 # no brute-force reference

Each row runs ``crp-inspect conflicts --ckf <synthetic CKF> --json --profile`` in a child process under an
address-space cap (``prlimit --as``, default 8 GB: a runaway row cannot take a shared machine down) and
reports, from outside the child: wall seconds, CPU seconds of the child and every worker it ended
(``resource.getrusage(RUSAGE_CHILDREN)``), the peak resident set of the largest process of the row
(``ru_maxrss`` of the children), the peak of the whole process tree's resident sets summed and the peak of
its proportional sets summed (``Pss`` of ``/proc/<pid>/smaps_rollup``: the memory the tree takes from the
machine, each page shared by several processes counted once; sampled every ``--sample-s`` seconds: the main
process plus its text-check workers), candidate and conflicting pairs, and the child's own ``--profile`` table
(load, pair search, text check, arbitration, write).

Pair set: up to ``--reference-max`` facts, the scan's candidate pairs are compared with an independent
brute-force reference (``bench/conflict_scan.py``'s ``reference_pairs``: every pair of the whole Gram
matrix above the threshold), and the scan's count with the child's.

The synthetic CKFs come from ``bench/make_synthetic_ckf.py`` (generated under ``--data`` when missing;
1M facts is 1.5 GB of vectors). The 1-minute load average is printed before and after each row: on a
shared two-core machine the wall time moves with it, the CPU time much less.

Rows (``--rows``, :data:`RUNNERS`: a name to a function ``(path, n, args) -> Row``):

* ``local``: the local engine, ``--check-workers`` text-check processes;
* ``ray-2node``: a Ray cluster of two node processes started here (``ray.cluster_utils.Cluster``: a head and
  a worker node, one CPU each, on the loopback address), the command joining it with ``--engine ray
  --address``. Its CPU adds the cluster's processes (raylets, object stores, task workers) sampled from
  ``/proc`` with the memory (a task worker ends with its driver: its last sample counts); its tree peak is
  that of this process's whole tree (the cluster's shared object store pages count in each process that
  maps them); its JSON report is compared byte for byte with the local row's of the same size.

    .venv/bin/python bench/scale.py --sizes 1000000 --rows local ray-2node --reference-max 0
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

NOW = "2026-11-01T00:00:00Z"  # make_synthetic_ckf.NOW
#: the size limit given to the child (a 1M-fact CKF's vectors are 1.5 GB)
MAX_BYTES = 4_000_000_000


@dataclass
class Row:
    """One measured row of the table."""

    label: str
    facts: int
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_mb: float = 0.0  # the largest single process of the row
    tree_peak_mb: float = 0.0  # the process tree's resident sets summed, sampled
    tree_pss_mb: float = 0.0  # the process tree's proportional sets summed (shared pages once), sampled
    candidates: int = 0
    pairs: int = 0
    pair_set: str = "-"
    load: str = ""
    status: str = "ok"
    profile: list[str] = field(default_factory=list)


def synthetic_path(data: str, n: int) -> str:
    if n % 1_000_000 == 0:
        name = f"synth{n // 1_000_000}m"
    else:
        name = f"synth{n // 1000}k" if n % 1000 == 0 else f"synth{n}"
    path = os.path.join(data, name)
    if not os.path.exists(os.path.join(path, "facts.jsonl")):
        print(f"  generating {path} ...", file=sys.stderr, flush=True)
        gen = [sys.executable, os.path.join(HERE, "make_synthetic_ckf.py"), "--facts", str(n), "--out", path]
        subprocess.run(gen, check=True)
    return path


def _tree(root: int, skip: int | None = None) -> Iterator[int]:
    """``root`` and its live descendants (``skip``'s subtree left out), read from ``/proc``."""
    todo = [root]
    while todo:
        p = todo.pop()
        if p == skip:
            continue
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
        yield p


def _tree_memory_mb(pid: int) -> tuple[float, float]:
    """The resident sets of ``pid`` and its descendants summed, and their proportional sets summed (MB; 0 once
    they are gone): a page several processes share (a forked worker's copy of its parent, the libraries) counts
    in full in each resident set and once, split between them, in the proportional sets."""
    rss = pss = 0.0
    for p in _tree(pid):
        rss += _status_kb(f"/proc/{p}/status", "VmRSS:") / 1024.0
        pss += _status_kb(f"/proc/{p}/smaps_rollup", "Pss:") / 1024.0
    return rss, pss


def _status_kb(path: str, key: str) -> float:
    """The kilobytes on ``key``'s line of a ``/proc`` file (0 when the process is gone or the line absent)."""
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key):
                    return float(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0.0


def _sample_tree(
    proc: subprocess.Popen[bytes], root: int, every: float, peak: list[float], seen: dict[int, float] | None
) -> None:
    """The largest summed resident and proportional sets of ``root``'s process tree while ``proc`` runs
    (``peak``: [rss, pss]); with ``seen``, each process of that tree outside ``proc``'s own subtree with its CPU
    seconds as last sampled."""
    while proc.poll() is None:
        rss, pss = _tree_memory_mb(root)
        peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
        if seen is not None:
            seen.update(cluster_cpu(root, skip=proc.pid))
        time.sleep(every)


def scan_command(path: str, args: argparse.Namespace, *engine: str) -> list[str]:
    """``crp-inspect conflicts --json --profile`` of ``path`` (``engine``: extra options, e.g. ``--engine ray``)."""
    cmd = [
        sys.executable,
        "-m",
        "crp_core.cli",
        "conflicts",
        "--ckf",
        path,
        "--set",
        f"ckf_max_bytes={MAX_BYTES}",
        "--now",
        NOW,
        "--json",
        "--profile",
        "--check-workers",
        str(args.check_workers),
        *engine,
    ]
    if args.mem_cap and shutil.which("prlimit"):
        cmd = ["prlimit", f"--as={args.mem_cap}", *cmd]
    return cmd


def measure(
    row: Row,
    cmd: list[str],
    args: argparse.Namespace,
    env: dict[str, str] | None = None,
    tree_of: int | None = None,
    cluster_seen: dict[int, float] | None = None,
) -> str:
    """Run ``cmd`` as the row's child: wall, CPU of the child and the workers it ended, peaks (the summed one
    over the child's process tree, or ``tree_of``'s), the ``--profile`` table and counts into ``row``; returns
    the SHA-256 of its JSON report ("" on failure). ``cluster_seen``: the CPU of ``tree_of``'s other processes,
    sampled (:func:`cluster_cpu`)."""
    fd, out_path = tempfile.mkstemp(prefix="scan-", suffix=".json")  # the JSON report: hashed, then dropped
    os.close(fd)
    env = {**os.environ, **(env or {}), "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    peak = [0.0, 0.0]
    t0 = time.perf_counter()
    with open(out_path, "wb") as stdout:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        root = proc.pid if tree_of is None else tree_of
        sampler = threading.Thread(
            target=_sample_tree, args=(proc, root, args.sample_s, peak, cluster_seen), daemon=True
        )
        sampler.start()
        _, err = proc.communicate()
        sampler.join()
    row.wall_s = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row.cpu_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    row.peak_mb = after.ru_maxrss / 1024.0  # the largest descendant so far (kilobytes on Linux)
    row.tree_peak_mb, row.tree_pss_mb = peak[0], peak[1]
    row.load = f"{load0:.1f} / {os.getloadavg()[0]:.1f}"
    text = err.decode("utf-8", "replace")
    digest = ""
    if proc.returncode != 0:
        row.status = f"exit {proc.returncode}: {text.strip().splitlines()[-1] if text.strip() else ''}"
    else:
        lines = text[text.find("conflicts profile") :].strip().splitlines()
        row.profile = lines[1:-1]
        got = re.search(r"candidate pairs (\d+), conflicting pairs (\d+)", text)
        if got:
            row.candidates, row.pairs = int(got.group(1)), int(got.group(2))
        with open(out_path, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
    os.unlink(out_path)
    return digest


#: the SHA-256 of each size's local JSON report, for the other engines' rows to compare with
LOCAL_JSON: dict[int, str] = {}


def run_local(path: str, n: int, args: argparse.Namespace) -> Row:
    """The scan on the local engine in a capped child process."""
    row = Row(f"local, {args.check_workers} text-check workers", n)
    digest = measure(row, scan_command(path, args), args)
    if row.status == "ok":
        LOCAL_JSON[n] = digest
        if n <= args.reference_max:
            row.pair_set = check_pair_set(path, row.candidates)
    return row


#: one node of the bench's Ray cluster: one CPU, loopback only (as tests/core/engines/test_ray_multinode.py)
RAY_NODE = {"num_cpus": 1, "node_ip_address": "127.0.0.1"}
#: Ray's switch that keeps every node of a one-machine cluster on the loopback address (docs/scaling.md)
RAY_ONE_MACHINE = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


def cluster_cpu(root: int, skip: int | None = None) -> dict[int, float]:
    """CPU seconds (user + system) of each live process of ``root``'s tree, ``root`` and ``skip``'s subtree left
    out: the Ray nodes' processes (raylets, object stores, task workers) when ``root`` started the cluster."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for p in _tree(root, skip):
        if p == root:
            continue
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            out[p] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        except (OSError, ValueError, IndexError):
            continue
    return out


def run_ray_2node(path: str, n: int, args: argparse.Namespace) -> Row:
    """The scan on a Ray cluster of two node processes on this machine (a head and a worker node, one CPU
    each): the command connects to it with ``--engine ray --address``. CPU is the command's plus the
    cluster processes' (read from /proc before they are shut down); the JSON is compared with the local
    row's of the same size when that row ran."""
    os.environ.update(RAY_ONE_MACHINE)  # read by every node process Ray starts, and by this process
    import ray
    from ray import cluster_utils

    ray._private.ray_constants.ENABLE_RAY_CLUSTER = False  # this process read the switch when Ray was imported
    row = Row("Ray, 2 nodes x 1 CPU", n)
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={**RAY_NODE, "include_dashboard": False})
    try:
        cluster.add_node(**RAY_NODE)
        cluster.wait_for_nodes()
        before = cluster_cpu(os.getpid())
        seen = dict(before)  # each cluster process's CPU as last sampled: a task worker ends with its driver
        cmd = scan_command(path, args, "--engine", "ray", "--address", cluster.address)
        digest = measure(row, cmd, args, RAY_ONE_MACHINE, tree_of=os.getpid(), cluster_seen=seen)
        row.cpu_s += sum(cpu - before.get(pid, 0.0) for pid, cpu in seen.items())
    finally:
        cluster.shutdown()
        ray.shutdown()
    if row.status == "ok" and n in LOCAL_JSON:
        row.pair_set = "the local JSON bytes" if digest == LOCAL_JSON[n] else "DIFFERENT JSON from local"
    elif row.status == "ok" and n <= args.reference_max:
        row.pair_set = check_pair_set(path, row.candidates)
    return row


def check_pair_set(path: str, reported: int) -> str:
    """The scan's candidate pairs against the brute-force reference (``conflict_scan.reference_pairs``)."""
    from conflict_scan import pair_set, reference_pairs

    from crp_core.analysis.scan import search_pairs
    from crp_core.analysis.scan_input import scan_corpus
    from crp_core.config import CRPConfig
    from crp_core.io.ckf import load_ckf

    config = CRPConfig(ckf_max_bytes=MAX_BYTES)
    corpus = scan_corpus(load_ckf(path, max_bytes=MAX_BYTES), config=config)
    got = pair_set(search_pairs(corpus, config).pairs)
    ref = reference_pairs(corpus, config.contradiction_similarity)  # reads the vectors and the retrievable mask
    if got == ref and len(got) == reported:
        return f"equal ({len(ref):,})"
    return f"DIFFERENT: {len(got ^ ref)} pairs differ, the child reported {reported:,}"


#: row kind -> the function measuring one row (``--rows``; a dashboard row would plug in here)
RUNNERS: dict[str, Callable[[str, int, argparse.Namespace], Row]] = {"local": run_local, "ray-2node": run_ray_2node}


def table(rows: list[Row]) -> str:
    head = (
        "| facts | row | wall s | CPU s | peak MB (largest process) | peak MB (process tree, resident) "
        "| peak MB (process tree, proportional) | candidate pairs "
        "| conflicting pairs | pair set vs brute force | load 1 min (before / after) |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        if r.status != "ok":
            lines.append(f"| {r.facts:,} | {r.label} | {r.status} |" + " |" * 8)
            continue
        lines.append(
            f"| {r.facts:,} | {r.label} | {r.wall_s:.1f} | {r.cpu_s:.1f} | {r.peak_mb:,.0f} | {r.tree_peak_mb:,.0f} "
            f"| {r.tree_pss_mb:,.0f} "
            f"| {r.candidates:,} | {r.pairs:,} | {r.pair_set} | {r.load} |"
        )
    for r in rows:
        if r.profile:
            lines += ["", f"stages at {r.facts:,} facts ({r.label}):", *("    " + p for p in r.profile)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--data", default=os.path.join(HERE, "data"), help="where the synthetic CKFs are (made if missing)")
    ap.add_argument("--rows", nargs="*", default=["local"], choices=sorted(RUNNERS), help="row kinds to measure")
    ap.add_argument("--check-workers", type=int, default=2, help="text-check processes of the scan (default 2)")
    ap.add_argument("--mem-cap", type=int, default=8_000_000_000, help="address-space cap of a row, bytes (0: none)")
    ap.add_argument("--reference-max", type=int, default=100_000, help="brute-force pair-set check up to N facts")
    ap.add_argument("--sample-s", type=float, default=0.5, help="seconds between samples of the process tree's memory")
    args = ap.parse_args(argv)
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rows = []
    for n in args.sizes:
        path = synthetic_path(args.data, n)
        for kind in args.rows:
            print(f"  {n:,} facts, {kind} ...", file=sys.stderr, flush=True)
            rows.append(RUNNERS[kind](path, n, args))
    print(table(rows))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if all(r.status == "ok" and not r.pair_set.startswith("DIFF") for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

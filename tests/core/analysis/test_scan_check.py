"""The scan's text check streamed in chunks (crp_core.analysis.scan_check): the same conflicts whatever the
chunk size, order or number of worker processes, each pair oriented by fact id."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
import warnings
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis import scan_check
from crp_core.analysis.scan import check_ckf, scan_ckf
from crp_core.analysis.scan_check import check_pool, chunk_order, conflicting_pairs
from crp_core.config import CRPConfig
from crp_core.errors import CRPError
from crp_core.model import Fact
from crp_core.support.costs import StageClock
from tests.support.paths import REPO_ROOT
from tests.support.scan_worlds import NOW, cluster_corpus, plain_conflicts

#: texts that conflict with one another in several ways (numbers, a negation), repeated on purpose:
#: facts with the same content make the same text pair many times
TEXTS = (
    "The etcd client port is 2379",
    "The etcd client port is 4001",
    "The etcd client port is 2379",
    "The backup job runs every 30 minutes",
    "The backup job runs every 60 minutes",
    "The backup job does not run every 30 minutes",
    "Pods are scheduled onto nodes by the scheduler",
)


def _facts(picks: list[int], ids: list[int]) -> list[Fact]:
    return [Fact(f"F{fid:03d}", TEXTS[t]) for t, fid in zip(picks, ids)]


@st.composite
def pair_worlds(draw):
    n = draw(st.integers(2, 24))
    picks = draw(st.lists(st.integers(0, len(TEXTS) - 1), min_size=n, max_size=n))
    ids = draw(st.permutations(list(range(n))))  # fact ids in another order than the rows
    raw = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60))
    pairs = sorted({(min(a, b), max(a, b)) for a, b in raw if a != b})
    return _facts(picks, ids), np.array(pairs, dtype=np.int64).reshape(-1, 2)


@settings(max_examples=60, deadline=None)
@given(world=pair_worlds())
def test_chunk_sizes_give_the_same_conflicts_as_the_plain_loop(world):
    facts, pairs = world
    want = plain_conflicts(pairs, facts)
    for size in (1, 7, 10**9):
        assert conflicting_pairs(pairs, facts, chunk_pairs=size) == want


@settings(max_examples=60, deadline=None)
@given(world=pair_worlds(), size=st.sampled_from([1, 2, 7, 10**9]))
def test_chunks_hold_every_pair_once_and_keep_components_whole(world, size):
    _, pairs = world
    chunks = chunk_order(pairs, size)
    got = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    assert sorted(got.tolist()) == list(range(pairs.shape[0]))
    assert all(c.size <= 2 * size - 1 or c.size <= size for c in chunks)
    # a component no longer than a chunk is never split: its pairs share one chunk
    where = {int(p): k for k, c in enumerate(chunks) for p in c.tolist()}
    parent = list(range(int(pairs.max()) + 1 if pairs.size else 0))

    def root(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in pairs.tolist():
        parent[root(a)] = root(b)
    comps: dict[int, list[int]] = {}
    for k, (a, _) in enumerate(pairs.tolist()):
        comps.setdefault(root(a), []).append(k)
    for members in comps.values():
        if len(members) <= size:
            assert len({where[k] for k in members}) == 1


def test_chunk_order_groups_a_component_before_the_next():
    # two components interleaved in candidate order: (0,1),(2,3),(1,4),(3,5)
    pairs = np.array([[0, 1], [2, 3], [1, 4], [3, 5]], dtype=np.int64)
    assert [c.tolist() for c in chunk_order(pairs, 2)] == [[0, 2], [1, 3]]
    assert [c.tolist() for c in chunk_order(pairs, 1)] == [[0], [2], [1], [3]]
    assert [c.tolist() for c in chunk_order(pairs, 100)] == [[0, 2, 1, 3]]
    assert chunk_order(np.zeros((0, 2), dtype=np.int64)) == []


def test_each_distinct_text_pair_is_checked_once():
    facts = _facts([0, 1, 2, 1, 6], [0, 1, 2, 3, 4])  # F000 and F002 say the same; so do F001 and F003
    pairs = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [2, 3], [0, 4]], dtype=np.int64)
    seen: list[int] = []
    real = scan_check.check_texts
    with mock.patch.object(
        scan_check, "check_texts", side_effect=lambda t, learned=True: seen.append(len(t)) or real(t, learned)
    ):
        got = conflicting_pairs(pairs, facts)
    assert seen == [3]  # (2379, 4001), (4001, 2379) as oriented by id, and (2379, scheduler); identical texts never
    assert [(a, b) for a, b, _ in got] == [(0, 1), (0, 3), (1, 2), (2, 3)]


def test_worker_processes_give_the_same_conflicts():
    facts = _facts([k % len(TEXTS) for k in range(40)], list(range(40))[::-1])
    pairs = np.array([(i, j) for i in range(40) for j in range(i + 1, 40) if (i + j) % 3 == 0], dtype=np.int64)
    want = plain_conflicts(pairs, facts)
    with mock.patch.object(scan_check, "PARALLEL_MIN_PAIRS", 1), check_pool(2) as pool:
        assert pool is not None
        assert conflicting_pairs(pairs, facts, pool=pool, chunk_pairs=5) == want
        assert conflicting_pairs(pairs, facts, pool=pool, chunk_pairs=10**9) == want
    with check_pool(1) as none:
        assert none is None


@pytest.mark.parametrize("seed", [0, 1])
def test_scan_with_a_pool_equals_the_scan_in_this_process(seed):
    config = CRPConfig()
    corpus = cluster_corpus(seed, config=config)
    plain = scan_ckf(corpus, config, NOW)
    with mock.patch.object(scan_check, "PARALLEL_MIN_PAIRS", 1), check_pool(2) as pool:
        pooled = scan_ckf(corpus, config, NOW, check_pool=pool)
    assert plain.n_candidates > 0 and plain.pairs
    assert [(p.fact_a, p.fact_b, p.conflict, p.similarity, p.kept) for p in pooled.pairs] == [
        (p.fact_a, p.fact_b, p.conflict, p.similarity, p.kept) for p in plain.pairs
    ]


def test_check_workers_spawn_processes_that_find_the_same_conflicts():
    """``check_ckf(check_workers=2)`` (the dashboard's whole scan) starts two new interpreters for the check,
    which report their CPU time, and stops them after: the same checked pairs as the check in this process."""
    config = CRPConfig()
    corpus = cluster_corpus(0, config=config)
    plain = check_ckf(corpus, config)
    with mock.patch.object(scan_check, "PARALLEL_MIN_PAIRS", 1), mock.patch.object(StageClock, "add_cpu") as heard:
        spawned = check_ckf(corpus, config, clock=StageClock(), check_workers=2)
    assert plain.found and spawned.found == plain.found
    assert heard.called  # the chunks were checked in the workers, which report their CPU time
    with check_pool(2, "spawn") as pool:
        assert pool is not None
        pids = {pool.submit(os.getpid).result() for _ in range(8)}
    assert os.getpid() not in pids and not any(_alive(p) for p in pids)


def test_below_the_parallel_floor_check_workers_start_no_process():
    config = CRPConfig()
    corpus = cluster_corpus(1, config=config)
    with mock.patch.object(scan_check.ProcessPoolExecutor, "__init__", side_effect=AssertionError("a pool")):
        checked = check_ckf(corpus, config, check_workers=2)
    assert 0 < checked.search.pairs.shape[0] < scan_check.PARALLEL_MIN_PAIRS
    assert checked.found == check_ckf(corpus, config).found


def test_workers_that_cannot_start_leave_the_check_in_this_process_with_a_warning():
    """A spawned worker that ends before its first task (here: its start-up exits): a warning, then the check
    runs here and finds the same pairs."""
    facts = _facts([k % len(TEXTS) for k in range(12)], list(range(12)))
    pairs = np.array([(i, j) for i in range(12) for j in range(i + 1, 12)], dtype=np.int64)
    with (
        mock.patch.object(scan_check, "PARALLEL_MIN_PAIRS", 1),
        mock.patch.object(scan_check.ProcessPoolExecutor, "__init__", _dying_pool),
        pytest.warns(RuntimeWarning, match="ended before their first task; the texts are checked in this process"),
    ):
        cpu: list[float] = []
        got = scan_check.check_candidates(pairs, facts, True, None, None, cpu.append, workers=2)
    assert got == plain_conflicts(pairs, facts) and cpu == []


_REAL_POOL_INIT = scan_check.ProcessPoolExecutor.__init__


def _dying_pool(self, max_workers, mp_context, initializer, initargs):
    """A pool whose workers exit while starting (``os._exit(3)`` as their initializer)."""
    _REAL_POOL_INIT(self, max_workers=max_workers, mp_context=mp_context, initializer=os._exit, initargs=(3,))


def test_a_text_pair_repeated_across_chunks_is_checked_once_per_scan():
    """Twelve facts of two texts, every pair a candidate: 66 pairs, 30 of identical texts, 36 of the two texts
    in one of two orientations (by fact id). With one-pair chunks, two checks in all."""
    facts = _facts([k % 2 for k in range(12)], list(range(12)))
    pairs = np.array([(i, j) for i in range(12) for j in range(i + 1, 12)], dtype=np.int64)
    seen: list[tuple[str, str]] = []
    real = scan_check.check_texts
    with mock.patch.object(
        scan_check, "check_texts", side_effect=lambda t, learned=True: seen.extend(t) or real(t, learned)
    ):
        got = conflicting_pairs(pairs, facts, chunk_pairs=1)
    assert sorted(seen) == sorted([(TEXTS[0], TEXTS[1]), (TEXTS[1], TEXTS[0])])
    assert got == plain_conflicts(pairs, facts) and len(got) == 36


def test_progress_counts_every_candidate_pair_once():
    facts = _facts([0, 2, 1, 1, 6], [0, 1, 2, 3, 4])
    pairs = np.array([[0, 1], [0, 2], [0, 3], [2, 3], [1, 4]], dtype=np.int64)
    heard: list[int] = []
    conflicting_pairs(pairs, facts, chunk_pairs=1, progress=heard.append)
    assert heard == sorted(heard) and heard[-1] == 5


def test_a_worker_that_dies_ends_the_check_with_a_clear_error():
    facts = _facts([k % len(TEXTS) for k in range(40)], list(range(40)))
    pairs = np.array([(i, j) for i in range(40) for j in range(i + 1, 40)], dtype=np.int64)
    with mock.patch.object(scan_check, "PARALLEL_MIN_PAIRS", 1), check_pool(2) as pool:
        assert pool is not None
        victim = pool.submit(os.getpid).result()
        os.kill(victim, signal.SIGKILL)
        with pytest.raises(CRPError, match="worker process ended .* --check-workers 1"):
            conflicting_pairs(pairs, facts, pool=pool, chunk_pairs=5)


_POOL_CHILD = """
import os, sys, time
from crp_core.analysis.scan_check import check_pool
with check_pool(2) as pool:
    pids = {pool.submit(os.getpid).result() for _ in range(20)}
    print(" ".join(map(str, sorted(pids))), flush=True)
    time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_no_worker_outlives_its_parent_and_ctrl_c_is_the_parents(how):
    """SIGKILL of the parent alone (the OOM killer's choice): its workers end too. SIGINT to the whole process
    group (Ctrl-C): the parent unwinds; the workers print nothing."""
    child = subprocess.Popen(
        [sys.executable, "-c", _POOL_CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        start_new_session=True,
    )
    workers: list[int] = []
    try:
        workers = [int(p) for p in child.stdout.readline().split()]
        assert workers and child.pid not in workers
        if how == signal.SIGKILL:
            os.kill(child.pid, how)
        else:
            os.killpg(child.pid, how)
        _, err = child.communicate(timeout=30)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in workers)
        assert err.count("Traceback") <= (1 if how == signal.SIGINT else 0), err
        assert "ForkProcess" not in err, err
    finally:
        for pid in [child.pid, *workers]:  # a failed run leaves nothing behind either
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        child.wait()


def test_the_checked_pairs_rearbitrated_are_the_scan():
    """``scan_ckf`` is ``arbitrate_checked`` of ``check_ckf``: one check serves any time and any decisions."""
    from crp_core.analysis.scan import arbitrate_checked, check_ckf
    from crp_core.decisions import pair_key

    config = CRPConfig()
    corpus = cluster_corpus(0, config=config)
    checked = check_ckf(corpus, config)
    first = scan_ckf(corpus, config, NOW)
    a, b = first.pairs[0].fact_a, first.pairs[0].fact_b
    for decisions in (None, {pair_key(a, b): {"kind": "dismiss"}}):
        want = scan_ckf(corpus, config, NOW, decisions=decisions)
        got = arbitrate_checked(checked, corpus, config, NOW, decisions)
        assert [(p.fact_a, p.fact_b, p.conflict, p.kept, p.decision) for p in got.pairs] == [
            (p.fact_a, p.fact_b, p.conflict, p.kept, p.decision) for p in want.pairs
        ]
        assert (got.n_candidates, got.n_facts, got.counts) == (want.n_candidates, want.n_facts, want.counts)
    assert [p.decision for p in got.pairs if (p.fact_a, p.fact_b) == (a, b)] == ["dismiss"]


def test_progress_reaches_the_end_when_no_pair_needs_a_check():
    """Three candidate pairs, each of two facts with the same text (a copy is no conflict): nothing is checked,
    and the progress still hears that all three are settled."""
    facts = [Fact(f"D{k}", "The copy port is 8080.") for k in range(4)]
    heard: list[int] = []
    pairs = np.array([[0, 1], [1, 2], [2, 3]], dtype=np.int64)
    assert conflicting_pairs(pairs, facts, progress=heard.append) == []
    assert heard == [3]


def test_spawned_workers_do_not_run_the_callers_main_script(tmp_path, monkeypatch):
    """Streamlit installs the script it runs as ``__main__``: a spawned worker must not run it again (this
    one leaves a mark and exits, so its workers would end before their first task)."""
    mark = tmp_path / "ran"
    script = tmp_path / "page.py"
    script.write_text(f"open({str(mark)!r}, 'w').close()\nraise SystemExit(3)\n", encoding="utf-8")
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", page)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "ended before their first task" would fail here
        with check_pool(2, "spawn") as pool:
            assert pool is not None
            assert len({pool.submit(os.getpid).result() for _ in range(4)} - {os.getpid()}) >= 1
    assert sys.modules["__main__"] is page and not mark.exists()

"""The text check of the whole-CKF scan's candidate pairs (SPEC-027 §2.2), streamed in bounded chunks.

Each candidate pair (two facts above ``contradiction_similarity``) goes through
:func:`~crp_core.stages.contradictions.values.values_conflict`, a pure function of the two texts; what
this module decides is only the *order* and the *place* of those calls, never a verdict:

* **repeats**: the candidate pairs are reduced to their distinct (text a, text b) before anything is
  checked (facts with the same content make the same text pair many times): each is checked once per
  scan, and a pair of identical texts is never checked (it holds no conflict);
* **orientation**: each pair is read as (smaller fact id, larger fact id), the orientation the report
  describes (``ConflictPair.fact_a``), so no pair is checked a second time to mirror it
  (``values_conflict`` is symmetric: the same pairs conflict either way);
* **locality**: the distinct text pairs are grouped by connected component of their graph (a text and
  every text it pairs with, transitively) and cut into chunks of about ``chunk_pairs`` pairs at
  component boundaries, so the pairs of one text are checked together and its analysis (memoised per
  text by the stage) is made once, not once per distant pair; a component longer than a chunk is cut
  in the order of a breadth-first walk of its texts (:func:`locality_ranks`), so the pieces share only
  the texts at their seams;
* **processes**: with a :func:`check_pool` the chunks go to its worker processes, which receive only
  the chunk's texts and return the conflicts found: forked before a large CKF is loaded (the command
  line), or started empty (``spawn``) by a process that already holds one (the dashboard's server,
  :func:`check_candidates` with ``workers``); a worker forgets every one of the stage's
  memos of texts after each chunk (``crp_core.stages.contradictions.memos``: bounded memory; a chunk holds
  whole components or a piece of one, so what a later chunk needs again is only a seam's texts).

The result lists the conflicting pairs in the order of the candidate pairs, whatever the chunking,
the order of completion or the number of workers.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, reverse_cuthill_mckee

from crp_core.errors import CRPError
from crp_core.model import Fact
from crp_core.records import ValueConflict
from crp_core.stages.contradictions.memos import forget_texts
from crp_core.stages.contradictions.values import values_conflict
from crp_core.support.collector import collector_paused
from crp_core.support.cores import default_cores

#: candidate pairs of one chunk of the text check (a chunk is cut at a component boundary when it can be)
CHECK_CHUNK_PAIRS = 4096
#: below this many candidate pairs the text check stays in this process (a worker's start costs more)
PARALLEL_MIN_PAIRS = 20000
#: chunks submitted to the pool and not yet collected, at most (bounds the texts in flight)
CHUNKS_IN_FLIGHT = 8
#: text-check processes a scan uses by default where it may start them (the command line's
#: ``--check-workers``, the dashboard's whole-CKF scan): one per core, two at most
DEFAULT_CHECK_WORKERS = default_cores()
#: how a pool's workers start: ``fork`` (a copy of this process: open the pool before loading a large
#: CKF) or ``spawn`` (a new interpreter that imports the stage: holds none of this process's memory)
StartMethod = Literal["fork", "spawn"]

#: one conflicting pair: (row of the fact with the smaller id, row of the other, the conflict in that orientation)
Found = tuple[int, int, ValueConflict]
#: the distinct (text a, text b) of a chunk, each checked once
ChunkTexts = list[tuple[str, str]]


def chunk_order(pairs: np.ndarray, chunk_pairs: int = CHECK_CHUNK_PAIRS) -> list[np.ndarray]:
    """Positions of ``pairs`` ((m, 2) rows) cut into chunks: grouped by connected component of the pair
    graph (components in order of their first pair), a chunk closed at the first component boundary at or
    after ``chunk_pairs`` pairs. A component no longer than that keeps its pairs in candidate order; a
    longer one is cut in pieces of ``chunk_pairs`` in its :func:`locality_ranks` order (each pair placed
    at the later of its two ends' ranks, then the earlier), so a text's pairs fall in one piece or two
    neighbouring ones and its analysis is rarely made again in another piece. Every position appears
    exactly once."""
    m = int(pairs.shape[0])
    if m == 0:
        return []
    size = max(1, int(chunk_pairs))
    rows, inverse = np.unique(pairs.reshape(-1), return_inverse=True)
    ends = inverse.reshape(-1, 2)
    graph = sp.coo_matrix((np.ones(m, dtype=np.int8), (ends[:, 0], ends[:, 1])), shape=(rows.size, rows.size))
    _, label = connected_components(graph, directed=False)
    comp = label[ends[:, 0]]
    first = np.full(int(comp.max()) + 1, m, dtype=np.int64)
    np.minimum.at(first, comp, np.arange(m, dtype=np.int64))
    late, early = _locality_keys(ends, comp, size, graph)
    order = np.lexsort((np.arange(m), early, late, first[comp]))  # by component (its first pair), then locality
    key = first[comp][order]
    bounds = np.flatnonzero(np.diff(key)) + 1  # where a component starts
    starts = [0, *bounds.tolist(), m]
    chunks: list[np.ndarray] = []
    lo = 0
    for s, e in zip(starts[:-1], starts[1:]):
        if e - s > size:  # a component longer than a chunk: close the open chunk, then cut it
            if s > lo:
                chunks.append(order[lo:s])
            chunks.extend(order[a : min(e, a + size)] for a in range(s, e, size))
            lo = e
        elif e - lo >= size:
            chunks.append(order[lo:e])
            lo = e
    if lo < m:
        chunks.append(order[lo:m])
    return chunks


def locality_ranks(graph: sp.spmatrix) -> np.ndarray:
    """A rank for each node of the undirected ``graph`` ((n, n), an edge where either direction is stored):
    the Cuthill-McKee order, a breadth-first walk of each component from a node of least degree that visits
    a node's unvisited neighbours by increasing degree. Neighbours get near ranks (the order keeps the
    band of the graph's matrix narrow), so a window of ranks holds most of its nodes' edges."""
    sym = (graph + graph.T).tocsr()
    sym.data[:] = 1  # the structure alone: an edge stored in both directions, or twice, is one edge
    walk = reverse_cuthill_mckee(sym, symmetric_mode=True)[::-1]
    rank = np.empty(walk.size, dtype=np.int64)
    rank[walk] = np.arange(walk.size, dtype=np.int64)
    return rank


def _locality_keys(ends: np.ndarray, comp: np.ndarray, size: int, graph: sp.spmatrix) -> tuple[np.ndarray, np.ndarray]:
    """Sort keys of each pair within its component: (the later, the earlier of its ends' locality ranks) for
    the pairs of a component longer than ``size`` pairs, zeros (candidate order) for the others."""
    m = ends.shape[0]
    zero = np.zeros(m, dtype=np.int64)
    long = np.bincount(comp)[comp] > size
    if not long.any():
        return zero, zero
    rank = locality_ranks(graph)
    ra, rb = rank[ends[:, 0]], rank[ends[:, 1]]
    return np.where(long, np.maximum(ra, rb), zero), np.where(long, np.minimum(ra, rb), zero)


def check_texts(texts: ChunkTexts, learned: bool = True) -> list[tuple[int, ValueConflict]]:
    """(position in ``texts``, conflict) of each pair of texts that value-conflict (``learned``: the
    detector's learned comparison where the rules find nothing, config ``detector_learned``)."""
    out: list[tuple[int, ValueConflict]] = []
    for k, (a, b) in enumerate(texts):
        vc = values_conflict(a, b, learned)
        if vc is not None:
            out.append((k, vc))
    return out


def check_chunk(texts: ChunkTexts, learned: bool) -> tuple[list[tuple[int, ValueConflict]], float]:
    """A worker's chunk: its conflicts and the CPU seconds the worker spent on it. The cyclic garbage
    collector is off during the chunk: the detector's analyses form no reference cycles (reference counts
    free them when the memos are forgotten), and the collector's passes would walk the growing memos again
    and again for nothing. It is on again after the chunk, so cyclic garbage, if any, waits one chunk at most."""
    c0 = time.process_time()
    with collector_paused():
        try:
            return check_texts(texts, learned), time.process_time() - c0
        finally:
            forget_texts()


def _worker_start(parent: int) -> None:
    """A text-check worker's set-up: Ctrl-C is the parent's to handle (the parent unwinds and shuts the pool
    down), and on Linux the worker is sent SIGTERM when its parent dies, so no worker outlives the scan."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):  # no prctl here: the pool's own shutdown still ends the workers
            return
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)


#: Linux prctl option: the signal a process receives when its parent thread ends
PR_SET_PDEATHSIG = 1


@contextmanager
def check_pool(workers: int, start: StartMethod = "fork") -> Iterator[Executor | None]:
    """``workers`` processes for the text check, started at once; they receive only the texts of their
    chunks. ``fork``: open it before loading a large CKF, so the workers hold none of it; ``spawn``: for a
    process already holding one (each worker is a new interpreter, which imports the caller's main module
    as multiprocessing's ``spawn`` does: a script guards its entry with ``if __name__ == "__main__":``).
    None when ``workers <= 1``, where processes cannot be started that way, or when a worker ends before
    its first task (a warning says so): the check then runs in this process."""
    if workers <= 1 or start not in _start_methods():
        yield None
        return
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(start),
        initializer=_worker_start,
        initargs=(os.getpid(),),
    )
    try:
        with _main_module_hidden(start == "spawn"):
            started = _started(pool, workers, start)
        yield pool if started else None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


#: one start at a time swaps ``__main__`` (each restores the module it found)
_MAIN_SWAP = threading.Lock()


@contextmanager
def _main_module_hidden(hide: bool) -> Iterator[None]:
    """While ``spawn`` workers start, ``__main__`` is an empty module, so no worker imports the caller's
    main module: their initializer and tasks are crp_core functions, and a main module that is a script
    runs again in every worker. Streamlit installs the script it runs as ``__main__`` and leaves it there,
    so every worker ran the dashboard's script again as ``__mp_main__`` before its first task (and a script
    that starts the check itself failed there, the check falling back to one process; docs/scaling.md
    "The Conflicts page at 1M")."""
    if not hide:
        yield
        return
    with _MAIN_SWAP:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main


def _started(pool: ProcessPoolExecutor, workers: int, start: StartMethod) -> bool:
    """Whether the pool's workers answer a first task (their start and imports happen here, before the
    scan's progress begins); False, with a warning, when one ended instead."""
    try:
        for got in [pool.submit(os.getpid) for _ in range(workers)]:
            got.result()
    except BrokenProcessPool:
        warnings.warn(
            f"the text check's {workers} worker processes ({start}) ended before their first task; "
            "the texts are checked in this process",
            RuntimeWarning,
            stacklevel=4,
        )
        return False
    return True


@dataclass(frozen=True)
class TextPairs:
    """The candidate pairs as distinct text pairs: each pair's rows oriented (smaller fact id first), the
    index of its distinct (text a, text b) (-1: identical texts, no conflict), and those distinct pairs as
    indices into ``texts``."""

    rows: np.ndarray  # (m, 2) rows of facts, oriented
    which: np.ndarray  # (m,) index into ``distinct``, -1 for identical texts
    distinct: np.ndarray  # (u, 2) text indices, each distinct oriented text pair once
    texts: list[str]


def text_pairs(pairs: np.ndarray, facts: Sequence[Fact]) -> TextPairs:
    """Orient every candidate pair by fact id and reduce the pairs to their distinct (text a, text b):
    facts with the same content make the same text pair many times, and it is checked once per scan."""
    used, inverse = np.unique(pairs.reshape(-1), return_inverse=True)
    ends = inverse.reshape(-1, 2)
    ids = [facts[r].fact_id for r in used.tolist()]
    rank = np.empty(len(ids), dtype=np.int64)
    rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids), dtype=np.int64)
    swap = rank[ends[:, 1]] < rank[ends[:, 0]]
    ends = np.where(swap[:, None], ends[:, ::-1], ends)
    interned: dict[str, int] = {}
    tid = np.fromiter(
        (interned.setdefault(facts[r].content, len(interned)) for r in used.tolist()), np.int64, count=used.size
    )
    n_texts = max(1, len(interned))  # no text interned when there is no pair
    ta, tb = tid[ends[:, 0]], tid[ends[:, 1]]
    differ = ta != tb
    keys = ta * n_texts + tb
    uniq, back = np.unique(keys[differ], return_inverse=True)
    which = np.full(ends.shape[0], -1, dtype=np.int64)
    which[differ] = back.reshape(-1)
    distinct = np.stack([uniq // n_texts, uniq % n_texts], axis=1)
    return TextPairs(used[ends], which, distinct, list(interned))


def conflicting_pairs(
    pairs: np.ndarray,
    facts: Sequence[Fact],
    *,
    learned: bool = True,
    pool: Executor | None = None,
    chunk_pairs: int = CHECK_CHUNK_PAIRS,
    progress: Callable[[int], None] | None = None,
    worker_cpu: Callable[[float], None] | None = None,
) -> list[Found]:
    """Every candidate pair (rows of ``facts``) whose texts value-conflict, as (row a, row b, conflict) with
    fact a the smaller id, in the order of ``pairs`` (``learned``: config ``detector_learned``). Each
    distinct text pair is checked once, in chunks of about ``chunk_pairs`` distinct pairs grouped by
    connected component; with a ``pool`` (:func:`check_pool`) the chunks are checked in its processes (the
    scan passes one from :data:`PARALLEL_MIN_PAIRS` candidate pairs on). ``progress(done)`` hears the number of
    candidate pairs settled after each chunk (once, all of them, when no pair needs a check),
    ``worker_cpu(seconds)`` the CPU time a worker process spent
    on a chunk."""
    m = int(pairs.shape[0])
    if m == 0:
        return []
    tp = text_pairs(pairs, facts)
    per_text = np.bincount(tp.which[tp.which >= 0], minlength=tp.distinct.shape[0])
    found: dict[int, ValueConflict] = {}  # distinct text pair -> its conflict
    done = m - int(per_text.sum())  # pairs of identical texts: settled without a check
    if progress is not None and tp.distinct.shape[0] == 0:  # every pair's two texts identical: no chunk to wait for
        progress(done)
    for chunk, got, cpu in _checked_chunks(tp, chunk_order(tp.distinct, chunk_pairs), pool, learned):
        if cpu is not None and worker_cpu is not None:
            worker_cpu(cpu)
        found.update((int(chunk[k]), vc) for k, vc in got)
        done += int(per_text[chunk].sum())
        if progress is not None:
            progress(done)
    hit = np.zeros(tp.distinct.shape[0] + 1, dtype=bool)  # the last cell: identical texts (which = -1)
    hit[list(found)] = True
    positions = np.flatnonzero(hit[tp.which])
    rows = tp.rows[positions].tolist()
    return [(a, b, found[w]) for (a, b), w in zip(rows, tp.which[positions].tolist())]


def _chunk_texts(tp: TextPairs, chunk: np.ndarray) -> ChunkTexts:
    return [(tp.texts[a], tp.texts[b]) for a, b in tp.distinct[chunk].tolist()]


def _checked_chunks(
    tp: TextPairs, chunks: list[np.ndarray], pool: Executor | None, learned: bool
) -> Iterator[tuple[np.ndarray, list[tuple[int, ValueConflict]], float | None]]:
    """(chunk of distinct text pairs, (position in the chunk, conflict) of those that conflict, a worker's
    CPU seconds or None here) for each chunk, checked here or in the pool's processes (at most
    :data:`CHUNKS_IN_FLIGHT` chunks submitted at a time: the texts in flight stay bounded)."""
    if pool is None:
        for chunk in chunks:
            with collector_paused():  # as in a worker's chunk (check_chunk)
                found = check_texts(_chunk_texts(tp, chunk), learned)
            yield chunk, found, None
        return
    try:
        yield from _pooled_chunks(tp, chunks, pool, learned)
    except BrokenProcessPool:
        raise CRPError(
            "a text-check worker process ended before its chunk was checked (killed, or out of memory); "
            "nothing was written: run again, or with --check-workers 1 to check in this process"
        ) from None


def _pooled_chunks(
    tp: TextPairs, chunks: list[np.ndarray], pool: Executor, learned: bool
) -> Iterator[tuple[np.ndarray, list[tuple[int, ValueConflict]], float | None]]:
    pending: dict[Future[tuple[list[tuple[int, ValueConflict]], float]], np.ndarray] = {}
    queue = iter(chunks)
    while True:
        for chunk in queue:
            pending[pool.submit(check_chunk, _chunk_texts(tp, chunk), learned)] = chunk
            if len(pending) >= CHUNKS_IN_FLIGHT:
                break
        if not pending:
            return
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for fut in finished:
            got, cpu = fut.result()
            yield pending.pop(fut), got, cpu


#: how many progress reports the text check makes at most (plus the first and the last)
PROGRESS_STEPS = 100


def check_candidates(
    cand: np.ndarray,
    facts: Sequence[Fact],
    learned: bool,
    pool: Executor | None,
    progress: Callable[[int, int], None] | None,
    worker_cpu: Callable[[float], None],
    workers: int = 1,
) -> list[Found]:
    """The candidate pairs whose texts value-conflict (:func:`conflicting_pairs`) as the scan checks them:
    ``progress(done, n)`` throttled to at most :data:`PROGRESS_STEPS` reports after ``(0, n)``, the pool
    used from :data:`PARALLEL_MIN_PAIRS` pairs on, in chunks sized for the progress when checked here.
    Without a pool, ``workers > 1`` starts that many ``spawn`` workers for the check from
    :data:`PARALLEL_MIN_PAIRS` pairs on, stopped when it ends (the text check's memos then never grow
    in this process)."""
    n_cand = int(cand.shape[0])
    every = max(1, -(-n_cand // PROGRESS_STEPS))
    if progress is not None:
        progress(0, n_cand)
    last = [0]

    def report(done: int) -> None:
        if progress is not None and (done // every > last[0] // every or done == n_cand):
            progress(done, n_cand)
        last[0] = done

    if n_cand < PARALLEL_MIN_PAIRS:  # a worker's start and the texts' transfer cost more than the check
        pool, workers = None, 1
    with check_pool(workers if pool is None else 1, "spawn") as started:
        pool = pool if started is None else started
        chunk = CHECK_CHUNK_PAIRS if pool is not None else max(1, min(CHECK_CHUNK_PAIRS, every))
        return conflicting_pairs(
            cand, facts, learned=learned, pool=pool, chunk_pairs=chunk, progress=report, worker_cpu=worker_cpu
        )


def _start_methods() -> list[str]:
    return multiprocessing.get_all_start_methods() if os.name == "posix" else []

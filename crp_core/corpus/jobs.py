"""Long preparations in the background: progress with rate and ETA, cancel, one job per key.

No Streamlit here. A :class:`PreparationJob` runs one piece of work (typically
``prepare_corpus(kb, ..., progress=job.progress.update, cancel=job.progress.cancelled)``) in a
daemon thread; the thread only updates the job's :class:`EmbeddingProgress` (a plain object with a
lock), which any other thread reads through :meth:`EmbeddingProgress.snapshot`. A
:class:`JobRegistry` keeps one job per key (e.g. the CKF content fingerprint + index parameters), so
asking again for a key that is running re-attaches to that job instead of starting a second one.

Resuming is the embedding cache's part (``embed_texts`` persists every finished chunk): a job
started again after a cancel, a failure or a restart of the process embeds only the texts that no
finished chunk holds.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from crp_core.corpus.embedding import EmbeddingCancelled

T = TypeVar("T")
JobState = Literal["running", "done", "failed", "cancelled"]

#: finished jobs kept per registry (a finished job holds its result until it is dropped)
MAX_FINISHED_JOBS = 8


@dataclass(frozen=True)
class ProgressSnapshot:
    """One reading of a run's progress.

    ``resumed``: items already done when the run started (cache hits); ``rate``: items per second
    of the work done by this run (None until two readings apart in time); ``eta_s``: seconds left at
    that rate (None without a rate).
    """

    done: int
    total: int
    resumed: int
    elapsed_s: float
    rate: float | None
    eta_s: float | None
    cancel_requested: bool
    #: the HNSW index build after the embedding: vectors inserted of ``index_total`` (0 of 0: none yet)
    index_done: int = 0
    index_total: int = 0
    index_eta_s: float | None = None
    #: then the neighbour table the similarity graph is built from: facts queried of ``graph_total``
    graph_done: int = 0
    graph_total: int = 0
    graph_eta_s: float | None = None

    @property
    def fraction(self) -> float:
        """``done / total`` in [0, 1] (1.0 for an empty run); during an index build or the neighbour table's
        queries, that phase's own fraction."""
        if self.indexing:
            return min(1.0, self.index_done / self.index_total)
        if self.linking:
            return min(1.0, self.graph_done / self.graph_total)
        return min(1.0, self.done / self.total) if self.total else 1.0

    @property
    def indexing(self) -> bool:
        """True while an index build has begun and not finished."""
        return 0 < self.index_total and self.index_done < self.index_total

    @property
    def linking(self) -> bool:
        """True while the neighbour table of the similarity graph is being queried (begun, not finished)."""
        return 0 < self.graph_total and self.graph_done < self.graph_total


class _Phase:
    """One counted phase after the embedding (the index build, the neighbour table): its last reading and
    the time left at the pace since its first."""

    def __init__(self) -> None:
        self.done, self.total = 0, 0
        self._t0: float | None = None
        self._t_last = 0.0

    def record(self, done: int, total: int, now: float) -> None:
        if self._t0 is None:
            self._t0 = now
        self.done, self.total, self._t_last = int(done), int(total), now

    def eta_s(self) -> float | None:
        if self._t0 is None or self.done <= 0 or self._t_last <= self._t0:
            return None
        return (self.total - self.done) * (self._t_last - self._t0) / self.done


class EmbeddingProgress:
    """Thread-safe progress of one run, and its cancel flag.

    :meth:`update` is a ``Progress`` callback (``(done, total)``), :meth:`cancelled` a cancel flag
    for ``embed_texts`` / ``prepare_corpus``. The rate counts only the work of this run: it starts
    at the first reading after the resumed (cached) part, so cache hits and the model's load time
    do not inflate or deflate it.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._started = clock()
        self._done = 0
        self._total = 0
        self._resumed: int | None = None
        self._t0: float | None = None  # time of the first reading after the resumed part
        self._d0 = 0
        self._t_last: float | None = None
        self._index = _Phase()  # vectors inserted into the index
        self._graph = _Phase()  # facts queried for the neighbour table

    def indexing(self, done: int, total: int) -> None:
        """Record ``done`` of ``total`` vectors inserted into the index (a ``Progress`` callback)."""
        now = self._clock()
        with self._lock:
            self._index.record(done, total, now)

    def linking(self, done: int, total: int) -> None:
        """Record ``done`` of ``total`` facts queried for the similarity graph's neighbour table (a ``Progress``
        callback)."""
        now = self._clock()
        with self._lock:
            self._graph.record(done, total, now)

    def update(self, done: int, total: int) -> None:
        """Record ``done`` of ``total`` items (never goes backwards)."""
        now = self._clock()
        done = int(done)
        with self._lock:
            self._total = int(total)
            if self._resumed is None:  # the first reading: what the cache already held
                self._resumed = self._done = done
                return
            if done > self._done:
                if self._t0 is None:  # the rate starts at the first batch (after the model loaded)
                    self._t0, self._d0 = now, done
                self._done = done
                self._t_last = now

    def request_cancel(self) -> None:
        """Ask the run to stop at its next check (between batches)."""
        self._cancel.set()

    def cancelled(self) -> bool:
        """True once a cancel was requested (the run's cancel flag)."""
        return self._cancel.is_set()

    def snapshot(self) -> ProgressSnapshot:
        """The current reading (rate and ETA over this run's own work)."""
        now = self._clock()
        with self._lock:
            done, total, resumed = self._done, self._total, self._resumed or 0
            rate = None
            if self._t0 is not None and self._t_last is not None and self._t_last > self._t0 and done > self._d0:
                rate = (done - self._d0) / (self._t_last - self._t0)
            eta = (total - done) / rate if rate else None
            ix, gr = self._index, self._graph
            return ProgressSnapshot(
                done,
                total,
                resumed,
                now - self._started,
                rate,
                eta,
                self._cancel.is_set(),
                ix.done,
                ix.total,
                ix.eta_s(),
                gr.done,
                gr.total,
                gr.eta_s(),
            )


class PreparationJob(Generic[T]):
    """One background run of ``work(progress)``; its outcome is ``state`` / ``result`` / ``error``.

    ``work`` must not touch any UI: it only calls the progress object's ``update`` and polls its
    ``cancelled`` flag. A run that raises :class:`EmbeddingCancelled` ends ``"cancelled"``, any
    other exception ``"failed"`` (kept in ``error``), a return ``"done"`` (kept in ``result``).
    """

    def __init__(
        self, key: Hashable, work: Callable[[EmbeddingProgress], T], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.key = key
        self.progress = EmbeddingProgress(clock)
        self.result: T | None = None
        self.error: BaseException | None = None
        self._work = work
        self._state: JobState = "running"
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"crp-prepare-{abs(hash(key)) % 10**8}", daemon=True)

    def start(self) -> PreparationJob[T]:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            result = self._work(self.progress)
        except EmbeddingCancelled as exc:
            self.error, self._state = exc, "cancelled"
        except BaseException as exc:  # noqa: BLE001 - the job reports every failure to its reader
            self.error, self._state = exc, "failed"
        else:
            self.result, self._state = result, "done"
        finally:
            self._finished.set()

    @property
    def state(self) -> JobState:
        return self._state

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def cancel(self) -> None:
        """Ask the run to stop (it ends ``"cancelled"`` at its next check, or finishes first)."""
        self.progress.request_cancel()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run ended (or ``timeout`` seconds passed); True when it ended."""
        return self._finished.wait(timeout)


class JobRegistry:
    """One :class:`PreparationJob` per key, shared by every caller (thread-safe).

    :meth:`get_or_start` re-attaches to a running or successfully finished job of the key and
    starts a new one only when there is none, or the last one was cancelled or failed (the new run
    resumes from the cache). At most :data:`MAX_FINISHED_JOBS` finished jobs are kept. Not a memo
    (:mod:`crp_core.support.memo`): a running job is never dropped, whatever the bound, since callers
    re-attach to it; only finished ones beyond the bound are, oldest first.
    """

    def __init__(self, max_finished: int = MAX_FINISHED_JOBS) -> None:
        self.max_finished = max_finished
        self._jobs: OrderedDict[Hashable, PreparationJob[object]] = OrderedDict()
        self._lock = threading.Lock()
        self.started = 0  # jobs started so far (tests prove a re-attach starts none)

    def get(self, key: Hashable) -> PreparationJob[object] | None:
        with self._lock:
            return self._jobs.get(key)

    def get_or_start(self, key: Hashable, work: Callable[[EmbeddingProgress], object]) -> PreparationJob[object]:
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job.state in ("running", "done"):
                self._jobs.move_to_end(key)
                return job
            job = PreparationJob(key, work)
            self._jobs[key] = job
            self.started += 1
            self._trim()
        return job.start()

    def discard(self, key: Hashable) -> None:
        """Forget the key's job if it has finished (a running job is left alone)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job.finished:
                del self._jobs[key]

    def running(self) -> list[PreparationJob[object]]:
        with self._lock:
            return [j for j in self._jobs.values() if not j.finished]

    def _trim(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.finished]
        for k in finished[: max(0, len(finished) - self.max_finished)]:
            del self._jobs[k]

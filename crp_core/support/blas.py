"""numpy's BLAS on one thread while some work runs: the one guard of the library's BLAS threads.

The library's products are small (hundreds of rows by a few to tens of columns): OpenBLAS splits
those above its threading threshold over its threads, and handing such work to another thread
costs more than the arithmetic. One thread also makes those products' rounding independent of the
machine's core count (a threaded sgemm rounds differently with 1 and 2 threads); products below the
threshold run single-threaded either way, so their values are unchanged.

The limit is process-wide and reference counted: the first of any number of nested or concurrent
:func:`one_blas_thread` blocks (pipeline runs, suite runs, pair searches in worker threads, Ray
tasks) sets it, the last one out restores the thread counts it found.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

__all__ = ["one_blas_thread", "blas_threads", "blas_libraries"]


class _BlasGuard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._saved: list[tuple[Any, int]] = []  # (library, its thread count before the first block)
        self._threads = 1  # the count the first block set
        # threadpoolctl controllers of the BLAS libraries loaded at the first use (numpy's among them: the
        # package imports numpy; a BLAS another package loads later is not the library's and is left alone)
        self._libs: list[Any] | None = None

    def libraries(self) -> list[Any]:
        if self._libs is None:
            try:
                from threadpoolctl import ThreadpoolController

                self._libs = list(ThreadpoolController().select(user_api="blas").lib_controllers)
            except Exception:  # noqa: BLE001 - no threadpoolctl / unknown BLAS: leave the threads alone
                self._libs = []
        return self._libs

    @contextmanager
    def limit(self, threads: int) -> Iterator[None]:
        with self._lock:
            if self._inside == 0:
                self._threads = threads
                self._saved = [(lib, int(lib.get_num_threads())) for lib in self.libraries()]
                for lib, n in self._saved:
                    if n != threads:
                        _set_threads(lib, threads)
            self._inside += 1
        try:
            yield
        finally:
            with self._lock:
                self._inside -= 1
                if self._inside == 0:
                    for lib, n in self._saved:
                        if n != self._threads:
                            _set_threads(lib, n)
                    self._saved = []


def _set_threads(lib: Any, n: int) -> None:
    """Set ``lib``'s thread count from any thread: threadpoolctl lets only one "controlling" thread
    set a shared OpenBLAS pool, and the last block out (which restores) may run in another thread
    than the first one in (which set), so the control is released after each change."""
    lib.set_num_threads(n)
    release = getattr(type(lib), "clear_controlling_thread", None)
    if release is not None:
        release(force=True)


_GUARD = _BlasGuard()


def one_blas_thread() -> AbstractContextManager[None]:
    """Context manager: numpy's BLAS runs on one thread inside (nested and concurrent blocks share it)."""
    return _GUARD.limit(1)


def blas_threads(threads: int | None) -> AbstractContextManager[None]:
    """The guard with ``threads`` BLAS threads (the outermost block's count holds while any block is
    inside); ``None`` leaves the BLAS threads as they are."""
    if threads is None:
        return nullcontext()
    return _GUARD.limit(int(threads))


def blas_libraries() -> list[Any]:
    """The threadpoolctl controllers of the BLAS libraries the guard sets (empty without threadpoolctl)."""
    return list(_GUARD.libraries())

"""The one pause of Python's cyclic garbage collector, reference-counted across threads.

Building a large structure of acyclic objects (a million facts read from a CKF, a chunk of the detector's text
analyses) makes the collector run full passes over every tracked object again and again while they are being
created, for nothing: reference counts free them. :func:`collector_paused` turns the collector off for such a
block; it comes back on when the last block that paused it ends, and only if it was on when the first began,
so nested and concurrent blocks (two sessions loading at once) keep each other's pause. Cyclic garbage made
during a pause is not lost: the next collection after it finds it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block (also usable as a decorator); see the module's docstring."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()

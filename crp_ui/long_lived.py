"""The dashboard's long-lived objects kept out of the cyclic garbage collector's way (Python's
documented ``gc.freeze``; docs/decisions/ui.md).

Streamlit runs a full ``gc.collect(2)`` after every script run. The server process holds many tracked
objects that live as long as it does (imported modules, plotly's figure classes, the embedding model,
prepared corpora and their facts, contradiction tokens of a scan); a full collection walks them all
while holding the GIL. After each run :func:`after_run` collects what that run left (a walk of the
objects created since the last freeze only) and freezes the survivors, so Streamlit's own collection
walks almost nothing. Every :data:`FULL_EVERY` runs the frozen objects are unfrozen first, so a cycle
among them that has become garbage (an evicted cache entry, a closed session) is still reclaimed: the
collector's guarantee is kept, at most that many runs late.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["FULL_EVERY", "after_run"]

#: every this many runs, one full collection over everything (unfreeze, collect, freeze)
FULL_EVERY = 200

_lock = threading.Lock()
_runs = 0


def after_run() -> bool:
    """Collect the garbage of the runs since the last call and freeze what survives; True when this
    call unfroze everything first (the periodic full collection). Safe from concurrent sessions."""
    global _runs
    with _lock:
        _runs += 1
        full = _runs % FULL_EVERY == 1  # the first run (imports, first load) and every FULL_EVERY-th
        if full:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
        return full

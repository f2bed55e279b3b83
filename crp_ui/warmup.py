"""Loading an embedding model in the background, once per model per process (docs/decisions/ui.md, Caches).

The dashboard starts it as soon as a prepared corpus is at hand (:func:`crp_ui.cache.warm_embedder`), so
the first query edit finds the model loaded instead of waiting for it. The thread only calls the
embedder's own ``load`` (and counts one token, which loads its tokenizer): the embedder holds its lock
while it loads, so a text embedded meanwhile waits for that load and never starts a second one. No
Streamlit here: the thread never touches a session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from crp_core import Embedder

__all__ = ["load_quietly", "start", "started"]

_lock = threading.Lock()
#: the warm-up thread of each model id (at most one per model id per process)
_started: dict[str, threading.Thread] = {}


def load_quietly(embedder: Embedder) -> None:
    """Load ``embedder``'s model and tokenizer now. A failure is left for the first text that needs the
    model to report (it fails there again, visibly); an embedder without a lazy model has nothing to load."""
    load = getattr(embedder, "load", None)
    if load is None:
        return
    try:
        load()
        count = getattr(embedder, "count_tokens", None)
        if count is not None:
            count(["warm-up"])
    except Exception:  # noqa: BLE001 - a background warm-up never raises; the first real use reports it
        return


def start(model_id: str, resolve: Callable[[], Embedder | None]) -> threading.Thread | None:
    """The daemon thread loading the embedder ``resolve()`` gives for ``model_id``: started on the first call
    for that id, the same thread on every later one. None (and nothing started) when ``resolve()`` gives
    None. Never blocks on the load."""
    with _lock:
        thread = _started.get(model_id)
        if thread is not None:
            return thread
        embedder = resolve()
        if embedder is None:
            return None
        thread = threading.Thread(target=load_quietly, args=(embedder,), name=f"crp-warm-{model_id}", daemon=True)
        _started[model_id] = thread
        thread.start()
        return thread


def started(model_id: str) -> threading.Thread | None:
    """The warm-up thread started for ``model_id``, if any."""
    with _lock:
        return _started.get(model_id)

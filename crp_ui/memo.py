"""Process-wide memos of the dashboard, shared by every session: a locked LRU registry, and values
derived once per live immutable object (:func:`by_identity`: corpora, scenarios, configs, scans and
runs are immutable records).

Callers must not mutate what they get back.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")


class Registry:
    """A locked LRU mapping of at most ``size`` entries, for a process-wide cache every session reads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return None

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


#: derived keys memoised per object identity (a weak reference guards against a reused id)
_IDENTITY_MEMO: OrderedDict[tuple[str, int, Hashable], tuple[Any, Any]] = OrderedDict()
_IDENTITY_LOCK = threading.Lock()
_IDENTITY_MEMO_SIZE = 64


def by_identity(kind: str, obj: T, build: Callable[[T], R], extra: Hashable = ()) -> R:
    """``build(obj)`` once per live object ``obj`` and ``extra`` key (corpora, scenarios, configs and
    scans are immutable): the digests that key the run cache, and frames derived from a scan, are not
    recomputed on every rerun."""
    key = (kind, id(obj), extra)
    with _IDENTITY_LOCK:
        hit = _IDENTITY_MEMO.get(key)
        if hit is not None and hit[0]() is obj:
            _IDENTITY_MEMO.move_to_end(key)
            return cast(R, hit[1])
    value = build(obj)
    with _IDENTITY_LOCK:
        _IDENTITY_MEMO[key] = (weakref.ref(obj), value)
        while len(_IDENTITY_MEMO) > _IDENTITY_MEMO_SIZE:
            _IDENTITY_MEMO.popitem(last=False)
    return value

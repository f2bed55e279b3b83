"""Memoisation: a value computed once and found again by its key.

:class:`LRU` keeps at most ``size`` values by key, the least recently used dropped first (searches
of one index, pair searches per vector set, file digests). :class:`WeakMemo` keeps values derived
from an object for as long as the object lives: an :class:`LRU` per object, held through a weak
reference to it, so a knowledge base or a table dropped by its user takes its derived columns with
it and the memo never keeps one alive.

A pure function of hashable arguments is memoised with :func:`functools.lru_cache` (the standard
library's LRU, the same policy): this module is for values whose key is not the argument list, or
whose lifetime follows an object.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager, nullcontext
from typing import Generic, TypeVar

__all__ = ["LRU", "WeakMemo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
O = TypeVar("O")  # noqa: E741 - the owner object of a weak memo


class LRU(Generic[K, V]):
    """At most ``size`` values by key (``None``: no bound; 0: none kept), the least recently used
    dropped first. ``locked``: every access under the memo's own lock (a memo shared by threads
    that do not hold a lock of their own); a value is built outside it, so two threads may build
    the same value once each, and the last one stays."""

    def __init__(self, size: int | None, *, locked: bool = False) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock: AbstractContextManager[object] = threading.Lock() if locked else nullcontext()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: K) -> bool:
        return key in self._items

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        with self._lock:
            got = self._items.get(key)
            if got is not None:
                self._items.move_to_end(key)
            return got

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` under ``key`` (dropping the least recently used beyond the size); returns it."""
        with self._lock:
            if self.size == 0:
                return value
            self._items[key] = value
            self._items.move_to_end(key)
            if self.size is not None:
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
            return value

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """The value of ``key``, built by ``build()`` and kept when there is none."""
        got = self.get(key)
        return got if got is not None else self.put(key, build())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class WeakMemo(Generic[O, K, V]):
    """Values derived from an object ``obj``, by key, for as long as ``obj`` lives: an :class:`LRU`
    of at most ``per_object`` values (``None``: no bound) per object, the object held weakly (it
    must be hashable and weak-referenceable; equal objects share their values)."""

    def __init__(self, per_object: int | None = None) -> None:
        self.per_object = per_object
        self._memos: weakref.WeakKeyDictionary[O, LRU[K, V]] = weakref.WeakKeyDictionary()

    def memo(self, obj: O) -> LRU[K, V]:
        """The memo of ``obj`` (made empty on first use)."""
        got = self._memos.get(obj)
        if got is None:
            got = self._memos[obj] = LRU(self.per_object)
        return got

    def get(self, obj: O, key: K) -> V | None:
        got = self._memos.get(obj)
        return None if got is None else got.get(key)

    def put(self, obj: O, key: K, value: V) -> V:
        return self.memo(obj).put(key, value)

    def get_or_build(self, obj: O, key: K, build: Callable[[], V]) -> V:
        """The value of ``key`` for ``obj``, built by ``build()`` and kept when there is none."""
        return self.memo(obj).get_or_build(key, build)

    def clear(self) -> None:
        self._memos.clear()

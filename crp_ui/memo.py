"""Values derived once per live immutable object, shared by every session (:func:`by_identity`: corpora,
scenarios, configs, scans and runs are immutable records).

The memo mechanism is crp_core's (``crp_core.LRU``, ``crp_core.WeakMemo``): a process-wide registry every
session reads is an ``LRU(size, locked=True)``, values kept per result object a ``WeakMemo``.
:func:`by_identity` is a thin user of ``LRU``, because its keying genuinely differs from ``WeakMemo``'s:

* it keys by the object's identity (``id`` guarded by a weak reference against a reused id), not by the
  object: what it memoises is often unhashable (pandas DataFrames, scenarios holding lists) or hashed and
  compared field by field (frozen dataclasses such as ``CRPConfig``), which would cost on every rerun
  about what the memo saves;
* it keeps at most :data:`IDENTITY_ENTRIES` values over all objects (one bound for the process), where a
  ``WeakMemo`` keeps up to its bound per live object, and the dashboard keeps many objects alive (cached
  results, scans, corpora).

Callers must not mutate what they get back.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from crp_core import LRU

T = TypeVar("T")
R = TypeVar("R")

#: values kept by :func:`by_identity`, over all objects and kinds
IDENTITY_ENTRIES = 64

#: (kind, id(obj), extra) -> (a weak reference to obj, the value): the reference tells a live object from a
#: later one given the same id
_IDENTITY: LRU[tuple[str, int, Hashable], tuple[weakref.ref[Any], Any]] = LRU(IDENTITY_ENTRIES, locked=True)


def by_identity(kind: str, obj: T, build: Callable[[T], R], extra: Hashable = ()) -> R:
    """``build(obj)`` once per live object ``obj`` and ``extra`` key (corpora, scenarios, configs and
    scans are immutable): the digests that key the run cache, and frames derived from a scan, are not
    recomputed on every rerun."""
    key = (kind, id(obj), extra)
    hit = _IDENTITY.get(key)
    if hit is not None and hit[0]() is obj:
        return cast(R, hit[1])
    value = build(obj)  # outside the lock, as LRU.get_or_build builds
    _IDENTITY.put(key, (weakref.ref(obj), value))
    return value


__all__ = ["IDENTITY_ENTRIES", "by_identity"]

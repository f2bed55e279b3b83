"""Immutable values without CRP meaning: read-only numpy arrays, frozen dataclass instances built from
a dict of their fields, and values built on first read (:class:`DeferredTuple`, :class:`DeferredData`)
that then behave as the plain tuple or dict they stand for."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, SupportsIndex, TypeVar, overload

import numpy as np

_T = TypeVar("_T")
_V = TypeVar("_V")
_R = TypeVar("_R")


def frozen_array(a: Any, dtype: Any = None) -> np.ndarray:
    """A read-only copy-free view (copies only when the dtype changes)."""
    arr = np.asarray(a, dtype=dtype)
    if arr.flags.writeable:
        arr = arr.view()
        arr.setflags(write=False)
    return arr


def freeze_owned(a: np.ndarray) -> np.ndarray:
    """``a``, an array the caller has just made (a gather, a copy, a product), set read-only in place
    and returned: :func:`frozen_array` without the view, for a record's columns on hot paths."""
    a.setflags(write=False)
    return a


#: a slotted dataclass's slot writers by field name (built on first use, per class)
_SLOT_WRITERS: dict[type, dict[str, Callable[[Any, Any], None]]] = {}


def frozen_instance(cls: type[_R], fields: dict[str, Any]) -> _R:
    """An instance of the frozen dataclass ``cls`` with ``fields`` (every field): what the generated
    ``__init__`` builds, without its ``object.__setattr__`` per field (a ``__dict__`` filled at once, or
    each slot written by its own descriptor). Only for dataclasses with no ``__post_init__`` (the
    ``make`` class methods of the records a run builds by the thousand)."""
    obj = object.__new__(cls)
    if "__slots__" not in cls.__dict__:
        obj.__dict__.update(fields)
        return obj
    writers = _SLOT_WRITERS.get(cls)
    if writers is None:
        names = cls.__dataclass_fields__  # type: ignore[attr-defined]
        writers = _SLOT_WRITERS[cls] = {name: cls.__dict__[name].__set__ for name in names}
    if len(fields) != len(writers):
        raise TypeError(f"{cls.__name__} takes {len(writers)} fields, got {len(fields)}")
    for name, value in fields.items():
        writers[name](obj, value)
    return obj


class _Deferred(Generic[_V]):
    """A value built by ``build()`` on first read, then kept (the build dropped); pickles and deep-copies
    as the value itself. The base of :class:`DeferredData` and :class:`DeferredTuple`."""

    __slots__ = ("_build", "_value")

    def __init__(self, build: Callable[[], _V]) -> None:
        self._build: Callable[[], _V] | None = build
        self._value: _V | None = None

    @property
    def built(self) -> bool:
        """Whether the value was built (read at least once)."""
        return self._build is None

    def _get(self) -> _V:
        if self._value is None:
            assert self._build is not None
            self._value, self._build = self._build(), None
        return self._value

    def __reduce__(self) -> tuple[Callable[[_V], _V], tuple[_V]]:
        value = self._get()
        return (type(value), (value,))  # the plain dict / tuple it stands for

    def __repr__(self) -> str:
        return repr(self._get())


class DeferredData(_Deferred[dict[str, Any]], Mapping[str, Any]):
    """A dict built on first read, then kept: an audit event's data built from its (immutable) record,
    which most runs never read. Reads, equality, ``dict()`` and pickling behave as the plain dict it
    stands for."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __eq__(self, other: object) -> bool:
        return self._get() == (other._get() if isinstance(other, DeferredData) else other)

    __hash__ = None  # type: ignore[assignment]  # a mapping: unhashable, as a dict


class DeferredTuple(_Deferred[tuple[_T, ...]], Sequence[_T]):
    """A tuple built on first read, then kept: a run's per-fact outcomes, which a sweep or a tuning
    evaluation never reads. Reads, equality with a tuple and pickling behave as the tuple it stands for."""

    __slots__ = ()

    def __init__(self, build: Callable[[], Sequence[_T]]) -> None:
        super().__init__(lambda: tuple(build()))

    @overload
    def __getitem__(self, i: SupportsIndex) -> _T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[_T, ...]: ...

    def __getitem__(self, i: SupportsIndex | slice) -> _T | tuple[_T, ...]:
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[_T]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DeferredTuple):
            return self._get() == other._get()
        return self._get() == other if isinstance(other, tuple) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a cache of a pure build: compared by value, not hashed

"""The Coverage Set (SPEC-024 §2.1, §3) and its read-only snapshot (SPEC-027 §1.5).

``CoverageSet`` is immutable: ``extend`` returns a new set. ``CoverageSnapshot`` is the view a
fan-out branch receives: every mutation attempt (attribute assignment, ``append`` / ``extend`` /
``insert`` / ``remove`` / ``pop`` / ``clear``, item assignment or deletion, writing into its
arrays) raises :class:`crp_core.errors.SnapshotMutationError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import numpy as np
import numpy.typing as npt

from crp_core.errors import SnapshotMutationError

if TYPE_CHECKING:
    from crp_core.model import Scenario


def _readonly(a: npt.ArrayLike, dtype: npt.DTypeLike = np.float32) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class CoverageEntry:
    """One addressed sub-query (SPEC-024 §2.1): its embedding, depth weight and window."""

    sub_query_id: str
    label: str | None
    embedding: np.ndarray  # (d,) float32, read-only
    depth_weight: float
    window: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "embedding", _readonly(self.embedding).reshape(-1))
        object.__setattr__(self, "depth_weight", float(self.depth_weight))
        object.__setattr__(self, "window", int(self.window))


def _entry(
    sub_query_id: str, label: str | None, embedding: np.ndarray, depth_weight: float, window: int
) -> CoverageEntry:
    """A :class:`CoverageEntry` whose ``embedding`` is already a read-only float32 row (what ``__post_init__``
    makes of its argument), set as it is."""
    entry: CoverageEntry = object.__new__(CoverageEntry)
    entry.__dict__.update(
        sub_query_id=sub_query_id, label=label, embedding=embedding, depth_weight=depth_weight, window=window
    )
    return entry


class CoverageSet:
    """Immutable, ordered tuple of :class:`CoverageEntry` (SPEC-024 §2.1).

    ``embeddings`` is (e, d) float32 and ``depth_weights`` (e,), both read-only; ``dim`` is kept so
    an empty set still knows its embedding dimension.
    """

    __slots__ = ("_entries", "_embeddings", "_depth_weights", "_ids", "_dim")
    # the slots, written once by __init__ through object.__setattr__ (__setattr__ refuses every write)
    _entries: tuple[CoverageEntry, ...]
    _embeddings: np.ndarray
    _depth_weights: np.ndarray
    _ids: tuple[str, ...]
    _dim: int

    def __init__(self, entries: Iterable[CoverageEntry] = (), dim: int | None = None):
        ents = tuple(entries)
        for e in ents:
            if not isinstance(e, CoverageEntry):
                raise TypeError(f"CoverageSet holds CoverageEntry objects, got {type(e).__name__}")
        if ents:
            d = ents[0].embedding.shape[0]
            if dim is not None and dim != d:
                raise ValueError(f"coverage entry dimension {d} differs from the set's dimension {dim}")
            for e in ents:
                if e.embedding.shape[0] != d:
                    raise ValueError(
                        f"coverage entry {e.sub_query_id!r} has dimension {e.embedding.shape[0]}, expected {d}"
                    )
            emb = np.stack([e.embedding for e in ents]).astype(np.float32, copy=False)
        else:
            d = int(dim or 0)
            emb = np.zeros((0, d), dtype=np.float32)
        emb.setflags(write=False)
        w = np.array([e.depth_weight for e in ents], dtype=np.float64)
        w.setflags(write=False)
        object.__setattr__(self, "_entries", ents)
        object.__setattr__(self, "_embeddings", emb)
        object.__setattr__(self, "_depth_weights", w)
        object.__setattr__(self, "_ids", tuple(e.sub_query_id for e in ents))
        object.__setattr__(self, "_dim", d)

    # immutability ------------------------------------------------------------------------
    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("CoverageSet is immutable; use .extend(entries) to derive a new set")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("CoverageSet is immutable")

    def __reduce__(self) -> tuple[type[CoverageSet], tuple[tuple[CoverageEntry, ...], int | None]]:
        return (CoverageSet, (self._entries, self._dim or None))

    # construction ------------------------------------------------------------------------
    @classmethod
    def from_scenario(
        cls, scenario: Scenario, sub_query_vectors: np.ndarray, sub_query_ids: Sequence[str], dim: int | None = None
    ) -> CoverageSet:
        """One entry per addressed sub-query, in ``scenario.addressed`` order (docs/reference/scenarios.md).

        ``sub_query_vectors`` (m, d) are aligned with ``sub_query_ids`` (the scenario's sub-queries).
        """
        pos = {sid: i for i, sid in enumerate(sub_query_ids)}
        vecs = np.asarray(sub_query_vectors, dtype=np.float32)
        if dim is None and vecs.ndim == 2:
            dim = vecs.shape[1]
        chosen = [(sq, addressed, pos[sq.id]) for sq, addressed in scenario.coverage_entries if sq.id in pos]
        if not chosen or vecs.ndim != 2 or (dim is not None and vecs.shape[1] != dim):
            return cls(
                [CoverageEntry(sq.id, sq.label, vecs[i], a.depth_weight, a.window) for sq, a, i in chosen], dim=dim
            )
        # the entries' embeddings gathered once (a copy, read-only): each entry holds its row, the set the whole
        emb = vecs[[i for _, _, i in chosen]]
        emb.setflags(write=False)
        entries = tuple(
            _entry(sq.id, sq.label, emb[k], float(a.depth_weight), int(a.window)) for k, (sq, a, _) in enumerate(chosen)
        )
        weights = np.array([e.depth_weight for e in entries], dtype=np.float64)
        weights.setflags(write=False)
        got: CoverageSet = object.__new__(cls)
        for name, value in (
            ("_entries", entries),
            ("_embeddings", emb),
            ("_depth_weights", weights),
            ("_ids", tuple(e.sub_query_id for e in entries)),
            ("_dim", int(emb.shape[1])),
        ):
            object.__setattr__(got, name, value)
        return got

    def extend(self, entries: Iterable[CoverageEntry]) -> CoverageSet:
        """A new set holding this set's entries followed by ``entries``."""
        return CoverageSet(self._entries + tuple(entries), dim=self._dim or None)

    def snapshot(self) -> CoverageSnapshot:
        return CoverageSnapshot(self)

    # read access -------------------------------------------------------------------------
    @property
    def entries(self) -> tuple[CoverageEntry, ...]:
        return self._entries

    @property
    def embeddings(self) -> np.ndarray:
        return self._embeddings

    @property
    def depth_weights(self) -> np.ndarray:
        return self._depth_weights

    @property
    def ids(self) -> tuple[str, ...]:
        return self._ids

    @property
    def dim(self) -> int:
        return self._dim

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __iter__(self) -> Iterator[CoverageEntry]:
        return iter(self._entries)

    def __getitem__(self, i: int) -> CoverageEntry:
        return self._entries[i]

    def __repr__(self) -> str:
        return f"CoverageSet(ids={self._ids!r}, dim={self._dim})"


# ---- the read-only snapshot (SPEC-027 §1.5) -------------------------------------------------
_INPLACE_METHODS = ("fill", "put", "sort", "partition", "resize", "itemset", "setfield", "byteswap")
_INPLACE_FUNCTIONS = frozenset({np.copyto, np.place, np.put, np.putmask, np.put_along_axis})


def _plain(x: Any) -> Any:  # any numpy call argument: arrays, scalars, sequences of them
    if isinstance(x, SnapshotArray):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


class SnapshotArray(np.ndarray):
    """A read-only ndarray whose write attempts raise :class:`SnapshotMutationError`.

    Arithmetic on it returns plain numpy arrays (so a branch can compute with it freely).
    """

    def __setitem__(self, key: object, value: object) -> NoReturn:
        raise SnapshotMutationError("the Coverage Set snapshot is read-only (SPEC-027 §1.5)")

    def setflags(self, write: bool | None = None, align: bool | None = None, uic: bool | None = None) -> None:
        if write:
            raise SnapshotMutationError("the Coverage Set snapshot is read-only (SPEC-027 §1.5)")
        super().setflags(write=write, align=align, uic=uic)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        if out is not None and any(isinstance(o, SnapshotArray) for o in out):
            raise SnapshotMutationError("the Coverage Set snapshot is read-only (SPEC-027 §1.5)")
        return getattr(ufunc, method)(*_plain(inputs), **kwargs)

    def __array_function__(
        self, func: Callable[..., Any], types: Iterable[type], args: Iterable[Any], kwargs: Mapping[str, Any]
    ) -> Any:
        # numpy passes args as a tuple: its first item is the array an in-place function writes into
        if func in _INPLACE_FUNCTIONS and isinstance(next(iter(args), None), SnapshotArray):
            raise SnapshotMutationError("the Coverage Set snapshot is read-only (SPEC-027 §1.5)")
        return func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()})

    # deliberately not ndarray.copy's ``Self``: a copy of the snapshot is a plain, writable ndarray
    def copy(self, order: Literal["K", "A", "C", "F"] | None = "C") -> np.ndarray:  # type: ignore[override]
        return np.array(self.view(np.ndarray), order=order, copy=True)

    def astype(self, dtype: npt.DTypeLike | None, *args: Any, **kwargs: Any) -> np.ndarray:
        kwargs["subok"] = False
        return self.view(np.ndarray).astype(dtype, *args, **kwargs)


def _make_inplace_blocker(name: str) -> Callable[..., NoReturn]:
    def blocked(self: SnapshotArray, *args: object, **kwargs: object) -> NoReturn:
        raise SnapshotMutationError(f"the Coverage Set snapshot is read-only: {name}() refused (SPEC-027 §1.5)")

    blocked.__name__ = name
    return blocked


for _name in _INPLACE_METHODS:
    setattr(SnapshotArray, _name, _make_inplace_blocker(_name))


def _snapshot_array(a: np.ndarray) -> SnapshotArray:
    arr = np.array(a, copy=True).view(SnapshotArray)
    np.ndarray.setflags(arr, write=False)
    return arr


class _SnapshotEntry(CoverageEntry):
    """A Coverage Set entry seen through a snapshot: its fields and embedding refuse writes."""

    @classmethod
    def of(cls, e: CoverageEntry) -> _SnapshotEntry:
        out = cls(e.sub_query_id, e.label, e.embedding, e.depth_weight, e.window)
        object.__setattr__(out, "embedding", _snapshot_array(e.embedding))
        return out

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise SnapshotMutationError("the Coverage Set snapshot is read-only (SPEC-027 §1.5)")

    def __delattr__(self, name: str) -> NoReturn:
        raise SnapshotMutationError("the Coverage Set snapshot is read-only (SPEC-027 §1.5)")


class CoverageSnapshot:
    """Read-only view of a Coverage Set handed to a fan-out branch (SPEC-027 §1.3-1.5).

    Every mutation attempt raises :class:`SnapshotMutationError`. Branches accumulate their own
    additions locally, e.g. ``snapshot.coverage_set.extend(additions)`` (a new set).
    """

    __slots__ = ("_set", "_embeddings", "_depth_weights", "_entries")
    # the slots, written once by __init__ through object.__setattr__ (__setattr__ refuses every write)
    _set: CoverageSet
    _embeddings: SnapshotArray
    _depth_weights: SnapshotArray
    _entries: tuple[_SnapshotEntry, ...]

    def __init__(self, coverage_set: CoverageSet):
        object.__setattr__(self, "_set", coverage_set)
        object.__setattr__(self, "_entries", tuple(_SnapshotEntry.of(e) for e in coverage_set.entries))
        object.__setattr__(self, "_embeddings", _snapshot_array(coverage_set.embeddings))
        object.__setattr__(self, "_depth_weights", _snapshot_array(coverage_set.depth_weights))

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise SnapshotMutationError("the Coverage Set snapshot is read-only (SPEC-027 §1.5)")

    __setattr__ = _refuse
    __delattr__ = _refuse

    def __reduce__(self) -> tuple[type[CoverageSnapshot], tuple[CoverageSet]]:
        return (CoverageSnapshot, (self._set,))

    __setitem__ = _refuse
    __delitem__ = _refuse
    __iadd__ = _refuse
    append = _refuse
    extend = _refuse
    insert = _refuse
    remove = _refuse
    pop = _refuse
    clear = _refuse

    @property
    def coverage_set(self) -> CoverageSet:
        """The immutable set this snapshot views (derive local additions from it with ``.extend``)."""
        return self._set

    @property
    def entries(self) -> tuple[CoverageEntry, ...]:
        return self._entries

    @property
    def embeddings(self) -> SnapshotArray:
        return self._embeddings

    @property
    def depth_weights(self) -> SnapshotArray:
        return self._depth_weights

    @property
    def ids(self) -> tuple[str, ...]:
        return self._set.ids

    @property
    def dim(self) -> int:
        return self._set.dim

    def __len__(self) -> int:
        return len(self._set)

    def __bool__(self) -> bool:
        return bool(self._set)

    def __iter__(self) -> Iterator[CoverageEntry]:
        return iter(self._entries)

    def __getitem__(self, i: int) -> CoverageEntry:
        return self._entries[i]

    def __repr__(self) -> str:
        return f"CoverageSnapshot(ids={self.ids!r})"


#: what scoring reads (``embeddings``, ``depth_weights``, ``ids``, ``len``): a Coverage Set, or the
#: read-only snapshot a fan-out branch scores against
CoverageView = CoverageSet | CoverageSnapshot

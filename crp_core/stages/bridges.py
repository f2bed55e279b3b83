"""The connectors' ``touched_anchors`` and ``bridged_pairs`` (SPEC-025 §2.4; docs/reference/pipeline.md §3), built per
row on first read from the walk's hop matrix and the anchors' non-adjacency: a run scores hundreds of
connector candidates and reads the rows of a handful (the packed connectors' bridged anchors)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import SupportsIndex, TypeVar, overload

import numpy as np

from crp_core.stages.bits import bits_of, row_bits
from crp_core.stages.graph_walk import bridged_anchor_listing

_T = TypeVar("_T")
_U = TypeVar("_U")


class LazyRows(Sequence[_T]):
    """A read-only tuple-like sequence whose items are computed on first access (then cached).

    Used for the per-connector ``touched_anchors`` / ``bridged_pairs`` so that scoring hundreds of
    connector candidates does not build thousands of Python tuples nobody reads.
    """

    __slots__ = ("_n", "_item", "_cache")

    def __init__(self, n: int, item: Callable[[int], _T]):
        self._n = int(n)
        self._item = item
        self._cache: dict[int, _T] = {}

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: SupportsIndex) -> _T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[_T, ...]: ...

    def __getitem__(self, i: SupportsIndex | slice) -> _T | tuple[_T, ...]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._n)))
        return self._memo(self._cache, self._item, i)

    def _memo(self, cache: dict[int, _U], make: Callable[[int], _U], i: SupportsIndex) -> _U:
        """``make(i)`` for row ``i`` (negative counts from the end), computed once into ``cache``."""
        j = int(i)
        if j < 0:
            j += self._n
        if not 0 <= j < self._n:
            raise IndexError(i)
        got = cache.get(j)
        if got is None:
            got = make(j)
            cache[j] = got
        return got

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    # no __hash__: defining __eq__ alone sets ``__hash__ = None``, so a LazyRows is unhashable

    def __reduce__(self) -> tuple[type[tuple[_T, ...]], tuple[tuple[_T, ...]]]:
        return (tuple, (tuple(self),))  # pickles / deep-copies as the plain tuple it stands for

    def __repr__(self) -> str:
        return f"LazyRows({tuple(self)!r})"


class BridgedPairs(LazyRows[tuple[tuple[int, int], ...]]):
    """The connectors' ``bridged_pairs`` rows (a :class:`LazyRows`), plus :meth:`anchors`: the anchors
    those pairs name, in order of first appearance, read off the same bit masks without building the
    pairs (what packing needs per selected connector)."""

    __slots__ = ("_anchors_of", "_anchor_cache")

    def __init__(
        self, n: int, item: Callable[[int], tuple[tuple[int, int], ...]], anchors_of: Callable[[int], tuple[int, ...]]
    ):
        super().__init__(n, item)
        self._anchors_of = anchors_of
        self._anchor_cache: dict[int, tuple[int, ...]] = {}

    def anchors(self, i: int) -> tuple[int, ...]:
        """``tuple(dict.fromkeys(itertools.chain.from_iterable(self[i])))``: each anchor of row ``i``'s
        bridged pairs once, in the order the pairs name them."""
        return self._memo(self._anchor_cache, self._anchors_of, i)


class _Rows:
    """Row ``i``'s touched anchors, bridged pairs and bridged anchors, each read off the walk's arrays
    when first asked for. A connector's bridged pairs are its touched anchors' non-adjacent pairs
    (a < b in anchor order), row-major."""

    def __init__(self, anchors: np.ndarray, hops: np.ndarray, count: np.ndarray, non_adj: np.ndarray) -> None:
        self.anchor_list: list[int] = anchors.tolist()
        self.hops = hops
        self.count = count
        self.non_adj = non_adj
        # the (s, s) non-adjacency as nested lists, so a row costs one numpy call and a few dozen list
        # lookups (built on the first read of a row's pairs)
        self.apart: list[list[bool]] = []
        # for the bridged anchors alone, anchor position k is bit k: ``later[a]`` = the anchors after a
        # with no direct edge to it, so a's partners among the touched anchors T are ``later[a] & T``
        self.later: list[int] = []
        # the compiled listing of a row's bridged anchors (None where it does not apply), set on first use
        self.listing: Callable[[int], list[int]] | None = None
        self.checked = False

    def touched_positions(self, i: int) -> list[int]:
        return np.flatnonzero(self.hops[i] > 0).tolist()

    def touched(self, i: int) -> tuple[int, ...]:
        return tuple(self.anchor_list[k] for k in self.touched_positions(i))

    def pairs(self, i: int) -> tuple[tuple[int, int], ...]:
        if self.count[i] == 0:
            return ()
        if not self.apart:
            self.apart.extend(self.non_adj.tolist())
        apart, anchor_list = self.apart, self.anchor_list
        ts = self.touched_positions(i)
        return tuple((anchor_list[a], anchor_list[b]) for k, a in enumerate(ts) for b in ts[k + 1 :] if apart[a][b])

    def bridged(self, i: int) -> tuple[int, ...]:
        if self.count[i] == 0:
            return ()
        if not self.checked:
            self.listing, self.checked = bridged_anchor_listing(self.hops, self.non_adj), True
        if self.listing is not None:
            anchor_list = self.anchor_list
            return tuple([anchor_list[k] for k in self.listing(i)])
        if not self.later:
            self.later.extend(_later_masks(self.non_adj))
        return tuple(self.anchor_list[k] for k in _bridged_positions(self.later, bits_of(self.hops[i] > 0)))


def _bridged_positions(later: list[int], mask: int) -> list[int]:
    """The anchor positions of the bridged pairs among the touched anchors ``mask`` (bit k set when
    anchor position k is touched), each once, in the order the pairs name them."""
    seen = 0
    out: list[int] = []
    rest = mask
    while rest:  # the touched anchors, in anchor order
        low = rest & -rest
        rest ^= low
        a = low.bit_length() - 1
        partners = later[a] & mask
        if not partners:
            continue
        if not seen >> a & 1:
            out.append(a)
            seen |= 1 << a
        new = partners & ~seen
        seen |= new
        while new:
            low = new & -new
            new ^= low
            out.append(low.bit_length() - 1)
    return out


def connector_rows(
    anchors: np.ndarray, hops: np.ndarray, count: np.ndarray, non_adj: np.ndarray
) -> tuple[LazyRows[tuple[int, ...]], BridgedPairs]:
    """The connectors' ``touched_anchors`` and ``bridged_pairs`` rows from the walk (``hops``: (m, s) hop
    distance of each connector candidate to each anchor, ``count``: its bridged-pair count, ``non_adj``:
    (s, s) anchors with no direct edge): nothing is built per candidate up front."""
    rows = _Rows(anchors, hops, count, non_adj)
    m = hops.shape[0]
    return LazyRows(m, rows.touched), BridgedPairs(m, rows.pairs, rows.bridged)


def _later_masks(non_adj: np.ndarray) -> list[int]:
    """Per anchor position a: the int whose bit b is set for each later anchor b (b > a) with no direct edge
    to a (``non_adj[a, b]``)."""
    return row_bits(np.triu(non_adj, 1))

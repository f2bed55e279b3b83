"""The triage queue's views and counts: which rows of the queue frame (:func:`crp_ui.conflict_queue.queue_frame`)
a filter and an order leave, and the counts at the top of the queue.

A view (:class:`QueueView`) keeps the positions of its rows in the frame, in its order, and each row's pair key;
never a copy of the frame's columns. A page of it, and the download of all of it when clicked, take their rows
from the frame. However many filters and orders a session tries, each view it keeps costs its positions and its
keys, not another copy of every pair's texts.

Pure functions of the frame (no Streamlit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crp_core import PATTERNS

from .memo import by_identity
from .tables import n_pages

#: the queue's "Decided" filter; "disagreements": pairs whose operators hold different positions (the
#: two-person review policy, crp_core.review_statuses)
DECIDED_CHOICES = ("all", "undecided", "decided", "disagreements")

#: the queue's orders (its "Sort" picker, the URL's ``qsort``): name -> (column, ascending); ``triage`` is
#: the queue's own order (ties first, then the smallest margin; dismissed pairs last)
QUEUE_SORTS: dict[str, tuple[str, bool] | None] = {
    "triage": None,
    "similarity": ("similarity", False),
    "margin": ("margin", True),
    "decided": ("decided_at", False),
}


def filter_mask(
    frame: pd.DataFrame,
    *,
    patterns: Sequence[str] = (),
    source_types: Sequence[str] = (),
    statuses: Sequence[str] = (),
    decided: str = "all",
) -> np.ndarray:
    """Per row of ``frame``, whether it shows any of ``patterns``, has a fact of any of ``source_types`` /
    ``statuses`` (an empty selection does not filter), and is ``decided`` in "all" / "undecided" / "decided" /
    "disagreements" (the rows whose ``review`` is ``disagreement``)."""
    if decided not in DECIDED_CHOICES:
        raise ValueError(f"decided must be one of {DECIDED_CHOICES}, got {decided!r}")
    mask = np.ones(len(frame), dtype=bool)
    if patterns:
        mask &= np.logical_or.reduce([has.to_numpy(dtype=bool) for has in _holding(frame, patterns)])
    if source_types:
        mask &= (frame["source_a"].isin(source_types) | frame["source_b"].isin(source_types)).to_numpy(dtype=bool)
    if statuses:
        mask &= (frame["status_a"].isin(statuses) | frame["status_b"].isin(statuses)).to_numpy(dtype=bool)
    if decided == "undecided":
        mask &= ~frame["decided"].to_numpy(dtype=bool)
    elif decided == "decided":
        mask &= frame["decided"].to_numpy(dtype=bool)
    elif decided == "disagreements":
        mask &= (frame["review"] == "disagreement").to_numpy(dtype=bool)
    return mask


def filter_queue(
    frame: pd.DataFrame,
    *,
    patterns: Sequence[str] = (),
    source_types: Sequence[str] = (),
    statuses: Sequence[str] = (),
    decided: str = "all",
) -> pd.DataFrame:
    """The rows of ``frame`` :func:`filter_mask` keeps, as a frame."""
    return frame[filter_mask(frame, patterns=patterns, source_types=source_types, statuses=statuses, decided=decided)]


def order_rows(frame: pd.DataFrame, rows: np.ndarray, order: str = "triage") -> np.ndarray:
    """``rows`` (positions in ``frame``, ascending) in ``order`` (:data:`QUEUE_SORTS`): a stable sort of the
    order's column alone, so rows with equal values keep their triage order; "decided" puts the latest decision
    first and undecided pairs last."""
    if order not in QUEUE_SORTS:
        raise ValueError(f"order must be one of {tuple(QUEUE_SORTS)}, got {order!r}")
    how = QUEUE_SORTS[order]
    if how is None:
        return rows
    column, ascending = how
    values = frame[column].take(rows).reset_index(drop=True)
    ranked = values.sort_values(ascending=ascending, kind="mergesort", na_position="last").index.to_numpy()
    ordered: np.ndarray = rows[ranked]
    return ordered


def sort_queue(frame: pd.DataFrame, order: str = "triage") -> pd.DataFrame:
    """``frame`` in ``order`` over all its rows (:func:`order_rows`)."""
    if QUEUE_SORTS.get(order, ()) is None:
        return frame
    return frame.take(order_rows(frame, np.arange(len(frame)), order))


@dataclass(frozen=True, eq=False)
class QueueView:
    """The rows of ``frame`` a filter leaves, in an order: ``rows`` their positions in ``frame``, ``keys`` their
    pair keys in that order, ``index`` each key's place among them."""

    frame: pd.DataFrame
    rows: np.ndarray
    keys: list[str]
    index: dict[str, int]

    def __len__(self) -> int:
        return len(self.keys)

    def page(self, page: int, size: int) -> pd.DataFrame:
        """The rows of 1-based ``page`` of ``size`` rows (clamped into range), from the frame."""
        page = min(max(1, int(page)), n_pages(len(self), size))
        return self.frame.take(self.rows[(page - 1) * size : page * size])

    def first_undecided(self) -> str | None:
        """The key of the view's first undecided pair, in its order; the first pair when every pair is decided;
        None for an empty view (where the Conflicts page opens: docs/decisions/triage.md)."""
        if not self.keys:
            return None
        undecided = np.flatnonzero(~self.frame["decided"].to_numpy(dtype=bool)[self.rows])
        return self.keys[int(undecided[0])] if undecided.size else self.keys[0]

    def whole(self) -> pd.DataFrame:
        """Every row of the view, in order, as a frame (the download of the view: built when asked for)."""
        return self.frame.take(self.rows)


def _pair_keys(frame: pd.DataFrame) -> np.ndarray:
    """The frame's pair keys as one array of Python strings (once per frame: the views share its strings)."""
    return np.asarray(frame["pair"].tolist(), dtype=object)


def held_keys(frame: pd.DataFrame) -> frozenset[str]:
    """The pair keys the queue ``frame`` holds (once per frame)."""
    return by_identity("queue_keyset", frame, lambda fr: frozenset(fr["pair"].tolist()))


def queue_view(
    frame: pd.DataFrame,
    filters: tuple[Sequence[str], Sequence[str], Sequence[str]],
    decided: str = "all",
    order: str = "triage",
) -> QueueView:
    """The view of ``frame`` the ``filters`` (patterns, source types, statuses), ``decided`` and ``order`` leave."""
    pats, srcs, stats = filters
    kept = filter_mask(frame, patterns=pats, source_types=srcs, statuses=stats, decided=decided)
    rows = order_rows(frame, np.flatnonzero(kept), order)
    keys = by_identity("queue_pair_keys", frame, _pair_keys)[rows].tolist()
    return QueueView(frame, rows, keys, dict(zip(keys, range(len(keys)))))


def queue_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Counts at the top of the queue: pairs, ties, undecided, decided, dismissed, and per pattern."""
    out = {
        "pairs": int(len(frame)),
        "ties": int((frame["arbitration"] == "tie").sum()),
        "undecided": int((~frame["decided"]).sum()),
        "decided": int(frame["decided"].sum()),
        "dismissed": int((frame["arbitration"] == "dismissed").sum()),
    }
    out.update((p, int(has.sum()) if len(frame) else 0) for p, has in zip(PATTERNS, _holding(frame, PATTERNS)))
    return out


def _holding(frame: pd.DataFrame, patterns: Sequence[str]) -> list[pd.Series]:
    """Per pattern, which rows list it as a whole item of their ``patterns`` ("A, B"): one vectorised search each."""
    bounded = ", " + frame["patterns"].astype(str) + ", "
    return [bounded.str.contains(f", {p}, ", regex=False) for p in patterns]


__all__ = [
    "DECIDED_CHOICES",
    "QUEUE_SORTS",
    "QueueView",
    "filter_mask",
    "filter_queue",
    "order_rows",
    "queue_counts",
    "queue_view",
    "sort_queue",
]

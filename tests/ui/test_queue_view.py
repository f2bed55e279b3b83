"""The triage queue's views (crp_ui.queue_view): a view is the rows a filter and an order leave, kept as positions
into the queue frame; its pages and its whole are the rows the frame filtered and sorted as a frame would give."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from crp_ui import queue_view as qv

COLUMNS = (
    "pair", "patterns", "similarity", "margin", "decided_at", "decided", "source_a", "source_b", "status_a",
    "status_b", "review",
)  # fmt: skip
PATTERN_CELLS = ("NUMBER_CHANGED", "NEGATION_FLIP", "NUMBER_CHANGED, DATE_SHIFTED", "ENTITY_SUBSTITUTED")


def _row(i: int, draw) -> dict[str, object]:  # type: ignore[no-untyped-def]
    decided = draw(hs.booleans())
    return {
        "pair": f"p{i}",
        "patterns": draw(hs.sampled_from(PATTERN_CELLS)),
        "similarity": draw(hs.sampled_from((0.91, 0.95, 0.95, 0.99, float("nan")))),  # ties and a missing value
        "margin": draw(hs.sampled_from((0.0, 0.1, 0.1, 0.3))),
        "decided_at": draw(hs.sampled_from(("2026-11-02T10:00:00Z", "2026-11-03T09:00:00Z"))) if decided else "",
        "decided": decided,
        "source_a": draw(hs.sampled_from(("docs", "community"))),
        "source_b": draw(hs.sampled_from(("docs", "web"))),
        "status_a": draw(hs.sampled_from(("ACTIVE", "STALE"))),
        "status_b": "ACTIVE",
        "review": draw(hs.sampled_from(("", "disagreement"))),
    }


@hs.composite
def frames(draw) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    n = draw(hs.integers(0, 30))
    frame = pd.DataFrame([_row(i, draw) for i in range(n)], columns=list(COLUMNS))
    return frame.astype({"decided": bool})


def _reference(frame: pd.DataFrame, filters, decided: str, order: str) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    """The view as a frame: the filtered rows, sorted whole by the order's column (a stable sort, missing last)."""
    pats, srcs, stats = filters
    shown = qv.filter_queue(frame, patterns=pats, source_types=srcs, statuses=stats, decided=decided)
    how = qv.QUEUE_SORTS[order]
    if how is None:
        return shown
    return shown.sort_values(how[0], ascending=how[1], kind="mergesort", na_position="last")


@settings(max_examples=60, deadline=None)
@given(
    frames(),
    hs.sampled_from(((), ("NUMBER_CHANGED",), ("NEGATION_FLIP", "DATE_SHIFTED"))),
    hs.sampled_from(((), ("community",))),
    hs.sampled_from(((), ("STALE",))),
    hs.sampled_from(qv.DECIDED_CHOICES),
    hs.sampled_from(tuple(qv.QUEUE_SORTS)),
    hs.integers(1, 4),
)
def test_a_view_holds_the_rows_a_filtered_sorted_frame_holds(frame, pats, srcs, stats, decided, order, page):
    view = qv.queue_view(frame, (pats, srcs, stats), decided, order)
    want = _reference(frame, (pats, srcs, stats), decided, order)
    pd.testing.assert_frame_equal(view.whole(), want)
    assert view.keys == want["pair"].tolist() and len(view) == len(want)
    assert view.index == {k: i for i, k in enumerate(view.keys)}
    undecided = want[~want["decided"]]["pair"].tolist()
    assert view.first_undecided() == (undecided[:1] or view.keys[:1] or [None])[0]  # where the page opens
    size = 4
    last = max(1, -(-len(want) // size))
    start = (min(page, last) - 1) * size
    pd.testing.assert_frame_equal(view.page(page, size), want.iloc[start : start + size])  # clamped to the last


def test_a_view_keeps_positions_not_a_copy_of_the_frame():
    frame = pd.DataFrame(
        {
            "pair": ["a|b", "c|d", "e|f"],
            "patterns": ["NUMBER_CHANGED", "NEGATION_FLIP", "NUMBER_CHANGED"],
            "similarity": [0.91, 0.99, 0.95],
            "decided": [False, True, False],
        }
    )
    by_sim = qv.queue_view(frame, ((), (), ()), "all", "similarity")
    numbers = qv.queue_view(frame, (("NUMBER_CHANGED",), (), ()), "undecided", "similarity")
    assert by_sim.frame is frame and by_sim.rows.tolist() == [1, 2, 0] and by_sim.keys == ["c|d", "e|f", "a|b"]
    assert numbers.rows.tolist() == [2, 0] and numbers.index == {"e|f": 0, "a|b": 1}
    assert numbers.keys[0] is by_sim.keys[1]  # the views share the frame's key strings
    assert numbers.page(9, 1)["pair"].tolist() == ["a|b"]  # a page past the end: the last page
    # the page opens on the view's first undecided pair in its order; the first pair when all are decided
    assert by_sim.first_undecided() == "e|f"
    assert qv.queue_view(frame, ((), (), ()), "decided", "triage").first_undecided() == "c|d"
    assert qv.queue_view(frame.iloc[:0], ((), (), ()), "all", "triage").first_undecided() is None


def test_an_unknown_order_or_decided_choice_is_refused():
    frame = pd.DataFrame({"pair": ["a|b"], "patterns": ["NUMBER_CHANGED"], "decided": [False]})
    with pytest.raises(ValueError, match="order must be one of"):
        qv.order_rows(frame, np.arange(1), "authority")
    with pytest.raises(ValueError, match="decided must be one of"):
        qv.queue_view(frame, ((), (), ()), "maybe", "triage")

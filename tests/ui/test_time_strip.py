"""The winner-over-time strip and the envelope-over-time view (crp_ui.time_strip): the bands follow the
fact (green where it wins, red where it loses, whichever side it is on), the exact instants are listed,
labels from data are escaped."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crp_core import pair_timeline
from crp_core.config import CRPConfig
from crp_ui import time_strip as ts
from crp_ui.chart_style import OUTCOME_COLOURS
from tests.support.factories import fact, make_kb
from tests.support.timeline_worlds import KB, NOW, small_envelope_timeline

CONFIG = CRPConfig()


def _tl(a: str = "A", b: str = "B", kb=KB):
    return pair_timeline(kb, a, b, CONFIG, now=NOW)


def test_segments_are_cut_at_the_exact_flips():
    tl = _tl()
    seg = ts.winner_segments(tl)
    a = seg[seg["side"] == "A"]
    assert a["state"].tolist() == ["wins", "loses", "wins"]
    assert a["start"].tolist() == [tl.times[0], tl.flips[0].at, tl.flips[1].at]
    assert a["end"].tolist() == [tl.flips[0].at, tl.flips[1].at, tl.times[-1]]
    assert seg[seg["side"] == "B"]["state"].tolist() == ["loses", "wins", "loses"]


def test_the_colour_follows_the_fact_not_its_side():
    # the same pair with its sides swapped: each fact keeps its colour at every instant
    fig, swapped = ts.strip_figure(_tl()), ts.strip_figure(_tl("B", "A"))

    def colour_of(figure, fact_id):
        out = []
        for t in figure.data:
            if t.type == "bar":
                out += [(b, t.marker.color) for b, y in zip(t.base, t.y) if y.endswith(fact_id)]
        return sorted(out)

    assert colour_of(fig, "A") == colour_of(swapped, "A")
    assert colour_of(fig, "B") == colour_of(swapped, "B")
    wins = {t.name: t.marker.color for t in fig.data if t.type == "bar"}
    assert wins == {"wins": OUTCOME_COLOURS["in envelope"], "loses": OUTCOME_COLOURS["suppressed"]}


def test_instants_frame_lists_marks_flips_and_now():
    frame = ts.instants_frame(_tl())
    assert frame["what"].tolist() == [
        "half TTL: starts ageing",  # A, 2025-07-02 12:00
        "winner changes: A → B",
        "TTL: expired",  # A, 2026-01-01
        "half TTL: starts ageing",  # B, 2026-04-01 12:00
        "now (this run)",
        "winner changes: B → A",
        "TTL: expired",  # B, 2026-10-01
    ]
    assert frame["at"].iloc[0] == datetime(2025, 7, 2, 12, tzinfo=UTC)
    assert frame["winner"].tolist()[1] == "tie"  # at the flip itself the authorities are equal
    assert frame["relative margin"].iloc[0] == pytest.approx(0.1 / 0.8)


def test_figure_marks_now_and_the_flags():
    fig = ts.strip_figure(_tl())
    names = [t.name for t in fig.data]
    assert "half TTL (starts ageing)" in names and "TTL: expired" in names
    xs = [s.x0 for s in fig.layout.shapes if s.type == "line"]
    assert NOW in xs  # the now line
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert any(r.fillcolor == ts.FLAG_FILL["expired"] for r in rects)  # both expired after 2026-10-01
    assert any(r.fillcolor == ts.FLAG_FILL["close"] for r in rects)  # beside the flips


def test_the_written_note_sits_above_the_plot_beside_now():
    """y, written after x (where the timeline starts), gets a note ending at its instant above the plot (at the
    foot of the chart it sat over the bands); "now" starts at its line, so the two stand side by side."""
    kb = make_kb(
        [
            fact("x", source_type="web", modified_at="2026-03-01"),
            fact("y", source_type="news", modified_at="2026-05-01"),
        ]
    )
    fig = ts.strip_figure(pair_timeline(kb, "x", "y", CONFIG, now=NOW))
    notes = {a.text: a for a in fig.layout.annotations}
    assert set(notes) == {"y written", "now"}
    written, now = notes["y written"], notes["now"]
    assert (written.y, written.yref, written.yanchor, written.xanchor) == (1.0, "paper", "bottom", "right")
    assert datetime.fromisoformat(str(written.x)) == datetime(2026, 5, 1, tzinfo=UTC)
    assert (now.y, now.yanchor, now.xanchor) == (1.0, "bottom", "left")


def test_labels_from_data_are_escaped():
    kb = make_kb(
        [
            fact("<b>x</b>", source_type="web", modified_at="2025-01-01"),
            fact("y", source_type="news", modified_at="2025-01-01"),
        ]
    )
    fig = ts.strip_figure(pair_timeline(kb, "<b>x</b>", "y", CONFIG, now=NOW))
    text = fig.to_json()
    assert "<b>x" not in text and "\\u003cb\\u003ex" not in text and "&lt;b&gt;x" in text


def test_envelope_figure_rows_and_now_column():
    env = small_envelope_timeline()
    fig = ts.envelope_figure(env, ("A", "B"), now=NOW)
    hm = fig.data[0]
    assert list(hm.y) == ["◆ A", "F1", "F2"]  # the pair's facts first
    assert hm.z.tolist() == [[0, 1, 1], [1, 1, 1], [1, 0, 0]]
    assert list(hm.x) == ["2026-01-01", "2026-06-01 (now)", "2026-12-01"]

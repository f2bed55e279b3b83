"""The scenario's labels on the run pages (Overview, Envelope, Score breakdown): the marks of
:func:`crp_core.label_marks` as a ``label`` column, a count line, a short legend and a table of the
labelled facts. Nothing is drawn when the scenario has no label naming a fact (docs/decisions/labels.md).

Every value drawn from data goes through dataframes or escaped Markdown; no HTML.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
import streamlit as st

from crp_core import MARK_KINDS, MARK_MEANINGS, LabelMarks, PipelineResult, label_marks

from . import render, tables

#: the name of the column that carries a fact's mark in the pages' tables
LABEL_COLUMN = "label"
MARKS_COLUMNS = ("fact_id", LABEL_COLUMN, "ended", "reason")
#: the reason column's width (px) and what it holds; a reason wraps within it on rows of :func:`reason_row_height`
REASON_WIDTH_PX = 560
REASON_HELP = (
    "Why the fact carries its mark: the label, where the run put the fact and why (a gated fact's relevance against "
    "cdr_min_relevance). A long reason wraps; double-click a cell to read it whole."
)
#: the characters of one reason line at that width (the dashboard's table font), the lines a row holds at most
REASON_LINE_CHARS = 80
REASON_LINES = 4
#: the rows a table of tall rows shows without scrolling (a scenario labels a handful of facts)
SHOWN_ROWS = 12
#: the header row and the frame (px) added to the rows' heights
HEADER_PX = 40
#: a wrapped line's height and the row's padding (px); Streamlit wraps only rows taller than 4rem (64 px)
LINE_PX = 20
ROW_PAD_PX = 16
WRAP_MIN_ROW_PX = 68
#: the badge tone of a mark on a fact card: a broken label red, a met one green
MARK_TONES = {"LEAK": "red", "WRONG WINNER": "red", "MISSING": "red", "EXPECTED WINNER": "green", "OK": "green"}
#: how a mark's state reads in the ``ended`` column
STATE_WORDS = {
    "packed": "packed",
    "suppressed": "suppressed",
    "dropped_for_budget": "dropped for the budget",
    "selected": "selected, not packed",
    "scored": "scored, not selected",
    "gated": "gated",
    "not_retrieved": "not retrieved",
    "unknown": "not in the KB",
}


def marks_of(result: PipelineResult) -> LabelMarks | None:
    """The marks of the run's scenario labels, once per result; None when no label names a fact."""
    expect = result.scenario.expect
    if expect is None or not expect.fact_ids():
        return None
    got: LabelMarks = tables.memo(result, "label_marks", lambda: label_marks(result, expect))
    return got


def label_help() -> str:
    """The legend as one help text (a column's tooltip)."""
    return " ".join(f"{k}: {MARK_MEANINGS[k]}." for k in MARK_KINDS)


def with_label(df: pd.DataFrame, marks: LabelMarks | None, *, column: str = "fact_id") -> pd.DataFrame:
    """``df`` with a ``label`` column after ``column`` (each fact's mark, "" when it carries none); ``df``
    itself when there are no marks."""
    if marks is None:
        return df
    return tables.with_marks(df, marks.kinds(), column=column, name=LABEL_COLUMN)


def mark_badges(kind: str | None) -> tuple[tuple[str, str], ...]:
    """The (text, tone) badge of a fact card for a mark's kind; none for a fact without a mark."""
    if kind is None:
        return ()
    return ((f"label: {kind}", MARK_TONES.get(kind, "gray")),)


def label_config(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` (a ``column_config`` mapping) with the ``label`` column's help (the legend)."""
    out = dict(config)
    out[LABEL_COLUMN] = st.column_config.TextColumn(
        LABEL_COLUMN, help=label_help(), width=140
    )  # "EXPECTED WINNER" whole
    return out


def marks_frame(marks: LabelMarks, *, packed: bool | None = None) -> pd.DataFrame:
    """One row per mark (all, or only the packed / the not packed facts): fact id, mark, where it ended,
    and why (the reason names the envelope position of a packed fact)."""
    rows = [
        {
            "fact_id": m.fact_id,
            LABEL_COLUMN: m.kind,
            "ended": STATE_WORDS.get(m.state, m.state),
            "reason": m.reason,
        }
        for m in marks.marks
        if packed is None or m.packed == packed
    ]
    return pd.DataFrame(rows, columns=list(MARKS_COLUMNS))


def summary(marks: LabelMarks) -> None:
    """The count line (a warning when a label is broken) and the legend under it."""
    line = f"Scenario labels: {render.md_escape(marks.summary())}"
    broken = any(m.broken for m in marks.marks)
    if broken:
        st.warning(line, icon=":material/label:")
    else:
        st.success(line, icon=":material/label:")
    st.caption(" · ".join(f"**{k}** {render.md_escape(MARK_MEANINGS[k])}" for k in MARK_KINDS))


def reason_row_height(reasons: list[str]) -> int | None:
    """The rows' height (px) that shows the longest of ``reasons`` whole, wrapped in the reason column (at most
    :data:`REASON_LINES` lines; a longer one is read whole by double-clicking its cell); None (the default height)
    when every reason fits on one line. Streamlit wraps a cell's text only in rows taller than 4rem."""
    longest = max((len(r) for r in reasons), default=0)
    lines = min(REASON_LINES, -(-longest // REASON_LINE_CHARS))
    if lines <= 1:
        return None
    return max(WRAP_MIN_ROW_PX, ROW_PAD_PX + LINE_PX * lines)


def table_height(rows: int, row_height: int | None) -> int | Literal["auto"]:
    """The height (px) of a table of ``rows`` rows of ``row_height`` that shows up to :data:`SHOWN_ROWS` of them
    without scrolling; Streamlit's own ("auto") for rows of the default height."""
    return "auto" if row_height is None else HEADER_PX + row_height * min(rows, SHOWN_ROWS)


def marks_table(marks: LabelMarks, *, key: str, packed: bool | None = None) -> None:
    """The labelled facts as a table (see :func:`marks_frame`): the reason column wide, its rows tall enough for
    the longest reason to wrap (:func:`reason_row_height`), every row in view (up to :data:`SHOWN_ROWS`)."""
    frame = marks_frame(marks, packed=packed)
    cfg = label_config(
        {
            "ended": st.column_config.TextColumn("ended", help="where the fact ended in this run"),
            "reason": st.column_config.TextColumn("reason", width=REASON_WIDTH_PX, help=REASON_HELP),
        }
    )
    row = reason_row_height(frame["reason"].tolist())
    height = table_height(len(frame), row)
    render.dataframe(frame, hide_index=True, width="stretch", column_config=cfg, key=key, row_height=row, height=height)


def section(result: PipelineResult, *, key: str) -> LabelMarks | None:
    """The Overview's part: a heading, the count line, the legend and every labelled fact; nothing (and
    None) without labels."""
    marks = marks_of(result)
    if marks is None:
        return None
    st.subheader("Scenario labels")
    summary(marks)
    marks_table(marks, key=key)
    return marks

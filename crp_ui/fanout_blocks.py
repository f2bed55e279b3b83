"""What the Fan-out page draws of a step: the comparison strip (``st.metric`` cards), the Coverage Set and
fact ids as chips, and the SPEC-027 §1.1 timeline.

Chips and timeline rows are small HTML (one ``st.html`` block each, instead of an element per id): built
from escaped pieces only (:func:`crp_ui.render.html_text`, :func:`attr`), carrying classes and ``data-*``
attributes, their look the stylesheet's (:mod:`crp_ui.theme`). Each chip carries ``data-id`` and ``data-hl``
and each row ``data-index``, so tests read what is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd
import streamlit as st

from crp_core import FANOUT_DUPLICATES, FanoutStep

from .fanout_steps import REACHING_MODEL, REMOVED, actor, step_time, step_what
from .render import html_text
from .theme import BRANCH_COLOURS

#: the chip kinds: Coverage Set entries, sub-queries, facts (a highlighted fact is a duplicate)
CHIP_KINDS = ("cov", "sq", "fact")


def attr(text: object) -> str:
    """Text for an HTML attribute value: escaped like :func:`html_text`, line breaks as spaces."""
    s = "" if text is None else str(text)
    return html_text(s.replace("\r", " ").replace("\n", " "))


def chips_html(
    ids: Sequence[str],
    *,
    highlight: Iterable[str] = (),
    kind: str = "cov",
    empty: str = "(empty)",
    tips: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> str:
    """Inline chips for ids (escaped); ``highlight`` ones are marked (``+`` for a Coverage Set entry added
    at this step, ``⚠`` for a duplicate fact) and coloured by the stylesheet. ``tips`` (id -> text) become
    the chip's hover title (escaped); ``labels`` (id -> text) what the chip shows instead of the id (a fact's
    shortened text; the id stays in ``data-id`` and belongs in the tip)."""
    if kind not in CHIP_KINDS:
        raise ValueError(f"kind must be one of {CHIP_KINDS}, got {kind!r}")
    hl = set(highlight)
    if not ids:
        return f'<span class="crp-empty">{html_text(empty)}</span>'
    out = []
    for i in ids:
        on = i in hl
        mark = ("+ " if kind == "cov" else "⚠ ") if on else ""
        tip = f' title="{attr(tips[i])}"' if tips and i in tips else ""
        shown = labels.get(i, i) if labels else i
        out.append(
            f'<span class="crp-{kind}" data-id="{attr(i)}" data-hl="{int(on)}"{tip}>{mark}{html_text(shown)}</span>'
        )
    return "".join(out)


#: a timeline row with more fact chips than this folds them (``<details>``) behind a count
FOLD_FACTS = 3


def folded(summary: str, body: str) -> str:
    """``body`` folded behind ``summary`` (a ``<details>`` element; the summary escaped)."""
    return f'<details class="crp-fold"><summary>{html_text(summary)}</summary>{body}</details>'


def coverage_html(step: FanoutStep, mode: str, tips: Mapping[str, str] | None = None) -> str:
    """The Coverage Set a step sees, as chips (the entries added at this step highlighted), in a block that
    names the run (``mode``: "partitioned" / "naive") and the step."""
    chips = chips_html(step.coverage, highlight=step.added, tips=tips)
    return (
        f'<div class="crp-coverage" data-mode="{attr(mode)}" data-step="{int(step.index)}">'
        f"<b>Coverage Set</b> ({len(step.coverage)}): {chips}</div>"
    )


def _colour_key(branch: int | None) -> str:
    """The ``data-colour`` of a timeline row: the branch's colour slot, "parent" for the parent."""
    return "parent" if branch is None else str(int(branch) % len(BRANCH_COLOURS))


def timeline_html(
    steps: Sequence[FanoutStep],
    current: int,
    *,
    duplicates: Iterable[str] = (),
    show_facts: bool = True,
    title: str = "",
    labels: Mapping[str, str] | None = None,
    tips: Mapping[str, str] | None = None,
) -> str:
    """The timeline of SPEC-027 §1.1 up to ``current``: one row per step, the current one emphasised.

    Row: ``T<n> · Branch k · what happened`` then the facts reported at that step (duplicates
    highlighted; shown as ``labels``, the fact's text, with ``tips`` on hover; more than
    :data:`FOLD_FACTS` of them folded behind their count) and the Coverage Set entries added at that step.
    """
    dups = set(duplicates)
    rows = []
    for s in steps[: current + 1]:
        head = (
            f'<span class="crp-step-time">{html_text(step_time(s))}</span> · '
            f'<span class="crp-step-actor">{html_text(actor(s))}</span> · {html_text(step_what(s))}'
        )
        bits = []
        if show_facts and s.facts:
            chips = chips_html(s.facts, highlight=dups, kind="fact", labels=labels, tips=tips)
            n_dup = sum(1 for f in s.facts if f in dups)
            more = f", {n_dup} duplicate" if n_dup else ""
            bits.append(
                folded(f"facts ({len(s.facts)}{more})", chips) if len(s.facts) > FOLD_FACTS else "facts: " + chips
            )
        if s.added:
            bits.append("coverage +: " + chips_html(s.added, highlight=s.added))
        body = "".join(f'<div class="crp-step-line">{b}</div>' for b in bits)
        current_class = " crp-current" if s.index == current else ""
        rows.append(
            f'<div class="crp-step{current_class}" data-index="{s.index}" data-colour="{_colour_key(s.branch)}">'
            f"{head}{body}</div>"
        )
    head = f'<div class="crp-timeline-title">{html_text(title)}</div>' if title else ""
    return f'<div class="crp-timeline">{head}{"".join(rows)}</div>'


#: what a duplicate card counts, before its two values
MEASURE_HELP = {
    REACHING_MODEL: "Cross-branch duplicates whose every copy the model receives (the naive race has no fan-in "
    "dedup). ",
    REMOVED: "Cross-branch duplicates the fan-in dedup (SPEC-027 §1.6) caught: one copy kept, the others "
    "removed before the model. ",
}


def comparison_strip(frame: pd.DataFrame) -> None:
    """The comparison strip (:func:`crp_ui.fanout_steps.comparison_frame`) as one bordered metric per
    measure (the fan-out duplicates as their two parts, reaching the model and removed at fan-in): the
    partitioned run's value, its difference from the naive run's beside it. Fewer duplicates
    reaching the model is the better side (coloured); the other measures are shown without a colour."""
    rows = [r for r in frame.itertuples(index=False) if r.measure != FANOUT_DUPLICATES]  # its split is drawn
    # the duplicate measures in a row of their own, wide enough for their whole names
    dup_rows = [r for r in rows if r.measure in (REACHING_MODEL, REMOVED)]
    rest = [r for r in rows if r.measure not in (REACHING_MODEL, REMOVED)]
    columns = (list(st.columns(len(dup_rows))) if dup_rows else []) + (list(st.columns(len(rest))) if rest else [])
    for column, row in zip(columns, dup_rows + rest):
        naive, part = int(row.naive), int(row.partitioned)
        column.metric(
            str(row.measure),
            part,
            delta=part - naive,
            delta_color="inverse" if row.measure == REACHING_MODEL else "off",
            delta_arrow="auto" if part != naive else "off",
            delta_description=f"vs naive ({naive})",
            help=MEASURE_HELP.get(str(row.measure), "") + f"naive {naive} · partitioned {part}",
            border=True,
        )

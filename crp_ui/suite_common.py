"""What the suite views share: each metric's description and direction (docs/decisions/suites.md §3),
numbers as the tables show them, the better / worse verdict of a value against a baseline, and a
suite's problems grouped per scenario file."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import SupportsFloat

from crp_core import METRICS, MetricInfo, Problem

from . import render

#: each suite metric by name
METRIC_INFO: Mapping[str, MetricInfo] = {m.name: m for m in METRICS}
#: the colour of a suite mean (line and markers)
MEAN_COLOUR = "#1f5fa8"


def metric_label(name: str) -> str:
    """``recall (higher is better)``: the metric and its direction."""
    m = METRIC_INFO[name]
    return f"{m.name} ({m.better} is better)"


def number(v: SupportsFloat | None) -> float | None:
    """A metric value for a table or a plot: None for a missing value or NaN."""
    if v is None:
        return None
    x = float(v)
    return None if math.isnan(x) else x


def verdict(m: MetricInfo, value: float | None, baseline: float | None) -> str:
    """``better`` / ``worse`` / ``same`` of ``value`` against ``baseline`` in the metric's direction."""
    if value is None or baseline is None:
        return ""
    if math.isclose(value, baseline, rel_tol=0.0, abs_tol=1e-12):
        return "same"
    up = value > baseline
    return "better" if up == (m.better == "higher") else "worse"


def over_the_suite(m: MetricInfo) -> str:
    """How a metric is summed up over the suite's scenarios: its ``mean`` (fractions, tokens) or ``total``."""
    return "mean" if m.fraction or m.name == "tokens" else "total"


def problems_by_file(problems: Sequence[Problem], *, per_file: int, files: int) -> str:
    """Markdown of loader problems grouped by scenario file (a problem without one under ``(suite)``):
    per file its count and at most ``per_file`` problems (line, field, message), at most ``files`` files;
    what is left out is counted."""
    groups: dict[str, list[Problem]] = {}
    for p in problems:
        groups.setdefault(getattr(p, "file", "") or "(suite)", []).append(p)
    out: list[str] = []
    for name, probs in list(groups.items())[:files]:
        out.append(f"**{render.md_escape(name)}**: {len(probs)} problem(s)")
        for p in probs[:per_file]:
            where = f"line {p.line}" if p.line else "file"
            out.append(f"- {where}, field `{p.field.replace('`', '')}`: {render.md_escape(p.message)}")
        if len(probs) > per_file:
            out.append(f"- … and {len(probs) - per_file} more in {render.md_escape(name)}")
        out.append("")
    if len(groups) > files:
        rest = list(groups.values())[files:]
        out.append(f"… and {sum(len(g) for g in rest)} problem(s) in {len(rest)} more file(s)")
    return "\n".join(out).strip()

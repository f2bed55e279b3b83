"""The Fan-out simulator page's views (SPEC-027 §1), one name space for the page.

Nothing here recomputes a score: every number shown comes from the :class:`~crp_core.FanoutResult` the
pipeline returned (``steps``, ``naive_steps``, the branch CDR tables). This module holds the page's
scenario / config overrides (:func:`page_scenario`, :func:`page_config`); the rest lives in small modules,
re-exported here:

* :mod:`crp_ui.fanout_partitions`: the partition rule, the partitions and their 2-D projection (a plotly
  scatter);
* :mod:`crp_ui.fanout_steps`: the stepper (each step in words, the naive step beside it, the frames);
* :mod:`crp_ui.fanout_blocks`: the comparison strip (metrics), the chips and the timeline (escaped HTML).
"""

from __future__ import annotations

from collections.abc import Iterable

from crp_core import PARTITIONS, RULE_KMEANS, RULE_ONE_EACH, RULE_SINGLE, CRPConfig, Scenario

from .fanout_blocks import FOLD_FACTS, attr, chips_html, comparison_strip, coverage_html, folded, timeline_html
from .fanout_partitions import (
    PCA_SEED,
    Projection,
    partition_figure,
    partitions_frame,
    partitions_table,
    project_partitions,
    rule_text,
)
from .fanout_steps import (
    REACHED_MODEL,
    REACHING_MODEL,
    REMOVED,
    REMOVED_AT_FAN_IN,
    SHORT_TEXT,
    STEP_TIME,
    actor,
    branches_frame,
    chosen_by_several,
    comparison_frame,
    coverage_frame,
    coverage_tips,
    dedup_frame,
    dedup_report_text,
    duplicate_fact_ids,
    duplicates_sentence,
    fact_labels,
    fact_texts,
    fact_tips,
    naive_step_for,
    parse_step_param,
    picks,
    same_step,
    short_text,
    step_facts_frame,
    step_label,
    step_time,
    step_what,
)

#: the fan-out widths the page offers
MIN_WIDTH, MAX_WIDTH = 1, 8
#: the response header that names the partitions (SPEC-027 §1.7)
PARTITIONS_HEADER = PARTITIONS


def clamp_width(width: int | float | str | None) -> int:
    """The scenario's ``fanout_width`` as a value of the page's width control (1..8; 0 counts as 1)."""
    try:
        w = MIN_WIDTH if width is None else int(width)
    except ValueError:
        w = MIN_WIDTH
    return min(max(w, MIN_WIDTH), MAX_WIDTH)


def page_scenario(
    scenario: Scenario, *, width: int, residual_ids: Iterable[str], branch_depth_weight: float
) -> Scenario:
    """The scenario with the page's controls applied (``Scenario.with_residual``; this page only)."""
    return scenario.with_residual(residual_ids, fanout_width=width, depth_weight=branch_depth_weight)


def page_config(config: CRPConfig, branch_depth_weight: float) -> CRPConfig:
    """``config`` with the page's branch depth weight (``config.replace``; same object when unchanged)."""
    if float(branch_depth_weight) == float(config.branch_depth_weight):
        return config
    return config.replace(branch_depth_weight=float(branch_depth_weight))


def inactive_reason(width: int, residual_size: int) -> str:
    """Why fan-out does not run (docs/reference/scenarios.md), '' when it does."""
    if int(width) <= 1:
        return (
            f"Width {int(width)}: no fan-out (docs/reference/scenarios.md: 0 or 1 = no fan-out). One window retrieves "
            "sequentially, so there is nothing to partition and no "
            f"{PARTITIONS_HEADER} header. Choose a width of 2 or more."
        )
    if residual_size == 0:
        return (
            "The ResidualSet is empty (every sub-query is addressed): there is nothing left to fan out. "
            "Put some sub-queries back into the ResidualSet."
        )
    return ""


__all__ = [
    "FOLD_FACTS",
    "MAX_WIDTH",
    "MIN_WIDTH",
    "PARTITIONS_HEADER",
    "PCA_SEED",
    "RULE_KMEANS",
    "RULE_ONE_EACH",
    "RULE_SINGLE",
    "STEP_TIME",
    "Projection",
    "actor",
    "attr",
    "branches_frame",
    "chips_html",
    "chosen_by_several",
    "clamp_width",
    "comparison_frame",
    "comparison_strip",
    "coverage_frame",
    "coverage_html",
    "coverage_tips",
    "dedup_frame",
    "duplicate_fact_ids",
    "inactive_reason",
    "naive_step_for",
    "page_config",
    "page_scenario",
    "parse_step_param",
    "partition_figure",
    "partitions_table",
    "partitions_frame",
    "picks",
    "project_partitions",
    "rule_text",
    "step_facts_frame",
    "step_label",
    "step_time",
    "step_what",
    "timeline_html",
    "REACHED_MODEL",
    "REACHING_MODEL",
    "REMOVED",
    "REMOVED_AT_FAN_IN",
    "SHORT_TEXT",
    "duplicates_sentence",
    "fact_labels",
    "fact_texts",
    "fact_tips",
    "folded",
    "same_step",
    "short_text",
    "dedup_report_text",
]

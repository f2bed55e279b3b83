"""Stage 5's timelines for the dashboard's stepper (SPEC-027 §1; docs/reference/pipeline.md §5): one
:class:`~crp_core.records.FanoutStep` per state of the partitioned run and of the naive race, each with
the Coverage Set entries visible at that step and those added since the step before it in its lane."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core.records import BranchResult, CDRTable, Duplicate, FanoutRun, FanoutStep
from crp_core.stages.branches import BranchTrace

if TYPE_CHECKING:
    from crp_core.factors.coverage import CoverageSnapshot

RULE_ROUND_ROBIN = "round-robin"  # the naive run's assignment (docs/reference/pipeline.md §5)
#: a lane of the stepper's timeline: "parent", ("branch", b) or "shared"
_Lane = str | tuple[str, int]


class _Timeline:
    """Builds :class:`FanoutStep` records; ``added`` = coverage minus the previous step of the same lane.

    Lanes: the parent (``branch=None``) and one per branch; a branch lane forks from the parent lane,
    so its first step is compared with the parent's latest step. ``lane_of`` maps a step's branch to
    its lane (the naive run has one shared lane: every step is compared with the step before it).
    """

    def __init__(self, lane_of: Callable[[int | None], _Lane]):
        self.steps: list[FanoutStep] = []
        self.lane_of = lane_of
        self.last: dict[_Lane, tuple[int, tuple[str, ...]]] = {}

    def add(
        self,
        kind: str,
        title: str,
        branch: int | None,
        coverage: Sequence[str],
        facts: Sequence[str] = (),
        **detail: Any,
    ) -> None:
        lane = self.lane_of(branch)
        parent_lane = self.lane_of(None)
        prev_index, prev_cov = self.last.get(lane, self.last.get(parent_lane, (None, ())))
        seen = set(prev_cov)
        cov = tuple(coverage)
        added = tuple(c for c in cov if c not in seen)
        detail["since_step"] = prev_index
        index = len(self.steps)
        self.steps.append(
            FanoutStep(
                index=index,
                kind=kind,
                title=title,
                branch=branch,
                coverage=cov,
                added=added,
                facts=tuple(facts),
                detail=detail,
            )
        )
        self.last[lane] = (index, cov)


def _fact_scores(trace: BranchTrace) -> list[dict[str, Any]]:
    cdr: CDRTable = trace.result.cdr
    p = trace.chosen
    return [
        {
            "fact_id": fid,
            "relevance": rel,
            "residual_pull": pull,
            "novelty": nov,
            "recency_factor": rec,
            "cdr_score": score,
        }
        for fid, rel, pull, nov, rec, score in zip(
            trace.result.selected,
            cdr.relevance[p].tolist(),
            cdr.residual_pull[p].tolist(),
            cdr.novelty[p].tolist(),
            cdr.recency_factor[p].tolist(),
            cdr.cdr_score[p].tolist(),
        )
    ]


def _dup_detail(dups: Sequence[Duplicate]) -> list[dict[str, Any]]:
    return [
        {
            "fact_ids": list(d.fact_ids),
            "branches": list(d.branches),
            "similarity": float(d.similarity),
            "kept": d.kept,
            "removed_at_fan_in": bool(d.removed_at_fan_in),
        }
        for d in dups
    ]


def dedup_title(run: FanoutRun) -> str:
    """The dedup step's title: the duplicates found at fan-in, split into those the fan-in dedup removed and
    those reaching the model (SPEC-027 §1.6)."""
    n, removed, reaching = run.duplicate_count, run.removed_at_fan_in, run.reaching_model
    if not run.fan_in_dedup:
        return f"Result: {n} duplicate(s) across branches, {reaching} reaching the model (no fan-in dedup)"
    return f"Cross-branch dedup: {n} duplicate(s), {removed} removed at fan-in, {reaching} reaching the model"


def _chosen_by_several(results: Sequence[BranchResult]) -> dict[str, list[int]]:
    by: dict[str, list[int]] = {}
    for r in results:
        for fid in r.selected:
            by.setdefault(fid, []).append(r.branch)
    return {fid: bs for fid, bs in by.items() if len(bs) > 1}


@dataclass(frozen=True)
class RunLayout:
    """What both runs' timelines start from: the parent Coverage Set's ids, the ResidualSet's ids, the
    partition rule, the fan-out width and the per-branch fact budget."""

    parent_ids: tuple[str, ...]
    residual_ids: tuple[str, ...]
    rule: str
    width: int
    budget: int


def partitioned_steps(
    layout: RunLayout,
    traces: Sequence[BranchTrace],
    run: FanoutRun,
    merged_cov: tuple[str, ...],
    snapshots: Sequence[CoverageSnapshot],
) -> tuple[FanoutStep, ...]:
    """The partitioned run's timeline (SPEC-027 §1.3): parent, partition, each branch's snapshot,
    retrieval and local additions, the fan-in merge and the cross-branch dedup."""
    parent_ids, residual_ids, partitions = layout.parent_ids, layout.residual_ids, run.partitions
    rule, width, budget = layout.rule, layout.width, layout.budget
    tl = _Timeline(lambda b: ("branch", b) if b is not None else "parent")
    tl.add(
        "parent",
        "T0: parent Coverage Set (addressed sub-queries)",
        None,
        parent_ids,
        residual_set=list(residual_ids),
        addressed=list(parent_ids),
    )
    tl.add(
        "partition",
        f"ResidualSet split into {len(partitions)} disjoint partitions ({rule})",
        None,
        parent_ids,
        partitions=[list(p) for p in partitions],
        rule=rule,
        width=width,
        branch_fact_budget=budget,
    )
    for t, snap in zip(traces, snapshots):
        b = t.result.branch
        tl.add(
            "snapshot",
            f"Branch {b}: read-only snapshot of the Coverage Set",
            b,
            tuple(snap.ids),
            partition=list(t.result.sub_queries),
            read_only=True,
            snapshot_type=type(snap).__name__,
        )
    for t in traces:
        r = t.result
        tl.add(
            "retrieval",
            f"Branch {r.branch}: retrieves for its own partition only",
            r.branch,
            parent_ids,
            r.selected,
            partition=list(r.sub_queries),
            pool=t.pool_size,
            gated_out=t.gated_out,
            scored=int(np.asarray(r.cdr.idx).size),
            budget=budget,
            scores=_fact_scores(t),
        )
    for t in traces:
        r = t.result
        tl.add(
            "additions",
            f"Branch {r.branch}: local coverage additions (not visible to other branches)",
            r.branch,
            t.local_coverage,
            additions=list(r.coverage_additions),
        )
    union: list[str] = []
    for r in run.branches:
        union.extend(f for f in r.selected if f not in union)
    tl.add(
        "merge",
        "Fan-in: union of branch additions into the parent Coverage Set",
        None,
        merged_cov,
        union,
        coverage_depth=run.coverage_depth,
        branch_additions={str(r.branch): list(r.coverage_additions) for r in run.branches},
    )
    tl.add(
        "dedup",
        dedup_title(run),
        None,
        merged_cov,
        run.merged,
        duplicates=_dup_detail(run.duplicates),
        dropped=[f for f in union if f not in run.merged],
    )
    return tuple(tl.steps)


def naive_steps(layout: RunLayout, traces: Sequence[BranchTrace], run: FanoutRun) -> tuple[FanoutStep, ...]:
    """The naive run's timeline (the race of SPEC-027 §1.1): the shared Coverage Set at T0, each branch
    reading it (T1) and writing into it (T2), and the duplicates across branches."""
    parent_ids, residual_ids, rr, budget = layout.parent_ids, layout.residual_ids, run.partitions, layout.budget
    tl = _Timeline(lambda b: "shared")
    tl.add(
        "parent",
        f"T0: shared Coverage Set = {{{', '.join(parent_ids)}}}",
        None,
        parent_ids,
        time="T0",
        residual_set=list(residual_ids),
        assignment=[list(p) for p in rr],
        rule=RULE_ROUND_ROBIN,
        branch_fact_budget=budget,
    )
    several = _chosen_by_several(run.branches)
    for t in traces:
        r = t.result
        tl.add(
            "retrieval",
            f"T1: branch {r.branch} reads the shared Coverage Set and retrieves",
            r.branch,
            parent_ids,
            r.selected,
            time="T1",
            sub_queries=list(r.sub_queries),
            pool=t.pool_size,
            gated_out=t.gated_out,
            scored=int(np.asarray(r.cdr.idx).size),
            budget=budget,
            scores=_fact_scores(t),
            chosen_by_other_branches={f: [x for x in several[f] if x != r.branch] for f in r.selected if f in several},
        )
    shared = list(parent_ids)
    for t in traces:
        r = t.result
        shared.extend(s for s in r.coverage_additions if s not in shared)
        tl.add(
            "additions",
            f"T2: branch {r.branch} writes into the shared Coverage Set",
            r.branch,
            tuple(shared),
            r.selected,
            time="T2",
            additions=list(r.coverage_additions),
        )
    tl.add(
        "dedup",
        dedup_title(run),
        None,
        tuple(shared),
        run.merged,
        time="Result",
        duplicates=_dup_detail(run.duplicates),
        coverage_depth=run.coverage_depth,
    )
    return tuple(tl.steps)

"""The before / after view over a whole suite: each scenario's :class:`BeforeAfter`, its SPEC-027 side the
suite run's own (the same configuration layering and known-conflict guard as ``crp-inspect check``), so
the figures of the CLI's suite report and the dashboard's story page are the figures ``check`` measures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crp_core.analysis.baseline import BeforeAfter, before_after
from crp_core.analysis.evaluate import PreparedSuite, run_suite

if TYPE_CHECKING:
    from crp_core.config import CRPConfig
    from crp_core.corpus.embedding import Embedder
    from crp_core.decisions import Decisions

__all__ = ["SuiteBeforeAfter", "suite_before_after"]


@dataclass(frozen=True, eq=False)
class SuiteBeforeAfter:
    """Every scenario's before / after, in suite order, and the sums of what reaches the model."""

    entries: tuple[tuple[str, BeforeAfter], ...]

    def totals(self) -> dict[str, tuple[int, int, int, int]]:
        """Side label -> (expired, ageing, contradictory pairs, fan-out duplicates) over every scenario."""
        out: dict[str, tuple[int, int, int, int]] = {}
        for side in ("before", "after"):
            sides = [getattr(ba, side) for _name, ba in self.entries]
            sums = [sum(int(s.reaching_model[i]) for s in sides) for i in range(4)]
            out[sides[0].label if sides else side] = (sums[0], sums[1], sums[2], sums[3])
        return out


def suite_before_after(
    prepared: PreparedSuite,
    config: CRPConfig,
    *,
    set_args: Sequence[str] = (),
    fanout_width: int | None = None,
    decisions: Decisions = None,
    embedder: Embedder | None = None,
) -> SuiteBeforeAfter:
    """Run the suite at ``config`` (each scenario's ``config`` table and ``set_args`` on top), then each
    scenario's SPEC-024-only side; ``fanout_width`` overrides every scenario's width on both sides."""
    run = run_suite(prepared, config, set_args=tuple(set_args), reference=False, embedder=embedder)
    entries = []
    for i, item in enumerate(prepared.suite):
        scenario = item.scenario.replace(now=prepared.nows[i])
        same_width = fanout_width is None or int(fanout_width) == int(scenario.fanout_width or 0)
        full = run.results[i] if same_width and run.results is not None else None
        ba = before_after(
            prepared.corpus,
            scenario,
            run.configs[i],
            vectors=prepared.vectors[i],
            decisions=decisions,
            fanout_width=fanout_width,
            embedder=embedder,
            full=full,
        )
        entries.append((item.name, ba))
    return SuiteBeforeAfter(tuple(entries))

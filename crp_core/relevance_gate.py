"""The relevance gate's note: the gate passed fewer facts than the envelope has anchor places, and the
envelope has room (docs/decisions/gate-note.md).

SPEC-024 §2.6 gates the candidates on their relevance to the whole question (``cdr_min_relevance``, 0.55 by
default), and only facts that pass it can be anchors: the envelope's ``S`` anchor places (SPEC-025 §2.2,
``CRPConfig.anchor_budget``: 14 of the default 20 facts). On a knowledge base of short facts, or a question that
asks several things, few facts reach the default and the envelope packs a handful with most places empty;
nothing in the run says the gate was the cause. This note says it: how many facts the gate passed of those
retrieved, against the anchor places; how many facts the envelope holds; the relevance of the nearest facts it
kept out; and a value of ``cdr_min_relevance`` that would let enough of them compete to fill the anchor places.
It changes nothing in the run (the pipeline is SPEC-027's); it is the hint for the person adapting the defaults
to their own data.

When there is a note: the gate passed fewer facts than there are anchor places and kept at least one retrieved fact
out that a gate in range admits, the envelope packed fewer facts than ``envelope_fact_budget``, and no selected
fact was left out for the token budget (then the envelope's room is not empty for want of facts).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from crp_core.records import PipelineResult

__all__ = ["GateCounts", "GateNote", "NEAREST_SHOWN", "gate_counts", "gate_note"]

#: how many of the gated facts' relevances the note names (the highest)
NEAREST_SHOWN = 3


@dataclass(frozen=True)
class GateNote:
    """The gate's effect on a run whose anchor places it left short (see the module's docstring for when)."""

    threshold: float  # cdr_min_relevance
    retrieved: int  # candidates (the union of the HNSW top-K searches)
    passed: int  # candidates at or above the gate
    anchor_places: int  # CRPConfig.anchor_budget (S, SPEC-025 §2.2)
    budget: int  # envelope_fact_budget
    packed: int  # facts in the envelope
    nearest: tuple[float, ...]  # the highest relevances below the gate, highest first (at most NEAREST_SHOWN)
    suggested: float  # a cdr_min_relevance of two decimals, rounded down, that admits ``admitted`` gated facts
    admitted: int  # the gated facts at or above ``suggested``

    @property
    def message(self) -> str:
        """Two sentences: what the gate did, and the value that would let the nearest facts compete."""
        # truncated, not rounded: a relevance of 0.54996 under a gate of 0.55 reads 0.549, never 0.550
        near = ", ".join(f"{math.floor(r * 1000.0) / 1000.0:.3f}" for r in self.nearest)
        return (
            f"The relevance gate (cdr_min_relevance {self.threshold:g}) passed {self.passed} of {self.retrieved} "
            f"retrieved facts, fewer than the envelope's {self.anchor_places} anchor places, and the envelope holds "
            f"{self.packed} of its {self.budget} facts. The most relevant facts it kept out score {near}; "
            f"cdr_min_relevance {self.suggested:.2f} would let {self.admitted} more compete for an anchor place."
        )

    def as_dict(self) -> dict[str, object]:
        """The note's fields, in order, and its message, for the JSON reports."""
        return {**dataclasses.asdict(self), "nearest": list(self.nearest), "message": self.message}


def _floor2(x: float) -> float:
    """``x`` rounded down to two decimals: a gate at that value admits ``x`` (the stage's own comparison,
    ``relevance >= cdr_min_relevance``, is made again on the result to count what it admits)."""
    v = math.floor(round(x * 100.0, 9)) / 100.0  # 0.29 * 100 = 28.999...: read as 29, then checked below
    return v if v <= x else round(v - 0.01, 2)


def gate_note(result: PipelineResult) -> GateNote | None:
    """The note on ``result``'s gate, or None when the gate is not why the envelope has room."""
    cand, env, config = result.candidates, result.envelope, result.config
    budget, places = int(config.envelope_fact_budget), int(config.anchor_budget)
    packed = len(env.order)
    passed = int(np.count_nonzero(cand.passed_gate))
    gated = np.sort(cand.relevance[~cand.passed_gate])[::-1]  # the relevances below the gate, highest first
    if passed >= places or gated.size == 0 or packed >= budget or env.dropped_for_budget:
        return None
    suggested = max(_floor2(float(gated[min(places - passed, gated.size) - 1])), -1.0)
    admitted = int(np.count_nonzero(gated >= suggested))
    if admitted == 0:  # only cosines a hair below -1 were kept out: no gate in range admits them
        return None
    return GateNote(
        threshold=float(config.cdr_min_relevance),
        retrieved=int(cand.idx.size),
        passed=passed,
        anchor_places=places,
        budget=budget,
        packed=packed,
        nearest=tuple(float(r) for r in gated[:NEAREST_SHOWN]),
        suggested=suggested,
        admitted=admitted,
    )


@dataclass(frozen=True)
class GateCounts:
    """The gate's counts on one run: what every view says of it (the CLI's summary, Overview, the note)."""

    retrieved: int  # candidates (the union of the HNSW top-K searches)
    passed: int  # candidates at or above the gate
    below: int  # candidates under it: none can be an anchor
    connectors: int  # of ``below``, those the graph walk still chose as connectors (a connector is not gated,
    # SPEC-025 §2.5)

    @property
    def gated_out(self) -> int:
        """The candidates the gate kept out of the envelope: under it and not chosen as connectors."""
        return self.below - self.connectors

    def summary(self) -> str:
        """``126 below the relevance gate, 6 of them chosen as connectors, which are not gated``."""
        if not self.connectors:
            return f"{self.below} below the relevance gate"
        chosen = (
            "1 of them chosen as a connector, which is"
            if self.connectors == 1
            else (f"{self.connectors} of them chosen as connectors, which are")
        )
        return f"{self.below} below the relevance gate, {chosen} not gated"


def gate_counts(result: PipelineResult) -> GateCounts:
    """How many of ``result``'s candidates passed its gate, how many fell under it, and how many of those the
    selection took as connectors."""
    cand = result.candidates
    facts = result.corpus.kb.facts
    connectors = {o.fact_id for o in result.outcomes if o.role == "connector"}
    below_rows = cand.idx[~cand.passed_gate]
    return GateCounts(
        retrieved=int(cand.idx.size),
        passed=int(np.count_nonzero(cand.passed_gate)),
        below=int(below_rows.size),
        connectors=sum(1 for r in below_rows.tolist() if facts[r].fact_id in connectors),
    )

"""Suite metrics: what one run did against a scenario's labels, and the suite's mean and worst
(docs/decisions/suites.md §3 gives the exact definitions).

``scenario_metrics(result, expect, name=..., reference=...)`` reads a :class:`PipelineResult` (its
envelope, stage-4 pairs, candidates, fan-out) and the scenario's :class:`Expectations`; it keeps, for
every count, the fact ids that caused it, so a view can drill down. ``suite_metrics(per_scenario)``
summarises them: mean and worst of every metric over the scenarios where it is defined, and the
total of every count. Nothing here runs the pipeline (``crp_core.analysis.evaluate`` does).

The ranking metrics (``ndcg@10``, ``mrr``, ``precision@10``, ``recall@10``) read the envelope in its
packed order (the order the model reads) against ``expect.relevance``; :func:`ndcg_at`,
:func:`reciprocal_rank`, :func:`precision_at` and :func:`recall_at` compute them from grades alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from crp_core.factors.recency import RULES, fact_attributes, recency_state
from crp_core.model import Expectations
from crp_core.records import Envelope, PipelineResult

__all__ = [
    "MetricInfo",
    "METRICS",
    "METRIC_NAMES",
    "WrongWinner",
    "Contradiction",
    "ScenarioMetrics",
    "MetricSummary",
    "SuiteMetrics",
    "scenario_metrics",
    "suite_metrics",
    "WINNER_STATES",
    "RANK_K",
    "RANKING_METRICS",
    "ndcg_at",
    "reciprocal_rank",
    "precision_at",
    "recall_at",
]

Better = Literal["higher", "lower"]


@dataclass(frozen=True)
class MetricInfo:
    """One metric: which way is better, whether it is a fraction (no total), whether the regression
    gate compares it with a baseline, and a one-line definition."""

    name: str
    better: Better
    fraction: bool
    vs_baseline: bool
    description: str


METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("recall", "higher", True, True, "share of expect.must_include packed in the envelope"),
    MetricInfo("leaks", "lower", False, True, "expect.must_exclude facts packed"),
    MetricInfo(
        "wrong_winners",
        "lower",
        False,
        True,
        "packed facts that lose an expected conflict (whether or not the winner was retrieved)",
    ),
    MetricInfo(
        "expired",
        "lower",
        False,
        True,
        "packed facts at the recency floor: age >= TTL, or status STALE (docs/reference/pipeline.md §2)",
    ),
    MetricInfo("ageing", "lower", False, False, "packed facts in the recency decay (stale_floor < factor < 1)"),
    MetricInfo(
        "contradictions",
        "lower",
        False,
        True,
        "pairs handed to the model: both facts of an expected conflict, or of a detected pair, packed",
    ),
    MetricInfo("duplicates", "lower", False, True, "cross-branch duplicates of the partitioned fan-out"),
    MetricInfo("conflicts_detected", "higher", False, False, "expected conflicts stage 4 detected"),
    MetricInfo(
        "false_conflicts",
        "lower",
        False,
        False,
        "pairs of expect.not_conflicts stage 4 flagged (a false flag: the loser is a correct fact)",
    ),
    MetricInfo("tokens", "lower", False, False, "envelope tokens used"),
    MetricInfo("overlap", "higher", True, False, "Jaccard of the envelope with the reference config's envelope"),
    MetricInfo(
        "ndcg@10",
        "higher",
        True,
        True,
        "nDCG of the first 10 envelope facts against expect.relevance (gain 2^grade - 1)",
    ),
    MetricInfo("mrr", "higher", True, False, "1 / rank of the first envelope fact graded 1 or more"),
    MetricInfo("precision@10", "higher", True, False, "share of the first 10 envelope facts graded 1 or more"),
    MetricInfo(
        "recall@10", "higher", True, True, "share of the facts graded 1 or more among the first 10 envelope facts"
    ),
)
#: the depth of the ranking metrics (fixed: it is part of their names)
RANK_K = 10
#: the metrics read from ``expect.relevance``: undefined for a scenario without a fact graded 1 or more
RANKING_METRICS: tuple[str, ...] = ("ndcg@10", "mrr", "precision@10", "recall@10")
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
_INFO = {m.name: m for m in METRICS}

#: where the winner of a wrong-winner finding was (the first that applies, in this order)
WINNER_STATES: tuple[str, ...] = (
    "packed",
    "suppressed",
    "dropped_for_budget",
    "selected",
    "scored",
    "gated",
    "not_retrieved",
)


@dataclass(frozen=True)
class WrongWinner:
    """A packed ``loser`` of an expected conflict; ``winner_state`` says where its winner was
    (:data:`WINNER_STATES`: ``not_retrieved`` = not among the stage-1 or connector candidates)."""

    loser: str
    winner: str
    winner_state: str


@dataclass(frozen=True)
class Contradiction:
    """A pair whose two facts are both packed: ``expected`` (an ``expect.conflicts`` pair), ``detected``
    (stage 4 paired them), ``noted`` (the envelope carries a SPEC-027 §2.5 NOTE block listing both:
    ``Envelope.note_covering``, not "stage 4 found them tied")."""

    fact_a: str
    fact_b: str
    expected: bool
    detected: bool
    noted: bool


@dataclass(frozen=True)
class ScenarioMetrics:
    """Every metric of one scenario's run, with the fact ids behind each count."""

    name: str
    envelope: tuple[str, ...]  # packed order
    tokens: int
    token_budget: int
    recall: float | None  # None: the scenario has no must_include
    included: tuple[str, ...]  # must_include ids packed
    missing: tuple[str, ...]  # must_include ids not packed
    leaks: tuple[str, ...]  # must_exclude ids packed
    wrong_winners: tuple[WrongWinner, ...]
    expired: tuple[str, ...]  # packed, at the recency floor
    ageing: tuple[str, ...]  # packed, in the decay
    recency: Mapping[str, float]  # packed fact id -> its recency factor in this run
    contradictions: tuple[Contradiction, ...]
    duplicates: tuple[tuple[str, ...], ...]  # fan-out duplicates: the fact ids of each
    conflicts_detected: tuple[tuple[str, str], ...]  # expected pairs stage 4 detected (fact_a, fact_b)
    conflicts_undetected: tuple[tuple[str, str], ...]
    max_tokens: int | None  # the scenario's token cap (expect.max_tokens)
    overlap: float | None  # None: no reference envelope
    reference: tuple[str, ...] | None = None  # the reference config's envelope (packed order)
    entering: tuple[str, ...] = ()  # in this envelope, not in the reference's
    leaving: tuple[str, ...] = ()  # in the reference envelope, not in this one
    # the ranking metrics (None: expect.relevance grades no fact 1 or more)
    ranking: Mapping[str, float | None] = field(default_factory=dict, hash=False)
    grades: tuple[int, ...] = ()  # the grade of each envelope fact, packed order (0: not graded)
    relevance: Mapping[str, int] = field(default_factory=dict, hash=False)  # expect.relevance
    relevant_missing: tuple[str, ...] = ()  # graded 1+, not among the first RANK_K envelope facts
    false_conflicts: tuple[tuple[str, str], ...] = ()  # pairs of expect.not_conflicts stage 4 flagged
    not_conflicts_kept: tuple[tuple[str, str], ...] = ()  # pairs of expect.not_conflicts it did not flag

    @property
    def over_tokens(self) -> bool:
        """The envelope uses more tokens than ``expect.max_tokens``."""
        return self.max_tokens is not None and self.tokens > self.max_tokens

    def value(self, metric: str) -> float | None:
        """The number of ``metric`` (:data:`METRIC_NAMES`): a fraction (float), a count or tokens (int, so
        a metrics file writes ``"leaks": 1``, not ``1.0``); None when undefined."""
        if metric == "recall":
            return self.recall
        if metric == "overlap":
            return self.overlap
        if metric in RANKING_METRICS:
            return self.ranking.get(metric)
        if metric == "tokens":
            return int(self.tokens)
        if metric == "conflicts_detected" and not (self.conflicts_detected or self.conflicts_undetected):
            return None  # no expected conflict: nothing to detect (not a worst case of 0)
        if metric == "false_conflicts" and not (self.false_conflicts or self.not_conflicts_kept):
            return None  # no pair labelled as no conflict: nothing to flag falsely
        if metric not in _INFO:
            raise KeyError(f"unknown metric {metric!r}; expected one of {', '.join(METRIC_NAMES)}")
        got: tuple[object, ...] = getattr(self, metric)
        return len(got)

    def values(self) -> dict[str, float | None]:
        return {m: self.value(m) for m in METRIC_NAMES}


@dataclass(frozen=True)
class MetricSummary:
    """One metric over the suite: mean and worst over the scenarios where it is defined (``count``),
    the scenario of the worst value (the first in suite order), and the total of a count (None for a
    fraction). All None when no scenario defines it."""

    name: str
    mean: float | None
    worst: float | None
    total: float | None
    worst_scenario: str | None
    count: int


@dataclass(frozen=True)
class SuiteMetrics:
    """Per-scenario metrics in suite order and their summaries by metric name."""

    scenarios: tuple[ScenarioMetrics, ...]
    summary: Mapping[str, MetricSummary] = field(hash=False)

    def scenario(self, name: str) -> ScenarioMetrics:
        for s in self.scenarios:
            if s.name == name:
                return s
        raise KeyError(name)

    def flat(self) -> dict[str, float | None]:
        """``"<metric>.mean"``, ``"<metric>.worst"`` and (counts) ``"<metric>.total"`` -> value."""
        out: dict[str, float | None] = {}
        for m in METRICS:
            s = self.summary[m.name]
            out[f"{m.name}.mean"] = s.mean
            out[f"{m.name}.worst"] = s.worst
            if not m.fraction:
                out[f"{m.name}.total"] = s.total
        return out

    def get(self, key: str) -> float | None:
        """One value of :meth:`flat` (``"recall.mean"``); a KeyError names the valid keys."""
        flat = self.flat()
        if key not in flat:
            raise KeyError(f"unknown suite metric {key!r}; expected one of {', '.join(flat)}")
        return flat[key]


def _dcg(grades: Sequence[int], k: int) -> float:
    """Discounted cumulative gain of the first ``k`` grades: sum of (2^g - 1) / log2(rank + 1)."""
    return math.fsum((2.0**g - 1.0) / math.log2(rank + 1) for rank, g in enumerate(grades[:k], start=1))


def ndcg_at(ranked: Sequence[int], judged: Iterable[int], k: int = RANK_K) -> float | None:
    """nDCG@k: the DCG of ``ranked`` (the grades in envelope order, 0 for a fact not graded) over the
    DCG of the ideal order of every grade in ``judged`` (all the scenario's grades, packed or not);
    None when no grade is 1 or more."""
    ideal = _dcg(sorted(judged, reverse=True), k)
    if ideal <= 0.0:
        return None
    return _dcg(ranked, k) / ideal


def reciprocal_rank(ranked: Sequence[int]) -> float:
    """1 / the rank of the first grade of 1 or more in ``ranked`` (the whole envelope); 0 when none is."""
    for rank, g in enumerate(ranked, start=1):
        if g >= 1:
            return 1.0 / rank
    return 0.0


def precision_at(ranked: Sequence[int], k: int = RANK_K) -> float:
    """Share of the first ``min(k, len(ranked))`` grades that are 1 or more (0 for an empty envelope)."""
    top = ranked[:k]
    return sum(1 for g in top if g >= 1) / len(top) if top else 0.0


def recall_at(ranked: Sequence[int], relevant: int, k: int = RANK_K) -> float | None:
    """Grades of 1 or more among the first ``k`` of ``ranked``, over ``relevant`` (the scenario's facts
    graded 1 or more, packed or not); None when ``relevant`` is 0."""
    if relevant <= 0:
        return None
    return sum(1 for g in ranked[:k] if g >= 1) / relevant


def _ranking(envelope: tuple[str, ...], grades: Mapping[str, int]) -> tuple[dict[str, float | None], tuple[int, ...]]:
    """The ranking metrics of ``envelope`` against ``grades`` and the grade of each envelope fact."""
    ranked = tuple(int(grades.get(f, 0)) for f in envelope)
    relevant = sum(1 for g in grades.values() if g >= 1)
    if not relevant:
        return dict.fromkeys(RANKING_METRICS), ranked
    return {
        "ndcg@10": ndcg_at(ranked, grades.values()),
        "mrr": reciprocal_rank(ranked),
        "precision@10": precision_at(ranked),
        "recall@10": recall_at(ranked, relevant),
    }, ranked


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _winner_state(
    result: PipelineResult, fact_id: str, packed: set[str], suppressed: set[str], selected: set[str]
) -> str:
    if fact_id in packed:
        return "packed"
    if fact_id in suppressed:
        return "suppressed"
    if fact_id in result.envelope.dropped_for_budget or fact_id in result.envelope.dropped_unbridged:
        return "dropped_for_budget"
    if fact_id in selected:
        return "selected"
    kb = result.corpus.kb
    row = kb.index_of(fact_id) if kb.get(fact_id) is not None else -1
    cand = result.candidates
    hit = np.flatnonzero(cand.idx == row)
    if hit.size:
        return "scored" if bool(cand.passed_gate[int(hit[0])]) else "gated"
    if row >= 0 and bool(np.any(result.cdgr.connectors.idx == row)):
        return "scored"
    return "not_retrieved"


def _noted(envelope: Envelope, a: str, b: str) -> bool:
    """The envelope carries a SPEC-027 §2.5 NOTE block listing both facts (their tie group's NOTE, which
    for a group of two is the pair's block): read from ``Envelope.tie_groups``, the blocks packed."""
    return envelope.note_covering(a, b) is not None


def scenario_metrics(
    result: PipelineResult, expect: Expectations, *, name: str = "", reference: Sequence[str] | None = None
) -> ScenarioMetrics:
    """The metrics of one run against ``expect`` (docs/decisions/suites.md §3); ``reference`` is the
    reference config's envelope (fact ids) for ``overlap``."""
    kb = result.corpus.kb
    envelope = tuple(p.fact_id for p in result.envelope.order)
    packed = set(envelope)
    included = tuple(f for f in expect.must_include if f in packed)
    missing = tuple(f for f in expect.must_include if f not in packed)
    recall = len(included) / len(expect.must_include) if expect.must_include else None
    exclude = set(expect.must_exclude)
    leaks = tuple(f for f in envelope if f in exclude)
    # stage 4 and the rows it kept
    res = result.resolution
    suppressed = {kb.facts[int(r)].fact_id for r in np.asarray(res.suppressed).tolist()}
    selected = {kb.facts[int(r)].fact_id for r in np.asarray(res.selected).tolist()}
    detected: set[tuple[str, str]] = set()
    for p in res.pairs:
        if not p.skipped and p.decision != "dismiss":
            detected.add(_pair(p.fact_a, p.fact_b))
    wrong = tuple(
        WrongWinner(
            loser=c.loser, winner=c.winner, winner_state=_winner_state(result, c.winner, packed, suppressed, selected)
        )
        for c in expect.conflicts
        if c.loser is not None and c.winner is not None and c.loser in packed
    )
    # contradictory pairs handed to the model
    expected_pairs = {_pair(c.fact_a, c.fact_b) for c in expect.conflicts}
    both = sorted(k for k in expected_pairs | set(detected) if k[0] in packed and k[1] in packed)
    contradictions = tuple(
        Contradiction(
            fact_a=a,
            fact_b=b,
            expected=(a, b) in expected_pairs,
            detected=(a, b) in detected,
            noted=_noted(result.envelope, a, b),
        )
        for a, b in both
    )
    # pairs stage 4 flagged, skipped ones included; an operator's dismissal says they are no conflict, and a
    # pair only an operator's accept or override put in stage 4 is theirs, not a detection
    flagged = {_pair(p.fact_a, p.fact_b) for p in res.pairs if p.decision != "dismiss" and not p.asserted}
    by_stage = {_pair(p.fact_a, p.fact_b) for p in res.pairs if not p.asserted} & detected
    false_flags = tuple(ab for ab in expect.not_conflicts if _pair(*ab) in flagged)
    kept_apart = tuple(ab for ab in expect.not_conflicts if _pair(*ab) not in flagged)
    found = tuple((c.fact_a, c.fact_b) for c in expect.conflicts if _pair(c.fact_a, c.fact_b) in by_stage)
    not_found = tuple((c.fact_a, c.fact_b) for c in expect.conflicts if _pair(c.fact_a, c.fact_b) not in by_stage)
    # recency of the packed facts at the run's now and config (docs/reference/pipeline.md §2)
    rows = np.array([kb.index_of(f) for f in envelope], dtype=np.int64)
    attrs = fact_attributes(kb, result.now, result.config)
    rules = [RULES[int(c)] for c in attrs.rule[rows].tolist()] if rows.size else []
    factors = attrs.factor[rows].tolist() if rows.size else []
    expired = tuple(f for f, r in zip(envelope, rules) if recency_state(r) == "expired")
    ageing = tuple(f for f, r in zip(envelope, rules) if recency_state(r) == "ageing")
    fan = result.fanout
    duplicates = tuple(tuple(d.fact_ids) for d in fan.partitioned.duplicates) if fan is not None else ()
    overlap: float | None = None
    entering: tuple[str, ...] = ()
    leaving: tuple[str, ...] = ()
    ref = None if reference is None else tuple(reference)
    if ref is not None:
        ref_set = set(ref)
        union = packed | ref_set
        overlap = 1.0 if not union else len(packed & ref_set) / len(union)
        entering = tuple(f for f in envelope if f not in ref_set)
        leaving = tuple(f for f in ref if f not in packed)
    ranking, grades = _ranking(envelope, expect.relevance)
    top = set(envelope[:RANK_K])
    relevant_missing = tuple(
        f for f, g in sorted(expect.relevance.items(), key=lambda fg: -fg[1]) if g >= 1 and f not in top
    )
    return ScenarioMetrics(
        name=name or result.scenario.name,
        envelope=envelope,
        tokens=int(result.envelope.tokens_used),
        token_budget=int(result.envelope.token_budget),
        recall=recall,
        included=included,
        missing=missing,
        leaks=leaks,
        wrong_winners=wrong,
        expired=expired,
        ageing=ageing,
        recency=dict(zip(envelope, (float(x) for x in factors))),
        contradictions=contradictions,
        duplicates=duplicates,
        conflicts_detected=found,
        conflicts_undetected=not_found,
        max_tokens=expect.max_tokens,
        overlap=overlap,
        reference=ref,
        entering=entering,
        leaving=leaving,
        ranking=ranking,
        grades=grades,
        relevance=dict(expect.relevance),
        relevant_missing=relevant_missing,
        false_conflicts=false_flags,
        not_conflicts_kept=kept_apart,
    )


def suite_metrics(per_scenario: Sequence[ScenarioMetrics]) -> SuiteMetrics:
    """Mean, worst and total of every metric over the scenarios (docs/decisions/suites.md §3)."""
    scenarios = tuple(per_scenario)
    summary: dict[str, MetricSummary] = {}
    for m in METRICS:
        got = [(s.name, v) for s in scenarios if (v := s.value(m.name)) is not None]
        if not got:
            summary[m.name] = MetricSummary(m.name, None, None, None, None, 0)
            continue
        vals = [v for _, v in got]
        worst = min(vals) if m.better == "higher" else max(vals)
        worst_name = next(n for n, v in got if v == worst)
        # counts stay whole numbers (worst, total); the mean is a float
        total = None if m.fraction else int(sum(int(v) for v in vals))
        summary[m.name] = MetricSummary(
            m.name,
            float(math.fsum(vals) / len(vals)),
            float(worst) if m.fraction else int(worst),
            total,
            worst_name,
            len(vals),
        )
    return SuiteMetrics(scenarios=scenarios, summary=summary)

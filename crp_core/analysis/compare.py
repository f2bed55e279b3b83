"""Compare two runs of the same scenario under two configurations.

``compare_runs(base, cand)`` lines up every fact either run scored (stage-1 candidates, gated ones
included, plus stage-3 connector candidates) with its CDR rank and score, its stored factors and its
outcome in each run; puts the two envelopes side by side; lists the contradiction pairs whose
winner flips. :meth:`Comparison.explain` says in one line why a fact moved, naming the factor whose
change moved its CDR score the most (docs/reference/pipeline.md §2: the score is a product, so a factor's weight in
the change is ``|log(new / old)|``) and the configuration change behind it, e.g.
``ranked lower because recency 1.00 -> 0.55 after ttl_days.official_documentation 365 -> 180``.
Only stored factors are read; nothing is recomputed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crp_core.analysis.sweep import envelope_ids, jaccard

if TYPE_CHECKING:
    from crp_core.records import CDRTable, ConflictPair, PipelineResult

#: the multiplicative factors of the CDR score (docs/reference/pipeline.md §2), in formula order, with display names
CDR_FACTORS: tuple[tuple[str, str], ...] = (
    ("importance_weight", "importance"),
    ("effective_relevance", "relevance (max of relevance, residual pull)"),
    ("novelty", "novelty"),
    ("recency_factor", "recency"),
    ("ngram_multiplier", "n-gram factor (1 - ngram_penalty)"),
)
#: connector-score factors (docs/reference/pipeline.md §3) compared for connector candidates
CONNECTOR_FACTORS: tuple[tuple[str, str], ...] = (
    ("bridge_value", "bridge value"),
    ("novelty", "novelty"),
    ("recency_factor", "recency"),
    ("connector_relevance", "connector relevance (max of relevance, min_connector_relevance)"),
)
#: config keys that feed each factor (table keys get ``.<source_type>`` appended where they apply)
FACTOR_KEYS: Mapping[str, tuple[str, ...]] = {
    "recency_factor": ("ttl_days", "stale_floor", "fresh_fraction"),
    "novelty": ("min_novelty_floor", "coverage_penalty_cap"),
    "importance_weight": ("importance",),
    "ngram_multiplier": ("ngram_n", "ngram_step_penalty", "ngram_penalty_cap"),
    "effective_relevance": (),
    "bridge_value": ("graph_k", "graph_edge_min", "max_hops", "hnsw_ef_search"),
    "connector_relevance": ("min_connector_relevance",),
}


@dataclass(frozen=True)
class FactView:
    """One scored fact as one run saw it (every value read from the run's records)."""

    fact_id: str
    source_type: str
    row: int
    stage: str  # "candidate" (stage-1) or "connector" (only found by the graph walk)
    cdr_rank: int | None  # 1-based rank by CDR among the gated-in stage-1 candidates
    passed_gate: bool
    factors: Mapping[str, float]  # relevance, residual_pull, effective_relevance, novelty, recency_factor,
    #                               importance_weight, ngram_penalty, ngram_multiplier, cdr_score (+ connector ones)
    ttl_days: float  # inf = no expiry
    ttl_source: str
    age_days: float
    recency_rule: str
    importance_explicit: bool
    role: str
    in_envelope: bool
    envelope_position: int | None  # 1-based position in the packed envelope
    suppressed: bool
    reason: str

    @property
    def cdr_score(self) -> float:
        return float(self.factors["cdr_score"])


@dataclass(frozen=True)
class FactDelta:
    fact_id: str
    base: FactView | None
    cand: FactView | None

    @property
    def rank_delta(self) -> int | None:
        """cand rank - base rank (positive: ranked lower in the candidate run)."""
        if self.base is None or self.cand is None or self.base.cdr_rank is None or self.cand.cdr_rank is None:
            return None
        return self.cand.cdr_rank - self.base.cdr_rank

    @property
    def score_delta(self) -> float | None:
        if self.base is None or self.cand is None:
            return None
        return self.cand.cdr_score - self.base.cdr_score

    @property
    def envelope_change(self) -> str:
        b = self.base is not None and self.base.in_envelope
        c = self.cand is not None and self.cand.in_envelope
        return {(True, True): "kept", (False, True): "entered", (True, False): "left"}.get((b, c), "")


@dataclass(frozen=True)
class WinnerFlip:
    """A contradiction pair arbitrated in both runs whose outcome differs."""

    fact_a: str
    fact_b: str
    base_outcome: str  # the winner's fact id, "tie" or "dismissed"
    cand_outcome: str
    base_authority: Mapping[str, float]
    cand_authority: Mapping[str, float]


@dataclass(frozen=True, eq=False)
class Comparison:
    base: PipelineResult
    cand: PipelineResult
    config_diff: Mapping[str, tuple[Any, Any]]  # key -> (base value, candidate value): config scalars
    facts: tuple[FactDelta, ...]  # union of scored facts: base CDR order, then the rest in candidate order
    base_envelope: tuple[str, ...]
    cand_envelope: tuple[str, ...]
    entering: tuple[str, ...]
    leaving: tuple[str, ...]
    jaccard: float
    flips: tuple[WinnerFlip, ...]
    pairs_only_base: tuple[tuple[str, str], ...]
    pairs_only_cand: tuple[tuple[str, str], ...]
    _by_id: Mapping[str, FactDelta] = field(default_factory=dict, repr=False)

    def delta(self, fact_id: str) -> FactDelta:
        try:
            return self._by_id[fact_id]
        except KeyError:
            raise KeyError(f"fact {fact_id!r} was scored by neither run") from None

    def explain(self, fact_id: str) -> str:
        """One line: how the fact moved and the factor (and config change) that moved it the most."""
        return explain_delta(self.delta(fact_id), self.config_diff, self.base, self.cand)


# ---- building ------------------------------------------------------------------------------------
def fact_views(result: PipelineResult) -> dict[str, FactView]:
    """fact id -> :class:`FactView` for every fact the run scored."""
    from crp_core.factors.recency import kb_arrays
    from crp_core.stages.cdr import cdr_ranking

    kb = result.corpus.kb
    facts = kb.facts
    cdr = result.cdr
    gate = cdr.passed_gate if cdr.passed_gate is not None else [True] * cdr.idx.size
    rank = {int(r): k + 1 for k, r in enumerate(cdr.idx[cdr_ranking(cdr, cdr.passed_gate)].tolist())}
    rec = result.recency
    rec_pos = {int(r): i for i, r in enumerate(rec.idx.tolist())}
    conn = result.cdgr.connectors
    conn_pos = {int(r): i for i, r in enumerate(conn.idx.tolist())}
    ccdr = result.cdgr.connector_cdr
    env_pos = {p.fact_id: i + 1 for i, p in enumerate(result.envelope.order)}
    outcome = {o.fact_id: o for o in result.outcomes}
    imp_explicit = kb_arrays(kb).importance_explicit
    floor = float(result.config.min_connector_relevance)
    out: dict[str, FactView] = {}

    def cdr_factors(table: CDRTable, i: int) -> dict[str, float]:
        pen = float(table.ngram_penalty[i])
        return {
            "relevance": float(table.relevance[i]),
            "residual_pull": float(table.residual_pull[i]),
            "effective_relevance": float(table.effective_relevance[i]),
            "novelty": float(table.novelty[i]),
            "recency_factor": float(table.recency_factor[i]),
            "importance_weight": float(table.importance_weight[i]),
            "ngram_penalty": pen,
            "ngram_multiplier": 1.0 - pen,
            "cdr_score": float(table.cdr_score[i]),
        }

    def add(row: int, stage: str, factors: dict[str, float], passed: bool) -> None:
        f = facts[row]
        if row in conn_pos:
            j = conn_pos[row]
            factors["bridge_value"] = float(conn.bridge_value[j])
            factors["connector_score"] = float(conn.connector_score[j])
            factors["connector_relevance"] = max(float(conn.relevance[j]), floor)
        k = rec_pos.get(row)
        o = outcome.get(f.fact_id)
        out[f.fact_id] = FactView(
            fact_id=f.fact_id,
            source_type=f.source_type,
            row=row,
            stage=stage,
            cdr_rank=rank.get(row),
            passed_gate=bool(passed),
            factors=factors,
            ttl_days=float(rec.ttl_days[k]) if k is not None else math.nan,
            ttl_source=rec.ttl_source[k] if k is not None else "",
            age_days=float(rec.age_days[k]) if k is not None else math.nan,
            recency_rule=rec.rule[k] if k is not None else "",
            importance_explicit=not math.isnan(float(imp_explicit[row])),
            role=o.role if o else "candidate",
            in_envelope=f.fact_id in env_pos,
            envelope_position=env_pos.get(f.fact_id),
            suppressed=bool(o.suppressed) if o else False,
            reason=o.reason if o else "",
        )

    for i, r in enumerate(cdr.idx.tolist()):
        add(int(r), "candidate", cdr_factors(cdr, i), bool(gate[i]))
    if ccdr is not None:
        for i, r in enumerate(ccdr.idx.tolist()):
            if facts[int(r)].fact_id not in out:
                passed = bool(ccdr.passed_gate[i]) if ccdr.passed_gate is not None else True
                add(int(r), "connector", cdr_factors(ccdr, i), passed)
    return out


def _pair_outcome(p: ConflictPair) -> str:
    if p.decision == "dismiss":
        return "dismissed"
    if p.tied:
        return "tie"
    return p.kept[0] if p.kept else "?"


def _pair_key(p: ConflictPair) -> tuple[str, str]:
    a, b = sorted((p.fact_a, p.fact_b))
    return a, b


def _pairs(result: PipelineResult) -> dict[tuple[str, str], ConflictPair]:
    return {_pair_key(p): p for p in result.resolution.pairs if not p.skipped}


def compare_runs(base: PipelineResult, cand: PipelineResult) -> Comparison:
    """Line up two PipelineResults of the same scenario (compare two configs)."""
    bv, cv = fact_views(base), fact_views(cand)
    order = sorted(bv, key=lambda f: (bv[f].cdr_rank is None, bv[f].cdr_rank or 0, bv[f].row))
    order += sorted(
        (f for f in cv if f not in bv), key=lambda f: (cv[f].cdr_rank is None, cv[f].cdr_rank or 0, cv[f].row)
    )
    deltas = tuple(FactDelta(f, bv.get(f), cv.get(f)) for f in order)
    be, ce = envelope_ids(base), envelope_ids(cand)
    bp, cp = _pairs(base), _pairs(cand)
    flips = []
    for key in sorted(set(bp) & set(cp)):
        a, b = bp[key], cp[key]
        oa, ob = _pair_outcome(a), _pair_outcome(b)
        if oa != ob:
            flips.append(
                WinnerFlip(
                    key[0],
                    key[1],
                    oa,
                    ob,
                    {k: float(v.authority) for k, v in a.authority.items()},
                    {k: float(v.authority) for k, v in b.authority.items()},
                )
            )
    return Comparison(
        base=base,
        cand=cand,
        config_diff=base.config.diff(cand.config),
        facts=deltas,
        base_envelope=be,
        cand_envelope=ce,
        entering=tuple(f for f in ce if f not in set(be)),
        leaving=tuple(f for f in be if f not in set(ce)),
        jaccard=jaccard(be, ce),
        flips=tuple(flips),
        pairs_only_base=tuple(sorted(set(bp) - set(cp))),
        pairs_only_cand=tuple(sorted(set(cp) - set(bp))),
        _by_id={d.fact_id: d for d in deltas},
    )


# ---- explaining ----------------------------------------------------------------------------------
def fmt_value(v: object) -> str:
    """A config value as the explanation prints it (365.0 -> 365, None -> none)."""
    if v is None or v == "none":
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _pair_text(a: float, b: float) -> str:
    """``a -> b`` with 2 decimals, more when 2 decimals would hide the change."""
    for d in (2, 4, 6):
        sa, sb = f"{a:.{d}f}", f"{b:.{d}f}"
        if sa != sb or a == b:
            return f"{sa} -> {sb}"
    return f"{a!r} -> {b!r}"


def _causes(factor: str, view: FactView, diff: Mapping[str, tuple[Any, Any]]) -> list[str]:
    """The config changes (``key a -> b``) that feed ``factor`` for this fact."""
    out = []
    for key in FACTOR_KEYS.get(factor, ()):
        if key == "ttl_days":
            if view.ttl_source != "default":
                continue
            key = f"ttl_days.{view.source_type}"
        elif key == "importance":
            if view.importance_explicit:
                continue
            key = f"importance.{view.source_type}"
        if key in diff:
            a, b = diff[key]
            out.append(f"{key} {fmt_value(a)} -> {fmt_value(b)}")
    return out


def factor_effects(
    base: FactView, cand: FactView, factors: tuple[tuple[str, str], ...] = CDR_FACTORS
) -> list[tuple[str, str, float, float, float]]:
    """(factor, display name, base value, cand value, |log(cand / base)|) of every changed factor,
    largest effect first. A factor going to or from 0 has an infinite effect."""
    out = []
    for name, label in factors:
        a, b = base.factors.get(name), cand.factors.get(name)
        if a is None or b is None or a == b:
            continue
        if a > 0 and b > 0:
            eff = abs(math.log(b / a))
        else:
            eff = math.inf
        out.append((name, label, float(a), float(b), eff))
    out.sort(key=lambda t: -t[4])
    return out


def _factor_phrase(
    name: str, label: str, a: float, b: float, base: FactView, cand: FactView, diff: Mapping[str, tuple[Any, Any]]
) -> str:
    short = label.split(" (")[0]
    text = f"{short} {_pair_text(a, b)}"
    causes = _causes(name, cand, diff)
    if name == "recency_factor":
        bits = []
        if base.recency_rule != cand.recency_rule:
            bits.append(f"rule {base.recency_rule} -> {cand.recency_rule}")
        if math.isfinite(cand.age_days):
            bits.append(f"age {cand.age_days:.1f} d")
        if base.ttl_days != cand.ttl_days:
            bits.append(f"TTL {fmt_value(base.ttl_days)} d -> {fmt_value(cand.ttl_days)} d")
        extra = f" ({', '.join(bits)})" if bits else ""
        return text + (f" after {', '.join(causes)}" if causes else "") + extra
    return text + (f" after {', '.join(causes)}" if causes else "")


def explain_delta(
    d: FactDelta,
    diff: Mapping[str, tuple[Any, Any]],
    base_result: PipelineResult | None = None,
    cand_result: PipelineResult | None = None,
) -> str:
    """The explain-diff sentence of one fact (see :meth:`Comparison.explain`)."""
    b, c = d.base, d.cand
    if b is None or c is None:
        only = "baseline" if c is None else "candidate"
        other = "candidate" if c is None else "baseline"
        v = b or c
        assert v is not None
        why = ""
        if v.stage == "connector":
            keys = [
                f"{k} {fmt_value(x)} -> {fmt_value(y)}"
                for k, (x, y) in diff.items()
                if k
                in (
                    "graph_retrieval",
                    "graph_k",
                    "graph_edge_min",
                    "max_hops",
                    "envelope_fact_budget",
                    "connector_budget",
                    "hnsw_ef_search",
                )
            ]
            why = (
                " (found by the graph walk from the anchors, which differ"
                + (f" after {', '.join(keys)}" if keys else "")
                + ")"
            )
        return (
            f"{d.fact_id}: scored only in the {only} run{why}; the {other} run did not reach it. "
            f"{only.capitalize()} outcome: {v.role}, {'in' if v.in_envelope else 'not in'} the envelope"
            f"{' (' + v.reason + ')' if v.reason else ''}."
        )

    same_outcome = b.in_envelope == c.in_envelope and b.role == c.role and b.suppressed == c.suppressed
    if (
        b.cdr_rank == c.cdr_rank
        and b.cdr_score == c.cdr_score
        and b.passed_gate == c.passed_gate
        and same_outcome
        and not factor_effects(b, c)
        and not factor_effects(b, c, CONNECTOR_FACTORS)
    ):
        rank = f"CDR rank {b.cdr_rank}, " if b.cdr_rank is not None else ""
        return (
            f"{b.fact_id}: unchanged ({rank}score {b.cdr_score:.4f}, {b.role}"
            f"{', in the envelope' if b.in_envelope else ''})"
        )
    head = _movement(b, c)
    parts = [head]
    gate_key = diff.get("cdr_min_relevance")
    if b.passed_gate != c.passed_gate:
        thr = f" after cdr_min_relevance {fmt_value(gate_key[0])} -> {fmt_value(gate_key[1])}" if gate_key else ""
        state = "passes" if c.passed_gate else "fails"
        parts.append(f"because relevance {c.factors['relevance']:.3f} now {state} the gate{thr}")
    effects = factor_effects(b, c)
    if c.stage == "connector" or b.stage == "connector":
        effects = effects + [e for e in factor_effects(b, c, CONNECTOR_FACTORS) if e[0] not in {x[0] for x in effects}]
        effects.sort(key=lambda t: -t[4])
    if effects:
        name, label, x, y, _ = effects[0]
        lead = "because" if len(parts) == 1 else "and"
        parts.append(f"{lead} {_factor_phrase(name, label, x, y, b, c, diff)}")
        rest = [_factor_phrase(n, lab, u, v, b, c, diff) for n, lab, u, v, _ in effects[1:]]
        if rest:
            parts.append("(also " + "; ".join(rest) + ")")
    elif b.passed_gate == c.passed_gate:
        parts.append(
            f"although its own CDR factors did not change (score {c.cdr_score:.4f}): "
            "other facts' scores or the selection around it changed"
        )
    text = " ".join(parts)
    if b.in_envelope != c.in_envelope or b.role != c.role or b.suppressed != c.suppressed:
        text += f". Outcome: {_where(b)} -> {_where(c)}; {c.reason}"
    return text


def _where(v: FactView) -> str:
    """A fact's role and where it ended: ``anchor (in envelope)``, ``anchor (suppressed)``, ``candidate``."""
    return v.role + (" (in envelope)" if v.in_envelope else " (suppressed)" if v.suppressed else "")


def _movement(b: FactView, c: FactView) -> str:
    """``F1: ranked lower (CDR rank 2 -> 5, score 0.64 -> 0.35)``."""
    if b.cdr_rank is not None and c.cdr_rank is not None and b.cdr_rank != c.cdr_rank:
        word = "ranked lower" if c.cdr_rank > b.cdr_rank else "ranked higher"
    elif c.cdr_score < b.cdr_score:
        word = "scored lower"
    elif c.cdr_score > b.cdr_score:
        word = "scored higher"
    else:
        word = "unchanged score"
    rank = ""
    if b.cdr_rank is not None or c.cdr_rank is not None:
        rank = (
            f"CDR rank {b.cdr_rank if b.cdr_rank is not None else '-'} -> "
            f"{c.cdr_rank if c.cdr_rank is not None else '-'}, "
        )
    return f"{b.fact_id}: {word} ({rank}score {b.cdr_score:.4f} -> {c.cdr_score:.4f})"

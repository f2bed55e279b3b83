"""Before / after SPEC-027: the same scenario through SPEC-024-only retrieval and through
the full SPEC-027 §4 pipeline, with the numbers the stakeholder view puts side by side.

The SPEC-024-only baseline omits the three SPEC-027 fixes and nothing else:

* **no recency factor** (SPEC-027 §3): the run uses ``stale_floor = 1.0``; the SPEC-027 §3.2 formula
  then gives 1.0 on every branch (fresh, decay ``1 - 0 * x``, expired, STALE status), so CDR and
  connector scores carry a factor of exactly 1.0;
* **no contradiction resolution** (SPEC-027 §2): every value-conflicting pair is still *detected* in
  stage 4 (so the view can count the pairs handed to the model) but left alone, both facts kept: the
  run hands stage 4 a decision set that dismisses every pair (the operator "dismiss" path of
  ``crp_core.stages.contradictions.resolve``: no winner, no suppression, no NOTE block, no backfill).
  SPEC-003 §6.6 dedup of non-conflicting near-duplicates predates SPEC-027 and still applies;
* **naive fan-out** (SPEC-027 §1.1): the branches behave as stage 5's ``naive`` run (round-robin
  sub-queries, residual pull over the whole ResidualSet, one shared Coverage Set read at dispatch).

No pipeline module needed a hook for this: both switches go through existing parameters.

What the view counts (docs/decisions/tuning.md, "Before / after"): **expired** and **ageing** facts by
the one definition of ``crp_core.factors.recency.recency_state`` (the SPEC-027 factor at the run's now,
for both sides); contradictory pairs with both facts packed; the fan-out duplicates of
``FanoutRun.duplicate_count``; and, read off the records, why each fact left or entered the envelope
(:class:`EnvelopeChange`) and where the token difference comes from (:class:`TokenChange`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core.analysis.envelope_changes import EnvelopeChange, entry_change, removal_change
from crp_core.analysis.sweep import envelope_ids, jaccard
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.decisions import Decisions, pair_decision_map, pair_key
from crp_core.factors.recency import recency_state
from crp_core.records import FANOUT_DUPLICATES, FANOUT_REACHING, Duplicate
from crp_core.support.text import counted

if TYPE_CHECKING:
    from crp_core.corpus.embedding import Embedder
    from crp_core.corpus.prepared import ScenarioVectors
    from crp_core.model import Scenario
    from crp_core.records import ConflictPair, Envelope, FanoutRun, PipelineResult

#: the recency floor that turns the SPEC-027 §3.2 factor into a constant 1.0
NO_RECENCY_FLOOR = 1.0
DISMISS = {"kind": "dismiss", "winner": None}


class DismissEveryPair(Mapping[str, Mapping[str, Any]]):
    """A stage-4 decision set that dismisses every pair (SPEC-024: no contradiction resolution)."""

    def __getitem__(self, key: str) -> Mapping[str, Any]:
        return DISMISS

    def get(self, key: str, default: Any = None) -> Mapping[str, Any]:
        return DISMISS

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 1  # never "empty": stage 4 consults it for every pair

    def __contains__(self, key: object) -> bool:
        return True


def spec024_config(config: CRPConfig) -> CRPConfig:
    """``config`` with the recency factor switched off (``stale_floor = 1.0``)."""
    return config.replace(stale_floor=NO_RECENCY_FLOOR)


@dataclass(frozen=True, eq=False)
class BaselineRun:
    """The SPEC-024-only run: the PipelineResult of the switched-off pipeline and what it hands over."""

    result: PipelineResult  # recency 1.0, every pair dismissed; its fanout holds both runs
    config: CRPConfig  # the configuration asked for (the run used ``spec024_config(config)``)
    envelope: tuple[str, ...]  # packed order
    conflict_pairs: tuple[ConflictPair, ...]  # detected among the selected facts, both facts kept
    fanout: FanoutRun | None  # the naive mode's run, or None without fan-out

    @property
    def headers(self) -> Mapping[str, str]:
        return self.result.headers


def run_spec024_baseline(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    *,
    vectors: ScenarioVectors | None = None,
    now: datetime | None = None,
    embedder: Embedder | None = None,
) -> BaselineRun:
    """The scenario through SPEC-024-only retrieval (see the module docstring)."""
    from crp_core.pipeline import run_pipeline

    result = run_pipeline(
        corpus,
        scenario,
        spec024_config(config),
        vectors=vectors,
        now=now,
        embedder=embedder,
        decisions=DismissEveryPair(),
    )
    pairs = tuple(p for p in result.resolution.pairs if not p.skipped)
    return BaselineRun(
        result=result,
        config=config,
        envelope=envelope_ids(result),
        conflict_pairs=pairs,
        fanout=result.fanout.naive if result.fanout is not None else None,
    )


# ---- the side-by-side numbers ---------------------------------------------------------------------
@dataclass(frozen=True)
class SideNumbers:
    """What one side hands to the model."""

    label: str
    envelope: tuple[str, ...]
    expired_in_envelope: tuple[str, ...]  # packed, SPEC-027 recency at the floor (age >= TTL, or status STALE)
    ageing_in_envelope: tuple[str, ...]  # packed, SPEC-027 recency in the decay (stale_floor < factor < 1)
    contradictory_pairs: tuple[tuple[str, str], ...]  # value-conflicting pairs with both facts packed
    noted_pairs: tuple[tuple[str, str], ...]  # those of them the envelope flags with a NOTE block (ties)
    fanout_duplicates: int | None  # FanoutRun.duplicate_count (None: no fan-out)
    duplicates: tuple[Duplicate, ...]  # the fan-in duplicates themselves
    duplicate_facts: tuple[str, ...]  # fact ids named in those duplicates (packed or not)
    tokens_used: int
    note_tokens: int  # of tokens_used, the NOTE blocks'
    headers: Mapping[str, str]
    #: of fanout_duplicates, those the fan-in dedup caught and removed (FanoutRun.removed_at_fan_in; None: no fan-out)
    removed_at_fan_in: int | None = None

    @property
    def duplicates_reaching_model(self) -> int | None:
        """Fan-out duplicates the fan-in dedup did not remove: they reach the model (None: no fan-out)."""
        if self.fanout_duplicates is None:
            return None
        return self.fanout_duplicates - (self.removed_at_fan_in or 0)

    @property
    def reaching_model(self) -> tuple[int, int, int, int]:
        """What reaches the model, as both before / after charts draw it: expired facts and ageing facts
        in the envelope, contradictory pairs handed over, fan-out duplicates not removed at fan-in (0
        without a fan-out)."""
        return (
            len(self.expired_in_envelope),
            len(self.ageing_in_envelope),
            len(self.contradictory_pairs),
            self.duplicates_reaching_model or 0,
        )

    @property
    def packed_duplicate_facts(self) -> tuple[str, ...]:
        """The facts named by a fan-out duplicate that are in this side's envelope (envelope order)."""
        named = set(self.duplicate_facts)
        return tuple(f for f in self.envelope if f in named)


@dataclass(frozen=True)
class TokenChange:
    """Where the token difference between the two envelopes comes from, read off the packed records:
    ``after - before == (added - removed) + (kept_after - kept_before) + (notes_after - notes_before)``."""

    before: int
    after: int
    removed: int  # tokens of the lines of the facts only the SPEC-024 envelope packs
    n_removed: int
    added: int  # tokens of the lines of the facts only the SPEC-027 envelope packs
    n_added: int
    kept_before: int  # tokens of the lines of the facts both pack (each side's count)
    kept_after: int
    n_kept: int
    notes_before: int  # NOTE block tokens
    notes_after: int
    n_notes_before: int
    n_notes_after: int
    connectors_before: int  # tokens of connector lines (included in the figures above)
    connectors_after: int
    n_connectors_before: int
    n_connectors_after: int

    @property
    def delta(self) -> int:
        return self.after - self.before

    def sentence(self) -> str:
        """The change in one plain sentence (numbers only from this record)."""
        d = self.delta
        n_before, n_after = self.n_removed + self.n_kept, self.n_added + self.n_kept
        move = "more" if d > 0 else "fewer"
        facts = n_after - n_before
        fact_part = (
            "the same number of facts"
            if facts == 0
            else f"{abs(facts)} {'more' if facts > 0 else 'fewer'} fact{'s' if abs(facts) != 1 else ''}"
        )
        if d == 0:
            head = f"Both envelopes use {self.after} tokens, with {fact_part} on the SPEC-027 side"
        else:
            head = (
                f"SPEC-027 uses {abs(d)} {move} token{'s' if abs(d) != 1 else ''} ({self.before} → "
                f"{self.after}) with {fact_part} ({n_before} → {n_after})"
            )
        parts = [
            f"the {counted(self.n_removed, 'fact')} it removed cost {self.removed} tokens"
            + (f" ({_per(self.removed, self.n_removed)} a fact)" if self.n_removed else ""),
            f"the {counted(self.n_added, 'fact')} it added cost {self.added}"
            + (f" ({_per(self.added, self.n_added)} a fact)" if self.n_added else ""),
        ]
        if self.notes_after or self.notes_before:
            parts.append(
                f"NOTE blocks telling the model about tied conflicts cost {self.notes_after} tokens "
                f"({counted(self.n_notes_after, 'block')}; before: {self.notes_before})"
            )
        if (self.n_connectors_before, self.connectors_before) != (self.n_connectors_after, self.connectors_after):
            parts.append(
                f"connector lines: {counted(self.n_connectors_before, 'line')}, {self.connectors_before} "
                f"tokens before; {counted(self.n_connectors_after, 'line')}, {self.connectors_after} after"
            )
        net = [f"{self.added - self.removed:+d} from the facts that changed"]
        if self.notes_after != self.notes_before:
            net.append(f"{self.notes_after - self.notes_before:+d} from NOTE blocks")
        if self.kept_after != self.kept_before:
            net.append(f"{self.kept_after - self.kept_before:+d} from the facts both pack")
        return head + ": " + "; ".join(parts) + ". Net: " + ", ".join(net) + "."


def _per(tokens: int, k: int) -> str:
    return f"{tokens / k:.0f}" if k else "0"


@dataclass(frozen=True, eq=False)
class BeforeAfter:
    before: SideNumbers  # SPEC-024 only
    after: SideNumbers  # SPEC-027
    overlap: float  # Jaccard of the two envelopes
    only_before: tuple[str, ...]
    only_after: tuple[str, ...]
    spec027_recency: Mapping[str, float]  # fact id -> SPEC-027 recency factor, every fact of either envelope
    recency_rule: Mapping[str, str]  # fact id -> SPEC-027 §3.2 rule that applied
    baseline: BaselineRun
    full: PipelineResult  # the SPEC-027 pipeline's run
    fanout_width: int
    removed: tuple[EnvelopeChange, ...] = ()  # the facts of only_before, with why SPEC-027 left them out
    entered: tuple[EnvelopeChange, ...] = ()  # the facts of only_after, with why SPEC-027 packed them
    tokens: TokenChange | None = None

    def recency_state(self, fact_id: str) -> str:
        """``expired`` / ``ageing`` / ``fresh`` of a fact of either envelope (SPEC-027 factor)."""
        return recency_state(self.recency_rule.get(fact_id, "fresh"))

    def rows(self) -> list[dict[str, Any]]:
        """The numbers side by side (one row per measure) for tables and the HTML report."""

        def dup(x: int | None) -> int | str:
            return "no fan-out" if x is None else x

        b, a = self.before, self.after
        return [
            {"measure": "facts in the envelope", "SPEC-024 only": len(b.envelope), "SPEC-027": len(a.envelope)},
            {
                "measure": "expired facts in the envelope",
                "SPEC-024 only": len(b.expired_in_envelope),
                "SPEC-027": len(a.expired_in_envelope),
            },
            {
                "measure": "ageing facts in the envelope",
                "SPEC-024 only": len(b.ageing_in_envelope),
                "SPEC-027": len(a.ageing_in_envelope),
            },
            {
                "measure": "contradictory pairs handed to the model",
                "SPEC-024 only": len(b.contradictory_pairs),
                "SPEC-027": len(a.contradictory_pairs),
            },
            {
                "measure": FANOUT_DUPLICATES,
                "SPEC-024 only": dup(b.fanout_duplicates),
                "SPEC-027": dup(a.fanout_duplicates),
            },
            {
                "measure": "of which removed at fan-in",
                "SPEC-024 only": dup(b.removed_at_fan_in),
                "SPEC-027": dup(a.removed_at_fan_in),
            },
            {
                "measure": FANOUT_REACHING,
                "SPEC-024 only": dup(b.duplicates_reaching_model),
                "SPEC-027": dup(a.duplicates_reaching_model),
            },
            {"measure": "tokens used", "SPEC-024 only": b.tokens_used, "SPEC-027": a.tokens_used},
        ]

    def _pairs_not_packed_together(self, left_out: set[str]) -> int:
        """The SPEC-024 envelope's contradictory pairs that SPEC-027 neither packs nor resolves by leaving one
        of their facts out for the conflict (``left_out``): pairs whose facts it no longer selects together."""
        after = set(self.after.contradictory_pairs)
        return sum(1 for x, y in self.before.contradictory_pairs if (x, y) not in after and not {x, y} & left_out)

    def headlines(self) -> list[tuple[str, str]]:
        """One (fix, sentence) per SPEC-027 defect, in plain words, from the numbers above."""
        b, a = self.before, self.after
        if b.fanout_duplicates is None or a.fanout_duplicates is None:
            fan = (
                f"This scenario does not fan out (width {self.fanout_width}), so the race between parallel "
                "branches does not arise here."
            )
        else:
            packed = len(b.packed_duplicate_facts)
            caught = a.removed_at_fan_in or 0
            raced = (
                f"raced on one shared Coverage Set and picked the same material twice: "
                f"{counted(b.fanout_duplicates, 'duplicate')}, each handed on by more than one branch ({packed} of "
                "those facts also packed in the parent's envelope)"
                if b.fanout_duplicates
                else "raced on one shared Coverage Set; here they happened not to pick the same material twice "
                "(0 duplicates)"
            )
            fan = (
                f"Without SPEC-027 the {self.fanout_width} parallel branches {raced}. With partitioned "
                f"sub-queries and read-only snapshots: {counted(a.duplicates_reaching_model or 0, 'duplicate')} "
                "reaching the model" + (f" ({caught} caught and removed at fan-in)." if caught else ".")
            )
        losers = [c for c in self.removed if c.kind == "conflict loser"]
        ties = len(a.noted_pairs)
        con = (
            f"Without SPEC-027, {counted(len(b.contradictory_pairs), 'contradictory pair')} reached the model "
            f"with no warning. With SPEC-027: {len(a.contradictory_pairs)}"
        )
        if a.contradictory_pairs:
            con += (
                f" ({ties} tied, each flagged to the model by a NOTE block)"
                if ties == len(a.contradictory_pairs)
                else f" ({ties} flagged by a NOTE block)"
            )
        decided = [c for c in self.removed if c.kind == "operator decision"]
        con += f"; {counted(len(losers), 'losing fact')} removed by Fact Authority Resolution" if losers else ""
        con += (f" and {len(decided)}" if losers else f"; {counted(len(decided), 'fact')}") if decided else ""
        con += " left out by operators' decisions (triage), not by the algorithm" if decided else ""
        apart = self._pairs_not_packed_together({c.fact_id for c in losers + decided})
        word = "other pair" if losers or decided else "pair"
        con += f"; {counted(apart, word)} no longer packed together (other facts selected)." if apart else "."
        near = self.full.near_conflicts
        if near:  # a contradiction the threshold let through is said, not counted as resolved
            con += (
                f" But {counted(len(near), 'more pair')} of the SPEC-027 envelope read as a value conflict just "
                f"below contradiction_similarity {self.full.config.contradiction_similarity:g} and "
                f"{'reaches' if len(near) == 1 else 'reach'} the model unresolved (near conflicts: decide them on the "
                "Conflicts page's Envelope conflicts tab, or lower contradiction_similarity)."
            )
        stale = (
            f"Without SPEC-027, {counted(len(b.expired_in_envelope), 'expired fact')} (past the TTL, or marked "
            f"STALE) counted at full weight. With SPEC-027: {len(a.expired_in_envelope)}"
            + (
                f", each weighted down to the stale floor {self.full.config.stale_floor:g}"
                if a.expired_in_envelope
                else ""
            )
            + f". Ageing facts (still within the TTL, partly weighted down): {len(b.ageing_in_envelope)} → "
            f"{len(a.ageing_in_envelope)}."
        )
        return [
            ("Fan-out race → duplicates", fan),
            ("Contradictions → pairs handed to the model", con),
            ("Stale facts → expired facts packed", stale),
        ]


def _recency_split(ids: tuple[str, ...], rule: Mapping[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    states = [recency_state(rule.get(f, "fresh")) for f in ids]
    return (
        tuple(f for f, s in zip(ids, states) if s == "expired"),
        tuple(f for f, s in zip(ids, states) if s == "ageing"),
    )


def _packed_pairs(pairs: Iterable[ConflictPair], packed: set[str]) -> tuple[tuple[str, str], ...]:
    return tuple((p.fact_a, p.fact_b) for p in pairs if not p.skipped and p.fact_a in packed and p.fact_b in packed)


def _dups(run: FanoutRun | None) -> tuple[int | None, tuple[Duplicate, ...], tuple[str, ...]]:
    if run is None:
        return None, (), ()
    return run.duplicate_count, tuple(run.duplicates), run.duplicate_fact_ids


def _note_tokens(env: Envelope) -> int:
    return int(env.tokens_used) - sum(int(p.tokens) for p in env.order)


def _side(
    label: str,
    result: PipelineResult,
    env_ids: tuple[str, ...],
    pairs: Iterable[ConflictPair],
    rule: Mapping[str, str],
    run: FanoutRun | None,
) -> SideNumbers:
    packed = set(env_ids)
    expired, ageing = _recency_split(env_ids, rule)
    pair_list = tuple(pairs)
    n_dups, dups, dup_ids = _dups(run)
    return SideNumbers(
        label,
        env_ids,
        expired,
        ageing,
        _packed_pairs(pair_list, packed),
        tuple(
            (p.fact_a, p.fact_b)
            for p in pair_list
            if not p.skipped and p.tied and p.fact_a in packed and p.fact_b in packed
        ),
        n_dups,
        dups,
        dup_ids,
        int(result.envelope.tokens_used),
        _note_tokens(result.envelope),
        dict(result.headers),
        None if run is None else run.removed_at_fan_in,
    )


def _dismissed_keys(decisions: Decisions, full: PipelineResult) -> frozenset[str]:
    """Pair keys operators dismissed: those ``decisions`` names and those the SPEC-027 run applied."""
    named = (k for k, d in pair_decision_map(decisions).items() if d.get("kind") == "dismiss")
    applied = (pair_key(p.fact_a, p.fact_b) for p in full.resolution.pairs if p.decision == "dismiss")
    return frozenset((*named, *applied))


def _undismissed(pairs: Iterable[ConflictPair], dismissed: frozenset[str]) -> tuple[ConflictPair, ...]:
    """``pairs`` but those operators dismissed (by key: the SPEC-024 run marks every pair it lets through
    as dismissed, :class:`DismissEveryPair`)."""
    return tuple(p for p in pairs if pair_key(p.fact_a, p.fact_b) not in dismissed)


def token_change(before: Envelope, after: Envelope) -> TokenChange:
    """:class:`TokenChange` of two envelopes (the SPEC-024-only one first)."""
    b_cost = {p.fact_id: int(p.tokens) for p in before.order}
    a_cost = {p.fact_id: int(p.tokens) for p in after.order}
    removed = [f for f in b_cost if f not in a_cost]
    added = [f for f in a_cost if f not in b_cost]
    kept = [f for f in a_cost if f in b_cost]
    b_conn = [p for p in before.order if p.role == "connector"]
    a_conn = [p for p in after.order if p.role == "connector"]
    return TokenChange(
        before=int(before.tokens_used),
        after=int(after.tokens_used),
        removed=sum(b_cost[f] for f in removed),
        n_removed=len(removed),
        added=sum(a_cost[f] for f in added),
        n_added=len(added),
        kept_before=sum(b_cost[f] for f in kept),
        kept_after=sum(a_cost[f] for f in kept),
        n_kept=len(kept),
        notes_before=_note_tokens(before),
        notes_after=_note_tokens(after),
        n_notes_before=len(before.notes),
        n_notes_after=len(after.notes),
        connectors_before=sum(int(p.tokens) for p in b_conn),
        connectors_after=sum(int(p.tokens) for p in a_conn),
        n_connectors_before=len(b_conn),
        n_connectors_after=len(a_conn),
    )


def before_after(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    *,
    vectors: ScenarioVectors | None = None,
    decisions: Decisions = None,
    fanout_width: int | None = None,
    embedder: Embedder | None = None,
    full: PipelineResult | None = None,
) -> BeforeAfter:
    """Run both sides and count. ``fanout_width`` overrides the scenario's for both sides;
    ``decisions`` (operator pair decisions) apply to the SPEC-027 side; ``full`` reuses an existing
    SPEC-027 PipelineResult of exactly (corpus, scenario, config)."""
    from crp_core.factors.recency import compute_recency
    from crp_core.pipeline import run_pipeline

    if fanout_width is not None and int(fanout_width) != int(scenario.fanout_width or 0):
        scenario = scenario.replace(fanout_width=int(fanout_width))
        full = None
    now = scenario.now if scenario.now is not None else datetime.now(UTC)
    if vectors is None:
        from crp_core.corpus.prepared import embed_scenario

        vectors = embed_scenario(scenario, corpus, embedder)
    if full is None:
        full = run_pipeline(corpus, scenario, config, vectors=vectors, now=now, embedder=embedder, decisions=decisions)
    base = run_spec024_baseline(corpus, scenario, config, vectors=vectors, now=now, embedder=embedder)
    kb = corpus.kb
    before_env, after_env = base.envelope, envelope_ids(full)
    ids = tuple(dict.fromkeys(before_env + after_env))
    rows = np.array([kb.index_of(f) for f in ids], dtype=np.int64)
    rec = compute_recency(kb, rows, full.now, full.config)  # the SPEC-027 factor of every packed fact
    factor = {f: float(x) for f, x in zip(ids, rec.factor.tolist())}
    rule = dict(zip(ids, rec.rule))
    # a pair an operator dismissed is no conflict by their word, on either side: `check` does not count it
    # handed over, and the SPEC-024 side is judged by the same word, so before -> after shows only what
    # SPEC-027 changed (docs/decisions/triage.md "Dismissed pairs in before / after")
    dismissed = _dismissed_keys(decisions, full)
    before = _side(
        "SPEC-024 only", base.result, before_env, _undismissed(base.conflict_pairs, dismissed), rule, base.fanout
    )
    after = _side(
        "SPEC-027",
        full,
        after_env,
        _undismissed(full.resolution.pairs, dismissed),
        rule,
        full.fanout.partitioned if full.fanout is not None else None,
    )
    after_set, before_set = set(after_env), set(before_env)
    only_before = tuple(f for f in before_env if f not in after_set)
    only_after = tuple(f for f in after_env if f not in before_set)
    b_cost = {p.fact_id: int(p.tokens) for p in base.result.envelope.order}
    a_cost = {p.fact_id: int(p.tokens) for p in full.envelope.order}
    return BeforeAfter(
        before=before,
        after=after,
        overlap=jaccard(before_env, after_env),
        only_before=only_before,
        only_after=only_after,
        spec027_recency=factor,
        recency_rule=rule,
        baseline=base,
        full=full,
        fanout_width=int(scenario.fanout_width or 0),
        removed=tuple(removal_change(full, f, b_cost.get(f, 0)) for f in only_before),
        entered=tuple(entry_change(full, f, a_cost.get(f, 0)) for f in only_after),
        tokens=token_change(base.result.envelope, full.envelope),
    )

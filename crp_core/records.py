"""Immutable records produced by the pipeline stages (SPEC-027 §4).

Every record keeps every factor its stage computed, so the dashboard explains and never
recomputes. Array fields are read-only numpy arrays aligned with the record's ``idx`` (fact row
indices into ``corpus.kb.facts``). Stage modules construct these; nothing else mutates them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from crp_core.support.frozen import frozen_instance

if TYPE_CHECKING:  # what a result refers to: annotations only, so importing the records stays light
    from crp_core.config import CRPConfig
    from crp_core.corpus.prepared import Corpus
    from crp_core.factors.coverage import CoverageSet
    from crp_core.factors.recency import RecencyTable
    from crp_core.model import Scenario

Role = Literal["anchor", "connector", "candidate", "gated"]


# ---- stage 1: candidate gathering (docs/reference/pipeline.md §1) -------------------------------------------
@dataclass(frozen=True, eq=False)
class CandidateSet:
    """Union of the HNSW top-K of the query and of every sub-query, DELETED/QUARANTINED removed."""

    idx: np.ndarray  # (c,) int64 fact rows, ordered by relevance descending then row
    relevance: np.ndarray  # (c,) cosine(fact, query)
    passed_gate: np.ndarray  # (c,) bool: relevance >= cdr_min_relevance
    # per candidate: "query" and/or sub-query ids whose top-K held it (a DeferredTuple from stage 1)
    found_by: Sequence[tuple[str, ...]]
    gate_threshold: float
    # (c, m) float32 cosine of each candidate with each sub-query (the scenario's sub-queries in
    # ScenarioVectors.ids order), from the same product as ``relevance``: stage 2 reads its coverage
    # score and residual pull off it (None: not taken, stage 2 computes them from the vectors)
    sub_query_cosines: np.ndarray | None = None

    @property
    def gated_idx(self) -> np.ndarray:
        return self.idx[self.passed_gate]

    def gate_reason(self, pos: int) -> str:
        """Why candidate ``pos`` left the candidate set ('' when it passed)."""
        if self.passed_gate[pos]:
            return ""
        return f"relevance {self.relevance[pos]:.3f} < cdr_min_relevance {self.gate_threshold:.2f}"


# ---- stage 2: CDR (docs/reference/pipeline.md §2) ----------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CDRTable:
    """Every factor of the CDR product for each scored fact."""

    idx: np.ndarray
    relevance: np.ndarray
    residual_pull: np.ndarray
    effective_relevance: np.ndarray  # max(relevance, residual_pull)
    coverage_score: np.ndarray
    coverage_penalty: np.ndarray  # clamp(coverage_score, 0, cap)
    novelty: np.ndarray  # max(1 - coverage_penalty, floor)
    recency_factor: np.ndarray
    importance_weight: np.ndarray  # resolved (explicit or default by source type)
    ngram_overlap: np.ndarray  # int: distinct blacklisted n-grams in the fact
    ngram_penalty: np.ndarray
    cdr_score: np.ndarray
    passed_gate: np.ndarray | None = None  # bool: relevance >= cdr_min_relevance (None: all passed)

    def position(self, fact_row: int) -> int:
        hits = np.flatnonzero(self.idx == fact_row)
        if hits.size == 0:
            raise KeyError(fact_row)
        return int(hits[0])


# ---- stage 3: CDGR (docs/reference/pipeline.md §3) ---------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConnectorTable:
    """Connector candidates: facts within max_hops of an anchor, not anchors, retrievable."""

    idx: np.ndarray
    hop_distance: np.ndarray  # min hops to any anchor
    touched_anchors: tuple[tuple[int, ...], ...]  # anchor rows at graph distance 1 or 2
    bridged_pairs: tuple[tuple[tuple[int, int], ...], ...]  # touched-anchor pairs with no direct edge
    mean_path_weight: np.ndarray  # mean edge weight over the strongest shortest paths to touched anchors
    bridge_value: np.ndarray
    relevance: np.ndarray
    novelty: np.ndarray
    recency_factor: np.ndarray
    connector_score: np.ndarray  # bridge * novelty * recency * max(relevance, min_connector_relevance)
    selected: np.ndarray  # bool: chosen to fill the connector budget


@dataclass(frozen=True, eq=False)
class CDGRResult:
    anchors: np.ndarray  # anchor rows in CDR order
    connectors: ConnectorTable
    selected_connectors: np.ndarray  # rows, best first
    extra_anchors: np.ndarray  # rows that took unused connector slots (CDR order)
    graph_edges: tuple[tuple[int, int, float], ...]  # edges among anchors + selected connectors (for drawing)
    hops: int
    # candidates skipped as anchors: (skipped row, anchor row, cosine) - SPEC-003 §6.6 near-duplicates
    near_duplicates: tuple[tuple[int, int, float], ...] = ()
    # the stage-2 factors (novelty, recency, n-gram, ...) of every connector candidate, aligned with
    # ``connectors.idx``
    connector_cdr: CDRTable | None = None
    # connector candidates dropped before the connectors were chosen: (row, anchor row, cosine),
    # SPEC-003 §6.6 near-duplicates of an anchor with no value conflict (docs/reference/pipeline.md §6)
    connector_near_duplicates: tuple[tuple[int, int, float], ...] = ()


# ---- stage 4: contradiction resolution (docs/reference/pipeline.md §4) -------------------------------------
@dataclass(frozen=True, slots=True)
class Authority:
    """authority = source_authority * recency_factor * importance_weight (SPEC-027 §2.3)."""

    fact_id: str
    source_type: str
    source_authority: float
    recency_factor: float
    importance_weight: float
    authority: float

    @classmethod
    def make(
        cls,
        fact_id: str,
        source_type: str,
        source_authority: float,
        recency_factor: float,
        importance_weight: float,
        authority: float,
    ) -> Authority:
        """``Authority(...)`` built for a hot path (stage 4 makes one per fact in a conflict): the same record."""
        return frozen_instance(
            cls,
            {
                "fact_id": fact_id,
                "source_type": source_type,
                "source_authority": source_authority,
                "recency_factor": recency_factor,
                "importance_weight": importance_weight,
                "authority": authority,
            },
        )


@dataclass(frozen=True, slots=True)
class ValueDiff:
    """One aligned difference between the two texts."""

    pattern: str  # NUMBER_CHANGED | ENTITY_SUBSTITUTED | NEGATION_FLIP | DATE_SHIFTED | MAGNITUDE_ALTERED
    tokens_a: tuple[str, ...]
    tokens_b: tuple[str, ...]
    span_a: tuple[int, int]  # character span in text a (start, end) for highlighting
    span_b: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ValueConflict:
    patterns: tuple[str, ...]  # distinct patterns, sorted
    diffs: tuple[ValueDiff, ...]
    learned: bool = False  # found by the learned comparison where the rules found nothing


#: the patterns cell of a pair the detector reads no difference in, a conflict by an operator's word alone
NO_PATTERN_READ = "none read: an operator's decision"


@dataclass(frozen=True, slots=True)
class ConflictPair:
    fact_a: str
    fact_b: str
    similarity: float
    patterns: tuple[str, ...]
    conflict: ValueConflict
    authority: Mapping[str, Authority]  # fact_id -> components
    kept: tuple[str, ...]
    suppressed: str | None
    tied: bool
    skipped: bool = False  # a fact of the pair was already suppressed by an earlier pair
    margin: float = 0.0  # |authority_a - authority_b|
    decision: str | None = None  # operator decision applied, if any
    #: stage 4 holds the pair by an operator's accept or override alone: step 1 did not pair it (below
    #: contradiction_similarity, or no value difference read; docs/decisions/triage.md "A decided pair is
    #: a conflict")
    asserted: bool = False

    @property
    def by_decision_only(self) -> bool:
        """An asserted pair the detector reads no difference in: a conflict by an operator's word alone."""
        return self.asserted and not self.patterns

    def patterns_text(self, sep: str = ", ") -> str:
        """The patterns as one cell ("A, B"), or :data:`NO_PATTERN_READ` for a pair only a decision makes."""
        return NO_PATTERN_READ if self.by_decision_only else sep.join(self.patterns)

    @classmethod
    def make(  # noqa: PLR0913  the record's fields, as its dataclass __init__ takes them
        cls,
        fact_a: str,
        fact_b: str,
        similarity: float,
        patterns: tuple[str, ...],
        conflict: ValueConflict,
        authority: Mapping[str, Authority],
        kept: tuple[str, ...],
        suppressed: str | None,
        tied: bool,
        *,
        skipped: bool = False,
        margin: float = 0.0,
        decision: str | None = None,
        asserted: bool = False,
    ) -> ConflictPair:
        """``ConflictPair(...)`` built for a hot path (stage 4 makes one per arbitrated pair): the same record."""
        return frozen_instance(
            cls,
            {
                "fact_a": fact_a,
                "fact_b": fact_b,
                "similarity": similarity,
                "patterns": patterns,
                "conflict": conflict,
                "authority": authority,
                "kept": kept,
                "suppressed": suppressed,
                "tied": tied,
                "skipped": skipped,
                "margin": margin,
                "decision": decision,
                "asserted": asserted,
            },
        )


@dataclass(frozen=True)
class AuditEvent:
    event: str  # e.g. "CONTRADICTION_RESOLVED"
    data: Mapping[str, Any]


@dataclass(frozen=True, eq=False)
class Resolution:
    """Stage 4 output: the selected set after contradiction resolution, dedup and backfill."""

    selected: np.ndarray  # final rows (anchors + connectors + backfills), selection order
    pairs: tuple[ConflictPair, ...]  # in processing order, skipped ones included
    suppressed: np.ndarray  # rows suppressed as contradiction losers
    deduplicated: tuple[tuple[int, int], ...]  # (dropped row, kept row) by SPEC-003 §6.6
    backfilled: tuple[tuple[int, int], ...]  # (new row, row whose slot it took)
    # the SPEC-027 §2.5 NOTE block of each tied pair, in processing order; the envelope carries one NOTE
    # per tie group (``Envelope.tie_groups``), which for a group of two packed facts is this text
    notes: tuple[str, ...]
    audit: tuple[AuditEvent, ...]
    # (k, 2) int64: (row of fact_a, row of fact_b) of each pair of ``pairs`` that is tied, not skipped and not
    # dismissed, processing order: the unresolved pairs, which stage 6 joins into tie groups
    tied_rows: np.ndarray
    # the pairs of ``pairs`` not skipped and not dismissed by an operator as "not a conflict"
    detected_count: int
    # (pool row, kept row, why) of each fact the backfill passed over before it found one that fits: a
    # near-duplicate of the kept fact, a value conflict with it, or an operator's decision on the pair
    passed_over: tuple[tuple[int, int, str], ...] = ()

    @property
    def detected(self) -> int:
        """Pairs counted by ``CRP-Context-Conflicts-Resolved``: arbitrated or tied, not skipped, and
        not dismissed by an operator as "not a conflict"."""
        return self.detected_count

    @property
    def unresolved(self) -> int:
        """The tied pairs among :attr:`detected` (``tied_rows``)."""
        return int(self.tied_rows.shape[0])


# ---- the known-conflict guard (beyond SPEC-027: crp_core.stages.known) ----------------------------
#: where a known conflict came from
SOURCE_SCAN = "scan"
SOURCE_OPERATOR = "operator"
#: what the guard did with a flagged fact
ACTION_FLAGGED = "flagged"
ACTION_WINNER_PULLED = "winner_pulled"
ACTION_LOSER_DROPPED = "loser_dropped"


@dataclass(frozen=True)
class KnownConflict:
    """A conflict decided outside the run: ``loser`` loses to ``winner``."""

    winner: str
    loser: str
    source: str  # SOURCE_SCAN | SOURCE_OPERATOR
    patterns: tuple[str, ...] = ()
    margin: float = 0.0  # authority margin (scan), 0 for an operator decision


@dataclass(frozen=True)
class KnownConflictFlag:
    """A selected fact that loses a known conflict to a fact outside the selection."""

    loser: str
    winner: str
    source: str
    patterns: tuple[str, ...]
    action: str  # ACTION_FLAGGED | ACTION_WINNER_PULLED | ACTION_LOSER_DROPPED

    @property
    def message(self) -> str:
        what = {
            ACTION_FLAGGED: "is in the envelope",
            ACTION_WINNER_PULLED: "was replaced by its winner",
            ACTION_LOSER_DROPPED: "was dropped from the envelope",
        }[self.action]
        origin = "the whole-CKF scan" if self.source == SOURCE_SCAN else "an operator decision"
        pats = f" ({', '.join(self.patterns)})" if self.patterns else ""
        return (
            f"fact {self.loser!r} loses a known conflict{pats} to {self.winner!r}, which is not in the "
            f"selection; known from {origin}; {self.loser!r} {what}"
        )


# ---- stage 5: fan-out (docs/reference/pipeline.md §5) ------------------------------------------------------
@dataclass(frozen=True, eq=False)
class BranchResult:
    branch: int
    sub_queries: tuple[str, ...]
    cdr: CDRTable  # partition-scoped scoring of the branch's candidates (gate applied)
    selected: tuple[str, ...]  # fact ids chosen, best first
    coverage_additions: tuple[str, ...]  # sub-query ids added locally (depth = branch_depth_weight)


@dataclass(frozen=True)
class Duplicate:
    """One cross-branch duplicate found at fan-in, and what became of it (SPEC-027 §1.6)."""

    fact_ids: tuple[str, ...]  # one id (same fact in several branches) or two (cosine > fanin_dedup_similarity)
    branches: tuple[int, ...]
    similarity: float
    kept: str | None = None  # the one of ``fact_ids`` the fan-in union keeps (``FanoutRun.merged``), if any
    # True: the run's fan-in dedup removed the extra copies (one copy at most goes on); False: every copy
    # reaches the model (a run without fan-in dedup, the naive race of SPEC-027 §1.1)
    removed_at_fan_in: bool = False


#: the name of :attr:`FanoutRun.duplicate_count` wherever it is shown
FANOUT_DUPLICATES = "fan-out duplicates"
#: the name of those duplicates the fan-in dedup did not remove (:attr:`FanoutRun.reaching_model`): the figure a
#: before / after comparison judges the fan-out fix by
FANOUT_REACHING = "fan-out duplicates reaching the model"


@dataclass(frozen=True, eq=False)
class FanoutRun:
    mode: Literal["partitioned", "naive"]
    partitions: tuple[tuple[str, ...], ...]
    branches: tuple[BranchResult, ...]
    duplicates: tuple[Duplicate, ...]
    merged: tuple[str, ...]  # fan-in union of selected facts, each duplicate counted once (the distinct facts)
    coverage_depth: int  # parent Coverage Set size after merge
    # whether the fan-in applies SPEC-027 §1.6's cross-branch dedup: the partitioned run does, the naive race
    # (SPEC-024 alone, §1.1) does not, so its duplicates reach the model
    fan_in_dedup: bool = True

    @property
    def duplicate_count(self) -> int:
        """The fan-out duplicate count every view shows (:data:`FANOUT_DUPLICATES`): the cross-branch
        duplicates found at fan-in, one per fact chosen by two or more branches and one per pair of
        near-identical facts chosen by different branches. It splits into :attr:`removed_at_fan_in` and
        :attr:`reaching_model`."""
        return len(self.duplicates)

    @property
    def removed_at_fan_in(self) -> int:
        """Duplicates caught and removed by the fan-in dedup (:attr:`Duplicate.removed_at_fan_in`)."""
        return sum(1 for d in self.duplicates if d.removed_at_fan_in)

    @property
    def reaching_model(self) -> int:
        """Duplicates whose every copy reaches the model (not removed at fan-in)."""
        return sum(1 for d in self.duplicates if not d.removed_at_fan_in)

    @property
    def duplicate_fact_ids(self) -> tuple[str, ...]:
        """Every fact id those duplicates name, in order, each once (some may not reach the envelope)."""
        return tuple(dict.fromkeys(f for d in self.duplicates for f in d.fact_ids))


@dataclass(frozen=True)
class FanoutStep:
    """One state of the fan-out timeline for the dashboard's stepper."""

    index: int
    kind: str  # "parent" | "partition" | "snapshot" | "retrieval" | "additions" | "merge" | "dedup"
    title: str
    branch: int | None
    coverage: tuple[str, ...]  # Coverage Set entries (sub-query ids) visible at this step
    added: tuple[str, ...]  # entries added since the previous step
    facts: tuple[str, ...]  # facts chosen / reported at this step
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class FanoutResult:
    width: int
    rule: str  # "one sub-query per partition" | "k-means"
    partitioned: FanoutRun
    naive: FanoutRun
    steps: tuple[FanoutStep, ...]
    naive_steps: tuple[FanoutStep, ...]


# ---- stage 6: packing (docs/reference/pipeline.md §6) -----------------------------------------------------
@dataclass(frozen=True)
class PackedFact:
    fact_id: str
    role: str  # "anchor" | "connector"
    score: float  # CDR score (anchors) or connector score (connectors)
    tier: str | None  # anchors: "critical" | "important" | "supporting" (CDR / best anchor CDR); connectors: None
    band: str  # "primacy" (positions 1-2) | "middle" | "recency" (the final block); connectors: "middle"
    tokens: int
    bridges_anchor: str | None = None  # connectors: the first anchor they bridge in anchor order (sets the spot)

    @classmethod
    def make(
        cls,
        fact_id: str,
        role: str,
        score: float,
        tier: str | None,
        band: str,
        tokens: int,
        bridges_anchor: str | None = None,
    ) -> PackedFact:
        """``PackedFact(...)`` built for a hot path (packing makes one per packed fact): the same record."""
        return frozen_instance(
            cls,
            {
                "fact_id": fact_id,
                "role": role,
                "score": score,
                "tier": tier,
                "band": band,
                "tokens": tokens,
                "bridges_anchor": bridges_anchor,
            },
        )


DropReason = Literal["budget", "unbridged"]


@dataclass(frozen=True)
class DroppedPair:
    """A tied pair (docs/reference/pipeline.md §4) not wholly in the envelope: one or both of its facts left
    out by stage 6, so no NOTE block covers it and no header counts it."""

    fact_a: str
    fact_b: str
    reason: DropReason  # why its first left-out fact (fill order) is out: the budget / a connector lost its anchors


@dataclass(frozen=True)
class TieGroup:
    """The facts connected by tied pairs (SPEC-027 §2.5; docs/reference/pipeline.md §6): packed with one NOTE
    block that lists its packed facts and names the ones left out."""

    members: tuple[str, ...]  # every fact of the group, fill order (anchors by CDR, then connectors by score)
    pairs: tuple[tuple[str, str], ...]  # its tied pairs, ids sorted within a pair, pairs sorted
    packed: tuple[str, ...]  # members in the envelope, envelope order (the order its NOTE lists them)
    left_out: tuple[str, ...]  # members left out, fill order (its NOTE names them)
    left_out_reasons: tuple[DropReason, ...]  # why, aligned with ``left_out``
    note: str | None  # its NOTE block, exact envelope text; None when no member is packed
    note_tokens: int = 0  # tokens of ``note`` (0 without one)

    @property
    def packed_pairs(self) -> tuple[tuple[str, str], ...]:
        """The tied pairs with both facts packed: the pairs its NOTE covers, each one unresolved conflict
        of ``CRP-Context-Conflicts-Resolved``."""
        packed = set(self.packed)
        return tuple(p for p in self.pairs if p[0] in packed and p[1] in packed)


@dataclass(frozen=True)
class Envelope:
    order: tuple[PackedFact, ...]
    text: str
    tokens_used: int
    token_budget: int
    dropped_for_budget: tuple[str, ...]  # selected facts left out for the budget (alone or from a tie group)
    notes: tuple[str, ...]  # NOTE blocks included in the text, one per tie group with a packed fact, text order
    # connectors left out because fewer than two of the anchors they bridge are packed
    dropped_unbridged: tuple[str, ...] = ()
    # tied pairs not wholly packed; they count neither in the envelope nor in the header
    dropped_pairs: tuple[DroppedPair, ...] = ()
    # every tie group offered: those with a NOTE first, in the order of ``notes``, then those left out whole
    tie_groups: tuple[TieGroup, ...] = ()
    # why the envelope is empty (None when it is not): the budget, the guard, the gate
    empty_reason: str | None = None

    def note_covering(self, fact_a: str, fact_b: str) -> str | None:
        """The NOTE block in the text that lists both facts (one tie group's), or None."""
        for g in self.tie_groups:
            if g.note is not None and fact_a in g.packed and fact_b in g.packed:
                return g.note
        return None


# ---- the whole run ---------------------------------------------------------------------------
@dataclass(frozen=True)
class FactOutcome:
    """One row of the breakdown table: where each scored fact ended and why."""

    fact_id: str
    role: Role
    in_envelope: bool
    suppressed: bool
    reason: str  # human-readable: "gated: relevance 0.41 < 0.55", "suppressed by F1 (authority ...)", ...


@dataclass(frozen=True)
class Clamp:
    """A setting the run used at a value other than the one asked, because the data holds less than it
    asks for (``candidate_k`` above the retrievable facts, ``graph_k`` above the other facts, a fan-out
    width above the ResidualSet) or a search needs more (``hnsw_ef_search`` below K). Range checks refuse
    values outside ``config.RANGES``; clamps only bring valid values down (or up) to the data, and say so
    (docs/decisions/hardening.md, "Clamping to the data")."""

    key: str  # the configuration key, or "fanout_width" (the scenario's)
    asked: int
    used: int
    why: str

    @property
    def message(self) -> str:
        """One line for a warning: ``candidate_k 10000 clamped to 24: only 24 retrievable facts``."""
        return f"{self.key} {self.asked} {'raised' if self.used > self.asked else 'clamped'} to {self.used}: {self.why}"


@dataclass(frozen=True)
class NearConflict:
    """Two packed facts (``fact_a`` packed first) at ``similarity``, within ``near_conflict_margin`` below
    ``contradiction_similarity``, whose texts the detector reads as a value conflict with ``patterns``
    (docs/decisions/near-conflicts.md; found by ``crp_core.near_threshold``)."""

    fact_a: str
    fact_b: str
    similarity: float
    patterns: tuple[str, ...]
    learned: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "fact_a": self.fact_a,
            "fact_b": self.fact_b,
            "similarity": round(self.similarity, 6),
            "patterns": list(self.patterns),
            "learned": self.learned,
        }


@dataclass(frozen=True, eq=False)
class PipelineResult:
    config: CRPConfig
    now: datetime  # the time the run treated as now
    candidates: CandidateSet
    recency: RecencyTable  # for gated-in candidates and connector candidates
    cdr: CDRTable  # every candidate (gated ones too, so the UI can show them)
    cdgr: CDGRResult
    resolution: Resolution
    fanout: FanoutResult | None
    envelope: Envelope
    outcomes: Sequence[FactOutcome]  # a DeferredTuple from run_pipeline: built on first read
    headers: Mapping[str, str]
    timings_ms: Mapping[str, float]  # stage name -> wall time
    warnings: tuple[str, ...]
    audit: tuple[AuditEvent, ...]
    coverage: CoverageSet  # the Coverage Set scored against
    scenario: Scenario  # the Scenario that was run
    corpus: Corpus  # the Corpus the run read (fact texts, vectors, token counts)
    known_conflicts: tuple[KnownConflictFlag, ...] = ()  # the known-conflict guard's findings
    clamps: tuple[Clamp, ...] = ()  # settings used at a value other than asked, to fit the data
    # packed pairs just below contradiction_similarity that value-conflict, most similar first (a DeferredTuple
    # from run_pipeline: built on first read, once per run)
    near_conflicts: Sequence[NearConflict] = ()

    @property
    def asked_clamps(self) -> tuple[Clamp, ...]:
        """The clamps of a value someone asked for: a configuration key set away from its default, or the
        scenario's fan-out width. A default brought to a small CKF (``candidate_k`` 50 with 31 facts) is no
        surprise: said quietly, never as a warning (docs/decisions/hardening.md, "Clamping to the data")."""
        changed = set(self.config.diff(type(self.config)()))
        return tuple(c for c in self.clamps if c.key in changed or c.key == "fanout_width")

"""Stage 4: contradiction resolution over the selected facts (SPEC-027 §2, docs/reference/pipeline.md §4).

Detects the conflicting pairs (cosine above ``contradiction_similarity`` and :func:`values_conflict`),
applies SPEC-003 §6.6 dedup to the pairs that do not conflict, arbitrates by authority, suppresses
the losers and backfills their slots. Pure: no I/O, every constant from :class:`CRPConfig`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.decisions import Decisions
from crp_core.factors.recency import FactAttributes
from crp_core.model import Fact
from crp_core.records import AuditEvent, Authority, ConflictPair, Resolution, ValueConflict
from crp_core.stages.contradictions.arbitration import (
    AUTHORITY_DECIMALS,
    Outcome,
    asserted_pairs,
    decision_for,
    has_pair_decisions,
    note_for,
    outcome,
    tied_and_losers,
)
from crp_core.stages.contradictions.audit import conflict_event
from crp_core.stages.contradictions.authority import RecencySource, authorities_of, authority_of, recency_factors
from crp_core.stages.contradictions.backfill import backfill_slots
from crp_core.stages.contradictions.values import conflict_check, values_conflict
from crp_core.support.frozen import DeferredTuple, freeze_owned, frozen_array, frozen_instance
from crp_core.support.memo import LRU


def _score_of(scores: Any, row: int) -> float:
    try:
        return float(scores[row])
    except (KeyError, IndexError, TypeError):
        return 0.0


def _unique_rows(rows: Iterable[int]) -> np.ndarray:
    seen = dict.fromkeys(np.asarray(rows, dtype=np.int64).reshape(-1).tolist())
    return np.fromiter(seen, dtype=np.int64, count=len(seen))


def resolve_contradictions(  # noqa: PLR0913  stage 4's signature: the selection, its roles, scores and backfill pool, the run's inputs
    corpus: Corpus,
    selected_rows: Sequence[int] | np.ndarray,
    roles: Mapping[int, str],
    scores: Mapping[int, float],
    ranked_pool: Sequence[int] | np.ndarray,
    recency: RecencySource,
    config: CRPConfig,
    decisions: Decisions = None,
    *,
    now: datetime | None = None,
) -> Resolution:
    """Contradiction resolution over the selected facts (SPEC-027 §2, docs/reference/pipeline.md §4).

    1. One Gram matrix of the selected vectors; pairs above ``min(contradiction_similarity,
       dedup_similarity)`` go to :func:`values_conflict`.
    2. SPEC-003 §6.6 dedup over the pairs that do NOT value-conflict (cos > dedup_similarity):
       greedy in score order (ties by fact id), the higher score is kept; an anchor is always kept
       over a connector (a connector score is on another scale than a CDR, docs/reference/pipeline.md §6).
    3. Conflicting pairs (cos > contradiction_similarity) among the survivors, ordered by the pair's
       higher authority (descending) then fact ids; a pair with an already-suppressed fact is
       ``skipped``; otherwise the higher authority wins, a tie keeps both (NOTE block), an operator
       decision (``decisions[pair_key]``) dismisses or overrides.
    4. Backfill (``config.backfill``): each slot freed by suppression (losers, in processing order)
       or by dedup (in selection order) goes to the next fact of ``ranked_pool`` that is not
       selected, conflicts with no kept fact and is no near-duplicate of one (docs/reference/pipeline.md §4, §2.8).

    ``recency``: the run's :class:`FactAttributes` (or a RecencyTable, or a row -> factor mapping; rows
    it lacks are read at ``now``). ``roles`` (row -> "anchor"/"connector") goes into the audit events;
    ``scores`` (row -> CDR or connector score) orders the dedup. ``decisions``: pair key ->
    ``{"kind", "winner"}`` (or a triage ``DecisionSet``).
    """
    sel = _Selection(corpus, _unique_rows(selected_rows), roles)
    conflicts, near_dups = sel.detect(config)
    decided = asserted_pairs(sel.ids, decisions)  # the selection's pairs an operator accepted or overrode
    asserted = set(decided) - set(zip(conflicts.p.tolist(), conflicts.q.tolist())) if decided else set()
    if asserted:  # a pair an operator says conflicts is arbitrated, never deduplicated, wherever step 1 left it
        conflicts, near_dups = (
            sel.plus_asserted(conflicts, sorted(asserted), config),
            [d for d in near_dups if d not in asserted],
        )
    # a fact an operator decided on is kept over its near-duplicates: the decision names it
    dropped, deduplicated = sel.dedup(near_dups, scores, {p for pair in decided for p in pair})
    live = conflicts.without(dropped)
    mark = np.zeros(len(sel.row_list), dtype=bool)  # the positions in some pair, ascending
    mark[live.p], mark[live.q] = True, True
    involved = np.flatnonzero(mark).tolist()
    rows = sel.rows[involved] if involved else np.zeros(0, np.int64)
    if isinstance(recency, FactAttributes):  # the run's attributes: the records they keep
        auth = dict(zip(involved, authorities_of(recency, rows.tolist(), config)))
    else:
        factors = recency_factors(corpus, rows, recency, now, config)
        auth = {p: authority_of(sel.facts[sel.row_list[p]], factors[sel.row_list[p]], config) for p in involved}
    arbitrated = sel.arbitrate(live, auth, decisions, config)
    suppressed = set(arbitrated.suppressed_pos)
    kept_rows = [r for p, r in enumerate(sel.row_list) if p not in dropped and p not in suppressed]
    freed = arbitrated.suppressed_pos + sorted(dropped)
    backfilled, passed_over = (
        backfill_slots(corpus, sel.row_list, freed, kept_rows, ranked_pool, config, decisions)
        if config.backfill
        else ([], [])
    )
    # the final selection: selection order, a backfill in its loser's slot
    fill_for = {old: new for new, old in backfilled}
    final: list[int] = []
    for p, r in enumerate(sel.row_list):
        if p in dropped or p in suppressed:
            if r in fill_for:
                final.append(fill_for[r])
            continue
        final.append(r)
    return Resolution(
        selected=frozen_array(np.array(final, dtype=np.int64)),
        pairs=cast("tuple[ConflictPair, ...]", arbitrated.pairs),
        suppressed=frozen_array(np.array([sel.row_list[p] for p in arbitrated.suppressed_pos], dtype=np.int64)),
        deduplicated=tuple(deduplicated),
        backfilled=tuple(backfilled),
        passed_over=tuple(passed_over),
        notes=cast("tuple[str, ...]", arbitrated.notes(sel.facts, sel.row_list)),
        audit=cast("tuple[AuditEvent, ...]", arbitrated.audit),
        tied_rows=freeze_owned(sel.rows[arbitrated.tied]),
        detected_count=arbitrated.counted,
    )


@dataclass
class _Arbitrated:
    """Step 3's output: the pairs in processing order (their records built on first read), the positions of
    the suppressed losers in processing order, the positions (fact_a, fact_b) of each tied pair counted as
    unresolved, in processing order, the count of pairs ``CRP-Context-Conflicts-Resolved`` counts, and the
    audit events (built on first read)."""

    pairs: Sequence[ConflictPair] = ()
    suppressed_pos: list[int] = field(default_factory=list)
    tied: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.intp))  # (k, 2) positions
    counted: int = 0
    audit: Sequence[AuditEvent] = ()

    def notes(self, facts: Sequence[Fact], row_list: list[int]) -> Sequence[str]:
        """The SPEC-027 §2.5 NOTE block of each tied pair, in processing order: built on first read (the
        envelope writes one NOTE per tie group, stage 6's own)."""
        tied = self.tied

        def build() -> list[str]:
            return [note_for(facts[row_list[p]], facts[row_list[q]]) for p, q in tied.tolist()]

        return DeferredTuple(build) if tied.size else ()


@dataclass(frozen=True)
class _Conflicts:
    """Step 1's value-conflicting pairs above ``contradiction_similarity``: positions ``p < q`` (read-only
    ``intp`` arrays, in the order the upper triangle gives them) and each pair's :class:`ValueConflict`
    (``p``'s text as side a)."""

    p: np.ndarray
    q: np.ndarray
    found: Sequence[ValueConflict]
    asserted: frozenset[tuple[int, int]] = frozenset()  # (p, q) of the pairs only an operator's word adds

    def plus(self, extra: Sequence[tuple[int, int]], found: Sequence[ValueConflict]) -> _Conflicts:
        """These pairs, then ``extra`` (positions p < q that step 1 did not find, asserted by an operator)
        with what was read in each."""
        p = np.concatenate([self.p, np.array([e[0] for e in extra], dtype=np.intp)])
        q = np.concatenate([self.q, np.array([e[1] for e in extra], dtype=np.intp)])
        return _Conflicts(freeze_owned(p), freeze_owned(q), [*self.found, *found], self.asserted | set(extra))

    def without(self, dropped: set[int]) -> _Conflicts:
        """The pairs with neither position in ``dropped``."""
        if not dropped or not len(self.p):
            return self
        p, q = self.p, self.q
        out = np.zeros(max(int(p.max()), int(q.max()), max(dropped)) + 1, dtype=bool)
        out[list(dropped)] = True
        keep = np.flatnonzero(~(out[p] | out[q]))
        found = [self.found[k] for k in keep.tolist()]
        return _Conflicts(freeze_owned(p[keep]), freeze_owned(q[keep]), found, self.asserted)


#: step 3's decisions: (kept ids of each skipped pair by its index, each pair's outcome when decided one by one,
#: the suppressed positions, the indices of the tied pairs), all in processing order
_Decided = tuple[dict[int, tuple[str, ...]], list[Outcome | None] | None, list[int], Sequence[int] | np.ndarray]

#: the detection record of a pair only an operator's decision makes a conflict: no pattern, no diff
_NO_DIFFERENCE = ValueConflict((), ())

#: from this many conflicting pairs on, the processing order is one ``lexsort`` (fewer: one Python sort)
_ARRAY_ORDER = 48

#: selections whose step 1 (:meth:`_Selection.detect`) a corpus keeps (0: none, every run detects)
DETECTIONS_KEPT = 8
#: the corpus's derived-data key of the kept detections (:meth:`Corpus.derived`), and what it keeps
_DETECTIONS = "stage-4 detections"
_Kept = LRU[tuple[bytes, float, float, bool], tuple["_Conflicts", tuple[tuple[int, int], ...]]]


class _Selection:
    """The selected facts by position (``rows``: unique fact rows, selection order): their ids, texts,
    roles and Gram matrix, read by steps 1-3."""

    def __init__(self, corpus: Corpus, rows: np.ndarray, roles: Mapping[int, str]) -> None:
        kb = corpus.kb
        self.facts = kb.facts
        self.rows = rows
        self.row_list: list[int] = rows.tolist()
        self.ids = [kb.facts[r].fact_id for r in self.row_list]
        self.contents = [kb.facts[r].content for r in self.row_list]
        self.roles = roles
        self.corpus = corpus
        self._gram: np.ndarray | None = None
        self._rank: np.ndarray | None = None

    @property
    def gram(self) -> np.ndarray:
        """The selected vectors' Gram matrix (float32), computed when first read."""
        if self._gram is None:
            v = np.asarray(self.corpus.vectors, dtype=np.float32)[self.rows]
            self._gram = v @ v.T
        return self._gram

    def detect(self, config: CRPConfig) -> tuple[_Conflicts, Sequence[tuple[int, int]]]:
        """Step 1: the value conflicts among pairs above ``contradiction_similarity`` (positions (p, q),
        p < q) and the near-duplicates (above ``dedup_similarity``, no value conflict): a function of the
        corpus, the rows in selection order and the key's settings, kept for :data:`DETECTIONS_KEPT` selections."""
        if not DETECTIONS_KEPT:
            return self._detect(config)
        c = config
        key = (self.rows.tobytes(), c.contradiction_similarity, c.dedup_similarity, bool(c.detector_learned))
        kept: _Kept = self.corpus.derived(_DETECTIONS, lambda: LRU(DETECTIONS_KEPT, locked=True))
        return kept.get_or_build(key, lambda: self._detect(config))

    def _detect(self, config: CRPConfig) -> tuple[_Conflicts, tuple[tuple[int, int], ...]]:
        """:meth:`detect`, computed: one Gram matrix of the selection, each pair above the lower threshold
        to :func:`values_conflict`."""
        g = self.gram
        low = min(config.contradiction_similarity, config.dedup_similarity)
        iu, ju = np.nonzero(g > low)  # row-major: the upper triangle's pairs in the order triu gives them
        upper = iu < ju
        iu, ju = iu[upper], ju[upper]
        # the thresholds compared as numpy compares the float32 Gram entries (one pass each, not per pair)
        pair_sims = g[iu, ju]
        # one ``map`` over the pairs' texts, called as stage 3 calls it: both read the same memoised verdicts
        text_of, check = self.contents.__getitem__, conflict_check(bool(config.detector_learned))
        got = list(map(check, map(text_of, iu.tolist()), map(text_of, ju.tolist())))
        conflict = np.fromiter((vc is not None for vc in got), dtype=bool, count=len(got))
        close = np.flatnonzero(conflict & (pair_sims > config.contradiction_similarity))
        dup = np.flatnonzero(~conflict & (pair_sims > config.dedup_similarity))
        near_dups = tuple(zip(iu[dup].tolist(), ju[dup].tolist()))
        found = tuple(got[k] for k in close.tolist())
        ps, qs = iu[close].astype(np.intp, copy=False), ju[close].astype(np.intp, copy=False)
        return _Conflicts(freeze_owned(ps), freeze_owned(qs), cast("tuple[ValueConflict, ...]", found)), near_dups

    def plus_asserted(self, found: _Conflicts, extra: Sequence[tuple[int, int]], config: CRPConfig) -> _Conflicts:
        """``found`` and the pairs an operator asserted that step 1 left out, each with the difference the
        detector reads in its texts (below the similarity threshold it was never asked), else none."""
        check, text = conflict_check(bool(config.detector_learned)), self.contents
        return found.plus(extra, [check(text[p], text[q]) or _NO_DIFFERENCE for p, q in extra])

    def dedup(
        self, near_dups: Sequence[tuple[int, int]], scores: Mapping[int, float], decided: set[int] | None = None
    ) -> tuple[set[int], list[tuple[int, int]]]:
        """Step 2, SPEC-003 §6.6 over the non-conflicting pairs: (dropped positions, (dropped row, kept
        row) in dedup order); the positions in ``decided`` (a fact of an operator's accepted or overridden
        pair) are kept first."""
        if not near_dups:  # no pair to dedup: every position stays
            return set(), []
        dup_of: dict[int, list[int]] = {}
        for p, q in near_dups:
            dup_of.setdefault(p, []).append(q)
            dup_of.setdefault(q, []).append(p)
        # the dedup order's key of each position: decided facts first, anchors first, higher score first,
        # then fact id
        decided = decided or set()
        keep_keys = [
            (p not in decided, self.roles.get(r) == "connector", -_score_of(scores, r), self.ids[p])
            for p, r in enumerate(self.row_list)
        ]
        keep_key = keep_keys.__getitem__
        alive: set[int] = set()
        deduplicated: list[tuple[int, int]] = []
        dropped: set[int] = set()
        for p in sorted(range(len(self.row_list)), key=keep_key):
            keepers = [q for q in dup_of.get(p, ()) if q in alive]
            if keepers:
                best = min(keepers, key=keep_key)
                deduplicated.append((self.row_list[p], self.row_list[best]))
                dropped.add(p)
            else:
                alive.add(p)
        return dropped, deduplicated

    def arbitrate(
        self, live: _Conflicts, auth: Mapping[int, Authority], decisions: Decisions, config: CRPConfig
    ) -> _Arbitrated:
        """Step 3: the conflicting pairs among the survivors, the higher authority first.

        Each pair is decided in processing order (fact_a the smaller id): skipped when a fact of it is
        already suppressed, else arbitrated by :func:`outcome`. Without operator decisions every pair's
        tie and loser are read off the authorities at once (:func:`tied_and_losers`), and only a run with
        a loser walks the pairs; the :class:`ConflictPair` records and their audit events are built when
        first read."""
        if not len(live.p):
            return _Arbitrated()
        order = self._order_array(live, auth)
        p0 = np.asarray(live.p, dtype=np.intp)[order]
        q0 = np.asarray(live.q, dtype=np.intp)[order]
        swap = self._id_rank()[q0] < self._id_rank()[p0]  # fact_a is the smaller id
        pa, qa = np.where(swap, q0, p0), np.where(swap, p0, q0)
        if has_pair_decisions(decisions):
            decided = self._decide_each(pa.tolist(), qa.tolist(), auth, decisions, config)
        else:
            decided = self._decide_by_authority(pa, qa, auth, config)
        kept_of, outcomes, suppressed_pos, tied_at = decided
        at = np.asarray(tied_at, dtype=np.intp)
        tied = np.empty((at.size, 2), dtype=np.intp)
        tied[:, 0], tied[:, 1] = pa[at], qa[at]
        n_pairs = int(pa.size)
        counted = n_pairs - len(kept_of)
        if outcomes is not None:
            counted -= sum(1 for o in outcomes if o is not None and o[3] == "dismiss")
        # the records and their events are built when first read, the positions listed then
        pairs = DeferredTuple(_PairRecords(self, live, order, swap, pa, qa, auth, config, kept_of, outcomes).build)
        roles = self.roles

        def events() -> list[AuditEvent]:
            ids, rows = self.ids, self.row_list
            return [
                conflict_event(pair, roles={ids[k]: str(roles.get(rows[k], "")) for k in (p, q)})
                for pair, p, q in zip(pairs, pa.tolist(), qa.tolist(), strict=True)
                if not pair.skipped
            ]

        audit = DeferredTuple(events) if len(kept_of) < n_pairs else ()  # one event per pair not skipped
        return _Arbitrated(pairs, suppressed_pos, tied, counted, audit)

    def _id_rank(self) -> np.ndarray:
        """Each position's rank by fact id (the ids of a selection are distinct)."""
        if self._rank is None:
            rank = np.empty(len(self.ids), dtype=np.intp)
            rank[sorted(range(len(self.ids)), key=self.ids.__getitem__)] = np.arange(len(self.ids))
            self._rank = rank
        return self._rank

    def _decide_by_authority(
        self, pa: np.ndarray, qa: np.ndarray, auth: Mapping[int, Authority], config: CRPConfig
    ) -> _Decided:
        """Step 3 without operator decisions: every pair's tie and loser from the authorities at once; the
        pairs are walked only when some pair has a loser (a later pair with a suppressed fact is skipped)."""
        value = np.zeros(len(self.ids), dtype=np.float64)
        value[list(auth)] = [a.authority for a in auth.values()]
        tied_mask, losers = tied_and_losers(value[pa], value[qa], pa, qa, config)
        if tied_mask.all():
            return {}, None, [], np.arange(pa.size)
        kept_of: dict[int, tuple[str, ...]] = {}
        suppressed_pos: list[int] = []
        suppressed: set[int] = set()
        tied: list[int] = []
        ids = self.ids
        pairs = zip(pa.tolist(), qa.tolist(), tied_mask.tolist(), losers.tolist(), strict=True)
        for k, (p, q, is_tied, loser) in enumerate(pairs):
            p_out, q_out = p in suppressed, q in suppressed
            if p_out or q_out:  # skipped: the kept ids are those not suppressed
                kept_of[k] = () if p_out and q_out else (ids[q],) if p_out else (ids[p],)
            elif is_tied:
                tied.append(k)
            else:
                suppressed_pos.append(loser)
                suppressed.add(loser)
        return kept_of, None, suppressed_pos, tied

    def _decide_each(
        self, ps: list[int], qs: list[int], auth: Mapping[int, Authority], decisions: Decisions, config: CRPConfig
    ) -> _Decided:
        """Step 3 with operator decisions: each pair in processing order, its decision read and applied by
        :func:`outcome` (a malformed decision raises at its pair)."""
        ids = self.ids
        kept_of: dict[int, tuple[str, ...]] = {}
        outcomes: list[Outcome | None] = []
        suppressed_pos: list[int] = []
        suppressed: set[int] = set()
        tied: list[int] = []
        for k, (p, q) in enumerate(zip(ps, qs, strict=True)):
            if p in suppressed or q in suppressed:
                kept_of[k] = tuple(ids[j] for j in (p, q) if j not in suppressed)
                outcomes.append(None)
                continue
            kind, winner = decision_for(decisions, ids[p], ids[q])
            arb = outcome(auth[p], auth[q], config, kind, winner)
            outcomes.append(arb)
            if arb[1] is not None:
                loser = p if arb[1] == ids[p] else q
                suppressed_pos.append(loser)
                suppressed.add(loser)
            if arb[2]:
                tied.append(k)
        return kept_of, outcomes, suppressed_pos, tied

    def _processing_order(self, live: _Conflicts, auth: Mapping[int, Authority]) -> list[int]:
        """Indices of ``live``'s pairs in arbitration order: the pair's higher authority rounded to
        ``AUTHORITY_DECIMALS`` descending (0.8 * 0.65 * 0.9 and 0.9 * 0.65 * 0.8 differ by one ulp, and
        float noise must not decide which pair is arbitrated first), then the smaller fact id, then the
        larger (:meth:`_order_array`)."""
        return np.asarray(self._order_array(live, auth)).tolist()

    def _order_array(self, live: _Conflicts, auth: Mapping[int, Authority]) -> np.ndarray | list[int]:
        """:meth:`_processing_order` as stage 4 reads it. Many pairs: rounding is monotonic, so the rounded
        higher authority is the higher rounded one: one rounding per fact, one ``lexsort`` over the pairs
        (an array), the fact ids by their rank; few pairs, or a NaN authority: one Python sort (a list)."""
        n = len(live.p)
        ids = self.ids
        involved = sorted(auth, key=ids.__getitem__)  # positions by fact id
        rounded_of = [round(auth[k].authority, AUTHORITY_DECIMALS) for k in involved] if n >= _ARRAY_ORDER else []
        if n < _ARRAY_ORDER or any(map(math.isnan, rounded_of)):  # NaN: no total order, Python's comparisons decide
            pairs = list(zip(np.asarray(live.p).tolist(), np.asarray(live.q).tolist()))
            return sorted(range(n), key=lambda i: self._order_key(pairs[i], auth))
        rank = np.zeros(len(ids), dtype=np.int64)
        rank[involved] = np.arange(len(involved))
        rounded = np.zeros(len(ids), dtype=np.float64)
        rounded[involved] = rounded_of
        p, q = np.asarray(live.p, dtype=np.intp), np.asarray(live.q, dtype=np.intp)
        ra, rb = rank[p], rank[q]
        return np.lexsort((np.maximum(ra, rb), np.minimum(ra, rb), -np.maximum(rounded[p], rounded[q])))

    def _order_key(self, pq: tuple[int, int], auth: Mapping[int, Authority]) -> tuple[float, str, str]:
        p, q = pq
        lo, hi = sorted((self.ids[p], self.ids[q]))
        return (-round(max(auth[p].authority, auth[q].authority), AUTHORITY_DECIMALS), lo, hi)


def _pair(  # noqa: PLR0913  the record's fields, as stage 4 decided them
    fact_a: str,
    fact_b: str,
    similarity: float,
    vc: ValueConflict,
    a: Authority,
    b: Authority,
    arb: Outcome,
    skipped: bool,
    asserted: bool = False,
) -> ConflictPair:
    """The :class:`ConflictPair` of one arbitrated (or skipped) pair: ``ConflictPair.make`` inlined, as
    stage 4 makes one per conflicting pair."""
    kept, suppressed, tied, decision = arb
    return frozen_instance(
        ConflictPair,
        {
            "fact_a": fact_a,
            "fact_b": fact_b,
            "similarity": similarity,
            "patterns": vc.patterns,
            "conflict": vc,
            "authority": {fact_a: a, fact_b: b},
            "kept": kept,
            "suppressed": suppressed,
            "tied": tied,
            "skipped": skipped,
            "margin": abs(a.authority - b.authority),
            "decision": decision,
            "asserted": asserted,
        },
    )


class _PairRecords:
    """The :class:`ConflictPair` of each pair of step 3, in processing order, built when first read from what
    step 3 decided: the positions (fact_a first), the skipped pairs' kept ids and, with operator decisions,
    each arbitrated pair's :data:`Outcome` (without, :func:`outcome` of the two authorities)."""

    def __init__(  # noqa: PLR0913  what step 3 decided, kept as it decided it
        self,
        sel: _Selection,
        live: _Conflicts,
        order: np.ndarray | list[int],
        swapped: np.ndarray,
        ps: np.ndarray,
        qs: np.ndarray,
        auth: Mapping[int, Authority],
        config: CRPConfig,
        kept_of: Mapping[int, tuple[str, ...]],
        outcomes: list[Outcome | None] | None,
    ) -> None:
        self.ids, self.contents, self.sel = sel.ids, sel.contents, sel
        self.found, self.order, self.asserted = live.found, order, live.asserted
        self.swapped, self.ps, self.qs = swapped, ps, qs
        self.auth, self.config, self.kept_of, self.outcomes = auth, config, kept_of, outcomes

    def build(self) -> list[ConflictPair]:
        ids, contents, auth, kept_of = self.ids, self.contents, self.auth, self.kept_of
        cosines = self.sel.gram.tolist()  # the float32 entries as Python floats
        out: list[ConflictPair] = []
        found = [self.found[k] for k in np.asarray(self.order).tolist()]
        ps, qs, swaps = self.ps.tolist(), self.qs.tolist(), self.swapped.tolist()
        for k, (p, q, vc, swapped) in enumerate(zip(ps, qs, found, swaps, strict=True)):
            if swapped:  # detected in selection order: the diffs' *_a sides must describe fact_a's text
                vc = values_conflict(contents[p], contents[q], self.config.detector_learned) or vc
            a, b = auth[p], auth[q]
            asserted = bool(self.asserted) and (min(p, q), max(p, q)) in self.asserted
            kept = kept_of.get(k)
            if kept is not None:
                out.append(_pair(ids[p], ids[q], cosines[p][q], vc, a, b, (kept, None, False, None), True, asserted))
                continue
            arb = self.outcomes[k] if self.outcomes is not None else None
            if arb is None:
                arb = outcome(a, b, self.config, None, None)
            out.append(_pair(ids[p], ids[q], cosines[p][q], vc, a, b, arb, False, asserted))
        return out

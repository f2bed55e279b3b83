"""A scenario's labels read against one run: one mark per labelled fact (docs/decisions/labels.md).

``label_marks(result, expect)`` reads a :class:`PipelineResult` (its envelope, stage-4 record, candidates
and per-fact outcomes) and the scenario's :class:`Expectations` and returns :class:`LabelMarks`: every
fact id the labels name gets one :class:`LabelMark` with a kind (:data:`MARK_KINDS`), the labels behind
it, where the fact ended (:data:`crp_core.analysis.metrics.WINNER_STATES`, or ``"unknown"`` for an id
the knowledge base lacks) and one line saying why. The kinds follow the suite metrics' definitions
(docs/decisions/suites.md §3): a packed ``must_exclude`` fact is a LEAK, a packed loser of an expected
conflict a WRONG WINNER, a ``must_include`` fact, an expected winner or a fact of an expected tie that is
not packed is MISSING. Nothing here runs the pipeline or recomputes a score: the dashboard's pages only
display these marks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from crp_core.analysis.metrics import WINNER_STATES
from crp_core.model import Expectations
from crp_core.records import PipelineResult

__all__ = [
    "MARK_KINDS",
    "BROKEN_KINDS",
    "MARK_MEANINGS",
    "UNKNOWN_STATE",
    "STATES",
    "LabelMark",
    "LabelMarks",
    "fact_state",
    "label_marks",
]

#: the kinds of mark, in precedence order: a fact named by several labels carries the first kind that
#: applies (a packed fact that is both ``must_exclude`` and an expected loser is a LEAK; its reason names both)
MARK_KINDS: tuple[str, ...] = ("LEAK", "WRONG WINNER", "MISSING", "EXPECTED WINNER", "OK")
#: the kinds that say a label is broken
BROKEN_KINDS: frozenset[str] = frozenset({"LEAK", "WRONG WINNER", "MISSING"})
#: one line per kind, for a legend
MARK_MEANINGS: Mapping[str, str] = {
    "LEAK": "must_exclude fact packed",
    "WRONG WINNER": "expected loser of a labelled conflict packed",
    "MISSING": "must_include fact, expected winner or tied fact not packed",
    "EXPECTED WINNER": "expected winner packed",
    "OK": "any other label met",
}
#: where a labelled id the knowledge base lacks "ended"
UNKNOWN_STATE = "unknown"
#: every state a mark may carry: the wrong-winner states of the suite metrics, then :data:`UNKNOWN_STATE`
STATES: tuple[str, ...] = (*WINNER_STATES, UNKNOWN_STATE)
#: the words for a state in a reason
_STATE_WORDS: Mapping[str, str] = {
    "packed": "packed",
    "suppressed": "suppressed",
    "dropped_for_budget": "dropped for the token budget",
    "selected": "selected, not packed",
    "scored": "scored, not selected",
    "gated": "gated",
    "not_retrieved": "not retrieved",
    UNKNOWN_STATE: "not in the knowledge base",
}
_PLURALS: Mapping[str, tuple[str, str]] = {
    "LEAK": ("leak", "leaks"),
    "WRONG WINNER": ("wrong winner", "wrong winners"),
    "MISSING": ("missing", "missing"),
    "EXPECTED WINNER": ("expected winner", "expected winners"),
    "OK": ("OK", "OK"),
}


@dataclass(frozen=True)
class LabelMark:
    """One labelled fact in one run: its ``kind`` (:data:`MARK_KINDS`), the ``labels`` that name it
    (``must_include``, ``must_exclude``, ``expected winner over X``, ``expected loser to X``, ``expected tie
    with X``), where it ended (``state``: a :data:`WINNER_STATES` name or :data:`UNKNOWN_STATE`), its
    1-based envelope ``position`` when packed, and ``reason``: the labels, then where it ended and why
    (the run's own outcome line for a fact not packed)."""

    fact_id: str
    kind: str
    labels: tuple[str, ...]
    state: str
    position: int | None
    reason: str

    @property
    def packed(self) -> bool:
        return self.position is not None

    @property
    def broken(self) -> bool:
        """The mark says a label is broken (LEAK, WRONG WINNER, MISSING)."""
        return self.kind in BROKEN_KINDS


@dataclass(frozen=True)
class LabelMarks:
    """Every labelled fact's mark: the packed ones in envelope order, then the others in the order the
    labels first name them."""

    marks: tuple[LabelMark, ...]
    #: broken kind -> how many facts break a label of that kind (a fact packed against ``must_exclude`` and as an
    #: expected loser is one leak and one wrong winner, as ``check`` counts them; its mark is LEAK), in
    #: :data:`MARK_KINDS` order
    broken_labels: tuple[tuple[str, int], ...] = ()

    @cached_property
    def by_id(self) -> Mapping[str, LabelMark]:
        """fact id -> its mark."""
        return {m.fact_id: m for m in self.marks}

    def get(self, fact_id: str) -> LabelMark | None:
        return self.by_id.get(fact_id)

    def kinds(self) -> dict[str, str]:
        """fact id -> its mark's kind."""
        return {m.fact_id: m.kind for m in self.marks}

    def counts(self) -> dict[str, int]:
        """kind -> how many facts carry it, every kind of :data:`MARK_KINDS` (zeros included), in order."""
        out = dict.fromkeys(MARK_KINDS, 0)
        for m in self.marks:
            out[m.kind] += 1
        return out

    def unpacked(self, kind: str = "MISSING") -> tuple[LabelMark, ...]:
        """The marks of ``kind`` whose fact is not packed (the facts a view of the envelope does not list)."""
        return tuple(m for m in self.marks if m.kind == kind and not m.packed)

    def summary(self) -> str:
        """One line of the nonzero counts, broken kinds first: ``1 leak, 2 missing · 3 OK``; the broken part
        counts each fact once per kind of label it breaks (``broken_labels``: what check's leaks and wrong winners
        count), the rest counts facts by their mark; it
        is ``no label broken`` when none is, and the line is ``no labelled fact`` when there is no mark."""
        if not self.marks:
            return "no labelled fact"
        counts = self.counts()

        def words(kinds: tuple[str, ...]) -> str:
            return ", ".join(
                f"{counts[k]} {_PLURALS[k][0] if counts[k] == 1 else _PLURALS[k][1]}" for k in kinds if counts[k]
            )

        met = words(tuple(k for k in MARK_KINDS if k not in BROKEN_KINDS))
        counts.update(self.broken_labels)  # the broken part counts labels, as check's metrics do
        broken = words(tuple(k for k in MARK_KINDS if k in BROKEN_KINDS)) or "no label broken"
        return f"{broken} · {met}" if met else broken


@dataclass(frozen=True)
class _Run:
    """What the states of one run read, computed once: packed positions, stage-4 rows, outcome lines."""

    result: PipelineResult
    position: Mapping[str, int]
    suppressed: frozenset[str]
    selected: frozenset[str]
    outcome: Mapping[str, str]


def _run_view(result: PipelineResult) -> _Run:
    facts = result.corpus.kb.facts
    res = result.resolution
    return _Run(
        result=result,
        position={p.fact_id: k for k, p in enumerate(result.envelope.order, start=1)},
        suppressed=frozenset(facts[int(r)].fact_id for r in np.asarray(res.suppressed).tolist()),
        selected=frozenset(facts[int(r)].fact_id for r in np.asarray(res.selected).tolist()),
        outcome={o.fact_id: o.reason for o in result.outcomes},
    )


def fact_state(result: PipelineResult, fact_id: str) -> str:
    """Where ``fact_id`` ended in ``result``: the first of :data:`WINNER_STATES` that applies (packed,
    suppressed, dropped for the budget, selected, scored, gated, not retrieved), or
    :data:`UNKNOWN_STATE` when the knowledge base has no such fact."""
    return _state(_run_view(result), fact_id)


def _state(run: _Run, fact_id: str) -> str:
    if fact_id in run.position:
        return "packed"
    kb = run.result.corpus.kb
    if kb.get(fact_id) is None:
        return UNKNOWN_STATE
    if fact_id in run.suppressed:
        return "suppressed"
    env = run.result.envelope
    if fact_id in env.dropped_for_budget or fact_id in env.dropped_unbridged:
        return "dropped_for_budget"
    if fact_id in run.selected:
        return "selected"
    row = kb.index_of(fact_id)
    cand = run.result.candidates
    hit = np.flatnonzero(cand.idx == row)
    if hit.size:
        return "scored" if bool(cand.passed_gate[int(hit[0])]) else "gated"
    if bool(np.any(run.result.cdgr.connectors.idx == row)):
        return "scored"
    return "not_retrieved"


def _where(run: _Run, fact_id: str, state: str) -> str:
    """Where a fact ended, in words: its packed position, else the run's outcome line for it (which says
    why), else the state's words."""
    if state == "packed":
        return f"packed at position {run.position[fact_id]}"
    words = _STATE_WORDS[state]
    line = run.outcome.get(fact_id, "")
    if not line or any(line.startswith(part.strip()) for part in words.split(",")):
        return f"not packed: {line or words}"  # the outcome line already says where
    return f"not packed ({words}): {line}"


def _findings(expect: Expectations, packed: Mapping[str, int], run: _Run) -> dict[str, list[tuple[str, str]]]:
    """fact id -> (kind, label) for every label that names it, in the order the labels name it."""
    out: dict[str, list[tuple[str, str]]] = {}

    def add(fid: str, kind: str, label: str) -> None:
        out.setdefault(fid, []).append((kind, label))

    for fid in expect.must_include:
        add(fid, "OK" if fid in packed else "MISSING", "must_include")
    for fid in expect.must_exclude:
        add(fid, "LEAK" if fid in packed else "OK", "must_exclude")
    for c in expect.conflicts:
        if c.winner is None:  # an expected tie: both facts reach the model, with a NOTE (SPEC-027 §2.5)
            for fid, other in ((c.fact_a, c.fact_b), (c.fact_b, c.fact_a)):
                add(fid, "OK" if fid in packed else "MISSING", f"expected tie with {other}")
            continue
        loser = c.loser
        assert loser is not None  # a conflict with a winner has a loser
        add(c.winner, "EXPECTED WINNER" if c.winner in packed else "MISSING", f"expected winner over {loser}")
        if loser in packed:
            winner_words = _STATE_WORDS[_state(run, c.winner)]
            add(loser, "WRONG WINNER", f"expected loser to {c.winner} (winner {winner_words})")
        else:
            add(loser, "OK", f"expected loser to {c.winner}")
    return out


def label_marks(result: PipelineResult, expect: Expectations) -> LabelMarks:
    """One mark per fact id ``expect`` names, read off ``result`` (docs/decisions/labels.md)."""
    run = _run_view(result)
    found = _findings(expect, run.position, run)
    rank = {k: i for i, k in enumerate(MARK_KINDS)}
    marks: list[LabelMark] = []
    for fid, items in found.items():
        kind = min((k for k, _ in items), key=rank.__getitem__)
        labels = tuple(dict.fromkeys(label for _, label in items))
        state = _state(run, fid)
        marks.append(
            LabelMark(
                fact_id=fid,
                kind=kind,
                labels=labels,
                state=state,
                position=run.position.get(fid),
                reason=f"{'; '.join(labels)} · {_where(run, fid, state)}",
            )
        )
    first = {fid: i for i, fid in enumerate(found)}
    marks.sort(key=lambda m: (m.position is None, m.position or 0, first[m.fact_id]))
    broken = Counter(k for items in found.values() for k in {kind for kind, _ in items} if k in BROKEN_KINDS)
    return LabelMarks(marks=tuple(marks), broken_labels=tuple((k, broken[k]) for k in MARK_KINDS if broken[k]))

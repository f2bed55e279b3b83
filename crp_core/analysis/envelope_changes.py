"""Why a fact is in one envelope of a before / after comparison only (docs/decisions/tuning.md, "Before / after"):
each fact the SPEC-027 run left out that the SPEC-024-only run packed, and each it packed in their place, with
the most specific reason the SPEC-027 run's records give."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from crp_core.factors.recency import RULES, fact_attributes, recency_state
from crp_core.stages.contradictions.arbitration import changed_by_decision

if TYPE_CHECKING:
    from crp_core.records import PipelineResult

#: what moved a fact out of (or into) the envelope, most specific first
ChangeKind = Literal["conflict loser", "operator decision", "duplicate", "expired", "ageing", "outranked", "entered"]


@dataclass(frozen=True)
class EnvelopeChange:
    """A fact in one envelope only, with why: ``kind`` (:data:`ChangeKind`), one sentence, the other
    fact it concerns (the conflict winner, the fact it duplicates, the fact whose slot it took) and the
    tokens its line cost in the envelope that packed it."""

    fact_id: str
    content: str
    kind: ChangeKind
    reason: str
    related: str | None
    tokens: int


def removal_change(full: PipelineResult, fid: str, tokens: int) -> EnvelopeChange:
    """Why the SPEC-027 run left out ``fid``, which the SPEC-024-only run packed."""
    kb = full.corpus.kb
    fact = kb.get(fid)
    content = fact.content if fact is not None else ""
    outcome = next((o for o in full.outcomes if o.fact_id == fid), None)
    said = outcome.reason if outcome is not None else "not retrieved by the SPEC-027 run"
    for p in full.resolution.pairs:
        if p.suppressed == fid and not p.skipped:
            winner = p.kept[0] if p.kept else None
            said = said.removeprefix(f"suppressed by {winner}: ")
            if changed_by_decision(p, full.config):  # a person chose the loser, or made the pair a conflict
                why = f"left out in favour of {winner} by {said}"
                return EnvelopeChange(fid, content, "operator decision", why, winner, tokens)
            # an accept (or an override naming authority's own winner) leaves the loser authority chose; its
            # reason says the decision
            why = f"suppressed as the conflict loser to {winner} ({said})"
            return EnvelopeChange(fid, content, "conflict loser", why, winner, tokens)
    row = kb.index_of(fid)
    for dropped, kept in full.resolution.deduplicated:
        if int(dropped) == row:
            other = kb.facts[int(kept)].fact_id
            return EnvelopeChange(
                fid, content, "duplicate", f"dropped as a duplicate of {other}: {said}", other, tokens
            )
    state, aged = _recency_note(full, row)
    copy = _packed_copy(full, row)
    if copy is not None:  # the fresher (or better-scored) copy was packed: the story of a duplicate, not of age
        other, cos = copy
        why = f"a near-duplicate of {other} (cos {cos:.3f}, SPEC-003 §6.6), packed in its place"
        return EnvelopeChange(fid, content, "duplicate", why + (f"; {aged}" if aged else ""), other, tokens)
    if state is not None:
        return EnvelopeChange(fid, content, state, f"{aged}; {said}", None, tokens)
    return EnvelopeChange(
        fid, content, "outranked", f"outranked by fresher or more relevant facts: {said}", None, tokens
    )


def _recency_note(full: PipelineResult, row: int) -> tuple[Literal["expired", "ageing"] | None, str | None]:
    """Whether ``row`` is expired or ageing in the SPEC-027 run (None: fresh) and the phrase that says so
    ("ageing (230 of 365 days of its TTL): recency 0.82 lowered its score")."""
    kb = full.corpus.kb
    attrs = fact_attributes(kb, full.now, full.config)
    factor, age, ttl = float(attrs.factor[row]), float(attrs.age_days[row]), float(attrs.ttl_days[row])
    state = recency_state(RULES[int(attrs.rule[row])])
    if state == "expired":
        why = "status STALE" if kb.facts[row].status == "STALE" else f"{age:.0f} days old, TTL {ttl:.0f} days"
        return "expired", f"expired ({why}): recency {factor:.2f} lowered its score"
    if state == "ageing":
        return "ageing", f"ageing ({age:.0f} of {ttl:.0f} days of its TTL): recency {factor:.2f} lowered its score"
    return None, None


def _packed_copy(full: PipelineResult, row: int) -> tuple[str, float] | None:
    """The packed anchor that stage 3 skipped ``row`` for as its near-duplicate (as an anchor or as a connector
    candidate), with their cosine; None when there is none."""
    packed = {p.fact_id for p in full.envelope.order}
    facts = full.corpus.kb.facts
    for skipped, anchor, cos in (*full.cdgr.near_duplicates, *full.cdgr.connector_near_duplicates):
        if int(skipped) == row and facts[int(anchor)].fact_id in packed:
            return facts[int(anchor)].fact_id, float(cos)
    return None


def entry_change(full: PipelineResult, fid: str, tokens: int) -> EnvelopeChange:
    kb = full.corpus.kb
    fact = kb.get(fid)
    outcome = next((o for o in full.outcomes if o.fact_id == fid), None)
    said = outcome.reason if outcome is not None else "packed"
    row = kb.index_of(fid)
    slot = next((kb.facts[int(b)].fact_id for a, b in full.resolution.backfilled if int(a) == row), None)
    return EnvelopeChange(fid, fact.content if fact is not None else "", "entered", said, slot, tokens)

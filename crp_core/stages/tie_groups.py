"""Tie groups of stage 6 (SPEC-027 §2.5; docs/reference/pipeline.md §6, "Tie groups"): the facts
connected by tied pairs, their one NOTE block (its text, its parts' token counts, where it goes), the
records the envelope keeps of them, and the warnings and empty-envelope reason stage 6 gives.

The fill that decides which members of a group enter is :mod:`crp_core.stages.packing`'s; everything a
group *is* lives here.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from crp_core.model import Fact, KnowledgeBase
from crp_core.records import DroppedPair, DropReason, Envelope, TieGroup
from crp_core.support.frozen import DeferredTuple, frozen_instance

#: the NOTE block of SPEC-027 §2.5 (header lines; one indented ``[content]`` line per fact follows)
NOTE_HEADER = (
    "NOTE: The following two facts conflict and could not be automatically\n"
    "arbitrated. Treat with caution and prefer the more specific:"
)
#: the header of a tie group's NOTE listing one packed fact (the rest of its group left out)
NOTE_HEADER_ONE = (
    "NOTE: The following fact conflicts with facts of equal authority left out of this\n"
    "envelope, and could not be automatically arbitrated. Treat with caution:"
)
#: the start of every NOTE header (every NOTE block of an envelope begins with it)
NOTE_START = "NOTE: The following "
#: the last line of a group NOTE with members left out: this lead, then their ids
LEFT_OUT_LEAD = "  Also in this conflict, of equal authority, left out of this envelope:"
#: left-out ids a NOTE names before it counts the rest ("and 3 more"): every one with the default budget of
#: 20 facts, a bounded line with any budget (the report lists them all)
LEFT_OUT_SHOWN = 20


#: a NOTE block by its rows: (the rows it lists, in listed order; the rows it names as left out, fill order)
NoteSpec = tuple[tuple[int, ...], tuple[int, ...]]


@functools.lru_cache(maxsize=1024)
def note_header(listed: int) -> str:
    """The header lines of a NOTE listing ``listed`` facts: SPEC-027 §2.5's for two, its count for more."""
    if listed == 2:
        return NOTE_HEADER
    if listed == 1:
        return NOTE_HEADER_ONE
    return NOTE_HEADER.replace("two facts", f"{listed} facts", 1)


def note_line(content: str) -> str:
    """A fact's line in a NOTE block."""
    return f"  [{content}]"


def left_out_tail(fact_ids: Sequence[str]) -> str:
    """The last line of a group NOTE: the ids of its members left out, the first :data:`LEFT_OUT_SHOWN`
    named and the rest counted."""
    shown = list(fact_ids[:LEFT_OUT_SHOWN])
    more = len(fact_ids) - len(shown)
    if more:
        shown.append(f"and {more} more")
    return f"{LEFT_OUT_LEAD} {', '.join(shown)}."


def group_note(contents: Sequence[str], left_out: Sequence[str] = ()) -> str:
    """The NOTE block of a tie group: its packed facts' contents (envelope order) and the ids of its
    members left out (docs/reference/pipeline.md §6). Two facts and none left out: SPEC-027 §2.5's block."""
    lines = [note_header(len(contents)), *map(note_line, contents)]
    if left_out:
        lines.append(left_out_tail(left_out))
    return "\n".join(lines)


def note_block(content_a: str, content_b: str) -> str:
    """The SPEC-027 §2.5 annotation for a tied pair (A = the fact placed first in the envelope): the NOTE
    of a tie group of two, both packed."""
    return group_note((content_a, content_b))


def note_text(kb: KnowledgeBase, spec: NoteSpec) -> str:
    """The NOTE block a spec stands for (:func:`group_note` of its rows' contents and ids)."""
    facts = kb.facts
    listed, left = spec
    return group_note([facts[r].content for r in listed], [facts[r].fact_id for r in left])


def tie_components(rows: Sequence[int], ties: Sequence[tuple[int, int]], *, distinct: bool = False) -> dict[int, int]:
    """The tie group of every row: the smallest row of its connected component of ``ties``; a row in no
    tie maps to itself. ``distinct``: ``ties`` holds each pair once and pairs no row with itself (the
    packer's offered ties), so as many pairs as there are pairs of their rows means every two of those
    rows are tied: one group, found without merging pair by pair."""
    label = {r: r for r in rows}
    if not ties:
        return label
    if distinct:
        ends = set(itertools.chain.from_iterable(ties))
        if len(ties) == len(ends) * (len(ends) - 1) // 2:
            label.update(dict.fromkeys(ends, min(ends)))
            return label
    # each component's rows listed under its label; a merge relabels the smaller list
    members: dict[int, list[int]] = {r: [r] for r in rows}
    for a, b in ties:
        la, lb = label[a], label[b]
        if la == lb:
            continue
        if len(members[la]) < len(members[lb]):
            la, lb = lb, la
        moved = members.pop(lb)
        for r in moved:
            label[r] = la
        members[la] += moved
    least = {lab: min(rs) for lab, rs in members.items()}
    return {r: least[label[r]] for r in rows}


@dataclass
class GroupFill:
    """One tie group in the fill: its members and tied pairs (fill order), the members packed and those
    left out with why (fill order), and the tokens its NOTE was given."""

    members: list[int]
    pairs: list[tuple[int, int]]
    whole_note: int = 0  # tokens reserved for its NOTE listing every member
    chosen: list[int] = field(default_factory=list)
    left: list[tuple[int, DropReason]] = field(default_factory=list)

    @property
    def left_rows(self) -> tuple[int, ...]:
        return tuple(r for r, _ in self.left)


class NoteParts:
    """Token counts of the parts of a tie group's NOTE blocks (headers, fact lines, left-out ids), counted
    in one call; a NOTE's count is at most the sum of its parts' with either counter of this project (the
    tokenizer splits at whitespace, ``ceil(words * 1.3)`` is subadditive)."""

    def __init__(
        self, kb: KnowledgeBase, members: Sequence[int], count_parts: Callable[[Sequence[str]], np.ndarray]
    ) -> None:
        facts = kb.facts
        n = len(members)
        more = max(0, n - 1 - LEFT_OUT_SHOWN)  # the most ids a NOTE can count instead of naming
        texts = (
            [note_header(k) for k in range(1, n + 1)]
            + [LEFT_OUT_LEAD]
            + [f"and {k} more." for k in range(1, more + 1)]
            + [note_line(facts[r].content) for r in members]
            + [f"{facts[r].fact_id}," for r in members]
        )
        counts = np.asarray(count_parts(texts), dtype=np.int64).reshape(-1).tolist()
        self.header = [0, *counts[:n]]
        self.lead = counts[n]
        self.more = [0, *counts[n + 1 : n + 1 + more]]
        base = n + 1 + more
        self.line = dict(zip(members, counts[base : base + n], strict=True))
        self.ident = dict(zip(members, counts[base + n : base + 2 * n], strict=True))

    def bound(self, listed_lines: int, listed: int, left: Sequence[int]) -> int:
        """Tokens reserved for a NOTE listing ``listed`` facts whose lines count ``listed_lines`` and naming
        ``left`` (fill order) as left out."""
        return self.bound_of(listed_lines, listed, len(left), sum(self.ident[r] for r in left[:LEFT_OUT_SHOWN]))

    def bound_of(self, listed_lines: int, listed: int, n_left: int, shown_ident: int) -> int:
        """:meth:`bound` from the count of members left out and the id tokens of the first
        :data:`LEFT_OUT_SHOWN` of them (those the NOTE names; it counts the rest)."""
        need = self.header[listed] + listed_lines
        if n_left:
            need += self.lead + shown_ident + self.more[max(0, n_left - LEFT_OUT_SHOWN)]
        return need


@dataclass(frozen=True)
class PlacedNotes:
    """The NOTE blocks of the packed tie groups, in text order: each group's spec, its block, the row it
    follows."""

    groups: list[GroupFill]
    specs: list[NoteSpec]
    texts: list[str]
    after: dict[int, list[str]]


def place_notes(kb: KnowledgeBase, groups: Sequence[GroupFill], pos: Mapping[int, int]) -> PlacedNotes:
    """Each group with a packed member gets its NOTE right after its last packed fact, listing its packed
    facts in envelope order; blocks after one fact are ordered by their other facts' places."""

    def places(g: GroupFill) -> list[int]:
        return sorted(pos[r] for r in g.chosen)

    def key(g: GroupFill) -> tuple[int, ...]:
        p = places(g)
        return (p[-1], *p[:-1])

    placed = sorted((g for g in groups if g.chosen), key=key)
    specs: list[NoteSpec] = [(tuple(sorted(g.chosen, key=pos.__getitem__)), g.left_rows) for g in placed]
    texts = [note_text(kb, sp) for sp in specs]
    after: dict[int, list[str]] = {}
    for sp, text in zip(specs, texts, strict=True):
        after.setdefault(sp[0][-1], []).append(text)
    return PlacedNotes(placed, specs, texts, after)


def tie_records(
    kb: KnowledgeBase, groups: Sequence[GroupFill], notes: PlacedNotes, note_tokens: Sequence[int]
) -> tuple[tuple[TieGroup, ...], tuple[DroppedPair, ...]]:
    """The :class:`TieGroup` of every group (those with a NOTE in text order, then the rest in fill order)
    and every tied pair not wholly packed (groups in fill order, pairs in tie order; built when first read)."""
    facts = kb.facts

    def ids(rows: Sequence[int]) -> tuple[str, ...]:
        return tuple(facts[r].fact_id for r in rows)

    def record(g: GroupFill, spec: NoteSpec | None, text: str | None, tokens: int) -> TieGroup:
        return TieGroup(
            members=ids(g.members),
            pairs=_id_pairs(facts, g),
            packed=ids(spec[0]) if spec is not None else (),
            left_out=ids(g.left_rows),
            left_out_reasons=tuple(reason for _, reason in g.left),
            note=text,
            note_tokens=tokens,
        )

    out = [record(g, sp, t, n) for g, sp, t, n in zip(notes.groups, notes.specs, notes.texts, note_tokens, strict=True)]
    out += [record(g, None, None, 0) for g in groups if not g.chosen]
    cut = [g for g in groups if g.left]
    if not cut:
        return tuple(out), ()

    def dropped() -> list[DroppedPair]:  # read by the report and the dashboard, never by a stage
        got: list[DroppedPair] = []
        for g in cut:
            why = dict(g.left)
            rank = {r: i for i, (r, _) in enumerate(g.left)}  # fill order of the members left out
            for a, b in g.pairs:
                if a in why or b in why:
                    first = min((r for r in (a, b) if r in why), key=rank.__getitem__)
                    got.append(
                        frozen_instance(
                            DroppedPair, {"fact_a": facts[a].fact_id, "fact_b": facts[b].fact_id, "reason": why[first]}
                        )
                    )
        return got

    return tuple(out), cast("tuple[DroppedPair, ...]", DeferredTuple(dropped))


def _id_pairs(facts: Sequence[Fact], g: GroupFill) -> tuple[tuple[str, str], ...]:
    """A group's tied pairs by fact id, the smaller id first, sorted, each once. The pairs are distinct
    (the packer keeps each once): when there are as many as member pairs, they are all of them, the
    combinations of the members' sorted ids in order."""
    ids = sorted(facts[r].fact_id for r in g.members)
    n = len(ids)
    if len(g.pairs) == n * (n - 1) // 2:
        return tuple(itertools.combinations(ids, 2))
    return tuple(
        sorted({(x, y) if x < y else (y, x) for x, y in ((facts[a].fact_id, facts[b].fact_id) for a, b in g.pairs)})
    )


def listed_ids(fact_ids: Sequence[str]) -> str:
    """Ids for a sentence: the first :data:`LEFT_OUT_SHOWN`, then how many more."""
    shown = ", ".join(fact_ids[:LEFT_OUT_SHOWN])
    more = len(fact_ids) - LEFT_OUT_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def packed_pair_count(group: TieGroup) -> int:
    """``len(group.packed_pairs)``: the tied pairs with both facts packed. A group whose every member pair is
    tied (as many distinct pairs as member pairs) has one per pair of packed facts."""
    n, k = len(group.members), len(group.packed)
    if len(group.pairs) == n * (n - 1) // 2:
        return k * (k - 1) // 2
    return len(group.packed_pairs)


def tie_group_warning(group: TieGroup, budget: int) -> str:
    """The run warning of a tie group stage 6 cut or left out (docs/reference/pipeline.md §6)."""
    n, pairs = len(group.members), len(group.pairs)
    what = f"tie group of {n} facts ({pairs} tied pair{'' if pairs == 1 else 's'}: {listed_ids(group.members)})"
    why = " and ".join(
        dict.fromkeys(
            "token_budget " + str(budget) if r == "budget" else "connectors without their bridged anchors"
            for r in group.left_out_reasons
        )
    )
    if not group.packed:
        fits = ": no fact of it fits with the group's NOTE block" if "budget" in group.left_out_reasons else ""
        return f"{what} left out whole ({why}){fits}"
    k = packed_pair_count(group)
    return (
        f"{what} cut ({why}): {len(group.packed)} packed with one NOTE block covering {k} tied "
        f"pair{'' if k == 1 else 's'}, {len(group.left_out)} left out and named in it: {listed_ids(group.left_out)}"
    )


def explain_envelope(
    envelope: Envelope, *, candidates: int, gated_in: int, selected: int, guarded: int
) -> tuple[Envelope, tuple[str, ...]]:
    """The envelope with the reason it is empty (when it is), and stage 6's warnings: one per tie group cut
    or left out, and the empty envelope's reason while facts passed the gate (docs/reference/pipeline.md
    §6). ``candidates``: stage-1 candidates; ``gated_in``: those that passed the gate; ``selected``: the
    facts stage 4 kept; ``guarded``: those the known-conflict guard left to pack."""
    warnings = [tie_group_warning(g, envelope.token_budget) for g in envelope.tie_groups if g.left_out]
    if envelope.order:
        return envelope, tuple(warnings)
    reason = envelope.empty_reason
    if reason is None:
        if not candidates:
            reason = "the envelope is empty: no fact was retrieved"
        elif not gated_in:
            reason = f"the envelope is empty: none of the {candidates} candidates passed the relevance gate"
        elif selected and not guarded:
            reason = "the envelope is empty: the known-conflict guard dropped every selected fact"
        else:
            reason = "the envelope is empty: no fact was selected"
        envelope = dataclasses.replace(envelope, empty_reason=reason)
    if gated_in:
        warnings.append(reason)
    return envelope, tuple(warnings)

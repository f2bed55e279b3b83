"""Stage 6: packing (SPEC-003 §7.3-7.4, SPEC-025 §2.6, SPEC-027 §2.5; docs/reference/pipeline.md §6).

1. Units. The facts connected by tied contradiction pairs (docs/reference/pipeline.md §4) form a **tie
   group** (a connected component of the tied pairs): it is packed with one NOTE block that lists its
   packed facts. Every other fact is a unit alone.
2. Greedy fill up to ``token_budget`` (SPEC-003 §7.3): anchors in CDR order, then connectors in
   connector-score order (ties by fact row). A unit is decided at its first fact in that order. A fact
   alone costs its line; a fact that does not fit is left out and smaller ones may still enter. A tie
   group enters whole when its lines and its NOTE fit; otherwise its members are taken in fill order,
   each kept while the lines kept so far and a NOTE listing them and naming every other member as left
   out still fit, so its highest-CDR members that fit are packed with a NOTE that says which were left
   out. A connector enters only while at least two of the anchors it bridges are packed (so far, its
   own group's included); otherwise it is left out as unbridged. A tied pair not wholly packed is
   reported in ``Envelope.dropped_pairs`` and counts in no header (``headers.conflict_counts``): the
   header counts the tied pairs whose two facts are packed, the pairs the group NOTEs cover.
3. Anchor order: the primacy-recency sandwich of SPEC-003 §7.4,
   ``[critical[0], critical[-1], supporting..., important..., critical[1:-1]...]``, each tier in
   CDR order, tiers on each anchor's CDR / the best packed anchor CDR (critical >= 0.80,
   important >= 0.50, supporting below). The best anchor is critical, hence at position 1.
   Connector scores are on another scale: they never set a tier and connectors have none.
4. Connectors (SPEC-025 §2.6: next to the anchors they bridge, never in the primacy / recency
   positions): each goes right after the first anchor it bridges in the anchor order; when that
   anchor is in the primacy block (positions 1-2), right after the primacy block; when it is in
   the final block of critical anchors (recency, ``critical[1:-1]``), right before that block.
   Connectors at one spot (the same gap between two anchors) keep connector-score order. A packed
   connector bridges at least two packed anchors, so its first one is never the last anchor: no
   connector is ever last, except with exactly two anchors packed (both in the primacy block, the
   connectors after them).
5. Text: one line ``[<fact_id>] <content>`` per fact; each group's NOTE block right after the last
   of its packed facts, listing them in envelope order (for a group of two, SPEC-027 §2.5's block
   verbatim). A fact line costs ``token_counts[row]`` + the tokens of ``[<fact_id>]``. A NOTE block
   costs its own count: during the fill a whole group reserves the larger of its NOTE in fill order and
   in reverse, a group cut by the budget the sum of its NOTE's parts (header, fact lines, left-out ids),
   which no counter of this project undercounts; ``tokens_used`` holds the NOTE as placed, so the
   envelope never exceeds its budget.
6. An envelope left empty although facts were offered says why (``Envelope.empty_reason``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

import numpy as np

from crp_core.config import CRPConfig
from crp_core.model import KnowledgeBase
from crp_core.records import DropReason, Envelope, PackedFact
from crp_core.stages.tie_groups import (
    LEFT_OUT_SHOWN,
    GroupFill,
    NoteParts,
    NoteSpec,
    note_text,
    place_notes,
    tie_components,
    tie_records,
)
from crp_core.support.memo import LRU

#: tier thresholds on CDR / best anchor CDR (SPEC-003 §7.4, docs/reference/pipeline.md §6)
CRITICAL_RATIO = 0.80
IMPORTANT_RATIO = 0.50
#: size of the primacy block (docs/reference/pipeline.md §6: positions 1-2)
PRIMACY_SIZE = 2

TokenCounter = Callable[[Sequence[str]], np.ndarray]
#: token counts of the ``[<fact_id>]`` prefixes of fact rows (see :func:`cached_prefix_counter`)
PrefixCounter = Callable[[Sequence[int]], np.ndarray]
PackRole = Literal["anchor", "connector"]
Tier = Literal["critical", "important", "supporting"]


class PackCorpus(Protocol):
    """What the packer reads from a corpus: the facts and their content token counts."""

    @property
    def kb(self) -> KnowledgeBase: ...

    @property
    def token_counts(self) -> np.ndarray: ...


def fact_line(fact_id: str, content: str) -> str:
    return f"[{fact_id}] {content}"


def fact_prefix(fact_id: str) -> str:
    """The ``[<fact_id>]`` prefix of a fact line, counted on its own (its tokens are a line's extra cost)."""
    return f"[{fact_id}]"


def prefix_counts(kb: KnowledgeBase, rows: Sequence[int], count_tokens: TokenCounter) -> np.ndarray:
    """(len(rows),) int64 token counts of the rows' ``[<fact_id>]`` prefixes, counted now."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    facts = kb.facts
    return np.asarray(count_tokens([fact_prefix(facts[int(r)].fact_id) for r in rows]), dtype=np.int64)


_D = TypeVar("_D")


class _CorpusWithCache(PackCorpus, Protocol):
    @property
    def n(self) -> int: ...

    def derived(self, key: Any, build: Callable[[], _D]) -> _D: ...


def cached_prefix_counter(corpus: _CorpusWithCache, count_tokens: TokenCounter, counter_key: Hashable) -> PrefixCounter:
    """:func:`prefix_counts` remembered per corpus and ``counter_key`` (which counter ``count_tokens``
    is): each row's prefix is counted the first time it is packed, then read from the corpus's
    per-row array (-1 = not counted yet)."""
    counts = corpus.derived(("envelope prefix tokens", counter_key), lambda: np.full(corpus.n, -1, dtype=np.int64))

    def prefix(rows: Sequence[int]) -> np.ndarray:
        r = np.asarray(rows, dtype=np.int64).reshape(-1)
        got = counts[r]
        if (got < 0).any():
            missing = np.unique(r[got < 0])
            counts[missing] = prefix_counts(corpus.kb, missing.tolist(), count_tokens)
            got = counts[r]
        return got

    return prefix


#: token counts of the NOTE blocks of :data:`NoteSpec` s (see :func:`cached_note_counter`)
NoteCounter = Callable[[Sequence[NoteSpec]], np.ndarray]


def note_counts(kb: KnowledgeBase, specs: Sequence[NoteSpec], count_tokens: TokenCounter) -> np.ndarray:
    """(len(specs),) int64 token counts of each spec's NOTE block, counted now."""
    if not len(specs):
        return np.zeros(0, dtype=np.int64)
    return np.asarray(count_tokens([note_text(kb, s) for s in specs]), dtype=np.int64).reshape(-1)


def cached_note_counter(corpus: _CorpusWithCache, count_tokens: TokenCounter, counter_key: Hashable) -> NoteCounter:
    """:func:`note_counts` remembered per corpus and ``counter_key``: a NOTE block's text depends on its
    facts alone, so each spec is counted the first time it is packed."""
    known: dict[NoteSpec, int] = corpus.derived(("envelope note tokens", counter_key), lambda: {})

    def notes(specs: Sequence[NoteSpec]) -> np.ndarray:
        keys = [(tuple(map(int, a)), tuple(map(int, b))) for a, b in specs]
        missing = list(dict.fromkeys(k for k in keys if k not in known))
        if missing:
            known.update(zip(missing, note_counts(corpus.kb, missing, count_tokens).tolist(), strict=True))
        return np.array([known[k] for k in keys], dtype=np.int64)

    return notes


def cached_text_counter(corpus: _CorpusWithCache, count_tokens: TokenCounter, counter_key: Hashable) -> TokenCounter:
    """``count_tokens`` remembered per corpus, ``counter_key`` and text: the parts of the NOTE blocks of
    tie groups cut by the budget (headers, fact lines, ids) are counted once per corpus."""
    known: dict[str, int] = corpus.derived(("envelope note part tokens", counter_key), lambda: {})

    def texts(items: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in items if t not in known))
        if missing:
            counts = np.asarray(count_tokens(missing), dtype=np.int64).reshape(-1).tolist()
            known.update(zip(missing, counts, strict=True))
        return np.array([known[t] for t in items], dtype=np.int64)

    return texts


#: the parts of a cut tie group's NOTE blocks, by its members in fill order (see :func:`cached_note_parts`)
NotePartsOf = Callable[[Sequence[int]], NoteParts]
#: cut tie groups whose NOTE parts a corpus keeps per counter (each a few small tables)
NOTE_PARTS_KEPT = 256


def cached_note_parts(corpus: _CorpusWithCache, count_tokens: TokenCounter, counter_key: Hashable) -> NotePartsOf:
    """:class:`NoteParts` of a tie group's members (fill order) remembered per corpus and ``counter_key``
    (the :data:`NOTE_PARTS_KEPT` last groups): its parts depend on its facts alone, and a rerun cuts the
    same group; the parts' texts are counted through :func:`cached_text_counter`."""
    count_parts = cached_text_counter(corpus, count_tokens, counter_key)
    kept: LRU[tuple[int, ...], NoteParts] = corpus.derived(
        ("envelope note parts", counter_key), lambda: LRU(NOTE_PARTS_KEPT, locked=True)
    )
    kb = corpus.kb

    def parts(members: Sequence[int]) -> NoteParts:
        return kept.get_or_build(tuple(members), lambda: NoteParts(kb, members, count_parts))

    return parts


def offered_ties(tied_pairs: Sequence[tuple[int, int]] | np.ndarray, rows: Sequence[int]) -> list[tuple[int, int]]:
    """The tied pairs between two distinct offered ``rows``, each pair once (its first occurrence, as given),
    sorted by (smaller row, larger row): the same ties in any order give the same envelope. ``tied_pairs``:
    (row, row) pairs, or their (k, 2) array (stage 4's ``Resolution.tied_rows``)."""
    pairs = np.asarray(tied_pairs, dtype=np.int64).reshape(-1, 2)
    if not pairs.shape[0] or not len(rows):
        return []
    offered = np.sort(np.asarray(rows, dtype=np.int64))
    at = np.searchsorted(offered, pairs)
    np.minimum(at, offered.size - 1, out=at)
    inside = offered[at] == pairs
    a, b = pairs[:, 0], pairs[:, 1]
    keep = np.flatnonzero(inside[:, 0] & inside[:, 1] & (a != b))
    a, b = a[keep], b[keep]
    # each (smaller, larger) pair as one key (both rows are offered: an offset into the offered span is
    # exact), its first occurrence after one stable sort of the keys
    low, span = int(offered[0]), int(offered[-1] - offered[0]) + 1
    key = (np.minimum(a, b) - low) * span + (np.maximum(a, b) - low)
    order = np.argsort(key, kind="stable")
    key = key[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    kept = order[first]
    return list(zip(a[kept].tolist(), b[kept].tolist(), strict=True))


class PackItem(NamedTuple):
    """One selected fact offered to the packer (a named tuple: a run builds one per selected fact)."""

    row: int
    role: PackRole
    score: float  # CDR (anchors) or connector score (connectors): two scales, never compared
    bridges: tuple[int, ...] = ()  # connectors: anchor rows of the pairs it bridges, anchor order


def tier_of(ratio: float) -> Tier:
    """Tier of an anchor from its CDR / best anchor CDR (SPEC-003 §7.4)."""
    if ratio >= CRITICAL_RATIO:
        return "critical"
    if ratio >= IMPORTANT_RATIO:
        return "important"
    return "supporting"


def rank_by_score(rows: Sequence[int], score: Mapping[int, float]) -> list[int]:
    """``rows`` by score descending, then row ascending."""
    if len(rows) <= 1:
        return [int(x) for x in rows]
    neg = [-float(score[x]) for x in rows]
    if any(map(math.isnan, neg)):  # NaN: numpy's order (NaN last), which a tuple sort cannot give
        r = np.asarray(rows, dtype=np.int64)
        s = np.array([score[x] for x in r.tolist()], dtype=np.float64)
        return r[np.lexsort((r, -s))].tolist()
    return [x for _, x in sorted(zip(neg, map(int, rows)))]


class _Filler:
    """The greedy fill of docs/reference/pipeline.md §6 (module docstring, step 2): what is packed so
    far, what was left out and why."""

    def __init__(self, by_row: Mapping[int, PackItem], cost: Mapping[int, int], budget: int) -> None:
        self.by_row, self.cost, self.budget = by_row, cost, budget
        self.scores = {r: it.score for r, it in by_row.items()}  # the fill's order and the left-out lists'
        self.used = 0
        self.packed: list[int] = []
        self.packed_anchors: set[int] = set()
        self.over_budget: list[int] = []
        self.unbridged: list[int] = []
        self.groups: list[GroupFill] = []
        # the fewest tokens a unit left out for the budget needed, and whether with a NOTE (for an empty
        # envelope's reason: with nothing packed, each unit was tried on its own)
        self.smallest: tuple[int, bool] | None = None

    def _bridged(self, row: int, own_anchors: set[int] | None = None) -> bool:
        """A connector needs two of the anchors it bridges packed (so far, its own group's included)."""
        it = self.by_row[row]
        if it.role != "connector":
            return True
        anchors = self.packed_anchors | own_anchors if own_anchors else self.packed_anchors
        return len(anchors.intersection(it.bridges)) >= 2

    def _too_big(self, need: int, tied: bool) -> None:
        if self.smallest is None or need < self.smallest[0]:
            self.smallest = (need, tied)

    def _take(self, rows: Sequence[int], need: int) -> None:
        self.used += need
        self.packed.extend(rows)
        self.packed_anchors.update(r for r in rows if self.by_row[r].role == "anchor")

    def alone(self, row: int) -> None:
        """A fact in no tie: its line, if it fits (and, for a connector, its anchors are packed)."""
        if not self._bridged(row):
            self.unbridged.append(row)
            return
        need = self.cost[row]
        if self.used + need > self.budget:
            self.over_budget.append(row)
            self._too_big(need, False)
            return
        self._take([row], need)

    def group(self, g: GroupFill, parts_of: Callable[[Sequence[int]], NoteParts]) -> None:
        """A tie group: whole with its NOTE when it fits; else, when some of its connectors lack their
        bridged anchors, every other member with a NOTE naming them, if that fits; else its members in fill
        order, each kept while the lines kept so far and a NOTE listing them and naming every other member
        fit (:meth:`_members`)."""
        members = g.members
        by_row = self.by_row
        anchors = {r for r in members if by_row[r].role == "anchor"}
        bridged = [r for r in members if by_row[r].role != "connector" or self._bridged(r, anchors)]
        cost = self.cost
        whole = sum([cost[r] for r in members]) + g.whole_note
        if len(bridged) == len(members) and whole <= self.budget - self.used:
            g.chosen = list(members)
            self._take(members, whole)
            return
        note = parts_of(members)
        if bridged and len(bridged) < len(members):  # every member but the connectors its anchors cannot bridge
            kept = set(bridged)
            left = [r for r in members if r not in kept]
            need = sum(self.cost[r] for r in bridged)
            need += note.bound(sum(note.line[r] for r in bridged), len(bridged), left)
            if need <= self.budget - self.used:
                self._settle(g, bridged, [(r, "unbridged") for r in left], need)
                return
        self._members(g, note)

    def _members(self, g: GroupFill, note: NoteParts) -> None:
        """A cut group's members in fill order, each kept while its lines and a NOTE listing the kept ones
        and naming every other member fit the room left."""
        room = self.budget - self.used
        members = g.members
        n = len(members)
        all_ident = sum([note.ident[r] for r in members])
        chosen: list[int] = []
        chosen_anchors: set[int] = set()
        lines = note_lines = need = chosen_ident = 0
        why: dict[int, DropReason] = {}
        by_row, cost, line, ident = self.by_row, self.cost, note.line, note.ident
        for m in members:
            role = by_row[m].role
            if role == "connector" and not self._bridged(m, chosen_anchors):
                why[m] = "unbridged"
                continue
            n_left = n - len(chosen) - 1  # every member but the kept ones and m is named as left out
            if n_left <= LEFT_OUT_SHOWN:  # all named: their ids are the ones not kept
                shown_ident = all_ident - chosen_ident - ident[m]
            else:  # the first LEFT_OUT_SHOWN in fill order named, the rest counted
                trial = {*chosen, m}
                shown_ident = sum(ident[x] for x in [x for x in members if x not in trial][:LEFT_OUT_SHOWN])
            got = lines + cost[m] + note.bound_of(note_lines + line[m], len(chosen) + 1, n_left, shown_ident)
            if got > room:
                why[m] = "budget"
                self._too_big(got, True)
                continue
            chosen.append(m)
            lines += cost[m]
            note_lines += line[m]
            chosen_ident += ident[m]
            need = got
            if role == "anchor":
                chosen_anchors.add(m)
        self._settle(g, chosen, [(m, why[m]) for m in members if m in why], need)

    def _settle(self, g: GroupFill, chosen: list[int], left: list[tuple[int, DropReason]], need: int) -> None:
        g.chosen, g.left = chosen, left
        self._take(chosen, need)
        for m, reason in left:
            (self.over_budget if reason == "budget" else self.unbridged).append(m)


def _greedy_fill(
    by_row: Mapping[int, PackItem],
    ties: Sequence[tuple[int, int]],
    cost: Mapping[int, int],
    note_costs: Callable[[Sequence[GroupFill]], list[int]],
    parts_of: Callable[[Sequence[int]], NoteParts],
    budget: int,
) -> _Filler:
    """docs/reference/pipeline.md §6 fill of the offered items by row: anchors (CDR order) then connectors
    (score order), tie groups decided at their first member; ``note_costs`` gives each group's whole NOTE
    its reserved tokens, ``parts_of`` the parts of its NOTEs when it is cut."""
    fill = _Filler(by_row, cost, budget)
    scores = fill.scores
    order = rank_by_score([r for r, it in by_row.items() if it.role == "anchor"], scores) + rank_by_score(
        [r for r, it in by_row.items() if it.role == "connector"], scores
    )
    if not ties:
        for row in order:
            fill.alone(row)
        return fill
    unit_of = tie_components(list(by_row), ties, distinct=True)
    tied_units = [u for u, size in Counter(unit_of.values()).items() if size > 1]
    groups: dict[int, GroupFill] = {}
    if len(tied_units) == 1:  # one tie group: every pair is its own
        groups[tied_units[0]] = GroupFill([], list(ties))
    else:
        for p in ties:
            u = unit_of[p[0]]
            g = groups.get(u)
            if g is None:
                g = groups[u] = GroupFill([], [])
            g.pairs.append(p)
    for row in order:  # members in fill order
        g = groups.get(unit_of[row])
        if g is not None:
            g.members.append(row)
    fill.groups = [groups[u] for u in dict.fromkeys(unit_of[r] for r in order) if u in groups]
    for g, tokens in zip(fill.groups, note_costs(fill.groups), strict=True):
        g.whole_note = tokens
    for row in order:
        g = groups.get(unit_of[row])
        if g is None:
            fill.alone(row)
        elif g.members[0] == row:
            fill.group(g, parts_of)
    return fill


@dataclass(frozen=True)
class _Layout:
    """Envelope order with each fact's tier, band and (connectors) first bridged anchor."""

    order: list[int]
    tier: dict[int, Tier | None]
    band: dict[int, str]
    bridged: dict[int, int]


def _layout(packed: Sequence[int], by_row: Mapping[int, PackItem], *, ranked_fill: bool = False) -> _Layout:
    """Steps 3-4 of the module docstring: the anchor sandwich, then the connectors' spots.

    ``ranked_fill``: ``packed`` holds the anchors in CDR order, then the connectors in score order (a
    fill without tie units packs them so), and neither is sorted again."""
    scores = {r: by_row[r].score for r in packed}
    anchors = [r for r in packed if by_row[r].role == "anchor"]
    connectors = packed[len(anchors) :] if ranked_fill else [r for r in packed if by_row[r].role == "connector"]
    ranked = anchors if ranked_fill else rank_by_score(anchors, scores)
    best = scores[ranked[0]] if ranked else 0.0
    tier: dict[int, Tier | None] = {}
    crit: list[int] = []
    supporting: list[int] = []
    important: list[int] = []
    for r in ranked:  # the tiers of SPEC-003 §7.4 (tier_of), each list in CDR order
        level = tier_of(scores[r] / best if best > 0 else 1.0)
        tier[r] = level
        (crit if level == "critical" else important if level == "important" else supporting).append(r)
    tier.update(dict.fromkeys(connectors, None))
    head = crit[:1] + crit[-1:] if len(crit) >= 2 else crit[:1]
    tail = crit[1:-1]
    anchor_order = head + supporting + important + tail
    n, t = len(anchor_order), len(tail)
    last_block = n - t  # first index of the recency block (n when there is none)
    band = {
        r: ("primacy" if i < PRIMACY_SIZE else "recency" if i >= last_block else "middle")
        for i, r in enumerate(anchor_order)
    }
    band.update(dict.fromkeys(connectors, "middle"))

    position = {r: i for i, r in enumerate(anchor_order)}
    spots: dict[int, list[int]] = {}
    bridged: dict[int, int] = {}
    for c in connectors if ranked_fill else rank_by_score(connectors, scores):
        first = min(map(position.__getitem__, position.keys() & by_row[c].bridges))  # the fill kept >= 2
        bridged[c] = anchor_order[first]
        if first < PRIMACY_SIZE:
            spot = min(PRIMACY_SIZE, n) - 1  # right after the primacy block
        elif first >= last_block:
            spot = last_block - 1  # right before the recency block
        else:
            spot = first  # right after its anchor, in the middle band
        spots.setdefault(spot, []).append(c)
    if not spots:
        return _Layout(anchor_order, tier, band, bridged)
    order: list[int] = []
    for i, a in enumerate(anchor_order):
        order.append(a)
        order.extend(spots.get(i, ()))
    return _Layout(order, tier, band, bridged)


def _whole_notes(groups: Sequence[GroupFill], count_notes: NoteCounter) -> list[int]:
    """Tokens reserved for each group's NOTE listing every member: the larger count of its fill order and
    the reverse (a pair's two line orders), all groups counted in one call."""
    if not groups:
        return []
    specs: list[NoteSpec] = [(tuple(o), ()) for g in groups for o in (g.members, g.members[::-1])]
    counts = np.asarray(count_notes(specs), dtype=np.int64).reshape(len(groups), 2).max(axis=1)
    return [int(c) for c in counts.tolist()]


def _empty_reason(fill: _Filler, offered: int, budget: int) -> str:
    """Why no offered fact was packed (docs/reference/pipeline.md §6)."""
    parts: list[str] = []
    if fill.over_budget and fill.smallest is not None:
        need, tied = fill.smallest
        note = ", with its tie group's NOTE" if tied else ""
        parts.append(
            f"none of the {offered} selected fact{'' if offered == 1 else 's'} fits token_budget {budget} "
            f"(the smallest needs {need} tokens{note})"
        )
    if fill.unbridged:
        n = len(fill.unbridged)
        parts.append(f"{n} connector{'' if n == 1 else 's'} without two packed bridged anchors")
    return "the envelope is empty: " + "; ".join(parts or ["nothing was packed"])


def pack_envelope(
    corpus: PackCorpus,
    items: Sequence[PackItem],
    *,
    tied_pairs: Sequence[tuple[int, int]] | np.ndarray = (),
    config: CRPConfig,
    count_tokens: TokenCounter,
    count_prefixes: PrefixCounter | None = None,
    count_notes: NoteCounter | None = None,
    note_parts: NotePartsOf | None = None,
) -> Envelope:
    """Greedy fill with tie groups, then the anchor sandwich and the connectors' spots (docs/reference/pipeline.md §6).

    ``count_prefixes`` (rows -> token counts of their ``[<fact_id>]`` prefixes) defaults to counting
    them with ``count_tokens`` (:func:`prefix_counts`); the pipeline passes :func:`cached_prefix_counter`.
    ``count_notes`` (:data:`NoteSpec` s -> token counts of their NOTE blocks) likewise defaults to
    :func:`note_counts` with ``count_tokens``; the pipeline passes :func:`cached_note_counter`.
    ``note_parts`` (a cut group's members -> the token counts of its NOTEs' parts) defaults to
    :class:`NoteParts` counted with ``count_tokens``; the pipeline passes :func:`cached_note_parts`.
    """
    kb = corpus.kb
    facts = kb.facts
    budget = int(config.token_budget)
    by_row: dict[int, PackItem] = {}
    for it in items:
        by_row.setdefault(int(it.row), it)
    rows = list(by_row)
    prefix = (
        (count_prefixes(rows) if count_prefixes is not None else prefix_counts(kb, rows, count_tokens))
        if rows
        else np.zeros(0, dtype=np.int64)
    )
    line_cost = np.asarray(corpus.token_counts, dtype=np.int64)[np.asarray(rows, dtype=np.int64)] + prefix
    cost = dict(zip(rows, line_cost.tolist(), strict=True))
    ties = offered_ties(tied_pairs, rows)
    if count_notes is None:

        def count_notes(specs: Sequence[NoteSpec]) -> np.ndarray:
            return note_counts(kb, specs, count_tokens)

    counter = count_notes
    if note_parts is None:

        def note_parts(members: Sequence[int]) -> NoteParts:
            return NoteParts(kb, members, count_tokens)

    fill = _greedy_fill(
        by_row,
        ties,
        cost,
        lambda groups: _whole_notes(groups, counter),
        note_parts,
        budget,
    )
    lay = _layout(fill.packed, by_row, ranked_fill=not ties)

    # text: each group's NOTE block after the last of its packed facts
    notes = place_notes(kb, fill.groups, {r: i for i, r in enumerate(lay.order)} if fill.groups else {})
    lines: list[str] = []
    for r in lay.order:
        lines.append(fact_line(facts[r].fact_id, facts[r].content))
        lines.extend(notes.after.get(r, ()))
    note_tokens = np.asarray(counter(notes.specs), dtype=np.int64).tolist() if notes.specs else []
    used = sum(cost[r] for r in lay.order) + sum(note_tokens)
    tie_groups, dropped_pairs = tie_records(kb, fill.groups, notes, note_tokens)

    packed_facts = tuple(
        PackedFact.make(
            fact_id=facts[r].fact_id,
            role=by_row[r].role,
            score=float(by_row[r].score),
            tier=lay.tier[r],
            band=lay.band[r],
            tokens=cost[r],
            bridges_anchor=facts[lay.bridged[r]].fact_id if r in lay.bridged else None,
        )
        for r in lay.order
    )
    scores = fill.scores
    return Envelope(
        order=packed_facts,
        text="\n".join(lines),
        tokens_used=int(used),
        token_budget=budget,
        dropped_for_budget=tuple(facts[r].fact_id for r in rank_by_score(fill.over_budget, scores)),
        notes=tuple(notes.texts),
        dropped_unbridged=tuple(facts[r].fact_id for r in rank_by_score(fill.unbridged, scores)),
        dropped_pairs=dropped_pairs,
        tie_groups=tie_groups,
        empty_reason=_empty_reason(fill, len(by_row), budget) if by_row and not packed_facts else None,
    )


def word_counter(texts: Sequence[str]) -> np.ndarray:
    """Fallback token counter ``ceil(words * 1.3)`` (docs/reference/pipeline.md §6)."""
    from crp_core.corpus.embedding import word_token_estimate

    return word_token_estimate(list(texts))

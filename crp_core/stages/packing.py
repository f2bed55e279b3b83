"""Stage 6: packing (SPEC-003 §7.3-7.4, SPEC-025 §2.6, SPEC-027 §2.5; docs/reference/pipeline.md §6).

1. Units. A tied contradiction pair (docs/reference/pipeline.md §4) is packed as a unit: both facts and their
   NOTE block, or neither. Tied pairs that share a fact form one unit (their connected component),
   so every tied pair is wholly in the envelope or wholly out. Every other fact is a unit alone.
2. Greedy fill up to ``token_budget`` (SPEC-003 §7.3): anchors in CDR order, then connectors in
   connector-score order (ties by fact row). A unit is decided at its first fact in that order and
   costs its fact lines plus its NOTE blocks; a unit that does not fit is left out and smaller ones
   may still enter. A connector enters only while at least two of the anchors it bridges are
   packed (so far, the anchors of its own unit included); otherwise it is left out as unbridged,
   with its tie unit if it has one. A tied pair left out is reported in ``Envelope.dropped_pairs``
   and counts in no header (``headers.conflict_counts``): the header and the text always agree.
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
5. Text: one line ``[<fact_id>] <content>`` per fact; each NOTE block right after the later of its
   two facts, the fact placed first listed first. A fact line costs ``token_counts[row]`` + the
   tokens of ``[<fact_id>]``; a NOTE block costs its own count (the larger of its two line orders
   is reserved during the fill, so the envelope never exceeds its budget).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

import numpy as np

from crp_core.config import CRPConfig
from crp_core.model import KnowledgeBase
from crp_core.records import DroppedPair, DropReason, Envelope, PackedFact

#: the NOTE block of SPEC-027 §2.5 (header lines; one indented ``[content]`` line per fact follows)
NOTE_HEADER = (
    "NOTE: The following two facts conflict and could not be automatically\n"
    "arbitrated. Treat with caution and prefer the more specific:"
)
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


def note_block(content_a: str, content_b: str) -> str:
    """The SPEC-027 §2.5 annotation for a tied pair (A = the fact placed first in the envelope)."""
    return f"{NOTE_HEADER}\n  [{content_a}]\n  [{content_b}]"


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


#: token counts of the NOTE blocks of ordered fact-row pairs (a, b) (see :func:`cached_note_counter`)
NoteCounter = Callable[[Sequence[tuple[int, int]]], np.ndarray]


def note_counts(kb: KnowledgeBase, pairs: Sequence[tuple[int, int]], count_tokens: TokenCounter) -> np.ndarray:
    """(len(pairs),) int64 token counts of ``note_block`` of each ordered pair's contents, counted now."""
    if not len(pairs):
        return np.zeros(0, dtype=np.int64)
    facts = kb.facts
    return np.asarray(
        count_tokens([note_block(facts[a].content, facts[b].content) for a, b in pairs]), dtype=np.int64
    ).reshape(-1)


def cached_note_counter(corpus: _CorpusWithCache, count_tokens: TokenCounter, counter_key: Hashable) -> NoteCounter:
    """:func:`note_counts` remembered per corpus and ``counter_key``: a NOTE block's text depends on its two
    facts' contents alone, so each ordered pair is counted the first time it is packed."""
    known: dict[tuple[int, int], int] = corpus.derived(("envelope note tokens", counter_key), lambda: {})

    def notes(pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        keys = [(int(a), int(b)) for a, b in pairs]
        missing = list(dict.fromkeys(k for k in keys if k not in known))
        if missing:
            known.update(zip(missing, note_counts(corpus.kb, missing, count_tokens).tolist(), strict=True))
        return np.array([known[k] for k in keys], dtype=np.int64)

    return notes


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


def _tie_units(rows: Sequence[int], ties: Sequence[tuple[int, int]]) -> dict[int, int]:
    """Unit id (the smallest row of its tie component) of every row; singletons map to themselves."""
    parent = {r: r for r in rows}
    if not ties:
        return parent

    def root(r: int) -> int:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for a, b in ties:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {r: root(r) for r in rows}


@dataclass(frozen=True)
class _Fill:
    """Outcome of the greedy fill: packed rows (fill order), what was left out and why."""

    packed: list[int]
    packed_ties: list[tuple[int, int]]
    over_budget: list[int]
    unbridged: list[int]
    dropped_pairs: list[tuple[int, int, DropReason]]


def _greedy_fill(
    items: Sequence[PackItem],
    ties: Sequence[tuple[int, int]],
    cost: Mapping[int, int],
    note_cost: Mapping[tuple[int, int], int],
    budget: int,
) -> _Fill:
    """docs/reference/pipeline.md §6 fill: anchors (CDR order) then connectors (score order), tie units whole."""
    by_row = {it.row: it for it in items}
    scores = {r: it.score for r, it in by_row.items()}
    order = rank_by_score([r for r, it in by_row.items() if it.role == "anchor"], scores) + rank_by_score(
        [r for r, it in by_row.items() if it.role == "connector"], scores
    )
    if not ties:
        return _fill_alone(order, by_row, cost, budget)
    unit_of = _tie_units(list(by_row), ties)
    members: dict[int, list[int]] = {}
    unit_ties: dict[int, list[tuple[int, int]]] = {}
    for r, u in unit_of.items():
        members.setdefault(u, []).append(r)
    for p in ties:
        unit_ties.setdefault(unit_of[p[0]], []).append(p)

    packed: list[int] = []
    packed_anchors: set[int] = set()
    out = _Fill(packed, [], [], [], [])
    used = 0
    decided: set[int] = set()
    for row in order:
        u = unit_of[row]
        if u in decided:
            continue
        decided.add(u)
        pairs = unit_ties.get(u)
        if pairs is None:  # a fact alone (no tie): its own line
            rows = [row]
            unit_anchors = {row} if by_row[row].role == "anchor" else set()
            need = cost[row]
        else:
            rows = rank_by_score(members[u], scores)
            unit_anchors = {r for r in rows if by_row[r].role == "anchor"}
            need = sum(cost[r] for r in rows) + sum(note_cost[p] for p in pairs)
        # a connector needs two of the anchors it bridges packed (so far, its own unit's included)
        unbridged = any(
            it.role == "connector" and len((packed_anchors | unit_anchors).intersection(it.bridges)) < 2
            for it in map(by_row.__getitem__, rows)
        )
        if unbridged:
            out.unbridged.extend(rows)
            if pairs:
                out.dropped_pairs.extend((a, b, "unbridged") for a, b in pairs)
        elif used + need > budget:
            out.over_budget.extend(rows)
            if pairs:
                out.dropped_pairs.extend((a, b, "budget") for a, b in pairs)
        else:
            used += need
            packed.extend(rows)
            packed_anchors |= unit_anchors
            if pairs:
                out.packed_ties.extend(pairs)
    return out


def _fill_alone(order: Sequence[int], by_row: Mapping[int, PackItem], cost: Mapping[int, int], budget: int) -> _Fill:
    """:func:`_greedy_fill` when no fact is tied: every fact is a unit alone (the usual run), so each is
    one budget test and, for a connector, one count of its packed bridged anchors."""
    packed: list[int] = []
    packed_anchors: set[int] = set()
    out = _Fill(packed, [], [], [], [])
    used = 0
    for row in order:
        it = by_row[row]
        anchor = it.role == "anchor"
        if not anchor and len(packed_anchors.intersection(it.bridges)) < 2:
            out.unbridged.append(row)
            continue
        need = cost[row]
        if used + need > budget:
            out.over_budget.append(row)
            continue
        used += need
        packed.append(row)
        if anchor:
            packed_anchors.add(row)
    return out


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


def _note_costs(ties: Sequence[tuple[int, int]], count_notes: NoteCounter) -> dict[tuple[int, int], int]:
    """Tokens reserved for each tie's NOTE block: the larger count of its two line orders."""
    if not ties:
        return {}
    orders = [(x, y) for a, b in ties for x, y in ((a, b), (b, a))]
    counts = np.asarray(count_notes(orders), dtype=np.int64).reshape(len(ties), 2).max(axis=1)
    return dict(zip(ties, counts.tolist(), strict=True))


def pack_envelope(
    corpus: PackCorpus,
    items: Sequence[PackItem],
    *,
    tied_pairs: Sequence[tuple[int, int]] = (),
    config: CRPConfig,
    count_tokens: TokenCounter,
    count_prefixes: PrefixCounter | None = None,
    count_notes: NoteCounter | None = None,
) -> Envelope:
    """Greedy fill with tie units, then the anchor sandwich and the connectors' spots (docs/reference/pipeline.md §6).

    ``count_prefixes`` (rows -> token counts of their ``[<fact_id>]`` prefixes) defaults to counting
    them with ``count_tokens`` (:func:`prefix_counts`); the pipeline passes :func:`cached_prefix_counter`.
    ``count_notes`` (ordered row pairs -> token counts of their NOTE blocks) likewise defaults to
    :func:`note_counts` with ``count_tokens``; the pipeline passes :func:`cached_note_counter`.
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
    ties: list[tuple[int, int]] = []
    for a, b in tied_pairs:
        p = (int(a), int(b))
        if p[0] in by_row and p[1] in by_row and p[0] != p[1] and p not in ties and p[::-1] not in ties:
            ties.append(p)
    ties.sort(key=lambda p: (min(p), max(p)))  # the same ties in any order give the same envelope
    if count_notes is None:

        def count_notes(pairs: Sequence[tuple[int, int]]) -> np.ndarray:
            return note_counts(kb, pairs, count_tokens)

    note_cost = _note_costs(ties, count_notes)

    fill = _greedy_fill(list(by_row.values()), ties, cost, note_cost, budget)
    lay = _layout(fill.packed, by_row, ranked_fill=not ties)

    # text: NOTE blocks after the later fact of each packed tie, earlier-placed fact listed first
    pos = {r: i for i, r in enumerate(lay.order)}
    placed = sorted((sorted(p, key=pos.__getitem__) for p in fill.packed_ties), key=lambda p: (pos[p[1]], pos[p[0]]))
    notes_after: dict[int, list[str]] = {}
    notes: list[str] = []
    for first, second in placed:
        block = note_block(facts[first].content, facts[second].content)
        notes_after.setdefault(second, []).append(block)
        notes.append(block)
    lines: list[str] = []
    for r in lay.order:
        lines.append(fact_line(facts[r].fact_id, facts[r].content))
        lines.extend(notes_after.get(r, ()))
    note_tokens = int(np.asarray(count_notes([(a, b) for a, b in placed]), dtype=np.int64).sum()) if notes else 0
    used = sum(cost[r] for r in lay.order) + note_tokens

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
    scores = {r: it.score for r, it in by_row.items()}
    return Envelope(
        order=packed_facts,
        text="\n".join(lines),
        tokens_used=int(used),
        token_budget=budget,
        dropped_for_budget=tuple(facts[r].fact_id for r in rank_by_score(fill.over_budget, scores)),
        notes=tuple(notes),
        dropped_unbridged=tuple(facts[r].fact_id for r in rank_by_score(fill.unbridged, scores)),
        dropped_pairs=tuple(
            DroppedPair(facts[a].fact_id, facts[b].fact_id, reason) for a, b, reason in fill.dropped_pairs
        ),
    )


def packing_drop_reasons(envelope: Envelope, roles: Mapping[str, str]) -> dict[str, str]:
    """Why each selected fact left out by stage 6 is not in the envelope (fact id -> reason text)."""
    partners: dict[str, list[str]] = {}
    for p in envelope.dropped_pairs:
        partners.setdefault(p.fact_a, []).append(p.fact_b)
        partners.setdefault(p.fact_b, []).append(p.fact_a)

    def tied(fid: str) -> str:
        got = partners.get(fid)
        return f" (tied with {', '.join(got)}: a tied pair is packed as a unit)" if got else ""

    out = {fid: "selected but dropped: token budget" + tied(fid) for fid in envelope.dropped_for_budget}
    for fid in envelope.dropped_unbridged:
        if roles.get(fid) == "connector":
            out[fid] = "selected but dropped: fewer than two of the anchors it bridges are packed" + tied(fid)
        else:
            out[fid] = "selected but dropped: tied to a connector left without its bridged anchors" + tied(fid)
    return out


def word_counter(texts: Sequence[str]) -> np.ndarray:
    """Fallback token counter ``ceil(words * 1.3)`` (docs/reference/pipeline.md §6)."""
    from crp_core.corpus.embedding import word_token_estimate

    return word_token_estimate(list(texts))

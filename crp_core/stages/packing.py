"""Stage 6: packing (SPEC-003 §7.3-7.4, SPEC-025 §2.6, SPEC-027 §2.5; SPEC_NOTES §2.8).

1. Greedy fill in score order (CDGR score: CDR for anchors, connector score for connectors;
   ties by fact row) up to ``token_budget``; a fact that does not fit is skipped and smaller ones
   may still enter (SPEC-003 §7.3).
2. Tied contradiction pairs with both facts packed get the SPEC-027 §2.5 NOTE block, which is part
   of the text and counted in tokens. The envelope never exceeds its budget: while it does, the
   lowest-score packed fact that is not in a tie is dropped (if only tied facts are left, the
   lowest-score tied fact goes, and its NOTE with it).
3. Order: primacy-recency sandwich of SPEC-003 §7.4 over the anchors, tiers on score / best envelope
   score (critical >= 0.80, important >= 0.50, supporting below):
   ``[critical[0], critical[-1], supporting..., important..., critical[1:-1]...]``; each connector
   right after the first anchor (in envelope order) of the pairs it bridges.
4. Text: one line ``[<fact_id>] <content>`` per fact; each NOTE block right after the later of its
   two facts. A fact line costs ``token_counts[row]`` + the tokens of ``[<fact_id>]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from crp_core.config import CRPConfig
from crp_core.records import Envelope, PackedFact

#: the NOTE block of SPEC-027 §2.5 (header lines; one indented ``[content]`` line per fact follows)
NOTE_HEADER = ("NOTE: The following two facts conflict and could not be automatically\n"
               "arbitrated. Treat with caution and prefer the more specific:")
#: tier thresholds on score / best score (SPEC-003 §7.4)
CRITICAL_RATIO = 0.80
IMPORTANT_RATIO = 0.50

TokenCounter = Callable[[Sequence[str]], np.ndarray]


def note_block(content_a: str, content_b: str) -> str:
    """The SPEC-027 §2.5 annotation for a tied pair (A = the fact placed first in the envelope)."""
    return f"{NOTE_HEADER}\n  [{content_a}]\n  [{content_b}]"


def fact_line(fact_id: str, content: str) -> str:
    return f"[{fact_id}] {content}"


@dataclass(frozen=True)
class PackItem:
    """One selected fact offered to the packer."""

    row: int
    role: str  # "anchor" | "connector"
    score: float
    bridges: tuple[int, ...] = ()  # connectors: anchor rows of the pairs it bridges, anchor order


def tier_of(ratio: float) -> str:
    if ratio >= CRITICAL_RATIO:
        return "critical"
    if ratio >= IMPORTANT_RATIO:
        return "important"
    return "supporting"


def pack_envelope(corpus: Any, items: Sequence[PackItem], *, tied_pairs: Sequence[tuple[int, int]] = (),
                  config: CRPConfig, count_tokens: TokenCounter) -> Envelope:
    """Greedy fill, NOTE blocks, budget guard and the primacy-recency sandwich (SPEC_NOTES §2.8)."""
    facts = corpus.kb.facts
    budget = int(config.token_budget)
    items = list(items)
    by_row = {it.row: it for it in items}
    prefix = count_tokens([f"[{facts[it.row].fact_id}]" for it in items]) if items else np.zeros(0)
    cost = {it.row: int(corpus.token_counts[it.row]) + int(prefix[i]) for i, it in enumerate(items)}

    # 1. greedy fill in score order
    ranked = sorted(items, key=lambda it: (-it.score, it.row))
    packed: list[int] = []
    dropped: list[int] = []
    used = 0
    for it in ranked:
        if used + cost[it.row] <= budget:
            packed.append(it.row)
            used += cost[it.row]
        else:
            dropped.append(it.row)

    # 2. NOTE blocks of tied pairs, then the budget guard
    ties = [(int(a), int(b)) for a, b in tied_pairs if int(a) in by_row and int(b) in by_row]
    note_cost_cache: dict[tuple[int, int], int] = {}

    def note_cost(pair: tuple[int, int]) -> int:
        if pair not in note_cost_cache:
            a, b = pair
            note_cost_cache[pair] = int(count_tokens([note_block(facts[a].content, facts[b].content)])[0])
        return note_cost_cache[pair]

    while True:
        in_env = set(packed)
        active = [p for p in ties if p[0] in in_env and p[1] in in_env]
        total = sum(cost[r] for r in packed) + sum(note_cost(p) for p in active)
        if total <= budget or not packed:
            break
        tied_rows = {r for p in active for r in p}
        pool = [r for r in packed if r not in tied_rows] or list(packed)
        victim = min(pool, key=lambda r: (by_row[r].score, -r))
        packed.remove(victim)
        dropped.append(victim)
    used = total if packed else 0

    # 3. order: sandwich over anchors, connectors after their first bridged anchor
    anchors = [r for r in packed if by_row[r].role != "connector"]
    connectors = [r for r in packed if by_row[r].role == "connector"]
    ref = [by_row[r].score for r in packed]  # best score in the envelope, connectors included (SPEC_NOTES §2.8)
    best = max(ref) if ref else 0.0

    def ratio(r: int) -> float:
        return by_row[r].score / best if best > 0 else 1.0

    def rank_key(r: int) -> tuple[float, int]:
        return (-by_row[r].score, r)

    tiers = {r: tier_of(ratio(r)) for r in packed}
    crit = sorted((r for r in anchors if tiers[r] == "critical"), key=rank_key)
    imp = sorted((r for r in anchors if tiers[r] == "important"), key=rank_key)
    sup = sorted((r for r in anchors if tiers[r] == "supporting"), key=rank_key)
    band: dict[int, str] = {}
    head = crit[:1] + (crit[-1:] if len(crit) >= 2 else [])
    tail = crit[1:-1]
    for r in head:
        band[r] = "primacy"
    for r in sup + imp:
        band[r] = "middle"
    for r in tail:
        band[r] = "recency"
    anchor_order = head + sup + imp + tail

    attach: dict[int, list[int]] = {}
    loose: list[int] = []
    follows: dict[int, int] = {}
    position = {r: i for i, r in enumerate(anchor_order)}
    for c in sorted(connectors, key=rank_key):
        targets = [a for a in by_row[c].bridges if a in position]
        if targets:
            a = min(targets, key=lambda x: position[x])
            attach.setdefault(a, []).append(c)
            follows[c] = a
            band[c] = band[a]
        else:
            loose.append(c)
            band[c] = "middle"
    order: list[int] = []
    mid_end = len(head) + len(sup) + len(imp)
    for i, a in enumerate(anchor_order):
        if i == mid_end:
            order.extend(loose)
            loose = []
        order.append(a)
        order.extend(attach.get(a, []))
    order.extend(loose)

    # 4. text with NOTE blocks after the later fact of each tied pair
    pos_in = {r: i for i, r in enumerate(order)}
    active = [p for p in ties if p[0] in pos_in and p[1] in pos_in]
    notes_after: dict[int, list[str]] = {}
    notes: list[str] = []
    for a, b in sorted(active, key=lambda p: (max(pos_in[p[0]], pos_in[p[1]]), min(pos_in[p[0]], pos_in[p[1]]))):
        first, second = (a, b) if pos_in[a] < pos_in[b] else (b, a)
        block = note_block(facts[first].content, facts[second].content)
        notes_after.setdefault(second, []).append(block)
        notes.append(block)
    lines: list[str] = []
    for r in order:
        lines.append(fact_line(facts[r].fact_id, facts[r].content))
        lines.extend(notes_after.get(r, []))
    packed_facts = tuple(
        PackedFact(fact_id=facts[r].fact_id, role=by_row[r].role, score=float(by_row[r].score), tier=tiers[r],
                   band=band[r], tokens=cost[r],
                   bridges_anchor=facts[follows[r]].fact_id if r in follows else None)
        for r in order)
    dropped_ids = tuple(facts[r].fact_id for r in sorted(set(dropped), key=rank_key))
    return Envelope(order=packed_facts, text="\n".join(lines), tokens_used=int(used), token_budget=budget,
                    dropped_for_budget=dropped_ids, notes=tuple(notes))


def word_counter(texts: Sequence[str]) -> np.ndarray:
    """Fallback token counter ``ceil(words * 1.3)`` (SPEC_NOTES §2.8)."""
    from crp_core.corpus.embedding import word_token_estimate

    return word_token_estimate(list(texts))


def packing_rows(envelope: Envelope, kb: Any) -> list[int]:
    """Fact rows of the envelope, in packed order."""
    return [kb.index_of(p.fact_id) for p in envelope.order]


def bridges_of(touched: Mapping[int, tuple[tuple[int, int], ...]], row: int) -> tuple[int, ...]:
    """Anchor rows appearing in a connector's bridged pairs, first-seen order."""
    seen: dict[int, None] = {}
    for a, b in touched.get(row, ()):
        seen.setdefault(a)
        seen.setdefault(b)
    return tuple(seen)

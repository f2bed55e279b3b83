"""Where each scored fact ended and why: the ``role`` and ``reason`` of every fact of a run
(docs/reference/reports.md ``facts``), read off the stage records, never recomputed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact
from crp_core.records import (
    CandidateSet,
    CDGRResult,
    CDRTable,
    ConflictPair,
    ConnectorTable,
    Envelope,
    FactOutcome,
    Resolution,
    Role,
)
from crp_core.stages.cdr import cdr_ranking
from crp_core.stages.contradictions.backfill import DECIDED_CONFLICT, NEAR_DUPLICATE, VALUE_CONFLICT
from crp_core.stages.tie_groups import listed_ids
from crp_core.support.text import counted

#: plain candidates take the short path of :func:`fact_outcomes` (off: every row goes through ``_reason``,
#: the plain computation the tests compare it with)
SHORT_PATH = True


@dataclass(frozen=True)
class _RunView:
    """What the reasons of one run read: the stage records, indexed by fact row."""

    facts: tuple[Fact, ...]
    candidates: CandidateSet
    conn: ConnectorTable
    conn_pos: Mapping[int, int]
    gate_pos: Mapping[int, int]
    rank: Mapping[int, int]
    n_gated_in: int
    suppressed_by: Mapping[str, ConflictPair]
    dedup: Mapping[int, int]
    backfill: Mapping[int, int]
    near: Mapping[int, tuple[int, float]]
    extra: frozenset[int]
    guarded: Mapping[str, str]  # fact id -> what the known-conflict guard said
    dropped: Mapping[str, str]  # fact id -> why packing left it out
    conn_near: Mapping[int, tuple[int, float]]
    passed_over: Mapping[int, tuple[int, str]]  # pool row -> (kept row in its way, why): the backfill's


def fact_outcomes(
    corpus: Corpus,
    candidates: CandidateSet,
    cdr: CDRTable,
    cdgr: CDGRResult,
    resolution: Resolution,
    envelope: Envelope,
    roles: Mapping[int, str],
    *,
    guarded: Mapping[str, str] | None = None,
) -> tuple[FactOutcome, ...]:
    """Where each scored fact ended and why (stage-1 candidates in stage-1 order, then the
    connector candidates the graph walk added, by row)."""
    kb = corpus.kb
    facts = kb.facts
    in_env = {p.fact_id for p in envelope.order}
    dropped = packing_drop_reasons(envelope)
    suppressed_by: dict[str, ConflictPair] = {}
    for p in resolution.pairs:
        if p.suppressed and not p.skipped:
            suppressed_by[p.suppressed] = p
    dedup = {int(a): int(b) for a, b in resolution.deduplicated}
    backfill = {int(a): int(b) for a, b in resolution.backfilled}
    passed_over = {int(c): (int(k), why) for c, k, why in resolution.passed_over}
    near = {int(r): (int(a), s) for r, a, s in cdgr.near_duplicates}
    conn_near = {int(r): (int(a), s) for r, a, s in cdgr.connector_near_duplicates}
    extra = set(cdgr.extra_anchors.tolist())
    conn = cdgr.connectors
    conn_rows = conn.idx.tolist()
    cand_rows = candidates.idx.tolist()
    conn_pos = dict(zip(conn_rows, range(len(conn_rows))))
    gate_pos = dict(zip(cand_rows, range(len(cand_rows))))
    ranked = cdr.idx[cdr_ranking(cdr, cdr.passed_gate)].tolist()
    rank = dict(zip(ranked, range(1, len(ranked) + 1)))
    n_gated_in = len(rank)
    final_roles = dict(roles)
    for r in backfill:
        final_roles.setdefault(r, "anchor")

    view = _RunView(
        guarded=dict(guarded or {}),
        facts=facts,
        candidates=candidates,
        conn=conn,
        conn_pos=conn_pos,
        gate_pos=gate_pos,
        rank=rank,
        n_gated_in=n_gated_in,
        suppressed_by=suppressed_by,
        dedup=dedup,
        backfill=backfill,
        near=near,
        extra=frozenset(extra),
        dropped=dropped,
        conn_near=conn_near,
        passed_over=passed_over,
    )
    rows = cand_rows + sorted(r for r in conn_rows if r not in gate_pos)
    # the rows whose reason reads a stage record beyond the gate, the CDR rank and the connector table;
    # every other candidate (most of them: gated out, ranked below the anchor budget, or an unchosen
    # connector candidate) takes the short path below, which words its reason as _reason does
    special_rows = set(final_roles) | set(dedup) | set(near) | set(conn_near) | set(passed_over)
    special_ids = set(suppressed_by) | set(view.guarded) | set(dropped)
    passed_gate = candidates.passed_gate.tolist()
    relevance = candidates.relevance.tolist()
    gate_tail = f" < cdr_min_relevance {candidates.gate_threshold:.2f}"
    rank_tail = f" of {n_gated_in}, below the anchor budget"
    n_cand = len(cand_rows)
    short = SHORT_PATH
    bridge, conn_score = conn.bridge_value.tolist(), conn.connector_score.tolist()
    hops = conn.hop_distance.tolist()
    out: list[FactOutcome] = []
    for k, r in enumerate(rows):
        fid = facts[r].fact_id
        if short and k < n_cand and r not in special_rows and fid not in special_ids:
            if passed_gate[k]:
                role: Role = "candidate"
                reason = f"not selected: CDR rank {rank[r]}{rank_tail}" if r in rank else ""
            else:
                role = "gated"
                reason = f"gated: relevance {relevance[k]:.3f}{gate_tail}"
            i = conn_pos.get(r)
            if i is not None:
                part = (
                    f"connector candidate ({int(hops[i])} hop(s)): bridge value 0"
                    if bridge[i] <= 0
                    else f"connector candidate: bridge value {bridge[i]:.3f}, score {conn_score[i]:.4f} below the "
                    "connector budget"
                )
                reason = f"{reason}; {part}" if reason else part
            out.append(
                FactOutcome(
                    fact_id=fid, role=role, in_envelope=fid in in_env, suppressed=False, reason=reason or "not selected"
                )
            )
            continue
        in_e = fid in in_env
        sup = fid in suppressed_by
        selected_as = final_roles.get(r)
        if r in gate_pos:
            passed = bool(candidates.passed_gate[gate_pos[r]])
        else:
            passed = bool(conn.relevance[conn_pos[r]] >= candidates.gate_threshold)
        if selected_as is None:
            # the relevance gate applies to stage-1 candidates only: a connector candidate the
            # graph walk added was never gated (SPEC-025 §2.5), it just was not chosen
            role = "candidate" if passed or r not in gate_pos else "gated"
        else:
            role = cast(Role, selected_as)  # ``roles`` holds "anchor" / "connector" (the selection's roles)
        reason = _reason(view, r, role, passed)
        out.append(FactOutcome(fact_id=fid, role=role, in_envelope=in_e, suppressed=sup, reason=reason))
    return tuple(out)


def authority_pair_text(x: float, y: float) -> tuple[str, str]:
    """Two authorities printed with 4 decimals, or with as many more (up to 12) as it takes to tell them
    apart: "0.5250 < 0.5250" would be false as printed."""
    for digits in range(4, 13):
        a, b = f"{x:.{digits}f}", f"{y:.{digits}f}"
        if a != b:
            return a, b
    return f"{x:.4f}", f"{y:.4f}"


#: the bridged anchor pairs a connector's reason names; the rest are counted (the run JSON's ``bridged_pairs``
#: and the Graph page list every one)
BRIDGED_NAMED = 3


def bridged_pairs_text(facts: Sequence[Fact], pairs: Sequence[tuple[int, int]]) -> str:
    """A connector's bridged anchor pairs (rows into ``facts``) in a reason: ``A-D``, or
    ``A-B, A-C, B-C and 31 more anchor pairs``."""
    names = [f"{facts[a].fact_id}-{facts[b].fact_id}" for a, b in pairs[:BRIDGED_NAMED]]
    more = len(pairs) - len(names)
    return ", ".join(names) + (f" and {counted(more, 'more anchor pair')}" if more else "")


def _reason(v: _RunView, r: int, role: str, passed: bool) -> str:
    """One line saying why fact row ``r`` ended where it did."""
    fid = v.facts[r].fact_id
    if fid in v.suppressed_by:
        p = v.suppressed_by[fid]
        winner = p.kept[0] if p.kept else "?"
        a = p.authority
        lose, win = authority_pair_text(a[fid].authority, a[winner].authority)
        if p.decision is not None:  # a person decided this pair: said apart from the authority arithmetic
            return (
                f"suppressed by {winner}: an operator's {p.decision} decision (authority {lose} vs {win}) "
                f"({p.patterns_text()})"
            )
        return f"suppressed by {winner}: authority {lose} < {win} ({p.patterns_text()})"
    if r in v.dedup:
        return f"near-duplicate of {v.facts[v.dedup[r]].fact_id} (SPEC-003 §6.6), dropped in stage 4"
    if fid in v.guarded:
        return v.guarded[fid]
    if fid in v.dropped:
        return v.dropped[fid]
    if role == "connector":
        i = v.conn_pos[r]
        bridged = bridged_pairs_text(v.facts, v.conn.bridged_pairs[i])
        return f"connector: bridge value {v.conn.bridge_value[i]:.3f} (bridges {bridged})"
    if role == "anchor":
        return _anchor_reason(v, r)
    parts = [_candidate_reason(v, r, passed)] + [_connector_candidate_reason(v, r)]
    parts = [p for p in parts if p]
    return "; ".join(parts) if parts else "not selected"


def _anchor_reason(v: _RunView, r: int) -> str:
    """A selected anchor: backfill, extra anchor or anchor, with its CDR rank."""
    if r in v.backfill:
        return f"backfill: took the slot of {v.facts[v.backfill[r]].fact_id}"
    if r in v.extra:
        return f"extra anchor: unused connector slot (CDR rank {v.rank.get(r, 0)} of {v.n_gated_in})"
    return f"anchor: CDR rank {v.rank.get(r, 0)} of {v.n_gated_in}"


def _candidate_reason(v: _RunView, r: int, passed: bool) -> str:
    """Why a scored fact that was not selected is no anchor: the gate, a near-duplicate, its CDR rank
    ('' when none of these)."""
    if not passed:
        if r in v.gate_pos:
            return "gated: " + v.candidates.gate_reason(v.gate_pos[r])
        i = v.conn_pos[r]
        return f"gated: relevance {v.conn.relevance[i]:.3f} < cdr_min_relevance {v.candidates.gate_threshold:.2f}"
    if r in v.near:
        anchor, cos = v.near[r]
        return f"near-duplicate of anchor {v.facts[anchor].fact_id} (cos {cos:.3f}), not an anchor"
    if r in v.passed_over:
        kept, why = v.passed_over[r]
        obstacle = _OBSTACLES[why].format(v.facts[kept].fact_id)
        return f"not backfilled: {obstacle} (CDR rank {v.rank.get(r, 0)} of {v.n_gated_in})"
    if r in v.rank:
        return f"not selected: CDR rank {v.rank[r]} of {v.n_gated_in}, below the anchor budget"
    return ""


#: what was in the way of a fact the backfill passed over, by its kind (crp_core.stages.contradictions.backfill)
_OBSTACLES = {
    NEAR_DUPLICATE: "near-duplicate of kept fact {}",
    VALUE_CONFLICT: "value conflict with kept fact {}",
    DECIDED_CONFLICT: "an operator decided it conflicts with kept fact {}",
}


def _connector_candidate_reason(v: _RunView, r: int) -> str:
    """Why a connector candidate was not chosen ('' for a fact that is none)."""
    if r not in v.conn_pos:
        return ""
    i = v.conn_pos[r]
    conn = v.conn
    if conn.bridge_value[i] <= 0:
        return f"connector candidate ({int(conn.hop_distance[i])} hop(s)): bridge value 0"
    if r in v.conn_near:
        anchor, cos = v.conn_near[r]
        return (
            f"connector candidate dropped: near-duplicate of anchor {v.facts[anchor].fact_id} "
            f"(cos {cos:.3f}, SPEC-003 §6.6)"
        )
    return (
        f"connector candidate: bridge value {conn.bridge_value[i]:.3f}, "
        f"score {conn.connector_score[i]:.4f} below the connector budget"
    )


def packing_drop_reasons(envelope: Envelope) -> dict[str, str]:
    """Why each selected fact left out by stage 6 is not in the envelope (fact id -> reason text)."""
    group_of = {fid: g for g in envelope.tie_groups for fid in g.left_out}

    def tied(fid: str) -> str:
        g = group_of.get(fid)
        if g is None:
            return ""
        others = listed_ids([m for m in g.members if m != fid])
        if g.packed:
            return f" (tie group with {others}: the facts that fit were packed with a NOTE that names this one)"
        return f" (tie group with {others}: no fact of the group fits with the group's NOTE)"

    out = {fid: "selected but dropped: token budget" + tied(fid) for fid in envelope.dropped_for_budget}
    for fid in envelope.dropped_unbridged:
        out[fid] = "selected but dropped: fewer than two of the anchors it bridges are packed" + tied(fid)
    return out

"""The SPEC-027 §4 retrieval pipeline, end to end (SPEC_NOTES §2).

1 candidates (stage 1) -> 2 CDR (+ recency) -> 3 CDGR -> 4 contradiction resolution ->
5 fan-out (only when ``scenario.fanout_width > 1``) -> 6 packing, then the headers of SPEC_NOTES §3.
Each stage is timed with ``time.perf_counter`` into ``timings_ms``. Deterministic: the same
corpus, scenario, config and ``now`` give the same result.
"""
from __future__ import annotations

import dataclasses
import time
from datetime import datetime, timezone
from typing import Any, Mapping

import numpy as np

from crp_core.stages.candidates import gather_candidates
from crp_core.stages.cdgr import expand_graph_with_recency
from crp_core.stages.cdr import cdr_ranking, score_cdr
from crp_core.config import CRPConfig
from crp_core.stages.contradictions import resolve_contradictions, tied_rows
from crp_core.factors.coverage import CoverageSet
from crp_core.headers import build_headers
from crp_core.factors.ngram import build_blacklist
from crp_core.stages.packing import PackItem, pack_envelope, packing_drop_reasons, word_counter
from crp_core.factors.recency import compute_recency, concat_recency
from crp_core.records import FactOutcome, PipelineResult, Resolution, frozen_array

STAGES: tuple[str, ...] = ("candidates", "cdr", "cdgr", "contradictions", "fanout", "packing")


def resolve_config(scenario: Any, config: CRPConfig | None) -> CRPConfig:
    """``config`` when given, else the defaults with the scenario's overrides."""
    if config is not None:
        return config
    return CRPConfig().with_overrides(dict(scenario.config or {}))


def _token_counter(corpus: Any, embedder: Any) -> Any:
    """Envelope token counting with the corpus's own counter (MiniLM tokenizer or words * 1.3)."""
    from crp_core.corpus.embedding import MODEL_ID, count_tokens

    if corpus.model_id == MODEL_ID:
        return lambda texts: count_tokens(list(texts), corpus.model_id, embedder)
    return word_counter


def _cdr_positions(cdr: Any, pos_of: Mapping[int, int], rows: list[int]) -> np.ndarray:
    """Positions of ``rows`` in the stage-2 table: from ``pos_of`` (gated-in rows), else searched;
    a KeyError for a row the table lacks."""
    try:
        return np.array([pos_of[r] for r in rows], dtype=np.int64)
    except KeyError:
        got = [np.flatnonzero(cdr.idx == r) for r in rows]
        missing = [r for r, g in zip(rows, got) if g.size == 0]
        if missing:
            raise KeyError(missing[0]) from None
        return np.array([int(g[0]) for g in got], dtype=np.int64)


def run_pipeline(corpus: Any, scenario: Any, config: CRPConfig | None = None, *, vectors: Any = None,
                 now: datetime | None = None, embedder: Any = None, decisions: Any = None) -> PipelineResult:
    """Run SPEC-027 §4 over a prepared corpus for one scenario (SPEC_NOTES §2).

    ``config`` defaults to ``CRPConfig().with_overrides(scenario.config)``; ``now`` to
    ``scenario.now``, else the wall clock; ``vectors`` (ScenarioVectors) to
    ``embed_scenario(scenario, corpus, embedder)``. ``decisions`` are operator decisions handed to
    stage 4.
    """
    config = resolve_config(scenario, config)
    if now is None:
        now = scenario.now if scenario.now is not None else datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    if vectors is None:
        from crp_core.corpus.prepared import embed_scenario

        vectors = embed_scenario(scenario, corpus, embedder)
    kb = corpus.kb
    coverage = CoverageSet.from_scenario(scenario, vectors.sub_queries, vectors.ids, dim=corpus.dim)
    known = set(vectors.ids)
    residual_ids = [sq.id for sq in scenario.residual_set if sq.id in known]
    residual_vectors = vectors.for_ids(residual_ids)
    blacklist = build_blacklist(scenario.prior_outputs, config.ngram_n)
    timings: dict[str, float] = {}

    # one-off process costs stay out of the stage timings: the MiniLM tokenizer load (packing
    # counts the "[id]" prefixes and NOTE blocks with it) and the scikit-learn import (fan-out)
    count_tokens = _token_counter(corpus, embedder)
    count_tokens(["[warm-up]"])
    if int(scenario.fanout_width or 0) > 1:
        import sklearn.cluster  # noqa: F401

    # 1. candidates
    t = time.perf_counter()
    candidates = gather_candidates(corpus, vectors, config)
    timings["candidates"] = (time.perf_counter() - t) * 1e3

    # 2. CDR (recency included)
    t = time.perf_counter()
    rec_c = compute_recency(kb, candidates.idx, now, config)
    cdr = score_cdr(corpus, candidates.idx, candidates.relevance, coverage=coverage,
                    residual_vectors=residual_vectors, blacklist=blacklist, recency=rec_c, config=config,
                    passed_gate=candidates.passed_gate)
    timings["cdr"] = (time.perf_counter() - t) * 1e3

    # 3. CDGR (the similarity graph is corpus preparation: built once per corpus and config, untimed)
    if config.graph_retrieval:
        corpus.graph(config)
    t = time.perf_counter()
    cdgr, rec_conn = expand_graph_with_recency(
        corpus, cdr, query_vector=vectors.query, coverage=coverage, residual_vectors=residual_vectors,
        blacklist=blacklist, now=now, config=config)
    timings["cdgr"] = (time.perf_counter() - t) * 1e3
    recency = concat_recency(rec_c, rec_conn)

    # 4. contradiction resolution
    t = time.perf_counter()
    conn = cdgr.connectors
    sel_pos = np.flatnonzero(conn.selected)
    sel_conn_rows = conn.idx[sel_pos].tolist()
    conn_score = dict(zip(sel_conn_rows, conn.connector_score[sel_pos].tolist()))
    conn_pos = dict(zip(sel_conn_rows, sel_pos.tolist()))
    anchor_rows = np.concatenate([cdgr.anchors, cdgr.extra_anchors]).astype(np.int64)
    selected = np.concatenate([anchor_rows, cdgr.selected_connectors]).astype(np.int64)
    anchor_list = anchor_rows.tolist()
    roles = dict.fromkeys(anchor_list, "anchor")
    roles.update(dict.fromkeys(cdgr.selected_connectors.tolist(), "connector"))
    # positions of the gated-in candidates in the stage-2 table, CDR order: anchors, extra anchors and
    # backfills are all among them (no dict over every candidate)
    gate = cdr.passed_gate
    rank_pos = cdr_ranking(cdr, gate)
    ranked_gated = cdr.idx[rank_pos]
    pos_of = dict(zip(ranked_gated.tolist(), rank_pos.tolist()))
    anchor_pos = _cdr_positions(cdr, pos_of, anchor_list)
    scores = dict(zip(anchor_list, cdr.cdr_score[anchor_pos].tolist()))
    scores.update((r, conn_score[r]) for r, role in roles.items() if role == "connector")
    skipped = {d[0] for d in cdgr.near_duplicates}
    taken = set(selected.tolist())
    ranked_pool = np.array([r for r in ranked_gated.tolist() if r not in taken and r not in skipped], dtype=np.int64)
    # stage 4 reads the recency factor of the selected facts only: hand it those. The run's table holds,
    # for each row, compute_recency's value (stage-2 rows first, then connector candidates): the same
    # numbers as the stage-2 table (anchors) and the connector table (connectors)
    sel_recency = dict(zip(anchor_list, cdr.recency_factor[anchor_pos].tolist()))
    for r, f in zip(sel_conn_rows, conn.recency_factor[sel_pos].tolist()):
        sel_recency.setdefault(r, f)
    resolution = resolve_contradictions(corpus, frozen_array(selected), roles, scores, frozen_array(ranked_pool),
                                        sel_recency, config, decisions=decisions, now=now)
    timings["contradictions"] = (time.perf_counter() - t) * 1e3

    # 5. fan-out
    t = time.perf_counter()
    fanout = None
    if int(scenario.fanout_width or 0) > 1:
        from crp_core.stages.fanout import run_fanout

        pool_rows = candidates.idx[~np.isin(candidates.idx, resolution.suppressed)].astype(np.int64)
        fanout = run_fanout(corpus, scenario, vectors, pool_rows, recency, blacklist, config, now=now)
    timings["fanout"] = (time.perf_counter() - t) * 1e3

    # 6. packing: anchors (extra anchors and backfills included) carry their stage-2 CDR, connectors
    # their connector score and the anchors of the pairs they bridge (SPEC_NOTES §2.8)
    t = time.perf_counter()
    final_rows = np.asarray(resolution.selected).tolist()
    plain = [r for r in final_rows if roles.get(r) != "connector"]
    plain_cdr = cdr.cdr_score[_cdr_positions(cdr, pos_of, plain)].tolist() if plain else []
    items = [PackItem(r, "anchor", float(s)) for r, s in zip(plain, plain_cdr, strict=True)]
    for r in final_rows:
        if roles.get(r) == "connector":
            bridged = dict.fromkeys(x for pair in conn.bridged_pairs[conn_pos[r]] for x in pair)
            items.append(PackItem(r, "connector", float(conn_score[r]), tuple(bridged)))
    envelope = pack_envelope(corpus, items, tied_pairs=tied_rows(resolution, kb), config=config,
                             count_tokens=count_tokens)
    timings["packing"] = (time.perf_counter() - t) * 1e3

    outcomes = _outcomes(corpus, candidates, cdr, cdgr, resolution, envelope, roles)
    warnings = tuple(recency.warnings)
    result = PipelineResult(
        config=config, now=now, candidates=candidates, recency=recency, cdr=cdr, cdgr=cdgr,
        resolution=resolution, fanout=fanout, envelope=envelope, outcomes=outcomes, headers={},
        timings_ms=timings, warnings=warnings, audit=tuple(resolution.audit), coverage=coverage,
        scenario=scenario, corpus=corpus)
    return dataclasses.replace(result, headers=build_headers(result))


def _outcomes(corpus: Any, candidates: Any, cdr: Any, cdgr: Any, resolution: Resolution, envelope: Any,
              roles: Mapping[int, str]) -> tuple[FactOutcome, ...]:
    """Where each scored fact ended and why (stage-1 candidates in stage-1 order, then the
    connector candidates the graph walk added, by row)."""
    kb = corpus.kb
    facts = kb.facts
    in_env = {p.fact_id for p in envelope.order}
    dropped = packing_drop_reasons(envelope, roles={facts[r].fact_id: role for r, role in roles.items()})
    suppressed_by: dict[str, Any] = {}
    for p in resolution.pairs:
        if p.suppressed and not p.skipped:
            suppressed_by[p.suppressed] = p
    dedup = {int(a): int(b) for a, b in resolution.deduplicated}
    backfill = {int(a): int(b) for a, b in resolution.backfilled}
    near = {int(r): (int(a), s) for r, a, s in cdgr.near_duplicates}
    conn_near = {int(r): (int(a), s) for r, a, s in cdgr.connector_near_duplicates}
    anchors = set(cdgr.anchors.tolist())
    extra = set(cdgr.extra_anchors.tolist())
    conn = cdgr.connectors
    conn_pos = {int(r): i for i, r in enumerate(conn.idx.tolist())}
    gate_pos = {int(r): i for i, r in enumerate(candidates.idx.tolist())}
    rank = {int(r): k + 1 for k, r in enumerate(cdr.idx[cdr_ranking(cdr, cdr.passed_gate)].tolist())}
    n_gated_in = len(rank)
    final_roles = dict(roles)
    for r in backfill:
        final_roles.setdefault(r, "anchor")

    rows = candidates.idx.tolist() + sorted(r for r in conn.idx.tolist() if r not in gate_pos)
    out: list[FactOutcome] = []
    for r in rows:
        fid = facts[r].fact_id
        in_e = fid in in_env
        sup = fid in suppressed_by
        role = final_roles.get(r)
        if r in gate_pos:
            passed = bool(candidates.passed_gate[gate_pos[r]])
        else:
            passed = bool(conn.relevance[conn_pos[r]] >= candidates.gate_threshold)
        if role is None:
            # the relevance gate applies to stage-1 candidates only: a connector candidate the
            # graph walk added was never gated (SPEC-025 §2.5), it just was not chosen
            role = "candidate" if passed or r not in gate_pos else "gated"
        reason = _reason(r, fid, role, passed, in_e, sup, suppressed_by, dedup, backfill, near, anchors, extra,
                         conn, conn_pos, gate_pos, candidates, rank, n_gated_in, dropped, facts, conn_near)
        out.append(FactOutcome(fact_id=fid, role=role, in_envelope=in_e, suppressed=sup, reason=reason))
    return tuple(out)


def _reason(r, fid, role, passed, in_e, sup, suppressed_by, dedup, backfill, near, anchors, extra, conn,
            conn_pos, gate_pos, candidates, rank, n_gated_in, dropped, facts, conn_near) -> str:
    if sup:
        p = suppressed_by[fid]
        winner = p.kept[0] if p.kept else "?"
        a = p.authority
        return (f"suppressed by {winner}: authority {a[fid].authority:.4f} < {a[winner].authority:.4f} "
                f"({', '.join(p.patterns)})")
    if r in dedup:
        return f"near-duplicate of {facts[dedup[r]].fact_id} (SPEC-003 §6.6), dropped in stage 4"
    if fid in dropped:
        return dropped[fid]
    if role == "connector":
        i = conn_pos[r]
        pairs = ", ".join(f"{facts[a].fact_id}-{facts[b].fact_id}" for a, b in conn.bridged_pairs[i])
        return f"connector: bridge value {conn.bridge_value[i]:.3f} (bridges {pairs})"
    if role == "anchor":
        if r in backfill:
            return f"backfill: took the slot of {facts[backfill[r]].fact_id}"
        if r in extra:
            return f"extra anchor: unused connector slot (CDR rank {rank.get(r, 0)} of {n_gated_in})"
        return f"anchor: CDR rank {rank.get(r, 0)} of {n_gated_in}"
    parts = []
    if not passed:
        if r in gate_pos:
            parts.append("gated: " + candidates.gate_reason(gate_pos[r]))
        else:
            i = conn_pos[r]
            parts.append(f"gated: relevance {conn.relevance[i]:.3f} < cdr_min_relevance "
                         f"{candidates.gate_threshold:.2f}")
    elif r in near:
        a, s = near[r]
        parts.append(f"near-duplicate of anchor {facts[a].fact_id} (cos {s:.3f}), not an anchor")
    elif r in rank:
        parts.append(f"not selected: CDR rank {rank[r]} of {n_gated_in}, below the anchor budget")
    if r in conn_pos:
        i = conn_pos[r]
        if conn.bridge_value[i] <= 0:
            parts.append(f"connector candidate ({int(conn.hop_distance[i])} hop(s)): bridge value 0")
        elif r in conn_near:
            a, s = conn_near[r]
            parts.append(f"connector candidate dropped: near-duplicate of anchor {facts[a].fact_id} "
                         f"(cos {s:.3f}, SPEC-003 §6.6)")
        else:
            parts.append(f"connector candidate: bridge value {conn.bridge_value[i]:.3f}, "
                         f"score {conn.connector_score[i]:.4f} below the connector budget")
    return "; ".join(parts) if parts else "not selected"

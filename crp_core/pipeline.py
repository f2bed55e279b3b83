"""The SPEC-027 §4 retrieval pipeline, end to end (docs/reference/pipeline.md).

1 candidates (stage 1) -> 2 CDR (+ recency) -> 3 CDGR -> 4 contradiction resolution ->
5 fan-out (only when ``scenario.fanout_width > 1``) -> 6 packing, then the headers of docs/reference/reports.md.
Each stage is timed with ``time.perf_counter`` into ``timings_ms``. Deterministic: the same
corpus, scenario, config and ``now`` give the same result.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime
from typing import cast

import numpy as np

from crp_core.carried import with_carried_decisions
from crp_core.config import CRPConfig, layered_config
from crp_core.corpus.embedding import Embedder
from crp_core.corpus.prepared import Corpus, ScenarioVectors, embed_scenario
from crp_core.decisions import Decisions
from crp_core.factors.coverage import CoverageSet
from crp_core.factors.ngram import NGram, build_blacklist
from crp_core.factors.recency import FactAttributes, concat_recency, fact_attributes
from crp_core.headers import build_headers
from crp_core.model import Scenario
from crp_core.near_threshold import near_conflicts
from crp_core.outcomes import fact_outcomes
from crp_core.records import ACTION_FLAGGED, AuditEvent, Clamp, PipelineResult
from crp_core.stages.bridges import BridgedPairs
from crp_core.stages.candidates import gather_candidates
from crp_core.stages.cdgr import expand_graph_with_recency
from crp_core.stages.cdr import BackfillPool, cdr_positions, factors_from_cosines, score_cdr
from crp_core.stages.contradictions import resolve_contradictions
from crp_core.stages.known import EVENT_KNOWN_CONFLICT, GuardResult, KnownSource, guard_selection, known_flag_data
from crp_core.stages.packing import (
    PackItem,
    TokenCounter,
    cached_note_counter,
    cached_note_parts,
    cached_prefix_counter,
    pack_envelope,
    word_counter,
)
from crp_core.stages.tie_groups import explain_envelope
from crp_core.support.blas import one_blas_thread
from crp_core.support.frozen import DeferredTuple, frozen_array, frozen_instance

STAGES: tuple[str, ...] = ("candidates", "cdr", "cdgr", "contradictions", "fanout", "packing")


def resolve_config(scenario: Scenario, config: CRPConfig | None) -> CRPConfig:
    """``config`` when given, else the defaults under the scenario's own ``config`` table."""
    return config if config is not None else layered_config(None, scenario.config)


def _token_counter(corpus: Corpus, embedder: Embedder | None) -> TokenCounter:
    """Envelope token counting with the corpus's own counter (MiniLM tokenizer or words * 1.3)."""
    from crp_core.corpus.embedding import MINILM_IDS, count_tokens

    if corpus.model_id in MINILM_IDS:
        return lambda texts: count_tokens(list(texts), corpus.model_id, embedder)
    return word_counter


def _counter_key(corpus: Corpus, embedder: Embedder | None) -> tuple[str, ...]:
    """Which counter :func:`_token_counter` gives for this corpus and embedder."""
    from crp_core.corpus.embedding import MINILM_IDS

    if corpus.model_id not in MINILM_IDS:
        return ("words",)
    return ("tokenizer", corpus.model_id, "default" if embedder is None else type(embedder).__qualname__)


def _score_pulled(
    corpus: Corpus,
    guard: GuardResult,
    vectors: ScenarioVectors,
    coverage: CoverageSet,
    residual_vectors: np.ndarray,
    blacklist: frozenset[NGram],
    attrs: FactAttributes,
    config: CRPConfig,
) -> dict[int, float]:
    """winner row -> its CDR score at this run's factors, for the winners the guard pulled in (they were
    not scored: not retrieved, or gated out)."""
    if not guard.pulled:
        return {}
    rows = np.array([w for w, _ in guard.pulled], dtype=np.int64)
    relevance = np.asarray(corpus.vectors[rows] @ vectors.query, dtype=np.float64)
    table = score_cdr(
        corpus,
        rows,
        relevance,
        coverage=coverage,
        residual_vectors=residual_vectors,
        blacklist=blacklist,
        recency=attrs.recency(rows),
        config=config,
        passed_gate=np.ones(rows.size, dtype=bool),
    )
    return dict(zip(rows.tolist(), table.cdr_score.tolist()))


def data_clamps(corpus: Corpus, scenario: Scenario, config: CRPConfig) -> tuple[Clamp, ...]:
    """The settings this run uses at another value than asked because of the data (:class:`Clamp`).

    The stages already work this way (the index returns at most the retrievable facts and searches
    with ``ef >= K``; a fact has at most N-1 neighbours; SPEC-027 §1.4 gives one partition per
    sub-query when the ResidualSet is not larger than the width); this records it so the CLI, the
    report and the dashboard can say so. In order: candidate_k, hnsw_ef_search, graph_k, fanout_width.
    """
    n = int(np.count_nonzero(corpus.retrievable))
    out: list[Clamp] = []
    k = config.candidate_k
    if k > n:
        out.append(
            Clamp("candidate_k", k, n, f"only {n} retrievable fact(s) (DELETED and QUARANTINED are never retrieved)")
        )
    k_eff = min(k, n)
    if 0 < config.hnsw_ef_search < k_eff:
        out.append(
            Clamp(
                "hnsw_ef_search",
                config.hnsw_ef_search,
                k_eff,
                f"the HNSW search needs ef_search >= the K it returns (candidate_k, {k_eff} here)",
            )
        )
    if config.graph_retrieval and config.graph_k > n - 1:
        out.append(
            Clamp(
                "graph_k",
                config.graph_k,
                max(n - 1, 0),
                f"a fact has at most {max(n - 1, 0)} other retrievable fact(s) as neighbours",
            )
        )
    width = int(scenario.fanout_width or 0)
    residual = len(scenario.residual_set)
    if width > 1 and 0 < residual < width:
        out.append(
            Clamp(
                "fanout_width",
                width,
                residual,
                f"the ResidualSet holds {residual} sub-quer{'y' if residual == 1 else 'ies'}: one "
                "partition each, no k-means (SPEC-027 §1.4)",
            )
        )
    return tuple(out)


def run_pipeline(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig | None = None,
    *,
    vectors: ScenarioVectors | None = None,
    now: datetime | None = None,
    embedder: Embedder | None = None,
    decisions: Decisions = None,
    known_conflicts: KnownSource = (),
) -> PipelineResult:
    """Run SPEC-027 §4 over a prepared corpus for one scenario (docs/reference/pipeline.md).

    ``config`` defaults to ``CRPConfig().with_overrides(scenario.config)``; ``now`` to
    ``scenario.now``, else the wall clock; ``vectors`` (ScenarioVectors) to
    ``embed_scenario(scenario, corpus, embedder)``. ``decisions`` are operator decisions handed to
    stage 4, over those the CKF carries from an export (``metadata.superseded_by`` with its triage
    record). ``known_conflicts`` (:func:`crp_core.analysis.known.known_conflicts`: the whole-CKF scan
    and operator decisions, or a lookup of the selection's own: ``SelectionKnownConflicts``) are checked
    against the selection after stage 4, as ``config.known_conflict_action`` says (beyond SPEC-027).
    ``PipelineResult.clamps`` lists the settings used at another value than asked to fit the data
    (:func:`data_clamps`). numpy's BLAS runs
    on one thread for the duration of the run (:func:`one_blas_thread`).
    """
    with one_blas_thread():
        return _run(
            corpus,
            scenario,
            config,
            vectors=vectors,
            now=now,
            embedder=embedder,
            decisions=decisions,
            known_conflicts=known_conflicts,
        )


def _run(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig | None,
    *,
    vectors: ScenarioVectors | None,
    now: datetime | None,
    embedder: Embedder | None,
    decisions: Decisions,
    known_conflicts: KnownSource,
) -> PipelineResult:
    """:func:`run_pipeline`'s body."""
    config = resolve_config(scenario, config)
    if now is None:
        now = scenario.now if scenario.now is not None else datetime.now(UTC)
    decisions = with_carried_decisions(corpus.kb, decisions)  # an exported CKF's operator decisions
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if vectors is None:
        vectors = embed_scenario(scenario, corpus, embedder)
    kb = corpus.kb
    coverage = CoverageSet.from_scenario(scenario, vectors.sub_queries, vectors.ids, dim=corpus.dim)
    known = set(vectors.ids)
    residual_ids = [sq.id for sq in scenario.residual_set if sq.id in known]
    residual_vectors = vectors.for_ids(residual_ids)
    blacklist = build_blacklist(scenario.prior_outputs, config.ngram_n)
    timings: dict[str, float] = {}
    # every fact's recency factor, importance and source authority at `now`: computed once per
    # (KB, now, config tables) and indexed by every stage
    attrs = fact_attributes(kb, now, config)

    # one-off process costs stay out of the stage timings: the MiniLM tokenizer load (packing
    # counts the "[id]" prefixes and NOTE blocks with it) and the scikit-learn import (fan-out)
    count_tokens = _token_counter(corpus, embedder)
    count_tokens(["[warm-up]"])
    # the "[id]" prefixes' token counts depend on the fact alone: counted once per corpus and counter
    count_prefixes = cached_prefix_counter(corpus, count_tokens, _counter_key(corpus, embedder))
    count_notes = cached_note_counter(corpus, count_tokens, _counter_key(corpus, embedder))  # so are NOTE blocks
    note_parts = cached_note_parts(corpus, count_tokens, _counter_key(corpus, embedder))  # and their parts
    if int(scenario.fanout_width or 0) > 1:
        from crp_core.stages.partitions import needs_kmeans

        if needs_kmeans(residual_vectors, int(scenario.fanout_width or 0), config, corpus.cache_dir):
            import sklearn.cluster  # noqa: F401  (partitions kept in the cache need no scikit-learn)

    # 1. candidates
    t = time.perf_counter()
    candidates = gather_candidates(corpus, vectors, config)
    timings["candidates"] = (time.perf_counter() - t) * 1e3

    # 2. CDR (recency included)
    t = time.perf_counter()
    rec_c = attrs.recency(candidates.idx)
    # the coverage score and residual pull come off stage 1's cosines with the sub-queries
    read = (
        None
        if candidates.sub_query_cosines is None
        else factors_from_cosines(candidates.sub_query_cosines, vectors.ids, coverage, residual_ids)
    )
    cdr = score_cdr(
        corpus,
        candidates.idx,
        candidates.relevance,
        coverage=coverage,
        residual_vectors=residual_vectors,
        blacklist=blacklist,
        recency=rec_c,
        config=config,
        passed_gate=candidates.passed_gate,
        coverage_score=None if read is None else read[0],
        residual_pull=None if read is None else read[1],
    )
    timings["cdr"] = (time.perf_counter() - t) * 1e3

    # 3. CDGR (the similarity graph is corpus preparation: built once per corpus and config, untimed)
    if config.graph_retrieval:
        corpus.graph(config)
    t = time.perf_counter()
    cdgr, rec_conn = expand_graph_with_recency(
        corpus,
        cdr,
        query_vector=vectors.query,
        coverage=coverage,
        residual_vectors=residual_vectors,
        blacklist=blacklist,
        now=now,
        config=config,
    )
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
    # anchors, extra anchors and backfills are stage-2 candidates (one row each: stage 1's union)
    anchor_cdr = dict(zip(anchor_list, cdr.cdr_score[cdr_positions(cdr, anchor_rows)].tolist()))
    scores = dict(anchor_cdr)
    scores.update((r, conn_score[r]) for r, role in roles.items() if role == "connector")
    resolution = resolve_contradictions(
        corpus,
        frozen_array(selected),
        roles,
        scores,
        BackfillPool(cdr, cdgr.near_duplicates, selected),
        attrs,
        config,
        decisions=decisions,
        now=now,
    )
    # beyond SPEC-027: a selected fact that loses a conflict known outside this run to a fact the run
    # did not retrieve is flagged, replaced by its winner or dropped
    # (a known winner stage 4 itself took out lost here: the guard leaves it out)
    lost = itertools.chain(resolution.suppressed.tolist(), (dropped for dropped, _kept in resolution.deduplicated))
    guard = guard_selection(
        kb, resolution.selected, corpus.retrievable, known_conflicts, config.known_conflict_action, lost=lost
    )
    pulled = _score_pulled(corpus, guard, vectors, coverage, residual_vectors, blacklist, attrs, config)
    timings["contradictions"] = (time.perf_counter() - t) * 1e3

    # 5. fan-out
    t = time.perf_counter()
    fanout = None
    if int(scenario.fanout_width or 0) > 1:
        from crp_core.stages.fanout import run_fanout

        pool_rows = candidates.idx[~np.isin(candidates.idx, resolution.suppressed)].astype(np.int64)
        fanout = run_fanout(
            corpus, scenario, vectors, pool_rows, recency, blacklist, config, now=now, candidates=candidates, cdr=cdr
        )
    timings["fanout"] = (time.perf_counter() - t) * 1e3

    # 6. packing: anchors (extra anchors and backfills included) carry their stage-2 CDR, connectors
    # their connector score and the anchors of the pairs they bridge (docs/reference/pipeline.md §6)
    t = time.perf_counter()
    final_rows = list(guard.rows)
    plain = [r for r in final_rows if roles.get(r) != "connector" and r not in pulled]
    backfills = [r for r in plain if r not in anchor_cdr]
    if backfills:
        anchor_cdr.update(zip(backfills, cdr.cdr_score[cdr_positions(cdr, np.array(backfills))].tolist()))
    plain_cdr = [anchor_cdr[r] for r in plain]
    plain += list(pulled)
    plain_cdr += list(pulled.values())
    items = [PackItem(r, "anchor", float(s)) for r, s in zip(plain, plain_cdr, strict=True)]
    pair_rows = conn.bridged_pairs
    for r in final_rows:
        if roles.get(r) == "connector":
            p = conn_pos[r]
            bridged = (
                pair_rows.anchors(p)
                if isinstance(pair_rows, BridgedPairs)
                else tuple(dict.fromkeys(itertools.chain.from_iterable(pair_rows[p])))
            )
            items.append(PackItem(r, "connector", float(conn_score[r]), bridged))
    envelope = pack_envelope(
        corpus,
        items,
        tied_pairs=resolution.tied_rows,
        config=config,
        count_tokens=count_tokens,
        count_prefixes=count_prefixes,
        count_notes=count_notes,
        note_parts=note_parts,
    )
    # a tie group cut by the budget, or an envelope left empty while facts passed the gate, says why
    envelope, pack_warnings = explain_envelope(
        envelope,
        candidates=int(candidates.idx.size),
        gated_in=int(np.count_nonzero(candidates.passed_gate)),
        selected=int(np.asarray(resolution.selected).size),
        guarded=len(final_rows),
    )
    timings["packing"] = (time.perf_counter() - t) * 1e3

    packed = {p.fact_id for p in envelope.order}
    flags = tuple(f for f in guard.flags if f.action != ACTION_FLAGGED or f.loser in packed)
    guarded = {f.loser: f.message for f in flags}
    # where each scored fact ended and why: built when first read (a sweep never reads it)
    outcomes = DeferredTuple(
        lambda: fact_outcomes(corpus, candidates, cdr, cdgr, resolution, envelope, roles, guarded=guarded)
    )
    warnings = tuple(recency.warnings) + tuple(f.message for f in flags) + pack_warnings
    # the audit trail: stage 4's events (built when first read, as they are) and the guard's
    audit = cast(
        "tuple[AuditEvent, ...]",
        DeferredTuple(
            lambda: tuple(resolution.audit) + tuple(AuditEvent(EVENT_KNOWN_CONFLICT, known_flag_data(f)) for f in flags)
        ),
    )
    # the record built once with its fields (a frozen dataclass without __post_init__), its headers read off it
    result = frozen_instance(
        PipelineResult,
        {
            "config": config,
            "now": now,
            "candidates": candidates,
            "recency": recency,
            "cdr": cdr,
            "cdgr": cdgr,
            "resolution": resolution,
            "fanout": fanout,
            "envelope": envelope,
            "outcomes": outcomes,
            "headers": {},
            "timings_ms": timings,
            "warnings": warnings,
            "audit": audit,
            "coverage": coverage,
            "scenario": scenario,
            "corpus": corpus,
            "known_conflicts": flags,
            "clamps": data_clamps(corpus, scenario, config),
            # the packed pairs just below the contradiction threshold that value-conflict, but the ones an operator
            # dismissed (read on demand: a sweep never reads them)
            "near_conflicts": DeferredTuple(lambda: near_conflicts(config, corpus, envelope, resolution, decisions)),
        },
    )
    result.__dict__["headers"] = build_headers(result)  # before the record leaves this function
    return result

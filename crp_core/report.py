"""Machine-readable report of a pipeline run (SPEC_NOTES §4): ``crp-inspect run --json``.

``run_report(result)`` is a plain dict (keys may be added, never renamed); ``dumps`` renders it
with ``ensure_ascii=False, indent=2`` and keys in insertion order. Floats are plain, unrounded JSON
numbers; NaN / infinity become ``null``. Wall-clock timings are *not* in the report so that the same
input gives byte-identical JSON (they are on ``PipelineResult.timings_ms`` and in the CLI summary).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core import headers as headers_mod
from crp_core.factors.recency import row_positions
from crp_core.io.timeparse import format_timestamp
from crp_core.records import (
    Authority,
    Clamp,
    ConflictPair,
    FanoutResult,
    FanoutRun,
    FanoutStep,
    KnownConflictFlag,
    PipelineResult,
    ValueDiff,
)

if TYPE_CHECKING:  # annotation only: the triage quality module imports stage 4
    from crp_core.analysis.gate import GateResult
    from crp_core.analysis.metrics import ScenarioMetrics, SuiteMetrics
    from crp_core.analysis.sdk_agreement import PairAgreement
    from crp_core.analysis.tune import TrialRecord, TuneResult
    from crp_core.config import CRPConfig
    from crp_core.triage.export import ExportIssue, ExportReport
    from crp_core.triage.quality import DetectorQuality

REPORT_KIND = "crp-inspect.run"
REPORT_VERSION = 1


def plain(obj: Any) -> Any:
    """JSON-safe plain Python: numpy scalars/arrays to numbers/lists, NaN/inf to None, tuples to lists."""
    kind = type(obj)  # the common exact types first, by identity (a report holds ~30 values per fact row)
    if kind is float or kind is np.float64:
        f = float(obj)
        return f if math.isfinite(f) else None
    if kind is str or kind is bool or obj is None:
        return obj
    if kind is int or kind is np.int64:
        return int(obj)
    if kind is dict:
        return {str(k): plain(v) for k, v in obj.items()}
    if kind is list or kind is tuple:
        return [plain(x) for x in obj]
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, datetime):
        return format_timestamp(obj)
    if isinstance(obj, np.ndarray):
        return [plain(x) for x in obj.tolist()]
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        seq = sorted(obj) if isinstance(obj, (set, frozenset)) else obj
        return [plain(x) for x in seq]
    if hasattr(obj, "__dataclass_fields__"):
        return {k: plain(getattr(obj, k)) for k in obj.__dataclass_fields__}
    return str(obj)


def dumps(obj: Any) -> str:
    """Deterministic JSON text (SPEC_NOTES §4)."""
    return json.dumps(plain(obj), sort_keys=False, ensure_ascii=False, indent=2, allow_nan=False)


def fact_rows_report(result: PipelineResult) -> list[dict[str, Any]]:
    """The ``facts`` rows of :func:`run_report` (SPEC_NOTES §4), JSON-plain, without building the rest
    of the report (its graph edges, conflicts and envelope): what a per-fact table needs. The rows are
    built plain (:func:`fact_columns`), so no :func:`plain` pass over every value is needed."""
    return _fact_rows(result)


def _num(x: Any) -> float | None:
    """A stored factor as :func:`plain` gives it: a Python float, NaN / inf as None."""
    f = float(x)
    return f if math.isfinite(f) else None


def _opt_num(x: Any) -> float | None:
    return None if x is None else _num(x)


def _finite_list(values: np.ndarray) -> list[Any]:
    """``values.tolist()`` (Python floats / ints) with each NaN / inf as None, as :func:`plain` gives them."""
    out = values.tolist()
    if values.dtype.kind == "f":
        for i in np.flatnonzero(~np.isfinite(values)).tolist():
            out[i] = None
    return out


def _opt_finite_list(values: np.ndarray, where: np.ndarray, pos: np.ndarray) -> list[Any]:
    """``values[pos]`` as :func:`_finite_list` where ``where`` holds, None elsewhere (an object array's None
    stays None)."""
    n = where.size
    out: list[Any] = [None] * n
    hit = np.flatnonzero(where)
    if hit.size:
        got = np.asarray(values)[pos[hit]]
        vals = _finite_list(got) if got.dtype != object else [_opt_num(v) for v in got.tolist()]
        for i, v in zip(hit.tolist(), vals):
            out[i] = v
    return out


def fact_columns(result: PipelineResult) -> dict[str, list[Any]]:
    """The report's ``facts`` rows (SPEC_NOTES §4) as columns: field name -> one JSON-plain value per
    scored fact (stage-1 candidates, then stage-3 connector candidates), in the rows' field order.

    Each factor column is one gather from the CDR table of the fact's stage (stage 2's, or stage 3's for
    a connector candidate stage 2 did not score), the connector columns one gather from the connector
    table, the recency columns one from the run's recency table: the values :func:`plain` would make of
    the stored factors (Python floats with NaN / inf as None, ints, bools, strings, lists)."""
    kb = result.corpus.kb
    facts = kb.facts
    cdr, conn, ccdr = result.cdr, result.cdgr.connectors, result.cdgr.connector_cdr
    cand = result.candidates
    rec = result.recency
    outs = list(result.outcomes)
    n = len(outs)
    rows = np.fromiter((kb.index_of(o.fact_id) for o in outs), dtype=np.int64, count=n)
    p1, s1 = row_positions(cdr.idx, rows)
    pc, sc = row_positions(conn.idx, rows)
    pr, sr = row_positions(rec.idx, rows)
    s3 = ~s1
    if s3.any():
        missing = s3 & ~sc
        if ccdr is None or missing.any():
            fid = outs[int(np.flatnonzero(missing if ccdr is not None else s3)[0])].fact_id
            raise ValueError(f"fact {fid!r} is neither a stage-2 candidate nor a scored connector")
    one, three = np.flatnonzero(s1), np.flatnonzero(s3)

    def factor(name: str) -> list[Any]:
        a1 = np.asarray(getattr(cdr, name))
        a3 = np.asarray(getattr(ccdr, name)) if ccdr is not None else a1
        vals = np.empty(n, dtype=np.result_type(a1, a3))
        vals[one] = a1[p1[one]]
        if three.size:
            vals[three] = a3[pc[three]]
        return _finite_list(vals)

    gate1 = np.asarray(cand.passed_gate, dtype=bool)
    gate3 = np.asarray(ccdr.passed_gate, dtype=bool) if ccdr is not None and ccdr.passed_gate is not None else None
    passed = np.zeros(n, dtype=bool)
    passed[one] = gate1[p1[one]]
    if three.size and gate3 is not None:
        passed[three] = gate3[pc[three]]
    stage1 = s1.tolist()
    p1_list = p1.tolist()
    conn_at = sc.tolist()
    pc_list = pc.tolist()
    rec_at = sr.tolist()
    pr_list = pr.tolist()
    packed = {p.fact_id: k + 1 for k, p in enumerate(result.envelope.order)}
    fact_of = [facts[r] for r in rows.tolist()]
    return {
        "fact_id": [str(o.fact_id) for o in outs],
        "role": [str(o.role) for o in outs],
        "relevance": factor("relevance"),
        "residual_pull": factor("residual_pull"),
        "effective_relevance": factor("effective_relevance"),
        "coverage_score": factor("coverage_score"),
        "coverage_penalty": factor("coverage_penalty"),
        "novelty": factor("novelty"),
        "recency_factor": factor("recency_factor"),
        "importance_weight": factor("importance_weight"),
        "ngram_overlap": factor("ngram_overlap"),
        "ngram_penalty": factor("ngram_penalty"),
        "cdr_score": factor("cdr_score"),
        "bridge_value": _opt_finite_list(conn.bridge_value, sc, pc),
        "connector_score": _opt_finite_list(conn.connector_score, sc, pc),
        "in_envelope": [bool(o.in_envelope) for o in outs],
        "suppressed": [bool(o.suppressed) for o in outs],
        "reason": [plain(o.reason) for o in outs],
        "passed_gate": passed.tolist(),
        "found_by": [[str(x) for x in cand.found_by[i]] if s else ["graph"] for s, i in zip(stage1, p1_list)],
        "connector_candidate": conn_at,
        "hop_distance": _opt_finite_list(conn.hop_distance, sc, pc),
        "touched_anchors": [
            [facts[a].fact_id for a in conn.touched_anchors[i]] if c else None for c, i in zip(conn_at, pc_list)
        ],
        "bridged_pairs": [
            [[facts[a].fact_id, facts[b].fact_id] for a, b in conn.bridged_pairs[i]] if c else None
            for c, i in zip(conn_at, pc_list)
        ],
        "mean_path_weight": _opt_finite_list(conn.mean_path_weight, sc, pc),
        "age_days": _opt_finite_list(rec.age_days, sr, pr),
        "ttl_days": _opt_finite_list(rec.ttl_days, sr, pr),
        "ttl_source": [plain(rec.ttl_source[i]) if r else None for r, i in zip(rec_at, pr_list)],
        "recency_rule": [plain(rec.rule[i]) if r else None for r, i in zip(rec_at, pr_list)],
        "source_type": [plain(f.source_type) for f in fact_of],
        "status": [plain(f.status) for f in fact_of],
        "position": [packed.get(o.fact_id) for o in outs],
        "content": [plain(f.content) for f in fact_of],
    }


def _fact_rows(result: PipelineResult) -> list[dict[str, Any]]:
    """One JSON-plain row per scored fact: :func:`fact_columns` read across (the per-fact table does not
    walk every value: a connector's bridged pairs are hundreds of small lists at 10k facts)."""
    cols = fact_columns(result)
    names = tuple(cols)
    return [dict(zip(names, values)) for values in zip(*cols.values())]


def authority_dict(a: Authority) -> dict[str, Any]:
    """One fact's authority components (SPEC-027 §2.3; SPEC_NOTES §4 ``authority``)."""
    return {
        "source_authority": a.source_authority,
        "recency_factor": a.recency_factor,
        "importance_weight": a.importance_weight,
        "authority": a.authority,
        "source_type": a.source_type,
    }


def diff_dict(d: ValueDiff) -> dict[str, Any]:
    """One aligned value difference; ``*_a`` refer to ``fact_a``'s text."""
    return {
        "pattern": d.pattern,
        "tokens_a": list(d.tokens_a),
        "tokens_b": list(d.tokens_b),
        "span_a": list(d.span_a),
        "span_b": list(d.span_b),
    }


def pair_dict(p: ConflictPair) -> dict[str, Any]:
    """One conflict pair (SPEC_NOTES §4 ``conflicts`` fields plus skipped, margin, decision, diffs)."""
    return {
        "fact_a": p.fact_a,
        "fact_b": p.fact_b,
        "similarity": p.similarity,
        "patterns": list(p.patterns),
        "authority": {fid: authority_dict(a) for fid, a in sorted(p.authority.items())},
        "kept": list(p.kept),
        "suppressed": p.suppressed,
        "tied": p.tied,
        "skipped": p.skipped,
        "margin": p.margin,
        "decision": p.decision,
        "diffs": [diff_dict(d) for d in p.conflict.diffs],
    }


def sdk_agreement_dict(a: PairAgreement) -> dict[str, Any]:
    """One pair's agreement with the SDK's ``superseded_by`` (key ``sdk_agreement`` of a ``conflicts``
    pair when the CKF came from an SDK snapshot; docs/decisions/sdk-snapshots.md): the independent
    arbitration (the SDK's STALE neutralised) with its authority components, and the as-loaded one."""

    def judgement(j: Any) -> dict[str, Any]:
        return {"verdict": j.verdict, "reason": j.reason, "winner": j.winner}

    return {
        "sdk_superseded": a.sdk_superseded,
        "independent": {
            **judgement(a.independent),
            "margin": a.margin,
            "neutralised": list(a.neutralised),
            "authority": {x.fact_id: authority_dict(x) for x in (a.authority_a, a.authority_b)},
        },
        "as_loaded": judgement(a.as_loaded),
    }


def known_flag_data(flag: KnownConflictFlag) -> dict[str, Any]:
    """One finding of the known-conflict guard (report key ``known_conflicts``, audit event data)."""
    return {
        "loser": flag.loser,
        "winner": flag.winner,
        "source": flag.source,
        "patterns": list(flag.patterns),
        "action": flag.action,
        "message": flag.message,
    }


def detector_quality_dict(q: DetectorQuality) -> dict[str, Any]:
    """``crp-inspect triage stats --json``: precision per pattern and the overruled pairs."""
    return {
        "pairs": len(q.pairs),
        "confirmed": q.confirmed,
        "dismissed": q.dismissed,
        "precision": q.precision,
        "per_pattern": {
            p.pattern: {"confirmed": p.confirmed, "dismissed": p.dismissed, "precision": p.precision}
            for p in q.per_pattern
        },
        "overruled": [
            {
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "kind": p.kind,
                "winner": p.winner,
                "patterns": list(p.patterns),
                "note": p.note,
                "operator": p.operator,
                "decided_at": p.decided_at,
            }
            for p in q.overruled
        ],
        "unknown_pairs": list(q.unknown),
    }


EXPORT_REPORT_KIND = "crp-inspect.triage-export"
EXPORT_REPORT_VERSION = 1


def _issue_dict(i: ExportIssue) -> dict[str, Any]:
    return {"code": i.code, "fact_ids": list(i.fact_ids), "decision_ids": list(i.decision_ids), "message": i.message}


def export_report_dict(r: ExportReport) -> dict[str, Any]:
    """The export report (``crp-inspect triage export``, ``export_report.json``; docs/decisions/triage.md
    "Export"): what the cleaned CKF carries and what it could not. Deterministic: no export time."""
    return {
        "kind": EXPORT_REPORT_KIND,
        "version": EXPORT_REPORT_VERSION,
        "ckf": r.ckf_source,
        "out": r.path,
        "format": r.fmt,
        "n_facts": r.n_facts,
        "decisions_in_force": r.decisions,
        "changed": dict(r.changed),
        "facts": [
            {
                "fact_id": c.fact_id,
                "status_before": c.status_before,
                "status": c.status,
                "superseded_by": c.superseded_by,
                "triage": dict(c.triage),
                "decision_ids": list(c.decision_ids),
            }
            for c in r.changes
        ],
        "dismissed": [
            {
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "decision_id": p.decision_id,
                "operator": p.operator,
                "decided_at": p.decided_at,
                "note": p.note,
            }
            for p in r.dismissed
        ],
        "replaced": [
            {"fact_id": v.fact_id, "key": v.key, "old": plain(v.old), "new": plain(v.new)} for v in r.replaced
        ],
        "conflicts": [_issue_dict(i) for i in r.conflicts],
        "unknown_facts": [_issue_dict(i) for i in r.unknown],
        "inexpressible": [_issue_dict(i) for i in r.inexpressible],
    }


def conflict_event_data(
    pair: ConflictPair, *, diffs: bool = True, roles: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The data of a ``CONTRADICTION_RESOLVED`` / ``CONTRADICTION_DISMISSED`` audit event (SPEC-027 §2.4)."""
    winner = pair.kept[0] if (pair.suppressed is not None and pair.kept) else None
    data: dict[str, Any] = {
        "fact_a": pair.fact_a,
        "fact_b": pair.fact_b,
        "similarity": pair.similarity,
        "patterns": list(pair.patterns),
        "authority": {fid: authority_dict(a) for fid, a in pair.authority.items()},
        "winner": winner,
        "suppressed": pair.suppressed,
        "kept": list(pair.kept),
        "tied": pair.tied,
        "margin": pair.margin,
        "decision": pair.decision,
    }
    if roles:
        data["roles"] = dict(roles)
    if diffs:
        data["diffs"] = [diff_dict(d) for d in pair.conflict.diffs]
    return data


def clamp_dict(c: Clamp) -> dict[str, Any]:
    """One entry of a report's ``clamps`` list: ``{"key", "asked", "used", "why", "message"}``."""
    return {"key": c.key, "asked": c.asked, "used": c.used, "why": c.why, "message": c.message}


def run_report(result: PipelineResult) -> dict[str, Any]:
    """The SPEC_NOTES §4 JSON object for one run."""
    kb = result.corpus.kb
    ids = lambda rows: [kb.facts[int(r)].fact_id for r in np.asarray(rows).tolist()]  # noqa: E731
    env = result.envelope
    res = result.resolution
    cdgr = result.cdgr
    scen = result.scenario
    report: dict[str, Any] = {
        "kind": REPORT_KIND,
        "version": REPORT_VERSION,
        "now": result.now,
        "scenario": None
        if scen is None
        else {
            "name": scen.name,
            "query": scen.query,
            "fanout_width": scen.fanout_width,
            "sub_queries": [sq.id for sq in scen.sub_queries],
            "addressed": [a.id for a in scen.addressed],
            "residual": [sq.id for sq in scen.residual_set],
        },
        "headers": dict(result.headers),
        "facts": _fact_rows(result),
        "conflicts": [pair_dict(p) for p in res.pairs],
        "envelope": {
            "order": [p.fact_id for p in env.order],
            "text": env.text,
            "tokens_used": env.tokens_used,
            "token_budget": env.token_budget,
            "packed": [
                {
                    "fact_id": p.fact_id,
                    "role": p.role,
                    "score": p.score,
                    "tier": p.tier,
                    "band": p.band,
                    "tokens": p.tokens,
                    "bridges_anchor": p.bridges_anchor,
                }
                for p in env.order
            ],
            "dropped_for_budget": list(env.dropped_for_budget),
            "notes": list(env.notes),
            "dropped_unbridged": list(env.dropped_unbridged),
            "dropped_tied_pairs": [
                {"fact_a": p.fact_a, "fact_b": p.fact_b, "reason": p.reason} for p in env.dropped_pairs
            ],
        },
        "cdgr": {
            "anchors": ids(cdgr.anchors),
            "extra_anchors": ids(cdgr.extra_anchors),
            "selected_connectors": ids(cdgr.selected_connectors),
            "hops": cdgr.hops,
            "near_duplicates": [
                {"skipped": kb.facts[r].fact_id, "anchor": kb.facts[a].fact_id, "similarity": s}
                for r, a, s in cdgr.near_duplicates
            ],
            "connector_near_duplicates": [
                {"skipped": kb.facts[r].fact_id, "anchor": kb.facts[a].fact_id, "similarity": s}
                for r, a, s in cdgr.connector_near_duplicates
            ],
            "edges": [[kb.facts[a].fact_id, kb.facts[b].fact_id, w] for a, b, w in cdgr.graph_edges],
        },
        "resolution": {
            "selected": ids(res.selected),
            "suppressed": ids(res.suppressed),
            "deduplicated": [[kb.facts[a].fact_id, kb.facts[b].fact_id] for a, b in res.deduplicated],
            "backfilled": [[kb.facts[a].fact_id, kb.facts[b].fact_id] for a, b in res.backfilled],
        },
        "coverage": []
        if result.coverage is None
        else [
            {"sub_query_id": e.sub_query_id, "depth_weight": e.depth_weight, "window": e.window}
            for e in result.coverage
        ],
        "audit": [{"event": e.event, **{k: v for k, v in e.data.items() if k != "event"}} for e in result.audit],
        "known_conflicts": [known_flag_data(f) for f in result.known_conflicts],
        "warnings": list(result.warnings),
        "clamps": [clamp_dict(c) for c in result.clamps],
        "config": result.config.to_dict(),
    }
    if result.fanout is not None:
        fan = result.fanout
        report["fanout"] = {
            "width": fan.width,
            "rule": fan.rule,
            "partitions": [list(p) for p in fan.partitioned.partitions],
            "merged": list(fan.partitioned.merged),
            "coverage_depth": fan.partitioned.coverage_depth,
            "duplicates": [
                {"fact_ids": list(d.fact_ids), "branches": list(d.branches), "similarity": d.similarity}
                for d in fan.partitioned.duplicates
            ],
        }
    return plain(report)


# ---- crp-inspect fanout (SPEC_NOTES §4) ----------------------------------------------------------
def _fanout_run_report(run: FanoutRun) -> dict[str, Any]:
    return {
        "partitions": [list(p) for p in run.partitions],
        "branches": [
            {
                "branch": b.branch,
                "sub_queries": list(b.sub_queries),
                "selected": list(b.selected),
                # a branch chooses by CDR only (no graph walk inside a branch): every pick is an anchor
                "roles": {f: "anchor" for f in b.selected},
                "coverage_additions": list(b.coverage_additions),
            }
            for b in run.branches
        ],
        "fan_in": {
            "duplicates": [
                {
                    "fact_ids": list(d.fact_ids),
                    "branches": list(d.branches),
                    "similarity": float(d.similarity),
                    "kept": next((f for f in d.fact_ids if f in run.merged), None),
                }
                for d in run.duplicates
            ],
            "merged": list(run.merged),
            "coverage_depth": int(run.coverage_depth),
        },
    }


def _step_report(step: FanoutStep) -> dict[str, Any]:
    return {
        "index": step.index,
        "kind": step.kind,
        "title": step.title,
        "branch": step.branch,
        "coverage": list(step.coverage),
        "added": list(step.added),
        "facts": list(step.facts),
        "detail": plain(step.detail),
    }


def fanout_report(result: FanoutResult | None, headers: Mapping[str, str]) -> dict[str, Any]:
    """The ``crp-inspect fanout`` JSON (SPEC_NOTES §4).

    Keys: ``active``, ``width``, ``rule``, ``partitions``, ``headers`` (with
    ``CRP-Context-Coverage-Partitions`` when fan-out is active, removed otherwise), ``branches``,
    ``fan_in`` and ``steps`` of the partitioned run, and the same under ``naive``.
    """
    hdrs = {k: str(v) for k, v in headers.items() if k != headers_mod.PARTITIONS}
    if result is None:
        return {
            "active": False,
            "width": None,
            "rule": None,
            "partitions": [],
            "headers": hdrs,
            "branches": [],
            "fan_in": {"duplicates": [], "merged": [], "coverage_depth": None},
            "steps": [],
            "naive": None,
        }
    hdrs = {headers_mod.PARTITIONS: str(len(result.partitioned.partitions)), **hdrs}
    part = _fanout_run_report(result.partitioned)
    naive = _fanout_run_report(result.naive)
    # the same keys for naive (SPEC_NOTES §4): the run's headers, no Coverage-Partitions (the race creates
    # no disjoint coverage partitions, SPEC-027 §1.7), Coverage-Depth of the naive shared set
    naive = {
        "partitions": naive["partitions"],
        "headers": {
            k: (str(int(result.naive.coverage_depth)) if k == headers_mod.COVERAGE_DEPTH else str(v))
            for k, v in headers.items()
            if k != headers_mod.PARTITIONS
        },
        **{k: v for k, v in naive.items() if k != "partitions"},
    }
    naive["steps"] = [_step_report(s) for s in result.naive_steps]
    return {
        "active": True,
        "width": result.width,
        "rule": result.rule,
        "partitions": part["partitions"],
        "headers": hdrs,
        "branches": part["branches"],
        "fan_in": part["fan_in"],
        "steps": [_step_report(s) for s in result.steps],
        "naive": naive,
    }


# ---- suites, the regression gate and tuning (docs/decisions/suites.md) ------------------------------
#: ``kind`` of the metrics report of ``crp-inspect check --json`` (also its ``--write-baseline`` file)
SUITE_METRICS_KIND = "crp-inspect/suite-metrics"
TUNE_KIND = "crp-inspect/tune"


def scenario_metrics_dict(m: ScenarioMetrics) -> dict[str, Any]:
    """One scenario's metrics (``metrics``: name -> number or null) and the fact ids behind them."""
    return {
        "metrics": plain(m.values()),
        "details": {
            "envelope": list(m.envelope),
            "tokens": m.tokens,
            "token_budget": m.token_budget,
            "max_tokens": m.max_tokens,
            "included": list(m.included),
            "missing": list(m.missing),
            "leaks": list(m.leaks),
            "wrong_winners": [
                {"loser": w.loser, "winner": w.winner, "winner_state": w.winner_state} for w in m.wrong_winners
            ],
            "expired": list(m.expired),
            "ageing": list(m.ageing),
            "recency": plain(dict(m.recency)),
            "contradictions": [
                {
                    "fact_a": c.fact_a,
                    "fact_b": c.fact_b,
                    "expected": c.expected,
                    "detected": c.detected,
                    "noted": c.noted,
                }
                for c in m.contradictions
            ],
            "duplicates": [list(d) for d in m.duplicates],
            "conflicts_detected": [list(p) for p in m.conflicts_detected],
            "conflicts_undetected": [list(p) for p in m.conflicts_undetected],
            "entering": list(m.entering),
            "leaving": list(m.leaving),
        },
    }


def suite_summary_dict(metrics: SuiteMetrics) -> dict[str, Any]:
    """metric name -> ``{mean, worst, total, worst_scenario, count}``."""
    return {
        name: {
            "mean": plain(s.mean),
            "worst": plain(s.worst),
            "total": plain(s.total),
            "worst_scenario": s.worst_scenario,
            "count": s.count,
        }
        for name, s in metrics.summary.items()
    }


def gate_dict(result: GateResult) -> dict[str, Any]:
    return {
        "passed": result.passed,
        "checked": result.checked,
        "failures": [
            {
                "scenario": f.scenario,
                "metric": f.metric,
                "value": plain(f.value),
                "bound": f.bound,
                "source": f.source,
                "kind": f.kind,
                "message": f.message,
            }
            for f in result.failures
        ],
        "notes": list(result.notes),
    }


def config_changes(config: CRPConfig) -> dict[str, Any]:
    """Flat keys where ``config`` differs from the defaults: key -> ``[default, value]``."""
    from crp_core.config import CRPConfig as _Config

    return {k: [plain(a), plain(b)] for k, (a, b) in _Config().diff(config).items()}


def suite_metrics_report(
    metrics: SuiteMetrics,
    *,
    config: CRPConfig,
    ckf_source: str = "",
    ckf_fingerprint: str = "",
    suite_source: str = "",
    set_args: tuple[str, ...] = (),
    gate: GateResult | None = None,
) -> dict[str, Any]:
    """The ``crp-inspect check --json`` object, also the ``--write-baseline`` file (kind
    :data:`SUITE_METRICS_KIND`): the CKF, the config's changes from the defaults, the summary and
    every scenario's metrics, and the gate's verdict when one ran."""
    out: dict[str, Any] = {
        "kind": SUITE_METRICS_KIND,
        "version": 1,
        "ckf": {"source": ckf_source, "fingerprint": ckf_fingerprint},
        "suite": suite_source,
        "config_changes": config_changes(config),
        "set": list(set_args),
        "summary": suite_summary_dict(metrics),
        "scenarios": {m.name: scenario_metrics_dict(m) for m in metrics.scenarios},
    }
    if gate is not None:
        out["gate"] = gate_dict(gate)
    return out


def trial_dict(t: TrialRecord) -> dict[str, Any]:
    return {
        "number": t.number,
        "params": plain(dict(t.params)),
        "values": plain(list(t.values)),
        "feasible": t.feasible,
        "violations": plain(dict(t.violations)),
        "metrics": plain(t.metrics.flat()),
        "elapsed_ms": t.elapsed_ms,
    }


def tune_report(result: TuneResult) -> dict[str, Any]:
    """The ``crp-inspect tune --json`` object: ``best`` (``config``: the full configuration as its TOML
    holds it, ``metrics``: the suite summary flattened, ``scenarios``: each scenario's metrics, the
    trial's ``params`` and ``values``), every trial, the objective and the search space."""
    best = result.best
    return {
        "kind": TUNE_KIND,
        "version": 1,
        "objective": {
            "name": result.objective.name,
            "directions": list(result.objective.directions),
            "targets": list(result.objective.targets),
            "description": result.objective.description,
        },
        "seed": result.seed,
        "sampler": result.sampler,
        "space": [{"key": p.key, "low": p.low, "high": p.high, "step": p.step} for p in result.space],
        "best": {
            "trial": best.number,
            "params": plain(dict(best.params)),
            "values": plain(list(best.values)),
            "feasible": best.feasible,
            "config": result.best_config.to_dict(),
            "config_changes": config_changes(result.best_config),
            "metrics": plain(best.metrics.flat()),
            "scenarios": {m.name: plain(m.values()) for m in best.metrics.scenarios},
        },
        "baseline": trial_dict(result.trials[0]) if result.trials else None,
        "trials": [trial_dict(t) for t in result.trials],
    }

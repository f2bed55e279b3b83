"""Machine-readable report of a pipeline run (docs/reference/reports.md): ``crp-inspect run --json``.

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
from typing import Any

import numpy as np

from crp_core import headers as headers_mod
from crp_core.factors.recency import row_positions
from crp_core.io.timeparse import format_timestamp
from crp_core.records import Clamp, ConflictPair, FanoutResult, FanoutRun, FanoutStep, PipelineResult, TieGroup
from crp_core.relevance_gate import gate_note
from crp_core.stages.contradictions.audit import authority_dict, diff_dict
from crp_core.stages.known import known_flag_data

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
    return _plain_other(obj)


def _plain_other(obj: Any) -> Any:
    """:func:`plain` of a value of any other type, by what it is an instance of."""
    if isinstance(obj, (bool, str)):
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
    """Deterministic JSON text (docs/reference/reports.md)."""
    return json.dumps(plain(obj), sort_keys=False, ensure_ascii=False, indent=2, allow_nan=False)


def fact_rows_report(result: PipelineResult) -> list[dict[str, Any]]:
    """The ``facts`` rows of :func:`run_report` (docs/reference/reports.md), JSON-plain, without building the rest
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
    """The report's ``facts`` rows (docs/reference/reports.md) as columns: field name -> one JSON-plain value per
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
    walk every value again: a connector's bridged pairs are many small lists)."""
    cols = fact_columns(result)
    names = tuple(cols)
    return [dict(zip(names, values)) for values in zip(*cols.values())]


def pair_dict(p: ConflictPair) -> dict[str, Any]:
    """One conflict pair (docs/reference/reports.md ``conflicts`` fields plus skipped, margin, decision, diffs;
    ``learned: true`` when the detector's learned comparison found it)."""
    out = {
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
    if p.conflict.learned:
        out["learned"] = True
    if p.asserted:
        out["asserted"] = True
    return out


def clamp_dict(c: Clamp) -> dict[str, Any]:
    """One entry of a report's ``clamps`` list: ``{"key", "asked", "used", "why", "message"}``."""
    return {"key": c.key, "asked": c.asked, "used": c.used, "why": c.why, "message": c.message}


def tie_group_dict(group: TieGroup) -> dict[str, Any]:
    """One entry of the run report's ``envelope.tie_groups`` (docs/reference/reports.md)."""
    return {
        "members": list(group.members),
        "pairs": [list(p) for p in group.pairs],
        "packed": list(group.packed),
        "packed_pairs": [list(p) for p in group.packed_pairs],
        "left_out": [{"fact_id": f, "reason": r} for f, r in zip(group.left_out, group.left_out_reasons, strict=True)],
        "note": group.note,
        "note_tokens": group.note_tokens,
    }


def run_report(result: PipelineResult) -> dict[str, Any]:
    """The docs/reference/reports.md JSON object for one run."""
    kb = result.corpus.kb
    ids = lambda rows: [kb.facts[int(r)].fact_id for r in np.asarray(rows).tolist()]  # noqa: E731
    env = result.envelope
    res = result.resolution
    cdgr = result.cdgr
    scen = result.scenario
    note = gate_note(result)
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
            "tie_groups": [tie_group_dict(g) for g in env.tie_groups],
            "empty_reason": env.empty_reason,
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
        "near_conflicts": [n.to_dict() for n in result.near_conflicts],
        "gate_note": None if note is None else note.as_dict(),
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
            "duplicates_removed_at_fan_in": fan.partitioned.removed_at_fan_in,
            "duplicates_reaching_model": fan.partitioned.reaching_model,
        }
    return plain(report)


# ---- crp-inspect fanout (docs/reference/reports.md) ----------------------------------------------------------
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
                    "kept": d.kept,
                    "removed_at_fan_in": bool(d.removed_at_fan_in),
                }
                for d in run.duplicates
            ],
            "dedup": bool(run.fan_in_dedup),
            "duplicates_removed_at_fan_in": run.removed_at_fan_in,
            "duplicates_reaching_model": run.reaching_model,
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
    """The ``crp-inspect fanout`` JSON (docs/reference/reports.md).

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
            "fan_in": {
                "duplicates": [],
                "dedup": None,
                "duplicates_removed_at_fan_in": 0,
                "duplicates_reaching_model": 0,
                "merged": [],
                "coverage_depth": None,
            },
            "steps": [],
            "naive": None,
        }
    hdrs = {headers_mod.PARTITIONS: str(len(result.partitioned.partitions)), **hdrs}
    part = _fanout_run_report(result.partitioned)
    naive = _fanout_run_report(result.naive)
    # the same keys for naive (docs/reference/reports.md): the run's headers, no Coverage-Partitions (the race creates
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

"""``crp-inspect validate``: check a CKF (or a scenario) and summarise it (docs/reference/ckf.md, §1.2).

Exit status 0 when the input loads (a summary is printed), 1 when it is refused (every problem is
printed, one per line: ``line N, field F: message``). A scenario given with a CKF (``PATH`` or
``--ckf``) has its labels checked against it: every fact id its ``expect`` table names that the CKF
does not hold is a problem with its line and field (exit 1); without a CKF the summary says the ids
were not checked.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

from crp_core.cli.common import add_max_bytes_arg, add_sdk_map_args, input_source_map, load_input_ckf
from crp_core.config import SOURCE_TYPES, STATUSES
from crp_core.errors import Problem, ValidationError
from crp_core.io.scenario import load_scenario
from crp_core.model import KnowledgeBase, Scenario
from crp_core.support.text import shortened

if TYPE_CHECKING:
    from crp_core.cli.common import Subparsers


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "validate",
        help="validate a CKF file/directory or a scenario",
        description="Validate a CKF (.jsonl, .ndjson, .json, .csv, .parquet, a crprotocol SDK snapshot or a "
        "directory with facts.jsonl) and print a summary, or every problem found.",
    )
    p.add_argument("path", nargs="?", help="CKF file or directory")
    p.add_argument("--ckf", metavar="PATH", default=None, help="the CKF (the same as PATH; give one of them)")
    p.add_argument(
        "--scenario",
        metavar="PATH",
        help="validate a scenario file (.json or .toml); with a CKF, the fact ids of its expect table are "
        "checked against it",
    )
    p.add_argument("--lenient", action="store_true", help="skip bad facts instead of refusing the file")
    add_max_bytes_arg(p, "CKF file")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    add_sdk_map_args(p, "PATH")
    p.set_defaults(handler=_handle)


def _problem_line(p: Problem) -> str:
    fid = f" (fact {p.fact_id!r})" if p.fact_id else ""
    return f"line {p.line}, field {p.field}{fid}: {p.message}"


def _problem_json(p: Problem) -> dict[str, Any]:
    return {"line": p.line, "field": p.field, "message": p.message, "fact_id": p.fact_id}


def _refused(what: str, path: str, exc: ValidationError, as_json: bool) -> dict[str, Any]:
    """The JSON entry of a refused file; without --json, every problem printed one per line."""
    if not as_json:
        print(f"{what} {path}: refused, {len(exc.problems)} problem(s)")
        for p in exc.problems:
            print(_problem_line(p))
    return {"ok": False, "path": path, "problems": [_problem_json(p) for p in exc.problems]}


def _handle(args: argparse.Namespace) -> int:  # noqa: C901  one branch per input and output form
    if args.ckf is not None:
        if args.path is not None and args.path != args.ckf:
            print("crp-inspect validate: give the CKF once (PATH or --ckf)", file=sys.stderr)
            return 2
        args.path = args.ckf
    if args.path is None and args.scenario is None:
        print("crp-inspect validate: give a CKF PATH (or --ckf PATH) and/or --scenario PATH", file=sys.stderr)
        return 2
    status = 0
    out: dict[str, Any] = {}
    kb: KnowledgeBase | None = None
    if args.path is not None:
        source_map = input_source_map(args)  # a bad mapping file is refused on its own, naming its key
        try:
            kb = load_input_ckf(
                args.path, lenient=args.lenient, max_bytes=args.max_bytes, source_map=source_map, warn=False
            )
        except ValidationError as exc:
            status = 1
            out["ckf"] = _refused("CKF", args.path, exc, args.json)
        else:
            out["ckf"] = _kb_summary(kb, args.path)
            if not args.json:
                _print_kb(out["ckf"])
    if args.scenario is not None:
        try:
            sc = load_scenario(args.scenario)
        except ValidationError as exc:
            status = 1
            out["scenario"] = _refused("scenario", args.scenario, exc, args.json)
        else:
            out["scenario"] = _scenario_summary(sc, args.scenario)
            labels = _labels(sc, args.scenario, kb, args.path)
            out["scenario"]["labels"] = labels
            if labels["unknown"]:
                status = 1
                out["scenario"]["ok"] = False
            if not args.json:
                _print_scenario(out["scenario"])
                _print_labels(labels)
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2, sort_keys=True))
    return status


def _labels(sc: Scenario, path: str, kb: KnowledgeBase | None, ckf_path: str | None) -> dict[str, Any]:
    """The fact ids of the scenario's ``expect`` table checked against ``kb`` (None: not checked, with
    the reason: no CKF given, or the CKF was refused)."""
    from crp_core.analysis.suite import Suite, SuiteScenario, check_suite

    ids = sorted(sc.expect.fact_ids()) if sc.expect is not None else []
    unknown: list[dict[str, Any]] = []
    if kb is not None and ids:
        unknown = [_problem_json(p) for p in check_suite(Suite((SuiteScenario(sc.name or path, path, sc),)), kb)]
    if kb is not None:
        checked = f"checked against {kb.source}"
    elif ckf_path is not None:
        checked = "not checked: the CKF was refused"
    else:
        checked = "not checked: give --ckf PATH to check them against a CKF"
    return {"fact_ids": len(ids), "checked": kb is not None, "note": checked, "unknown": unknown}


def _print_labels(labels: dict[str, Any]) -> None:
    n = labels["fact_ids"]
    if not n:
        print("  labels: no fact ids (no expect table, or one without ids)")
        return
    if not labels["unknown"]:
        print(f"  labels: {n} fact id(s), {labels['note']}" + (": all found" if labels["checked"] else ""))
        return
    print(f"  labels: {n} fact id(s), {labels['note']}: {len(labels['unknown'])} unknown")
    for p in labels["unknown"]:
        print("    " + _problem_line(Problem(**p)))


def _kb_summary(kb: KnowledgeBase, path: str) -> dict[str, Any]:
    by_type = Counter(f.source_type for f in kb.facts)
    by_status = Counter(f.status for f in kb.facts)
    if kb.embeddings is None:
        emb = "none (model will embed)"
    else:
        n, d = kb.embeddings.shape
        emb = f"{n} x {d} from {kb.embedding_model or 'an unnamed model'}"
    return {
        "ok": True,
        "path": path,
        "format": kb.fmt,
        "facts": len(kb),
        "by_source_type": {st: by_type[st] for st in SOURCE_TYPES if by_type[st]},
        "by_status": {s: by_status[s] for s in STATUSES if by_status[s]},
        "embeddings": emb,
        "embedding_model": kb.embedding_model,
        "warnings": [_problem_json(p) for p in kb.warnings],
        "skipped": [_problem_json(p) for p in kb.skipped],
        "skipped_facts": len({p.line for p in kb.skipped}),
        "languages": _languages(kb),
        **(
            {"import": {"lines": list(kb.imported.lines()), "edges": len(kb.edges), "integrity": kb.imported.integrity}}
            if kb.imported is not None
            else {}
        ),
    }


def _languages(kb: KnowledgeBase) -> dict[str, Any]:
    """The facts that do not read as English (the detector reads English; docs/decisions/languages.md)."""
    from crp_core.stages.contradictions.language import language_profile

    p = language_profile(kb.facts)
    return {"other": p.n_other, "by_language": dict(p.by_language), "examples": list(p.examples), "note": p.note}


def _print_kb(s: dict[str, Any]) -> None:
    print(f"CKF {s['path']}: OK ({s['format']}), {s['facts']} fact(s)")
    print("  by source type: " + ", ".join(f"{k} {v}" for k, v in s["by_source_type"].items()))
    print("  by status: " + ", ".join(f"{k} {v}" for k, v in s["by_status"].items()))
    print(f"  embeddings: {s['embeddings']}")
    print(f"  languages: {s['languages']['note'] or 'every fact reads as English'}")
    for line in s.get("import", {}).get("lines", []):  # a foreign format (an SDK snapshot): what was mapped
        print(f"  {line}")
    if s["skipped"]:
        print(f"  skipped {s['skipped_facts']} bad fact(s) (lenient):")
        for p in s["skipped"]:
            print("    " + _problem_line(Problem(**p)))
    if s["warnings"]:
        print(f"  warnings: {len(s['warnings'])}")
        for p in s["warnings"]:
            print("    " + _problem_line(Problem(**p)))


def _scenario_summary(sc: Scenario, path: str) -> dict[str, Any]:
    with_emb = sum(sq.embedding is not None for sq in sc.sub_queries) + (sc.query_embedding is not None)
    return {
        "ok": True,
        "path": path,
        "name": sc.name,
        "query": sc.query,
        "now": sc.now.isoformat() if sc.now else None,
        "sub_queries": len(sc.sub_queries),
        "addressed": len(sc.addressed),
        "residual": len(sc.residual_set),
        "prior_outputs": len(sc.prior_outputs),
        "fanout_width": sc.fanout_width,
        "config_overrides": sorted(sc.config),
        "embedded_texts": with_emb,
        "embedding_model": sc.embedding_model,
    }


def _print_scenario(s: dict[str, Any]) -> None:
    verdict = "OK" if s["ok"] else "refused, its labels name facts the CKF does not hold"
    print(f"scenario {s['path']}: {verdict}{' (' + s['name'] + ')' if s['name'] else ''}")
    print(f"  query: {shortened(s['query'], 120)!r}")
    print(f"  now: {s['now'] or 'wall clock'}")
    print(f"  sub-queries: {s['sub_queries']} ({s['addressed']} addressed, {s['residual']} residual)")
    print(f"  prior outputs: {s['prior_outputs']}; fan-out width: {s['fanout_width']}")
    print(f"  config overrides: {', '.join(s['config_overrides']) or 'none'}")
    print(
        f"  texts with embeddings: {s['embedded_texts']}"
        + (f" from {s['embedding_model']}" if s["embedding_model"] else "")
    )

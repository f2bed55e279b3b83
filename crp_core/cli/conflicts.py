"""``crp-inspect conflicts``: scan a whole CKF for contradictory facts (SPEC-027 §2).

Every retrievable pair with cosine > ``contradiction_similarity`` (found through the HNSW
neighbours) whose texts value-conflict is listed and arbitrated on its own by authority.
Output, in triage order (ties first, then the smallest authority margin, then ids):
``--json`` a JSON list of pairs (docs/reference/reports.md conflict fields + margin, the winner's flags,
diffs and both texts; byte-identical for the same input and ``--now``), ``--csv`` one flat row per pair,
otherwise a readable summary (a WARNING line under a pair with a close margin or both facts expired). The pairs
an operator's QUARANTINED / DELETED mark took out of the scan (``RetrievableSplit.aside``, the Conflicts page's
"Out of retrieval") are listed apart: always under their own heading in the summary; in ``--json`` / ``--csv``
only with ``--out-of-retrieval``, after every pair of the scan, with the marks in ``out_of_retrieval`` and their
ruling (:data:`RULING_FIELDS`) null / empty, since no envelope holds them. Without the flag ``--json`` and
``--csv`` are the scan's pairs alone.
Configuration precedence: defaults < ``--config`` < each ``--set``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from crp_core.cli.common import (
    TerminalProgress,
    add_input_args,
    count_arg,
    found_by,
    input_source_map,
    load_input_ckf,
    now_arg,
    positive_int,
    visible,
)
from crp_core.cli.embed import add_engine_args
from crp_core.cli.operator_decisions import add_triage_db_args, decisions_doc, decisions_line, operator_decisions
from crp_core.config import layered_config
from crp_core.errors import ConfigError
from crp_core.io.ckf.provenance import sdk_provenance
from crp_core.io.timeparse import format_timestamp
from crp_core.support.cores import default_cores
from crp_core.support.spreadsheet import csv_cell

if TYPE_CHECKING:
    from crp_core.analysis.scan import ConflictScan
    from crp_core.cli.common import Subparsers
    from crp_core.config import CRPConfig
    from crp_core.decisions import DecisionSet
    from crp_core.model import KnowledgeBase
    from crp_core.records import ConflictPair
    from crp_core.support.costs import StageClock

#: processes of the text check by default (the machine's cores, at most 2)
DEFAULT_CHECK_WORKERS = default_cores()

#: flat CSV columns, in order
CSV_COLUMNS: tuple[str, ...] = (
    "fact_a",
    "fact_b",
    "similarity",
    "patterns",
    "learned",
    "tied",
    "kept",
    "suppressed",
    "margin",
    "decision",
    "source_type_a",
    "source_authority_a",
    "recency_factor_a",
    "importance_weight_a",
    "authority_a",
    "source_type_b",
    "source_authority_b",
    "recency_factor_b",
    "importance_weight_b",
    "authority_b",
    "changes",
    "content_a",
    "content_b",
)

#: ``--csv --out-of-retrieval``: the columns, then the marks of a pair out of retrieval (empty on the scan's rows)
ASIDE_CSV_COLUMNS: tuple[str, ...] = (*CSV_COLUMNS, "out_of_retrieval")

#: a pair out of retrieval's fields that say how it is arbitrated (``analysis.scan.ruling``) and the winner's
#: flags: null in ``--json --out-of-retrieval`` (empty in ``--csv``), since no envelope holds the pair
RULING_FIELDS: tuple[str, ...] = (
    "kept",
    "suppressed",
    "tied",
    "margin",
    "relative_margin",
    "close_margin",
    "both_expired",
)


@dataclass(frozen=True, eq=False)
class Aside:
    """The pairs an operator's QUARANTINED / DELETED mark took out of the scan (``RetrievableSplit.aside``, in
    triage order), the CKF they were arbitrated in (their facts retrievable) and the decisions in force (the marks):
    listed apart, never counted with the scan's pairs (docs/decisions/triage.md, "Out of retrieval")."""

    pairs: tuple[ConflictPair, ...]
    kb: KnowledgeBase
    decisions: DecisionSet | None


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "conflicts",
        help="scan the whole CKF for contradictory facts and arbitrate each pair",
        description="Scan every retrievable fact of a CKF for contradictions (cosine > "
        "contradiction_similarity and a value conflict: NUMBER_CHANGED, DATE_SHIFTED, "
        "MAGNITUDE_ALTERED, ENTITY_SUBSTITUTED, NEGATION_FLIP) and arbitrate each pair by "
        "authority (SPEC-027 §2). Configuration precedence: defaults < --config < --set.",
    )
    add_input_args(p, scenario=False, now_help="the current time used for recency (default: wall clock)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print a JSON list of pairs (triage order)")
    fmt.add_argument("--csv", action="store_true", help="print one CSV row per pair (triage order)")
    p.add_argument("--top", type=count_arg, default=20, metavar="N", help="pairs shown in the summary (default 20)")
    add_engine_args(p, "the pair search")
    add_triage_db_args(p)
    p.add_argument(
        "--out-of-retrieval",
        action="store_true",
        help="with --json / --csv: append the pairs an operator's QUARANTINED / DELETED mark took out of the scan "
        "(the summary's 'out of retrieval:' list) after the scan's pairs, with the marks in out_of_retrieval and "
        "kept, suppressed, tied, margin and the winner's flags null (empty in CSV): not in retrieval, no ruling to "
        "act on. Without it --json / --csv list the scan's pairs alone",
    )
    p.add_argument(
        "--check-workers",
        type=positive_int,
        default=DEFAULT_CHECK_WORKERS,
        metavar="N",
        help="processes of the text check of the candidate pairs (either engine; 1: this process); "
        f"default {DEFAULT_CHECK_WORKERS}",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="print the cost of each stage (load, pair search, text check, arbitration, write: wall and CPU "
        "seconds, peak memory) on stderr after the output",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from crp_core.analysis.scan_check import check_pool
    from crp_core.analysis.scan_input import in_force_sources
    from crp_core.engines import split_with_engine
    from crp_core.support.costs import StageClock

    if args.out_of_retrieval and not (args.json or args.csv):
        raise ConfigError("--out-of-retrieval applies to --json / --csv (the summary always lists those pairs)")
    now = now_arg(args.now) or datetime.now(UTC)
    config = layered_config(args.config, None, args.set_args)  # no scenario here
    if args.engine == "ray":
        from crp_core.engines.ray_engine import require_ray

        require_ray()  # before loading anything: say at once how to install the extra
    clock = StageClock()
    with check_pool(args.check_workers) as pool:  # forked before the CKF is loaded: the workers hold none of it
        with clock.stage("load"):
            kb = load_input_ckf(
                args.ckf,
                lenient=args.lenient,
                max_bytes=config.ckf_max_bytes,
                source_map=input_source_map(args),
                map_vectors=True,  # one pass over a possibly huge CKF: its vectors are read from the file
            )
            od = operator_decisions(args, kb)  # as every pipeline command: their statuses and pair decisions
            shown = TerminalProgress()  # on a terminal only: embedding counts / ETA, a long index build
            sources = in_force_sources(
                kb, od.decisions, config=config, cache_dir=args.cache_dir, progress=shown, notify=shown.note
            )
        split = split_with_engine(  # the scan of every status in force, and the pairs a mark took out of it
            sources.checked,
            sources.applied,
            config,
            now,
            engine=args.engine,
            address=args.address,
            workers=args.workers,
            progress=TerminalProgress("conflict scan", "candidate pairs"),
            check_pool=pool,
            clock=clock,
            decisions=od.decisions,
        )
    scan, kb = split.scan, sources.applied.kb
    aside = Aside(split.aside, sources.checked.kb, od.decisions)
    appended = aside if args.out_of_retrieval else None  # --json / --csv: the scan's pairs alone by default
    with clock.stage("write"):
        if args.json:
            write_json(sys.stdout, scan, kb, config, appended)
            sys.stdout.write("\n")
        elif args.csv:
            sys.stdout.write(csv_text(scan, kb, appended))
        else:
            sys.stdout.write(decisions_line(decisions_doc(od)))
            _print_summary(scan, kb, config, args.ckf, max(0, args.top), args.engine, aside)
        sys.stdout.flush()
    if args.profile:
        print(profile_text(clock, scan), file=sys.stderr)
    return 0


def profile_text(clock: StageClock, scan: ConflictScan) -> str:
    """``--profile``: the stages' costs (docs/reference/cli.md#conflicts), then what the scan searched and found."""
    return (
        "conflicts profile\n"
        + clock.table()
        + f"\nfacts {scan.n_facts}, candidate pairs {scan.n_candidates}, conflicting pairs {len(scan.pairs)}, "
        f"search {scan.method} ({scan.products:,} dot products)"
    )


def _content(kb: KnowledgeBase, fact_id: str) -> str:
    """The text of a fact of the scanned CKF (every pair's facts are)."""
    return kb.facts[kb.index_of(fact_id)].content


def pair_rows(
    scan: ConflictScan, kb: KnowledgeBase, config: CRPConfig, aside: Aside | None = None
) -> list[dict[str, Any]]:
    """One JSON-ready dict per pair: docs/reference/reports.md fields + margin, decision, diffs and both texts (and
    ``sdk_agreement`` and ``sdk_provenance`` for a CKF from an SDK snapshot; ``config`` is the scan's); then one per
    pair of ``aside`` (``--out-of-retrieval``), with ``out_of_retrieval`` and its :data:`RULING_FIELDS` null."""
    return list(iter_pair_rows(scan, kb, config, aside))


def iter_pair_rows(
    scan: ConflictScan, kb: KnowledgeBase, config: CRPConfig, aside: Aside | None = None
) -> Iterator[dict[str, Any]]:
    """:func:`pair_rows` one at a time."""
    from crp_core.analysis.reports import sdk_agreement_dict
    from crp_core.analysis.sdk_agreement import has_sdk_data, sdk_agreement

    agreement = sdk_agreement(scan.pairs, kb, config, scan.now) if has_sdk_data(kb) else None
    for p in scan.pairs:
        d = _pair_row(p, kb, config, scan.now)
        verdict = agreement.of(p.fact_a, p.fact_b) if agreement is not None else None
        if verdict is not None:  # a CKF from an SDK snapshot: SPEC-027 against its superseded_by
            d["sdk_agreement"] = sdk_agreement_dict(verdict)
        _with_provenance(d, kb, p)
        yield d
    if aside is not None:
        yield from _aside_rows(aside, config, scan.now)


def _aside_rows(aside: Aside, config: CRPConfig, now: datetime) -> Iterator[dict[str, Any]]:
    """The rows of the pairs out of retrieval, apart after every pair of the scan: each pair's detection (patterns,
    diffs, authorities, texts), its decision in the store, and the marks that took it out; its ruling null, since
    no envelope holds the pair (nothing in it to act on)."""
    for p in aside.pairs:
        d = _pair_row(p, aside.kb, config, now)
        d.update(dict.fromkeys(RULING_FIELDS))
        _with_provenance(d, aside.kb, p)
        d["out_of_retrieval"] = out_of_retrieval_marks(p, aside.decisions)
        yield d


def _pair_row(p: ConflictPair, kb: KnowledgeBase, config: CRPConfig, now: datetime) -> dict[str, Any]:
    """A pair's conflict fields, the winner's flags at ``now`` and both texts."""
    from crp_core.report import pair_dict

    d = pair_dict(p)
    d.update(_flag_fields(p, kb, config, now))
    d["content_a"] = _content(kb, p.fact_a)
    d["content_b"] = _content(kb, p.fact_b)
    return d


def _with_provenance(d: dict[str, Any], kb: KnowledgeBase, p: ConflictPair) -> None:
    prov = _provenance(kb, p)
    if prov is not None:  # facts of an SDK snapshot: where each came from in the deployment
        d["sdk_provenance"] = prov


def out_of_retrieval_marks(p: ConflictPair, decisions: DecisionSet | None) -> list[dict[str, Any]]:
    """The marks that took ``p`` out of the scan (``DecisionSet.retrieval_marks``), fact A's first: the fact, its
    status, and the decision in force that set it (``decision_id``, ``operator``, ``decided_at``, ``note``)."""
    if decisions is None:
        return []
    return [
        {
            "fact": f,
            "status": status,
            "decision_id": None if d is None else d.id,
            "operator": None if d is None else d.operator,
            "decided_at": None if d is None else d.decided_at,
            "note": None if d is None else d.note,
        }
        for f, status, d in decisions.retrieval_marks(p.fact_a, p.fact_b)
    ]


def marks_text(marks: Sequence[dict[str, Any]]) -> str:
    """The marks of :func:`out_of_retrieval_marks` in a line: ``X2 QUARANTINED by rosa (decision #2,
    2026-11-01T09:00:00Z): old page``, ``; `` between two."""
    out = []
    for m in marks:
        who = f" by {m['operator']} (decision #{m['decision_id']}, {m['decided_at']})" if m["operator"] else ""
        out.append(f"{m['fact']} {m['status']}{who}" + (f": {m['note']}" if m["note"] else ""))
    return "; ".join(out)


def _flag_fields(p: ConflictPair, kb: KnowledgeBase, config: CRPConfig, now: datetime) -> dict[str, Any]:
    """The winner's flags (docs/reference/reports.md#conflicts): ``relative_margin`` (margin / the larger
    authority), ``close_margin`` (a winner by authority below ``winner_margin_warn``), ``both_expired``."""
    from crp_core.analysis.timeline import winner_flags

    f = winner_flags(p, kb, config, now)
    return {"relative_margin": f.relative_margin, "close_margin": f.close_margin, "both_expired": f.both_expired}


def _provenance(kb: KnowledgeBase, p: ConflictPair) -> dict[str, Any] | None:
    """Fact id -> its SDK provenance (``null`` for a fact without), None when neither fact has any."""
    provs = {fid: sdk_provenance(kb.facts[kb.index_of(fid)]) for fid in sorted((p.fact_a, p.fact_b))}
    if all(v is None for v in provs.values()):
        return None
    return {fid: None if v is None else v.as_dict() for fid, v in provs.items()}


def _provenance_line(kb: KnowledgeBase, fact_id: str) -> str | None:
    """``window win-1 · category config · ...`` for an SDK fact (inert text), None for another fact."""
    prov = sdk_provenance(kb.facts[kb.index_of(fact_id)])
    if prov is None:
        return None
    return " · ".join(f"{label} {_short(visible(text), 80)}" for _name, label, text in prov.labelled()) or "none set"


def json_text(scan: ConflictScan, kb: KnowledgeBase, config: CRPConfig, aside: Aside | None = None) -> str:
    """Deterministic JSON (floats unrounded, no timings): the same input gives the same bytes."""
    buf = io.StringIO()
    write_json(buf, scan, kb, config, aside)
    return buf.getvalue()


def write_json(
    out: TextIO, scan: ConflictScan, kb: KnowledgeBase, config: CRPConfig, aside: Aside | None = None
) -> None:
    """:func:`json_text` written pair by pair (one pair's dict in memory at a time): the bytes of
    ``json.dumps(pair_rows(...), ensure_ascii=False, indent=2)``, whose items are their own dumps indented once
    (a JSON string holds no raw line break)."""
    first = True
    for row in iter_pair_rows(scan, kb, config, aside):
        item = json.dumps(row, ensure_ascii=False, indent=2, allow_nan=False)
        out.write(("[\n" if first else ",\n") + "  " + item.replace("\n", "\n  "))
        first = False
    out.write("[]" if first else "\n]")


def _changes(p: ConflictPair) -> str:
    return "; ".join(
        f"{d.pattern}: {' '.join(d.tokens_a) or '(none)'} -> {' '.join(d.tokens_b) or '(none)'}"
        for d in p.conflict.diffs
    )


def csv_text(scan: ConflictScan, kb: KnowledgeBase, aside: Aside | None = None) -> str:
    """One flat row per pair (``CSV_COLUMNS``); with ``aside`` (``--out-of-retrieval``) the columns
    ``ASIDE_CSV_COLUMNS`` and then one row per pair of ``aside``, its marks in ``out_of_retrieval`` (empty on the
    scan's rows) and its ruling cells empty. Floats unrounded (``repr``), text cells a spreadsheet would read as a
    formula neutralised (:func:`~crp_core.support.spreadsheet.csv_cell`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS if aside is None else ASIDE_CSV_COLUMNS)
    extra = [] if aside is None else [""]
    for p in scan.pairs:
        w.writerow([csv_cell(v) for v in [*_csv_row(p, kb), *extra]])
    if aside is not None:  # apart, after every pair of the scan
        for p in aside.pairs:
            marks = marks_text(out_of_retrieval_marks(p, aside.decisions))
            w.writerow([csv_cell(v) for v in [*_unruled(_csv_row(p, aside.kb)), marks]])
    return buf.getvalue()


def _unruled(row: list[object]) -> list[object]:
    """A CSV row with its :data:`RULING_FIELDS` cells empty (a pair out of retrieval)."""
    return ["" if col in RULING_FIELDS else v for col, v in zip(CSV_COLUMNS, row, strict=True)]


def _csv_row(p: ConflictPair, kb: KnowledgeBase) -> list[object]:
    a, b = p.authority[p.fact_a], p.authority[p.fact_b]
    return [
        p.fact_a,
        p.fact_b,
        p.similarity,
        ";".join(p.patterns),
        str(p.conflict.learned).lower(),
        str(p.tied).lower(),
        ";".join(p.kept),
        p.suppressed or "",
        p.margin,
        p.decision or "",
        a.source_type,
        a.source_authority,
        a.recency_factor,
        a.importance_weight,
        a.authority,
        b.source_type,
        b.source_authority,
        b.recency_factor,
        b.importance_weight,
        b.authority,
        _changes(p),
        _content(kb, p.fact_a),
        _content(kb, p.fact_b),
    ]


def _print_summary(
    scan: ConflictScan,
    kb: KnowledgeBase,
    config: CRPConfig,
    path: str,
    top: int,
    engine: str = "local",
    aside: Aside | None = None,
) -> None:
    from crp_core.analysis.timeline import flag_lines, winner_flags

    out = sys.stdout.write
    out(f"CKF {path}: {scan.n_facts} retrievable fact(s) scanned at {format_timestamp(scan.now)}\n")
    if kb.skipped:
        out(f"lenient load: {len(kb.skipped)} bad fact(s) skipped\n")
    out(f"candidate pairs (cosine > {scan.threshold:g}): {scan.n_candidates}\n")
    out(f"conflicting pairs: {len(scan.pairs)} ({scan.tied} tied, unresolved)\n")
    for pat, n in scan.counts.items():
        out(f"  {pat:<20} {n}\n")
    _print_sdk_agreement(scan, kb, config)
    if scan.pairs:
        shown = scan.pairs[:top]
        out(
            f"\npairs in triage order (ties first, then smallest authority margin)"
            f"{'' if len(shown) == len(scan.pairs) else f'; first {len(shown)}'}\n"
        )
        for i, p in enumerate(shown, 1):
            a, b = p.authority[p.fact_a], p.authority[p.fact_b]
            if p.tied:
                verdict = "TIED (both kept with a NOTE)"
            elif p.decision == "dismiss":
                verdict = "dismissed by the operator"
            else:
                verdict = f"winner {p.kept[0]}, suppress {p.suppressed}"
                verdict += f" (operator: {p.decision})" if p.decision else ""
            out(
                f"{i:>4}. {p.fact_a} vs {p.fact_b}  cos={p.similarity:.3f}  {'/'.join(p.patterns)}{found_by(p)}  "
                f"authority {a.authority:.4f} vs {b.authority:.4f} (margin {p.margin:.4f})  {verdict}\n"
            )
            for line in flag_lines(winner_flags(p, kb, config, scan.now)):
                out(f"      WARNING: {line}\n")
            out(f"      {_changes(p)}\n")
            for side, fid in (("A", p.fact_a), ("B", p.fact_b)):
                out(f"      {side}: {_short(_content(kb, fid))}\n")
                prov = _provenance_line(kb, fid)
                if prov is not None:
                    out(f"         SDK: {prov}\n")
    if aside is not None and aside.pairs:
        _print_aside(aside, top)
    t = scan.timings_ms
    out("\ntimings (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()) + "\n")
    out(f"engine: {engine}\n")


def _print_aside(aside: Aside, top: int) -> None:
    """The pairs out of retrieval, apart from the scan's: each with its patterns, the marks that took it out and
    the pair's own decision in force (control characters of ids and notes drawn as escapes)."""
    out = sys.stdout.write
    n = len(aside.pairs)
    shown = aside.pairs[:top]
    out(
        f"\nout of retrieval: {n} pair{'' if n == 1 else 's'} whose fact an operator marked QUARANTINED or DELETED "
        "(out of the scan and its counts above; an ACTIVE or STALE mark brings a pair back)"
        + ("" if len(shown) == n else f"; first {len(shown)}")
        + "; in --json / --csv with --out-of-retrieval\n"
    )
    for i, p in enumerate(shown, 1):
        decided = f"  (operator: {p.decision})" if p.decision else ""
        out(
            f"{i:>4}. {visible(p.fact_a)} vs {visible(p.fact_b)}  {'/'.join(p.patterns)}  "
            f"{visible(marks_text(out_of_retrieval_marks(p, aside.decisions)))}{decided}\n"
        )


def _print_sdk_agreement(scan: ConflictScan, kb: KnowledgeBase, config: CRPConfig) -> None:
    """For a CKF from an SDK snapshot: how SPEC-027 arbitration compares with its ``superseded_by``."""
    from crp_core.analysis.sdk_agreement import has_sdk_data, sdk_agreement

    if not has_sdk_data(kb):
        return
    ag = sdk_agreement(scan.pairs, kb, config, scan.now)
    out = sys.stdout.write
    out(
        f"SDK supersessions vs SPEC-027 on its own (the SDK's STALE read as ACTIVE): {ag.count('agrees')} pair(s) "
        f"agree, {ag.count('disagrees')} disagree, {ag.count('silent')} SDK silent; as loaded (STALE in force): "
        f"{ag.count('agrees', as_loaded=True)} agree, {ag.count('disagrees', as_loaded=True)} disagree; "
        f"{len(ag.unpaired)} SDK supersession(s) in no pair\n"
    )
    for r in ag.pairs:
        if r.verdict == "disagrees" or r.as_loaded.verdict == "disagrees":
            out(
                f"  {visible(r.fact_a)} vs {visible(r.fact_b)}: on its own {r.independent.verdict} "
                f"({visible(r.independent.reason)}); as loaded {r.as_loaded.verdict}\n"
            )


def _short(text: str, n: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."

"""``crp-inspect triage``: operator decisions on conflict pairs.

* ``triage export --db PATH --ckf PATH --out PATH [--format ckf|sdk] [--checksum auto|sha256|blake3]
  [--report PATH] [--json] [--strict] [--lenient]``: write the cleaned CKF carrying every decision in
  force (docs/decisions/triage.md "Export") in the format of ``--out`` (extension, or a directory), or
  with ``--format sdk`` a crprotocol SDK snapshot (``.json``; "The SDK export"), and the export report
  as JSON next to it;
* ``triage decisions --db PATH [--json|--csv|--jsonl] [--pair A B]``: print the audit log (``--jsonl``: one
  entry per line with its chain hashes);
* ``triage verify --db PATH [--json]``: recompute the log's hash chain; exit 1 naming the first broken
  entry;
* ``triage stats --db PATH --ckf PATH [--json]``: the detector's precision per pattern as the
  operators' decisions judge it (dismissed = false positive; accepted / overridden = true conflict), the
  agreement of every two operators (percent, Cohen's kappa) and the pairs' review states under the team's
  quorum;
* ``triage record --db PATH --ckf PATH --pair A B --kind K [--winner ID] [--fact ID --status S]
  [--reverts ID] --operator NAME [--note TEXT] [--based-on ID] [--roles FILE] [--config TOML]
  [--set KEY=VALUE]``: record one decision (checked against the CKF, stamped with its name and
  fingerprint, the OS user and origin "cli"; the role from ``--roles`` or the team file of
  ``$CRP_INSPECT_TEAM``; an accept without ``--winner`` names the winner by authority under the
  configuration given), print it as one JSON line.

``--db`` defaults to ``$CRP_INSPECT_TRIAGE_DB``: an SQLite file or a ``postgresql://`` URL. Read commands
never create a database. Text output draws the control and format characters of the data (a database written
by an older version or another tool) as escapes (``\x1b``; :func:`crp_core.cli.common.visible`); ``--json`` /
``--csv`` carry the text exactly.
Exit status: 0 done, 2 refused (bad input, unusable database, a stale ``--based-on``, a role that may not: one clear
message on stderr); ``export --strict``: 1 when the export report lists something the CKF does not carry;
``verify``: 1 when the chain is broken.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from crp_core.cli.common import (
    add_config_args,
    add_max_bytes_arg,
    add_sdk_map_args,
    input_source_map,
    load_input_ckf,
    visible,
)
from crp_core.cli.triage_record import UsageError, db_path, record_command
from crp_core.config import STATUSES, layered_config
from crp_core.decisions import ALL_KINDS
from crp_core.report import dumps
from crp_core.triage import (
    DB_PATH_ENV,
    Decision,
    DecisionStore,
    ExportReport,
    export_cleaned_ckf,
    export_csv,
    export_json,
    load_team_config,
    pair_key,
    report_path_for,
)
from crp_core.triage.agreement import REVIEW_STATES, operator_agreement, review_statuses
from crp_core.triage.chain import ChainVerdict, jsonl_lines
from crp_core.triage.export import export_report_dict
from crp_core.triage.sdk_export import SDK_CHECKSUMS, export_sdk_snapshot

if TYPE_CHECKING:
    from crp_core.cli.common import Subparsers
    from crp_core.io.ckf.sdk_write import SdkWritten
    from crp_core.model import KnowledgeBase
    from crp_core.triage.quality import DetectorQuality


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "triage",
        help="operator decisions on conflict pairs (record, decisions, stats, export)",
        description="Operator decisions on conflict pairs, stored in SQLite or PostgreSQL: record "
        "them, print the audit log, judge the detector by them, export a cleaned CKF.",
    )
    sub = p.add_subparsers(dest="triage_command", metavar="ACTION")
    sub.required = True
    db_help = f"decision database (SQLite file or postgresql:// URL; default ${DB_PATH_ENV})"

    e = sub.add_parser(
        "export",
        help="write the cleaned CKF (or a crprotocol SDK snapshot) carrying every operator decision, and its report",
        description="Load a CKF, write every decision in force into its facts (an override's or "
        "accepted arbitration's loser STALE with metadata.superseded_by and "
        "metadata.triage; status marks with metadata.triage; dismissals in the report "
        "only) in the format of --out (.jsonl, .json, .csv, .parquet, or a directory; the SDK's edges in "
        "metadata.sdk_edges), or with --format sdk as a crprotocol SDK snapshot the SDK loads (the "
        "decisions as supersessions with operator events), and an export report (JSON) of what the file "
        "carries and what it cannot.",
    )
    e.add_argument("--db", metavar="PATH", default=None, help=db_help)
    e.add_argument("--ckf", metavar="PATH", required=True, help="the CKF the decisions were taken on")
    e.add_argument("--out", metavar="PATH", required=True, help="where to write the cleaned CKF (or snapshot)")
    e.add_argument(
        "--format",
        choices=("ckf", "sdk"),
        default="ckf",
        help="ckf (default): a CKF in the format of --out's extension; sdk: a crprotocol SDK snapshot (.json) "
        "that ContextualKnowledgeFabric.restore loads",
    )
    e.add_argument(
        "--checksum",
        choices=SDK_CHECKSUMS,
        default=None,
        help="--format sdk: the header checksum's algorithm; auto (default): the snapshot's own when --ckf is "
        "one whose checksum verified, else sha256 (the SDK checks BLAKE3 where blake3 is installed)",
    )
    e.add_argument(
        "--report",
        metavar="PATH",
        default=None,
        help="where to write the export report (default: <out stem>.export_report.json next to "
        "--out, or export_report.json inside a CKF folder)",
    )
    e.add_argument("--json", action="store_true", help="print the export report as JSON instead of text")
    e.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when the report lists conflicts, unknown facts or what the CKF cannot express",
    )
    e.add_argument("--lenient", action="store_true", help="skip bad facts of --ckf instead of refusing it")
    add_sdk_map_args(e)
    add_max_bytes_arg(e)
    e.set_defaults(handler=_export)

    d = sub.add_parser(
        "decisions",
        help="print the decisions (the audit log)",
        description="Print the recorded decisions, oldest first.",
    )
    d.add_argument("--db", metavar="PATH", default=None, help=db_help)
    fmt = d.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON export (audit log + decisions in force)")
    fmt.add_argument("--csv", action="store_true", help="CSV export (one decision per row)")
    fmt.add_argument("--jsonl", action="store_true", help="JSON Lines: one log entry per line, with its chain hashes")
    d.add_argument("--pair", nargs=2, metavar=("A", "B"), help="only the history of this pair")
    d.set_defaults(handler=_decisions)

    v = sub.add_parser(
        "verify",
        help="recompute the audit log's hash chain",
        description="Recompute every entry's hash and its link to the previous entry; name the first "
        "broken entry (exit 1) or print how many entries verify and the head hash.",
    )
    v.add_argument("--db", metavar="PATH", default=None, help=db_help)
    v.add_argument(
        "--head",
        metavar="HASH",
        default=None,
        help="a head hash printed by an earlier verify and kept elsewhere: it must still be an entry of the log "
        "(removing the newest entries breaks no link; only a kept head shows it)",
    )
    v.add_argument("--json", action="store_true", help="print one JSON object")
    v.set_defaults(handler=_verify)

    q = sub.add_parser(
        "stats",
        help="the conflict detector's precision per pattern, judged by the decisions",
        description="Operator decisions are labels for the value-conflict detector: a dismissed "
        "pair is a false positive, an accepted or overridden pair a true conflict. "
        "Prints precision per pattern and the pairs operators overruled.",
    )
    q.add_argument("--db", metavar="PATH", default=None, help=db_help)
    q.add_argument("--ckf", metavar="PATH", required=True, help="the CKF the decisions were taken on")
    q.add_argument("--lenient", action="store_true", help="skip bad facts of --ckf instead of refusing it")
    add_config_args(
        q,
        config_help="configuration file: the detector reads the pairs as configured (detector_learned), an "
        "override is arbitrated by authority under it",
        set_help="override one configuration key (repeatable), e.g. detector_learned=false",
    )
    add_sdk_map_args(q)
    add_max_bytes_arg(q, as_setting=True)
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q.set_defaults(handler=_stats)

    r = sub.add_parser(
        "record", help="record one decision", description="Record one operator decision on the conflict pair A, B."
    )
    r.add_argument("--db", metavar="PATH", default=None, help=db_help + "; created if missing")
    r.add_argument("--pair", nargs=2, metavar=("A", "B"), required=True, help="the two facts of the pair")
    r.add_argument("--kind", required=True, choices=ALL_KINDS, help="the decision (revert: an admin's, with --reverts)")
    r.add_argument(
        "--winner",
        metavar="ID",
        help="override: the fact that wins; accept: the winner shown (default: the winner by authority now)",
    )
    r.add_argument("--fact", metavar="ID", help="mark_status: the fact whose status changes")
    r.add_argument("--status", choices=STATUSES, help="mark_status: the new status")
    r.add_argument("--reverts", metavar="ID", type=int, help="revert: the decision taken back (--note says why)")
    r.add_argument("--operator", metavar="NAME", required=True, help="who decides (normalised: case, spaces)")
    r.add_argument("--note", metavar="TEXT", default="", help="free-text reason")
    r.add_argument(
        "--ckf",
        metavar="PATH",
        required=True,
        help="the CKF the decision is taken on: the pair's facts must be in it; its name and fingerprint are stamped",
    )
    r.add_argument(
        "--now",
        metavar="ISO",
        default=None,
        help="accept without --winner: the instant the authority is measured at (default: now)",
    )
    add_config_args(
        r,
        config_help="configuration file: an accept without --winner records the winner by authority under it; "
        "the detector's note reads the pair as configured (detector_learned, contradiction_similarity)",
        set_help="override one configuration key (repeatable; dotted keys for tables, e.g. source_authority.web=0.9)",
    )
    r.add_argument(
        "--based-on",
        metavar="ID",
        type=int,
        default=None,
        help="the pair's latest decision id you decided on (0: none); refused if another decision came since",
    )
    r.add_argument(
        "--roles", metavar="FILE", help="roles file (TOML); default: the team file of $CRP_INSPECT_TEAM, if any"
    )
    add_sdk_map_args(r)
    add_max_bytes_arg(r, as_setting=True)
    r.set_defaults(handler=record_command)


def _export_paths(args: argparse.Namespace) -> str:
    """The export report's path, once ``--out`` / ``--report`` are checked (nothing overwrites the input,
    the format fits the extension)."""
    if args.format == "sdk" and os.path.splitext(args.out)[1].lower() != ".json":
        raise UsageError(f"--out {args.out}: a crprotocol SDK snapshot (--format sdk) is a .json file")
    if args.checksum is not None and args.format != "sdk":
        raise UsageError("--checksum applies to --format sdk only (a CKF file has no checksum)")
    if os.path.exists(args.out) and os.path.exists(args.ckf) and os.path.samefile(args.out, args.ckf):
        raise UsageError(f"--out {args.out} is the input CKF; refusing to overwrite it")
    report_path: str = args.report or report_path_for(args.out)
    if os.path.exists(report_path) and os.path.exists(args.ckf) and os.path.samefile(report_path, args.ckf):
        raise UsageError(f"--report {report_path} is the input CKF; refusing to overwrite it")
    if os.path.isdir(report_path):
        raise UsageError(f"--report {report_path} is a folder; name a file")
    return report_path


def _export_target(args: argparse.Namespace) -> None:
    """``--out`` and ``--report`` name places that can be written."""
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        raise UsageError(f"--out {args.out}: the folder {out_dir} does not exist")
    if args.report and not os.path.isdir(os.path.dirname(os.path.abspath(args.report))):
        raise UsageError(
            f"--report {args.report}: the folder {os.path.dirname(os.path.abspath(args.report))} does not exist"
        )
    if os.path.isdir(args.out) and os.path.splitext(args.out)[1]:
        raise UsageError(f"--out {args.out} is a folder; name a file (.jsonl, .json, .csv) or a new folder")
    if os.path.isdir(args.out) and os.listdir(args.out) and not os.path.lexists(os.path.join(args.out, "facts.jsonl")):
        # a folder CKF is written into the folder: never into one that holds other things (--out /tmp)
        raise UsageError(
            f"--out {args.out} is a folder that holds other files and no facts.jsonl; name a file "
            "(.jsonl, .json, .csv), a new folder or an existing CKF folder"
        )


def _export(args: argparse.Namespace) -> int:
    db = db_path(args)
    report_path = _export_paths(args)
    kb = load_input_ckf(args.ckf, lenient=args.lenient, max_bytes=args.max_bytes, source_map=input_source_map(args))
    with DecisionStore(db, create=False, readonly=True) as store:
        decisions = store.current()
        chain = store.verify()
    _export_target(args)
    try:
        if args.format == "sdk":
            checksum = args.checksum or "auto"
            done = export_sdk_snapshot(kb, decisions, args.out, checksum=checksum, report_path=report_path)
        else:
            done = export_cleaned_ckf(kb, decisions, args.out, report_path=report_path)
    except OSError as exc:
        where = exc.filename or args.out
        raise UsageError(f"cannot write {where}: {exc.strerror or exc}") from None
    report = done.report
    if args.json:
        sys.stdout.write(dumps(export_report_dict(report)) + "\n")
    else:
        _print_report(report)
    if done.unknown_facts:
        shown = ", ".join(done.unknown_facts[:10]) + (", ..." if len(done.unknown_facts) > 10 else "")
        print(
            f"warning: {len(done.unknown_facts)} fact id(s) named by decisions are not in {args.ckf}: {visible(shown)}",
            file=sys.stderr,
        )
    if kb.skipped:
        print(
            f"warning: {len(kb.skipped)} bad fact(s) of {args.ckf} were skipped (--lenient) and are not in {args.out}",
            file=sys.stderr,
        )
    if not chain.ok:
        where = "" if chain.first_broken_id is None else f" at entry #{chain.first_broken_id}"
        print(
            f"warning: the decision log's hash chain is broken{where} ({visible(chain.reason or '')}); the export "
            "carries the decisions as the log holds them now (crp-inspect triage verify)",
            file=sys.stderr,
        )
    return 1 if args.strict and (report.issues or not chain.ok) else 0


def _print_report(report: ExportReport) -> None:
    """The export report as text: what was written, then every item the CKF does not carry."""
    parts = ", ".join(f"{n} {s}" for s, n in report.changed.items()) or "no status changed"
    n = report.n_facts if report.sdk is None else report.sdk.facts  # a snapshot leaves DELETED / QUARANTINED out
    print(f"wrote {report.path}: {n} facts; {len(report.changes)} fact(s) carry operator decisions ({parts})")
    superseded = sum(1 for c in report.changes if c.superseded_by is not None)
    if report.sdk is not None:
        restored = sum(1 for c in report.changes if c.superseded_by is None and c.status_before == "STALE")
        print(
            f"carried: {superseded} supersession(s) (superseded_by and a 'superseded' event with the operator), "
            f"{restored} restored fact(s); {len(report.dismissed)} dismissed pair(s), listed in the report only"
        )
    else:
        print(
            f"carried: {superseded} superseded fact(s) (status, metadata.superseded_by, metadata.triage), "
            f"{len(report.changes) - superseded} status mark(s) only; {len(report.dismissed)} dismissed pair(s), "
            "listed in the report only"
        )
    if report.sdk is not None:
        _print_sdk(report.sdk)
    for v in report.replaced:
        print(
            f"replaced: {visible(v.fact_id)} metadata.{visible(v.key)} was {json.dumps(v.old, ensure_ascii=False)}, "
            f"now {json.dumps(v.new, ensure_ascii=False)}"
        )
    for title, items in (
        ("conflicting decisions", report.conflicts),
        ("decisions naming unknown facts", report.unknown),
        ("not expressible in the CKF", report.inexpressible),
    ):
        if items:
            print(f"{title} ({len(items)}):")
            for i in items:
                print(f"  {i.code}: {visible(i.message)}")
    if report.report_path:
        print(f"report: {visible(report.report_path)}")


def _print_sdk(w: SdkWritten) -> None:
    """What an SDK export's snapshot holds (the report's ``sdk`` section) as text."""
    print(
        f"crprotocol snapshot: {w.facts} fact(s), {w.edges} edge(s), {w.events_added} operator event(s) appended; "
        f"checksum {w.algorithm} {w.header.get('checksum')}"
        + ("; the snapshot's HMAC signature kept (payload unchanged)" if w.signature_kept else "")
    )
    if w.left_out:
        shown = ", ".join(w.left_out[:10]) + (", ..." if len(w.left_out) > 10 else "")
        print(
            f"left out of the SDK's store: {len(w.left_out)} DELETED / QUARANTINED fact(s) ({visible(shown)}), "
            f"{w.edges_left_out} edge(s) touching them"
        )
    for what, n in w.lost:
        print(f"not in the SDK format: {visible(what)} ({n} fact(s))")


def _decisions(args: argparse.Namespace) -> int:
    with DecisionStore(db_path(args), create=False, readonly=True) as store:
        rows = store.history(pair_key(*args.pair)) if args.pair else store.all()
    if args.json:
        sys.stdout.write(export_json(rows))
    elif args.jsonl:
        sys.stdout.write(jsonl_lines(rows))
    elif args.csv:
        sys.stdout.write(export_csv(rows))
    else:
        if not rows:
            print("no decisions")
        for d in rows:  # data drawn visibly: an escape in a name or note cannot drive the terminal
            v = visible
            what = {
                "accept": f"accept (winner {v(d.winner)})" if d.winner else "accept",
                "override": f"override: {v(d.winner)} wins",
                "dismiss": "dismiss: not a conflict",
                "mark_status": f"mark {v(d.target_fact)} {v(d.new_status)}",
                "revert": f"revert #{d.reverts}",
            }.get(d.kind, v(d.kind))
            note = f"  note: {v(d.note)}" if d.note else ""
            print(f"#{d.id} {v(d.decided_at)} {v(d.operator)}: [{v(d.fact_a)} | {v(d.fact_b)}] {what}{note}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from crp_core.triage.quality import detector_quality, detector_quality_dict

    config = layered_config(args.config, None, args.set_args)
    kb = load_input_ckf(
        args.ckf, lenient=args.lenient, max_bytes=config.ckf_max_bytes, source_map=input_source_map(args)
    )
    # decisions apply by fact id whatever the CKF's fingerprint (an edited CKF keeps its triage), as every run
    # applies them: judged the same way here; a decision naming a fact this CKF lacks is counted apart
    with DecisionStore(db_path(args), create=False, readonly=True) as store:
        current = store.current()
        quality = detector_quality(current, kb, config)
        on_kb = [d for d in store.all() if _on(kb, d)]
    team = team_agreement(on_kb, load_team_config().review_quorum)
    if args.json:
        out = {**detector_quality_dict(quality), **team}
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
        return 0
    _print_quality(quality)
    _print_agreement(team)
    return 0


def _on(kb: KnowledgeBase, d: Decision) -> bool:
    """Whether the facts ``d`` names are in ``kb`` (a revert names its pair too)."""
    return kb.get(d.fact_a) is not None and kb.get(d.fact_b) is not None


def team_agreement(decisions: list[Decision], quorum: int) -> dict[str, Any]:
    """The team's side of ``triage stats``: agreement per pair of operators (percent and Cohen's kappa over
    the pairs both took a position on) and the pairs' review states under the team's quorum."""
    states = review_statuses(decisions, quorum)
    return {
        "agreement": [
            {
                "operator_a": a.operator_a,
                "operator_b": a.operator_b,
                "shared_pairs": a.shared,
                "agreed": a.agreed,
                "percent": a.percent,
                "kappa": a.kappa,
            }
            for a in operator_agreement(decisions)
        ],
        "review": {"quorum": quorum, **{s: sum(v == s for v in states.values()) for s in REVIEW_STATES}},
    }


def _print_agreement(team: dict[str, Any]) -> None:
    review = team["review"]
    counts = ", ".join(f"{review[s]} {s}" for s in REVIEW_STATES)
    print(f"review (quorum {review['quorum']}): {counts}")
    for a in team["agreement"]:
        kappa = "-" if a["kappa"] is None else f"{a['kappa']:.3f}"
        print(
            f"  {visible(a['operator_a'])} / {visible(a['operator_b'])}: {a['agreed']} of {a['shared_pairs']} "
            f"shared pairs agree ({a['percent']:.0%}), kappa {kappa}"
        )


def _print_quality(quality: DetectorQuality) -> None:
    total = quality.precision
    print(
        f"decided pairs the detector flags: {len(quality.flagged)} ({quality.confirmed} confirmed, "
        f"{quality.dismissed} dismissed); precision {'-' if total is None else f'{total:.3f}'}"
    )
    if quality.unflagged:
        print(f"decided pairs whose texts the detector does not flag today: {quality.unflagged} (not counted)")
    for q in quality.per_pattern:
        prec = "-" if q.precision is None else f"{q.precision:.3f}"
        print(f"  {visible(q.pattern):<20} confirmed {q.confirmed:>4}  dismissed {q.dismissed:>4}  precision {prec}")
    if quality.overruled:
        print("overruled by operators:")
        for p in quality.overruled:
            what = "dismissed (not a conflict)" if p.kind == "dismiss" else f"override: {p.winner} wins"
            print(
                f"  [{visible(p.fact_a)} | {visible(p.fact_b)}] {'/'.join(p.patterns) or 'no pattern today'}: "
                f"{visible(what)}" + (f"  note: {visible(p.note)}" if p.note else "")
            )
    if quality.unknown:
        print(f"{len(quality.unknown)} decided pair(s) name facts this CKF does not hold")


def _verify(args: argparse.Namespace) -> int:
    with DecisionStore(db_path(args), create=False, readonly=True) as store:
        verdict = store.verify(kept_head=args.head)
    if args.json:
        sys.stdout.write(json.dumps(verdict.to_dict(), ensure_ascii=False) + "\n")
    else:
        _print_verdict(verdict)
    return 0 if verdict.ok else 1


def _print_verdict(verdict: ChainVerdict) -> None:
    if verdict.ok:
        print(f"chain ok: {verdict.entries} entries; head {verdict.head} (keep it elsewhere: verify --head checks it)")
    elif verdict.first_broken_id is None:
        print(f"chain BROKEN: {verdict.reason}")
    else:
        print(
            f"chain BROKEN at entry #{verdict.first_broken_id} (entry {verdict.entries} of {verdict.total} in id "
            f"order; the {verdict.entries - 1} before it verify): {verdict.reason}"
        )

"""``crp-inspect import-sdk``: convert a crprotocol SDK snapshot into a CKF file once
(docs/decisions/sdk-snapshots.md).

``import-sdk SNAPSHOT --out ckf.jsonl [--map mapping.toml] [--source-type T] [--lenient]``: the
snapshot is read as every ``--ckf`` reads it (:mod:`crp_core.io.ckf.sdk`), the SDK's edges go into
``metadata.sdk_edges`` of their source fact, the CKF is written whole or not at all in the format of
``--out``'s extension, and the summary (mapped, defaulted, dropped) and every warning are printed.
Exit status 0 when written, 2 on bad input (the snapshot, the mapping or the output path).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from crp_core.cli.common import add_max_bytes_arg
from crp_core.config import SOURCE_TYPES

if TYPE_CHECKING:
    from crp_core.cli.common import Subparsers


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "import-sdk",
        help="convert a crprotocol SDK snapshot (ContextualKnowledgeFabric.persist) into a CKF",
        description="Convert a crprotocol SDK cold-storage snapshot into a CKF file (.jsonl, .json or .csv by "
        "the extension of --out), printing what was mapped, defaulted and dropped.",
    )
    p.add_argument("snapshot", metavar="SNAPSHOT", help="the SDK snapshot (.json)")
    p.add_argument("--out", required=True, metavar="PATH", help="the CKF to write (.jsonl, .json or .csv)")
    p.add_argument(
        "--map",
        metavar="TOML",
        default=None,
        dest="mapping",
        help="source-type mapping: [[rule]] tables by category / source_window_id glob / "
        "extraction_stage, first match wins",
    )
    p.add_argument(
        "--source-type",
        choices=SOURCE_TYPES,
        default=None,
        metavar="TYPE",
        help="source type of the facts no mapping rule matches (default: the mapping's default, else unverified)",
    )
    p.add_argument("--lenient", action="store_true", help="skip bad facts and edges instead of refusing")
    add_max_bytes_arg(p, "snapshot")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from crp_core.cli.common import check_writable, visible
    from crp_core.errors import ConfigError
    from crp_core.io.ckf.sdk import load_sdk_snapshot, with_edges_in_metadata
    from crp_core.io.ckf.sdk_map import SourceTypeMap, load_source_map
    from crp_core.io.ckf.write import ckf_format, write_ckf

    if ckf_format(args.out) in (None, "dir"):
        raise ConfigError(f"--out: {args.out} needs the extension .jsonl, .json or .csv")
    out = check_writable(args.out, "--out")
    smap = load_source_map(args.mapping) if args.mapping else SourceTypeMap()
    smap = smap.with_default(args.source_type)
    kb = load_sdk_snapshot(args.snapshot, lenient=args.lenient, max_bytes=args.max_bytes, source_map=smap)
    try:
        write_ckf(with_edges_in_metadata(kb), out)
    except OSError as exc:
        raise ConfigError(f"--out: cannot write {out}: {exc.strerror or exc}") from None
    assert kb.imported is not None
    print(
        f"{visible(args.snapshot)} -> {visible(out)}: {len(kb)} fact(s), {len(kb.edges)} edge(s) "
        f"(in metadata.sdk_edges)"
    )
    for line in kb.imported.lines():
        print("  " + visible(line))
    for p in kb.skipped:
        print(f"  skipped: {visible(p)}")
    for p in kb.warnings:
        print(f"crp-inspect: warning: {visible(p)}", file=sys.stderr)
    return 0

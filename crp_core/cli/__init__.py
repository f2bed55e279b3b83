"""``crp-inspect`` command line (docs/reference/reports.md).

Each sub-command lives in its own module (``crp_core/cli/<name>.py``) exposing
``register(subparsers)``; the handler it registers returns the process exit status.
Errors derived from :class:`crp_core.errors.CRPError` are printed as plain messages on stderr
(exit status 2), never as tracebacks; warnings as ``crp-inspect: warning: <message>``, without the
library's file and line.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable

from crp_core.cli import (
    check,
    conflicts,
    dashboard,
    embed,
    fanout,
    history,
    import_sdk,
    report,
    run,
    session,
    sweep,
    triage,
    tune,
    validate,
)
from crp_core.errors import CRPError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crp-inspect", description="Inspect CRP-SPEC-027 retrieval over a CKF knowledge base."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in (
        validate,
        run,
        fanout,
        conflicts,
        embed,
        triage,
        check,
        tune,
        sweep,
        history,
        import_sdk,
        session,
        report,
        dashboard,
    ):
        module.register(sub)
    return parser


#: the package folder: a warning raised from a file under it is this tool's own, shown as a message
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _warning_shower(
    shown: Callable[..., None],
) -> Callable[..., None]:
    """Show this tool's own warnings as a user reads them (the message, not the module and line that raised
    it); any other library's warnings as ``shown`` does."""

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, *rest: object) -> None:
        if not os.path.abspath(filename).startswith(_PACKAGE_DIR):
            shown(message, category, filename, lineno, *rest)
            return
        try:
            print(f"crp-inspect: warning: {message}", file=sys.stderr)
        except (OSError, ValueError):
            pass  # stderr closed or gone: a warning is not worth a failure

    return show


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    shown = warnings.showwarning
    warnings.showwarning = _warning_shower(shown)
    try:
        return _handle(args)
    finally:
        warnings.showwarning = shown


def _handle(args: argparse.Namespace) -> int:
    try:
        return int(args.handler(args) or 0)
    except CRPError as exc:
        print(f"crp-inspect: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            "crp-inspect: error: out of memory; lower the settings that size the work (candidate_k, "
            "graph_k, ckf_max_bytes) or give the process more memory",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0

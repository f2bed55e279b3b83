"""Arguments shared by the sub-commands that load a CKF (``run``, ``fanout``, ``conflicts``)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crp_core.records import Clamp

    #: what each sub-command's ``register`` receives: ``ArgumentParser.add_subparsers()``
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def add_input_args(p: argparse.ArgumentParser, *, scenario: bool, now_help: str) -> None:
    """``--ckf`` [``--scenario``] ``--config`` ``--set`` (repeatable, into ``set_args``) ``--now``
    ``--lenient`` ``--cache-dir``. Configuration precedence: defaults < --config < the scenario's
    config < --set (``crp_core.config.layered_config``)."""
    p.add_argument("--ckf", required=True, metavar="PATH", help="CKF file (.jsonl/.json/.csv) or directory")
    if scenario:
        p.add_argument("--scenario", required=True, metavar="PATH", help="scenario file (.json or .toml)")
    p.add_argument("--config", metavar="TOML", default=None, help="configuration file (keys of SPEC_NOTES §5)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set_args",
                   help="override one configuration key (repeatable; dotted keys for tables, "
                        "e.g. ttl_days.news=60)")
    p.add_argument("--now", metavar="ISO", default=None, help=now_help)
    p.add_argument("--lenient", action="store_true", help="skip bad facts of the CKF instead of refusing it")
    p.add_argument("--cache-dir", metavar="DIR", default=None, help="embedding / index cache directory")


def warn_clamps(clamps: Iterable[Clamp]) -> None:
    """Each setting the run used at another value than asked (``PipelineResult.clamps``), one warning
    line on stderr (the JSON report carries them as ``clamps``; docs/decisions/hardening.md)."""
    for c in clamps:
        print(f"crp-inspect: warning: {c.message}", file=sys.stderr)

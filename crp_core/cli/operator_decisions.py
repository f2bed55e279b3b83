"""The operator decisions a command applies: ``--triage-db`` / ``--no-triage-db``, one rule for every command
that runs the pipeline (run, check, tune, sweep, report), the rule the dashboard follows.

The decisions in force come from ``--triage-db`` (a file or a ``postgresql://`` URL; it must exist), else from
``$CRP_INSPECT_TRIAGE_DB`` when that names an existing store (a file that is not there means no decision yet,
not an error), else none; ``--no-triage-db`` applies none. Decisions taken from the environment are said on
stderr, so a number that moved because a colleague decided a pair is never a mystery. Reports carry
:func:`decisions_doc` (docs/decisions/triage.md "Decisions in every command").
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crp_core.errors import ConfigError, CRPError

if TYPE_CHECKING:
    from crp_core.corpus.prepared import Corpus
    from crp_core.decisions import DecisionSet
    from crp_core.model import KnowledgeBase


@dataclass(frozen=True)
class OperatorDecisions:
    """The decisions a command runs with: the set (None: no store), the store as it may be printed (a URL
    without its password), where it was named (``--triage-db`` or ``$CRP_INSPECT_TRIAGE_DB``) and how many
    decisions are in force (pair decisions and status changes)."""

    decisions: DecisionSet | None = None
    store: str | None = None
    named_by: str | None = None
    in_force: int = 0


def add_triage_db_args(p: argparse.ArgumentParser) -> None:
    """``--triage-db PATH|URL`` or ``--no-triage-db``."""
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--triage-db",
        metavar="PATH|URL",
        default=None,
        help="apply the operator decisions of this triage database (read-only; default: $CRP_INSPECT_TRIAGE_DB "
        "when it names an existing store)",
    )
    g.add_argument(
        "--no-triage-db",
        action="store_true",
        help="apply no operator decision, even where $CRP_INSPECT_TRIAGE_DB names a store",
    )


def _named_store(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(store, who named it): ``--triage-db``, else the environment's store when it exists, else (None, None)."""
    if getattr(args, "no_triage_db", False):
        return None, None
    if getattr(args, "triage_db", None):
        return str(args.triage_db), "--triage-db"
    from crp_core.triage import default_db_path
    from crp_core.triage.pg_store import is_postgres_url
    from crp_core.triage.store import DB_PATH_ENV

    env = default_db_path()
    if env and (is_postgres_url(env) or os.path.exists(env)):
        return env, f"${DB_PATH_ENV}"
    return None, None


def operator_decisions(args: argparse.Namespace, kb: KnowledgeBase) -> OperatorDecisions:
    """The decisions in force on ``kb`` (its fingerprint) under the rule above; a store that cannot be read
    raises its CRPError (a missing ``--triage-db`` file, a database that went away)."""
    db, named_by = _named_store(args)
    if db is None:
        return OperatorDecisions()
    from crp_core.analysis.report_inputs import decision_lines
    from crp_core.triage import DecisionStore

    try:
        with DecisionStore(db, create=False, readonly=True) as store:
            decisions = store.current(ckf_fingerprint=kb.fingerprint)
            shown = store.path
    except CRPError as exc:
        raise ConfigError(
            f"the operator decisions of {named_by} cannot be read: {exc} (--no-triage-db runs without them)"
        ) from None
    in_force = decision_lines(decisions)[1]
    if named_by != "--triage-db" and in_force:
        from crp_core.cli.common import visible

        sys.stderr.write(
            f"crp-inspect: note: {in_force} operator decision(s) in force from {named_by} ({visible(shown)}); "
            "--no-triage-db applies none\n"
        )
    return OperatorDecisions(decisions, shown, named_by, in_force)


def with_decisions(corpus: Corpus, od: OperatorDecisions) -> Corpus:
    """``corpus`` with the status decisions of ``od`` applied (the corpus itself when there are none)."""
    if od.decisions is None:
        return corpus
    from crp_core.triage import apply_to_corpus

    return apply_to_corpus(corpus, od.decisions)


def decisions_doc(od: OperatorDecisions) -> dict[str, object]:
    """What a JSON report says of the decisions it ran with."""
    return {"store": od.store, "named_by": od.named_by, "in_force": od.in_force}

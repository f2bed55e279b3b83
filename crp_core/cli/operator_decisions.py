"""The operator decisions a command applies: ``--triage-db`` / ``--no-triage-db``, one rule for every command
that runs the pipeline (run, fanout, check, tune, sweep, report) and of the whole-CKF scan (conflicts), the rule
the dashboard follows.

The store is ``--triage-db`` (a file or a ``postgresql://`` URL; it must exist), else the one
``$CRP_INSPECT_TRIAGE_DB`` names, else ``./.crp_triage.sqlite`` (the dashboard's and ``history``'s default),
each when it exists (a file nobody created yet means no decision, not an error); ``--no-triage-db`` applies
none. As in the dashboard, every decision of the store is applied by fact id, whatever CKF fingerprint it was
stamped with (docs/decisions/triage.md "In force"); what counts as in force on this CKF is what names its
facts. A store the command found by itself is said on stderr, so a number that moved because a colleague
decided a pair is never a mystery; reports carry :func:`decisions_doc` (docs/decisions/triage.md "Decisions
in every command").
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crp_core.cli.common import visible
from crp_core.errors import ConfigError, CRPError

if TYPE_CHECKING:
    from crp_core.corpus.prepared import Corpus
    from crp_core.decisions import DecisionSet
    from crp_core.model import KnowledgeBase

#: the store a command finds by itself when neither the flag nor the environment names one
DEFAULT_STORE = ".crp_triage.sqlite"


@dataclass(frozen=True)
class OperatorDecisions:
    """The decisions a command runs with: the set (None: no store), the store as it may be printed (a URL
    without its password), where it was named (``--triage-db``, ``$CRP_INSPECT_TRIAGE_DB`` or ``default``),
    how many decisions are in force on this CKF (pair decisions on two of its facts, status marks on one)
    and their digest (equal decisions, equal digests; "" for none)."""

    decisions: DecisionSet | None = None
    store: str | None = None
    named_by: str | None = None
    in_force: int = 0
    digest: str = ""


def add_triage_db_args(p: argparse.ArgumentParser) -> None:
    """``--triage-db PATH|URL`` or ``--no-triage-db``."""
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--triage-db",
        metavar="PATH|URL",
        default=None,
        help="apply the operator decisions of this triage database (read-only; default: $CRP_INSPECT_TRIAGE_DB, "
        f"else ./{DEFAULT_STORE}, when it exists)",
    )
    g.add_argument(
        "--no-triage-db",
        action="store_true",
        help="apply no operator decision, whatever store exists",
    )


def _named_store(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(store, who named it) under the rule above, or (None, None)."""
    if getattr(args, "no_triage_db", False):
        return None, None
    given = getattr(args, "triage_db", None)
    if given is not None:
        if not str(given).strip():
            raise ConfigError("--triage-db is empty: name a database file or URL, or pass --no-triage-db")
        return str(given), "--triage-db"
    from crp_core.triage import default_db_path
    from crp_core.triage.pg_store import is_postgres_url
    from crp_core.triage.store import DB_PATH_ENV

    env = default_db_path()
    if env:
        if is_postgres_url(env) or os.path.exists(env):
            return env, f"${DB_PATH_ENV}"
        # no store yet (the dashboard creates it at the first decision), or a mistyped name: said, not fatal
        sys.stderr.write(
            f"crp-inspect: note: ${DB_PATH_ENV} names {visible(env)}, which does not exist: no operator decision "
            "applied\n"
        )
        return None, None
    return (DEFAULT_STORE, "default") if os.path.exists(DEFAULT_STORE) else (None, None)


def operator_decisions(args: argparse.Namespace, kb: KnowledgeBase) -> OperatorDecisions:
    """The decisions in force on ``kb`` under the rule above; a store that cannot be read raises a ConfigError
    naming where it came from and the way out (a missing ``--triage-db`` file, a database that went away)."""
    db, named_by = _named_store(args)
    if db is None:
        return OperatorDecisions()
    from crp_core.triage import DecisionStore

    try:
        with DecisionStore(db, create=False, readonly=True) as store:
            decisions = store.current()
            shown = store.path
    except CRPError as exc:
        where = f"{named_by} ({db})" if named_by == "default" else named_by
        raise ConfigError(
            f"the operator decisions of {where} cannot be read: {exc} (--no-triage-db runs without them)"
        ) from None
    in_force, digest = decisions.in_force_on(kb)
    if named_by != "--triage-db" and in_force:
        origin = visible(shown) if named_by == "default" else f"{named_by} ({visible(shown)})"
        sys.stderr.write(
            f"crp-inspect: note: {in_force} operator decision(s) in force from {origin}; --no-triage-db applies none\n"
        )
    return OperatorDecisions(decisions, shown, named_by, in_force, digest)


def with_decisions(corpus: Corpus, od: OperatorDecisions) -> Corpus:
    """``corpus`` with the status decisions of ``od`` applied (the corpus itself when there are none)."""
    if od.decisions is None:
        return corpus
    from crp_core.triage import apply_to_corpus

    return apply_to_corpus(corpus, od.decisions)


def decisions_doc(od: OperatorDecisions) -> dict[str, object]:
    """What a JSON report says of the decisions it ran with."""
    from crp_core.decisions import decisions_record

    return decisions_record(od.store, od.named_by, od.in_force, od.digest)


def decisions_line(doc: Mapping[str, object]) -> str:
    """The line a text output gives the decisions, from what its report carries (:func:`decisions_doc`; ""
    without a store)."""
    if doc.get("store") is None:
        return ""
    return f"operator decisions: {doc['in_force']} in force from {visible(doc['store'])}\n"

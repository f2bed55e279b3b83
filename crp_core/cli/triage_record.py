"""``crp-inspect triage record``: one operator decision from the terminal (docs/reference/cli.md#triage).

The decision is checked against the CKF and stamped with its name and fingerprint, the OS user and origin
``cli``; an accept without ``--winner`` names the winner by authority under the command's configuration
(``--config``, ``--set``: what the team's runs arbitrate with); a decision recorded over another operator's
without ``--based-on`` says which it replaced; one on two facts the detector, as configured, does not flag today
is kept with a note. Also the store path every ``triage`` command takes (``--db`` or ``$CRP_INSPECT_TRIAGE_DB``).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from dataclasses import replace

from crp_core.cli.common import input_source_map, load_input_ckf, now_arg, visible
from crp_core.config import CRPConfig, layered_config
from crp_core.decisions import PAIR_KINDS, DecisionError, StaleDecisionError, validate_decision
from crp_core.errors import CRPError
from crp_core.io.timeparse import format_timestamp
from crp_core.model import KnowledgeBase
from crp_core.triage import (
    DB_PATH_ENV,
    Decision,
    DecisionStore,
    default_db_path,
    load_roles,
    load_team_config,
    same_decision,
)


class UsageError(CRPError):
    """A ``triage`` command given what it cannot use (exit 2, one message)."""


def db_path(args: argparse.Namespace) -> str:
    """The decision database of a ``triage`` command: ``--db``, else ``$CRP_INSPECT_TRIAGE_DB``."""
    path = args.db or default_db_path()
    if not path:
        raise UsageError(f"give --db PATH (or set ${DB_PATH_ENV})")
    return path


def _os_user() -> str | None:
    """The operating-system user running the command (None when it cannot be told)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        return None


def record_command(args: argparse.Namespace) -> int:
    """``triage record``: check, stamp and store one decision; print it as one JSON line."""
    a, b = args.pair
    config = layered_config(args.config, None, args.set_args)
    kb = load_input_ckf(args.ckf, lenient=False, max_bytes=config.ckf_max_bytes, source_map=input_source_map(args))
    roles = load_roles(args.roles) if args.roles else load_team_config().roles
    winner, said = _accepted_winner(args, kb, config)
    decision = Decision.new(
        a,
        b,
        args.kind,
        args.operator,
        winner=winner,
        target_fact=args.fact,
        new_status=args.status,
        note=args.note,
        reverts=args.reverts,
        based_on=args.based_on,
        origin="cli",
        os_user=_os_user(),
    )
    with DecisionStore(db_path(args), roles=roles) as store:
        latest = _repeated(store, decision, kb.fingerprint)
        if latest is not None:
            print(json.dumps(latest.to_dict(), ensure_ascii=False), flush=True)
            print(f"note: the same as the pair's latest decision #{latest.id}; nothing recorded", file=sys.stderr)
            return 0
        try:
            done = store.record(decision, kb=kb)
        except StaleDecisionError as exc:
            raise CRPError(f"{exc} (to record yours over it: --based-on {exc.latest.id})") from None
        # read once the store took the decision (its checks refuse ids a query could not carry)
        before = store.history((a, b)) if args.based_on is None and done.kind in PAIR_KINDS else []
    print(json.dumps(done.to_dict(), ensure_ascii=False), flush=True)
    theirs = [d for d in before if (d.id or 0) < (done.id or 0) and d.operator != done.operator]
    if theirs:  # without --based-on nothing checks what the operator saw: say what this one replaced
        last = theirs[-1]
        print(
            f"note: recorded over #{last.id} by {visible(last.operator)} ({last.kind}), which you did not name with "
            f"--based-on; with --based-on ID a decision that arrived since ID is refused instead",
            file=sys.stderr,
        )
    if said:
        print(said, file=sys.stderr)
    unflagged = _unflagged_note(kb, done, config)
    if unflagged:
        print(unflagged, file=sys.stderr)
    return 0


def _accepted_winner(args: argparse.Namespace, kb: KnowledgeBase, config: CRPConfig) -> tuple[str | None, str | None]:
    """``--winner``, or for an accept without one the winner by authority at ``--now`` (else now) under
    ``config`` (the command's ``--config`` / ``--set``: the configuration the team's runs arbitrate with, so
    the recorded winner is the one they suppress the other for), with a note saying so: stored without a winner,
    an accept read as an accepted tie in the exports while the runs suppressed a loser."""
    if args.kind != "accept" or args.winner is not None:
        return args.winner, None
    a, b = args.pair
    if kb.get(a) is None or kb.get(b) is None:
        return None, None  # the store refuses the decision, naming the fact
    from datetime import UTC, datetime

    from crp_core.stages.contradictions.arbitration import winner_by_authority

    when = now_arg(args.now)
    winner = winner_by_authority(kb, a, b, config, when or datetime.now(UTC))
    shown = "a tie (no winner)" if winner is None else f"winner {visible(winner)}"
    at = "now" if when is None else f"at {format_timestamp(when)}"
    given = "default configuration" if not (args.config or args.set_args) else "the configuration of --config / --set"
    return winner, f"note: accept records the arbitration by authority {at}, {given}: {shown}"


def _unflagged_note(kb: KnowledgeBase, decision: Decision, config: CRPConfig) -> str | None:
    """A note when a pair decision names two facts the detector does not flag today (with ``config``'s
    ``detector_learned``), or whose cosine is not above its ``contradiction_similarity``: the decision is kept, the
    queue does not hold the pair, and the detector's precision does not count it (crp_core.triage.quality). An
    accept or override still acts in every run that selects both facts (a decided pair is a conflict); a
    dismissal of a pair no run pairs changes nothing."""
    from crp_core.stages.contradictions.values import values_conflict

    if decision.kind not in PAIR_KINDS:
        return None
    fa, fb = kb.get(decision.fact_a), kb.get(decision.fact_b)
    if fa is None or fb is None:
        return None
    pair = f"{visible(decision.fact_a)} and {visible(decision.fact_b)}"
    effect = (
        "no run pairs them, so it changes nothing"
        if decision.kind == "dismiss"
        else "every run that selects both facts arbitrates them by it"
    )
    if not values_conflict(fa.content, fb.content, config.detector_learned):
        return (
            f"note: the detector does not flag the texts of {pair} today: the decision is kept ({effect}), but "
            "the triage queue does not hold this pair and the detector's precision (triage stats) does not count it"
        )
    cos = _cosine(kb, decision.fact_a, decision.fact_b)
    if cos is not None and cos <= config.contradiction_similarity:
        threshold = f"the cosine of {pair} is {cos:.3f}, not above contradiction_similarity"
        if decision.kind == "dismiss":
            return (
                f"note: {threshold} {config.contradiction_similarity:g}: runs and the scan do not pair them; the "
                "dismissal is kept, a run no longer reports them as a near conflict, and stage 4 leaves them both "
                "where that setting is lower"
            )
        return (
            f"note: {threshold} {config.contradiction_similarity:g}: the decision is kept ({effect}), but the "
            "scan and the triage queue do not pair them"
        )
    return None


def _cosine(kb: KnowledgeBase, a: str, b: str) -> float | None:
    """The cosine of two facts' vectors in the CKF, or None when it carries none (they are embedded later)."""
    import numpy as np

    if kb.embeddings is None:
        return None
    va, vb = (np.asarray(kb.embeddings[kb.index_of(f)], dtype=np.float64) for f in (a, b))
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / norm if norm else None


def _repeated(store: DecisionStore, decision: Decision, fingerprint: str) -> Decision | None:
    """The pair's latest decision when ``decision`` says the same (a command retried after its answer was
    lost records nothing twice), else None. A decision the store will refuse is left to it."""
    try:
        stamped = validate_decision(replace(decision, ckf_fingerprint=fingerprint))
    except DecisionError:
        return None
    history = store.history((decision.fact_a, decision.fact_b))
    return history[-1] if history and same_decision(history[-1], stamped) else None

"""What a stakeholder report ran on, so a reader can check it and a colleague can reproduce it.

A report (``crp_core.analysis.html_report``) carries a :class:`ReportInputs`: the CKF by name and
fingerprint, the scenarios (name, question, instant, file digest when read from a file), the
configuration keys that differ from the defaults, the operator decisions in force (who, when, which
pair, what) and the command line that writes the same report again. Decisions are listed as people's
decisions, never as results of Fact Authority Resolution (docs/decisions/triage.md).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crp_core.analysis.compare import fmt_value

if TYPE_CHECKING:
    from crp_core.config import CRPConfig
    from crp_core.decisions import Decision, DecisionSet

__all__ = [
    "DecisionLine",
    "ScenarioInput",
    "ReportInputs",
    "decision_lines",
    "config_changes",
    "reproduce_command",
    "set_args_for",
]

#: decisions listed by a report at most (the count says how many more are in force)
MAX_DECISION_LINES = 200


@dataclass(frozen=True)
class DecisionLine:
    """One operator decision in force, as a report lists it."""

    decision_id: int | None
    fact_a: str
    fact_b: str
    kind: str  # accept | override | dismiss | mark_status
    winner: str | None  # override / accept: the fact that wins
    target_fact: str | None  # mark_status: the fact whose status changed
    new_status: str | None
    operator: str
    role: str
    origin: str
    decided_at: str | None
    note: str

    @property
    def what(self) -> str:
        """The decision in a few words: "override: lum-0080 wins", "mark_status: f1 STALE"."""
        if self.kind == "mark_status":
            return f"mark_status: {self.target_fact} {self.new_status}"
        if self.kind == "dismiss":
            return "dismiss: not a conflict"
        return f"{self.kind}: {self.winner} wins" if self.winner else f"{self.kind}: a tie"


@dataclass(frozen=True)
class ScenarioInput:
    """One scenario a report ran: its name, question, instant, (read from a file) the file's digest, and
    the keys its own ``config`` table sets over the report's configuration: (key, report value, its value)."""

    name: str
    query: str
    now: str
    fanout_width: int
    file_digest: str | None = None
    own_config: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class ReportInputs:
    """Everything a report ran on (see the module docstring)."""

    ckf_label: str
    ckf_fingerprint: str
    ckf_facts: int
    scenarios: tuple[ScenarioInput, ...]
    config_changes: tuple[tuple[str, str, str], ...]  # (key, default as printed, value as printed)
    decisions: tuple[DecisionLine, ...]
    decisions_in_force: int  # decisions in force (decisions lists at most MAX_DECISION_LINES of them)
    decisions_source: str  # "triage database PATH", or "" when no decision applied
    command: str  # the command line that writes this report again ("" when there is none)


def _line(d: Decision) -> DecisionLine:
    return DecisionLine(
        d.id,
        d.fact_a,
        d.fact_b,
        d.kind,
        d.winner,
        d.target_fact,
        d.new_status,
        d.operator,
        d.role,
        d.origin,
        d.decided_at,
        d.note,
    )


def decision_lines(decisions: DecisionSet | None) -> tuple[tuple[DecisionLine, ...], int]:
    """The decisions in force (pair decisions and status changes) in recording order, at most
    :data:`MAX_DECISION_LINES` of them, and how many are in force."""
    if decisions is None:
        return (), 0
    rows = [*decisions.pair_records.values(), *decisions.status_decisions.values()]
    rows.sort(key=lambda d: (d.id is None, d.id or 0, d.decided_at or ""))
    return tuple(_line(d) for d in rows[:MAX_DECISION_LINES]), len(rows)


def config_changes(config: CRPConfig, base: CRPConfig | None = None) -> tuple[tuple[str, str, str], ...]:
    """The keys of ``config`` that differ from ``base`` (the defaults when absent): (key, base value,
    value), as printed."""
    diff = (base if base is not None else type(config)()).diff(config)
    return tuple((k, fmt_value(d), fmt_value(v)) for k, (d, v) in sorted(diff.items()))


def set_args_for(config: CRPConfig) -> tuple[str, ...]:
    """``--set KEY=VALUE`` items giving ``config`` from the defaults, each value exact (a float by its
    shortest round-trip repr, a bool as TOML's true / false), so the command line rebuilds the same config."""

    def value(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return repr(v) if isinstance(v, float) else str(v)

    return tuple(f"{k}={value(v)}" for k, (_d, v) in sorted(type(config)().diff(config).items()))


def reproduce_command(  # noqa: PLR0913  one argument per flag of crp-inspect report
    ckf: str,
    *,
    scenario: str | None = None,
    suite: Sequence[str] = (),
    set_args: Iterable[str] = (),
    config_file: str | None = None,
    now: str | None = None,
    triage_db: str | None = None,
    fanout_width: int | None = None,
    out: str = "report.html",
    no_triage_db: bool = False,
) -> str:
    """The ``crp-inspect report`` command line that writes the same report (each argument shell-quoted);
    ``no_triage_db``: the report ran with no operator decision, so the command says ``--no-triage-db`` (else a
    store found later would apply its decisions and write another report)."""
    argv = ["crp-inspect", "report", "--ckf", ckf]
    argv += ["--scenario", scenario] if scenario else ["--suite", *suite]
    if config_file:
        argv += ["--config", config_file]
    for s in set_args:
        argv += ["--set", s]
    if now:
        argv += ["--now", now]
    if triage_db:
        argv += ["--triage-db", triage_db]
    elif no_triage_db:
        argv.append("--no-triage-db")
    if fanout_width is not None:
        argv += ["--width", str(fanout_width)]
    argv += ["--out", out]
    return shlex.join(argv)

"""``crp_core.analysis.report_inputs``: the decisions a report lists, the configuration changes and
the command line that writes the report again."""

from __future__ import annotations

import shlex

from crp_core.analysis.report_inputs import (
    MAX_DECISION_LINES,
    config_changes,
    decision_lines,
    reproduce_command,
    set_args_for,
)
from crp_core.config import CRPConfig
from crp_core.decisions import Decision, DecisionSet


def _recorded(i: int, d: Decision) -> Decision:
    from dataclasses import replace

    return replace(d, id=i, decided_at=f"2026-01-{i:02d}T00:00:00Z")


def test_decision_lines_in_recording_order_with_the_latest_per_pair():
    log = [
        _recorded(1, Decision.override("a", "b", winner="b", operator="alice")),
        _recorded(2, Decision.mark_status("c", "d", fact="c", status="STALE", operator="bob")),
        _recorded(3, Decision.override("a", "b", winner="a", operator="carol", note="newer docs")),
    ]
    lines, n = decision_lines(DecisionSet.from_decisions(log))
    assert n == 2
    assert [(x.decision_id, x.operator, x.what) for x in lines] == [
        (2, "bob", "mark_status: c STALE"),
        (3, "carol", "override: a wins"),
    ]
    assert decision_lines(None) == ((), 0)


def test_decision_lines_are_capped_and_counted():
    log = [
        _recorded(i + 1, Decision.dismiss(f"x{i:04d}", f"y{i:04d}", operator="op"))
        for i in range(MAX_DECISION_LINES + 5)
    ]
    lines, n = decision_lines(DecisionSet.from_decisions(log))
    assert n == MAX_DECISION_LINES + 5 and len(lines) == MAX_DECISION_LINES
    assert lines[0].what == "dismiss: not a conflict"


def test_config_changes_name_default_and_value():
    c = CRPConfig().with_set_args(["ttl_days.news=60", "candidate_k=80"])
    assert config_changes(c) == (("candidate_k", "50", "80"), ("ttl_days.news", "30", "60"))
    assert config_changes(CRPConfig()) == ()


def test_reproduce_command_quotes_every_argument():
    cmd = reproduce_command(
        "my kb.jsonl", suite=["s one", "s2"], set_args=["ttl_days.news=60"], now="2026-01-01T00:00:00Z",
        triage_db="postgresql://u@h/db", fanout_width=4, out="r.html",
    )  # fmt: skip
    assert shlex.split(cmd) == [
        "crp-inspect", "report", "--ckf", "my kb.jsonl", "--suite", "s one", "s2", "--set", "ttl_days.news=60",
        "--now", "2026-01-01T00:00:00Z", "--triage-db", "postgresql://u@h/db", "--width", "4", "--out", "r.html",
    ]  # fmt: skip
    assert (
        reproduce_command("kb.jsonl", scenario="s.json")
        == "crp-inspect report --ckf kb.jsonl --scenario s.json --out report.html"
    )
    # a report run with no operator decision says so, so a store found later does not change it
    assert (
        reproduce_command("kb.jsonl", scenario="s.json", no_triage_db=True)
        == "crp-inspect report --ckf kb.jsonl --scenario s.json --no-triage-db --out report.html"
    )


def test_set_args_for_rebuild_the_same_config_exactly():
    c = CRPConfig().with_set_args(["ttl_days.news=61.123456789", "candidate_k=80"])
    args = set_args_for(c)
    assert args == ("candidate_k=80", "ttl_days.news=61.123456789")
    assert CRPConfig().with_set_args(args) == c
    assert set_args_for(CRPConfig()) == ()

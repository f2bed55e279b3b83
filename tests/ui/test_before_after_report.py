"""The dashboard's HTML report carries what it ran on, and its command line, run on the same files,
writes a report with the same numbers (``crp_ui.before_after_tab.report_inputs``)."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace

from crp_core import DecisionSet, build_html_report
from crp_core.analysis.baseline import before_after
from crp_core.analysis.suite import load_suite
from crp_core.cli import main
from crp_core.corpus.prepared import prepare_corpus
from crp_core.decisions import Decision
from crp_core.io.ckf import load_ckf
from crp_ui.before_after_tab import report_inputs
from tests.support.suites import write_ckf, write_suite


def _numbers(html: str) -> str:
    return html.split("<h2>The numbers</h2>", 1)[1].split("</table>", 1)[0]


def test_dashboard_report_names_its_inputs_and_its_command_reproduces_the_numbers(tmp_path, monkeypatch):
    ckf, suite_dir = write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite")
    kb = load_ckf(ckf)
    corpus = prepare_corpus(kb)
    item = load_suite(str(suite_dir)).scenarios[0]
    decisions = DecisionSet.from_decisions(
        [replace(Decision.override("A", "B", winner="B", operator="dana"), id=7, decided_at="2026-05-30T10:00:00Z")]
    )
    from crp_core.config import CRPConfig

    config = CRPConfig().with_set_args(["ttl_days.news=61.5"])
    ba = before_after(corpus, item.scenario, config, decisions=decisions)
    inputs = report_inputs(ba, decisions, "s1.json", "kb.jsonl")
    html = build_html_report(ba, ckf_label="kb.jsonl", scenario_name="s1.json", inputs=inputs)
    assert inputs.ckf_fingerprint == kb.fingerprint and inputs.decisions_in_force == 1
    assert "#7" in html and "dana (operator, cli)" in html and "override: B wins" in html
    argv = shlex.split(inputs.command)
    assert argv[:6] == ["crp-inspect", "report", "--ckf", "kb.jsonl", "--scenario", "s1.json"]
    assert "ttl_days.news=61.5" in argv and "--triage-db" not in argv  # read from $CRP_INSPECT_TRIAGE_DB
    # the reader runs it on their copies of the files, with the decisions in their triage database
    (tmp_path / "s1.json").write_bytes((suite_dir / "s1.json").read_bytes())
    from crp_core.triage import DecisionStore

    with DecisionStore(tmp_path / "t.sqlite") as store:
        store.record(Decision.override("A", "B", winner="B", operator="dana", ckf_fingerprint=kb.fingerprint))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "t.sqlite"))
    assert main(argv[1:]) == 0
    again = (tmp_path / argv[-1]).read_text()
    assert _numbers(again) == _numbers(html)
    assert re.search(r"left out in favour of B by", again)

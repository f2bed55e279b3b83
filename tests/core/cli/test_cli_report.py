"""``crp-inspect report``: one scenario or a whole suite as one HTML file, carrying its inputs, the
operator decisions in force stated as people's decisions, and the command that writes it again
(on the tiny suite of ``tests.support.suites``: no model)."""

from __future__ import annotations

import html
import re
import shlex

import pytest

from crp_core.cli import main
from crp_core.decisions import Decision
from crp_core.triage import DecisionStore
from tests.support.suites import write_ckf, write_suite


@pytest.fixture
def files(tmp_path):
    return write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite")


def _text(path) -> str:
    s = open(path, encoding="utf-8").read()
    s = re.sub(r"<svg.*?</svg>|<style>.*?</style>", "", s, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", s)))


def test_one_scenario_report_carries_its_inputs_and_command(files, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CRP_INSPECT_TRIAGE_DB", raising=False)
    ckf, suite = files
    out = tmp_path / "r.html"
    argv = ["report", "--ckf", str(ckf), "--scenario", str(suite / "s1.json"), "--set", "ttl_days.news=60"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "1 scenario(s)" in capsys.readouterr().err
    text = _text(out)
    assert "What this report ran on" in text and "no operator decision applied" in text
    assert "Decisions taken by people" not in text
    assert re.search(r"fingerprint [0-9a-f]{64}", text)
    assert "ttl_days.news 30 60" in text  # key, default, this report
    command = re.search(r"Written again, from the same files, by: (crp-inspect report .*?\.html)", text).group(1)
    assert shlex.split(command)[1:] == [*argv, "--no-triage-db", "--out", str(out)]  # no store: none later either
    # the command writes the same report again (the generation minute aside)
    again = tmp_path / "again.html"
    assert main([*shlex.split(command)[1:-1], str(again)]) == 0
    strip = re.compile(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC|--out \S+|r\.html|again\.html")
    assert strip.sub("", again.read_text()) == strip.sub("", out.read_text())


def test_operator_decision_is_stated_as_a_persons_not_the_algorithms(files, tmp_path, capsys, monkeypatch):
    ckf, suite = files
    db = tmp_path / "t.sqlite"
    from crp_core.io.ckf import load_ckf

    kb = load_ckf(ckf)
    with DecisionStore(db) as store:  # the arbitration keeps A (fresh, official); a person keeps B
        store.record(
            Decision.override("A", "B", winner="B", operator="alice", note="<b>checked</b> by phone",
                              ckf_fingerprint=kb.fingerprint)
        )  # fmt: skip
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(db))
    out = tmp_path / "r.html"
    assert main(["report", "--ckf", str(ckf), "--scenario", str(suite / "s1.json"), "--out", str(out)]) == 0
    assert f"operator decisions: 1 in force from {db}\n" in capsys.readouterr().err  # the text output names it
    raw, text = out.read_text(), _text(out)
    assert "Decisions taken by people" in text
    assert "#1 A | B override: B wins changed this context alice (operator, cli)" in text
    assert "1 operator decision in force from triage database" in text
    assert "<b>checked</b>" not in raw and "&lt;b&gt;checked&lt;/b&gt; by phone" in raw  # data is inert
    assert "left out in favour of B by" in text and "conflict loser to B" not in text
    assert f"--triage-db {db}" in text


def test_suite_report_has_every_scenario(files, tmp_path, capsys):
    ckf, suite = files
    out = tmp_path / "s.html"
    assert (
        main(
            [
                "report",
                "--ckf",
                str(ckf),
                "--suite",
                str(suite),
                "--out",
                str(out),
                "--triage-db",
                str(tmp_path / "none.sqlite"),
            ]
        )
        != 0
    )
    assert "none.sqlite" in capsys.readouterr().err  # a store that is not there is refused, nothing written
    assert not out.exists()
    assert main(["report", "--ckf", str(ckf), "--suite", str(suite), "--out", str(out)]) == 0
    text = _text(out)
    assert "2 scenarios" in text and text.count("Fan-out race → duplicates") == 2
    assert "What reaches the model, 2 scenarios together" in out.read_text()
    assert "--suite " + str(suite) in text


def test_report_needs_one_of_scenario_or_suite(files, tmp_path, capsys):
    ckf, suite = files
    with pytest.raises(SystemExit) as ei:
        main(["report", "--ckf", str(ckf), "--out", str(tmp_path / "r.html")])
    assert ei.value.code == 2
    with pytest.raises(SystemExit):
        main(["report", "--ckf", str(ckf), "--scenario", "a.json", "--suite", str(suite), "--out", "r.html"])
    assert (
        main(
            [
                "report",
                "--ckf",
                str(ckf),
                "--scenario",
                str(suite / "s1.json"),
                "--out",
                str(tmp_path / "no" / "r.html"),
            ]
        )
        == 2
    )
    assert "--out" in capsys.readouterr().err


def test_suite_report_lists_the_suites_config_and_each_scenarios_own_table(tmp_path, capsys, monkeypatch):
    """The configuration table is the suite's (--set), not the first scenario's; a scenario's own
    ``config`` table is listed on its own row (key, the suite's value, its value)."""
    monkeypatch.delenv("CRP_INSPECT_TRIAGE_DB", raising=False)
    from tests.support.suites import scenario_docs

    docs = scenario_docs()
    docs["s1"]["config"] = {"ttl_days": {"news": 7}}
    ckf, suite = write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite", docs)
    out = tmp_path / "s.html"
    argv = ["report", "--ckf", str(ckf), "--suite", str(suite), "--set", "candidate_k=80", "--out", str(out)]
    assert main(argv) == 0
    text = _text(out)
    assert "candidate_k 50 80" in text  # the suite's --set, default then this report
    assert "ttl_days.news 30 7" not in text  # s1's own table is not the report's configuration
    assert "ttl_days.news 30 → 7" in text  # ... it is on s1's row
    assert text.count("ttl_days.news") == 1
    rows = text[text.index("What this report ran on") :]
    assert re.search(r"\bs1 etcd ports and foundation \S+ 0 [0-9a-f]{64} ttl_days\.news 30 → 7 s2 ", rows)
    assert re.search(r"\bs2 etcd peer traffic and data \S+ 0 [0-9a-f]{64} none Configuration ", rows)


@pytest.mark.parametrize("limit", [("--max-bytes", "100"), ("--set", "ckf_max_bytes=100")])
def test_the_ckf_is_read_under_the_reports_own_limit(files, tmp_path, capsys, limit):
    ckf, suite = files
    out = tmp_path / "r.html"
    argv = ["report", "--ckf", str(ckf), "--suite", str(suite), "--out", str(out), *limit]
    assert main(argv) == 2
    assert "over the limit of 100 bytes" in capsys.readouterr().err and not out.exists()

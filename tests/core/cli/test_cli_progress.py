"""CLI progress on a terminal only (crp_core.cli.common.TerminalProgress, prepare_corpus's index notice)."""

from __future__ import annotations

import io
import sys
import time

import numpy as np
import pytest

import crp_core.corpus.prepared as prepared
from crp_core.cli import main
from crp_core.cli.common import TerminalProgress
from crp_core.config import CRPConfig
from tests.support.cli_notes import without_missing_store_note


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_counts_rate_and_eta_on_a_terminal():
    out, clock = FakeTTY(), Clock()
    p = TerminalProgress(stream=out, clock=clock, interval=0.0)
    p(100, 1000)  # the cache held 100: the resumed part
    clock.t = 101.0
    p(164, 1000)  # first batch: the rate starts here
    clock.t = 103.0
    p(564, 1000)  # 400 more in 2 s: 200/s, 436 left -> ETA 2 s
    clock.t = 105.18
    p(1000, 1000)
    lines = out.getvalue().split("\r")[1:]
    assert lines == [
        "embedding 100/1,000 texts (10%)\x1b[K",  # no rate before this run's second reading
        "embedding 164/1,000 texts (16%)\x1b[K",
        "embedding 564/1,000 texts (56%) 200/s ETA 2 s\x1b[K",  # 436 left at 200/s: 2.18 s
        "embedding 1,000/1,000 texts (100%) 200/s in 5.2 s\x1b[K\n",
    ]  # 836 in 4.18 s; 5.18 s in all


def test_redraws_at_most_every_interval():
    out, clock = FakeTTY(), Clock()
    p = TerminalProgress(stream=out, clock=clock, interval=0.5)
    p(0, 10)
    for i in range(1, 10):
        clock.t += 0.125
        p(i, 10)
    assert out.getvalue().count("\r") == 3  # t = 100 (the first reading), 100.5 and 101.0
    p(10, 10)
    assert out.getvalue().endswith("\n") and out.getvalue().count("\r") == 4


def test_nothing_when_not_a_terminal_or_nothing_to_do():
    pipe = io.StringIO()
    p = TerminalProgress(stream=pipe)
    p(0, 10)
    p(10, 10)
    p.note("building the HNSW index for 100,000 facts ...")
    assert pipe.getvalue() == ""
    tty = FakeTTY()
    q = TerminalProgress(stream=tty)
    q(455, 455)  # every vector shipped with the CKF or cached: no line
    q(455, 455)
    assert tty.getvalue() == ""


def test_index_build_over_a_second_is_announced(monkeypatch):
    from crp_core.corpus.index import FactIndex

    real = FactIndex.build

    def slow(*args, **kwargs):
        time.sleep(0.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(FactIndex, "build", staticmethod(slow))
    monkeypatch.setattr(prepared, "INDEX_NOTICE_AFTER_S", 0.1)
    heard: list[str] = []
    x = np.random.default_rng(0).standard_normal((20, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    prepared.load_or_build_index(x, CRPConfig(), None, notify=heard.append)
    assert heard[0] == "building the HNSW index for 20 facts ..."
    assert heard[1].startswith("HNSW index for 20 facts built in ") and heard[1].endswith(" s")
    monkeypatch.setattr(prepared, "INDEX_NOTICE_AFTER_S", 5.0)
    heard.clear()
    prepared.load_or_build_index(x, CRPConfig(), None, notify=heard.append)
    assert heard == []  # a build under the threshold says nothing


def test_cli_json_run_prints_nothing_on_a_non_terminal_stderr(capsys, tmp_path):
    rc = main(
        [
            "run",
            "--ckf",
            "sample_ckf/knowledge_base.jsonl",
            "--scenario",
            "sample_ckf/scenarios/etcd_upgrade.json",
            "--json",
            "--cache-dir",
            str(tmp_path),
        ]
    )
    assert rc == 0
    captured = capsys.readouterr()
    assert without_missing_store_note(captured.err) == "" and captured.out.startswith("{")


@pytest.mark.parametrize(
    ("argv", "label"),
    [
        (["conflicts", "--json"], "conflict scan"),
        (
            ["check", "--suite", "sample_ckf/scenarios", "--json"],
            "suite",
        ),  # 12 scenarios: a one-run suite draws nothing
        (["tune", "--suite", "sample_ckf/scenarios/etcd_upgrade.json", "--trials", "2", "--json"], "tuning"),
    ],
)
def test_long_commands_show_counts_on_a_terminal_stderr(monkeypatch, capsys, tmp_path, argv, label):
    """The whole-CKF scan, a suite run and a tuning study report progress on a terminal's stderr
    (their --json output on stdout is unchanged); the final line says how many in how long."""
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    rc = main([argv[0], "--ckf", "sample_ckf/knowledge_base.jsonl", *argv[1:], "--cache-dir", str(tmp_path)])
    assert rc in (0, 1)  # check exits 1 when a bound breaks: the progress is what is tested here
    finals = [ln for ln in tty.getvalue().split("\r") if ln.startswith(label + " ") and ln.endswith("\n")]
    assert len(finals) == 1, tty.getvalue()
    done, total = finals[0].split(" ")[len(label.split())].split("/")
    assert done == total and int(total.replace(",", "")) > 0 and " in " in finals[0]
    out = capsys.readouterr().out
    assert out.lstrip().startswith(("{", "["))

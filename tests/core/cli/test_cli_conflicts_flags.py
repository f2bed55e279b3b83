"""``crp-inspect conflicts``: the winner's flags (a close margin, both facts expired) in --json and the
summary, with the figures computed by hand."""

from __future__ import annotations

import json

import pytest

from crp_core.cli import main
from tests.core.cli.test_cli_conflicts import ROWS

LATER = "2027-07-01T00:00:00Z"  # F1's 365-day TTL ended 2027-05-01, F2's long before


@pytest.fixture
def ckf(tmp_path):
    path = tmp_path / "kb.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    return str(path)


def _pairs(capsys, ckf, tmp_path, *extra):
    status = main(["conflicts", "--ckf", ckf, "--cache-dir", str(tmp_path / "c"), "--json", *extra])
    out, err = capsys.readouterr()
    assert status == 0, err
    return {(p["fact_a"], p["fact_b"]): p for p in json.loads(out)}


def test_json_carries_the_flags(ckf, tmp_path, capsys):
    pairs = _pairs(capsys, ckf, tmp_path, "--now", "2026-06-01T00:00:00Z")
    won = pairs["F1", "F2"]
    # F1 0.80 x 1.0 x 0.80 = 0.64 ; F2 0.75 x 0.30 x 0.60 = 0.135: margin 0.505, 0.505 / 0.64 of the larger
    assert won["relative_margin"] == pytest.approx(0.505 / 0.64)
    assert won["close_margin"] is False and won["both_expired"] is False
    tie = pairs["G1", "G2"]
    assert tie["relative_margin"] == 0.0 and tie["close_margin"] is False  # a tie is not a close call


def test_both_expired_and_a_close_margin(ckf, tmp_path, capsys):
    pairs = _pairs(capsys, ckf, tmp_path, "--now", LATER)
    won = pairs["F1", "F2"]
    # both at the floor: F1 0.80 x 0.30 x 0.80 = 0.192 ; F2 0.135: relative margin 0.057 / 0.192
    assert won["both_expired"] is True
    assert won["relative_margin"] == pytest.approx(0.057 / 0.192)
    assert won["close_margin"] is False
    pairs = _pairs(capsys, ckf, tmp_path, "--now", LATER, "--set", "winner_margin_warn=0.3")
    assert pairs["F1", "F2"]["close_margin"] is True


def test_the_summary_warns(ckf, tmp_path, capsys):
    argv = ["conflicts", "--ckf", ckf, "--cache-dir", str(tmp_path / "c"), "--now", LATER]
    assert main([*argv, "--set", "winner_margin_warn=0.3"]) == 0
    out = capsys.readouterr().out
    assert (
        "WARNING: close call: the margin 0.0570 is 29.69% of the larger authority, below winner_margin_warn 30.00%"
        in out
    )
    assert "WARNING: both facts expired (past their TTL or STALE)" in out
    assert main([*argv[:-2], "--now", "2026-06-01T00:00:00Z"]) == 0
    assert "WARNING" not in capsys.readouterr().out

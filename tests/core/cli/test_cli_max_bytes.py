"""Every command that reads a CKF has ``--max-bytes``, the flag the size refusal names
(``crp_core.io.ckf.source.LIMIT_SETTING``), and on commands with ``--set`` it is ``ckf_max_bytes``."""

from __future__ import annotations

import argparse
import os

import pytest

from crp_core.cli import build_parser, main
from crp_core.io.ckf.source import LIMIT_SETTING

GOOD = os.path.join(os.path.dirname(__file__), "..", "..", "data", "good", "facts.jsonl")


def _leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _leaves(sub, (*path, name))
    return out or [(path, parser)]


def _reads_ckf(p: argparse.ArgumentParser) -> bool:
    opts = {o for a in p._actions for o in a.option_strings}
    positional = {a.dest for a in p._actions if not a.option_strings}
    return "--ckf" in opts or "snapshot" in positional or "path" in positional


def test_every_ckf_reading_command_has_max_bytes() -> None:
    leaves = [(path, p) for path, p in _leaves(build_parser()) if _reads_ckf(p)]
    assert len(leaves) >= 10  # run, fanout, conflicts, check, tune, session, validate, import-sdk, triage ...
    missing = [
        " ".join(path) for path, p in leaves if "--max-bytes" not in {o for a in p._actions for o in a.option_strings}
    ]
    assert missing == []
    assert "--max-bytes" in LIMIT_SETTING and "ckf_max_bytes" in LIMIT_SETTING


def test_max_bytes_is_the_setting_in_command_line_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conflicts", "--ckf", GOOD, "--max-bytes", "10"]) != 0
    err = capsys.readouterr().err
    assert "over the limit of 10 bytes" in err and "--max-bytes on the command line" in err
    # the later of --set ckf_max_bytes and --max-bytes wins, as two --set would
    assert main(["conflicts", "--ckf", GOOD, "--set", "ckf_max_bytes=10", "--max-bytes", "100000", "--json"]) == 0
    capsys.readouterr()
    assert main(["conflicts", "--ckf", GOOD, "--max-bytes", "100000", "--set", "ckf_max_bytes=10"]) != 0
    assert "over the limit of 10 bytes" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-5", "1e3", "١٠", "ten"])
def test_max_bytes_refuses_what_is_not_a_byte_count(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ei:
        main(["conflicts", "--ckf", GOOD, "--max-bytes", value])
    assert ei.value.code == 2
    assert "--max-bytes" in capsys.readouterr().err


def test_triage_stats_max_bytes_is_the_setting_too(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """``triage stats`` has ``--set``: its ``--max-bytes`` is ``ckf_max_bytes``, the later of the two winning."""
    db = str(tmp_path / "none.sqlite")
    stats = ["triage", "stats", "--db", db, "--ckf", GOOD]
    assert main([*stats, "--set", "ckf_max_bytes=100000", "--max-bytes", "10"]) != 0
    assert "over the limit of 10 bytes" in capsys.readouterr().err
    main([*stats, "--max-bytes", "10", "--set", "ckf_max_bytes=100000"])
    assert "over the limit" not in capsys.readouterr().err

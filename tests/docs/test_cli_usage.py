"""docs/reference/cli.md's usage lines name every option the command takes (``crp-inspect COMMAND --help``):
an option missing from its section's usage lines is missing from the reference a user reads first (a
walk-through found `sweep`'s without `--no-history` and `--history-note`). The options of the section "Options
shared by the commands that load a CKF" count for a usage line that says ``[shared options]``."""

from __future__ import annotations

import argparse
import re

import pytest

from crp_core.cli import build_parser
from tests.support.paths import REPO_ROOT

CLI_MD = (REPO_ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
_LONG = re.compile(r"--[a-z][a-z0-9-]*")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _section(name: str) -> str:
    m = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", CLI_MD, re.S | re.M)
    assert m, f"cli.md has no section '## {name}'"
    return m.group(1)


def _usage_flags(name: str) -> set[str]:
    """The long options of the section's usage lines (backticked lines starting ``crp-inspect NAME``, a usage
    that runs on over lines included), with the shared options when one of them says so."""
    body = _section(name)
    lines = re.findall(rf"`crp-inspect {re.escape(name)}\b[^`]*`", body)
    assert lines, f"section '## {name}' has no usage line"
    text = " ".join(lines)
    flags = set(_LONG.findall(text))
    if "shared options" in text or "[shared options](" in body:
        shared = _section("Options shared by the commands that load a CKF")
        flags |= {f for line in shared.splitlines() if line.startswith("| `--") for f in _LONG.findall(line)}
    return flags


def _documented_commands() -> list[str]:
    """The commands with a section of their own and options of their own (``triage`` has subcommands, each
    documented with its own usage)."""
    return [
        n
        for n, p in _subparsers().items()
        if re.search(rf"^## {re.escape(n)}\n", CLI_MD, re.M)
        and not any(isinstance(a, argparse._SubParsersAction) for a in p._actions)
    ]


@pytest.mark.parametrize("name", _documented_commands())
def test_every_option_of_a_command_is_in_its_usage_lines(name):
    parser = _subparsers()[name]
    flags = {o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
    missing = sorted(flags - _usage_flags(name))
    assert not missing, f"cli.md '## {name}': the usage lines lack {missing}"


def test_the_usage_check_reads_the_usage_lines():
    assert {"--param", "--metric", "--no-history", "--history-note", "--ckf", "--set"} <= _usage_flags("sweep")
    assert len(_documented_commands()) >= 12


def _triage_actions() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in _subparsers()["triage"]._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _triage_synopsis(action: str) -> set[str]:
    """The long options of an action's synopsis cell in the table of '## triage', with those its prose says
    every action (or the action) takes (``--db``, ``--sdk-map`` / ``--source-type``), and ``--max-bytes``
    when the shared options' table says ``triage`` has it."""
    body = _section("triage")
    row = re.search(rf"^\| `{re.escape(action)}` \| `([^\n]*?)` \|", body, re.M)
    assert row, f"cli.md '## triage' has no row for {action}"
    prose = "\n".join(line for line in body.splitlines() if not line.startswith("|"))
    flags = set(_LONG.findall(row.group(1))) | set(_LONG.findall(prose))
    shared = _section("Options shared by the commands that load a CKF")
    if re.search(r"^\| `--max-bytes N` \|[^\n]*`triage` included", shared, re.M):
        flags.add("--max-bytes")
    return flags


@pytest.mark.parametrize("action", sorted(_triage_actions()))
def test_every_option_of_a_triage_action_is_in_its_synopsis(action):
    """``triage record`` took ``--config`` / ``--set`` for the winner an accept records: its synopsis says so."""
    parser = _triage_actions()[action]
    flags = {o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
    missing = sorted(flags - _triage_synopsis(action))
    assert not missing, f"cli.md '## triage' {action}: the synopsis lacks {missing}"

"""Every input of the hostile-input corpus (tests/data/hostile/hostile.toml) through the commands that
read it (``crp-inspect validate`` and ``run``; ``check`` for suites, configs and baselines; ``triage
decisions`` for a database) as bounded child processes, and every numeric setting at its range boundaries
through ``run --set`` (issue 12; docs/decisions/hardening.md). Harness: tests/support/hostile.py."""

from __future__ import annotations

import pytest

from tests.support.hostile import HOSTILE, check, manifest, set_cases, sweep_set

ENTRIES = manifest()
_ROWS: dict[str, dict] = {}  # label -> row: each input runs once, the agreement test reads the rows


def _row(entry, tmp_path):
    if entry.label not in _ROWS:
        _ROWS[entry.label] = check(entry, tmp_path)
    return _ROWS[entry.label]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.label for e in ENTRIES])
def test_hostile_input_has_the_outcome_of_the_manifest(entry, tmp_path):
    assert _row(entry, tmp_path)["failures"] == []


def test_validate_and_run_agree_on_every_input(tmp_path):
    """validate runs exactly the checks run runs: for every input, validate refuses it iff run does."""
    disagree = []
    for i, entry in enumerate(ENTRIES):
        if entry.kind not in ("ckf", "scenario"):
            continue  # read by other commands (check, triage), not by validate
        d = tmp_path / str(i)
        d.mkdir()
        row = _row(entry, d)
        refused = {c: row.get(f"{c}_rc") not in (0, None) for c in ("validate", "run")}
        if refused["validate"] != refused["run"]:
            disagree.append((entry.label, row.get("validate_rc"), row.get("run_rc")))
    assert disagree == []


def test_the_manifest_names_every_file_of_the_corpus():
    named = {e.file for e in ENTRIES if e.file}
    stored = {p.name for p in HOSTILE.iterdir() if not p.name.startswith("_") and p.name != "hostile.toml"}
    # the scenario every CKF is run with and the knowledge base of the --set sweep are inputs too
    assert stored - named == {"sweep_kb.jsonl"}
    assert named <= stored
    assert {e.outcome for e in ENTRIES} == {"refused", "warned", "loaded"}


def test_every_setting_at_its_boundaries_is_refused_cleanly_or_runs():
    rows = sweep_set()
    assert len(rows) == len(set_cases())
    assert [r for r in rows if not r["ok"]] == []

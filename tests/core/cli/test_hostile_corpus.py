"""The hostile-input corpus (issues 12 and 32; docs/decisions/hardening.md): the hand-made inputs of
tests/data/hostile/hostile.toml and the generated families of tests/support/hostile_gen.py, each family
in one bounded child process calling the CLI in-process per input (tests/support/hostile_run.py), two
children at a time; then every numeric setting at its range boundaries through ``run --set``."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.hostile import HOSTILE, manifest, set_cases, sweep_set
from tests.support.hostile_gen import families
from tests.support.hostile_run import run_family

FAMILIES = families()
#: the readers the corpus must cover (issue 32: every CKF format, every other input, links and text)
READERS = {
    "CKF JSON Lines",
    "CKF JSON",
    "CKF CSV",
    "CKF Parquet",
    "CKF folder",
    "crprotocol SDK snapshot",
    "SDK source-type mapping",
    "scenario (JSON)",
    "scenario (TOML)",
    "suite",
    "configuration file",
    "--set value",
    "baseline",
    "triage database",
    "SDK session audit trail",
    "dashboard link (?cfg., now, pair, fact, ckf, scenario)",
    "text content (detector, report, escaping)",
}


_SWEEP = "--set sweep"


@pytest.fixture(scope="module")
def all_rows(tmp_path_factory) -> dict[str, list[dict]]:
    """Every family's rows and the --set sweep's, two children at a time (one per core)."""
    base = tmp_path_factory.mktemp("hostile")

    def one(name: str) -> tuple[str, list[dict]]:
        if name == _SWEEP:
            return name, sweep_set()
        d = base / name
        d.mkdir()
        return name, run_family(name, d)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, [_SWEEP] + [f.name for f in FAMILIES]))


@pytest.fixture(scope="module")
def rows(all_rows) -> dict[str, list[dict]]:
    return {k: v for k, v in all_rows.items() if k != _SWEEP}


@pytest.mark.parametrize("name", [f.name for f in FAMILIES])
def test_every_input_of_the_family_has_its_expected_outcome(rows, name):
    failed = [(r["case"], r["failures"]) for r in rows[name] if r["failures"]]
    assert failed == []


def test_the_corpus_covers_every_reader_with_a_thousand_inputs(rows):
    assert {f.reader for f in FAMILIES} >= READERS
    counts = {f.reader: len(rows[f.name]) for f in FAMILIES}
    assert sum(counts.values()) >= 1000
    assert all(n >= 10 for n in counts.values()), counts
    outcomes = {r["expected"] for name in rows for r in rows[name]}
    assert outcomes == {"refused", "warned", "loaded"}


def test_validate_and_run_agree_on_every_input(rows):
    """validate runs exactly the checks run runs: for every input read by both, validate refuses it iff
    run does."""
    disagree = []
    for name in rows:
        for r in rows[name]:
            by = dict(zip(r.get("commands", []), r["rcs"]))
            if "validate" in by and "run" in by and (by["validate"] != 0) != (by["run"] != 0):
                disagree.append((r["case"], by))
    assert disagree == []


def test_the_manifest_names_every_file_of_the_corpus():
    entries = manifest()
    named = {e.file for e in entries if e.file}
    stored = {p.name for p in HOSTILE.iterdir() if not p.name.startswith("_") and p.name != "hostile.toml"}
    # the scenario every CKF is run with and the knowledge base of the --set sweep are inputs too
    assert stored - named == {"sweep_kb.jsonl"}
    assert named <= stored
    assert {e.outcome for e in entries} == {"refused", "warned", "loaded"}


def test_every_setting_at_its_boundaries_is_refused_cleanly_or_runs(all_rows):
    rows = all_rows[_SWEEP]
    assert len(rows) == len(set_cases())
    assert [r for r in rows if not r["ok"]] == []

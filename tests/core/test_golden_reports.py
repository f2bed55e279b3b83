"""The ``--json`` reports of the four sample scenarios, compared with the recorded reports (behaviour kept
exactly: the same facts, scores, conflicts and envelope). A report is re-recorded only when a change of
arithmetic moves its floats at the float32 rounding level with every fact, pair, selection and order
unchanged; docs/decisions/pipeline.md names each such change and its largest float difference."""

from __future__ import annotations

import json

import pytest

from crp_core.cli import main
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
GOLDEN = ROOT / "tests" / "data" / "golden"
SCENARIOS = sorted(p.stem for p in (ROOT / "sample_ckf" / "scenarios").glob("*.json"))

pytestmark = pytest.mark.model


@pytest.mark.parametrize("command", ["run", "fanout"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_report_identical_to_the_recorded_one(command, scenario, capsys, tmp_path):
    golden = GOLDEN / f"{command}_{scenario}.json"
    rc = main(
        [
            command,
            "--ckf",
            str(ROOT / "sample_ckf" / "knowledge_base.jsonl"),
            "--scenario",
            str(ROOT / "sample_ckf" / "scenarios" / f"{scenario}.json"),
            "--json",
        ]
    )
    assert rc == 0
    got = json.loads(capsys.readouterr().out)
    assert got == json.loads(golden.read_text(encoding="utf-8"))


def test_every_sample_scenario_has_recorded_reports():
    assert len(SCENARIOS) >= 4
    for s in SCENARIOS:
        assert (GOLDEN / f"run_{s}.json").is_file() and (GOLDEN / f"fanout_{s}.json").is_file()

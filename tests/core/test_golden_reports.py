"""The ``--json`` reports of the sample scenarios, compared with the recorded reports: the same facts,
scores, conflicts and envelope. Ids, order, counts, verdicts, headers and text are compared exactly;
floats within a relative 1e-5 (report_compare), since float32 products are rounded differently by the
BLAS kernel each CPU gets. A report is re-recorded only when a change of arithmetic moves its floats
with every fact, pair, selection and order unchanged, and the commit says so."""

from __future__ import annotations

import json

import pytest

from crp_core.cli import main
from tests.support.paths import REPO_ROOT
from tests.support.report_compare import assert_same_report

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
    assert_same_report(got, json.loads(golden.read_text(encoding="utf-8")))


def test_every_sample_scenario_has_recorded_reports():
    assert len(SCENARIOS) >= 4
    for s in SCENARIOS:
        assert (GOLDEN / f"run_{s}.json").is_file() and (GOLDEN / f"fanout_{s}.json").is_file()

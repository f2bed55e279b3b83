"""``crp-inspect session``: the chain verdict, the windows and the write-back on the recorded sessions
(tests/data/sdk_sessions/), exit statuses, and inputs refused without a traceback."""

from __future__ import annotations

import json

import pytest

from crp_core.cli import main
from tests.support.audit_trails import KB, MAPPING, SESSIONS, trail_file


def run(capsys, *argv):
    status = main(["session", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _args(audit: str, kb: str, tmp_path, *extra: str) -> list[str]:
    return [
        trail_file(audit),
        "--ckf",
        str(SESSIONS / kb),
        "--sdk-map",
        str(MAPPING),
        "--cache-dir",
        str(tmp_path),
        *extra,
    ]


@pytest.mark.model
def test_tampered_trail_exits_1_and_names_the_line(capsys, tmp_path):
    status, out, err = run(capsys, *_args("tampered.audit.jsonl", "multi.closing.json", tmp_path))
    assert status == 1, err
    assert "chain: BROKEN, 78 entries checked (sequences 0-77) in 78 lines\n" in out
    assert "  first break: line 3 (sequence 2): the entry does not hash to its entry_hash" in out
    assert "  anchor: matches: the trail's 78 entries are those the anchor commits to\n" in out


@pytest.mark.model
def test_deleted_and_truncated_trails(capsys, tmp_path):
    status, out, _ = run(capsys, *_args("deleted.audit.jsonl", "multi.closing.json", tmp_path))
    assert status == 1
    assert "  first break: line 8 (sequence 8) follows sequence 6: sequence 7 missing (entries deleted)\n" in out
    assert "  anchor: differs: the anchor commits to 78 entries, the trail has 77" in out
    status, out, _ = run(capsys, *_args("truncated.audit.jsonl", "multi.closing.json", tmp_path))
    assert status == 1
    assert "NOT closed: no compliance.session_closed at the end (the file was cut mid-entry)" in out
    assert "  problem: line 10, field 'line': the file ends inside this entry" in out
    assert "window 1 a988796e-6996-44af-9b72-325fc1f1cf01 (line 3)" in out  # what was read before the cut


@pytest.mark.model
def test_contradicting_session_text(capsys, tmp_path):
    status, out, err = run(
        capsys, *_args("contradicting.bundle.jsonl", "contradicting.closing.json", tmp_path, "--before", str(KB))
    )
    assert status == 0, err
    assert "chain: INTACT, 51 entries checked (sequences 0-50) in 53 lines\n" in out
    assert "    kb-tel-off / kb-tel-on  NEGATION_FLIP: SPEC-027 keeps kb-tel-off (authority 0.640 vs 0.135)\n" in out
    assert "write-back: 4 fact(s) the session wrote from its model's answers, 3 contradicting the KB\n" in out
    assert (
        "  ead1dece-38bb-46f7-a5d8-8b96083b781f (window 1, confidence 0.85, unverified): "
        "'Anonymous usage telemetry is now enabled by default.'\n"
    ) in out
    assert "    restates kb-port-old (STALE, cosine 0.974): a superseded value revived\n" in out
    assert "  SPEC-027 envelope for the transcript's question: 1 facts" in out


@pytest.mark.model
def test_json_report(capsys, tmp_path):
    status, out, _ = run(capsys, *_args("contradicting.audit.jsonl", "contradicting.closing.json", tmp_path, "--json"))
    assert status == 0
    d = json.loads(out)
    assert d["chain"]["verdict"] == "intact" and d["anchor"]["verdict"] == "matches"
    assert [w["spec027"] for w in d["windows"]] == [None, None]  # no transcript, no --query
    assert [x["fact_id"][:8] for x in d["writeback"]] == ["ead1dece", "64d00742", "23a35f7e", "2e1dc3a2"]
    assert d["writeback"][0]["found_by"] == ["source_window_id", "facts_extracted"]


def test_a_missing_audit_is_refused_with_exit_2(capsys, tmp_path):
    status, _, err = run(capsys, str(tmp_path / "absent.audit.jsonl"), "--ckf", str(KB))
    assert status == 2
    assert err.startswith(f"crp-inspect: error: audit trail {tmp_path / 'absent.audit.jsonl'} refused")


def test_a_bad_now_is_refused_before_anything_loads(capsys):
    status, _, err = run(capsys, trail_file("multi.audit.jsonl"), "--ckf", str(KB), "--now", "yesterday")
    assert status == 2 and err.startswith("crp-inspect: error: --now:")

"""``crp-inspect conflicts`` on facts of a crprotocol SDK deployment: each pair's ``sdk_provenance`` (JSON)
and an ``SDK:`` line under each fact (summary); a CKF without SDK fields prints neither."""

from __future__ import annotations

import json

import pytest

from crp_core.cli import main
from tests.support.conflict_rows import fact

NOW = "2026-06-01T00:00:00Z"
SDK_A = {"source_window_id": "win-002", "category": "config", "confidence": 0.88, "tier": 2, "extraction_stage": 2}
SDK_B = {
    "source_window_id": "chat-\x1b[2J007",  # a terminal escape in an id: printed as an escape, never applied
    "category": "config",
    "confidence": "high",  # the wrong type: named, left out
    "tier": 3,
    "extraction_stage": 6,
    "superseded_by": "F1",
}


def _rows(with_sdk: bool) -> list[dict[str, object]]:
    sdk = (
        {"metadata": SDK_A},
        {"metadata": SDK_B, "status": "STALE"},
    )
    plain: tuple[dict[str, object], dict[str, object]] = ({}, {"status": "STALE"})
    a, b = sdk if with_sdk else plain
    return [
        fact("F1", "The etcd default client port is 2379", [1, 0.33, 0, 0], source_type="internal", **a),
        fact("F2", "The etcd default client port is 4001", [1, 0, 0.33, 0], source_type="internal", **b),
        # no SDK field: null beside the SDK fact of its pair
        fact("F3", "etcd uses 5000 as its default client port", [1, 0, 0, 0.33], source_type="internal"),
    ]


@pytest.fixture(params=[True, False], ids=["sdk", "plain"])
def kb_file(request, tmp_path):
    path = tmp_path / "kb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(request.param)), encoding="utf-8")
    return str(path), request.param


def _run(capsys, path: str, tmp_path, *more: str) -> str:
    assert main(["conflicts", "--ckf", path, "--now", NOW, "--cache-dir", str(tmp_path / "c"), *more]) == 0
    return capsys.readouterr().out


def test_json_pairs_carry_the_provenance_of_both_facts(kb_file, tmp_path, capsys):
    path, with_sdk = kb_file
    pairs = {(p["fact_a"], p["fact_b"]): p for p in json.loads(_run(capsys, path, tmp_path, "--json"))}
    assert set(pairs) == {("F1", "F2"), ("F1", "F3"), ("F2", "F3")}
    if not with_sdk:
        assert all("sdk_provenance" not in p for p in pairs.values())
        return
    a = {**SDK_A, "superseded_by": None, "invalid": []}
    b = {**SDK_B, "confidence": None, "invalid": ["confidence"]}
    assert pairs[("F1", "F2")]["sdk_provenance"] == {"F1": a, "F2": b}
    assert pairs[("F2", "F3")]["sdk_provenance"] == {"F2": b, "F3": None}
    assert pairs[("F1", "F3")]["sdk_provenance"] == {"F1": a, "F3": None}


def test_summary_prints_an_sdk_line_under_each_sdkfact(kb_file, tmp_path, capsys):
    path, with_sdk = kb_file
    out = _run(capsys, path, tmp_path)
    lines = out.splitlines()
    sdk_lines = [line for line in lines if line.startswith("         SDK: ")]
    if not with_sdk:
        assert sdk_lines == [] and "SDK" not in out
        return
    assert "\x1b" not in out
    a = (
        "         SDK: window win-002 · category config · confidence 0.88 · tier 2 (warm) · "
        "extraction stage 2 (statistical)"
    )
    b = (
        "         SDK: window chat-\\x1b[2J007 · category config · tier 3 (cold) · extraction stage 6 (LLM-assisted) · "
        "superseded by F1 · wrong type, ignored confidence"
    )
    # each fact's line follows its text line; F3 has none
    for i, line in enumerate(lines):
        if line.startswith("      A: ") or line.startswith("      B: "):
            text = line[9:]
            nxt = lines[i + 1]
            if text.endswith("2379"):
                assert nxt == a
            elif text.endswith("4001"):
                assert nxt == b
            else:
                assert not nxt.startswith("         SDK: ")
    assert len(sdk_lines) == 4  # F1 and F2 in two pairs each

"""``crp-inspect fanout`` end to end (docs/reference/reports.md): JSON report, summary, errors. No model is loaded:
every CKF and scenario here carries its own embeddings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from crp_core.cli import main

MODEL = "test-model"
E = np.eye(6)
# the two-topic corpus of tests/core/stages/test_fanout.py; plain lowercase sentences so that no pair value-conflicts
FACTS = {
    "x1": (E[0], "pods on one node share the bridge interface for local traffic"),
    "x2": (E[0] + 0.2 * E[5], "the overlay tunnel wraps frames between hosts"),
    "x3": (E[0] + 0.3 * E[2], "route tables are rebuilt when a peer joins the mesh"),
    "y1": (E[1], "backups are written to object storage every night"),
    "y2": (E[1] + 0.4 * E[3], "snapshots keep the previous revision for rollback"),
    "y3": (E[1] + 0.2 * E[5], "restore jobs read the manifest before copying data"),
    "z": (0.6 * E[0] + 0.8 * E[1], "traffic for backups uses the storage network"),
}
SUBS = {"q0": E[0], "q1": E[0] + 0.1 * E[2], "q2": E[1], "q3": E[1] + 0.1 * E[3], "C": E[5]}


def _vec(v) -> list[float]:
    return [float(x) for x in v]


@pytest.fixture
def topic_files(tmp_path: Path) -> tuple[str, str]:
    ckf = tmp_path / "topics.jsonl"
    with open(ckf, "w", encoding="utf-8") as fh:
        for fid, (v, text) in FACTS.items():
            fh.write(
                json.dumps(
                    {
                        "fact_id": fid,
                        "content": text,
                        "source_type": "official_documentation",
                        "importance_weight": 1.0,
                        "ttl": "none",
                        "ingested_at": "2026-05-01T00:00:00Z",
                        "embedding": _vec(v),
                        "embedding_model": MODEL,
                    }
                )
                + "\n"
            )
    scen = tmp_path / "topics.json"
    scen.write_text(
        json.dumps(
            {
                "name": "two-topics",
                "query": {"text": "network and backups", "embedding": _vec(E[0] + E[1])},
                "now": "2026-06-01T00:00:00Z",
                "sub_queries": [{"id": k, "text": f"sub-query {k}", "embedding": _vec(v)} for k, v in SUBS.items()],
                "addressed": [{"id": "C", "depth_weight": 0.9, "window": 1}],
                "fanout_width": 2,
                "embedding_model": MODEL,
                "config": {"graph_retrieval": False},
            }
        ),
        encoding="utf-8",
    )
    return str(ckf), str(scen)


def _run(capsys, argv):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_json_report_naive_vs_partitioned(capsys, topic_files, tmp_path):
    ckf, scen = topic_files
    argv = [
        "fanout",
        "--ckf",
        ckf,
        "--scenario",
        scen,
        "--set",
        "envelope_fact_budget=6",
        "--json",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    status, out, _ = _run(capsys, argv)
    assert status == 0
    rep = json.loads(out)
    assert rep["active"] is True
    assert rep["headers"]["CRP-Context-Coverage-Partitions"] == "2"
    assert list(rep["headers"])[0] == "CRP-Context-Coverage-Partitions"
    assert rep["partitions"] == [["q0", "q1"], ["q2", "q3"]]
    assert [b["selected"] for b in rep["branches"]] == [["x1", "x3", "x2"], ["y1", "y2", "z"]]
    assert rep["branches"][0]["roles"] == {"x1": "anchor", "x3": "anchor", "x2": "anchor"}
    assert rep["fan_in"]["duplicates"] == [] and rep["fan_in"]["coverage_depth"] == 5
    assert rep["naive"]["partitions"] == [["q0", "q2"], ["q1", "q3"]]
    assert len(rep["naive"]["fan_in"]["duplicates"]) == 4  # x1, y1, x3 twice + x1 ~ x3
    assert rep["residual_set"] == ["q0", "q1", "q2", "q3"] and rep["addressed"] == ["C"]
    assert [s["kind"] for s in rep["steps"]][:2] == ["parent", "partition"]
    status2, out2, _ = _run(capsys, argv)
    assert status2 == 0 and out2 == out  # byte-identical for the same input


def test_summary_text(capsys, topic_files, tmp_path):
    ckf, scen = topic_files
    status, out, _ = _run(
        capsys,
        [
            "fanout",
            "--ckf",
            ckf,
            "--scenario",
            scen,
            "--set",
            "envelope_fact_budget=6",
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
    )
    assert status == 0
    assert "CRP-Context-Coverage-Partitions: 2   (width 2, rule: k-means)" in out
    assert "branch 0: sub-queries [q0, q1]" in out and "selected: x1, x3, x2" in out
    assert "the envelope `run` packs is the parent's, chosen for the scenario's query" in out
    # the naive race has no fan-in dedup: its duplicates reach the model
    assert "x1 ~ x3 (cos 0.9578) across branches [0, 1]; reaches the model" in out
    assert "4 duplicate(s): 0 removed at fan-in, 4 reaching the model (no fan-in dedup)" in out
    assert "0 duplicate(s): 0 removed at fan-in, 0 reaching the model\n" in out
    assert out.rstrip().endswith("duplicates: naive 4 vs partitioned 0   reaching the model: naive 4 vs partitioned 0")


def test_width_and_config_file(capsys, topic_files, tmp_path):
    ckf, scen = topic_files
    cfg = tmp_path / "c.toml"
    cfg.write_text("envelope_fact_budget = 6\n", encoding="utf-8")
    common = ["--ckf", ckf, "--scenario", scen, "--config", str(cfg), "--json", "--cache-dir", str(tmp_path / "c")]
    status, out, _ = _run(capsys, ["fanout", *common])
    assert status == 0 and json.loads(out)["branches"][0]["selected"] == ["x1", "x3", "x2"]
    status, out, _ = _run(capsys, ["fanout", *common, "--width", "4"])
    rep = json.loads(out)
    assert rep["partitions"] == [["q0"], ["q1"], ["q2"], ["q3"]] and rep["rule"] == "one sub-query per partition"
    assert rep["headers"]["CRP-Context-Coverage-Partitions"] == "4"
    status, out, _ = _run(capsys, ["fanout", *common, "--width", "1"])
    rep = json.loads(out)
    assert status == 0 and rep["active"] is False and rep["naive"] is None
    assert "CRP-Context-Coverage-Partitions" not in rep["headers"]
    assert "CRP-Context-Coverage-Depth" in rep["headers"]
    status, out, _ = _run(
        capsys, ["fanout", "--ckf", ckf, "--scenario", scen, "--width", "1", "--cache-dir", str(tmp_path / "c")]
    )
    assert "fan-out inactive (fanout_width 1" in out


def test_sample_dir_scenario(capsys, sample_dir, tmp_path):
    # conftest's demo: sq1 addressed, ResidualSet sq2, sq3 -> one sub-query per partition
    status, out, _ = _run(
        capsys,
        [
            "fanout",
            "--ckf",
            str(sample_dir / "knowledge_base.jsonl"),
            "--scenario",
            str(sample_dir / "scenarios" / "demo.json"),
            "--width",
            "3",
            "--json",
            "--now",
            "2025-10-01T00:00:00Z",
            "--cache-dir",
            str(tmp_path / "c"),
        ],
    )
    assert status == 0
    rep = json.loads(out)
    assert rep["partitions"] == [["sq2"], ["sq3"]] and rep["width"] == 3
    assert rep["fan_in"]["coverage_depth"] == 3  # sq1 + sq2 + sq3
    for b in rep["branches"]:
        assert 0 < len(b["selected"]) <= 10  # max(3, 20 // 2)


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--now", "yesterday"], "now"),
        (["--set", "no_such_key=1"], "no_such_key"),
        (["--set", "fanin_dedup_similarity=high"], "fanin_dedup_similarity"),
        (["--width", "-2"], "fanout_width"),
    ],
)
def test_bad_input_is_a_clear_error(capsys, topic_files, tmp_path, extra, needle):
    ckf, scen = topic_files
    status, out, err = _run(
        capsys, ["fanout", "--ckf", ckf, "--scenario", scen, "--cache-dir", str(tmp_path / "c"), *extra]
    )
    assert status == 2 and out == ""
    assert err.startswith("crp-inspect: error:") and needle in err and "Traceback" not in err


def test_bad_ckf_names_line_and_field(capsys, topic_files, tmp_path):
    _, scen = topic_files
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"fact_id": "a", "content": "x", "source_type": "rumour"}) + "\n", encoding="utf-8")
    status, _, err = _run(capsys, ["fanout", "--ckf", str(bad), "--scenario", scen])
    assert status == 2 and "line 1" in err and "source_type" in err

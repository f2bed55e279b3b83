"""The fingerprints and inputs an experiment carries: the suite's digest follows its files' bytes (not their
order, not where they came from), the configuration's changes from the defaults, the knowledge base's name."""

from __future__ import annotations

import json

from crp_core.analysis.suite import load_suite, suite_from_files
from crp_core.config import CRPConfig
from crp_core.history import config_diff, experiment_inputs, suite_fingerprint
from crp_core.history.records import kb_label
from crp_core.io.ckf import load_ckf
from tests.support.suites import write_ckf, write_suite


def test_the_suite_fingerprint_follows_the_files_bytes(tmp_path):
    d = write_suite(tmp_path / "suite")
    files = sorted(d.glob("*.json"))
    fp = suite_fingerprint(load_suite(d))
    assert fp == suite_fingerprint(load_suite([str(f) for f in reversed(files)]))  # order does not matter
    uploads = [(f.name, f.read_bytes()) for f in files]
    assert suite_fingerprint(suite_from_files(uploads)) == fp  # an upload of the same files: the same digest
    doc = json.loads(files[0].read_text(encoding="utf-8"))
    files[0].write_text(json.dumps(doc, indent=4) + "\n", encoding="utf-8")  # layout only
    assert suite_fingerprint(load_suite(d)) == fp
    doc["query"] = {"text": doc["query"]["text"] + "?", "embedding": doc["query"]["embedding"]}
    files[0].write_text(json.dumps(doc), encoding="utf-8")  # the query changed
    assert suite_fingerprint(load_suite(d)) != fp
    assert len(fp) == 64 and int(fp, 16) >= 0


def test_experiment_inputs_name_the_kb_the_suite_and_the_changed_keys(tmp_path):
    kb = load_ckf(write_ckf(tmp_path / "kb.jsonl"))
    suite = load_suite(write_suite(tmp_path / "suite"))
    config = CRPConfig().with_set_args(["stale_floor=0.5", "ttl_days.news=45"])
    got = experiment_inputs(kb, suite, config)
    assert got == {
        "kb_name": "kb.jsonl",
        "kb_fingerprint": kb.fingerprint,
        "suite_name": "suite",
        "suite_fingerprint": suite_fingerprint(suite),
        "config_diff": {"stale_floor": (0.3, 0.5), "ttl_days.news": (30.0, 45.0)},
    }
    assert config_diff(CRPConfig()) == {}
    assert experiment_inputs(None, None, None) == {
        "kb_name": None,
        "kb_fingerprint": None,
        "suite_name": None,
        "suite_fingerprint": None,
        "config_diff": {},
    }
    assert kb_label("") is None and kb_label("/a/b/") == "b"

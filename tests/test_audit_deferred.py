"""An audit event's data is built from its record on first read (``records.DeferredData``) and then reads,
compares, copies and pickles as the plain dict ``report.conflict_event_data`` gives."""
from __future__ import annotations

import copy
import json
import pickle

from crp_core.records import DeferredData


def test_deferred_data_builds_once_on_first_read_and_behaves_as_its_dict():
    calls = []

    def build():
        calls.append(1)
        return {"fact_a": "F1", "fact_b": "F2", "kept": ["F1"], "margin": 0.25}

    d = DeferredData(build)
    assert calls == []
    assert d["fact_a"] == "F1" and d.get("missing") is None and len(d) == 4
    assert list(d) == ["fact_a", "fact_b", "kept", "margin"]
    assert calls == [1]
    assert d == build() and build() == d and d == DeferredData(build) and d != {"fact_a": "F1"}
    assert calls == [1, 1, 1, 1]  # the two comparisons' own dicts; ``d`` itself built once
    clone = pickle.loads(pickle.dumps(d))
    assert type(clone) is dict and clone == d
    assert copy.deepcopy(d) == d and json.loads(json.dumps(dict(d))) == d
    assert {k: v for k, v in d.items()} == build()


def test_pipeline_audit_events_equal_the_report_shape(tmp_path):
    from pathlib import Path

    from crp_core.config import CRPConfig
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario
    from crp_core.pipeline import run_pipeline
    from crp_core.report import conflict_event_data

    sample = Path(__file__).resolve().parent.parent / "sample_ckf"
    corpus = prepare_corpus(load_ckf(sample / "knowledge_base.jsonl"), config=CRPConfig(), cache_dir=tmp_path)
    scenario = load_scenario(sample / "scenarios" / "etcd_upgrade.json")
    result = run_pipeline(corpus, scenario, CRPConfig(), vectors=embed_scenario(scenario, corpus))
    events = [e for e in result.resolution.audit if e.event.startswith("CONTRADICTION_")]
    arbitrated = [p for p in result.resolution.pairs if not p.skipped]
    assert events and len(events) == len(arbitrated)
    for e, p in zip(events, arbitrated, strict=True):
        want = conflict_event_data(p, roles=dict(e.data["roles"]))
        assert dict(e.data) == want
        assert pickle.loads(pickle.dumps(e)) == e

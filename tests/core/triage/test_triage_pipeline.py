"""Operator decisions change the pipeline's output as SPEC-027 says (SPEC-027 §2, SPEC-009 §2.2):
a quarantined / deleted fact is never retrieved, a STALE mark lowers the fact's recency to the floor,
an override flips the winner, a dismissed pair is not arbitrated, an accept leaves the output
unchanged but is recorded. Every decision goes through a real DecisionStore.

Tiny corpus (4-d vectors, no model), query e1, now 2026-06-01, all facts modified 2026-05-01
(age 31 d < fresh 182.5 d, so recency_factor 1.0 unless marked STALE):
  F1 official_documentation "... port is 2379."  authority 0.80 * 1.0 * 0.80 = 0.64
  F2 community              "... port is 2380."  authority 0.75 * 1.0 * 0.60 = 0.45
  F3 official_documentation, unrelated text, cos(F1, F3) ~ 0.75: no conflict, always in the envelope
cos(F1, F2) ~ 0.999 > 0.85 and NUMBER_CHANGED, so {F1, F2} is a conflict pair; by authority F1 wins.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from crp_core.analysis.scan import scan_ckf
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.io.ckf import load_ckf
from crp_core.io.timeparse import parse_timestamp
from crp_core.pipeline import run_pipeline
from crp_core.stages.contradictions import EVENT_DISMISSED, EVENT_RESOLVED
from crp_core.triage import Decision, DecisionSet, DecisionStore, apply_to_corpus, pair_key
from tests.support.factories import MODEL_ID, fact, make_corpus, make_scenario, unit
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
MOD = "2026-05-01T00:00:00Z"


@pytest.fixture(scope="module")
def corpus():
    facts = [
        fact("F1", "The etcd default client port is 2379.", source_type="official_documentation", modified_at=MOD),
        fact("F2", "The etcd default client port is 2380.", source_type="community", modified_at=MOD),
        fact("F3", "Kubernetes schedules pods onto nodes.", source_type="official_documentation", modified_at=MOD),
    ]
    vecs = [unit([1, 0.3, 0, 0]), unit([1, 0.3, 0.05, 0]), unit([1, 0, 0, 0.8])]
    return make_corpus(facts, vecs)


@pytest.fixture(scope="module")
def scenario():
    return make_scenario([1, 0, 0, 0], now="2026-06-01T00:00:00Z")


@pytest.fixture
def store(tmp_path):
    with DecisionStore(tmp_path / "decisions.sqlite") as s:
        yield s


def run(corpus, scenario, decisions: DecisionSet):
    """What the dashboard and the CLI do: statuses through the corpus, pair decisions to stage 4."""
    return run_pipeline(apply_to_corpus(corpus, decisions), scenario, decisions=decisions.pair_decisions)


def envelope_ids(result) -> list[str]:
    return [p.fact_id for p in result.envelope.order]


def only_pair(result):
    assert len(result.resolution.pairs) == 1
    return result.resolution.pairs[0]


def retrieved_ids(result, corpus) -> set[str]:
    kb = corpus.kb
    return {kb.facts[int(r)].fact_id for r in result.candidates.idx}


def test_baseline_without_decisions(corpus, scenario):
    r = run(corpus, scenario, DecisionSet.empty())
    pair = only_pair(r)
    assert (pair.fact_a, pair.fact_b, pair.patterns) == ("F1", "F2", ("NUMBER_CHANGED",))
    assert pair.authority["F1"].authority == pytest.approx(0.64, abs=1e-12)  # 0.80 * 1.0 * 0.80
    assert pair.authority["F2"].authority == pytest.approx(0.45, abs=1e-12)  # 0.75 * 1.0 * 0.60
    assert (pair.kept, pair.suppressed, pair.tied, pair.decision) == (("F1",), "F2", False, None)
    assert sorted(envelope_ids(r)) == ["F1", "F3"]
    assert r.headers["CRP-Context-Conflicts-Resolved"] == "1"


@pytest.mark.parametrize("status", ["QUARANTINED", "DELETED"])
def test_quarantined_or_deleted_winner_is_never_retrieved(corpus, scenario, store, status):
    store.record(Decision.mark_status("F1", "F2", fact="F1", status=status, operator="ann", note="bad source"))
    r = run(corpus, scenario, store.current())
    assert "F1" not in retrieved_ids(r, corpus)  # not even a candidate
    assert "F1" not in {corpus.kb.facts[int(i)].fact_id for i in r.cdr.idx}
    assert all("F1" not in (p.fact_a, p.fact_b) for p in r.resolution.pairs)
    assert r.resolution.pairs == ()  # nothing left to conflict with
    assert sorted(envelope_ids(r)) == ["F2", "F3"]  # F2 is no longer suppressed
    assert "F1" not in r.envelope.text
    assert r.headers["CRP-Context-Conflicts-Resolved"] == "0"
    row_f1 = corpus.kb.index_of("F1")
    assert row_f1 not in r.cdgr.connectors.idx.tolist() and row_f1 not in r.cdgr.anchors.tolist()


def test_quarantined_loser_is_never_retrieved(corpus, scenario, store):
    store.record(Decision.mark_status("F1", "F2", fact="F2", status="QUARANTINED", operator="ann"))
    r = run(corpus, scenario, store.current())
    assert "F2" not in retrieved_ids(r, corpus)
    assert r.resolution.pairs == ()
    assert sorted(envelope_ids(r)) == ["F1", "F3"]


def test_stale_mark_drops_recency_to_the_floor_and_flips_the_winner(corpus, scenario, store):
    store.record(Decision.mark_status("F1", "F2", fact="F1", status="STALE", operator="ann"))
    r = run(corpus, scenario, store.current())
    pair = only_pair(r)
    # F1: 0.80 * stale_floor 0.30 * 0.80 = 0.192 < F2: 0.75 * 1.0 * 0.60 = 0.45
    assert pair.authority["F1"].recency_factor == 0.30
    assert pair.authority["F1"].authority == pytest.approx(0.192, abs=1e-12)
    assert (pair.kept, pair.suppressed) == (("F2",), "F1")
    assert sorted(envelope_ids(r)) == ["F2", "F3"]


def test_override_flips_the_winner(corpus, scenario, store):
    store.record(Decision.override("F1", "F2", winner="F2", operator="ann", note="2380 per the v3.6 release notes"))
    r = run(corpus, scenario, store.current())
    pair = only_pair(r)
    assert (pair.kept, pair.suppressed, pair.decision) == (("F2",), "F1", "override")
    assert pair.authority["F1"].authority > pair.authority["F2"].authority  # it won against authority
    assert sorted(envelope_ids(r)) == ["F2", "F3"]
    (event,) = [e for e in r.resolution.audit if e.event == EVENT_RESOLVED]
    assert (event.data["winner"], event.data["suppressed"], event.data["decision"]) == ("F2", "F1", "override")


def test_dismissed_pair_is_not_arbitrated(corpus, scenario, store):
    store.record(Decision.dismiss("F2", "F1", operator="ann", note="different clusters"))
    r = run(corpus, scenario, store.current())
    pair = only_pair(r)
    assert (pair.suppressed, pair.tied, pair.decision) == (None, False, "dismiss")
    assert set(pair.kept) == {"F1", "F2"}
    assert sorted(envelope_ids(r)) == ["F1", "F2", "F3"]
    assert [e.event for e in r.resolution.audit] == [EVENT_DISMISSED]
    assert len(r.resolution.suppressed) == 0 and r.resolution.notes == ()
    # the operator said "not a conflict": the header no longer counts it
    assert r.headers["CRP-Context-Conflicts-Resolved"] == "0"


def test_accept_leaves_the_output_unchanged_but_is_recorded(corpus, scenario, store):
    base = run(corpus, scenario, DecisionSet.empty())
    d = store.record(Decision.accept("F1", "F2", winner="F1", operator="ann", note="checked"))
    r = run(corpus, scenario, store.current())
    assert envelope_ids(r) == envelope_ids(base)
    assert r.envelope.text == base.envelope.text
    assert dict(r.headers) == dict(base.headers)
    pair, bpair = only_pair(r), only_pair(base)
    assert (pair.kept, pair.suppressed, pair.tied) == (bpair.kept, bpair.suppressed, bpair.tied)
    assert pair.decision == "accept"
    assert store.history(pair_key("F1", "F2")) == [d]


def test_latest_decision_wins_and_accept_undoes_an_override(corpus, scenario, store):
    store.record(Decision.override("F1", "F2", winner="F2", operator="ann"))
    assert only_pair(run(corpus, scenario, store.current())).suppressed == "F1"
    store.record(Decision.accept("F1", "F2", operator="bob", note="authority was right"))
    assert only_pair(run(corpus, scenario, store.current())).suppressed == "F2"
    store.record(Decision.mark_status("F1", "F2", fact="F1", status="QUARANTINED", operator="ann"))
    store.record(Decision.mark_status("F1", "F2", fact="F1", status="ACTIVE", operator="bob"))  # restored
    r = run(corpus, scenario, store.current())
    assert only_pair(r).suppressed == "F2" and "F1" in envelope_ids(r)
    assert len(store.history("F1|F2")) == 4


def test_decisions_recorded_by_another_process_apply_after_restart(corpus, scenario, tmp_path):
    from tests.support.triage_cli import auto_ckf

    db = tmp_path / "d.sqlite"
    cmd = [
        sys.executable,
        "-m",
        "crp_core.cli",
        "triage",
        "record",
        "--db",
        str(db),
        "--pair",
        "F1",
        "F2",
        "--kind",
        "override",
        "--winner",
        "F2",
        "--operator",
        "ann",
        "--ckf",
        auto_ckf(("--db", str(db), "--pair", "F1", "F2")),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    with DecisionStore(db, create=False) as s:  # a fresh connection in this process
        r = run(corpus, scenario, s.current())
    assert only_pair(r).suppressed == "F1"


def test_conflict_scan_shows_the_decisions(corpus, store):
    store.record(Decision.dismiss("F1", "F2", operator="ann"))
    ds = store.current()
    scan = scan_ckf(
        apply_to_corpus(corpus, ds), CRPConfig(), parse_timestamp("2026-06-01T00:00:00Z"), decisions=ds.pair_decisions
    )
    (pair,) = scan.pairs
    assert (pair.fact_a, pair.fact_b, pair.decision, pair.suppressed) == ("F1", "F2", "dismiss", None)
    assert scan.counts["NUMBER_CHANGED"] == 0  # a dismissed pair is not counted


@pytest.mark.parametrize("ext", [".jsonl", ".json", ".csv", ""])
def test_exported_cleaned_ckf_reloads_and_quarantine_holds(corpus, scenario, store, tmp_path, ext):
    from crp_core.cli import main
    from crp_core.io.ckf import write_ckf

    src = write_ckf(corpus.kb, str(tmp_path / "kb.jsonl"))
    store.record(Decision.mark_status("F1", "F2", fact="F1", status="QUARANTINED", operator="ann"))
    out = str(tmp_path / f"clean{ext or '_dir'}")
    assert main(["triage", "export", "--db", store.path, "--ckf", src, "--out", out]) == 0
    kb = load_ckf(out)  # re-loads and re-validates
    assert [(f.fact_id, f.status) for f in kb.facts] == [("F1", "QUARANTINED"), ("F2", "ACTIVE"), ("F3", "ACTIVE")]
    assert kb.embedding_model == MODEL_ID
    np.testing.assert_allclose(kb.embeddings, corpus.kb.embeddings, rtol=0, atol=1e-6)
    # a pipeline over the cleaned CKF, with no decisions at all, never retrieves F1
    clean = Corpus.from_vectors(kb, kb.embeddings, MODEL_ID, CRPConfig())
    r = run_pipeline(clean, scenario)
    assert "F1" not in retrieved_ids(r, clean)
    assert sorted(envelope_ids(r)) == ["F2", "F3"]

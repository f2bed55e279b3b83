"""Quarantining what a crprotocol session wrote back (SessionReport.quarantine_decisions): one status
mark per write-back fact, on the pair of the fact it contradicts, else restates, else its window; the
decisions go through the triage store like the Conflicts page's and put the facts out of retrieval."""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest

from crp_core.analysis.session import QUARANTINE_STATUS, SessionReport, analyse_session, quarantine_partner
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.decisions import DecisionSet
from crp_core.io.ckf import load_ckf
from crp_core.io.ckf.sdk_map import load_source_map
from crp_core.io.session import read_audit
from crp_core.triage.store import DecisionStore
from tests.support.audit_trails import MAPPING, SESSIONS, trail_file
from tests.support.embedders import HashingEmbedder

TEL = "ead1dece-38bb-46f7-a5d8-8b96083b781f"  # "Anonymous usage telemetry is now enabled by default."
PORT = "64d00742-d7e9-47f4-8a02-fb3aea4978d1"  # "The admin console listens on port 8080 now."
TIMEOUT = "23a35f7e-2ad0-4234-8666-8fc774a67d80"  # "Idle admin sessions now time out after 60 minutes."
PORT_ONLY = "2e1dc3a2-5680-450f-a049-cd934d90738a"  # "port 8080"
SESSION = "b3163490-3a85-4063-ba75-006e418cc031"
WINDOW_1 = "87fe88b8-f04a-4087-bb50-fee6e1923a63"
WINDOW_2 = "a0e62782-97d5-4e26-a19b-bfd9a72ce5bc"


def _report(tmp: str, embedder: HashingEmbedder | None) -> SessionReport:
    kb = load_ckf(str(SESSIONS / "contradicting.closing.json"), source_map=load_source_map(str(MAPPING)))
    corpus = prepare_corpus(kb, embedder=embedder, cache_dir=tmp)
    return analyse_session(read_audit(trail_file("contradicting.audit.jsonl")), corpus, CRPConfig(), embedder=embedder)


@cache
def _hashed(tmp: str) -> SessionReport:
    return _report(tmp, HashingEmbedder())


@pytest.fixture(scope="module")
def hashed(tmp_path_factory) -> SessionReport:
    """Under the bag-of-words embedder no write-back fact is close enough to a KB fact to contradict it."""
    return _hashed(str(tmp_path_factory.mktemp("cache")))


def test_a_fact_alone_is_paired_with_its_window(hashed):
    decisions = hashed.quarantine_decisions("ada", note="  stale answers  ", ckf_fingerprint="fp")
    got = [(d.kind, d.target_fact, d.new_status, d.pair) for d in decisions]
    assert got == [
        ("mark_status", TEL, "QUARANTINED", (TEL, f"window:{WINDOW_1}")),
        ("mark_status", PORT, "QUARANTINED", (PORT, f"window:{WINDOW_2}")),
        ("mark_status", TIMEOUT, "QUARANTINED", (TIMEOUT, f"window:{WINDOW_2}")),
        ("mark_status", PORT_ONLY, "QUARANTINED", (PORT_ONLY, f"window:{WINDOW_2}")),
    ]
    assert decisions[0].note == (
        f"stale answers\nwritten back by crprotocol session {SESSION}, window 1, confidence 0.85 (crp-inspect session)"
    )
    assert {d.operator for d in decisions} == {"ada"} and {d.ckf_fingerprint for d in decisions} == {"fp"}
    assert {d.origin for d in decisions} == {"session"}
    assert {d.role for d in hashed.quarantine_decisions("ada", role="admin", kb_name="kb.jsonl")} == {"admin"}
    assert QUARANTINE_STATUS == "QUARANTINED"


def test_only_the_facts_asked_for(hashed):
    got = hashed.quarantine_decisions("ada", fact_ids=[PORT_ONLY, "kb-tel-off"])
    assert [d.target_fact for d in got] == [PORT_ONLY]
    assert got[0].note.startswith(f"written back by crprotocol session {SESSION}, window 2, confidence 0.95")
    assert hashed.quarantine_decisions("ada", fact_ids=[]) == ()


def test_the_partner_is_the_contradicted_fact_then_the_restated_one(hashed):
    wb = hashed.writeback[0]
    pair = next(p for w in hashed.windows for p in w.pairs if p.fact_a == "kb-tel-off")
    contradiction = dataclasses.replace(pair, fact_a=TEL, fact_b="kb-tel-off")
    restated = dataclasses.replace(wb.restates or _near("kb-tel-on"), fact_id=TEL, duplicate_of="kb-tel-on")
    assert quarantine_partner(dataclasses.replace(wb, contradicts=(contradiction,), restates=restated), SESSION) == (
        "kb-tel-off"
    )
    assert quarantine_partner(dataclasses.replace(wb, restates=restated), SESSION) == "kb-tel-on"
    assert quarantine_partner(dataclasses.replace(wb, window_id=""), SESSION) == f"session:{SESSION}"
    assert quarantine_partner(dataclasses.replace(wb, window_id=""), None) == "session:unknown"


def _near(other: str):
    from crp_core.analysis.session import NearDuplicate

    return NearDuplicate(TEL, other, 0.99)


def test_the_store_records_them_and_the_facts_leave_retrieval(hashed, tmp_path):
    with DecisionStore(str(tmp_path / "triage.sqlite"), create=True) as store:
        for d in hashed.quarantine_decisions("ada"):
            store.record(d)
        log = store.all()
    ds = DecisionSet.from_decisions(log)
    assert dict(ds.statuses) == {
        TEL: "QUARANTINED",
        PORT: "QUARANTINED",
        TIMEOUT: "QUARANTINED",
        PORT_ONLY: "QUARANTINED",
    }
    assert ds.pair_decisions == {} and [d.id for d in log] == [1, 2, 3, 4]


@pytest.mark.model
def test_with_minilm_each_is_paired_with_the_fact_it_contradicts(tmp_path):
    r = _report(str(tmp_path), None)
    assert [d.pair for d in r.quarantine_decisions("ada")] == [
        (TEL, "kb-tel-off"),
        (PORT, "kb-port-new"),
        (TIMEOUT, "kb-timeout"),
        (PORT_ONLY, f"window:{WINDOW_2}"),
    ]

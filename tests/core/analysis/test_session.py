"""The session analysis (crp_core.analysis.session) on the sessions the real SDK recorded
(tests/data/sdk_sessions/), with the MiniLM model the CLI uses, and its plumbing on a hashing embedder.

Authorities by the docs/reference/pipeline.md §2 table: official documentation 0.80 x recency x 0.80,
community 0.75 x recency x 0.60, unverified (what a session wrote) 0.70 x recency x 0.50; a community
post past its 365-day TTL has recency 0.30."""

from __future__ import annotations

from functools import cache

import pytest

from crp_core.analysis.session import SessionReport, analyse_session
from crp_core.analysis.session_report import session_report_dict
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_core.io.ckf.sdk_map import load_source_map
from crp_core.io.session import read_audit
from tests.support.audit_trails import KB, MAPPING, SESSIONS, trail_file
from tests.support.embedders import HashingEmbedder

TEL = "ead1dece-38bb-46f7-a5d8-8b96083b781f"  # "Anonymous usage telemetry is now enabled by default."
PORT = "64d00742-d7e9-47f4-8a02-fb3aea4978d1"  # "The admin console listens on port 8080 now."
TIMEOUT = "23a35f7e-2ad0-4234-8666-8fc774a67d80"  # "Idle admin sessions now time out after 60 minutes."
PORT_ONLY = "2e1dc3a2-5680-450f-a049-cd934d90738a"  # "port 8080"


def _kb(name):
    return load_ckf(str(SESSIONS / name), source_map=load_source_map(str(MAPPING)))


@cache
def _contradicting(tmp: str) -> SessionReport:
    corpus = prepare_corpus(_kb("contradicting.closing.json"), cache_dir=tmp)
    return analyse_session(
        read_audit(trail_file("contradicting.bundle.jsonl")), corpus, CRPConfig(), before=_kb("kb.json")
    )


@pytest.fixture(scope="module")
def contradicting(tmp_path_factory) -> SessionReport:
    return _contradicting(str(tmp_path_factory.mktemp("cache")))


@pytest.mark.model
def test_the_contradictory_pairs_the_sdk_packed(contradicting):
    w1 = contradicting.windows[0]
    got = [(p.fact_a, p.fact_b, p.patterns, p.kept) for p in w1.pairs]
    assert got == [
        ("kb-tel-off", "kb-tel-on", ("NEGATION_FLIP",), ("kb-tel-off",)),
        ("kb-timeout", "kb-timeout-old", ("NUMBER_CHANGED",), ("kb-timeout",)),
        ("kb-tls", "kb-tls-old", ("NUMBER_CHANGED",), ("kb-tls",)),
    ]
    tel = w1.pairs[0]
    # official docs, fresh: 0.80 x 1.00 x 0.80; a community post 700 days old: 0.75 x 0.30 x 0.60
    assert tel.authority["kb-tel-off"].authority == pytest.approx(0.64)
    assert tel.authority["kb-tel-on"].authority == pytest.approx(0.135)
    assert w1.expired == ("kb-tel-on", "kb-timeout-old", "kb-tls-old") and w1.ageing == ("kb-webhook",)
    assert w1.superseded == ()  # the SDK never packs the facts it superseded
    assert [(d.fact_id, d.duplicate_of) for d in w1.near_duplicates] == [
        ("kb-backup-dup", "kb-backup"),
        ("kb-sso-dup", "kb-sso"),
    ]
    p1 = w1.packed[1]
    assert (p1.fact_id, p1.position, p1.listed, p1.recency_factor, p1.recency_state) == (
        "kb-tel-on",
        2,
        2,
        0.3,
        "expired",
    )
    assert p1.source_type == "community" and p1.age_days == pytest.approx(700, abs=1e-3)


@pytest.mark.model
def test_the_contaminating_write_back(contradicting):
    wb = {w.fact_id: w for w in contradicting.writeback}
    assert list(wb) == [TEL, PORT, TIMEOUT, PORT_ONLY]
    for w in wb.values():
        assert w.found_by == ("source_window_id", "facts_extracted", "absent_before")
    assert [(w.window_index, w.confidence) for w in wb.values()] == [(1, 0.85), (2, 0.85), (2, 0.85), (2, 0.95)]
    contradicted = {fid: [(p.fact_a, p.fact_b, p.kept) for p in w.contradicts] for fid, w in wb.items()}
    assert contradicted == {
        TEL: [(TEL, "kb-tel-off", ("kb-tel-off",))],
        PORT: [(PORT, "kb-port-new", ("kb-port-new",))],
        TIMEOUT: [(TIMEOUT, "kb-timeout", ("kb-timeout",))],
        PORT_ONLY: [],
    }
    # unverified, fresh: 0.70 x 1.00 x 0.50 against official documentation's 0.64
    assert wb[TEL].contradicts[0].authority[TEL].authority == pytest.approx(0.35)
    # the stale answers restate the old values: the port one a fact the SDK itself had superseded
    assert (wb[PORT].restates.duplicate_of, wb[PORT].restates_status) == ("kb-port-old", "STALE")
    assert (wb[TEL].restates.duplicate_of, wb[TIMEOUT].restates.duplicate_of) == ("kb-tel-on", "kb-timeout-old")
    assert wb[TEL].packed_in == (2,)  # window 2 packed what window 1 wrote back
    w2 = contradicting.windows[1]
    assert w2.writeback_packed == (TEL,) and w2.writeback == (PORT, TIMEOUT, PORT_ONLY)
    assert (w2.pairs[0].fact_a, w2.pairs[0].fact_b) == (TEL, "kb-tel-off")  # packed beside the fact it contradicts
    assert [(m.fact_id[:8], m.same_text_as) for m in contradicting.merged] == [
        ("2d23cf27", (PORT,)),
        ("096d86a2", (TIMEOUT,)),
    ]


@pytest.mark.model
def test_the_sdks_findings_beside_ours(contradicting):
    w1, w2 = contradicting.windows
    silent = [o.key for o in w1.ours if not o.sdk_kinds]
    assert f"writeback:{TEL}" in silent and "pair:kb-tel-off|kb-tel-on" in silent  # the SDK flagged neither
    dist = [c for c in w2.findings if c.finding.kind in ("distortion", "fabrication")]
    assert [(c.finding.line, c.fact_ids, c.ours) for c in dist] == [
        (31, (PORT, PORT_ONLY, "kb-port-new"), (f"writeback:{PORT}",)),
        (32, (PORT, PORT_ONLY, "kb-port-new"), (f"writeback:{PORT}",)),
    ]
    assert next(o for o in w2.ours if o.key == f"writeback:{PORT}").sdk_kinds == ("distortion", "fabrication")


@pytest.mark.model
def test_spec027_envelope_beside_the_sdks(contradicting):
    w1, w2 = contradicting.windows
    e1 = w1.envelope
    assert (e1.query_source, e1.envelope, e1.both, e1.spec027_only) == (
        "transcript",
        ("kb-tel-off",),
        ("kb-tel-off",),
        (),
    )
    assert len(e1.sdk_only) == 19 and e1.sdk_only[0] == "kb-tel-on"
    assert e1.facts[1].explain.startswith(
        "kb-tel-on: the SDK packed it at position 2; SPEC-027 leaves it out: suppressed by kb-tel-off"
    )
    # window 1 ran before its own answer existed: SPEC-027 does not see TEL there, window 2 does
    assert TEL not in {f.fact_id for f in e1.facts} and w2.envelope.facts[0].fact_id == TEL
    assert w2.envelope.envelope == ("kb-port-new", "kb-timeout")


@pytest.mark.model
def test_json_report_keys(contradicting):
    d = session_report_dict(contradicting, kb_path="kb.json")
    assert list(d) == [
        "report_version", "audit", "session_id", "model", "protocol_version", "lines", "chain", "anchor",
        "transcripts", "event_counts", "unknown_events", "unknown_total", "problems", "problems_total",
        "knowledge_base", "now", "now_source", "windows", "windows_total", "writeback", "merged_extractions",
        "messages",
    ]  # fmt: skip
    assert d["now"] == "2026-05-28T20:26:40.662000Z" and d["knowledge_base"] == {
        "path": "kb.json",
        "format": "sdk",
        "facts": 28,
    }
    assert d["writeback"][0]["contradicts"][0]["content_b"] == "Anonymous usage telemetry is disabled by default."
    assert d["windows"][0]["packed"][0]["ttl_days"] == 365.0


# ---- without the model ---------------------------------------------------------------------------------
def test_packed_ids_the_kb_lacks_are_named_and_the_rest_analysed(tmp_path):
    """The multi-window session judged against the KB it started from: window 2 and 3 packed a fact
    window 1 wrote back, which that KB does not hold."""
    emb = HashingEmbedder()
    corpus = prepare_corpus(
        load_ckf(str(KB), source_map=load_source_map(str(MAPPING))), embedder=emb, cache_dir=tmp_path
    )
    r = analyse_session(read_audit(trail_file("multi.audit.jsonl")), corpus, CRPConfig(), embedder=emb)
    assert r.messages == (
        "window 2 (line 21): packed fact '67fc247b-c722-4488-bf02-933517b203a8' is not in the knowledge base given; "
        "the rest of the window is analysed",
        "window 3 (line 51): packed fact '67fc247b-c722-4488-bf02-933517b203a8' is not in the knowledge base given; "
        "the rest of the window is analysed",
        "window 3 (line 51): packed fact '4eb152ad-18e8-4311-bc3b-ef06279b71f4' is not in the knowledge base given; "
        "the rest of the window is analysed",
    )
    w2 = r.windows[1]
    assert w2.missing == ("67fc247b-c722-4488-bf02-933517b203a8",) and len(w2.packed) == 21
    assert ("kb-tel-off", "kb-tel-on") in [(p.fact_a, p.fact_b) for p in w2.pairs]
    assert r.writeback == ()  # the starting KB holds nothing the session wrote
    assert w2.envelope is None and w2.envelope_note.startswith("no question")


def test_query_option_fills_windows_without_transcript(tmp_path):
    emb = HashingEmbedder()
    corpus = prepare_corpus(
        load_ckf(str(SESSIONS / "fanout.closing.json"), source_map=load_source_map(str(MAPPING))),
        embedder=emb,
        cache_dir=tmp_path,
    )
    r = analyse_session(
        read_audit(trail_file("fanout.audit.jsonl")), corpus, CRPConfig(), query="Which TLS version?", embedder=emb
    )
    assert [w.envelope.query_source for w in r.windows] == ["--query"] * 3
    assert [len(w.writeback) for w in r.windows] == [1, 1, 1]  # one fact written back per batch window
    assert {wb.found_by for wb in r.writeback} == {("source_window_id", "facts_extracted")}

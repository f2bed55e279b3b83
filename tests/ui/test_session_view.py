"""The Session page's pure pieces: reading an uploaded trail (streamed to a temporary file, refused over the
limit, its anchor renamed), the chain's sentences and tables (crp_ui.session_chain), the windows' and the
write-back's tables (crp_ui.session_view), and which facts the quarantine action still has to mark, on
the recorded crprotocol sessions with a hashing embedder."""

from __future__ import annotations

import io
import json
from functools import cache

import pytest

from crp_core.analysis.session import SessionReport, analyse_session
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_core.io.ckf.sdk_map import load_source_map
from crp_core.io.session import read_audit
from crp_ui import session_chain as sc
from crp_ui import session_view as sv
from crp_ui.session import Refusal
from crp_ui.session_input import LoadedTrail, read_trail_upload
from crp_ui.session_writeback import to_quarantine
from tests.support.audit_trails import MAPPING, SESSIONS, chain_entries, trail_file, write_trail
from tests.support.embedders import HashingEmbedder

TEL = "ead1dece-38bb-46f7-a5d8-8b96083b781f"
PORT = "64d00742-d7e9-47f4-8a02-fb3aea4978d1"
TIMEOUT = "23a35f7e-2ad0-4234-8666-8fc774a67d80"
PORT_ONLY = "2e1dc3a2-5680-450f-a049-cd934d90738a"


def _upload(name: str, data: bytes) -> io.BytesIO:
    f = io.BytesIO(data)
    f.name = name  # type: ignore[attr-defined]
    return f


def _recorded(name: str) -> io.BytesIO:
    return _upload(name, (SESSIONS / name).read_bytes())


# ---- reading an upload ---------------------------------------------------------------------------
def test_an_uploaded_trail_is_read_with_its_anchor_under_their_names():
    got = read_trail_upload([_recorded("deleted.audit.jsonl"), _recorded("deleted.audit.jsonl.anchor.json")], 10**6)
    assert isinstance(got, LoadedTrail)
    assert (got.name, got.anchor_name, got.size) == ("deleted.audit.jsonl", "deleted.audit.jsonl.anchor.json", 66527)
    t = got.trail
    assert t.path == "deleted.audit.jsonl" and t.anchor is not None
    assert (t.anchor.path, t.anchor.verdict) == ("deleted.audit.jsonl.anchor.json", "differs")
    assert t.chain == read_audit(trail_file("deleted.audit.jsonl")).chain  # the same reading as from the file
    alone = read_trail_upload([_recorded("deleted.audit.jsonl")], 10**6)
    assert isinstance(alone, LoadedTrail) and alone.trail.anchor is None and alone.digest != got.digest


def test_an_upload_over_the_limit_or_not_one_trail_is_refused():
    big = read_trail_upload([_recorded("multi.audit.jsonl")], 1000)
    assert isinstance(big, Refusal) and big.message == "Audit trail multi.audit.jsonl refused"
    assert big.problems[0].message == (
        "multi.audit.jsonl has 1,001 bytes or more; the upload limit is 1,000 bytes (ckf_max_bytes, capped by the "
        "server's server.maxUploadSize)"
    )
    two = read_trail_upload([_recorded("multi.audit.jsonl"), _recorded("deleted.audit.jsonl")], 10**6)
    assert isinstance(two, Refusal) and "got 2 trail(s) and 0 anchor(s)" in two.message
    only_anchor = read_trail_upload([_recorded("multi.audit.jsonl.anchor.json")], 10**6)
    assert isinstance(only_anchor, Refusal) and "got 0 trail(s) and 1 anchor(s)" in only_anchor.message


def test_an_unreadable_anchor_names_the_upload_not_the_temporary_file():
    got = read_trail_upload([_recorded("multi.audit.jsonl"), _upload("multi.audit.jsonl.anchor.json", b"[")], 10**6)
    assert isinstance(got, LoadedTrail) and got.trail.anchor is not None
    a = got.trail.anchor
    assert a.verdict == "unreadable" and a.message.startswith("anchor multi.audit.jsonl.anchor.json: ")
    assert "crp-audit-" not in a.message


# ---- the chain -----------------------------------------------------------------------------------
def test_chain_sentences_and_tables():
    multi = read_audit(trail_file("multi.audit.jsonl"))
    assert sc.chain_headline(multi) == (
        "success",
        "Chain intact: 78 entries checked (sequences 0–77), every hash and link recomputed.",
    )
    assert sc.ending_text(multi) == "Closed: the last entry is compliance.session_closed."
    assert sc.anchor_headline(multi) == (
        "success",
        "Anchor matches: the trail's 78 entries are those the anchor commits to.",
    )
    assert sc.first_break_lines(multi) == ("", "") and sc.breaks_frame(multi).empty
    deleted = read_audit(trail_file("deleted.audit.jsonl"))
    tone, text = sc.chain_headline(deleted)
    assert tone == "error" and text.startswith("Chain broken: 2 break(s) in 77 entries checked (sequences 0–77).")
    assert "First break: line 8 (sequence 8) follows sequence 6: sequence 7 missing" in text
    assert sc.first_break_lines(deleted) == ("Line 8, sequence 8: sequence gap (entries deleted, cut or reordered)", "")
    link = deleted.chain.breaks[1]
    assert link.kind == "link" and len(link.stored) == len(link.expected) == 64
    assert sc.breaks_frame(deleted)["kind"].tolist() == [sc.BREAK_KINDS["sequence"], sc.BREAK_KINDS["link"]]
    link = sc.breaks_frame(deleted).iloc[1]
    assert len(link["written"]) == 17 and link["written"].endswith("…")  # 16 hex digits shown
    assert dict(sc.chain_numbers(deleted))["entries missing"] == "1"
    tampered = read_audit(trail_file("tampered.audit.jsonl"))
    b = tampered.chain.first_break
    assert sc.first_break_lines(tampered) == (
        "Line 3, sequence 2: content changed (does not hash to its entry_hash)",
        f"entry_hash written     {b.stored}\nentry_hash recomputed  {b.expected}",
    )
    truncated = read_audit(trail_file("truncated.audit.jsonl"))
    assert sc.ending_text(truncated).startswith("Truncated: the file ends in the middle of an entry")
    assert (
        sc.anchor_headline(read_audit(trail_file("multi.audit.jsonl"), anchor=SESSIONS / "nope.json"))[0] == "warning"
    )


def test_a_rewritten_link_shows_both_hashes(tmp_path):
    entries = chain_entries([("compliance.session_created", {"model": "m"}), ("compliance.session_closed", {})])
    genuine = entries[0]["entry_hash"]
    entries[1]["previous_hash"] = "ab" * 32  # not hashed: the entry itself still hashes right
    t = read_audit(write_trail(tmp_path / "t.audit.jsonl", entries))
    assert sc.first_break_lines(t) == (
        "Line 2, sequence 1: link broken (previous_hash is not the entry before's)",
        f"previous_hash written          {'ab' * 32}\nthe entry before's entry_hash  {genuine}",
    )


def test_no_anchor_and_an_empty_trail(tmp_path):
    empty = tmp_path / "empty.audit.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    t = read_audit(str(empty))
    assert sc.chain_headline(t) == ("warning", "No audit entry could be read in 2 line(s): the chain is empty.")
    assert sc.anchor_headline(t)[0] == "info"
    assert sc.signatures_text(t).startswith("Signatures: 0 HMAC present, not verifiable without the session key")


# ---- windows and write-back --------------------------------------------------------------------------
def _kb(name: str):
    return load_ckf(str(SESSIONS / name), source_map=load_source_map(str(MAPPING)))


@cache
def _report(trail: str, kb: str, before: bool, tmp: str) -> SessionReport:
    emb = HashingEmbedder()
    corpus = prepare_corpus(_kb(kb), embedder=emb, cache_dir=tmp)
    return analyse_session(
        read_audit(trail_file(trail)), corpus, CRPConfig(), before=_kb("kb.json") if before else None, embedder=emb
    )


@pytest.fixture(scope="module")
def multi(tmp_path_factory) -> SessionReport:
    return _report("multi.audit.jsonl", "kb.json", False, str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="module")
def contradicting(tmp_path_factory) -> SessionReport:
    return _report("contradicting.bundle.jsonl", "contradicting.closing.json", True, str(tmp_path_factory.mktemp("c")))


def test_packed_frame_keeps_the_sdks_order_and_values(multi):
    f = sv.packed_frame(multi, 0)
    assert list(f.columns) == sv.PACKED_COLUMNS and len(f) == 20
    v = multi.windows[0]
    assert f["fact_id"].tolist() == [p.fact_id for p in v.packed]
    assert f["position"].tolist() == sorted(f["position"])
    first = f.iloc[0]
    assert first["relevance"] == pytest.approx(v.packed[0].relevance) and first["tokens"] == v.packed[0].tokens
    ttl = dict(zip(f["fact_id"], f["ttl_days"]))
    assert (ttl["kb-tel-off"], ttl["kb-webhook"]) == (365.0, 180.0)  # by source type under mapping.toml
    w2 = sv.packed_frame(multi, 1)
    assert w2[w2["fact_id"] == "67fc247b-c722-4488-bf02-933517b203a8"]["content"].tolist() == [
        "(not in the knowledge base given)"
    ]


def test_verdict_tables(multi):
    flagged = sv.flagged_frame(multi, 0)
    assert dict(zip(flagged["fact_id"], flagged["state"])) == {
        "kb-tel-on": "expired",
        "kb-timeout-old": "expired",
        "kb-tls-old": "expired",
        "kb-webhook": "ageing",
    }
    assert flagged.set_index("fact_id").loc["kb-tel-on", "recency_factor"] == pytest.approx(0.3)
    pair = multi.windows[0].pairs[0]
    assert sv.pair_heading(pair) == (
        f"kb-tel-off ↔ kb-tel-on · NEGATION_FLIP · cosine {pair.similarity:.3f} · "
        "SPEC-027 keeps kb-tel-off (authority 0.640 vs 0.135)"
    )
    dups = sv.near_duplicates_frame(multi, 0)
    assert dups[["fact_id", "duplicate_of"]].values.tolist() == [
        ["kb-backup-dup", "kb-backup"],
        ["kb-sso-dup", "kb-sso"],
    ]
    sdk = sv.sdk_findings_frame(multi, 0)
    assert len(sdk) == 7 and sdk["agrees"].sum() == sum(1 for c in multi.windows[0].findings if c.agrees)
    ours = sv.ours_frame(multi, 0)
    assert ours["kind"].tolist()[:2] == ["contradictory_pair", "contradictory_pair"]
    assert "silent" in set(ours["the SDK"])
    assert sv.spec027_frame(multi, 0).empty  # no question for this window
    assert sv.kb_mismatch(multi) is None


def test_window_label_and_caption(multi):
    assert sv.window_label(multi, 0) == "window 1 · a988796e… · 20 facts packed · 2 contradictory pair(s)"
    assert sv.envelope_caption(multi, 0).startswith(
        "Window id a988796e-6996-44af-9b72-325fc1f1cf01 · envelope at line 3 (sequence 2) · 31 entries listed · "
        "facts_available 24"
    )


def test_the_bundle_envelope_beside_the_sdks(contradicting):
    e = sv.spec027_frame(contradicting, 0)
    env = contradicting.windows[0].envelope
    assert env is not None and len(e) == len(env.facts)
    assert e["fact_id"].tolist() == [f.fact_id for f in env.facts]
    assert set(e["packed by"]) <= {"both", "SDK only", "SPEC-027 only"}


def test_writeback_frame_with_the_statuses_in_force(contradicting):
    f = sv.writeback_frame(contradicting, {PORT: "QUARANTINED"})
    assert list(f.columns) == sv.WRITEBACK_COLUMNS
    assert f["fact_id"].tolist() == [TEL, PORT, TIMEOUT, PORT_ONLY]
    assert f["status in force"].tolist() == ["ACTIVE", "QUARANTINED", "ACTIVE", "ACTIVE"]
    assert f["found by"].tolist() == ["source_window_id, facts_extracted, absent_before"] * 4
    assert sv.writeback_summary(contradicting) == (
        "4 fact(s) written from the model's answers · contradicting the knowledge base: 0 · restating one of its "
        "facts: 0 · packed again in a later window: 1"
    )  # the hashing embedder finds no write-back fact near a KB fact
    merged = sv.merged_frame(contradicting)
    assert merged["same text as"].tolist() == [PORT, TIMEOUT]
    assert to_quarantine(contradicting, {PORT: "QUARANTINED", TEL: "STALE"}) == [TEL, TIMEOUT, PORT_ONLY]
    assert to_quarantine(contradicting, dict.fromkeys((TEL, PORT, TIMEOUT, PORT_ONLY), "QUARANTINED")) == []


def test_a_knowledge_base_without_the_packed_facts_is_named(tmp_path):
    kb = tmp_path / "other.jsonl"
    kb.write_text(
        json.dumps({"fact_id": "x-1", "content": "Something else entirely.", "source_type": "internal"}) + "\n",
        encoding="utf-8",
    )
    emb = HashingEmbedder()
    corpus = prepare_corpus(load_ckf(str(kb)), embedder=emb, cache_dir=tmp_path / "c")
    r = analyse_session(read_audit(trail_file("multi.audit.jsonl")), corpus, CRPConfig(), embedder=emb)
    assert sv.kb_mismatch(r) == (
        "The knowledge base given (1 facts) holds none of the 22 facts the session packed: it is not the one this "
        "session ran on. Load that knowledge base in the sidebar, or upload the session's closing snapshot."
    )
    assert sv.flagged_frame(r, 0).empty and sv.packed_frame(r, 0)["status"].tolist() == [""] * 20


def test_a_closing_snapshot_of_another_session_is_named(tmp_path):
    r = _report("multi.audit.jsonl", "contradicting.closing.json", True, str(tmp_path))
    assert sv.writeback_mismatch(r) == (
        "4 fact(s) were written by window(s) this trail does not record (87fe88b8-f04a-4087-bb50-fee6e1923a63, "
        "a0e62782-97d5-4e26-a19b-bfd9a72ce5bc): the knowledge base is the closing snapshot of another session, "
        "or the trail lacks those windows."
    )
    assert sv.writeback_frame(r, {})["window"].tolist()[0] == "87fe88b8-f04a-4087-bb50-fee6e1923a63"


def test_the_own_closing_snapshot_raises_no_warning(contradicting):
    assert sv.writeback_mismatch(contradicting) is None

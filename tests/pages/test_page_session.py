"""The Session page (pages/session.py) on the sessions crprotocol 6.2.5 recorded (tests/data/sdk_sessions/):
the chain verdict of each trail (intact, an edited entry, a deleted one, a cut file), the windows judged by
SPEC-027, the write-back and its quarantine through the triage store, and bad input (a line that is not
JSON, another session's entry, a refused upload, a knowledge base the session did not run on).

kb.json is the snapshot every session started from, read under mapping.toml; a hashing bag-of-words
embedder stands in for MiniLM (it finds the telemetry and TLS pairs; the write-back's contradictions
need the real model: the last test)."""

from __future__ import annotations

import hashlib
import json

import pytest

from crp_core.decisions import DecisionSet
from crp_core.triage.store import DecisionStore
from crp_ui import session_input
from tests.support.audit_trails import SESSIONS, chain_entries
from tests.support.pages import frame_with, frames_with, metric, run_page, widget
from tests.support.sdk_pages import settle
from tests.support.session_pages import (
    session_page,
    session_samples,
    texts,
    upload_closing,
    upload_recorded,
    upload_trail,
    uploader,
)

TEL = "ead1dece-38bb-46f7-a5d8-8b96083b781f"  # "Anonymous usage telemetry is now enabled by default."
PORT = "64d00742-d7e9-47f4-8a02-fb3aea4978d1"  # "The admin console listens on port 8080 now."
TIMEOUT = "23a35f7e-2ad0-4234-8666-8fc774a67d80"  # "Idle admin sessions now time out after 60 minutes."
PORT_ONLY = "2e1dc3a2-5680-450f-a049-cd934d90738a"  # "port 8080"
WINDOW_2 = "a0e62782-97d5-4e26-a19b-bfd9a72ce5bc"


@pytest.fixture
def session_env(tmp_path, monkeypatch):
    session_samples(tmp_path, monkeypatch)
    return tmp_path


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    return at


def _first_break(at):
    """The first break's line as the page writes it, and the block of what differs (None without one)."""
    (where,) = [m.value for m in at.markdown if m.value.startswith("**First break**: ")]
    blocks = [c.value for c in at.code if "entry_hash" in c.value or "previous_hash" in c.value]
    return where.removeprefix("**First break**: ").replace("\\", ""), (blocks[0] if blocks else None)


# ---- nothing uploaded ------------------------------------------------------------------------------
def test_a_plain_ckf_without_a_trail_says_what_to_upload(triage_env):
    at = _ok(run_page("session"))
    assert [t.value for t in at.title] == ["SDK session audit"]
    assert [i.value for i in at.info] == [session_input.WHAT_TO_UPLOAD]
    assert "Chain verdict" not in texts(at)
    assert not [d for d in at.dataframe if str(d.key).startswith("crp.page.session")]
    labels = [str(u.proto.label) for u in at.get("file_uploader")]
    assert any(label.startswith("Audit trail (.jsonl), optionally with its .anchor.json") for label in labels)


# ---- the recorded sessions ---------------------------------------------------------------------------
def test_multi_window_session(session_env):
    at = _ok(upload_recorded(session_page(), "multi"))
    shown = texts(at)
    assert "Chain intact: 78 entries checked (sequences 0–77), every hash and link recomputed." in shown
    assert "Anchor matches: the trail's 78 entries are those the anchor commits to." in shown
    assert "Closed: the last entry is compliance.session_closed." in shown
    assert "78 HMAC present, not verifiable without the session key" in shown
    assert metric(at, "entries checked") == "78" and metric(at, "breaks") == "0"
    assert metric(at, "pairs") == "2" and metric(at, "expired") == "3"
    # window 1: the SDK's 20 distinct facts in its order, with SPEC-027's reading of each
    packed = frame_with(at, "position", "relevance", "bookend", "recency")
    assert len(packed) == 20 and list(packed["position"])[:3] == [1, 2, 3]
    tel_on = packed[packed["fact_id"] == "kb-tel-on"].iloc[0]
    assert (tel_on["listed"], tel_on["recency"], tel_on["recency_factor"], tel_on["source_type"]) == (
        2,
        "expired",
        0.3,
        "community",
    )
    # the contradictory pair the SDK packed together, with its authority arbitration
    assert "kb-tel-off ↔ kb-tel-on · NEGATION_FLIP" in shown
    assert "SPEC-027 keeps kb-tel-off (authority 0.640 vs 0.135)" in shown
    tel = next(f for f in frames_with(at, "arithmetic", "role") if set(f["fact_id"]) == {"kb-tel-off", "kb-tel-on"})
    assert dict(zip(tel["fact_id"], tel["role"])) == {"kb-tel-off": "winner", "kb-tel-on": "suppressed"}
    assert tel["authority"].round(4).tolist() == [0.64, 0.135]
    flagged = frame_with(at, "state", "superseded_by")
    assert dict(zip(flagged["fact_id"], flagged["state"])) == {
        "kb-tel-on": "expired",
        "kb-timeout-old": "expired",
        "kb-tls-old": "expired",
        "kb-webhook": "ageing",
    }
    assert frame_with(at, "duplicate_of", "cosine")["fact_id"].tolist() == ["kb-backup-dup", "kb-sso-dup"]
    sdk = frame_with(at, "ours naming them", "agrees")
    assert len(sdk) == 7 and set(sdk["kind"]) == {"omission"}
    # judged against the KB the session started from: the facts window 1 wrote are missing, and said so
    assert "packed fact '67fc247b-c722-4488-bf02-933517b203a8' is not in the knowledge base given" in shown
    assert "holds no fact this session wrote" in shown


def test_another_window_and_a_typed_question(session_env):
    at = upload_recorded(session_page(), "multi")
    widget(at, "selectbox", "crp.page.session.windows.pick").set_value(1).run()
    _ok(at)
    assert len(frame_with(at, "position", "relevance", "bookend", "recency")) == 21
    assert "No SPEC-027 envelope: no question" in texts(at)
    at.text_input(key=session_input.K_QUERY).input("Is anonymous usage telemetry enabled by default?").run()
    _ok(at)
    envelope = frame_with(at, "packed by", "SDK position", "SPEC-027 position", "why")
    assert set(envelope["packed by"]) <= {"both", "SDK only", "SPEC-027 only"}
    assert "kb-tel-on" in set(envelope["fact_id"])
    assert "Question (the question typed above): Is anonymous usage telemetry enabled by default?" in texts(at)


def _line_hashes(name: str, line: int) -> tuple[str, str]:
    """The entry_hash written on ``line`` of a recorded trail, and the SHA-256 of its hashed fields."""
    entry = json.loads((SESSIONS / name).read_text(encoding="utf-8").splitlines()[line - 1])
    body = {k: entry[k] for k in ("event_type", "timestamp", "session_id", "data", "sequence")}
    return entry["entry_hash"], hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def test_tampered_entry_breaks_at_its_line(session_env):
    at = _ok(upload_recorded(session_page(), "tampered"))
    written, recomputed = _line_hashes("tampered.audit.jsonl", 3)
    assert written != recomputed
    assert _first_break(at) == (
        "Line 3, sequence 2: content changed (does not hash to its entry_hash)",
        f"entry_hash written     {written}\nentry_hash recomputed  {recomputed}",
    )
    shown = texts(at)
    assert "Chain broken: 1 break(s) in 78 entries checked (sequences 0–77). First break: line 3 (sequence 2)" in shown
    # the anchor commits to the same hashes: only the recomputation catches an edit that left them in place
    assert "Anchor matches" in shown
    assert len(frame_with(at, "position", "relevance", "bookend", "recency")) == 20  # the rest still shown


def test_deleted_entry_shows_as_a_gap(session_env):
    at = _ok(upload_recorded(session_page(), "deleted"))
    assert _first_break(at) == ("Line 8, sequence 8: sequence gap (entries deleted, cut or reordered)", None)
    breaks = frame_with(at, "message", "written", "expected")
    assert breaks["line"].tolist() == [8, 8] and breaks["sequence"].tolist() == [8, 8]
    gaps = frame_with(at, "after sequence", "found", "missing")
    assert gaps.iloc[0].to_dict() == {"line": 8, "after sequence": 6, "found": 8, "kind": "missing", "missing": 1}
    assert metric(at, "entries missing") == "1" and metric(at, "breaks") == "2"
    assert "Anchor differs: the anchor commits to 78 entries, the trail has 77" in texts(at)


def test_truncated_file(session_env):
    at = _ok(upload_recorded(session_page(), "truncated"))
    assert _first_break(at) == ("Line 10: unreadable line", None)
    shown = texts(at)
    assert "Truncated: the file ends in the middle of an entry" in shown
    assert "line 10**, field `line`: the file ends inside this entry (290 bytes of it)" in shown
    assert "Anchor differs: the anchor commits to 78 entries, the trail has 9" in shown
    assert metric(at, "closed") == "no" and metric(at, "entries checked") == "9"
    assert len(frame_with(at, "position", "relevance", "bookend", "recency")) == 20  # window 1 is whole


# ---- bad input ---------------------------------------------------------------------------------------
def test_a_line_that_is_not_json_and_a_foreign_entry(session_env):
    lines = (SESSIONS / "multi.audit.jsonl").read_bytes().split(b"\n")
    (foreign,) = chain_entries(
        [("compliance.data_accessed", {"n": 1})], session_id="ffffffff-0000-4000-8000-000000000000"
    )
    bad = [*lines[:5], b"{not json", json.dumps(foreign, separators=(",", ":")).encode(), *lines[5:]]
    at = _ok(upload_trail(session_page(), ("edited.audit.jsonl", b"\n".join(bad))))
    shown = texts(at)
    assert "1 line(s) could not be read as audit entries; the rest of the trail is shown" in shown
    assert "line 6**, field `line`: not JSON" in shown
    assert "1 entries were recorded for another session than 7c200535-d1fd-4cfa-879c-6f6fbfae460d." in shown
    foreign_rows = frame_with(at, "session_id", "event_type")
    assert foreign_rows.iloc[0].to_dict() == {
        "line": 7,
        "sequence": 0,
        "session_id": "ffffffff-0000-4000-8000-000000000000",
        "event_type": "compliance.data_accessed",
    }
    assert len(frame_with(at, "position", "relevance", "bookend", "recency")) == 20


def test_a_refused_upload_keeps_the_trail_read_before(session_env):
    at = upload_recorded(session_page(), "multi")
    data = (SESSIONS / "deleted.audit.jsonl").read_bytes()
    at = _ok(upload_trail(at, ("a.audit.jsonl", data), ("b.audit.jsonl", data)))
    shown = texts(at)
    assert "Upload one audit trail (.jsonl) and at most one anchor (.anchor.json) at a time" in shown
    assert "The trail read before stays loaded." in shown and "Loaded: **multi.audit.jsonl**" in shown
    assert "Chain intact: 78 entries checked" in shown
    assert uploader(at, "Audit trail").value in (None, [])  # the uploader was given a fresh key


def test_a_knowledge_base_the_session_did_not_run_on(triage_env):
    at = run_page("session")
    at = _ok(upload_recorded(at, "multi"))
    shown = texts(at)
    assert "Chain intact: 78 entries checked" in shown and "Packed facts the knowledge base does not hold" not in shown
    assert "holds none of the 22 facts the session packed: it is not the one this session ran on" in shown


# ---- write-back and its quarantine -------------------------------------------------------------------
def test_contradicting_session_write_back_and_quarantine(session_env):
    at = upload_recorded(session_page(), "contradicting", anchor=False)
    at = _ok(upload_closing(at, "contradicting.closing.json"))
    shown = texts(at)
    assert "Judged against contradicting.closing.json (closing snapshot) (28 facts)" in shown
    assert "No anchor checked" in shown
    wb = frame_with(at, "packed again in", "status in force")
    assert wb["fact_id"].tolist() == [TEL, PORT, TIMEOUT, PORT_ONLY]
    assert wb["window"].tolist() == ["window 1", "window 2", "window 2", "window 2"]
    assert wb["confidence"].tolist() == [0.85, 0.85, 0.85, 0.95]
    assert wb["packed again in"].tolist() == ["window 2", "", "", ""]
    assert wb["found by"].tolist() == ["source_window_id, facts_extracted, absent_before"] * 4
    assert set(wb["status in force"]) == {"ACTIVE"}
    # what the Conflicts queue marks as a pair of its own kind (crp_ui.conflict_queue.with_writeback_marks)
    assert at.session_state["crp.session.writeback"] == {
        TEL: "window 1 of SDK session b3163490",
        PORT: "window 2 of SDK session b3163490",
        TIMEOUT: "window 2 of SDK session b3163490",
        PORT_ONLY: "window 2 of SDK session b3163490",
    }
    button = at.button(key="crp.page.session.writeback.quarantine")
    assert button.disabled and button.label == "Quarantine what the session wrote (4 fact(s))"
    assert "Enter your name under **Operator name** in the sidebar to record decisions." in texts(at)
    [w for w in at.sidebar.text_input if w.label == "Operator name"][0].input("ada").run()
    at.text_input(key="crp.page.session.writeback.note").input("stale answers of the stub model").run()
    at.button(key="crp.page.session.writeback.quarantine").click().run()
    _ok(settle(at))
    assert "Recorded decision(s) #1–#4: 4 fact(s) the session wrote marked QUARANTINED (by ada)" in texts(at)
    assert set(frame_with(at, "packed again in", "status in force")["status in force"]) == {"QUARANTINED"}
    button = at.button(key="crp.page.session.writeback.quarantine")
    assert button.disabled and button.label == "Everything the session wrote is quarantined"
    with DecisionStore(str(session_env / "triage.sqlite")) as store:
        log = store.all()
    assert [(d.pair, d.kind, d.target_fact, d.new_status, d.operator) for d in log] == [
        ((TEL, "window:87fe88b8-f04a-4087-bb50-fee6e1923a63"), "mark_status", TEL, "QUARANTINED", "ada"),
        ((PORT, f"window:{WINDOW_2}"), "mark_status", PORT, "QUARANTINED", "ada"),
        ((TIMEOUT, f"window:{WINDOW_2}"), "mark_status", TIMEOUT, "QUARANTINED", "ada"),
        ((PORT_ONLY, f"window:{WINDOW_2}"), "mark_status", PORT_ONLY, "QUARANTINED", "ada"),
    ]
    assert log[0].note.startswith("stale answers of the stub model\nwritten back by crprotocol session b3163490")
    assert set(DecisionSet.from_decisions(log).statuses) == {TEL, PORT, TIMEOUT, PORT_ONLY}


def test_the_bundle_gives_each_window_its_question(session_env):
    at = upload_trail(
        session_page(), ("contradicting.bundle.jsonl", (SESSIONS / "contradicting.bundle.jsonl").read_bytes())
    )
    _ok(at)
    shown = texts(at)
    assert (
        "**Question** (the trail's transcript): Is anonymous telemetry enabled by default? Answer from the stale notes."
        in shown
    )
    envelope = frame_with(at, "packed by", "SDK position", "SPEC-027 position", "why")
    kb_tel_on = envelope[envelope["fact_id"] == "kb-tel-on"].iloc[0]
    assert kb_tel_on["packed by"] == "SDK only" and kb_tel_on["SDK position"] == 2
    assert kb_tel_on["why"].startswith("kb-tel-on: the SDK packed it at position 2; SPEC-027 leaves it out:")


@pytest.mark.model
def test_with_minilm_the_write_back_contradicts_the_kb(tmp_path, monkeypatch):
    session_samples(tmp_path, monkeypatch, minilm=True)
    at = upload_recorded(session_page(), "contradicting", anchor=False)
    at = _ok(upload_closing(at, "contradicting.closing.json"))
    wb = frame_with(at, "packed again in", "status in force")
    assert wb["contradicts"].tolist() == ["kb-tel-off", "kb-port-new", "kb-timeout", ""]
    assert wb["restates"].tolist() == ["kb-tel-on (ACTIVE)", "kb-port-old (STALE)", "kb-timeout-old (ACTIVE)", ""]
    shown = texts(at)
    assert "**arbitration** NUMBER_CHANGED: kb-port-new (SPEC-027 keeps kb-port-new: authority 0.640 vs 0.350)" in shown
    assert "**restates** kb-port-old (STALE, cosine 0.974): a superseded value revived" in shown


def test_text_from_the_trail_is_shown_inert(session_env):
    """A session id, an event type and a model name holding Markdown, HTML and a bidi override: shown as
    text, the override as a visible escape, never as a link, a tag or reversed text."""
    hostile = "[click](http://evil.example) <b>bold</b> \u202eevil"
    entries = chain_entries(
        [
            ("compliance.session_created", {"model": hostile, "protocol_version": "6.2.5"}),
            ("compliance.session_closed", {}),
        ],
        session_id=hostile,
    )
    (unknown,) = chain_entries([(hostile, {})], session_id="another")
    lines = [json.dumps(e, separators=(",", ":")).encode() for e in [*entries, unknown]]
    at = _ok(upload_trail(session_page(), ("hostile.audit.jsonl", b"\n".join(lines))))
    markdown = "\n".join(
        str(e.value) for kind in ("markdown", "caption", "warning", "error", "info") for e in getattr(at, kind)
    )
    assert "\u202e" not in markdown and r"⟨U\+202E⟩evil" in markdown
    assert "](http" not in markdown and "<b>" not in markdown
    assert r"\[click\]" in markdown  # Markdown-escaped, so no link forms
    foreign = frame_with(at, "session_id", "event_type")
    assert foreign["session_id"].tolist() == ["another"] and foreign["event_type"].tolist() == [
        "[click](http://evil.example) <b>bold</b> ⟨U+202E⟩evil"
    ]


def test_fanout_session_with_its_closing_snapshot(session_env):
    at = upload_recorded(session_page(), "fanout")
    at = _ok(upload_closing(at, "fanout.closing.json"))
    assert "Chain intact: 93 entries checked (sequences 0–92)" in texts(at)
    assert len(widget(at, "selectbox", "crp.page.session.windows.pick").options) == 3
    wb = frame_with(at, "packed again in", "status in force")
    assert wb["window"].tolist() == ["window 1", "window 2", "window 3"]  # one fact written back per batch window
    assert at.button(key="crp.page.session.writeback.quarantine").label == (
        "Quarantine what the session wrote (3 fact(s))"
    )

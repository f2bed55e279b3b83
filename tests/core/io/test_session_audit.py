"""crprotocol audit trails (crp_core.io.session): the chain re-checked on the recorded sessions of
tests/data/sdk_sessions/ (written by the real SDK), the anchor, the windows, bad input line by line,
and the chain's invariants under single-byte edits and deleted entries."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.errors import ValidationError
from crp_core.io.session import MerkleRoot, entry_hash, read_audit
from crp_core.io.session import windows as windows_mod
from tests.support.audit_trails import SESSION_ID, chain_entries, trail_file, write_trail

MULTI = trail_file("multi.audit.jsonl")
MULTI_LINES = Path(MULTI).read_bytes().split(b"\n")


# ---- the recorded sessions -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "entries", "windows"),
    [("multi.audit.jsonl", 78, 3), ("fanout.audit.jsonl", 93, 3), ("contradicting.audit.jsonl", 51, 2)],
)
def test_recorded_sessions_are_intact_and_match_their_anchor(name, entries, windows):
    t = read_audit(trail_file(name))
    c = t.chain
    assert (c.verdict, c.entries, c.first_sequence, c.last_sequence) == ("intact", entries, 0, entries - 1)
    assert c.first_break is None and c.breaks == () and c.gaps == () and c.foreign == ()
    assert c.closed is True and c.truncated is False
    assert c.signed == entries and c.receipts == 0  # HMAC on every entry, no Ed25519 receipt
    assert c.reformatted_total == 0  # every line is byte for byte what the SDK writes
    # the SDK's own anchor: our streamed Merkle root is the one it committed to
    assert t.anchor is not None and t.anchor.verdict == "matches"
    assert (t.anchor.entry_count, t.anchor.root_hash) == (entries, t.anchor.root_read)
    assert t.windows_total == windows and len(t.windows) == windows
    assert t.problems == () and t.unknown_events == () and t.unknown_total == 0
    assert t.model == "stub-echo" and t.protocol_version == "6.2.5"
    assert t.closing["audit_entries"] == entries - 1


def test_tampered_entry_is_caught_at_its_line_and_the_anchor_cannot_see_it():
    t = read_audit(trail_file("tampered.audit.jsonl"))
    c = t.chain
    assert c.verdict == "broken" and c.breaks_total == 1
    b = c.first_break
    assert (b.line, b.sequence, b.kind) == (3, 2, "content")
    assert b.stored == "eae3c8ab061be0c571042cfdd06f0e6e6187a8f5f43dfdcd0a9888802fe28090"
    assert b.expected == "e196c65f91bb47356058dd551e05b595e9caa466ad380a71502646b5cfa89188"
    assert b.message.startswith("line 3 (sequence 2): the entry does not hash to its entry_hash")
    # the edit kept the written hashes, so the next link and the anchor's root still hold
    assert t.anchor.verdict == "matches"
    # what was edited: the first window's envelope says 19 facts included (the SDK wrote 20)
    assert t.windows[0].envelope["facts_included"] == 19


def test_deleted_entry_is_caught_at_the_line_after_it():
    t = read_audit(trail_file("deleted.audit.jsonl"))
    c = t.chain
    assert c.verdict == "broken" and c.entries == 77 and c.missing_entries == 1
    assert [(b.line, b.sequence, b.kind) for b in c.breaks] == [(8, 8, "sequence"), (8, 8, "link")]
    assert c.first_break.message == "line 8 (sequence 8) follows sequence 6: sequence 7 missing (entries deleted)"
    assert c.gaps[0].after == 6 and c.gaps[0].found == 8 and c.gaps[0].missing == 1
    assert c.breaks[1].expected == json.loads(MULTI_LINES[6])["entry_hash"]  # line 7's hash
    assert c.breaks[1].stored == json.loads(MULTI_LINES[7])["entry_hash"]  # the removed entry's
    assert (t.anchor.verdict, t.anchor.entry_count, t.anchor.entries_read) == ("differs", 78, 77)


def test_truncated_trail_keeps_every_entry_before_the_cut():
    t = read_audit(trail_file("truncated.audit.jsonl"))
    c = t.chain
    assert (c.verdict, c.entries, c.truncated, c.closed) == ("broken", 9, True, False)
    assert (c.first_break.line, c.first_break.kind) == (10, "unreadable")
    assert [str(p) for p in t.problems] == [
        "line 10, field 'line': the file ends inside this entry (290 bytes of it): the trail was cut mid-line"
    ]
    assert t.anchor.verdict == "differs" and "entries were removed" in t.anchor.message
    # the first window was read whole before the cut: its packed envelope and extracted facts are kept
    w = t.windows[0]
    assert w.window_id == "a988796e-6996-44af-9b72-325fc1f1cf01" and len(w.packed) == 31 and len(w.extracted) == 3


def test_windows_of_the_multi_window_session():
    t = read_audit(trail_file("multi.bundle.jsonl"))
    assert t.transcripts == 3 and t.transcripts_unmatched == 0 and t.anchor is None
    w1, w2, w3 = t.windows
    assert [w.index for w in t.windows] == [1, 2, 3]
    assert (w1.line, w1.sequence, w1.has_envelope) == (3, 2, True)
    assert w1.query == "Which port does the admin console listen on, and is anonymous telemetry on by default?"
    assert w1.output.startswith("The admin console listens on port 9090.")
    assert w1.task_input_hash == "184994d503fd7b0b"
    assert w1.envelope == {
        "facts_available": 24,
        "facts_included": 20,
        "facts_considered": 20,
        "budget_tokens": 7397,
        "envelope_tokens": 378,
        "saturation": 0.0511,
    }
    assert w1.packed_total == 31 and len(w1.packed_ids) == 20
    first = w1.packed[0]
    assert (first.position, first.fact_id, first.relevance, first.tokens) == (1, "kb-tel-off", 0.9156, 8)
    assert w1.packed_ids[:2] == ("kb-tel-off", "kb-tel-on")  # the contradictory pair, packed side by side
    assert sum(p.bookend for p in w1.packed) == 6
    assert [(e.fact_id[:8], e.confidence, e.text_preview) for e in w1.extracted] == [
        ("13410096", 0.85, "The admin console listens on port 9090."),
        ("b9600780", 0.85, "Anonymous usage telemetry is disabled by default."),
        ("67fc247b", 0.95, "port 9090"),
    ]
    assert [f.kind for f in w1.findings] == ["omission"] * 7
    assert (w1.findings[0].fact_id, w1.findings[0].severity, w1.findings[0].line) == ("kb-rate-new", "CRITICAL", 10)
    # a fact the session wrote back in window 1 is packed in window 2
    assert "67fc247b-c722-4488-bf02-933517b203a8" in w2.packed_ids
    assert w3.query == "When does the nightly backup run and how long are its snapshots kept?"


def test_sdk_findings_of_the_contradicting_session():
    t = read_audit(trail_file("contradicting.bundle.jsonl"))
    w2 = t.windows[1]
    found = {f.kind: f for f in w2.findings if f.kind != "omission"}
    assert set(found) == {"distortion", "fabrication"}
    d, fab = found["distortion"], found["fabrication"]
    assert (d.line, d.claim_index, d.values) == (31, 0, ("8080", "9090"))
    assert d.detail == "NUMBER_CHANGED: Claim uses '8080' but source fact uses '9090'"
    assert (fab.values, fab.severity, fab.detail) == (("8080",), "0.7", "NUMBER '8080' in no packed fact")


# ---- the anchor's Merkle root -------------------------------------------------------------------
def _level_root(leaves: list[str]) -> str:
    """The SDK's scheme level by level: pairs hashed, a lone last node moved up unchanged."""
    import hashlib

    level = [bytes.fromhex(x) for x in leaves]
    while len(level) > 1:
        nxt = [hashlib.sha256(level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0].hex() if level else ""


@given(st.lists(st.binary(min_size=32, max_size=32), max_size=40))
def test_streamed_merkle_root_equals_the_level_by_level_build(leaves):
    m = MerkleRoot()
    for leaf in leaves:
        m.add(leaf.hex())
    assert m.root() == _level_root([x.hex() for x in leaves]) and m.count == len(leaves)


# ---- bad input ----------------------------------------------------------------------------------
def _lines_of(entries):
    return [json.dumps(e, separators=(",", ":")) for e in entries]


def _events(n):
    return [("compliance.data_processed", {"phase": "started", "n": i}) for i in range(n)]


def test_bad_lines_are_problems_at_their_line_and_nothing_else_is_lost(tmp_path):
    lines = _lines_of(chain_entries(_events(6)))
    lines.insert(2, "{not json")
    lines.insert(4, "[1, 2]")
    lines.insert(5, "")
    raw = "\n".join(lines).encode() + b"\n\xff\xfe\n"
    path = tmp_path / "t.audit.jsonl"
    path.write_bytes(raw)
    t = read_audit(str(path))
    assert [str(p) for p in t.problems] == [
        "line 3, field 'line': not JSON (Expecting property name enclosed in double quotes at column 2)",
        "line 5, field 'line': a list, not an audit entry (a JSON object)",
        "line 10, field 'line': not UTF-8 (byte 1 of the line)",
    ]
    c = t.chain
    assert c.entries == 6 and c.verdict == "broken"  # every entry read; the bad lines are breaks
    assert [(b.line, b.kind) for b in c.breaks] == [(3, "unreadable"), (5, "unreadable"), (10, "unreadable")]
    assert t.event_counts == {"compliance.data_processed": 6}


def test_missing_or_mistyped_chain_fields_name_the_field(tmp_path):
    entries = chain_entries(_events(4))
    del entries[1]["entry_hash"]
    entries[2]["sequence"] = True
    entries[3]["data"] = "text"
    t = read_audit(write_trail(tmp_path / "t.jsonl", entries))
    assert [str(p) for p in t.problems] == [
        "line 2, field 'entry_hash': missing: a chain entry has event_type, timestamp, session_id, data, "
        "sequence, previous_hash and entry_hash",
        "line 3, field 'sequence': a boolean, not an integer",
        "line 4, field 'data': a string, not an object",
    ]
    assert t.chain.entries == 1


def test_a_timestamp_no_float_holds_is_a_problem_of_its_line(tmp_path):
    """A 401-digit timestamp raised OverflowError in float() (a traceback of crp-inspect session)."""
    entries = chain_entries(_events(4))
    lines = [json.dumps(e) for e in entries]
    lines[1] = lines[1].replace(f'"timestamp": {json.dumps(entries[1]["timestamp"])}', '"timestamp": 1' + "0" * 400)
    lines[2] = lines[2].replace(f'"timestamp": {json.dumps(entries[2]["timestamp"])}', '"timestamp": NaN')
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines) + "\n")
    t = read_audit(str(p))
    assert [(q.line, q.field) for q in t.problems] == [(2, "timestamp"), (3, "timestamp")]
    assert t.problems[1].message == "NaN, not a finite number of seconds a float holds"


def test_unknown_event_types_are_kept_in_the_chain_and_listed(tmp_path):
    events = _events(2) + [("vendor.custom_thing", {"x": 1}), ("compliance.session_closed", {"audit_entries": 3})]
    t = read_audit(write_trail(tmp_path / "t.jsonl", chain_entries(events)))
    assert t.chain.verdict == "intact" and t.chain.closed is True
    assert [(u.line, u.sequence, u.event_type) for u in t.unknown_events] == [(3, 2, "vendor.custom_thing")]
    assert t.event_counts["vendor.custom_thing"] == 1


def test_entries_of_another_session_are_listed_and_left_out_of_the_windows(tmp_path):
    ours = chain_entries([("compliance.session_created", {"model": "m"})] + _events(2))
    theirs = chain_entries(
        [("compliance.envelope_context_selected", {"window_id": "primary", "packed_facts": []})],
        session_id="other-session",
    )
    t = read_audit(write_trail(tmp_path / "t.jsonl", ours[:2] + theirs + ours[2:]))
    c = t.chain
    assert c.session_id == SESSION_ID
    assert [(f.line, f.session_id, f.event_type) for f in c.foreign] == [
        (3, "other-session", "compliance.envelope_context_selected")
    ]
    # spliced in: its sequence (0) and its link break the chain at its line and at the next
    assert [(b.line, b.kind) for b in c.breaks] == [(3, "sequence"), (3, "link"), (4, "link")]
    assert t.windows == ()


def test_an_over_long_line_is_skipped_by_length(tmp_path):
    entries = chain_entries(_events(3))
    entries[1]["data"]["pad"] = "x" * 5000
    t = read_audit(write_trail(tmp_path / "t.jsonl", entries), max_line_bytes=1024)
    size = len(json.dumps(entries[1], separators=(",", ":"))) + 1
    assert [str(p) for p in t.problems] == [
        f"line 2, field 'line': {size:,} bytes long, over the 1,024 a line may have: not read"
    ]
    assert t.chain.entries == 2 and t.chain.breaks[0].line == 2


def test_a_file_that_is_not_a_regular_file_is_refused(tmp_path):
    with pytest.raises(ValidationError, match="audit trail .* refused"):
        read_audit(str(tmp_path))
    with pytest.raises(ValidationError, match="audit trail .* refused"):
        read_audit(str(tmp_path / "absent.jsonl"))


def test_an_empty_file_is_an_empty_chain(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text("")
    t = read_audit(str(p))
    assert (t.chain.verdict, t.chain.entries, t.chain.closed, t.windows) == ("empty", 0, False, ())


def test_an_unreadable_anchor_is_said(tmp_path):
    path = write_trail(tmp_path / "t.jsonl", chain_entries(_events(2)))
    Path(path + ".anchor.json").write_text("[]")
    t = read_audit(path)
    assert (t.anchor.verdict, t.anchor.message) == ("unreadable", f"anchor {path}.anchor.json: not a JSON object")


def test_a_value_edit_kept_equal_is_reported_as_reformatted(tmp_path):
    entries = chain_entries([("compliance.data_processed", {"note": "caf\u00e9"})] * 2)
    lines = _lines_of(entries)
    assert "\\u00e9" in lines[1]
    lines[1] = lines[1].replace("\\u00e9", "\\u00E9")  # the same character, other bytes
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines))
    c = read_audit(str(path)).chain
    assert c.verdict == "intact" and c.reformatted == (2,)


def test_windows_past_the_cap_are_counted_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(windows_mod, "MAX_WINDOWS", 2)
    events = []
    for i in range(4):
        events.append(("compliance.envelope_context_selected", {"window_id": "primary", "packed_facts": []}))
        events.append(("compliance.llm_call_completed", {"window_id": f"w-{i}", "task_input_hash": "ab"}))
    t = read_audit(write_trail(tmp_path / "t.jsonl", chain_entries(events)))
    assert t.windows_total == 4 and [w.window_id for w in t.windows] == ["w-0", "w-1"]


# ---- invariants -----------------------------------------------------------------------------------
def _data_span(line: bytes) -> tuple[int, int]:
    start = line.index(b'"data":') + len(b'"data":')
    end = line.index(b',"schema_version"')
    return start, end


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_single_byte_edit_of_a_data_field_is_caught_at_its_line(tmp_path, data):
    k = data.draw(st.integers(0, len(MULTI_LINES) - 1), label="line index")
    line = MULTI_LINES[k]
    start, end = _data_span(line)
    pos = data.draw(st.integers(start, end - 1), label="byte")
    new = data.draw(st.integers(0, 255).filter(lambda b: b != line[pos]), label="value")
    edited = line[:pos] + bytes([new]) + line[pos + 1 :]
    path = tmp_path / "edit.jsonl"
    path.write_bytes(b"\n".join([*MULTI_LINES[:k], edited, *MULTI_LINES[k + 1 :]]))
    c = read_audit(str(path), anchor=str(tmp_path / "none")).chain
    caught = c.first_break is not None and c.first_break.line == k + 1
    assert caught or c.reformatted == (k + 1,), (k, pos, new)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(MULTI_LINES) - 1))
def test_deleting_any_entry_is_caught(tmp_path, k):
    path = tmp_path / "del.audit.jsonl"
    path.write_bytes(b"\n".join(MULTI_LINES[:k] + MULTI_LINES[k + 1 :]))
    (tmp_path / "del.audit.jsonl.anchor.json").write_bytes(Path(MULTI + ".anchor.json").read_bytes())
    t = read_audit(str(path))
    if k < len(MULTI_LINES) - 1:  # the entry after it no longer follows: caught at the line it moved to
        assert (t.chain.first_break.line, t.chain.first_break.kind) == (k + 1, "sequence")
    else:  # the last entry: the chain cannot see it, the anchor and the missing session_closed do
        assert t.chain.verdict == "intact" and t.chain.closed is False
    assert t.anchor.verdict == "differs"


def test_entry_hash_is_the_sdks(tmp_path):
    for raw in MULTI_LINES:
        e = json.loads(raw)
        assert entry_hash(e) == e["entry_hash"]


# ---- size --------------------------------------------------------------------------------------------
def test_a_large_trail_streams_in_bounded_memory(tmp_path):
    """A trail many times larger than what the reader holds: 12,000 entries of ~1.6 KB (about 19 MB).
    The reader keeps one line, the chain's previous hash, the Merkle nodes (one per level) and capped
    lists, so its peak allocation stays a small fraction of the file whatever the file's size."""
    pad = "p" * 1500
    path = tmp_path / "big.audit.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        prev = "0" * 64
        for e in chain_entries([("compliance.data_processed", {"pad": pad})] * 12_000):
            fh.write(json.dumps(e, separators=(",", ":")) + "\n")
            prev = e["entry_hash"]
    size = path.stat().st_size
    assert size > 18_000_000 and prev
    tracemalloc.start()
    try:
        t = read_audit(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert t.chain.verdict == "intact" and t.chain.entries == 12_000 and t.lines == 12_000
    assert peak < 1_000_000 < size // 18

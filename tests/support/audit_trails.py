"""crprotocol audit trails for tests: the recorded fixtures of ``tests/data/sdk_sessions/`` and a writer of
synthetic chains, hashed here with hashlib the way the SDK's trail hashes (sorted keys, no spaces), so
the reader under test is checked against an independent computation."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tests.support.paths import TEST_DATA

SESSIONS = TEST_DATA / "sdk_sessions"
KB = SESSIONS / "kb.json"
MAPPING = SESSIONS / "mapping.toml"
SESSION_ID = "11111111-2222-4333-8444-555555555555"


def trail_file(name: str) -> str:
    """The path of a recorded trail (``multi.audit.jsonl``, ``contradicting.bundle.jsonl``, ...)."""
    return str(SESSIONS / name)


def chain_entries(
    events: Iterable[tuple[str, Mapping[str, Any]]], *, session_id: str = SESSION_ID, t0: float = 1780000000.0
) -> list[dict[str, Any]]:
    """Chain entries for ``(event_type, data)`` in order, linked and hashed as the SDK does."""
    out: list[dict[str, Any]] = []
    prev = "0" * 64
    for seq, (event, data) in enumerate(events):
        ts = t0 + seq / 1000
        body = {"event_type": event, "timestamp": ts, "session_id": session_id, "data": dict(data), "sequence": seq}
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        out.append(
            {
                "entry_id": f"audit-{seq:012x}",
                "event_type": event,
                "timestamp": ts,
                "session_id": session_id,
                "data": dict(data),
                "schema_version": "1.0.0",
                "sequence": seq,
                "previous_hash": prev,
                "entry_hash": digest,
                "signature": "ab" * 32,
                "receipt": "",
            }
        )
        prev = digest
    return out


def write_trail(path: Path, entries: Iterable[Mapping[str, Any]], *, final_newline: bool = False) -> str:
    """The entries one per line, as the SDK's ``export_jsonl`` writes them (no line break after the last)."""
    text = "\n".join(json.dumps(e, separators=(",", ":")) for e in entries)
    path.write_text(text + ("\n" if final_newline else ""), encoding="utf-8")
    return str(path)

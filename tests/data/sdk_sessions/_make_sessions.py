"""Recipe for the crprotocol session fixtures of ``tests/data/sdk_sessions/`` (docs/decisions/sdk-sessions.md).

Every audit trail and snapshot here is written by the reference SDK itself (crprotocol 6.2.5) running
real sessions fully offline: the model is the SDK's own ``CustomProvider`` around a stub that answers
each question with a fixed text, the knowledge fabric is a snapshot persisted by
``ContextualKnowledgeFabric.persist`` and loaded by ``CRPOrchestrator.resume``. crp-inspect never
imports the SDK. Run, from the repository root::

    python3.11 -m venv /tmp/sdkvenv
    /tmp/sdkvenv/bin/pip install crprotocol==6.2.5
    /tmp/sdkvenv/bin/python tests/data/sdk_sessions/_make_sessions.py

Written here:

- ``kb.json``: the knowledge base every session starts from (24 facts: four supersessions by
  ``superseded_by``, three contradictions the SDK never marked, two near-duplicate pairs, facts past
  their TTL or ageing under ``mapping.toml``'s source types);
- ``multi.audit.jsonl`` (+ ``.anchor.json``, ``multi.closing.json``): three windows whose answers
  restate the knowledge base; transcript capture on, and ``multi.bundle.jsonl``, the same trail
  exported with its transcript lines (``export_jsonl(include_transcripts=True)``);
- ``fanout.audit.jsonl`` (+ anchor, ``fanout.closing.json``): three windows through ``dispatch_batch``
  and two branches through the SDK's ``ParallelFanOut`` (``orchestrator.parallel.fan_out``), which
  call the model without an envelope and record nothing in the audit trail;
- ``contradicting.audit.jsonl`` (+ anchor, ``contradicting.closing.json``, ``contradicting.bundle.jsonl``):
  two windows whose stub answers give stale values (telemetry enabled, port 8080, a 60-minute
  timeout), which the SDK extracts and writes back as new facts;
- derived from ``multi.audit.jsonl`` by this recipe: ``tampered.audit.jsonl`` (the data of the entry
  on line 3, the first window's packed context, edited; its hashes left), ``deleted.audit.jsonl`` (the
  entry on line 8 removed),
  ``truncated.audit.jsonl`` (cut in the middle of line 10), each beside a copy of the session's anchor.

Reproducible: before the SDK is imported, the wall clock (``time.time``) and the monotonic clocks are
replaced by counters that advance on the main thread only, ``os.urandom`` by a seeded generator (so
the session ids, window ids, fact ids and the per-session HMAC key, which is never written anywhere,
come out the same), and the anchor's ``anchored_at`` is pinned. A rerun rewrites the same bytes.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
T0 = 1780000000.0  # 2026-05-28T20:26:40Z: the pinned clock the sessions start at
DAY = 86400.0


class _Clock:
    """A clock that advances by ``step`` on each main-thread read (other threads read without advancing)."""

    def __init__(self, start: float, step: float) -> None:
        self.start, self.step, self.n = start, step, 0

    def read(self) -> float:
        if threading.current_thread() is threading.main_thread():
            self.n += 1
        return self.start + self.n * self.step


_WALL = _Clock(T0, 0.001)
_MONO = _Clock(1000.0, 0.0001)
_RNG = random.Random(20260528)
_PATCHES = [
    mock.patch.object(time, "time", _WALL.read),
    mock.patch.object(time, "monotonic", _MONO.read),
    mock.patch.object(time, "monotonic_ns", lambda: int(_MONO.read() * 1e9)),
    mock.patch.object(time, "perf_counter", _MONO.read),
    mock.patch.object(time, "perf_counter_ns", lambda: int(_MONO.read() * 1e9)),
    mock.patch.object(os, "urandom", lambda n: _RNG.randbytes(n)),
    mock.patch.dict(sys.modules, {"blake3": None}),  # the snapshots' checksum: SHA-256
]
for _p in _PATCHES:
    _p.start()

# the SDK, imported under the patches above (its dataclasses bind time.time at import)
from crp.ckf.fabric import ContextualKnowledgeFabric  # noqa: E402
from crp.core.orchestrator import CRPOrchestrator  # noqa: E402
from crp.extraction.types import Fact  # noqa: E402
from crp.providers.custom import CustomProvider  # noqa: E402
from crp.security import audit_anchor  # noqa: E402

SYSTEM = "You answer operators' questions about the Relay gateway from the verified context."

# (id, text, category, source window, days before T0, confidence, superseded by)
KB: tuple[tuple[str, str, str, str, float, float, str | None], ...] = (
    ("kb-tel-off", "Anonymous usage telemetry is disabled by default.", "config", "docs-2025", 30, 0.92, None),
    ("kb-tel-on", "Anonymous usage telemetry is enabled by default.", "config", "blog-2023", 700, 0.70, None),
    ("kb-port-new", "The admin console listens on port 9090.", "config", "docs-2025", 20, 0.90, None),
    ("kb-port-old", "The admin console listens on port 8080.", "config", "docs-2023", 600, 0.85, "kb-port-new"),
    (
        "kb-rate-new",
        "The API gateway allows 1000 requests per minute for each client key.",
        "policy",
        "docs-2025",
        40,
        0.90,
        None,
    ),
    (
        "kb-rate-old",
        "The API gateway allows 500 requests per minute for each client key.",
        "policy",
        "wiki-2024",
        300,
        0.80,
        "kb-rate-new",
    ),
    (
        "kb-backup",
        "The nightly backup job runs at 02:00 UTC and keeps 14 days of snapshots.",
        "ops",
        "ops-runbook",
        90,
        0.90,
        None,
    ),
    (
        "kb-backup-dup",
        "The nightly backup job runs at 02:00 UTC and it keeps 14 days of snapshots.",
        "ops",
        "wiki-2024",
        120,
        0.75,
        None,
    ),
    ("kb-owner-new", "The billing service is owned by the platform team.", "org", "org-2025", 15, 0.88, None),
    (
        "kb-owner-old",
        "The billing service is owned by the payments team.",
        "org",
        "org-2024",
        200,
        0.80,
        "kb-owner-new",
    ),
    ("kb-retention-new", "Audit logs are retained for 400 days.", "policy", "docs-2025", 25, 0.90, None),
    ("kb-retention-old", "Audit logs are retained for 90 days.", "policy", "docs-2023", 500, 0.85, "kb-retention-new"),
    (
        "kb-tls",
        "TLS 1.2 is the minimum protocol version for client connections.",
        "security",
        "docs-2025",
        60,
        0.9,
        None,
    ),
    (
        "kb-tls-old",
        "TLS 1.0 is the minimum protocol version for client connections.",
        "security",
        "forum-2021",
        1500,
        0.60,
        None,
    ),
    ("kb-sso", "Single sign-on supports SAML 2.0 and OpenID Connect.", "auth", "docs-2025", 45, 0.90, None),
    ("kb-sso-dup", "Single sign-on supports both SAML 2.0 and OpenID Connect.", "auth", "wiki-2024", 100, 0.8, None),
    ("kb-region", "The primary database runs in the eu-west-1 region.", "ops", "ops-runbook", 10, 0.90, None),
    (
        "kb-restore",
        "Restoring a snapshot takes about 40 minutes for the main database.",
        "ops",
        "ops-runbook",
        80,
        0.80,
        None,
    ),
    (
        "kb-oncall",
        "The on-call rotation hands over every Monday at 09:00 local time.",
        "org",
        "org-2025",
        5,
        0.85,
        None,
    ),
    ("kb-webhook", "Version 4.2 removed the legacy v1 webhook endpoint.", "release", "release-4.2", 150, 0.90, None),
    ("kb-timeout", "Idle admin sessions time out after 15 minutes.", "security", "docs-2025", 35, 0.90, None),
    ("kb-timeout-old", "Idle admin sessions time out after 60 minutes.", "security", "wiki-2022", 1000, 0.7, None),
    ("kb-cache", "The edge cache keeps responses for 300 seconds.", "config", "docs-2025", 70, 0.85, None),
    ("kb-quota", "Each workspace may store up to 50 GB of attachments.", "policy", "docs-2025", 50, 0.85, None),
)

# the stub model: the first answer whose key words all occur in the user's question
ANSWERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("stale", "telemetry"), "Anonymous usage telemetry is now enabled by default."),
    (
        ("stale", "port"),
        "The admin console listens on port 8080 now. Idle admin sessions now time out after 60 minutes.",
    ),
    (
        ("port", "telemetry"),
        "The admin console listens on port 9090. Anonymous usage telemetry is disabled by default.",
    ),
    (
        ("audit logs", "billing"),
        "Audit logs are retained for 400 days. The billing service is owned by the platform team.",
    ),
    (("backup",), "The nightly backup job runs at 02:00 UTC each night and keeps 14 days of snapshots."),
    (("tls",), "Client connections need TLS 1.2 at least."),
    (("sign-on",), "Single sign-on works with SAML 2.0 and with OpenID Connect."),
    (("region",), "The primary database is in eu-west-1."),
    (("rate",), "Each client key may send 1000 requests per minute to the API gateway."),
    (("restore",), "A restore of the main database takes about 40 minutes."),
)


def _stub(messages: list[dict[str, str]]) -> tuple[str, str]:
    """Answers the last user message: a fixed answer for the session's questions, a short plain line
    for the SDK's own helper prompts (requirement analysis and the like)."""
    question = str(messages[-1].get("content", "")).lower()
    if "verified context" not in " ".join(str(m.get("content", "")).lower() for m in messages):
        return "- answer the question from the context", "stop"
    for words, answer in ANSWERS:
        if all(w in question for w in words):
            return answer, "stop"
    return "No answer in the context.", "stop"


def _provider() -> CustomProvider:
    return CustomProvider(
        generate_fn=_stub, count_tokens_fn=lambda t: max(1, len(t.split())), context_size=8192, name="stub-echo"
    )


def _kb_fabric() -> ContextualKnowledgeFabric:
    fab = ContextualKnowledgeFabric()
    for fid, text, cat, window, days, conf, _ in KB:
        fact = Fact(
            id=fid,
            text=text,
            category=cat,
            source_window_id=window,
            confidence=conf,
            extraction_stage=1,
            created_at=T0 - days * DAY,
        )
        fab.store([fact], window_id=window)
    for fid, *_rest, by in KB:
        if by is not None:
            fab._warm.supersede(fid, by, confidence=0.9)
            fab._event_log.record_supersession(fid, by, "kb-curation", confidence=0.9)
    return fab


class _Anchored(_dt.datetime):
    """``datetime`` whose ``now`` is the pinned clock (the anchor's ``anchored_at``)."""

    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> _Anchored:  # type: ignore[override]
        return cls.fromtimestamp(_WALL.read(), tz)


def _session(name: str, kb_path: Path, run, *, transcripts: bool) -> None:
    """One real session in a fresh data folder: resumed from ``kb_path``, ``run(orchestrator)``, closed;
    its audit trail, anchor and closing snapshot copied here under ``name``."""
    with tempfile.TemporaryDirectory() as tmp:
        sessions = Path(tmp) / "crp_sessions"
        sessions.mkdir()
        seed_id = "00000000-0000-4000-8000-000000000000"
        shutil.copyfile(kb_path, sessions / f"{seed_id}.json")
        extra = {"audit_capture_transcripts": True, "audit_transcript_redact_pii": False} if transcripts else {}
        with mock.patch.dict(os.environ, {"CRP_DATA_DIR": tmp}):
            orch = CRPOrchestrator.resume(seed_id, provider=_provider(), data_dir=tmp, **extra)
            sid = orch.session.session_id
            run(orch)
            with mock.patch.object(audit_anchor, "datetime", _Anchored):
                orch.close()
            if transcripts:
                bundle = orch.compliance_audit.export_jsonl(include_transcripts=True)
                (HERE / f"{name}.bundle.jsonl").write_text(bundle, encoding="utf-8")
        shutil.copyfile(sessions / f"{sid}.audit.jsonl", HERE / f"{name}.audit.jsonl")
        shutil.copyfile(sessions / f"{sid}.audit.jsonl.anchor.json", HERE / f"{name}.audit.jsonl.anchor.json")
        shutil.copyfile(sessions / f"{sid}.json", HERE / f"{name}.closing.json")


def _multi(orch: CRPOrchestrator) -> None:
    orch.dispatch(SYSTEM, "Which port does the admin console listen on, and is anonymous telemetry on by default?")
    orch.dispatch(SYSTEM, "How long are audit logs retained, and which team owns billing?")
    orch.dispatch(SYSTEM, "When does the nightly backup run and how long are its snapshots kept?")


def _fanout(orch: CRPOrchestrator) -> None:
    from crp.advanced.parallel import FanOutTask

    orch.dispatch_batch(
        [
            {"system_prompt": SYSTEM, "task_input": "Which TLS version do client connections need?"},
            {"system_prompt": SYSTEM, "task_input": "Which single sign-on protocols are supported?"},
            {"system_prompt": SYSTEM, "task_input": "Which region does the primary database run in?"},
        ]
    )
    orch.parallel.fan_out(
        [
            FanOutTask(task_id="branch-rate", system_prompt=SYSTEM, task_input="What is the API rate limit?"),
            FanOutTask(task_id="branch-restore", system_prompt=SYSTEM, task_input="How long does a restore take?"),
        ]
    )


def _contradicting(orch: CRPOrchestrator) -> None:
    orch.dispatch(SYSTEM, "Is anonymous telemetry enabled by default? Answer from the stale notes.")
    orch.dispatch(SYSTEM, "Which port does the admin console use, and when do idle sessions end? Use the stale notes.")


def derive_damaged(base: Path) -> None:
    """The tampered, deleted-entry and truncated trails, from a real one (line numbers 1-based)."""
    lines = base.read_text(encoding="utf-8").split("\n")
    edited = json.loads(lines[2])  # the first window's compliance.envelope_context_selected
    edited["data"]["facts_included"] = edited["data"]["facts_included"] - 1  # the hashes are left as they were
    tampered = [*lines[:2], json.dumps(edited, separators=(",", ":")), *lines[3:]]
    (HERE / "tampered.audit.jsonl").write_text("\n".join(tampered), encoding="utf-8")
    (HERE / "deleted.audit.jsonl").write_text("\n".join(lines[:7] + lines[8:]), encoding="utf-8")
    cut = "\n".join(lines[:9]) + "\n" + lines[9][: len(lines[9]) // 2]
    (HERE / "truncated.audit.jsonl").write_text(cut, encoding="utf-8")
    for name in ("tampered", "deleted", "truncated"):  # the session's anchor, left in place beside each
        shutil.copyfile(f"{base}.anchor.json", HERE / f"{name}.audit.jsonl.anchor.json")


def main() -> None:
    kb_path = HERE / "kb.json"
    _kb_fabric().persist(kb_path)
    _session("multi", kb_path, _multi, transcripts=True)
    _session("fanout", kb_path, _fanout, transcripts=False)
    _session("contradicting", kb_path, _contradicting, transcripts=True)
    derive_damaged(HERE / "multi.audit.jsonl")
    print("fixtures written to", HERE)


if __name__ == "__main__":
    main()

"""Recipe for the crprotocol SDK snapshot fixtures of ``tests/data/sdk/`` (docs/decisions/sdk-snapshots.md).

The snapshots are written by the reference SDK itself (``ContextualKnowledgeFabric.persist``), in a
throw-away virtualenv; crp-inspect never imports the SDK. Run, from the repository root::

    python3.11 -m venv /tmp/sdkvenv
    /tmp/sdkvenv/bin/pip install crprotocol==6.2.5 blake3
    /tmp/sdkvenv/bin/python tests/data/sdk/_make_fixtures.py

Written here: ``supersessions.json`` (nine facts over three windows, four edges, one supersession by the
SDK's contradiction detection and one by the warm store's ``supersede``, a community map; SHA-256),
``plain.json`` (four facts, no edge, one persisted embedding; SHA-256), ``plain_blake3.json`` (the
same fabric persisted while ``blake3`` is importable, so its checksum is BLAKE3), and the malformed
files derived from ``supersessions.json``: ``truncated.json``, ``bad_checksum.json``,
``wrong_types.json``, ``newer_schema.json``, ``newer_store_schema.json``, ``missing_header.json``,
``count_mismatch.json``; ``disagreement.json`` (four facts: an older regulation fact superseded by the
SDK's newer-wins contradiction rule with a newer chat remark; with ``disagreement_mapping.toml`` SPEC-027
on its own prefers the regulation; SHA-256). ``... _make_fixtures.py disagreement`` writes only that
one (the others stay byte-identical). The clock is pinned for the facts and the event log (the payload,
hence the checksums, are reproducible); ``header.created_at`` is the real clock (the SDK binds ``time.time`` at import).
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import time
from pathlib import Path
from unittest import mock

from crp.ckf.fabric import ContextualKnowledgeFabric
from crp.extraction import apply_supersessions, detect_contradictions
from crp.extraction.types import Fact, FactEdge, RelationType

HERE = Path(__file__).resolve().parent
T0 = 1780000000.0  # 2026-05-28T20:26:40Z: the pinned clock (header.created_at, event timestamps)
DAY = 86400.0


def _fact(fid: str, text: str, category: str, window: str, stage: int, conf: float, days_before: float) -> Fact:
    return Fact(
        id=fid,
        text=text,
        category=category,
        source_window_id=window,
        confidence=conf,
        extraction_stage=stage,
        created_at=T0 - days_before * DAY,
    )


def _sha256_only() -> mock._patch[dict[str, object]]:
    """Hide blake3 from the SDK's checksum (``import blake3`` then raises ImportError)."""
    return mock.patch.dict(sys.modules, {"blake3": None})


def build_supersessions(path: Path) -> None:
    fab = ContextualKnowledgeFabric()
    w1 = [
        _fact(
            "f-port-old",
            "The etcd default client port is 4001, where clients send their key-value API requests.",
            "config",
            "win-001",
            2,
            0.72,
            400,
        ),
        _fact(
            "f-rate-old",
            "the api gateway rate limit is 500 requests per minute for each client key in production",
            "policy",
            "win-001",
            1,
            0.81,
            120,
        ),
        _fact(
            "f-backup",
            "The nightly backup job runs at 02:00 UTC and keeps 14 days of snapshots.",
            "ops",
            "win-001",
            1,
            0.90,
            90,
        ),
        _fact(
            "f-owner-old",
            "The billing service is owned by the payments team and pages them on call.",
            "org",
            "win-001",
            3,
            0.65,
            60,
        ),
    ]
    fab.store(w1, window_id="win-001")
    fab._warm.advance_window("win-002")
    w2 = [
        _fact(
            "f-port-new",
            "The etcd default client port is 2379, where clients send their key-value API requests.",
            "config",
            "win-002",
            2,
            0.88,
            30,
        ),
        _fact(
            "f-rate-new",
            "in production for each client key the api gateway rate limit is 1000 requests per minute",
            "policy",
            "chat-002",
            6,
            0.55,
            10,
        ),
        _fact(
            "f-restore",
            "Restoring a snapshot takes about 40 minutes for the main database.",
            "ops",
            "win-002",
            5,
            0.70,
            20,
        ),
        _fact(
            "f-retention",
            "Database snapshots are kept for 30 days before they are deleted.",
            "ops",
            "chat-002",
            6,
            0.50,
            5,
        ),
    ]
    # the SDK's own contradiction handling: detect among the facts already stored, mark the earlier one
    found = detect_contradictions(w2, [sf.fact for sf in fab._warm.get_facts()])
    events = apply_supersessions(found)
    fab.store(w2, window_id="win-002")
    for ev in events:
        fab._event_log.record_supersession(
            ev.fact_id,
            ev.payload["superseded_by"],
            "win-002",
            confidence=ev.payload["similarity"] * ev.payload["content_diff"],
        )
    fab._warm.advance_window("win-003")
    w3 = [
        _fact(
            "f-owner-new",
            "The billing service is owned by the platform team and pages them on call.",
            "org",
            "win-003",
            3,
            0.60,
            2,
        )
    ]
    fab.store(w3, window_id="win-003")
    # a deployment's own rule (newest ownership wins), through the warm store's supersede
    fab._warm.supersede("f-owner-old", "f-owner-new", confidence=0.9)
    fab._event_log.record_supersession("f-owner-old", "f-owner-new", "win-003", confidence=0.9)
    fab.store_edges(
        [
            FactEdge(
                id="e-1",
                source_id="f-backup",
                target_id="f-restore",
                relation_type=RelationType.ELABORATION,
                confidence=0.8,
                source_stage=5,
            ),
            FactEdge(
                id="e-2",
                source_id="f-retention",
                target_id="f-backup",
                relation_type=RelationType.CONTRAST,
                confidence=0.6,
                source_stage=5,
            ),
            FactEdge(
                id="e-3",
                source_id="f-rate-new",
                target_id="f-rate-old",
                relation_type="SUPERSEDES",
                confidence=0.55,
                source_stage=6,
            ),
            FactEdge(
                id="e-4",
                source_id="f-port-new",
                target_id="f-restore",
                relation_type=RelationType.RELATED,
                confidence=0.3,
                source_stage=2,
            ),
        ]
    )
    fab._warm.mark_seen(["f-backup", "f-port-new"], "win-003")
    fab.detect_communities()
    with _sha256_only():
        fab.persist(path)
    if not found:
        raise SystemExit("the SDK's contradiction detection found nothing: the fixture texts need a change")


def build_disagreement(path: Path) -> None:
    """The SDK's own rule (the earlier fact of a detected pair is superseded by the later one) against
    an older fact of higher source authority once the mapping gives source types."""
    fab = ContextualKnowledgeFabric()
    w1 = [
        _fact(
            "g-retention-old",
            "audit logs of every customer account are kept for 7 years under the financial records regulation",
            "regulation",
            "reg-2024",
            1,
            0.95,
            30,
        ),
        _fact(
            "g-region",
            "The primary database runs in the eu-west-1 region with a standby in eu-central-1.",
            "ops",
            "win-001",
            2,
            0.85,
            25,
        ),
    ]
    fab.store(w1, window_id="reg-2024")
    fab._warm.advance_window("chat-117")
    w2 = [
        _fact(
            "g-retention-new",
            "under the financial records regulation audit logs of every customer account are kept for 2 years",
            "chat",
            "chat-117",
            6,
            0.40,
            1,
        ),
        _fact(
            "g-oncall",
            "The on-call rotation hands over every Monday at 09:00 local time.",
            "ops",
            "chat-117",
            6,
            0.60,
            1,
        ),
    ]
    found = detect_contradictions(w2, [sf.fact for sf in fab._warm.get_facts()])
    events = apply_supersessions(found)
    fab.store(w2, window_id="chat-117")
    for ev in events:
        fab._event_log.record_supersession(
            ev.fact_id,
            ev.payload["superseded_by"],
            "chat-117",
            confidence=ev.payload["similarity"] * ev.payload["content_diff"],
        )
    with _sha256_only():
        fab.persist(path)
    if [(ev.fact_id, ev.payload["superseded_by"]) for ev in events] != [("g-retention-old", "g-retention-new")]:
        raise SystemExit(f"the SDK's contradiction detection found {events!r}: the fixture texts need a change")


def _plain_fabric() -> ContextualKnowledgeFabric:
    fab = ContextualKnowledgeFabric()
    fab.store(
        [
            _fact(
                "p-1", "Kubernetes 1.30 removed the in-tree cloud provider integrations.", "release", "w-1", 1, 0.9, 200
            ),
            _fact(
                "p-2", "Pods in the batch namespace get a default memory limit of 2 GiB.", "policy", "w-1", 2, 0.8, 50
            ),
            _fact("p-3", "The staging cluster is recreated from scratch every Sunday night.", "ops", "w-1", 3, 0.7, 7),
            _fact(
                "p-4",
                "Cluster autoscaler scale-down waits 10 minutes after a node becomes unneeded.",
                "config",
                "w-1",
                1,
                0.85,
                1,
            ),
        ],
        window_id="w-1",
    )
    sf = fab._warm.get_fact("p-2")
    assert sf is not None
    sf.embedding = [0.25, -0.5, 0.125]  # a vector of the SDK's own embedder, persisted with the fact
    return fab


def _checksum(payload: object) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _write(name: str, doc: object) -> None:
    (HERE / name).write_text(json.dumps(doc, default=str), encoding="utf-8")


def derive_malformed(base: Path) -> None:
    text = base.read_text(encoding="utf-8")
    doc = json.loads(text)
    (HERE / "truncated.json").write_text(text[: len(text) // 2], encoding="utf-8")
    bad = copy.deepcopy(doc)
    bad["payload"]["warm_store"]["facts"]["f-backup"]["text"] = "The nightly backup job runs at 03:00 UTC."
    _write("bad_checksum.json", bad)
    wrong = copy.deepcopy(doc)
    facts = wrong["payload"]["warm_store"]["facts"]
    facts["f-backup"]["text"] = 42
    facts["f-restore"]["created_at"] = "yesterday"
    facts["f-retention"]["confidence"] = "high"
    facts["f-port-new"]["superseded_by"] = 7
    facts["f-rate-new"] = ["not", "an", "object"]
    wrong["payload"]["warm_store"]["edges"][0]["target_id"] = None
    wrong["payload"]["warm_store"]["edges"][1] = "e-2"
    wrong["header"]["fact_count"] = "9"
    wrong["header"]["checksum"] = _checksum(wrong["payload"])
    _write("wrong_types.json", wrong)
    newer = copy.deepcopy(doc)
    newer["header"]["schema_version"] = 2
    _write("newer_schema.json", newer)
    newer_store = copy.deepcopy(doc)
    newer_store["payload"]["warm_store"]["schema_version"] = 3
    newer_store["header"]["checksum"] = _checksum(newer_store["payload"])
    _write("newer_store_schema.json", newer_store)
    _write("missing_header.json", {"payload": doc["payload"]})
    counts = copy.deepcopy(doc)
    counts["header"]["fact_count"] = 12
    counts["header"]["edge_count"] = 3
    _write("count_mismatch.json", counts)


def main() -> None:
    if sys.argv[1:] == ["disagreement"]:
        with mock.patch.object(time, "time", return_value=T0):
            build_disagreement(HERE / "disagreement.json")
        print("disagreement.json written to", HERE)
        return
    try:
        import blake3  # noqa: F401
    except ImportError:
        raise SystemExit("install blake3 in the throw-away venv too (pip install blake3)") from None
    with mock.patch.object(time, "time", return_value=T0):
        build_supersessions(HERE / "supersessions.json")
        fab = _plain_fabric()
        with _sha256_only():
            fab.persist(HERE / "plain.json")
        fab.persist(HERE / "plain_blake3.json")  # blake3 importable: the SDK's BLAKE3 checksum
        build_disagreement(HERE / "disagreement.json")
    derive_malformed(HERE / "supersessions.json")
    print("fixtures written to", HERE)


if __name__ == "__main__":
    main()

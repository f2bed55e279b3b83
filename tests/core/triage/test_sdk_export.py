"""``triage export --format sdk``: the operators' decisions written back as a crprotocol snapshot, loaded
by the real SDK (crprotocol 6.2.5, a test-only dependency; docs/decisions/triage.md "The SDK export").

SDK calls used: ``crp.ckf.fabric.ContextualKnowledgeFabric().restore(path)`` and ``.health()`` (the
fabric's load path: checksum checked, fail-closed), and ``crp.state.cold_storage.restore_from_cold``
into a ``crp.state.warm_store.WarmStateStore`` and a ``crp.state.event_log.FactEventLog``, read with
``WarmStateStore.get_facts(include_superseded=...)``, ``.graph.edges``, ``.critical_state``,
``.structural_state``, ``.window_count`` and ``FactEventLog.all_events()`` / ``.supersession_chain()``.

The SDK checks the checksum with BLAKE3 when ``blake3`` is importable where it loads, else SHA-256:
a SHA-256 export is loaded with ``blake3`` hidden (a deployment without it), a BLAKE3 one with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from crp.ckf.fabric import ContextualKnowledgeFabric
from crp.state.cold_storage import restore_from_cold
from crp.state.event_log import FactEventLog
from crp.state.warm_store import WarmStateStore

from crp_core.cli import main
from crp_core.io.ckf import load_ckf
from crp_core.io.ckf.sdk import given_edges
from crp_core.io.ckf.sdk_write import sdk_document
from crp_core.io.timeparse import parse_timestamp
from crp_core.triage import Decision, DecisionSet, DecisionStore, export_cleaned_ckf
from crp_core.triage.export import ExportError
from crp_core.triage.sdk_export import export_sdk_snapshot, plan_sdk_export
from tests.support.factories import fact, make_kb
from tests.support.paths import TEST_DATA

SDK = TEST_DATA / "sdk"
SUP = SDK / "supersessions.json"
ORIGINAL = json.loads(SUP.read_text(encoding="utf-8"))


class Restored:
    """What the real SDK made of a snapshot file."""

    def __init__(self, path: Path) -> None:
        fab = ContextualKnowledgeFabric()
        self.fabric_warnings = fab.restore(path)
        self.health = fab.health()
        self.warm, self.log = WarmStateStore(), FactEventLog()
        self.header, self.warnings, self.community_map = restore_from_cold(self.warm, self.log, path)

    @property
    def superseded_by(self) -> dict[str, str | None]:
        return {f.id: f.superseded_by for f in self.warm.get_facts(include_superseded=True)}

    @property
    def active(self) -> set[str]:
        return {f.id for f in self.warm.get_facts()}

    @property
    def edges(self) -> list[tuple[Any, ...]]:
        return [
            (e.id, e.source_id, e.target_id, e.relation_type, e.confidence, e.source_stage)
            for e in self.warm.graph.edges
        ]


def sdk_load(path: Path, monkeypatch: pytest.MonkeyPatch, *, blake3: bool = False) -> Restored:
    """The real SDK's load of ``path``; ``blake3=False``: as in a deployment without the blake3 module."""
    with monkeypatch.context() as m:
        if not blake3:
            m.setitem(sys.modules, "blake3", None)  # the SDK's `import blake3` raises ImportError
        return Restored(path)


@pytest.fixture
def store(tmp_path):
    with DecisionStore(tmp_path / "decisions.sqlite") as s:
        yield s


def three_decisions(store: DecisionStore) -> list[Decision]:
    """f-port-old loses to f-port-new (the SDK never superseded it); f-owner-new loses to f-owner-old
    (the SDK had superseded f-owner-old by f-owner-new: overruled); f-backup loses to f-retention."""
    return [
        store.record(
            Decision.override("f-port-old", "f-port-new", winner="f-port-new", operator="alice", note="4001 is legacy")
        ),
        store.record(
            Decision.override("f-owner-old", "f-owner-new", winner="f-owner-old", operator="bob", note="reverted")
        ),
        store.record(Decision.accept("f-backup", "f-retention", winner="f-retention", operator="alice")),
    ]


def _epoch(stamp: str | None) -> float:
    assert stamp is not None
    return parse_timestamp(stamp).timestamp()


# ---- the round trip -----------------------------------------------------------------------------
def test_three_decisions_are_supersessions_the_real_sdk_loads(store, tmp_path, monkeypatch, capsys):
    port, owner, backup = three_decisions(store)
    out = tmp_path / "cleaned.json"
    args = ["triage", "export", "--db", str(store.path), "--ckf", str(SUP), "--out", str(out), "--format", "sdk"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "crprotocol snapshot: 9 fact(s), 4 edge(s), 4 operator event(s) appended; checksum sha256 " in printed
    sdk = sdk_load(out, monkeypatch)
    assert sdk.fabric_warnings == [] and sdk.warnings == []  # the checksum accepted, nothing rejected
    assert (sdk.health.fact_count, sdk.health.edge_count, sdk.health.event_count) == (9, 4, 19)
    assert sdk.superseded_by == {
        "f-port-old": "f-port-new",  # the operator's
        "f-rate-old": "f-rate-new",  # the SDK's, as read
        "f-backup": "f-retention",  # the operator's
        "f-owner-old": None,  # restored: the operator overruled the SDK
        "f-port-new": None,
        "f-rate-new": None,
        "f-restore": None,
        "f-retention": None,
        "f-owner-new": "f-owner-old",  # the operator's
    }
    assert sdk.active == {"f-owner-old", "f-port-new", "f-rate-new", "f-restore", "f-retention"}
    # edges, event log, session state and community map as they came
    store_in = ORIGINAL["payload"]["warm_store"]
    assert sdk.edges == [tuple(e.values()) for e in store_in["edges"]]
    assert sdk.warm.critical_state.to_dict() == store_in["critical_state"]
    assert sdk.warm.structural_state.to_dict() == store_in["structural_state"]
    assert sdk.warm.window_count == 2 and sdk.community_map == ORIGINAL["payload"]["community_map"]
    events = [e.to_dict() for e in sdk.log.all_events()]
    assert events[:15] == ORIGINAL["payload"]["event_log"]

    def op(d: Decision) -> dict[str, Any]:
        return {
            "origin": "operator",
            "operator": d.operator,
            "note": d.note,
            "decided_at": d.decided_at,
            "decision": d.kind,
            "decision_id": d.id,
        }

    assert events[15:] == [
        {
            "event_id": 16,
            "timestamp": _epoch(port.decided_at),
            "window_id": "",
            "event_type": "superseded",
            "fact_id": "f-port-old",
            "payload": {"superseded_by": "f-port-new", "confidence": 1.0, **op(port)},
        },
        {
            "event_id": 17,
            "timestamp": _epoch(owner.decided_at),
            "window_id": "",
            "event_type": "restored",
            "fact_id": "f-owner-old",
            "payload": {"was_superseded_by": "f-owner-new", **op(owner)},
        },
        {
            "event_id": 18,
            "timestamp": _epoch(owner.decided_at),
            "window_id": "",
            "event_type": "superseded",
            "fact_id": "f-owner-new",
            "payload": {"superseded_by": "f-owner-old", "confidence": 1.0, **op(owner)},
        },
        {
            "event_id": 19,
            "timestamp": _epoch(backup.decided_at),
            "window_id": "",
            "event_type": "superseded",
            "fact_id": "f-backup",
            "payload": {"superseded_by": "f-retention", "confidence": 1.0, **op(backup)},
        },
    ]
    assert [e.event_type for e in sdk.log.supersession_chain("f-port-old")][:2] == ["created", "superseded"]
    # the header: counts of what is written, the checksum the SDK's way
    doc = json.loads(out.read_text(encoding="ascii"))
    assert {k: doc["header"][k] for k in ("schema_version", "fact_count", "edge_count", "window_count")} == {
        "schema_version": 1,
        "fact_count": 9,
        "edge_count": 4,
        "window_count": 2,
    }
    facts = doc["payload"]["warm_store"]["facts"]
    assert (facts["f-port-old"]["supersession_confidence"], facts["f-owner-old"]["supersession_confidence"]) == (
        1.0,
        0.0,
    )
    assert facts["f-rate-old"]["supersession_confidence"] == 0.7169  # the SDK's own, untouched
    report = json.loads((tmp_path / "cleaned.export_report.json").read_text(encoding="utf-8"))
    assert (
        report["format"] == "sdk" and report["inexpressible"] == [] and report["changed"] == {"ACTIVE": 1, "STALE": 3}
    )
    assert report["sdk"]["events_added"] == 4 and report["sdk"]["checksum"] == doc["header"]["checksum"]


def test_a_sha256_checksum_is_refused_where_blake3_is_installed_so_blake3_can_be_asked(store, tmp_path, monkeypatch):
    three_decisions(store)
    kb = load_ckf(SUP)
    sha, b3 = tmp_path / "sha.json", tmp_path / "b3.json"
    export_sdk_snapshot(kb, store.current(), sha, checksum="sha256")
    export_sdk_snapshot(kb, store.current(), b3, checksum="blake3")
    refused = sdk_load(sha, monkeypatch, blake3=True)  # the SDK fails closed: nothing loaded
    assert refused.warnings == [
        "Checksum verification FAILED — data may be corrupted",
        "REJECTED: data not loaded due to integrity failure",
    ]
    assert refused.health.fact_count == 0
    accepted = sdk_load(b3, monkeypatch, blake3=True)
    assert accepted.warnings == [] and accepted.health.fact_count == 9
    assert accepted.superseded_by["f-backup"] == "f-retention"


def test_auto_checksum_is_the_snapshots_own(tmp_path, monkeypatch):
    none = DecisionSet.empty()
    b3 = export_sdk_snapshot(load_ckf(SDK / "plain_blake3.json"), none, tmp_path / "a.json")
    sha = export_sdk_snapshot(load_ckf(SDK / "plain.json"), none, tmp_path / "b.json")
    assert (b3.report.sdk.algorithm, sha.report.sdk.algorithm) == ("blake3", "sha256")
    assert sdk_load(tmp_path / "a.json", monkeypatch, blake3=True).warnings == []
    kb = load_ckf(SDK / "plain_blake3.json")
    monkeypatch.setitem(sys.modules, "blake3", None)
    with pytest.raises(ExportError, match=r"\(the snapshot read has a BLAKE3 checksum, so its deployment checks"):
        export_sdk_snapshot(kb, none, tmp_path / "c.json")
    with pytest.raises(ExportError, match="has a checksum that is not SHA-256, most likely BLAKE3"):
        export_sdk_snapshot(load_ckf(SDK / "plain_blake3.json"), none, tmp_path / "c.json")  # read without blake3
    assert export_sdk_snapshot(kb, none, tmp_path / "c.json", checksum="sha256").report.sdk.algorithm == "sha256"


def test_without_decisions_the_payload_is_written_back_unchanged():
    doc, written = sdk_document(load_ckf(SUP), created_at=1_800_000_000.0)
    assert doc["payload"] == ORIGINAL["payload"]
    assert doc["header"] == {**ORIGINAL["header"], "created_at": 1_800_000_000.0}  # the checksum is the SDK's own
    plain = json.loads((SDK / "plain.json").read_text(encoding="utf-8"))
    doc, _ = sdk_document(load_ckf(SDK / "plain.json"))
    assert doc["payload"] == plain["payload"]  # the SDK's embedding too
    assert written.lost == () and written.left_out == () and not written.signature_kept


def test_the_hmac_signature_is_kept_only_with_the_payload_it_signed(tmp_path):
    doc = json.loads(SUP.read_text(encoding="utf-8"))
    doc["header"]["hmac_signature"] = "ab" * 32
    signed = tmp_path / "signed.json"
    signed.write_text(json.dumps(doc), encoding="utf-8")
    kb = load_ckf(signed)
    out, written = sdk_document(kb)
    assert written.signature_kept and out["header"]["hmac_signature"] == "ab" * 32
    ds = DecisionSet.from_decisions([Decision.dismiss("f-backup", "f-retention", operator="alice")])
    plan = plan_sdk_export(kb, ds, now=0.0)  # a dismissal changes nothing in the payload
    assert sdk_document(plan.kb, plan.events)[1].signature_kept
    ds = DecisionSet.from_decisions([Decision.override("f-backup", "f-retention", winner="f-backup", operator="a")])
    plan = plan_sdk_export(kb, ds, now=0.0)
    out, written = sdk_document(plan.kb, plan.events)
    assert not written.signature_kept and out["header"]["hmac_signature"] == ""


# ---- status marks, dismissals: what has an SDK form and what does not -------------------------
def test_status_marks_and_a_dismissal(tmp_path, monkeypatch):
    ds = DecisionSet.from_decisions(
        [
            Decision.mark_status("f-backup", "f-restore", fact="f-restore", status="QUARANTINED", operator="ann"),
            Decision.mark_status("f-port-old", "f-port-new", fact="f-port-old", status="DELETED", operator="ann"),
            Decision.mark_status("f-rate-old", "f-rate-new", fact="f-rate-old", status="ACTIVE", operator="ann"),
            Decision.mark_status("f-backup", "f-retention", fact="f-retention", status="STALE", operator="ann"),
            Decision.dismiss("f-owner-old", "f-owner-new", operator="ann", note="two teams"),
        ]
    )
    out = tmp_path / "marks.json"
    done = export_sdk_snapshot(load_ckf(SUP), ds, out, created_at=1_800_000_000.0)
    sdk = sdk_load(out, monkeypatch)
    assert sdk.warnings == [] and (sdk.health.fact_count, sdk.health.edge_count) == (7, 2)  # e-2, e-3
    assert "f-restore" not in sdk.superseded_by and "f-port-old" not in sdk.superseded_by
    assert sdk.superseded_by["f-rate-old"] is None and sdk.superseded_by["f-owner-old"] == "f-owner-new"
    assert sdk.active == {"f-rate-old", "f-rate-new", "f-backup", "f-port-new", "f-retention", "f-owner-new"}
    added = [e.to_dict() for e in sdk.log.all_events()][15:]
    assert [(e["event_type"], e["fact_id"]) for e in added] == [
        ("archived", "f-restore"),
        ("archived", "f-port-old"),
        ("restored", "f-rate-old"),
    ]
    restore_fact = ORIGINAL["payload"]["warm_store"]["facts"]["f-restore"]
    assert added[0]["payload"]["status"] == "QUARANTINED" and added[0]["payload"]["fact"] == restore_fact
    assert added[1]["payload"]["status"] == "DELETED" and "fact" not in added[1]["payload"]
    assert added[2]["payload"]["was_superseded_by"] == "f-rate-new"
    assert all(e["timestamp"] == 1_800_000_000.0 for e in added)  # never recorded: the export's time
    assert sdk.community_map == {
        k: v for k, v in ORIGINAL["payload"]["community_map"].items() if k not in ("f-restore", "f-port-old")
    }
    w = done.report.sdk
    assert (w.left_out, w.edges_left_out) == (("f-port-old", "f-restore"), 2)  # e-1, e-4
    assert w.lost == (("status STALE without a successor (the SDK has no such state: written not superseded)", 1),)
    codes = {i.code: i.fact_ids for i in done.report.issues}
    assert codes == {
        "stale_without_successor": ("f-retention",),
        "sdk_supersession_kept": ("f-owner-old", "f-owner-new"),
    }


def test_a_plain_ckf_becomes_sdk_facts_and_says_what_it_loses(tmp_path, monkeypatch):
    kb = make_kb(
        [
            fact("A", "The etcd default client port is 2379.", modified_at="2026-05-01T00:00:00Z", ttl="P30D"),
            fact(
                "B",
                "The etcd default client port is 2380.",
                source_type="community",
                modified_at="2026-04-01T00:00:00Z",
            ),
            fact("C", "Backups are kept for 30 days.", importance_weight=0.9, metadata={"url": "https://x.invalid"}),
        ]
    )
    ds = DecisionSet.from_decisions([Decision.override("A", "B", winner="A", operator="ann", note="docs win")])
    out = tmp_path / "plain.json"
    done = export_sdk_snapshot(kb, ds, out, created_at=1_800_000_000.0)
    sdk = sdk_load(out, monkeypatch)
    assert sdk.warnings == [] and sdk.superseded_by == {"A": None, "B": "A", "C": None}
    doc = json.loads(out.read_text(encoding="ascii"))
    assert doc["payload"]["warm_store"]["facts"]["B"] == {
        "fact_id": "B",
        "text": "The etcd default client port is 2380.",
        "category": "",
        "confidence": 1.0,
        "source_window_id": "",
        "created_at": parse_timestamp("2026-04-01T00:00:00Z").timestamp(),
        "extraction_stage": 0,
        "age_in_windows": 0,
        "seen_count": 0,
        "consumed_by_windows": [],
        "graph_edges": [],
        "superseded_by": "A",
        "supersession_confidence": 1.0,
        "tier": 2,
        "has_embedding": False,
    }
    assert "created_at" not in doc["payload"]["warm_store"]["facts"]["C"]  # age unknown: the SDK stamps its load
    assert list(doc["payload"]) == ["warm_store", "event_log"] and len(doc["payload"]["event_log"]) == 1
    assert dict(done.report.sdk.lost) == {
        "source_type (no SDK field: an import maps it again from category / window / stage)": 3,
        "importance_weight": 1,
        "ttl": 1,
        "metadata keys with no SDK field": 1,
    }
    back = load_ckf(out)  # our own reader: the same facts, B superseded
    assert [(f.fact_id, f.content, f.status) for f in back.facts] == [
        ("A", "The etcd default client port is 2379.", "ACTIVE"),
        ("B", "The etcd default client port is 2380.", "STALE"),
        ("C", "Backups are kept for 30 days.", "ACTIVE"),
    ]
    assert back.imported.integrity == "ok"


# ---- bad requests --------------------------------------------------------------------------------
def test_cli_refusals_are_clear(store, tmp_path, capsys):
    base = ["triage", "export", "--db", str(store.path), "--ckf", str(SUP)]
    assert main([*base, "--out", str(tmp_path / "x.jsonl"), "--format", "sdk"]) == 2
    assert "a crprotocol SDK snapshot (--format sdk) is a .json file" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "x.jsonl"), "--checksum", "sha256"]) == 2
    assert "--checksum applies to --format sdk only" in capsys.readouterr().err
    assert not list(tmp_path.glob("x.*"))


# ---- every CKF export keeps the SDK's edges ----------------------------------------------------
@pytest.mark.parametrize("name", ["out.jsonl", "out.json", "out.csv", "out.parquet", "outdir"])
def test_every_ckf_export_of_a_snapshot_keeps_its_edges(store, tmp_path, name):
    three_decisions(store)
    kb = load_ckf(SUP)
    done = export_cleaned_ckf(kb, store.current(), tmp_path / name)
    back = load_ckf(done.path)
    assert back.fmt != "sdk" and back.edges == ()  # a CKF file has no place for edges ...
    assert sorted(given_edges(back), key=lambda e: e.edge_id) == list(kb.edges)  # ... metadata.sdk_edges has
    assert back.get("f-retention").metadata["sdk_edges"] == [
        {"id": "e-2", "target_id": "f-backup", "relation_type": "CONTRAST", "confidence": 0.6, "source_stage": 5}
    ]
    again = export_cleaned_ckf(back, store.current(), tmp_path / ("again-" + name))  # an export of the export
    assert sorted(given_edges(load_ckf(again.path)), key=lambda e: e.edge_id) == list(kb.edges)


def test_the_cli_ckf_export_of_a_snapshot_keeps_its_edges(store, tmp_path, capsys):
    three_decisions(store)
    out = tmp_path / "cleaned.jsonl"
    assert main(["triage", "export", "--db", str(store.path), "--ckf", str(SUP), "--out", str(out)]) == 0
    assert len(given_edges(load_ckf(out))) == 4


# ---- a decision's origin is kept: a re-scan never credits the SDK -------------------------------
def _pair(kb, a: str, b: str):
    """The pair as the whole-CKF scan arbitrates it: authorities as loaded, the decision the file carries."""
    from crp_core.carried import with_carried_decisions
    from crp_core.config import CRPConfig
    from crp_core.factors.recency import fact_attributes
    from crp_core.records import ConflictPair, ValueConflict
    from crp_core.stages.contradictions import arbitrate, authority_of

    cfg = CRPConfig()
    factor = fact_attributes(kb, NOW, cfg).factor
    aa, ab = (authority_of(kb.get(x), float(factor[kb.index_of(x)]), cfg) for x in (a, b))
    carried = with_carried_decisions(kb, None)
    dec = carried.for_pair(a, b) if isinstance(carried, DecisionSet) else None
    arb = arbitrate(aa, ab, cfg, dec["kind"] if dec else None, dec["winner"] if dec else None)
    vc = ValueConflict(("NUMBER_CHANGED",), ())
    return ConflictPair(
        a, b, 0.9, ("NUMBER_CHANGED",), vc, {a: aa, b: ab}, arb.kept, arb.suppressed, arb.tied, decision=arb.decision
    )


NOW = parse_timestamp("2026-06-01T00:00:00Z")
PAIRS = (
    ("f-port-new", "f-port-old"),
    ("f-owner-new", "f-owner-old"),
    ("f-backup", "f-retention"),
    ("f-rate-new", "f-rate-old"),
)


@pytest.mark.parametrize("name", ["cleaned.json", "cleaned.jsonl"])
def test_a_rescan_of_an_export_never_credits_the_sdk_with_an_operators_decision(store, tmp_path, name):
    from crp_core.analysis.sdk_agreement import operator_supersessions, sdk_agreement, sdk_supersessions
    from crp_core.config import CRPConfig
    from crp_ui.conflict_sdk import sdk_verdict_lines

    port, owner, backup = three_decisions(store)
    kb = load_ckf(SUP)
    out = tmp_path / name
    if name.endswith(".json"):
        export_sdk_snapshot(kb, store.current(), out)
    else:
        export_cleaned_ckf(kb, store.current(), out)
    back = load_ckf(out)  # another machine: no decision store
    sdk_own = {"f-rate-old": "f-rate-new"}
    if name.endswith(".jsonl"):  # a CKF export keeps the SDK's supersession of a winner (the decision rules it)
        sdk_own["f-owner-old"] = "f-owner-new"
    assert sdk_supersessions(back) == sdk_own  # the SDK's only
    ops = operator_supersessions(back)
    assert {k: (o.new, o.operator, o.decided_at, o.kind, o.note) for k, o in ops.items()} == {
        "f-port-old": ("f-port-new", "alice", port.decided_at, "override", "4001 is legacy"),
        "f-backup": ("f-retention", "alice", backup.decided_at, "accept", ""),
        "f-owner-new": ("f-owner-old", "bob", owner.decided_at, "override", "reverted"),
    }
    ag = sdk_agreement([_pair(back, a, b) for a, b in PAIRS], back, CRPConfig(), NOW)
    port_rec = ag.of("f-port-old", "f-port-new")
    assert port_rec.sdk_superseded is None and port_rec.operator_superseded == ops["f-port-old"]
    assert port_rec.independent.verdict == port_rec.as_loaded.verdict == "silent"
    said = f"operator superseded f-port-old by f-port-new (alice, {port.decided_at})"
    assert port_rec.as_loaded.reason == f"the SDK superseded neither fact ({said}: not the SDK's)"
    own, loaded = sdk_verdict_lines(port_rec)
    assert "SDK superseded f-port-old" not in own + loaded and "agrees" not in own + loaded
    assert loaded == (
        "As loaded (the SDK's STALE in force, operator decisions applied): prefers f-port-new — "
        f"{said}; the SDK superseded neither fact: SDK silent"
    )
    assert port_rec.neutralised == ("f-port-old",)  # on its own: authority alone, as before the export
    rate = ag.of("f-rate-old", "f-rate-new")  # the SDK's own supersession is still the SDK's
    assert rate.sdk_superseded == "f-rate-old" and rate.operator_superseded is None
    assert rate.as_loaded.verdict == "agrees"
    if name.endswith(".jsonl"):  # the CKF export: the SDK's supersession of f-owner-old stays the SDK's
        owner_rec = ag.of("f-owner-old", "f-owner-new")
        assert owner_rec.sdk_superseded == "f-owner-old" and owner_rec.operator_superseded == ops["f-owner-new"]


def test_an_operator_agreeing_with_the_sdk_leaves_the_supersession_the_sdks(store, tmp_path):
    store.record(Decision.accept("f-rate-old", "f-rate-new", winner="f-rate-new", operator="alice"))
    for out in (tmp_path / "a.jsonl", tmp_path / "a.json"):
        fmt = export_sdk_snapshot if out.suffix == ".json" else export_cleaned_ckf
        fmt(load_ckf(SUP), store.current(), out)
        f = load_ckf(out).get("f-rate-old")
        assert f.metadata["superseded_by"] == "f-rate-new" and "superseded_by_origin" not in f.metadata


def test_a_plain_ckf_export_with_an_operators_supersession_has_no_sdk_data(tmp_path):
    from crp_core.analysis.sdk_agreement import has_sdk_data

    kb = make_kb([fact("A", "port 2379"), fact("B", "port 2380")])
    ds = DecisionSet.from_decisions([Decision.override("A", "B", winner="A", operator="ann")])
    back = load_ckf(export_cleaned_ckf(kb, ds, tmp_path / "k.jsonl").path)
    assert back.get("B").metadata["superseded_by_origin"] == "operator" and not has_sdk_data(back)

"""crprotocol SDK snapshots read as a CKF (crp_core.io.ckf.sdk; docs/decisions/sdk-snapshots.md).

The fixtures of tests/data/sdk/ were written by crprotocol 6.2.5 itself (tests/data/sdk/_make_fixtures.py)."""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
import types
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from crp_core.cli import main
from crp_core.errors import CKFError
from crp_core.io.ckf import load_ckf, load_ckf_bytes
from crp_core.io.ckf.sdk import given_edges, read_snapshot, with_edges_in_metadata
from crp_core.io.ckf.sdk_map import SourceTypeMap, load_source_map, source_map_from_dict
from crp_core.model import FrozenObject, GivenEdge, KnowledgeBase, frozen_json, thawed_json
from tests.support.paths import TEST_DATA

SDK = TEST_DATA / "sdk"
SUP = SDK / "supersessions.json"


def _doc(name: str = "supersessions.json") -> dict:
    return json.loads((SDK / name).read_text(encoding="utf-8"))


def _bytes(doc: dict, *, rehash: bool = True) -> bytes:
    if rehash:
        doc["header"]["checksum"] = hashlib.sha256(
            json.dumps(doc["payload"], sort_keys=True, default=str).encode()
        ).hexdigest()
    return json.dumps(doc).encode()


def _refused(data: bytes, **kw) -> list:
    with pytest.raises(CKFError) as ei:
        read_snapshot(data, "snap.json", **kw)
    return list(ei.value.problems)


# ---- mapping, exact values ----------------------------------------------------------------------
def test_superseded_fact_maps_exactly():
    kb = load_ckf(SUP)
    assert kb.fmt == "sdk" and len(kb) == 9 and [f.line for f in kb.facts] == list(range(1, 10))
    f = kb.get("f-rate-old")
    assert f.content == "the api gateway rate limit is 500 requests per minute for each client key in production"
    # created_at 1769632000.0 = 1780000000 - 120 days = 2026-01-28T20:26:40Z
    assert f.ingested_at == f.modified_at == datetime(2026, 1, 28, 20, 26, 40, tzinfo=UTC)
    assert f.status == "STALE" and f.source_type == "unverified" and f.community_label == "sdk-community-1"
    assert dict(f.metadata) == {
        "category": "policy",
        "confidence": 0.81,
        "source_window_id": "win-001",
        "extraction_stage": 1,
        "age_in_windows": 2,
        "seen_count": 0,
        "consumed_by_windows": [],
        "graph_edges": [],
        "supersession_confidence": 0.7169,
        "tier": 2,
        "has_embedding": False,
        "superseded_by": "f-rate-new",
    }
    assert kb.get("f-backup").metadata["consumed_by_windows"] == ["win-003"]
    assert {x.fact_id for x in kb.facts if x.status == "STALE"} == {"f-rate-old", "f-owner-old"}
    assert kb.get("f-owner-old").metadata["superseded_by"] == "f-owner-new"
    assert "superseded_by" not in kb.get("f-port-old").metadata
    assert kb.warnings == ()


def test_edges_kept_as_given():
    kb = load_ckf(SUP)
    assert kb.edges == (
        GivenEdge("e-1", "f-backup", "f-restore", "ELABORATION", 0.8, 5),
        GivenEdge("e-2", "f-retention", "f-backup", "CONTRAST", 0.6, 5),
        GivenEdge("e-3", "f-rate-new", "f-rate-old", "SUPERSEDES", 0.55, 6),
        GivenEdge("e-4", "f-port-new", "f-restore", "RELATED", 0.3, 2),
    )


def test_summary_says_what_was_mapped_defaulted_dropped():
    s = load_ckf(SUP).imported
    assert (s.schema_version, s.facts_in, s.facts_loaded, s.edges_in, s.edges_kept, s.superseded) == (1, 9, 9, 4, 4, 2)
    assert (s.integrity, s.algorithm) == ("ok", "sha256")
    mapped = dict(s.mapped)
    assert mapped["text -> content"] == 9
    assert mapped["superseded_by -> status STALE + metadata.superseded_by"] == 2
    assert mapped["community_map -> community_label"] == 9
    assert mapped["edges -> given edges (relation_type, confidence)"] == 4
    assert dict(s.defaulted) == {"source_type -> unverified (no mapping rule matched)": 9}
    assert dict(s.kept) == {
        "event_log events (the SDK's fact lifecycle log, kept as given)": 15,
        "warm_store.critical_state (session state, kept as given)": 1,
        "warm_store.structural_state (session state, kept as given)": 1,
        "warm_store.window_count, current_window_id (session state, kept as given)": 1,
    }
    assert s.dropped == ()
    assert s.lines()[2] == "checksum: verified (sha256)"
    assert s.lines()[4].startswith("kept: event_log events (the SDK's fact lifecycle log, kept as given) (15); ")


def test_plain_snapshot_keeps_the_sdk_embedding_apart():
    kb = load_ckf(SDK / "plain.json")
    assert len(kb) == 4 and kb.edges == () and kb.embeddings is None  # never scored: the active model embeds
    assert all(f.status == "ACTIVE" for f in kb.facts)
    assert kb.get("p-2").metadata["has_embedding"] is True and "embedding" not in kb.get("p-2").metadata
    assert dict(kb.imported.kept)["embedding (the SDK's own vectors: kept for the SDK export, never scored)"] == 1
    given = _doc("plain.json")["payload"]["warm_store"]["facts"]["p-2"]["embedding"]
    kept = kb.sdk_state.facts["p-2"]["embedding"]
    assert kept.dtype == np.float64 and not kept.flags.writeable and kept.tolist() == given


# ---- the snapshot's state beyond the facts (KnowledgeBase.sdk_state) ------------------------------
def test_sdk_state_keeps_event_log_and_session_state_as_given():
    kb = load_ckf(SUP)
    doc = _doc()
    store = doc["payload"]["warm_store"]
    state = kb.sdk_state
    assert thawed_json(state.header) == doc["header"]
    assert thawed_json(state.event_log) == doc["payload"]["event_log"] and len(state.event_log) == 15
    assert state.event_log[8]["event_type"] == "superseded" and state.event_log[8]["payload"]["superseded_by"] == (
        "f-rate-new"
    )
    assert thawed_json(state.critical_state) == store["critical_state"]
    assert thawed_json(state.structural_state) == store["structural_state"]
    assert (state.window_count, state.current_window_id, state.store_schema_version) == (2, "win-003", 2)
    assert thawed_json(state.community_map) == doc["payload"]["community_map"]
    assert thawed_json(state.facts) == store["facts"] and list(state.facts) == list(store["facts"])
    assert thawed_json(state.edges) == store["edges"]
    assert "facts" not in state.store and "edges" not in state.store
    assert state.unknown_payload == {} and state.unknown_store == {}


def test_sdk_state_is_immutable():
    state = load_ckf(SUP).sdk_state
    with pytest.raises(TypeError):
        state.header["checksum"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        state.event_log[0]["payload"]["text"] = "x"  # type: ignore[index]
    with pytest.raises(AttributeError):
        state.critical_state["blockers"].append("x")  # a tuple
    with pytest.raises(Exception):  # noqa: B017 (dataclasses.FrozenInstanceError)
        state.digest = "x"  # type: ignore[misc]


def test_sdk_state_pickles():  # the dashboard's st.cache_data and the Ray engine pickle a KnowledgeBase
    kb = load_ckf(SDK / "plain.json")
    back = pickle.loads(pickle.dumps(kb))
    assert thawed_json(back.sdk_state.payload) == thawed_json(kb.sdk_state.payload)
    assert thawed_json(back.sdk_state.facts) == thawed_json(kb.sdk_state.facts)
    assert back.data_fingerprint == kb.data_fingerprint and isinstance(back.sdk_state.header, FrozenObject)


def test_sdk_state_keeps_unknown_keys_and_counts_them_kept():
    doc = _doc()
    doc["payload"]["audit_extra"] = {"a": [1, 2]}
    doc["payload"]["warm_store"]["tenant"] = "acme"
    doc["payload"]["warm_store"]["facts"]["f-backup"]["owner_team"] = "ops"
    kb = read_snapshot(_bytes(doc), "s.json")
    state = kb.sdk_state
    assert thawed_json(state.unknown_payload) == {"audit_extra": {"a": [1, 2]}}
    assert state.unknown_store == {"tenant": "acme"} and state.facts["f-backup"]["owner_team"] == "ops"
    assert "owner_team" not in kb.get("f-backup").metadata
    kept = dict(kb.imported.kept)
    assert kept["payload.audit_extra (unknown, kept as given)"] == 1
    assert kept["payload.warm_store.tenant (unknown, kept as given)"] == 1
    assert kept["fact field 'owner_team' (unknown, kept as given)"] == 1


def test_sdk_state_is_part_of_the_data_fingerprint_not_the_identity():
    doc = _doc()
    base = read_snapshot(_bytes(doc), "s.json")
    doc["payload"]["event_log"].pop()
    fewer_events = read_snapshot(_bytes(doc), "s.json")
    doc = _doc()
    doc["payload"]["warm_store"]["edges"].pop()
    fewer_edges = read_snapshot(_bytes(doc), "s.json")
    assert len({base.data_fingerprint, fewer_events.data_fingerprint, fewer_edges.data_fingerprint}) == 3
    assert base.fingerprint == fewer_events.fingerprint == fewer_edges.fingerprint  # the same knowledge
    assert read_snapshot(_bytes(_doc()), "t.json").data_fingerprint == base.data_fingerprint
    plain = replace(base, edges=(), sdk_state=None, imported=None)
    assert plain.data_fingerprint == KnowledgeBase(base.facts).data_fingerprint  # other CKFs: as before


def test_bad_event_log_shapes_are_warnings():
    doc = _doc()
    doc["payload"]["event_log"][3] = "not an event"
    kb = read_snapshot(_bytes(doc), "s.json")
    assert [(w.field, w.message) for w in kb.warnings] == [
        ("payload.event_log[3]", 'an event is a JSON object, got a string "not an event"')
    ]
    assert kb.sdk_state.event_log[3] == "not an event"
    doc["payload"]["event_log"] = {"a": 1}
    kb = read_snapshot(_bytes(doc), "s.json")
    assert [(w.field, w.message) for w in kb.warnings] == [
        ("payload.event_log", "must be a list of events, got an object")
    ]
    assert kb.sdk_state.event_log == ()


def test_mapping_file_rules_first_match_wins():
    smap = load_source_map(SDK / "mapping.toml")
    kb = read_snapshot(SUP.read_bytes(), "s.json", source_map=smap)
    got = {f.fact_id: f.source_type for f in kb.facts}
    assert got == {
        "f-port-old": "internal",
        "f-rate-old": "official_documentation",
        "f-backup": "internal",
        "f-owner-old": "internal",
        "f-port-new": "internal",
        "f-rate-new": "user_provided",
        "f-restore": "internal",
        "f-retention": "user_provided",
        "f-owner-new": "internal",
    }
    mapped = dict(kb.imported.mapped)
    assert mapped["source_type -> user_provided (rule 1: source_window_id = 'chat-*')"] == 2
    assert mapped["source_type -> official_documentation (rule 2: category = 'policy')"] == 1
    assert dict(kb.imported.defaulted) == {"source_type -> internal (no mapping rule matched)": 6}
    kb2 = read_snapshot(SUP.read_bytes(), "s.json", source_map=smap.with_default("web"))
    assert kb2.get("f-backup").source_type == "web"


def test_mapping_errors_name_the_key():
    with pytest.raises(CKFError) as ei:
        source_map_from_dict(
            {
                "rule": [{"category": 3, "source_type": "blog"}, {"extraction_stage": [1, "x"], "source_type": "web"}],
                "x": 1,
            }
        )
    fields = sorted(p.field for p in ei.value.problems)
    assert fields == ["rule[1].category", "rule[1].source_type", "rule[2].extraction_stage", "x"]
    assert SourceTypeMap(default="news").source_type_for("a", "b", 1) == ("news", None)


# ---- integrity ----------------------------------------------------------------------------------
def test_bad_checksum_without_blake3_cannot_be_verified(monkeypatch):
    monkeypatch.setitem(sys.modules, "blake3", None)  # import blake3 -> ImportError
    kb = load_ckf(SDK / "bad_checksum.json")
    assert kb.imported.integrity == "unverifiable"
    (w,) = kb.warnings
    assert w.field == "header.checksum" and "cannot be verified" in w.message


@pytest.mark.parametrize("given", [12345, ["ab"], {"sha256": "ab"}, True])
def test_a_checksum_of_the_wrong_type_is_a_mismatch_not_an_absence(given):
    """The SDK only ever writes a hex string: any other type means the header was edited, and must not dodge
    the MISMATCH verdict by reading as "no checksum"."""
    doc = _doc()
    doc["header"]["checksum"] = given
    kb = load_ckf_bytes(json.dumps(doc).encode(), "wrong.json")
    assert kb.imported.integrity == "mismatch" and "MISMATCH" in kb.imported.lines()[2]
    (w,) = [w for w in kb.warnings if w.field == "header.checksum"]
    assert "must be a hex string" in w.message and "changed or damaged" in w.message


def test_a_number_beyond_floats_range_is_a_problem_of_its_fact_not_a_traceback():
    raw = json.dumps(_doc()).replace('"confidence": 0.72', '"confidence": 1' + "0" * 400, 1)
    assert "0" * 400 in raw
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(raw.encode(), "huge.json")
    (p,) = ei.value.problems
    assert (p.field, p.fact_id) == ('payload.warm_store.facts["f-port-old"].confidence', "f-port-old")
    assert p.message.startswith("must be a number (finite, within a float's range), got a number 1000")


def _fake_blake3(monkeypatch):
    """A stand-in ``blake3`` module (BLAKE2b-256 under the name): the branch is what is tested."""
    mod = types.ModuleType("blake3")
    mod.blake3 = lambda data: hashlib.blake2b(data, digest_size=32)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "blake3", mod)


def test_bad_checksum_with_blake3_is_a_mismatch_warning(monkeypatch):
    _fake_blake3(monkeypatch)
    kb = load_ckf(SDK / "bad_checksum.json")
    assert kb.imported.integrity == "mismatch" and "MISMATCH" in kb.imported.lines()[2]
    (w,) = kb.warnings
    assert w.field == "header.checksum" and "changed or damaged" in w.message
    assert kb.get("f-backup").content == "The nightly backup job runs at 03:00 UTC."  # loaded, not silently


def test_blake3_checksum_verified_when_blake3_importable(monkeypatch):
    _fake_blake3(monkeypatch)
    doc = _doc()
    doc["header"]["checksum"] = hashlib.blake2b(
        json.dumps(doc["payload"], sort_keys=True, default=str).encode(), digest_size=32
    ).hexdigest()
    kb = read_snapshot(json.dumps(doc).encode(), "s.json")
    assert (kb.imported.integrity, kb.imported.algorithm) == ("ok", "blake3") and kb.warnings == ()


def test_real_blake3_fixture():
    pytest.importorskip("blake3")
    assert load_ckf(SDK / "plain_blake3.json").imported.algorithm == "blake3"


def test_count_mismatch_warns():
    kb = load_ckf(SDK / "count_mismatch.json")
    assert [(w.field, w.message) for w in kb.warnings] == [
        ("header.fact_count", "says 12 but the payload holds 9 facts: the header and the payload disagree"),
        ("header.edge_count", "says 3 but the payload holds 4 edges: the header and the payload disagree"),
    ]


# ---- refusals -----------------------------------------------------------------------------------
def test_newer_schema_refused():
    with pytest.raises(CKFError) as ei:
        load_ckf(SDK / "newer_schema.json")
    (p,) = ei.value.problems
    assert p.field == "header.schema_version" and "newer than this reader knows (1)" in p.message
    with pytest.raises(CKFError) as ei:
        load_ckf(SDK / "newer_store_schema.json")
    assert [p.field for p in ei.value.problems] == ["payload.warm_store.schema_version"]


def test_truncated_and_missing_header():
    with pytest.raises(CKFError) as ei:
        load_ckf(SDK / "truncated.json")
    (p,) = ei.value.problems
    assert p.field == "json" and p.line == 1 and "cut short" in p.message
    with pytest.raises(CKFError) as ei:
        load_ckf(SDK / "missing_header.json")
    assert [p.field for p in ei.value.problems] == ["header"]


def test_wrong_types_name_path_and_field():
    with pytest.raises(CKFError) as ei:
        load_ckf(SDK / "wrong_types.json")
    got = [(p.line, p.field, p.fact_id) for p in ei.value.problems]
    assert got == [
        (0, "payload.warm_store.edges[0].target_id", None),
        (0, "payload.warm_store.edges[1]", None),
        (3, 'payload.warm_store.facts["f-backup"].text', "f-backup"),
        (5, 'payload.warm_store.facts["f-port-new"].superseded_by', "f-port-new"),
        (6, 'payload.warm_store.facts["f-rate-new"]', "f-rate-new"),
        (7, 'payload.warm_store.facts["f-restore"].created_at', "f-restore"),
        (8, 'payload.warm_store.facts["f-retention"].confidence', "f-retention"),
    ]
    assert ei.value.problems[2].message == "must be a string, got a number 42"


def test_wrong_types_lenient_keeps_the_good_facts():
    kb = load_ckf(SDK / "wrong_types.json", lenient=True)
    assert sorted(f.fact_id for f in kb.facts) == ["f-owner-new", "f-owner-old", "f-port-old", "f-rate-old"]
    assert kb.edges == ()  # e-3/e-4 name skipped facts; e-1/e-2 are malformed
    assert len(kb.skipped) == 7
    assert any(
        w.field == 'payload.warm_store.facts["f-rate-old"].superseded_by' and "skipped" in w.message
        for w in kb.warnings
    )
    assert any(w.field == "header.fact_count" for w in kb.warnings)


@pytest.mark.parametrize(
    "doc, field",
    [
        ([1, 2], "file"),
        ({"header": {}, "payload": 3}, "payload"),
        (
            {"header": {"schema_version": "1"}, "payload": {"warm_store": {"facts": {"a": {"text": "x"}}}}},
            "header.schema_version",
        ),
        ({"header": {}, "payload": {"warm_store": []}}, "payload.warm_store"),
        ({"header": {}, "payload": {"warm_store": {"facts": []}}}, "payload.warm_store.facts"),
        ({"header": {}, "payload": {"warm_store": {"facts": {}}}}, "payload.warm_store.facts"),
    ],
)
def test_hostile_shapes_are_clear_errors(doc, field):
    problems = _refused(json.dumps(doc).encode())
    assert field in [p.field for p in problems]


def test_deep_nesting_and_huge_are_clear_errors():
    deep = b'{"header": {}, "payload": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    (p,) = _refused(deep)
    assert p.field == "json" and "nested too deeply" in p.message
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(_bytes(_doc()), "s.json", max_bytes=100)
    assert "over the limit" in ei.value.problems[0].message


@settings(max_examples=60, deadline=None)
@given(
    hs.recursive(
        hs.none() | hs.booleans() | hs.integers() | hs.floats() | hs.text(max_size=5),
        lambda c: hs.lists(c, max_size=3) | hs.dictionaries(hs.text(max_size=5), c, max_size=3),
        max_leaves=12,
    )
)
def test_any_value_in_a_fact_field_is_a_clear_error_or_a_load(value):
    for field in ("text", "created_at", "superseded_by", "category", "tier", "consumed_by_windows"):
        doc = _doc("plain.json")
        doc["payload"]["warm_store"]["facts"]["p-1"][field] = value
        try:
            kb = read_snapshot(_bytes(doc), "s.json")
        except CKFError as exc:
            assert all(p.field.startswith(("payload.", "header.", "json", "file")) for p in exc.problems)
        else:
            assert len(kb) == 4


def test_upload_bytes_and_json_ckf_still_json():
    kb = load_ckf_bytes(SUP.read_bytes(), "snap.json")
    assert kb.fmt == "sdk" and kb.source == "snap.json" and len(kb.edges) == 4
    kb2 = load_ckf_bytes(json.dumps({"facts": [{"fact_id": "a", "content": "x"}]}).encode(), "k.json")
    assert kb2.fmt == "json" and kb2.imported is None and kb2.edges == ()


# ---- export and the CLI -------------------------------------------------------------------------
def test_edges_travel_in_metadata_and_back(tmp_path):
    from crp_core.io.ckf import write_ckf

    kb = load_ckf(SUP)
    out = write_ckf(with_edges_in_metadata(kb), tmp_path / "k.jsonl")
    back = load_ckf(out)
    assert back.edges == () and sorted(given_edges(back), key=lambda e: e.edge_id) == list(kb.edges)  # fact order
    assert back.get("f-backup").metadata["sdk_edges"] == [
        {"id": "e-1", "target_id": "f-restore", "relation_type": "ELABORATION", "confidence": 0.8, "source_stage": 5}
    ]


def test_import_sdk_round_trip(tmp_path, capsys):
    out = tmp_path / "ckf.jsonl"
    assert main(["import-sdk", str(SUP), "--out", str(out), "--map", str(SDK / "mapping.toml")]) == 0
    printed = capsys.readouterr().out
    assert "9 fact(s), 4 edge(s)" in printed and "checksum: verified (sha256)" in printed
    assert "defaulted: source_type -> internal (no mapping rule matched) (6)" in printed
    back = load_ckf(out)
    kb = read_snapshot(SUP.read_bytes(), "x", source_map=load_source_map(SDK / "mapping.toml"))
    assert [(f.fact_id, f.content, f.status, f.source_type, f.ingested_at) for f in back.facts] == [
        (f.fact_id, f.content, f.status, f.source_type, f.ingested_at) for f in kb.facts
    ]
    assert sorted(given_edges(back), key=lambda e: e.edge_id) == list(kb.edges)


@pytest.mark.parametrize("name", ["truncated.json", "newer_schema.json", "wrong_types.json", "missing_header.json"])
def test_import_sdk_bad_input_exit_2(tmp_path, capsys, name):
    out = tmp_path / "ckf.jsonl"
    assert main(["import-sdk", str(SDK / name), "--out", str(out)]) == 2
    assert "refused" in capsys.readouterr().err and not out.exists()


def test_import_sdk_bad_mapping_and_out(tmp_path, capsys):
    bad = tmp_path / "m.toml"
    bad.write_text('[[rule]]\nsource_type = "blog"\n')
    assert main(["import-sdk", str(SUP), "--out", str(tmp_path / "o.jsonl"), "--map", str(bad)]) == 2
    assert "rule[1].source_type" in capsys.readouterr().err
    assert main(["import-sdk", str(SUP), "--out", str(tmp_path / "nodir" / "o.jsonl")]) == 2
    assert main(["import-sdk", str(SUP), "--out", str(tmp_path / "o")]) == 2


def test_validate_shows_the_summary(capsys):
    assert main(["validate", str(SUP)]) == 0
    out = capsys.readouterr().out
    assert "OK (sdk), 9 fact(s)" in out and "checksum: verified (sha256)" in out
    assert main(["validate", str(SDK / "newer_schema.json"), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ckf"]["problems"][0]["field"] == "header.schema_version"


def test_hmac_unknown_successor_duplicate_key_are_warnings():
    doc = _doc("plain.json")
    doc["header"]["hmac_signature"] = "ab" * 32
    doc["payload"]["warm_store"]["facts"]["p-1"]["superseded_by"] = "p-99"
    doc["payload"]["warm_store"]["facts"]["p-3"]["superseded_by"] = "p-3"
    data = _bytes(doc).replace(b'"category": "ops"', b'"category": "ops", "category": "ops2"', 1)
    kb = read_snapshot(data, "s.json")
    by_field = {w.field: w.message for w in kb.warnings}
    assert "not verified" in by_field["header.hmac_signature"]
    assert (
        by_field['payload.warm_store.facts["p-1"].superseded_by']
        == "names 'p-99', which is not a fact of the snapshot: status STALE kept, no successor to show"
    )
    assert by_field['payload.warm_store.facts["p-3"].superseded_by'] == "names the fact itself"
    assert by_field["json"].startswith("key 'category' given more than once")
    assert kb.get("p-1").status == "STALE" and kb.get("p-3").metadata["category"] == "ops2"
    assert dict(kb.imported.kept)["header.hmac_signature (not verified: it needs the deployment's key)"] == 1
    assert kb.sdk_state.header["hmac_signature"] == "ab" * 32


# ---- --sdk-map / --source-type on the commands that take --ckf ---------------------------------
@pytest.mark.parametrize("cmd", ["run", "fanout", "conflicts", "check", "tune"])
def test_every_ckf_command_takes_the_mapping(cmd, capsys):
    with pytest.raises(SystemExit):
        main([cmd, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--sdk-map TOML" in out and "--source-type TYPE" in out


def test_input_source_map_and_load(tmp_path, capsys):
    import argparse

    from crp_core.cli.common import input_source_map, load_input_ckf

    ns = argparse.Namespace
    assert input_source_map(ns(sdk_map=None, source_type=None)) is None
    assert input_source_map(ns(sdk_map=None, source_type="web")) == SourceTypeMap((), "web")
    smap = input_source_map(ns(sdk_map=str(SDK / "mapping.toml"), source_type="news"))
    assert smap is not None and smap.default == "news" and len(smap.rules) == 2
    kb = load_input_ckf(str(SUP), lenient=False, max_bytes=1 << 20, source_map=smap)
    assert kb.get("f-rate-old").source_type == "official_documentation" and kb.get("f-backup").source_type == "news"
    assert capsys.readouterr().err == ""
    ckf = tmp_path / "plain.jsonl"
    ckf.write_text('{"fact_id": "a", "content": "x", "source_type": "internal"}\n', encoding="utf-8")
    kb = load_input_ckf(str(ckf), lenient=False, max_bytes=1 << 20, source_map=smap)
    assert kb.get("a").source_type == "internal"
    assert (
        "--sdk-map / --source-type ignored: " + str(ckf) + " is not a crprotocol SDK snapshot"
        in capsys.readouterr().err
    )


def test_bad_sdk_map_exit_2_names_the_key(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\ncategory = "policy"\nsource_type = "blog"\n', encoding="utf-8")
    assert main(["conflicts", "--ckf", str(SUP), "--sdk-map", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "rule[1].source_type" in err and "unknown source type 'blog'" in err
    assert main(["conflicts", "--ckf", str(SUP), "--sdk-map", str(tmp_path / "missing.toml")]) == 2
    assert "missing.toml" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["conflicts", "--ckf", str(SUP), "--source-type", "blog"])


def test_validate_and_triage_take_the_source_type_mapping(tmp_path, capsys):
    """validate, triage record / stats / export read an SDK snapshot with --sdk-map / --source-type, as
    every --ckf command does: the export writes the mapped source types, not the default."""
    snap, mapping = SDK / "disagreement.json", SDK / "disagreement_mapping.toml"
    assert main(["validate", str(snap), "--sdk-map", str(mapping), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ckf"]["by_source_type"] == {"regulatory": 1, "internal": 1, "web": 2}
    assert main(["validate", str(snap), "--source-type", "news", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ckf"]["by_source_type"] == {"news": 4}
    db = str(tmp_path / "t.sqlite")
    assert (
        main(
            [
                "triage",
                "record",
                "--db",
                db,
                "--pair",
                "g-retention-new",
                "g-retention-old",
                "--kind",
                "dismiss",
                "--operator",
                "ann",
                "--ckf",
                str(snap),
                "--sdk-map",
                str(mapping),
            ]
        )
        == 0
    )
    capsys.readouterr()  # the recorded decision
    assert main(["triage", "stats", "--db", db, "--ckf", str(snap), "--sdk-map", str(mapping), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == 1  # the decided pair, on this mapping's CKF
    for args, want in (([], {"unverified"}), (["--sdk-map", str(mapping)], {"regulatory", "internal", "web"})):
        out = tmp_path / f"clean{len(args)}.jsonl"
        assert main(["triage", "export", "--db", db, "--ckf", str(snap), "--out", str(out), *args]) == 0
        assert {f.source_type for f in load_ckf(out).facts} == want
    capsys.readouterr()
    bad = tmp_path / "m.toml"
    bad.write_text("[[rule]]\nbogus = 1\n", encoding="utf-8")
    assert main(["validate", str(snap), "--sdk-map", str(bad)]) == 2
    assert "rule[1].bogus" in capsys.readouterr().err


def test_a_mapping_with_a_5000_digit_integer_is_a_clear_error(tmp_path, capsys):
    """int() refuses more than 4300 digits with a ValueError tomllib lets through (issue 32)."""
    from crp_core.io.ckf.sdk_map import source_map_from_bytes

    bad = tmp_path / "m.toml"
    bad.write_text('[[rule]]\nsource_type = "web"\nextraction_stage = ' + "9" * 5000 + "\n")
    for read in (lambda: load_source_map(bad), lambda: source_map_from_bytes(bad.read_bytes(), str(bad))):
        with pytest.raises(CKFError) as ei:
            read()
        (p,) = ei.value.problems
        assert (p.line, p.field) == (3, "toml") and "more than 4300 digits at line 3, column 20" in p.message
        assert str(bad) in str(ei.value)
    assert main(["import-sdk", str(SUP), "--out", str(tmp_path / "o.jsonl"), "--map", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 3, field 'toml'" in err and "more than 4300 digits" in err and "Traceback" not in err


_JSON = hs.recursive(
    hs.none() | hs.booleans() | hs.integers() | hs.floats(allow_nan=False) | hs.text(max_size=5),
    lambda c: hs.lists(c, max_size=4) | hs.dictionaries(hs.text(max_size=5), c, max_size=4),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None)
@given(_JSON)
def test_frozen_json_is_immutable_and_thaws_back_exactly(value):
    frozen = frozen_json(value)
    assert thawed_json(frozen) == value
    assert json.dumps(thawed_json(frozen), sort_keys=True) == json.dumps(value, sort_keys=True)
    assert pickle.loads(pickle.dumps(frozen)) == frozen
    stack = [frozen]
    while stack:  # no list or dict is left anywhere inside
        v = stack.pop()
        assert not isinstance(v, (list, dict))
        stack.extend(v.values() if isinstance(v, FrozenObject) else v if isinstance(v, tuple) else ())


@settings(max_examples=40, deadline=None)
@given(
    hs.dictionaries(hs.text(min_size=1, max_size=6).filter(lambda k: k not in ("fact_id", "text")), _JSON, max_size=3)
)
def test_a_snapshot_exported_without_decisions_keeps_its_payload(extra):
    """Whatever a fact carries besides the CKF fields, the SDK export writes it back unchanged."""
    from crp_core.io.ckf.sdk_write import sdk_document

    doc = _doc("plain.json")
    doc["payload"]["warm_store"]["facts"]["p-1"].update(extra)
    try:
        kb = read_snapshot(_bytes(doc), "s.json", lenient=True)
    except CKFError:
        return
    if kb.get("p-1") is None:
        return  # a value the fact checks refuse (lenient: skipped)
    out, _ = sdk_document(kb)
    assert out["payload"] == doc["payload"] and out["header"]["checksum"] == doc["header"]["checksum"]

"""A fact's SDK provenance read back from its metadata (crp_core.io.ckf.provenance): exact values on the
snapshot crprotocol 6.2.5 wrote, the same after a CKF export, hostile metadata types named and left out."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import crp_core
from crp_core import Fact, SdkProvenance, load_ckf, sdk_provenance, write_ckf
from tests.support.paths import TEST_DATA

SUP = TEST_DATA / "sdk" / "supersessions.json"

#: supersessions.json as the SDK wrote it: (window, category, confidence, tier, stage, superseded_by)
EXPECTED = {
    "f-port-old": ("win-001", "config", 0.72, 2, 2, None),
    "f-rate-old": ("win-001", "policy", 0.81, 2, 1, "f-rate-new"),
    "f-backup": ("win-001", "ops", 0.9, 2, 1, None),
    "f-owner-old": ("win-001", "org", 0.65, 2, 3, "f-owner-new"),
    "f-port-new": ("win-002", "config", 0.88, 2, 2, None),
    "f-rate-new": ("chat-002", "policy", 0.55, 2, 6, None),
    "f-restore": ("win-002", "ops", 0.7, 2, 5, None),
    "f-retention": ("chat-002", "ops", 0.5, 2, 6, None),
    "f-owner-new": ("win-003", "org", 0.6, 2, 3, None),
}


def _tuple(p: SdkProvenance | None) -> tuple[object, ...] | None:
    if p is None:
        return None
    return (p.source_window_id, p.category, p.confidence, p.tier, p.extraction_stage, p.superseded_by)


def test_public_names():
    assert {"sdk_provenance", "SdkProvenance"} <= set(crp_core.__all__)


def test_snapshot_provenance_exactly():
    kb = load_ckf(str(SUP))
    got = {f.fact_id: sdk_provenance(f) for f in kb.facts}
    assert {fid: _tuple(p) for fid, p in got.items()} == EXPECTED
    assert all(p is not None and p.invalid == () for p in got.values())
    rate = got["f-rate-old"]
    assert rate is not None
    assert rate.items() == (
        ("source_window_id", "win-001"),
        ("category", "policy"),
        ("confidence", 0.81),
        ("tier", 2),
        ("extraction_stage", 1),
        ("superseded_by", "f-rate-new"),
    )
    assert rate.labelled() == (
        ("source_window_id", "window", "win-001"),
        ("category", "category", "policy"),
        ("confidence", "confidence", "0.81"),
        ("tier", "tier", "2 (warm)"),
        ("extraction_stage", "extraction stage", "1 (regex)"),
        ("superseded_by", "superseded by", "f-rate-new"),
    )
    assert rate.as_dict() == {
        "source_window_id": "win-001",
        "category": "policy",
        "confidence": 0.81,
        "tier": 2,
        "extraction_stage": 1,
        "superseded_by": "f-rate-new",
        "invalid": [],
    }
    new = got["f-rate-new"]
    assert new is not None and new.stage_name == "LLM-assisted" and new.tier_name == "warm"
    assert new.as_dict()["superseded_by"] is None


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_the_same_after_a_ckf_export(tmp_path, suffix):
    """``import-sdk`` / a triage export write the SDK fields into the CKF's metadata: read back the same."""
    kb = load_ckf(str(SUP))
    out = tmp_path / f"kb{suffix}"
    write_ckf(kb, str(out))
    back = load_ckf(str(out))
    assert back.fmt != "sdk"
    assert {f.fact_id: _tuple(sdk_provenance(f)) for f in back.facts} == EXPECTED


def test_plain_ckf_facts_have_none(tmp_path):
    rows = [
        {"fact_id": "a", "content": "x"},
        # SDK-like names a plain CKF may use: without a window or a stage it is not an SDK fact
        {"fact_id": "b", "content": "y", "metadata": {"category": "docs", "confidence": 0.9, "tier": 1}},
        {"fact_id": "c", "content": "z", "metadata": {"superseded_by": "a", "triage": {"operator": "ann"}}},
        {"fact_id": "d", "content": "w", "metadata": {"source_window_id": None, "extraction_stage": None}},
    ]
    path = tmp_path / "plain.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [sdk_provenance(f) for f in load_ckf(str(path)).facts] == [None] * 4


def test_sdk_defaults_and_a_marker_alone():
    """The SDK writes "" for no window and no category, 0 for no stage: an SDK fact with those unset."""
    p = sdk_provenance(Fact("a", "x", metadata={"source_window_id": "", "category": "", "extraction_stage": 0}))
    assert p == SdkProvenance(extraction_stage=0)
    assert p.stage_name is None and p.labelled() == (("extraction_stage", "extraction stage", "0"),)
    p = sdk_provenance(Fact("a", "x", metadata={"source_window_id": "w-9"}))
    assert p == SdkProvenance(source_window_id="w-9")
    assert p.as_dict() == {
        "source_window_id": "w-9",
        "category": None,
        "confidence": None,
        "tier": None,
        "extraction_stage": None,
        "superseded_by": None,
        "invalid": [],
    }
    unnamed = sdk_provenance(Fact("a", "x", metadata={"extraction_stage": 9, "tier": 7, "confidence": 1}))
    assert unnamed == SdkProvenance(confidence=1.0, tier=7, extraction_stage=9)
    assert isinstance(unnamed.confidence, float)
    assert unnamed.labelled() == (
        ("confidence", "confidence", "1"),
        ("tier", "tier", "7"),
        ("extraction_stage", "extraction stage", "9"),
    )


@pytest.mark.parametrize(
    "field,value",
    [
        ("source_window_id", 7),
        ("source_window_id", ["win-1"]),
        ("category", {"a": 1}),
        ("category", False),
        ("confidence", "0.9"),
        ("confidence", True),
        ("confidence", float("nan")),
        ("confidence", float("inf")),
        ("confidence", 10**400),
        ("confidence", [0.9]),
        ("tier", 2.0),
        ("tier", "2"),
        ("tier", True),
        ("extraction_stage", 1.5),
        ("extraction_stage", "6"),
        ("superseded_by", 12),
        ("superseded_by", {"id": "f"}),
    ],
)
def test_a_wrong_type_is_named_and_left_out(field, value):
    meta = {"source_window_id": "win-1", "category": "ops", "confidence": 0.5, "tier": 1, "extraction_stage": 2}
    meta[field] = value
    p = sdk_provenance(Fact("a", "x", metadata=meta))
    assert p is not None and p.invalid == (field,) and getattr(p, field) is None
    assert p.labelled()[-1] == ("invalid", "wrong type, ignored", field)
    assert p.as_dict()["invalid"] == [field]
    assert field not in dict(p.items())


def test_several_wrong_types_in_field_order():
    meta = {"superseded_by": 3, "extraction_stage": "x", "confidence": "high", "source_window_id": 1}
    p = sdk_provenance(Fact("a", "x", metadata=meta))
    assert p == SdkProvenance(invalid=("source_window_id", "confidence", "extraction_stage", "superseded_by"))
    assert p.items() == ()
    assert p.labelled() == (
        ("invalid", "wrong type, ignored", "source_window_id, confidence, extraction_stage, superseded_by"),
    )


def test_metadata_that_is_not_a_mapping():
    assert sdk_provenance(Fact("a", "x", metadata=["source_window_id"])) is None  # type: ignore[arg-type]


def test_the_metadata_is_only_read():
    meta = {"source_window_id": "w", "confidence": "0.5", "tier": 2.0}
    before = json.dumps(meta, sort_keys=True)
    sdk_provenance(Fact("a", "x", metadata=meta))
    assert json.dumps(meta, sort_keys=True) == before


_JSON = hs.recursive(
    hs.none() | hs.booleans() | hs.integers() | hs.floats() | hs.text(max_size=5),
    lambda inner: hs.lists(inner, max_size=3) | hs.dictionaries(hs.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(
    hs.dictionaries(
        hs.sampled_from(["source_window_id", "category", "confidence", "tier", "extraction_stage", "superseded_by"]),
        _JSON,
    )
)
def test_any_metadata_gives_typed_values_or_names_them(meta):
    """Whatever the metadata holds: None or a record whose every value has its type, each other value named."""
    p = sdk_provenance(Fact("a", "x", metadata=meta))
    if meta.get("source_window_id") is None and meta.get("extraction_stage") is None:
        assert p is None
        return
    assert p is not None
    for name in ("source_window_id", "category", "superseded_by"):
        v = getattr(p, name)
        assert v is None or (isinstance(v, str) and v)
    assert p.confidence is None or (type(p.confidence) is float and math.isfinite(p.confidence))
    for name in ("tier", "extraction_stage"):
        v = getattr(p, name)
        assert v is None or type(v) is int
    for name in p.invalid:
        assert getattr(p, name) is None and meta.get(name) not in (None, "")
    shown = {name for name, _v in p.items()}
    assert shown | set(p.invalid) == {k for k, v in meta.items() if v is not None and v != ""}

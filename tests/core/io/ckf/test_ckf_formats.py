"""CKF formats, the records they build, hostile text and the write/load round trip (docs/reference/ckf.md)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.errors import CKFError
from crp_core.io.ckf import load_ckf, load_ckf_bytes, write_ckf
from crp_core.model import Fact, KnowledgeBase
from tests.support.ckf_formats import GOOD, kbs, strip_line

FORMATS = [
    ("facts.jsonl", "jsonl"),
    ("facts_list.json", "json"),
    ("facts_wrapper.json", "json"),
    ("facts.csv", "csv"),
    ("facts_dir", "dir"),
]
E = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.25], [0.5, 0.5, -1.0]], dtype=np.float32)


@pytest.mark.parametrize("name,fmt", FORMATS)
def test_every_good_format_gives_the_same_facts(name, fmt):
    kb = load_ckf(os.path.join(GOOD, name))
    ref = load_ckf(os.path.join(GOOD, "facts_dir"))
    assert kb.fmt == fmt
    assert strip_line(kb) == strip_line(ref)
    assert [dict(f.metadata) for f in kb.facts] == [{"section": "ports"}, {}, {}]
    assert kb.embedding_model == "test-model"
    assert kb.embeddings.dtype == np.float32 and kb.embeddings.shape == (3, 3)
    np.testing.assert_array_equal(kb.embeddings, E)
    assert not kb.embeddings.flags.writeable
    assert kb.skipped == ()


def test_fact_fields_are_built_as_specified():
    kb = load_ckf(os.path.join(GOOD, "facts.jsonl"))
    g1, g2, g3 = kb.facts
    # blank lines count: facts on lines 1, 3, 5
    assert [f.line for f in kb.facts] == [1, 3, 5]
    assert g1.source_type == "official_documentation" and g1.status == "ACTIVE"
    assert g1.importance_weight == 0.9 and g1.source_id == "etcd-docs"
    assert g1.ingested_at == datetime(2025, 1, 10, 8, tzinfo=UTC) and g1.modified_at is None
    assert g1.effective_modified_at == g1.ingested_at
    assert (g1.ttl_kind, g1.ttl_seconds, g1.ttl_text) == ("explicit", 365 * 86400.0, "P1Y")
    # offset converted to UTC: 12:00+02:00 = 10:00Z; raw weight None (resolved by the pipeline)
    assert g2.modified_at == datetime(2025, 3, 1, 10, tzinfo=UTC)
    assert g2.status == "STALE" and g2.importance_weight is None and g2.community_label == "etcd"
    assert (g2.ttl_kind, g2.ttl_seconds) == ("default", None)
    # naive date = midnight UTC; "none" = timeless; hostile text kept as-is
    assert g3.ingested_at == datetime(2025, 2, 1, tzinfo=UTC)
    assert (g3.ttl_kind, g3.ttl_seconds, g3.ttl_text) == ("timeless", None, "none")
    assert g3.content == "User note: <script>alert(1)</script> keep\u0007 as data."


def test_warnings_unknown_field_and_unknown_age():
    kb = load_ckf(os.path.join(GOOD, "no_embeddings.jsonl"))
    assert kb.embeddings is None and kb.embedding_model is None
    w = {(p.line, p.field): p for p in kb.warnings}
    assert "unknown field" in w[(4, "extra_field")].message
    assert w[(4, "modified_at")].message.endswith("age unknown, recency factor 1.0")
    assert w[(4, "modified_at")].fact_id == "g4"
    assert len(kb.warnings) == 2  # g1..g3 all have an age
    assert len(kb) == 4


def test_known_spec009_fields_are_accepted_silently_and_content_hash_checked():
    data = (
        json.dumps(
            {
                "fact_id": "a",
                "content": "x",
                "access_count": 3,
                "last_accessed_at": "2025-01-01",
                "content_hash": "0" * 64,
                "ingested_at": "2025-01-01",
            }
        )
        + "\n"
    ).encode()
    kb = load_ckf_bytes(data, "k.jsonl")
    assert [(p.field, "does not match" in p.message) for p in kb.warnings] == [("content_hash", True)]


def test_hostile_text_is_data(tmp_path):
    nasty = "\x00\x01\x1b[31m<img src=x onerror=alert(1)>\u2028\u0085 \ufeff" + "z" * 300_000
    facts = [{"fact_id": "h\u2029", "content": nasty}, {"fact_id": "n", "content": "plain"}]
    for ext in ("jsonl", "json", "csv"):
        p = tmp_path / f"h.{ext}"
        kb0 = KnowledgeBase(facts=tuple(Fact(fact_id=f["fact_id"], content=f["content"]) for f in facts))
        write_ckf(kb0, p)
        kb = load_ckf(p)
        assert [f.content for f in kb.facts] == [nasty, "plain"], ext
        assert kb.facts[0].fact_id == "h\u2029"


def test_deeply_nested_and_huge_numbers_do_not_crash():
    deep = b'{"fact_id": "a", "content": "x", "metadata": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(deep, "d.jsonl")
    assert ei.value.problems[0].field == "json"
    big = b'{"fact_id": "a", "content": "x", "importance_weight": ' + b"9" * 5000 + b"}\n"
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(big, "b.jsonl")
    assert ei.value.problems[0].line == 1


# ---- round trip ------------------------------------------------------------------------------
@pytest.mark.parametrize("ext", ["jsonl", "json", "csv", ""])
def test_write_then_load_round_trips_the_good_corpus(tmp_path, ext):
    kb = load_ckf(os.path.join(GOOD, "facts_wrapper.json"))
    out = write_ckf(kb, tmp_path / (f"out.{ext}" if ext else "outdir"))
    back = load_ckf(out)
    assert strip_line(back) == strip_line(kb)
    assert [dict(f.metadata) for f in back.facts] == [dict(f.metadata) for f in kb.facts]
    np.testing.assert_array_equal(back.embeddings, kb.embeddings)
    assert back.embedding_model == kb.embedding_model


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kb=kbs(), ext=st.sampled_from(["jsonl", "json", "csv", ""]))
def test_round_trip_property(tmp_path, kb, ext):
    out = write_ckf(kb, tmp_path / (f"rt.{ext}" if ext else f"rtdir{abs(hash(kb.fingerprint))}"))
    back = load_ckf(out)
    assert strip_line(back) == strip_line(kb)
    assert [dict(f.metadata) for f in back.facts] == [dict(f.metadata) for f in kb.facts]
    assert back.embedding_model == kb.embedding_model
    if kb.embeddings is None:
        assert back.embeddings is None
    else:
        np.testing.assert_array_equal(back.embeddings, kb.embeddings)
    assert back.fingerprint == kb.fingerprint


# ---- fuzz: any mutation of a good file is loaded or refused with CKFError, never a traceback --------
_GOOD_FILES = sorted(
    n for n in os.listdir(GOOD) if os.path.isfile(os.path.join(GOOD, n)) and not n.startswith("scenario")
)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(_GOOD_FILES), data=st.data(), lenient=st.booleans())
def test_mutated_files_never_crash(name, data, lenient):
    raw = bytearray(open(os.path.join(GOOD, name), "rb").read())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        insert = data.draw(
            st.sampled_from(
                [b"", b'"', b"{", b"]", b",", b"\n", b"NaN", b"null", b"1e999", b"\\ud800", b'"x": 1, ', b"\xff", b"-1"]
            )
        )
        raw[i : i + data.draw(st.integers(0, 3))] = insert
    try:
        kb = load_ckf_bytes(bytes(raw), name, lenient=lenient)
    except CKFError as exc:
        assert exc.problems and all(isinstance(p.line, int) and p.field for p in exc.problems)
    else:
        assert len(kb) >= 1
        assert kb.embeddings is None or kb.embeddings.shape[0] == len(kb)

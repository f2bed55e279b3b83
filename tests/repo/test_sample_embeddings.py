"""The sample's shipped MiniLM embeddings (docs/decisions/sample-ckf.md, docs/reference/ckf.md / §1.2).

Without the model: every fact of ``sample_ckf/knowledge_base.jsonl`` and every text item of each
bundled scenario carries a 384-float embedding of the declared model; ``embedding_digests.json``
records the sha256 of each embedded text and of its float32 vector, and they match the files (a text
edited without a rebuild fails here); the float text reads back to the float32 vectors bit for bit;
a prepared sample corpus and its scenario vectors are those vectors exactly.

With the real model (``-m model``): a few facts and a scenario's query and sub-queries, embedded
again, agree with the shipped vectors within 1e-5.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from crp_core.corpus.embedding import DIM, MODEL_ID
from crp_core.io.ckf import load_ckf
from crp_core.io.scenario import load_scenario
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
SAMPLE = ROOT / "sample_ckf"
_BIG = float(np.float32(1e30))  # hypothesis wants float32 bounds exactly representable
SCENARIOS = sorted([*SAMPLE.glob("scenarios/*.json"), *SAMPLE.glob("scenarios/workload/*.json")])


def _builder():
    spec = importlib.util.spec_from_file_location("sample_ckf_build_emb", SAMPLE / "_build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _vsha(v) -> str:
    return hashlib.sha256(np.asarray(v, dtype="<f4").tobytes()).hexdigest()


def _items(root: Path) -> dict[str, dict[str, tuple[str, list[float] | None]]]:
    """file -> item key -> (text, embedding) for the CKF and every bundled scenario under ``root``."""
    out: dict[str, dict[str, tuple[str, list[float] | None]]] = {}
    rows = [json.loads(line) for line in (root / "knowledge_base.jsonl").read_text(encoding="utf-8").splitlines()]
    out["knowledge_base.jsonl"] = {r["fact_id"]: (r["content"], r.get("embedding")) for r in rows}
    for p in sorted([*root.glob("scenarios/*.json"), *root.glob("scenarios/workload/*.json")]):
        doc = json.loads(p.read_text(encoding="utf-8"))
        q = doc["query"]
        items = {"query": (q["text"], q.get("embedding")) if isinstance(q, dict) else (q, None)}
        for i, sq in enumerate(doc["sub_queries"]):
            items[f"sub_queries[{i}]"] = (sq["text"], sq.get("embedding"))
        out[p.relative_to(root).as_posix()] = items
    return out


def stale_items(root: Path) -> list[str]:
    """Every item whose text or vector differs from what ``embedding_digests.json`` recorded, or that
    the record lacks (or that no longer exists): ``file: item (why)``."""
    digests = json.loads((root / "embedding_digests.json").read_text(encoding="utf-8"))
    assert digests["embedding_model"] == MODEL_ID
    recorded = digests["files"]
    found = _items(root)
    bad = [f"{f}: (not recorded)" for f in found if f not in recorded]
    bad += [f"{f}: (recorded, file gone)" for f in recorded if f not in found]
    for f, items in found.items():
        rec = recorded.get(f, {})
        bad += [f"{f}: {k} (recorded, item gone)" for k in rec if k not in items]
        for k, (text, vec) in items.items():
            r = rec.get(k)
            if r is None:
                bad.append(f"{f}: {k} (not recorded)")
            elif vec is None:
                bad.append(f"{f}: {k} (no embedding)")
            elif r["text"] != _sha(text):
                bad.append(f"{f}: {k} (text changed since the embeddings were built)")
            elif r["embedding"] != _vsha(vec):
                bad.append(f"{f}: {k} (embedding changed)")
    return bad


# ---- without the model ----------------------------------------------------------------------------
def test_every_fact_carries_an_embedding_of_the_declared_model():
    rows = [json.loads(line) for line in (SAMPLE / "knowledge_base.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 455
    assert all(r["embedding_model"] == MODEL_ID for r in rows)
    assert all(isinstance(r["embedding"], list) and len(r["embedding"]) == DIM for r in rows)
    kb = load_ckf(SAMPLE / "knowledge_base.jsonl")
    assert kb.embedding_model == MODEL_ID and kb.embeddings.shape == (455, DIM) and kb.embeddings.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(kb.embeddings.astype(np.float64), axis=1), 1.0, atol=1e-6)
    assert not kb.warnings


def test_every_bundled_scenario_text_item_carries_an_embedding_of_the_declared_model():
    assert len(SCENARIOS) == 12  # 4 scenarios + 8 workload scenarios
    for p in SCENARIOS:
        raw = json.loads(p.read_text(encoding="utf-8"))
        assert raw["embedding_model"] == MODEL_ID, p.name
        assert len(raw["query"]["embedding"]) == DIM, p.name
        assert all(len(sq["embedding"]) == DIM for sq in raw["sub_queries"]), p.name
        s = load_scenario(p, expected_model=MODEL_ID)
        assert s.embedding_model == MODEL_ID
        assert s.query_embedding is not None and all(sq.embedding is not None for sq in s.sub_queries)


def test_digests_match_every_text_and_vector():
    assert stale_items(SAMPLE) == []
    recorded = json.loads((SAMPLE / "embedding_digests.json").read_text(encoding="utf-8"))["files"]
    assert len(recorded["knowledge_base.jsonl"]) == 455 and len(recorded) == 13


def test_a_text_edited_without_a_rebuild_is_caught(tmp_path):
    root = tmp_path / "sample_ckf"
    shutil.copytree(SAMPLE, root)
    p = root / "scenarios" / "etcd_upgrade.json"
    doc = json.loads(p.read_text(encoding="utf-8"))
    doc["sub_queries"][1]["text"] += " for etcd v3.6"
    p.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    kb_path = root / "knowledge_base.jsonl"
    lines = kb_path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row["content"] = row["content"].replace("2380", "2381")
    lines[2] = json.dumps(row)
    kb_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert stale_items(root) == [
        f"knowledge_base.jsonl: {row['fact_id']} (text changed since the embeddings were built)",
        "scenarios/etcd_upgrade.json: sub_queries[1] (text changed since the embeddings were built)",
    ]
    # and the builder does not reuse the stale vectors: both groups would be embedded again
    mod = _builder()
    reuse = mod.committed_vectors(root)
    assert _sha(doc["sub_queries"][1]["text"]) not in reuse and _sha(row["content"]) not in reuse
    assert _sha(doc["sub_queries"][0]["text"]) in reuse


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.float32, st.integers(1, 64), elements=st.floats(-_BIG, _BIG, width=32, allow_nan=False, allow_infinity=False)
    )
)
def test_float_text_reads_back_bit_for_bit(v):
    text = _builder().floats_json(v)
    back = np.asarray(json.loads(text), dtype=np.float64).astype(np.float32)
    assert back.tobytes() == v.tobytes() or np.array_equal(back, v)  # -0.0 == 0.0 is the only allowed difference
    assert " " not in text and text.startswith("[") and text.endswith("]")


def test_prepared_corpus_and_scenario_vectors_are_the_shipped_vectors_exactly(tmp_path):
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus

    kb = load_ckf(SAMPLE / "knowledge_base.jsonl")
    corpus = prepare_corpus(kb, cache_dir=tmp_path)
    assert corpus.model_id == MODEL_ID
    assert np.array_equal(corpus.vectors, kb.embeddings)  # unit rows are not normalised a second time
    s = load_scenario(SAMPLE / "scenarios" / "etcd_upgrade.json")
    v = embed_scenario(s, corpus)  # no embedder is needed: every text item carries its vector
    assert np.array_equal(v.query, np.asarray(s.query_embedding, dtype=np.float32))
    assert np.array_equal(v.sub_queries, np.asarray([sq.embedding for sq in s.sub_queries], dtype=np.float32))
    assert not (tmp_path / "embeddings").exists()  # nothing was embedded, so nothing was cached


# ---- with the real model ---------------------------------------------------------------------------
@pytest.mark.model
@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_shipped_vectors_match_the_real_model(backend):
    from crp_core.corpus.embedding import MiniLMEmbedder

    kb = load_ckf(SAMPLE / "knowledge_base.jsonl")
    rows = [0, 3, 77, 250, 454]
    m = MiniLMEmbedder(backend=backend)
    got = m.encode([kb.facts[i].content for i in rows])
    assert m.backend == backend
    np.testing.assert_allclose(got, kb.embeddings[rows], atol=1e-5)
    s = load_scenario(SAMPLE / "scenarios" / "payments_api_migration.json")
    got = m.encode([s.query] + [sq.text for sq in s.sub_queries])
    want = np.asarray([s.query_embedding] + [sq.embedding for sq in s.sub_queries], dtype=np.float32)
    np.testing.assert_allclose(got, want, atol=1e-5)

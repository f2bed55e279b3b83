"""The command line's scan input (crp_core.analysis.scan_input): prepare_corpus's vectors bit for bit, no
index, a memory-mapped file used in place; the same scan as over a prepared corpus."""

from __future__ import annotations

import json
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.scan import scan_ckf
from crp_core.analysis.scan_input import ScanCorpus, scan_corpus, unit_vectors
from crp_core.config import CRPConfig
from crp_core.corpus import prepared
from crp_core.corpus.index import FactIndex
from crp_core.corpus.prepared import Corpus, prepare_corpus
from crp_core.errors import CKFError, ConfigError, EmbeddingModelMismatch
from crp_core.io.ckf import load_ckf
from crp_core.model import Fact, KnowledgeBase
from tests.support.scan_worlds import NOW, cluster_corpus


def _kb(vectors: np.ndarray, model: str | None = "m") -> KnowledgeBase:
    facts = tuple(Fact(f"F{i}", f"text {i}", line=i + 1) for i in range(vectors.shape[0]))
    return KnowledgeBase(facts=facts, embeddings=vectors, embedding_model=model)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    unit_share=st.sampled_from([0.0, 0.5, 1.0]),
    scale=st.sampled_from([1e-20, 1.0, 3.0, 1e30]),
    seed=st.integers(0, 2**16),
    rows=st.sampled_from([1, 3, 1000]),
)
def test_unit_vectors_are_prepare_corpus_vectors_bit_for_bit(n, unit_share, scale, seed, rows):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 6)) * scale
    unit = rng.random(n) < unit_share
    v[unit] /= np.linalg.norm(v[unit], axis=1, keepdims=True)
    kb = _kb(v.astype(np.float32))
    with mock.patch.object(prepared, "NORMALISE_ROWS", rows):
        got = unit_vectors(kb)
    want = Corpus.from_vectors(kb, kb.embeddings, "m").vectors
    assert got.dtype == np.float32 and not got.flags.writeable
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_unit_rows_are_used_in_place(tmp_path):
    v = np.random.default_rng(3).normal(size=(30, 5)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    d = tmp_path / "kb"
    d.mkdir()
    (d / "facts.jsonl").write_text(
        "".join(json.dumps({"fact_id": f"F{i}", "content": f"t {i}"}) + "\n" for i in range(30))
    )
    np.save(d / "embeddings.npy", v)
    kb = load_ckf(d)
    got = scan_corpus(kb, config=CRPConfig())
    assert isinstance(got, ScanCorpus)
    assert np.shares_memory(got.vectors, kb.embeddings)  # the mapped file itself, not a copy
    assert got.fingerprint == Corpus.from_vectors(kb, kb.embeddings, "m").fingerprint


def test_no_index_is_built_and_the_scan_is_the_same(tmp_path):
    config = CRPConfig()
    corpus = cluster_corpus(2, config=config)
    kb = corpus.kb
    kb = KnowledgeBase(facts=kb.facts, embeddings=np.asarray(corpus.vectors), embedding_model="test")
    builds = FactIndex.builds
    light = scan_corpus(kb, config=config, cache_dir=tmp_path)
    assert FactIndex.builds == builds and isinstance(light, ScanCorpus)
    full = prepare_corpus(kb, config=config, cache_dir=tmp_path)
    a, b = scan_ckf(light, config, NOW), scan_ckf(full, config, NOW)
    assert a.pairs and [(p.fact_a, p.fact_b, p.similarity, p.conflict, p.kept) for p in a.pairs] == [
        (p.fact_a, p.fact_b, p.similarity, p.conflict, p.kept) for p in b.pairs
    ]
    assert (a.n_facts, a.n_candidates, a.k) == (b.n_facts, b.n_candidates, b.k)


def test_bad_vectors_and_another_model_are_refused_as_prepare_corpus_refuses_them(tmp_path):
    v = np.ones((5, 3), dtype=np.float32)
    v[1] = 0.0
    v[4, 0] = np.inf
    with mock.patch.object(prepared, "NORMALISE_ROWS", 2), pytest.raises(CKFError) as err:
        unit_vectors(_kb(v))
    assert [(p.line, p.field) for p in err.value.problems] == [(2, "embedding"), (5, "embedding")]
    kb, config = _kb(np.eye(3, dtype=np.float32), "model-a"), CRPConfig(embedding_model="model-b")
    with pytest.raises((ConfigError, EmbeddingModelMismatch)) as want:
        prepare_corpus(kb, config=config, cache_dir=tmp_path)
    with pytest.raises(type(want.value)) as got:
        scan_corpus(kb, config=config, cache_dir=tmp_path)
    assert str(got.value) == str(want.value)

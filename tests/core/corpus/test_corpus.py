"""The prepared Corpus: prepare_corpus, persistence and reuse, with_statuses, scenario vectors."""

from __future__ import annotations

import numpy as np
import pytest

from crp_core.config import CRPConfig
from crp_core.corpus.embedding import MODEL_ID, word_token_estimate
from crp_core.corpus.index import FactIndex
from crp_core.corpus.prepared import Corpus, embed_scenario, prepare_corpus
from crp_core.errors import CKFError, EmbeddingModelMismatch, ScenarioError, ValidationError
from crp_core.model import Fact, KnowledgeBase, Scenario, SubQuery
from tests.support.embedders import HashingEmbedder

TOPICS = ["etcd port", "kubernetes pod", "postgres vacuum", "tls certificate", "dns resolver", "kafka topic"]


def texts(n):
    return [f"the {TOPICS[i % 6]} setting number {i} matters for cluster {i % 11}" for i in range(n)]


def kb_from(contents, statuses=None, embeddings=None, model=None):
    statuses = statuses or {}
    facts = tuple(Fact(f"f{i}", t, status=statuses.get(i, "ACTIVE"), line=i + 1) for i, t in enumerate(contents))
    return KnowledgeBase(facts, embeddings=embeddings, embedding_model=model)


def test_from_vectors_normalises_and_is_read_only():
    kb = kb_from(texts(30), {3: "DELETED", 4: "QUARANTINED", 5: "STALE"})
    x = np.random.default_rng(0).normal(size=(30, 16)) * 5
    c = Corpus.from_vectors(kb, x)
    np.testing.assert_allclose(np.linalg.norm(c.vectors, axis=1), 1.0, rtol=1e-6)
    assert c.vectors.dtype == np.float32 and c.model_id == "test" and c.dim == 16
    assert c.retrievable.tolist() == [i not in (3, 4) for i in range(30)]
    assert c.token_counts.tolist() == word_token_estimate(texts(30)).tolist()
    for a in (c.vectors, c.retrievable, c.token_counts):
        with pytest.raises(ValueError):
            a[0] = 0
    ids, sims = c.search(c.vectors[[3, 4, 5]], 3)
    assert not np.isin(ids, [3, 4]).any() and ids[2, 0] == 5


def test_zero_embedding_refused_with_line_and_field():
    x = np.ones((3, 4), np.float32)
    x[1] = 0
    with pytest.raises(CKFError) as ei:
        Corpus.from_vectors(kb_from(["a", "b", "c"]), x)
    (p,) = ei.value.problems
    assert p.line == 2 and p.field == "embedding" and p.fact_id == "f1"


def test_prepare_with_kb_embeddings_never_uses_the_embedder(tmp_path):
    x = np.random.default_rng(1).normal(size=(40, 24)).astype(np.float32)
    e = HashingEmbedder()
    c = prepare_corpus(kb_from(texts(40), embeddings=x, model="my-model"), embedder=e, cache_dir=tmp_path)
    assert e.encode_calls == 0 and c.model_id == "my-model"
    np.testing.assert_allclose(c.vectors, x / np.linalg.norm(x, axis=1, keepdims=True), atol=1e-6)
    c2 = prepare_corpus(kb_from(texts(40), embeddings=x), cache_dir=tmp_path)
    assert c2.model_id == "unknown"


def test_second_prepare_embeds_nothing_and_reuses_index_and_neighbours(tmp_path):
    kb = kb_from(texts(200), {7: "DELETED"})
    e1 = HashingEmbedder()
    seen = []
    c1 = prepare_corpus(kb, embedder=e1, cache_dir=tmp_path, progress=lambda d, t: seen.append((d, t)))
    assert e1.texts_encoded == 200 and c1.index.origin == "built" and c1.model_id == "test-hashing"
    assert seen[-1] == (200, 200)
    t1 = c1.neighbours(8)
    files = sorted(p.name for p in (tmp_path / "index").iterdir())
    assert any(f.endswith(".bin") for f in files) and any("-nbr-k8-" in f for f in files)
    builds = FactIndex.builds
    e2 = HashingEmbedder()
    c2 = prepare_corpus(kb, embedder=e2, cache_dir=tmp_path)
    assert e2.encode_calls == 0 and e2.texts_encoded == 0
    assert c2.index.origin == "loaded" and FactIndex.builds == builds
    assert np.array_equal(c2.vectors, c1.vectors)
    t2 = c2.neighbours(8)
    assert np.array_equal(t1.ids, t2.ids) and FactIndex.builds == builds
    # a changed CKF gets a new index
    c3 = prepare_corpus(kb_from(texts(201)), embedder=e2, cache_dir=tmp_path)
    assert c3.index.origin == "built" and e2.texts_encoded == 1


def test_every_persisted_cache_file_is_private_to_the_user(tmp_path):
    import stat

    kb = kb_from(texts(60))
    config = CRPConfig(graph_k=4)
    prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path, config=config).graph(config)
    files = sorted(p for p in (tmp_path / "index").iterdir())
    assert {p.suffix for p in files} == {".bin", ".json", ".npz"} and len(files) == 4
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}


def test_damaged_persisted_index_is_rebuilt(tmp_path):
    kb = kb_from(texts(50))
    prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path)
    (binf,) = [p for p in (tmp_path / "index").iterdir() if p.suffix == ".bin"]
    binf.write_bytes(b"\0" * 100)
    with pytest.warns(RuntimeWarning, match="rebuilding"):
        c = prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path)
    assert c.index.origin == "built"
    assert prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path).index.origin == "loaded"


def _graph_arrays(g):
    m = g.matrix
    return [(a.dtype, a.tolist()) for a in (m.indptr, m.indices, m.data)]


def test_similarity_graph_persists_beside_its_table_and_reads_back_equal(tmp_path, monkeypatch):
    from crp_core.corpus.graph import SimilarityGraph

    kb = kb_from(texts(120), {5: "DELETED"})
    config = CRPConfig(graph_k=6)
    g1 = prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path, config=config).graph(config)
    (gfile,) = [p for p in (tmp_path / "index").iterdir() if "-graph-k6-" in p.name]
    assert g1.n_edges > 0
    # a new corpus of the same CKF reads the graph: no neighbour table, no build
    built = []
    real = SimilarityGraph.build
    monkeypatch.setattr(SimilarityGraph, "build", classmethod(lambda cls, *a, **k: built.append(1) or real(*a, **k)))
    c2 = prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path, config=config)
    g2 = c2.graph(config)
    assert built == [] and _graph_arrays(g2) == _graph_arrays(g1)
    assert g2.retrievable.tolist() == g1.retrievable.tolist() and not g2.matrix.data.flags.writeable
    assert g2.hop_distances([0], 3).tolist() == g1.hop_distances([0], 3).tolist()
    # another edge minimum is another graph (another file)
    other = CRPConfig(graph_k=6, graph_edge_min=0.9)
    prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path, config=other).graph(other)
    assert built == [1] and len([p for p in (tmp_path / "index").iterdir() if "-graph-k6-" in p.name]) == 2
    # a damaged file is said and rebuilt to the same graph
    empty = {"indices": np.zeros(0, np.int64), "data": np.zeros(0, np.float32)}
    np.savez(gfile.open("wb"), indptr=np.zeros(3, np.int64), **empty)
    with pytest.warns(RuntimeWarning, match="similarity graph .* ignored .*shape mismatch.*rebuilding"):
        g3 = prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path, config=config).graph(config)
    assert built == [1, 1] and _graph_arrays(g3) == _graph_arrays(g1)


@pytest.mark.parametrize(
    ("indptr", "indices", "data", "why"),
    [
        ([0, 1, 2, 2], [1, 0], [0.9, 0.9], "dtype mismatch"),
        ([0, 2, 1, 2], [1, 0], [0.9, 0.9], "row pointers out of order"),
        ([0, 1, 2, 2], [1, 3], [0.9, 0.9], "entries out of range"),
        ([0, 1, 2, 2], [1, 0], [0.9, float("nan")], "entries out of range"),
        ([0, 1, 2, 3], [1, 0], [0.9, 0.9], "row pointers out of order"),
    ],
)
def test_a_persisted_graph_that_is_not_a_graph_of_that_size_is_refused(tmp_path, indptr, indices, data, why):
    from crp_core.corpus.graph import SimilarityGraph

    path = tmp_path / "g.npz"
    data_dtype = np.float64 if why == "dtype mismatch" else np.float32
    arrays = {"indices": np.array(indices, np.int64), "data": np.array(data, data_dtype)}
    np.savez(path, indptr=np.array(indptr, np.int64), **arrays)
    with pytest.raises(ValueError, match=why):
        SimilarityGraph.load(path, np.ones(3, bool), CRPConfig())


def test_minilm_model_id_counts_tokens_with_the_tokenizer(tmp_path):
    x = np.random.default_rng(2).normal(size=(2, 384)).astype(np.float32)
    kb = kb_from(["hello world", "etcd listens on 2379 (clients)"], embeddings=x, model=MODEL_ID)
    c = prepare_corpus(kb, cache_dir=tmp_path)
    from transformers import AutoTokenizer

    from crp_core.corpus.embedding import minilm_model_path

    tok = AutoTokenizer.from_pretrained(minilm_model_path())
    assert c.token_counts.tolist() == [
        len(tok(t, add_special_tokens=False)["input_ids"]) for t in ["hello world", "etcd listens on 2379 (clients)"]
    ]
    # a warm load reads the persisted counts: no tokenizer, no model
    from crp_core.corpus.embedding import MiniLMEmbedder

    m = MiniLMEmbedder()
    again = prepare_corpus(kb, embedder=m, cache_dir=tmp_path)
    assert m.tokenizer_load_count == 0 and m.load_count == 0
    assert again.token_counts.tolist() == c.token_counts.tolist()
    (tfile,) = (tmp_path / "tokens").iterdir()
    tfile.write_bytes(b"garbage")
    with pytest.warns(RuntimeWarning, match="recounting"):
        third = prepare_corpus(kb, embedder=m, cache_dir=tmp_path)
    assert third.token_counts.tolist() == c.token_counts.tolist() and m.tokenizer_load_count == 1
    other = prepare_corpus(
        kb_from(["hello world", "a b c d e f g h i j"], embeddings=x, model="other"), cache_dir=tmp_path
    )
    assert other.token_counts.tolist() == [3, 13]  # ceil(2 * 1.3) = 3, ceil(10 * 1.3) = 13


def test_with_statuses_shares_vectors_and_index():
    kb = kb_from(texts(60))
    c = Corpus.from_vectors(kb, HashingEmbedder().encode(texts(60)))
    c2 = c.with_statuses({"f0": "DELETED", "f1": "QUARANTINED", "f2": "STALE"})
    assert c2.vectors is c.vectors and c2.index is c.index and c2.token_counts is c.token_counts
    assert c2.retrievable[:4].tolist() == [False, False, True, True]
    assert c.retrievable[:2].tolist() == [True, True]
    assert c2.kb.facts[2].status == "STALE"
    ids, _ = c2.search(c.vectors[:2], 5)
    assert not np.isin(ids, [0, 1]).any()
    assert (c.search(c.vectors[:1], 1)[0] == 0).all()
    g2 = c2.graph()
    assert g2.neighbours(0)[0].size == 0 and g2.neighbours(1)[0].size == 0
    back = c2.with_statuses({"f0": "ACTIVE", "f1": "ACTIVE"})
    assert back.retrievable[:2].tolist() == [True, True]
    with pytest.raises(ValidationError, match="unknown status 'GONE'"):
        c.with_statuses({"f0": "GONE"})
    with pytest.raises(ValidationError, match="no fact with id 'nope'"):
        c.with_statuses({"nope": "DELETED"})


def test_search_pads_when_k_exceeds_retrievable():
    c = Corpus.from_vectors(kb_from(texts(4), {0: "DELETED"}), HashingEmbedder().encode(texts(4)))
    ids, sims = c.search(c.vectors[:1], 5)
    assert sorted(ids[0, :3].tolist()) == [1, 2, 3] and (ids[0, 3:] == -1).all()


def test_index_for_other_hnsw_params_builds_a_second_index(tmp_path):
    c = prepare_corpus(kb_from(texts(80)), embedder=HashingEmbedder(), cache_dir=tmp_path)
    other = c.index_for(CRPConfig(hnsw_m=8))
    assert other is not c.index and other.m == 8
    assert c.index_for(CRPConfig(hnsw_m=8)) is other
    assert c.index_for(CRPConfig(hnsw_ef_search=50)) is c.index


# ---- scenario vectors ----------------------------------------------------------------------------------
def _corpus(model="test-hashing", dim=64):
    return Corpus.from_vectors(kb_from(texts(20)), HashingEmbedder(model, dim).encode(texts(20)), model_id=model)


def _scenario(q_emb=None, sq_embs=(None, None), model=None):
    return Scenario(
        query="etcd port setting",
        query_embedding=q_emb,
        sub_queries=(
            SubQuery("a", "postgres vacuum", embedding=sq_embs[0]),
            SubQuery("b", "dns resolver", embedding=sq_embs[1]),
        ),
        embedding_model=model,
    )


def test_scenario_with_all_embeddings_uses_no_model():
    c = _corpus()
    e = HashingEmbedder()
    v = [tuple(float(t) for t in np.arange(64) == i) for i in range(3)]
    sv = embed_scenario(_scenario(v[0], (v[1], tuple(2 * t for t in v[2]))), c, embedder=e)
    assert e.encode_calls == 0
    assert sv.query[0] == 1.0 and sv.sub_queries[1, 2] == 1.0  # normalised: 2 -> 1
    assert sv.ids == ("a", "b") and sv.model_id == "test-hashing"
    np.testing.assert_array_equal(sv.for_ids(["b", "a"]), sv.sub_queries[[1, 0]])
    assert sv.for_ids([]).shape == (0, 64)
    with pytest.raises(KeyError, match="'zz'"):
        sv.for_ids(["zz"])


def test_scenario_embedded_with_the_corpus_model():
    c = _corpus()
    e = HashingEmbedder()
    sv = embed_scenario(_scenario(), c, embedder=e)
    assert e.texts_encoded == 3
    ref = HashingEmbedder().encode(["etcd port setting", "postgres vacuum", "dns resolver"])
    np.testing.assert_allclose(np.vstack([sv.query, sv.sub_queries]), ref, atol=1e-6)


def test_scenario_partial_embeddings_embed_only_the_missing_ones():
    c = _corpus()
    e = HashingEmbedder()
    given = tuple(float(t) for t in np.arange(64) == 5)
    sv = embed_scenario(_scenario(q_emb=given), c, embedder=e)
    assert e.texts_encoded == 2 and sv.query[5] == 1.0


def test_scenario_model_mismatch_is_refused():
    c = _corpus()
    with pytest.raises(EmbeddingModelMismatch, match="'other-model'.*'test-hashing'"):
        embed_scenario(_scenario(model="other-model"), c, embedder=HashingEmbedder())
    with pytest.raises(EmbeddingModelMismatch, match="active model is 'different'"):
        embed_scenario(_scenario(), c, embedder=HashingEmbedder("different"))


def test_scenario_missing_embeddings_without_a_model_is_a_clear_error():
    c = _corpus()
    given = tuple(1.0 for _ in range(64))
    with pytest.raises(ScenarioError) as ei:
        embed_scenario(_scenario(q_emb=given), c)
    fields = [p.field for p in ei.value.problems]
    assert fields == ["sub_queries[0].embedding", "sub_queries[1].embedding"]
    assert "give embeddings in the scenario" in str(ei.value)


def test_scenario_wrong_dimension_or_zero_vector():
    c = _corpus()
    with pytest.raises(ScenarioError, match="dimension 3, the CKF's vectors have 64"):
        embed_scenario(_scenario(q_emb=(1.0, 0.0, 0.0)), c, embedder=HashingEmbedder())
    with pytest.raises(ScenarioError, match="all zeros"):
        embed_scenario(_scenario(q_emb=(0.0,) * 64), c, embedder=HashingEmbedder())


def test_a_cache_folder_that_cannot_be_looked_into_is_rebuilt_not_a_traceback(tmp_path, monkeypatch):
    """A cache folder this user may not enter (``$CRP_CACHE_DIR`` / ``~/.cache`` of another user): every probe
    of a cache file fails with EACCES. The corpus is built as without a cache; what could not be kept warns."""
    import os
    import warnings

    config = CRPConfig()
    kb = kb_from(texts(60))
    fresh = prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=tmp_path / "open", config=config)
    locked = str(tmp_path / "locked")
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        if os.fspath(path).startswith(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        c = prepare_corpus(kb, embedder=HashingEmbedder(), cache_dir=locked, config=config)
        graph = c.graph(config)
    assert c.token_counts.tolist() == fresh.token_counts.tolist()
    assert np.array_equal(c.vectors, fresh.vectors) and graph.n_edges == fresh.graph(config).n_edges

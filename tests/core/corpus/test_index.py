"""HNSW fact index (SPEC-009 §3.2): recall, exclusion of DELETED/QUARANTINED, persistence."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crp_core.corpus.index as index_mod
from crp_core.config import CRPConfig
from crp_core.corpus.index import FactIndex, vectors_fingerprint
from crp_core.support.digest import content_digest_bytes


def clustered(n, d=384, clusters=40, spread=0.06, seed=0):
    """Unit vectors around random cluster centres (a realistic embedding-like spread)."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(clusters, d))
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    x = c[rng.integers(0, clusters, n)] + rng.normal(size=(n, d)) * spread
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def brute_topk(vectors, q, k, allowed=None):
    sims = q @ vectors.T
    if allowed is not None:
        sims[:, ~allowed] = -np.inf
    return np.argsort(-sims, axis=1, kind="stable")[:, :k]


@pytest.fixture(scope="module")
def data():
    x = clustered(600)
    return x, FactIndex.build(x, CRPConfig())


def recall(got, want):
    return np.mean([len(set(g) & set(w)) / len(w) for g, w in zip(got, want)])


def test_recall_at_10_against_brute_force(data):
    x, idx = data
    rng = np.random.default_rng(1)
    q = x[rng.choice(len(x), 100, replace=False)] + rng.normal(size=(100, x.shape[1])).astype(np.float32) * 0.03
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    ids, sims = idx.query(q, 10, ef_search=100)
    assert recall(ids, brute_topk(x, q, 10)) >= 0.99
    # similarities are the exact cosines, rows sorted descending
    np.testing.assert_allclose(sims, np.einsum("qkd,qd->qk", x[ids], q), atol=1e-6)
    assert np.all(np.diff(sims, axis=1) <= 0)
    assert ids.dtype == np.int64 and sims.dtype == np.float32


def test_excluded_fact_never_returned_even_when_nearest(data):
    x, idx = data
    allowed = np.ones(len(x), dtype=bool)
    banned = np.arange(0, 600, 7)
    allowed[banned] = False
    ids, sims = idx.query(x[banned], 10, allowed, ef_search=100)  # each query IS a banned fact
    assert not np.isin(ids, banned).any()
    assert (ids >= 0).all()  # still k results
    assert recall(ids, brute_topk(x, x[banned], 10, allowed)) >= 0.99
    unmasked, _ = idx.query(x[banned], 1)
    assert np.array_equal(unmasked[:, 0], banned)  # without the mask they are their own nearest


def test_many_excluded_still_k_results_masked_path(monkeypatch):
    monkeypatch.setattr(index_mod, "BRUTE_FORCE_MAX_ALLOWED", 10)  # force the HNSW masked path
    x = clustered(1500, d=64, clusters=30, seed=3)
    idx = FactIndex.build(x, CRPConfig())
    rng = np.random.default_rng(4)
    allowed = rng.random(len(x)) < 0.25  # 75 % excluded
    q = x[:50]
    ids, sims = idx.query(q, 20, allowed, ef_search=100)
    assert (ids >= 0).all() and allowed[ids].all()
    assert recall(ids, brute_topk(x, q, 20, allowed)) >= 0.95


def test_alternating_masks_and_save_carries_no_marks(tmp_path, monkeypatch):
    monkeypatch.setattr(index_mod, "BRUTE_FORCE_MAX_ALLOWED", 10)  # force the HNSW path
    x = clustered(400, d=32, clusters=10, seed=5)
    idx = FactIndex.build(x, CRPConfig())
    a = np.ones(400, dtype=bool)
    a[:200] = False
    b = np.ones(400, dtype=bool)
    b[200:] = False
    for mask in (a, b, None, a, b):
        q = x[:5] if mask is None or mask is b else x[200:205]
        ids, _ = idx.query(q, 3, mask)
        if mask is not None:
            assert mask[ids].all()
    # queried with b (first half allowed) for x[:5]: each is its own nearest
    ids, _ = idx.query(x[:5], 1, b)
    assert ids[:, 0].tolist() == [0, 1, 2, 3, 4]
    ids, _ = idx.query(x[:5], 1, a)
    assert (ids >= 200).all()
    idx.save(tmp_path / "m.bin")  # saved right after a masked query
    got = FactIndex.load(tmp_path / "m.bin", x, CRPConfig())
    ids, _ = got.query(x[:5], 1)
    assert ids[:, 0].tolist() == [0, 1, 2, 3, 4]  # no deletion marks in the file
    ids, _ = idx.query(x[:5], 1)
    assert ids[:, 0].tolist() == [0, 1, 2, 3, 4]  # and none left in memory for an unmasked query


def test_k_larger_than_allowed_pads(data):
    x, idx = data
    allowed = np.zeros(len(x), dtype=bool)
    allowed[[5, 9, 11]] = True
    ids, sims = idx.query(x[:2], 5, allowed)
    assert ids.shape == (2, 5)
    assert sorted(ids[0, :3]) == [5, 9, 11]
    assert (ids[:, 3:] == -1).all() and np.isnan(sims[:, 3:]).all()
    none, nsims = idx.query(x[:2], 5, np.zeros(len(x), dtype=bool))
    assert (none == -1).all() and np.isnan(nsims).all()


def test_k_larger_than_index():
    x = clustered(5, d=16, clusters=2)
    idx = FactIndex.build(x, CRPConfig())
    ids, sims = idx.query(x[:1], 8)
    assert sorted(ids[0, :5]) == [0, 1, 2, 3, 4] and (ids[0, 5:] == -1).all()
    assert ids[0, 0] == 0 and sims[0, 0] == pytest.approx(1.0, abs=1e-6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mask_seed=st.integers(0, 10_000), k=st.integers(1, 40), frac=st.floats(0.0, 1.0))
def test_query_invariants(data, mask_seed, k, frac):
    x, idx = data
    rng = np.random.default_rng(mask_seed)
    allowed = rng.random(len(x)) >= frac
    ids, sims = idx.query(x[rng.integers(0, len(x), 4)], k, allowed)
    n_ok = min(k, int(allowed.sum()))
    assert ids.shape == (4, k)
    assert (ids[:, :n_ok] >= 0).all() and (ids[:, n_ok:] == -1).all()
    assert allowed[ids[:, :n_ok]].all()
    for row in ids[:, :n_ok]:
        assert len(set(row.tolist())) == n_ok


def test_build_is_deterministic(data):
    x, idx = data
    again = FactIndex.build(x, CRPConfig())
    q = x[::13]
    assert np.array_equal(idx.query(q, 10)[0], again.query(q, 10)[0])


def test_save_load_roundtrip(tmp_path, data):
    x, idx = data
    path = tmp_path / "i.bin"
    idx.save(path)
    builds = FactIndex.builds
    got = FactIndex.load(path, x, CRPConfig())
    assert got is not None and got.origin == "loaded" and FactIndex.builds == builds
    assert np.array_equal(got.query(x[:20], 10)[0], idx.query(x[:20], 10)[0])
    assert got.fingerprint == vectors_fingerprint(x)


def test_load_refuses_other_vectors_or_params_or_damage(tmp_path, data):
    x, idx = data
    path = tmp_path / "i.bin"
    idx.save(path)
    other = x.copy()
    other[0] = other[1]
    with pytest.warns(RuntimeWarning, match="does not match"):
        assert FactIndex.load(path, other, CRPConfig()) is None
    with pytest.warns(RuntimeWarning):
        assert FactIndex.load(path, x, CRPConfig(hnsw_m=8)) is None
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.warns(RuntimeWarning):
        assert FactIndex.load(path, x, CRPConfig()) is None
    assert FactIndex.load(tmp_path / "missing.bin", x, CRPConfig()) is None


def test_empty_index_and_bad_input():
    idx = FactIndex.build(np.zeros((0, 8), np.float32), CRPConfig())
    ids, sims = idx.query(np.ones((2, 8), np.float32), 3)
    assert (ids == -1).all()
    x = clustered(20, d=8, clusters=2)
    idx = FactIndex.build(x, CRPConfig())
    with pytest.raises(ValueError, match="query vectors"):
        idx.query(np.ones((1, 9), np.float32), 3)
    with pytest.raises(ValueError, match="allowed mask"):
        idx.query(x[:1], 3, np.ones(5, bool))


def test_vectors_are_read_only(data):
    _, idx = data
    with pytest.raises(ValueError):
        idx.vectors[0, 0] = 1.0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8), st.sampled_from([3, 16, 384]), st.booleans())
def test_unit_rows_are_those_of_linalg_norm_bit_for_bit(seed, nq, d, strided):
    """The index's query normalisation is ``q / np.linalg.norm(q, axis=1)`` to the last bit (a zero row
    is kept as it is, a NaN row too), for contiguous and strided rows."""
    rng = np.random.default_rng(seed)
    q = (rng.normal(size=(nq, 2 * d)) * rng.choice([1e-3, 1.0, 50.0], size=(nq, 1))).astype(np.float32)
    q = q[:, ::2] if strided else np.ascontiguousarray(q[:, :d])
    q[0] = 0.0
    if nq > 2:
        q[2, 0] = np.nan
    norms = np.linalg.norm(q, axis=1, keepdims=True)
    want = q / np.where(norms > 0, norms, 1.0)
    got = index_mod.unit_rows(q)
    assert got.dtype == np.float32 and got.flags.c_contiguous
    assert got.tobytes() == want.tobytes()
    qf = np.asfortranarray(q)  # a column-major input still gives C-ordered rows (its sums round as numpy's do)
    norms_f = np.linalg.norm(qf, axis=1, keepdims=True)
    fortran = index_mod.unit_rows(qf)
    assert fortran.flags.c_contiguous and fortran.tobytes() == (qf / np.where(norms_f > 0, norms_f, 1.0)).tobytes()


def test_memo_key_follows_the_marks_not_the_mask_object(monkeypatch):
    """The search memo is keyed by the deletion marks in force: an equal mask in another array is a
    memo hit, another mask is not, and after each query the key is the digest of the marks."""
    monkeypatch.setattr(index_mod, "BRUTE_FORCE_MAX_ALLOWED", 0)
    x = clustered(300, d=16, clusters=6, seed=3)
    index = FactIndex.build(x, CRPConfig(hnsw_m=8, hnsw_ef_construction=40))
    q = x[:2] + 0.01
    mask = np.ones(300, dtype=bool)
    mask[::7] = False
    index.query_ids(q, 5, mask)
    assert index.marks_digest == content_digest_bytes(np.packbits(~mask).tobytes())
    assert index.kept_searches == 2
    index.query_ids(q, 5, mask.copy())  # same marks: both rows kept, nothing searched again
    assert index.kept_searches == 2
    other = mask.copy()
    other[1] = False
    index.query_ids(q, 5, other)
    assert index.kept_searches == 4
    index.query_ids(q, 5, None)  # no marks: its own key
    marked = index.marked
    assert index.marks_digest == b"" and marked is not None and not marked.any() and index.kept_searches == 6
    index.query_ids(q, 5, mask)
    assert index.kept_searches == 6  # the first mask's searches are still kept


def test_a_chunked_build_is_the_same_graph_and_reports_its_progress(tmp_path, data):
    """Insertion stays one thread in row order, so the chunks change no link: the saved files are equal
    byte for byte, and ``progress`` hears 0 then every chunk's end."""
    x, idx = data
    seen: list[tuple[int, int]] = []
    chunked = FactIndex.build(x, CRPConfig(), progress=lambda d, t: seen.append((d, t)), chunk=250)
    assert seen == [(0, 600), (250, 600), (500, 600), (600, 600)]
    idx.save(tmp_path / "whole.bin")
    chunked.save(tmp_path / "chunked.bin")
    assert (tmp_path / "whole.bin").read_bytes() == (tmp_path / "chunked.bin").read_bytes()
    one = FactIndex.build(x[:5], CRPConfig(), chunk=1)
    one.save(tmp_path / "one.bin")
    FactIndex.build(x[:5], CRPConfig()).save(tmp_path / "five.bin")
    assert (tmp_path / "one.bin").read_bytes() == (tmp_path / "five.bin").read_bytes()

"""Coverage Set and its read-only snapshot (SPEC-024 §2.1, SPEC-027 §1.5)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.errors import SnapshotMutationError
from crp_core.factors.coverage import CoverageEntry, CoverageSet, CoverageSnapshot
from tests.support.factories import make_scenario


def two_entries():
    return CoverageSet([CoverageEntry("a", "A", [1, 0, 0], 0.9, 1), CoverageEntry("b", None, [0, 1, 0], 0.4, 2)])


def test_set_is_immutable_and_extend_returns_a_new_set():
    cs = two_entries()
    assert cs.ids == ("a", "b") and cs.embeddings.shape == (2, 3) and cs.depth_weights.tolist() == [0.9, 0.4]
    bigger = cs.extend([CoverageEntry("c", None, [0, 0, 1], 0.7)])
    assert bigger.ids == ("a", "b", "c") and cs.ids == ("a", "b")
    with pytest.raises(AttributeError):
        cs.x = 1  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        cs.embeddings[0, 0] = 5.0
    with pytest.raises(ValueError):
        cs.extend([CoverageEntry("d", None, [1, 0], 0.5)])  # wrong dimension


def test_empty_set_keeps_its_dimension():
    cs = CoverageSet(dim=4)
    assert len(cs) == 0 and cs.embeddings.shape == (0, 4) and not cs


def test_from_scenario_one_entry_per_addressed_sub_query():
    scen = make_scenario(
        [1, 0, 0],
        sub_queries=[("s1", [0, 1, 0]), ("s2", [0, 0, 1]), ("s3", [1, 1, 0])],
        addressed=[("s2", 0.7), ("s1", 0.15)],
    )
    vecs = np.array([[0, 1, 0], [0, 0, 1], [1, 1, 0]], dtype=np.float32)
    cs = CoverageSet.from_scenario(scen, vecs, ("s1", "s2", "s3"))
    assert cs.ids == ("s2", "s1") and cs.depth_weights.tolist() == pytest.approx([0.7, 0.15])
    assert cs.embeddings[0].tolist() == [0, 0, 1]


@pytest.mark.parametrize(
    "attempt",
    [
        lambda s: setattr(s, "x", 1),
        lambda s: s.append(CoverageEntry("z", None, [1, 0, 0], 0.5)),
        lambda s: s.extend([]),
        lambda s: s.insert(0, None),
        lambda s: s.remove(s[0]),
        lambda s: s.pop(),
        lambda s: s.clear(),
        lambda s: s.__setitem__(0, None),
        lambda s: s.__delitem__(0),
        lambda s: s.embeddings.__setitem__((0, 0), 2.0),
        lambda s: s.depth_weights.__setitem__(0, 2.0),
        lambda s: s.embeddings.fill(0),
        lambda s: np.add(s.embeddings, 1, out=s.embeddings),
        lambda s: np.copyto(s.embeddings, 0),
        lambda s: s.embeddings.setflags(write=True),
        lambda s: setattr(s[0], "depth_weight", 1.0),
        lambda s: s[0].embedding.__setitem__(0, 3.0),
    ],
    ids=[
        "setattr",
        "append",
        "extend",
        "insert",
        "remove",
        "pop",
        "clear",
        "setitem",
        "delitem",
        "array-write",
        "weights-write",
        "fill",
        "ufunc-out",
        "copyto",
        "setflags",
        "entry-setattr",
        "entry-array-write",
    ],
)
def test_every_snapshot_mutation_raises(attempt):
    snap = two_entries().snapshot()
    with pytest.raises(SnapshotMutationError):
        attempt(snap)
    assert snap.embeddings[0].tolist() == [1, 0, 0] and snap.depth_weights.tolist() == [0.9, 0.4]


def test_snapshot_iadd_raises():
    snap = two_entries().snapshot()
    emb = snap.embeddings
    with pytest.raises(SnapshotMutationError):
        emb += 1
    with pytest.raises(SnapshotMutationError):
        snap += [1]  # type: ignore[operator]


def test_snapshot_reads_and_computes_freely():
    cs = two_entries()
    snap = CoverageSnapshot(cs)
    assert snap.ids == cs.ids and len(snap) == 2 and snap.coverage_set is cs
    sims = snap.embeddings @ np.array([1.0, 0.0, 0.0])
    sims[0] = 9.0  # a computed result is an ordinary array
    assert type(sims) is np.ndarray
    local = snap.coverage_set.extend([CoverageEntry("c", None, [0, 0, 1], 0.7)])
    assert local.ids == ("a", "b", "c") and snap.ids == ("a", "b")
    copy = snap.embeddings.copy()
    copy[0, 0] = 3.0
    assert snap.embeddings[0, 0] == 1.0


@settings(max_examples=40, deadline=None)
@given(
    n_subs=st.integers(0, 6),
    picks=st.lists(st.tuples(st.integers(0, 7), st.sampled_from([0.0, 0.25, 0.5, 1.0])), max_size=8),
)
def test_from_scenario_builds_the_set_the_constructor_builds(n_subs: int, picks: list[tuple[int, float]]) -> None:
    rng = np.random.default_rng(n_subs)
    vecs = rng.normal(size=(n_subs, 5)).astype(np.float32)
    ids = [f"s{j}" for j in range(n_subs)]
    addressed = list({f"s{j}": (f"s{j}", w) for j, w in picks}.values())  # unknown ids (j >= n_subs) skipped
    scenario = make_scenario(np.ones(5), sub_queries=list(zip(ids, vecs)), addressed=addressed)
    got = CoverageSet.from_scenario(scenario, vecs, ids, dim=5)
    pos = {sid: i for i, sid in enumerate(ids)}
    want = CoverageSet(
        [
            CoverageEntry(sq.id, sq.label, vecs[pos[sq.id]], a.depth_weight, a.window)
            for sq, a in scenario.coverage_entries
            if sq.id in pos
        ],
        dim=5,
    )
    assert got.ids == want.ids and got.dim == want.dim == 5
    assert got.embeddings.dtype == np.float32 and np.array_equal(got.embeddings, want.embeddings)
    assert got.embeddings.shape == want.embeddings.shape and not got.embeddings.flags.writeable
    assert np.array_equal(got.depth_weights, want.depth_weights) and not got.depth_weights.flags.writeable
    for a, b in zip(got, want, strict=True):
        assert (a.sub_query_id, a.label, a.depth_weight, a.window) == (
            b.sub_query_id,
            b.label,
            b.depth_weight,
            b.window,
        )
        assert a.embedding.dtype == np.float32 and a.embedding.shape == (5,) and not a.embedding.flags.writeable
        assert np.array_equal(a.embedding, b.embedding)
        assert type(a.depth_weight) is float and type(a.window) is int

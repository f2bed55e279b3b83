"""partition_residual_for_fanout (SPEC-027 §1.4, docs/reference/pipeline.md §5): invariants and exact cases."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.stages.branches import branch_fact_budget
from crp_core.stages.fanout import round_robin_partitions
from crp_core.stages.partitions import (
    RULE_KMEANS,
    RULE_ONE_EACH,
    RULE_SINGLE,
    fanout_active,
    partition_residual_for_fanout,
    partition_rule,
)
from tests.support.paths import REPO_ROOT

CFG = CRPConfig()
ROOT = REPO_ROOT


def _vectors(n: int, distinct: int, dim: int, seed: int) -> np.ndarray:
    """n rows drawn from ``distinct`` random points (duplicates make k-means leave clusters empty)."""
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(max(distinct, 1), dim))
    return points[rng.integers(0, max(distinct, 1), size=n)]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(0, 40),
    width=st.integers(1, 8),
    distinct=st.integers(1, 12),
    dim=st.integers(2, 6),
    seed=st.integers(0, 10_000),
)
def test_partitions_disjoint_covering_nonempty_ordered_deterministic(n, width, distinct, dim, seed):
    ids = tuple(f"sq{i}" for i in range(n))
    vecs = _vectors(n, distinct, dim, seed)
    parts = partition_residual_for_fanout(ids, vecs, width, CFG)
    flat = [s for p in parts for s in p]
    assert sorted(flat) == sorted(ids)  # covering
    assert len(flat) == len(set(flat))  # disjoint
    assert all(len(p) > 0 for p in parts)  # no empty partition
    assert len(parts) == (min(width, n) if n else 0)
    pos = {s: i for i, s in enumerate(ids)}
    for p in parts:  # ResidualSet order inside a partition
        assert [pos[s] for s in p] == sorted(pos[s] for s in p)
    firsts = [pos[p[0]] for p in parts]
    assert firsts == sorted(firsts)  # partitions ordered by their first sub-query
    assert partition_residual_for_fanout(ids, vecs.copy(), width, CFG) == parts  # deterministic


def test_one_sub_query_per_partition_when_residual_fits():
    ids = ("a", "b", "c")
    parts = partition_residual_for_fanout(ids, np.eye(3), 3, CFG)
    assert parts == (("a",), ("b",), ("c",))
    assert partition_residual_for_fanout(ids, np.eye(3), 8, CFG) == (("a",), ("b",), ("c",))
    assert partition_rule(3, 3) == RULE_ONE_EACH


def test_kmeans_groups_similar_sub_queries():
    # two tight topics interleaved in ResidualSet order: a0 b0 a1 b1 a2
    e = np.eye(4)
    vecs = np.stack([e[0], e[1], e[0] + 0.1 * e[2], e[1] + 0.1 * e[3], e[0] + 0.1 * e[3]])
    parts = partition_residual_for_fanout(("a0", "b0", "a1", "b1", "a2"), vecs, 2, CFG)
    assert parts == (("a0", "a1", "a2"), ("b0", "b1"))
    assert partition_rule(5, 2) == RULE_KMEANS


def test_kmeans_uses_normalised_embeddings():
    # same directions, very different norms: clustering must follow direction only
    e = np.eye(3)
    vecs = np.stack([e[0], 50 * e[1], 0.01 * e[0], 7 * e[1]])
    parts = partition_residual_for_fanout(("a", "b", "c", "d"), vecs, 2, CFG)
    assert parts == (("a", "c"), ("b", "d"))


def test_identical_points_are_split_deterministically():
    # k-means finds one distinct cluster; the largest partition gives up its last sub-query, twice:
    # [s0..s4] -> [s0..s3],[s4] -> [s0,s1,s2],[s3],[s4]
    vecs = np.ones((5, 3))
    parts = partition_residual_for_fanout(tuple(f"s{i}" for i in range(5)), vecs, 3, CFG)
    assert parts == (("s0", "s1", "s2"), ("s3",), ("s4",))


def test_width_one_and_empty_residual():
    assert partition_residual_for_fanout((), np.zeros((0, 3)), 3, CFG) == ()
    assert partition_residual_for_fanout(("a", "b"), np.eye(2), 1, CFG) == (("a", "b"),)
    assert partition_rule(2, 1) == RULE_SINGLE
    assert not fanout_active(1, 5)
    assert not fanout_active(0, 5)
    assert not fanout_active(3, 0)
    assert fanout_active(2, 1)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="expected 3 sub-query embeddings"):
        partition_residual_for_fanout(("a", "b", "c"), np.eye(2), 2, CFG)
    with pytest.raises(ValueError, match="duplicate sub-query id"):
        partition_residual_for_fanout(("a", "a"), np.eye(2), 2, CFG)


def test_round_robin_and_budget():
    assert round_robin_partitions(("q0", "q1", "q2", "q3", "q4"), 2) == (("q0", "q2", "q4"), ("q1", "q3"))
    assert round_robin_partitions(("q0",), 3) == (("q0",),)
    # max(3, envelope_fact_budget // branches): 20 // 3 = 6; 20 // 8 = 2 -> 3
    assert branch_fact_budget(CFG, 3) == 6
    assert branch_fact_budget(CFG, 8) == 3
    assert branch_fact_budget(CFG.replace(envelope_fact_budget=6), 2) == 3


def test_partitions_persist_in_the_cache_and_a_damaged_file_is_recomputed(tmp_path):
    """Labels kept under <cache>/partitions/ equal the computed ones; a file that is not plausible
    labels (truncated, another length, labels >= k) is ignored and written again."""
    import numpy as np

    from crp_core.config import CRPConfig
    from crp_core.stages import fanout
    from crp_core.stages import partitions as fanout_partitions

    rng = np.random.default_rng(7)
    x = rng.standard_normal((9, 6))
    ids = [f"sq{i}" for i in range(9)]
    plain = fanout.partition_residual_for_fanout(ids, x, 3, CRPConfig())
    kept = fanout.partition_residual_for_fanout(ids, x, 3, CRPConfig(), cache_dir=tmp_path)
    files = list((tmp_path / "partitions").glob("kmeans-*.npy"))
    assert kept == plain and len(files) == 1
    assert fanout.partition_residual_for_fanout(ids, x, 3, CRPConfig(), cache_dir=tmp_path) == plain
    for bad in (b"not an npy file", None):
        fanout_partitions._KNOWN.clear()  # a later process: only the damaged file is left
        if bad is None:
            np.save(files[0], np.full(9, 5, dtype=np.int64))  # labels outside [0, k)
        else:
            files[0].write_bytes(bad)
        assert fanout.partition_residual_for_fanout(ids, x, 3, CRPConfig(), cache_dir=tmp_path) == plain
        assert int(np.load(files[0]).max()) < 3  # written again with the real labels
    other = fanout.partition_residual_for_fanout(ids, x, 3, CRPConfig(kmeans_seed=1), cache_dir=tmp_path)
    assert len(list((tmp_path / "partitions").glob("kmeans-*.npy"))) == 2  # another seed: another key
    assert sorted(sum(other, ())) == sorted(ids)


def test_the_seed_table_is_exactly_what_kmeans_gives_for_the_bundled_scenarios():
    """crp_core/data/kmeans_seeds.json holds, for every bundled scenario at every k-means width the
    Fan-out simulator offers (default config and the scenario's own), scikit-learn's labels: computed
    again here from the shipped embeddings, the table must match entry for entry (a scenario edit,
    a new scikit-learn or a changed key fails here: rebuild with ``python sample_ckf/_build.py``)."""
    import importlib.util

    from crp_core.stages.partitions import SEED_FILE

    spec = importlib.util.spec_from_file_location("sample_build", ROOT / "sample_ckf" / "_build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    shipped = json.loads(SEED_FILE.read_text(encoding="utf-8"))
    expected = build.kmeans_seed_table()
    assert len(expected) >= 20  # 4 + 4 fanning-out scenarios, widths 2 .. |ResidualSet| - 1
    assert shipped["entries"] == expected


def test_seeded_labels_are_used_and_a_damaged_seed_table_falls_back_to_kmeans(tmp_path, monkeypatch):
    import numpy as np

    from crp_core.config import CRPConfig
    from crp_core.stages import partitions

    rng = np.random.default_rng(11)
    x = rng.standard_normal((6, 5))
    ids = [f"sq{i}" for i in range(6)]
    plain = partitions.partition_residual_for_fanout(ids, x, 2, CRPConfig())
    entries = partitions.kmeans_seed_entries(x, [2, 3, 6, 9], CRPConfig())
    assert len(entries) == 2  # widths 2 and 3 are k-means; 6 and 9 give one sub-query each
    # a seed table whose labels differ from k-means' is what the partitions follow (it is trusted) ...
    key = next(k for k, v in entries.items() if max(v) == 1)
    seed_file = tmp_path / "seeds.json"
    seed_file.write_text(json.dumps({"entries": {key: [0, 0, 0, 1, 1, 1]}}), encoding="utf-8")
    monkeypatch.setattr(partitions, "SEED_FILE", seed_file)
    partitions._seed_table.cache_clear()
    try:
        assert partitions.partition_residual_for_fanout(ids, x, 2, CRPConfig()) == (
            ("sq0", "sq1", "sq2"),
            ("sq3", "sq4", "sq5"),
        )
        assert not partitions.needs_kmeans(x, 2, CRPConfig(), tmp_path / "cache")
        assert partitions.needs_kmeans(x, 3, CRPConfig(), tmp_path / "cache")  # not seeded
        # ... while an implausible entry (another length, a label >= k) or a damaged file is ignored
        for bad in ({"entries": {key: [0, 1]}}, {"entries": {key: [0, 0, 0, 1, 1, 2]}}, "not json {"):
            seed_file.write_text(bad if isinstance(bad, str) else json.dumps(bad), encoding="utf-8")
            partitions._seed_table.cache_clear()
            assert partitions.partition_residual_for_fanout(ids, x, 2, CRPConfig()) == plain
    finally:
        partitions._seed_table.cache_clear()

"""The centroid-block units of the pair search cover every pair the local scan keeps (SPEC-027 §2.2;
the argument is in crp_core/engines/blocking.py), and the engine switch without Ray."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.scan import exact_pairs
from crp_core.cli import main
from crp_core.engines import embed_kb, scan_with_engine
from crp_core.engines.blocking import blocked_pairs, merge_pairs, plan_blocks, run_in_process, unit_pairs
from crp_core.errors import ConfigError
from crp_core.io.ckf import load_ckf
from tests.support.paths import REPO_ROOT


def _unit(a):
    a = np.asarray(a, dtype=np.float32)
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


def _brute(v, thr):
    i, j = np.triu_indices(v.shape[0], k=1)
    dots = np.einsum("ij,ij->i", v[i], v[j])
    keep = dots > thr
    return np.stack([i[keep], j[keep]], axis=1).astype(np.int64)


@pytest.fixture(scope="module")
def synth_vectors(synth10k):
    return _unit(load_ckf(synth10k).embeddings)


@pytest.mark.parametrize("thr,unit_counts", [(0.85, (1, 3, 17)), (0.6, (4,))])
def test_blocked_search_equals_the_local_search_on_the_10k_ckf(synth_vectors, thr, unit_counts):
    ref = exact_pairs(synth_vectors, thr)
    for units in unit_counts:
        got = blocked_pairs(synth_vectors, thr, n_units=units)
        np.testing.assert_array_equal(got.pairs, ref.pairs)
    assert ref.pairs.shape[0] > 500  # a test that can fail: many pairs above the threshold


def test_every_pair_is_computed_in_the_unit_of_its_lower_home_block(synth_vectors):
    """The coverage argument itself: a pair (x, y) above the threshold is a raw candidate of the unit
    holding block min(home x, home y) (not merely somewhere)."""
    v, thr = synth_vectors[:2000], 0.8
    m = v.shape[0]
    plan = plan_blocks(v, thr)
    units = plan.units(5)
    assert len(units) == 5 and units[0][0] == 0 and units[-1][1] == plan.n_blocks
    assert all(a[1] == b[0] for a, b in zip(units[:-1], units[1:]))  # a partition of the blocks
    truth = _brute(v, thr)
    assert truth.shape[0] > 50
    low = np.minimum(plan.blocks.home[truth[:, 0]], plan.blocks.home[truth[:, 1]])
    for g0, g1 in units:
        raw = np.sort(unit_pairs(plan, g0, g1)[0], axis=1)
        mine = truth[(low >= g0) & (low < g1)]
        assert np.isin(mine[:, 0] * m + mine[:, 1], raw[:, 0] * m + raw[:, 1]).all(), (g0, g1)


@st.composite
def _clouds(draw):
    n = draw(st.integers(2, 160))
    d = draw(st.integers(2, 12))
    k = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**31 - 1))
    spread = draw(st.sampled_from([0.05, 0.3, 1.0, 5.0]))
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, d))
    v = centres[rng.integers(0, k, size=n)] + spread * rng.normal(size=(n, d))
    if draw(st.booleans()):  # exact duplicates and antipodes
        v[: n // 4] = v[0]
        v[n // 4 : n // 3] = -v[0]
    return _unit(v + 1e-9)


@settings(max_examples=60, deadline=None)
@given(v=_clouds(), thr=st.sampled_from([-0.5, 0.0, 0.5, 0.85, 0.99, 0.9999]), units=st.integers(1, 9))
def test_blocked_search_is_exact_on_any_cloud(v, thr, units):
    got = blocked_pairs(v, thr, run_in_process, n_units=units)
    np.testing.assert_array_equal(got.pairs, _brute(v, thr))
    np.testing.assert_array_equal(got.pairs, exact_pairs(v, thr).pairs)


def test_merge_deduplicates_and_filters_by_the_exact_dot():
    v = _unit([[1, 0], [1, 0.01], [0, 1]])
    raw = np.array([[1, 0], [0, 1], [0, 2], [2, 0]], dtype=np.int64)
    got = merge_pairs(v, 0.9, [(raw, 7), (raw[:1], 3)])
    assert got.pairs.tolist() == [[0, 1]] and got.products == 10


def test_too_few_facts_have_no_pairs():
    assert blocked_pairs(_unit([[1.0, 0.0]]), 0.5).pairs.shape == (0, 2)


def test_unknown_engine_is_refused():
    with pytest.raises(ConfigError, match="unknown engine 'spark'"):
        scan_with_engine(None, None, None, engine="spark")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        embed_kb(load_ckf("sample_ckf/knowledge_base.jsonl"), engine="spark")


def test_without_ray_the_ray_engine_says_to_install_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    monkeypatch.setitem(sys.modules, "ray.data", None)
    for argv in (
        ["conflicts", "--ckf", "sample_ckf/knowledge_base.jsonl", "--engine", "ray"],
        ["embed", "--ckf", "sample_ckf/knowledge_base.jsonl", "--out", str(tmp_path / "o"), "--engine", "ray"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "pip install -e '.[ray]'" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_crp_core_imports_without_ray():
    code = (
        "import sys; sys.modules['ray'] = None; import crp_core, crp_core.engines, crp_core.engines.ray_engine, "
        "crp_core.cli; from crp_core.engines.ray_engine import ray_available; assert not ray_available()"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT, timeout=120)


def test_embed_out_must_be_a_folder_or_parquet(capsys, tmp_path):
    assert main(["embed", "--ckf", "sample_ckf/knowledge_base.jsonl", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "give a directory (no extension) or a .parquet file" in capsys.readouterr().err
    assert main(["embed", "--ckf", "sample_ckf/knowledge_base.jsonl", "--out", str(tmp_path / "no" / "x")]) == 2
    assert "does not exist" in capsys.readouterr().err

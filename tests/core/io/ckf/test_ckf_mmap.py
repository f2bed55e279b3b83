"""A directory CKF's embeddings.npy: read into memory by default (no file held open; a rewrite of the file
cannot pull the vectors away), memory-mapped on request (``map_vectors``: the scan of a huge CKF); bad
files keep their clear errors."""

from __future__ import annotations

import json
import mmap

import numpy as np
import pytest

from crp_core.errors import CKFError
from crp_core.io.ckf import load_ckf


def _dir_ckf(tmp_path, vectors: np.ndarray, n: int | None = None):
    d = tmp_path / "kb"
    d.mkdir()
    rows = [{"fact_id": f"F{i}", "content": f"fact number {i}"} for i in range(n if n is not None else len(vectors))]
    (d / "facts.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    np.save(d / "embeddings.npy", vectors)
    return d


def _mapped(a: np.ndarray) -> bool:
    """Does the array's chain of bases end in a memory mapping of a file?"""
    base = a
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return isinstance(base, mmap.mmap)


def test_by_default_the_vectors_are_read_and_the_file_can_be_rewritten(tmp_path):
    v = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
    d = _dir_ckf(tmp_path, v)
    kb = load_ckf(d)
    assert kb.embeddings is not None and not _mapped(kb.embeddings)
    np.save(d / "embeddings.npy", np.zeros((1, 1), dtype=np.float32))  # truncated in place, as np.save does
    np.testing.assert_array_equal(kb.embeddings, v)


def test_mapped_on_request_the_vectors_are_the_file_read_only(tmp_path):
    v = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
    kb = load_ckf(_dir_ckf(tmp_path, v), map_vectors=True)
    emb = kb.embeddings
    assert emb is not None
    assert type(emb) is np.ndarray  # a plain array (not np.memmap), viewing the mapping
    assert not emb.flags.owndata and not emb.flags.writeable
    assert _mapped(emb)
    np.testing.assert_array_equal(emb, v)
    assert emb.dtype == np.float32 and emb.flags.c_contiguous


def test_a_lenient_load_that_skips_a_row_copies_only_the_kept_rows(tmp_path):
    v = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    v[2] = 0.0  # no direction: that fact is skipped
    kb = load_ckf(_dir_ckf(tmp_path, v), lenient=True, map_vectors=True)
    assert len(kb) == 5 and kb.embeddings is not None
    assert not _mapped(kb.embeddings)
    np.testing.assert_array_equal(kb.embeddings, np.delete(v, 2, axis=0))


@pytest.mark.parametrize(
    ("damage", "field", "says"),
    [
        (lambda p: p.write_bytes(p.read_bytes()[:-40]), "embeddings.npy", "not a readable .npy array"),
        (lambda p: p.write_bytes(b"\x93NUMPY"), "embeddings.npy", "not a readable .npy array"),
        (lambda p: p.write_bytes(b""), "embeddings.npy", "not a .npy file"),
    ],
)
def test_a_damaged_file_is_refused_by_name(tmp_path, damage, field, says):
    d = _dir_ckf(tmp_path, np.ones((3, 4), dtype=np.float32))
    damage(d / "embeddings.npy")
    for mapped in (False, True):
        with pytest.raises(CKFError) as err:
            load_ckf(d, map_vectors=mapped)
        assert any(p.field == field and says in p.message for p in err.value.problems), err.value.problems


def test_the_size_limit_still_applies_to_the_vectors(tmp_path):
    d = _dir_ckf(tmp_path, np.ones((64, 64), dtype=np.float32))
    with pytest.raises(CKFError) as err:
        load_ckf(d, max_bytes=4096)
    (p,) = err.value.problems
    assert p.field == "embeddings.npy" and "ckf_max_bytes" in p.message and "--max-bytes" in p.message


def test_nan_and_zero_rows_are_refused_by_line_and_row(tmp_path):
    v = np.ones((4, 3), dtype=np.float32)
    v[1, 2] = np.nan
    v[3] = 0.0
    with pytest.raises(CKFError) as err:
        load_ckf(_dir_ckf(tmp_path, v))
    got = [(p.line, p.field, p.message) for p in err.value.problems]
    assert got == [
        (2, "embedding", "embeddings.npy row 1 holds NaN or infinite values"),
        (4, "embedding", "embeddings.npy row 3 is all zeros: an embedding needs a direction"),
    ]

"""The one atomic write keeps each kind of file's permissions: what the user writes (an export, a CKF)
is readable by others; what the cache keeps from the user's texts is the owner's only."""

from __future__ import annotations

import os
import stat
import warnings

import numpy as np
import pytest

from crp_core.corpus.embedding_cache import EmbeddingCache
from crp_core.support.files import (
    PRIVATE_FILE_MODE,
    SHARED_FILE_MODE,
    write_atomic,
    write_cache_file,
    write_text_atomic,
)


def _mode(path: os.PathLike[str] | str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_written_file_is_readable_by_others_and_a_private_one_is_not(tmp_path):
    write_text_atomic(tmp_path / "report.json", "{}")
    write_atomic(tmp_path / "cache.npy", b"x", mode=PRIVATE_FILE_MODE)
    assert _mode(tmp_path / "report.json") == SHARED_FILE_MODE == 0o644
    assert _mode(tmp_path / "cache.npy") == PRIVATE_FILE_MODE == 0o600
    assert (tmp_path / "cache.npy").read_bytes() == b"x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.npy", "report.json"]  # no temporary left


def test_embedding_cache_shards_are_the_owners_only(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.store("some-model", [b"k" * 32], np.ones((1, 4), dtype=np.float32))
    shards = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert shards and all(_mode(p) == 0o600 for p in shards), [(p.name, oct(_mode(p))) for p in shards]


def test_a_cache_file_is_private_its_folders_made_and_a_failure_only_warns(tmp_path):
    path = tmp_path / "a" / "b" / "table.npy"
    assert write_cache_file(path, lambda fh: np.save(fh, np.arange(3)), "neighbour table")
    assert stat.S_IMODE(os.stat(path).st_mode) == PRIVATE_FILE_MODE and np.load(path).tolist() == [0, 1, 2]
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")  # a folder that is a file: the write fails
    with pytest.warns(RuntimeWarning, match=r"could not persist the graph to .*file/g\.npz: "):
        assert not write_cache_file(blocker / "g.npz", b"data", "graph")
    assert blocker.read_bytes() == b"x"


def test_an_embedding_cache_that_cannot_be_written_warns_once_and_keeps_the_rows(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_bytes(b"x")  # the cache folder is a file: no shard can be written
    cache = EmbeddingCache(blocker)
    with pytest.warns(RuntimeWarning, match=r"embeddings are not cached \(.*cache: .*\); they are kept for this"):
        cache.store("m", [b"a" * 32], np.ones((1, 4), dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second store tries no write and says nothing again
        cache.store("m", [b"b" * 32], np.full((1, 4), 2.0, dtype=np.float32))
    vectors, found = cache.lookup("m", [b"a" * 32, b"b" * 32, b"c" * 32])
    assert found.tolist() == [True, True, False] and vectors[:, 0].tolist() == [1.0, 2.0, 0.0]
    assert len(cache.warnings) == 1 and blocker.read_bytes() == b"x"

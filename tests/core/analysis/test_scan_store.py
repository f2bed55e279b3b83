"""The whole-CKF scan's checked pairs persisted in the corpus's cache folder (crp_core.analysis.scan_store):
the same checked pairs back, one file per (facts, vectors, retrievable facts, check fields, detector), every
damaged file ignored with a warning."""

from __future__ import annotations

import dataclasses
import os
import stat
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from crp_core.analysis import scan_store
from crp_core.analysis.scan import arbitrate_checked, check_ckf
from crp_core.analysis.scan_store import checked_path, load_checked, save_checked
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact, KnowledgeBase
from tests.support.scan_worlds import cluster_corpus


def _cached(corpus: Corpus, folder: Path) -> Corpus:
    return dataclasses.replace(corpus, cache_dir=folder)


def _two_facts(folder: Path) -> Corpus:
    """Two near-identical vectors whose texts differ in one number: one conflicting pair, one diff."""
    kb = KnowledgeBase(
        facts=(Fact("a", "The etcd client port is 2379"), Fact("b", "The etcd client port is 4001 (TCP)"))
    )
    vecs = np.array([[1.0, 0.0], [0.99, 0.141]], dtype=np.float32)
    return _cached(Corpus.from_vectors(kb, vecs, "test"), folder)


def test_a_conflict_is_written_as_the_layout_says_and_read_back(tmp_path):
    corpus, config = _two_facts(tmp_path), CRPConfig()
    checked = check_ckf(corpus, config)
    path = save_checked(corpus, config, checked)
    assert path == checked_path(corpus, config) and path is not None and path.parent == tmp_path / "scans"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with np.load(path, allow_pickle=False) as z:
        assert z["pairs"].tolist() == [[0, 1]] and str(z["method"]) == "gram"
        assert z["rows"].tolist() == [[0, 1]] and z["learned"].tolist() == [False]
        assert z["patterns"].tolist() == [16]  # bit 4: NUMBER_CHANGED, the fifth of the sorted patterns
        assert z["diff_end"].tolist() == [1] and z["diff_pattern"].tolist() == [4]
        assert z["spans"].tolist() == [[24, 28, 24, 28]]  # "2379" and "4001" in their texts
        assert z["tokens_end"].tolist() == [[1, 2]] and z["token_end"].tolist() == [4, 8]
        assert z["token_bytes"].tobytes() == b"23794001"
    got = load_checked(corpus, config)
    assert got is not None and got.found == checked.found and got.found[0][2].patterns == ("NUMBER_CHANGED",)
    assert got.search.pairs.tolist() == [[0, 1]] and got.search.products == checked.search.products
    # the scan arbitrated from it says where its checked pairs came from; a scan of its own says nothing
    assert not checked.from_cache and got.from_cache
    now = datetime(2026, 11, 1, tzinfo=UTC)
    assert arbitrate_checked(got, corpus, config, now).from_cache
    assert not arbitrate_checked(checked, corpus, config, now).from_cache


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_checked_pairs_come_back_equal(tmp_path, seed):
    config = CRPConfig()
    corpus = _cached(cluster_corpus(seed, config=config), tmp_path)
    checked = check_ckf(corpus, config)
    assert checked.found
    save_checked(corpus, config, checked)
    got = load_checked(corpus, config)
    assert got is not None
    assert got.found == checked.found
    assert np.array_equal(got.search.pairs, checked.search.pairs)
    assert (got.search.method, got.search.products) == (checked.search.method, checked.search.products)
    assert (got.search_ms, got.check_ms) == (checked.search_ms, checked.check_ms)


def test_no_cache_folder_no_file(tmp_path):
    corpus = cluster_corpus(0)
    assert corpus.cache_dir is None
    checked = check_ckf(corpus, CRPConfig())
    assert save_checked(corpus, CRPConfig(), checked) is None and load_checked(corpus, CRPConfig()) is None


def test_the_file_is_named_by_what_the_check_reads(tmp_path):
    config = CRPConfig()
    corpus = _cached(cluster_corpus(0, config=config), tmp_path)
    base = checked_path(corpus, config)
    # a field the arbitration reads, not the check: the same checked pairs
    assert checked_path(corpus, config.replace(authority_tie_tolerance=0.2)) == base
    # a field the check reads; another detector; a fact no longer retrievable: another file
    assert checked_path(corpus, config.replace(contradiction_similarity=0.9)) != base
    with mock.patch.object(scan_store, "detector_identity", return_value="another detector"):
        assert checked_path(corpus, config) != base
    fid = next(f.fact_id for f in corpus.kb.facts if f.status == "ACTIVE")
    assert checked_path(corpus.with_statuses({fid: "QUARANTINED"}), config) != base
    # a status that keeps the fact retrievable: the same texts, vectors and retrievable facts
    stale = corpus.with_statuses({fid: "STALE"})
    assert stale.cache_dir == tmp_path and checked_path(stale, config) == base
    # another text
    facts = (dataclasses.replace(corpus.kb.facts[0], content="The default port is 1"), *corpus.kb.facts[1:])
    other = Corpus.from_vectors(KnowledgeBase(facts=facts), corpus.vectors, "test", config)
    assert checked_path(_cached(other, tmp_path), config) != base


def _rewrite(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    with np.load(path, allow_pickle=False) as z:
        arrays = dict(z.items())
    change(arrays)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


DAMAGE = {
    "an array missing": lambda z: z.pop("spans"),
    "another dtype": lambda z: z.update(rows=z["rows"].astype(np.float64)),
    "a row outside the CKF": lambda z: z["rows"].__setitem__((0, 1), 10**6),
    "a negative row": lambda z: z["pairs"].__setitem__((0, 0), -1),
    "a pair out of order": lambda z: z.update(pairs=z["pairs"][:, ::-1].copy()),
    "an unknown method": lambda z: z.update(method=np.array("faiss")),
    "an empty pattern set": lambda z: z["patterns"].__setitem__(0, 0),
    "an unknown pattern bit": lambda z: z["patterns"].__setitem__(0, 64),
    "an unknown diff pattern": lambda z: z["diff_pattern"].__setitem__(0, 9),
    "offsets going back": lambda z: z.update(diff_end=z["diff_end"][::-1].copy()),
    "a span past its text": lambda z: z["spans"].__setitem__((0, 3), 10**4),
    "a span ending before it starts": lambda z: z["spans"].__setitem__((0, 1), 0),
    "tokens past their bytes": lambda z: z["token_end"].__setitem__(-1, 10**6),
    "tokens not UTF-8": lambda z: z.update(token_bytes=np.full_like(z["token_bytes"], 0xFF)),
    "per-pair arrays of two lengths": lambda z: z.update(learned=np.zeros(0, dtype=bool)),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_file_is_ignored_with_a_warning(tmp_path, damage):
    config = CRPConfig()
    corpus = _cached(cluster_corpus(0, config=config), tmp_path)
    path = save_checked(corpus, config, check_ckf(corpus, config))
    assert path is not None
    _rewrite(path, DAMAGE[damage])
    with pytest.warns(RuntimeWarning, match="checked pairs in .* were ignored .*; scanning again"):
        assert load_checked(corpus, config) is None


@pytest.mark.parametrize("body", [b"", b"not a zip file", b"PK\x03\x04" + b"\x00" * 40])
def test_a_file_that_is_no_archive_is_ignored_with_a_warning(tmp_path, body):
    config = CRPConfig()
    corpus = _cached(cluster_corpus(0, config=config), tmp_path)
    path = checked_path(corpus, config)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(body)
    with pytest.warns(RuntimeWarning, match="were ignored"):
        assert load_checked(corpus, config) is None


def test_an_array_that_needs_pickle_is_refused(tmp_path):
    config = CRPConfig()
    corpus = _cached(cluster_corpus(0, config=config), tmp_path)
    path = save_checked(corpus, config, check_ckf(corpus, config))
    assert path is not None
    _rewrite(path, lambda z: z.update(method=np.array([{"x": 1}], dtype=object)))
    with zipfile.ZipFile(path) as zf, zf.open("method.npy") as fh:
        assert b"'descr': '|O'" in fh.read(128)  # an object array: readable only by unpickling
    with pytest.warns(RuntimeWarning, match="were ignored"):
        assert load_checked(corpus, config) is None


def test_a_folder_keeps_the_files_most_recently_written_or_read(tmp_path):
    """Ten older files of other CKFs (mtimes 1,000-10,000 s): a save keeps the new file and the seven newest of
    the others, and a file just read counts as new."""
    folder = tmp_path / "scans"
    folder.mkdir()
    old = [folder / f"checked-v1-{k:032x}.npz" for k in range(10)]
    for k, p in enumerate(old):
        p.write_bytes(b"x")
        os.utime(p, (1000.0 * (k + 1), 1000.0 * (k + 1)))
    other = folder / "notes.txt"  # not a checked-pair file: never removed
    other.write_text("kept")
    os.utime(other, (1.0, 1.0))
    corpus, config = _two_facts(tmp_path), CRPConfig()
    path = save_checked(corpus, config, check_ckf(corpus, config))
    assert path is not None and scan_store.KEPT_SCAN_FILES == 8
    assert sorted(folder.iterdir()) == sorted([path, other, *old[3:]])
    os.utime(path, (1.0, 1.0))  # the saved file grows old, then is read: it is the newest again
    assert load_checked(corpus, config) is not None
    kb = KnowledgeBase(facts=(Fact("a", "The etcd peer port is 2380"), Fact("b", "The etcd peer port is 7001")))
    again = _cached(Corpus.from_vectors(kb, corpus.vectors, "test"), tmp_path)  # another CKF
    second = save_checked(again, config, check_ckf(again, config))
    assert second is not None and second != path
    assert sorted(folder.iterdir()) == sorted([path, second, other, *old[4:]])

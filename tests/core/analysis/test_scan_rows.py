"""rows_scan: the whole-CKF scan restricted to the pairs of some facts equals the whole scan's pairs of those
facts (search, text check and arbitration), and the known-conflict lookup built on it feeds the guard exactly
what the whole scan would."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.known import RowChecks, SelectionKnownConflicts, known_conflicts
from crp_core.analysis.scan import exact_pairs, scan_ckf
from crp_core.analysis.scan_rows import rows_pairs, rows_scan
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact, KnowledgeBase
from crp_core.records import SOURCE_OPERATOR, SOURCE_SCAN
from crp_core.stages.known import guard_selection
from crp_core.triage import Decision, DecisionSet
from tests.support.scan_worlds import NOW, cluster_corpus


def touching(pairs: np.ndarray, rows: list[int]) -> np.ndarray:
    keep = np.isin(pairs[:, 0], rows) | np.isin(pairs[:, 1], rows)
    return pairs[keep]


# ---- exact cases --------------------------------------------------------------------------------
def _line_corpus() -> Corpus:
    """Four facts: 0-1 at cosine 0.995 (port 7301 / 7302), 1-2 at exactly 0.85 (not above the threshold),
    3 DELETED beside 0."""
    texts = [
        "The rows test queue port is 7301.",
        "The rows test queue port is 7302.",
        "The rows test queue port is 7303.",
        "The rows test queue port is 7304.",
    ]
    status = ["ACTIVE", "ACTIVE", "ACTIVE", "DELETED"]
    sources = ["official_documentation", "web", "internal", "internal"]
    facts = tuple(
        Fact(f"R{i}", t, source_type=s, status=st_, modified_at=datetime(2026, 5, 1, tzinfo=UTC), line=i + 1)
        for i, (t, s, st_) in enumerate(zip(texts, sources, status))
    )
    c = 0.85
    vectors = np.array(
        [
            [1.0, 0.0, 0.0],
            [0.995, np.sqrt(1 - 0.995**2), 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0],
        ],
        dtype=np.float32,
    )
    vectors[2] = [c * vectors[1, 0], c * vectors[1, 1], np.sqrt(1 - c * c)]  # cosine with row 1: c
    return Corpus.from_vectors(KnowledgeBase(facts=facts), vectors, "rows-test", CRPConfig())


def test_the_pairs_of_a_row_are_its_partners_above_the_threshold_among_the_retrievable():
    corpus = _line_corpus()
    ok = np.asarray(corpus.retrievable)
    assert ok.tolist() == [True, True, True, False]
    got = rows_pairs(corpus.vectors, [0], 0.85, ok)
    assert got.pairs.tolist() == [[0, 1]]  # row 3 is DELETED, row 2 is below
    assert got.method == "rows" and got.products == 4
    assert rows_pairs(corpus.vectors, [1, 0], 0.85, ok).pairs.tolist() == [[0, 1]]  # one pair, once
    assert rows_pairs(corpus.vectors, [3], 0.85, ok).pairs.shape == (0, 2)  # a non-retrievable row finds none
    assert rows_pairs(corpus.vectors, [7, -1], 0.85, ok).pairs.shape == (0, 2)  # rows outside the corpus
    assert rows_pairs(corpus.vectors, [2], 0.849, ok).pairs.tolist() == [[1, 2]]


def test_the_scan_of_a_row_arbitrates_its_pair_like_the_whole_scan():
    corpus = _line_corpus()
    mine = rows_scan(corpus, CRPConfig(), NOW, [0])
    assert [(p.fact_a, p.fact_b, p.kept, p.suppressed) for p in mine.pairs] == [("R0", "R1", ("R0",), "R1")]
    assert mine.pairs == scan_ckf(corpus, CRPConfig(), NOW).pairs
    assert mine.n_candidates == 1 and mine.method == "rows"
    assert rows_scan(corpus, CRPConfig(), NOW, [2]).pairs == ()


# ---- the invariant ------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    rows=st.lists(st.integers(0, 34), max_size=8),
    dismiss=st.booleans(),
)
def test_rows_scan_equals_the_whole_scans_pairs_of_those_rows(seed, rows, dismiss):
    corpus = cluster_corpus(seed)
    whole = scan_ckf(corpus, CRPConfig(), NOW)
    ds = None
    if dismiss and whole.pairs:
        p = whole.pairs[0]
        ds = DecisionSet.from_decisions([Decision.dismiss(p.fact_a, p.fact_b, operator="ann")])
        whole = scan_ckf(corpus, CRPConfig(), NOW, decisions=ds)
    ids = {corpus.kb.facts[r].fact_id for r in rows}
    mine = rows_scan(corpus, CRPConfig(), NOW, rows, decisions=ds)
    assert mine.pairs == tuple(p for p in whole.pairs if p.fact_a in ids or p.fact_b in ids)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 30))
def test_rows_pairs_equal_the_pruned_searchs_pairs_of_those_rows(seed, k):
    """On clusters large enough for the centroid-pruned search, the rows' pairs are its pairs that hold them."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(12, 32))
    v = centres[rng.integers(0, 12, size=600)] + rng.normal(scale=0.35, size=(600, 32))
    v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    whole = exact_pairs(v, 0.85, method="centroid-pruned")
    rows = sorted(set(rng.integers(0, 600, size=k).tolist()))
    got = rows_pairs(v, rows, 0.85, np.ones(600, dtype=bool))
    assert np.array_equal(got.pairs, touching(whole.pairs, rows))


# ---- the lookup for the guard -------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    rows=st.lists(st.integers(0, 34), min_size=1, max_size=10, unique=True),
    action=st.sampled_from(["flag", "pull_winner", "drop_loser"]),
)
def test_the_guard_finds_the_same_with_the_lookup_as_with_the_whole_scan(seed, rows, action):
    corpus = cluster_corpus(seed)
    ok = np.asarray(corpus.retrievable)
    rows = [r for r in rows if ok[r]]
    whole = known_conflicts(scan_ckf(corpus, CRPConfig(), NOW))
    lookup = SelectionKnownConflicts(corpus, CRPConfig(), NOW)
    want = guard_selection(corpus.kb, rows, ok, whole, action)
    assert guard_selection(corpus.kb, rows, ok, lookup, action) == want


def test_the_lookup_holds_the_operators_winner_and_shares_checked_pairs_between_times():
    corpus = _line_corpus()
    ds = DecisionSet.from_decisions([Decision.override("R0", "R1", winner="R1", operator="op")])
    checks = RowChecks(corpus, CRPConfig())
    scan_side = SelectionKnownConflicts(corpus, CRPConfig(), NOW, checks=checks)([1])
    assert [(k.winner, k.loser, k.source) for k in scan_side] == [("R0", "R1", SOURCE_SCAN)]
    decided = SelectionKnownConflicts(corpus, CRPConfig(), NOW, ds, checks=checks)([0])
    assert [(k.winner, k.loser, k.source) for k in decided] == [("R1", "R0", SOURCE_OPERATOR)]
    assert checks([1]) is checks([1]) and checks([0, 0]) is checks([0])  # one check per selection


def test_the_guard_does_not_call_the_lookup_when_it_is_off():
    corpus = _line_corpus()

    def refuse(rows: np.ndarray) -> tuple[()]:
        raise AssertionError("the lookup was called")

    got = guard_selection(corpus.kb, [1], np.asarray(corpus.retrievable), refuse, "off")
    assert got.rows == (1,) and got.flags == ()
    with pytest.raises(AssertionError, match="was called"):
        guard_selection(corpus.kb, [1], np.asarray(corpus.retrievable), refuse, "flag")

"""Per-run shortcuts of stages 2-6 (docs/decisions/pipeline.md, performance notes) give exactly what
the straightforward versions give: the memoised gated ranking, the stage-2 position lookup, the
NOTE-block token counts kept per corpus and counter, the compiled CSR row gather of the walk and the
recency warnings skipped for a knowledge base without unknown or future timestamps."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import crp_core.stages.graph_walk as graph_walk
from crp_core.config import CRPConfig
from crp_core.factors.recency import fact_attributes
from crp_core.records import CDRTable
from crp_core.stages.cdr import cdr_positions, cdr_ranking
from crp_core.stages.packing import cached_note_counter, cached_text_counter, note_counts, word_counter
from crp_core.stages.tie_groups import group_note, note_block
from crp_core.support.frozen import frozen_array
from tests.support.factories import fact, make_corpus


def table(rows: list[int], scores: list[float], gate: list[bool]) -> CDRTable:
    z = frozen_array(np.zeros(len(rows)))
    return CDRTable(
        idx=frozen_array(np.array(rows, dtype=np.int64)),
        relevance=z,
        residual_pull=z,
        effective_relevance=z,
        coverage_score=z,
        coverage_penalty=z,
        novelty=z,
        recency_factor=z,
        importance_weight=z,
        ngram_overlap=frozen_array(np.zeros(len(rows), dtype=np.int64)),
        ngram_penalty=z,
        cdr_score=frozen_array(np.array(scores, dtype=np.float64)),
        passed_gate=frozen_array(np.array(gate, dtype=bool)),
    )


def ref_ranking(t: CDRTable, mask: np.ndarray) -> list[int]:
    pos = [p for p in range(t.idx.size) if mask[p]]
    return sorted(pos, key=lambda p: (-t.cdr_score[p], int(t.idx[p])))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(0, 30))
def test_gated_ranking_and_positions_match_the_plain_versions(data, n):
    rows = data.draw(st.lists(st.integers(0, 200), min_size=n, max_size=n, unique=True))
    scores = data.draw(st.lists(st.sampled_from([0.1, 0.25, 0.5, 0.75]), min_size=n, max_size=n))
    gate = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    t = table(rows, scores, gate)
    first = cdr_ranking(t, t.passed_gate)
    assert first.tolist() == ref_ranking(t, t.passed_gate)
    assert cdr_ranking(t, t.passed_gate) is first and not first.flags.writeable  # once per table
    copy = np.array(gate, dtype=bool)  # another mask (not the table's own): computed, not cached
    assert cdr_ranking(t, copy).tolist() == first.tolist() and cdr_ranking(t, copy) is not first
    wanted = data.draw(st.lists(st.sampled_from(rows), max_size=8)) if rows else []
    assert cdr_positions(t, wanted).tolist() == [rows.index(r) for r in wanted]
    with pytest.raises(KeyError):
        cdr_positions(t, [*wanted, 999])


def test_note_counts_are_kept_per_corpus_and_counter():
    corpus = make_corpus([fact("a", "alpha beta"), fact("b", "gamma delta epsilon")], np.eye(2))
    calls: list[list[str]] = []

    def counting(texts):
        calls.append(list(texts))
        return word_counter(texts)

    ab, ba, a_alone = ((0, 1), ()), ((1, 0), ()), ((0,), (1,))
    notes = cached_note_counter(corpus, counting, ("words", "test"))
    expect = note_counts(corpus.kb, [ab, ba, a_alone], word_counter).tolist()
    # ceil(words * 1.3): the pair's NOTE 20 + 2 + 3 = 25 words -> 33 (either order); a's NOTE naming b
    # left out: the one-fact header 24 + 2 + the lead 12 + "b." 1 = 39 words -> 51
    assert expect == [33, 33, 51]
    assert notes([ab, ba, ab]).tolist() == [expect[0], expect[1], expect[0]]
    assert calls == [[note_block("alpha beta", "gamma delta epsilon"), note_block("gamma delta epsilon", "alpha beta")]]
    assert notes([ba]).tolist() == [expect[1]] and len(calls) == 1  # counted once per corpus
    # a group NOTE naming a fact left out is its own text
    assert notes([a_alone]).tolist() == [expect[2]] and calls[-1] == [group_note(["alpha beta"], ["b"])]
    # another counter key: its own counts (a tokenizer and the word estimate differ)
    other = cached_note_counter(corpus, lambda texts: np.full(len(texts), 7), ("tokenizer", "x"))
    assert other([ab]).tolist() == [7]
    assert notes([ab]).tolist() == [expect[0]]
    # another corpus (e.g. after operator decisions): its own cache
    again = cached_note_counter(corpus.with_statuses({"a": "ACTIVE"}), counting, ("words", "test"))
    assert again([ab]).tolist() == [expect[0]] and len(calls) == 3


def test_note_part_counts_are_kept_per_corpus_and_text():
    corpus = make_corpus([fact("a", "alpha beta")], np.eye(1))
    calls: list[list[str]] = []

    def counting(texts):
        calls.append(list(texts))
        return word_counter(texts)

    parts = cached_text_counter(corpus, counting, ("words", "test"))
    assert parts(["a b c", "d", "a b c"]).tolist() == [4, 2, 4] and calls == [["a b c", "d"]]
    assert parts(["d"]).tolist() == [2] and len(calls) == 1


@pytest.mark.parametrize("seed", range(6))
def test_the_second_layer_is_every_row_slice_of_x_in_order(seed):
    """``row_slices`` = the CSR rows of ``x`` (duplicates kept) as scipy's public row indexing gives them."""
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((40, 40)) < 0.2, rng.uniform(0.5, 1.0, (40, 40)), 0).astype(np.float32)
    m = sp.csr_matrix(dense)
    x = rng.integers(0, 40, 25)
    w, nb, counts = graph_walk.row_slices(m.indptr, m.indices, m.data, x)
    sub = m[x]
    assert nb.dtype == np.intp and w.dtype == np.float32
    assert np.array_equal(nb, sub.indices) and np.array_equal(w, sub.data)
    assert np.array_equal(counts, np.diff(sub.indptr))


def test_recency_warnings_only_where_the_kb_has_unknown_or_future_ages():
    from datetime import UTC, datetime

    now = datetime(2026, 6, 1, tzinfo=UTC)
    plain = make_corpus([fact("a", "x", modified_at="2026-05-01"), fact("b", "y", modified_at="2026-04-01")], np.eye(2))
    attrs = fact_attributes(plain.kb, now, CRPConfig())
    assert attrs.any_warning is False and attrs.recency(np.array([0, 1])).warnings == ()
    odd = make_corpus([fact("a", "x", modified_at="2026-05-01"), fact("b", "y", modified_at="2026-07-01")], np.eye(2))
    attrs = fact_attributes(odd.kb, now, CRPConfig())
    assert attrs.any_warning is True
    assert attrs.recency(np.array([0])).warnings == ()
    (w,) = attrs.recency(np.array([0, 1])).warnings
    assert "'b'" in w and "after now" in w


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n=st.integers(0, 30))
def test_table_positions_match_row_positions(data, n):
    from crp_core.factors.recency import row_positions
    from crp_core.stages.cdr import cdr_row_positions

    rows = data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))  # repeats and any order
    asked = data.draw(st.lists(st.integers(-2, 45), max_size=25))
    t = table(rows, [0.5] * n, [True] * n)
    want_pos, want_found = row_positions(t.idx, np.array(asked, dtype=np.int64))
    for _ in range(2):  # computed, then read back
        pos, found = cdr_row_positions(t, asked)
        assert found.tolist() == want_found.tolist()
        assert pos[found].tolist() == want_pos[want_found].tolist()

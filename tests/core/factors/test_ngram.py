"""N-gram output guard (SPEC-024 §5; docs/reference/pipeline.md §2)."""

from __future__ import annotations

import numpy as np

from crp_core.factors.ngram import build_blacklist, count_overlap, fact_overlaps, ngrams, tokens
from tests.support.factories import fact, make_kb


def test_tokens_are_lowercased_word_runs():
    assert tokens("etcd's Default-Client PORT: 2379!") == ["etcd", "s", "default", "client", "port", "2379"]


def test_six_grams_of_one_text():
    text = "a b c d e f g"  # 7 tokens -> 2 distinct 6-grams
    assert ngrams(text, 6) == frozenset({("a", "b", "c", "d", "e", "f"), ("b", "c", "d", "e", "f", "g")})
    assert ngrams("a b c d e", 6) == frozenset()  # fewer than 6 tokens


def test_blacklist_takes_each_prior_output_separately():
    # "e f" ends text 1 and "g h" starts text 2: no 6-gram may span the two texts
    bl = build_blacklist(["a b c d e f", "g h i j k l"], 6)
    assert bl == frozenset({("a", "b", "c", "d", "e", "f"), ("g", "h", "i", "j", "k", "l")})
    assert count_overlap("c d e f g h", bl, 6) == 0


def test_overlap_counts_distinct_ngrams():
    bl = build_blacklist(["the etcd default client port is 2379 by default"], 6)
    # fact 6-grams: "the etcd default client port is", "etcd default client port is 2379" -> both listed
    assert count_overlap("The etcd default client port is 2379.", bl, 6) == 2
    # a repeated 6-gram counts once
    assert count_overlap("a b c d e f a b c d e f", build_blacklist(["a b c d e f"], 6), 6) == 1
    assert count_overlap("anything at all here now ok", frozenset(), 6) == 0


def test_n_is_configurable():
    bl = build_blacklist(["x y z"], 2)
    assert count_overlap("w x y z", bl, 2) == 2  # (x, y), (y, z)


def test_fact_overlaps_vector_and_cache():
    kb = make_kb([fact("a", "a b c d e f g"), fact("b", "nothing in common with it"), fact("c", "b c d e f g")])
    bl = build_blacklist(["a b c d e f g h"], 6)
    got = fact_overlaps(kb, np.array([0, 1, 2]), bl, 6)
    assert got.tolist() == [2, 0, 1]
    assert fact_overlaps(kb, np.array([2, 0]), bl, 6).tolist() == [1, 2]  # cached path, new order
    assert fact_overlaps(kb, np.array([0]), frozenset(), 6).tolist() == [0]


def test_fact_overlaps_cache_is_per_blacklist():
    kb = make_kb([fact("a", "a b c d e f g"), fact("b", "u v w x y z")])
    first = fact_overlaps(kb, np.array([0, 1]), build_blacklist(["a b c d e f"], 6), 6)
    second = fact_overlaps(kb, np.array([0, 1]), build_blacklist(["u v w x y z"], 6), 6)
    assert first.tolist() == [1, 0] and second.tolist() == [0, 1]
    first[0] = 99  # the returned array is a copy: the cache is untouched
    assert fact_overlaps(kb, np.array([0]), build_blacklist(["a b c d e f"], 6), 6).tolist() == [1]

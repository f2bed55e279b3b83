"""Stage 6 packing (SPEC-003 §7.3-7.4, SPEC-025 §2.6, SPEC-027 §2.5; SPEC_NOTES §2.8)."""
from __future__ import annotations

import numpy as np

from crp_core.config import CRPConfig
from crp_core.stages.packing import NOTE_HEADER, PackItem, note_block, pack_envelope, word_counter
from factories import fact, make_corpus

IDS = ["a", "b", "c", "d", "e", "f", "g", "x", "y"]


def corpus_with(tokens):
    facts = [fact(i, f"content of {i}") for i in IDS]
    vecs = np.eye(len(IDS))
    return make_corpus(facts, vecs, token_counts=tokens)


def ids(env):
    return [p.fact_id for p in env.order]


def test_primacy_recency_sandwich_and_connector_placement():
    """Scores / best (1.0): a 1.0, b .9, c .85 critical; d .6, e .55 important; f .3, g .2 supporting.

    SPEC-003 §7.4: [critical[0], critical[-1], supporting..., important..., critical[1:-1]]
    = [a, c, f, g, d, e, b]; connector x bridges (f, c): placed right after c (c comes first).
    """
    corpus = corpus_with([5] * len(IDS))
    scores = dict(zip("abcdefg", [1.0, 0.9, 0.85, 0.6, 0.55, 0.3, 0.2]))
    items = [PackItem(IDS.index(k), "anchor", s) for k, s in scores.items()]
    items.append(PackItem(IDS.index("x"), "connector", 0.05, (IDS.index("f"), IDS.index("c"))))
    env = pack_envelope(corpus, items, config=CRPConfig(), count_tokens=word_counter)
    assert ids(env) == ["a", "c", "x", "f", "g", "d", "e", "b"]
    tiers = {p.fact_id: (p.tier, p.band) for p in env.order}
    assert tiers["a"] == ("critical", "primacy") and tiers["c"] == ("critical", "primacy")
    assert tiers["b"] == ("critical", "recency")
    assert tiers["d"] == ("important", "middle") and tiers["f"] == ("supporting", "middle")
    assert env.order[2].bridges_anchor == "c" and env.order[2].role == "connector"
    # every fact line: 5 content tokens + ceil(1 word * 1.3) = 2 for "[id]"
    assert env.tokens_used == 8 * 7
    assert env.text.splitlines()[0] == "[a] content of a"


def test_greedy_skips_what_does_not_fit_and_smaller_facts_enter():
    # budget 30: a (20+2) fits; b (20+2) does not; c (5+2) fits -> 29
    tokens = [20, 20, 5, 5, 5, 5, 5, 5, 5]
    corpus = corpus_with(tokens)
    items = [PackItem(0, "anchor", 0.9), PackItem(1, "anchor", 0.8), PackItem(2, "anchor", 0.7)]
    env = pack_envelope(corpus, items, config=CRPConfig(token_budget=30), count_tokens=word_counter)
    assert sorted(ids(env)) == ["a", "c"] and env.tokens_used == 29
    assert env.dropped_for_budget == ("b",)


def test_tied_pair_note_in_text_and_tokens():
    corpus = corpus_with([5] * len(IDS))
    items = [PackItem(0, "anchor", 0.9), PackItem(1, "anchor", 0.8), PackItem(2, "anchor", 0.85)]
    env = pack_envelope(corpus, items, tied_pairs=[(1, 2)], config=CRPConfig(), count_tokens=word_counter)
    # all three critical (.9/.9, .85/.9, .8/.9 >= .8): [crit[0], crit[-1], crit[1:-1]] = [a, b, c];
    # the NOTE lists b (placed first) then c, right after c's line
    block = note_block("content of b", "content of c")
    assert ids(env) == ["a", "b", "c"]
    assert env.notes == (block,)
    assert env.text.endswith("[c] content of c\n" + block)
    assert block == ("NOTE: The following two facts conflict and could not be automatically\n"
                     "arbitrated. Treat with caution and prefer the more specific:\n"
                     "  [content of b]\n  [content of c]")
    note_tokens = int(word_counter([block])[0])
    assert env.tokens_used == 3 * 7 + note_tokens


def test_budget_guard_drops_lowest_non_tied_fact_for_the_note():
    corpus = corpus_with([5] * len(IDS))
    items = [PackItem(0, "anchor", 0.9), PackItem(1, "anchor", 0.8), PackItem(2, "anchor", 0.85),
             PackItem(3, "anchor", 0.5)]
    note_tokens = int(word_counter([note_block("content of c", "content of b")])[0])
    budget = 4 * 7 + note_tokens - 1  # all four facts fit, the NOTE then overflows by one token
    env = pack_envelope(corpus, items, tied_pairs=[(1, 2)], config=CRPConfig(token_budget=budget),
                        count_tokens=word_counter)
    assert "d" not in ids(env) and "d" in env.dropped_for_budget  # lowest score not in the tie
    assert {"b", "c"} <= set(ids(env)) and len(env.notes) == 1
    assert env.tokens_used <= budget


def test_only_tied_facts_left_then_the_tie_goes():
    corpus = corpus_with([5] * len(IDS))
    items = [PackItem(1, "anchor", 0.8), PackItem(2, "anchor", 0.85)]
    env = pack_envelope(corpus, items, tied_pairs=[(1, 2)], config=CRPConfig(token_budget=15),
                        count_tokens=word_counter)
    assert ids(env) == ["c"] and env.notes == () and env.tokens_used == 7


def test_note_header_is_the_spec_text():
    assert NOTE_HEADER == ("NOTE: The following two facts conflict and could not be automatically\n"
                           "arbitrated. Treat with caution and prefer the more specific:")


def test_connector_whose_anchors_are_absent_goes_to_the_middle():
    corpus = corpus_with([5] * len(IDS))
    items = [PackItem(0, "anchor", 1.0), PackItem(1, "anchor", 0.95), PackItem(2, "anchor", 0.9),
             PackItem(7, "connector", 0.3, (5, 6))]
    env = pack_envelope(corpus, items, config=CRPConfig(), count_tokens=word_counter)
    assert ids(env) == ["a", "c", "x", "b"]
    assert env.order[2].bridges_anchor is None and env.order[2].band == "middle"


def test_empty_envelope():
    corpus = corpus_with([5] * len(IDS))
    env = pack_envelope(corpus, [], config=CRPConfig(), count_tokens=word_counter)
    assert env.order == () and env.text == "" and env.tokens_used == 0

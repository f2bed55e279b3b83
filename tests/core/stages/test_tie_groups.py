"""Tie groups through the pipeline on the SDK benchmark's shape (issue #32, docs/reference/pipeline.md §6):
500 facts in one cluster, 20 selected, all 190 pairs tied. One pair-NOTE per tied pair made the 20-fact
unit cost 190 NOTE blocks, beyond any budget, and the envelope was empty (``Facts-Used: 0/500``, no
warning); one NOTE per group packs it.

Token costs (``ceil(words * 1.3)``, tests/support/tie_worlds.py): a fact of 40 words costs 52, its line
``[f123] ...`` 54; in a NOTE, a header 20 words (26 tokens; the one-fact header 24 words, 32), a fact's
line 52, the left-out lead 12 words (16), an id ``f123,`` 2.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.pipeline import run_pipeline
from crp_core.report import run_report
from crp_core.stages.tie_groups import LEFT_OUT_LEAD, NOTE_START, note_header, tie_components
from tests.support.tie_worlds import tied_cluster


def by_cdr(r):
    """The selected facts' ids, highest CDR first (the fill order of anchors)."""
    kb = r.corpus.kb
    score = {kb.facts[int(i)].fact_id: float(s) for i, s in zip(r.cdr.idx, r.cdr.cdr_score)}
    chosen = [kb.facts[int(x)].fact_id for x in np.asarray(r.resolution.selected).tolist()]
    return sorted(chosen, key=lambda f: (-score[f], kb.index_of(f)))


def test_twenty_tied_anchors_fill_the_envelope_with_one_note():
    """Graph retrieval off: 20 anchors, 190 tied pairs, one group. Whole it needs 20 * 54 + 26 + 20 * 52 =
    2146 > 2048. Cut, with k members kept (equal costs: the first k in CDR order) the NOTE naming the
    20 - k others: k * 54 + 26 + k * 52 + 16 + 2 * (20 - k) = 104 k + 82 <= 2048 -> k = 18 (1954; 19 needs
    2058). The NOTE placed: 20 + 18 * 40 + 12 + 2 = 754 words -> 981 tokens (its parts reserved 982):
    tokens used 18 * 54 + 981 = 1953. Header: the 153 tied pairs among the 18 packed (the 37 with a fact
    left out are not counted)."""
    w = tied_cluster(graph_retrieval=False)
    r = run_pipeline(w.corpus, w.scenario, w.config)
    env = r.envelope
    ranked = by_cdr(r)
    assert len(ranked) == 20 and len(r.resolution.pairs) == 190 and all(p.tied for p in r.resolution.pairs)
    assert [p.fact_id for p in env.order] != [] and {p.fact_id for p in env.order} == set(ranked[:18])
    assert env.tokens_used == 1953 and r.headers["CRP-Context-Tokens-Used"] == "1953"
    assert r.headers["CRP-Context-Conflicts-Resolved"] == "153; unresolved=153"
    assert r.headers["CRP-Context-Facts-Used"].startswith("18/")
    (g,) = env.tie_groups
    assert g.members == tuple(ranked) and g.left_out == tuple(ranked[18:]) and g.left_out_reasons == ("budget",) * 2
    assert len(g.pairs) == 190 and len(g.packed_pairs) == 153 and g.note_tokens == 981
    assert env.notes == (g.note,) and env.text.endswith(g.note) and env.text.count(NOTE_START) == 1
    lines = g.note.splitlines()
    assert "\n".join(lines[:2]) == note_header(18) and lines[0].startswith("NOTE: The following 18 facts conflict")
    assert lines[-1] == f"{LEFT_OUT_LEAD} {ranked[18]}, {ranked[19]}."
    assert len(lines) == 2 + 18 + 1
    assert env.dropped_for_budget == tuple(ranked[18:]) and len(env.dropped_pairs) == 190 - 153
    assert env.empty_reason is None
    assert r.warnings == (
        f"tie group of 20 facts (190 tied pairs: {', '.join(ranked)}) cut (token_budget 2048): 18 packed with "
        f"one NOTE block covering 153 tied pairs, 2 left out and named in it: {ranked[18]}, {ranked[19]}",
    )
    rep = run_report(r)["envelope"]
    assert rep["empty_reason"] is None and len(rep["tie_groups"]) == 1
    assert rep["tie_groups"][0]["left_out"] == [{"fact_id": f, "reason": "budget"} for f in ranked[18:]]
    assert rep["tie_groups"][0]["note_tokens"] == 981 and len(rep["tie_groups"][0]["packed_pairs"]) == 153


def test_twenty_tied_facts_with_graph_retrieval_are_not_an_empty_envelope():
    """The defaults (graph retrieval on: 14 anchors and 6 connectors here, all tied): the envelope holds
    facts, its NOTE covers the pairs the header counts."""
    w = tied_cluster()
    r = run_pipeline(w.corpus, w.scenario, w.config)
    env = r.envelope
    assert len(r.resolution.pairs) == 190 and all(p.tied for p in r.resolution.pairs)
    assert env.order and len(env.notes) == 1 and env.empty_reason is None
    k = len(env.tie_groups[0].packed_pairs)
    assert k == len(env.order) * (len(env.order) - 1) // 2
    assert r.headers["CRP-Context-Conflicts-Resolved"] == f"{k}; unresolved={k}"
    assert r.headers["CRP-Context-Facts-Used"] == f"{len(env.order)}/500"


def test_an_envelope_left_empty_says_why_in_the_report_and_a_warning():
    """token_budget 100: one fact and a NOTE naming the 19 others need 54 + 32 + 52 + 16 + 19 * 2 = 192:
    nothing fits, and the reason is in the envelope, the report and the warnings."""
    w = tied_cluster(graph_retrieval=False, token_budget=100)
    r = run_pipeline(w.corpus, w.scenario, w.config)
    reason = (
        "the envelope is empty: none of the 20 selected facts fits token_budget 100 (the smallest needs 192 "
        "tokens, with its tie group's NOTE)"
    )
    assert r.envelope.order == () and r.envelope.empty_reason == reason
    assert r.headers["CRP-Context-Facts-Used"].startswith("0/")
    assert r.headers["CRP-Context-Conflicts-Resolved"] == "0"
    assert run_report(r)["envelope"]["empty_reason"] == reason
    ranked = by_cdr(r)
    assert r.warnings == (
        f"tie group of 20 facts (190 tied pairs: {', '.join(ranked)}) left out whole (token_budget 100): no fact "
        "of it fits with the group's NOTE block",
        reason,
    )


def test_an_empty_envelope_with_nothing_past_the_gate_has_a_reason_and_no_warning():
    w = tied_cluster(n=30, dim=16, cdr_min_relevance=1.0)
    r = run_pipeline(w.corpus, w.scenario, w.config)
    assert r.envelope.order == () and r.warnings == ()
    assert r.envelope.empty_reason == "the envelope is empty: none of the 30 candidates passed the relevance gate"


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 12), st.floats(0.0, 1.0))
def test_tie_components_of_distinct_ties_are_the_merged_components(seed, n, density):
    """The packer's ties are distinct pairs of distinct rows: a complete set of them is one group at once, and
    any set gives the components of the pair-by-pair merge (complete groups, two groups, sparse sets)."""
    import random

    rng = random.Random(seed)
    rows = rng.sample(range(50), n)
    every = [(a, b) if rng.random() < 0.5 else (b, a) for i, a in enumerate(rows) for b in rows[i + 1 :]]
    cases = [every, [p for p in every if rng.random() < density], every[: len(every) // 2]]
    if n >= 4:  # two complete groups
        left, right = rows[: n // 2], rows[n // 2 :]
        cases.append([(a, b) for i, a in enumerate(left) for b in left[i + 1 :]] + [(right[0], right[1])])
    for ties in cases:
        rng.shuffle(ties)
        assert tie_components(rows, ties, distinct=True) == tie_components(rows, ties)

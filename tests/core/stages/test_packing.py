"""Stage 6 packing (SPEC-003 §7.3-7.4, SPEC-025 §2.6, SPEC-027 §2.5; docs/reference/pipeline.md §6).

Unit costs below use ``word_counter`` (``ceil(words * 1.3)``): a fact line ``[<id>] content of <id>``
costs its ``token_counts`` entry plus ``ceil(1 * 1.3) = 2`` for ``[<id>]``.
"""

from __future__ import annotations

import numpy as np

from crp_core.config import CRPConfig
from crp_core.pipeline import run_pipeline
from crp_core.records import DroppedPair, TieGroup
from crp_core.report import run_report
from crp_core.stages.contradictions import resolve_contradictions, values_conflict
from crp_core.stages.near_duplicates import connector_near_duplicates
from crp_core.stages.packing import PackItem, pack_envelope, word_counter
from crp_core.stages.tie_groups import NOTE_HEADER, group_note, note_block, note_header
from tests.support.factories import fact, make_corpus, make_scenario

IDS = ["a", "b", "c", "d", "e", "f", "g", "w", "x", "y", "z"]
ROW = {k: i for i, k in enumerate(IDS)}
LINE = 7  # 5 content tokens + 2 for "[<id>]"


def corpus_with(tokens):
    facts = [fact(i, f"content of {i}") for i in IDS]
    return make_corpus(facts, np.eye(len(IDS)), token_counts=tokens)


def anchors(**scores):
    return [PackItem(ROW[k], "anchor", s) for k, s in scores.items()]


def connector(key, score, *bridged):
    return PackItem(ROW[key], "connector", score, tuple(ROW[b] for b in bridged))


def pack(items, ties=(), budget=2048, tokens=None):
    corpus = corpus_with(tokens or [5] * len(IDS))
    pairs = [(ROW[a], ROW[b]) for a, b in ties]
    return pack_envelope(
        corpus, items, tied_pairs=pairs, config=CRPConfig(token_budget=budget), count_tokens=word_counter
    )


def ids(env):
    return [p.fact_id for p in env.order]


def note_tokens(a, b):
    return int(word_counter([note_block(f"content of {a}", f"content of {b}")])[0])


# ---- the anchor sandwich (SPEC-003 §7.4, docs/reference/pipeline.md §6 step 1) ----------------------------------
def test_primacy_recency_sandwich_and_connector_placement():
    """CDR / best anchor CDR (1.0): a 1.0, b .9, c .85 critical; d .6, e .55 important; f .3, g .2 supporting.

    SPEC-003 §7.4: [critical[0], critical[-1], supporting..., important..., critical[1:-1]]
    = [a, c, f, g, d, e, b]; connector x bridges (f, c): its first bridged anchor in that order is c
    (position 2, primacy block) -> right after the primacy block, i.e. after c.
    """
    items = anchors(a=1.0, b=0.9, c=0.85, d=0.6, e=0.55, f=0.3, g=0.2) + [connector("x", 0.05, "f", "c")]
    env = pack(items)
    assert ids(env) == ["a", "c", "x", "f", "g", "d", "e", "b"]
    tiers = {p.fact_id: (p.tier, p.band) for p in env.order}
    assert tiers["a"] == ("critical", "primacy") and tiers["c"] == ("critical", "primacy")
    assert tiers["b"] == ("critical", "recency")
    assert tiers["d"] == ("important", "middle") and tiers["f"] == ("supporting", "middle")
    assert tiers["x"] == (None, "middle")  # a connector has no tier
    assert env.order[2].bridges_anchor == "c" and env.order[2].role == "connector"
    assert env.tokens_used == 8 * LINE
    assert env.text.splitlines()[0] == "[a] content of a"


def test_best_anchor_opens_and_connector_scores_never_enter_a_tier():
    """The ai_act_compliance shape: connector scores above 1, anchors below.

    Anchors a .575, b .491, c .434, d .401, e .39; ratios to a: 1, .854, .755, .697, .678 ->
    critical [a, b], important [c, d, e]. Sandwich [a, b] + [] + [c, d, e] + [] = [a, b, c, d, e].
    Connectors x 1.03 (bridges b, c) and y 1.004 (bridges a, d): first bridged anchors b (pos 2) and
    a (pos 1), both in the primacy block -> one spot after it, in score order x, y.
    """
    items = [connector("x", 1.03, "b", "c"), connector("y", 1.004, "a", "d")] + anchors(
        b=0.491, a=0.575, c=0.434, d=0.401, e=0.39
    )
    env = pack(items)
    assert ids(env) == ["a", "b", "x", "y", "c", "d", "e"]
    assert [p.tier for p in env.order] == ["critical", "critical", None, None, "important", "important", "important"]
    assert [p.band for p in env.order] == ["primacy", "primacy", "middle", "middle", "middle", "middle", "middle"]
    assert [p.bridges_anchor for p in env.order[2:4]] == ["b", "a"]


def test_connectors_after_their_anchor_and_before_the_recency_block():
    """Anchors a 1.0, b .95, c .9, d .85 (critical), e .6 (important), f .3 (supporting).

    critical by CDR [a, b, c, d] -> [a, d] + [f] + [e] + [b, c] = [a, d, f, e, b, c]; recency block
    [b, c] starts at index 4. Connectors (first bridged anchor in that order -> spot):
      y 2.0 bridges (f, c): f, middle -> right after f;
      w 0.9 bridges (c, e): e, middle -> right after e;
      z 0.7 bridges (e, b): e -> right after e;
      x 0.5 bridges (b, c): b, recency block -> right before it, i.e. the same gap after e.
    The gap after e holds w, z, x in score order.
    """
    items = anchors(a=1.0, b=0.95, c=0.9, d=0.85, e=0.6, f=0.3) + [
        connector("x", 0.5, "b", "c"),
        connector("y", 2.0, "f", "c"),
        connector("z", 0.7, "e", "b"),
        connector("w", 0.9, "c", "e"),
    ]
    env = pack(items)
    assert ids(env) == ["a", "d", "f", "y", "e", "w", "z", "x", "b", "c"]
    assert [p.band for p in env.order] == [
        "primacy",
        "primacy",
        "middle",
        "middle",
        "middle",
        "middle",
        "middle",
        "middle",
        "recency",
        "recency",
    ]
    assert {p.fact_id: p.bridges_anchor for p in env.order if p.role == "connector"} == {
        "y": "f",
        "w": "e",
        "z": "e",
        "x": "b",
    }


def test_one_critical_anchor_primacy_block_is_positions_1_and_2():
    """a 1.0 critical; b .3, c .2 supporting -> [a, b, c]. Connector x bridges (b, c): b is at
    position 2, in the primacy block (positions 1-2) -> right after it, before c."""
    env = pack(anchors(a=1.0, b=0.3, c=0.2) + [connector("x", 5.0, "b", "c")])
    assert ids(env) == ["a", "b", "x", "c"]
    assert [p.band for p in env.order] == ["primacy", "primacy", "middle", "middle"]


def test_two_anchors_connector_after_the_primacy_block():
    """Only two anchors: both form the primacy block and the connector follows it (the one case where
    a connector is last: positions 1-2 belong to the anchors)."""
    env = pack(anchors(a=0.56, b=0.56) + [connector("x", 0.19, "a", "b")])
    assert ids(env) == ["a", "b", "x"]


# ---- the greedy fill (SPEC-003 §7.3, docs/reference/pipeline.md §6) ---------------------------------------------
def test_greedy_skips_what_does_not_fit_and_smaller_facts_enter():
    # budget 30: a (20+2) fits; b (20+2) does not; c (5+2) fits -> 29
    tokens = [20, 20] + [5] * (len(IDS) - 2)
    env = pack(anchors(a=0.9, b=0.8, c=0.7), budget=30, tokens=tokens)
    assert sorted(ids(env)) == ["a", "c"] and env.tokens_used == 29
    assert env.dropped_for_budget == ("b",)


def test_anchors_fill_before_connectors_whatever_the_scores():
    """Budget 3 lines = 21: anchors a .5, b .4, c .3 take it all; the connector (score 9.0) does not fit."""
    env = pack(anchors(a=0.5, b=0.4, c=0.3) + [connector("x", 9.0, "a", "b")], budget=3 * LINE)
    assert ids(env) == ["a", "b", "c"] and env.dropped_for_budget == ("x",)


def test_connector_needs_two_packed_bridged_anchors():
    """x bridges (a, f) and (f, g): f and g are not offered, so only a of its anchors is packed -> x is
    left out; y bridges (a, b), both packed -> kept."""
    items = anchors(a=1.0, b=0.95, c=0.9) + [connector("x", 0.3, "a", "f", "g"), connector("y", 0.2, "a", "b")]
    env = pack(items)
    assert ids(env) == ["a", "c", "y", "b"]
    assert env.dropped_unbridged == ("x",) and env.dropped_for_budget == ()


def test_connector_loses_its_place_when_the_budget_drops_an_anchor():
    """Budget 21 = 3 lines: anchors a, b, c; d (the second anchor x bridges) does not fit -> x left out
    as unbridged, not for the budget."""
    env = pack(anchors(a=1.0, b=0.9, c=0.8, d=0.7) + [connector("x", 0.5, "a", "d")], budget=3 * LINE)
    assert ids(env) == ["a", "c", "b"]
    assert env.dropped_for_budget == ("d",) and env.dropped_unbridged == ("x",)


# ---- a tied pair: a group of two, SPEC-027 §2.5's NOTE (docs/reference/pipeline.md §6 steps 2, 5) --------------
def test_tied_pair_note_in_text_and_tokens():
    # all three critical (.9/.9, .85/.9, .8/.9 >= .8): [crit[0], crit[-1], crit[1:-1]] = [a, b, c];
    # the NOTE lists b (placed first) then c, right after c's line
    env = pack(anchors(a=0.9, b=0.8, c=0.85), ties=[("b", "c")])
    block = note_block("content of b", "content of c")
    assert ids(env) == ["a", "b", "c"]
    assert env.notes == (block,)
    assert env.text.endswith("[c] content of c\n" + block)
    assert block == (
        "NOTE: The following two facts conflict and could not be automatically\n"
        "arbitrated. Treat with caution and prefer the more specific:\n"
        "  [content of b]\n  [content of c]"
    )
    assert env.tokens_used == 3 * LINE + note_tokens("b", "c")


def test_tied_unit_costs_its_note_and_a_later_fact_no_longer_fits():
    """Budget = 4 lines + NOTE - 1. Fill: a (7), then the unit {c, b} at c's turn: 14 + NOTE;
    then d (7) overflows by one token and is dropped."""
    budget = 4 * LINE + note_tokens("b", "c") - 1
    env = pack(anchors(a=0.9, b=0.8, c=0.85, d=0.5), ties=[("b", "c")], budget=budget)
    assert ids(env) == ["a", "b", "c"] and env.dropped_for_budget == ("d",)
    assert len(env.notes) == 1 and env.tokens_used == budget - LINE + 1


def test_tied_pair_that_does_not_fit_is_dropped_whole():
    """Budget 15: the group {b, c} costs 14 + NOTE (26 words -> 34) = 48: neither fact, no NOTE, and the
    pair is reported as dropped by the budget."""
    env = pack(anchors(b=0.8, c=0.85), ties=[("b", "c")], budget=15)
    assert ids(env) == [] and env.notes == () and env.tokens_used == 0
    # a cut would not fit either: c's line 7 + the one-fact NOTE naming b (24 + 3 + 12 + 1 words: 32 + 4
    # + 16 + 2 by its parts) = 61
    assert env.empty_reason == (
        "the envelope is empty: none of the 2 selected facts fits token_budget 15 "
        "(the smallest needs 61 tokens, with its tie group's NOTE)"
    )
    assert env.dropped_for_budget == ("c", "b")
    assert env.dropped_pairs == (DroppedPair("b", "c", "budget"),)


def test_dropped_tied_pair_leaves_room_for_a_smaller_fact():
    """Budget = 3 lines + NOTE - 1: a (7) enters; the group {b, c} needs 14 + NOTE, one token too many,
    and a cut of it 61 (a line, the one-fact NOTE naming the other): dropped whole; d (7) still enters.
    Tiers: d .6 / .9 = .667, important -> [a, d]."""
    budget = 3 * LINE + note_tokens("b", "c") - 1
    env = pack(anchors(a=0.9, b=0.8, c=0.7, d=0.6), ties=[("b", "c")], budget=budget)
    assert ids(env) == ["a", "d"] and env.tokens_used == 2 * LINE
    assert env.dropped_for_budget == ("b", "c") and env.dropped_pairs == (DroppedPair("b", "c", "budget"),)


# ---- tie groups: one NOTE per group; a group that does not fit keeps its best members (§6 steps 2, 5) ---------
#: word counts of the NOTE parts under word_counter (ceil(words * 1.3)): the two-fact header (and the
#: "<n> facts" one) 20 words, the one-fact header 24, a line "  [content of x]" 3, the left-out lead 12
GROUP_ABC = [("a", "b"), ("b", "c"), ("a", "c")]


def test_three_tied_facts_form_one_group_with_one_note():
    """(a, b) and (b, c) tied: one group {a, b, c}, one NOTE listing the three. a, b, c all .9 (critical,
    by row) -> [a, c] + [b] = [a, c, b]; the NOTE follows b, the last of them, and lists them in that
    order. NOTE: 20 + 3 * 3 = 29 words -> 38 tokens; the text 3 lines (21) + 38 = 59. It covers both
    tied pairs: the header's unresolved count is 2 for this one block."""
    env = pack(anchors(a=0.9, b=0.9, c=0.9), ties=[("a", "b"), ("b", "c")])
    assert ids(env) == ["a", "c", "b"]
    block = (
        "NOTE: The following 3 facts conflict and could not be automatically\n"
        "arbitrated. Treat with caution and prefer the more specific:\n"
        "  [content of a]\n  [content of c]\n  [content of b]"
    )
    assert env.notes == (block,) and env.text.endswith("[b] content of b\n" + block)
    assert env.tokens_used == 3 * LINE + 38
    assert env.tie_groups == (
        TieGroup(
            members=("a", "b", "c"),
            pairs=(("a", "b"), ("b", "c")),
            packed=("a", "c", "b"),
            left_out=(),
            left_out_reasons=(),
            note=block,
            note_tokens=38,
        ),
    )
    assert env.tie_groups[0].packed_pairs == (("a", "b"), ("b", "c")) and env.dropped_pairs == ()
    assert env.note_covering("a", "c") == env.note_covering("b", "a") == block  # a NOTE lists all three
    # 3 lines + 37 tokens: the whole group (59) does not fit, nor any cut of it (a line of 7 and a NOTE
    # naming the other two already need 7 + 32 + 4 + 16 + 2 + 2 = 63): nothing, and the reason says so
    small = pack(anchors(a=0.9, b=0.9, c=0.9), ties=[("a", "b"), ("b", "c")], budget=3 * LINE + 37)
    assert (
        ids(small) == []
        and small.notes == ()
        and small.dropped_pairs
        == (
            DroppedPair("a", "b", "budget"),
            DroppedPair("b", "c", "budget"),
        )
    )
    assert small.tie_groups[0].packed == () and small.tie_groups[0].left_out == ("a", "b", "c")
    assert small.empty_reason == (
        "the envelope is empty: none of the 3 selected facts fits token_budget 58 "
        "(the smallest needs 63 tokens, with its tie group's NOTE)"
    )


def test_group_that_does_not_fit_packs_its_best_members_with_a_note_naming_the_rest():
    """a .9, c .85, b .8 all tied, lines of 30 + 2 = 32 tokens. Whole: 96 + NOTE (29 words -> 38) = 134 >
    120. Members in fill order, each kept while its lines and a NOTE naming the others as left out fit
    (parts: header 26 for two or more facts, 32 for one; a line 4; the lead 16; an id "x," 2):
      a: 32 + 32 + 4 + 16 + 2 + 2 = 88 <= 120, kept;  c: 64 + 26 + 8 + 16 + 2 = 116, kept;
      b: 96 + 26 + 12 = 134 > 120, left out for the budget.
    The NOTE placed: 20 + 6 + 12 + 1 = 39 words -> 51 tokens (its parts reserved 52): 64 + 51 = 115."""
    env = pack(anchors(a=0.9, b=0.8, c=0.85), ties=GROUP_ABC, budget=120, tokens=[30] * 3 + [5] * 8)
    block = (
        "NOTE: The following two facts conflict and could not be automatically\n"
        "arbitrated. Treat with caution and prefer the more specific:\n"
        "  [content of a]\n  [content of c]\n"
        "  Also in this conflict, of equal authority, left out of this envelope: b."
    )
    assert ids(env) == ["a", "c"] and env.notes == (block,) and env.text.endswith("[c] content of c\n" + block)
    assert env.tokens_used == 115 and env.dropped_for_budget == ("b",)
    (g,) = env.tie_groups
    assert (g.members, g.packed, g.left_out, g.left_out_reasons) == (("a", "c", "b"), ("a", "c"), ("b",), ("budget",))
    assert g.pairs == (("a", "b"), ("a", "c"), ("b", "c")) and g.packed_pairs == (("a", "c"),)
    assert (g.note, g.note_tokens) == (block, 51)
    assert env.dropped_pairs == (DroppedPair("a", "b", "budget"), DroppedPair("b", "c", "budget"))
    assert env.empty_reason is None


def test_group_cut_to_one_fact():
    """The same group at budget 90: a (88) kept; c (116) and b (64 + 26 + 8 + 16 + 2 = 116) left out.
    The one-fact NOTE: 24 + 3 + 12 + 2 = 41 words -> 54 tokens: 32 + 54 = 86. It covers no tied pair."""
    env = pack(anchors(a=0.9, b=0.8, c=0.85), ties=GROUP_ABC, budget=90, tokens=[30] * 3 + [5] * 8)
    block = (
        "NOTE: The following fact conflicts with facts of equal authority left out of this\n"
        "envelope, and could not be automatically arbitrated. Treat with caution:\n"
        "  [content of a]\n"
        "  Also in this conflict, of equal authority, left out of this envelope: c, b."
    )
    assert ids(env) == ["a"] and env.notes == (block,) and env.tokens_used == 32 + 54
    (g,) = env.tie_groups
    assert (g.packed, g.left_out, g.packed_pairs, g.note_tokens) == (("a",), ("c", "b"), (), 54)
    assert len(env.dropped_pairs) == 3 and env.dropped_for_budget == ("c", "b")


def test_cut_group_leaves_room_for_a_smaller_fact_and_unbridged_connectors_are_named():
    """Anchors a .9 and c .85 tied with connector x (bridges a, d); d .5 alone; lines 7. Group {a, c, x}
    (fill order a, c, x), decided at a: x bridges only a among the anchors packed so far and its group's,
    so the group cannot enter whole. Its members but x: 14 + 26 + 8 + 16 + 2 = 66 by the NOTE's parts.
    Budget 70: a and c enter with a NOTE naming x (20 + 6 + 12 + 1 = 39 words -> 51): 14 + 51 = 65;
    d (7) no longer fits. Budget 60: that does not fit; member by member, a alone needs
    7 + 32 + 4 + 16 + 2 + 2 = 63 > 60, so does c: the group is left out and d enters."""
    items = anchors(a=0.9, c=0.85, d=0.5) + [connector("x", 3.0, "a", "d")]
    env = pack(items, ties=[("a", "c"), ("c", "x")], budget=70)
    assert ids(env) == ["a", "c"] and env.tokens_used == 65
    assert env.notes[0].endswith(
        "  [content of c]\n  Also in this conflict, of equal authority, left out of this envelope: x."
    )
    (g,) = env.tie_groups
    assert (g.packed, g.left_out, g.left_out_reasons, g.packed_pairs) == (
        ("a", "c"),
        ("x",),
        ("unbridged",),
        (("a", "c"),),
    )
    assert env.dropped_for_budget == ("d",) and env.dropped_unbridged == ("x",)
    assert env.dropped_pairs == (DroppedPair("c", "x", "unbridged"),)

    env = pack(items, ties=[("a", "c"), ("c", "x")], budget=60)
    assert ids(env) == ["d"] and env.notes == ()
    (g,) = env.tie_groups
    assert (g.members, g.left_out, g.left_out_reasons) == (
        ("a", "c", "x"),
        ("a", "c", "x"),
        ("budget", "budget", "unbridged"),
    )
    assert env.dropped_for_budget == ("a", "c") and env.dropped_unbridged == ("x",)


def test_note_header_is_the_spec_text():
    assert (
        NOTE_HEADER
        == note_header(2)
        == (
            "NOTE: The following two facts conflict and could not be automatically\n"
            "arbitrated. Treat with caution and prefer the more specific:"
        )
    )
    assert note_header(12) == (
        "NOTE: The following 12 facts conflict and could not be automatically\n"
        "arbitrated. Treat with caution and prefer the more specific:"
    )
    assert group_note(["x", "y"]) == note_block("x", "y")


def test_a_note_names_twenty_left_out_facts_and_counts_the_rest():
    ids_ = [f"f{i}" for i in range(23)]
    assert group_note(["x"], ids_).splitlines()[-1] == (
        "  Also in this conflict, of equal authority, left out of this envelope: "
        + ", ".join(ids_[:20])
        + ", and 3 more."
    )


def test_empty_envelope():
    env = pack([])
    assert env.order == () and env.text == "" and env.tokens_used == 0


# ---- header and text agree, through the pipeline (docs/reference/pipeline.md §6 step 3, §3) -----------------------
E = np.eye(5)


def tied_etcd_corpus():
    """SPEC-027 §2.5: two official docs of the same age, 2379 vs 4001 -> tied authority.

    Relevance to e0: the two ports 1 / sqrt(1.0025) = .9988, peer .75 / .99905 = .7507, store .60;
    CDR (importance .8, recency 1): .7990, .7990, .6006, .48. Costs (words * 1.3 + 2): ports 10 each,
    peer 14, store 12, NOTE 32 words -> 42: the unit costs 62.
    """
    facts = [
        fact("etcd-2379", "etcd default client port is 2379", modified_at="2026-03-01"),
        fact("etcd-4001", "etcd default client port is 4001", modified_at="2026-03-01"),
        fact("etcd-peer", "etcd peers talk to each other on port 2380", modified_at="2026-03-01"),
        fact("k8s-store", "Kubernetes keeps all cluster state in etcd", modified_at="2026-03-01"),
    ]
    vecs = [E[0] + 0.05 * E[1], E[0] + 0.05 * E[2], 0.75 * E[0] + 0.66 * E[3], 0.6 * E[0] + 0.8 * E[4]]
    return make_corpus(facts, np.array(vecs))


def test_pipeline_header_counts_only_packed_ties():
    corpus = tied_etcd_corpus()
    scen = make_scenario(E[0], now="2026-06-01T00:00:00Z")
    full = run_pipeline(corpus, scen)
    assert full.headers["CRP-Context-Conflicts-Resolved"] == "1; unresolved=1"
    assert full.envelope.text.count(NOTE_HEADER) == 1 and full.envelope.tokens_used == 62 + 14 + 12

    tight = run_pipeline(corpus, scen, CRPConfig(token_budget=40))
    assert [p.fact_id for p in tight.envelope.order] == ["etcd-peer", "k8s-store"]
    assert NOTE_HEADER not in tight.envelope.text
    assert tight.headers["CRP-Context-Conflicts-Resolved"] == "0"  # the pair is not in the envelope
    assert tight.envelope.tokens_used == 26
    rep = run_report(tight)["envelope"]
    assert rep["dropped_tied_pairs"] == [{"fact_a": "etcd-2379", "fact_b": "etcd-4001", "reason": "budget"}]
    assert rep["dropped_for_budget"] == ["etcd-2379", "etcd-4001"]
    reason = {o.fact_id: o.reason for o in tight.outcomes}["etcd-4001"]
    assert reason == (
        "selected but dropped: token budget (tie group with etcd-2379: no fact of the group fits with the group's NOTE)"
    )
    assert tight.warnings == (
        "tie group of 2 facts (1 tied pair: etcd-2379, etcd-4001) left out whole (token_budget 40): no fact of "
        "it fits with the group's NOTE block",
    )
    assert full.warnings == () and full.envelope.tie_groups[0].packed_pairs == (("etcd-2379", "etcd-4001"),)


# ---- before the connectors are chosen (docs/reference/pipeline.md §6 last paragraph) -------------------------------
def chain_with_near_duplicate():
    """test_pipeline's A-B-D chain plus X = A + 0.25 e5 (normalised).

    cos(X, A) = 1 / sqrt(1.0625) = .9701 > .95 (a near-duplicate, same claim, no changed value);
    cos(X, B) = .6462 / 1.0308 = .6269 (edge), cos(X, D) = .5195 / 1.0308 = .5040 (no edge);
    relevance X = .56 / 1.0308 = .5433 (gated out, no anchor). X touches A (1 hop, .9701) and D
    (2 hops via B, .6269 + .6462): bridge = 1 * (.9701 + .6269 + .6462) / 3 = .7478, score
    .7478 * .5433 = .4062 > B's .6462 * .30 = .1939. One connector slot (budget 3: 2 anchors).
    """
    g = np.array([[1, 0.3, 0.78], [0.3, 1, 0.78], [0.78, 0.78, 1]])
    low = np.linalg.cholesky(g)
    b = 0.56
    a = np.sqrt(1 - b * b)
    vec_a, vec_d, vec_b = np.r_[a * low[0], b, 0], np.r_[a * low[1], b, 0], np.r_[low[2], 0, 0]
    facts = [
        fact("A", "pods receive new IPs when rescheduled", modified_at="2026-05-01"),
        fact("D", "stale DNS caches delay endpoint propagation", modified_at="2026-05-01"),
        fact("B", "services track pod endpoints through label selectors", modified_at="2026-05-01"),
        fact("X", "pods get new IPs whenever they are rescheduled", modified_at="2026-05-01"),
    ]
    return make_corpus(facts, np.array([vec_a, vec_d, vec_b, vec_a + 0.25 * np.eye(5)[4]]))


def test_connector_near_duplicate_of_an_anchor_is_dropped_and_the_next_takes_the_slot():
    corpus = chain_with_near_duplicate()
    r = run_pipeline(corpus, make_scenario([0, 0, 0, 1.0, 0], now="2026-06-01"), CRPConfig(envelope_fact_budget=3))
    conn = r.cdgr.connectors
    score = dict(zip(conn.idx.tolist(), conn.connector_score.tolist()))
    assert abs(score[3] - 0.4062) < 1e-4 and abs(score[2] - 0.1939) < 1e-4  # X would have won the slot
    (dup,) = r.cdgr.connector_near_duplicates
    assert dup[:2] == (3, 0) and abs(dup[2] - 0.9701) < 1e-4
    assert r.cdgr.selected_connectors.tolist() == [2]
    assert [(p.fact_id, p.role) for p in r.envelope.order] == [("A", "anchor"), ("D", "anchor"), ("B", "connector")]
    assert "connector candidate dropped: near-duplicate of anchor A" in {o.fact_id: o.reason for o in r.outcomes}["X"]
    assert run_report(r)["cdgr"]["connector_near_duplicates"][0]["skipped"] == "X"


def test_connector_near_duplicate_with_a_value_conflict_stays():
    """Same cosine .9701 but a changed number: not a duplicate, stage 4 arbitrates it."""
    facts = [
        fact("A", "the etcd client port is 2379"),
        fact("X", "the etcd client port is 4001"),
        fact("Y", "the etcd client port is 2379 by default"),
    ]
    corpus = make_corpus(facts, np.array([[1, 0, 0], [1, 0.25, 0], [1, 0, 0.25]]))
    assert values_conflict(facts[0].content, facts[1].content) is not None
    got = connector_near_duplicates(
        corpus, np.array([0]), np.array([1, 2]), np.array([0, 1]), config=CRPConfig(), values_conflict=values_conflict
    )
    assert [g[:2] for g in got] == [(2, 0)]


def test_stage_4_dedup_keeps_the_anchor_and_refills_the_slot():
    """Anchor A and connector C at cos .9701 with no value conflict: SPEC-003 §6.6 keeps the anchor (a
    connector score, 9.0, is on another scale than A's CDR .5); the freed slot goes to the next pool
    fact that conflicts with nothing kept: P1 is a near-duplicate of A (skipped), P2 fits."""
    facts = [
        fact("A", "pods receive new IPs when rescheduled"),
        fact("C", "pods get new IPs when rescheduled"),
        fact("P1", "pods obtain new IPs on rescheduling"),
        fact("P2", "services select pods by label"),
    ]
    corpus = make_corpus(facts, np.array([[1, 0, 0, 0], [1, 0.25, 0, 0], [1, 0, 0.25, 0], [0, 0, 0, 1]]))
    res = resolve_contradictions(
        corpus, [0, 1], {0: "anchor", 1: "connector"}, {0: 0.5, 1: 9.0}, [2, 3], {0: 1.0, 1: 1.0}, CRPConfig()
    )
    assert res.deduplicated == ((1, 0),)
    assert res.backfilled == ((3, 1),)
    assert res.selected.tolist() == [0, 3]

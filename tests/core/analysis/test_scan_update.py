"""rearbitrate: a scan after a change of pair decisions equals a fresh arbitrate_checked with the new decisions,
and only the pairs whose decision in force changed are arbitrated again; restatused, after a status mark that keeps
every fact retrievable; within_retrievable, after marks that take facts out of retrieval (the scan
``crp-inspect conflicts`` makes of the corpus with every status in force)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.scan import ConflictScan, arbitrate_checked, check_ckf
from crp_core.analysis.scan_update import (
    DecisionChange,
    decision_change,
    pair_index,
    rearbitrate,
    restatused,
    rows_from,
    within_retrievable,
)
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import META_SUPERSEDED_BY, META_TRIAGE, Fact, KnowledgeBase
from crp_core.triage import Decision, DecisionSet, pair_key
from tests.support.scan_worlds import NOW, cluster_corpus


def same_scan(got: ConflictScan, want: ConflictScan, recency: bool = True) -> None:
    """Every field a fresh scan fixes (timings aside, and the recency table unless ``recency``) is equal."""
    assert got.pairs == want.pairs
    assert dict(got.counts) == dict(want.counts)
    assert (got.n_facts, got.n_candidates, got.k, got.threshold, got.now) == (
        want.n_facts,
        want.n_candidates,
        want.k,
        want.threshold,
        want.now,
    )
    assert dict(got.rows) == dict(want.rows)
    assert (got.method, got.products, got.tied, got.dismissed) == (
        want.method,
        want.products,
        want.tied,
        want.dismissed,
    )
    if not recency:
        return
    assert (got.recency is None) == (want.recency is None)
    if got.recency is not None and want.recency is not None:
        assert np.array_equal(got.recency.idx, want.recency.idx)
        assert np.array_equal(got.recency.factor, want.recency.factor)


def log(*steps: tuple[str, str, str, str | None]) -> DecisionSet:
    """(kind, a, b, winner) decisions in recording order."""
    rows = []
    for n, (kind, a, b, winner) in enumerate(steps, start=1):
        if kind == "dismiss":
            rows.append(Decision.dismiss(a, b, operator="ann", id=n))
        elif kind == "override":
            rows.append(Decision.override(a, b, winner=str(winner), operator="ann", id=n))
        else:
            rows.append(Decision.accept(a, b, winner=winner, operator="ann", id=n))
    return DecisionSet.from_decisions(rows)


# ---- exact cases --------------------------------------------------------------------------------
def _two_pairs() -> Corpus:
    texts = [
        "The update test queue port is 7301.",
        "The update test queue port is 7302.",
        "The update test spool holds 12 GB.",
        "The update test spool holds 24 GB.",
    ]
    sources = ["official_documentation", "web", "internal", "internal"]
    facts = tuple(
        Fact(f"U{i}", t, source_type=s, modified_at=datetime(2026, 5, 1, tzinfo=UTC), line=i + 1)
        for i, (t, s) in enumerate(zip(texts, sources))
    )
    vectors = np.array([[1, 0, 0], [1, 0, 0.1], [0, 1, 0], [0, 1, 0.1]], dtype=np.float32)
    return Corpus.from_vectors(KnowledgeBase(facts=facts), vectors)


def test_a_dismissal_moves_the_pair_last_and_leaves_the_counts_and_the_other_pair():
    corpus, config = _two_pairs(), CRPConfig()
    checked = check_ckf(corpus, config)
    before = arbitrate_checked(checked, corpus, config, NOW)
    assert [(p.fact_a, p.tied) for p in before.pairs] == [("U2", True), ("U0", False)]  # the tie first
    ds = log(("dismiss", "U2", "U3", None))
    change = decision_change(None, ds)
    assert dict(change.pairs) == {"U2|U3": {"kind": "dismiss", "winner": None}}
    up = rearbitrate(before, change, config)
    assert up.changed == ("U2|U3",)
    assert [(p.fact_a, p.decision, p.tied, p.kept) for p in up.scan.pairs] == [
        ("U0", None, False, ("U0",)),
        ("U2", "dismiss", False, ("U2", "U3")),
    ]
    assert up.scan.pairs[0] is before.pairs[1]  # the other pair is the previous scan's own object
    assert up.scan.dismissed == 1 and before.dismissed == 0
    for pat in up.scan.counts:
        assert up.scan.counts[pat] == before.counts[pat] - (pat in before.pairs[0].patterns)
    same_scan(up.scan, arbitrate_checked(checked, corpus, config, NOW, ds))
    assert pair_index(up.scan)["U2|U3"] is up.scan.pairs[1]


def test_an_override_against_authority_then_its_removal_returns_to_the_authority_winner():
    corpus, config = _two_pairs(), CRPConfig()
    checked = check_ckf(corpus, config)
    before = arbitrate_checked(checked, corpus, config, NOW)
    ds = log(("override", "U0", "U1", "U1"))
    up = rearbitrate(before, decision_change(None, ds), config)
    pair = pair_index(up.scan)["U0|U1"]
    assert (pair.kept, pair.suppressed, pair.decision) == (("U1",), "U0", "override")
    back = rearbitrate(up.scan, decision_change(ds, DecisionSet.empty()), config)
    same_scan(back.scan, before)
    assert pair_index(back.scan)["U0|U1"].kept == ("U0",)


def test_an_unchanged_set_a_repeated_decision_or_a_pair_outside_the_scan_changes_nothing():
    corpus, config = _two_pairs(), CRPConfig()
    before = arbitrate_checked(check_ckf(corpus, config), corpus, config, NOW)
    ds = log(("accept", "U0", "U1", "U0"))
    again = log(("accept", "U0", "U1", "U0"), ("accept", "U0", "U1", "U0"))
    assert not decision_change(ds, again)
    assert not decision_change(ds, ds)
    outside = decision_change(None, log(("dismiss", "U0", "U3", None)))  # not a conflict pair
    assert dict(outside.pairs) == {"U0|U3": {"kind": "dismiss", "winner": None}}
    up = rearbitrate(before, outside, config)
    assert up.scan is before and up.changed == ()


def test_a_mark_status_is_not_a_pair_decision():
    ds = DecisionSet.from_decisions([Decision.mark_status("U0", "U1", fact="U1", status="STALE", operator="ann")])
    assert not decision_change(None, ds)


def test_a_bad_kind_is_refused_as_a_fresh_arbitration_refuses_it():
    corpus, config = _two_pairs(), CRPConfig()
    before = arbitrate_checked(check_ckf(corpus, config), corpus, config, NOW)
    with pytest.raises(ValueError, match="unknown kind"):
        rearbitrate(before, DecisionChange({"U0|U1": {"kind": "bogus", "winner": None}}), config)


def test_removing_a_given_decision_uncovers_the_decision_the_ckf_carries_for_that_pair_only():
    corpus, config = _two_pairs(), CRPConfig()
    facts = list(corpus.kb.facts)
    # an exported CKF: U0 superseded by U1 by an operator's override (U0 has the higher authority)
    facts[0] = replace(
        facts[0],
        metadata={META_SUPERSEDED_BY: "U1", META_TRIAGE: {"kind": "override", "operator": "bo", "decided_at": "x"}},
    )
    kb = KnowledgeBase(facts=tuple(facts))
    carried = Corpus.from_vectors(kb, corpus.vectors)
    checked = check_ckf(carried, config)
    given = log(("dismiss", "U0", "U1", None), ("dismiss", "U2", "U3", None))
    before = arbitrate_checked(checked, carried, config, NOW, given)
    assert pair_index(before)["U0|U1"].decision == "dismiss"
    after = log(("dismiss", "U2", "U3", None))
    change = decision_change(given, after, kb)
    assert dict(change.pairs) == {"U0|U1": {"kind": "override", "winner": "U1"}}
    up = rearbitrate(before, change, config)
    assert pair_index(up.scan)["U0|U1"].kept == ("U1",)
    same_scan(up.scan, arbitrate_checked(checked, carried, config, NOW, after))
    # without the CKF the change would read "no decision" and the pair would go back to authority
    assert dict(decision_change(given, after).pairs) == {"U0|U1": None}


# ---- any sequence of decisions ---------------------------------------------------------------------
STEP = st.tuples(
    st.integers(0, 10_000),  # which pair (of the scan's, or a non-pair when past them)
    st.sampled_from(("accept", "accept-winner", "override-a", "override-b", "dismiss", "revert")),
)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 5), tolerance=st.sampled_from((0.0, 0.02, 0.2)), steps=st.lists(STEP, max_size=12))
def test_incremental_equals_fresh_for_any_sequence_of_decisions(seed, tolerance, steps):
    config = CRPConfig(authority_tie_tolerance=tolerance)
    corpus = cluster_corpus(seed, config=config)
    checked = check_ckf(corpus, config)
    scan = arbitrate_checked(checked, corpus, config, NOW)
    ids = [f.fact_id for f in corpus.kb.facts]
    pairs = [(p.fact_a, p.fact_b) for p in scan.pairs]
    rows: list[Decision] = []
    before = DecisionSet.empty()
    history = [scan]
    for n, (which, kind) in enumerate(steps, start=1):
        a, b = pairs[which % len(pairs)] if which % 4 else sorted((ids[which % len(ids)], ids[(which + 1) % len(ids)]))
        if kind == "revert":
            mine = [d for d in rows if d.pair_key == pair_key(a, b) and d.kind != "revert"]
            if not mine:
                continue
            rows.append(Decision.revert(a, b, reverts=int(mine[-1].id or 0), operator="ann", reason="r", id=n))
        elif kind == "dismiss":
            rows.append(Decision.dismiss(a, b, operator="ann", id=n))
        elif kind.startswith("override"):
            rows.append(Decision.override(a, b, winner=a if kind.endswith("a") else b, operator="ann", id=n))
        else:
            rows.append(Decision.accept(a, b, winner=a if kind == "accept-winner" else None, operator="ann", id=n))
        after = DecisionSet.from_decisions(rows)
        up = rearbitrate(scan, decision_change(before, after, corpus.kb), config)
        assert set(up.changed) <= {pair_key(a, b)}
        same_scan(up.scan, arbitrate_checked(checked, corpus, config, NOW, after))
        assert dict(pair_index(up.scan)) == {pair_key(p.fact_a, p.fact_b): p for p in up.scan.pairs}
        src = rows_from(scan, up.scan)
        assert src is not None and len(src) == len(up.scan.pairs)
        assert all(scan.pairs[s] is p for s, p in zip(src.tolist(), up.scan.pairs) if s >= 0)
        assert {pair_key(p.fact_a, p.fact_b) for s, p in zip(src.tolist(), up.scan.pairs) if s < 0} == set(up.changed)
        history.append(up.scan)
        scan, before = up.scan, after
    src = rows_from(history[0], scan)  # back through every step at once
    assert src is not None
    assert all(history[0].pairs[s] is p for s, p in zip(src.tolist(), scan.pairs) if s >= 0)
    assert rows_from(scan, history[0]) is None or scan is history[0]  # not made from it


# ---- status marks that keep every fact retrievable ------------------------------------------------
MARK = st.tuples(st.integers(0, 10_000), st.sampled_from(("STALE", "ACTIVE", "dismiss", "override")))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 5), steps=st.lists(MARK, min_size=1, max_size=8))
def test_status_marks_and_pair_decisions_in_any_order_equal_a_fresh_arbitration(seed, steps):
    config = CRPConfig()
    base = cluster_corpus(seed, config=config)
    checked = check_ckf(base, config)
    scan = arbitrate_checked(checked, base, config, NOW)
    pairs = [(p.fact_a, p.fact_b) for p in scan.pairs]
    statuses: dict[str, str] = {}
    rows: list[Decision] = []
    ds = DecisionSet.empty()
    for n, (which, kind) in enumerate(steps, start=1):
        a, b = pairs[which % len(pairs)]
        if kind in ("STALE", "ACTIVE"):
            target = a if which % 2 else b
            statuses[target] = kind
            corpus = base.with_statuses(dict(statuses))
            assert np.array_equal(corpus.retrievable, base.retrievable)
            up = restatused(scan, corpus, config, ds, [target])
            assert {pair_key(*p) for p in pairs if target in p} == set(up.changed)
        else:
            corpus = base.with_statuses(dict(statuses)) if statuses else base
            rows.append(
                Decision.dismiss(a, b, operator="ann", id=n)
                if kind == "dismiss"
                else Decision.override(a, b, winner=b, operator="ann", id=n)
            )
            after = DecisionSet.from_decisions(rows)
            up = rearbitrate(scan, decision_change(ds, after, corpus.kb), config)
            ds = after
        same_scan(up.scan, arbitrate_checked(checked, corpus, config, NOW, ds))
        src = rows_from(scan, up.scan)
        assert src is not None and all(scan.pairs[s] is p for s, p in zip(src.tolist(), up.scan.pairs) if s >= 0)
        scan = up.scan


def test_a_stale_mark_lowers_the_facts_recency_and_moves_its_pairs():
    corpus, config = _two_pairs(), CRPConfig()
    checked = check_ckf(corpus, config)
    before = arbitrate_checked(checked, corpus, config, NOW)
    stale = corpus.with_statuses({"U0": "STALE"})
    up = restatused(before, stale, config, None, ["U0", "U9"])  # U9: no fact of a pair, nothing to do
    assert up.changed == ("U0|U1",)
    pair = pair_index(up.scan)["U0|U1"]
    assert pair.authority["U0"].recency_factor == config.stale_floor
    assert pair.authority["U1"] is pair_index(before)["U0|U1"].authority["U1"]
    same_scan(up.scan, arbitrate_checked(checked, stale, config, NOW))
    assert restatused(before, corpus, config, None, ["U9"]).scan is before


# ---- status marks that take facts out of retrieval -----------------------------------------------
OUT = st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(("QUARANTINED", "DELETED", "STALE"))), max_size=6)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 5), marks=OUT, decided=st.lists(st.integers(0, 10_000), max_size=4))
def test_marks_out_of_retrieval_cut_the_scan_to_the_one_of_the_corpus_with_every_status(seed, marks, decided):
    """The scan of the corpus with every status in force (what ``crp-inspect conflicts`` scans), cut from the scan
    of the corpus whose marks keep every fact retrievable: the same pairs, counts, facts, candidates, partners and
    rows; the pairs cut are the ones with a fact out of retrieval, in triage order, the same objects."""
    config = CRPConfig()
    base = cluster_corpus(seed, config=config)
    ids = [f.fact_id for f in base.kb.facts]
    statuses = {ids[i % len(ids)]: status for i, status in marks}
    kept = {f: s for f, s in statuses.items() if s == "STALE"}
    wide = base.with_statuses(kept) if kept else base
    checked = check_ckf(wide, config)
    pairs = [(p.fact_a, p.fact_b) for p in arbitrate_checked(checked, wide, config, NOW).pairs]
    ds = log(*(("override", *pairs[i % len(pairs)], pairs[i % len(pairs)][1]) for i in decided)) if pairs else None
    scan = arbitrate_checked(checked, wide, config, NOW, ds)
    narrow = base.with_statuses(statuses) if statuses else base
    cut = within_retrievable(scan, checked, narrow)
    same_scan(cut.scan, arbitrate_checked(check_ckf(narrow, config), narrow, config, NOW, ds), recency=False)
    out = {f for f, s in statuses.items() if s != "STALE"} & {
        f.fact_id for f, ok in zip(wide.kb.facts, wide.retrievable) if ok
    }
    assert [p for p in scan.pairs if {p.fact_a, p.fact_b} & out] == list(cut.aside)
    assert all(any(p is q for q in scan.pairs) for p in cut.scan.pairs)  # the kept scan's own pair objects
    if not out:
        assert cut.scan is scan and cut.aside == ()


def test_a_quarantine_takes_its_pair_out_and_counts_its_candidates_no_more():
    corpus, config = _two_pairs(), CRPConfig()
    checked = check_ckf(corpus, config)
    before = arbitrate_checked(checked, corpus, config, NOW, log(("override", "U0", "U1", "U1")))
    out = corpus.with_statuses({"U1": "QUARANTINED"})
    cut = within_retrievable(before, checked, out)
    assert [(p.fact_a, p.fact_b, p.decision) for p in cut.aside] == [("U0", "U1", "override")]
    assert [(p.fact_a, p.fact_b) for p in cut.scan.pairs] == [("U2", "U3")]
    assert (before.n_facts, before.n_candidates, cut.scan.n_facts, cut.scan.n_candidates) == (4, 2, 3, 1)
    assert dict(cut.scan.rows) == {"U2": 2, "U3": 3}
    assert within_retrievable(before, checked, corpus).scan is before  # the same retrievable facts: nothing cut

"""crp_ui.queue_patch: the triage queue's frame after a decision, patched from the previous frame, equals the frame
built whole; only the rows whose pair, decision, review state or fact statuses changed are built again."""

from __future__ import annotations

from unittest import mock

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.scan import arbitrate_checked, check_ckf
from crp_core.analysis.scan_update import decision_change, rearbitrate
from crp_core.config import CRPConfig
from crp_core.triage import Decision, DecisionSet
from crp_ui import conflict_queue, queue_patch, queue_view
from crp_ui.queue_patch import QueueInputs, built_frame, patched_frame, patched_queue, stale_rows
from tests.support.scan_worlds import NOW, cluster_corpus

CONFIG = CRPConfig()


def world(seed: int = 0):  # type: ignore[no-untyped-def]
    corpus = cluster_corpus(seed, config=CONFIG)
    checked = check_ckf(corpus, CONFIG)
    return corpus, checked, arbitrate_checked(checked, corpus, CONFIG, NOW)


def step(scan, before: DecisionSet, after: DecisionSet, kb):  # type: ignore[no-untyped-def]
    """The scan after the change, as the dashboard makes it (crp_ui.whole_scan)."""
    return rearbitrate(scan, decision_change(before, after, kb), CONFIG).scan


def test_a_dismissal_rebuilds_one_row_and_moves_it_last():
    corpus, _checked, scan = world()
    kb = corpus.kb
    frame = built_frame(kb, QueueInputs(scan, DecisionSet.empty(), {}, None))
    first = scan.pairs[0]
    ds = DecisionSet.from_decisions([Decision.dismiss(first.fact_a, first.fact_b, operator="ann", id=1)])
    after = QueueInputs(step(scan, DecisionSet.empty(), ds, kb), ds, {}, None)
    before = QueueInputs(scan, DecisionSet.empty(), {}, None)
    source, rebuild = stale_rows(frame, before, after)
    assert rebuild.tolist() == [len(scan.pairs) - 1]  # the dismissed pair, now last, alone
    assert source[:-1].tolist() == list(range(1, len(scan.pairs)))
    with mock.patch.object(queue_patch, "pairs_frame", wraps=conflict_queue.pairs_frame) as rows:
        got = patched_frame(frame, kb, before, after)
    assert [len(c.args[0]) for c in rows.call_args_list] == [1]
    pd.testing.assert_frame_equal(got, built_frame(kb, after))
    last = got.iloc[-1]
    assert (last["fact_a"], last["arbitration"], last["decided"]) == (first.fact_a, "dismissed", True)
    assert last["decision"] == "dismissed (not a conflict)" and last["decided_by"] == "ann"
    assert not queue_view.filter_queue(got, decided="undecided")["pair"].isin([last["pair"]]).any()
    assert queue_view.queue_counts(got)["dismissed"] == 1


def test_a_status_mark_or_a_review_state_rebuilds_the_rows_of_that_fact_or_pair_only():
    corpus, _checked, scan = world(1)
    kb = corpus.kb
    base = QueueInputs(scan, DecisionSet.empty(), {}, None)
    frame = built_frame(kb, base)
    p = scan.pairs[2]
    # QUARANTINED is no scan status (the scan is the same object): the rows of that fact change
    ds = DecisionSet.from_decisions(
        [Decision.mark_status(p.fact_a, p.fact_b, fact=p.fact_b, status="QUARANTINED", operator="ann", id=1)]
    )
    after = QueueInputs(scan, ds, {}, None)
    _source, rebuild = stale_rows(frame, base, after)
    touching = [i for i, q in enumerate(scan.pairs) if p.fact_b in (q.fact_a, q.fact_b)]
    assert rebuild.tolist() == touching and len(touching) >= 1
    got = patched_frame(frame, kb, base, after)
    pd.testing.assert_frame_equal(got, built_frame(kb, after))
    assert set(got.loc[got["fact_b"] == p.fact_b, "status_b"]) == {"QUARANTINED"}
    review = QueueInputs(scan, ds, {conflict_queue.p_key(scan.pairs[0]): "disagreement"}, None)
    _source, rebuild = stale_rows(got, after, review)
    assert rebuild.tolist() == [0]
    pd.testing.assert_frame_equal(patched_frame(got, kb, after, review), built_frame(kb, review))


def test_nothing_changed_gives_the_frame_itself():
    corpus, _checked, scan = world()
    inputs = QueueInputs(scan, DecisionSet.empty(), {}, None)
    frame = built_frame(corpus.kb, inputs)
    assert patched_frame(frame, corpus.kb, inputs, QueueInputs(scan, DecisionSet.empty(), {}, None)) is frame


KINDS = st.sampled_from(("accept", "override", "dismiss", "stale", "quarantine", "revert"))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 4), steps=st.lists(st.tuples(st.integers(0, 1000), KINDS), max_size=8))
def test_a_patched_frame_equals_a_built_one_after_any_sequence_of_decisions(seed, steps):
    corpus, _checked, scan = world(seed)
    kb = corpus.kb
    rows: list[Decision] = []
    prev = QueueInputs(scan, DecisionSet.empty(), {}, None)
    frame = built_frame(kb, prev)
    counts = queue_view.queue_counts(frame)
    for n, (which, kind) in enumerate(steps, start=1):
        p = scan.pairs[which % len(scan.pairs)]
        a, b = p.fact_a, p.fact_b
        if kind == "revert":
            if not rows:
                continue
            last = rows[-1]
            if last.kind == "revert":
                continue
            rows.append(
                Decision.revert(last.fact_a, last.fact_b, reverts=int(last.id or 0), operator="bo", reason="r", id=n)
            )
        elif kind in ("stale", "quarantine"):
            status = "STALE" if kind == "stale" else "QUARANTINED"
            rows.append(Decision.mark_status(a, b, fact=a, status=status, operator="ann", id=n))
        elif kind == "override":
            rows.append(Decision.override(a, b, winner=b, operator="ann", id=n))
        else:
            rows.append(Decision.new(a, b, kind, "ann", id=n))
        ds = DecisionSet.from_decisions(rows)
        new_scan = step(prev.scan, prev.ds, ds, kb)
        after = QueueInputs(new_scan, ds, {}, None)
        frame, counts = patched_queue(frame, counts, kb, prev, after)
        whole = built_frame(kb, after)
        pd.testing.assert_frame_equal(frame, whole)
        assert counts == queue_view.queue_counts(whole)
        prev = after


def test_the_counts_per_pattern_count_whole_items_of_the_list():
    frame = pd.DataFrame(
        {
            "patterns": ["DATE_SHIFTED, NUMBER_CHANGED", "NUMBER_CHANGED", "", "NEGATION_FLIP"],
            "arbitration": ["tie", "dismissed", "A wins", "tie"],
            "decided": [False, True, False, False],
        }
    )
    counts = queue_view.queue_counts(frame)
    assert counts == {
        "pairs": 4,
        "ties": 2,
        "undecided": 3,
        "decided": 1,
        "dismissed": 1,
        "DATE_SHIFTED": 1,
        "ENTITY_SUBSTITUTED": 0,
        "MAGNITUDE_ALTERED": 0,
        "NEGATION_FLIP": 1,
        "NUMBER_CHANGED": 2,
    }
    assert set(queue_view.queue_counts(frame.iloc[:0]).values()) == {0}

"""The winner of a conflict pair over time and the envelope over time (crp_core.analysis.timeline): exact
instants computed by hand from the SPEC-027 §3.2 recency formula, flips, flags."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.timeline import (
    envelope_timeline,
    envelope_timeline_of,
    flag_lines,
    pair_timeline,
    relative_margin,
    winner_flags,
)
from crp_core.config import CRPConfig
from crp_core.factors.recency import fact_attributes
from crp_core.pipeline import run_pipeline
from crp_core.records import Authority, ConflictPair, ValueConflict
from tests.support.factories import fact, make_corpus, make_kb, make_scenario
from tests.support.timeline_worlds import KB, NOW, A

CONFIG = CRPConfig()


def _utc(s: str) -> datetime:
    return datetime.fromisoformat(s).replace(tzinfo=UTC)


def test_half_ttl_and_ttl_instants_are_exact():
    tl = pair_timeline(KB, "A", "B", CONFIG, now=NOW)
    marks = {(m.fact_id, m.kind): m.at for m in tl.marks}
    # 365 d TTL: half of it is 182.5 days after modified_at
    assert marks["A", "ageing"] == _utc("2025-01-01T00:00:00") + timedelta(days=182.5) == _utc("2025-07-02T12:00:00")
    assert marks["A", "expired"] == _utc("2026-01-01T00:00:00")
    assert marks["B", "ageing"] == _utc("2026-04-01T12:00:00")
    assert marks["B", "expired"] == _utc("2026-10-01T00:00:00")
    assert {m.label for m in tl.marks} == {"half TTL: starts ageing", "TTL: expired"}
    for m in tl.marks:  # every exact instant is a point of the sweep
        assert m.at in tl.times


def test_flip_instants_by_hand():
    tl = pair_timeline(KB, "A", "B", CONFIG, now=NOW)
    assert [(f.before, f.after) for f in tl.flips] == [("A", "B"), ("B", "A")]
    # 1st: 0.8 * r_A = 0.7, r_A = 1 - 0.7 (age - 182.5) / 182.5 -> age - 182.5 = 182.5 * 0.125 / 0.7 days
    first = _utc("2025-07-02T12:00:00") + timedelta(days=182.5 * 0.125 / 0.7)
    assert abs((tl.flips[0].at - first).total_seconds()) < 1e-3
    assert abs((tl.flips[0].at - _utc("2025-08-04T02:08:34.285714")).total_seconds()) < 1e-3
    # 2nd: A at its floor 0.8 * 0.3 = 0.24 from 2026-01-01; 0.7 * r_B = 0.24
    #      -> age_B - 182.5 = 182.5 * (1 - 0.24 / 0.7) / 0.7
    second = _utc("2026-04-01T12:00:00") + timedelta(days=182.5 * (1 - 0.24 / 0.7) / 0.7)
    assert abs((tl.flips[1].at - second).total_seconds()) < 1e-3
    assert abs((tl.flips[1].at - _utc("2026-09-19T19:50:12.245")).total_seconds()) < 1e-2
    # around each flip the margin goes to 0 and the winner changes
    i = tl.index_of(tl.flips[0].at)
    assert tl.margin[i] < 1e-12
    assert tl.winner[i - 1] == "A" and tl.winner[i + 1] == "B"


def test_winners_margins_and_flags_at_known_instants():
    tl = pair_timeline(KB, "A", "B", CONFIG, now=NOW)
    i = tl.index_of(_utc("2025-07-02T12:00:00"))  # A still fresh: 0.8 vs 0.7
    assert tl.winner[i] == "A"
    assert tl.authority_a[i] == pytest.approx(0.8) and tl.authority_b[i] == pytest.approx(0.7)
    assert tl.relative_margin[i] == pytest.approx(0.1 / 0.8)
    assert not tl.close_margin[i] and not tl.both_expired[i]
    j = tl.index_of(_utc("2026-10-01T00:00:00"))  # B expires: both at the floor, 0.24 vs 0.21
    assert tl.winner[j] == "A" and tl.both_expired[j]
    assert tl.authority_a[j] == pytest.approx(0.24) and tl.authority_b[j] == pytest.approx(0.21)
    assert tl.relative_margin[j] == pytest.approx(0.03 / 0.24)
    assert not tl.both_expired[j - 1]
    k = tl.index_of(tl.flips[0].at)
    assert tl.winner[k] is None and not tl.close_margin[k]  # a tie is not a close call: it is a tie
    assert tl.close_margin[k - 1] and tl.close_margin[k + 1]  # the grid points beside the flip are close


def test_the_default_range_and_now():
    tl = pair_timeline(KB, "A", "B", CONFIG, now=NOW)
    assert tl.times[0] == _utc("2025-01-01T00:00:00")  # the older fact's modified_at
    assert tl.times[-1] == _utc("2026-10-01T00:00:00") + timedelta(days=365)  # a year past the last TTL
    assert NOW in tl.times
    assert list(tl.times) == sorted(tl.times)


def test_the_sweep_agrees_with_the_pipelines_recency_at_every_instant():
    tl = pair_timeline(KB, "A", "B", CONFIG, now=NOW, points=17)
    for i, t in enumerate(tl.times):
        attrs = fact_attributes(KB, t, CONFIG)
        assert tl.recency_a[i] == attrs.factor[0] and tl.recency_b[i] == attrs.factor[1]


def test_stale_status_timeless_and_undated_facts():
    kb = make_kb(
        [
            fact("S", status="STALE", modified_at="2025-01-01"),
            fact("T", ttl="none", modified_at="2025-01-01", source_type="web"),
            fact("U", source_type="web"),
        ]
    )
    tl = pair_timeline(kb, "S", "T", CONFIG, now=NOW)
    assert tl.marks == ()
    assert set(tl.recency_a.tolist()) == {0.3} and set(tl.recency_b.tolist()) == {1.0}
    assert not tl.both_expired.any()
    marked = pair_timeline(kb, "T", "U", CONFIG, now=NOW, statuses={"T": "STALE", "U": "STALE"})
    assert marked.both_expired.all()


def test_bad_ranges_are_refused():
    with pytest.raises(ValueError, match="at least 2 points"):
        pair_timeline(KB, "A", "B", CONFIG, now=NOW, points=1)
    with pytest.raises(ValueError, match="not after its start"):
        pair_timeline(KB, "A", "B", CONFIG, now=NOW, start=NOW, end=NOW)


def _pair(a: float, b: float, *, tied: bool = False, decision: str | None = None) -> ConflictPair:
    auth = {
        "A": Authority("A", "official_documentation", 0.8, a / 0.8, 1.0, a),
        "B": Authority("B", "web", 0.7, b / 0.7, 1.0, b),
    }
    winner, loser = ("A", "B") if a >= b else ("B", "A")
    return ConflictPair(
        "A",
        "B",
        0.9,
        ("NUMBER_CHANGED",),
        ValueConflict(("NUMBER_CHANGED",), ()),
        auth,
        ("A", "B") if tied else (winner,),
        None if tied else loser,
        tied,
        margin=abs(a - b),
        decision=decision,
    )


def test_the_issue_example_is_flagged():
    # moving now past both TTLs: 0.2040 vs 0.1941, margin 0.0099 (4.85% of 0.2040, below 5%), both expired
    later = datetime(2027, 7, 1, tzinfo=UTC)
    flags = winner_flags(_pair(0.1941, 0.2040), KB, CONFIG, later)
    assert flags.close_margin and flags.both_expired
    assert flags.relative_margin == pytest.approx(0.0099 / 0.2040)
    assert flag_lines(flags) == (
        "close call: the margin 0.0099 is 4.85% of the larger authority, below winner_margin_warn 5.00%",
        "both facts expired (past their TTL or STALE): recency no longer separates them, "
        "source authority x importance decides",
    )
    assert not winner_flags(_pair(0.1941, 0.2040), KB, CONFIG.replace(winner_margin_warn=0.04), later).close_margin


def test_flags_only_for_a_winner_by_authority():
    assert not winner_flags(_pair(0.5, 0.5, tied=True), KB, CONFIG, NOW).close_margin
    assert not winner_flags(_pair(0.5, 0.49, decision="override"), KB, CONFIG, NOW).close_margin
    flags = winner_flags(_pair(0.5, 0.49), KB, CONFIG, NOW)  # at NOW A is expired, B is fresh
    assert flags.close_margin and not flags.both_expired
    assert winner_flags(_pair(0.5, 0.49), KB, CONFIG, NOW, statuses={"B": "STALE"}).both_expired


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
@settings(max_examples=50, deadline=None)
def test_relative_margin_is_symmetric_and_bounded(a, b):
    r = relative_margin(a, b)
    assert r == relative_margin(b, a)
    assert 0.0 <= r <= 1.0


@given(st.integers(2, 60), st.sampled_from(["web", "news", "community", "regulatory"]))
@settings(max_examples=25, deadline=None)
def test_the_winner_is_constant_between_flips(points, source):
    kb = make_kb([A, fact("C", source_type=source, importance_weight=1.0, modified_at="2025-06-01")])
    tl = pair_timeline(kb, "A", "C", CONFIG, now=NOW, points=points)
    secs = np.array([t.timestamp() for t in tl.times])
    cuts = [f.at.timestamp() for f in tl.flips]
    segment = np.searchsorted(np.array(cuts), secs, side="left")
    for s in set(segment.tolist()):
        inside = [w for w, g, t in zip(tl.winner, segment, secs) if g == s and t not in cuts]
        assert len(set(inside)) <= 1, (s, inside)


def test_the_envelope_over_time():
    facts = [
        fact("old", source_type="news", modified_at="2026-01-01"),
        fact("new", source_type="official_documentation", modified_at="2026-01-01"),
    ]
    corpus = make_corpus(facts, [[1.0, 0.0, 0.0], [0.99, 0.14, 0.0]])
    scen = make_scenario([1.0, 0.0, 0.0], now="2026-01-02")
    times = [datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)]
    got = envelope_timeline(corpus, scen, CRPConfig(), times)
    runs = [run_pipeline(corpus, scen, CRPConfig(), now=t) for t in times]
    assert got.times == tuple(times)
    for t, r in enumerate(runs):
        packed = {p.fact_id for p in r.envelope.order}
        assert {f for f, row in zip(got.fact_ids, got.inside) if row[t]} == packed
    assert envelope_timeline_of(times, runs).fact_ids == got.fact_ids
    with pytest.raises(ValueError, match="instant"):
        envelope_timeline_of(times, runs[:1])

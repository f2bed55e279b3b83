"""Suite sweeps over a grid (crp_core.analysis.sweep_grid): the round-grid rule by hand, the ``now`` grid,
axis parsing, and 1-D / 2-D grids over the tiny suite of ``tests/support/suites.py``."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.metrics import METRICS
from crp_core.analysis.suite import load_suite
from crp_core.analysis.sweep_grid import (
    grid_axis,
    grid_report,
    grid_rows,
    parse_axis,
    round_grid,
    suite_current,
    sweep_grid,
    time_grid,
)
from crp_core.config import CRPConfig
from crp_core.errors import ConfigError
from tests.support.suites import corpus, write_suite


def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)


# ---------------------------------------------------------------- the round-grid rule, by hand


def test_ttl_7_to_730_target_20():
    # multiples in [7, 730]: step 20 -> 20..720 = 36, step 50 -> 50..700 = 14, step 100 -> 100..700 = 7;
    # |14 - 20| = 6 is the closest
    assert round_grid(7, 730, 20) == tuple(float(50 * k) for k in range(1, 15))


def test_current_value_inserted_in_order():
    axis = grid_axis(parse_axis("ttl_days.official_documentation=7:730:20"), 365.0)
    assert len(axis.values) == 15
    assert axis.values[6:9] == (350.0, 365.0, 400.0)
    assert axis.current_index == 7


def test_current_outside_the_range_extends_the_axis():
    axis = grid_axis(parse_axis("cdr_min_relevance=0.6:0.8:5"), 0.55)
    # step 0.05: 0.6..0.8 = 5 points (exactly the target), then 0.55 in front
    assert axis.values == (0.55, 0.6, 0.65, 0.7, 0.75, 0.8)


def test_decimal_steps_print_clean():
    # step 0.05 -> 11 points (|11 - 10| = 1), step 0.1 -> 6, step 0.02 -> 26
    assert round_grid(0.3, 0.8, 10) == (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)


def test_tie_goes_to_the_larger_step():
    # step 1 -> 0, 1, 2, 3 (4 points), step 2 -> 0, 2 (2 points): both 1 away from 3
    assert round_grid(0, 3, 3) == (0.0, 2.0)


def test_integer_keys_use_whole_steps():
    # a float range would take step 0.5 (7 points); an integer key cannot go below step 1
    assert round_grid(1, 4, 10) == (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)
    assert round_grid(1, 4, 10, integer=True) == (1.0, 2.0, 3.0, 4.0)
    axis = grid_axis(parse_axis("candidate_k=10:200:8"), 50)
    # step 20 -> 20..200 = 10 points (|2|), step 50 -> 50..200 = 4 (|4|); 50 is a multiple of 20? no: inserted
    assert axis.values == (20, 40, 50, 60, 80, 100, 120, 140, 160, 180, 200)
    assert all(type(v) is int for v in axis.values)


def test_one_value_and_errors():
    assert round_grid(0.4, 0.4, 1) == (0.4,)
    with pytest.raises(ConfigError, match="LO must not exceed HI"):
        round_grid(2, 1, 5)
    with pytest.raises(ConfigError, match="N must be at least 2"):
        round_grid(1, 2, 1)
    with pytest.raises(ConfigError, match="no whole number between 1.2 and 1.8"):
        round_grid(1.2, 1.8, 3, integer=True)
    with pytest.raises(ConfigError, match="too wide"):
        round_grid(-1e308, 1e308, 5)
    with pytest.raises(ConfigError, match="no round number"):
        round_grid(0, 1e-300, 5)
    with pytest.raises(ConfigError, match="no whole hour"):
        time_grid(utc(2026, 1, 1, 0, 10), utc(2026, 1, 1, 0, 50), 5)
    # the widest time range is bounded work: decades, a few points
    got = time_grid(utc(1, 1, 1), utc(9999, 1, 1), 5)
    assert [d.year for d in got] == [2000, 4000, 6000, 8000]  # 2000-year steps: 4 points (5000: 1)


@settings(max_examples=150, deadline=None)
@given(
    lo=st.floats(-1e4, 1e4, allow_nan=False),
    span=st.floats(1e-3, 1e5, allow_nan=False),
    n=st.integers(2, 60),
)
def test_round_grid_invariants(lo, span, n):
    hi = lo + span
    vals = round_grid(lo, hi, n)
    assert vals and list(vals) == sorted(set(vals))
    assert all(lo - 1e-6 * max(1.0, abs(lo)) <= v <= hi + 1e-6 * max(1.0, abs(hi)) for v in vals)
    if len(vals) > 1:
        steps = [b - a for a, b in zip(vals, vals[1:])]
        step = steps[0]
        assert all(abs(x - step) <= 1e-4 * step for x in steps)  # one step
        mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
        assert min(abs(mantissa - m) for m in (1, 2, 5, 10)) < 1e-4  # a round step (float noise aside)
    # about N: never further from N than a factor 2.5 step change allows
    assert len(vals) <= 3 * n + 2


# ---------------------------------------------------------------- now


def test_time_grid_two_monthly():
    # 2026-01-01 .. 2027-12-31 with 12: monthly gives 24 points, two-monthly 12 (exact)
    got = time_grid(utc(2026, 1, 1), utc(2027, 12, 31), 12)
    assert [d.strftime("%Y-%m-%d") for d in got] == [
        f"{y}-{m:02d}-01" for y in (2026, 2027) for m in (1, 3, 5, 7, 9, 11)
    ]


def test_time_grid_hours_and_monday_weeks():
    # one day with 5: 1 h -> 25, 2 h -> 13, 6 h -> 5 (exact)
    assert [d.hour for d in time_grid(utc(2026, 1, 1), utc(2026, 1, 2), 5)] == [0, 6, 12, 18, 0]
    # 2026-01-01 is a Thursday: weekly points are the 8 Mondays Jan 5 .. Feb 23
    got = time_grid(utc(2026, 1, 1), utc(2026, 2, 28), 8)
    assert [(d.month, d.day) for d in got] == [(1, 5), (1, 12), (1, 19), (1, 26), (2, 2), (2, 9), (2, 16), (2, 23)]
    assert all(d.weekday() == 0 for d in got)


def test_now_axis_parses_times_with_colons_and_inserts_current():
    spec = parse_axis("now=2026-01-01T00:00:00Z:2026-01-02T00:00:00Z:5")
    assert (spec.low, spec.high, spec.target) == (utc(2026, 1, 1), utc(2026, 1, 2), 5)
    axis = grid_axis(spec, utc(2026, 1, 1, 9))
    assert [d.hour for d in axis.values] == [0, 6, 9, 12, 18, 0]


# ---------------------------------------------------------------- parsing


def test_bool_and_refused_keys():
    assert grid_axis(parse_axis("backfill=false:true:2"), True).values == (False, True)
    with pytest.raises(ConfigError, match="takes a word"):
        parse_axis("known_conflict_action=flag:off:2")
    with pytest.raises(ConfigError, match="rebuilds the HNSW index"):
        parse_axis("hnsw_m=4:32:5")
    with pytest.raises(ConfigError, match="unknown configuration key"):
        parse_axis("no_such_key=1:2:3")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cdr_min_relevance", "expects KEY=LO:HI:N"),
        ("cdr_min_relevance=0.1:0.9", "expects KEY=LO:HI:N"),
        ("cdr_min_relevance=a:0.9:3", "LO and HI must be numbers"),
        ("cdr_min_relevance=0.1:0.9:x", "N must be a whole number"),
        ("cdr_min_relevance=0.1:0.9:0", "N must be between 1 and 200"),
        ("cdr_min_relevance=0.1:inf:3", "finite"),
        ("now=2026:2027:3", "two ISO 8601 dates"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_axis(text)


# ---------------------------------------------------------------- running the grid


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return prepare_suite(corpus(), load_suite(write_suite(tmp_path_factory.mktemp("suite"))))


def test_suite_current_values(prepared):
    c = CRPConfig()
    assert suite_current(prepared.suite, c, "ttl_days.official_documentation") == 365.0
    assert suite_current(prepared.suite, c, "now", prepared.nows) == utc(2026, 6, 1)
    assert suite_current(prepared.suite, c, "fanout_width") == 0


def test_two_key_grid_by_hand(prepared):
    c = CRPConfig()
    ttl = grid_axis(parse_axis("ttl_days.official_documentation=1000:1000:1"), 365.0)
    gate = grid_axis(parse_axis("cdr_min_relevance=0.5:0.6:2"), 0.55)
    assert ttl.values == (365.0, 1000.0) and gate.values == (0.5, 0.55, 0.6)
    seen = []
    grid = sweep_grid(prepared, c, [ttl, gate], progress=lambda d, t, label: seen.append((d, t, label)))
    assert len(grid.points) == 6 and grid.runs == 7
    assert seen[0] == (1, 7, "baseline") and seen[-1] == (
        7,
        7,
        "ttl_days.official_documentation=1000.0, cdr_min_relevance=0.6",
    )
    # every metric of METRICS, mean and worst, taken from SuiteMetrics.flat()
    for m in METRICS:
        assert f"{m.name}.mean" in grid.metric_keys and f"{m.name}.worst" in grid.metric_keys
    # the point at the current values is the baseline run
    assert grid.point(365.0, 0.55).metrics == grid.baseline.metrics.flat()
    # G (official, 882 days old at 2026-06-01) is expired at a 365-day TTL, not at 1000 (decay from 500)
    expired = grid.matrix("expired.total")
    assert expired[0] == [1, 1, 1] and expired[1] == [0, 0, 0]
    # C (official, 243 days) ages at 365 (decay from 182.5), is fresh at 1000; G ages at 1000
    assert grid.point(1000.0, 0.55).run.scenario("s1").ageing == ("G",)
    report = grid_report(grid, suite_source="suite")
    assert report["axes"][0] == {
        "key": "ttl_days.official_documentation",
        "values": [365.0, 1000.0],
        "current": 365.0,
    }
    assert len(report["points"]) == 6 and report["points"][0]["values"] == {
        "ttl_days.official_documentation": 365.0,
        "cdr_min_relevance": 0.5,
    }
    rows = grid_rows(grid)
    assert rows[0]["point"] == "baseline" and rows[1]["point"] == 1 and rows[1]["expired.total"] == 1


def test_now_and_fanout_as_keys(prepared):
    c = CRPConfig()
    now = grid_axis(parse_axis("now=2026-06-01:2027-06-01:2"), utc(2026, 6, 1))
    # 1, 2, 3 months: 12, 6, 4 points; 6 months: Jul 1 and Jan 1, exactly 2; then the current value
    assert now.values == (utc(2026, 6, 1), utc(2026, 7, 1), utc(2027, 1, 1))
    grid = sweep_grid(prepared, c, [now])
    assert grid.point(utc(2026, 6, 1)).metrics == grid.baseline.metrics.flat()
    later = grid.point(utc(2027, 1, 1)).run
    # seven months later A (official, 2026-05-01) is 245 days old: ageing, no longer fresh
    assert "A" in later.scenario("s1").ageing
    fan = grid_axis(parse_axis("fanout_width=0:2:3"), 0)
    assert fan.values == (0, 1, 2)
    g2 = sweep_grid(prepared, c, [fan])
    assert g2.point(0).metrics == g2.baseline.metrics.flat()
    assert [len(r) for r in g2.matrix("recall.mean")] == [3]


def test_grid_errors(prepared):
    c = CRPConfig()
    a = grid_axis(parse_axis("stale_floor=0.1:0.2:2"), 0.3)
    with pytest.raises(ConfigError, match="both 'stale_floor'"):
        sweep_grid(prepared, c, [a, a])
    bad = grid_axis(parse_axis("cdr_min_relevance=0.5:1.5:3"), 0.55)
    with pytest.raises(ConfigError, match=r"cdr_min_relevance value 4 of 4 \(1.5\)"):
        sweep_grid(prepared, c, [bad])
    assert run_suite(prepared, c).metrics.flat()  # nothing was left half-done


@settings(max_examples=100, deadline=None)
@given(
    start=st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1)),
    hours=st.integers(1, 24 * 365 * 300),
    n=st.integers(2, 60),
)
def test_time_grid_invariants(start, hours, n):
    from datetime import timedelta

    lo = start.replace(tzinfo=UTC)
    hi = lo + timedelta(hours=hours)
    got = time_grid(lo, hi, n)
    assert got and list(got) == sorted(set(got))
    assert all(lo <= d <= hi for d in got)
    assert all(d.minute == d.second == d.microsecond == 0 for d in got)  # calendar boundaries
    assert len(got) <= 4 * n + 4

"""The engineer's search space (crp_core.analysis.tune_space): ``--param KEY=LO:HI[:log]`` items and a
TOML ``[space]`` table parsed to exact parameters, checked against the configuration's valid ranges with
errors naming the flag or the file, line and field; the log scale's values; the merge of both."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.tune_space import (
    Param,
    combine_space,
    param_for,
    param_from_flag,
    read_space_file,
    space_from_toml,
    space_including,
)
from crp_core.config import CRPConfig
from crp_core.errors import ConfigError


def test_flags_parse_to_exact_parameters():
    assert param_from_flag("ttl_days.news=7:730:log") == Param("ttl_days.news", 7.0, 730.0, 1.0, True)
    assert param_from_flag("cdr_min_relevance=0.3:0.8") == Param("cdr_min_relevance", 0.3, 0.8, 0.001)
    assert param_from_flag(" stale_floor = 0.05 : 0.6 ") == Param("stale_floor", 0.05, 0.6, 0.001)
    assert param_from_flag("contradiction_similarity=0.7:0.95") == Param("contradiction_similarity", 0.7, 0.95, 0.001)
    # a whole-number key stays whole: step 1, values handed to the config as int
    p = param_from_flag("envelope_fact_budget=4:40:log")
    assert p == Param("envelope_fact_budget", 4.0, 40.0, 1.0, True) and p.whole
    assert p.value(12.0) == 12 and isinstance(p.value(12.0), int)
    # a table cell of [0, 1] and a TTL over fractional days take a power-of-ten grid
    assert param_from_flag("source_authority.news=0.5:0.9") == Param("source_authority.news", 0.5, 0.9, 0.001)
    assert param_from_flag("ttl_days.news=0.5:90") == Param("ttl_days.news", 0.5, 90.0, 0.1)
    assert param_from_flag("ttl_days.news=2:90").value(30.0) == 30.0


@pytest.mark.parametrize(
    "item, needle",
    [
        ("ttl_days.news", "--param 'ttl_days.news': expected KEY=LO:HI or KEY=LO:HI:log"),
        ("ttl_days.news=7:90:lin", "expected KEY=LO:HI or KEY=LO:HI:log"),
        ("ttl_days.news=7", "expected KEY=LO:HI"),
        ("ttl_days.news=a:90", "--param 'ttl_days.news=a:90': lo must be a number, got 'a'"),
        ("ttl_days.news=7:nan", "hi must be a finite number"),
        ("ttl_days.news=90:7", "lo must be below hi, got 90:7"),
        ("ttl_days.news=0:90", "lo 0 is not a valid value"),
        ("cdr_min_relevance=0.5:1.5", "hi 1.5 is not a valid value: configuration key 'cdr_min_relevance' must be"),
        ("stale_floor=0:0.5:log", "a log scale needs a positive range, got lo 0"),
        ("candidate_k=10.5:50", "'candidate_k' takes whole numbers, lo is 10.5"),
        ("no_such_key=1:2", "unknown configuration key 'no_such_key'"),
        ("ttl_days.gossip=1:2", "unknown configuration key 'ttl_days.gossip'"),
        ("graph_retrieval=0:1", "cannot search 'graph_retrieval': it is not a number"),
        ("hnsw_m=4:64", "cannot search 'hnsw_m': it shapes the vector index"),
        ("fresh_fraction=0.2:1", "hi 1 is not a valid value"),
    ],
)
def test_a_bad_flag_is_refused_naming_it(item, needle):
    with pytest.raises(ConfigError) as exc:
        param_from_flag(item)
    assert needle in str(exc.value)
    assert str(exc.value).startswith(f"--param {item!r}")


SPACE = """\
# the engineer's space
[space]
"ttl_days.news" = {lo = 7, hi = 730, log = true}
cdr_min_relevance = {lo = 0.3, hi = 0.8}
ttl_days.web = {lo = 30, hi = 1000}

[space.source_authority]
news = {lo = 0.5, hi = 0.9}
"""


def test_a_space_table_parses_to_exact_parameters_in_file_order(tmp_path):
    want = (
        Param("ttl_days.news", 7.0, 730.0, 1.0, True),
        Param("cdr_min_relevance", 0.3, 0.8, 0.001),
        Param("ttl_days.web", 30.0, 1000.0, 1.0),
        Param("source_authority.news", 0.5, 0.9, 0.001),
    )
    assert space_from_toml(SPACE) == want
    f = tmp_path / "space.toml"
    f.write_text(SPACE, encoding="utf-8")
    assert read_space_file(f) == want


@pytest.mark.parametrize(
    "line, needle",
    [
        ("cdr_min_relevance = {lo = 0.3, hi = 1.5}", "line 4, space.cdr_min_relevance: hi 1.5 is not a valid value"),
        ("cdr_min_relevance = {lo = 0.3}", "line 4, space.cdr_min_relevance: hi is missing"),
        ("cdr_min_relevance = {lo = 0.3, hi = 0.8, step = 0.1}", "unknown field 'step'"),
        ('cdr_min_relevance = {lo = "low", hi = 0.8}', "lo must be a number, got 'low'"),
        ('cdr_min_relevance = {lo = 0.3, hi = 0.8, log = "yes"}', "log must be true or false, got 'yes'"),
        ("cdr_min_relevance = 0.5", "expected a table {lo = .., hi = .., log = ..}, got 0.5"),
        (
            '"ttl_days.news" = {lo = -1, hi = 30, log = true}',
            "line 4, space.ttl_days.news: a log scale needs a positive",
        ),
        ("known_conflict_action = {lo = 0, hi = 1}", "cannot search 'known_conflict_action': it is not a number"),
    ],
)
def test_a_bad_space_entry_is_refused_naming_the_file_line_and_field(tmp_path, line, needle):
    f = tmp_path / "bad.toml"
    f.write_text(f"# a space\n\n[space]\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        read_space_file(f)
    assert str(exc.value).startswith(f"space file {f}")
    assert needle in str(exc.value)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("[other]\nx = 1\n", "no [space] table"),
        ("[space]\n", "the [space] table names no key"),
        ("[space\n", "line 1: not valid TOML"),
    ],
)
def test_a_file_without_a_usable_space_is_refused(text, needle):
    with pytest.raises(ConfigError, match=None) as exc:
        space_from_toml(text, "space file s.toml")
    assert needle in str(exc.value)


def test_a_missing_space_file_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="cannot read space file"):
        read_space_file(tmp_path / "nope.toml")


def test_flags_replace_file_entries_and_add_keys_in_order():
    from_file = space_from_toml(SPACE)
    flags = (param_from_flag("cdr_min_relevance=0.4:0.6"), param_from_flag("stale_floor=0.1:0.5"))
    got = combine_space(flags, from_file)
    assert [p.key for p in got] == [
        "ttl_days.news",
        "cdr_min_relevance",
        "ttl_days.web",
        "source_authority.news",
        "stale_floor",
    ]
    assert got[1] == Param("cdr_min_relevance", 0.4, 0.6, 0.001)
    with pytest.raises(ConfigError, match="--param: 'stale_floor' is given more than once"):
        combine_space(flags + flags[1:], ())
    with pytest.raises(ConfigError, match="'stale_floor' is both searched .* and pinned with --set"):
        combine_space(flags, (), pinned=["stale_floor"])


def test_the_log_scale_keeps_whole_numbers_or_three_significant_digits():
    ttl = Param("ttl_days.news", 7.0, 730.0, 1.0, True)
    assert [ttl.round(x) for x in (7.4, 29.6, 100.5, 729.9, 800.0, 3.0)] == [7.0, 30.0, 100.0, 730.0, 730.0, 7.0]
    gate = param_from_flag("cdr_min_relevance=0.01:0.9:log")
    assert gate == Param("cdr_min_relevance", 0.01, 0.9, 0.001, True)
    assert [gate.round(x) for x in (0.0123456, 0.456789, 0.8999, 0.95, 0.005)] == [0.0123, 0.457, 0.9, 0.9, 0.01]
    assert gate.on_grid(0.457) and not gate.on_grid(0.4567)
    # the starting value is kept on a log scale: the range widened to hold it, no grid moved
    assert ttl.including(1000.0) == Param("ttl_days.news", 7.0, 1000.0, 1.0, True)
    assert ttl.including(30.0) is ttl
    with pytest.raises(ConfigError, match="not positive"):
        param_for("stale_floor", 0.05, 0.5, True).including(0.0)


def test_space_including_holds_the_base_values():
    space = (param_from_flag("ttl_days.news=60:730:log"), param_from_flag("cdr_min_relevance=0.6:0.8"))
    got = space_including(space, CRPConfig())
    assert got == (Param("ttl_days.news", 30.0, 730.0, 1.0, True), Param("cdr_min_relevance", 0.55, 0.8, 0.001))


@settings(max_examples=200, deadline=None)
@given(
    lo=st.floats(0.01, 500.0),
    span=st.floats(0.01, 5000.0),
    x=st.floats(-1e4, 1e4),
    log=st.booleans(),
    whole=st.booleans(),
)
def test_every_value_a_parameter_keeps_lies_in_its_range_on_its_grid(lo, span, x, log, whole):
    key = "ttl_days.news"
    low, high = (
        (float(round(lo)) + 1.0, float(round(lo)) + 1.0 + max(1.0, float(round(span)))) if whole else (lo, lo + span)
    )
    p = param_for(key, low, high, log)
    v = p.clamp(x)
    assert p.low <= v <= p.high
    assert p.on_grid(v)
    assert p.clamp(v) == v  # kept values are fixed points
    if p.whole:
        assert v.is_integer()

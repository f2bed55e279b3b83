"""Scenario loading and validation (docs/reference/scenarios.md): good files, the malformed corpus, round trips."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.errors import ScenarioError
from crp_core.io.scenario import dump_scenario, load_scenario, load_scenario_bytes, scenario_from_dict, scenario_to_dict
from crp_core.model import Addressed, Scenario, SubQuery
from tests.support.paths import TEST_DATA

DATA = os.path.join(TEST_DATA)
BAD = os.path.join(DATA, "bad")

EXPECTED = Scenario(
    query="Which ports does etcd use?",
    now=datetime(2025, 6, 1, tzinfo=UTC),
    sub_queries=(SubQuery("sq1", "client port", "clients"), SubQuery("sq2", "peer port")),
    addressed=(Addressed("sq1", 0.7, 1),),
    prior_outputs=("etcd listens for clients on port 2379 by default.",),
    fanout_width=2,
    config={"cdr_min_relevance": 0.5, "ttl_days": {"news": 60}},
    name="etcd ports",
)


@pytest.mark.parametrize("name", ["scenario.json", "scenario.toml"])
def test_good_json_and_toml_give_the_same_scenario(name):
    s = load_scenario(os.path.join(DATA, "good", name))
    assert s == EXPECTED
    assert dict(s.config) == {"cdr_min_relevance": 0.5, "ttl_days": {"news": 60}}
    assert [sq.id for sq in s.residual_set] == ["sq2"]
    assert [(sq.id, a.depth_weight) for sq, a in s.coverage_entries] == [("sq1", 0.7)]


def test_defaults():
    s = scenario_from_dict({"query": "q"})
    assert (
        s.now,
        s.sub_queries,
        s.addressed,
        s.prior_outputs,
        s.fanout_width,
        dict(s.config),
        s.embedding_model,
        s.name,
    ) == (None, (), (), (), 0, {}, None, "")
    s = scenario_from_dict(
        {"query": "q", "sub_queries": [{"id": "a", "text": "t"}], "addressed": [{"id": "a", "depth_weight": 1}]}
    )
    assert s.addressed == (Addressed("a", 1.0, 1),)  # window defaults to 1


def test_query_object_with_embedding():
    s = scenario_from_dict(
        {"query": {"text": "q", "embedding": [1, 0.5]}, "sub_queries": [{"id": "a", "text": "t", "embedding": [0, 1]}]}
    )
    assert s.query == "q" and s.query_embedding == (1.0, 0.5)
    assert s.sub_queries[0].embedding == (0.0, 1.0)


# file, line, field, message fragment (JSON: line of the offending item; TOML: key path, line 0)
CASES = [
    ("scenario_missing_query.json", 1, "query", "missing"),
    ("scenario_empty_query.json", 2, "query", "empty"),
    ("scenario_unknown_key.json", 20, "sub_querys", "unknown key"),
    ("scenario_bad_now.json", 20, "now", "next tuesday"),
    ("scenario_subqueries_not_list.json", 3, "sub_queries", "must be a list"),
    ("scenario_subquery_missing_text.json", 8, "sub_queries[1].text", "missing"),
    ("scenario_duplicate_subquery_id.json", 9, "sub_queries[1].id", "first at sub_queries[0]"),
    ("scenario_addressed_unknown_id.json", 15, "addressed[0].id", "not the id of any sub-query"),
    ("scenario_depth_weight_out_of_range.json", 16, "addressed[0].depth_weight", "got 1.5"),
    ("scenario_window_zero.json", 17, "addressed[0].window", ">= 1, got 0"),
    ("scenario_negative_fanout.json", 20, "fanout_width", "got -1"),
    ("scenario_prior_outputs_not_strings.json", 22, "prior_outputs[1]", "must be a string"),
    ("scenario_config_unknown_key.json", 22, "config.relevance_gate", "unknown configuration key"),
    ("scenario_config_wrong_type.json", 21, "config.candidate_k", "whole number"),
    ("scenario_config_unknown_source_type.json", 22, "config.ttl_days.blog", "unknown source type 'blog'"),
    ("scenario_nan_query_embedding.json", 4, "query.embedding", "NaN"),
    ("scenario_embedding_dim_mismatch.json", 18, "sub_queries[1].embedding", "dimension 2"),
    ("scenario_invalid_json.json", 3, "json", "invalid JSON"),
    ("scenario_not_object.json", 0, "scenario", "must be an object"),
    ("scenario_invalid.toml", 2, "toml", "invalid TOML"),
    ("scenario_bad_window.toml", 0, "addressed[0].window", ">= 1, got 0"),
]


def test_scenario_corpus_matches_the_table():
    on_disk = {n for n in os.listdir(BAD) if n.startswith("scenario_")}
    assert on_disk == {c[0] for c in CASES} | {"scenario_model_mismatch.json"}


@pytest.mark.parametrize("name,line,field,fragment", CASES, ids=[c[0] for c in CASES])
def test_bad_scenario_names_line_and_field(name, line, field, fragment):
    path = os.path.join(BAD, name)
    with pytest.raises(ScenarioError) as ei:
        load_scenario(path)
    assert len(ei.value.problems) == 1, str(ei.value)  # one problem kind per file, no cascade
    p = ei.value.problems[0]
    assert (p.line, p.field) == (line, field), str(ei.value)
    assert fragment in p.message
    if (
        line and name.endswith(".json") and field != "json" and "missing" not in p.message and not field.endswith("]")
    ):  # a list item: its own line
        # the reported line really holds the offending key (a missing key: the line of its object)
        key = field.split(".")[-1].split("[")[0]
        assert f'"{key}"' in open(path, encoding="utf-8").read().splitlines()[line - 1]


def test_model_mismatch_refused_only_against_another_model():
    path = os.path.join(BAD, "scenario_model_mismatch.json")
    assert load_scenario(path).embedding_model == "other-model"
    with pytest.raises(ScenarioError) as ei:
        load_scenario(path, expected_model="test-model")
    assert ei.value.problems[0].field == "embedding_model"
    assert "'other-model'" in ei.value.problems[0].message


def test_every_problem_is_reported():
    with pytest.raises(ScenarioError) as ei:
        scenario_from_dict(
            {
                "query": "",
                "fanout_width": 1.5,
                "config": {"bogus": 1, "stale_floor": "x"},
                "addressed": [{"id": "x", "depth_weight": -0.1, "window": True}],
            }
        )
    fields = sorted(p.field for p in ei.value.problems)
    assert fields == sorted(
        [
            "query",
            "fanout_width",
            "config.bogus",
            "config.stale_floor",
            "addressed[0].id",
            "addressed[0].depth_weight",
            "addressed[0].window",
        ]
    )
    assert all(p.line == 0 for p in ei.value.problems)  # a dict has no lines


def test_not_utf8_and_unreadable(tmp_path):
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(b'{"query": "caf\xe9"}', "s.json")
    assert (ei.value.problems[0].line, ei.value.problems[0].field) == (0, "file")
    with pytest.raises(ScenarioError) as ei:
        load_scenario(tmp_path / "missing.json")
    assert "cannot read" in ei.value.problems[0].message


def test_toml_datetime_now_is_accepted():
    s = load_scenario_bytes(b'query = "q"\nnow = 2025-06-01T02:00:00+02:00\n', "s.toml")
    assert s.now == datetime(2025, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize("now", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"])
def test_a_toml_now_out_of_range_in_utc_is_the_problem_json_gives(now):
    """A TOML datetime that falls before year 1 or after 9999 once in UTC: the JSON scenario's problem,
    not an OverflowError (issue 32)."""
    got = {}
    for name, text in (("s.json", f'{{"query": "q", "now": "{now}"}}'), ("s.toml", f'query = "q"\nnow = {now}\n')):
        with pytest.raises(ScenarioError) as ei:
            load_scenario_bytes(text.encode(), name)
        (p,) = ei.value.problems
        got[name] = (p.field, p.message)
    assert got["s.toml"] == got["s.json"] == ("now", f"timestamp out of range once converted to UTC: {now!r}")


# ---- round trips -----------------------------------------------------------------------------
_txt = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(lambda s: s.strip())
# an embedding needs a direction: the loader refuses all-zero vectors (issue 12), also once stored as float32
_vec = (
    st.lists(st.floats(-10, 10, allow_nan=False), min_size=3, max_size=3)
    .filter(lambda v: any(np.float32(x) for x in v))
    .map(tuple)
)


@st.composite
def _scenarios(draw):
    ids = draw(st.lists(_txt, max_size=5, unique=True))
    subs = tuple(SubQuery(i, draw(_txt), draw(st.none() | _txt), draw(st.none() | _vec)) for i in ids)
    addressed = tuple(Addressed(i, draw(st.floats(0, 1)), draw(st.integers(1, 9))) for i in ids if draw(st.booleans()))
    return Scenario(
        query=draw(_txt),
        query_embedding=draw(st.none() | _vec),
        now=draw(st.none() | st.datetimes(min_value=datetime(1971, 1, 1), timezones=st.just(UTC))),
        sub_queries=subs,
        addressed=addressed,
        prior_outputs=tuple(draw(st.lists(st.text(max_size=30), max_size=3))),
        fanout_width=draw(st.integers(0, 8)),
        config=draw(st.sampled_from([{}, {"stale_floor": 0.25}, {"ttl_days": {"news": 10.0}}])),
        embedding_model=draw(st.none() | _txt),
        name=draw(st.just("") | _txt),
        description=draw(st.just("") | _txt),
    )


@settings(max_examples=80, deadline=None)
@given(s=_scenarios(), fmt=st.sampled_from(["json", "toml"]))
def test_dump_then_load_round_trips(s, fmt):
    back = load_scenario_bytes(dump_scenario(s, fmt).encode("utf-8"), f"s.{fmt}")
    assert back == s
    assert dict(back.config) == dict(s.config)
    assert scenario_from_dict(scenario_to_dict(s)) == s
    json.dumps(scenario_to_dict(s))  # plain JSON types only


def test_dump_rejects_unknown_format():
    with pytest.raises(ValueError):
        dump_scenario(EXPECTED, "yaml")


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(["scenario.json", "scenario.toml"]), data=st.data())
def test_mutated_scenarios_never_crash(name, data):
    raw = bytearray(open(os.path.join(DATA, "good", name), "rb").read())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i : i + data.draw(st.integers(0, 3))] = data.draw(
            st.sampled_from([b"", b'"', b"{", b"]", b",", b"\n", b"NaN", b"null", b"-1", b"\xff", b"=", b"1e999"])
        )
    try:
        load_scenario_bytes(bytes(raw), name)
    except ScenarioError as exc:
        assert exc.problems and all(p.field for p in exc.problems)


def test_a_table_in_config_for_a_key_that_holds_a_value_is_refused_at_that_key():
    """{"candidate_k": {}} ran on the default without a word; {"candidate_k": {"a": 1}} was 'config.candidate_k.a'."""
    text = (
        '{\n "query": {"text": "q", "embedding": [1, 0]},\n "config": {\n  "candidate_k": {},\n'
        '  "gossip": {"x": 1}\n }\n}\n'
    )
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(text.encode(), "s.json")
    got = [(p.line, p.field, p.message) for p in ei.value.problems]
    assert got == [
        (4, "config.candidate_k", "configuration key 'candidate_k' expects a whole number, got {}"),
        (5, "config.gossip", "unknown configuration key 'gossip'; the keys: docs/reference/config.md"),
    ]
    ok = scenario_from_dict({"query": "q", "config": {"ttl_days": {"news": 3}, "importance": {}}})
    assert ok.config == {"ttl_days": {"news": 3}, "importance": {}}

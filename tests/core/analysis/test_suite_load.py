"""Suite loading: order, names, the expect table's strict validation (file, line, field), unknown ids
checked against a CKF, and the invariants of the metrics (docs/decisions/suites.md §1-§3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.metrics import METRICS, scenario_metrics, suite_metrics
from crp_core.analysis.suite import check_suite, load_suite
from crp_core.config import CRPConfig
from crp_core.errors import FileProblem, SuiteError
from crp_core.io.scenario import dump_scenario, load_scenario_bytes, scenario_from_dict, scenario_to_dict
from crp_core.model import Expectations, ExpectedConflict
from tests.support.paths import REPO_ROOT
from tests.support.suites import corpus, scenario_docs, write_suite

ROOT = REPO_ROOT


def _problems(exc: SuiteError) -> list[tuple[str, int, str]]:
    return [(Path(p.file).name, p.line, p.field) for p in exc.problems if isinstance(p, FileProblem)]


def test_folder_order_names_and_subfolders(tmp_path):
    d = write_suite(tmp_path / "suite")
    (d / "more").mkdir()
    (d / "more" / "a.json").write_text(json.dumps({"query": "q", "now": "2026-06-01T00:00:00Z"}))
    (d / "_draft.json").write_text("{not json")  # skipped: leading underscore
    (d / ".hidden").mkdir()
    (d / ".hidden" / "x.json").write_text("{")
    suite = load_suite(d)
    assert suite.names == ("a", "s1", "s2")  # more/a.json sorts before s1.json; a is named by its stem
    assert suite.get("s1").expect.must_include == ("A", "C", "D")
    assert suite.get("a").expect == Expectations()
    assert load_suite([d / "s2.json", d / "s1.json", d / "s2.json"]).names == ("s2", "s1")
    assert suite.select(["s2", "a"]).names == ("a", "s2")


def test_a_directory_ckfs_manifest_is_not_a_scenario_of_the_suite(tmp_path):
    """A suite kept among a directory CKF's own files (facts.jsonl, manifest.json, scenario files): the manifest
    describes the vectors and is left out; elsewhere a file of that name is a scenario like any other."""
    d = write_suite(tmp_path / "kb")
    (d / "manifest.json").write_text(json.dumps({"embedding_model": "m", "dim": 8}))
    with pytest.raises(SuiteError) as exc:
        load_suite(d)  # no facts.jsonl beside it: a scenario file, refused for its unknown keys
    assert {name for name, _, _ in _problems(exc.value)} == {"manifest.json"}
    (d / "facts.jsonl").write_text("")
    assert load_suite(d).names == ("s1", "s2")


def test_a_list_of_folders_and_files_is_one_suite(tmp_path):
    docs = scenario_docs()
    one = write_suite(tmp_path / "one", {"s1": docs["s1"]})
    two = write_suite(tmp_path / "two", {"s2": docs["s2"]})
    (two / "sub").mkdir()
    (two / "sub" / "a.json").write_text(json.dumps({"query": "q", "now": "2026-06-01T00:00:00Z"}))
    assert load_suite([one, two]).names == ("s1", "s2", "a")  # each folder walked in path order (s2.json, sub/a.json)
    assert load_suite([two / "s2.json", one]).names == ("s2", "s1")
    assert load_suite([one, one / "s1.json", one]).names == ("s1",)  # a file reached twice is loaded once
    (tmp_path / "empty").mkdir()
    with pytest.raises(SuiteError) as err:
        load_suite([one, tmp_path / "empty"])
    assert [p.message for p in err.value.problems] == ["no scenario files (*.json, *.toml) in this folder"]


def test_bad_files_are_refused_with_file_line_and_field(tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    good = scenario_docs()["s1"]
    bad_expect = dict(
        good,
        name="b1",
        expect={
            "must_include": ["A", 3],
            "must_exclude": ["A"],
            "conflicts": [{"fact_a": "A", "fact_b": "B", "winner": "C"}],
            "max_leaks": -1,
            "min_recall": 2,
            "surprise": True,
        },
    )
    (d / "b1.json").write_text(json.dumps(bad_expect, indent=1))
    (d / "b2.json").write_text(json.dumps(dict(good, name="b2", expect=["A"]), indent=1))
    (d / "b3.json").write_text('{"query": "q",\n "expect": {"must_include": [\n')  # invalid JSON, line 3
    (d / "b4.toml").write_text(
        'query = "q"\nname = "b4"\n[expect]\nmax_tokens = 0\n'
        '[[expect.conflicts]]\nfact_a = "A"\nfact_b = "A"\nwinner = "A"\n'
    )
    (d / "b5.json").write_text(json.dumps(dict(good, name="s1")))  # fine on its own
    (d / "b6.json").write_text(json.dumps(dict(good, name="s1")))  # ... but its name is taken
    with pytest.raises(SuiteError) as ei:
        load_suite(d)
    got = _problems(ei.value)
    lines = {(f, fld): line for f, line, fld in got}
    assert ("b1.json", "expect.must_include[1]") in lines and lines[("b1.json", "expect.must_include[1]")] > 1
    for fld in (
        "expect.must_exclude[0]",
        "expect.conflicts[0].winner",
        "expect.max_leaks",
        "expect.min_recall",
        "expect.surprise",
    ):
        assert ("b1.json", fld) in lines, fld
    assert ("b2.json", "expect") in lines
    assert ("b3.json", "json") in lines and lines[("b3.json", "json")] == 3
    assert ("b4.toml", "expect.max_tokens") in lines and ("b4.toml", "expect.conflicts[0].fact_b") in lines
    assert ("b6.json", "name") in lines and not any(f == "b5.json" for f, _, _ in got)
    text = str(ei.value)
    assert "b1.json: line" in text and "field 'expect.conflicts[0].winner'" in text


def test_unknown_ids_are_reported_against_the_ckf(tmp_path):
    docs = scenario_docs()
    docs["s2"]["expect"] = {
        "must_exclude": ["B", "NOPE"],
        "conflicts": [{"fact_a": "A", "fact_b": "ZZ", "winner": "A"}],
    }
    suite = load_suite(write_suite(tmp_path / "s", docs))
    c = corpus()
    problems = check_suite(suite, c.kb)
    assert [(Path(p.file).name, p.field, p.fact_id) for p in problems] == [
        ("s2.json", "expect.must_exclude[1]", "NOPE"),
        ("s2.json", "expect.conflicts[0].fact_b", "ZZ"),
    ]
    assert all(p.line > 1 for p in problems)
    with pytest.raises(SuiteError, match="NOPE"):
        prepare_suite(c, suite)


def test_unknown_ids_of_uploaded_files_name_their_line(tmp_path):
    """Uploaded files have no path to read again: the lines come from the bytes given."""
    from crp_core.analysis.suite import suite_from_files

    docs = scenario_docs()
    docs["s2"]["expect"] = {"must_exclude": ["B", "NOPE"]}
    data = json.dumps(docs["s2"], indent=1).encode()
    suite = suite_from_files([("s2.json", data)])
    (p,) = check_suite(suite, corpus().kb)
    expected = data.decode()[: data.decode().index('"NOPE"')].count("\n") + 1
    assert (p.file, p.line, p.field, p.fact_id) == ("s2.json", expected, "expect.must_exclude[1]", "NOPE")
    assert expected > 1


def test_expect_round_trips_through_json_and_toml():
    s = scenario_from_dict(scenario_docs()["s1"])
    assert s.expect.conflicts[2] == ExpectedConflict("H1", "H2", None)
    assert s.expect.conflicts[1].loser == "E" and s.expect.max_tokens is None
    for fmt in ("json", "toml"):
        assert load_scenario_bytes(dump_scenario(s, fmt).encode(), f"x.{fmt}") == s
    assert scenario_from_dict(scenario_to_dict(s)) == s


def test_the_sample_suite_loads_and_matches_the_sample_ckf():
    from crp_core.io.ckf import load_ckf

    suite = load_suite(ROOT / "sample_ckf" / "scenarios")
    assert len(suite) >= 12
    assert {"etcd_upgrade", "ai_act_compliance", "payments_api_migration", "gdpr_breach_response"} <= set(suite.names)
    domains = {fid.split("-")[0] for s in suite for fid in s.expect.fact_ids()}
    assert domains == {"k8s", "gov", "lum"}
    assert all(s.expect.must_include and s.expect.conflicts for s in suite)
    assert check_suite(suite, load_ckf(str(ROOT / "sample_ckf" / "knowledge_base.jsonl"))) == ()


# ---- invariants -------------------------------------------------------------------------------------
_RUN = None


def _run():
    global _RUN
    if _RUN is None:
        import tempfile

        d = Path(tempfile.mkdtemp())
        _RUN = run_suite(prepare_suite(corpus(), load_suite(write_suite(d))), CRPConfig())
    return _RUN


IDS = ["A", "B", "C", "D", "E", "F", "G", "H1", "H2"]


@settings(max_examples=60, deadline=None)
@given(
    include=st.lists(st.sampled_from(IDS), unique=True),
    exclude=st.lists(st.sampled_from(IDS), unique=True),
    pairs=st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(IDS), st.booleans()), max_size=4),
    grades=st.dictionaries(st.sampled_from(IDS), st.integers(0, 3)),
)
def test_metric_invariants(include, exclude, pairs, grades):
    run = _run()
    exclude = [f for f in exclude if f not in include]
    conflicts, seen = [], set()
    for a, b, a_wins in pairs:
        if a != b and frozenset((a, b)) not in seen:
            seen.add(frozenset((a, b)))
            conflicts.append(ExpectedConflict(a, b, a if a_wins else b))
    e = Expectations(
        must_include=tuple(include), must_exclude=tuple(exclude), conflicts=tuple(conflicts), relevance=grades
    )
    per = [
        scenario_metrics(r, e, name=n, reference=ref)
        for n, r, ref in zip(("x", "y"), run.results, (None, run.metrics.scenarios[0].envelope))
    ]
    for m in per:
        assert m.recall is None if not include else 0.0 <= m.recall <= 1.0
        assert set(m.included) | set(m.missing) == set(include) and not set(m.included) & set(m.missing)
        assert set(m.leaks) <= set(m.envelope) and set(m.expired).isdisjoint(m.ageing)
        assert all(w.loser in m.envelope for w in m.wrong_winners)
        assert all(c.fact_a in m.envelope and c.fact_b in m.envelope for c in m.contradictions)
        relevant = {f for f, g in grades.items() if g >= 1}
        if not relevant:
            assert all(m.value(k) is None for k in ("ndcg@10", "mrr", "precision@10", "recall@10"))
        else:
            assert all(0.0 <= m.value(k) <= 1.0 + 1e-12 for k in ("ndcg@10", "mrr", "precision@10", "recall@10"))
            assert set(m.relevant_missing) == relevant - set(m.envelope[:10])
        assert m.grades == tuple(grades.get(f, 0) for f in m.envelope)
    summary = suite_metrics(per).summary
    for info in METRICS:
        s = summary[info.name]
        if s.mean is None:
            continue
        assert (s.worst <= s.mean + 1e-12) if info.better == "higher" else (s.worst >= s.mean - 1e-12)


# ---- graded relevance -------------------------------------------------------------------------------
def test_relevance_labels_round_trip_and_their_ids_are_checked(tmp_path):
    docs = scenario_docs()
    docs["s1"]["expect"]["relevance"] = {"A": 3, "C": 1, "G": 0}
    docs["s1"]["expect"]["min_ndcg@10"] = 0.5
    docs["s2"]["expect"]["relevance"] = {"D": 2, "NOPE": 1}
    suite = load_suite(write_suite(tmp_path / "s", docs))
    e = suite.get("s1").expect
    assert dict(e.relevance) == {"A": 3, "C": 1, "G": 0} and e.thresholds["min_ndcg@10"] == 0.5
    assert {"A", "C", "G"} <= e.fact_ids() and "NOPE" in suite.get("s2").expect.fact_ids()
    s = suite.get("s1").scenario
    for fmt in ("json", "toml"):  # TOML quotes the key "min_ndcg@10"
        assert load_scenario_bytes(dump_scenario(s, fmt).encode(), f"x.{fmt}") == s
    (p,) = check_suite(suite, corpus().kb)
    assert (Path(p.file).name, p.field, p.fact_id) == ("s2.json", "expect.relevance.NOPE", "NOPE") and p.line > 1


def test_bad_relevance_labels_name_file_line_and_field(tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    good = scenario_docs()["s1"]
    bad = dict(
        good,
        expect={
            "must_include": ["A"],
            "must_exclude": ["B"],
            "relevance": {"A": 0, "B": 2, "C": 4, "D": True, "E": 1.5, "F": "high"},
            "min_mrr": 1.5,
        },
    )
    (d / "r1.json").write_text(json.dumps(bad, indent=1))
    (d / "r2.json").write_text(json.dumps(dict(good, name="r2", expect={"relevance": ["A"]}), indent=1))
    (d / "r3.json").write_text(
        json.dumps(dict(good, name="r3", expect={"relevance": {"A": 0}, "min_ndcg@10": 0.5}), indent=1)
    )
    (d / "r4.toml").write_text(
        'query = "q"\nname = "r4"\n[expect]\n"min_recall@10" = 0.5\n[expect.relevance]\nA = -1\n'
    )
    with pytest.raises(SuiteError) as ei:
        load_suite(d)
    got = {(f, fld): (line, msg) for f, line, fld, msg in _with_messages(ei.value)}
    text = str(ei.value)
    assert "r1.json: line" in text
    assert got[("r1.json", "expect.relevance.A")][1] == "'A' is in expect.must_include but graded 0 (not relevant)"
    assert "must_exclude but graded 2" in got[("r1.json", "expect.relevance.B")][1]
    for fid, shown in (("C", "4"), ("D", "true"), ("E", "1.5"), ("F", '"high"')):
        line, msg = got[("r1.json", f"expect.relevance.{fid}")]
        assert msg == f"must be a grade, a whole number from 0 to 3, got {shown}" and line > 1
    assert got[("r1.json", "expect.min_mrr")][1] == "must be a number between 0 and 1, got 1.5"
    assert got[("r2.json", "expect.relevance")][1].startswith("must be a table of fact id -> grade")
    assert got[("r3.json", "expect.min_ndcg@10")][1] == (
        "bounds a ranking metric, but expect.relevance grades no fact 1 or more"
    )
    assert ("r4.toml", "expect.relevance.A") in got and ("r4.toml", "expect.min_recall@10") in got


def _with_messages(exc: SuiteError) -> list[tuple[str, int, str, str]]:
    return [(Path(p.file).name, p.line, p.field, p.message) for p in exc.problems if isinstance(p, FileProblem)]


def test_not_conflicts_labels_round_trip_and_bad_ones_name_file_line_and_field(tmp_path):
    """``expect.not_conflicts``: pairs of two different facts, each once, none also an expected conflict;
    ``max_false_conflicts`` needs one; the ids are checked against the CKF; JSON and TOML round trip."""
    docs = scenario_docs()
    docs["s1"]["expect"]["not_conflicts"] = [{"fact_a": "C", "fact_b": "G"}]
    docs["s1"]["expect"]["max_false_conflicts"] = 0
    docs["s2"]["expect"]["not_conflicts"] = [{"fact_a": "D", "fact_b": "NOPE"}]
    suite = load_suite(write_suite(tmp_path / "s", docs))
    e = suite.get("s1").expect
    assert e.not_conflicts == (("C", "G"),) and e.thresholds["max_false_conflicts"] == 0 and "G" in e.fact_ids()
    s = suite.get("s1").scenario
    for fmt in ("json", "toml"):
        assert load_scenario_bytes(dump_scenario(s, fmt).encode(), f"x.{fmt}") == s
    (p,) = check_suite(suite, corpus().kb)
    assert (Path(p.file).name, p.field, p.fact_id) == ("s2.json", "expect.not_conflicts[0].fact_b", "NOPE")
    good = scenario_docs()["s1"]
    (d := tmp_path / "bad").mkdir()
    bad = {
        **good,
        "expect": {
            "conflicts": [{"fact_a": "A", "fact_b": "B", "winner": "A"}],
            "not_conflicts": [
                {"fact_a": "B", "fact_b": "A"},
                {"fact_a": "C", "fact_b": "C"},
                {"fact_a": "C", "fact_b": "G"},
                {"fact_a": "G", "fact_b": "C"},
                {"fact_a": "D", "fact_b": "E", "winner": "D"},
                "F",
            ],
        },
    }
    (d / "n1.json").write_text(json.dumps(bad, indent=1))
    (d / "n2.json").write_text(json.dumps(dict(good, name="n2", expect={"max_false_conflicts": 1}), indent=1))
    with pytest.raises(SuiteError) as ei:
        load_suite(d)
    got = {(f, fld): msg for f, _, fld, msg in _with_messages(ei.value)}
    assert got[("n1.json", "expect.not_conflicts[0]")] == "the pair 'B' / 'A' is also in expect.conflicts"
    assert got[("n1.json", "expect.not_conflicts[1].fact_b")] == "a pair needs two different facts, got 'C' twice"
    assert got[("n1.json", "expect.not_conflicts[3]")].startswith("the pair 'G' / 'C' is listed twice (first at")
    assert got[("n1.json", "expect.not_conflicts[4].winner")].startswith("unknown key; allowed: fact_a, fact_b")
    assert got[("n1.json", "expect.not_conflicts[5]")] == 'must be an object {fact_a, fact_b}, got "F"'
    assert got[("n2.json", "expect.max_false_conflicts")] == (
        "bounds the flags of expect.not_conflicts, which is empty or missing"
    )

"""Reading files safely and huge inputs (docs/decisions/hardening.md, "Files" and "Huge inputs"):
every reader refuses a FIFO, link loop or dangling link by name instead of blocking; problems are
located in O(log n) each and capped per file; huge integers are refused as ConfigError / located
problems, never an OverflowError; suite discovery refuses what it cannot read instead of skipping it."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from crp_core.analysis.gate import SUITE_METRICS_KIND, baseline_from_report, read_baseline
from crp_core.analysis.suite import check_suite, load_suite, suite_from_files
from crp_core.config import CRPConfig
from crp_core.decisions import TriageStoreError
from crp_core.errors import MAX_PROBLEMS, ConfigError, FileProblem, ScenarioError, SuiteError, ValidationError
from crp_core.io.scenario import load_scenario, load_scenario_bytes
from crp_core.support.files import read_regular_file, regular_or_absent
from crp_core.triage.store import DecisionStore
from tests.support.suites import corpus, scenario_docs, write_suite

HUGE = 10**400
HUGE_TEXT = "1" + "0" * 400
OVER_LIMIT = "1" + "0" * 5000  # beyond Python's int-str conversion limit (4300 digits)


@pytest.fixture(autouse=True)
def no_hang():
    """A reader that blocks fails the test after 20 s instead of hanging the run."""

    def boom(signum, frame):
        raise AssertionError("blocked: a reader waited on a special file")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _special(tmp_path: Path, kind: str, name: str = "x.json") -> Path:
    p = tmp_path / name
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "loop":
        p.symlink_to(p)
    elif kind == "dangling":
        p.symlink_to(tmp_path / "nowhere.json")
    elif kind == "folder":
        p.mkdir()
    return p


SPECIAL = {"fifo": "FIFO", "loop": "symlink loop", "dangling": "broken symbolic link", "folder": "folder"}


# ---- D1: one reader for every file ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_read_regular_file_refuses_special_files_by_name(tmp_path, kind):
    p = _special(tmp_path, kind)
    with pytest.raises(ValidationError) as ei:
        read_regular_file(p, max_bytes=100, what="scenario")
    (prob,) = ei.value.problems
    assert (prob.line, prob.field) == (0, "file") and SPECIAL[kind] in prob.message and str(p) in prob.message
    assert str(p) in ei.value.what


def test_read_regular_file_size_cap_and_content(tmp_path):
    p = tmp_path / "a.json"
    p.write_bytes(b"x" * 101)
    with pytest.raises(ValidationError, match="over the limit of 100 bytes"):
        read_regular_file(p, max_bytes=100, what="baseline")
    assert read_regular_file(p, max_bytes=101, what="baseline") == b"x" * 101
    assert read_regular_file(tmp_path / "a.json", max_bytes=10**9, what="x") == b"x" * 101
    with pytest.raises(ValidationError, match="cannot read it"):
        read_regular_file(tmp_path / "missing.json", max_bytes=100, what="scenario")


@pytest.mark.parametrize("kind", ["fifo", "loop", "dangling"])
def test_every_reader_refuses_a_special_file(tmp_path, kind):
    p = _special(tmp_path, kind)
    with pytest.raises(ScenarioError, match="refused"):
        load_scenario(p)
    with pytest.raises(ConfigError, match="cannot read config file"):
        CRPConfig.load(p)
    with pytest.raises(ValidationError, match=f"baseline {p} refused"):
        read_baseline(p)
    with pytest.raises(SuiteError) as ei:
        load_suite(p)  # a suite given as one file
    assert ei.value.problems[0].file == str(p) and ei.value.problems[0].field == "file"
    with pytest.raises(TriageStoreError, match="not usable as a decision database"):
        DecisionStore(p, create=False, readonly=True)
    with pytest.raises(TriageStoreError, match="not usable as a decision database"):
        DecisionStore(p)  # a dangling link: SQLite would have created its target


def test_triage_path_is_a_regular_file_or_absent(tmp_path):
    assert regular_or_absent(tmp_path / "new.sqlite") is None
    (tmp_path / "f").write_bytes(b"")
    assert regular_or_absent(tmp_path / "f") is None
    assert "FIFO" in (regular_or_absent(_special(tmp_path, "fifo")) or "")
    with DecisionStore(tmp_path / "new.sqlite") as store:  # a new file is still created
        assert not store.readonly


def test_config_load_reads_a_regular_file(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text("candidate_k = 7\n")
    assert CRPConfig.load(p).candidate_k == 7
    p.write_text("candidate_k = 'x'\n")
    with pytest.raises(ConfigError, match=f"config file {p}: .*candidate_k"):
        CRPConfig.load(p)


# ---- D2: locating and capping problems -------------------------------------------------------------------
def test_150k_duplicates_are_located_and_capped():
    """O(problems x size) took minutes here; each problem is now located by bisection and at most
    MAX_PROBLEMS are kept, the others counted."""
    doc = {"query": "q", "expect": {"must_include": ["k8s-0001"] * 150_000}}
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(json.dumps(doc, indent=1).encode(), "s.json")
    probs = ei.value.problems
    assert len(probs) == MAX_PROBLEMS + 1
    assert [(p.line, p.field) for p in probs[:2]] == [(6, "expect.must_include[1]"), (7, "expect.must_include[2]")]
    assert probs[MAX_PROBLEMS - 1].line == MAX_PROBLEMS + 5
    assert (probs[-1].line, probs[-1].field) == (0, "problems")
    assert f"{149_999 - MAX_PROBLEMS} more problem(s) not listed (149999 in all" in probs[-1].message
    assert "\n  ... and" not in str(ei.value)  # within the 200 lines a ValidationError prints


def test_200k_unknown_ids_are_located_and_capped_per_file(tmp_path):
    doc = {"name": "big", "query": "q", "expect": {"must_include": [f"nope-{i}" for i in range(200_000)]}}
    (tmp_path / "big.json").write_text(json.dumps(doc, indent=1))
    write_suite(tmp_path, {"s2": scenario_docs()["s2"]})
    suite = load_suite(tmp_path)
    probs = check_suite(suite, corpus().kb)
    big = [p for p in probs if p.file.endswith("big.json")]
    assert len(big) == MAX_PROBLEMS + 1
    assert (big[0].line, big[0].field, big[0].fact_id) == (6, "expect.must_include[0]", "nope-0")
    assert isinstance(big[-1], FileProblem) and "199900 more problem(s)" in big[-1].message


def test_many_conflicts_against_many_exclusions_are_linear():
    n = 30_000
    doc = {
        "query": "q",
        "expect": {
            "must_exclude": [f"w{i}" for i in range(n)],
            "conflicts": [{"fact_a": f"w{i}", "fact_b": f"l{i}", "winner": f"w{i}"} for i in range(n)],
        },
    }
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(json.dumps(doc).encode(), "s.json")
    assert len(ei.value.problems) == MAX_PROBLEMS + 1
    assert "the winner 'w0' is in expect.must_exclude" in ei.value.problems[0].message


# ---- D3: huge integers -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "item, key",
    [
        (f"cdr_min_relevance={HUGE_TEXT}", "cdr_min_relevance"),
        (f"ttl_days.news={HUGE_TEXT}", "ttl_days.news"),
        (f"source_authority.news={HUGE_TEXT}", "source_authority.news"),
        (f"candidate_k={HUGE_TEXT}", "candidate_k"),
        (f"cdr_min_relevance={OVER_LIMIT}", "cdr_min_relevance"),
        (f"candidate_k={OVER_LIMIT}", "candidate_k"),
    ],
)
def test_huge_integers_in_set_args_are_config_errors(item, key):
    with pytest.raises(ConfigError) as ei:
        CRPConfig().with_set_args([item])
    msg = str(ei.value)
    assert key in msg and len(msg) < 300  # the digits are not echoed


def test_huge_integers_through_every_config_path(tmp_path):
    for value in (HUGE, -HUGE, 10**5000):
        for key in ("cdr_min_relevance", "candidate_k", "ttl_days.news", "importance.web"):
            with pytest.raises(ConfigError, match="digits"):
                CRPConfig().with_overrides({key: value})
    with pytest.raises(ConfigError, match="an integer of 401 digits"):
        CRPConfig(cdr_min_relevance=HUGE)  # type: ignore[arg-type]
    p = tmp_path / "c.toml"
    p.write_text(f"cdr_min_relevance = {HUGE_TEXT}\n")
    with pytest.raises(ConfigError, match="must be between -1 and 1"):
        CRPConfig.load(p)
    p.write_text(f"candidate_k = {OVER_LIMIT}\n")
    with pytest.raises(ConfigError, match="more than 4300 digits"):
        CRPConfig.load(p)


def test_huge_integers_in_a_scenario_are_located_problems():
    h = HUGE_TEXT
    text = (
        f'{{\n "query": "q",\n "config": {{"cdr_min_relevance": {h}}},\n'
        f' "expect": {{"must_include": ["a"],\n  "max_leaks": {h},\n  "min_recall": {h}}}\n}}\n'
    )
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(text.encode(), "s.json")
    got = {(p.line, p.field): p.message for p in ei.value.problems}
    assert "must be between -1 and 1, got an integer of 401 digits" in got[(3, "config.cdr_min_relevance")]
    assert got[(5, "expect.max_leaks")] == "must be a whole number between 0 and 2^53, got an integer of 401 digits"
    assert got[(6, "expect.min_recall")] == "must be a number between 0 and 1, got an integer of 401 digits"


def test_a_5000_digit_integer_is_located_in_json_and_toml():
    text = f'{{\n "query": "q",\n "fanout_width": {OVER_LIMIT}\n}}\n'
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(text.encode(), "s.json")
    (p,) = ei.value.problems
    assert (p.line, p.field) == (3, "json")
    assert p.message == (
        "invalid JSON: a number of more than 4300 digits (no setting or label needs one) at line 3, column 18"
    )
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(f'query = "q"\nfanout_width = {OVER_LIMIT}\n'.encode(), "s.toml")
    (p,) = ei.value.problems
    assert (p.line, p.field) == (2, "toml") and "line 2, column 16" in p.message


def test_thresholds_say_one_message_whatever_is_wrong():
    def msg(key, value):
        doc = {"query": "q", "expect": {"must_include": ["a"], key: value}}
        with pytest.raises(ScenarioError) as ei:
            load_scenario_bytes(json.dumps(doc).encode(), "s.json")
        return ei.value.problems[0].message

    for bad in ("0", -1, 0.5, True, None, 2**53 + 1):
        assert msg("max_leaks", bad).startswith("must be a whole number between 0 and 2^53, got ")
    assert msg("max_tokens", 0).startswith("must be a whole number between 1 and 2^53")
    for bad in ("0.5", -0.1, 1.5, False):
        assert msg("min_recall", bad).startswith("must be a number between 0 and 1, got ")
    s = load_scenario_bytes(
        json.dumps({"query": "q", "expect": {"max_leaks": 2.0, "max_tokens": 2**53}}).encode(), "s.json"
    )
    assert dict(s.expect.thresholds) == {"max_leaks": 2, "max_tokens": 2**53}


# ---- mismatches: lines and messages ----------------------------------------------------------------------
def test_json_errors_say_line_and_column():
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(b'{"query": "q",\n "name": "unterminated}', "s.json")
    (p,) = ei.value.problems
    assert (p.line, p.message) == (2, "invalid JSON: Unterminated string starting at line 2, column 10")
    with pytest.raises(ScenarioError) as ei:
        load_scenario_bytes(b'{"query": "q"\n "name": "x"}', "s.json")
    assert ei.value.problems[0].message == "invalid JSON: Expecting ',' delimiter at line 2, column 2"


def test_duplicate_scenario_names_name_the_line_of_the_name(tmp_path):
    a = {"query": "q", "name": "same"}
    (tmp_path / "a.json").write_text(json.dumps(a, indent=1))
    (tmp_path / "b.json").write_text(json.dumps({"query": "q", "description": "d", "name": "same"}, indent=1))
    with pytest.raises(SuiteError) as ei:
        load_suite(tmp_path)
    (p,) = ei.value.problems
    assert (Path(p.file).name, p.line, p.field) == ("b.json", 4, "name")
    with pytest.raises(SuiteError) as ei:
        suite_from_files([("a.json", json.dumps(a).encode()), ("b.json", b'{\n"query": "q",\n"name": "same"}')])
    assert ei.value.problems[0].line == 3
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.json").write_text(json.dumps({"query": "q"}))
    (tmp_path / "a.json").write_text(json.dumps({"query": "q"}))
    (tmp_path / "b.json").unlink()
    with pytest.raises(SuiteError) as ei:
        load_suite(tmp_path)  # both named by the stem "a": no name field to point at
    assert ei.value.problems[0].line == 0


def test_baseline_problems_name_their_line(tmp_path):
    doc = {
        "kind": SUITE_METRICS_KIND,
        "scenarios": {"s1": {"metrics": {"recall": 1.0, "leaks": "x"}}, "s2": {"metrics": [1]}},
    }
    p = tmp_path / "b.json"
    p.write_text(json.dumps(doc, indent=1))
    with pytest.raises(ValidationError) as ei:
        read_baseline(p)
    assert [(q.line, q.field) for q in ei.value.problems] == [
        (7, "scenarios.s1.metrics.leaks"),
        (11, "scenarios.s2.metrics"),
    ]
    p.write_text('{"kind": "other"}')
    with pytest.raises(ValidationError) as ei:
        read_baseline(p)
    assert (ei.value.problems[0].line, ei.value.problems[0].field) == (1, "kind")
    p.write_text('{"kind": "x",\n "scenarios": {"a": 1')
    with pytest.raises(ValidationError, match="line 2, column 22"):
        read_baseline(p)
    with pytest.raises(ValidationError) as ei:
        baseline_from_report({"kind": SUITE_METRICS_KIND, "scenarios": {"s": {"metrics": {"leaks": "x"}}}})
    assert ei.value.problems[0].line == 0  # a parsed document has no lines


@pytest.mark.parametrize(
    ("version", "shown"), [("2", "2"), ('"1"', "'1'"), ("true", "True"), ("null", "None"), ("1.5", "1.5")]
)
def test_a_baseline_of_another_version_is_refused_at_its_line(tmp_path, version, shown):
    """Any version read as version 1 (a newer layout would be misread without a word)."""
    p = tmp_path / "b.json"
    p.write_text(f'{{"kind": "{SUITE_METRICS_KIND}",\n "version": {version},\n "scenarios": {{}}}}')
    with pytest.raises(ValidationError) as ei:
        read_baseline(p)
    assert [(q.line, q.field, q.message) for q in ei.value.problems] == [
        (2, "version", f"metrics file version {shown}; this crp-inspect reads version 1")
    ]
    p.write_text(f'{{"kind": "{SUITE_METRICS_KIND}", "scenarios": {{}}}}')
    assert read_baseline(p).scenarios == {}  # absent: version 1


def test_a_baseline_metric_beyond_a_float_is_a_problem_not_an_overflow(tmp_path):
    """A 401-digit integer raised OverflowError in float(): a traceback."""
    p = tmp_path / "b.json"
    p.write_text(
        f'{{"kind": "{SUITE_METRICS_KIND}",\n "scenarios": {{"s": {{"metrics": {{"leaks": 1{"0" * 400}}}}}}}}}'
    )
    with pytest.raises(ValidationError) as ei:
        read_baseline(p)
    assert [(q.line, q.field) for q in ei.value.problems] == [(2, "scenarios.s.metrics.leaks")]
    assert "got an integer of 401 digits" in ei.value.problems[0].message


# ---- D5: suite discovery refuses what it cannot read -----------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "loop", "dangling"])
def test_a_special_file_in_a_suite_folder_is_refused_not_skipped(tmp_path, kind):
    d = write_suite(tmp_path / "suite")
    p = _special(d, kind, "x.json")
    with pytest.raises(SuiteError) as ei:
        load_suite(d)
    (prob,) = ei.value.problems
    assert (prob.file, prob.line, prob.field) == (str(p), 0, "file") and SPECIAL[kind] in prob.message


def test_symlinked_sub_folders_are_followed_and_loops_refused(tmp_path):
    d = write_suite(tmp_path / "suite")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "extra.json").write_text(json.dumps({"query": "q"}))
    (d / "linked").symlink_to(shared, target_is_directory=True)
    assert load_suite(d).names == ("extra", "s1", "s2")
    (d / "sub").mkdir()
    (d / "sub" / "up").symlink_to(d, target_is_directory=True)  # a loop back to the suite folder
    with pytest.raises(SuiteError) as ei:
        load_suite(d)
    (prob,) = ei.value.problems
    assert prob.file == str(d / "sub" / "up") and "already in the suite" in prob.message
    (d / "sub" / "up").unlink()
    (d / "loop").symlink_to(d / "loop")  # a link loop without a scenario suffix is not a scenario
    (d / "notes.txt").symlink_to(d / "gone.txt")
    assert load_suite(d).names == ("extra", "s1", "s2")


def test_a_folder_of_only_special_files_is_not_empty(tmp_path):
    d = tmp_path / "suite"
    d.mkdir()
    _special(d, "fifo")
    with pytest.raises(SuiteError) as ei:
        load_suite(d)
    assert "FIFO" in ei.value.problems[0].message


# ---- D6: TOML nested too deeply (issue 32, "Tracebacks") -------------------------------------------------
#: about 2 kB each: past the depth the recursive TOML parser can reach
DEEP_TOML = {
    "arrays": "a = " + "[" * 1000 + "]" * 1000 + "\n",
    "inline_tables": "a = " + "{b = " * 1000 + "1" + "}" * 1000 + "\n",
    "arrays_of_tables": "a = " + "[{b = " * 500 + "1" + "}]" * 500 + "\n",
}


@pytest.mark.parametrize("shape", sorted(DEEP_TOML))
def test_toml_nested_1000_deep_is_a_problem_of_its_file_in_every_reader(tmp_path, shape):
    from crp_core.errors import CKFError
    from crp_core.io.ckf.sdk_map import load_source_map

    p = tmp_path / "deep.toml"
    p.write_text('query = "q"\n' + DEEP_TOML[shape], encoding="utf-8")
    readers = {
        "scenario": (ScenarioError, lambda: load_scenario(p)),
        "scenario bytes": (ScenarioError, lambda: load_scenario_bytes(p.read_bytes(), str(p))),
        "suite": (SuiteError, lambda: load_suite([p])),
        "suite upload": (SuiteError, lambda: suite_from_files([(str(p), p.read_bytes())])),
        "sdk map": (CKFError, lambda: load_source_map(p)),
    }
    for what, (error, read) in readers.items():
        with pytest.raises(error) as ei:
            read()
        (prob,) = ei.value.problems
        assert (prob.line, prob.field) == (2, "toml"), what
        assert "nested too deeply" in prob.message and str(p) in str(ei.value), what
        if error is SuiteError:
            assert prob.file == str(p)
    p.write_text(DEEP_TOML[shape], encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply") as ei:
        CRPConfig.load(p)
    assert str(p) in str(ei.value) and "line 1" in str(ei.value)
    with pytest.raises(ConfigError, match="nested too deeply"):
        CRPConfig.from_toml(DEEP_TOML[shape])
    with pytest.raises(ConfigError, match="nested too deeply") as ei:
        CRPConfig().with_set_args(["candidate_k=" + DEEP_TOML[shape].removeprefix("a = ").strip()])
    assert "'candidate_k'" in str(ei.value)


def test_toml_nesting_is_bounded_whatever_the_parser_reaches():
    """A document the parser reads without running out of stack (dotted keys nest without recursion) is
    refused the same way past :data:`MAX_TOML_DEPTH` levels; a shallow one reads as before."""
    from crp_core.support.parsing import MAX_TOML_DEPTH, TOMLRefusal, parse_toml

    with pytest.raises(TOMLRefusal) as ei:
        parse_toml("a" + ".b" * 5000 + " = 1\n")
    assert "nested too deeply" in ei.value.reason
    ok = "a = " + "[" * MAX_TOML_DEPTH + "]" * MAX_TOML_DEPTH + "\n"
    assert isinstance(parse_toml(ok)["a"], list)
    with pytest.raises(TOMLRefusal):
        parse_toml("a = " + "[" * (MAX_TOML_DEPTH + 1) + "]" * (MAX_TOML_DEPTH + 1) + "\n")
    assert parse_toml('x = "[[[[" # ]]]\n') == {"x": "[[[["}

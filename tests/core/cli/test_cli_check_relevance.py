"""``crp-inspect check`` with graded relevance (the ranking columns, their thresholds and the facts behind
a broken one), per-metric tolerances against a baseline, the configuration keys no scenario exercises,
and ``validate --scenario`` checking relevance ids (docs/decisions/suites.md §2, §3, §5)."""

from __future__ import annotations

import json

import pytest

from crp_core.analysis.gate import TOLERANCE, parse_tolerances
from crp_core.cli import main
from crp_core.errors import ConfigError
from tests.support.suites import scenario_docs, write_ckf, write_suite

#: s1's envelope is A, C, E, G, H1, H2 (tests/core/analysis/test_ranking_metrics.py); D is not packed
GRADES = {"A": 3, "C": 2, "D": 2, "G": 1}


def _files(tmp_path, docs=None):
    docs = docs or scenario_docs()
    return write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite", docs)


def _check(capsys, ckf, suite, *extra):
    rc = main(["check", "--ckf", str(ckf), "--suite", str(suite), *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _graded(**expect):
    docs = scenario_docs()
    docs["s1"]["expect"].update({"relevance": dict(GRADES), **expect})
    return docs


def test_ranking_columns_thresholds_and_the_facts_behind_them(tmp_path, capsys):
    ckf, suite = _files(tmp_path, _graded(**{"min_ndcg@10": 0.9, "min_mrr": 1.0}))
    rc, out, _ = _check(capsys, ckf, suite)
    assert rc == 1
    lines = out.splitlines()
    head = next(line for line in lines if line.startswith("scenario"))
    assert head.split()[-4:] == ["ndcg@10", "mrr", "p@10", "r@10"]
    # DCG 7 + 3/log2(3) + 1/log2(5) = 9.3235 over the ideal 3, 2, 2, 1: 9.3235 + 1.5 = 10.8235 -> 0.861
    s1 = next(line for line in lines if line.startswith("s1 "))
    assert s1.split()[-4:] == ["0.861", "1.000", "0.500", "0.750"]
    s2 = next(line for line in lines if line.startswith("s2 "))
    assert s2.split()[-4:] == ["-", "-", "-", "-"]
    assert "  - s1: ndcg@10 0.861412 breaks expect.min_ndcg@10 (must be >= 0.9)" in lines
    i = lines.index("  - s1: ndcg@10 0.861412 breaks expect.min_ndcg@10 (must be >= 0.9)")
    assert (
        lines[i + 1] == "      first 10 (grade): A (3), C (2), E (0), G (1), H1 (0), H2 (0); graded 1+ outside them: D"
    )
    assert not any("mrr" in line and "breaks" in line for line in lines)  # mrr 1.0 meets min_mrr 1.0
    rc, out, _ = _check(capsys, ckf, suite, "--json")
    rep = json.loads(out)
    assert rep["scenarios"]["s1"]["metrics"]["recall@10"] == 0.75
    assert rep["scenarios"]["s2"]["metrics"]["ndcg@10"] is None
    assert rep["summary"]["mrr"] == {"mean": 1.0, "worst": 1.0, "total": None, "worst_scenario": "s1", "count": 1}
    assert [(f["metric"], f["source"]) for f in rep["gate"]["failures"]] == [("ndcg@10", "min_ndcg@10")]


def test_without_relevance_no_ranking_column(tmp_path, capsys):
    ckf, suite = _files(tmp_path)
    rc, out, _ = _check(capsys, ckf, suite)
    head = next(line for line in out.splitlines() if line.startswith("scenario"))
    assert "ndcg@10" not in head and head.split()[-1] == "overlap"


def test_ndcg_is_gated_against_the_baseline(tmp_path, capsys):
    ckf, suite = _files(tmp_path, _graded())
    base = tmp_path / "base.json"
    assert _check(capsys, ckf, suite, "--write-baseline", str(base))[0] == 0
    # a stricter gate (0.72) packs only A and G: DCG 7 + 1/log2(3) = 7.6309 over 10.8235 -> 0.705036; recall@10 2/4
    rc, out, _ = _check(capsys, ckf, suite, "--baseline", str(base), "--set", "cdr_min_relevance=0.72")
    assert rc == 1
    assert "  - s1: ndcg@10 0.705036 is worse than the baseline's 0.861412" in out.splitlines()
    assert "  - s1: recall@10 0.5 is worse than the baseline's 0.75" in out.splitlines()
    # precision@10 (2 of 2 packed: 1.0) and mrr are reported, not compared with the baseline
    assert "precision@10" not in out.split("FAIL")[1]


def test_a_tolerance_lets_a_metric_move_from_the_baseline(tmp_path, capsys):
    ckf, suite = _files(tmp_path, _graded())
    base = tmp_path / "base.json"
    _check(capsys, ckf, suite, "--write-baseline", str(base))
    worse = ("--baseline", str(base), "--set", "cdr_min_relevance=0.72")
    # ndcg@10 moved by 0.861412 - 0.705036 = 0.156376; recall@10 by 0.25; recall by 2/3 - 1/3
    tol = ("--tolerance", "ndcg@10=0.2", "--tolerance", "recall@10=0.25", "--tolerance", "recall=0.34")
    rc, out, _ = _check(capsys, ckf, suite, *worse, *tol)
    assert rc == 0 and "PASS" in out, out
    rc, out, _ = _check(capsys, ckf, suite, *worse, "--tolerance", "ndcg@10=0.1", "--json")
    rep = json.loads(out)
    assert rc == 1 and rep["tolerances"] == {"ndcg@10": 0.1}
    msgs = [f["message"] for f in rep["gate"]["failures"]]
    assert msgs == [
        "s1: recall 0.333333 is worse than the baseline's 0.666667",
        "s1: ndcg@10 0.705036 is worse than the baseline's 0.861412 by more than its tolerance 0.1",
        "s1: recall@10 0.5 is worse than the baseline's 0.75",
    ]


def test_a_tolerance_does_not_widen_an_expect_threshold(tmp_path, capsys):
    ckf, suite = _files(tmp_path, _graded(**{"min_recall@10": 0.75}))
    rc, out, _ = _check(capsys, ckf, suite, "--set", "cdr_min_relevance=0.72", "--tolerance", "recall@10=0.5")
    assert rc == 1 and "  - s1: recall@10 0.5 breaks expect.min_recall@10 (must be >= 0.75)" in out.splitlines()
    assert "note: a tolerance (recall@10) widens only a baseline comparison: no baseline given" in out.splitlines()


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["nope=1"], "unknown metric 'nope'; expected one of recall, leaks"),
        (["tokens=5"], "tokens is not compared with a baseline"),
        (["duplicates"], "--tolerance expects METRIC=X, got 'duplicates'"),
        (["duplicates=-1"], "X must be a finite number >= 0, got '-1'"),
        (["duplicates=nan"], "X must be a finite number >= 0"),
        (["duplicates=inf"], "X must be a finite number >= 0"),
        (["duplicates=two"], "X must be a finite number >= 0, got 'two'"),
        (["duplicates=1", "duplicates=2"], "duplicates is given twice"),
    ],
)
def test_bad_tolerances_are_refused_by_name(items, message, tmp_path, capsys):
    with pytest.raises(ConfigError, match=None) as ei:
        parse_tolerances(items)
    assert message in str(ei.value)
    ckf, suite = _files(tmp_path)
    argv = [a for item in items for a in ("--tolerance", item)]
    rc, out, err = _check(capsys, ckf, suite, *argv)
    assert rc == 2 and message in err and "Traceback" not in err and out == ""


def test_parse_tolerances():
    assert parse_tolerances(["duplicates=2", " ndcg@10 = 0.05"]) == {"duplicates": 2.0, "ndcg@10": 0.05}
    assert parse_tolerances([]) == {} and TOLERANCE == 1e-9


# ---- configuration keys no scenario exercises -------------------------------------------------------
def test_keys_no_scenario_exercises_are_reported(tmp_path, capsys):
    ckf, suite = _files(tmp_path)
    # stale_floor: G is packed at the floor either way (expired 1, same envelope); no news fact in the CKF
    keys = ("--set", "stale_floor=0.2", "--set", "ttl_days.news=60")
    rc, out, _ = _check(capsys, ckf, suite, *keys)
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("note: 2 configuration key(s) you changed"))
    assert lines[i + 1 : i + 3] == ["  - stale_floor = 0.2 (default 0.3)", "  - ttl_days.news = 60.0 (default 30.0)"]
    rc, out, _ = _check(capsys, ckf, suite, *keys, "--json")
    assert json.loads(out)["unexercised_keys"] == [
        {"key": "stale_floor", "value": 0.2, "default": 0.3},
        {"key": "ttl_days.news", "value": 60.0, "default": 30.0},
    ]
    # ttl_days.version_specific=3650 lifts B (1977 days old) to recency 1 - 0.7 * (1977 - 1825) / 1825 = 0.942:
    # authority 0.80 * 0.942 * 0.85 = 0.641 > A's 0.640, so B wins in s1 (tests/core/cli/test_cli_check_tune.py)
    rc, out, _ = _check(capsys, ckf, suite, "--set", "ttl_days.version_specific=3650", "--json")
    assert json.loads(out)["unexercised_keys"] == [] and json.loads(out)["tolerances"] == {}
    # one key at a time, the others as given: with the floor at 0.2, B's recency is 1 - 0.8 * 152 / 1825 = 0.933
    # (authority 0.635 < 0.640): the TTL no longer flips the pair, while setting the floor back to 0.3 does
    rc, out, _ = _check(capsys, ckf, suite, *keys, "--set", "ttl_days.version_specific=3650", "--json")
    assert [k["key"] for k in json.loads(out)["unexercised_keys"]] == ["ttl_days.version_specific", "ttl_days.news"]
    rc, out, _ = _check(capsys, ckf, suite)
    assert "configuration key(s)" not in out


def test_a_change_every_scenario_overrides_is_unexercised(tmp_path, capsys):
    """--config sets the gate to 0.72 (which empties most of s1's envelope), but each scenario's own config
    sets it back to 0.55: the change reaches no scenario. With --set (above the scenarios) it does."""
    docs = scenario_docs()
    for d in docs.values():
        d["config"] = {"cdr_min_relevance": 0.55}
    ckf, suite = _files(tmp_path, docs)
    cfg = tmp_path / "c.toml"
    cfg.write_text("cdr_min_relevance = 0.72\n", encoding="utf-8")
    rc, out, _ = _check(capsys, ckf, suite, "--config", str(cfg), "--json")
    assert json.loads(out)["unexercised_keys"] == [{"key": "cdr_min_relevance", "value": 0.72, "default": 0.55}]
    rc, out, _ = _check(capsys, ckf, suite, "--set", "cdr_min_relevance=0.72", "--json")
    assert json.loads(out)["unexercised_keys"] == []


# ---- validate --scenario checks relevance ids --------------------------------------------------------
def test_validate_checks_relevance_ids_against_the_ckf(tmp_path, capsys):
    ckf = write_ckf(tmp_path / "kb.jsonl")
    doc = scenario_docs()["s1"]
    doc["expect"] = {"relevance": {"A": 2, "ZZ": 1}}
    text = json.dumps(doc, indent=1)
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    rc = main(["validate", "--scenario", str(path), "--ckf", str(ckf)])
    out = capsys.readouterr().out
    line = text[: text.index('"ZZ"')].count("\n") + 1
    assert rc == 1
    assert f"    line {line}, field expect.relevance.ZZ (fact 'ZZ'): no fact with id 'ZZ' in the CKF {ckf}" in out
    assert "  labels: 2 fact id(s)" in out

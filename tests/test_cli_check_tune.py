"""``crp-inspect check`` (exit 0 on its own baseline, 1 on a planted regression or a broken threshold,
2 on bad input) and ``crp-inspect tune`` / ``tune()`` (the best trial equals a separate run at its
values; seeded, deterministic) on the tiny suite of ``suite_support``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from suite_support import corpus, scenario_docs, write_ckf, write_suite

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.suite import load_suite
from crp_core.analysis.tune import OBJECTIVES, Param, default_space, tune
from crp_core.cli import main
from crp_core.config import CRPConfig

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def files(tmp_path):
    return write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite")


def _check(capsys, ckf, suite, *extra):
    rc = main(["check", "--ckf", str(ckf), "--suite", str(suite), *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_check_passes_on_its_baseline_and_fails_on_a_planted_regression(files, capsys, tmp_path):
    ckf, suite = files
    base = tmp_path / "metrics.json"
    rc, out, _ = _check(capsys, ckf, suite, "--write-baseline", str(base))
    assert rc == 0 and "PASS" in out and "s1" in out and base.is_file()
    rc, out, _ = _check(capsys, ckf, suite, "--baseline", str(base))
    assert rc == 0, out
    # planted regression: a 10-year TTL for version_specific facts lifts the legacy 4001 fact B (1977 days old)
    # to recency 1 - 0.7 * (1977 - 1825) / 1825 = 0.942: authority 0.80 * 0.942 * 0.85 = 0.641 > A's 0.640,
    # so B wins stage 4 and A is suppressed
    rc, out, _ = _check(capsys, ckf, suite, "--baseline", str(base), "--set", "ttl_days.version_specific=3650")
    assert rc == 1
    assert "FAIL" in out and "s1: leaks 2 breaks expect.max_leaks" in out
    assert "worse than the baseline" in out
    rc, out, _ = _check(capsys, ckf, suite, "--baseline", str(base), "--set", "ttl_days.version_specific=3650",
                        "--json")
    rep = json.loads(out)
    assert rc == 1 and rep["gate"]["passed"] is False
    fails = {(f["scenario"], f["metric"], f["kind"]) for f in rep["gate"]["failures"]}
    assert ("s1", "leaks", "threshold") in fails and ("s1", "wrong_winners", "baseline") in fails
    assert rep["scenarios"]["s1"]["details"]["wrong_winners"] == [
        {"loser": "B", "winner": "A", "winner_state": "suppressed"},
        {"loser": "E", "winner": "F", "winner_state": "gated"}]
    assert rep["config_changes"] == {"ttl_days.version_specific": [180.0, 3650.0]}


def test_check_fails_on_a_threshold_without_a_baseline(files, capsys, tmp_path):
    ckf, _ = files
    docs = scenario_docs()
    docs["s1"]["expect"]["min_recall"] = 1.0
    suite = write_suite(tmp_path / "strict", docs)
    rc, out, _ = _check(capsys, ckf, suite)
    assert rc == 1 and "recall 0.666667 breaks expect.min_recall (must be >= 1)" in out


@pytest.mark.parametrize("extra, needle", [
    (("--set", "no_such_key=1"), "unknown configuration key"),
    (("--baseline", "/nonexistent/metrics.json"), "cannot read it"),
    (("--now", "yesterday"), "--now"),
])
def test_check_bad_input_exits_2_without_traceback(files, capsys, extra, needle):
    ckf, suite = files
    rc, out, err = _check(capsys, ckf, suite, *extra)
    assert rc == 2 and needle in err and "Traceback" not in err


def test_check_refuses_a_bad_suite_and_a_bad_baseline(files, capsys, tmp_path):
    ckf, suite = files
    (suite / "s3.json").write_text(json.dumps({"query": "q", "expect": {"must_include": ["NOPE"]}}, indent=1))
    rc, _, err = _check(capsys, ckf, suite)
    assert rc == 2 and "s3.json: line 5, field 'expect.must_include[0]' (fact 'NOPE')" in err and "NOPE" in err
    (suite / "s3.json").unlink()
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({"kind": "crp-inspect/suite-metrics", "scenarios": {"s1": {"metrics": {"leaks": "x"}}}}))
    rc, _, err = _check(capsys, ckf, suite, "--baseline", str(bad))
    assert rc == 2 and "scenarios.s1.metrics.leaks" in err


# ---- tuning ----------------------------------------------------------------------------------------
SPACE = (Param("ttl_days.version_specific", 45.0, 3650.0, 1.0), Param("cdr_min_relevance", 0.35, 0.75, 0.005),
         Param("stale_floor", 0.05, 0.6, 0.005))


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return prepare_suite(corpus(), load_suite(write_suite(tmp_path_factory.mktemp("tune"))))


def test_default_space_follows_the_corpus_and_the_valid_ranges(prepared):
    space = {p.key: p for p in default_space(prepared.corpus, CRPConfig(), pinned=["stale_floor"])}
    # source types of the tiny corpus with a default TTL: official, version_specific, unverified, internal
    assert {k for k in space if k.startswith("ttl_days.")} == {
        "ttl_days.official_documentation", "ttl_days.version_specific", "ttl_days.unverified", "ttl_days.internal"}
    official = space["ttl_days.official_documentation"]
    assert (official.low, official.high) == (91.0, 1095.0)
    assert "stale_floor" not in space and space["cdr_min_relevance"].low == 0.35


def test_best_trial_equals_a_separate_run_at_its_values(prepared):
    seen = []
    res = tune(prepared.corpus, prepared, CRPConfig(), "recall", trials=8, seed=3, space=SPACE,
               callback=lambda t, done, total: seen.append((t.number, done, total)))
    assert [s[1] for s in seen] == list(range(1, 9)) and all(s[2] == 8 for s in seen)
    assert res.trials[0].params == {"ttl_days.version_specific": 180.0, "cdr_min_relevance": 0.55, "stale_floor": 0.3}
    best = res.best
    assert best.value == max(t.value for t in res.trials if t.feasible) if any(
        t.feasible for t in res.trials) else True
    again = run_suite(prepare_suite(corpus(), prepared.suite), res.best_config)
    assert again.metrics.flat() == best.metrics.flat()
    assert [s.envelope for s in again.metrics.scenarios] == [s.envelope for s in best.metrics.scenarios]
    assert OBJECTIVES["recall"].evaluate(again.metrics)[0] == best.values
    # seeded: the same trials again
    res2 = tune(prepared.corpus, prepared, CRPConfig(), "recall", trials=8, seed=3, space=SPACE)
    assert [t.params for t in res2.trials] == [t.params for t in res.trials]


def test_pareto_front_of_two_metrics(prepared):
    res = tune(prepared.corpus, prepared, CRPConfig(), "recall_tokens", trials=6, seed=0, space=SPACE)
    front = res.pareto("recall.mean", "tokens.mean", feasible_only=False)
    pts = [(t.metrics.get("recall.mean"), t.metrics.get("tokens.mean")) for t in res.trials]
    for t in front:
        r, k = t.metrics.get("recall.mean"), t.metrics.get("tokens.mean")
        assert not any(r2 >= r and k2 <= k and (r2 > r or k2 < k) for r2, k2 in pts)
    assert [t.metrics.get("recall.mean") for t in front] == sorted(
        [t.metrics.get("recall.mean") for t in front], reverse=True)


def test_tune_cli_json_and_out(files, capsys, tmp_path):
    ckf, suite = files
    out_toml = tmp_path / "best.toml"
    rc = main(["tune", "--ckf", str(ckf), "--suite", str(suite), "--trials", "4", "--seed", "1", "--json",
               "--out", str(out_toml), "--set", "stale_floor=0.3"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0 and set(rep) >= {"best", "trials", "objective", "space"}
    assert len(rep["trials"]) == 4 and rep["best"]["config"]["stale_floor"] == 0.3
    assert "stale_floor" not in {p["key"] for p in rep["space"]}  # pinned by --set
    assert CRPConfig.load(out_toml).to_dict() == rep["best"]["config"]
    assert set(rep["best"]["metrics"]) >= {"recall.mean", "leaks.total", "tokens.mean"}
    rc = main(["tune", "--ckf", str(ckf), "--suite", str(suite), "--trials", "0"])
    assert rc == 2


@pytest.mark.model
def test_tuning_improves_the_sample_suite_objective():
    from crp_core.corpus.prepared import prepare_corpus
    from crp_core.io.ckf import load_ckf

    c = prepare_corpus(load_ckf(str(ROOT / "sample_ckf" / "knowledge_base.jsonl")))
    p = prepare_suite(c, load_suite(ROOT / "sample_ckf" / "scenarios"))
    res = tune(c, p, CRPConfig(), "recall", trials=12, seed=0)
    base, best = res.baseline, res.best
    # the defaults leak (gov-0154 in ai_act_compliance, k8s-0047 in etcd_quota_maintenance)
    assert base.metrics.get("leaks.total") >= 1 and not base.feasible
    assert best.value > base.value and best.feasible

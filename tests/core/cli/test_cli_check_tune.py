"""``crp-inspect check`` (exit 0 on its own baseline, 1 on a planted regression or a broken threshold,
2 on bad input) and ``crp-inspect tune`` / ``tune()`` (the best trial equals a separate run at its
values; seeded, deterministic) on the tiny suite of ``suite_support``."""

from __future__ import annotations

import json
import os

import pytest

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.suite import load_suite
from crp_core.analysis.tune import OBJECTIVES, Param, default_space, gate_vs_start, tune
from crp_core.cli import main
from crp_core.config import CRPConfig
from tests.support.paths import REPO_ROOT
from tests.support.suites import corpus, scenario_docs, write_ckf, write_suite

ROOT = REPO_ROOT


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
    rc, out, _ = _check(
        capsys, ckf, suite, "--baseline", str(base), "--set", "ttl_days.version_specific=3650", "--json"
    )
    rep = json.loads(out)
    assert rc == 1 and rep["gate"]["passed"] is False
    fails = {(f["scenario"], f["metric"], f["kind"]) for f in rep["gate"]["failures"]}
    assert ("s1", "leaks", "threshold") in fails and ("s1", "wrong_winners", "baseline") in fails
    assert rep["scenarios"]["s1"]["details"]["wrong_winners"] == [
        {"loser": "B", "winner": "A", "winner_state": "suppressed"},
        {"loser": "E", "winner": "F", "winner_state": "gated"},
    ]
    assert rep["config_changes"] == {"ttl_days.version_specific": [180.0, 3650.0]}


def test_check_fails_on_a_threshold_without_a_baseline(files, capsys, tmp_path):
    ckf, _ = files
    docs = scenario_docs()
    docs["s1"]["expect"]["min_recall"] = 1.0
    suite = write_suite(tmp_path / "strict", docs)
    rc, out, _ = _check(capsys, ckf, suite)
    assert rc == 1 and "recall 0.666667 breaks expect.min_recall (must be >= 1)" in out


def test_a_scenario_can_require_its_expected_conflicts_to_be_detected(files, capsys, tmp_path):
    """s1 labels three conflicts; stage 4 detects A/B and H1/H2, not E/F. ``min_conflicts_detected`` 3 fails and
    names the pair missed, 2 passes, 4 (more than the labels hold) is refused with the file and field (a
    walk-through could not gate a missed conflict)."""
    ckf, _ = files
    docs = scenario_docs()
    docs["s1"]["expect"]["min_conflicts_detected"] = 3
    rc, out, _ = _check(capsys, ckf, write_suite(tmp_path / "three", docs))
    assert rc == 1 and "conflicts_detected 2 breaks expect.min_conflicts_detected (must be >= 3)" in out
    assert "not detected: E + F" in out
    docs["s1"]["expect"]["min_conflicts_detected"] = 2
    rc, out, _ = _check(capsys, ckf, write_suite(tmp_path / "two", docs))
    assert rc == 0, out
    docs["s1"]["expect"]["min_conflicts_detected"] = 4
    rc, out, err = _check(capsys, ckf, write_suite(tmp_path / "four", docs))
    assert rc == 2 and "expect.min_conflicts_detected" in err
    assert "asks for 4 detected of the 3 pair(s) of expect.conflicts" in err


@pytest.mark.parametrize(
    "extra, needle",
    [
        (("--set", "no_such_key=1"), "unknown configuration key"),
        (("--baseline", "/nonexistent/metrics.json"), "cannot read it"),
        (("--now", "yesterday"), "--now"),
        # issue 32, hostile item 7: a line break ended the TOML value and the rest was dropped in silence
        (
            ("--set", "token_budget=1500\nfoo=2"),
            "--set 'token_budget=1500\\nfoo=2': holds the control character U+000A",
        ),
    ],
)
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


def test_check_takes_several_suite_folders_as_its_help_says(files, capsys, tmp_path):
    """``--suite PATH [PATH ...]`` (issue 32, hostile item 7): each folder is walked, files are taken as they are."""
    ckf, _ = files
    docs = scenario_docs()
    one = write_suite(tmp_path / "one", {"s1": docs["s1"]})
    two = write_suite(tmp_path / "two", {"s2": docs["s2"]})
    rc = main(["check", "--ckf", str(ckf), "--suite", str(one), str(two), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert sorted(json.loads(out)["scenarios"]) == ["s1", "s2"]
    rc = main(["check", "--ckf", str(ckf), "--suite", str(one), str(two / "s2.json"), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0 and sorted(json.loads(out)["scenarios"]) == ["s1", "s2"], err


# ---- tuning ----------------------------------------------------------------------------------------
SPACE = (
    Param("ttl_days.version_specific", 45.0, 3650.0, 1.0),
    Param("cdr_min_relevance", 0.35, 0.75, 0.005),
    Param("stale_floor", 0.05, 0.6, 0.005),
)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return prepare_suite(corpus(), load_suite(write_suite(tmp_path_factory.mktemp("tune"))))


def test_default_space_follows_the_corpus_and_the_valid_ranges(prepared):
    space = {p.key: p for p in default_space(prepared.corpus, CRPConfig(), pinned=["stale_floor"])}
    # source types of the tiny corpus with a default TTL: official, version_specific, unverified, internal
    assert {k for k in space if k.startswith("ttl_days.")} == {
        "ttl_days.official_documentation",
        "ttl_days.version_specific",
        "ttl_days.unverified",
        "ttl_days.internal",
    }
    official = space["ttl_days.official_documentation"]
    assert (official.low, official.high) == (91.0, 1095.0)
    assert "stale_floor" not in space and space["cdr_min_relevance"].low == 0.35


def test_best_trial_equals_a_separate_run_at_its_values(prepared):
    seen = []
    res = tune(
        prepared.corpus,
        prepared,
        CRPConfig(),
        "recall",
        trials=8,
        seed=3,
        space=SPACE,
        callback=lambda t, done, total: seen.append((t.number, done, total)),
    )
    assert [s[1] for s in seen] == list(range(1, 9)) and all(s[2] == 8 for s in seen)
    assert res.trials[0].params == {"ttl_days.version_specific": 180.0, "cdr_min_relevance": 0.55, "stale_floor": 0.3}
    best = res.best
    assert best.value == max(t.value for t in res.trials if t.feasible) if any(t.feasible for t in res.trials) else True
    again = run_suite(prepare_suite(corpus(), prepared.suite), res.best_config)
    assert again.metrics.flat() == best.metrics.flat()
    assert [s.envelope for s in again.metrics.scenarios] == [s.envelope for s in best.metrics.scenarios]
    verdict = gate_vs_start(again.metrics, prepared.suite, res.baseline.metrics)
    assert OBJECTIVES["recall"].evaluate(again.metrics, verdict)[0] == best.values
    # seeded: the same trials again
    res2 = tune(prepared.corpus, prepared, CRPConfig(), "recall", trials=8, seed=3, space=SPACE)
    assert [t.params for t in res2.trials] == [t.params for t in res.trials]


def test_the_best_configuration_keeps_only_the_moves_a_suite_metric_follows(prepared):
    """ttl_days.regulatory is searched, but no fact of the tiny corpus is regulatory: whatever the best trial
    moved it to, it goes back to its start (a walk-through shipped 9 such changes of 12). What remains gives the
    best trial's metrics exactly, and each key the search moved is kept or reverted, none lost."""
    space = (*SPACE, Param("ttl_days.regulatory", 456.0, 5475.0, 1.0))
    res = tune(prepared.corpus, prepared, CRPConfig(), "recall", trials=8, seed=3, space=space)
    simple = res.simplified
    assert simple is not None
    moved = {p.key for p in space if res.best.params[p.key] != res.trials[0].params[p.key]}
    kept = set(CRPConfig().diff(res.best_config))
    assert "ttl_days.regulatory" in moved and "ttl_days.regulatory" in simple.reverted
    assert kept | set(simple.reverted) == moved and not kept & set(simple.reverted)
    assert simple.runs == len(moved)
    again = run_suite(prepare_suite(corpus(), prepared.suite), res.best_config)
    assert again.metrics.flat() == res.best.metrics.flat()
    raw = tune(prepared.corpus, prepared, CRPConfig(), "recall", trials=8, seed=3, space=space, simplify=False)
    assert raw.simplified is None and set(CRPConfig().diff(raw.best_config)) == moved


def test_pareto_front_of_two_metrics(prepared):
    res = tune(prepared.corpus, prepared, CRPConfig(), "recall_tokens", trials=6, seed=0, space=SPACE)
    front = res.pareto("recall.mean", "tokens.mean", feasible_only=False)
    pts = [(t.metrics.get("recall.mean"), t.metrics.get("tokens.mean")) for t in res.trials]
    for t in front:
        r, k = t.metrics.get("recall.mean"), t.metrics.get("tokens.mean")
        assert not any(r2 >= r and k2 <= k and (r2 > r or k2 < k) for r2, k2 in pts)
    assert [t.metrics.get("recall.mean") for t in front] == sorted(
        [t.metrics.get("recall.mean") for t in front], reverse=True
    )


def test_tune_cli_json_and_out(files, capsys, tmp_path):
    ckf, suite = files
    out_toml = tmp_path / "best.toml"
    rc = main(
        [
            "tune",
            "--ckf",
            str(ckf),
            "--suite",
            str(suite),
            "--trials",
            "4",
            "--seed",
            "1",
            "--json",
            "--out",
            str(out_toml),
            "--set",
            "stale_floor=0.3",
        ]
    )
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0 and set(rep) >= {"best", "trials", "objective", "space"}
    assert len(rep["trials"]) == 4 and rep["best"]["config"]["stale_floor"] == 0.3
    assert "stale_floor" not in {p["key"] for p in rep["space"]}  # pinned by --set
    assert CRPConfig.load(out_toml).to_dict() == rep["best"]["config"]
    assert set(rep["best"]["metrics"]) >= {"recall.mean", "leaks.total", "tokens.mean"}
    # the moves put back are listed, and none of them is among the configuration's changes
    assert isinstance(rep["best"]["reverted"], list)
    assert not set(rep["best"]["reverted"]) & {key for key, _start, _value in rep["best"]["config_changes"]}
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


# ---- D4: the seed ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", ["-1", "4294967296", "1.5", "x"])
def test_tune_cli_refuses_a_seed_numpy_cannot_take_at_parse_time(files, capsys, seed):
    ckf, suite = files
    with pytest.raises(SystemExit) as exc:
        main(["tune", "--ckf", str(ckf), "--suite", str(suite), "--trials", "1", "--seed", seed])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "argument --seed" in err and "4294967295" in err and "Traceback" not in err


@pytest.mark.parametrize("seed", [-1, 2**32, True, 1.5, "0"])
def test_tune_refuses_a_bad_seed_with_a_config_error(prepared, seed):
    from crp_core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"seed must be a whole number between 0 and 4294967295"):
        tune(prepared.corpus, prepared, CRPConfig(), "recall", trials=1, seed=seed, space=SPACE)


def test_tune_takes_the_largest_seed(prepared):
    res = tune(prepared.corpus, prepared, CRPConfig(), "recall", trials=2, seed=2**32 - 1, space=SPACE)
    assert res.seed == 4294967295 and len(res.trials) == 2


# ---- D6: --cache-dir ---------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "check", "tune"])
@pytest.mark.parametrize("where", ["file", "below_a_file"])
def test_cache_dir_that_is_a_file_is_refused_up_front(files, capsys, tmp_path, command, where, monkeypatch):
    import crp_core.corpus.prepared as prep

    ckf, suite = files
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    cache = blocker if where == "file" else blocker / "cache"
    monkeypatch.setattr(prep, "prepare_corpus", lambda *a, **k: pytest.fail("the corpus was prepared"))
    target = ["--scenario", str(suite / "s1.json")] if command == "run" else ["--suite", str(suite)]
    extra = ["--trials", "1"] if command == "tune" else []
    with pytest.raises(SystemExit) as exc:
        main([command, "--ckf", str(ckf), *target, *extra, "--cache-dir", str(cache)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "argument --cache-dir" in err and "Traceback" not in err
    assert ("is not a folder" in err) if where == "file" else (f"{blocker} is not a folder" in err)


def test_a_missing_cache_dir_is_fine(files, capsys, tmp_path):
    ckf, suite = files
    rc, out, _ = _check(capsys, ckf, suite, "--cache-dir", str(tmp_path / "new" / "cache"))
    assert rc == 0 and "PASS" in out


# ---- D7: --out / --write-baseline checked before the work, written atomically --------------------
def _bad_targets(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    (tmp_path / "adir").mkdir()
    return {
        "missing folder": (tmp_path / "nodir" / "x", "the folder"),
        "a folder": (tmp_path / "adir", "it is a folder"),
        "a fifo": (fifo, "not a regular file"),
    }


def test_tune_out_is_checked_before_the_first_trial(files, capsys, tmp_path, monkeypatch):
    import crp_core.analysis.tune as tmod

    ckf, suite = files
    monkeypatch.setattr(tmod, "run_suite", lambda *a, **k: pytest.fail("a trial ran"))
    for path, needle in _bad_targets(tmp_path).values():
        rc = main(["tune", "--ckf", str(ckf), "--suite", str(suite), "--trials", "3", "--out", str(path)])
        out = capsys.readouterr()
        assert rc == 2 and f"--out: cannot write {path}: " in out.err and needle in out.err
        assert out.out == ""  # nothing ran


def test_check_write_baseline_is_checked_before_the_run(files, capsys, tmp_path, monkeypatch):
    import crp_core.analysis.evaluate as ev

    ckf, suite = files
    monkeypatch.setattr(ev, "run_suite", lambda *a, **k: pytest.fail("the suite ran"))
    for path, needle in _bad_targets(tmp_path).values():
        rc, out, err = _check(capsys, ckf, suite, "--write-baseline", str(path))
        assert rc == 2 and f"--write-baseline: cannot write {path}: " in err and needle in err and out == ""


def test_a_failed_write_at_the_end_prints_the_result_first(files, capsys, tmp_path, monkeypatch):
    import errno

    import crp_core.support.files as w

    ckf, suite = files

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(w, "write_text_atomic", full)
    rc = main(
        [
            "tune",
            "--ckf",
            str(ckf),
            "--suite",
            str(suite),
            "--trials",
            "2",
            "--json",
            "--out",
            str(tmp_path / "best.toml"),
        ]
    )
    out = capsys.readouterr()
    assert rc == 2 and len(json.loads(out.out)["trials"]) == 2  # the study is printed, then the error
    assert "--out: cannot write" in out.err and "No space left on device" in out.err
    rc = main(["tune", "--ckf", str(ckf), "--suite", str(suite), "--trials", "2", "--out", str(tmp_path / "b.toml")])
    out = capsys.readouterr()
    assert rc == 2 and "best: trial" in out.out and "saved to" not in out.out and "No space left" in out.err
    rc, out_, err = _check(capsys, ckf, suite, "--write-baseline", str(tmp_path / "m.json"))
    assert rc == 2 and "PASS" in out_ and "baseline written" not in out_ and "No space left on device" in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "kb.jsonl" and p.name != "suite") == []


def test_outputs_are_replaced_whole(files, capsys, tmp_path):
    ckf, suite = files
    out_toml, base = tmp_path / "best.toml", tmp_path / "m.json"
    out_toml.write_text("old")
    base.write_text("old")
    assert main(["tune", "--ckf", str(ckf), "--suite", str(suite), "--trials", "1", "--out", str(out_toml)]) == 0
    assert _check(capsys, ckf, suite, "--write-baseline", str(base))[0] == 0
    assert CRPConfig.load(out_toml) == CRPConfig()
    assert json.loads(base.read_text())["kind"] == "crp-inspect/suite-metrics"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".crp-write-")]  # no temporary file left


# ---- D8: trial 0 is exactly the base config -----------------------------------------------------
def test_trial_zero_is_the_base_config_outside_the_search_space(files, capsys, tmp_path):
    ckf, suite = files
    hi = tmp_path / "hi.toml"
    hi.write_text("cdr_min_relevance = 0.9\nstale_floor = 0.01\n")
    out_toml = tmp_path / "best.toml"
    rc = main(
        [
            "tune",
            "--ckf",
            str(ckf),
            "--suite",
            str(suite),
            "--config",
            str(hi),
            "--trials",
            "1",
            "--json",
            "--out",
            str(out_toml),
        ]
    )
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0 and rep["trials"][0]["params"]["cdr_min_relevance"] == 0.9
    assert rep["trials"][0]["params"]["stale_floor"] == 0.01
    space = {p["key"]: p for p in rep["space"]}
    assert (space["cdr_min_relevance"]["low"], space["cdr_min_relevance"]["high"]) == (0.35, 0.9)
    assert (space["stale_floor"]["low"], space["stale_floor"]["high"]) == (0.01, 0.6)
    saved = CRPConfig.load(out_toml)
    assert (saved.cdr_min_relevance, saved.stale_floor) == (0.9, 0.01) and saved == CRPConfig.load(hi)
    rc = main(["tune", "--ckf", str(ckf), "--suite", str(suite), "--config", str(hi), "--trials", "1"])
    out = capsys.readouterr().out
    assert rc == 0 and "(no change from the starting configuration)" in out


def test_param_including_moves_the_grid_through_the_base_value():
    p = Param("cdr_min_relevance", 0.35, 0.75, 0.005)
    assert p.including(0.55) is p  # on the grid: unchanged
    assert p.including(0.9, (-1.0, 1.0)) == Param("cdr_min_relevance", 0.35, 0.9, 0.005)
    off = p.including(0.5513, (-1.0, 1.0))  # inside, off the grid: the grid moves through it
    assert (off.low, off.high) == (0.3513, 0.7463) and off.on_grid(0.5513) and off.round(0.3513 + 3 * 0.005) == 0.3663
    s = Param("stale_floor", 0.05, 0.6, 0.005).including(0.0, (0.0, 1.0))
    assert (s.low, s.high) == (0.0, 0.6)
    t = Param("ttl_days.news", 7.0, 90.0, 1.0).including(0.5)
    assert (t.low, t.high) == (0.5, 89.5)


def test_trial_zero_runs_the_base_config_exactly_off_the_grid(prepared):
    base = CRPConfig().with_overrides({"cdr_min_relevance": 0.55137, "stale_floor": 0.9})
    res = tune(prepared.corpus, prepared, base, "recall", trials=3, seed=0, space=SPACE)
    assert res.trials[0].config == base
    assert res.trials[0].params == {
        "ttl_days.version_specific": 180.0,
        "cdr_min_relevance": 0.55137,
        "stale_floor": 0.9,
    }
    assert run_suite(prepared, base).metrics.flat() == res.trials[0].metrics.flat()


# ---- item 2 and 5: --write-baseline records (exit 0), counts as whole numbers --------------------
def test_write_baseline_records_and_exits_0_even_when_the_gate_fails(files, capsys, tmp_path):
    ckf, suite = files
    base = tmp_path / "m.json"
    rc, out, _ = _check(capsys, ckf, suite, "--set", "ttl_days.version_specific=3650", "--write-baseline", str(base))
    assert rc == 0 and "NOT GATED: 2 of 3 bound(s) broken" in out and "s1: leaks 2 breaks expect.max_leaks" in out
    assert "baseline written to" in out and base.is_file()
    rc, out, _ = _check(
        capsys, ckf, suite, "--set", "ttl_days.version_specific=3650", "--write-baseline", str(base), "--json"
    )
    rep = json.loads(out)
    assert rc == 0 and rep["gate"]["passed"] is False and rep["baseline_written"] == str(base)
    # the same run without recording is gated: exit 1
    assert _check(capsys, ckf, suite, "--set", "ttl_days.version_specific=3650")[0] == 1


def test_the_baseline_file_writes_counts_as_whole_numbers_and_reads_floats(files, capsys, tmp_path):
    ckf, suite = files
    base = tmp_path / "m.json"
    assert _check(capsys, ckf, suite, "--write-baseline", str(base))[0] == 0
    text = base.read_text()
    doc = json.loads(text)
    m = doc["scenarios"]["s1"]["metrics"]
    assert m["leaks"] == 1 and type(m["leaks"]) is int and type(m["tokens"]) is int
    assert type(m["expired"]) is int and type(m["recall"]) is float and '"leaks": 1.0' not in text
    assert doc["summary"]["leaks"]["total"] == 1 and type(doc["summary"]["leaks"]["total"]) is int
    assert type(doc["summary"]["leaks"]["mean"]) is float
    # a file with floats (older versions wrote them) is still read
    for body in doc["scenarios"].values():
        body["metrics"] = {k: (float(v) if isinstance(v, int) else v) for k, v in body["metrics"].items()}
    base.write_text(json.dumps(doc))
    assert '"leaks": 1.0' in base.read_text()
    rc, out, _ = _check(capsys, ckf, suite, "--baseline", str(base))
    assert rc == 0 and "PASS" in out


# ---- item 3: tune -> check -> baseline ------------------------------------------------------------
def test_recall_may_regress_a_scenario_no_regression_may_not(files, capsys, tmp_path):
    """``recall`` trades s1's recall (2/3 -> 1/3) for its leak; the tuned config then fails a baseline
    recorded at the defaults. ``no_regression`` counts that as a violation; every trial it calls feasible
    passes ``check --baseline`` against a baseline recorded at its start."""
    from crp_core.analysis.gate import gate, read_baseline

    ckf, suite = files
    defaults = tmp_path / "defaults.json"
    assert _check(capsys, ckf, suite, "--write-baseline", str(defaults))[0] == 0
    p = prepare_suite(corpus(), load_suite(suite))
    res = tune(p.corpus, p, CRPConfig(), "recall", trials=12, seed=0, space=SPACE)
    assert res.best.feasible and res.best.number == 3 and res.best.values == (1 / 3,)
    assert [(f.scenario, f.metric, f.value, f.bound) for f in res.best.regressions] == [("s1", "recall", 1 / 3, 2 / 3)]
    best_toml = tmp_path / "best.toml"
    res.best_config.save(best_toml)
    rc, out, _ = _check(capsys, ckf, suite, "--config", str(best_toml))
    assert rc == 0  # the thresholds pass
    rc, out, _ = _check(capsys, ckf, suite, "--config", str(best_toml), "--baseline", str(defaults))
    assert rc == 1 and "s1: recall 0.333333 is worse than the baseline's 0.666667" in out
    # no_regression from the defaults: the same trial costs 1 more, nothing is feasible
    nr = tune(p.corpus, p, CRPConfig(), "no_regression", trials=12, seed=0, space=SPACE)
    assert dict(nr.trials[3].violations) == {
        "leaks": 0.0,
        "wrong_winners": 0.0,
        "over_tokens": 0.0,
        "thresholds": 0.0,
        "regressions": 1.0,
    }
    assert nr.trials[3].values == (1 / 3 - 1,) and not any(t.feasible for t in nr.trials)
    # from the tuned config, with its baseline: every feasible trial passes check against that baseline
    tuned = tmp_path / "tuned.json"
    assert _check(capsys, ckf, suite, "--config", str(best_toml), "--write-baseline", str(tuned))[0] == 0
    nr = tune(p.corpus, p, res.best_config, "no_regression", trials=12, seed=1, space=SPACE)
    feasible = [t for t in nr.trials if t.feasible]
    assert nr.trials[0].feasible and len(feasible) >= 2
    recorded = read_baseline(tuned)
    for t in feasible:
        assert gate(run_suite(p, t.config).metrics, p.suite, recorded).passed
    for t in nr.trials:
        assert t.feasible == gate(t.metrics, p.suite, recorded).passed


def test_every_objective_counts_broken_expect_bounds(files, tmp_path):
    docs = scenario_docs()
    docs["s1"]["expect"]["min_recall"] = 1.0  # no config of SPACE packs D: every trial breaks it
    p = prepare_suite(corpus(), load_suite(write_suite(tmp_path / "strict", docs)))
    for name in ("recall", "integrity", "recall_tokens", "no_regression"):
        res = tune(p.corpus, p, CRPConfig(), name, trials=2, seed=0, space=SPACE)
        assert res.trials[0].violations["thresholds"] == 1.0 and not res.trials[0].feasible, name


def test_the_check_table_shows_the_conflicts_stage_4_detected(files, capsys):
    """The text table carries conflicts_detected (`detected`) beside contradictions, per scenario, its mean
    and worst, as the JSON report does."""
    ckf, suite = files
    rc, out, err = _check(capsys, ckf, suite)
    assert rc in (0, 1), err
    head = next(line for line in out.splitlines() if line.startswith("scenario "))
    assert head.split()[1:] == [
        "recall", "leaks", "wrong", "expired", "ageing", "contra", "detected", "false", "dups", "tokens", "overlap"
    ]  # fmt: skip
    rc = main(["check", "--ckf", str(ckf), "--suite", str(suite), "--json"])
    doc = json.loads(capsys.readouterr().out)
    col = head.split().index("detected")
    for name, s in doc["scenarios"].items():
        row = next(line for line in out.splitlines() if line.startswith(name + " "))
        got = s["metrics"]["conflicts_detected"]
        assert row.split()[col] == ("-" if got is None else str(got))  # none labelled: no count
    assert any(s["metrics"]["conflicts_detected"] is not None for s in doc["scenarios"].values())


def test_a_suite_with_labels_and_no_bound_says_its_pass_gates_nothing(files, capsys, tmp_path):
    # must_include / must_exclude are reported, not gated: a PASS over no bound says so (a walk-through read
    # "PASS: 0 bound(s) checked" under a recall of 0.333 as "labels met")
    ckf, _ = files
    docs = scenario_docs()
    for d in docs.values():
        d["expect"] = {k: v for k, v in d.get("expect", {}).items() if not k.startswith(("min_", "max_"))}
    rc, out, _ = _check(capsys, ckf, write_suite(tmp_path / "labels_only", docs))
    assert rc == 0
    assert "PASS: 0 bound(s) checked: no scenario sets a min_ or max_ bound, so the labels above gate nothing" in out

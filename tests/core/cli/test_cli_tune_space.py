"""``crp-inspect tune`` with a space the engineer gives (``--param``, ``--space``), objectives by suite
metric name, the honest feasibility of ``no_regression`` on issue #34's case (a tie "solved" by dropping
facts: upgrade recall 1 -> 0.25) with the message saying what made every trial infeasible, and
``--out`` writing only the keys that differ from the defaults."""

from __future__ import annotations

import json

import pytest

from crp_core.analysis.evaluate import prepare_suite
from crp_core.analysis.metrics import METRIC_NAMES, METRICS, MetricInfo
from crp_core.analysis.suite import load_suite
from crp_core.analysis.tune import (
    OBJECTIVES,
    Param,
    objective_named,
    objective_names,
    tune,
)
from crp_core.analysis.tune_toml import tuned_toml
from crp_core.cli import main
from crp_core.config import CRPConfig
from crp_core.errors import ConfigError
from tests.support.cli_notes import without_missing_store_note
from tests.support.suites import corpus, write_ckf, write_suite
from tests.support.tune_worlds import write_tie_drop_world


def _tune(capsys, ckf, suite, *extra):
    rc = main(["tune", "--ckf", str(ckf), "--suite", str(suite), *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return write_tie_drop_world(tmp_path_factory.mktemp("tie_drop"))


def test_the_world_trades_the_tie_for_three_must_include_facts(world, capsys):
    ckf, suite = world
    got = {}
    for ttl in (30, 15):
        rc = main(["check", "--ckf", str(ckf), "--suite", str(suite), "--json", "--set", f"ttl_days.news={ttl}"])
        rep = json.loads(capsys.readouterr().out)
        assert rc == 0
        got[ttl] = {n: (s["metrics"]["recall"], s["metrics"]["wrong_winners"]) for n, s in rep["scenarios"].items()}
    assert got[30] == {"tie": (None, 1), "upgrade": (1.0, 0)}
    assert got[15] == {"tie": (None, 0), "upgrade": (0.25, 0)}


def test_issue_34_case_no_regression_never_reports_a_recall_drop_feasible(world, capsys):
    """The issue's run: searching ttl_days.news (here widened to 7..730 days on a log scale), the recall
    objective takes the trade (0.25 against trial 0's 1 - 1 wrong winner) and calls it feasible, since it
    counts no per-scenario regression. no_regression must refuse every such trial and say why none is
    feasible: which violation, in how many trials, and the recall drop behind it."""
    ckf, suite = world
    space = ("--param", "ttl_days.news=7:730:log")
    rc, out, err = _tune(capsys, ckf, suite, "--trials", "12", "--objective", "recall", "--json", *space)
    rep = json.loads(out)
    assert rc == 0, err
    best = rep["best"]
    assert best["feasible"] is True and best["scenarios"]["upgrade"]["recall"] == 0.25
    assert rep["no_feasible_trial"] is None
    rc, out, _ = _tune(capsys, ckf, suite, "--trials", "12", "--objective", "recall", *space)
    assert rc == 0
    assert (
        f"best: trial {best['trial']} (value 0.2500, feasible under recall, which counts no per-scenario "
        "regression, yet recall fell in 1 scenario(s): upgrade 1 -> 0.25; --objective no_regression refuses "
        "such trials)"
    ) in out
    assert best["regressions"][0] == {"scenario": "upgrade", "metric": "recall", "value": 0.25, "start": 1.0}

    rc, out, err = _tune(capsys, ckf, suite, "--trials", "12", "--objective", "no_regression", "--json", *space)
    rep = json.loads(out)
    assert rc == 0, err
    start = rep["trials"][0]
    assert start["params"] == {"ttl_days.news": 30.0}
    dropped = [t for t in rep["trials"] if (t["metrics"]["recall.mean"] or 0) < 1.0]
    assert dropped, "the search must meet the trade"
    assert not any(t["feasible"] for t in dropped)
    assert all(t["violations"]["regressions"] >= 1 for t in dropped)
    assert not any(t["feasible"] for t in rep["trials"])  # trial 0 keeps its wrong winner
    assert rep["best"]["trial"] == 0
    n_drop, n_wrong = len(dropped), sum(1 for t in rep["trials"] if t["violations"]["wrong_winners"] > 0)
    msg = rep["no_feasible_trial"]
    assert msg.startswith("no feasible trial: every one of the 12 trial(s) broke a constraint: ")
    assert f"regressions in {n_drop} of 12 trial(s) (scenario metrics worse than at trial 0" in msg
    assert f"wrong_winners in {n_wrong} of 12 trial(s) (losers of an expected conflict packed)" in msg
    assert "Trial 0 (the starting configuration) already has wrong_winners 1" in msg
    assert f"upgrade recall ({n_drop} trial(s))" in msg

    rc, out, _ = _tune(capsys, ckf, suite, "--trials", "12", "--objective", "no_regression", *space)
    assert rc == 0
    assert "best: trial 0 (value 0.0000, NOT feasible: wrong_winners 1);" in out
    assert "searched: ttl_days.news=7:730:log" in out
    assert msg in out


@pytest.fixture
def files(tmp_path):
    return write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite")


def test_param_and_space_file_set_the_searched_keys(files, capsys, tmp_path):
    ckf, suite = files
    space = tmp_path / "space.toml"
    space.write_text(
        '[space]\n"ttl_days.version_specific" = {lo = 30, hi = 3650, log = true}\nstale_floor = {lo = 0.1, hi = 0.5}\n',
        encoding="utf-8",
    )
    extra = ("--trials", "6", "--seed", "3", "--json", "--space", str(space), "--param", "stale_floor=0.2:0.4")
    rc, out, err = _tune(capsys, ckf, suite, *extra, "--param", "candidate_k=10:60")
    rep = json.loads(out)
    assert rc == 0, err
    assert rep["space"] == [
        {"key": "ttl_days.version_specific", "low": 30.0, "high": 3650.0, "step": 1.0, "log": True},
        {"key": "stale_floor", "low": 0.2, "high": 0.4, "step": 0.001, "log": False},
        {"key": "candidate_k", "low": 10.0, "high": 60.0, "step": 1.0, "log": False},
    ]
    for t in rep["trials"]:
        assert set(t["params"]) == {"ttl_days.version_specific", "stale_floor", "candidate_k"}
        v = t["params"]["ttl_days.version_specific"]
        assert 30 <= v <= 3650 and float(v).is_integer()
        assert isinstance(t["params"]["candidate_k"], int)  # a whole-number key stays an integer
        assert 0.2 <= t["params"]["stale_floor"] <= 0.4
    assert rep["trials"][0]["params"] == {"ttl_days.version_specific": 180.0, "stale_floor": 0.3, "candidate_k": 50}


@pytest.mark.parametrize(
    "extra, needle",
    [
        (("--param", "ttl_days.news=90:7"), "--param 'ttl_days.news=90:7': lo must be below hi"),
        (("--param", "cdr_min_relevance=0:2"), "hi 2 is not a valid value"),
        (("--param", "stale_floor=0.1:0.5", "--set", "stale_floor=0.3"), "both searched"),
        (("--space", "/nonexistent/space.toml"), "cannot read space file /nonexistent/space.toml"),
        (("--objective", "nope"), "unknown objective 'nope'; expected one of recall, no_regression"),
    ],
)
def test_a_bad_space_or_objective_exits_2_before_the_ckf_is_read(capsys, tmp_path, extra, needle):
    rc, _, err = _tune(capsys, tmp_path / "missing.jsonl", tmp_path / "missing", "--trials", "2", *extra)
    assert rc == 2 and needle in err and "Traceback" not in err


def test_objectives_by_metric_name_follow_the_metric_table(files, capsys, monkeypatch):
    assert objective_names()[: len(OBJECTIVES)] == tuple(OBJECTIVES)
    assert set(objective_names()) == set(OBJECTIVES) | set(METRIC_NAMES)
    tokens, overlap = objective_named("tokens"), objective_named("overlap")
    assert (tokens.directions, tokens.targets) == (("minimize",), ("tokens.mean",))
    assert (overlap.directions, overlap.targets) == (("maximize",), ("overlap.mean",))
    assert objective_named("recall") is OBJECTIVES["recall"]
    # a metric added to the table is an objective at once
    import crp_core.analysis.tune as tune_mod

    extra = MetricInfo("made_up_rank", "higher", True, False, "a metric no scenario measures yet")
    monkeypatch.setattr(tune_mod, "METRICS", (*METRICS, extra))
    assert "made_up_rank" in tune_mod.objective_names()
    assert tune_mod.objective_named("made_up_rank").directions == ("maximize",)
    monkeypatch.undo()
    with pytest.raises(ConfigError, match="unknown objective 'made_up_rank'"):
        objective_named("made_up_rank")
    # the ranking metrics of the metric table are objectives too
    assert objective_named("ndcg@10").directions == ("maximize",) and "mrr" in objective_names()

    ckf, suite = files
    rc, out, err = _tune(capsys, ckf, suite, "--trials", "5", "--objective", "tokens", "--json")
    rep = json.loads(out)
    assert rc == 0, err
    assert rep["objective"]["name"] == "tokens"
    for t in rep["trials"]:
        pen = sum(t["violations"].values())
        assert t["values"] == [pytest.approx(t["metrics"]["tokens.mean"] + pen)]
    feasible = [t for t in rep["trials"] if t["feasible"]] or rep["trials"]
    assert rep["best"]["values"][0] == min(t["values"][0] for t in feasible)


def test_a_metric_objective_no_scenario_defines_is_refused(tmp_path):
    prepared = prepare_suite(corpus(), load_suite(write_suite(tmp_path / "suite")))
    with pytest.raises(ConfigError, match="no scenario of the suite defines the metric 'overlap'"):
        tune(prepared.corpus, prepared, CRPConfig(), "overlap", trials=2, reference=False)


def test_out_writes_only_the_keys_that_differ_from_the_defaults(files, capsys, tmp_path):
    ckf, suite = files
    base = tmp_path / "base.toml"
    base.write_text("token_budget = 4096\n[ttl_days]\nnews = 60\nuser_provided = 100\n", encoding="utf-8")
    out_toml = tmp_path / "best.toml"
    rc, out, err = _tune(
        capsys,
        ckf,
        suite,
        "--trials",
        "1",
        "--config",
        str(base),
        "--param",
        "stale_floor=0.2:0.4",
        "--out",
        str(out_toml),
        "--json",
    )
    rep = json.loads(out)
    assert rc == 0, err
    value = rep["best"]["values"][0]
    assert out_toml.read_text(encoding="utf-8") == (
        f"# crp-inspect tune: objective recall, 1 trial(s), seed 0, best trial 0 (NOT feasible, value {value:.6g})\n"
        f"# knowledge base: {ckf}; suite: {suite}\n"
        "# 3 key(s) differ from the defaults; every other key keeps its default (docs/reference/config.md)\n"
        "\n"
        "token_budget = 4096\n"
        "\n"
        "[ttl_days]\n"
        "news = 60.0\n"
        "user_provided = 100.0\n"
    )
    assert CRPConfig.load(out_toml) == CRPConfig.from_dict(rep["best"]["config"])


def test_tuned_toml_loads_back_to_the_best_config_and_keeps_comments_on_one_line(tmp_path):
    prepared = prepare_suite(corpus(), load_suite(write_suite(tmp_path / "suite")))
    base = CRPConfig().with_overrides({"stale_floor": 0.45, "ttl_days.news": "none"})
    res = tune(
        prepared.corpus,
        prepared,
        base,
        "no_regression",
        trials=4,
        seed=2,
        space=[Param("cdr_min_relevance", 0.4, 0.7, 0.01)],
    )
    text = tuned_toml(res, kb="kb\nstale_floor = 1", suite="s")
    assert CRPConfig.from_toml(text) == res.best_config
    assert "\nstale_floor = 1" not in text and "kb\\u000astale_floor = 1" in text
    assert 'news = "none"' in text and "stale_floor = 0.45" in text
    assert sum(1 for line in text.splitlines() if line and not line.startswith("#") and "=" in line) == len(
        CRPConfig().diff(res.best_config)
    )


def test_a_ttl_of_no_expiry_is_refused_before_the_trial_table_with_what_to_do(files, capsys, tmp_path):
    """user_provided never expires by default: searching it is refused before anything is printed, naming
    the file setting to start from; with that setting the study runs."""
    ckf, suite = files
    extra = ("--trials", "2", "--param", "ttl_days.user_provided=30:3650:log")
    rc, out, err = _tune(capsys, ckf, suite, *extra)
    assert rc == 2 and out == ""
    assert without_missing_store_note(err) == (
        "crp-inspect: error: cannot tune 'ttl_days.user_provided': it has no value (no expiry) in the base "
        "config; give it one to start from in a --config file ([ttl_days] user_provided = 3650)\n"
    )
    config = tmp_path / "base.toml"
    config.write_text("[ttl_days]\nuser_provided = 3650\n", encoding="utf-8")
    rc, out, err = _tune(capsys, ckf, suite, *extra, "--config", str(config), "--json")
    assert rc == 0, err
    assert json.loads(out)["space"][0]["key"] == "ttl_days.user_provided"

"""``crp-inspect dashboard``: the server's environment names the CKF given (its folder, its name, the
scenarios, the server-side limit), a path that is not a CKF or a bad port is refused before any server
starts, and the dashboard then opens that CKF first, Parquet included (AppTest, the synthetic sample)."""

from __future__ import annotations

import json

import pytest

from crp_core.cli import build_parser, main
from crp_core.cli.dashboard import app_path, dashboard_env, server_argv
from crp_core.io.ckf import load_ckf, write_ckf
from tests.support.pages import run_page
from tests.support.samples import synthetic_ckf_rows, synthetic_scenario


def _args(*argv: str):
    return build_parser().parse_args(["dashboard", *argv])


@pytest.fixture
def folder(tmp_path):
    """A folder holding the synthetic CKF twice (JSONL and Parquet) and a scenarios folder."""
    d = tmp_path / "kbs"
    (d / "scenarios").mkdir(parents=True)
    rows = synthetic_ckf_rows()
    (d / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    write_ckf(load_ckf(d / "a.jsonl"), d / "kb.parquet")
    (d / "scenarios" / "demo.json").write_text(json.dumps(synthetic_scenario()), encoding="utf-8")
    return d


def test_the_environment_names_the_ckf_its_folder_scenarios_and_limit(folder, tmp_path):
    env = dashboard_env(_args("--ckf", str(folder / "kb.parquet"), "--max-bytes", "3000000000"), {"KEEP": "1"})
    assert env == {
        "KEEP": "1",
        "CRP_SAMPLE_DIR": str(folder),
        "CRP_DEFAULT_SAMPLE": "kb.parquet",
        "CRP_SAMPLE_MAX_BYTES": "3000000000",
    }
    other = tmp_path / "other"
    other.mkdir()
    env = dashboard_env(_args("--ckf", str(folder / "a.jsonl"), "--scenarios", str(other)), {})
    assert env["CRP_SCENARIO_DIR"] == str(other) and env["CRP_DEFAULT_SAMPLE"] == "a.jsonl"
    assert dashboard_env(_args(), {"X": "y"}) == {"X": "y"}  # no --ckf: the bundled sample


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--ckf", "missing.jsonl"], "not a CKF the dashboard can open"),
        (["--ckf", "scenarios"], "not a CKF the dashboard can open"),  # a directory without facts.jsonl
        (["--ckf", "a.jsonl", "--scenarios", "nope"], "--scenarios nope: not a directory"),
        (["--port", "70000"], "--port must be between 1 and 65535"),
    ],
)
def test_bad_arguments_are_refused_before_a_server_starts(folder, monkeypatch, capsys, argv, said):
    monkeypatch.chdir(folder)
    started = []
    monkeypatch.setattr("os.execve", lambda *a: started.append(a))
    assert main(["dashboard", *argv]) == 2
    assert said in capsys.readouterr().err and not started


def test_the_server_command_runs_this_checkouts_app_on_the_loopback(folder, monkeypatch, capsys):
    argv = server_argv(_args())
    assert argv[1:5] == ["-m", "streamlit", "run", str(app_path())] and app_path().is_file()
    assert argv[argv.index("--server.address") + 1] == "127.0.0.1"
    started = []
    monkeypatch.setattr("os.execve", lambda exe, av, env: started.append((av, env)))
    assert main(["dashboard", "--ckf", str(folder / "kb.parquet"), "--port", "8611"]) == 0
    ((av, env),) = started
    assert av[av.index("--server.port") + 1] == "8611" and env["CRP_DEFAULT_SAMPLE"] == "kb.parquet"
    assert "http://127.0.0.1:8611/" in capsys.readouterr().err


def test_the_dashboard_opens_the_named_parquet_ckf_first(folder, tmp_path, monkeypatch):
    env = dashboard_env(_args("--ckf", str(folder / "kb.parquet")), {})
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    at = run_page("home")
    assert at.session_state["crp.ckf_sample"] == "kb.parquet"
    assert not at.error, [e.value for e in at.error]


def test_the_server_side_limit_applies_to_the_named_ckf(folder, tmp_path, monkeypatch):
    env = dashboard_env(_args("--ckf", str(folder / "kb.parquet"), "--max-bytes", "100"), {})
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    at = run_page("home")
    said = " ".join(str(e.value) for e in (*at.error, *at.sidebar.error)).replace("\\", "")
    assert "kb.parquet refused" in said and "over the limit of 100 bytes" in said
    assert "crp.ckf_sample" not in at.session_state or at.session_state["crp.ckf_sample"] != "kb.parquet"

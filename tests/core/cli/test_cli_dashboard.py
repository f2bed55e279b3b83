"""``crp-inspect dashboard``: the server's environment names the CKF given (its folder, its name, the
scenarios, the server-side limit), a path that is not a CKF or a bad port is refused before any server
starts, and the dashboard then opens that CKF first, Parquet included (AppTest, the synthetic sample)."""

from __future__ import annotations

import json
import os
import socket

import pytest

from crp_core.cli import build_parser, main
from crp_core.cli.dashboard import app_path, dashboard_env, server_argv
from crp_core.errors import ConfigError
from crp_core.io.ckf import load_ckf, write_ckf
from crp_ui.samples import list_samples, list_scenarios
from tests.support.pages import run_page
from tests.support.samples import synthetic_ckf_rows, synthetic_scenario


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
        (["--ckf", "missing.jsonl"], "--ckf missing.jsonl: no such file or folder"),
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
    port = _free_port()
    assert main(["dashboard", "--ckf", str(folder / "kb.parquet"), "--port", str(port)]) == 0
    ((av, env),) = started
    assert av[av.index("--server.port") + 1] == str(port) and env["CRP_DEFAULT_SAMPLE"] == "kb.parquet"
    assert f"http://127.0.0.1:{port}/" in capsys.readouterr().err


def test_the_dashboard_opens_the_named_parquet_ckf_first(folder, tmp_path, monkeypatch):
    env = dashboard_env(_args("--ckf", str(folder / "kb.parquet")), {})
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    at = run_page("home")
    assert at.session_state["crp.ckf_sample"] == "kb.parquet"
    assert not at.error, [e.value for e in at.error]
    # the picker names the server's folder, not "bundled" samples
    assert [b.label for b in at.sidebar.selectbox if "kb.parquet" in b.options] == ["Knowledge base on the server"]


def test_the_server_side_limit_applies_to_the_named_ckf(folder, tmp_path, monkeypatch):
    env = dashboard_env(_args("--ckf", str(folder / "kb.parquet"), "--max-bytes", "100"), {})
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    at = run_page("home")
    said = " ".join(str(e.value) for e in (*at.error, *at.sidebar.error)).replace("\\", "")
    assert "kb.parquet refused" in said and "over the limit of 100 bytes" in said
    assert "the server's limit: crp-inspect dashboard --max-bytes" in said  # not the sidebar's setting
    assert "crp.ckf_sample" not in at.session_state or at.session_state["crp.ckf_sample"] != "kb.parquet"


def test_the_working_directory_is_kept_for_the_server(folder, tmp_path, monkeypatch):
    """Relative paths (the triage database ./.crp_triage.sqlite, $CRP_* paths) keep meaning the caller's folder."""
    here = tmp_path / "work"
    here.mkdir()
    monkeypatch.chdir(here)
    started = []
    monkeypatch.setattr("os.execve", lambda exe, av, env: started.append(os.getcwd()))
    assert main(["dashboard", "--ckf", str(folder / "a.jsonl"), "--port", str(_free_port())]) == 0
    assert started == [str(here)] and os.getcwd() == str(here)


def test_a_named_ckf_must_be_one_the_samples_folder_lists(folder, monkeypatch, capsys):
    """A hidden file or a .json file that is not shaped like a CKF would not be listed (and another CKF of the
    folder would open instead): refused by name."""
    (folder / ".hidden.jsonl").write_text((folder / "a.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "settings.json").write_text('{"x": 1}', encoding="utf-8")
    monkeypatch.setattr("os.execve", lambda *a: None)
    for name in (".hidden.jsonl", "settings.json"):
        assert main(["dashboard", "--ckf", str(folder / name)]) == 2
        assert f"--ckf {folder / name}: not a CKF the dashboard can open" in capsys.readouterr().err
    env = dashboard_env(_args("--ckf", str(folder / "a.jsonl")), {})
    monkeypatch.setenv("CRP_SAMPLE_DIR", env["CRP_SAMPLE_DIR"])
    assert ".hidden.jsonl" not in list_samples() and "settings.json" not in list_samples()
    assert {"a.jsonl", "kb.parquet"} <= set(list_samples())


def test_inherited_scenario_folder_and_limit_give_way_to_the_named_ckf(folder):
    base = {"CRP_SCENARIO_DIR": "/old/scenarios", "CRP_SAMPLE_MAX_BYTES": "100", "KEEP": "1"}
    env = dashboard_env(_args("--ckf", str(folder / "a.jsonl")), base)
    assert "CRP_SCENARIO_DIR" not in env and "CRP_SAMPLE_MAX_BYTES" not in env and env["KEEP"] == "1"
    env = dashboard_env(_args("--ckf", str(folder / "a.jsonl"), "--max-bytes", "5000"), base)
    assert env["CRP_SAMPLE_MAX_BYTES"] == "5000"
    assert dashboard_env(_args(), base) == base  # no --ckf: the operator's environment stands


def test_max_bytes_above_the_configured_range_is_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["dashboard", "--max-bytes", str(2**40)])
    assert stop.value.code == 2 and "between 1 and 8589934592" in capsys.readouterr().err


def test_an_unreadable_server_side_limit_is_said_and_ignored(folder, tmp_path, monkeypatch):
    env = dashboard_env(_args("--ckf", str(folder / "a.jsonl")), {})
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CRP_SAMPLE_MAX_BYTES", "2GB")
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    at = run_page("home")
    warned = " ".join(str(w.value) for w in (*at.warning, *at.sidebar.warning)).replace("\\", "")
    assert "CRP_SAMPLE_MAX_BYTES='2GB' is not a whole number of bytes: ignored" in warned
    assert at.session_state["crp.ckf_sample"] == "a.jsonl" and not at.error


def _dir_ckf(parent, name="kb"):
    """A directory CKF (facts.jsonl and its manifest.json) under ``parent``."""
    d = parent / name
    d.mkdir(parents=True)
    (d / "facts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in synthetic_ckf_rows()), encoding="utf-8")
    (d / "manifest.json").write_text('{"embedding_model": "m", "dim": 2}', encoding="utf-8")
    return d


def test_a_folder_ckf_keeps_its_scenarios_among_its_own_files(tmp_path, monkeypatch):
    """The generator's layout (scenario.json beside facts.jsonl): those scenarios are offered, its manifest is not."""
    kb = _dir_ckf(tmp_path / "data")
    (kb / "scenario.json").write_text(json.dumps(synthetic_scenario()), encoding="utf-8")
    (kb / "scenario-2.toml").write_text("", encoding="utf-8")
    (kb / ".hidden.json").write_text("{}", encoding="utf-8")
    env = dashboard_env(_args("--ckf", str(kb)), {})
    assert env["CRP_SCENARIO_DIR"] == str(kb)
    monkeypatch.setenv("CRP_SCENARIO_DIR", env["CRP_SCENARIO_DIR"])
    assert list_scenarios() == ["scenario-2.toml", "scenario.json"]


def test_a_folder_ckf_scenario_folder_order(tmp_path):
    """scenarios/ next to the CKF, then the CKF's own scenarios/, then its own files; none: the default."""
    kb = _dir_ckf(tmp_path / "data")
    assert "CRP_SCENARIO_DIR" not in dashboard_env(_args("--ckf", str(kb)), {})  # manifest.json is no scenario
    (kb / "scenario.json").write_text("{}", encoding="utf-8")
    (kb / "scenarios").mkdir()
    assert dashboard_env(_args("--ckf", str(kb)), {})["CRP_SCENARIO_DIR"] == str(kb / "scenarios")
    (tmp_path / "data" / "scenarios").mkdir()
    assert "CRP_SCENARIO_DIR" not in dashboard_env(_args("--ckf", str(kb)), {})  # the dashboard's own default
    mine = tmp_path / "mine"
    mine.mkdir()
    assert dashboard_env(_args("--ckf", str(kb), "--scenarios", str(mine)), {})["CRP_SCENARIO_DIR"] == str(mine)


def test_a_manifest_is_a_scenario_name_outside_a_folder_ckf(tmp_path, monkeypatch):
    """Only a directory CKF's own manifest.json is left out: elsewhere the name is an ordinary scenario file."""
    d = tmp_path / "scen"
    d.mkdir()
    (d / "manifest.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("CRP_SCENARIO_DIR", str(d))
    assert list_scenarios() == ["manifest.json"]
    (d / "facts.jsonl").write_text("", encoding="utf-8")
    assert list_scenarios() == []


def test_a_busy_port_or_a_missing_ckf_is_refused_before_the_address_is_printed(folder, monkeypatch, capsys):
    started = []
    monkeypatch.setattr("os.execve", lambda *a: started.append(a))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["dashboard", "--ckf", str(folder / "a.jsonl"), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"--port {port} on 127.0.0.1: cannot listen there" in err and "http://" not in err and not started
    assert main(["dashboard", "--ckf", str(folder / "gone.jsonl")]) == 2
    assert f"--ckf {folder / 'gone.jsonl'}: no such file or folder" in capsys.readouterr().err and not started


def test_this_tools_own_json_reports_are_not_offered_as_ckfs(folder, monkeypatch, capsys):
    """``run --json`` and the export report list facts under ``facts`` but are no CKF: not listed, refused by
    name when named; a JSON object CKF is listed."""
    (folder / "run.json").write_text(json.dumps({"kind": "crp-inspect.run", "facts": []}), encoding="utf-8")
    report = {"kind": "crp-inspect.triage-export", "facts": [], "changed": []}
    (folder / "clean.export_report.json").write_text(json.dumps(report), encoding="utf-8")
    (folder / "obj.json").write_text(json.dumps({"facts": [{"fact_id": "x", "content": "y"}]}), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(folder))
    listed = list_samples()
    assert "obj.json" in listed and "run.json" not in listed and "clean.export_report.json" not in listed
    monkeypatch.setattr("os.execve", lambda *a: None)
    assert main(["dashboard", "--ckf", str(folder / "run.json")]) == 2
    assert "not a CKF the dashboard can open" in capsys.readouterr().err


def _denied_under(monkeypatch, root):
    """Every stat and listing under ``root`` fails as for a user without permission (the suite may run as root,
    which permissions do not stop)."""
    real_stat, real_scandir = os.stat, os.scandir
    root = str(root)

    def denied(path):
        if os.fspath(path).startswith(root):
            raise PermissionError(13, "Permission denied", os.fspath(path))

    monkeypatch.setattr(os, "stat", lambda p, *a, **k: denied(p) or real_stat(p, *a, **k))
    monkeypatch.setattr(os, "scandir", lambda p=".": denied(p) or real_scandir(p))
    monkeypatch.setattr(os, "listdir", lambda p=".": denied(p) or sorted(e.name for e in real_scandir(p)))


def test_folders_that_cannot_be_listed_say_why_and_offer_nothing(tmp_path, monkeypatch):
    from crp_core import folder_entries

    (tmp_path / "a.jsonl").write_text("", encoding="utf-8")
    assert folder_entries(tmp_path) == ([tmp_path / "a.jsonl"], None)
    assert folder_entries(tmp_path / "gone") == ([], "no such folder")
    assert folder_entries(tmp_path / "a.jsonl") == ([], "not a folder")
    locked = tmp_path / "locked"
    (locked / "scenarios").mkdir(parents=True)
    _denied_under(monkeypatch, locked)
    assert folder_entries(locked) == ([], "cannot list it: Permission denied")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(locked))
    from crp_ui.samples import samples_problem, scenarios_problem

    assert list_samples() == [] and list_scenarios() == []
    assert samples_problem() == scenarios_problem() == "cannot list it: Permission denied"
    monkeypatch.setenv("CRP_SCENARIO_DIR", str(tmp_path / "none"))  # a CKF without scenarios: no problem
    assert list_scenarios() == [] and scenarios_problem() is None


def test_a_ckf_that_cannot_be_read_is_refused_by_name_and_an_unlistable_folder_ckf_opens(tmp_path, monkeypatch):
    """A folder CKF whose facts can be read but whose folder cannot be listed opens (its scenarios are looked for
    beside it); one whose facts cannot be read, or a file CKF that cannot be read, is refused before any server
    starts, with the reason; a server that cannot be started is a message, not a traceback."""
    kb = _dir_ckf(tmp_path / "data")
    (kb / "scenario.json").write_text(json.dumps(synthetic_scenario()), encoding="utf-8")
    assert dashboard_env(_args("--ckf", str(kb)), {})["CRP_SCENARIO_DIR"] == str(kb)
    real_listdir, real_scandir = os.listdir, os.scandir

    def unlisted(real):
        def listing(p="."):
            if os.fspath(p) == str(kb):
                raise PermissionError(13, "Permission denied", os.fspath(p))
            return real(p)

        return listing

    monkeypatch.setattr(os, "listdir", unlisted(real_listdir))
    monkeypatch.setattr(os, "scandir", unlisted(real_scandir))
    env = dashboard_env(_args("--ckf", str(kb)), {})
    assert env["CRP_DEFAULT_SAMPLE"] == "kb" and "CRP_SCENARIO_DIR" not in env  # looked for beside it
    monkeypatch.setattr(os, "listdir", real_listdir)
    monkeypatch.setattr(os, "scandir", real_scandir)
    _denied_under(monkeypatch, kb / "facts.jsonl")
    with pytest.raises(ConfigError, match=r"--ckf .*data/kb: cannot read it: Permission denied"):
        dashboard_env(_args("--ckf", str(kb)), {})
    single = tmp_path / "b.jsonl"
    single.write_text("".join(json.dumps(r) + "\n" for r in synthetic_ckf_rows()), encoding="utf-8")
    _denied_under(monkeypatch, single)
    with pytest.raises(ConfigError, match=r"--ckf .*b\.jsonl: cannot read it: Permission denied"):
        dashboard_env(_args("--ckf", str(single)), {})


def test_a_server_that_cannot_be_started_is_a_message(folder, monkeypatch, capsys):
    def refuse(*_a):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("os.execve", refuse)
    assert main(["dashboard", "--ckf", str(folder / "a.jsonl"), "--port", str(_free_port())]) == 2
    err = capsys.readouterr().err
    assert "crp-inspect: error: cannot start the dashboard's server " in err and err.endswith("Permission denied\n")

"""``crp-inspect validate`` (exit codes and output) via crp_core.cli.main."""

from __future__ import annotations

import json
import os

import pytest

from crp_core.cli import main
from tests.support.paths import TEST_DATA
from tests.support.samples import TEST_MODEL

DATA = os.path.join(TEST_DATA)
GOOD = os.path.join(DATA, "good")
BAD = os.path.join(DATA, "bad")


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_good_ckf_summary(capsys):
    rc, out, _ = run(capsys, "validate", os.path.join(GOOD, "facts_dir"))
    assert rc == 0
    assert "OK (dir), 3 fact(s)" in out
    assert "by source type: official_documentation 1, community 1, user_provided 1" in out
    assert "by status: ACTIVE 2, STALE 1" in out
    assert "embeddings: 3 x 3 from test-model" in out


def test_ckf_without_embeddings_and_warnings(capsys):
    rc, out, _ = run(capsys, "validate", os.path.join(GOOD, "no_embeddings.jsonl"))
    assert rc == 0
    assert "embeddings: none (model will embed)" in out
    assert "warnings: 2" in out
    assert "line 4, field modified_at (fact 'g4'): neither ingested_at nor modified_at given" in out


def test_bad_ckf_prints_every_problem_and_exits_1(capsys):
    rc, out, _ = run(capsys, "validate", os.path.join(BAD, "csv_bad_weight.csv"))
    assert rc == 1
    lines = out.strip().splitlines()
    assert lines[0].endswith("refused, 1 problem(s)")
    assert lines[1] == "line 3, field importance_weight (fact 'g2'): not a number: 'lots'"


def test_lenient_lists_skipped_facts(capsys):
    rc, out, _ = run(capsys, "validate", "--lenient", os.path.join(BAD, "unknown_status.jsonl"))
    assert rc == 0
    assert "2 fact(s)" in out
    assert "skipped 1 bad fact(s) (lenient):" in out
    assert "line 2, field status (fact 'g2'): unknown status 'active'" in out


def test_lenient_still_refuses_file_level_problems(capsys):
    rc, out, _ = run(capsys, "validate", "--lenient", os.path.join(BAD, "dir_npy_row_count"))
    assert rc == 1
    assert "line 0, field embeddings.npy: 2 rows but facts.jsonl holds 3" in out


def test_max_bytes(capsys):
    rc, out, _ = run(capsys, "validate", "--max-bytes", "10", os.path.join(GOOD, "facts.jsonl"))
    assert rc == 1 and "over the limit of 10 bytes" in out
    with pytest.raises(SystemExit) as ei:  # refused by argparse, before anything is read
        run(capsys, "validate", "--max-bytes", "0", os.path.join(GOOD, "facts.jsonl"))
    assert ei.value.code == 2 and "--max-bytes" in capsys.readouterr().err


def test_json_output(capsys):
    rc, out, _ = run(capsys, "validate", "--json", os.path.join(GOOD, "facts.csv"))
    assert rc == 0
    doc = json.loads(out)
    assert doc["ckf"]["facts"] == 3 and doc["ckf"]["format"] == "csv"
    assert doc["ckf"]["by_status"] == {"ACTIVE": 2, "STALE": 1}
    rc, out, _ = run(capsys, "validate", "--json", os.path.join(BAD, "duplicate_fact_id.jsonl"))
    assert rc == 1
    doc = json.loads(out)
    assert doc["ckf"]["ok"] is False
    assert doc["ckf"]["problems"] == [
        {"line": 3, "field": "fact_id", "fact_id": "g1", "message": "duplicate id 'g1' (first at line 1)"}
    ]


@pytest.mark.parametrize("name", ["scenario.json", "scenario.toml"])
def test_good_scenario(capsys, name):
    rc, out, _ = run(capsys, "validate", "--scenario", os.path.join(GOOD, name))
    assert rc == 0
    assert "OK (etcd ports)" in out
    assert "sub-queries: 2 (1 addressed, 1 residual)" in out
    assert "config overrides: cdr_min_relevance, ttl_days" in out


def test_bad_scenario(capsys):
    rc, out, _ = run(capsys, "validate", "--scenario", os.path.join(BAD, "scenario_window_zero.json"))
    assert rc == 1
    assert "line 17, field addressed[0].window: must be a whole number >= 1, got 0" in out


def test_ckf_and_scenario_together_fail_if_either_fails(capsys):
    rc, out, _ = run(
        capsys, "validate", os.path.join(GOOD, "facts.jsonl"), "--scenario", os.path.join(BAD, "scenario_bad_now.json")
    )
    assert rc == 1
    assert "OK (jsonl), 3 fact(s)" in out and "field now" in out


def test_no_path_is_a_usage_error(capsys):
    rc, _, err = run(capsys, "validate")
    assert rc == 2 and "give a CKF PATH" in err


def test_hostile_file_never_tracebacks(capsys, tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b"\x00\xff\xfe garbage\n")
    rc, out, err = run(capsys, "validate", str(p))
    assert rc == 1 and "Traceback" not in out + err
    assert "line 0, field file: not UTF-8 text" in out


def test_toml_nested_1000_deep_is_refused_by_every_command_that_reads_toml(capsys, tmp_path):
    """Scenario, suite file, --config and --sdk-map (issue 32): exit 1 from validate, 2 from the others,
    a message naming the file and its line, no RecursionError."""
    ckf, scenario = os.path.join(DATA, "hostile", "dir_ok"), os.path.join(DATA, "hostile", "scenario_ok.json")
    deep = tmp_path / "deep.toml"
    deep.write_text('query = "q"\na = ' + "[" * 1000 + "]" * 1000 + "\n")
    calls = {
        "scenario": (1, ["validate", "--scenario", str(deep)]),
        "suite": (2, ["check", "--ckf", ckf, "--suite", str(deep)]),
        "config": (2, ["run", "--ckf", ckf, "--scenario", scenario, "--config", str(deep)]),
        "sdk map": (2, ["validate", ckf, "--sdk-map", str(deep)]),
    }
    for what, (want, argv) in calls.items():
        rc, out, err = run(capsys, *argv)
        text = out + err
        assert rc == want and "Traceback" not in text, (what, text[-500:])
        assert str(deep) in text and "nested too deeply" in text and "line 2" in text, (what, text[-500:])


# ---- a scenario's labels against a CKF -------------------------------------------------------------
def _own(tmp_path):
    from tests.support.own_suite import own_scenarios, write_own_data

    ckf, _ = write_own_data(tmp_path)
    doc = own_scenarios()["retention.json"]
    doc["expect"] = {"must_include": ["gov-0000", "gov-0099"], "must_exclude": ["k8s-0001"]}
    doc["expect"]["conflicts"] = [{"fact_a": "gov-0003", "fact_b": "gov-0098", "winner": "gov-0003"}]
    bad = tmp_path / "bad.json"
    text = json.dumps(doc, indent=1)
    bad.write_text(text, encoding="utf-8")
    return str(ckf), str(bad), text


def q(fid: str) -> str:
    return f'"{fid}"'


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("form", ["--ckf", "positional"])
def test_scenario_labels_are_checked_against_the_ckf(capsys, tmp_path, form):
    ckf, bad, text = _own(tmp_path)
    argv = ["validate", "--scenario", bad] + (["--ckf", ckf] if form == "--ckf" else [ckf])
    rc, out, _ = run(capsys, *argv)
    assert rc == 1
    lines = out.splitlines()
    assert f"scenario {bad}: refused, its labels name facts the CKF does not hold (retention)" in lines
    tail = lines[lines.index(f"  labels: 5 fact id(s), checked against {ckf}: 3 unknown") :]
    assert tail == [
        f"  labels: 5 fact id(s), checked against {ckf}: 3 unknown",
        f"    line {_line(text, q('gov-0099'))}, field expect.must_include[1] (fact 'gov-0099'): "
        f"no fact with id 'gov-0099' in the CKF {ckf}",
        f"    line {_line(text, q('k8s-0001'))}, field expect.must_exclude[0] (fact 'k8s-0001'): "
        f"no fact with id 'k8s-0001' in the CKF {ckf}",
        f"    line {_line(text, q('gov-0098'))}, field expect.conflicts[0].fact_b (fact 'gov-0098'): "
        f"no fact with id 'gov-0098' in the CKF {ckf}",
    ]


def test_scenario_labels_json_and_a_clean_scenario(capsys, tmp_path):
    ckf, bad, text = _own(tmp_path)
    rc, out, _ = run(capsys, "validate", "--scenario", bad, "--ckf", ckf, "--json")
    rep = json.loads(out)["scenario"]
    assert rc == 1 and rep["ok"] is False
    assert rep["labels"]["fact_ids"] == 5 and rep["labels"]["checked"] is True
    assert [(p["field"], p["fact_id"]) for p in rep["labels"]["unknown"]] == [
        ("expect.must_include[1]", "gov-0099"),
        ("expect.must_exclude[0]", "k8s-0001"),
        ("expect.conflicts[0].fact_b", "gov-0098"),
    ]
    good = tmp_path / "scenarios" / "retention.json"
    rc, out, _ = run(capsys, "validate", "--scenario", str(good), "--ckf", ckf)
    assert rc == 0
    assert f"  labels: 3 fact id(s), checked against {ckf}: all found" in out.splitlines()


def test_scenario_labels_without_a_ckf_say_they_were_not_checked(capsys, tmp_path):
    _, bad, _ = _own(tmp_path)
    rc, out, _ = run(capsys, "validate", "--scenario", bad)
    assert rc == 0
    assert "  labels: 5 fact id(s), not checked: give --ckf PATH to check them against a CKF" in out.splitlines()


def test_the_ckf_is_given_once(capsys, tmp_path):
    ckf, bad, _ = _own(tmp_path)
    rc, _, err = run(capsys, "validate", ckf, "--ckf", str(tmp_path / "other.jsonl"), "--scenario", bad)
    assert rc == 2 and "give the CKF once (PATH or --ckf)" in err


@pytest.mark.parametrize("command", ["conflicts", "run", "fanout", "triage stats", "validate"])
def test_every_command_names_a_misspelt_field_on_stderr(capsys, tmp_path, command):
    """A misspelt ``source_type`` / ``modified_at`` falls back to its default (unverified, age unknown): every
    command that reads the CKF says which fields it ignored, not only ``validate`` (which lists every
    warning on stdout); a CKF without one gets no such line."""
    model = {"embedding_model": TEST_MODEL}
    good = {"fact_id": "b-1", "content": "The fare is 2 euros.", "source_type": "news", "embedding": [1.0, 0.0]}
    typo = {"fact_id": "b-2", "content": "The fare is 3 euros.", "source_tpye": "news", "embedding": [1.0, 0.1]}
    good, typo = {**good, **model}, {**typo, **model}
    scen = tmp_path / "s.json"
    query = {"text": "fare", "embedding": [1.0, 0.0]}
    sub = [{"id": "s1", "text": "fare", "embedding": [1.0, 0.0]}, {"id": "s2", "text": "fee", "embedding": [0.0, 1.0]}]
    doc = {"query": query, "sub_queries": sub, "now": "2026-06-01T00:00:00Z", **model}
    scen.write_text(json.dumps(doc), encoding="utf-8")
    extra = {
        "conflicts": [],
        "run": ["--scenario", str(scen)],
        "fanout": ["--scenario", str(scen)],
        "triage stats": ["--db", str(tmp_path / "d.sqlite")],
        "validate": [],
    }[command]
    for rows, said in (([good, typo], True), ([good], False)):
        path = tmp_path / ("typo.jsonl" if said else "good.jsonl")
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        where = [str(path)] if command == "validate" else ["--ckf", str(path)]
        main([*command.split(), *where, *extra])
        err = capsys.readouterr().err
        line = "unknown field(s) ignored: 'source_tpye' (line 2)"
        assert (line in err) == (said and command != "validate"), err


def test_facts_in_another_language_are_named_by_validate_and_warned_by_the_scan(capsys, tmp_path):
    """``validate`` says which facts do not read as English (text and JSON); a command that runs the detector
    warns on stderr (docs/decisions/languages.md); an English CKF says every fact reads as English."""
    rows = [
        {"fact_id": "en1", "content": "The depot opens at 6 am on weekdays."},
        {"fact_id": "de1", "content": "Das Depot ist am Sonntag nicht geöffnet."},
        {"fact_id": "fr1", "content": "Le dépôt est fermé le dimanche et les jours fériés."},
    ]
    ckf = tmp_path / "kb.jsonl"
    ckf.write_text("".join(json.dumps(dict(r, embedding=[1.0, 0.0])) + "\n" for r in rows), encoding="utf-8")
    note = (
        "2 of 3 fact(s) do not read as English (French 1, German 1; e.g. de1, fr1): the contradiction detector "
        "reads English, so a negation, a date or a changed name in another language is missed and its findings "
        "on them are incomplete"
    )
    rc, out, _ = run(capsys, "validate", str(ckf))
    assert rc == 0 and f"  languages: {note}\n" in out
    rc, out, _ = run(capsys, "validate", "--json", str(ckf))
    assert json.loads(out)["ckf"]["languages"] == {
        "other": 2,
        "by_language": {"French": 1, "German": 1},
        "examples": ["de1", "fr1"],
        "note": note,
    }
    rc, out, err = run(capsys, "conflicts", "--ckf", str(ckf))
    assert rc == 0 and f"crp-inspect: warning: {ckf}: {note}\n" in err
    rc, out, err = run(capsys, "validate", os.path.join(GOOD, "facts.csv"))
    assert "  languages: every fact reads as English\n" in out


def test_a_long_query_is_cut_with_an_ellipsis(capsys, tmp_path):
    """A query longer than 120 characters is shown cut to 120 with '…' as the last (it was cut silently)."""
    doc = json.loads(open(os.path.join(GOOD, "scenario.json"), encoding="utf-8").read())
    doc["query"] = "What are the etcd ports " + "and the snapshot schedule " * 8 + "of atlas-prod?"
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, _ = run(capsys, "validate", "--scenario", str(path))
    assert rc == 0
    assert f"  query: {doc['query'][:119] + '…'!r}" in out


def test_shortened_cuts_only_what_is_longer():
    from crp_core.support.text import shortened

    assert shortened("abcdef", 6) == "abcdef" and shortened("abcdefg", 6) == "abcde…" and shortened("", 0) == ""

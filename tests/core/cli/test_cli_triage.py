"""``crp-inspect triage``: record, decisions, export of the cleaned CKF."""

from __future__ import annotations

import csv
import getpass
import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from crp_core.cli import main
from crp_core.io.ckf import load_ckf
from crp_core.triage import DB_PATH_ENV, Decision, DecisionStore
from tests.support.paths import REPO_ROOT
from tests.support.triage_cli import cli, record

ROOT = REPO_ROOT


def test_record_prints_the_decision_as_one_json_line(capsys, tmp_path):
    db = str(tmp_path / "d.sqlite")
    d = record(
        capsys,
        db,
        "--pair",
        "F2",
        "F1",
        "--kind",
        "override",
        "--winner",
        "F2",
        "--operator",
        "ann",
        "--note",
        "newer release",
    )
    assert {k: d[k] for k in ("id", "pair_key", "fact_a", "fact_b", "kind", "winner", "operator", "note")} == {
        "id": 1,
        "pair_key": "F1|F2",
        "fact_a": "F1",
        "fact_b": "F2",
        "kind": "override",
        "winner": "F2",
        "operator": "ann",
        "note": "newer release",
    }
    assert d["decided_at"].endswith("Z")


def test_record_with_ckf_checks_ids_and_stamps_the_fingerprint(capsys, tmp_path, ckf):
    db = str(tmp_path / "d.sqlite")
    d = record(capsys, db, "--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--ckf", ckf)
    assert d["ckf_fingerprint"] == load_ckf(ckf).fingerprint
    code, out, err = cli(
        capsys, "record", "--db", db, "--pair", "F1", "F9", "--kind", "dismiss", "--operator", "ann", "--ckf", ckf
    )
    assert code == 2 and "Traceback" not in err
    assert (
        err == f"crp-inspect: error: invalid triage decision: field 'fact_b': 'F9' is not in the knowledge base {ckf}\n"
    )
    assert d["kb_name"] == "kb.jsonl" and d["origin"] == "cli" and d["os_user"] == getpass.getuser()


def test_record_requires_a_ckf(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "triage",
                "record",
                "--db",
                str(tmp_path / "d"),
                "--pair",
                "F1",
                "F2",
                "--kind",
                "dismiss",
                "--operator",
                "x",
            ]
        )
    assert exc.value.code == 2
    assert "the following arguments are required: --ckf" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--pair", "F1", "F2", "--kind", "override", "--operator", "ann"], "field 'winner'"),
        (
            ["--pair", "F1", "F2", "--kind", "override", "--winner", "F3", "--operator", "ann"],
            "'F3' is not in the pair",
        ),
        (["--pair", "F1", "F2", "--kind", "mark_status", "--fact", "F1", "--operator", "ann"], "field 'new_status'"),
        (["--pair", "F1", "F2", "--kind", "dismiss", "--operator", " "], "field 'operator'"),
        (["--pair", "F1", "F1", "--kind", "dismiss", "--operator", "ann"], "two different facts"),
    ],
)
def test_record_refuses_bad_decisions_with_a_clear_message(capsys, tmp_path, argv, message):
    db = str(tmp_path / "d.sqlite")
    code, out, err = cli(capsys, "record", "--db", db, *argv)
    assert code == 2
    assert message in err and err.startswith("crp-inspect: error: invalid triage decision")
    assert "Traceback" not in err and out == ""


def test_unknown_kind_or_status_is_an_argparse_error(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "triage",
                "record",
                "--db",
                str(tmp_path / "d"),
                "--pair",
                "A",
                "B",
                "--kind",
                "approve",
                "--operator",
                "x",
            ]
        )
    assert exc.value.code == 2
    assert "invalid choice: 'approve'" in capsys.readouterr().err


def test_decisions_text_json_csv_and_pair_filter(capsys, tmp_path):
    db = str(tmp_path / "d.sqlite")
    record(capsys, db, "--pair", "F1", "F2", "--kind", "override", "--winner", "F2", "--operator", "ann")
    record(capsys, db, "--pair", "F3", "F4", "--kind", "dismiss", "--operator", "bob", "--note", "ok")
    record(
        capsys,
        db,
        "--pair",
        "F1",
        "F2",
        "--kind",
        "mark_status",
        "--fact",
        "F1",
        "--status",
        "QUARANTINED",
        "--operator",
        "cid",
    )
    code, out, _ = cli(capsys, "decisions", "--db", db)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3
    assert lines[0].startswith("#1 ") and lines[0].endswith("ann: [F1 | F2] override: F2 wins")
    assert lines[1].endswith("bob: [F3 | F4] dismiss: not a conflict  note: ok")
    assert lines[2].endswith("cid: [F1 | F2] mark F1 QUARANTINED")
    code, out, _ = cli(capsys, "decisions", "--db", db, "--json")
    doc = json.loads(out)
    assert [d["id"] for d in doc["decisions"]] == [1, 2, 3]
    assert doc["current"] == {
        "statuses": {"F1": "QUARANTINED"},
        "pair_decisions": {"F1|F2": {"kind": "override", "winner": "F2"}, "F3|F4": {"kind": "dismiss", "winner": None}},
    }
    code, out, _ = cli(capsys, "decisions", "--db", db, "--csv", "--pair", "F2", "F1")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["id"], r["kind"], r["operator"]) for r in rows] == [
        ("1", "override", "ann"),
        ("3", "mark_status", "cid"),
    ]


def test_read_commands_never_create_a_database(capsys, tmp_path, ckf):
    db = tmp_path / "typo.sqlite"
    code, _, err = cli(capsys, "decisions", "--db", str(db))
    assert code == 2 and "no such decision database" in err
    code, _, err = cli(capsys, "export", "--db", str(db), "--ckf", ckf, "--out", str(tmp_path / "o.jsonl"))
    assert code == 2 and "no such decision database" in err
    assert not db.exists() and not (tmp_path / "o.jsonl").exists()


def test_db_defaults_to_the_environment_variable(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv(DB_PATH_ENV, raising=False)
    code, _, err = cli(capsys, "decisions")
    assert code == 2 and DB_PATH_ENV in err
    monkeypatch.setenv(DB_PATH_ENV, str(tmp_path / "env.sqlite"))
    record(capsys, os.environ[DB_PATH_ENV], "--pair", "A", "B", "--kind", "dismiss", "--operator", "x")
    code, out, _ = cli(capsys, "decisions")
    assert code == 0 and "[A | B] dismiss" in out


@pytest.mark.parametrize("make", ["random", "foreign"])
def test_cli_refuses_corrupt_and_foreign_databases_without_touching_them(capsys, tmp_path, ckf, make):
    db = tmp_path / "x.sqlite"
    if make == "random":
        db.write_bytes(os.urandom(2048))
    else:
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE invoices (n INTEGER)")
        con.commit()
        con.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    for argv in (
        ["record", "--db", str(db), "--pair", "A", "B", "--kind", "dismiss", "--operator", "x"],
        ["decisions", "--db", str(db)],
        ["export", "--db", str(db), "--ckf", ckf, "--out", str(tmp_path / "o.jsonl")],
    ):
        code, _, err = cli(capsys, *argv)
        assert code == 2 and "refusing" in err and "Traceback" not in err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def _expected_fact_fields(f):
    """Every field of a loaded fact but ``line``, ``status`` and the triage record the export adds."""
    return (
        f.fact_id,
        f.content,
        f.source_type,
        f.importance_weight,
        f.ingested_at,
        f.modified_at,
        f.ttl_kind,
        f.ttl_seconds,
        f.source_id,
        f.source_location,
        f.community_label,
        {k: v for k, v in f.metadata.items() if k not in ("triage", "triage_history")},
    )


@pytest.mark.parametrize("out_name", ["clean.jsonl", "clean.json", "clean.csv", "clean_dir"])
def test_export_writes_a_cleaned_ckf_that_reloads_with_the_statuses(capsys, tmp_path, ckf, out_name):
    db = str(tmp_path / "d.sqlite")
    record(
        capsys,
        db,
        "--pair",
        "F1",
        "F2",
        "--kind",
        "mark_status",
        "--fact",
        "F1",
        "--status",
        "QUARANTINED",
        "--operator",
        "ann",
    )
    record(
        capsys,
        db,
        "--pair",
        "F1",
        "F2",
        "--kind",
        "mark_status",
        "--fact",
        "F2",
        "--status",
        "ACTIVE",
        "--operator",
        "ann",
    )  # F2 was STALE in the file
    record(
        capsys,
        db,
        "--pair",
        "F3",
        "F4",
        "--kind",
        "mark_status",
        "--fact",
        "F4",
        "--status",
        "DELETED",
        "--operator",
        "bob",
    )
    record(
        capsys,
        db,
        "--pair",
        "F3",
        "F4",
        "--kind",
        "mark_status",
        "--fact",
        "F4",
        "--status",
        "STALE",
        "--operator",
        "bob",
    )  # latest wins
    out = str(tmp_path / out_name)
    code, stdout, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", out)
    assert code == 0, err
    report = (
        os.path.join(out, "export_report.json")
        if out_name == "clean_dir"
        else str(tmp_path / "clean.export_report.json")
    )
    assert stdout.splitlines() == [
        f"wrote {out}: 4 facts; 3 fact(s) carry operator decisions (1 ACTIVE, 1 QUARANTINED, 1 STALE)",
        "carried: 0 superseded fact(s) (status, metadata.superseded_by, metadata.triage), 3 status mark(s) only; "
        "0 dismissed pair(s), listed in the report only",
        f"report: {report}",
    ]
    orig, clean = load_ckf(ckf), load_ckf(out)  # re-loads and re-validates
    assert [(f.fact_id, f.status, f.metadata.get("triage", {}).get("operator")) for f in clean.facts] == [
        ("F1", "QUARANTINED", "ann"),
        ("F2", "ACTIVE", "ann"),
        ("F3", "ACTIVE", None),
        ("F4", "STALE", "bob"),
    ]
    assert [_expected_fact_fields(f) for f in clean.facts] == [_expected_fact_fields(f) for f in orig.facts]
    assert clean.embedding_model == "test-model"
    assert clean.embeddings.tolist() == orig.embeddings.tolist()
    assert clean.fingerprint == orig.fingerprint
    assert [f.status for f in load_ckf(ckf).facts] == ["ACTIVE", "STALE", "ACTIVE", "ACTIVE"]  # input untouched


def test_export_warns_about_unknown_ids_and_refuses_to_overwrite_its_input(capsys, tmp_path, ckf):
    db = str(tmp_path / "d.sqlite")
    record(
        capsys,
        db,
        "--pair",
        "F1",
        "ZZ",
        "--kind",
        "mark_status",
        "--fact",
        "ZZ",
        "--status",
        "DELETED",
        "--operator",
        "ann",
    )
    code, out, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", str(tmp_path / "o.json"))
    assert code == 0 and "0 fact(s) carry operator decisions (no status changed)" in out
    assert "decisions naming unknown facts (1):\n  unknown_fact: decision #1 (mark ZZ DELETED) names ZZ" in out
    assert "1 fact id(s) named by decisions are not in" in err and "ZZ" in err
    before = Path(ckf).read_bytes()
    code, _, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", ckf)
    assert code == 2 and "refusing to overwrite" in err
    assert Path(ckf).read_bytes() == before


def test_export_lenient_skips_bad_facts_and_says_so(capsys, tmp_path, ckf):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(Path(ckf).read_text().replace('"source_type": "web"', '"source_type": "blog"'))
    db = str(tmp_path / "d.sqlite")
    record(
        capsys,
        db,
        "--pair",
        "F1",
        "F2",
        "--kind",
        "mark_status",
        "--fact",
        "F1",
        "--status",
        "STALE",
        "--operator",
        "ann",
    )
    code, _, err = cli(capsys, "export", "--db", db, "--ckf", str(bad), "--out", str(tmp_path / "o.jsonl"))
    assert code == 2 and "source_type" in err
    code, out, err = cli(
        capsys, "export", "--db", db, "--ckf", str(bad), "--out", str(tmp_path / "o.jsonl"), "--lenient"
    )
    assert code == 0 and "wrote" in out and "1 bad fact(s)" in err
    assert [(f.fact_id, f.status) for f in load_ckf(tmp_path / "o.jsonl").facts] == [
        ("F1", "STALE"),
        ("F2", "STALE"),
        ("F3", "ACTIVE"),
    ]


def test_console_entry_point_runs_triage(tmp_path):
    from tests.support.triage_cli import auto_ckf

    db = str(tmp_path / "d.sqlite")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "crp_core.cli",
            "triage",
            "record",
            "--db",
            db,
            "--pair",
            "A",
            "B",
            "--kind",
            "accept",
            "--winner",
            "A",
            "--operator",
            "ANN",
            "--ckf",
            auto_ckf(("--db", db, "--pair", "A", "B")),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with DecisionStore(db, create=False, readonly=True) as s:
        (d,) = s.all()
    assert (d.kind, d.winner, d.operator) == ("accept", "A", "ann")


def test_export_carries_overrides_prints_and_writes_the_report(capsys, tmp_path, ckf):
    db = str(tmp_path / "d.sqlite")
    over = record(
        capsys,
        db,
        "--pair",
        "F1",
        "F2",
        "--kind",
        "override",
        "--winner",
        "F2",
        "--operator",
        "ann",
        "--note",
        "2380 since v3.4",
    )
    dis = record(capsys, db, "--pair", "F3", "F4", "--kind", "dismiss", "--operator", "bob")
    with DecisionStore(db) as store:  # an accepted tie (no winner): nothing to write
        store.record(Decision.accept("F1", "F3", operator="cy"))
    # F2 is STALE in the file already, so the override's winner has no status edge: reported too
    out = tmp_path / "clean.jsonl"
    code, stdout, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", str(out))
    assert (code, err) == (0, "")
    report_file = tmp_path / "clean.export_report.json"
    assert stdout.splitlines() == [
        f"wrote {out}: 4 facts; 1 fact(s) carry operator decisions (1 STALE)",
        "carried: 1 superseded fact(s) (status, metadata.superseded_by, metadata.triage), 0 status mark(s) only; "
        "1 dismissed pair(s), listed in the report only",
        "not expressible in the CKF (2):",
        "  winner_stale: F2 wins decision #1 (override: F2 wins over F1) but is STALE in the CKF: both facts are "
        "STALE, so a re-scan may arbitrate the pair against the decision",
        "  accept_without_winner: decision #3 (accept F1 | F3, no winner) accepts a tie: there is no loser to mark, "
        "the facts are unchanged and a re-scan shows the pair undecided",
        f"report: {report_file}",
    ]
    f1 = load_ckf(out).get("F1")
    assert (f1.status, dict(f1.metadata)) == (
        "STALE",
        {
            "url": "https://example.invalid/etcd",
            "tags": ["ports"],
            "superseded_by_origin": "operator",
            "superseded_by": "F2",
            "triage": {
                "operator": "ann",
                "decided_at": over["decided_at"],
                "kind": "override",
                "note": "2380 since v3.4",
            },
        },
    )
    doc = json.loads(report_file.read_text(encoding="utf-8"))
    assert (doc["kind"], doc["version"], doc["ckf"], doc["out"], doc["format"], doc["n_facts"]) == (
        "crp-inspect.triage-export",
        1,
        ckf,
        str(out),
        "jsonl",
        4,
    )
    assert doc["facts"] == [
        {
            "fact_id": "F1",
            "status_before": "ACTIVE",
            "status": "STALE",
            "superseded_by": "F2",
            "triage": dict(f1.metadata["triage"]),
            "decision_ids": [over["id"]],
        }
    ]
    assert doc["dismissed"] == [
        {
            "fact_a": "F3",
            "fact_b": "F4",
            "decision_id": dis["id"],
            "operator": "bob",
            "decided_at": dis["decided_at"],
            "note": "",
        }
    ]
    assert (doc["conflicts"], doc["unknown_facts"], doc["replaced"]) == ([], [], [])
    assert [(i["code"], i["decision_ids"]) for i in doc["inexpressible"]] == [
        ("winner_stale", [over["id"]]),
        ("accept_without_winner", [3]),
    ]
    # --json prints the same report; --strict fails on the inexpressible items; --report moves the file
    code, stdout, _ = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", str(out), "--json")
    assert code == 0 and json.loads(stdout) == doc
    elsewhere = tmp_path / "r.json"
    code, stdout, _ = cli(
        capsys, "export", "--db", db, "--ckf", ckf, "--out", str(out), "--strict", "--report", str(elsewhere)
    )
    assert code == 1 and stdout.splitlines()[-1] == f"report: {elsewhere}"
    assert json.loads(elsewhere.read_text(encoding="utf-8")) == doc


def test_export_strict_passes_when_everything_is_carried(capsys, tmp_path, ckf):
    db = str(tmp_path / "d.sqlite")
    record(capsys, db, "--pair", "F1", "F2", "--kind", "accept", "--winner", "F1", "--operator", "ann")
    code, _, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", str(tmp_path / "o.csv"), "--strict")
    assert (code, err) == (0, "")
    f2 = load_ckf(tmp_path / "o.csv").get("F2")
    assert (f2.status, f2.metadata["superseded_by"], f2.metadata["triage"]["kind"]) == ("STALE", "F1", "accept")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--out", "{tmp}/missing/o.jsonl"], "the folder {tmp}/missing does not exist"),
        (["--out", "{tmp}/o.jsonl", "--report", "{tmp}/missing/r.json"], "--report {tmp}/missing/r.json: the folder"),
        (["--out", "{tmp}/o.jsonl", "--report", "{ckf}"], "is the input CKF; refusing to overwrite it"),
        (["--out", "{tmp}/o.jsonl", "--report", "{tmp}/o.jsonl"], "would overwrite the cleaned CKF"),
        (["--out", "{tmp}/o.jsonl", "--report", "{tmp}"], "is a folder; name a file"),
        (["--out", "{tmp}/o.txt"], "o.txt"),
    ],
)
def test_export_refuses_bad_paths_with_one_message(capsys, tmp_path, ckf, extra, message):
    db = str(tmp_path / "d.sqlite")
    record(capsys, db, "--pair", "F1", "F2", "--kind", "override", "--winner", "F2", "--operator", "ann")
    before = Path(ckf).read_bytes()
    argv = [a.format(tmp=tmp_path, ckf=ckf) for a in extra]
    code, out, err = cli(capsys, "export", "--db", db, "--ckf", ckf, *argv)
    assert code == 2 and out == ""
    assert err.startswith("crp-inspect: error: ") and message.format(tmp=tmp_path) in err and "Traceback" not in err
    assert Path(ckf).read_bytes() == before
    assert not (tmp_path / "o.jsonl").exists()


def test_export_from_the_console_has_no_traceback_on_a_bad_path(tmp_path, ckf):
    db = str(tmp_path / "d.sqlite")
    with DecisionStore(db):
        pass
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "crp_core.cli",
            "triage",
            "export",
            "--db",
            db,
            "--ckf",
            ckf,
            "--out",
            str(tmp_path / "nope" / "o.jsonl"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2 and "does not exist" in done.stderr and "Traceback" not in done.stderr


# ---- control characters in operator names, notes and fact ids ------------------------------------
ESC_OPERATOR = "op\x1b[2J\x1b[31mred"


@pytest.mark.parametrize(
    "argv, field, char",
    [
        (("--operator", ESC_OPERATOR), "operator", "U+001B"),
        (("--operator", "ann\u202ereversed"), "operator", "U+202E"),
        (("--operator", "ann\tbob"), "operator", "U+0009"),
        (("--operator", "ann\x9bbob"), "operator", "U+009B"),  # C1 CSI
        (("--operator", "ann", "--note", "see \x1b]0;title\x07"), "note", "U+001B"),
        (("--operator", "ann", "--note", "line 1\roverwritten"), "note", "U+000D"),
        (("--operator", "ann", "--note", "a\x7fb"), "note", "U+007F"),
    ],
)
def test_record_refuses_control_characters(capsys, tmp_path, argv, field, char):
    db = str(tmp_path / "d.sqlite")
    code, out, err = cli(capsys, "record", "--db", db, "--pair", "F1", "F2", "--kind", "dismiss", *argv)
    assert code == 2 and out == "" and f"field '{field}'" in err and char in err and "Traceback" not in err
    assert "\x1b" not in err  # the refusal does not echo the sequence either
    assert not (tmp_path / "d.sqlite").exists() or DecisionStore(db, readonly=True).all() == []


def test_record_refuses_control_characters_in_fact_ids(capsys, tmp_path):
    code, _, err = cli(
        capsys,
        "record",
        "--db",
        str(tmp_path / "d.sqlite"),
        "--pair",
        "F1\x1b[2J",
        "F2",
        "--kind",
        "dismiss",
        "--operator",
        "ann",
    )
    assert code == 2 and "field 'fact_a'" in err and "U+001B" in err


def test_a_note_keeps_tabs_and_newlines(capsys, tmp_path):
    db = str(tmp_path / "d.sqlite")
    d = record(
        capsys, db, "--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--note", "first\tline\nsecond line"
    )
    assert d["note"] == "first\tline\nsecond line"
    code, out, _ = cli(capsys, "decisions", "--db", db)
    assert code == 0 and out.endswith("dismiss: not a conflict  note: first\tline\\nsecond line\n")


def test_decisions_text_draws_control_characters_visibly(capsys, tmp_path):
    """A row written by an older version (or another tool) holding escapes is printed with them drawn as
    ``\\x1b``, never raw; --json and --csv keep the text exactly."""
    db = str(tmp_path / "d.sqlite")
    record(capsys, db, "--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann")
    con = sqlite3.connect(db)
    with con:
        con.execute(
            "INSERT INTO decisions (pair_key, fact_a, fact_b, kind, note, operator, decided_at, role, origin, "
            "prev_hash, entry_hash) VALUES ('F1|F2', 'F1', 'F2', 'dismiss', ?, ?, '2026-01-01T00:00:00Z', "
            "'operator', 'migrated', printf('%064d', 0), printf('%064d', 0))",
            ("n\x1b]0;x\x07\u202e", ESC_OPERATOR),
        )
    con.close()
    code, out, _ = cli(capsys, "decisions", "--db", db)
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert (
        "#2 2026-01-01T00:00:00Z op\\x1b[2J\\x1b[31mred: [F1 | F2] dismiss: not a conflict  "
        "note: n\\x1b]0;x\\x07\\u202e\n" in out
    )
    code, out, _ = cli(capsys, "decisions", "--db", db, "--json")
    assert code == 0 and any(d["operator"] == ESC_OPERATOR for d in json.loads(out)["decisions"])


def test_visible():
    from crp_core.cli.common import visible

    assert visible("plain ünïcode ok") == "plain ünïcode ok"
    assert visible("a\x1b[2Jb\x00c\x7f\x9b") == "a\\x1b[2Jb\\x00c\\x7f\\x9b"
    assert visible("x\ny\rz\tw") == "x\\ny\\rz\tw" and visible("x\ny", newlines=True) == "x\ny"
    assert visible("\u202eevil\u2066\u2028") == "\\u202eevil\\u2066\\u2028"


def test_a_decision_read_back_keeps_the_text_rules_of_its_writer():
    """Only new decisions are refused for control characters: one read back (an older audit log, a cleaned
    CKF) still applies, so no decision an operator took is dropped."""
    from crp_core.triage import Decision, DecisionError, DecisionSet, validate_decision

    old = Decision.dismiss("A", "B", operator=ESC_OPERATOR, note="n\x1b[0m")
    with pytest.raises(DecisionError, match="U\\+001B"):
        validate_decision(old)
    ds = DecisionSet.from_decisions([old])
    assert dict(ds.pair_decisions["A|B"]) == {"kind": "dismiss", "winner": None}
    assert validate_decision(old, new=False).operator == ESC_OPERATOR


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--csv"]])
def test_decisions_of_a_forged_database_are_refused_with_the_row(capsys, tmp_path, fmt):
    """A NULL fact id in a database another tool wrote: exit 2 naming the decision and its field, not a
    TypeError (issue 32)."""
    from tests.support.triage_cli import NULL_FACT_ROW, forge_db

    db = forge_db(tmp_path / "forged.sqlite", [NULL_FACT_ROW])
    code, out, err = cli(capsys, "decisions", "--db", db, *fmt)
    assert code == 2 and out == ""
    assert db in err and "decision #1" in err and "field 'fact_a'" in err


def _ckf_and_db(tmp_path, rows):
    """A JSONL CKF of ``rows`` and the path of a new decision database, both under ``tmp_path``."""
    ckf = tmp_path / "kb.jsonl"
    ckf.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return ckf, str(tmp_path / "d.sqlite")


def test_stats_reads_the_pairs_with_the_detector_as_configured(capsys, tmp_path):
    """Amounts swapped between two reworded labels: only the learned comparison flags the pair, so with
    ``detector_learned`` off the accepted pair has no pattern to credit."""
    rows = [
        {"fact_id": "a", "content": "Tickets cost 12 euros for adults and 6 euros for children.", "embedding": [1, 0]},
        {"fact_id": "b", "content": "Children pay 12 euros and adults pay 6 euros.", "embedding": [1, 0.1]},
    ]
    ckf, db = _ckf_and_db(tmp_path, rows)
    record(capsys, db, "--pair", "a", "b", "--kind", "accept", "--winner", "a", "--operator", "ann", "--ckf", str(ckf))
    base = ("stats", "--db", db, "--ckf", str(ckf), "--json")
    code, out, err = cli(capsys, *base)
    assert code == 0, err
    per_pattern = json.loads(out)["per_pattern"]
    assert per_pattern["NUMBER_CHANGED"] == {"confirmed": 1, "dismissed": 0, "precision": 1.0}
    assert sum(p["confirmed"] for p in per_pattern.values()) == 1
    settings = tmp_path / "off.toml"
    settings.write_text("detector_learned = false\n", encoding="utf-8")
    for extra in (("--set", "detector_learned=false"), ("--config", str(settings))):
        code, out, err = cli(capsys, *base, *extra)
        assert code == 0, err
        got = json.loads(out)
        # the pair is not flagged with the learned comparison off: no label (counted apart)
        assert (got["pairs"], got["flagged"], got["unflagged"], got["confirmed"], got["precision"]) == (
            1,
            0,
            1,
            0,
            None,
        )
        assert sum(p["confirmed"] for p in got["per_pattern"].values()) == 0
    code, out, err = cli(capsys, "stats", "--db", db, "--ckf", str(ckf), "--set", "detector_learned=false")
    assert code == 0 and "decided pairs whose texts the detector does not flag today: 1 (not counted)" in out
    code, _, err = cli(capsys, *base, "--set", "detector_learned=maybe")
    assert code == 2 and "detector_learned" in err


def test_a_decision_on_a_pair_the_detector_does_not_flag_is_kept_with_a_note(capsys, tmp_path):
    """Two facts about different lines (no value of one attribute differs): the dismissal is recorded, and the
    operator is told the queue does not hold the pair and the precision does not count it; a flagged pair
    gets no note."""
    rows = [
        {"fact_id": "a", "content": "Platform screen doors are fitted on the Blue Line.", "embedding": [1, 0]},
        {"fact_id": "b", "content": "The depot opens at 05:00 on weekdays.", "embedding": [0, 1]},
        {"fact_id": "c", "content": "The depot opens at 06:00 on weekdays.", "embedding": [0, 1]},
    ]
    ckf, db = _ckf_and_db(tmp_path, rows)
    argv = ("--kind", "dismiss", "--operator", "ann", "--ckf", str(ckf))
    code, out, err = cli(capsys, "record", "--db", db, "--pair", "a", "b", *argv)
    assert code == 0 and json.loads(out)["kind"] == "dismiss"
    assert "note: the detector does not flag the texts of a and b today" in err and "does not count it" in err
    assert "the decision is kept (no run pairs them, so it changes nothing)" in err
    code, out, err = cli(capsys, "record", "--db", db, "--pair", "b", "c", *argv)
    assert code == 0 and "does not flag" not in err
    code, out, err = cli(capsys, "stats", "--db", db, "--ckf", str(ckf), "--json")
    got = json.loads(out)
    assert (got["pairs"], got["flagged"], got["unflagged"], got["dismissed"], got["precision"]) == (2, 1, 1, 1, 0.0)


def test_an_override_on_a_pair_below_the_similarity_threshold_says_where_it_acts(capsys, tmp_path):
    """The texts conflict (can / cannot) but their vectors' cosine, 0.8 = 4/5 exactly, is not above
    contradiction_similarity (0.85): the scan and the queue do not pair them, runs do by the decision; the
    override is kept with a note saying so (tests/core/stages/contradictions/test_resolve.py runs one); a
    dismissal there silences the pair as a near conflict (tests/core/test_near_conflicts.py); at a cosine above
    the threshold, no note."""
    rows = [
        {"fact_id": "a", "content": "Unused advance tickets can be refunded.", "embedding": [4, 3]},
        {"fact_id": "b", "content": "Unused advance tickets cannot be refunded.", "embedding": [1, 0]},
        {"fact_id": "c", "content": "Unused advance tickets cannot be refunded.", "embedding": [4, 2.9]},
    ]
    ckf, db = _ckf_and_db(tmp_path, rows)
    argv = ("--kind", "override", "--winner", "a", "--operator", "ann", "--ckf", str(ckf))
    code, out, err = cli(capsys, "record", "--db", db, "--pair", "a", "b", *argv)
    assert code == 0 and json.loads(out)["winner"] == "a"
    assert (
        "note: the cosine of a and b is 0.800, not above contradiction_similarity 0.85: the decision is kept "
        "(every run that selects both facts arbitrates them by it), but the scan and the triage queue do not pair them"
    ) in err
    code, out, err = cli(capsys, "record", "--db", db, "--pair", "a", "b", "--kind", "dismiss", *argv[4:])
    said = (
        "runs and the scan do not pair them; the dismissal is kept, a run no longer reports them as a near "
        "conflict, and stage 4 leaves them both where that setting is lower"
    )
    assert code == 0 and said in err
    code, out, err = cli(capsys, "record", "--db", db, "--pair", "a", "c", *argv)
    assert code == 0 and "note:" not in err


def test_an_accept_without_a_winner_records_the_winner_by_authority(capsys, tmp_path):
    """At 2026-03-01 F1 (official documentation, 28 days old, fresh: 0.80 x 1 x 0.9 = 0.72) outranks F4 (web, age
    unknown: recency 1, 0.70 x 1 x 0.5 = 0.35): the accept names F1 and says so on stderr. Stored without a winner it
    read as an accepted tie in the exports while every run suppressed F4 (a walk-through's export left the loser
    ACTIVE). Two facts alike in every field tie: the accept stays without a winner."""
    db = str(tmp_path / "d.sqlite")
    code, out, err = cli(
        capsys,
        "record",
        "--db",
        db,
        "--pair",
        "F1",
        "F4",
        "--kind",
        "accept",
        "--operator",
        "ann",
        "--now",
        "2026-03-01",
    )
    assert code == 0 and json.loads(out)["winner"] == "F1"
    assert (
        "accept records the arbitration by authority at 2026-03-01T00:00:00Z, default configuration: winner F1" in err
    )
    code, out, err = cli(capsys, "record", "--db", db, "--pair", "X1", "X2", "--kind", "accept", "--operator", "ann")
    assert code == 0 and json.loads(out)["winner"] is None and "a tie (no winner)" in err
    code, out, err = cli(
        capsys, "record", "--db", db, "--pair", "F1", "F4", "--kind", "accept", "--winner", "F4", "--operator", "bo"
    )
    assert code == 0 and json.loads(out)["winner"] == "F4" and "by authority" not in err


def test_an_accept_without_a_winner_arbitrates_under_the_configuration_given(capsys, tmp_path):
    """A team that runs with its own configuration records the winner its runs show: with web sources raised to
    authority 1 and importance 1, F4 (web, age unknown: 1.0 x 1 x 1.0 = 1.0) outranks F1 (0.72 as in the test
    above), whether from ``--set`` or from ``--config``; under the defaults the accept recorded F1, the loser of
    the team's runs. The detector's note reads the same configuration: the pair a / b at cosine 0.8 is paired
    under ``contradiction_similarity`` 0.75, so no note says the scan does not pair it."""
    db = str(tmp_path / "d.sqlite")
    accept = ("record", "--db", db, "--pair", "F1", "F4", "--kind", "accept", "--now", "2026-03-01")
    raised = ("--set", "source_authority.web=1.0", "--set", "importance.web=1.0")
    code, out, err = cli(capsys, *accept, "--operator", "ann", *raised)
    assert code == 0 and json.loads(out)["winner"] == "F4", err
    assert "by authority at 2026-03-01T00:00:00Z, the configuration of --config / --set: winner F4" in err
    toml = tmp_path / "team.toml"
    toml.write_text("[source_authority]\nweb = 1.0\n\n[importance]\nweb = 1.0\n", encoding="utf-8")
    code, out, err = cli(capsys, *accept, "--operator", "bo", "--config", str(toml))
    assert code == 0 and json.loads(out)["winner"] == "F4", err
    rows = [
        {"fact_id": "a", "content": "Unused advance tickets can be refunded.", "embedding": [4, 3]},
        {"fact_id": "b", "content": "Unused advance tickets cannot be refunded.", "embedding": [1, 0]},
    ]
    (tmp_path / "below").mkdir()
    ckf, db2 = _ckf_and_db(tmp_path / "below", rows)
    argv = ("--kind", "override", "--winner", "a", "--operator", "ann", "--ckf", str(ckf))
    code, out, err = cli(
        capsys, "record", "--db", db2, "--pair", "a", "b", *argv, "--set", "contradiction_similarity=0.75"
    )
    assert code == 0 and "note:" not in err, err


def test_stats_on_an_edited_ckf_judges_the_decisions_runs_apply(capsys, tmp_path):
    """Decisions apply by fact id whatever the CKF's fingerprint, so ``run`` and ``conflicts`` keep them on an
    edited CKF; ``stats`` counted only those stamped with the new fingerprint: none (a walk-through deleted one fact
    and read 0 decided pairs and an empty review). Now the pair whose facts remain is judged, the one naming the
    deleted fact is counted apart."""
    from tests.support.triage_cli import FACTS

    def write(path, facts):
        path.write_text("".join(json.dumps({**f, "embedding_model": "test-model"}) + "\n" for f in facts))
        return str(path)

    v1, v2 = (
        write(tmp_path / "v1.jsonl", FACTS),
        write(tmp_path / "v2.jsonl", [f for f in FACTS if f["fact_id"] != "F4"]),
    )
    db = str(tmp_path / "d.sqlite")
    record(capsys, db, "--pair", "F1", "F2", "--kind", "override", "--winner", "F2", "--operator", "ann", "--ckf", v1)
    record(capsys, db, "--pair", "F3", "F4", "--kind", "dismiss", "--operator", "ann", "--ckf", v1)
    code, out, err = cli(capsys, "stats", "--db", db, "--ckf", v2, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [(p["fact_a"], p["fact_b"], p["kind"]) for p in doc["overruled"]] == [("F1", "F2", "override")]
    assert doc["unknown_pairs"] == ["F3|F4"]


def test_a_decision_without_based_on_over_a_colleagues_says_so(capsys, tmp_path):
    """Two operators in two shells, neither naming --based-on: both are recorded (the log keeps every entry),
    and the second is told it replaced the first (a walk-through's two decisions 86 ms apart passed in silence)."""
    db = str(tmp_path / "d.sqlite")

    def on_f1_f2(*argv: str) -> str:
        """``triage record`` on the pair F1, F2: its stderr, once it succeeded."""
        code, _out, err = cli(capsys, "record", "--db", db, "--pair", "F1", "F2", *argv)
        assert code == 0, err
        return err

    assert "recorded over" not in on_f1_f2("--kind", "dismiss", "--operator", "tom")
    err = on_f1_f2("--kind", "override", "--winner", "F1", "--operator", "maria")
    assert "note: recorded over #1 by tom (dismiss), which you did not name with --based-on" in err
    assert "recorded over" not in on_f1_f2(
        "--kind", "override", "--winner", "F2", "--operator", "maria", "--based-on", "2"
    )

"""Hostile input to the triage CLI and exports: clear refusals, never a traceback; spreadsheet
formulas neutralised in the CSV export."""

from __future__ import annotations

import csv
import io
import os

import pytest

from crp_core.support.spreadsheet import csv_cell
from crp_core.triage import Decision, export_csv
from tests.support.triage_cli import cli, record


def test_export_into_a_missing_folder_is_a_clear_error(capsys, tmp_path, ckf):
    db = str(tmp_path / "t.sqlite")
    record(capsys, db, "--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann")
    code, out, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", str(tmp_path / "nope" / "x.jsonl"))
    assert code == 2 and "does not exist" in err and "Traceback" not in err


def test_export_onto_a_folder_named_like_a_file_is_a_clear_error(capsys, tmp_path, ckf):
    db = str(tmp_path / "t.sqlite")
    record(capsys, db, "--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann")
    os.mkdir(tmp_path / "out.jsonl")
    code, out, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", str(tmp_path / "out.jsonl"))
    assert code == 2 and "is a folder" in err


def test_a_pair_id_that_is_not_utf8_is_refused(capsys, tmp_path):
    # what Python makes of the argv bytes a\xffb: a lone surrogate, which cannot be stored or printed
    bad = b"a\xffb".decode("utf-8", "surrogateescape")
    code, out, err = cli(
        capsys,
        "record",
        "--db",
        str(tmp_path / "t.sqlite"),
        "--pair",
        bad,
        "F2",
        "--kind",
        "dismiss",
        "--operator",
        "ann",
    )
    assert code == 2 and "field 'fact_" in err and "UTF-8" in err and "a\\udcffb" in err and out == ""


def test_csv_cells_that_look_like_formulas_are_neutralised():
    values = ("=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\rx", "plain", None, 3, -1, -1.5)
    assert [csv_cell(v) for v in values] == [
        "'=1+1",
        "'+cmd",
        "'-2",
        "'@SUM(A1)",
        "'\tx",
        "'\rx",
        "plain",
        "",
        3,  # a number stays a number, a negative one too: only text is neutralised
        -1,
        -1.5,
    ]
    d = Decision.dismiss('=HYPERLINK("http://x")', "F2", operator="@admin", note="=1+1")
    rows = list(csv.DictReader(io.StringIO(export_csv([d]))))
    assert rows[0]["fact_a"].startswith("'=") and rows[0]["operator"] == "'@admin" and rows[0]["note"] == "'=1+1"


def test_export_into_a_folder_that_is_not_a_ckf_folder_is_refused(capsys, tmp_path, ckf):
    db = str(tmp_path / "t.sqlite")
    record(capsys, db, "--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep me", encoding="utf-8")
    code, out, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", str(other))
    assert code == 2 and "Traceback" not in err
    assert f"--out {other} is a folder that holds other files and no facts.jsonl" in err
    assert sorted(os.listdir(other)) == ["notes.txt"]
    code, out, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", str(tmp_path / "fresh"))
    assert code == 0 and sorted(os.listdir(tmp_path / "fresh")) == [
        "embeddings.npy",
        "export_report.json",
        "facts.jsonl",
        "manifest.json",
    ]


def test_a_fact_id_a_ckf_loads_can_be_triaged_and_one_it_refuses_cannot(tmp_path):
    """A bidi control is data in a CKF's fact id (bidi_and_markup_ids.jsonl of the hostile corpus loads
    'abc\u202edef'): a decision on its pair was refused as holding a control character. A C0/C1 control
    is refused by both."""
    from crp_core.decisions import Decision, DecisionError, validate_decision
    from crp_core.io.ckf import load_ckf
    from tests.support.paths import TEST_DATA

    kb = load_ckf(str(TEST_DATA / "hostile" / "bidi_and_markup_ids.jsonl"))
    a, b = kb.facts[0].fact_id, kb.facts[1].fact_id
    assert a == "abc\u202edef"
    assert validate_decision(Decision.dismiss(a, b, operator="ann")).fact_a in (a, b)
    with pytest.raises(DecisionError, match=r"fact_a.*control characters \(found U\+000A at position 1\)"):
        validate_decision(Decision.dismiss("a\nb", "c", operator="ann"))
    with pytest.raises(DecisionError, match="operator"):  # an operator's name still refuses bidi controls
        validate_decision(Decision.dismiss(a, b, operator="ann\u202e"))

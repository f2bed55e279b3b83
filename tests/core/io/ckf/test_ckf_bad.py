"""The malformed CKF corpus (tests/data/bad, one file per problem kind; docs/reference/ckf.md).

Each row: file, expected line, expected field, a word the message must contain, and what lenient
loading keeps (fact ids) or None when the problem is file-level (refused even when lenient).
The corpus is made by tests/data/bad/_make_corpus.py; good facts are g1, g2, g3 and the bad one is g2
(line 2) unless the row says otherwise.
"""

from __future__ import annotations

import os

import pytest

from crp_core.errors import CKFError
from crp_core.io.ckf import load_ckf, load_ckf_bytes
from tests.support.paths import TEST_DATA

BAD = os.path.join(TEST_DATA, "bad")
KEEP13 = ("g1", "g3")

CASES = [
    # file, line, field, message fragment, lenient keeps
    ("missing_fact_id.jsonl", 2, "fact_id", "missing", KEEP13),
    ("empty_fact_id.jsonl", 2, "fact_id", "empty", KEEP13),
    ("non_string_fact_id.jsonl", 2, "fact_id", "must be a string", KEEP13),
    ("duplicate_fact_id.jsonl", 3, "fact_id", "first at line 1", ("g1", "g2")),
    ("missing_content.jsonl", 2, "content", "missing", KEEP13),
    ("empty_content.jsonl", 2, "content", "empty", KEEP13),
    ("non_string_content.jsonl", 2, "content", "must be a string", KEEP13),
    ("unknown_source_type.jsonl", 2, "source_type", "allowed: regulatory, official_documentation", KEEP13),
    ("unknown_status.jsonl", 2, "status", "allowed: ACTIVE, STALE, DELETED, QUARANTINED", KEEP13),
    ("bad_timestamp.jsonl", 2, "ingested_at", "2025-13-01", KEEP13),
    ("non_string_timestamp.jsonl", 2, "modified_at", "timestamp string", KEEP13),
    ("bad_duration.jsonl", 2, "ttl", "not an ISO 8601 duration", KEEP13),
    ("zero_duration.jsonl", 2, "ttl", "longer than zero", KEEP13),
    ("weight_out_of_range.jsonl", 2, "importance_weight", "between 0 and 1, got 1.2", KEEP13),
    ("weight_not_number.jsonl", 2, "importance_weight", "a string", KEEP13),
    ("nan_embedding.jsonl", 2, "embedding", "nan", KEEP13),
    ("inf_embedding.jsonl", 2, "embedding", "inf", KEEP13),
    ("wrong_dim_embedding.jsonl", 2, "embedding", "dimension 2, expected 3", KEEP13),
    ("non_numeric_embedding.jsonl", 2, "embedding", "not a number", KEEP13),
    ("partial_embeddings.jsonl", 2, "embedding", "2 of 3 facts carry an embedding", KEEP13),
    ("invalid_json_line.jsonl", 2, "json", "invalid JSON", KEEP13),
    ("fact_not_object.jsonl", 2, "fact", "must be a JSON object", KEEP13),
    ("metadata_not_object.jsonl", 2, "metadata", "JSON object", KEEP13),
    ("non_string_source_id.jsonl", 2, "source_id", "must be a string", KEEP13),
    ("embedding_model_conflict.jsonl", 2, "embedding_model", "'other-model' differs from 'test-model'", KEEP13),
    ("unpaired_surrogate_content.jsonl", 2, "content", "surrogate", KEEP13),
    ("bad_after_blank_lines.jsonl", 4, "status", "'GONE'", KEEP13),  # blank lines 2-3 still count
    ("json_list_bad_item.json", 2, "source_type", "'rumour'", KEEP13),  # JSON: list position
    ("csv_bad_weight.csv", 3, "importance_weight", "not a number: 'lots'", KEEP13),  # header = line 1
    ("csv_bad_embedding_cell.csv", 3, "embedding", "not valid JSON", KEEP13),
    ("csv_bad_metadata_cell.csv", 3, "metadata", "not valid JSON", KEEP13),
    ("csv_too_many_cells.csv", 3, "csv", "14 cells but the header has 13", KEEP13),
    ("dir_npy_nan_row", 2, "embedding", "row 1 holds NaN", KEEP13),
    # file-level: refused even when lenient
    ("not_utf8.jsonl", 0, "file", "not UTF-8", None),
    ("empty_file.jsonl", 0, "file", "no facts", None),
    ("invalid_json_document.json", 4, "json", "invalid JSON", None),
    ("json_wrapper_facts_not_list.json", 0, "facts", "list of facts", None),
    ("json_wrapper_bad_dim.json", 0, "dim", "whole number", None),
    ("csv_missing_content_column.csv", 1, "content", "lacks the required column", None),
    ("csv_duplicate_column.csv", 1, "content", "duplicate CSV column", None),
    ("dir_npy_row_count", 0, "embeddings.npy", "2 rows but facts.jsonl holds 3", None),
    ("dir_npy_wrong_dtype", 0, "embeddings.npy", "float32, got int32", None),
    ("dir_npy_wrong_shape", 0, "embeddings.npy", "shape", None),
    ("dir_npy_not_npy", 0, "embeddings.npy", "not a .npy file", None),
    ("dir_manifest_dim_mismatch", 0, "manifest.dim", "dim 4 but embeddings.npy has 3", None),
    ("dir_manifest_not_object", 0, "manifest.json", "JSON object", None),
    ("dir_npy_and_fact_embeddings", 0, "embeddings.npy", "one or the other", None),
]


def test_corpus_has_one_file_per_row_and_no_stray_files():
    on_disk = {n for n in os.listdir(BAD) if not n.startswith(("_", "scenario_"))}
    assert on_disk == {c[0] for c in CASES}
    assert len(CASES) >= 25


@pytest.mark.parametrize("name,line,field,fragment,keeps", CASES, ids=[c[0] for c in CASES])
def test_strict_refuses_naming_line_and_field(name, line, field, fragment, keeps):
    with pytest.raises(CKFError) as ei:
        load_ckf(os.path.join(BAD, name))
    first = ei.value.problems[0]
    assert (first.line, first.field) == (line, field), str(ei.value)
    assert fragment in first.message
    # one problem kind per file: every reported problem names the same line
    assert {p.line for p in ei.value.problems} == {line} or name == "csv_missing_content_column.csv"
    # the rendered message names the line and field too
    where = f"line {line}" if line else "file"
    assert f"{where}, field '{field}'" in str(ei.value)


@pytest.mark.parametrize("name,line,field,fragment,keeps", CASES, ids=[c[0] for c in CASES])
def test_lenient_skips_exactly_the_bad_fact(name, line, field, fragment, keeps):
    path = os.path.join(BAD, name)
    if keeps is None:
        with pytest.raises(CKFError) as ei:
            load_ckf(path, lenient=True)
        assert (ei.value.problems[0].line, ei.value.problems[0].field) == (line, field)
        return
    kb = load_ckf(path, lenient=True)
    assert tuple(f.fact_id for f in kb.facts) == keeps
    assert {p.line for p in kb.skipped} == {line}
    assert kb.skipped[0].field == field
    # embeddings, when present, stay aligned with the kept facts
    if kb.embeddings is not None:
        assert kb.embeddings.shape[0] == len(kb.facts)


def test_problem_names_fact_id_when_known():
    with pytest.raises(CKFError) as ei:
        load_ckf(os.path.join(BAD, "unknown_status.jsonl"))
    assert ei.value.problems[0].fact_id == "g2"
    assert "(fact 'g2')" in str(ei.value)


def test_every_problem_is_reported_not_just_the_first(tmp_path):
    p = tmp_path / "many.jsonl"
    p.write_text(
        '{"fact_id": "a", "content": "", "status": "X", "ttl": "P", "importance_weight": -1}\n'
        "oops\n"
        '{"fact_id": "a", "content": "dup"}\n',
        encoding="utf-8",
    )
    with pytest.raises(CKFError) as ei:
        load_ckf(p)
    got = [(q.line, q.field) for q in ei.value.problems]
    assert got == [(1, "content"), (1, "status"), (1, "importance_weight"), (1, "ttl"), (2, "json"), (3, "fact_id")]
    assert "first at line 1" in ei.value.problems[-1].message


def test_lenient_with_every_fact_bad_is_refused(tmp_path):
    p = tmp_path / "allbad.jsonl"
    p.write_text('{"content": "x"}\n{"fact_id": "b"}\n', encoding="utf-8")
    with pytest.raises(CKFError) as ei:
        load_ckf(p, lenient=True)
    assert ei.value.problems[-1].message == "no valid fact left to load"


def test_size_limit_checked_before_reading(tmp_path, monkeypatch):
    p = tmp_path / "big.jsonl"
    p.write_text('{"fact_id": "a", "content": "' + "x" * 100 + '"}\n', encoding="utf-8")
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    with pytest.raises(CKFError) as ei:
        load_ckf(p, max_bytes=50)
    assert opened == []  # refused from os.stat alone
    assert (ei.value.problems[0].line, ei.value.problems[0].field) == (0, "file")
    assert "over the limit of 50 bytes" in ei.value.problems[0].message
    with pytest.raises(CKFError):
        load_ckf(p, max_bytes=50, lenient=True)
    assert len(load_ckf(p, max_bytes=10_000)) == 1


def test_size_limit_on_uploads_and_default_from_config():
    data = b'{"fact_id": "a", "content": "hello"}\n'
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(data, "up.jsonl", max_bytes=len(data) - 1)
    assert "over the limit" in ei.value.problems[0].message
    assert len(load_ckf_bytes(data, "up.jsonl", max_bytes=len(data))) == 1
    assert len(load_ckf_bytes(data, "up.jsonl")) == 1  # default CRPConfig().ckf_max_bytes


def test_expected_model_mismatch_is_file_level():
    path = os.path.join(TEST_DATA, "good", "facts.jsonl")
    for lenient in (False, True):
        with pytest.raises(CKFError) as ei:
            load_ckf(path, expected_model="other-model", lenient=lenient)
        p = ei.value.problems[0]
        assert (p.line, p.field) == (0, "embedding_model")
        assert "'test-model'" in p.message and "'other-model'" in p.message
    assert load_ckf(path, expected_model="test-model").embedding_model == "test-model"


def test_unknown_extension_and_missing_file(tmp_path):
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(b"x", "facts.xml")
    assert ei.value.problems[0].field == "file" and ".xml" in ei.value.problems[0].message
    with pytest.raises(CKFError) as ei:
        load_ckf(tmp_path / "nope.jsonl")
    assert "cannot read" in ei.value.problems[0].message
    with pytest.raises(CKFError) as ei:
        load_ckf(tmp_path)  # a directory without facts.jsonl
    assert "facts.jsonl" in ei.value.problems[0].message


@pytest.mark.parametrize("cell", ["\u0660.5", "\uff10.5", ".5_0", "0x1p-1", "nan", "1/2"])
def test_csv_weight_cell_is_a_json_spelt_number(cell):
    """float() alone reads other scripts' digits and underscores ('\u0660.5' and '.5_0' loaded as 0.5)."""
    text = f"fact_id,content,importance_weight\ng1,one,0.5\ng2,two,{cell}\n"
    with pytest.raises(CKFError) as exc:
        load_ckf_bytes(text.encode(), "kb.csv")
    (p,) = exc.value.problems
    assert (p.line, p.field, p.message) == (3, "importance_weight", f"not a number: {cell!r}")


@pytest.mark.parametrize(("cell", "weight"), [(" 0.25 ", 0.25), ("-0", 0.0), ("1e-1", 0.1), ("+1.", 1.0), (".5", 0.5)])
def test_csv_weight_cell_json_spelt_numbers_load(cell, weight):
    kb = load_ckf_bytes(f"fact_id,content,importance_weight\ng1,one,{cell}\n".encode(), "kb.csv")
    assert kb.facts[0].importance_weight == weight

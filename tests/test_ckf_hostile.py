"""Hostile CKF files: refused whole with the line and field, never loaded half-read."""
from __future__ import annotations

from pathlib import Path

import pytest

from crp_core.cli import main
from crp_core.errors import CKFError
from crp_core.io.ckf import load_ckf

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"


def test_csv_with_an_unclosed_quote_is_refused_at_the_row_where_the_quote_opens():
    with pytest.raises(CKFError) as got:
        load_ckf(HOSTILE / "csv_unclosed_quote.csv")
    (p,) = got.value.problems
    assert (p.line, p.field) == (3, "csv")
    assert "never closed" in p.message


def test_validate_reports_the_unclosed_quote(capsys):
    assert main(["validate", str(HOSTILE / "csv_unclosed_quote.csv")]) == 1
    out = capsys.readouterr().out
    assert "line 3" in out and "never closed" in out


def test_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "facts.jsonl"
    import os

    os.mkfifo(fifo)  # a reader would block forever on open()
    with pytest.raises(CKFError) as got:
        load_ckf(fifo)
    assert "not a regular file" in got.value.problems[0].message
    d = tmp_path / "dir"
    d.mkdir()
    os.mkfifo(d / "facts.jsonl")
    with pytest.raises(CKFError, match="not a regular file"):
        load_ckf(d)


def test_a_self_linking_facts_file_says_what_it_is(tmp_path):
    import os

    d = tmp_path / "loop"
    d.mkdir()
    os.symlink(d / "facts.jsonl", d / "facts.jsonl")
    with pytest.raises(CKFError) as got:
        load_ckf(d)
    msg = got.value.problems[0].message
    assert "cannot read" in msg and "symbolic links" in msg and "has no" not in msg


def _jsonl(tmp_path, vectors):
    import json

    path = tmp_path / "kb.jsonl"
    path.write_text("".join(json.dumps({"fact_id": f"f{i}", "content": f"fact {i}", "embedding": v,
                                        "embedding_model": "test"}) + "\n" for i, v in enumerate(vectors)))
    return path


def test_an_all_zero_embedding_is_refused_by_the_loader_with_line_and_field(tmp_path, capsys):
    path = _jsonl(tmp_path, [[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(CKFError) as got:
        load_ckf(path)
    (p,) = got.value.problems
    assert (p.line, p.field) == (2, "embedding") and "all zeros" in p.message
    assert main(["validate", str(path)]) == 1  # validate refuses what run would refuse
    assert "all zeros" in capsys.readouterr().out


def test_huge_but_finite_embeddings_are_normalised_without_overflow(tmp_path):
    from crp_core.config import CRPConfig
    from crp_core.corpus.prepared import prepare_corpus

    path = _jsonl(tmp_path, [[3e38] * 8, [3e38] * 7 + [-3e38], [1.0] + [0.0] * 7])
    kb = load_ckf(path)
    corpus = prepare_corpus(kb, cache_dir=tmp_path / "cache", config=CRPConfig())
    norms = (corpus.vectors.astype("float64") ** 2).sum(axis=1) ** 0.5
    assert abs(norms - 1).max() < 1e-6


def _write(tmp_path, lines):
    path = tmp_path / "kb.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_key_given_twice_in_one_fact_is_a_warning_naming_line_and_key(tmp_path):
    kb = load_ckf(_write(tmp_path, ['{"fact_id": "a", "content": "first", "content": "second"}']))
    assert kb.facts[0].content == "second"  # JSON keeps the last value: said, not silent
    dup = [w for w in kb.warnings if w.field == "content"]
    assert [(w.line, w.field) for w in dup] == [(1, "content")] and "more than once" in dup[0].message


def test_ids_equal_after_normalisation_are_a_warning(tmp_path):
    kb = load_ckf(_write(tmp_path, ['{"fact_id": "caf\\u00e9", "content": "one"}',
                                    '{"fact_id": "cafe\\u0301", "content": "two"}',
                                    '{"fact_id": "x ", "content": "three"}', '{"fact_id": "x", "content": "four"}']))
    assert len(kb) == 4
    assert {(w.line, w.field) for w in kb.warnings if w.field == "fact_id"} == {(2, "fact_id"), (4, "fact_id")}


def test_content_of_only_invisible_characters_is_empty(tmp_path):
    with pytest.raises(CKFError) as got:
        load_ckf(_write(tmp_path, ['{"fact_id": "a", "content": "\\u200b\\u200d \\ufeff"}']))
    (p,) = got.value.problems
    assert (p.line, p.field) == (1, "content") and "invisible" in p.message

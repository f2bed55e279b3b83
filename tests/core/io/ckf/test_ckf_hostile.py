"""Hostile CKF files: refused whole with the line and field, never loaded half-read."""

from __future__ import annotations

import pytest

from crp_core.cli import main
from crp_core.errors import CKFError
from crp_core.io.ckf import load_ckf
from tests.support.paths import TEST_DATA

HOSTILE = TEST_DATA / "hostile"


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
    assert (
        msg == f"{d / 'facts.jsonl'} is a symlink loop (a symbolic link that leads back to itself, directly or "
        "through other links); refusing to read it"
    )


def _jsonl(tmp_path, vectors):
    import json

    path = tmp_path / "kb.jsonl"
    path.write_text(
        "".join(
            json.dumps({"fact_id": f"f{i}", "content": f"fact {i}", "embedding": v, "embedding_model": "test"}) + "\n"
            for i, v in enumerate(vectors)
        )
    )
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


def test_keys_given_twice_are_said_per_line_in_order_and_a_bom_inside_the_file_is_invalid_json(tmp_path):
    lines = [
        '{"fact_id": "a", "content": "x", "status": "ACTIVE", "content": "y", "status": "ACTIVE", "content": "z"}',
        '{"fact_id": "b", "content": "one", "metadata": {"k": 1, "k": 2}}',
        '{"fact_id": "c", "content": "two"}',
        '\ufeff{"fact_id": "d", "content": "three"}',
    ]
    kb = load_ckf(_write(tmp_path, lines), lenient=True)
    assert [(w.line, w.field) for w in kb.warnings if "more than once" in w.message] == [
        (1, "content"),
        (1, "status"),
        (2, "k"),
    ]
    assert [f.content for f in kb.facts] == ["z", "one", "two"] and kb.facts[1].metadata == {"k": 2}
    ((bom,),) = [kb.skipped]
    assert (bom.line, bom.field) == (4, "json") and "Unexpected UTF-8 BOM" in bom.message


def test_ids_equal_after_normalisation_are_a_warning(tmp_path):
    kb = load_ckf(
        _write(
            tmp_path,
            [
                '{"fact_id": "caf\\u00e9", "content": "one"}',
                '{"fact_id": "cafe\\u0301", "content": "two"}',
                '{"fact_id": "x ", "content": "three"}',
                '{"fact_id": "x", "content": "four"}',
            ],
        )
    )
    assert len(kb) == 4
    assert {(w.line, w.field) for w in kb.warnings if w.field == "fact_id"} == {(2, "fact_id"), (4, "fact_id")}


def test_content_of_only_invisible_characters_is_empty(tmp_path):
    with pytest.raises(CKFError) as got:
        load_ckf(_write(tmp_path, ['{"fact_id": "a", "content": "\\u200b\\u200d \\ufeff"}']))
    (p,) = got.value.problems
    assert (p.line, p.field) == (1, "content") and "invisible" in p.message


def test_a_looping_symlink_as_the_ckf_path_says_symlink_loop_whatever_its_name(tmp_path):
    for name in ("kb.jsonl", "kb"):  # without an extension it used to say "unknown CKF format"
        link = tmp_path / name
        link.symlink_to(link)
        with pytest.raises(CKFError) as got:
            load_ckf(link)
        (p,) = got.value.problems
        assert (p.line, p.field) == (0, "file")
        assert p.message == (
            f"{link} is a symlink loop (a symbolic link that leads back to itself, directly or "
            "through other links); refusing to read it"
        )


def test_links_in_a_ckf_folder_are_said_not_skipped(tmp_path):
    d = tmp_path / "kb"
    d.mkdir()
    (d / "facts.jsonl").write_text('{"fact_id": "a", "content": "x"}\n', encoding="utf-8")
    (d / "manifest.json").symlink_to(d / "manifest.json")  # os.path.exists() is False for a loop
    with pytest.raises(CKFError) as got:
        load_ckf(d)
    assert [(p.field, "symlink loop" in p.message) for p in got.value.problems] == [("manifest.json", True)]
    (d / "manifest.json").unlink()
    (d / "embeddings.npy").symlink_to(tmp_path / "gone.npy")
    with pytest.raises(CKFError) as got:
        load_ckf(d)
    (p,) = got.value.problems
    assert p.field == "embeddings.npy"
    assert (
        p.message == f"{d / 'embeddings.npy'} is a broken symbolic link (its target "
        f"{str(tmp_path / 'gone.npy')!r} does not exist)"
    )


def test_a_nul_or_other_control_character_in_an_id_is_refused_with_line_and_field(tmp_path):
    path = _write(
        tmp_path,
        [
            '{"fact_id": "ok", "content": "fine"}',
            '{"fact_id": "a\\u0000b", "content": "x"}',
            '{"fact_id": "c\\nd", "content": "y"}',
            '{"fact_id": "e", "content": "z", "source_id": "s\\u0000"}',
        ],
    )
    with pytest.raises(CKFError) as got:
        load_ckf(path)
    assert [(p.line, p.field, p.message.split(":")[0]) for p in got.value.problems] == [
        (2, "fact_id", "contains the control character U+0000 at position 1"),
        (3, "fact_id", "contains the control character U+000A at position 1"),
        (4, "source_id", "contains a NUL character (U+0000) at position 1"),
    ]


def test_a_nul_in_content_is_kept_with_a_warning(tmp_path):
    kb = load_ckf(_write(tmp_path, ['{"fact_id": "a", "content": "before\\u0000after\\u0000"}']))
    assert kb.facts[0].content == "before\x00after\x00"
    (w,) = [w for w in kb.warnings if w.field == "content"]
    assert (w.line, w.fact_id) == (1, "a") and w.message.startswith("holds 2 NUL character(s) (U+0000)")


def test_a_failed_write_leaves_the_previous_ckf_whole(tmp_path, monkeypatch):
    from crp_core.io.ckf import write_ckf

    (tmp_path / "x").mkdir()
    kb = load_ckf(_write(tmp_path / "x", ['{"fact_id": "b", "content": "new"}']))
    path = _write(tmp_path, ['{"fact_id": "a", "content": "old"}'])
    before = path.read_bytes()

    def fail(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", fail)
    with pytest.raises(OSError, match="No space left"):
        write_ckf(kb, path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["kb.jsonl", "x"]
    monkeypatch.undo()
    write_ckf(kb, path)
    assert [f.content for f in load_ckf(path).facts] == ["new"]


def test_a_content_over_the_tokenizer_bound_loads_with_a_warning_naming_it(tmp_path, monkeypatch):
    import json

    import crp_core.io.ckf.assemble as assemble

    monkeypatch.setattr(assemble, "TOKENIZED_CHARS_MAX", 30)
    path = tmp_path / "long.jsonl"
    rows = [{"fact_id": "short", "content": "Port 2379."}, {"fact_id": "long", "content": "x" * 31}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    kb = load_ckf(str(path))
    assert len(kb) == 2 and kb.get("long").content == "x" * 31  # the content itself is kept whole
    long_warnings = [(w.line, w.field, w.fact_id, w.message) for w in kb.warnings if w.field == "content"]
    assert long_warnings == [
        (2, "content", "long", "31 characters: the model reads the first 30 (embedding and token count, "
         "the count scaled to the whole text)")
    ]  # fmt: skip


def _tiny_rows() -> list[dict]:
    unit = [1.0] + [0.0] * 3
    return [
        {"fact_id": "ok", "content": "Port 2379.", "embedding": unit},
        {"fact_id": "tiny", "content": "Port 2380.", "embedding": [1e-50] * 4},
    ]


def _tiny_problems(kind: str, tmp_path) -> list[tuple[int, str, str | None, str]]:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _tiny_rows()
    if kind == "jsonl":
        path = tmp_path / "tiny.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    else:  # parquet (a folder's embeddings.npy must be float32 already: 1e-50 cannot be written there)
        path = tmp_path / "tiny.parquet"
        cols = {k: [r[k] for r in rows] for k in ("fact_id", "content")}
        cols["embedding"] = pa.array([r["embedding"] for r in rows], pa.list_(pa.float64()))
        pq.write_table(pa.table(cols), path)
    with pytest.raises(CKFError) as ei:
        load_ckf(str(path))
    return [(p.line, p.field, p.fact_id, p.message) for p in ei.value.problems]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_an_embedding_below_float32s_range_is_refused_where_it_is_read(kind, tmp_path):
    """1e-50 is not zero as a float64 but is as float32, which the run reads: refused at load (validate), by line."""
    problems = _tiny_problems(kind, tmp_path)
    assert [(line, field, fid) for line, field, fid, _ in problems] == [(2, "embedding", "tiny")]
    assert "zeros" in problems[0][3] and ("float32" in problems[0][3])


def test_a_scenario_embedding_below_float32s_range_is_refused():
    from crp_core.errors import ScenarioError
    from crp_core.io.scenario import scenario_from_dict

    with pytest.raises(ScenarioError) as ei:
        scenario_from_dict({"query": {"text": "port?", "embedding": [1e-50] * 4}})
    assert [(p.field, p.message) for p in ei.value.problems] == [
        ("query.embedding", "is all zeros as float32: every value is below float32's smallest (about 1.4e-45), "
         "so the stored vector has no direction")
    ]  # fmt: skip


def test_a_scenario_embedding_of_more_numbers_than_any_model_gives_is_refused():
    from crp_core.errors import ScenarioError
    from crp_core.io.scenario import MAX_EMBEDDING_DIM, scenario_from_dict

    assert MAX_EMBEDDING_DIM == 8192
    scenario_from_dict({"query": {"text": "q", "embedding": [0.5] * 8192}})
    with pytest.raises(ScenarioError) as ei:
        scenario_from_dict({"query": {"text": "q", "embedding": [0.5] * 8193}})
    assert [(p.field, p.message) for p in ei.value.problems] == [
        ("query.embedding", "8,193 numbers: an embedding has at most 8,192")
    ]

"""Parquet CKFs: the same KnowledgeBase as JSONL, row + field errors, batches across row groups
(docs/reference/ckf.md; docs/decisions/loader.md, Parquet)."""

from __future__ import annotations

import dataclasses
import io
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.errors import CKFError
from crp_core.io.ckf import load_ckf, load_ckf_bytes, write_ckf
from crp_core.io.ckf.parquet import load_parquet, parquet_bytes, write_parquet
from crp_core.io.ckf.write import ckf_format
from tests.support.ckf_formats import GOOD, kbs, strip_line


def _write(path, cols: dict, metadata: dict | None = None, row_group_size: int | None = None):
    table = pa.table(cols)
    if metadata:
        table = table.replace_schema_metadata(metadata)
    pq.write_table(table, path, row_group_size=row_group_size)
    return str(path)


def _refused(path, **kw) -> list[tuple[int, str, str]]:
    with pytest.raises(CKFError) as ei:
        load_ckf(path, **kw)
    return [(p.line, p.field, p.message) for p in ei.value.problems]


def _base(n=3):
    return {
        "fact_id": [f"f{i}" for i in range(n)],
        "content": [f"The port of service {i} is {2379 + i}." for i in range(n)],
    }


# ---- round trip ---------------------------------------------------------------------------------
def test_parquet_round_trip_gives_the_knowledge_base_of_the_jsonl(tmp_path):
    ref = load_ckf(os.path.join(GOOD, "facts_wrapper.json"))
    jsonl = load_ckf(write_ckf(ref, tmp_path / "ref.jsonl"))
    out = write_ckf(jsonl, tmp_path / "ref.parquet")
    assert ckf_format(out) == "parquet"
    back = load_ckf(out)
    assert back.fmt == "parquet"
    assert strip_line(back) == strip_line(jsonl)
    assert [f.line for f in back.facts] == [1, 2, 3]  # the line of a Parquet fact is its 1-based row
    assert [dict(f.metadata) for f in back.facts] == [{"section": "ports"}, {}, {}]
    np.testing.assert_array_equal(back.embeddings, jsonl.embeddings)
    assert back.embedding_model == "test-model" == jsonl.embedding_model
    assert back.fingerprint == jsonl.fingerprint
    assert back.warnings == jsonl.warnings and back.skipped == ()


def test_the_bundled_sample_round_trips(tmp_path):
    kb = load_ckf("sample_ckf/knowledge_base.jsonl")
    back = load_ckf(write_ckf(kb, tmp_path / "s.parquet"))
    assert strip_line(back) == strip_line(kb) and back.fingerprint == kb.fingerprint
    assert kb.embeddings is not None and back.embeddings is not None  # the sample ships its MiniLM vectors
    np.testing.assert_array_equal(back.embeddings, kb.embeddings)
    assert back.embedding_model == kb.embedding_model


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kb=kbs())
def test_round_trip_property(tmp_path, kb):
    back = load_ckf_bytes(parquet_bytes(kb), "rt.parquet")
    assert strip_line(back) == strip_line(kb)
    assert [dict(f.metadata) for f in back.facts] == [dict(f.metadata) for f in kb.facts]
    assert back.embedding_model == kb.embedding_model
    assert back.fingerprint == kb.fingerprint
    if kb.embeddings is not None:
        np.testing.assert_array_equal(back.embeddings, kb.embeddings)


def test_several_row_groups_are_read_in_batches_with_global_row_numbers(tmp_path, monkeypatch):
    n = 23
    rng = np.random.default_rng(3)
    emb = rng.normal(size=(n, 4)).astype(np.float32)
    emb[17] = 0.0  # row 18: all zeros
    cols = {**_base(n), "embedding": pa.array([list(map(float, r)) for r in emb], type=pa.list_(pa.float32()))}
    path = _write(tmp_path / "groups.parquet", cols, {b"embedding_model": b"m"}, row_group_size=5)
    assert pq.ParquetFile(path).metadata.num_row_groups == 5
    seen = []
    import crp_core.io.ckf.parquet as mod

    real = mod.record_batches

    def spy(pf, batch_rows):
        for b in real(pf, batch_rows):
            seen.append(b.num_rows)
            yield b

    monkeypatch.setattr(mod, "record_batches", spy)
    kb = load_parquet(path, lenient=True, limit=1 << 30, expected_model=None, batch_rows=3)
    assert seen and max(seen) <= 3 and sum(seen) == n and len(seen) >= 8
    assert [f.line for f in kb.facts] == [i for i in range(1, n + 1) if i != 18]
    assert [(p.line, p.field) for p in kb.skipped] == [(18, "embedding")]
    assert "all zeros" in kb.skipped[0].message and kb.skipped[0].fact_id == "f17"
    np.testing.assert_array_equal(kb.embeddings, np.delete(emb, 17, axis=0))
    assert kb.embedding_model == "m"


# ---- columns and types ---------------------------------------------------------------------------
def test_types_that_arrow_gives_are_read_as_their_fields(tmp_path):
    import datetime as dt

    cols = {
        **_base(2),
        "importance_weight": pa.array([0.5, None], type=pa.float64()),
        "modified_at": pa.array([dt.datetime(2025, 3, 1, 12, tzinfo=dt.UTC), None], type=pa.timestamp("s", "UTC")),
        "metadata": pa.array([{"a": 1}, None], type=pa.struct([("a", pa.int64())])),
        "embedding": pa.array([[1, 0, 0], [0, 2, 0]], type=pa.list_(pa.int32(), 3)),
        "embedding_model": ["col-model", "col-model"],
        "source_id": pa.array([None, None], type=pa.null()),
    }
    kb = load_ckf(_write(tmp_path / "t.parquet", cols))
    a, b = kb.facts
    assert a.importance_weight == 0.5 and b.importance_weight is None
    assert a.modified_at == dt.datetime(2025, 3, 1, 12, tzinfo=dt.UTC) and b.modified_at is None
    assert dict(a.metadata) == {"a": 1} and dict(b.metadata) == {}
    assert kb.embedding_model == "col-model"
    np.testing.assert_array_equal(kb.embeddings, [[1, 0, 0], [0, 2, 0]])


@pytest.mark.parametrize(
    "column,array,expected",
    [
        ("content", pa.array([1, 2, 3]), "has type int64, expected a string column"),
        ("importance_weight", pa.array(["0.5", "x", "y"]), "has type string, expected a numeric column"),
        ("embedding", pa.array(["[1]", "[2]", "[3]"]), "has type string, expected a list column of numbers"),
        ("embedding", pa.array([["a"], ["b"], ["c"]]), "has type list<element: string>, expected a list column"),
        ("modified_at", pa.array([1, 2, 3]), "has type int64, expected a string (ISO 8601) or timestamp column"),
        ("metadata", pa.array([[1], [2], [3]]), "expected a JSON-object string or a struct column"),
    ],
)
def test_a_wrong_column_type_is_named(tmp_path, column, array, expected):
    cols = {**_base(), column: array}
    problems = _refused(_write(tmp_path / "w.parquet", cols), lenient=True)  # a schema problem refuses in lenient too
    assert len(problems) == 1
    line, field, msg = problems[0]
    assert (line, field) == (0, column) and expected in msg and repr(column) in msg


def test_missing_required_columns(tmp_path):
    problems = _refused(_write(tmp_path / "m.parquet", {"content": ["a"], "status": ["ACTIVE"]}))
    assert [(p[0], p[1]) for p in problems] == [(0, "fact_id")]
    assert "lacks the required column 'fact_id'" in problems[0][2]


def test_bad_rows_are_named_by_row_and_field(tmp_path):
    cols = {
        "fact_id": ["a", None, "c", "d", "e", "a"],
        "content": ["x one", "x two", "x three", "x four", "x five", "x six"],
        "status": ["ACTIVE", "ACTIVE", "NOPE", "ACTIVE", "ACTIVE", "ACTIVE"],
        "metadata": [None, None, None, "{not json", "[1]", None],
        "embedding": pa.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 2.0], [float("nan"), 1.0], [2.0, 2.0]]),
    }
    problems = _refused(_write(tmp_path / "b.parquet", cols))
    assert [(line, field) for line, field, _ in problems] == [
        (2, "fact_id"),
        (3, "status"),
        (4, "metadata"),
        (5, "metadata"),
        (5, "embedding"),
        (6, "fact_id"),
    ]
    msgs = dict(((line, field), m) for line, field, m in problems)
    assert "Parquet cell is not valid JSON" in msgs[(4, "metadata")]
    assert "element 0 is nan (NaN or infinite)" in msgs[(5, "embedding")]
    assert "duplicate id 'a' (first at line 1)" in msgs[(6, "fact_id")]
    kb = load_ckf(_write(tmp_path / "b.parquet", cols), lenient=True)
    assert [f.fact_id for f in kb.facts] == ["a"]  # a fact with any bad field is skipped whole


def test_bad_embedding_rows(tmp_path):
    emb = pa.array(
        [[1.0, 0.0], None, [], [1.0, None], [1.0, 2.0, 3.0], [1e39, 1.0], [0.5, 0.5]], type=pa.list_(pa.float64())
    )
    cols = {"fact_id": [f"f{i}" for i in range(7)], "content": [f"text {i}" for i in range(7)], "embedding": emb}
    kb = load_ckf(_write(tmp_path / "e.parquet", cols), lenient=True)
    got = {(p.line, p.field): p.message for p in kb.skipped}
    assert set(got) == {(2, "embedding"), (3, "embedding"), (4, "embedding"), (5, "embedding"), (6, "embedding")}
    assert "this fact has none" in got[(2, "embedding")]
    assert "non-empty list" in got[(3, "embedding")]
    assert "element 1 is not a number: null" in got[(4, "embedding")]
    assert "dimension 3, expected 2" in got[(5, "embedding")]
    assert "too large for float32" in got[(6, "embedding")]
    assert [f.fact_id for f in kb.facts] == ["f0", "f6"]
    np.testing.assert_array_equal(kb.embeddings, np.array([[1.0, 0.0], [0.5, 0.5]], dtype=np.float32))


def test_model_from_key_value_metadata_and_a_disagreeing_column(tmp_path):
    cols = {**_base(2), "embedding": [[1.0, 0.0], [0.0, 1.0]], "embedding_model": ["kv", "other"]}
    problems = _refused(_write(tmp_path / "k.parquet", cols, {b"embedding_model": b"kv", b"dim": b"2"}))
    assert [(p[0], p[1]) for p in problems] == [(2, "embedding_model")]
    assert "Parquet key-value metadata" in problems[0][2]
    problems = _refused(_write(tmp_path / "d.parquet", _base(1) | {"embedding": [[1.0, 0.0]]}, {b"dim": b"3"}))
    assert [(p[0], p[1]) for p in problems] == [(1, "embedding")]
    assert "dimension 2, expected 3 (the declared dim)" in problems[0][2]
    problems = _refused(_write(tmp_path / "x.parquet", _base(1), {b"dim": b"two"}))
    assert [(p[0], p[1]) for p in problems] == [(0, "parquet.dim")]


def test_expected_model_mismatch_is_refused(tmp_path):
    path = _write(tmp_path / "m.parquet", _base(1) | {"embedding": [[1.0]]}, {b"embedding_model": b"a"})
    with pytest.raises(CKFError) as ei:
        load_ckf(path, expected_model="b")
    assert [(p.line, p.field) for p in ei.value.problems] == [(0, "embedding_model")]


# ---- broken files and limits ---------------------------------------------------------------------
def test_truncated_and_non_parquet_files_are_refused(tmp_path):
    good = parquet_bytes(load_ckf(os.path.join(GOOD, "facts_wrapper.json")))
    for name, data in [
        ("trunc.parquet", good[: len(good) // 2]),
        ("tail.parquet", good[:-3]),
        ("text.parquet", b'{"fact_id": "a"}\n'),
        ("empty.parquet", b""),
    ]:
        (tmp_path / name).write_bytes(data)
        problems = _refused(tmp_path / name)
        assert [(p[0], p[1]) for p in problems] == [(0, "parquet")], name
        assert "not a readable Parquet file" in problems[0][2]
        with pytest.raises(CKFError):
            load_ckf_bytes(data, name)


def test_a_corrupt_row_group_names_the_row_it_starts_at(tmp_path):
    path = tmp_path / "c.parquet"
    _write(path, {**_base(20), "content": [f"text number {i} " * 20 for i in range(20)]}, row_group_size=10)
    md = pq.ParquetFile(path).metadata
    start = md.row_group(1).column(1).data_page_offset
    raw = bytearray(path.read_bytes())
    raw[start : start + 40] = b"\xff" * 40
    path.write_bytes(bytes(raw))
    problems = _refused(path)
    assert problems and problems[0][1] == "parquet" and problems[0][0] in (1, 11)


def test_an_empty_table_holds_no_facts(tmp_path):
    cols = {"fact_id": pa.array([], type=pa.string()), "content": pa.array([], type=pa.string())}
    problems = _refused(_write(tmp_path / "z.parquet", cols))
    assert problems == [(0, "file", "file holds no facts (no Parquet rows)")]


def test_size_limits_on_the_file_and_on_what_it_unpacks_to(tmp_path):
    path = _write(tmp_path / "big.parquet", {**_base(2), "content": ["x" * 5000, "y" * 5000]})
    size = os.path.getsize(path)
    problems = _refused(path, max_bytes=size - 1)
    assert problems[0][:2] == (0, "file") and "over the limit" in problems[0][2]
    problems = _refused(path, max_bytes=size + 1)  # compressed it fits; unpacked (10 kB of text) it does not
    assert problems[0][:2] == (0, "file") and "unpack to" in problems[0][2]
    assert len(load_ckf(path, max_bytes=1 << 20)) == 2
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(open(path, "rb").read(), "big.parquet", max_bytes=size - 1)
    assert "over the limit" in ei.value.problems[0].message


def test_a_dictionary_page_repeating_one_long_value_is_counted_per_row(tmp_path):
    """A dictionary page stores a value once however many rows repeat it: the footer counts it once, so
    the decoded size is counted as the rows decode, and the read stops before decoding past the limit."""
    n, long = 60, "z" * 100_000
    path = _write(tmp_path / "bomb.parquet", {**_base(n), "content": [long] * n})
    footer = sum(pq.ParquetFile(path).metadata.row_group(0).column(j).total_uncompressed_size for j in range(2))
    assert footer < 200_000 < n * len(long)  # the footer sees one copy
    problems = _refused(path, max_bytes=1_000_000)
    assert problems == [
        (1, "file", "Parquet data unpacks to more than 1,000,000 bytes by row 60 (the ckf_max_bytes "
         "setting; --max-bytes on the command line): refused before decoding")
    ]  # fmt: skip
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(open(path, "rb").read(), "bomb.parquet", max_bytes=1_000_000)
    assert "refused before decoding" in ei.value.problems[0].message
    assert len(load_ckf(path, max_bytes=n * len(long) + 100_000)) == n  # within the limit it loads as ever


def test_a_nested_text_column_is_counted_as_decoded_too(tmp_path):
    n, long = 40, "m" * 50_000
    path = _write(tmp_path / "nested.parquet", {**_base(n), "metadata": [{"note": long, "tags": [long]}] * n})
    problems = _refused(path, max_bytes=1_000_000)
    assert problems[0][:2] == (1, "file") and "refused before decoding" in problems[0][2]


def test_a_run_of_one_repeated_number_is_counted_by_its_values(tmp_path):
    """Fixed-width values (an embedding's floats) run-length encoded: the footer's page sizes are small, its
    count of values is not."""
    n, dim = 4, 200_000
    path = _write(tmp_path / "floats.parquet", {**_base(n), "embedding": [[0.5] * dim] * n})
    pages = sum(pq.ParquetFile(path).metadata.row_group(0).column(j).total_uncompressed_size for j in range(3))
    assert pages < 100_000
    problems = _refused(path, max_bytes=1_000_000)
    assert problems[0][:2] == (0, "file") and "unpack to" in problems[0][2]


def test_a_folder_named_parquet_is_refused(tmp_path):
    (tmp_path / "f.parquet").mkdir()
    problems = _refused(tmp_path / "f.parquet")
    assert problems[0][:2] == (0, "file")


def test_write_parquet_is_atomic_and_loadable_and_keeps_row_groups(tmp_path):
    kb = load_ckf(os.path.join(GOOD, "facts_wrapper.json"))
    out = write_parquet(kb, str(tmp_path / "w.parquet"), row_group_rows=1)
    assert pq.ParquetFile(out).metadata.num_row_groups == 3
    assert pq.ParquetFile(out).schema_arrow.metadata[b"embedding_model"] == b"test-model"
    assert [n for n in os.listdir(tmp_path) if n.startswith(".crp-write-")] == []
    assert load_ckf(out).fingerprint == kb.fingerprint


def test_unknown_columns_warn_once(tmp_path):
    kb = load_ckf(_write(tmp_path / "u.parquet", {**_base(2), "colour": ["red", "blue"]}))
    assert [(w.line, w.field) for w in kb.warnings if w.field == "colour"] == [(1, "colour")]


@settings(max_examples=80, deadline=None)
@given(data=st.data(), lenient=st.booleans())
def test_mutated_parquet_never_crashes(data, lenient):
    kb = load_ckf(os.path.join(GOOD, "facts_wrapper.json"))
    kb = dataclasses.replace(
        kb, facts=tuple(dataclasses.replace(f, metadata={"k": json.dumps(i)}) for i, f in enumerate(kb.facts))
    )
    raw = bytearray(parquet_bytes(kb))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i : i + data.draw(st.integers(1, 8))] = data.draw(st.binary(min_size=0, max_size=8))
    try:
        got = load_ckf_bytes(bytes(raw), "m.parquet", lenient=lenient)
    except CKFError as exc:
        assert exc.problems and all(isinstance(p.line, int) and p.field for p in exc.problems)
    else:
        assert len(got) >= 1


def test_bytes_and_path_loads_agree():
    data = parquet_bytes(load_ckf(os.path.join(GOOD, "facts_wrapper.json")))
    a = load_ckf_bytes(data, "x.PARQUET")
    b = load_ckf_bytes(io.BytesIO(data).getvalue(), "x.parquet")
    assert a.fingerprint == b.fingerprint and a.fmt == "parquet"


def test_the_sidebar_uploader_accepts_parquet_and_its_bytes_load():
    from crp_ui.sidebar import UPLOAD_TYPES

    assert "parquet" in UPLOAD_TYPES
    data = parquet_bytes(load_ckf(os.path.join(GOOD, "facts_wrapper.json")))
    assert len(load_ckf_bytes(data, "uploaded.parquet")) == 3  # what the uploader's callback calls


def test_a_damaged_string_page_is_a_problem_not_a_traceback():
    """Bytes that are not UTF-8 in a string column (a damaged page that still decodes) are refused with
    the rows of the batch and the field ``parquet`` (found by the mutation test above)."""
    kb = load_ckf(os.path.join(GOOD, "facts_wrapper.json"))
    kb = dataclasses.replace(
        kb, facts=tuple(dataclasses.replace(f, metadata={"k": json.dumps(i)}) for i, f in enumerate(kb.facts))
    )
    raw = bytearray(parquet_bytes(kb))
    raw[102:105] = b"\x00\x00\x80"  # the example hypothesis found
    with pytest.raises(CKFError) as exc:
        load_ckf_bytes(bytes(raw), "m.parquet")
    assert any(p.field == "parquet" for p in exc.value.problems), exc.value.problems


@pytest.mark.parametrize(
    "unit,tz,beyond",
    [
        ("us", "UTC", 253402300800 * 10**6),  # 10000-01-01T00:00:00Z
        ("s", None, 253402300800 * 7),
        ("ms", "+01:00", -62135596800 * 10**3 - 1),  # one millisecond before year 1
        ("s", "-01:00", -62135596800 + 1800),  # year 1 in UTC, year 0 in the column's time zone
    ],
)
def test_a_timestamp_beyond_years_1_to_9999_is_a_problem_of_its_row(tmp_path, unit, tz, beyond):
    """An Arrow timestamp Python's datetime cannot hold: a problem at its row and field, not an
    OverflowError (issue 32), from a path and from an upload's bytes; the other rows load (lenient)."""
    ts = pa.timestamp(unit, tz)
    cols = {**_base(3), "modified_at": pa.array([0, beyond, None], pa.int64()).cast(ts)}
    path = _write(tmp_path / "y.parquet", cols)
    (problem,) = _refused(path)
    line, field, msg = problem
    assert (line, field) == (2, "modified_at")
    assert "out of range" in msg and "years 1 to 9999" in msg and str(beyond) in msg
    with pytest.raises(CKFError) as ei:
        load_ckf_bytes(open(path, "rb").read(), "uploaded.parquet")
    assert [(p.line, p.field, p.fact_id) for p in ei.value.problems] == [(2, "modified_at", "f1")]
    kb = load_ckf(path, lenient=True)
    assert [f.fact_id for f in kb.facts] == ["f0", "f2"]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [("\u0668".encode(), "'\u0668'"), ("\u00b2".encode(), "'\u00b2'"), (b"9" * 5000, "'" + "9" * 40 + "...'")],
)
def test_a_declared_dim_is_ascii_digits(tmp_path, raw, shown):
    """int() read an Arabic-Indic 8 as 8; '\u00b2' (str.isdigit) and 5,000 digits raised ValueError: a traceback."""
    problems = _refused(_write(tmp_path / "d.parquet", _base(1) | {"embedding": [[1.0, 0.0]]}, {b"dim": raw}))
    assert problems == [(0, "parquet.dim", f"dim must be a whole number >= 1, got {shown}")]


def test_a_column_of_nulls_named_embedding_is_no_embedding(tmp_path):
    """An all-null embedding column (Arrow type null) raised AttributeError (no offsets): a traceback."""
    kb = load_ckf(_write(tmp_path / "n.parquet", _base(2) | {"embedding": pa.nulls(2)}))
    assert [f.fact_id for f in kb.facts] == ["f0", "f1"]
    assert kb.embeddings is None


def test_dictionary_encoded_text_columns_are_strings(tmp_path):
    """A categorical column (dictionary of strings, as pandas writes one) was refused as not a string."""
    cols = {k: pa.array(v).dictionary_encode() for k, v in _base(2).items()}
    cols["ingested_at"] = pa.array(["2025-03-01", "2025-03-02"]).dictionary_encode()
    cols["metadata"] = pa.array(['{"a": 1}', "{}"]).dictionary_encode()
    kb = load_ckf(_write(tmp_path / "c.parquet", cols))
    assert [(f.fact_id, f.metadata) for f in kb.facts] == [("f0", {"a": 1}), ("f1", {})]

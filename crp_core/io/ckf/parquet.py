"""Parquet CKFs: one row per fact, the columns of the JSONL/CSV CKF (docs/reference/ckf.md, SPEC-009 §2).

Read with pyarrow in batches of :data:`BATCH_ROWS` rows (``ParquetFile.iter_batches``): the decoded
Arrow data of one batch at a time, each row checked by the same per-fact parser as JSONL, so every
problem names its *row* (1-based, across row groups: the "line" of a Parquet CKF) and field.
``embedding`` is a list column of numbers; ``metadata`` a JSON-object string or a struct column;
timestamps strings or Arrow timestamps; ``embedding_model`` (and ``dim``) may be given once in the
file's key-value metadata instead of a column. A column whose Arrow type cannot hold its field is a
file-level problem naming the column and its type. Decisions: ``docs/decisions/loader.md``.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core.errors import CKFError, Problem
from crp_core.io.ckf.assemble import finish_load
from crp_core.io.ckf.facts import FACT_FIELDS, FactRecord, LoadState, check_embedding, fact_to_dict, parse_fact
from crp_core.io.ckf.source import FILE_FIELD, LIMIT_SETTING, check_ckf_file, json_reason, refuse
from crp_core.model import KnowledgeBase
from crp_core.support.files import write_atomic

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow's default allocator (mimalloc) reserves a large address space when it starts: a process
# under an address-space limit (RLIMIT_AS, as the hostile-input harness runs) then cannot start a thread.
# The system allocator, unless the environment chose one; it only matters before pyarrow's first use.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

#: rows decoded at a time (one Arrow record batch; a row group larger than this is read in parts)
BATCH_ROWS = 8192
#: rows per row group written by :func:`write_parquet`
ROW_GROUP_ROWS = 65536
#: key-value metadata keys of the file read as the declared model and dimension
META_MODEL, META_DIM = b"embedding_model", b"dim"

_STRING_COLUMNS = (
    "fact_id",
    "content",
    "source_type",
    "status",
    "ttl",
    "source_id",
    "source_location",
    "community_label",
    "embedding_model",
    "content_hash",
)
_TIME_COLUMNS = ("ingested_at", "modified_at", "last_accessed_at")
#: seconds from 1970-01-01 to the first instant a Python datetime holds (year 1) and to the first past it
#: (year 10000); an Arrow timestamp outside has no datetime
_DATETIME_SPAN_S = (-62_135_596_800, 253_402_300_800)
#: an Arrow timestamp's units per second (``ns`` is left out: int64 nanoseconds span 1677 to 2262 only)
_UNITS_PER_S = {"s": 1, "ms": 10**3, "us": 10**6}
_DAY_S = 86_400
_NUMBER_COLUMNS = ("importance_weight", "access_count")
#: digits a declared ``dim`` may have (no embedding model has a billion dimensions)
_DIM_DIGITS = 9


def _is_text(t: pa.DataType) -> bool:
    """A column of strings: string, large string, or a dictionary of either (a categorical column, as
    pandas writes one; the reader reads every text column dictionary-encoded anyway)."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _expected(name: str, t: pa.DataType) -> str | None:
    """What column ``name`` must hold when its Arrow type ``t`` cannot hold the field, else None."""
    import pyarrow as pa

    if pa.types.is_null(t):  # every value null: the field is absent on every row
        return None
    if name in _STRING_COLUMNS:
        return None if _is_text(t) else "a string column"
    if name in _TIME_COLUMNS:
        ok = _is_text(t) or pa.types.is_timestamp(t)
        return None if ok else "a string (ISO 8601) or timestamp column"
    if name in _NUMBER_COLUMNS:
        ok = pa.types.is_integer(t) or pa.types.is_floating(t)
        return None if ok else "a numeric column"
    if name == "metadata":
        ok = _is_text(t) or pa.types.is_struct(t)
        return None if ok else "a JSON-object string or a struct column"
    if name == "embedding":
        listy = pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
        if listy:
            v = t.value_type
            if pa.types.is_floating(v) or pa.types.is_integer(v) or pa.types.is_null(v):
                return None
        return "a list column of numbers (list<float>)"
    return None  # an unknown column: a warning from the per-fact parser, like any unknown field


def _type_problems(schema: pa.Schema) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for f in schema:
        if f.name in seen:
            problems.append(Problem(0, f.name, "duplicate Parquet column"))
        seen.add(f.name)
        want = _expected(f.name, f.type)
        if want is not None:
            problems.append(Problem(0, f.name, f"column {f.name!r} has type {f.type}, expected {want}"))
    for need in ("fact_id", "content"):
        if need not in seen:
            problems.append(Problem(0, need, f"Parquet schema lacks the required column {need!r}"))
    return problems


def _declared(schema: pa.Schema, st: LoadState) -> None:
    """``embedding_model`` / ``dim`` from the file's key-value metadata (the manifest of a Parquet CKF)."""
    meta = schema.metadata or {}
    if META_MODEL in meta:
        model = meta[META_MODEL].decode("utf-8", "replace")
        st.declare_model(model, "parquet.embedding_model", "the Parquet key-value metadata")
    if META_DIM in meta:
        raw = meta[META_DIM].decode("utf-8", "replace").strip()
        # ASCII digits only: int() also reads other scripts' digits, str.isdigit() admits '\u00b2' (which
        # int() refuses), and a number of thousands of digits is beyond int()'s string limit
        whole = raw.isascii() and raw.isdigit() and len(raw) <= _DIM_DIGITS
        value: Any = int(raw) if whole else (raw if len(raw) <= 40 else raw[:40] + "...")
        st.declare_dim(value, "parquet.dim")


def _row_object(row: dict[str, Any], rec_errors: list[Problem], line: int) -> dict[str, Any]:
    """A row as the fact object the JSONL parser reads: null cells absent, Arrow timestamps as ISO text,
    a JSON-object metadata string decoded (its error kept in ``rec_errors``)."""
    obj = {k: v for k, v in row.items() if v is not None}
    for name in _TIME_COLUMNS:
        v = obj.get(name)
        if isinstance(v, datetime):
            obj[name] = v.isoformat()
    m = obj.get("metadata")
    if isinstance(m, str):
        try:
            obj["metadata"] = json.loads(m)
        except (ValueError, RecursionError) as exc:
            del obj["metadata"]
            fid = obj.get("fact_id") if isinstance(obj.get("fact_id"), str) else None
            rec_errors.append(Problem(line, "metadata", f"Parquet cell is not valid JSON: {json_reason(exc)}", fid))
    return obj


def _time_column_overflows(col: pa.Array, t: pa.TimestampType) -> dict[int, str]:
    """The rows of the timestamp column ``col`` (type ``t``) whose value has no Python datetime (outside
    the years 1 to 9999, in the column's time zone when it has one), each with its problem's message."""
    import pyarrow as pa

    per_s = _UNITS_PER_S.get(t.unit)
    if per_s is None:
        return {}
    raw = np.asarray(col.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    # only values within a day of either end can fail (a time zone moves an instant by less than a day)
    lo, hi = (_DATETIME_SPAN_S[0] + _DAY_S) * per_s, (_DATETIME_SPAN_S[1] - _DAY_S) * per_s
    out: dict[int, str] = {}
    for k in np.flatnonzero((raw < lo) | (raw > hi)).tolist():
        try:
            col[k].as_py()
        except (OverflowError, ValueError):
            zone = f" (in UTC and in its time zone {t.tz})" if t.tz and t.tz not in ("UTC", "+00:00") else ""
            out[k] = (
                f"Arrow timestamp {int(raw[k])} ({t}: {t.unit} since 1970-01-01) is out of range: a timestamp "
                f"holds the years 1 to 9999{zone}"
            )
    return out


def _times_out_of_range(batch: pa.RecordBatch) -> tuple[pa.RecordBatch, dict[int, list[tuple[str, str]]]]:
    """``batch`` with every timestamp cell that has no Python datetime made null, and the (field, message)
    of each such cell by row (0-based in the batch)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    bad: dict[int, list[tuple[str, str]]] = {}
    columns = list(batch.columns)
    for i, f in enumerate(batch.schema):
        if f.name not in _TIME_COLUMNS or not pa.types.is_timestamp(f.type):
            continue
        over = _time_column_overflows(columns[i], f.type)
        if not over:
            continue
        for k, msg in over.items():
            bad.setdefault(k, []).append((f.name, msg))
        keep = pa.array([k not in over for k in range(len(columns[i]))])
        columns[i] = pc.if_else(keep, columns[i], pa.nulls(len(columns[i]), f.type))
    if not bad:
        return batch, bad
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema), bad


def record_batches(pf: Any, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The record batches of the open ``ParquetFile`` ``pf``, ``batch_rows`` rows each (the last fewer)."""
    yield from pf.iter_batches(batch_size=batch_rows)


_F32_MAX = float(np.finfo(np.float32).max)


def _batch_embeddings(col: pa.Array) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """The ``embedding`` cells of one batch, checked vectorised: (present per row, the float32 vector of
    each row that passes every check of the per-fact parser, else None: those rows take the parser's
    own check, which says what is wrong)."""
    import pyarrow as pa

    if pa.types.is_null(col.type):  # a column of nulls: no row has an embedding
        return np.zeros(len(col), dtype=bool), [None] * len(col)
    if pa.types.is_fixed_size_list(col.type):
        col = col.cast(pa.list_(col.type.value_type))
    present = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    offsets = np.asarray(col.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    values = col.values
    if pa.types.is_null(values.type):
        return present, [None] * len(col)
    vals = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)  # nulls come out as NaN
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(vals) | (np.abs(vals) > _F32_MAX)
    bad_c = np.concatenate([[0], np.cumsum(bad)])
    with np.errstate(over="ignore", invalid="ignore"):  # a value below float32's range is stored as 0
        stored_nonzero = vals.astype(np.float32) != 0
    nz_c = np.concatenate([[0], np.cumsum(stored_nonzero)])
    lo, hi = offsets[:-1], offsets[1:]
    ok = present & (hi > lo) & (bad_c[hi] == bad_c[lo]) & (nz_c[hi] > nz_c[lo])
    with np.errstate(over="ignore"):  # rows with a value over float32's range are not ok: their own check says it
        f32 = vals.astype(np.float32) if ok.any() else vals
    return present, [f32[a:b] if good else None for a, b, good in zip(lo.tolist(), hi.tolist(), ok.tolist())]


def _read_batch(batch: pa.RecordBatch, first: int, st: LoadState) -> None:
    """Parse the rows of one batch (rows ``first``, ``first + 1``, ...) into ``st.recs``."""
    names = batch.schema.names
    col = None
    present: np.ndarray | None = None
    vectors: list[np.ndarray | None] = []
    if "embedding" in names:
        col = batch.column(names.index("embedding"))
        present, vectors = _batch_embeddings(col)
        batch = batch.select([i for i, n in enumerate(names) if n != "embedding"])
    batch, out_of_range = _times_out_of_range(batch)
    for k, row in enumerate(batch.to_pylist()):
        line = first + k
        pre: list[Problem] = []
        obj = _row_object(row, pre, line)
        if k in out_of_range:
            fid = obj.get("fact_id") if isinstance(obj.get("fact_id"), str) else None
            pre += [Problem(line, name, msg, fid) for name, msg in out_of_range[k]]
        rec = parse_fact(obj, line, st, cells=False)
        if pre:
            rec.errors[:0] = pre
        if col is not None and present is not None and present[k]:
            rec.has_embedding = True
            rec.embedding = vectors[k]
            if rec.embedding is None:  # the per-fact parser's check says what is wrong

                def err(fieldname: str, msg: str, line: int = line, rec: FactRecord = rec) -> None:
                    rec.errors.append(Problem(line, fieldname, msg, rec.fact_id))

                rec.embedding = check_embedding(col[k].as_py(), err)
        if rec.errors:
            rec.fact = None
        st.recs.append(rec)


def _text_columns(pf: Any) -> list[str]:
    """The paths of the file's byte-array (text) leaf columns, nested ones included (``metadata.key``)."""
    return [c.path for c in pf.schema if c.physical_type == "BYTE_ARRAY"]


def _decoded_bytes(arr: pa.Array) -> int:
    """What ``arr`` takes once decoded: a dictionary-encoded text column counted per row (the values'
    lengths taken by the indices), not once per dictionary as the file's footer counts it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arr.type
    if pa.types.is_dictionary(t):
        lengths = np.asarray(pc.fill_null(pc.binary_length(arr.dictionary), 0).to_numpy(zero_copy_only=False))
        indices = np.asarray(pc.fill_null(arr.indices, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
        taken = int(lengths[indices].sum(dtype=np.int64)) if len(lengths) else 0
        return taken + 4 * len(arr)
    if pa.types.is_struct(t):
        return sum(_decoded_bytes(child) for child in arr.flatten()) + len(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _decoded_bytes(arr.flatten()) + 8 * len(arr)
    return int(arr.nbytes)


def _read_parquet(source: str | io.BytesIO, st: LoadState, batch_rows: int, limit: int) -> None:
    """Read every batch into ``st``. Text columns are read dictionary-encoded and each batch's decoded
    size is added up *before* it is decoded: over ``limit``, the read stops with a file problem (a
    dictionary page repeats one long value into every row at no cost in the file)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(source)
        schema = pf.schema_arrow
        encoded = pq.ParquetFile(source, read_dictionary=_text_columns(pf))
    except (pa.ArrowException, OSError, ValueError) as exc:
        st.file_problems.append(Problem(0, "parquet", f"not a readable Parquet file: {str(exc)[:200]}"))
        return
    bad = _type_problems(schema)
    if bad:
        st.file_problems.extend(bad)
        return
    _declared(schema, st)
    done = decoded = 0
    batches = record_batches(encoded, max(1, int(batch_rows)))
    while True:
        try:
            batch = next(batches)
            decoded += sum(_decoded_bytes(col) for col in batch.columns)
            if decoded <= limit:
                batch = batch.cast(schema)
        except StopIteration:
            break
        except (pa.ArrowException, OSError, ValueError) as exc:
            st.file_problems.append(
                Problem(done + 1, "parquet", f"unreadable Parquet data from row {done + 1} on: {str(exc)[:200]}")
            )
            return
        if decoded > limit:
            st.file_problems.append(
                Problem(
                    done + 1,
                    FILE_FIELD,
                    f"Parquet data unpacks to more than {limit:,} bytes by row {done + batch.num_rows:,} "
                    f"({LIMIT_SETTING}): refused before decoding",
                )
            )
            return
        try:
            _read_batch(batch, done + 1, st)
        except UnicodeDecodeError as exc:  # a damaged page: a string column that is not UTF-8
            st.file_problems.append(
                Problem(
                    done + 1,
                    "parquet",
                    f"rows {done + 1}-{done + batch.num_rows}: a text value is not valid UTF-8 ({exc.reason})",
                )
            )
            return
        done += batch.num_rows
    if done == 0:
        st.file_problems.append(Problem(0, FILE_FIELD, "file holds no facts (no Parquet rows)"))


#: bytes per value of the fixed-width Parquet physical types
_VALUE_BYTES = {"BOOLEAN": 1, "INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8, "INT96": 12}


def _chunk_bytes(chunk: Any) -> int:
    """A column chunk's size once decoded, from the footer: its uncompressed pages, or for a fixed-width
    column its number of values times their width when that is more (a run-length-encoded run of one
    dictionary index decodes to many values). Text columns are checked as they decode (``_read_parquet``)."""
    width = _VALUE_BYTES.get(chunk.physical_type)
    size = int(chunk.total_uncompressed_size)
    return max(size, int(chunk.num_values) * width) if width else size


def _unpacked_limit(source: str | io.BytesIO, name: str, limit: int) -> None:
    """Refuse a file whose decoded row groups exceed the size limit (a small file can unpack to far more)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        md = pq.ParquetFile(source).metadata
    except (pa.ArrowException, OSError, ValueError):
        return  # said by the reader with its reason
    total = sum(
        _chunk_bytes(md.row_group(i).column(j)) for i in range(md.num_row_groups) for j in range(md.num_columns)
    )
    if total > limit:
        refuse(
            name,
            [
                Problem(
                    0,
                    FILE_FIELD,
                    f"Parquet row groups unpack to {total} bytes, over the limit of {limit} bytes ({LIMIT_SETTING})",
                )
            ],
        )


def load_parquet(
    path: str, *, lenient: bool, limit: int, expected_model: str | None, batch_rows: int = BATCH_ROWS
) -> KnowledgeBase:
    """Load and validate a ``.parquet`` CKF file (docs/reference/ckf.md): see :func:`crp_core.io.ckf.load_ckf`."""
    check_ckf_file(path, limit)
    _unpacked_limit(path, path, limit)
    st = LoadState()
    _read_parquet(path, st, batch_rows, limit)
    return finish_load(st, source=path, fmt="parquet", lenient=lenient, expected_model=expected_model)


def load_parquet_bytes(
    data: bytes, name: str, *, lenient: bool, limit: int, expected_model: str | None, batch_rows: int = BATCH_ROWS
) -> KnowledgeBase:
    """An uploaded ``.parquet`` CKF (already within the size limit)."""
    _unpacked_limit(io.BytesIO(data), name, limit)
    st = LoadState()
    _read_parquet(io.BytesIO(data), st, batch_rows, limit)
    return finish_load(st, source=name, fmt="parquet", lenient=lenient, expected_model=expected_model)


# ---- writing ---------------------------------------------------------------------------------
def parquet_bytes(kb: KnowledgeBase, *, row_group_rows: int = ROW_GROUP_ROWS) -> bytes:
    """``kb`` as Parquet bytes: the JSONL fields as columns (``metadata`` as JSON text, ``embedding``
    as list<float32>), the model and dimension in the key-value metadata; rows in row groups of
    ``row_group_rows``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [fact_to_dict(f, None, None) for f in kb.facts]
    cols: dict[str, pa.Array] = {}
    for name in FACT_FIELDS:
        if name in ("embedding", "embedding_model"):
            continue
        values = [r.get(name) for r in rows]
        if name != "fact_id" and name != "content" and all(v is None for v in values):
            continue
        if name == "metadata":
            values = [None if v is None else json.dumps(v, ensure_ascii=False) for v in values]
        typ = pa.float64() if name == "importance_weight" else pa.string()
        cols[name] = pa.array(values, type=typ)
    meta: dict[bytes, bytes] = {}
    if kb.embeddings is not None:
        emb = np.ascontiguousarray(kb.embeddings, dtype=np.float32)
        flat = pa.array(emb.reshape(-1), type=pa.float32())
        cols["embedding"] = pa.ListArray.from_arrays(
            pa.array(np.arange(0, emb.size + 1, emb.shape[1], dtype=np.int32)), flat
        )
        meta[META_DIM] = str(int(emb.shape[1])).encode()
    if kb.embedding_model is not None:
        meta[META_MODEL] = kb.embedding_model.encode("utf-8")
    table = pa.table(cols)
    if meta:
        table = table.replace_schema_metadata(meta)
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=max(1, int(row_group_rows)))
    return buf.getvalue()


def write_parquet(kb: KnowledgeBase, path: str, *, row_group_rows: int = ROW_GROUP_ROWS) -> str:
    """Write ``kb`` as a Parquet CKF at ``path`` whole or not at all; returns the path."""
    try:
        data = parquet_bytes(kb, row_group_rows=row_group_rows)
    except ImportError as exc:  # pyarrow is a dependency; a broken install is said plainly
        why = Problem(0, FILE_FIELD, f"pyarrow is needed for .parquet: {exc}")
        raise CKFError(f"cannot write CKF {path}", [why]) from None
    write_atomic(path, data)
    return path


__all__ = ["BATCH_ROWS", "ROW_GROUP_ROWS", "load_parquet", "load_parquet_bytes", "parquet_bytes", "write_parquet"]

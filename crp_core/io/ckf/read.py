"""CKF loading and validation: the entry points and the text formats (docs/reference/ckf.md, SPEC-009 §2).

Formats: ``.jsonl`` (one fact per line, blank lines allowed), ``.json`` (a list of facts or
``{"embedding_model": ..., "facts": [...]}``), ``.csv`` (one fact per row; ``embedding`` holds a JSON
list and ``metadata`` a JSON object; an empty cell is an absent value), ``.parquet`` (one row per fact,
read in batches by :mod:`crp_core.io.ckf.parquet`), or a directory holding ``facts.jsonl`` plus
optional ``embeddings.npy`` and ``manifest.json``.

Every problem is reported with its line (JSONL line, CSV line where the row starts, JSON list
position; 0 = whole file) and field. Strict loading raises :class:`CKFError` listing all of them and
returns nothing; lenient loading skips exactly the bad facts (``KnowledgeBase.skipped``) but still
refuses the file on file-level problems. Decisions: ``docs/decisions/loader.md``.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core.errors import Problem
from crp_core.io.ckf.assemble import finish_load
from crp_core.io.ckf.facts import FactRecord, LoadState, parse_fact
from crp_core.io.ckf.source import (
    DIR_FACTS,
    DIR_MANIFEST,
    DIR_NPY,
    FILE_FIELD,
    FORMATS,
    byte_limit,
    check_ckf_file,
    check_resolves,
    check_size,
    decode,
    json_reason,
    read_ckf_file,
    refuse,
    unknown_format_message,
)
from crp_core.io.located import type_name
from crp_core.model import KnowledgeBase
from crp_core.support.collector import collector_paused

if TYPE_CHECKING:
    from crp_core.io.ckf.sdk_map import SourceTypeMap

_WRAPPER_KEYS = frozenset({"embedding_model", "facts", "dim"})
_MANIFEST_KEYS = frozenset({"embedding_model", "dim"})


# ---- public API ------------------------------------------------------------------------------
# a load builds a million small acyclic objects: the cyclic collector's passes over them are paused
@collector_paused()
def load_ckf(
    path: str | os.PathLike[str],
    *,
    lenient: bool = False,
    max_bytes: int | None = None,
    expected_model: str | None = None,
    source_map: SourceTypeMap | None = None,
    map_vectors: bool = False,
) -> KnowledgeBase:
    """Load and validate a CKF file or directory (docs/reference/ckf.md). Raises :class:`CKFError`.
    ``source_map`` gives an SDK snapshot's facts their source types (unused for other formats).
    ``map_vectors``: a directory's ``embeddings.npy`` is memory-mapped read-only instead of read into
    memory (a one-shot command over a large CKF; the file must then not be rewritten while it runs)."""
    path = os.fspath(path)
    limit = byte_limit(max_bytes)
    check_resolves(path)
    if os.path.isdir(path):
        return _load_dir(path, lenient=lenient, limit=limit, expected_model=expected_model, map_vectors=map_vectors)
    fmt = FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        refuse(path, [Problem(0, FILE_FIELD, unknown_format_message(path))])
    if fmt == "parquet":  # read in row batches by pyarrow (crp_core.io.ckf.parquet)
        from crp_core.io.ckf.parquet import load_parquet

        return load_parquet(path, lenient=lenient, limit=limit, expected_model=expected_model)
    data = read_ckf_file(path, limit)
    if fmt == "json" and _is_sdk_snapshot(data):
        from crp_core.io.ckf.sdk import read_snapshot

        return read_snapshot(data, path, lenient=lenient, source_map=source_map)
    return _load_data(data, path, fmt, lenient=lenient, expected_model=expected_model)


@collector_paused()
def load_ckf_bytes(
    data: bytes,
    name: str,
    *,
    lenient: bool = False,
    max_bytes: int | None = None,
    expected_model: str | None = None,
    source_map: SourceTypeMap | None = None,
) -> KnowledgeBase:
    """Load an uploaded CKF; the format comes from ``name``'s extension (docs/reference/ckf.md); ``source_map``
    as in :func:`load_ckf`."""
    limit = byte_limit(max_bytes)
    fmt = FORMATS.get(os.path.splitext(name)[1].lower())
    if fmt is None:
        refuse(name, [Problem(0, FILE_FIELD, unknown_format_message(name))])
    if not isinstance(data, (bytes, bytearray, memoryview)):
        refuse(name, [Problem(0, FILE_FIELD, f"expected bytes, got {type(data).__name__}")])
    check_size(name, len(data), limit)
    if fmt == "parquet":
        from crp_core.io.ckf.parquet import load_parquet_bytes

        return load_parquet_bytes(bytes(data), name, lenient=lenient, limit=limit, expected_model=expected_model)
    if fmt == "json" and _is_sdk_snapshot(data):
        from crp_core.io.ckf.sdk import read_snapshot

        return read_snapshot(bytes(data), name, lenient=lenient, source_map=source_map)
    return _load_data(bytes(data), name, fmt, lenient=lenient, expected_model=expected_model)


def _is_sdk_snapshot(data: bytes | bytearray | memoryview) -> bool:
    """A crprotocol SDK snapshot (``{"header": ..., "payload": ...}``), recognised by shape: read by
    :mod:`crp_core.io.ckf.sdk` (docs/decisions/sdk-snapshots.md)."""
    from crp_core.io.ckf.sdk import looks_like_snapshot

    return looks_like_snapshot(bytes(data[:4096]))


# ---- reading ---------------------------------------------------------------------------------
def _load_data(data: bytes, source: str, fmt: str, *, lenient: bool, expected_model: str | None) -> KnowledgeBase:
    text, bad = decode(data)
    if bad is not None:
        refuse(source, [bad])
    assert text is not None
    st = LoadState()
    if fmt == "jsonl":
        _read_jsonl(text, st)
    elif fmt == "json":
        _read_json(text, st)
    else:
        _read_csv(text, st)
    return finish_load(st, source=source, fmt=fmt, lenient=lenient, expected_model=expected_model)


def _load_dir(path: str, *, lenient: bool, limit: int, expected_model: str | None, map_vectors: bool) -> KnowledgeBase:
    facts_path = os.path.join(path, DIR_FACTS)
    if not os.path.lexists(facts_path):
        refuse(path, [Problem(0, FILE_FIELD, f"directory has no {DIR_FACTS}")])
    # present but a link loop, a FIFO or a folder: read_ckf_file says which
    st = LoadState()
    text, bad = decode(read_ckf_file(facts_path, limit))
    if bad is not None:
        refuse(path, [bad])
    assert text is not None
    _read_jsonl(text, st)
    del text  # the facts are parsed: the file's text is not held while the vectors are checked
    man_path = os.path.join(path, DIR_MANIFEST)
    if os.path.lexists(man_path):  # lexists: a link loop or a dangling link is said, not skipped
        _read_manifest(read_ckf_file(man_path, limit, DIR_MANIFEST), st)
    npy_path = os.path.join(path, DIR_NPY)
    if os.path.lexists(npy_path):
        _read_npy(npy_path, limit, st, map_vectors)
    return finish_load(st, source=path, fmt="dir", lenient=lenient, expected_model=expected_model)


def _no_dupes(pairs: list[tuple[str, Any]], dupes: list[str]) -> dict[str, Any]:
    """A JSON object's dict, noting the keys given more than once (json keeps the last silently)."""
    out = dict(pairs)
    if len(out) == len(pairs):  # every key once: the common case, without a Python loop
        return out
    seen: set[str] = set()
    for k, _ in pairs:
        if k in seen and k not in dupes:
            dupes.append(k)
        seen.add(k)
    return out


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` split on "\\n" only (str.splitlines would also break on U+2028, U+0085, \\x1c...
    inside strings), one at a time: a large file's text is not held twice."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _read_jsonl(text: str, st: LoadState) -> None:
    dupes: list[str] = []  # the keys given more than once in the line being read
    decoder = json.JSONDecoder(object_pairs_hook=partial(_no_dupes, dupes=dupes))  # one for every line
    for n, raw in enumerate(_lines(text), start=1):
        if not raw.strip():
            continue
        dupes.clear()
        try:
            if raw.startswith("\ufeff"):  # as json.loads says it
                raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", raw, 0)
            obj = decoder.decode(raw)
        except (ValueError, RecursionError) as exc:
            st.recs.append(FactRecord(n, errors=[Problem(n, "json", f"invalid JSON: {json_reason(exc)}")]))
            continue
        for key in dupes:
            st.warnings.append(Problem(n, key, "key given more than once in this fact; the last value is used"))
        # a line without a "\\u" escape cannot give a string a lone surrogate (the text is strict UTF-8)
        st.recs.append(parse_fact(obj, n, st, cells=False, escapes="\\u" in raw))
    if not st.recs and not text.strip():  # every non-blank line made a record: no copy of a large text
        st.file_problems.append(Problem(0, FILE_FIELD, "file holds no facts"))


def _read_json(text: str, st: LoadState) -> None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else 0
        st.file_problems.append(Problem(line, "json", f"invalid JSON: {json_reason(exc)}"))
        return
    if isinstance(doc, dict):
        for k in doc:
            if k not in _WRAPPER_KEYS:
                st.warnings.append(
                    Problem(0, k, "unknown top-level key, ignored (expected embedding_model, facts, dim)")
                )
        if "facts" not in doc:
            st.file_problems.append(Problem(0, "facts", 'a JSON object CKF needs a "facts" list'))
            return
        st.declare_model(doc.get("embedding_model"), "embedding_model", "the JSON wrapper")
        st.declare_dim(doc.get("dim"), "dim")
        facts = doc["facts"]
    else:
        facts = doc
    if not isinstance(facts, list):
        st.file_problems.append(Problem(0, "facts", f"expected a list of facts, got {type_name(facts)}"))
        return
    if not facts:
        st.file_problems.append(Problem(0, FILE_FIELD, "file holds no facts"))
    escapes = "\\u" in text  # as in _read_jsonl, once for the whole document
    for i, obj in enumerate(facts, start=1):
        st.recs.append(parse_fact(obj, i, st, cells=False, escapes=escapes))


def _read_csv(text: str, st: LoadState) -> None:
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, len(text) + 1))  # huge cells are data, not an error
    try:
        # strict: a quoted cell that is never closed is an error, not a cell that swallows every later row
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        header = _csv_header(reader, st)
        if header is None:
            return
        _csv_rows(reader, header, st)
        if not st.recs and not st.file_problems:
            st.file_problems.append(Problem(0, FILE_FIELD, "file holds no facts (header only)"))
    finally:
        csv.field_size_limit(old)


def _csv_header(reader: Any, st: LoadState) -> list[str] | None:
    """The CSV header's column names (duplicates and missing required columns are file problems);
    None when the file has no readable header."""
    try:
        header = next(reader)
    except StopIteration:
        st.file_problems.append(Problem(0, FILE_FIELD, "file holds no facts (empty CSV)"))
        return None
    except csv.Error as exc:
        st.file_problems.append(Problem(1, "csv", f"unreadable CSV header: {exc}"))
        return None
    header = [h.strip() for h in header]
    seen: dict[str, int] = {}
    for i, h in enumerate(header):
        if h in seen:
            st.file_problems.append(Problem(1, h or "(empty)", f"duplicate CSV column (also column {seen[h] + 1})"))
        seen.setdefault(h, i)
    for need in ("fact_id", "content"):
        if need not in seen:
            st.file_problems.append(Problem(1, need, f"CSV header lacks the required column {need!r}"))
    return header


def _csv_rows(reader: Any, header: list[str], st: LoadState) -> None:
    """Every row after the header as a fact record, located at the line where the row starts."""
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            hint = (
                "; a quoted cell that starts on this row is never closed"
                if "unexpected end of data" in str(exc)
                else ""
            )
            st.file_problems.append(Problem(start, "csv", f"unreadable CSV from here on: {exc}{hint}"))
            return
        line, start = start, reader.line_num + 1
        if not any(c.strip() for c in row):
            continue
        if len(row) > len(header):
            why = f"row has {len(row)} cells but the header has {len(header)} columns"
            st.recs.append(FactRecord(line, errors=[Problem(line, "csv", why)]))
            continue
        obj = {h: c for h, c in zip(header, row) if c != ""}
        st.recs.append(parse_fact(obj, line, st, cells=True))


def _read_manifest(data: bytes, st: LoadState) -> None:
    text, bad = decode(data, DIR_MANIFEST)
    if bad is not None:
        st.file_problems.append(bad)
        return
    try:
        man = json.loads(text or "")
    except (ValueError, RecursionError) as exc:
        st.file_problems.append(Problem(0, DIR_MANIFEST, f"invalid JSON: {json_reason(exc)}"))
        return
    if not isinstance(man, dict):
        st.file_problems.append(Problem(0, DIR_MANIFEST, f"expected a JSON object, got {type_name(man)}"))
        return
    for k in man:
        if k not in _MANIFEST_KEYS:
            st.warnings.append(Problem(0, f"manifest.{k}", "unknown manifest key, ignored"))
    st.declare_model(man.get("embedding_model"), "manifest.embedding_model", DIR_MANIFEST)
    st.declare_dim(man.get("dim"), "manifest.dim")


def _read_npy(path: str, limit: int, st: LoadState, map_vectors: bool) -> None:
    """A directory's ``embeddings.npy``: read into memory, or with ``map_vectors`` memory-mapped read-only
    (the rows are read from the file as they are used, never copied whole into memory: the float32 vectors
    are most of a large CKF's bytes). The header is checked on the mapping either way."""
    check_ckf_file(path, limit, DIR_NPY)  # a regular file within the limit, or refused naming the file
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except OSError as exc:
        st.file_problems.append(Problem(0, DIR_NPY, f"cannot read {path}: {exc.strerror or exc}"))
        return
    if magic != b"\x93NUMPY":
        st.file_problems.append(Problem(0, DIR_NPY, "not a .npy file (no \\x93NUMPY header); save it with numpy.save"))
        return
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except Exception as exc:  # noqa: BLE001  numpy raises ValueError/OSError/EOFError/... on a bad or truncated file
        st.file_problems.append(Problem(0, DIR_NPY, f"not a readable .npy array: {str(exc)[:200]}"))
        return
    if not isinstance(arr, np.ndarray) or arr.dtype != np.float32:
        dt = getattr(arr, "dtype", type(arr).__name__)
        st.file_problems.append(Problem(0, DIR_NPY, f"dtype must be float32, got {dt}"))
        return
    if arr.ndim != 2 or arr.shape[1] < 1:
        st.file_problems.append(Problem(0, DIR_NPY, f"shape must be (facts, dim), got {arr.shape}"))
        return
    # a plain read-only ndarray view of the mapping (np.memmap's methods return memmaps), or a copy in memory
    # that holds no file open
    st.npy = np.asarray(arr) if map_vectors else np.array(arr)

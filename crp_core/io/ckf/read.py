"""CKF loading, validation and export (SPEC_NOTES §1.1, SPEC-009 §2).

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
import stat
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core.config import CRPConfig
from crp_core.errors import Problem
from crp_core.io.ckf.facts import (
    _DIR_FACTS,
    _DIR_MANIFEST,
    _DIR_NPY,
    _FILE,
    _FORMATS,
    _MANIFEST_KEYS,
    _WRAPPER_KEYS,
    _finish,
    _format_message,
    _json_reason,
    _parse_fact,
    _Rec,
    _refuse,
    _State,
    _tname,
)
from crp_core.io.files import link_reason
from crp_core.model import KnowledgeBase

if TYPE_CHECKING:
    from crp_core.io.ckf.sdk_map import SourceTypeMap


# ---- public API ------------------------------------------------------------------------------
def load_ckf(
    path: str | os.PathLike[str],
    *,
    lenient: bool = False,
    max_bytes: int | None = None,
    expected_model: str | None = None,
    source_map: SourceTypeMap | None = None,
) -> KnowledgeBase:
    """Load and validate a CKF file or directory (SPEC_NOTES §1.1). Raises :class:`CKFError`.
    ``source_map`` gives an SDK snapshot's facts their source types (unused for other formats)."""
    path = os.fspath(path)
    limit = _limit(max_bytes)
    _check_resolves(path, _FILE)
    if os.path.isdir(path):
        return _load_dir(path, lenient=lenient, limit=limit, expected_model=expected_model)
    fmt = _FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        _refuse(path, [Problem(0, _FILE, _format_message(path))])
    if fmt == "parquet":  # read in row batches by pyarrow (crp_core.io.ckf.parquet)
        from crp_core.io.ckf.parquet import load_parquet

        return load_parquet(path, lenient=lenient, limit=limit, expected_model=expected_model)
    data = _read_limited(path, limit, _FILE)
    if fmt == "json" and _is_sdk_snapshot(data):
        from crp_core.io.ckf.sdk import read_snapshot

        return read_snapshot(data, path, lenient=lenient, source_map=source_map)
    return _load_data(data, path, fmt, lenient=lenient, expected_model=expected_model)


def load_ckf_bytes(
    data: bytes,
    name: str,
    *,
    lenient: bool = False,
    max_bytes: int | None = None,
    expected_model: str | None = None,
    source_map: SourceTypeMap | None = None,
) -> KnowledgeBase:
    """Load an uploaded CKF; the format comes from ``name``'s extension (SPEC_NOTES §1.1); ``source_map``
    as in :func:`load_ckf`."""
    limit = _limit(max_bytes)
    fmt = _FORMATS.get(os.path.splitext(name)[1].lower())
    if fmt is None:
        _refuse(name, [Problem(0, _FILE, _format_message(name))])
    if not isinstance(data, (bytes, bytearray, memoryview)):
        _refuse(name, [Problem(0, _FILE, f"expected bytes, got {type(data).__name__}")])
    if len(data) > limit:
        _refuse(name, [Problem(0, _FILE, _too_large(len(data), limit))])
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
def _limit(max_bytes: int | None) -> int:
    return CRPConfig().ckf_max_bytes if max_bytes is None else int(max_bytes)


def _too_large(size: int, limit: int) -> str:
    return f"file is {size} bytes, over the limit of {limit} bytes (ckf_max_bytes / --max-bytes)"


def _check_resolves(path: str, fieldname: str) -> None:
    """Refuse a path that is a symlink loop or a dangling link before its extension is looked at
    (a loop named ``kb`` used to be reported as an unknown CKF format)."""
    try:
        os.stat(path)
    except OSError as exc:
        why = link_reason(path, exc)
        if why is None:
            why = f"cannot read {path}: {exc.strerror or exc}"
        _refuse(path, [Problem(0, fieldname, why)])


def _read_limited(path: str, limit: int, fieldname: str) -> bytes:
    """Read a file, checking its size before reading it all."""
    try:
        st_ = os.stat(path)
        if stat.S_ISDIR(st_.st_mode):
            _refuse(path, [Problem(0, fieldname, f"{path} is a folder, not a file")])
        if not stat.S_ISREG(st_.st_mode):
            # a FIFO, socket or device would block or never end: only regular files are read
            _refuse(
                path,
                [
                    Problem(
                        0, fieldname, f"{path} is not a regular file (a FIFO, socket or device); refusing to read it"
                    )
                ],
            )
        if st_.st_size > limit:
            _refuse(path, [Problem(0, fieldname, _too_large(st_.st_size, limit))])
        with open(path, "rb") as fh:
            data = _read_upto(fh, limit + 1)
    except OSError as exc:
        _refuse(path, [Problem(0, fieldname, link_reason(path, exc) or f"cannot read {path}: {exc.strerror or exc}")])
    if len(data) > limit:  # grew meanwhile, or a special file
        _refuse(path, [Problem(0, fieldname, _too_large(len(data), limit))])
    return data


def _read_upto(fh: io.BufferedReader, n: int, chunk: int = 1 << 20) -> bytes:
    """At most ``n`` bytes, read in chunks: memory follows the file's size, not the limit
    (``fh.read(8 GiB)`` allocates its buffer before reading, whatever the file holds)."""
    parts: list[bytes] = []
    got = 0
    while got < n:
        part = fh.read(min(chunk, n - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _decode(data: bytes, fieldname: str = _FILE) -> tuple[str | None, Problem | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, Problem(
            0, fieldname, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, offset {exc.start}"
        )


def _load_data(data: bytes, source: str, fmt: str, *, lenient: bool, expected_model: str | None) -> KnowledgeBase:
    text, bad = _decode(data)
    if bad is not None:
        _refuse(source, [bad])
    assert text is not None
    st = _State()
    if fmt == "jsonl":
        _read_jsonl(text, st)
    elif fmt == "json":
        _read_json(text, st)
    else:
        _read_csv(text, st)
    return _finish(st, source=source, fmt=fmt, lenient=lenient, expected_model=expected_model)


def _load_dir(path: str, *, lenient: bool, limit: int, expected_model: str | None) -> KnowledgeBase:
    facts_path = os.path.join(path, _DIR_FACTS)
    if not os.path.lexists(facts_path):
        _refuse(path, [Problem(0, _FILE, f"directory has no {_DIR_FACTS}")])
    # present but a link loop, a FIFO or a folder: _read_limited says which
    st = _State()
    text, bad = _decode(_read_limited(facts_path, limit, _FILE))
    if bad is not None:
        _refuse(path, [bad])
    assert text is not None
    _read_jsonl(text, st)
    man_path = os.path.join(path, _DIR_MANIFEST)
    if os.path.lexists(man_path):  # lexists: a link loop or a dangling link is said, not skipped
        _read_manifest(_read_limited(man_path, limit, _DIR_MANIFEST), st)
    npy_path = os.path.join(path, _DIR_NPY)
    if os.path.lexists(npy_path):
        _read_npy(_read_limited(npy_path, limit, _DIR_NPY), st)
    return _finish(st, source=path, fmt="dir", lenient=lenient, expected_model=expected_model)


def _no_dupes(pairs: list[tuple[str, Any]], dupes: list[str]) -> dict[str, Any]:
    """A JSON object's dict, noting the keys given more than once (json keeps the last silently)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out and k not in dupes:
            dupes.append(k)
        out[k] = v
    return out


def _read_jsonl(text: str, st: _State) -> None:
    # split on "\n" only: str.splitlines would also break on U+2028, U+0085, \x1c... inside strings
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        dupes: list[str] = []
        try:
            obj = json.loads(raw, object_pairs_hook=partial(_no_dupes, dupes=dupes))
        except (ValueError, RecursionError) as exc:
            st.recs.append(_Rec(n, errors=[Problem(n, "json", f"invalid JSON: {_json_reason(exc)}")]))
            continue
        for key in dupes:
            st.warnings.append(Problem(n, key, "key given more than once in this fact; the last value is used"))
        st.recs.append(_parse_fact(obj, n, st, cells=False))
    if not text.strip():
        st.file_problems.append(Problem(0, _FILE, "file holds no facts"))


def _read_json(text: str, st: _State) -> None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else 0
        st.file_problems.append(Problem(line, "json", f"invalid JSON: {_json_reason(exc)}"))
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
        _declared_model(doc.get("embedding_model"), "embedding_model", st, "the JSON wrapper")
        _declared_dim(doc.get("dim"), "dim", st)
        facts = doc["facts"]
    else:
        facts = doc
    if not isinstance(facts, list):
        st.file_problems.append(Problem(0, "facts", f"expected a list of facts, got {_tname(facts)}"))
        return
    if not facts:
        st.file_problems.append(Problem(0, _FILE, "file holds no facts"))
    for i, obj in enumerate(facts, start=1):
        st.recs.append(_parse_fact(obj, i, st, cells=False))


def _read_csv(text: str, st: _State) -> None:
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, len(text) + 1))  # huge cells are data, not an error
    try:
        # strict: a quoted cell that is never closed is an error, not a cell that swallows every later row
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        try:
            header = next(reader)
        except StopIteration:
            st.file_problems.append(Problem(0, _FILE, "file holds no facts (empty CSV)"))
            return
        except csv.Error as exc:
            st.file_problems.append(Problem(1, "csv", f"unreadable CSV header: {exc}"))
            return
        header = [h.strip() for h in header]
        seen: dict[str, int] = {}
        for i, h in enumerate(header):
            if h in seen:
                st.file_problems.append(Problem(1, h or "(empty)", f"duplicate CSV column (also column {seen[h] + 1})"))
            seen.setdefault(h, i)
        for need in ("fact_id", "content"):
            if need not in seen:
                st.file_problems.append(Problem(1, need, f"CSV header lacks the required column {need!r}"))
        start = reader.line_num + 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
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
                st.recs.append(
                    _Rec(
                        line,
                        errors=[
                            Problem(line, "csv", f"row has {len(row)} cells but the header has {len(header)} columns")
                        ],
                    )
                )
                continue
            obj = {h: c for h, c in zip(header, row) if c != ""}
            st.recs.append(_parse_fact(obj, line, st, cells=True))
        if not st.recs and not st.file_problems:
            st.file_problems.append(Problem(0, _FILE, "file holds no facts (header only)"))
    finally:
        csv.field_size_limit(old)


def _declared_model(value: Any, fieldname: str, st: _State, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not value.strip():
        st.file_problems.append(Problem(0, fieldname, f"embedding_model must be a non-empty string, got {value!r}"))
        return
    st.model, st.model_where = value, where


def _declared_dim(value: Any, fieldname: str, st: _State) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        st.file_problems.append(Problem(0, fieldname, f"dim must be a whole number >= 1, got {value!r}"))
        return
    st.dim = value


def _read_manifest(data: bytes, st: _State) -> None:
    text, bad = _decode(data, _DIR_MANIFEST)
    if bad is not None:
        st.file_problems.append(bad)
        return
    try:
        man = json.loads(text or "")
    except (ValueError, RecursionError) as exc:
        st.file_problems.append(Problem(0, _DIR_MANIFEST, f"invalid JSON: {_json_reason(exc)}"))
        return
    if not isinstance(man, dict):
        st.file_problems.append(Problem(0, _DIR_MANIFEST, f"expected a JSON object, got {_tname(man)}"))
        return
    for k in man:
        if k not in _MANIFEST_KEYS:
            st.warnings.append(Problem(0, f"manifest.{k}", "unknown manifest key, ignored"))
    _declared_model(man.get("embedding_model"), "manifest.embedding_model", st, _DIR_MANIFEST)
    _declared_dim(man.get("dim"), "manifest.dim", st)


def _read_npy(data: bytes, st: _State) -> None:
    if not data.startswith(b"\x93NUMPY"):
        st.file_problems.append(Problem(0, _DIR_NPY, "not a .npy file (no \\x93NUMPY header); save it with numpy.save"))
        return
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:  # numpy raises ValueError/OSError/EOFError/... on a bad file
        st.file_problems.append(Problem(0, _DIR_NPY, f"not a readable .npy array: {str(exc)[:200]}"))
        return
    if not isinstance(arr, np.ndarray) or arr.dtype != np.float32:
        dt = getattr(arr, "dtype", type(arr).__name__)
        st.file_problems.append(Problem(0, _DIR_NPY, f"dtype must be float32, got {dt}"))
        return
    if arr.ndim != 2 or arr.shape[1] < 1:
        st.file_problems.append(Problem(0, _DIR_NPY, f"shape must be (facts, dim), got {arr.shape}"))
        return
    st.npy = arr

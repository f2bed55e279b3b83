"""CKF loading, validation and export (SPEC_NOTES §1.1, SPEC-009 §2).

Formats: ``.jsonl`` (one fact per line, blank lines allowed), ``.json`` (a list of facts or
``{"embedding_model": ..., "facts": [...]}``), ``.csv`` (one fact per row; ``embedding`` holds a JSON
list and ``metadata`` a JSON object; an empty cell is an absent value), or a directory holding
``facts.jsonl`` plus optional ``embeddings.npy`` and ``manifest.json``.

Every problem is reported with its line (JSONL line, CSV line where the row starts, JSON list
position; 0 = whole file) and field. Strict loading raises :class:`CKFError` listing all of them and
returns nothing; lenient loading skips exactly the bad facts (``KnowledgeBase.skipped``) but still
refuses the file on file-level problems. Decisions: ``docs/decisions/loader.md``.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

import numpy as np

from crp_core.config import DEFAULT_SOURCE_TYPE, DEFAULT_STATUS, SOURCE_TYPES, STATUSES, CRPConfig
from crp_core.errors import CKFError, Problem
from crp_core.model import Fact, KnowledgeBase
from crp_core.io.timeparse import format_timestamp, parse_duration_seconds, parse_timestamp

__all__ = ["load_ckf", "load_ckf_bytes", "write_ckf", "FACT_FIELDS", "IGNORED_FIELDS"]

#: fact fields this loader reads (SPEC_NOTES §1.1 table, plus an optional per-fact ``embedding_model``)
FACT_FIELDS: tuple[str, ...] = (
    "fact_id", "content", "source_type", "status", "importance_weight", "ingested_at", "modified_at",
    "ttl", "source_id", "source_location", "community_label", "metadata", "embedding", "embedding_model",
)
#: SPEC-009 §2 fields the pipeline does not use: accepted without a warning and not kept
#: (``content_hash`` is checked against the content; a mismatch is a warning)
IGNORED_FIELDS: tuple[str, ...] = ("content_hash", "access_count", "last_accessed_at")
_KNOWN = frozenset(FACT_FIELDS) | frozenset(IGNORED_FIELDS)
_WRAPPER_KEYS = frozenset({"embedding_model", "facts", "dim"})
_MANIFEST_KEYS = frozenset({"embedding_model", "dim"})
_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}
_DIR_FACTS, _DIR_NPY, _DIR_MANIFEST = "facts.jsonl", "embeddings.npy", "manifest.json"
_FILE = "file"


# ---- public API ------------------------------------------------------------------------------
def load_ckf(path: str | os.PathLike[str], *, lenient: bool = False, max_bytes: int | None = None,
             expected_model: str | None = None) -> KnowledgeBase:
    """Load and validate a CKF file or directory (SPEC_NOTES §1.1). Raises :class:`CKFError`."""
    path = os.fspath(path)
    limit = _limit(max_bytes)
    if os.path.isdir(path):
        return _load_dir(path, lenient=lenient, limit=limit, expected_model=expected_model)
    fmt = _FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        _refuse(path, [Problem(0, _FILE, _format_message(path))])
    data = _read_limited(path, limit, _FILE)
    return _load_data(data, path, fmt, lenient=lenient, expected_model=expected_model)


def load_ckf_bytes(data: bytes, name: str, *, lenient: bool = False, max_bytes: int | None = None,
                   expected_model: str | None = None) -> KnowledgeBase:
    """Load an uploaded CKF; the format comes from ``name``'s extension (SPEC_NOTES §1.1)."""
    limit = _limit(max_bytes)
    fmt = _FORMATS.get(os.path.splitext(name)[1].lower())
    if fmt is None:
        _refuse(name, [Problem(0, _FILE, _format_message(name))])
    if not isinstance(data, (bytes, bytearray, memoryview)):
        _refuse(name, [Problem(0, _FILE, f"expected bytes, got {type(data).__name__}")])
    if len(data) > limit:
        _refuse(name, [Problem(0, _FILE, _too_large(len(data), limit))])
    return _load_data(bytes(data), name, fmt, lenient=lenient, expected_model=expected_model)


def write_ckf(kb: KnowledgeBase, path: str | os.PathLike[str]) -> str:
    """Write ``kb`` in the format of ``path``'s extension, or as a directory when it has none.

    ``load_ckf(write_ckf(kb, p))`` gives equal facts (``line`` aside), embeddings and model.
    Returns the path written.
    """
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    fmt = "dir" if ext == "" else _FORMATS.get(ext)
    if fmt is None:
        raise CKFError(f"cannot write CKF {path}", [Problem(0, _FILE, _format_message(path))])
    emb = None if kb.embeddings is None else np.asarray(kb.embeddings, dtype=np.float32)
    if fmt == "dir":
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, _DIR_FACTS), "w", encoding="utf-8", newline="\n") as fh:
            for f in kb.facts:
                fh.write(json.dumps(_fact_to_dict(f, None, None), ensure_ascii=False) + "\n")
        npy, manifest = os.path.join(path, _DIR_NPY), os.path.join(path, _DIR_MANIFEST)
        if emb is not None:
            np.save(npy, np.ascontiguousarray(emb), allow_pickle=False)
        elif os.path.exists(npy):
            os.remove(npy)
        man: dict[str, Any] = {}
        if kb.embedding_model is not None:
            man["embedding_model"] = kb.embedding_model
        if emb is not None:
            man["dim"] = int(emb.shape[1])
        if man:
            with open(manifest, "w", encoding="utf-8") as fh:
                json.dump(man, fh, ensure_ascii=False, indent=2)
        elif os.path.exists(manifest):
            os.remove(manifest)
        return path
    rows = [_fact_to_dict(f, None if emb is None else emb[i], None) for i, f in enumerate(kb.facts)]
    if fmt == "jsonl":
        # a JSONL file has no header: the model travels as a per-fact field
        if kb.embedding_model is not None:
            for r in rows:
                r["embedding_model"] = kb.embedding_model
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    elif fmt == "json":
        text = json.dumps({"embedding_model": kb.embedding_model, "facts": rows}, ensure_ascii=False, indent=1)
    else:
        if kb.embedding_model is not None:
            for r in rows:
                r["embedding_model"] = kb.embedding_model
        text = _rows_to_csv(rows)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


# ---- reading ---------------------------------------------------------------------------------
def _limit(max_bytes: int | None) -> int:
    return CRPConfig().ckf_max_bytes if max_bytes is None else int(max_bytes)


def _format_message(name: str) -> str:
    return (f"unknown CKF format {os.path.splitext(name)[1] or '(no extension)'!r}: expected .jsonl, "
            f".json, .csv or a directory holding {_DIR_FACTS}")


def _too_large(size: int, limit: int) -> str:
    return f"file is {size} bytes, over the limit of {limit} bytes (ckf_max_bytes / --max-bytes)"


def _refuse(source: str, problems: list[Problem]) -> None:
    raise CKFError(f"CKF {source} refused", problems)


def _read_limited(path: str, limit: int, fieldname: str) -> bytes:
    """Read a file, checking its size before reading it all."""
    try:
        size = os.stat(path).st_size
        if size > limit:
            _refuse(path, [Problem(0, fieldname, _too_large(size, limit))])
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        _refuse(path, [Problem(0, fieldname, f"cannot read {path}: {exc.strerror or exc}")])
    if len(data) > limit:  # grew meanwhile, or a special file
        _refuse(path, [Problem(0, fieldname, _too_large(len(data), limit))])
    return data


def _decode(data: bytes, fieldname: str = _FILE) -> tuple[str | None, Problem | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, Problem(0, fieldname, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, "
                                           f"offset {exc.start}")


def _load_data(data: bytes, source: str, fmt: str, *, lenient: bool,
               expected_model: str | None) -> KnowledgeBase:
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
    if not os.path.isfile(facts_path):
        _refuse(path, [Problem(0, _FILE, f"directory has no {_DIR_FACTS}")])
    st = _State()
    text, bad = _decode(_read_limited(facts_path, limit, _FILE))
    if bad is not None:
        _refuse(path, [bad])
    assert text is not None
    _read_jsonl(text, st)
    man_path = os.path.join(path, _DIR_MANIFEST)
    if os.path.exists(man_path):
        _read_manifest(_read_limited(man_path, limit, _DIR_MANIFEST), st)
    npy_path = os.path.join(path, _DIR_NPY)
    if os.path.exists(npy_path):
        _read_npy(_read_limited(npy_path, limit, _DIR_NPY), st)
    return _finish(st, source=path, fmt="dir", lenient=lenient, expected_model=expected_model)


@dataclass
class _Rec:
    """One fact record as parsed: the Fact (None if unusable) and its problems."""

    line: int
    is_object: bool = False
    fact: Fact | None = None
    fact_id: str | None = None
    embedding: np.ndarray | None = None  # valid (finite, 1-D) per-fact embedding
    has_embedding: bool = False  # an ``embedding`` value was given (valid or not)
    model: str | None = None
    errors: list[Problem] = field(default_factory=list)


@dataclass
class _State:
    recs: list[_Rec] = field(default_factory=list)
    file_problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    unknown: dict[str, list[int]] = field(default_factory=dict)  # unknown field -> lines
    model: str | None = None  # declared by the JSON wrapper or manifest
    model_where: str = ""
    dim: int | None = None  # declared by the wrapper or manifest
    npy: np.ndarray | None = None


def _read_jsonl(text: str, st: _State) -> None:
    # split on "\n" only: str.splitlines would also break on U+2028, U+0085, \x1c... inside strings
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            st.recs.append(_Rec(n, errors=[Problem(n, "json", f"invalid JSON: {_json_reason(exc)}")]))
            continue
        st.recs.append(_parse_fact(obj, n, st, cells=False))
    if not text.strip():
        st.file_problems.append(Problem(0, _FILE, "file holds no facts"))


def _json_reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)[:200]


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
                st.warnings.append(Problem(0, k, "unknown top-level key, ignored (expected embedding_model, "
                                                 "facts, dim)"))
        if "facts" not in doc:
            st.file_problems.append(Problem(0, "facts", "a JSON object CKF needs a \"facts\" list"))
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
        reader = csv.reader(io.StringIO(text, newline=""))
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
                st.file_problems.append(Problem(start, "csv", f"unreadable CSV from here on: {exc}"))
                return
            line, start = start, reader.line_num + 1
            if not any(c.strip() for c in row):
                continue
            if len(row) > len(header):
                st.recs.append(_Rec(line, errors=[Problem(line, "csv", f"row has {len(row)} cells but the "
                                                                       f"header has {len(header)} columns")]))
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


def _tname(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def _bad_unicode(s: str) -> bool:
    try:
        s.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def _parse_fact(obj: Any, line: int, st: _State, *, cells: bool) -> _Rec:
    """Validate one fact object; ``cells``: values are CSV cell strings (numbers, JSON to decode)."""
    rec = _Rec(line)
    if not isinstance(obj, dict):
        rec.errors.append(Problem(line, "fact", f"a fact must be a JSON object, got {_tname(obj)}"))
        return rec
    rec.is_object = True
    errs = rec.errors

    def err(fieldname: str, msg: str) -> None:
        errs.append(Problem(line, fieldname, msg, rec.fact_id))

    for k in obj:
        if k not in _KNOWN:
            st.unknown.setdefault(str(k), []).append(line)
    # fact_id
    fid = obj.get("fact_id")
    if fid is None:
        err("fact_id", "missing (required)")
    elif not isinstance(fid, str):
        err("fact_id", f"must be a string, got {_tname(fid)} {json.dumps(fid)[:60]}")
    elif not fid.strip():
        err("fact_id", "empty (required)")
    elif _bad_unicode(fid):
        err("fact_id", "contains an unpaired surrogate (not valid Unicode)")
    else:
        rec.fact_id = fid
    # content
    content = obj.get("content")
    if content is None:
        err("content", "missing (required)")
    elif not isinstance(content, str):
        err("content", f"must be a string, got {_tname(content)}")
    elif not content.strip():
        err("content", "empty (required, non-empty text)")
    elif _bad_unicode(content):
        err("content", "contains an unpaired surrogate (not valid Unicode)")
    # enums
    source_type = _enum(obj, "source_type", SOURCE_TYPES, DEFAULT_SOURCE_TYPE, err)
    status = _enum(obj, "status", STATUSES, DEFAULT_STATUS, err)
    # weight
    weight = None
    w = obj.get("importance_weight")
    if w is not None:
        if cells:
            try:
                w = float(w)
            except ValueError:
                err("importance_weight", f"not a number: {w!r}")
                w = None
        if w is not None:
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                err("importance_weight", f"must be a number between 0 and 1, got {_tname(w)} {json.dumps(w)[:60]}")
            elif not (w == w and -math.inf < w < math.inf) or not 0.0 <= w <= 1.0:
                err("importance_weight", f"must be between 0 and 1, got {w!r}")
            else:
                weight = float(w)
    # timestamps
    stamps: dict[str, datetime | None] = {}
    for name in ("ingested_at", "modified_at"):
        v = obj.get(name)
        stamps[name] = None
        if v is not None:
            try:
                stamps[name] = parse_timestamp(v)
            except ValueError as exc:
                err(name, str(exc))
    # ttl
    ttl_kind, ttl_seconds, ttl_text = "default", None, None
    t = obj.get("ttl")
    if t is not None:
        try:
            secs = parse_duration_seconds(t)
        except ValueError as exc:
            err("ttl", str(exc))
        else:
            ttl_text = t
            ttl_kind, ttl_seconds = ("timeless", None) if secs is None else ("explicit", secs)
    # plain strings
    strings: dict[str, str | None] = {}
    for name in ("source_id", "source_location", "community_label"):
        v = obj.get(name)
        strings[name] = None
        if v is None:
            continue
        if not isinstance(v, str):
            err(name, f"must be a string, got {_tname(v)}")
        elif _bad_unicode(v):
            err(name, "contains an unpaired surrogate (not valid Unicode)")
        else:
            strings[name] = v
    # metadata
    meta: dict[str, Any] = {}
    m = obj.get("metadata")
    if m is not None:
        if cells:
            m = _cell_json(m, "metadata", err)
        if m is not None:
            if not isinstance(m, dict):
                err("metadata", f"must be a JSON object, got {_tname(m)}")
            else:
                try:
                    json.dumps(m, ensure_ascii=False).encode("utf-8")
                    meta = m
                except (UnicodeEncodeError, ValueError, RecursionError):
                    err("metadata", "holds text that is not valid Unicode")
    # embedding
    e = obj.get("embedding")
    if e is not None:
        rec.has_embedding = True
        if cells:
            e = _cell_json(e, "embedding", err)
        if e is not None:
            rec.embedding = _embedding(e, err)
    em = obj.get("embedding_model")
    if em is not None:
        if not isinstance(em, str) or not em.strip():
            err("embedding_model", f"must be a non-empty string, got {em!r}")
        else:
            rec.model = em
    # content_hash: checked, not kept
    ch = obj.get("content_hash")
    if isinstance(ch, str) and isinstance(content, str) and not _bad_unicode(content):
        if ch.lower() != hashlib.sha256(content.encode("utf-8")).hexdigest():
            st.warnings.append(Problem(line, "content_hash", "does not match sha256(content); ignored",
                                       rec.fact_id))
    if errs:
        return rec
    rec.fact = Fact(
        fact_id=fid, content=content, source_type=source_type, status=status, importance_weight=weight,
        ingested_at=stamps["ingested_at"], modified_at=stamps["modified_at"], ttl_kind=ttl_kind,  # type: ignore[arg-type]
        ttl_seconds=ttl_seconds, ttl_text=ttl_text, source_id=strings["source_id"],
        source_location=strings["source_location"], community_label=strings["community_label"],
        metadata=meta, line=line)
    return rec


def _enum(obj: dict, name: str, allowed: tuple[str, ...], default: str, err) -> str:
    v = obj.get(name)
    if v is None:
        return default
    if not isinstance(v, str) or v not in allowed:
        shown = json.dumps(v)[:60] if not isinstance(v, str) else repr(v[:60])
        err(name, f"unknown {name.replace('_', ' ')} {shown}; allowed: {', '.join(allowed)}")
    return v if isinstance(v, str) else default


def _cell_json(cell: str, name: str, err) -> Any:
    try:
        return json.loads(cell)
    except (ValueError, RecursionError) as exc:
        err(name, f"CSV cell is not valid JSON: {_json_reason(exc)}")
        return None


def _embedding(e: Any, err) -> np.ndarray | None:
    if not isinstance(e, list) or not e:
        err("embedding", f"must be a non-empty list of numbers, got {_tname(e)}")
        return None
    for i, x in enumerate(e):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            err("embedding", f"element {i} is not a number: {json.dumps(x)[:40]}")
            return None
    try:
        arr = np.asarray(e, dtype=np.float64)
    except (OverflowError, ValueError):
        err("embedding", "holds a number too large for a float")
        return None
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        err("embedding", f"element {i} is {float(arr[i])!r} (NaN or infinite); {int(bad.sum())} such value(s)")
        return None
    f32 = arr.astype(np.float32)
    if not np.isfinite(f32).all():
        err("embedding", "holds a value too large for float32")
        return None
    return f32


# ---- cross-fact checks -----------------------------------------------------------------------
def _finish(st: _State, *, source: str, fmt: str, lenient: bool, expected_model: str | None) -> KnowledgeBase:
    recs = st.recs
    fp = st.file_problems
    # unknown fields: one warning per field name
    for name, lines in st.unknown.items():
        more = f" and {len(lines) - 1} more fact(s)" if len(lines) > 1 else ""
        st.warnings.append(Problem(lines[0], name, f"unknown field, ignored (first at line {lines[0]}{more}); "
                                                   f"known fields: {', '.join(FACT_FIELDS)}"))
    # duplicate ids: the first occurrence is kept
    first: dict[str, int] = {}
    for r in recs:
        if r.fact_id is None:
            continue
        if r.fact_id in first:
            r.errors.append(Problem(r.line, "fact_id", f"duplicate id {r.fact_id!r} (first at line "
                                                       f"{first[r.fact_id]})", r.fact_id))
        else:
            first[r.fact_id] = r.line
    # embeddings
    rows: list[np.ndarray | None] = [None] * len(recs)
    dim: int | None = None
    if st.npy is not None:
        if any(r.has_embedding for r in recs):
            fp.append(Problem(0, _DIR_NPY, f"both {_DIR_NPY} and per-fact \"embedding\" fields given; "
                                           f"use one or the other"))
        if st.npy.shape[0] != len(recs):
            fp.append(Problem(0, _DIR_NPY, f"{st.npy.shape[0]} rows but {_DIR_FACTS} holds {len(recs)} fact "
                                           f"record(s); one row per record, same order"))
        dim = int(st.npy.shape[1])
        if st.dim is not None and st.dim != dim:
            fp.append(Problem(0, "manifest.dim", f"manifest says dim {st.dim} but {_DIR_NPY} has {dim} columns"))
        if st.npy.shape[0] == len(recs):
            finite = np.isfinite(st.npy).all(axis=1)
            for i, r in enumerate(recs):
                if not finite[i]:
                    r.errors.append(Problem(r.line, "embedding", f"{_DIR_NPY} row {i} holds NaN or infinite "
                                                                 f"values", r.fact_id))
                rows[i] = st.npy[i]
    else:
        with_e = [r for r in recs if r.has_embedding]
        if with_e:
            objs = [r for r in recs if r.is_object]
            without = [r for r in objs if not r.has_embedding]
            if without:
                minority_has = len(with_e) < len(without)
                bad = with_e if minority_has else without
                msg = (f"{len(with_e)} of {len(objs)} facts carry an embedding; all or none must "
                       f"({'this fact has one' if minority_has else 'this fact has none'})")
                for r in bad:
                    r.errors.append(Problem(r.line, "embedding", msg, r.fact_id))
            dims = Counter(len(r.embedding) for r in with_e if r.embedding is not None)
            if dims:
                dim = st.dim if st.dim is not None else dims.most_common(1)[0][0]
                why = "the declared dim" if st.dim is not None else "the most common dimension"
                for r in with_e:
                    if r.embedding is not None and len(r.embedding) != dim:
                        r.errors.append(Problem(r.line, "embedding", f"dimension {len(r.embedding)}, expected "
                                                                     f"{dim} ({why})", r.fact_id))
            for i, r in enumerate(recs):
                rows[i] = r.embedding
        elif st.dim is not None:
            st.warnings.append(Problem(0, "dim", f"dim {st.dim} declared but no fact carries an embedding"))
    # embedding model: the declared one, else the most common per-fact one
    models = Counter(r.model for r in recs if r.model is not None)
    model = st.model
    if model is None and models:
        model = models.most_common(1)[0][0]
    if model is not None:
        for r in recs:
            if r.model is not None and r.model != model:
                where = st.model_where or "most facts"
                r.errors.append(Problem(r.line, "embedding_model", f"{r.model!r} differs from {model!r} "
                                                                   f"({where}); embeddings never mix models",
                                        r.fact_id))
    has_emb = dim is not None
    if expected_model is not None and model is not None and has_emb and model != expected_model:
        fp.append(Problem(0, "embedding_model", f"embeddings are from {model!r} but the active model is "
                                                f"{expected_model!r}; embeddings never mix models "
                                                f"(SPEC-024 §2.5)"))
    # outcome
    bad_recs = [r for r in recs if r.errors or r.fact is None]
    fact_problems = [p for r in bad_recs for p in r.errors]
    if fp or (bad_recs and not lenient):
        _refuse(source, sorted(fp, key=lambda p: p.line) + fact_problems)
    keep = [i for i, r in enumerate(recs) if not r.errors and r.fact is not None]
    if not keep:
        _refuse(source, fact_problems + [Problem(0, _FILE, "no valid fact left to load")])
    facts = tuple(recs[i].fact for i in keep)  # type: ignore[misc]
    emb = None
    if has_emb:
        emb = np.stack([rows[i] for i in keep]).astype(np.float32, copy=False)  # a fresh array
    elif model is not None:
        st.warnings.append(Problem(0, "embedding_model", f"embedding_model {model!r} named but no embeddings "
                                                         f"given; the active model will embed"))
        model = None
    if has_emb and model is None:
        st.warnings.append(Problem(0, "embedding_model", "embeddings carry no embedding_model; they will be "
                                                         "used only if their dimension matches the active model"))
    for f in facts:
        if f.effective_modified_at is None:
            st.warnings.append(Problem(f.line, "modified_at", "neither ingested_at nor modified_at given: "
                                                              "age unknown, recency factor 1.0", f.fact_id))
    return KnowledgeBase(facts=facts, embeddings=emb, embedding_model=model, source=source, fmt=fmt,
                         skipped=tuple(fact_problems), warnings=tuple(st.warnings))


# ---- writing ---------------------------------------------------------------------------------
_WRITE_ORDER = ("fact_id", "content", "source_type", "status", "importance_weight", "ingested_at",
                "modified_at", "ttl", "source_id", "source_location", "community_label", "metadata",
                "embedding", "embedding_model")


def _fact_to_dict(f: Fact, emb: np.ndarray | None, model: str | None) -> dict[str, Any]:
    d: dict[str, Any] = {"fact_id": f.fact_id, "content": f.content, "source_type": f.source_type,
                         "status": f.status}
    if f.importance_weight is not None:
        d["importance_weight"] = f.importance_weight
    if f.ingested_at is not None:
        d["ingested_at"] = format_timestamp(f.ingested_at)
    if f.modified_at is not None:
        d["modified_at"] = format_timestamp(f.modified_at)
    if f.ttl_kind == "timeless":
        d["ttl"] = f.ttl_text or "none"
    elif f.ttl_kind == "explicit":
        d["ttl"] = f.ttl_text if f.ttl_text else f"PT{f.ttl_seconds:f}S"
    for name in ("source_id", "source_location", "community_label"):
        v = getattr(f, name)
        if v is not None:
            d[name] = v
    if f.metadata:
        d["metadata"] = dict(f.metadata)
    if emb is not None:
        d["embedding"] = [float(x) for x in emb]
    if model is not None:
        d["embedding_model"] = model
    return d


def _rows_to_csv(rows: Iterable[dict[str, Any]]) -> str:
    rows = list(rows)
    cols = [c for c in _WRITE_ORDER if any(c in r for r in rows)] or ["fact_id", "content"]
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(cols)
    for r in rows:
        out = []
        for c in cols:
            v = r.get(c)
            if v is None:
                out.append("")
            elif c in ("metadata", "embedding"):
                out.append(json.dumps(v, ensure_ascii=False))
            elif isinstance(v, float):
                out.append(repr(v))
            else:
                out.append(str(v))
        w.writerow(out)
    return buf.getvalue()

"""One CKF fact's fields parsed and checked, then the cross-fact checks (SPEC_NOTES §1.1, SPEC-009 §2).

Every problem carries its line and field; :func:`_finish` builds the :class:`KnowledgeBase` or
refuses the file (strict), or skips exactly the bad facts (lenient).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn

import numpy as np

from crp_core.config import DEFAULT_SOURCE_TYPE, DEFAULT_STATUS, SOURCE_TYPES, STATUSES
from crp_core.errors import CKFError, Problem
from crp_core.io.timeparse import parse_duration_seconds, parse_timestamp
from crp_core.model import Fact, KnowledgeBase, TTLKind, has_unpaired_surrogate

#: ``err(field, message)``: records one problem of the fact being parsed
ErrFn = Callable[[str, str], None]


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


#: fact fields this loader reads (SPEC_NOTES §1.1 table, plus an optional per-fact ``embedding_model``)
FACT_FIELDS: tuple[str, ...] = (
    "fact_id",
    "content",
    "source_type",
    "status",
    "importance_weight",
    "ingested_at",
    "modified_at",
    "ttl",
    "source_id",
    "source_location",
    "community_label",
    "metadata",
    "embedding",
    "embedding_model",
)
#: SPEC-009 §2 fields the pipeline does not use: accepted without a warning and not kept
#: (``content_hash`` is checked against the content; a mismatch is a warning)
IGNORED_FIELDS: tuple[str, ...] = ("content_hash", "access_count", "last_accessed_at")
_KNOWN = frozenset(FACT_FIELDS) | frozenset(IGNORED_FIELDS)
_WRAPPER_KEYS = frozenset({"embedding_model", "facts", "dim"})
_MANIFEST_KEYS = frozenset({"embedding_model", "dim"})
_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
_DIR_FACTS, _DIR_NPY, _DIR_MANIFEST = "facts.jsonl", "embeddings.npy", "manifest.json"
_FILE = "file"


def _format_message(name: str) -> str:
    return (
        f"unknown CKF format {os.path.splitext(name)[1] or '(no extension)'!r}: expected .jsonl, "
        f".json, .csv, .parquet or a directory holding {_DIR_FACTS}"
    )


def _refuse(source: str, problems: list[Problem]) -> NoReturn:
    raise CKFError(f"CKF {source} refused", problems)


def _json_reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)[:200]


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


def _tname(v: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }.get(type(v), type(v).__name__)


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
    elif has_unpaired_surrogate(fid):
        err("fact_id", "contains an unpaired surrogate (not valid Unicode)")
    elif (ctl := _control_char(fid)) is not None:
        err(
            "fact_id",
            f"contains the control character {ctl}: an id is a key shown in headers, tables and "
            "command lines, and a control character there cuts or reshapes it",
        )
    else:
        rec.fact_id = fid
    # content
    content = obj.get("content")
    text: str | None = None  # the content once checked
    if content is None:
        err("content", "missing (required)")
    elif not isinstance(content, str):
        err("content", f"must be a string, got {_tname(content)}")
    elif not _visible(content):
        err("content", "empty (required, non-empty text; only spaces or invisible characters here)")
    elif has_unpaired_surrogate(content):
        err("content", "contains an unpaired surrogate (not valid Unicode)")
    else:
        text = content
        if "\x00" in content:
            st.warnings.append(
                Problem(
                    line,
                    "content",
                    f"holds {content.count(chr(0))} NUL character(s) "
                    "(U+0000); kept as given, but a C tool or terminal may "
                    "cut the text there",
                    rec.fact_id,
                )
            )
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
    ttl_kind: TTLKind = "default"
    ttl_seconds: float | None = None
    ttl_text: str | None = None
    t = obj.get("ttl")
    if t is not None:
        try:
            secs = parse_duration_seconds(t)
        except ValueError as exc:
            err("ttl", str(exc))
        else:
            ttl_text = t
            if secs is None:
                ttl_kind, ttl_seconds = "timeless", None
            else:
                ttl_kind, ttl_seconds = "explicit", secs
    # plain strings
    strings: dict[str, str | None] = {}
    for name in ("source_id", "source_location", "community_label"):
        v = obj.get(name)
        strings[name] = None
        if v is None:
            continue
        if not isinstance(v, str):
            err(name, f"must be a string, got {_tname(v)}")
        elif has_unpaired_surrogate(v):
            err(name, "contains an unpaired surrogate (not valid Unicode)")
        elif "\x00" in v:
            err(name, f"contains a NUL character (U+0000) at position {v.index(chr(0))}")
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
    if isinstance(ch, str) and isinstance(content, str) and not has_unpaired_surrogate(content):
        if ch.lower() != hashlib.sha256(content.encode("utf-8")).hexdigest():
            st.warnings.append(Problem(line, "content_hash", "does not match sha256(content); ignored", rec.fact_id))
    if errs or rec.fact_id is None or text is None:  # without errors, both the id and the content are set
        return rec
    rec.fact = Fact(
        fact_id=rec.fact_id,
        content=text,
        source_type=source_type,
        status=status,
        importance_weight=weight,
        ingested_at=stamps["ingested_at"],
        modified_at=stamps["modified_at"],
        ttl_kind=ttl_kind,
        ttl_seconds=ttl_seconds,
        ttl_text=ttl_text,
        source_id=strings["source_id"],
        source_location=strings["source_location"],
        community_label=strings["community_label"],
        metadata=meta,
        line=line,
    )
    return rec


def _enum(obj: dict[str, Any], name: str, allowed: tuple[str, ...], default: str, err: ErrFn) -> str:
    v = obj.get(name)
    if v is None:
        return default
    if not isinstance(v, str) or v not in allowed:
        shown = json.dumps(v)[:60] if not isinstance(v, str) else repr(v[:60])
        err(name, f"unknown {name.replace('_', ' ')} {shown}; allowed: {', '.join(allowed)}")
    return v if isinstance(v, str) else default


def _cell_json(cell: str, name: str, err: ErrFn) -> Any:
    try:
        return json.loads(cell)
    except (ValueError, RecursionError) as exc:
        err(name, f"CSV cell is not valid JSON: {_json_reason(exc)}")
        return None


def _control_char(text: str) -> str | None:
    """The first control character (Unicode category Cc: U+0000-U+001F, U+007F-U+009F) of ``text``,
    shown as ``U+XXXX at position N``; None when there is none."""
    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Cc":
            return f"U+{ord(ch):04X} at position {i}"
    return None


#: characters that draw nothing: a content made only of these is empty
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e")


def _visible(text: str) -> bool:
    """Does ``text`` hold a character that draws something (not space, not zero-width)?"""
    return any(not ch.isspace() and ch not in _INVISIBLE for ch in text)


#: the JSON number types an embedding element may have (``bool`` is a subclass of ``int``: not listed)
_NUMBER_TYPES = frozenset((float, int))


def _embedding(e: Any, err: ErrFn) -> np.ndarray | None:
    if not isinstance(e, list) or not e:
        err("embedding", f"must be a non-empty list of numbers, got {_tname(e)}")
        return None
    if not _NUMBER_TYPES.issuperset(map(type, e)):  # one C-level pass; the loop below only names the culprit
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
    with np.errstate(over="ignore"):  # the overflow is the finding below, not a warning
        f32 = arr.astype(np.float32)
    if not np.isfinite(f32).all():
        err("embedding", "holds a value too large for float32")
        return None
    if not arr.any():
        err("embedding", "is all zeros: an embedding needs a direction (cosine is undefined)")
        return None
    return f32


# ---- cross-fact checks -----------------------------------------------------------------------
def _finish(st: _State, *, source: str, fmt: str, lenient: bool, expected_model: str | None) -> KnowledgeBase:
    recs = st.recs
    fp = st.file_problems
    # unknown fields: one warning per field name
    for name, lines in st.unknown.items():
        more = f" and {len(lines) - 1} more fact(s)" if len(lines) > 1 else ""
        st.warnings.append(
            Problem(
                lines[0],
                name,
                f"unknown field, ignored (first at line {lines[0]}{more}); known fields: {', '.join(FACT_FIELDS)}",
            )
        )
    # duplicate ids: the first occurrence is kept
    first: dict[str, int] = {}
    looks: dict[str, tuple[str, int]] = {}  # normalised id -> (first id, its line)
    for r in recs:
        if r.fact_id is None:
            continue
        norm = unicodedata.normalize("NFC", r.fact_id).strip()
        seen = looks.setdefault(norm, (r.fact_id, r.line))
        if seen[0] != r.fact_id:
            st.warnings.append(
                Problem(
                    r.line,
                    "fact_id",
                    f"id {r.fact_id!r} differs from {seen[0]!r} (line "
                    f"{seen[1]}) only by Unicode normalisation or spaces: "
                    "two facts, but a reader sees one id",
                    r.fact_id,
                )
            )
        if r.fact_id in first:
            r.errors.append(
                Problem(r.line, "fact_id", f"duplicate id {r.fact_id!r} (first at line {first[r.fact_id]})", r.fact_id)
            )
        else:
            first[r.fact_id] = r.line
    # embeddings
    rows: list[np.ndarray | None] = [None] * len(recs)
    dim: int | None = None
    if st.npy is not None:
        if any(r.has_embedding for r in recs):
            fp.append(
                Problem(0, _DIR_NPY, f'both {_DIR_NPY} and per-fact "embedding" fields given; use one or the other')
            )
        if st.npy.shape[0] != len(recs):
            fp.append(
                Problem(
                    0,
                    _DIR_NPY,
                    f"{st.npy.shape[0]} rows but {_DIR_FACTS} holds {len(recs)} fact "
                    f"record(s); one row per record, same order",
                )
            )
        dim = int(st.npy.shape[1])
        if st.dim is not None and st.dim != dim:
            fp.append(Problem(0, "manifest.dim", f"manifest says dim {st.dim} but {_DIR_NPY} has {dim} columns"))
        if st.npy.shape[0] == len(recs):
            finite = np.isfinite(st.npy).all(axis=1)
            nonzero: np.ndarray = np.any(st.npy != 0, axis=1)
            for i, r in enumerate(recs):
                if not finite[i]:
                    r.errors.append(
                        Problem(r.line, "embedding", f"{_DIR_NPY} row {i} holds NaN or infinite values", r.fact_id)
                    )
                elif not nonzero[i]:
                    r.errors.append(
                        Problem(
                            r.line,
                            "embedding",
                            f"{_DIR_NPY} row {i} is all zeros: an embedding needs a direction",
                            r.fact_id,
                        )
                    )
                rows[i] = st.npy[i]
    else:
        with_e = [r for r in recs if r.has_embedding]
        if with_e:
            objs = [r for r in recs if r.is_object]
            without = [r for r in objs if not r.has_embedding]
            if without:
                minority_has = len(with_e) < len(without)
                bad = with_e if minority_has else without
                msg = (
                    f"{len(with_e)} of {len(objs)} facts carry an embedding; all or none must "
                    f"({'this fact has one' if minority_has else 'this fact has none'})"
                )
                for r in bad:
                    r.errors.append(Problem(r.line, "embedding", msg, r.fact_id))
            dims = Counter(len(r.embedding) for r in with_e if r.embedding is not None)
            if dims:
                dim = st.dim if st.dim is not None else dims.most_common(1)[0][0]
                why = "the declared dim" if st.dim is not None else "the most common dimension"
                for r in with_e:
                    if r.embedding is not None and len(r.embedding) != dim:
                        r.errors.append(
                            Problem(
                                r.line, "embedding", f"dimension {len(r.embedding)}, expected {dim} ({why})", r.fact_id
                            )
                        )
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
                r.errors.append(
                    Problem(
                        r.line,
                        "embedding_model",
                        f"{r.model!r} differs from {model!r} ({where}); embeddings never mix models",
                        r.fact_id,
                    )
                )
    has_emb = dim is not None
    if expected_model is not None and model is not None and has_emb and model != expected_model:
        fp.append(
            Problem(
                0,
                "embedding_model",
                f"embeddings are from {model!r} but the active model is "
                f"{expected_model!r}; embeddings never mix models "
                f"(SPEC-024 §2.5)",
            )
        )
    # outcome
    bad_recs = [r for r in recs if r.errors or r.fact is None]
    fact_problems = [p for r in bad_recs for p in r.errors]
    if fp or (bad_recs and not lenient):
        _refuse(source, sorted(fp, key=lambda p: p.line) + fact_problems)
    kept = [(i, r.fact) for i, r in enumerate(recs) if not r.errors and r.fact is not None]
    keep = [i for i, _ in kept]
    if not keep:
        _refuse(source, fact_problems + [Problem(0, _FILE, "no valid fact left to load")])
    facts = tuple(f for _, f in kept)
    emb = None
    if has_emb:
        # np.stack turns each row into an array with asanyarray; np.asarray does the same here
        emb = np.stack([np.asarray(rows[i]) for i in keep]).astype(np.float32, copy=False)  # a fresh array
    elif model is not None:
        st.warnings.append(
            Problem(
                0,
                "embedding_model",
                f"embedding_model {model!r} named but no embeddings given; the active model will embed",
            )
        )
        model = None
    if has_emb and model is None:
        st.warnings.append(
            Problem(
                0,
                "embedding_model",
                "embeddings carry no embedding_model; they will be "
                "used only if their dimension matches the active model",
            )
        )
    for f in facts:
        if f.effective_modified_at is None:
            st.warnings.append(
                Problem(
                    f.line,
                    "modified_at",
                    "neither ingested_at nor modified_at given: age unknown, recency factor 1.0",
                    f.fact_id,
                )
            )
    return KnowledgeBase(
        facts=facts,
        embeddings=emb,
        embedding_model=model,
        source=source,
        fmt=fmt,
        skipped=tuple(fact_problems),
        warnings=tuple(st.warnings),
    )

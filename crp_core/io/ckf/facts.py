"""One CKF fact's fields parsed and checked, and written back (docs/reference/ckf.md, SPEC-009 §2).

Every format reader turns its rows into fact objects and hands each to :func:`parse_fact`, which
records every problem with its line and field in the fact's :class:`FactRecord`; what a reader
learns about the whole file goes into the :class:`LoadState`, which
:func:`crp_core.io.ckf.assemble.finish_load` turns into the KnowledgeBase. :func:`fact_to_dict` is
the inverse of :func:`parse_fact`: the fact object every writer emits.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from crp_core.config import DEFAULT_SOURCE_TYPE, DEFAULT_STATUS, SOURCE_TYPES, STATUSES
from crp_core.errors import Problem
from crp_core.io.ckf.source import json_reason
from crp_core.io.located import type_name
from crp_core.io.timeparse import format_timestamp, parse_duration_seconds, parse_timestamp
from crp_core.model import Fact, TTLKind, has_unpaired_surrogate
from crp_core.support.digest import content_digest
from crp_core.support.text import control_char

#: ``err(field, message)``: records one problem of the fact being parsed
ErrFn = Callable[[str, str], None]


@dataclass
class FactRecord:
    """One fact record as parsed: the Fact (None if unusable) and its problems."""

    line: int
    is_object: bool = False
    fact: Fact | None = None
    fact_id: str | None = None
    embedding: np.ndarray | None = None  # valid (finite, 1-D) per-fact embedding
    has_embedding: bool = False  # an ``embedding`` value was given (valid or not)
    model: str | None = None
    errors: list[Problem] = field(default_factory=list)


#: fact fields this loader reads (docs/reference/ckf.md table, plus an optional per-fact ``embedding_model``)
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


@dataclass
class LoadState:
    """What a reader found in one file: the fact records, the problems of the whole file, the
    warnings, the unknown fields, and the model, dimension and embeddings the file declares."""

    recs: list[FactRecord] = field(default_factory=list)
    file_problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    unknown: dict[str, list[int]] = field(default_factory=dict)  # unknown field -> lines
    model: str | None = None  # declared by the JSON wrapper or manifest
    model_where: str = ""
    dim: int | None = None  # declared by the wrapper or manifest
    npy: np.ndarray | None = None

    def declare_model(self, value: Any, fieldname: str, where: str) -> None:
        """The embedding model the file declares in ``where`` (a wrapper, a manifest, a key-value table)."""
        if value is None:
            return
        if not isinstance(value, str) or not value.strip():
            self.file_problems.append(
                Problem(0, fieldname, f"embedding_model must be a non-empty string, got {value!r}")
            )
            return
        self.model, self.model_where = value, where

    def declare_dim(self, value: Any, fieldname: str) -> None:
        """The embedding dimension the file declares."""
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.file_problems.append(Problem(0, fieldname, f"dim must be a whole number >= 1, got {value!r}"))
            return
        self.dim = value


def parse_fact(obj: Any, line: int, st: LoadState, *, cells: bool, escapes: bool = True) -> FactRecord:
    """Validate one fact object; ``cells``: values are CSV cell strings (numbers, JSON to decode).
    ``escapes=False``: the reader knows no string of ``obj`` came from a JSON ``\\u`` escape (its source text
    holds none), so none can hold a lone surrogate (strictly decoded UTF-8 never does) and the Unicode checks
    are skipped: the same record, without a pass over every string."""
    rec = FactRecord(line)
    if not isinstance(obj, dict):
        rec.errors.append(Problem(line, "fact", f"a fact must be a JSON object, got {type_name(obj)}"))
        return rec
    rec.is_object = True
    errs = rec.errors

    def err(fieldname: str, msg: str) -> None:
        errs.append(Problem(line, fieldname, msg, rec.fact_id))

    if not _KNOWN.issuperset(obj):
        for k in obj:
            if k not in _KNOWN:
                st.unknown.setdefault(str(k), []).append(line)
    lone = has_unpaired_surrogate if escapes else _no_lone_surrogate
    rec.fact_id = _fact_id(obj.get("fact_id"), err, lone)
    content = obj.get("content")
    text = _content(content, err, st, line, rec.fact_id, lone)
    source_type = _enum(obj, "source_type", SOURCE_TYPES, DEFAULT_SOURCE_TYPE, err)
    status = _enum(obj, "status", STATUSES, DEFAULT_STATUS, err)
    weight = _weight(obj.get("importance_weight"), cells, err)
    stamps = {name: _stamp(obj.get(name), name, err) for name in ("ingested_at", "modified_at")}
    ttl_kind, ttl_seconds, ttl_text = _ttl(obj.get("ttl"), err)
    strings = {
        name: _plain(obj.get(name), name, err, lone) for name in ("source_id", "source_location", "community_label")
    }
    meta = _metadata(obj.get("metadata"), cells, err, escapes)
    _embedding_fields(obj, rec, cells, err)
    # content_hash: checked, not kept
    ch = obj.get("content_hash")
    if isinstance(ch, str) and isinstance(content, str) and not lone(content):
        if ch.lower() != content_digest(content):
            st.warnings.append(Problem(line, "content_hash", "does not match sha256(content); ignored", rec.fact_id))
    if errs or rec.fact_id is None or text is None:  # without errors, both the id and the content are set
        return rec
    rec.fact = Fact(
        fact_id=rec.fact_id,
        content=text,
        source_type=sys.intern(source_type),
        status=sys.intern(status),
        importance_weight=weight,
        ingested_at=stamps["ingested_at"],
        modified_at=stamps["modified_at"],
        ttl_kind=ttl_kind,
        ttl_seconds=ttl_seconds,
        ttl_text=_shared(ttl_text),
        source_id=_shared(strings["source_id"]),
        source_location=_shared(strings["source_location"]),
        community_label=_shared(strings["community_label"]),
        metadata=meta,
        line=line,
    )
    return rec


def _shared(value: str | None) -> str | None:
    """One string object per distinct value of a field that repeats across facts (a source type, a status,
    a source id, a community label, a TTL as written): a million facts from a few hundred sources hold a few
    hundred strings, not a million equal ones."""
    return None if value is None else sys.intern(value)


def _no_lone_surrogate(_text: str) -> bool:
    """The Unicode check of a string read from text without a ``\\u`` escape: it holds no lone surrogate."""
    return False


def _fact_id(fid: Any, err: ErrFn, lone: Callable[[str], bool]) -> str | None:
    """The fact's id once checked (a non-empty string without control characters), else None."""
    if fid is None:
        err("fact_id", "missing (required)")
    elif not isinstance(fid, str):
        err("fact_id", f"must be a string, got {type_name(fid)} {json.dumps(fid)[:60]}")
    elif not fid.strip():
        err("fact_id", "empty (required)")
    elif lone(fid):
        err("fact_id", "contains an unpaired surrogate (not valid Unicode)")
    elif (ctl := control_char(fid)) is not None:
        err(
            "fact_id",
            f"contains the control character {ctl}: an id is a key shown in headers, tables and "
            "command lines, and a control character there cuts or reshapes it",
        )
    else:
        return fid
    return None


def _content(
    content: Any, err: ErrFn, st: LoadState, line: int, fact_id: str | None, lone: Callable[[str], bool]
) -> str | None:
    """The fact's content once checked (visible text, valid Unicode), else None; NUL characters are
    kept with a warning."""
    if content is None:
        err("content", "missing (required)")
    elif not isinstance(content, str):
        err("content", f"must be a string, got {type_name(content)}")
    elif not has_visible_char(content):
        err("content", "empty (required, non-empty text; only spaces or invisible characters here)")
    elif lone(content):
        err("content", "contains an unpaired surrogate (not valid Unicode)")
    else:
        if "\x00" in content:
            st.warnings.append(
                Problem(
                    line,
                    "content",
                    f"holds {content.count(chr(0))} NUL character(s) "
                    "(U+0000); kept as given, but a C tool or terminal may "
                    "cut the text there",
                    fact_id,
                )
            )
        return content
    return None


#: a number in a CSV cell: a decimal in ASCII (digits, a sign, a point, an exponent; '.5' and '+5e-1' as
#: spreadsheets write them): ``float`` alone also reads other scripts' digits and underscores ('\u0660.5', '.5_0')
_CELL_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _weight(w: Any, cells: bool, err: ErrFn) -> float | None:
    """``importance_weight`` in [0, 1], else None (absent or refused)."""
    if w is None:
        return None
    if cells:
        if not (isinstance(w, str) and _CELL_NUMBER.fullmatch(w.strip())):
            err("importance_weight", f"not a number: {w!r}")
            return None
        w = float(w)
    if isinstance(w, bool) or not isinstance(w, (int, float)):
        err("importance_weight", f"must be a number between 0 and 1, got {type_name(w)} {json.dumps(w)[:60]}")
    elif not (w == w and -math.inf < w < math.inf) or not 0.0 <= w <= 1.0:
        err("importance_weight", f"must be between 0 and 1, got {w!r}")
    else:
        return float(w)
    return None


def _stamp(v: Any, name: str, err: ErrFn) -> datetime | None:
    if v is None:
        return None
    try:
        return parse_timestamp(v)
    except ValueError as exc:
        err(name, str(exc))
        return None


def _ttl(t: Any, err: ErrFn) -> tuple[TTLKind, float | None, str | None]:
    """``(kind, seconds, text as given)`` of the ``ttl`` field."""
    if t is None:
        return "default", None, None
    try:
        secs = parse_duration_seconds(t)
    except ValueError as exc:
        err("ttl", str(exc))
        return "default", None, None
    if secs is None:
        return "timeless", None, t
    return "explicit", secs, t


def _plain(v: Any, name: str, err: ErrFn, lone: Callable[[str], bool]) -> str | None:
    """A plain string field (valid Unicode, no NUL), else None."""
    if v is None:
        return None
    if not isinstance(v, str):
        err(name, f"must be a string, got {type_name(v)}")
    elif lone(v):
        err(name, "contains an unpaired surrogate (not valid Unicode)")
    elif "\x00" in v:
        err(name, f"contains a NUL character (U+0000) at position {v.index(chr(0))}")
    else:
        return v
    return None


def _metadata(m: Any, cells: bool, err: ErrFn, escapes: bool = True) -> dict[str, Any]:
    """``metadata``: a JSON object of valid Unicode (a CSV cell holds it as JSON), else empty; ``escapes``
    as in :func:`parse_fact` (without them the Unicode check has nothing to find)."""
    if m is None:
        return {}
    if cells:
        m = _cell_json(m, "metadata", err)
        if m is None:
            return {}
    if not isinstance(m, dict):
        err("metadata", f"must be a JSON object, got {type_name(m)}")
        return {}
    if not escapes:
        return m
    try:
        json.dumps(m, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError, RecursionError):
        err("metadata", "holds text that is not valid Unicode")
        return {}
    return m


def _embedding_fields(obj: dict[str, Any], rec: FactRecord, cells: bool, err: ErrFn) -> None:
    """``embedding`` (checked by :func:`check_embedding`) and ``embedding_model`` into ``rec``."""
    e = obj.get("embedding")
    if e is not None:
        rec.has_embedding = True
        if cells:
            e = _cell_json(e, "embedding", err)
        if e is not None:
            rec.embedding = check_embedding(e, err)
    em = obj.get("embedding_model")
    if em is not None:
        if not isinstance(em, str) or not em.strip():
            err("embedding_model", f"must be a non-empty string, got {em!r}")
        else:
            rec.model = em


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
        err(name, f"CSV cell is not valid JSON: {json_reason(exc)}")
        return None


#: characters that draw nothing: a content made only of these is empty
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e")


def has_visible_char(text: str) -> bool:
    """Does ``text`` hold a character that draws something (not space, not zero-width)?"""
    first = text[:1]
    if first and not first.isspace() and first not in _INVISIBLE:  # most texts: their first character
        return True
    return any(not ch.isspace() and ch not in _INVISIBLE for ch in text)


#: the JSON number types an embedding element may have (``bool`` is a subclass of ``int``: not listed)
_NUMBER_TYPES = frozenset((float, int))


#: why a vector of non-zero numbers can still have no direction once stored (embeddings are float32)
TINY_FOR_FLOAT32 = "every value is below float32's smallest (about 1.4e-45), so the stored vector has no direction"


def check_embedding(e: Any, err: ErrFn) -> np.ndarray | None:
    """A per-fact embedding as float32, or None with the problem said through ``err`` (not a list of
    numbers, NaN or infinite, beyond float32, all zeros)."""
    if not isinstance(e, list) or not e:
        err("embedding", f"must be a non-empty list of numbers, got {type_name(e)}")
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
    if not f32.any():
        err("embedding", f"is all zeros as float32: {TINY_FOR_FLOAT32}")
        return None
    return f32


def fact_to_dict(f: Fact, emb: np.ndarray | None, model: str | None) -> dict[str, Any]:
    """The fact object of ``f`` in :data:`FACT_FIELDS` order, absent values left out (what
    :func:`parse_fact` reads back to an equal fact)."""
    d: dict[str, Any] = {"fact_id": f.fact_id, "content": f.content, "source_type": f.source_type, "status": f.status}
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

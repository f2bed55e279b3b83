"""Writing a CKF in the format of its path (SPEC_NOTES §1.1): the inverse of :func:`load_ckf`."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable
from typing import Any

import numpy as np

from crp_core.errors import CKFError, Problem
from crp_core.io.ckf.facts import _DIR_FACTS, _DIR_MANIFEST, _DIR_NPY, _FILE, _FORMATS, _format_message
from crp_core.io.timeparse import format_timestamp
from crp_core.model import Fact, KnowledgeBase


def ckf_format(path: str | os.PathLike[str]) -> str | None:
    """The CKF format :func:`write_ckf` writes at ``path``: "jsonl" (``.jsonl``, ``.ndjson``), "json",
    "csv", "parquet", "dir" (no extension), or None for an extension it cannot write."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    return "dir" if ext == "" else _FORMATS.get(ext)


def write_ckf(kb: KnowledgeBase, path: str | os.PathLike[str]) -> str:
    """Write ``kb`` in the format of ``path``'s extension, or as a directory when it has none.

    ``load_ckf(write_ckf(kb, p))`` gives equal facts (``line`` aside, ``metadata`` included: every
    format carries it, CSV as a JSON cell in a ``metadata`` column written when any fact has
    metadata), embeddings and model. Returns the path written.
    """
    path = os.fspath(path)
    fmt = ckf_format(path)
    if fmt is None:
        raise CKFError(f"cannot write CKF {path}", [Problem(0, _FILE, _format_message(path))])
    if fmt == "parquet":
        from crp_core.io.ckf.parquet import write_parquet

        return write_parquet(kb, path)
    emb = None if kb.embeddings is None else np.asarray(kb.embeddings, dtype=np.float32)
    if fmt == "dir":
        os.makedirs(path, exist_ok=True)
        _write_atomic(
            os.path.join(path, _DIR_FACTS),
            "".join(json.dumps(_fact_to_dict(f, None, None), ensure_ascii=False) + "\n" for f in kb.facts).encode(
                "utf-8"
            ),
        )
        npy, manifest = os.path.join(path, _DIR_NPY), os.path.join(path, _DIR_MANIFEST)
        if emb is not None:
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(emb), allow_pickle=False)
            _write_atomic(npy, buf.getvalue())
        elif os.path.exists(npy):
            os.remove(npy)
        man: dict[str, Any] = {}
        if kb.embedding_model is not None:
            man["embedding_model"] = kb.embedding_model
        if emb is not None:
            man["dim"] = int(emb.shape[1])
        if man:
            _write_atomic(manifest, json.dumps(man, ensure_ascii=False, indent=2).encode("utf-8"))
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
    _write_atomic(path, text.encode("utf-8"))
    return path


def write_text_atomic(path: str | os.PathLike[str], text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (a report next to a CKF); returns the path."""
    path = os.fspath(path)
    _write_atomic(path, text.encode("utf-8"))
    return path


def _write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file next to it, flushed, then
    renamed over it (a failed write, a full disk or a kill never leaves a half-written CKF, and the
    file that was there stays until the new one is complete)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".crp-write-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ---- writing ---------------------------------------------------------------------------------
_WRITE_ORDER = (
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


def _fact_to_dict(f: Fact, emb: np.ndarray | None, model: str | None) -> dict[str, Any]:
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

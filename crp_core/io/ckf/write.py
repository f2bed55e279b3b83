"""Writing a CKF in the format of its path (docs/reference/ckf.md): the inverse of :func:`load_ckf`.

Every file is written whole or not at all (:func:`crp_core.support.files.write_atomic`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from crp_core.errors import CKFError, Problem
from crp_core.io.ckf.facts import FACT_FIELDS, fact_to_dict
from crp_core.io.ckf.source import DIR_FACTS, DIR_MANIFEST, DIR_NPY, FILE_FIELD, FORMATS, unknown_format_message
from crp_core.model import KnowledgeBase
from crp_core.support.files import write_atomic


def ckf_format(path: str | os.PathLike[str]) -> str | None:
    """The CKF format :func:`write_ckf` writes at ``path``: "jsonl" (``.jsonl``, ``.ndjson``), "json",
    "csv", "parquet", "dir" (no extension), or None for an extension it cannot write."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    return "dir" if ext == "" else FORMATS.get(ext)


def write_ckf(kb: KnowledgeBase, path: str | os.PathLike[str]) -> str:
    """Write ``kb`` in the format of ``path``'s extension, or as a directory when it has none.

    ``load_ckf(write_ckf(kb, p))`` gives equal facts (``line`` aside, ``metadata`` included: every
    format carries it, CSV as a JSON cell in a ``metadata`` column written when any fact has
    metadata), embeddings and model. Returns the path written.
    """
    path = os.fspath(path)
    fmt = ckf_format(path)
    if fmt is None:
        raise CKFError(f"cannot write CKF {path}", [Problem(0, FILE_FIELD, unknown_format_message(path))])
    if fmt == "parquet":
        from crp_core.io.ckf.parquet import write_parquet

        return write_parquet(kb, path)
    emb = None if kb.embeddings is None else np.asarray(kb.embeddings, dtype=np.float32)
    if fmt == "dir":
        _write_dir(kb, emb, path)
    else:
        write_atomic(path, _file_text(kb, emb, fmt).encode("utf-8"))
    return path


def _write_dir(kb: KnowledgeBase, emb: np.ndarray | None, path: str) -> None:
    """A CKF directory: ``facts.jsonl``, then ``embeddings.npy`` and ``manifest.json`` when there is
    something to put in them (an old one is removed when there is not)."""
    os.makedirs(path, exist_ok=True)
    write_atomic(
        os.path.join(path, DIR_FACTS),
        "".join(json.dumps(fact_to_dict(f, None, None), ensure_ascii=False) + "\n" for f in kb.facts).encode("utf-8"),
    )
    npy, manifest = os.path.join(path, DIR_NPY), os.path.join(path, DIR_MANIFEST)
    if emb is not None:
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(emb), allow_pickle=False)
        write_atomic(npy, buf.getvalue())
    elif os.path.exists(npy):
        os.remove(npy)
    man: dict[str, Any] = {}
    if kb.embedding_model is not None:
        man["embedding_model"] = kb.embedding_model
    if emb is not None:
        man["dim"] = int(emb.shape[1])
    if man:
        write_atomic(manifest, json.dumps(man, ensure_ascii=False, indent=2).encode("utf-8"))
    elif os.path.exists(manifest):
        os.remove(manifest)


def _file_text(kb: KnowledgeBase, emb: np.ndarray | None, fmt: str) -> str:
    """The text of a JSONL, JSON or CSV CKF."""
    rows = [fact_to_dict(f, None if emb is None else emb[i], None) for i, f in enumerate(kb.facts)]
    if fmt == "json":
        return json.dumps({"embedding_model": kb.embedding_model, "facts": rows}, ensure_ascii=False, indent=1)
    # a JSONL or CSV file has no header: the model travels as a per-fact field
    if kb.embedding_model is not None:
        for r in rows:
            r["embedding_model"] = kb.embedding_model
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return _rows_to_csv(rows)


def _rows_to_csv(rows: Iterable[dict[str, Any]]) -> str:
    rows = list(rows)
    cols = [c for c in FACT_FIELDS if any(c in r for r in rows)] or ["fact_id", "content"]
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

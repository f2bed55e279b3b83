"""What every CKF reader shares at the level of the whole file (docs/reference/ckf.md): the formats by
extension and the directory layout, the size limit (``ckf_max_bytes``), reading and decoding the
bytes, the words for a JSON value and a JSON error, and the refusal of a file (:class:`CKFError`
listing its problems, each with its line and field)."""

from __future__ import annotations

import json
import os
from typing import NoReturn

from crp_core.config import CRPConfig
from crp_core.errors import CKFError, Problem
from crp_core.support.files import check_regular_file, link_reason, read_regular_file, too_large_reason

#: the field of a problem of the whole file
FILE_FIELD = "file"
#: the CKF format of each file extension
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
#: the files of a CKF directory: the facts, their embeddings (optional), the manifest (optional)
DIR_FACTS, DIR_NPY, DIR_MANIFEST = "facts.jsonl", "embeddings.npy", "manifest.json"
#: the settings that set the size limit, named when a file is over it: the configuration key, and the
#: flag every CKF-reading command has (``crp_core.cli.common.add_max_bytes_arg``)
LIMIT_SETTING = "the ckf_max_bytes setting; --max-bytes on the command line"
_WHAT = "CKF"


def unknown_format_message(name: str) -> str:
    """Why ``name``'s extension is not a CKF format."""
    return (
        f"unknown CKF format {os.path.splitext(name)[1] or '(no extension)'!r}: expected .jsonl, "
        f".json, .csv, .parquet or a directory holding {DIR_FACTS}"
    )


def refuse(source: str, problems: list[Problem]) -> NoReturn:
    """Refuse the CKF ``source`` with every problem found."""
    raise CKFError(f"{_WHAT} {source} refused", problems)


def json_reason(exc: BaseException) -> str:
    """What a JSON decoding error says, in a few words (its column, or "nested too deeply")."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)[:200]


def byte_limit(max_bytes: int | None) -> int:
    """The size limit of a read: ``max_bytes``, else the default ``ckf_max_bytes``."""
    return CRPConfig().ckf_max_bytes if max_bytes is None else int(max_bytes)


def check_resolves(path: str, fieldname: str = FILE_FIELD) -> None:
    """Refuse a path that is a symlink loop or a dangling link before its extension is looked at
    (a loop named ``kb`` is said as a loop, not as an unknown CKF format)."""
    try:
        os.stat(path)
    except OSError as exc:
        refuse(path, [Problem(0, fieldname, link_reason(path, exc) or f"cannot read {path}: {exc.strerror or exc}")])


def read_ckf_file(path: str, limit: int, fieldname: str = FILE_FIELD) -> bytes:
    """The bytes of a CKF file (or of one file of a CKF directory: ``fieldname`` names it), refused
    unless it is a regular file within ``limit`` bytes."""
    return read_regular_file(path, max_bytes=limit, what=_WHAT, error=CKFError, field=fieldname, setting=LIMIT_SETTING)


def check_ckf_file(path: str, limit: int, fieldname: str = FILE_FIELD) -> None:
    """The checks of :func:`read_ckf_file` for a reader that opens ``path`` itself (Parquet, a directory's
    memory-mapped ``embeddings.npy``)."""
    check_regular_file(path, max_bytes=limit, what=_WHAT, error=CKFError, field=fieldname, setting=LIMIT_SETTING)


def check_size(name: str, size: int, limit: int) -> None:
    """Refuse an uploaded CKF of ``size`` bytes over ``limit``."""
    if size > limit:
        refuse(name, [Problem(0, FILE_FIELD, too_large_reason(name, size, limit, _WHAT, LIMIT_SETTING))])


def decode(data: bytes, fieldname: str = FILE_FIELD) -> tuple[str | None, Problem | None]:
    """``(text, None)``, or ``(None, the problem)`` when ``data`` is not UTF-8 (a BOM is dropped)."""
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, Problem(
            0, fieldname, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, offset {exc.start}"
        )

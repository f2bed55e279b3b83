"""Which paths of a folder are CKFs to offer (the dashboard's samples folder, ``crp-inspect dashboard
--ckf``): a non-hidden file with a CKF extension (a ``.json`` one only when it is shaped like a CKF) or a
non-hidden directory holding ``facts.jsonl``. One rule, so the CKF a command names is the one listed."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from crp_core.io.ckf.source import DIR_FACTS, FORMATS

#: the file extensions of a CKF, in the order the formats are documented
CKF_SUFFIXES: tuple[str, ...] = tuple(FORMATS)
#: a ``.json`` file bigger than this is listed without peeking at its shape
JSON_PEEK_LIMIT = 8 * 1024 * 1024


def listable_ckf(path: Path) -> bool:
    """Is ``path`` a CKF to offer? A hidden name (``.x``) never is; a ``.json`` file only when it is a list
    of facts, an object with ``facts`` or a crprotocol SDK snapshot (or too big or unreadable to tell:
    then the loader explains what is wrong with it when it is opened)."""
    if path.name.startswith("."):
        return False
    if path.is_dir():
        return (path / DIR_FACTS).is_file()
    if not path.is_file() or path.suffix.lower() not in CKF_SUFFIXES:
        return False
    if path.suffix.lower() != ".json":
        return True
    stat = path.stat()
    return _json_shape_is_ckf(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _json_shape_is_ckf(path: str, mtime_ns: int, size: int) -> bool:
    """Shape check of one version of a file (the stamp arguments are the cache key)."""
    if size > JSON_PEEK_LIMIT:
        return True  # too big to peek at on every rerun: let the loader judge it when picked
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return True  # listed, and the loader explains what is wrong with it when picked
    # a crprotocol SDK snapshot ({"header", "payload"}) is read as a CKF too (docs/decisions/sdk-snapshots.md)
    return isinstance(data, list) or (isinstance(data, dict) and ("facts" in data or "payload" in data))

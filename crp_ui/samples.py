"""Sample discovery: the bundled CKFs and scenarios the sidebar offers (no Streamlit here).

The samples folder is ``$CRP_SAMPLE_DIR`` or the repository's ``sample_ckf/``; its scenarios live in
``$CRP_SCENARIO_DIR`` or ``scenarios/`` below it. A CKF is a ``*.jsonl`` / ``*.ndjson`` / ``*.csv`` /
``*.parquet`` file, a ``*.json`` file shaped like a CKF, or a directory holding ``facts.jsonl``. The
server's operator may name the CKF opened first (``$CRP_DEFAULT_SAMPLE``) and the size limit of the
server-side CKFs (``$CRP_SAMPLE_MAX_BYTES``): ``crp-inspect dashboard --ckf PATH`` sets all of them.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SAMPLE = "knowledge_base.jsonl"
CKF_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")
SCENARIO_SUFFIXES = (".json", ".toml")
#: a ``.json`` file bigger than this is listed without peeking at its shape
JSON_PEEK_LIMIT = 8 * 1024 * 1024


def samples_dir() -> Path:
    """``$CRP_SAMPLE_DIR`` or the repository's ``sample_ckf/``."""
    env = os.environ.get("CRP_SAMPLE_DIR")
    return Path(env) if env else REPO_ROOT / "sample_ckf"


def scenarios_dir() -> Path:
    """The bundled scenarios: ``$CRP_SCENARIO_DIR`` or ``scenarios/`` in the samples folder."""
    env = os.environ.get("CRP_SCENARIO_DIR")
    return Path(env) if env else samples_dir() / "scenarios"


def default_sample() -> str:
    """The CKF opened first and left out of links: ``$CRP_DEFAULT_SAMPLE`` or :data:`DEFAULT_SAMPLE`."""
    return os.environ.get("CRP_DEFAULT_SAMPLE") or DEFAULT_SAMPLE


def sample_max_bytes(configured: int) -> int:
    """The size limit of a server-side CKF: ``$CRP_SAMPLE_MAX_BYTES`` (the operator's, a whole number of
    bytes) when set, else ``configured`` (the session's ``ckf_max_bytes``)."""
    env = (os.environ.get("CRP_SAMPLE_MAX_BYTES") or "").strip()
    return int(env) if env.isascii() and env.isdigit() and int(env) > 0 else configured


def list_samples() -> list[str]:
    """Bundled CKFs: ``*.jsonl|*.json|*.csv`` files and CKF directories (holding facts.jsonl).

    The default sample comes first, the others in name order.
    """
    d = samples_dir()
    if not d.is_dir():
        return []
    out = []
    for p in sorted(d.iterdir()):
        if p.is_file() and p.suffix.lower() in CKF_SUFFIXES and not p.name.startswith("."):
            if p.suffix.lower() == ".json" and not json_is_ckf(p):
                continue  # e.g. sample_ckf/planted_conflicts.json: data about the sample, not a CKF
            out.append(p.name)
        elif p.is_dir() and (p / "facts.jsonl").is_file():
            out.append(p.name)
    first = default_sample()
    out.sort(key=lambda n: (n != first, n))
    return out


def list_scenarios() -> list[str]:
    """Bundled scenario files (``*.json`` / ``*.toml``) in name order."""
    d = scenarios_dir()
    if not d.is_dir():
        return []
    return sorted(
        p.name
        for p in d.iterdir()
        if p.is_file() and p.suffix.lower() in SCENARIO_SUFFIXES and not p.name.startswith(".")
    )


@functools.lru_cache(maxsize=256)
def _json_shape_is_ckf(path: str, mtime_ns: int, size: int) -> bool:
    """Shape check of one version of a file (the stamp arguments are the cache key)."""
    if size > JSON_PEEK_LIMIT:
        return True  # too big to peek at on every rerun: let the loader judge it when picked
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return True  # listed, and the loader explains what is wrong with it when picked
    # a crprotocol SDK snapshot ({"header", "payload"}) is read as a CKF too (docs/decisions/sdk-snapshots.md)
    return isinstance(data, list) or (isinstance(data, dict) and ("facts" in data or "payload" in data))


def json_is_ckf(p: Path) -> bool:
    """A ``.json`` CKF is a list of facts or an object with ``facts`` (SPEC_NOTES §1.1)."""
    stat = p.stat()
    return _json_shape_is_ckf(str(p), stat.st_mtime_ns, stat.st_size)

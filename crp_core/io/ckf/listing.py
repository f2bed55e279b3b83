"""Which paths of a folder are CKFs and scenarios to offer (the dashboard's samples folder, ``crp-inspect
dashboard --ckf``): a non-hidden file with a CKF extension (a ``.json`` one only when it is shaped like a CKF) or a
non-hidden directory holding ``facts.jsonl``; a non-hidden ``.json`` / ``.toml`` file other than a directory CKF's
own manifest; and where a CKF's scenarios are looked for. One rule each, so what a command names is what is listed."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from crp_core.io.ckf.source import DIR_FACTS, DIR_MANIFEST, FORMATS

#: the file extensions of a CKF, in the order the formats are documented
CKF_SUFFIXES: tuple[str, ...] = tuple(FORMATS)
#: the file extensions of a scenario
SCENARIO_SUFFIXES: tuple[str, ...] = (".json", ".toml")
#: the folder a CKF's scenarios are kept in, next to the CKF (or inside a directory CKF)
SCENARIOS_FOLDER = "scenarios"
#: the ``kind`` of every JSON report this tool writes starts so (``crp-inspect.run``, ``crp-inspect.triage-export``)
REPORT_KIND_PREFIX = "crp-inspect."
#: a ``.json`` file bigger than this is listed without peeking at its shape
JSON_PEEK_LIMIT = 8 * 1024 * 1024


def listable_ckf(path: Path) -> bool:
    """Is ``path`` a CKF to offer? A hidden name (``.x``) never is; a ``.json`` file only when it is a list
    of facts, an object with ``facts`` or a crprotocol SDK snapshot (or too big or unreadable to tell:
    then the loader explains what is wrong with it when it is opened)."""
    if path.name.startswith("."):
        return False
    try:
        if path.is_dir():
            return (path / DIR_FACTS).is_file()
        if not path.is_file() or path.suffix.lower() not in CKF_SUFFIXES:
            return False
        if path.suffix.lower() != ".json":
            return True
        stat = path.stat()
    except OSError:
        return True  # cannot be looked into (no permission): listed, and the loader says why when it is opened
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
    if isinstance(data, dict) and str(data.get("kind", "")).startswith(REPORT_KIND_PREFIX):
        return False  # a report of this tool (run --json, the export report) lists facts but is no CKF
    # a crprotocol SDK snapshot ({"header", "payload"}) is read as a CKF too (docs/decisions/sdk-snapshots.md)
    return isinstance(data, list) or (isinstance(data, dict) and ("facts" in data or "payload" in data))


def ckf_manifest(path: Path) -> bool:
    """Is ``path`` the ``manifest.json`` of a directory CKF (a folder holding ``facts.jsonl``)? It describes
    the CKF's vectors: never a scenario, in a folder of scenarios or a suite's."""
    return path.name == DIR_MANIFEST and (path.parent / DIR_FACTS).is_file()


def listable_scenario(path: Path) -> bool:
    """Is ``path`` a scenario file to offer? A non-hidden ``.json`` / ``.toml`` file, not a directory CKF's
    manifest (:func:`ckf_manifest`)."""
    if path.name.startswith(".") or path.suffix.lower() not in SCENARIO_SUFFIXES:
        return False
    try:
        return path.is_file() and not ckf_manifest(path)
    except OSError:
        return True  # cannot be looked into: listed, and the loader says why when it is opened


def folder_entries(folder: Path) -> tuple[list[Path], str | None]:
    """The entries of ``folder`` in name order, and None; or no entries and why the folder cannot be listed
    (missing, not a folder, no permission), in words for the person who named it."""
    try:
        return sorted(folder.iterdir()), None
    except FileNotFoundError:
        return [], "no such folder"
    except NotADirectoryError:
        return [], "not a folder"
    except OSError as exc:
        return [], f"cannot list it: {exc.strerror or exc}"


def scenario_folder(ckf: Path) -> Path:
    """Where the scenarios of the CKF at ``ckf`` are looked for: ``scenarios/`` next to it. A directory CKF
    with no such folder beside it keeps them in its own ``scenarios/``, or among its files (the layout of
    ``bench/make_synthetic_ckf.py``: ``scenario.json`` beside ``facts.jsonl``)."""
    beside = ckf.parent / SCENARIOS_FOLDER
    if os.path.isdir(beside) or not os.path.isdir(ckf):
        return beside
    inside = ckf / SCENARIOS_FOLDER
    if os.path.isdir(inside):
        return inside
    entries, _ = folder_entries(ckf)  # a folder that cannot be listed holds no scenario to offer
    return ckf if any(listable_scenario(p) for p in entries) else beside

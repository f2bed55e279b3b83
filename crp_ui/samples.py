"""Sample discovery: the bundled CKFs and scenarios the sidebar offers (no Streamlit here).

The samples folder is ``$CRP_SAMPLE_DIR`` or the repository's ``sample_ckf/``; its scenarios live in
``$CRP_SCENARIO_DIR`` or ``scenarios/`` below it. A CKF is a ``*.jsonl`` / ``*.ndjson`` / ``*.csv`` /
``*.parquet`` file, a ``*.json`` file shaped like a CKF, or a directory holding ``facts.jsonl``. The
server's operator may name the CKF opened first (``$CRP_DEFAULT_SAMPLE``), the scenario opened first
(``$CRP_DEFAULT_SCENARIO``) and the size limit of the server-side CKFs (``$CRP_SAMPLE_MAX_BYTES``):
``crp-inspect dashboard --ckf PATH`` sets the folder, the CKF and the limit.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from crp_core import folder_entries, listable_ckf, listable_scenario

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SAMPLE = "knowledge_base.jsonl"
#: the bundled scenario the demo guide (docs/guide/demo.md) starts from: the one a first visit lands on
DEFAULT_SCENARIO = "payments_api_migration.json"


def samples_dir() -> Path:
    """``$CRP_SAMPLE_DIR`` or the repository's ``sample_ckf/``."""
    env = os.environ.get("CRP_SAMPLE_DIR")
    return Path(env) if env else REPO_ROOT / "sample_ckf"


def samples_label() -> str:
    """What the sidebar calls the samples folder's CKFs: the bundled samples, or (``$CRP_SAMPLE_DIR``, e.g.
    ``crp-inspect dashboard --ckf``) the knowledge bases of a folder the server's operator named."""
    return "Knowledge base on the server" if os.environ.get("CRP_SAMPLE_DIR") else "Bundled sample"


def scenarios_bundled() -> bool:
    """Whether the scenarios offered are the repository's own (no ``$CRP_SCENARIO_DIR`` or ``$CRP_SAMPLE_DIR``:
    a server started on another folder, ``crp-inspect dashboard --ckf``, offers that folder's scenarios)."""
    return not (os.environ.get("CRP_SCENARIO_DIR") or os.environ.get("CRP_SAMPLE_DIR"))


def scenarios_label() -> str:
    """What the sidebar calls a scenario of the scenarios folder."""
    return "Bundled scenario" if scenarios_bundled() else "Scenario on the server"


def scenarios_dir() -> Path:
    """The bundled scenarios: ``$CRP_SCENARIO_DIR`` or ``scenarios/`` in the samples folder."""
    env = os.environ.get("CRP_SCENARIO_DIR")
    return Path(env) if env else samples_dir() / "scenarios"


def default_sample() -> str:
    """The CKF opened first and left out of links: ``$CRP_DEFAULT_SAMPLE`` or :data:`DEFAULT_SAMPLE`."""
    return os.environ.get("CRP_DEFAULT_SAMPLE") or DEFAULT_SAMPLE


def default_scenario() -> str:
    """The scenario opened first when the folder holds it: ``$CRP_DEFAULT_SCENARIO`` or :data:`DEFAULT_SCENARIO`
    (a folder without it opens its first scenario in name order)."""
    return os.environ.get("CRP_DEFAULT_SCENARIO") or DEFAULT_SCENARIO


#: where the server's own limit on its CKFs is set (named when a server-side CKF is over it)
SAMPLE_LIMIT_SETTING = "crp-inspect dashboard --max-bytes, $CRP_SAMPLE_MAX_BYTES; not the ckf_max_bytes setting"


def sample_limit_env() -> tuple[int | None, str | None]:
    """``$CRP_SAMPLE_MAX_BYTES`` read: (the limit, None) when it is a whole number of bytes >= 1, (None, why
    it is ignored) when it is set to anything else, (None, None) when unset."""
    raw = os.environ.get("CRP_SAMPLE_MAX_BYTES")
    env = (raw or "").strip()
    if not env:
        return None, None
    if env.isascii() and env.isdigit() and len(env) <= 30 and int(env) > 0:
        return int(env), None
    shown = env if len(env) <= 40 else env[:39] + "…"
    return None, f"$CRP_SAMPLE_MAX_BYTES={shown!r} is not a whole number of bytes: ignored"


def server_limit_note(messages: list[str]) -> str | None:
    """When the operator's limit is in force and a refusal says a file is over the limit: the note that names
    where that limit is set (the messages name the configuration's setting, which does not apply here)."""
    if sample_limit_env()[0] is None or not any("over the limit" in m for m in messages):
        return None
    return f"the server's limit: {SAMPLE_LIMIT_SETTING}"


def sample_max_bytes(configured: int) -> int:
    """The size limit of a server-side CKF: ``$CRP_SAMPLE_MAX_BYTES`` (the operator's, a whole number of
    bytes) when set, else ``configured`` (the session's ``ckf_max_bytes``)."""
    limit, _ = sample_limit_env()
    return limit if limit is not None else configured


def _default_first(folder: Path, listable: Callable[[Path], bool], first: str) -> list[str]:
    """The names of ``folder``'s entries ``listable`` takes: ``first`` first when the folder holds it, the others
    in name order (a folder that cannot be listed gives none: its ``*_problem()`` says why)."""
    entries, _ = folder_entries(folder)
    return sorted((p.name for p in entries if listable(p)), key=lambda n: (n != first, n))


def list_samples() -> list[str]:
    """The samples folder's CKFs (``crp_core.listable_ckf``: files of a CKF format, a ``.json`` one only
    when shaped like a CKF, and directories holding facts.jsonl; never a hidden name).

    The default sample comes first, the others in name order.
    """
    # e.g. sample_ckf/planted_conflicts.json is data about the sample, not a CKF: not listed
    return _default_first(samples_dir(), listable_ckf, default_sample())


def list_scenarios() -> list[str]:
    """The scenario files of the scenarios folder (``crp_core.listable_scenario``): the default scenario first,
    the others in name order."""
    return _default_first(scenarios_dir(), listable_scenario, default_scenario())


def samples_problem() -> str | None:
    """Why the samples folder cannot be listed (no permission, not a folder, missing), or None."""
    return folder_entries(samples_dir())[1]


def scenarios_problem() -> str | None:
    """Why the scenarios folder cannot be listed, or None; a missing one is no problem (a CKF may have none)."""
    d = scenarios_dir()
    why = folder_entries(d)[1]
    return None if why is not None and not os.path.lexists(d) else why

"""A view snapshot: one JSON file that reproduces what a dashboard page showed, on another server.

It names the knowledge base by fingerprint and origin (a bundled sample's name or an uploaded file's
name), and carries the scenario with its edits (``scenario_to_dict``), the configuration keys that
differ from the defaults (``--set`` values), the operator decisions in force (one record each: id,
pair, kind, winner or status, operator, role, origin, when) and the page with its view parameters (the
same parameters as the page's URL). :func:`read_view_snapshot` refuses a file too large, not JSON, or
with a field of the wrong kind, naming the line and field of every problem; whether the snapshot fits
the loaded knowledge base is :func:`snapshot_kb_mismatch`. Format: docs/reference/snapshot.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crp_core.config import CRPConfig
from crp_core.decisions import ALL_KINDS, Decision, DecisionError, DecisionSet, validate_decision
from crp_core.errors import ConfigError, Problem, ValidationError
from crp_core.io.located import DocPath, Locate, format_path, json_error_message, json_with_lines, type_name
from crp_core.support.text import control_char

__all__ = [
    "VIEW_SNAPSHOT_FORMAT",
    "VIEW_SNAPSHOT_VERSION",
    "MAX_VIEW_SNAPSHOT_BYTES",
    "ViewSnapshot",
    "ViewSnapshotError",
    "view_snapshot_dict",
    "view_snapshot_bytes",
    "read_view_snapshot",
]

#: the ``format`` value of every view snapshot, and the version this code reads and writes
VIEW_SNAPSHOT_FORMAT = "crp-inspect.view-snapshot"
VIEW_SNAPSHOT_VERSION = 1
#: the largest snapshot file read (a scenario with many sub-queries and decisions fits easily)
MAX_VIEW_SNAPSHOT_BYTES = 4 * 1024 * 1024
#: bounds on the parts that are not validated by their own readers
MAX_DECISIONS = 10_000
MAX_VIEW_PARAMS = 64
MAX_PARAM_CHARS = 2_000
MAX_NAME_CHARS = 1_000
#: the decision fields a snapshot keeps (the audit log's hash chain and OS user stay in the log)
DECISION_FIELDS: tuple[str, ...] = (
    "id",
    "fact_a",
    "fact_b",
    "kind",
    "winner",
    "target_fact",
    "new_status",
    "operator",
    "role",
    "origin",
    "decided_at",
    "note",
)
KB_ORIGINS: tuple[str, ...] = ("sample", "upload")
_TOP_KEYS = ("format", "version", "kb", "scenario", "config", "decisions", "view")


class ViewSnapshotError(ValidationError):
    """A view snapshot file was refused; ``problems`` names the line and field of each problem."""


@dataclass(frozen=True)
class ViewSnapshot:
    """A snapshot as read: every part checked for shape; the scenario and config are checked again by
    the dashboard's own readers when the snapshot is opened."""

    kb_fingerprint: str
    kb_origin: str  # "sample" | "upload"
    kb_name: str  # the bundled sample's name or the uploaded file's name
    scenario_name: str  # bundled scenario name, "" for an upload
    scenario_edited: bool
    scenario: Mapping[str, Any]  # scenario_to_dict of the scenario in force
    config: Mapping[str, Any]  # key -> value, the keys that differ from the defaults
    decisions: tuple[Decision, ...]  # the decisions in force, in id order
    page: str  # the page's URL path ("" for the first page)
    params: Mapping[str, str]  # the page's view parameters (the URL's)

    def decision_set(self) -> DecisionSet:
        """The snapshot's decisions in force as a :class:`DecisionSet` (folded in id order)."""
        return DecisionSet.from_decisions(self.decisions)

    def kb_mismatch(self, fingerprint: str, loaded_name: str) -> str | None:
        """Why the snapshot does not fit the loaded knowledge base (None when the fingerprints match)."""
        if self.kb_fingerprint == fingerprint:
            return None
        how = "bundled sample" if self.kb_origin == "sample" else "uploaded"
        return (
            f"this snapshot was taken on KB {self.kb_name or 'unnamed'} ({how}), fingerprint "
            f"{self.kb_fingerprint[:16]}…; the loaded KB is {loaded_name or 'unnamed'}, fingerprint "
            f"{fingerprint[:16]}…. Load the same knowledge base, then open the snapshot again."
        )


def _decision_record(d: Decision) -> dict[str, Any]:
    full = d.to_dict()
    return {k: full[k] for k in DECISION_FIELDS}


def view_snapshot_dict(  # noqa: PLR0913  one argument per part of the snapshot
    *,
    kb_fingerprint: str,
    kb_origin: str,
    kb_name: str,
    scenario_name: str,
    scenario_edited: bool,
    scenario: Mapping[str, Any],
    config: CRPConfig,
    decisions: DecisionSet | None,
    page: str,
    params: Mapping[str, str],
) -> dict[str, Any]:
    """The snapshot document (a JSON-ready dict) of one view."""
    diff = CRPConfig().diff(config)
    found: list[Decision] = []
    if decisions is not None:
        found = [*decisions.pair_records.values(), *decisions.status_decisions.values()]
    found.sort(key=lambda d: (d.id is None, d.id or 0, d.pair_key))
    return {
        "format": VIEW_SNAPSHOT_FORMAT,
        "version": VIEW_SNAPSHOT_VERSION,
        "kb": {"fingerprint": kb_fingerprint, "origin": kb_origin, "name": kb_name},
        "scenario": {"name": scenario_name, "edited": bool(scenario_edited), "document": dict(scenario)},
        "config": {k: _plain(theirs) for k, (_mine, theirs) in sorted(diff.items())},
        "decisions": [_decision_record(d) for d in found],
        "view": {"page": page, "params": dict(sorted(params.items()))},
    }


def _plain(v: Any) -> Any:
    """A config value as JSON holds it (a tuple as a list)."""
    return list(v) if isinstance(v, tuple) else v


def view_snapshot_bytes(**parts: Any) -> bytes:
    """:func:`view_snapshot_dict` of ``parts`` as UTF-8 JSON, one key per line (so a problem's line
    is useful when the file is read back)."""
    return (json.dumps(view_snapshot_dict(**parts), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class _Reader:
    """Collects the problems of one document, each at the line of its path."""

    def __init__(self, locate: Locate):
        self.locate = locate
        self.problems: list[Problem] = []

    def bad(self, path: DocPath, message: str) -> None:
        self.problems.append(Problem(self.locate(path), format_path(path) or "(document)", message))

    def obj(self, v: Any, path: DocPath) -> Mapping[str, Any]:
        if isinstance(v, dict):
            return v
        self.bad(path, f"must be an object, not {type_name(v)}")
        return {}

    def text(self, v: Any, path: DocPath, *, limit: int = MAX_NAME_CHARS, empty: bool = True) -> str:
        if not isinstance(v, str):
            self.bad(path, f"must be a string, not {type_name(v)}")
            return ""
        if len(v) > limit:
            self.bad(path, f"longer than {limit} characters")
            return ""
        if not empty and not v:
            self.bad(path, "must not be empty")
        if (where := control_char(v)) is not None:
            self.bad(path, f"holds a control character ({where})")
            return ""
        return v


def _parse(data: bytes, source: str) -> tuple[Any, Locate]:
    """The JSON document of ``data`` with its locator; a file too large, not UTF-8 or not JSON refused."""
    if len(data) > MAX_VIEW_SNAPSHOT_BYTES:
        raise ViewSnapshotError(
            source,
            [Problem(0, "(file)", f"{len(data)} bytes, more than the {MAX_VIEW_SNAPSHOT_BYTES} a snapshot may be")],
        )
    try:
        return json_with_lines(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ViewSnapshotError(source, [Problem(0, "(file)", f"not UTF-8 text: {exc.reason}")]) from None
    except json.JSONDecodeError as exc:
        raise ViewSnapshotError(source, [Problem(exc.lineno, "(document)", json_error_message(exc))]) from None
    except (ValueError, RecursionError) as exc:
        raise ViewSnapshotError(source, [Problem(0, "(document)", f"not readable JSON: {exc}")]) from None


def read_view_snapshot(data: bytes, source: str = "snapshot") -> ViewSnapshot:
    """Read a snapshot file's bytes; raises :class:`ViewSnapshotError` naming every problem found."""
    doc, locate = _parse(data, source)
    r = _Reader(locate)
    top = r.obj(doc, ())
    if r.problems:
        raise ViewSnapshotError(source, r.problems)
    _check_header(r, top)
    kb = r.obj(top.get("kb"), ("kb",))
    scen = r.obj(top.get("scenario"), ("scenario",))
    view = r.obj(top.get("view"), ("view",))
    origin = r.text(kb.get("origin"), ("kb", "origin"))
    if origin and origin not in KB_ORIGINS:
        r.bad(("kb", "origin"), f"must be one of {', '.join(KB_ORIGINS)}")
    edited = scen.get("edited")
    if not isinstance(edited, bool):
        r.bad(("scenario", "edited"), f"must be true or false, not {type_name(edited)}")
    snap = ViewSnapshot(
        kb_fingerprint=r.text(kb.get("fingerprint"), ("kb", "fingerprint"), limit=200, empty=False),
        kb_origin=origin,
        kb_name=r.text(kb.get("name"), ("kb", "name")),
        scenario_name=r.text(scen.get("name"), ("scenario", "name")),
        scenario_edited=edited is True,
        scenario=r.obj(scen.get("document"), ("scenario", "document")),
        config=_config(r, top.get("config")),
        decisions=_decisions(r, top.get("decisions")),
        page=r.text(view.get("page"), ("view", "page"), limit=100),
        params=_params(r, view.get("params")),
    )
    if r.problems:
        raise ViewSnapshotError(source, r.problems)
    return snap


def _check_header(r: _Reader, top: Mapping[str, Any]) -> None:
    for k in top:
        if k not in _TOP_KEYS:
            r.bad((k,), f"unknown key (a snapshot holds {', '.join(_TOP_KEYS)})")
    if top.get("format") != VIEW_SNAPSHOT_FORMAT:
        r.bad(("format",), f"must be {VIEW_SNAPSHOT_FORMAT!r}: this is not a crp-inspect view snapshot")
    if top.get("version") != VIEW_SNAPSHOT_VERSION:
        r.bad(("version",), f"must be {VIEW_SNAPSHOT_VERSION} (this crp-inspect reads version {VIEW_SNAPSHOT_VERSION})")


def _config(r: _Reader, v: Any) -> dict[str, Any]:
    got = r.obj(v, ("config",))
    out: dict[str, Any] = {}
    for k, val in got.items():
        if not isinstance(val, str | int | float | bool | list) and val is not None:
            r.bad(("config", k), f"must be a number, string, boolean, list or null, not {type_name(val)}")
            continue
        out[k] = val
    try:
        CRPConfig().with_overrides({k: tuple(x) if isinstance(x, list) else x for k, x in out.items()})
    except (ConfigError, ValueError, TypeError) as exc:
        r.bad(("config",), str(exc))
    return out


def _decisions(r: _Reader, v: Any) -> tuple[Decision, ...]:
    if not isinstance(v, list):
        r.bad(("decisions",), f"must be a list, not {type_name(v)}")
        return ()
    if len(v) > MAX_DECISIONS:
        r.bad(("decisions",), f"{len(v)} decisions, more than {MAX_DECISIONS}")
        return ()
    out: list[Decision] = []
    for i, item in enumerate(v):
        got = _decision(r, item, ("decisions", i))
        if got is not None:
            out.append(got)
    return tuple(out)


def _decision(r: _Reader, item: Any, path: DocPath) -> Decision | None:
    rec = r.obj(item, path)
    if not rec:
        return None
    unknown = [k for k in rec if k not in DECISION_FIELDS]
    for k in unknown:
        r.bad((*path, k), "unknown key")
    kind = rec.get("kind")
    if kind not in ALL_KINDS:
        r.bad((*path, "kind"), f"must be one of {', '.join(ALL_KINDS)}")
        return None
    fields: dict[str, Any] = {k: rec.get(k) for k in DECISION_FIELDS}
    fields["note"] = fields["note"] or ""
    fields["role"] = fields["role"] or "operator"
    fields["origin"] = fields["origin"] or "dashboard"
    try:
        return validate_decision(Decision(**fields), new=False)
    except DecisionError as exc:
        for f, m in exc.problems:
            r.bad((*path, f), m)
    except TypeError as exc:
        r.bad(path, str(exc))
    return None


def _params(r: _Reader, v: Any) -> dict[str, str]:
    got = r.obj(v, ("view", "params"))
    if len(got) > MAX_VIEW_PARAMS:
        r.bad(("view", "params"), f"{len(got)} parameters, more than {MAX_VIEW_PARAMS}")
        return {}
    out: dict[str, str] = {}
    for k, val in got.items():
        key = r.text(k, ("view", "params", k), limit=100, empty=False)
        text = r.text(val, ("view", "params", k), limit=MAX_PARAM_CHARS)
        if key:
            out[key] = text
    return out

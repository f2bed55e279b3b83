"""One experiment of the history (docs/decisions/history.md): what ran (a ``check``, a ``sweep``, a ``tune``,
a dashboard ``suite-run``), when, by whom, on which knowledge base and suite (names and fingerprints), with
which configuration (the keys that differ from the defaults) and what it measured.

Pure: the record, its checks and the fingerprints. Sizes are bounded (a note, a name, the number of metrics
and configuration keys, each JSON column) and text is inert: no control character but a note's line breaks
and tabs, so a name or a note printed by the CLI or shown by the dashboard cannot act on the terminal or the
page. :mod:`crp_core.history.store` keeps the records.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crp_core.analysis.suite import Suite
from crp_core.config import CRPConfig
from crp_core.decisions import TriageStoreError
from crp_core.io.scenario import scenario_to_dict
from crp_core.support.digest import Digest, content_digest

#: what ran: the CLI's check, sweep and tune, and a suite run of the dashboard's Suite tab
KINDS: tuple[str, ...] = ("check", "sweep", "tune", "suite-run")
#: where the record was made
ORIGINS: tuple[str, ...] = ("cli", "dashboard", "api")
MAX_NOTE_CHARS = 4000
MAX_NAME_CHARS = 300
MAX_BY_CHARS = 200
MAX_METRICS = 500
MAX_METRIC_KEY_CHARS = 120
MAX_CONFIG_KEYS = 500
#: each JSON column (config diff, metrics, summary), serialised
MAX_JSON_CHARS = 64_000


class ExperimentError(TriageStoreError, ValueError):
    """An experiment was refused; ``problems`` lists ``(field, message)`` for every problem found."""

    def __init__(self, problems: Iterable[tuple[str, str]], *, title: str = "experiment refused"):
        self.problems = tuple(problems)
        super().__init__(f"{title}: " + "; ".join(f"field '{f}': {m}" for f, m in self.problems))


@dataclass(frozen=True, eq=True)
class Experiment:
    """One experiment. ``id`` and ``recorded_at`` (UTC, ISO 8601) are set when it is recorded.

    ``config_diff``: flat configuration key -> (default value, value of the run), only keys that differ;
    ``metrics``: metric name (``recall.mean``, ``ndcg@10.mean``, ...) -> value (None: undefined);
    ``summary``: a small JSON object for a sweep or a tune (the best trial, its parameters), else None.
    """

    kind: str
    recorded_by: str
    metrics: Mapping[str, float | None] = field(default_factory=dict, hash=False)
    config_diff: Mapping[str, tuple[Any, Any]] = field(default_factory=dict, hash=False)
    kb_name: str | None = None
    kb_fingerprint: str | None = None
    suite_name: str | None = None
    suite_fingerprint: str | None = None
    summary: Mapping[str, Any] | None = field(default=None, hash=False)
    note: str = ""
    origin: str = "api"
    id: int | None = None
    recorded_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-ready dict (``config_diff`` values as ``[default, value]`` lists)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "recorded_at": self.recorded_at,
            "recorded_by": self.recorded_by,
            "origin": self.origin,
            "kb_name": self.kb_name,
            "kb_fingerprint": self.kb_fingerprint,
            "suite_name": self.suite_name,
            "suite_fingerprint": self.suite_fingerprint,
            "config_diff": {k: [a, b] for k, (a, b) in self.config_diff.items()},
            "metrics": dict(self.metrics),
            "summary": None if self.summary is None else dict(self.summary),
            "note": self.note,
        }


def _control(text: str, allowed: str = "") -> str | None:
    for i, ch in enumerate(text):
        if ch not in allowed and (ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ch in "\u2028\u2029"):
            return f"holds the control character U+{ord(ch):04X} at position {i}"
    return None


def _text(name: str, v: object, limit: int, *, optional: bool, allowed: str = "") -> list[tuple[str, str]]:
    if v is None and optional:
        return []
    if not isinstance(v, str):
        return [(name, f"must be text{' or None' if optional else ''}, got {type(v).__name__}")]
    said = []
    if len(v) > limit:
        said.append((name, f"{len(v)} characters, at most {limit}"))
    why = _control(v, allowed)
    if why is not None:
        said.append((name, why))
    return said


def _json_size(name: str, v: object) -> list[tuple[str, str]]:
    try:
        n = len(json.dumps(v, allow_nan=False, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        return [(name, f"not JSON data ({exc})")]
    return [(name, f"{n} characters of JSON, at most {MAX_JSON_CHARS}")] if n > MAX_JSON_CHARS else []


def _metrics_problems(metrics: object) -> list[tuple[str, str]]:
    if not isinstance(metrics, Mapping):
        return [("metrics", f"must be a mapping of name -> number, got {type(metrics).__name__}")]
    if len(metrics) > MAX_METRICS:
        return [("metrics", f"{len(metrics)} metrics, at most {MAX_METRICS}")]
    said: list[tuple[str, str]] = []
    for k, v in metrics.items():
        said += _text("metrics", k, MAX_METRIC_KEY_CHARS, optional=False)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            said.append(("metrics", f"{str(k)[:60]!r}: must be a number or None, got {type(v).__name__}"))
    return said[:20]


def _config_problems(diff: object) -> list[tuple[str, str]]:
    if not isinstance(diff, Mapping):
        return [("config_diff", f"must be a mapping of key -> (default, value), got {type(diff).__name__}")]
    if len(diff) > MAX_CONFIG_KEYS:
        return [("config_diff", f"{len(diff)} keys, at most {MAX_CONFIG_KEYS}")]
    said: list[tuple[str, str]] = []
    for k, pair in diff.items():
        said += _text("config_diff", k, MAX_METRIC_KEY_CHARS, optional=False)
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            said.append(("config_diff", f"{str(k)[:60]!r}: must be a (default, value) pair"))
    return said[:20] + (_json_size("config_diff", {str(k): list(v) for k, v in diff.items()}) if not said else [])


def validate_experiment(e: Experiment) -> Experiment:
    """``e`` checked (every problem listed in one :class:`ExperimentError`), its metrics as floats (a
    value that is not finite as None) and its text stripped of surrounding blanks."""
    said: list[tuple[str, str]] = []
    if e.kind not in KINDS:
        said.append(("kind", f"{str(e.kind)[:40]!r} is not one of {', '.join(KINDS)}"))
    if e.origin not in ORIGINS:
        said.append(("origin", f"{str(e.origin)[:40]!r} is not one of {', '.join(ORIGINS)}"))
    said += _text("recorded_by", e.recorded_by, MAX_BY_CHARS, optional=False)
    if isinstance(e.recorded_by, str) and not e.recorded_by.strip():
        said.append(("recorded_by", "empty: say who ran the experiment"))
    for name in ("kb_name", "kb_fingerprint", "suite_name", "suite_fingerprint"):
        said += _text(name, getattr(e, name), MAX_NAME_CHARS, optional=True)
    said += _text("note", e.note, MAX_NOTE_CHARS, optional=False, allowed="\n\t")
    said += _metrics_problems(e.metrics)
    said += _config_problems(e.config_diff)
    if e.summary is not None:
        if not isinstance(e.summary, Mapping):
            said.append(("summary", f"must be a mapping or None, got {type(e.summary).__name__}"))
        else:
            said += _json_size("summary", dict(e.summary))
    if not said:
        said += _json_size("metrics", {k: _finite(v) for k, v in e.metrics.items()})
    if said:
        raise ExperimentError(said)
    return Experiment(
        kind=e.kind,
        recorded_by=e.recorded_by.strip(),
        metrics={str(k): _finite(v) for k, v in e.metrics.items()},
        config_diff={str(k): (a, b) for k, (a, b) in e.config_diff.items()},
        kb_name=e.kb_name,
        kb_fingerprint=e.kb_fingerprint,
        suite_name=e.suite_name,
        suite_fingerprint=e.suite_fingerprint,
        summary=None if e.summary is None else dict(e.summary),
        note=e.note.strip(),
        origin=e.origin,
        id=e.id,
        recorded_at=e.recorded_at,
    )


def _finite(v: float | None) -> float | None:
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def config_diff(config: CRPConfig) -> dict[str, tuple[Any, Any]]:
    """The flat configuration keys ``config`` sets differently from the defaults: key -> (default, value)."""
    return CRPConfig().diff(config)


def suite_fingerprint(suite: Suite) -> str:
    """The digest of a suite's scenarios: each scenario's name and its content in canonical form (the
    scenario file's fields as the loader read them, JSON with sorted keys), in name order. The same files
    from a folder or uploaded give the same digest, whatever their order, layout or format (JSON or TOML);
    a changed query, label, ``now`` or configuration table gives another."""
    h = Digest()
    for s in sorted(suite.scenarios, key=lambda s: s.name):
        body = json.dumps(scenario_to_dict(s.scenario), sort_keys=True, ensure_ascii=False, default=str)
        h.update(s.name).update(b"\x00").update(content_digest(body)).update(b"\x01")
    return h.hex()


def kb_label(source: str) -> str | None:
    """The name a knowledge base is listed under: its file's base name (None for one built in memory)."""
    name = os.path.basename(source.rstrip("/")) if source else ""
    return name[:MAX_NAME_CHARS] or None


def suite_label(suite: Suite) -> str | None:
    """The name a suite is listed under: its folder's or file's base name, else its source."""
    return kb_label(suite.source)

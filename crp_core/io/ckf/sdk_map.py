"""Which CKF ``source_type`` an SDK fact gets (SPEC-027 §2.3 authority; docs/decisions/sdk-snapshots.md).

A crprotocol SDK snapshot says nothing about where a fact came from in SPEC-009 terms, so its facts
get a source type from a mapping: rules matched in order on the SDK's ``category`` (exact),
``source_window_id`` (a glob, ``fnmatch``) and ``extraction_stage`` (a number or a list), the first
match winning, else the default (``unverified`` unless the file or ``--source-type`` says otherwise).

The TOML file::

    default = "internal"            # optional
    [[rule]]
    category = "policy"
    source_type = "official_documentation"
    [[rule]]
    source_window_id = "chat-*"
    extraction_stage = [5, 6]
    source_type = "user_provided"
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crp_core.config import DEFAULT_SOURCE_TYPE, SOURCE_TYPES
from crp_core.errors import CKFError, Problem
from crp_core.support.files import read_regular_file
from crp_core.support.parsing import TOMLRefusal, parse_toml

_RULE_KEYS = ("category", "source_window_id", "extraction_stage", "source_type")
_MAX_MAP_BYTES = 1 << 20


@dataclass(frozen=True)
class MapRule:
    """One rule: every condition given must match; ``extraction_stage`` matches any stage listed."""

    source_type: str
    category: str | None = None
    source_window_id: str | None = None  # a glob: ``chat-*``
    extraction_stage: tuple[int, ...] | None = None

    def matches(self, category: str | None, window: str | None, stage: int | None) -> bool:
        if self.category is not None and category != self.category:
            return False
        if self.source_window_id is not None and (
            window is None or not fnmatch.fnmatchcase(window, self.source_window_id)
        ):
            return False
        return self.extraction_stage is None or stage in self.extraction_stage

    def describe(self) -> str:
        conds = [
            f"{k} = {v!r}"
            for k, v in (("category", self.category), ("source_window_id", self.source_window_id))
            if v is not None
        ]
        if self.extraction_stage is not None:
            conds.append(f"extraction_stage in {list(self.extraction_stage)}")
        return " and ".join(conds) or "any fact"


@dataclass(frozen=True)
class SourceTypeMap:
    """The rules, in order, and the source type of a fact no rule matches."""

    rules: tuple[MapRule, ...] = ()
    default: str = DEFAULT_SOURCE_TYPE

    def source_type_for(self, category: str | None, window: str | None, stage: int | None) -> tuple[str, int | None]:
        """(source type, 1-based number of the rule that gave it, None for the default)."""
        for i, rule in enumerate(self.rules, start=1):
            if rule.matches(category, window, stage):
                return rule.source_type, i
        return self.default, None

    def with_default(self, default: str | None) -> SourceTypeMap:
        """This map with another default (``--source-type``); None keeps it."""
        if default is None:
            return self
        _check_type(default, "--source-type")
        return SourceTypeMap(self.rules, default)


def _check_type(value: Any, where: str) -> None:
    if not isinstance(value, str) or value not in SOURCE_TYPES:
        raise CKFError(
            "source-type mapping refused",
            [Problem(0, where, f"unknown source type {value!r}; allowed: {', '.join(SOURCE_TYPES)}")],
        )


def source_map_from_dict(doc: Mapping[str, Any], where: str = "mapping") -> SourceTypeMap:
    """Check a parsed mapping (the TOML's tables); every problem names its key (``rule[2].source_type``)."""
    problems: list[Problem] = []
    for k in doc:
        if k not in ("default", "rule"):
            problems.append(Problem(0, str(k), "unknown key (expected default and [[rule]] tables)"))
    default = doc.get("default", DEFAULT_SOURCE_TYPE)
    if not isinstance(default, str) or default not in SOURCE_TYPES:
        problems.append(Problem(0, "default", f"unknown source type {default!r}; allowed: {', '.join(SOURCE_TYPES)}"))
        default = DEFAULT_SOURCE_TYPE
    raw_rules = doc.get("rule", [])
    rules: list[MapRule] = []
    if not isinstance(raw_rules, list):
        problems.append(Problem(0, "rule", "must be an array of tables ([[rule]])"))
        raw_rules = []
    for i, r in enumerate(raw_rules, start=1):
        rule = _rule(r, f"rule[{i}]", problems)
        if rule is not None:
            rules.append(rule)
    if problems:
        raise CKFError(f"source-type mapping {where} refused", problems)
    return SourceTypeMap(tuple(rules), default)


def _rule(r: Any, at: str, problems: list[Problem]) -> MapRule | None:
    """The rule table ``r`` (named ``at`` in its problems), or None when it has a problem."""
    if not isinstance(r, dict):
        problems.append(Problem(0, at, "must be a table"))
        return None
    bad = len(problems)
    for k in r:
        if k not in _RULE_KEYS:
            problems.append(Problem(0, f"{at}.{k}", f"unknown key; known: {', '.join(_RULE_KEYS)}"))
    st = r.get("source_type")
    if st is None:
        problems.append(Problem(0, f"{at}.source_type", "missing (required)"))
    elif not isinstance(st, str) or st not in SOURCE_TYPES:
        problems.append(
            Problem(0, f"{at}.source_type", f"unknown source type {st!r}; allowed: {', '.join(SOURCE_TYPES)}")
        )
    for k in ("category", "source_window_id"):
        if k in r and not isinstance(r[k], str):
            problems.append(Problem(0, f"{at}.{k}", f"must be a string, got {r[k]!r}"))
    stages: tuple[int, ...] | None = None
    if "extraction_stage" in r:
        v = r["extraction_stage"]
        vals = v if isinstance(v, list) else [v]
        if not vals or any(isinstance(x, bool) or not isinstance(x, int) for x in vals):
            problems.append(
                Problem(0, f"{at}.extraction_stage", f"must be a whole number or a non-empty list of them, got {v!r}")
            )
        else:
            stages = tuple(vals)
    if len(problems) > bad:
        return None
    return MapRule(
        source_type=str(st),
        category=r.get("category"),
        source_window_id=r.get("source_window_id"),
        extraction_stage=stages,
    )


def load_source_map(path: str | os.PathLike[str]) -> SourceTypeMap:
    """Read a mapping TOML file (:func:`source_map_from_dict`); a bad file is a :class:`CKFError`."""
    p = os.fspath(path)
    data = read_regular_file(p, max_bytes=_MAX_MAP_BYTES, what="source-type mapping", error=CKFError)
    return source_map_from_bytes(data, p)


def source_map_from_bytes(data: bytes, name: str) -> SourceTypeMap:
    """The mapping of a TOML file's bytes (a file read, an upload) named ``name``; a bad file is a
    :class:`CKFError` whose problem names the line when the TOML says it, or the key."""
    try:
        doc = parse_toml(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CKFError(f"source-type mapping {name} refused", [Problem(0, "toml", f"not valid TOML: {exc}")]) from None
    except TOMLRefusal as exc:
        raise CKFError(
            f"source-type mapping {name} refused", [Problem(exc.line, "toml", f"not valid TOML: {exc.reason}")]
        ) from None
    return source_map_from_dict(doc, name)

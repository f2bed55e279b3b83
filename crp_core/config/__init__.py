"""The one configuration object (docs/reference/config.md).

Every constant of docs/reference/ lives here. ``CRPConfig`` is a frozen dataclass (a plain parameter
object in the scikit-learn style): build it with keyword arguments, derive changed copies with
:meth:`CRPConfig.replace` / :meth:`CRPConfig.with_overrides`, load and save it as TOML. Each key
records where its default comes from (``ORIGIN``): ``"spec"`` (a CRP spec fixes it) or
``"project"`` (this project's choice, marked with ``*`` in the UI and docs).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import tomli_w

from crp_core.config.tables import (
    DEFAULT_IMPORTANCE,
    DEFAULT_SOURCE_AUTHORITY,
    DEFAULT_TTL_DAYS,
    PROJECT_TABLE_CELLS,
    SOURCE_TYPES,
    TABLE_KEYS,
    SourceTable,
)
from crp_core.config.tables import (
    DEFAULT_SOURCE_TYPE as DEFAULT_SOURCE_TYPE,
)
from crp_core.config.tables import (
    DEFAULT_STATUS as DEFAULT_STATUS,
)
from crp_core.config.tables import (
    NEVER_RETRIEVED as NEVER_RETRIEVED,
)

# the tables' names are part of this module's API (crp_core.config.SOURCE_TYPES, ...)
from crp_core.config.tables import RANGES as RANGES
from crp_core.config.tables import (
    SECONDS_PER_DAY as SECONDS_PER_DAY,
)
from crp_core.config.tables import (
    STATUSES as STATUSES,
)
from crp_core.errors import ConfigError
from crp_core.support.files import read_settings_text
from crp_core.support.parsing import MAX_TOML_DEPTH, TOMLRefusal, parse_toml
from crp_core.support.text import control_char

#: largest config TOML file read (a config is a few hundred bytes)
MAX_CONFIG_BYTES = 16 * 1024 * 1024
#: characters of a fact's content handed to the tokenizer (embedding and token counting): a tokenizer holds
#: hundreds of bytes per character of its input, and the model reads only its first 256 tokens
#: (docs/reference/pipeline.md §1); a longer content is cut here, with a load warning
TOKENIZED_CHARS_MAX = 100_000


#: what the known-conflict guard does (``known_conflict_action``)
KNOWN_CONFLICT_ACTIONS: tuple[str, ...] = ("off", "flag", "pull_winner", "drop_loser")
#: the keys that decide the corpus (its vectors), not a run over it: kept out of :data:`SCALAR_KEYS` and
#: :func:`all_keys` (the tunable keys that a sweep, a tune or the sidebar editor varies), written to a
#: TOML or a report only when set (docs/reference/config.md, "Corpus keys")
CORPUS_KEYS: tuple[str, ...] = ("embedding_model",)
#: longest ``embedding_model`` value (a model id, a folder path or a package name)
EMBEDDING_MODEL_MAX_CHARS = 4096


def _origin(kind: str, doc: str) -> dict[str, str]:
    return {"origin": kind, "doc": doc}


@dataclass(frozen=True)
class CRPConfig:
    """Every tunable constant of the pipeline. Defaults follow docs/reference/config.md."""

    # stage 1 - candidate gathering (SPEC-024 §2.6, SPEC-003 §5, SPEC-009 §3.2)
    cdr_min_relevance: float = field(default=0.55, metadata=_origin("spec", "relevance gate, SPEC-024 §2.6"))
    candidate_k: int = field(default=50, metadata=_origin("spec", "HNSW top-K per query, SPEC-003 §5.2"))
    hnsw_m: int = field(default=16, metadata=_origin("spec", "HNSW M, SPEC-009 §3.2"))
    hnsw_ef_construction: int = field(default=200, metadata=_origin("spec", "HNSW ef_construction, SPEC-009 §3.2"))
    hnsw_ef_search: int = field(default=100, metadata=_origin("spec", "HNSW ef_search, SPEC-009 §3.2"))
    # stage 2 - CDR (SPEC-024 §2, §5; SPEC-027 §3)
    min_novelty_floor: float = field(default=0.20, metadata=_origin("spec", "novelty floor, SPEC-024 §2.4"))
    coverage_penalty_cap: float = field(default=0.80, metadata=_origin("spec", "coverage penalty cap, SPEC-024 §2.2"))
    stale_floor: float = field(default=0.30, metadata=_origin("spec", "recency floor, SPEC-027 §3.2"))
    fresh_fraction: float = field(
        default=0.5, metadata=_origin("spec", "fresh threshold as a fraction of TTL, SPEC-027 §3.2")
    )
    ngram_n: int = field(default=6, metadata=_origin("spec", "blacklist n-gram size, SPEC-024 §5.1"))
    ngram_step_penalty: float = field(
        default=0.15, metadata=_origin("spec", "penalty per blacklisted n-gram, SPEC-024 §5.2")
    )
    ngram_penalty_cap: float = field(default=0.80, metadata=_origin("spec", "n-gram penalty cap, SPEC-024 §5.2"))
    # stage 3 - CDGR (SPEC-025, SPEC-009 §5.2)
    graph_retrieval: bool = field(default=True, metadata=_origin("spec", "graph retrieval on/off, SPEC-025 §6"))
    graph_k: int = field(
        default=20, metadata=_origin("spec", "neighbours per fact in the similarity graph, SPEC-009 §5.2")
    )
    graph_edge_min: float = field(
        default=0.60, metadata=_origin("spec", "minimum cosine for a graph edge, SPEC-009 §5.2")
    )
    max_hops: int = field(default=2, metadata=_origin("spec", "graph walk depth, SPEC-025 §2.3"))
    connector_budget: float = field(
        default=0.30, metadata=_origin("spec", "fraction of the fact budget for connectors, SPEC-025 §2.2")
    )
    min_connector_relevance: float = field(
        default=0.30, metadata=_origin("spec", "connector relevance floor, SPEC-025 §2.5")
    )
    envelope_fact_budget: int = field(
        default=20, metadata=_origin("project", "facts per envelope (anchors + connectors)")
    )
    # stage 6 - packing (SPEC-003 §7)
    token_budget: int = field(default=2048, metadata=_origin("project", "envelope token budget, SPEC-003 §7.2"))
    # stage 4 - contradiction resolution (SPEC-027 §2, SPEC-003 §6.6)
    contradiction_similarity: float = field(
        default=0.85,
        metadata=_origin("spec", "cosine above which a pair is checked for a value conflict, SPEC-027 §2.2"),
    )
    authority_tie_tolerance: float = field(
        default=1e-9, metadata=_origin("project", "|a1 - a2| at or below which authority is tied")
    )
    winner_margin_warn: float = field(
        default=0.05,
        metadata=_origin(
            "project",
            "relative authority margin (|a1 - a2| / the larger authority) below which a winner by authority is "
            "flagged as a close call, wherever a winner is shown",
        ),
    )
    near_conflict_margin: float = field(
        default=0.05,
        metadata=_origin(
            "project",
            "how far below contradiction_similarity a cosine may be for two packed facts whose texts value-conflict "
            "to be reported as a near conflict (not resolved: a hint that the threshold let a contradiction "
            "through); 0 reports none",
        ),
    )
    backfill: bool = field(
        default=True,
        metadata=_origin("project", "refill a suppressed fact's slot with the next non-conflicting candidate"),
    )
    detector_learned: bool = field(
        default=True,
        metadata=_origin(
            "project",
            "where the value-conflict rules find nothing, let the learned comparison accept a candidate conflict "
            "(marked 'learned'); false gives the rules' verdicts alone",
        ),
    )
    dedup_similarity: float = field(default=0.95, metadata=_origin("spec", "near-duplicate cosine, SPEC-003 §6.6"))
    # stage 5 - fan-out (SPEC-027 §1, SPEC-005 §9)
    fanin_dedup_similarity: float = field(
        default=0.92, metadata=_origin("spec", "cross-branch duplicate cosine, SPEC-005 §9.2")
    )
    branch_depth_weight: float = field(
        default=0.70,
        metadata=_origin("project", "depth weight of a branch's coverage additions (SPEC-024 §3.2 'adequate')"),
    )
    kmeans_seed: int = field(default=0, metadata=_origin("project", "k-means random_state"))
    kmeans_n_init: int = field(default=10, metadata=_origin("project", "k-means restarts"))
    # tables by source type (docs/reference/pipeline.md §2)
    ttl_days: SourceTable = field(
        default=DEFAULT_TTL_DAYS, metadata=_origin("spec", "default TTL in days by source type, SPEC-027 §3.5")
    )
    source_authority: SourceTable = field(
        default=DEFAULT_SOURCE_AUTHORITY,
        metadata=_origin("spec", "source authority weight by source type, SPEC-027 §2.3"),
    )
    importance: SourceTable = field(
        default=DEFAULT_IMPORTANCE, metadata=_origin("spec", "default importance by source type, SPEC-009 §4.4")
    )
    # beyond SPEC-027: conflicts known from the whole-CKF scan and operator decisions, checked against
    # the packed envelope (stage 4 only sees the selected facts)
    known_conflict_action: str = field(
        default="flag",
        metadata={
            **_origin(
                "project",
                "a packed fact that loses a known conflict to a fact outside the envelope: "
                "off (not checked), flag (warn), pull_winner (the winner takes its slot), "
                "drop_loser (it leaves the envelope)",
            ),
            "choices": KNOWN_CONFLICT_ACTIONS,
        },
    )
    # input limits (ours)
    ckf_max_bytes: int = field(
        default=200 * 1024 * 1024, metadata=_origin("project", "largest CKF file accepted, in bytes")
    )
    # the corpus (ours): the model whose vectors the facts and the scenario texts get (SPEC-009 §3)
    embedding_model: str = field(
        default="",
        metadata=_origin(
            "project",
            "the embedding model of the facts and the scenario texts: empty for the bundled all-MiniLM-L6-v2, "
            "a local sentence-transformers model folder, or the name of an installed package that ships one "
            "(docs/reference/ckf.md, embedding models); nothing is downloaded",
        ),
    )

    def __post_init__(self) -> None:
        _validate(self)

    # ---- derived values -------------------------------------------------------------------
    @property
    def anchor_budget(self) -> int:
        """Anchor seeds S = floor((1 - connector_budget) * envelope_fact_budget) (SPEC-025 §2.2).

        At least one anchor (ours: with no anchor there is nothing for connectors to bridge).
        """
        if not self.graph_retrieval:
            return self.envelope_fact_budget
        return max(1, int(math.floor((1.0 - self.connector_budget) * self.envelope_fact_budget + 1e-9)))

    # ---- copies ---------------------------------------------------------------------------
    def replace(self, **changes: Any) -> CRPConfig:
        return dataclasses.replace(self, **changes)

    def with_overrides(self, overrides: Mapping[str, Any]) -> CRPConfig:
        """Apply a mapping of keys (flat ``key`` or dotted ``table.source_type``, or nested tables)."""
        flat = _flatten(overrides)
        changes: dict[str, Any] = {}
        tables: dict[str, dict[str, Any]] = {}
        for key, value in flat.items():
            if "." in key:
                table, st = key.split(".", 1)
                if table not in TABLE_KEYS:
                    hint = _did_you_mean(table, TABLE_KEYS)
                    said = f"unknown configuration table {table!r} in key {key!r}"
                    raise ConfigError(f"{said}; {hint}" if hint else said)
                if st not in SOURCE_TYPES:
                    raise ConfigError(
                        f"unknown source type {st!r} in key {key!r}; expected one of {', '.join(SOURCE_TYPES)}"
                    )
                tables.setdefault(table, {})[st] = _coerce_table_value(table, key, value)
            else:
                changes[key] = _coerce(key, value)
        for table, cells in tables.items():
            changes[table] = getattr(self, table).replace(**cells)
        return dataclasses.replace(self, **changes)

    def with_set_args(self, assignments: Iterable[str]) -> CRPConfig:
        """Apply CLI ``--set key=value`` strings (values parsed as TOML scalars, else as strings); an item
        holding a control character is refused whole (a line break would end the TOML value there)."""
        parsed: dict[str, Any] = {}
        for item in assignments:
            if "=" not in item:
                raise ConfigError(f"--set expects key=value, got {item!r}")
            if (ctl := control_char(item)) is not None:  # TOML would end the value at a line break
                raise ConfigError(
                    f"--set {item!r}: holds the control character {ctl}; a setting is one key=value on one line"
                )
            key, raw = item.split("=", 1)
            key = key.strip()
            raw = raw.strip()
            try:
                value = parse_toml(f"v = {raw}")["v"]
            except TOMLRefusal as exc:
                if exc.kind == "number":
                    raise ConfigError(
                        f"configuration key {key!r}: a number of more than {sys.get_int_max_str_digits()} "
                        "digits; no setting takes one"
                    ) from None
                if exc.kind == "nesting":
                    raise ConfigError(
                        f"configuration key {key!r}: a value nested too deeply (more than {MAX_TOML_DEPTH} "
                        "levels of arrays and tables); no setting takes one"
                    ) from None
                value = raw  # not TOML: the text itself
            parsed[key] = value
        return self.with_overrides(parsed)

    # ---- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain dict; table values of None (no expiry) become the string ``"none"``; a corpus key
        (:data:`CORPUS_KEYS`) at its default is left out."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in CORPUS_KEYS and v == f.default:
                continue  # a corpus key is written only when set: a default configuration reads as before
            if isinstance(v, SourceTable):
                out[f.name] = {k: ("none" if x is None else x) for k, x in v.as_dict().items()}
            else:
                out[f.name] = v
        return out

    def to_toml(self) -> str:
        return tomli_w.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CRPConfig:
        return cls().with_overrides(data)

    @classmethod
    def from_toml(cls, text: str) -> CRPConfig:
        try:
            data = parse_toml(text)
        except TOMLRefusal as exc:
            if exc.kind == "number":
                raise ConfigError(
                    f"config TOML holds a number of more than {sys.get_int_max_str_digits()} digits; "
                    "no setting takes one"
                ) from None
            if exc.kind == "nesting":
                raise ConfigError(f"config TOML refused: {exc.reason}") from None
            raise ConfigError(f"config TOML is not valid TOML: {exc.reason}") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CRPConfig:
        """A TOML config file: only a regular file is read (a FIFO, socket, device or link loop is
        refused at once), at most :data:`MAX_CONFIG_BYTES` of it."""
        text = read_settings_text(path, max_bytes=MAX_CONFIG_BYTES, what="config")
        try:
            return cls.from_toml(text)
        except ConfigError as exc:
            raise ConfigError(f"config file {os.fspath(path)}: {exc}") from None

    def save(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_toml())

    def diff(self, other: CRPConfig) -> dict[str, tuple[Any, Any]]:
        """Flat keys whose values differ: key -> (self value, other value)."""
        a, b = _flatten(self.to_dict()), _flatten(other.to_dict())
        for key in CORPUS_KEYS:  # left out of to_dict at their default
            a.setdefault(key, getattr(self, key))
            b.setdefault(key, getattr(other, key))
        return {k: (a[k], b[k]) for k in a if a[k] != b[k]}


def layered_config(
    base: CRPConfig | str | os.PathLike[str] | None = None,
    scenario_config: Mapping[str, Any] | None = None,
    set_args: Iterable[str] = (),
    *,
    overrides: Mapping[str, Any] | None = None,
) -> CRPConfig:
    """The one configuration precedence, lowest first (docs/DECISIONS.md): the defaults, or ``base``
    (a config object or a TOML file: the CLI's ``--config``) < the scenario's ``config`` table <
    ``overrides`` (the dashboard's edits) < ``--set key=value`` arguments, in order."""
    if isinstance(base, CRPConfig):
        config = base
    else:
        config = CRPConfig.load(base) if base else CRPConfig()
    if scenario_config:
        try:
            config = config.with_overrides(dict(scenario_config))
        except ConfigError as exc:
            raise ConfigError(f"scenario config: {exc}") from None
    if overrides:
        config = config.with_overrides(dict(overrides))
    set_args = list(set_args or ())
    if set_args:
        config = config.with_set_args(set_args)
    return config


# ---- key metadata ---------------------------------------------------------------------------
SCALAR_KEYS: tuple[str, ...] = tuple(
    f.name for f in fields(CRPConfig) if f.name not in TABLE_KEYS and f.name not in CORPUS_KEYS
)
_FIELD_TYPES: dict[str, type] = {}
for _f in fields(CRPConfig):
    _FIELD_TYPES[_f.name] = {"float": float, "int": int, "bool": bool, "str": str}.get(str(_f.type), SourceTable)


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """``did you mean 'x'?`` naming the known names closest to a misspelt ``name`` (at most three); empty when
    none is close."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.75)
    return f"did you mean {' or '.join(repr(k) for k in close)}?" if close else ""


def unknown_key(key: str) -> ConfigError:
    """The error for a key that is no configuration key: the closest key names when the key looks misspelt
    (``contradiction_similarty`` -> ``contradiction_similarity``), else where the keys are listed."""
    hint = _did_you_mean(key.split(".", 1)[0], (f.name for f in fields(CRPConfig)))
    return ConfigError(f"unknown configuration key {key!r}; {hint or 'the keys: docs/reference/config.md'}")


def origin(key: str) -> str:
    """``"spec"`` or ``"project"`` for a flat key or a dotted table key."""
    if "." in key:
        table, st = key.split(".", 1)
        return "project" if st in PROJECT_TABLE_CELLS.get(table, frozenset()) else "spec"
    for f in fields(CRPConfig):
        if f.name == key:
            return f.metadata["origin"]
    raise unknown_key(key)


def choices(key: str) -> tuple[str, ...]:
    """The allowed values of a text key (empty for a number, flag or table key)."""
    for f in fields(CRPConfig):
        if f.name == key:
            return tuple(f.metadata.get("choices", ()))
    raise unknown_key(key)


def describe(key: str) -> str:
    for f in fields(CRPConfig):
        if f.name == key:
            return f.metadata["doc"]
    raise unknown_key(key)


def all_keys() -> list[str]:
    """Every flat key a run reads, tables expanded to dotted keys, in definition order (the corpus keys,
    :data:`CORPUS_KEYS`, are not among them)."""
    out: list[str] = []
    for f in fields(CRPConfig):
        if f.name in CORPUS_KEYS:
            continue
        if f.name in TABLE_KEYS:
            out.extend(f"{f.name}.{st}" for st in SOURCE_TYPES)
        else:
            out.append(f.name)
    return out


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and not prefix and key not in TABLE_KEYS:
            out[key] = dict(v)  # a table for a key that holds a value (even an empty one): refused by its check
        elif isinstance(v, Mapping):
            if prefix:
                raise ConfigError(f"configuration key {key!r} is nested too deeply")
            out.update(_flatten(v, key + "."))
        elif isinstance(v, SourceTable):
            out.update(_flatten(v.as_dict(), key + "."))
        else:
            out[key] = v
    return out


def _coerce(key: str, value: Any) -> Any:
    if key not in _FIELD_TYPES:
        raise unknown_key(key)
    if key in CORPUS_KEYS:
        return _as_text(key, value)
    want = _FIELD_TYPES[key]
    if want is SourceTable:
        raise ConfigError(f"configuration key {key!r} is a table; set its cells as {key}.<source_type>")
    if want is str:
        return _as_choice(key, value)
    if want is bool:
        return _as_bool(key, value)
    if isinstance(value, bool):
        raise ConfigError(f"configuration key {key!r} expects a number, got {show_value(value)}")
    if want is int:
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ConfigError(f"configuration key {key!r} expects a whole number, got {show_value(value)}")
    if isinstance(value, (int, float)):
        return _as_float(key, value)
    raise ConfigError(f"configuration key {key!r} expects a number, got {show_value(value)}")


def _as_choice(key: str, value: Any) -> str:
    """``value`` when it is one of the key's choices."""
    choices = next(f.metadata["choices"] for f in fields(CRPConfig) if f.name == key)
    if isinstance(value, str) and value in choices:
        return value
    raise ConfigError(f"configuration key {key!r} expects one of {', '.join(choices)}, got {show_value(value)}")


def _as_text(key: str, value: Any) -> str:
    """A free text value (``embedding_model``), surrounding blanks dropped: one line of at most
    :data:`EMBEDDING_MODEL_MAX_CHARS` characters."""
    if not isinstance(value, str):
        raise ConfigError(f"configuration key {key!r} expects text, got {show_value(value)}")
    text = value.strip()
    _check_text(key, text)
    return text


def _check_text(key: str, text: str) -> None:
    _check(
        len(text) <= EMBEDDING_MODEL_MAX_CHARS,
        f"configuration key {key!r} is longer than {EMBEDDING_MODEL_MAX_CHARS} characters",
    )
    ctl = control_char(text)
    _check(ctl is None, f"configuration key {key!r} holds the control character {ctl}; it is one line of text")


def _as_bool(key: str, value: Any) -> bool:
    """A boolean, or its words ``true`` / ``false`` / ``on`` / ``off``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "on", "off"):
        return value.lower() in ("true", "on")
    raise ConfigError(f"configuration key {key!r} expects true/false, got {show_value(value)}")


def _as_float(key: str, value: int | float) -> float:
    """``float(value)``; an integer too large for a float (``float(10**400)`` raises OverflowError, not
    ValueError) is refused as out of range, a ConfigError like every other bad value."""
    try:
        return float(value)
    except OverflowError:
        lo_hi = RANGES.get(key)
        bound = f"between {lo_hi[0]:g} and {lo_hi[1]:g}" if lo_hi else "a finite number"
        raise ConfigError(f"configuration key {key!r} must be {bound}, got {show_value(value)}") from None


def show_value(v: Any) -> str:
    """``repr(v)`` for a message, short: a huge integer is said by its number of digits (``repr`` of
    one beyond 4300 digits raises ValueError), a long text is cut."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 64:
        try:
            n = str(len(str(abs(v))))
        except ValueError:
            n = f"more than {sys.get_int_max_str_digits()}"
        return f"an integer of {n} digits"
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


def _coerce_table_value(table: str, key: str, value: Any) -> float | None:
    if table == "ttl_days" and (value is None or (isinstance(value, str) and value.lower() == "none")):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        hint = ' or "none"' if table == "ttl_days" else ""
        raise ConfigError(f"configuration key {key!r} expects a number{hint}, got {show_value(value)}")
    try:
        return float(value)
    except OverflowError:
        bound = 'a positive number of days or "none"' if table == "ttl_days" else "between 0 and 1"
        raise ConfigError(f"configuration key {key!r} must be {bound}, got {show_value(value)}") from None


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ConfigError(msg)


#: the configuration keys that take a whole number
INT_KEYS = frozenset(f.name for f in fields(CRPConfig) if str(f.type) == "int")


def valid_range(key: str) -> tuple[float, float] | None:
    """The inclusive valid range of a numeric key (None for flags, text and table keys)."""
    if key not in _FIELD_TYPES:
        raise unknown_key(key)
    return RANGES.get(key)


def _validate(c: CRPConfig) -> None:
    for name, (lo, hi) in RANGES.items():
        v = getattr(c, name)
        if name in INT_KEYS:
            if not (isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi):
                raise ConfigError(
                    f"configuration key {name!r} must be a whole number between {lo:g} and {hi:g}, got {show_value(v)}"
                )
        else:
            _check(
                isinstance(v, (int, float)) and not isinstance(v, bool) and (isinstance(v, int) or math.isfinite(v)),
                f"configuration key {name!r} must be a finite number, got {show_value(v)}",
            )
            _check(lo <= v <= hi, f"configuration key {name!r} must be between {lo:g} and {hi:g}, got {show_value(v)}")
    _check(c.fresh_fraction < 1.0, "configuration key 'fresh_fraction' must be below 1.0")
    _check(
        c.known_conflict_action in KNOWN_CONFLICT_ACTIONS,
        f"configuration key 'known_conflict_action' must be one of {', '.join(KNOWN_CONFLICT_ACTIONS)}, "
        f"got {c.known_conflict_action!r}",
    )
    _check(
        isinstance(c.embedding_model, str),
        f"configuration key 'embedding_model' expects text, got {show_value(c.embedding_model)}",
    )
    _check_text("embedding_model", c.embedding_model)
    for table in TABLE_KEYS:
        t = getattr(c, table)
        _check(isinstance(t, SourceTable), f"configuration key {table!r} must be a table by source type")
        for st, v in t.as_dict().items():
            if table == "ttl_days":
                _check(
                    v is None or (math.isfinite(v) and v > 0),
                    f"configuration key 'ttl_days.{st}' must be a positive number of days or \"none\", "
                    f"got {show_value(v)}",
                )
            else:
                _check(
                    v is not None and math.isfinite(v) and 0.0 <= v <= 1.0,
                    f"configuration key '{table}.{st}' must be between 0 and 1, got {show_value(v)}",
                )

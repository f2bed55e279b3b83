"""Recency factor (SPEC-027 §3.2, §3.5; docs/reference/pipeline.md §2).

``factor = 1.0`` while ``age <= fresh_fraction * ttl``; linear decay from 1.0 to ``stale_floor``
between the fresh threshold and the TTL; ``stale_floor`` at or past the TTL. ``status = STALE``
gives ``stale_floor`` whatever the age (it wins over every other rule); timeless facts
(``ttl = "none"``) and facts whose source type has no default TTL (``user_provided``) without an
explicit ttl get 1.0; an unknown age gives 1.0 and a warning; a future timestamp counts as age 0
and gives a warning.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeVar

import numpy as np

from crp_core.config import SECONDS_PER_DAY, SOURCE_TYPES, CRPConfig, SourceTable
from crp_core.io.timeparse import format_timestamp
from crp_core.model import Fact, KnowledgeBase
from crp_core.support.frozen import DeferredTuple, freeze_owned, frozen_array
from crp_core.support.memo import WeakMemo

_T = TypeVar("_T")

RecencyRule = Literal["fresh", "decay", "expired", "stale_status", "timeless", "user_provided", "unknown_age", "future"]


@dataclass(frozen=True, eq=False)
class RecencyTable:
    """Every fact's recency factor and how it was reached, aligned with ``idx`` (fact rows)."""

    idx: np.ndarray  # (c,) fact rows
    age_days: np.ndarray  # (c,) float; NaN = age unknown; negative ages are clamped to 0 (see rule "future")
    ttl_days: np.ndarray  # (c,) float; inf = no expiry
    ttl_source: Sequence[str]  # "explicit" | "default" | "timeless" (a DeferredTuple: built on first read)
    fresh_days: np.ndarray  # (c,) fresh_fraction * ttl (inf when no expiry)
    factor: np.ndarray  # (c,) recency_factor in [stale_floor, 1]
    rule: Sequence[RecencyRule]  # which branch of the formula applied (a DeferredTuple: built on first read)
    warnings: tuple[str, ...] = ()  # data-quality warnings (future timestamps, unknown ages), one line each


RULES: tuple[RecencyRule, ...] = (
    "fresh",
    "decay",
    "expired",
    "stale_status",
    "timeless",
    "user_provided",
    "unknown_age",
    "future",
)
_R = {name: i for i, name in enumerate(RULES)}
TTL_SOURCES: tuple[str, ...] = ("explicit", "default", "timeless")

#: the one definition of "expired" and "ageing" every count and view uses: a fact is **expired** when
#: its factor is at the floor because age >= TTL or its status is STALE, **ageing** while it decays
#: (stale_floor < factor < 1, fresh threshold < age < TTL); every other rule leaves it at 1.0 (fresh)
EXPIRED_RULES: frozenset[str] = frozenset({"expired", "stale_status"})
AGEING_RULES: frozenset[str] = frozenset({"decay"})
RecencyState = Literal["expired", "ageing", "fresh"]


def recency_state(rule: str) -> RecencyState:
    """``"expired"``, ``"ageing"`` or ``"fresh"`` for a SPEC-027 §3.2 rule name (:data:`RULES`)."""
    if rule in EXPIRED_RULES:
        return "expired"
    if rule in AGEING_RULES:
        return "ageing"
    return "fresh"


def recency_factor(
    age_days: float | None,
    ttl_days: float | None,
    *,
    status: str = "ACTIVE",
    stale_floor: float = 0.30,
    fresh_fraction: float = 0.5,
) -> float:
    """The SPEC-027 §3.2 formula for one fact.

    ``age_days`` None/NaN = unknown (1.0); negative = future timestamp (counted as 0);
    ``ttl_days`` None/inf = no expiry (1.0). ``status="STALE"`` gives ``stale_floor``.
    """
    if status == "STALE":
        return float(stale_floor)
    if ttl_days is None or math.isinf(ttl_days):
        return 1.0
    if age_days is None or math.isnan(age_days):
        return 1.0
    age = max(0.0, float(age_days))
    ttl = float(ttl_days)
    fresh = fresh_fraction * ttl
    if age <= fresh:
        return 1.0
    if age < ttl:
        return 1.0 - (1.0 - stale_floor) * (age - fresh) / (ttl - fresh)
    return float(stale_floor)


# ---- per-KB arrays, built once per knowledge base ----------------------------------------------
@dataclass(frozen=True, eq=False)
class _KBArrays:
    modified_s: np.ndarray  # (n,) float: POSIX seconds of effective modified_at, NaN = unknown
    ttl_kind: np.ndarray  # (n,) int8: 0 explicit, 1 default, 2 timeless
    ttl_explicit_s: np.ndarray  # (n,) float seconds (NaN unless explicit)
    source_code: np.ndarray  # (n,) int16 index into SOURCE_TYPES
    stale: np.ndarray  # (n,) bool status == STALE
    importance_explicit: np.ndarray  # (n,) float, NaN = default by source type


_KB_CACHE: WeakMemo[KnowledgeBase, None, _KBArrays] = WeakMemo(1)
_ST_CODE = {st: i for i, st in enumerate(SOURCE_TYPES)}
_KIND_CODE = {"explicit": 0, "default": 1, "timeless": 2}


def kb_arrays(kb: KnowledgeBase) -> _KBArrays:
    """Column arrays of the fields scoring needs, computed once per KnowledgeBase (cached weakly)."""
    return _KB_CACHE.get_or_build(kb, None, lambda: _kb_arrays(kb))


def _kb_arrays(kb: KnowledgeBase) -> _KBArrays:
    n = len(kb)
    mod = np.full(n, np.nan)
    kind = np.ones(n, dtype=np.int8)
    ttl = np.full(n, np.nan)
    code = np.zeros(n, dtype=np.int16)
    stale = np.zeros(n, dtype=bool)
    imp = np.full(n, np.nan)
    for i, f in enumerate(kb.facts):
        m = f.effective_modified_at
        if m is not None:
            if m.tzinfo is None:
                m = m.replace(tzinfo=UTC)
            mod[i] = m.timestamp()
        kind[i] = _KIND_CODE.get(f.ttl_kind, 1)
        if f.ttl_kind == "explicit" and f.ttl_seconds is not None:
            ttl[i] = f.ttl_seconds
        elif f.ttl_kind == "explicit":  # explicit ttl without a value: treat as timeless
            kind[i] = 2
        code[i] = _ST_CODE.get(f.source_type, _ST_CODE["unverified"])
        stale[i] = f.status == "STALE"
        if f.importance_weight is not None:
            imp[i] = f.importance_weight
    return _KBArrays(*(frozen_array(a) for a in (mod, kind, ttl, code, stale, imp)))


def default_ttl_days(config: CRPConfig) -> np.ndarray:
    """(len(SOURCE_TYPES),) default TTL in days, inf = no expiry (SPEC-027 §3.5)."""
    days = [config.ttl_days[st] for st in SOURCE_TYPES]
    return np.array([math.inf if d is None else float(d) for d in days])


# per-KB resolved columns, one per table of defaults (the config's ttl_days / importance tables): the
# per-call work is then one gather instead of a table build and nested ``where`` over the rows
_ResolvedKey = tuple[str, SourceTable]  # (column name, the config table it is resolved from)
_MAX_RESOLVED_PER_KB = 16
_RESOLVED: WeakMemo[KnowledgeBase, _ResolvedKey, np.ndarray] = WeakMemo(_MAX_RESOLVED_PER_KB)


#: per KB and column name: the config table object last resolved and its column, so a run that
#: passes the same table again finds the column by identity (no hashing of the table's cells)
_LAST_RESOLVED: WeakMemo[KnowledgeBase, str, tuple[SourceTable, np.ndarray]] = WeakMemo()


def _resolved(kb: KnowledgeBase, key: _ResolvedKey, build: Callable[[], np.ndarray]) -> np.ndarray:
    name, table = key
    hit = _LAST_RESOLVED.get(kb, name)
    if hit is not None and hit[0] is table:
        return hit[1]
    got = _RESOLVED.get_or_build(kb, key, lambda: frozen_array(build()))
    _LAST_RESOLVED.put(kb, name, (table, got))
    return got


def resolved_ttl_days(kb: KnowledgeBase, config: CRPConfig) -> np.ndarray:
    """(n,) TTL in days of every fact: explicit ttl, else the source type's default; inf = no expiry."""
    a = kb_arrays(kb)

    def build() -> np.ndarray:
        defaults = default_ttl_days(config)
        return np.where(
            a.ttl_kind == 0,
            a.ttl_explicit_s / SECONDS_PER_DAY,
            np.where(a.ttl_kind == 2, np.inf, defaults[a.source_code]),
        )

    return _resolved(kb, ("ttl", config.ttl_days), build)  # SourceTable: frozen, hashable by value


def resolved_importance(kb: KnowledgeBase, idx: np.ndarray, config: CRPConfig) -> np.ndarray:
    """Explicit importance_weight, else ``config.importance[source_type]`` (SPEC-009 §4.4)."""

    def build() -> np.ndarray:
        a = kb_arrays(kb)
        table = _numbers(config.importance)
        return np.where(np.isnan(a.importance_explicit), table[a.source_code], a.importance_explicit)

    column = _resolved(kb, ("importance", config.importance), build)
    return column[np.asarray(idx, dtype=np.int64)]


@dataclass(frozen=True, eq=False)
class FactAttributes:
    """The per-run attributes of every fact of a knowledge base at one ``now`` under one config:
    the recency factor and its parts (SPEC-027 §3.2), importance (SPEC-009 §4.4) and source authority
    (SPEC-027 §2.3). Computed once per (KB, now, config tables) and indexed by every stage.

    It keeps the KB's facts (for the warnings' wording), not the KB: the per-KB caches hold it under
    a weak reference to the KB, which a value pointing back at the KB would keep alive forever."""

    facts: tuple[Fact, ...]
    now: datetime
    age_days: np.ndarray  # (n,) NaN = unknown; future timestamps clamped to 0
    ttl_days: np.ndarray  # (n,) inf = no expiry
    ttl_kind: np.ndarray  # (n,) int8 code into TTL_SOURCES
    fresh_days: np.ndarray  # (n,)
    factor: np.ndarray  # (n,) the recency factor
    rule: np.ndarray  # (n,) int8 code into RULES
    importance: np.ndarray  # (n,) explicit importance_weight or the source type's default
    source_authority: np.ndarray  # (n,) the source type's authority weight
    unknown_age: np.ndarray  # (n,) bool
    future: np.ndarray  # (n,) bool
    any_warning: bool = True  # some fact has an unknown age or a future timestamp (else no row has a warning)

    def recency(self, idx: np.ndarray) -> RecencyTable:
        """The :class:`RecencyTable` of the facts ``idx`` (with their data-quality warnings)."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        warnings: list[str] = []
        facts = self.facts
        for r in idx[self.unknown_age[idx]].tolist() if self.any_warning else ():
            f = facts[r]
            warnings.append(
                f"fact {f.fact_id!r} (line {f.line}): no modified_at or ingested_at; age unknown, recency factor 1.0"
            )
        for r in idx[self.future[idx]].tolist() if self.any_warning else ():
            f = facts[r]
            warnings.append(
                f"fact {f.fact_id!r} (line {f.line}): modified_at "
                f"{format_timestamp(f.effective_modified_at)} is after now "
                f"{format_timestamp(self.now)}; age counted as 0"
            )
        kinds, rules = self.ttl_kind[idx], self.rule[idx]
        # the names are read by the report and the dashboard, never by a stage: built when first read
        return RecencyTable(
            idx=freeze_owned(idx.copy()),
            age_days=freeze_owned(self.age_days[idx]),
            ttl_days=freeze_owned(self.ttl_days[idx]),
            ttl_source=DeferredTuple(lambda: _names(TTL_SOURCES, kinds)),
            fresh_days=freeze_owned(self.fresh_days[idx]),
            factor=freeze_owned(self.factor[idx]),
            rule=DeferredTuple(lambda: _names(RULES, rules)),
            warnings=tuple(warnings),
        )


# (now, ttl_days, importance, source_authority, stale_floor, fresh_fraction)
_AttributesKey = tuple[float, SourceTable, SourceTable, SourceTable, float, float]
_MAX_ATTRIBUTES_PER_KB = 8
_ATTRIBUTES: WeakMemo[KnowledgeBase, _AttributesKey, FactAttributes] = WeakMemo(_MAX_ATTRIBUTES_PER_KB)


def fact_attributes(kb: KnowledgeBase, now: datetime, config: CRPConfig) -> FactAttributes:
    """The :class:`FactAttributes` of ``kb`` at ``now`` (cached per KB, now and the config keys they read)."""
    last = _LAST_ATTRIBUTES.get(kb, None)
    if last is not None and last[0] is now and last[1] is config:
        return last[2]
    return _LAST_ATTRIBUTES.put(kb, None, (now, config, _attributes(kb, now, config)))[2]


#: per KB: the (now, config) objects of the last call and its attributes: the pipeline and stage 3
#: ask with the very same objects, found by identity (no hashing of the config tables)
_LAST_ATTRIBUTES: WeakMemo[KnowledgeBase, None, tuple[datetime, CRPConfig, FactAttributes]] = WeakMemo(1)


def _attributes(kb: KnowledgeBase, now: datetime, config: CRPConfig) -> FactAttributes:
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    key: _AttributesKey = (
        now.timestamp(),
        config.ttl_days,
        config.importance,
        config.source_authority,
        config.stale_floor,
        config.fresh_fraction,
    )
    return _ATTRIBUTES.get_or_build(kb, key, lambda: _build_attributes(kb, now, config))


def _build_attributes(kb: KnowledgeBase, now: datetime, config: CRPConfig) -> FactAttributes:
    a = kb_arrays(kb)
    raw_age = (now.timestamp() - a.modified_s) / SECONDS_PER_DAY  # NaN when unknown
    unknown = np.isnan(raw_age)
    future = raw_age < 0  # NaN compares False
    age = np.where(future, 0.0, raw_age)

    kind, code = a.ttl_kind, a.source_code
    ttl = resolved_ttl_days(kb, config)
    no_expiry = np.isinf(ttl)
    fresh = config.fresh_fraction * ttl  # inf stays inf

    floor = config.stale_floor
    with np.errstate(invalid="ignore", divide="ignore"):
        decay = 1.0 - (1.0 - floor) * (age - fresh) / (ttl - fresh)
    rule = np.where(age <= fresh, _R["fresh"], np.where(age < ttl, _R["decay"], _R["expired"]))
    rule = np.where(future, _R["future"], rule)
    rule = np.where(unknown, _R["unknown_age"], rule)
    user_provided_default = no_expiry & (kind == 1) & (code == _ST_CODE["user_provided"])
    rule = np.where(no_expiry, np.where(user_provided_default, _R["user_provided"], _R["timeless"]), rule)
    rule = np.where(a.stale, _R["stale_status"], rule)

    # the rules are exclusive: decay -> the formula, stale status / expired -> the floor, else 1.0
    at_floor = (rule == _R["stale_status"]) | (rule == _R["expired"])
    factor = np.where(rule == _R["decay"], decay, np.where(at_floor, floor, 1.0))
    authority = _numbers(config.source_authority)[code]
    everyone = np.arange(len(kb), dtype=np.int64)
    return FactAttributes(
        facts=kb.facts,
        now=now,
        age_days=frozen_array(age),
        ttl_days=frozen_array(np.asarray(ttl, dtype=np.float64)),
        ttl_kind=frozen_array(np.asarray(kind, dtype=np.int8)),
        fresh_days=frozen_array(fresh),
        factor=frozen_array(factor.astype(np.float64)),
        rule=frozen_array(rule.astype(np.int8)),
        importance=frozen_array(resolved_importance(kb, everyone, config)),
        source_authority=frozen_array(authority),
        unknown_age=frozen_array(unknown),
        future=frozen_array(future),
        any_warning=bool(unknown.any() or future.any()),
    )


def compute_recency(kb: KnowledgeBase, idx: np.ndarray, now: datetime, config: CRPConfig) -> RecencyTable:
    """The recency factor of the facts ``idx`` at time ``now`` (docs/reference/pipeline.md §2): a view of the run's
    :func:`fact_attributes`."""
    return fact_attributes(kb, now, config).recency(idx)


def _numbers(table: SourceTable) -> np.ndarray:
    """(len(SOURCE_TYPES),) float64 cells of a table whose cells are all numbers (importance, source
    authority: CRPConfig validates them)."""
    return np.array([table[st] for st in SOURCE_TYPES], dtype=np.float64)


def _names(names: tuple[_T, ...], codes: np.ndarray) -> tuple[_T, ...]:
    """``tuple(names[c] for c in codes)`` without building a numpy string array."""
    return _pick(names, codes)


def _pick(items: tuple[_T, ...], at: np.ndarray) -> tuple[_T, ...]:
    """``tuple(items[i] for i in at)`` in one C-level call."""
    c = at.tolist()
    if not c:
        return ()
    got = operator.itemgetter(*c)(items)
    return got if len(c) > 1 else (got,)


def concat_recency(*tables: RecencyTable) -> RecencyTable:
    """Rows of several tables, each fact once (first occurrence kept)."""
    idx = np.concatenate([t.idx for t in tables]) if tables else np.zeros(0, dtype=np.int64)
    _, first = np.unique(idx, return_index=True)
    keep = np.sort(first)

    whole = keep.size == idx.size  # no fact twice: every row kept, in order

    def cat(name: str) -> np.ndarray:
        got = np.concatenate([getattr(t, name) for t in tables])
        return freeze_owned(got if whole else got[keep])

    def cat_t(columns: Iterable[Sequence[_T]]) -> DeferredTuple[_T]:
        parts = list(columns)

        def build() -> tuple[_T, ...]:
            allv = tuple(itertools.chain.from_iterable(parts))
            return allv if whole else _pick(allv, keep)

        return DeferredTuple(build)

    warnings = tuple(dict.fromkeys(w for t in tables for w in t.warnings))
    return RecencyTable(
        cat("idx"),
        cat("age_days"),
        cat("ttl_days"),
        cat_t(t.ttl_source for t in tables),
        cat("fresh_days"),
        cat("factor"),
        cat_t(t.rule for t in tables),
        warnings,
    )


def row_positions(table_idx: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions, found): for each row of ``idx`` a position of ``table_idx`` holding it (the first in
    table order when it is there twice) and whether it is there at all (the position of a row not found
    is some valid position, 0 for an empty table). An ascending table is its own stable argsort and is
    binary-searched directly."""
    table_idx = np.asarray(table_idx)
    idx = np.asarray(idx, dtype=np.int64)
    if table_idx.size == 0:
        return np.zeros(idx.size, dtype=np.intp), np.zeros(idx.size, dtype=bool)
    last = table_idx.size - 1
    if table_idx.size > 1 and bool((table_idx[1:] >= table_idx[:-1]).all()):
        pos = np.minimum(np.searchsorted(table_idx, idx), last)
    else:
        order = np.argsort(table_idx, kind="stable")
        pos = order[np.minimum(np.searchsorted(table_idx, idx, sorter=order), last)]
    return pos, table_idx[pos] == idx


def lookup(table_idx: np.ndarray, values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``values`` of ``table_idx`` re-aligned to ``idx`` (every row of idx must be present)."""
    table_idx = np.asarray(table_idx)
    idx = np.asarray(idx, dtype=np.int64)
    if table_idx.shape == idx.shape and (table_idx is idx or bool((table_idx == idx).all())):
        return np.asarray(values)
    pos, found = row_positions(table_idx, idx)
    if idx.size and not found.all():
        raise KeyError("recency table does not cover every requested fact")
    return np.asarray(values)[pos]

"""The search space of auto-tuning (docs/decisions/tuning.md, "The search space"): which keys a study
varies, over which range, on which grid and scale.

A :class:`Param` is one searched key: ``[low, high]`` on a grid of ``step`` (uniform), or, with ``log``,
sampled on a logarithmic scale (whole numbers when the step is whole, else three significant digits).
:func:`default_space` is the space a study searches when the engineer names none (the TTL of every
source type the corpus reads, the relevance gate, the contradiction similarity, the stale floor).
The engineer's own space comes from ``--param KEY=LO:HI[:log]`` items (:func:`param_from_flag`) and a
TOML file's ``[space]`` table (:func:`space_from_toml`); :func:`combine_space` merges them. Every
range is checked against the key's valid range (``crp_core.config.valid_range``; a TTL is positive,
a source authority or importance weight lies in [0, 1]) with an error naming the flag, or the file,
line and field.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crp_core.config import INT_KEYS, SOURCE_TYPES, TABLE_KEYS, CRPConfig, all_keys, show_value, valid_range
from crp_core.errors import ConfigError
from crp_core.support.files import read_settings_text
from crp_core.support.parsing import TOMLRefusal, parse_toml

if TYPE_CHECKING:
    from crp_core.corpus.prepared import Corpus

__all__ = [
    "Param",
    "TUNING_RANGES",
    "TTL_SCALE",
    "UNTUNABLE_KEYS",
    "default_space",
    "space_including",
    "config_value",
    "param_for",
    "tunable_keys",
    "param_from_flag",
    "space_from_toml",
    "read_space_file",
    "combine_space",
    "MAX_SPACE_BYTES",
]

#: largest ``--space`` file read (a space is a few lines)
MAX_SPACE_BYTES = 1024 * 1024
#: significant digits kept of a value sampled on a logarithmic scale with a fractional step
LOG_DIGITS = 3
#: most decimals of the grid of a range the engineer gives (finer bounds are narrowed onto it)
GRID_DECIMALS = 6


@dataclass(frozen=True)
class Param:
    """One searched key: uniform over [low, high] on a grid of ``step``, or (``log``) log-uniform, kept
    to whole numbers when ``step`` is whole and to :data:`LOG_DIGITS` significant digits otherwise."""

    key: str
    low: float
    high: float
    step: float
    log: bool = False

    @property
    def whole(self) -> bool:
        """Values are whole numbers (a step of 1 or more, whole, over whole bounds)."""
        return float(self.step).is_integer() and float(self.low).is_integer() and float(self.high).is_integer()

    def clamp(self, v: float) -> float:
        """``v`` moved into [low, high] onto the grid (the log scale: rounded as :meth:`round`)."""
        x = min(max(float(v), self.low), self.high)
        if self.log:
            return self.round(x)
        return self.round(self.low + round((x - self.low) / self.step) * self.step)

    @property
    def digits(self) -> int:
        """Decimals kept of a value of this grid: those of the step, of ``low`` and of ``high``."""
        return max(_step_digits(self.step), _decimals(self.low), _decimals(self.high))

    def round(self, x: float) -> float:
        """``x`` rounded: to :attr:`digits` decimals on a uniform grid (float noise of ``low + k * step``
        removed); on a log scale to a whole number (whole steps) or :data:`LOG_DIGITS` significant
        digits, kept within [low, high]."""
        if not self.log:
            return round(float(x), self.digits)
        y = float(round(float(x))) if self.whole else float(f"{float(x):.{LOG_DIGITS}g}")
        return min(max(y, self.low), self.high)

    def value(self, x: float) -> float | int:
        """``x`` as the configuration takes it: an ``int`` for a whole-number key (``candidate_k``)."""
        return int(round(x)) if self.key in INT_KEYS else float(x)

    def on_grid(self, v: float) -> bool:
        if self.log:
            return self.low - 1e-12 <= v <= self.high + 1e-12 and self.round(v) == float(v)
        k = (float(v) - self.low) / self.step
        return self.low - 1e-12 <= v <= self.high + 1e-12 and abs(k - round(k)) < 1e-6

    def including(self, v: float, bounds: tuple[float, float] | None = None) -> Param:
        """This parameter with its range widened to hold ``v`` (within ``bounds``, the key's valid range)
        and, when ``v`` is not on the grid, the grid moved through ``v``: so ``v`` (the base config's
        value) is a point of the search and trial 0 runs exactly there. Unchanged when it already is.
        A log scale keeps its grid-free range (widened only); ``v`` must then be positive."""
        v = float(v)
        if self.on_grid(v):
            return self
        if self.log:
            if v <= 0:
                raise ConfigError(
                    f"cannot search {self.key!r} on a log scale: the starting configuration's value {v:g} "
                    "is not positive"
                )
            return Param(self.key, min(self.low, v), max(self.high, v), self.step, True)
        lo, hi = min(self.low, v), max(self.high, v)
        if bounds is not None:
            lo, hi = max(lo, float(bounds[0])), min(hi, float(bounds[1]))
        n_lo = math.floor((v - lo) / self.step + 1e-9)
        n_hi = math.floor((hi - v) / self.step + 1e-9)
        digits = max(_step_digits(self.step), _decimals(v))
        low, high = round(v - n_lo * self.step, digits), round(v + n_hi * self.step, digits)
        if bounds is not None:  # rounding must not step outside the valid range
            low = low if low >= bounds[0] else round(low + self.step, digits)
            high = high if high <= bounds[1] else round(high - self.step, digits)
        return Param(self.key, low, high, self.step)

    def describe(self) -> str:
        """``KEY=LO:HI[:log]``: the ``--param`` item giving this parameter."""
        return f"{self.key}={self.low:g}:{self.high:g}" + (":log" if self.log else "")


def _step_digits(step: float) -> int:
    return max(0, -int(math.floor(math.log10(step)))) + 1 if step < 1 else 0


def _decimals(x: float) -> int:
    """Decimals of ``x``'s shortest repr (at most 12)."""
    text = repr(float(x))
    if "e" in text or "E" in text:
        return 12
    return min(12, len(text.split(".", 1)[1].rstrip("0"))) if "." in text else 0


#: sensible tuning ranges of the scalar keys (intersected with ``crp_core.config.valid_range``) and grid steps
TUNING_RANGES: Mapping[str, tuple[float, float, float]] = {
    "cdr_min_relevance": (0.35, 0.75, 0.005),
    "contradiction_similarity": (0.70, 0.95, 0.005),
    "stale_floor": (0.05, 0.60, 0.005),
}
#: TTL ranges: [default / TTL_SCALE[0], default * TTL_SCALE[1]] days, whole days
TTL_SCALE: tuple[float, float] = (4.0, 3.0)
#: keys a study cannot vary, with the reason (each needs work a trial does not redo)
UNTUNABLE_KEYS: Mapping[str, str] = {
    "hnsw_m": "it shapes the vector index, built once for the whole study",
    "hnsw_ef_construction": "it shapes the vector index, built once for the whole study",
    "ckf_max_bytes": "it applies when a CKF is loaded, not to a run",
}


def default_space(corpus: Corpus, config: CRPConfig, *, pinned: Sequence[str] = ()) -> tuple[Param, ...]:
    """The search space: the three scalar keys of :data:`TUNING_RANGES` and ``ttl_days.<type>`` for
    every source type with a TTL in ``config`` that a retrievable fact of the corpus takes by default
    (a fact with its own ``ttl`` does not read the table). Keys in ``pinned`` (set with ``--set``) are
    left out."""
    pinned_set = set(pinned)
    out: list[Param] = []
    used = {
        f.source_type for f, ok in zip(corpus.kb.facts, corpus.retrievable.tolist()) if ok and f.ttl_kind == "default"
    }
    for st in SOURCE_TYPES:
        key = f"ttl_days.{st}"
        days = config.ttl_days[st]
        if st in used and days is not None and key not in pinned_set:
            low = max(1.0, math.floor(days / TTL_SCALE[0]))
            out.append(Param(key, low, float(math.ceil(days * TTL_SCALE[1])), 1.0))
    for key, (lo, hi, step) in TUNING_RANGES.items():
        if key in pinned_set:
            continue
        vr = valid_range(key)
        if vr is not None:
            lo, hi = max(lo, float(vr[0])), min(hi, float(vr[1]))
        out.append(Param(key, lo, hi, step))
    return tuple(out)


def config_value(config: CRPConfig, key: str) -> float:
    """The number ``key`` (flat or ``table.source_type``) has in ``config``; a TTL of no expiry raises."""
    if "." in key:
        table, st = key.split(".", 1)
        v = getattr(config, table)[st]
        if v is None:
            raise ConfigError(
                f"cannot tune {key!r}: it has no value (no expiry) in the base config; give it one to start from "
                f"in a --config file ([{table}] {st} = 3650)"
            )
        return float(v)
    return float(getattr(config, key))


def _bounds(key: str) -> tuple[float, float] | None:
    """The valid range :meth:`Param.including` may widen into (None for a table cell)."""
    if "." in key:
        return None
    vr = valid_range(key)
    return None if vr is None else (float(vr[0]), float(vr[1]))


def space_including(params: Sequence[Param], config: CRPConfig) -> tuple[Param, ...]:
    """Each parameter widened (within the key's valid range) so that ``config``'s value is a point of its
    grid (:meth:`Param.including`): trial 0 then runs exactly at ``config``, even where it lies outside
    the sensible ranges of :data:`TUNING_RANGES` (a relevance gate of 0.9, a stale floor of 0.01)."""
    return tuple(p.including(config_value(config, p.key), _bounds(p.key)) for p in params)


# ---- the engineer's space: --param items and a [space] table ---------------------------------------------


def _tunable(key: str, where: str) -> None:
    """Raise unless ``key`` is a numeric configuration key a study can vary."""
    if key in UNTUNABLE_KEYS:
        raise ConfigError(f"{where}: cannot search {key!r}: {UNTUNABLE_KEYS[key]}")
    if key not in all_keys():
        raise ConfigError(
            f"{where}: unknown configuration key {key!r} (expected a numeric key of docs/reference/config.md "
            "or a table cell such as 'ttl_days.news')"
        )
    default = None if "." in key else getattr(CRPConfig(), key)
    if "." not in key and (isinstance(default, bool) or not isinstance(default, (int, float))):
        raise ConfigError(f"{where}: cannot search {key!r}: it is not a number")


def tunable_keys() -> tuple[str, ...]:
    """Every key a study can vary: the numeric configuration keys and table cells, in definition order,
    less :data:`UNTUNABLE_KEYS`."""
    base = CRPConfig()
    out = []
    for key in all_keys():
        if key in UNTUNABLE_KEYS:
            continue
        v = None if "." in key else getattr(base, key)
        if "." in key or (isinstance(v, (int, float)) and not isinstance(v, bool)):
            out.append(key)
    return tuple(out)


def _default_step(key: str, lo: float, hi: float) -> float:
    """The grid of a range the engineer gives: 1 for a whole-number key and for a TTL over whole days,
    else the power of ten at or below a hundredth of the range, fine enough for both bounds' decimals
    (at most :data:`GRID_DECIMALS`)."""
    if key in INT_KEYS or (key.startswith("ttl_days.") and lo.is_integer() and hi.is_integer()):
        return 1.0
    step = 10.0 ** math.floor(math.log10((hi - lo) / 100.0))
    places = min(GRID_DECIMALS, max(_decimals(lo), _decimals(hi)))
    return min(step, 10.0**-places) if places else step


def _snap(lo: float, hi: float, step: float) -> tuple[float, float]:
    """[lo, hi] narrowed to the grid points of ``step`` inside it (a bound with more decimals than the grid)."""
    d = _step_digits(step)
    return round(math.ceil(lo / step - 1e-9) * step, d), round(math.floor(hi / step + 1e-9) * step, d)


def param_for(key: str, lo: Any, hi: Any, log: Any = False, *, where: str = "") -> Param:
    """The :class:`Param` of ``key`` over [lo, hi] (log scale with ``log``), checked: a known numeric key a
    study can vary, finite numbers with ``lo < hi`` inside the key's valid range, whole numbers for a
    whole-number key, a positive range for a log scale. ``where`` names the origin in the error."""
    where = where or f"search space key {key!r}"
    _tunable(key, where)
    if not isinstance(log, bool):
        raise ConfigError(f"{where}: log must be true or false, got {show_value(log)}")
    nums = []
    for name, v in (("lo", lo), ("hi", hi)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ConfigError(f"{where}: {name} must be a number, got {show_value(v)}")
        try:
            f = float(v)
        except OverflowError:
            raise ConfigError(f"{where}: {name} is too large, got {show_value(v)}") from None
        if not math.isfinite(f):
            raise ConfigError(f"{where}: {name} must be a finite number, got {show_value(v)}")
        if key in INT_KEYS and not f.is_integer():
            raise ConfigError(f"{where}: {key!r} takes whole numbers, {name} is {f:g}")
        nums.append(f)
    low, high = nums
    if not low < high:
        raise ConfigError(f"{where}: lo must be below hi, got {low:g}:{high:g} (pin one value with --set)")
    if log and low <= 0:
        raise ConfigError(f"{where}: a log scale needs a positive range, got lo {low:g}")
    for name, v in (("lo", low), ("hi", high)):
        try:
            CRPConfig().with_overrides({key: v})
        except ConfigError as exc:
            raise ConfigError(f"{where}: {name} {v:g} is not a valid value: {exc}") from None
    step = _default_step(key, low, high)
    if step < 1:
        low, high = _snap(low, high, step)
    return Param(key, low, high, step, log)


def param_from_flag(item: str) -> Param:
    """The :class:`Param` of one ``--param KEY=LO:HI[:log]`` item."""
    where = f"--param {item!r}"
    if "=" not in item:
        raise ConfigError(f"{where}: expected KEY=LO:HI or KEY=LO:HI:log")
    key, rest = (s.strip() for s in item.split("=", 1))
    parts = [s.strip() for s in rest.split(":")]
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "log"):
        raise ConfigError(f"{where}: expected KEY=LO:HI or KEY=LO:HI:log")
    nums: list[float] = []
    for name, text in zip(("lo", "hi"), parts):
        try:
            nums.append(float(text))
        except ValueError:
            raise ConfigError(f"{where}: {name} must be a number, got {text!r}") from None
    return param_for(key, nums[0], nums[1], len(parts) == 3, where=where)


_FIELDS = ("lo", "hi", "log")


def _entries(space: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(key, spec)`` of a ``[space]`` table; a table cell may be written ``"ttl_days.news" = {...}`` or
    nested (``ttl_days.news = {...}``, ``[space.ttl_days]``)."""
    out: list[tuple[str, Any]] = []
    for k, v in space.items():
        if k in TABLE_KEYS and isinstance(v, Mapping) and not (set(v) & set(_FIELDS)):
            out.extend((f"{k}.{st}", spec) for st, spec in v.items())
        else:
            out.append((k, v))
    return out


def _line_of(text: str, key: str) -> int:
    """The 1-based line of ``text`` that gives ``key`` (its whole quoted name, or its last part), 0 if none."""
    last = key.rsplit(".", 1)[-1]
    pats = [re.compile(r'^\s*["\']' + re.escape(key) + r'["\']\s*='), re.compile(r"^\s*" + re.escape(key) + r"\s*=")]
    pats.append(re.compile(r"^\s*" + re.escape(last) + r"\s*="))
    lines = text.splitlines()
    for pat in pats:
        for i, line in enumerate(lines, 1):
            if pat.search(line):
                return i
    return 0


def space_from_toml(text: str, source: str = "space file") -> tuple[Param, ...]:
    """The parameters of the ``[space]`` table of a TOML document: ``KEY = {lo = .., hi = .., log = ..}``
    (``log`` optional, false by default), each checked as :func:`param_for`; errors name ``source``,
    the line and the field."""
    try:
        doc = parse_toml(text)
    except TOMLRefusal as exc:
        raise ConfigError(f"{source} line {exc.line}: not valid TOML: {exc.reason}") from None
    space = doc.get("space")
    if not isinstance(space, Mapping):
        raise ConfigError(f"{source}: no [space] table (write KEY = {{lo = .., hi = .., log = true}} under [space])")
    out: list[Param] = []
    for key, spec in _entries(space):
        where = f"{source} line {_line_of(text, key)}, space.{key}"
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{where}: expected a table {{lo = .., hi = .., log = ..}}, got {show_value(spec)}")
        extra = sorted(set(spec) - set(_FIELDS))
        if extra:
            raise ConfigError(f"{where}: unknown field {extra[0]!r} (expected lo, hi and optionally log)")
        for name in ("lo", "hi"):
            if name not in spec:
                raise ConfigError(f"{where}: {name} is missing")
        out.append(param_for(key, spec["lo"], spec["hi"], spec.get("log", False), where=where))
    if not out:
        raise ConfigError(f"{source}: the [space] table names no key")
    return tuple(out)


def read_space_file(path: str | os.PathLike[str]) -> tuple[Param, ...]:
    """:func:`space_from_toml` of a file (a regular file of at most :data:`MAX_SPACE_BYTES`, UTF-8)."""
    text = read_settings_text(path, max_bytes=MAX_SPACE_BYTES, what="space")
    return space_from_toml(text, f"space file {os.fspath(path)}")


def combine_space(
    flags: Sequence[Param] = (), file_params: Sequence[Param] = (), *, pinned: Sequence[str] = ()
) -> tuple[Param, ...]:
    """The engineer's space: the ``[space]`` table's keys in file order, each replaced by a ``--param``
    of the same key, then the other ``--param`` keys in flag order. A key given twice by ``--param``, or
    both searched and pinned with ``--set``, is refused."""
    seen: set[str] = set()
    for p in flags:
        if p.key in seen:
            raise ConfigError(f"--param: {p.key!r} is given more than once")
        seen.add(p.key)
    by_flag = {p.key: p for p in flags}
    out = [by_flag.get(p.key, p) for p in file_params]
    out.extend(p for p in flags if p.key not in {q.key for q in file_params})
    for p in out:
        if p.key in set(pinned):
            raise ConfigError(f"{p.key!r} is both searched (--param / --space) and pinned with --set; drop one")
    return tuple(out)

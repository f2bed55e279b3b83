"""Suite sweeps over a grid: one key or two keys, every point a whole-suite run (docs/reference/cli.md#sweep).

**Round grids.** ``KEY=LO:HI:N`` asks for about ``N`` values between ``LO`` and ``HI``. The grid is the
multiples of one round step (1, 2 or 5 times a power of ten) inside [LO, HI], the step chosen so that
the number of multiples is closest to ``N`` (a tie goes to the larger step), plus the key's current value
(inserted in order, even outside [LO, HI]): "N is a target, the grid has about N round points plus the
current value". Integer keys (and ``fanout_width``) use steps of at least 1, so every value is a whole
number. A flag (bool key) gives ``false, true`` whatever the
range; a text key (``known_conflict_action``) is refused. For ``now`` the steps are calendar units
(:data:`TIME_STEPS`: hours, days, Monday weeks, months, 1 / 2 / 5 x 10^k years), the points their aligned
boundaries in UTC.

**Points.** :func:`sweep_grid` runs the suite once at the configuration as given (the baseline: every
scenario at its own configuration table, ``now`` and ``fanout_width``) and once per grid point. A config
key's value is applied to every scenario's resolved config (above its config table and ``set_args``, as
:func:`crp_core.analysis.evaluate.sweep_suite` does); ``now`` replaces every scenario's now and
``fanout_width`` every scenario's fan-out width (the scenario fields of
:func:`crp_core.analysis.sweep.point_inputs`). The corpus (vectors, HNSW index, graph cache: one graph
per value of a graph key) and the scenario vectors are prepared once; a point with other scenario
fields runs on a sub-prepared suite sharing those vectors, whose reference envelopes (``overlap``) are
measured at the same scenario fields. Each point keeps ``SuiteMetrics.flat()``: every metric of
:data:`crp_core.analysis.metrics.METRICS`, mean and worst (and total for counts).
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from crp_core.analysis.evaluate import KnownMode, PreparedSuite, Reference, SuiteRun, run_suite
from crp_core.analysis.suite import Suite, SuiteScenario
from crp_core.analysis.sweep import FANOUT_WIDTH, NOW, SCENARIO_KEYS, check_key, current_value, is_integer_key
from crp_core.config import CRPConfig
from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.corpus.embedding import Embedder
    from crp_core.model import KnowledgeBase

__all__ = [
    "AxisSpec",
    "GridAxis",
    "GridPoint",
    "SuiteGrid",
    "parse_axis",
    "round_grid",
    "time_grid",
    "grid_axis",
    "suite_current",
    "sweep_grid",
    "grid_report",
    "grid_rows",
    "TIME_STEPS",
    "MAX_AXIS_TARGET",
    "MAX_GRID_POINTS",
]

#: the largest N of one axis, and the most points of a whole grid (a bound on the work asked for)
MAX_AXIS_TARGET = 200
MAX_GRID_POINTS = 10_000
#: round steps: these mantissas times a power of ten
_MANTISSAS = (1, 2, 5)
#: the steps of a ``now`` axis, finest first: (unit, count)
TIME_STEPS: tuple[tuple[str, int], ...] = (
    ("hour", 1),
    ("hour", 2),
    ("hour", 6),
    ("hour", 12),
    ("day", 1),
    ("day", 2),
    ("week", 1),
    ("week", 2),
    ("month", 1),
    ("month", 2),
    ("month", 3),
    ("month", 6),
    *(("year", m * 10**e) for e in range(4) for m in (1, 2, 5)),
)
_EPOCH_MONDAY = datetime(1970, 1, 5, tzinfo=UTC)
_SECONDS = {"hour": 3600, "day": 86400, "week": 7 * 86400}

#: ``progress(done, total, label)`` after each suite run (the baseline is run 1)
GridProgress = Callable[[int, int, str], None]


# ---------------------------------------------------------------- the round-grid rule


def _step_digits(exponent: int) -> int:
    return max(0, -exponent)


def _multiples(lo: float, hi: float, mantissa: int, exponent: int) -> tuple[int, int]:
    """(first, last) k with ``k * mantissa * 10**exponent`` in [lo, hi] (a little float slack)."""
    step = mantissa * 10.0**exponent
    eps = 1e-9
    return math.ceil(lo / step - eps), math.floor(hi / step + eps)


def round_grid(low: float, high: float, target: int, *, integer: bool = False) -> tuple[float, ...]:
    """The multiples of one round step (1, 2 or 5 x 10^k) in [low, high] whose count is closest to ``target``
    (a tie: the larger step); ``integer``: steps of at least 1 and whole numbers. ``low == high``: that value.
    Raises :class:`ConfigError` when no round value lies in the range (a whole number between 1.2 and 1.8)."""
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ConfigError(f"the range must be finite, got {low:g}:{high:g}")
    if low > high:
        raise ConfigError(f"LO must not exceed HI, got {low:g}:{high:g}")
    if low == high:
        if integer and not low.is_integer():
            raise ConfigError(f"expects whole numbers, got {low:g}")
        return (float(low),)
    if target < 2:
        raise ConfigError("N must be at least 2 (give LO = HI for one value)")
    span = high - low
    if not math.isfinite(span):
        raise ConfigError(f"the range {low:g}:{high:g} is too wide")
    top = math.ceil(math.log10(span)) + 1
    bottom = max(math.floor(math.log10(span / (target * 10))) - 1, 0 if integer else -12)
    best: tuple[int, int, int, int, int] | None = None  # (distance, -step order, mantissa, exponent, count)
    for exponent in range(bottom, top + 1):
        for order, mantissa in enumerate(_MANTISSAS):
            first, last = _multiples(low, high, mantissa, exponent)
            count = last - first + 1
            if count < 1:
                continue
            rank = (abs(count - target), -(exponent * 3 + order))
            if best is None or rank < best[:2]:
                best = (rank[0], rank[1], mantissa, exponent, count)
    if best is None:
        raise ConfigError(f"no {'whole' if integer else 'round'} number between {low:g} and {high:g}")
    _, _, mantissa, exponent, _ = best
    first, last = _multiples(low, high, mantissa, exponent)
    digits = _step_digits(exponent)
    return tuple(round(k * mantissa * 10.0**exponent, digits) for k in range(first, last + 1))


def _month_index(dt: datetime) -> int:
    return dt.year * 12 + dt.month - 1


def _month_start(index: int) -> datetime:
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def _time_points(low: datetime, high: datetime, unit: str, count: int, limit: int) -> list[datetime] | None:
    """The boundaries of ``count`` ``unit``s in [low, high]; None when there are more than ``limit``."""
    if unit in _SECONDS:
        step = _SECONDS[unit] * count
        base = _EPOCH_MONDAY if unit == "week" else datetime(1970, 1, 1, tzinfo=UTC)
        k = math.ceil((low - base).total_seconds() / step)
        last = math.floor((high - base).total_seconds() / step)
        if last - k + 1 > limit:
            return None
        return [base + timedelta(seconds=step * i) for i in range(k, last + 1)]
    months = count * (12 if unit == "year" else 1)
    first = _month_index(low)
    first += -first % months
    last = _month_index(high)
    if (last - first) // months + 1 > limit:
        return None
    out = [_month_start(m) for m in range(first, last + 1, months) if 1 <= m // 12 <= 9999]
    return [dt for dt in out if low <= dt <= high]


def time_grid(low: datetime, high: datetime, target: int) -> tuple[datetime, ...]:
    """The aligned boundaries of one calendar step of :data:`TIME_STEPS` in [low, high] (UTC), the step
    whose count is closest to ``target`` (a tie: the larger step). ``low == high``: that instant."""
    low, high = _utc(low), _utc(high)
    if low > high:
        raise ConfigError(f"LO must not be after HI, got {low.isoformat()}:{high.isoformat()}")
    if low == high:
        return (low,)
    if target < 2:
        raise ConfigError("N must be at least 2 (give LO = HI for one value)")
    best: tuple[int, int, list[datetime]] | None = None
    for order, (unit, count) in enumerate(TIME_STEPS):
        pts = _time_points(low, high, unit, count, 4 * target + 4)
        if not pts:  # none in the range, or far more than asked for
            continue
        rank = (abs(len(pts) - target), -order)
        if best is None or rank < best[:2]:
            best = (rank[0], rank[1], pts)
    if best is None:
        raise ConfigError(f"no whole hour between {low.isoformat()} and {high.isoformat()}")
    return tuple(best[2])


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


# ---------------------------------------------------------------- axes


@dataclass(frozen=True)
class AxisSpec:
    """``KEY=LO:HI:N`` parsed: ``low``/``high`` numbers (datetimes for ``now``, bools for a flag)."""

    key: str
    low: Any
    high: Any
    target: int


@dataclass(frozen=True)
class GridAxis:
    """One swept key: its values in order (the current value among them when it has one)."""

    key: str
    values: tuple[Any, ...]
    current: Any  # the suite's current value (None: none shared by every scenario, or no TTL)

    @property
    def current_index(self) -> int | None:
        for i, v in enumerate(self.values):
            if v == self.current:
                return i
        return None


def _kind(key: str) -> str:
    """ "time", "bool", "text", "int" or "float" for a sweepable key."""
    if key == NOW:
        return "time"
    if key == FANOUT_WIDTH or is_integer_key(key):
        return "int"
    default = current_value(_EMPTY_SCENARIO, CRPConfig(), key)
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, str):
        return "text"
    return "float"


def _bool_word(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    raise ConfigError(f"expects true or false, got {text!r}")


def _split_range(key: str, body: str) -> tuple[str, str, str]:
    """``LO:HI:N`` -> (LO, HI, N); for ``now`` the one split of ``LO:HI`` where both sides are timestamps."""
    head, sep, n = body.rpartition(":")
    if not sep:
        raise ConfigError("expects KEY=LO:HI:N")
    if key != NOW:
        lo, sep, hi = head.partition(":")
        if not sep or ":" in hi:
            raise ConfigError("expects KEY=LO:HI:N")
        return lo, hi, n
    from crp_core.io.timeparse import parse_timestamp

    splits = []
    for i, ch in enumerate(head):
        if ch != ":":
            continue
        try:
            parse_timestamp(head[:i])
            parse_timestamp(head[i + 1 :])
        except ValueError:
            continue
        splits.append((head[:i], head[i + 1 :]))
    if len(splits) != 1:
        raise ConfigError("expects now=LO:HI:N with two ISO 8601 dates or times (e.g. now=2026-01-01:2027-12-31:12)")
    return splits[0][0], splits[0][1], n


def parse_axis(text: str) -> AxisSpec:
    """``KEY=LO:HI:N`` -> :class:`AxisSpec`; a :class:`ConfigError` says what is wrong (the caller names the flag)."""
    key, sep, body = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError("expects KEY=LO:HI:N")
    check_key(key)
    kind = _kind(key)
    if kind == "text":
        raise ConfigError(f"{key!r} takes a word, not a number: set it with --set instead of sweeping a range")
    lo_text, hi_text, n_text = _split_range(key, body.strip())
    try:
        target = int(n_text.strip(), 10)
    except ValueError:
        raise ConfigError(f"N must be a whole number, got {n_text!r}") from None
    if not 1 <= target <= MAX_AXIS_TARGET:
        raise ConfigError(f"N must be between 1 and {MAX_AXIS_TARGET}, got {target}")
    lo: Any
    hi: Any
    if kind == "time":
        from crp_core.io.timeparse import parse_timestamp

        lo, hi = parse_timestamp(lo_text.strip()), parse_timestamp(hi_text.strip())
    elif kind == "bool":
        lo, hi = _bool_word(lo_text), _bool_word(hi_text)
    else:
        try:
            lo, hi = float(lo_text), float(hi_text)
        except ValueError:
            raise ConfigError(f"LO and HI must be numbers, got {lo_text!r} and {hi_text!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ConfigError(f"LO and HI must be finite numbers, got {lo_text!r} and {hi_text!r}")
    return AxisSpec(key, lo, hi, target)


def grid_axis(spec: AxisSpec, current: Any) -> GridAxis:
    """The round grid of ``spec`` with ``current`` inserted in order (None: nothing inserted)."""
    kind = _kind(spec.key)
    values: list[Any]
    if kind == "bool":
        values = [False, True]
    elif kind == "time":
        values = list(time_grid(spec.low, spec.high, spec.target))
    else:
        pts = round_grid(spec.low, spec.high, spec.target, integer=kind == "int")
        values = [int(v) for v in pts] if kind == "int" else list(pts)
    if current is not None and current not in values:
        values.append(current)
        values.sort()
    return GridAxis(spec.key, tuple(values), current)


def suite_current(suite: Suite, config: CRPConfig, key: str, nows: Sequence[datetime] = ()) -> Any:
    """The current value of ``key`` for the suite: the base config's value for a config key; for a
    scenario field, the value every scenario shares (``nows``: the prepared suite's resolved nows),
    None when they differ."""
    check_key(key)
    if key not in SCENARIO_KEYS:
        return current_value(_EMPTY_SCENARIO, config, key)
    if key == NOW:
        got = set(nows)
    else:
        got = {current_value(s.scenario, config, key) for s in suite}
    return next(iter(got)) if len(got) == 1 else None


# ---------------------------------------------------------------- running the grid


@dataclass(frozen=True, eq=False)
class GridPoint:
    """One grid point: the value of each axis (axis order) and the suite run there."""

    values: tuple[Any, ...]
    run: SuiteRun

    @property
    def metrics(self) -> dict[str, float | None]:
        return self.run.metrics.flat()


@dataclass(frozen=True, eq=False)
class SuiteGrid:
    """A 1-D or 2-D suite sweep: the axes, the baseline run, the points (first axis outermost)."""

    axes: tuple[GridAxis, ...]
    baseline: SuiteRun
    points: tuple[GridPoint, ...]
    total_ms: float
    runs: int = field(default=0)  # suite runs: the baseline and one per point

    @property
    def metric_keys(self) -> tuple[str, ...]:
        """Every suite metric key of a point (``SuiteMetrics.flat()``: ``"recall.mean"`` ...)."""
        return tuple(self.baseline.metrics.flat())

    def point(self, *values: Any) -> GridPoint:
        for p in self.points:
            if p.values == tuple(values):
                return p
        raise KeyError(values)

    def matrix(self, metric: str) -> list[list[float | None]]:
        """``metric`` at every point: one row per value of the first axis, one column per value of the
        second (a 1-D grid: one row)."""
        if metric not in self.metric_keys:
            raise KeyError(f"unknown suite metric {metric!r}; expected one of {', '.join(self.metric_keys)}")
        if len(self.axes) == 1:
            return [[p.metrics[metric] for p in self.points]]
        cols = len(self.axes[1].values)
        flat = [p.metrics[metric] for p in self.points]
        return [flat[i : i + cols] for i in range(0, len(flat), cols)]


def _variant(prepared: PreparedSuite, config: CRPConfig, fields: Mapping[str, Any]) -> PreparedSuite:
    """The prepared suite with every scenario's ``now`` / ``fanout_width`` replaced (vectors shared)."""
    from crp_core.analysis.sweep import point_inputs

    items = []
    for item in prepared.suite:
        s = item.scenario
        for key, value in fields.items():
            s, _ = point_inputs(s, config, key, value)
        items.append(SuiteScenario(item.name, item.path, s, item.locate))
    nows = prepared.nows if NOW not in fields else tuple(fields[NOW] for _ in prepared.suite)
    suite = Suite(tuple(items), prepared.suite.source)
    return PreparedSuite(prepared.corpus, suite, prepared.vectors, nows, prepared.embed_ms, prepared.decisions)


def _check_values(config: CRPConfig, axes: Sequence[GridAxis]) -> None:
    for axis in axes:
        for i, v in enumerate(axis.values):
            try:
                if axis.key == FANOUT_WIDTH:
                    from crp_core.analysis.sweep import point_inputs

                    point_inputs(_EMPTY_SCENARIO, config, axis.key, v)
                elif axis.key != NOW:
                    config.with_overrides({axis.key: v})
            except ConfigError as exc:
                raise ConfigError(f"{axis.key} value {i + 1} of {len(axis.values)} ({v!r}): {exc}") from None


def _label(axes: Sequence[GridAxis], values: Sequence[Any]) -> str:
    return ", ".join(f"{a.key}={_text(v)}" for a, v in zip(axes, values))


def sweep_grid(
    prepared: PreparedSuite,
    config: CRPConfig,
    axes: Sequence[GridAxis],
    *,
    set_args: Sequence[str] = (),
    reference: Reference = None,
    known: KnownMode = "auto",
    progress: GridProgress | None = None,
    embedder: Embedder | None = None,
) -> SuiteGrid:
    """Run the suite at ``config`` (the baseline) and at every point of the grid of ``axes`` (one or two
    distinct keys). Every value is checked before anything runs; ``progress(done, total, label)`` after
    each suite run."""
    t0 = time.perf_counter()
    axes = tuple(axes)
    if not 1 <= len(axes) <= 2:
        raise ConfigError(f"a sweep has one or two keys, got {len(axes)}")
    if len(axes) == 2 and axes[0].key == axes[1].key:
        raise ConfigError(f"the two swept keys are both {axes[0].key!r}")
    for a in axes:
        check_key(a.key)
        if not a.values:
            raise ConfigError(f"sweep of {a.key!r}: no values")
    _check_values(config, axes)
    coords: list[tuple[Any, ...]] = [(v,) for v in axes[0].values]
    if len(axes) == 2:
        coords = [(a, b) for a in axes[0].values for b in axes[1].values]
    if len(coords) > MAX_GRID_POINTS:
        raise ConfigError(f"the grid has {len(coords)} points; at most {MAX_GRID_POINTS} are run")
    total = len(coords) + 1
    options: dict[str, Any] = {
        "set_args": tuple(set_args),
        "reference": reference,
        "known": known,
        "keep_results": False,
        "embedder": embedder,
    }
    baseline = run_suite(prepared, config, **options)
    if progress is not None:
        progress(1, total, "baseline")
    variants: dict[tuple[tuple[str, Any], ...], PreparedSuite] = {}
    points = []
    for done, values in enumerate(coords, start=2):
        fields = tuple((a.key, v) for a, v in zip(axes, values) if a.key in SCENARIO_KEYS)
        overrides = {a.key: v for a, v in zip(axes, values) if a.key not in SCENARIO_KEYS}
        target = prepared
        if fields:
            target = variants.get(fields) or variants.setdefault(fields, _variant(prepared, config, dict(fields)))
        run = run_suite(target, config, scenario_overrides=overrides or None, **options)
        points.append(GridPoint(values=tuple(values), run=run))
        if progress is not None:
            progress(done, total, _label(axes, values))
    return SuiteGrid(
        axes=axes,
        baseline=baseline,
        points=tuple(points),
        total_ms=(time.perf_counter() - t0) * 1e3,
        runs=total,
    )


# ---------------------------------------------------------------- reports


def _text(v: Any) -> Any:
    """A value as the reports write it: a datetime as ISO 8601 UTC, anything else as it is."""
    if isinstance(v, datetime):
        from crp_core.io.timeparse import format_timestamp

        return format_timestamp(v)
    return v


def facts_after(kb: KnowledgeBase, grid: SuiteGrid) -> list[tuple[datetime, int]]:
    """For a sweep of ``now``: each swept instant before some of ``kb``'s facts were written, with how many
    (retrievable) carry a later ``modified_at`` (else ``ingested_at``). At such an instant their age counts as 0, as
    every run warns (SPEC-027 §3.2: a future timestamp), so the point reads them as fresh; none for other axes."""
    if NOW not in {a.key for a in grid.axes}:
        return []
    stamps = sorted(t for f in kb.facts if f.retrievable and (t := f.effective_modified_at) is not None)
    axis = next(a for a in grid.axes if a.key == NOW)
    out = []
    for when in axis.values:
        later = len(stamps) - bisect.bisect_right(stamps, when)
        if later:
            out.append((when, later))
    return out


def grid_report(
    grid: SuiteGrid, *, suite_source: str = "", ckf_source: str = "", kb: KnowledgeBase | None = None
) -> dict[str, Any]:
    """The JSON shape of a sweep (docs/reference/cli.md#sweep): axes with their values and current value,
    the metric keys, the baseline's metrics and one entry per point; with ``kb`` and a ``now`` axis,
    ``facts_after_now``: each swept instant that precedes facts of the CKF, with their count."""
    after = [{"now": _text(t), "facts": n} for t, n in facts_after(kb, grid)] if kb is not None else []
    return {
        "ckf": ckf_source,
        "suite": suite_source,
        "scenarios": len(grid.baseline.metrics.scenarios),
        "axes": [
            {"key": a.key, "values": [_text(v) for v in a.values], "current": _text(a.current)} for a in grid.axes
        ],
        "metrics": list(grid.metric_keys),
        "baseline": grid.baseline.metrics.flat(),
        "points": [
            {"values": {a.key: _text(v) for a, v in zip(grid.axes, p.values)}, "metrics": p.metrics}
            for p in grid.points
        ],
        "facts_after_now": after,
        "elapsed_s": round(grid.total_ms / 1e3, 3),
    }


def grid_rows(grid: SuiteGrid) -> list[dict[str, Any]]:
    """One flat row per point (the axis keys, then every metric key), baseline first with ``point`` =
    ``"baseline"`` and the axis cells empty."""
    rows: list[dict[str, Any]] = [
        {"point": "baseline", **{a.key: "" for a in grid.axes}, **grid.baseline.metrics.flat()}
    ]
    for i, p in enumerate(grid.points, start=1):
        rows.append({"point": i, **{a.key: _text(v) for a, v in zip(grid.axes, p.values)}, **p.metrics})
    return rows


def _empty_scenario() -> Any:
    from crp_core.model import Scenario

    return Scenario(query="")


_EMPTY_SCENARIO = _empty_scenario()

"""Time, pictured: who wins a conflict pair as ``now`` moves, and which facts an envelope holds
(SPEC-027 §2.3 Fact Authority Resolution, §3.2 recency; docs/decisions/timeline.md).

A fact's authority is ``source_authority * recency_factor * importance``; only the recency factor
depends on ``now``, and it is piecewise linear in time: 1.0 until the fresh threshold
(``fresh_fraction * TTL`` after ``modified_at``: half the TTL at the default), a straight line down to
``stale_floor`` at the TTL, the floor after. So the authority of each fact, and the difference between
two, is a closed form at every instant (:func:`pair_timeline` evaluates it on a grid with numpy), and the
instants where something changes are computed exactly, not found by sampling: where each fact starts
ageing and where it expires (:class:`TimeMark`), and where the winner changes (:class:`Flip`, the root of
the difference on the linear piece that holds it).

Two flags accompany every winner by authority (:func:`winner_flags`): a **close margin** (the margin
relative to the larger authority below ``winner_margin_warn``) and **both expired** (both facts at the
recency floor, so recency no longer separates them and the winner is decided by source authority and
importance alone).

The envelope over time (:func:`envelope_timeline`) runs the pipeline once per instant and records which
facts the envelope holds at each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import numpy as np

from crp_core.config import SECONDS_PER_DAY, CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.factors.recency import (
    EXPIRED_RULES,
    RULES,
    fact_attributes,
    kb_arrays,
    resolved_importance,
    resolved_ttl_days,
)
from crp_core.model import KnowledgeBase, Scenario
from crp_core.pipeline import run_pipeline
from crp_core.records import ConflictPair, PipelineResult
from crp_core.support.frozen import frozen_array

#: grid points of a pair's sweep when none are asked for (the exact instants are added to them)
DEFAULT_POINTS = 241
#: how far past the last TTL (or past ``now`` when no fact expires) a default range reaches
DEFAULT_TAIL_DAYS = 365.0
#: grid points of an envelope's sweep by default (one pipeline run each)
DEFAULT_ENVELOPE_POINTS = 13

MarkKind = Literal["ageing", "expired"]


# ---- flags at one instant ------------------------------------------------------------------------
@dataclass(frozen=True)
class WinnerFlags:
    """What to say beside a winner shown at one instant. ``relative_margin`` = margin / larger authority
    (0.0 when both are 0); ``close_margin``: a winner by authority whose relative margin is below
    ``threshold`` (``winner_margin_warn``); ``both_expired``: both facts at the recency floor (past their TTL,
    or STALE)."""

    margin: float
    relative_margin: float
    threshold: float
    close_margin: bool
    both_expired: bool

    @property
    def any(self) -> bool:
        return self.close_margin or self.both_expired


def relative_margin(a: float, b: float) -> float:
    """``|a - b| / max(a, b)``, 0.0 when both are 0 (SPEC-027 §2.3 authorities are never negative)."""
    top = max(a, b)
    return 0.0 if top <= 0.0 else abs(a - b) / top


def winner_flags(
    pair: ConflictPair,
    kb: KnowledgeBase,
    config: CRPConfig,
    now: datetime,
    statuses: Mapping[str, str] | None = None,
) -> WinnerFlags:
    """The flags of ``pair`` as arbitrated at ``now`` (its authorities are the arbitration's). A close margin
    is flagged only for a winner by authority (not a tie, a dismissal or an operator's override);
    ``statuses`` are operators' status marks in force (a STALE mark puts a fact at the floor)."""
    a, b = pair.authority[pair.fact_a].authority, pair.authority[pair.fact_b].authority
    rel = relative_margin(a, b)
    by_authority = not pair.tied and pair.decision not in ("dismiss", "override") and pair.suppressed is not None
    attrs = fact_attributes(kb, now, config)
    expired = []
    for fid in (pair.fact_a, pair.fact_b):
        row = kb.index_of(fid)
        status = (statuses or {}).get(fid, kb.facts[row].status)
        expired.append(status == "STALE" or RULES[int(attrs.rule[row])] in EXPIRED_RULES)
    return WinnerFlags(
        margin=abs(a - b),
        relative_margin=rel,
        threshold=config.winner_margin_warn,
        close_margin=by_authority and rel < config.winner_margin_warn,
        both_expired=all(expired),
    )


def flag_lines(flags: WinnerFlags) -> tuple[str, ...]:
    """The flags in words, one line each (the CLI's summary and the dashboard's pair cards say the same)."""
    out = []
    if flags.close_margin:
        out.append(
            f"close call: the margin {flags.margin:.4f} is {flags.relative_margin:.2%} of the larger authority, "
            f"below winner_margin_warn {flags.threshold:.2%}"
        )
    if flags.both_expired:
        out.append(
            "both facts expired (past their TTL or STALE): recency no longer separates them, "
            "source authority x importance decides"
        )
    return tuple(out)


# ---- one fact's clock ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FactClock:
    """What a fact's authority over time depends on: ``static`` = source authority and importance (their
    product is ``source_authority * importance``), ``modified_at`` (None: age unknown, recency 1.0),
    ``ttl_days`` (inf: no expiry), ``stale`` (STALE: the floor at every instant), and the exact instants it
    starts ageing and expires (None when it never does)."""

    fact_id: str
    source_authority: float
    importance: float
    modified_at: datetime | None
    ttl_days: float
    stale: bool
    ageing_at: datetime | None
    expired_at: datetime | None


@dataclass(frozen=True)
class TimeMark:
    """An exact instant where a fact's recency changes: ``ageing`` (the fresh threshold, ``fresh_fraction``
    x TTL after modified_at; ``label`` says "half TTL" at the default 0.5) or ``expired`` (the TTL)."""

    fact_id: str
    kind: MarkKind
    at: datetime
    label: str


@dataclass(frozen=True)
class Flip:
    """An instant where the winner changes: ``before`` / ``after`` the winning fact id, None for a tie."""

    at: datetime
    before: str | None
    after: str | None


@dataclass(frozen=True, eq=False)
class PairTimeline:
    """A pair's authorities swept over ``times`` (ascending, UTC; the grid plus every exact instant of
    ``marks``, ``flips`` and ``now``). Arrays are read-only and aligned with ``times``; ``winner[i]`` is the
    fact id with the higher authority at ``times[i]``, None for a tie (|a - b| <= authority_tie_tolerance).
    The winners are by authority alone (SPEC-027 §2.3): an operator's decision on the pair is not swept."""

    fact_a: str
    fact_b: str
    now: datetime
    clocks: tuple[FactClock, FactClock]
    times: tuple[datetime, ...]
    recency_a: np.ndarray
    recency_b: np.ndarray
    authority_a: np.ndarray
    authority_b: np.ndarray
    winner: tuple[str | None, ...]
    margin: np.ndarray
    relative_margin: np.ndarray
    close_margin: np.ndarray  # bool: a winner whose relative margin is below winner_margin_warn
    both_expired: np.ndarray  # bool: both facts at the recency floor
    marks: tuple[TimeMark, ...]
    flips: tuple[Flip, ...]
    threshold: float

    def index_of(self, at: datetime) -> int:
        """The position of instant ``at`` in :attr:`times` (it must be one of them)."""
        return self.times.index(_utc(at))


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def fact_clock(
    kb: KnowledgeBase, fact_id: str, config: CRPConfig, statuses: Mapping[str, str] | None = None
) -> FactClock:
    """The :class:`FactClock` of ``fact_id`` under ``config`` (``statuses``: operators' marks in force)."""
    row = kb.index_of(fact_id)
    fact = kb.facts[row]
    modified_s = float(kb_arrays(kb).modified_s[row])
    ttl = float(resolved_ttl_days(kb, config)[row])
    stale = (statuses or {}).get(fact_id, fact.status) == "STALE"
    known = not math.isnan(modified_s)
    expires = known and math.isfinite(ttl) and not stale
    return FactClock(
        fact_id=fact_id,
        source_authority=float(config.source_authority[fact.source_type]),  # type: ignore[arg-type]
        importance=float(resolved_importance(kb, np.array([row]), config)[0]),
        modified_at=_at(modified_s) if known else None,
        ttl_days=ttl,
        stale=stale,
        ageing_at=_at(modified_s + config.fresh_fraction * ttl * SECONDS_PER_DAY) if expires else None,
        expired_at=_at(modified_s + ttl * SECONDS_PER_DAY) if expires else None,
    )


def recency_at(clock: FactClock, seconds: np.ndarray, config: CRPConfig) -> np.ndarray:
    """The SPEC-027 §3.2 recency factor of ``clock``'s fact at POSIX ``seconds`` (vectorised; the same
    arithmetic as the pipeline's, so the value at a run's ``now`` is the run's)."""
    seconds = np.asarray(seconds, dtype=np.float64)
    floor = config.stale_floor
    if clock.stale:
        return np.full(seconds.shape, float(floor))
    if clock.modified_at is None or not math.isfinite(clock.ttl_days):
        return np.ones(seconds.shape)
    age = np.maximum(0.0, (seconds - clock.modified_at.timestamp()) / SECONDS_PER_DAY)
    ttl = clock.ttl_days
    fresh = config.fresh_fraction * ttl
    decay = 1.0 - (1.0 - floor) * (age - fresh) / (ttl - fresh)
    return np.where(age <= fresh, 1.0, np.where(age < ttl, decay, floor))


def authority_at(clock: FactClock, seconds: np.ndarray, config: CRPConfig) -> np.ndarray:
    """``source_authority * recency_factor * importance`` (SPEC-027 §2.3) at every instant of ``seconds``."""
    return clock.source_authority * recency_at(clock, seconds, config) * clock.importance


def time_marks(clock: FactClock, config: CRPConfig) -> tuple[TimeMark, ...]:
    """The exact instants ``clock``'s fact starts ageing and expires (none for a timeless, STALE or
    undated fact)."""
    if clock.ageing_at is None or clock.expired_at is None:
        return ()
    frac = config.fresh_fraction
    label = "half TTL" if frac == 0.5 else f"{frac:g} x TTL"
    return (
        TimeMark(clock.fact_id, "ageing", clock.ageing_at, f"{label}: starts ageing"),
        TimeMark(clock.fact_id, "expired", clock.expired_at, "TTL: expired"),
    )


def default_range(clocks: Sequence[FactClock], now: datetime) -> tuple[datetime, datetime]:
    """From the oldest fact's modified_at (or ``now``) to :data:`DEFAULT_TAIL_DAYS` past the last TTL (or
    past ``now`` when no fact expires), always holding ``now``."""
    now = _utc(now)
    starts = [c.modified_at for c in clocks if c.modified_at is not None]
    ends = [c.expired_at for c in clocks if c.expired_at is not None]
    start = min([*starts, now])
    end = max([*ends, now]) + timedelta(days=DEFAULT_TAIL_DAYS)
    return start, end


def _winners(a: np.ndarray, b: np.ndarray, ids: tuple[str, str], tol: float) -> tuple[str | None, ...]:
    tied = np.abs(a - b) <= tol
    return tuple(None if t else (ids[0] if x > y else ids[1]) for t, x, y in zip(tied.tolist(), a, b))


def _flips(
    clocks: tuple[FactClock, FactClock], start: float, end: float, config: CRPConfig
) -> tuple[tuple[float, ...], tuple[Flip, ...]]:
    """(roots, flips) between ``start`` and ``end`` (POSIX seconds). The difference of the two authorities is
    linear between consecutive breakpoints (each fact's ageing and expiry instants), so each piece changes
    sign at most once, at its root; the winner is constant between consecutive roots and breakpoints."""
    inner = {t.timestamp() for c in clocks for t in (c.ageing_at, c.expired_at) if t is not None}
    breaks = sorted({start, end} | {t for t in inner if start <= t <= end})
    xs = np.array(breaks)
    d = authority_at(clocks[0], xs, config) - authority_at(clocks[1], xs, config)
    roots = []
    for t0, t1, d0, d1 in zip(xs[:-1], xs[1:], d[:-1], d[1:]):
        if d0 * d1 < 0:  # a sign change inside the piece: its root, exactly
            roots.append(float(t0 + (t1 - t0) * d0 / (d0 - d1)))
    cuts = np.array(sorted({*breaks, *roots}))
    if cuts.size < 2:
        return tuple(roots), ()
    mids = (cuts[:-1] + cuts[1:]) / 2.0
    ids = (clocks[0].fact_id, clocks[1].fact_id)
    tol = config.authority_tie_tolerance
    w = _winners(authority_at(clocks[0], mids, config), authority_at(clocks[1], mids, config), ids, tol)
    flips = tuple(Flip(_at(float(cuts[i + 1])), w[i], w[i + 1]) for i in range(len(w) - 1) if w[i] != w[i + 1])
    return tuple(roots), flips


def pair_timeline(  # noqa: PLR0913  the pair, its inputs and the sweep's range, each a keyword
    kb: KnowledgeBase,
    fact_a: str,
    fact_b: str,
    config: CRPConfig,
    *,
    now: datetime,
    start: datetime | None = None,
    end: datetime | None = None,
    points: int = DEFAULT_POINTS,
    statuses: Mapping[str, str] | None = None,
) -> PairTimeline:
    """The winner of the pair (``fact_a``, ``fact_b``) of ``kb`` over time: ``points`` evenly spaced instants
    from ``start`` to ``end`` (default :func:`default_range`) plus ``now`` and every exact instant (each
    fact's ageing and expiry, each flip of the winner) inside the range. Raises ValueError for an empty range
    or fewer than 2 points, KeyError for a fact id not in ``kb``."""
    if points < 2:
        raise ValueError(f"a sweep needs at least 2 points, got {points}")
    clocks = (fact_clock(kb, fact_a, config, statuses), fact_clock(kb, fact_b, config, statuses))
    now = _utc(now)
    lo, hi = default_range(clocks, now)
    start, end = _utc(start) if start else lo, _utc(end) if end else hi
    if not end > start:
        raise ValueError(f"the sweep's end {end.isoformat()} is not after its start {start.isoformat()}")
    s0, s1 = start.timestamp(), end.timestamp()
    marks = tuple(m for c in clocks for m in time_marks(c, config) if s0 <= m.at.timestamp() <= s1)
    _roots, flips = _flips(clocks, s0, s1, config)
    exact = [m.at for m in marks] + [f.at for f in flips] + ([now] if s0 <= now.timestamp() <= s1 else [])
    grid = [_at(float(s)) for s in np.linspace(s0, s1, points)]
    times = tuple(sorted(set(grid) | set(exact)))
    secs = np.array([t.timestamp() for t in times])
    ra, rb = recency_at(clocks[0], secs, config), recency_at(clocks[1], secs, config)
    aa = clocks[0].source_authority * ra * clocks[0].importance
    ab = clocks[1].source_authority * rb * clocks[1].importance
    winner = _winners(aa, ab, (fact_a, fact_b), config.authority_tie_tolerance)
    margin = np.abs(aa - ab)
    top = np.maximum(aa, ab)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(top > 0.0, margin / np.where(top > 0.0, top, 1.0), 0.0)
    expired = _at_floor(clocks[0], secs) & _at_floor(clocks[1], secs)
    has_winner = np.array([w is not None for w in winner], dtype=bool)
    return PairTimeline(
        fact_a=fact_a,
        fact_b=fact_b,
        now=now,
        clocks=clocks,
        times=times,
        recency_a=frozen_array(ra),
        recency_b=frozen_array(rb),
        authority_a=frozen_array(aa),
        authority_b=frozen_array(ab),
        winner=winner,
        margin=frozen_array(margin),
        relative_margin=frozen_array(rel),
        close_margin=frozen_array(has_winner & (rel < config.winner_margin_warn)),
        both_expired=frozen_array(expired),
        marks=marks,
        flips=flips,
        threshold=config.winner_margin_warn,
    )


def _at_floor(clock: FactClock, seconds: np.ndarray) -> np.ndarray:
    """Whether the fact is expired (at the recency floor) at each instant: STALE, or at or past its TTL."""
    if clock.stale:
        return np.ones(seconds.shape, dtype=bool)
    if clock.expired_at is None:
        return np.zeros(seconds.shape, dtype=bool)
    return seconds >= clock.expired_at.timestamp()


# ---- the envelope over time ----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class EnvelopeTimeline:
    """Which facts the envelope holds at each instant: ``inside[r, t]`` for fact ``fact_ids[r]`` at
    ``times[t]`` (read-only bool). The rows are every fact packed at some instant, in order of first entry
    (then id); ``changing`` the rows whose membership changes inside the range."""

    times: tuple[datetime, ...]
    fact_ids: tuple[str, ...]
    inside: np.ndarray
    changing: tuple[str, ...]


def envelope_grid(
    start: datetime, end: datetime, points: int = DEFAULT_ENVELOPE_POINTS, *, now: datetime
) -> tuple[datetime, ...]:
    """``points`` evenly spaced instants from ``start`` to ``end``, plus ``now`` when it lies inside."""
    if points < 2:
        raise ValueError(f"a sweep needs at least 2 points, got {points}")
    s0, s1 = _utc(start).timestamp(), _utc(end).timestamp()
    if not s1 > s0:
        raise ValueError(f"the sweep's end {_utc(end).isoformat()} is not after its start {_utc(start).isoformat()}")
    grid = {_at(float(s)) for s in np.linspace(s0, s1, points)}
    now = _utc(now)
    if s0 <= now.timestamp() <= s1:
        grid.add(now)
    return tuple(sorted(grid))


def envelope_timeline_of(times: Sequence[datetime], results: Sequence[PipelineResult]) -> EnvelopeTimeline:
    """The :class:`EnvelopeTimeline` of runs already made, ``results[i]`` at ``times[i]``."""
    if len(times) != len(results):
        raise ValueError(f"{len(times)} instant(s) but {len(results)} run(s)")
    packed = [[p.fact_id for p in r.envelope.order] for r in results]
    first: dict[str, int] = {}
    for t, ids in enumerate(packed):
        for fid in ids:
            first.setdefault(fid, t)
    rows = tuple(sorted(first, key=lambda f: (first[f], f)))
    inside = np.zeros((len(rows), len(times)), dtype=bool)
    at = {fid: r for r, fid in enumerate(rows)}
    for t, ids in enumerate(packed):
        for fid in ids:
            inside[at[fid], t] = True
    changing = tuple(fid for r, fid in enumerate(rows) if not (inside[r].all() or not inside[r].any()))
    return EnvelopeTimeline(
        times=tuple(_utc(t) for t in times), fact_ids=rows, inside=frozen_array(inside), changing=changing
    )


def envelope_timeline(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    times: Sequence[datetime],
    **run: Any,
) -> EnvelopeTimeline:
    """The pipeline run at each instant of ``times`` (``run``: the other keywords of
    :func:`crp_core.pipeline.run_pipeline`: vectors, embedder, decisions, known_conflicts), as an
    :class:`EnvelopeTimeline`."""
    results = [run_pipeline(corpus, scenario, config, now=_utc(t), **run) for t in times]
    return envelope_timeline_of(times, results)

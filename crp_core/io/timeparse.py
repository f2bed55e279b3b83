"""ISO 8601 timestamps and durations (docs/reference/ckf.md).

Timestamps: ``2025-03-01``, ``2025-03-01T12:00:00Z``, ``...+02:00``; a naive timestamp is UTC.
Durations: ``P30D``, ``P6M``, ``P1Y``, ``P2W``, ``PT12H``, ``P1Y2M3DT4H5M6S`` (Y = 365 days, M = 30 days,
W = 7 days) or the string ``"none"`` (timeless). Both are ASCII text: ISO 8601 digits are 0-9.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

#: ISO 8601 digits are ASCII ``[0-9]`` (``\d`` would take any Unicode digit: Arabic-Indic, fullwidth, ...)
_DURATION = re.compile(
    r"^P(?!$)(?:(?P<y>[0-9]+(?:\.[0-9]+)?)Y)?(?:(?P<mo>[0-9]+(?:\.[0-9]+)?)M)?(?:(?P<w>[0-9]+(?:\.[0-9]+)?)W)?"
    r"(?:(?P<d>[0-9]+(?:\.[0-9]+)?)D)?(?:T(?=[0-9])(?:(?P<h>[0-9]+(?:\.[0-9]+)?)H)?(?:(?P<mi>[0-9]+(?:\.[0-9]+)?)M)?"
    r"(?:(?P<s>[0-9]+(?:\.[0-9]+)?)S)?)?$"
)
_UNIT_SECONDS = {
    "y": 365 * 86400.0,
    "mo": 30 * 86400.0,
    "w": 7 * 86400.0,
    "d": 86400.0,
    "h": 3600.0,
    "mi": 60.0,
    "s": 1.0,
}


def parse_timestamp(text: str) -> datetime:
    """Parse an ISO 8601 timestamp into an aware UTC datetime. Raises ValueError with a reason."""
    if not isinstance(text, str):
        raise ValueError(f"expected an ISO 8601 timestamp string, got {type(text).__name__}")
    s = text.strip()
    if not s:
        raise ValueError("empty timestamp")
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    if not (s.isascii() and s.isprintable()):  # fromisoformat takes any one character between date and time
        raise ValueError(f"not an ISO 8601 timestamp: {text!r}")
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise ValueError(f"not an ISO 8601 timestamp: {text!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        return dt.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00 falls before year 1 in UTC
        raise ValueError(f"timestamp out of range once converted to UTC: {text!r}") from None


def parse_duration_seconds(text: str) -> float | None:
    """Parse an ISO 8601 duration into seconds; ``"none"`` gives None (timeless).

    Raises ValueError for anything else, including a zero duration.
    """
    if not isinstance(text, str):
        raise ValueError(f'expected an ISO 8601 duration string or "none", got {type(text).__name__}')
    s = text.strip()
    if s.lower() == "none":
        return None
    m = _DURATION.match(s.upper()) if s.isascii() else None  # upper() makes U+017F (long s) an ASCII S
    if not m:
        raise ValueError(f'not an ISO 8601 duration (e.g. P30D, P6M, P1Y, PT12H) or "none": {text!r}')
    total = sum(float(v) * _UNIT_SECONDS[k] for k, v in m.groupdict().items() if v is not None)
    if not math.isfinite(total):
        raise ValueError(f"duration too large: {text[:40]!r}")
    if total <= 0:
        raise ValueError(f"duration must be longer than zero: {text!r}")
    return total


def format_timestamp(dt: datetime) -> str:
    """Canonical UTC form ``YYYY-MM-DDTHH:MM:SSZ`` (microseconds kept when present)."""
    s = dt.astimezone(UTC).isoformat()
    return s.replace("+00:00", "Z")

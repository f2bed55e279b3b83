"""ISO 8601 timestamp and duration parsing edge cases (crp_core.io.timeparse; docs/reference/ckf.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crp_core.io.timeparse import format_timestamp, parse_duration_seconds, parse_timestamp

UTC = UTC
DAY = 86400.0


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2025-03-01", datetime(2025, 3, 1, tzinfo=UTC)),  # a date is midnight UTC
        ("2025-03-01T12:00:00Z", datetime(2025, 3, 1, 12, tzinfo=UTC)),
        ("2025-03-01T12:00:00z", datetime(2025, 3, 1, 12, tzinfo=UTC)),
        ("2025-03-01T12:00:00", datetime(2025, 3, 1, 12, tzinfo=UTC)),  # naive = UTC
        ("2025-03-01T12:00:00+02:00", datetime(2025, 3, 1, 10, tzinfo=UTC)),  # 12:00 - 2 h
        ("2025-03-01T00:30:00-01:00", datetime(2025, 3, 1, 1, 30, tzinfo=UTC)),  # 00:30 + 1 h
        ("2025-01-01T00:00:00+05:30", datetime(2024, 12, 31, 18, 30, tzinfo=UTC)),  # crosses the year
        ("2025-03-01T12:00:00.123456Z", datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)),
        ("  2025-03-01T12:00Z  ", datetime(2025, 3, 1, 12, tzinfo=UTC)),
        ("2024-02-29", datetime(2024, 2, 29, tzinfo=UTC)),  # leap day
    ],
)
def test_parse_timestamp(text, expected):
    got = parse_timestamp(text)
    assert got == expected and got.tzinfo == UTC


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "yesterday",
        "2025-13-01",
        "2025-02-30",
        "2023-02-29",
        "2025-03-01T25:00:00Z",
        "2025-03-01T12:00:00+25:00",
        "0001-01-01T00:00:00+01:00",  # before year 1 once in UTC (was OverflowError)
        "9999-12-31T23:59:59-01:00",  # after year 9999 once in UTC
    ],
)
def test_parse_timestamp_rejects_with_value_error(bad):
    with pytest.raises(ValueError):
        parse_timestamp(bad)


@pytest.mark.parametrize("bad", [1700000000, None, 1.5, ["2025-01-01"]])
def test_parse_timestamp_rejects_non_strings(bad):
    with pytest.raises(ValueError, match="expected an ISO 8601 timestamp string"):
        parse_timestamp(bad)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)))
def test_format_then_parse_round_trips(dt):
    s = format_timestamp(dt)
    assert s.endswith("Z")
    assert parse_timestamp(s) == dt


@given(st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(2200, 1, 1)), st.integers(-14 * 60, 14 * 60))
def test_offsets_give_the_same_instant(naive, minutes):
    tz = timezone(timedelta(minutes=minutes))
    assert parse_timestamp(naive.replace(tzinfo=tz).isoformat()) == naive.replace(tzinfo=tz).astimezone(UTC)


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("P30D", 30 * DAY),
        ("P6M", 6 * 30 * DAY),  # M = 30 days
        ("P1Y", 365 * DAY),  # Y = 365 days
        ("P2W", 14 * DAY),  # W = 7 days
        ("PT12H", 12 * 3600.0),
        ("PT1M", 60.0),  # minutes after T, months before
        ("P1M", 30 * DAY),
        ("PT36H", 1.5 * DAY),
        ("P1.5D", 1.5 * DAY),
        ("p30d", 30 * DAY),  # case-insensitive
        (" P30D ", 30 * DAY),
        # 365 + 2*30 + 3 = 428 days = 36979200 s; + 4 h 5 min 6 s = 14706 s -> 36993906 s
        ("P1Y2M3DT4H5M6S", 36_993_906.0),
        ("PT0.5S", 0.5),
    ],
)
def test_parse_duration(text, seconds):
    assert parse_duration_seconds(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize("text", ["none", "NONE", " None "])
def test_none_is_timeless(text):
    assert parse_duration_seconds(text) is None


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "P",
        "PT",
        "P1YT",
        "30D",
        "P-1D",
        "P0D",
        "PT0S",
        "P1D1Y",
        "P1H",
        "1 year",
        "P1,5D",
        "forever",
        "P" + "9" * 400 + "Y",
    ],
)
def test_parse_duration_rejects(bad):
    with pytest.raises(ValueError):
        parse_duration_seconds(bad)


@pytest.mark.parametrize("bad", [30, None, 1.0, True])
def test_parse_duration_rejects_non_strings(bad):
    with pytest.raises(ValueError, match="duration string"):
        parse_duration_seconds(bad)


# issue 32, hostile item 7: ISO 8601 takes ASCII digits only; `\d` matched any Unicode digit
@pytest.mark.parametrize(
    "bad",
    [
        "P\u0663D",  # Arabic-Indic 3
        "P\uff13D",  # fullwidth 3
        "PT\u0663H",
        "P1.\u0665D",  # Arabic-Indic 5 after the decimal point
        "P\u09e9W",  # Bengali 3
        "PT3\u017f",  # LATIN SMALL LETTER LONG S: upper() makes it an ASCII S
    ],
)
def test_parse_duration_takes_ascii_only(bad):
    with pytest.raises(ValueError, match="not an ISO 8601 duration"):
        parse_duration_seconds(bad)


@pytest.mark.parametrize(
    "bad",
    [
        "\u0662\u0660\u0662\u0666-01-01",
        "\uff12\uff10\uff12\uff16-01-01T00:00:00Z",
        "2026-01-01T00:00:00.\u0661\u0662\u0663",
        "2026-01-01T00:00:00+\u0660\u0661:00",
        # any one character passed as the date-time separator
        "2026-01-01\u017f00:00:00",
        "2026-01-01\u00a000:00:00",
        "2026-01-01\u202e00:00:00",
        "2026-01-01\x0000:00:00",
        "2026-01-01\n00:00:00",
    ],
)
def test_parse_timestamp_takes_printable_ascii_only(bad):
    with pytest.raises(ValueError, match="not an ISO 8601 timestamp"):
        parse_timestamp(bad)


def test_the_ascii_forms_still_parse():
    assert parse_duration_seconds("p3d") == parse_duration_seconds(" P3D ") == 3 * DAY
    assert parse_timestamp("2026-01-01 00:00:00") == parse_timestamp("2026-01-01t00:00:00Z")

"""Token records of value-conflict detection: quantities, dates and tokens with character spans."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from crp_core.stages.contradictions.lexicon import (
    ABBREVIATIONS,
    BREAK,
    COMMON_STEMS,
    COMMON_SUFFIXES,
    COMMON_WORDS,
    ENTITY_LEXICON,
    FUNCTION_WORDS,
    NUMBER_WORDS,
    POLARITY,
    SYNONYMS,
    UNITS,
    WORD,
    Unit,
    is_identifier,
    stem,
)
from crp_core.stages.contradictions.nuclides import nuclide_key

# ================================================================================================
# Tokens
# ================================================================================================


class Quantity(NamedTuple):
    """A number in normalised form. Two quantities in the same canonical unit are compared exactly
    on ``base * scale``; otherwise their ``readings`` (intervals in the dimension's base unit) must
    overlap - calendar months are day ranges, ``GB`` reads both 10^9 and 2^30 bytes."""

    dim: str  # "" (count) | times | time | bday | size | bit | bitrate | freq | rate | money | pct | x | clock
    unit: str  # canonical unit (currency code for money)
    base: float  # the number as written
    scale: float  # thousand / million / k / M factor
    exact: str  # digits as written (unit-less decimals compare as strings: "1.30" is not "1.3")
    readings: tuple[tuple[float, float], ...]
    power: int  # data-size prefix power, -1 when none
    bound: int  # +1 "at least", -1 "at most", 0 none
    bound_start: int  # character start of the bound phrase, -1 when none


class DateValue(NamedTuple):
    """A date: its possible (year, month, day, weekday) readings, 0 where the text says nothing.
    ``5/3/2024`` has two readings; ``Q3`` has three (July, August, September)."""

    readings: tuple[tuple[int, int, int, int], ...]
    bare_year: bool  # a lone 4-digit year: may also pair with a plain number (NUMBER_CHANGED)


class Token(NamedTuple):
    """One token: surface, character span into the text, kind and comparison data."""

    text: str
    start: int
    end: int
    kind: str  # word | func | entity | number | date | polar | neg | break
    key: str  # comparison key (stem, entity name, polarity group, break kind)
    sign: int = 0  # polar: +1 / -1
    qty: Quantity | None = None
    date: DateValue | None = None
    parts: tuple[tuple[str, str, int, int], ...] = ()  # (key, surface, start, end) of entity words / date parts
    sub: str = ""  # entity: name | acro | ident | lex | weak; word: possessive flag "poss"


class RawToken(NamedTuple):
    group: str
    text: str
    start: int
    end: int
    low: str


_NUM = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
RAW_RE = re.compile(
    r"(?P<url>\b(?:https?|wss?|grpcs?)://[^\s<>\"'`]*[^\s<>\"'`.,;:!?)\]])"
    r"|(?P<email>\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<flag>(?<![\w-])--?[^\W\d_][\w-]*(?:=[\w./:-]+)?)"
    r"|(?P<path>(?<![\w/.~])(?:~|\.{1,2})?/[\w.@:-]+(?:/[\w.@:-]+)*/?)"
    r"|(?P<iso>(?<![\w.-])\d{4}-\d{2}(?:-\d{2})?(?:T\d{2}:\d{2}(?::\d{2})?Z?)?(?![\w-]|\.\d))"
    r"|(?P<sdate>(?<![\w/.])(?:\d{1,2}/\d{1,2}/\d{4}|\d{4}/\d{1,2}/\d{1,2})(?![\w/]))"
    r"|(?P<ratio>(?<![\w.:])\d{1,3}:(?:\d{1,3}(?:,\d{3})+|\d{3,})(?![\w:]|,\d))"
    r"|(?P<clock>(?<![\w.:])\d{1,2}:\d{2}(?::\d{2})?(?:\s?(?:[AaPp][Mm]|[AaPp]\.[Mm]\.?)(?!\w)|(?![\w:])))"
    r"|(?P<ip>(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?![\w.]))"
    r"|(?P<ver>(?<![\w.])(?:[vV]\d+(?:\.(?:\d+|[xX*]))*(?:-[^\W\d_][\w.]*)?"
    r"|\d+\.\d+\.(?:\d+|[xX*])(?:\.(?:\d+|[xX*]))*(?:-[^\W\d_][\w.]*)?|\d+\.[xX*])(?![\w]|\.\d))"
    r"|(?P<money>[$€£¥]\s?" + _NUM + r"(?:\s?(?:bn|mn|[kKMBT])(?![\w]))?)"
    r"|(?P<numw>(?<![\w.])" + _NUM + r"[^\W\d_][\w]*)"
    r"|(?P<num>(?<![\w.])[-+−]?" + _NUM + r"(?![\w]))"
    r"|(?P<sym>[%×°º])"
    r"|(?P<word>[^\W\d][\w]*(?:['’][^\W\d_]+)?(?:[-./+][\w]+(?:['’][^\W\d_]+)?)*\+*)"
    r"|(?P<brk>[.!?]+(?=[\s\"'”’)\]]|$)|[;:,()\[\]]|(?<=\s)[-–—](?=\s)|[–—])"
)
NUM_RE = re.compile(_NUM)


def parse_number(s: str) -> float:
    return float(s.replace(",", "").replace("−", "-"))


def exact_reading(v: float) -> tuple[tuple[float, float], ...]:
    return ((v, v),)


def time_readings(base: float, unit: Unit) -> tuple[tuple[float, float], ...]:
    """Seconds; calendar units become day ranges (a month is 28-31 days, a year 365-366)."""
    if unit.dim != "cal":
        return exact_reading(base * unit.factor)
    months = base * unit.factor
    years = math.floor(months / 12 + 1e-9)
    rest = months - 12 * years
    return (((years * 365 + rest * 28) * 86400.0, (years * 366 + rest * 31) * 86400.0),)


def size_readings(base: float, unit: Unit) -> tuple[tuple[float, float], ...]:
    """Bytes. KB/MB/GB/TB read both as powers of 1000 and of 1024 (operational text uses both);
    KiB/MiB/GiB are strictly binary."""
    v = base * unit.factor
    if unit.power > 0 and "i" not in unit.name:
        alt = base * 1024.0**unit.power
        return ((v, v), (alt, alt))
    return exact_reading(v)


def word_key(low: str) -> str:
    """Comparison key of a content word: stem, then synonym group."""
    st = stem(low)
    return SYNONYMS.get(st, st)


#: the nouns of a measure whose adjective shares their synonym group ("wide" / "width", "deep" / "depth")
DIMENSION_NOUNS = frozenset(["width", "length", "height", "depth", "weight"])


def sentence_spans(toks: Sequence[Token]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``toks``: the runs between sentence breaks (a break in neither)."""
    first = 0
    for end in range(len(toks) + 1):
        if end < len(toks) and not (toks[end].kind == BREAK and toks[end].key == "sent"):
            continue
        yield first, end
        first = end + 1


def measured_things(toks: tuple[Token, ...]) -> tuple[Token, ...]:
    """The tokens with each measure's adjective that stands in a sentence beside the measure's own noun keyed by its
    own stem: it names which thing is measured, not the measure ("the width of a wide tree": the width, of the
    tree called wide), while alone it states the measure ("the tree is 2 m wide")."""
    out = list(toks)
    for first, end in sentence_spans(toks):
        span = toks[first:end]
        nouns = {t.key for t in span if t.kind == WORD and t.key in DIMENSION_NOUNS and stem(t.text.lower()) == t.key}
        for k, t in enumerate(span, first):
            if t.key in nouns and t.kind == WORD and stem(t.text.lower()) != t.key:
                out[k] = t._replace(key=stem(t.text.lower()))
    return tuple(out)


def is_common_word(low: str) -> bool:
    """Is ``low`` an ordinary English word (common word list, function word, unit, ...)?"""
    return _is_common(low)


def _is_common(low: str) -> bool:
    """An ordinary English word (a capitalised sentence-initial word that is not a name)."""
    if low in COMMON_WORDS or low in FUNCTION_WORDS or low in POLARITY or low in NUMBER_WORDS or low in UNITS:
        return True
    if stem(low) in COMMON_STEMS or (low.endswith("s") and low[:-1] in COMMON_WORDS):
        return True
    return low.endswith(COMMON_SUFFIXES) and len(low) > 4


def entity_sub(s: str, low: str, sent_start: bool, poss: bool) -> str:
    """Which kind of entity a word is ("" = not an entity): a lexicon name, an identifier, an
    acronym, a proper noun (capitalised inside a sentence), or a capitalised sentence-initial word
    that is no common English word ("weak")."""
    lex = ENTITY_LEXICON.get(low)
    if lex is not None and (lex.any_case or s[0].isupper()):
        return "lex"
    if low in ABBREVIATIONS and not s[0].isupper():
        return ""  # "e.g", "i.e" (a capitalised "Corp", "Inc" is part of a name)
    if is_identifier(s):
        return "ident"
    letters = [c for c in s if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return "acro" if low not in UNITS or not UNITS[low].spaced else ""  # "US": "us" is a unit only glued
    if not s[0].isupper():
        return "name" if any(c.isupper() for c in s[1:]) else ""  # "eBPF", "iPhone"
    if any(c.isupper() for c in s[1:]):
        return "name"  # "PostgreSQL", "HireSignal"
    if not sent_start:
        return "name" if len(s) > 1 else ""
    if poss:
        return "name"  # "Lumen's standard price ..."
    return "" if _is_common(low) else "weak"


def entity_key(low: str, sub: str) -> str:
    nuclide = nuclide_key(low) if sub in ("ident", "name") else ""
    if nuclide:
        return nuclide  # "I-131" = "Iodine-131" = "131I"
    if sub == "lex":
        return stem(ENTITY_LEXICON[low].canonical)  # keyed like a name, so "Welsh" (-> wales) meets "Wales"
    if sub in ("name", "weak"):
        return stem(low)
    return low

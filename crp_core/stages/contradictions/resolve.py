"""Stage 4: contradiction detection and Fact Authority Resolution (SPEC-027 §2, SPEC_NOTES §2.6).

* :func:`values_conflict` compares two texts token by token (SPEC-005 §5.3 distortion patterns,
  applied pairwise) and names the value(s) that changed, with character spans for highlighting.
* :func:`authority_of` is SPEC-027 §2.3: ``source_authority * recency_factor * importance_weight``.
* :func:`resolve_contradictions` arbitrates the conflicting pairs of an envelope's selected facts,
  applies SPEC-003 §6.6 dedup to the pairs that do not conflict, and backfills suppressed slots.
* :func:`scan_ckf` runs the same check over the whole CKF (HNSW neighbours, never all n^2 pairs).

Everything here is pure: no I/O, every constant from :class:`~crp_core.config.CRPConfig`.
"""
from __future__ import annotations

import difflib
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from crp_core.config import CRPConfig
from crp_core.model import Fact
from crp_core.records import (AuditEvent, Authority, ConflictPair, Resolution, ValueConflict, ValueDiff,
                      frozen_array)

NUMBER_CHANGED = "NUMBER_CHANGED"
ENTITY_SUBSTITUTED = "ENTITY_SUBSTITUTED"
NEGATION_FLIP = "NEGATION_FLIP"
DATE_SHIFTED = "DATE_SHIFTED"
MAGNITUDE_ALTERED = "MAGNITUDE_ALTERED"
PATTERNS: tuple[str, ...] = (DATE_SHIFTED, ENTITY_SUBSTITUTED, MAGNITUDE_ALTERED, NEGATION_FLIP,
                             NUMBER_CHANGED)
EVENT_RESOLVED = "CONTRADICTION_RESOLVED"
EVENT_DISMISSED = "CONTRADICTION_DISMISSED"
DECISION_KINDS = ("dismiss", "override", "accept")

#: the NOTE block of SPEC-027 §2.5 (two header lines, then one indented line per fact)
NOTE_HEADER = ("NOTE: The following two facts conflict and could not be automatically\n"
               "arbitrated. Treat with caution and prefer the more specific:")

# ================================================================================================
# Tokeniser: tokens keep their character spans; each carries a normalised key for alignment
# ================================================================================================

#: a year is a bare 4-digit integer in this range (SPEC_NOTES §2.6)
YEAR_MIN, YEAR_MAX = 1900, 2099

_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100,
}
_SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
                "thousands": 1e3, "millions": 1e6, "billions": 1e9, "trillions": 1e12}
_SCALE_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "bn": 1e9, "T": 1e12}
#: multiplier words (MAGNITUDE_ALTERED): value of the factor
_MULT_WORDS = {"twice": 2.0, "double": 2.0, "doubled": 2.0, "doubles": 2.0, "triple": 3.0,
               "tripled": 3.0, "triples": 3.0, "thrice": 3.0, "quadruple": 4.0, "quadrupled": 4.0,
               "half": 0.5, "halved": 0.5, "halves": 0.5}
_PERCENT_WORDS = {"percent", "per cent", "pct", "percentage"}
#: units merged into the preceding number (canonical unit); glued single letters only when glued
_UNITS = {
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms", "msec": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d", "w": "w", "wk": "w", "week": "w", "weeks": "w",
    "mo": "mo", "month": "mo", "months": "mo", "y": "y", "yr": "y", "yrs": "y", "year": "y", "years": "y",
    "b": "byte", "byte": "byte", "bytes": "byte", "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "pb": "pb",
    "kib": "kib", "mib": "mib", "gib": "gib", "tib": "tib", "bit": "bit", "bits": "bit",
    "kbps": "kbps", "mbps": "mbps", "gbps": "gbps", "hz": "hz", "khz": "khz", "mhz": "mhz", "ghz": "ghz",
    "rpm": "rpm", "rps": "rps", "qps": "qps", "ns": "ns", "us": "us", "µs": "us",
    "m": "min",  # glued only ("5m"); a spaced "m" is a word
}
#: units accepted after a space (single letters are too ambiguous there)
_SPACED_UNITS = {u for u in _UNITS if len(u) > 1 and u not in ("us",)}
_ORDINAL = re.compile(r"^(st|nd|rd|th)$")
_CURRENCY = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
#: "N times" is a multiplier before these words ("3 times faster"), else a count ("retries 3 times")
_COMPARATIVE_NEXT = {"more", "less", "fewer", "as", "the", "larger", "smaller", "faster", "slower",
                     "higher", "lower", "bigger", "greater", "longer", "shorter", "cheaper"}
#: negation cues (SPEC-005 §5.3 NEGATION_FLIP); contractions are split into verb + "not"
NEGATIONS = frozenset({"not", "no", "never", "none", "neither", "nor", "without", "nobody", "nothing",
                       "nowhere"})
_NEG_CONTRACTIONS = {"can't": ("can", "not"), "cannot": ("can", "not"), "won't": ("will", "not"),
                     "shan't": ("shall", "not"), "ain't": ("is", "not")}
#: idioms whose negation word negates nothing ("not only ... but also", "no matter")
_NEG_IDIOM_NEXT = {"not": {"only"}, "no": {"matter", "doubt"}}
#: antonym pairs that flip an assertion without a negation word (compared on stems)
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("enabled", "disabled"), ("enable", "disable"), ("allowed", "denied"), ("allow", "deny"),
    ("allowed", "forbidden"), ("permitted", "prohibited"), ("supported", "unsupported"),
    ("required", "optional"), ("mandatory", "optional"), ("true", "false"), ("include", "exclude"),
    ("included", "excluded"), ("accept", "reject"), ("accepted", "rejected"), ("public", "private"),
    ("synchronous", "asynchronous"), ("sync", "async"), ("increase", "decrease"),
    ("increased", "decreased"), ("before", "after"), ("minimum", "maximum"), ("min", "max"),
    ("more", "less"), ("more", "fewer"), ("higher", "lower"), ("above", "below"),
    ("encrypted", "unencrypted"), ("secure", "insecure"), ("valid", "invalid"),
    ("available", "unavailable"), ("stateful", "stateless"), ("always", "never"),
)
#: lower-case words that are never entities even when capitalised at a sentence start
_COMMON = frozenset("""
a an the this that these those it its it's they them their there here he she we you i our your his her
is are was were be been being am do does did done has have had having can could will would shall should
may might must of in on at to for from by with about as into onto over under after before between through
during without within and or but nor so yet if then else when while where which who whom whose what why how
all any both each every few many more most much other some such no not only own same than too very just
also however therefore thus hence since because although though unless until once again further each
use uses used using set sets run runs running make makes see note new old default defaults
by per via vs versus etc e.g i.e ie eg
""".split())
#: identifier-like words that are abbreviations, not identifiers
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "a.m", "p.m", "vs", "cf", "viz", "approx"})
_STOP_FOR_SCOPE = frozenset("""
a an the be is are was were been being am do does did to have has had any anymore longer
""".split())

_NUM = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
_TOKEN_RE = re.compile(
    r"(?P<url>https?://[^\s<>\"')\]]+[^\s<>\"').,;:!?\]])"
    r"|(?P<flag>(?<![\w-])--?[A-Za-z][\w-]*(?:=[\w./:-]+)?)"
    r"|(?P<path>(?<![\w/])(?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]+)*/?)"
    r"|(?P<isodate>(?<![\w.-])\d{4}-\d{1,2}(?:-\d{1,2})?(?![\w-]|\.\d))"
    r"|(?P<slashdate>(?<![\w/])\d{1,2}/\d{1,2}/\d{4}(?![\w/]))"
    r"|(?P<version>(?<![\w.])(?:[vV]\d+(?:\.(?:\d+|[xX*]))*|\d+\.\d+\.(?:\d+|[xX*])(?:\.(?:\d+|[xX*]))*"
    r"|\d+(?:\.\d+)?\.[xX*])(?![\w]|\.\d))"
    r"|(?P<money>[$€£¥]\s?" + _NUM + r"(?:\s?(?:bn|[kKMBT])(?![\w]))?)"
    r"|(?P<numword>(?<![\w.])" + _NUM + r"[A-Za-zµ]+(?:[\w.]*\w)?)"
    r"|(?P<number>(?<![\w.])[-+−]?" + _NUM + r"(?![\w]))"
    r"|(?P<pct>%)"
    r"|(?P<times>×)"
    r"|(?P<word>[A-Za-z_][\w]*(?:[-'’./][\w]+)*)"
    r"|(?P<stop>[.!?;:]+(?=\s|$)|\n)"
)


class Token(NamedTuple):
    """One token of a text: surface text, character span, kind and comparison data (a NamedTuple:
    tokenising is on the scan's hot path and tuples are much cheaper to build than dataclasses)."""

    text: str
    start: int
    end: int
    kind: str  # word | entity | number | magnitude | scale | month | negation
    key: str  # alignment key (normalised)
    value: float | None = None  # numbers: full value (scale applied); magnitudes: the factor / percent
    unit: str = ""  # numbers: canonical unit or currency; magnitudes: "pct" | "x"
    scale: float = 1.0
    datepart: bool = False  # a year, a month or a day of a date
    low: str = ""  # lower-case surface (entity matching)


def _fmt(v: float) -> str:
    return format(v, ".12g")


@lru_cache(maxsize=262144)
def _stem(w: str) -> str:
    """A tiny suffix stripper so that inflections align (uses/use, listens/listen, caches/cache)."""
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("es") and not w.endswith(("ses", "ies")):
        w = w[:-2]
    elif len(w) > 4 and w.endswith("sses"):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 3 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 2 and w.endswith("e"):
        w = w[:-1]
    return w


def _num_value(s: str) -> float:
    s = s.replace(",", "").replace("−", "-").replace(" ", "")
    return float(s)


_IDENT_CHARS = re.compile(r"[\d_./]")


@lru_cache(maxsize=262144)
def _is_identifier(w: str) -> bool:
    """Code-like: digits mixed with letters, or dots / underscores / slashes inside the word."""
    if w.lower() in _ABBREVIATIONS:
        return False
    return _IDENT_CHARS.search(w) is not None


@lru_cache(maxsize=262144)
def _is_entity_word(w: str, sentence_start: bool) -> bool:
    """Proper noun / acronym / identifier (ENTITY_SUBSTITUTED candidates)."""
    if _is_identifier(w):
        return True
    low = w.lower()
    if len(w) == 1:
        return w.isupper() and low not in _COMMON  # "X" is a name, "A" / "I" are not
    if w.isupper() and sum(1 for c in w if c.isalpha()) >= 2:
        return low not in _SPACED_UNITS  # "NIST", "TLS"; not units like "MB"
    rest = w[1:]
    if rest != rest.lower():
        return True  # "PostgreSQL", "eBPF", "iPhone"
    if w[0].isupper():
        return not sentence_start or low not in _COMMON
    return False


@lru_cache(maxsize=262144)
def tokenize(text: str) -> tuple[Token, ...]:
    """Tokens of ``text`` with character spans (numbers, dates, percentages, multipliers, money,
    versions, identifiers, negations, words). Punctuation is dropped."""
    raw: list[tuple[str, str, int, int]] = []  # (group, surface, start, end)
    for m in _TOKEN_RE.finditer(text):
        raw.append((m.lastgroup or "", m.group(), m.start(), m.end()))
    toks: list[Token] = []
    sentence_start = True
    i = 0
    n = len(raw)

    def next_word(j: int) -> str:
        return raw[j][1].lower() if j < n and raw[j][0] == "word" else ""

    while i < n:
        grp, s, a, b = raw[i]
        if grp == "stop":
            sentence_start = True
            i += 1
            continue
        if grp in ("url", "flag", "path", "version"):
            toks.append(Token(s, a, b, "entity", "id:" + s.lower(), low=s.lower()))
        elif grp == "isodate":
            parts = [int(p) for p in s.split("-")]
            y, mo = parts[0], parts[1]
            d = parts[2] if len(parts) == 3 else None
            if 1 <= mo <= 12 and (d is None or 1 <= d <= 31):
                toks.append(Token(s, a, b, "number", "num:" + _fmt(y), float(y), datepart=True, low=str(y)))
                toks.append(Token(s, a, b, "month", f"month:{mo}", float(mo), datepart=True, low=s))
                if d is not None:
                    toks.append(Token(s, a, b, "number", "num:" + _fmt(d), float(d), datepart=True, low=str(d)))
            else:  # not a date: plain numbers
                for pm in re.finditer(r"\d+", s):
                    v = float(pm.group())
                    toks.append(Token(pm.group(), a + pm.start(), a + pm.end(), "number", "num:" + _fmt(v), v,
                                      low=pm.group()))
        elif grp == "slashdate":
            p1, p2, y = (int(p) for p in s.split("/"))
            toks.append(Token(s, a, b, "number", "num:" + _fmt(p1), float(p1), datepart=True, low=str(p1)))
            toks.append(Token(s, a, b, "number", "num:" + _fmt(p2), float(p2), datepart=True, low=str(p2)))
            toks.append(Token(s, a, b, "number", "num:" + _fmt(y), float(y), datepart=True, low=str(y)))
        elif grp == "money":
            sym = s[0]
            body = s[1:].strip()
            mm = re.match(_NUM, body)
            base = _num_value(mm.group()) if mm else 0.0
            suffix = body[mm.end():].strip() if mm else ""
            scale = _SCALE_SUFFIX.get(suffix, 1.0)
            j, b2 = i + 1, b
            if scale == 1.0 and next_word(j) in _SCALE_WORDS:
                scale, b2 = _SCALE_WORDS[next_word(j)], raw[j][3]
                j += 1
            cur = _CURRENCY[sym]
            toks.append(Token(text[a:b2], a, b2, "number", f"num:{_fmt(base * scale)}:{cur}", base * scale,
                              unit=cur, scale=scale, low=text[a:b2].lower()))
            i = j
            sentence_start = False
            continue
        elif grp == "numword":  # a number glued to letters: unit, scale, ordinal, multiplier, or identifier
            mm = re.match(_NUM, s)
            assert mm is not None
            base = _num_value(mm.group())
            suf = s[mm.end():]
            if suf in ("x", "X"):
                toks.append(Token(s, a, b, "magnitude", "x:" + _fmt(base), base, unit="x", low=s.lower()))
            elif suf in _SCALE_SUFFIX:
                v = base * _SCALE_SUFFIX[suf]
                toks.append(Token(s, a, b, "number", "num:" + _fmt(v), v, scale=_SCALE_SUFFIX[suf], low=s.lower()))
            elif _ORDINAL.match(suf.lower()):
                toks.append(Token(s, a, b, "number", "num:" + _fmt(base), base, low=s.lower()))
            elif suf.lower() in _UNITS:
                u = _UNITS[suf.lower()]
                toks.append(Token(s, a, b, "number", f"num:{_fmt(base)}:{u}", base, unit=u, low=s.lower()))
            else:
                toks.append(Token(s, a, b, "entity", "id:" + s.lower(), low=s.lower()))
        elif grp == "number":
            base = _num_value(s)
            j, b2 = i + 1, b
            nxt = raw[j] if j < n else None
            tok: Token | None = None
            if nxt is not None and nxt[0] == "pct" and nxt[2] - b <= 1:
                tok = Token(text[a:nxt[3]], a, nxt[3], "magnitude", "pct:" + _fmt(base), base, unit="pct")
                j += 1
            elif nxt is not None and nxt[0] == "times" and nxt[2] - b <= 1:
                tok = Token(text[a:nxt[3]], a, nxt[3], "magnitude", "x:" + _fmt(base), base, unit="x")
                j += 1
            elif next_word(j) in _PERCENT_WORDS:
                tok = Token(text[a:raw[j][3]], a, raw[j][3], "magnitude", "pct:" + _fmt(base), base, unit="pct")
                j += 1
            elif next_word(j) == "per" and next_word(j + 1) == "cent":
                tok = Token(text[a:raw[j + 1][3]], a, raw[j + 1][3], "magnitude", "pct:" + _fmt(base), base,
                            unit="pct")
                j += 2
            elif next_word(j) == "times" and (next_word(j + 1) in _COMPARATIVE_NEXT
                                              or next_word(j + 1).endswith("er")):
                tok = Token(text[a:raw[j][3]], a, raw[j][3], "magnitude", "x:" + _fmt(base), base, unit="x")
                j += 1
            elif next_word(j) in _SCALE_WORDS:
                sc = _SCALE_WORDS[next_word(j)]
                tok = Token(text[a:raw[j][3]], a, raw[j][3], "number", "num:" + _fmt(base * sc), base * sc,
                            scale=sc)
                j += 1
            elif next_word(j) in _SPACED_UNITS:
                u = _UNITS[next_word(j)]
                tok = Token(text[a:raw[j][3]], a, raw[j][3], "number", f"num:{_fmt(base)}:{u}", base, unit=u)
                j += 1
            if tok is None:
                is_year = (re.fullmatch(r"\d{4}", s) is not None and YEAR_MIN <= base <= YEAR_MAX)
                tok = Token(s, a, b, "number", "num:" + _fmt(base), base, datepart=is_year)
            toks.append(Token(tok.text, tok.start, tok.end, tok.kind, tok.key, tok.value, tok.unit, tok.scale,
                              tok.datepart, tok.text.lower()))
            i = j
            sentence_start = False
            continue
        elif grp in ("pct", "times"):
            pass  # stray symbol
        elif grp == "word":
            low = s.lower().replace("’", "'")
            if low.endswith("'s"):
                low = low[:-2]
            if low in _NEG_CONTRACTIONS:
                v, _neg = _NEG_CONTRACTIONS[low]
                toks.append(Token(s, a, b, "word", _stem(v), low=v))
                toks.append(Token(s, a, b, "negation", "not", low="not"))
            elif low.endswith("n't"):
                toks.append(Token(s, a, b, "word", _stem(low[:-3]), low=low[:-3]))
                toks.append(Token(s, a, b, "negation", "not", low="not"))
            elif low in NEGATIONS and low not in ("no", "not") or (
                    low in ("no", "not") and next_word(i + 1) not in _NEG_IDIOM_NEXT.get(low, ())):
                toks.append(Token(s, a, b, "negation", "not" if low != "without" else "without", low=low))
            elif low in _NUMBER_WORDS and next_word(i + 1) in _PERCENT_WORDS:
                v = float(_NUMBER_WORDS[low])
                toks.append(Token(text[a:raw[i + 1][3]], a, raw[i + 1][3], "magnitude", "pct:" + _fmt(v), v,
                                  unit="pct", low=text[a:raw[i + 1][3]].lower()))
                i += 2
                sentence_start = False
                continue
            elif low in _NUMBER_WORDS and next_word(i + 1) == "times" and (
                    next_word(i + 2) in _COMPARATIVE_NEXT or next_word(i + 2).endswith("er")):
                v = float(_NUMBER_WORDS[low])
                toks.append(Token(text[a:raw[i + 1][3]], a, raw[i + 1][3], "magnitude", "x:" + _fmt(v), v,
                                  unit="x", low=text[a:raw[i + 1][3]].lower()))
                i += 2
                sentence_start = False
                continue
            elif low in _NUMBER_WORDS:
                v = float(_NUMBER_WORDS[low])
                if next_word(i + 1) in _SPACED_UNITS:
                    u = _UNITS[next_word(i + 1)]
                    toks.append(Token(text[a:raw[i + 1][3]], a, raw[i + 1][3], "number", f"num:{_fmt(v)}:{u}", v,
                                      unit=u, low=text[a:raw[i + 1][3]].lower()))
                    i += 2
                    sentence_start = False
                    continue
                toks.append(Token(s, a, b, "number", "num:" + _fmt(v), v, low=low))
            elif low in _MULT_WORDS:
                v = _MULT_WORDS[low]
                toks.append(Token(s, a, b, "magnitude", "x:" + _fmt(v), v, unit="x", low=low))
            elif low in _SCALE_WORDS:
                toks.append(Token(s, a, b, "scale", "scale:" + _fmt(_SCALE_WORDS[low]), _SCALE_WORDS[low], low=low))
            elif low in _MONTHS and s[0].isupper() and (low != "may" or _near_number(raw, i)) and (
                    len(low) > 3 or _near_number(raw, i) or low in ("june", "july")):
                toks.append(Token(s, a, b, "month", f"month:{_MONTHS[low]}", float(_MONTHS[low]), datepart=True,
                                  low=low))
            elif _is_entity_word(s, sentence_start):
                key = low if _is_identifier(s) else _stem(low)  # "Pods" = "Pod"; "v3.5" exact
                toks.append(Token(s, a, b, "entity", key, low=low))
            else:
                toks.append(Token(s, a, b, "word", _stem(low), low=low))
        sentence_start = False
        i += 1
    _mark_days(toks)
    return tuple(toks)


def _near_number(raw: list[tuple[str, str, int, int]], i: int) -> bool:
    for j in (i - 1, i + 1):
        if 0 <= j < len(raw) and raw[j][0] in ("number", "numword"):
            return True
    return False


def _mark_days(toks: list[Token]) -> None:
    """A number 1-31 right next to a month name is the day of a date ("March 5", "5th of May")."""
    for k, t in enumerate(toks):
        if t.kind != "month":
            continue
        for j in (k - 1, k + 1, k - 2, k + 2):
            if not 0 <= j < len(toks):
                continue
            u = toks[j]
            if abs(j - k) == 2 and toks[(j + k) // 2].low not in ("of", "the"):
                continue
            if u.kind == "number" and not u.unit and u.value is not None and not u.datepart:
                if 1 <= u.value <= 31 and float(u.value).is_integer():
                    toks[j] = u._replace(datepart=True)
                    break


# ================================================================================================
# values_conflict
# ================================================================================================

_VALUE_KINDS = ("number", "magnitude", "scale", "month", "entity")


def _pair_class(t: Token) -> str:
    return {"number": "numeric", "magnitude": "magnitude", "scale": "magnitude", "month": "month",
            "entity": "entity"}[t.kind]


def _numeric_pattern(a: Token, b: Token) -> str | None:
    """The pattern of two aligned numeric tokens, or None when they state the same value."""
    if a.value == b.value and a.unit == b.unit:
        return None
    if a.datepart and b.datepart:
        return DATE_SHIFTED
    if a.unit != b.unit and a.value == b.value and a.unit in _CURRENCY.values() and b.unit in _CURRENCY.values():
        return ENTITY_SUBSTITUTED  # same amount, another currency
    if a.scale != b.scale and a.unit == b.unit:
        return MAGNITUDE_ALTERED  # "$4.2M" vs "$4.2B", "5 million" vs "5 billion"
    return NUMBER_CHANGED


def _diff_pattern(a: Token, b: Token) -> str | None:
    cls = _pair_class(a)
    if cls == "numeric":
        return _numeric_pattern(a, b)
    if cls == "magnitude":
        return None if a.key == b.key else MAGNITUDE_ALTERED
    if cls == "month":
        return None if a.key == b.key else DATE_SHIFTED
    return None if a.key == b.key else ENTITY_SUBSTITUTED


def _span(toks: Sequence[Token]) -> tuple[int, int]:
    return (min(t.start for t in toks), max(t.end for t in toks))


def _global_match(ta: Sequence[Token], tb: Sequence[Token]) -> tuple[set[int], set[int]]:
    """Value tokens present on both sides (any position) are not changes: match them as multisets.

    Entities also match a same-spelled plain word on the other side ("Etcd" at a sentence start).
    """
    matched_a: set[int] = set()
    matched_b: set[int] = set()

    def keyset(t: Token) -> str:
        return "e:" + t.key if t.kind == "entity" else t.key

    pool: dict[str, list[int]] = {}
    for j, t in enumerate(tb):
        if t.kind in _VALUE_KINDS:
            pool.setdefault(keyset(t), []).append(j)
    for i, t in enumerate(ta):
        if t.kind in _VALUE_KINDS:
            lst = pool.get(keyset(t))
            if lst:
                matched_a.add(i)
                matched_b.add(lst.pop(0))
    # entities against plain words of the other side (case differences at sentence starts)
    words_b: dict[str, list[int]] = {}
    for j, t in enumerate(tb):
        if j not in matched_b and t.kind in ("word", "entity"):
            words_b.setdefault(t.low, []).append(j)
    for i, t in enumerate(ta):
        if i not in matched_a and t.kind == "entity":
            lst = words_b.get(t.low)
            if lst:
                matched_a.add(i)
                matched_b.add(lst.pop(0))
    words_a: dict[str, list[int]] = {}
    for i, t in enumerate(ta):
        if i not in matched_a and t.kind in ("word", "entity"):
            words_a.setdefault(t.low, []).append(i)
    for j, t in enumerate(tb):
        if j not in matched_b and t.kind == "entity":
            lst = words_a.get(t.low)
            if lst:
                matched_b.add(j)
                matched_a.add(lst.pop(0))
    return matched_a, matched_b


@lru_cache(maxsize=65536)
def values_conflict(text_a: str, text_b: str) -> ValueConflict | None:
    """Do two texts assert different values for the same thing? (SPEC-027 §2.2, SPEC-005 §5.3).

    Both texts are tokenised (spans kept) and aligned with ``difflib.SequenceMatcher`` on the
    normalised tokens. Value tokens present on both sides in any position are not changes.
    The remaining value tokens are paired inside each non-equal opcode by class (numbers, dates,
    magnitudes, entities); numbers, dates and magnitudes left over are then paired across the
    texts (word order may differ). Negation is a flip when the negation counts differ and the
    unmatched negation governs an aligned word; explicit antonym pairs flip too. Returns None for
    a paraphrase with no changed value. Memoised: a pure function of the two texts returning an
    immutable record (the pipeline re-checks the same pairs on every rerun).
    """
    if text_a == text_b:
        return None
    ta, tb = tokenize(text_a), tokenize(text_b)
    if not ta or not tb:
        return None
    matched_a, matched_b = _global_match(ta, tb)
    sm = difflib.SequenceMatcher(None, [t.key for t in ta], [t.key for t in tb], autojunk=False)
    opcodes = sm.get_opcodes()
    diffs: list[ValueDiff] = []
    left_a: dict[str, list[int]] = {}
    left_b: dict[str, list[int]] = {}
    aligned_a: set[int] = set()
    aligned_b: set[int] = set()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            aligned_a.update(range(i1, i2))
            aligned_b.update(range(j1, j2))
            continue
        ua: dict[str, list[int]] = {}
        ub: dict[str, list[int]] = {}
        for i in range(i1, i2):
            if ta[i].kind in _VALUE_KINDS and i not in matched_a:
                ua.setdefault(_pair_class(ta[i]), []).append(i)
        for j in range(j1, j2):
            if tb[j].kind in _VALUE_KINDS and j not in matched_b:
                ub.setdefault(_pair_class(tb[j]), []).append(j)
        for cls in sorted(set(ua) | set(ub)):
            la, lb = ua.get(cls, []), ub.get(cls, [])
            if cls == "entity":
                # entities pair only in place (a paraphrase may name more things elsewhere); a
                # multi-word name is one substitution ("Cloud Native Computing Foundation" -> "Apache ...")
                if la and lb:
                    xa, xb = [ta[i] for i in la], [tb[j] for j in lb]
                    diffs.append(ValueDiff(ENTITY_SUBSTITUTED, tuple(t.text for t in xa), tuple(t.text for t in xb),
                                           _span(xa), _span(xb)))
                continue
            for i, j in zip(la, lb):
                _add_value_diff(diffs, ta[i], tb[j])
            left_a.setdefault(cls, []).extend(la[len(lb):])
            left_b.setdefault(cls, []).extend(lb[len(la):])
        # antonym pairs inside the opcode
        _antonym_diffs(diffs, ta, tb, range(i1, i2), range(j1, j2))
    # leftovers across the texts (reordered sentences): same class, and for numbers the same
    # sub-class (date part or not, same unit) - a year is never paired with a version number here
    for cls in sorted(set(left_a) & set(left_b)):
        groups_a: dict[tuple, list[int]] = {}
        groups_b: dict[tuple, list[int]] = {}
        for i in sorted(left_a[cls]):
            groups_a.setdefault(_subclass(ta[i]), []).append(i)
        for j in sorted(left_b[cls]):
            groups_b.setdefault(_subclass(tb[j]), []).append(j)
        for sub in sorted(set(groups_a) & set(groups_b)):
            for i, j in zip(groups_a[sub], groups_b[sub]):
                _add_value_diff(diffs, ta[i], tb[j])
    _negation_diffs(diffs, ta, tb, opcodes, aligned_a, aligned_b, text_a, text_b)
    if not diffs:
        return None
    diffs.sort(key=lambda d: (d.span_a, d.span_b, d.pattern))
    uniq: list[ValueDiff] = []
    for d in diffs:
        if not uniq or uniq[-1] != d:
            uniq.append(d)
    return ValueConflict(patterns=tuple(sorted({d.pattern for d in uniq})), diffs=tuple(uniq))


def _subclass(t: Token) -> tuple:
    if t.kind == "number":
        return (t.datepart, t.unit)
    return (t.kind, t.unit)


def _add_value_diff(diffs: list[ValueDiff], a: Token, b: Token) -> None:
    pattern = _diff_pattern(a, b)
    if pattern is not None:
        diffs.append(ValueDiff(pattern, (a.text,), (b.text,), (a.start, a.end), (b.start, b.end)))


_ANTONYM_MAP: dict[str, set[str]] = {}
for _x, _y in ANTONYMS:
    _ANTONYM_MAP.setdefault(_stem(_x), set()).add(_stem(_y))
    _ANTONYM_MAP.setdefault(_stem(_y), set()).add(_stem(_x))


def _antonym_diffs(diffs: list[ValueDiff], ta: Sequence[Token], tb: Sequence[Token],
                   ra: Iterable[int], rb: Iterable[int]) -> None:
    rb = list(rb)
    used: set[int] = set()
    for i in ra:
        if ta[i].kind != "word":
            continue
        opp = _ANTONYM_MAP.get(ta[i].key)
        if not opp:
            continue
        for j in rb:
            if j not in used and tb[j].kind == "word" and tb[j].key in opp:
                used.add(j)
                diffs.append(ValueDiff(NEGATION_FLIP, (ta[i].text,), (tb[j].text,),
                                       (ta[i].start, ta[i].end), (tb[j].start, tb[j].end)))
                break


def _scope_aligned(toks: Sequence[Token], k: int, aligned: set[int]) -> bool:
    """Does the negation at ``k`` govern a word that is aligned with the other text?"""
    for j in range(k + 1, len(toks)):
        t = toks[j]
        if t.kind == "negation" or t.low in _STOP_FOR_SCOPE:
            continue
        return j in aligned
    return False


def _negation_diffs(diffs: list[ValueDiff], ta: Sequence[Token], tb: Sequence[Token],
                    opcodes: list[tuple[str, int, int, int, int]], aligned_a: set[int], aligned_b: set[int],
                    text_a: str, text_b: str) -> None:
    na = sum(1 for t in ta if t.kind == "negation")
    nb = sum(1 for t in tb if t.kind == "negation")
    if na == nb:
        return  # same number of negations: a moved negation is a paraphrase
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        neg_a = [i for i in range(i1, i2) if ta[i].kind == "negation"]
        neg_b = [j for j in range(j1, j2) if tb[j].kind == "negation"]
        # negations on both sides of the opcode cancel pairwise
        extra_a, extra_b = neg_a[len(neg_b):], neg_b[len(neg_a):]
        if na > nb:
            for i in extra_a:
                if _scope_aligned(ta, i, aligned_a):
                    pos = _insertion_point(tb, j1, len(text_b))
                    diffs.append(ValueDiff(NEGATION_FLIP, (ta[i].text,), (), (ta[i].start, ta[i].end), (pos, pos)))
        else:
            for j in extra_b:
                if _scope_aligned(tb, j, aligned_b):
                    pos = _insertion_point(ta, i1, len(text_a))
                    diffs.append(ValueDiff(NEGATION_FLIP, (), (tb[j].text,), (pos, pos), (tb[j].start, tb[j].end)))


def _insertion_point(toks: Sequence[Token], k: int, length: int) -> int:
    """Character position where the other side's negation would sit (zero-width span)."""
    if k < len(toks):
        return toks[k].start
    return toks[-1].end if toks else length


# ================================================================================================
# Authority (SPEC-027 §2.3)
# ================================================================================================

def authority_of(fact: Fact, recency_factor: float, config: CRPConfig) -> Authority:
    """``authority = source_authority_weight * recency_factor * importance_weight`` (SPEC-027 §2.3).

    Source authority comes from ``config.source_authority[source_type]``; importance is the fact's
    explicit ``importance_weight`` or ``config.importance[source_type]`` (SPEC-009 §4.4).
    """
    source_authority = float(config.source_authority[fact.source_type])  # type: ignore[arg-type]
    importance = (float(fact.importance_weight) if fact.importance_weight is not None
                  else float(config.importance[fact.source_type]))  # type: ignore[arg-type]
    recency = float(recency_factor)
    return Authority(fact_id=fact.fact_id, source_type=fact.source_type, source_authority=source_authority,
                     recency_factor=recency, importance_weight=importance,
                     authority=source_authority * recency * importance)


def authority_dict(a: Authority) -> dict[str, Any]:
    """The SPEC_NOTES §4 shape of one fact's authority components."""
    return {"source_type": a.source_type, "source_authority": a.source_authority,
            "recency_factor": a.recency_factor, "importance_weight": a.importance_weight,
            "authority": a.authority}


def _recency_factors(corpus: Any, rows: np.ndarray, recency: Any, now: datetime | None,
                     config: CRPConfig) -> dict[int, float]:
    """row -> recency factor, from the pipeline's RecencyTable (or a mapping); rows it lacks are
    computed with :func:`crp_core.factors.recency.compute_recency` at ``now``."""
    out: dict[int, float] = {}
    if recency is not None:
        if isinstance(recency, Mapping):
            out.update({int(k): float(v) for k, v in recency.items()})
        else:
            out.update(zip((int(r) for r in recency.idx), (float(f) for f in recency.factor)))
    missing = np.array(sorted({int(r) for r in rows} - set(out)), dtype=np.int64)
    if missing.size:
        if now is None:
            raise ValueError(f"recency factors missing for {missing.size} fact row(s) and no `now` given "
                             "to compute them")
        from crp_core.factors.recency import compute_recency
        table = compute_recency(corpus.kb, missing, now, config)
        out.update(zip((int(r) for r in table.idx), (float(f) for f in table.factor)))
    return out


# ================================================================================================
# Operator decisions (issue 5)
# ================================================================================================

def pair_key(a: str, b: str) -> str:
    """The triage store's canonical key of the unordered pair {a, b} (``crp_core.triage.store.pair_key``)."""
    from crp_core.triage.store import pair_key as _pk
    return _pk(a, b)


def _decision_for(decisions: Mapping[str, Any] | None, a: str, b: str) -> tuple[str | None, str | None]:
    """(kind, winner) of the operator decision on {a, b}, or (None, None)."""
    if decisions is not None and not isinstance(decisions, Mapping):
        decisions = getattr(decisions, "pair_decisions", None)  # a triage DecisionSet
    if not decisions:
        return None, None
    d = decisions.get(pair_key(a, b))
    if d is None:
        return None, None
    kind = d.get("kind") if isinstance(d, Mapping) else getattr(d, "kind", None)
    winner = d.get("winner") if isinstance(d, Mapping) else getattr(d, "winner", None)
    if kind not in DECISION_KINDS:
        raise ValueError(f"decision on pair {a!r}/{b!r}: unknown kind {kind!r}; expected one of "
                         f"{', '.join(DECISION_KINDS)}")
    if kind == "override" and winner not in (a, b):
        raise ValueError(f"decision on pair {a!r}/{b!r}: override winner {winner!r} is not one of the pair")
    return kind, winner


# ================================================================================================
# Arbitration of one pair
# ================================================================================================

@dataclass(frozen=True)
class _Arbitration:
    kept: tuple[str, ...]
    suppressed: str | None
    tied: bool
    decision: str | None
    dismissed: bool


def _arbitrate(a: Authority, b: Authority, config: CRPConfig, kind: str | None,
               winner: str | None) -> _Arbitration:
    """Higher authority wins; |a1 - a2| <= authority_tie_tolerance is a tie (SPEC-027 §2.3, §2.5).
    An operator ``dismiss`` leaves the pair alone; an ``override`` names the winner."""
    if kind == "dismiss":
        return _Arbitration((a.fact_id, b.fact_id), None, False, "dismiss", True)
    if kind == "override":
        loser = b.fact_id if winner == a.fact_id else a.fact_id
        return _Arbitration((winner,), loser, False, "override", False)  # type: ignore[arg-type]
    if abs(a.authority - b.authority) <= config.authority_tie_tolerance:
        return _Arbitration((a.fact_id, b.fact_id), None, True, kind, False)
    win, lose = (a, b) if a.authority > b.authority else (b, a)
    return _Arbitration((win.fact_id,), lose.fact_id, False, kind, False)


def _conflict_event(pair: ConflictPair, diffs: bool = True, roles: Mapping[str, str] | None = None) -> AuditEvent:
    winner = pair.kept[0] if (pair.suppressed is not None and pair.kept) else None
    data: dict[str, Any] = {
        "fact_a": pair.fact_a, "fact_b": pair.fact_b, "similarity": pair.similarity,
        "patterns": list(pair.patterns),
        "authority": {fid: authority_dict(a) for fid, a in pair.authority.items()},
        "winner": winner, "suppressed": pair.suppressed, "kept": list(pair.kept), "tied": pair.tied,
        "margin": pair.margin, "decision": pair.decision,
    }
    if roles:
        data["roles"] = dict(roles)
    if diffs:
        data["diffs"] = [diff_dict(d) for d in pair.conflict.diffs]
    return AuditEvent(EVENT_DISMISSED if pair.decision == "dismiss" else EVENT_RESOLVED, data)


def diff_dict(d: ValueDiff) -> dict[str, Any]:
    return {"pattern": d.pattern, "tokens_a": list(d.tokens_a), "tokens_b": list(d.tokens_b),
            "span_a": list(d.span_a), "span_b": list(d.span_b)}


def tied_rows(resolution: Resolution, kb: Any) -> tuple[tuple[int, int], ...]:
    """(row_a, row_b) of every tied, arbitrated pair: what the packer needs for NOTE blocks."""
    return tuple((kb.index_of(p.fact_a), kb.index_of(p.fact_b)) for p in resolution.pairs
                 if p.tied and not p.skipped and p.decision != "dismiss")


def note_for(fact_a: Fact, fact_b: Fact) -> str:
    """The SPEC-027 §2.5 NOTE block for a tied pair, in the packer's exact format."""
    from crp_core.stages.packing import note_block
    return note_block(fact_a.content, fact_b.content)


# ================================================================================================
# Stage 4: resolve_contradictions (SPEC_NOTES §2.6)
# ================================================================================================

def _score_of(scores: Any, row: int) -> float:
    try:
        return float(scores[row])
    except (KeyError, IndexError, TypeError):
        return 0.0


def _unique_rows(rows: Iterable[int]) -> np.ndarray:
    seen: dict[int, None] = {}
    for r in rows:
        seen.setdefault(int(r), None)
    return np.fromiter(seen, dtype=np.int64, count=len(seen))


def resolve_contradictions(corpus: Any, selected_rows: Sequence[int] | np.ndarray, roles: Mapping[int, str],
                           scores: Mapping[int, float], ranked_pool: Sequence[int] | np.ndarray, recency: Any,
                           config: CRPConfig, decisions: Mapping[str, Any] | None = None, *,
                           now: datetime | None = None) -> Resolution:
    """Contradiction resolution over the selected facts (SPEC-027 §2, SPEC_NOTES §2.6).

    1. One Gram matrix of the selected vectors; pairs above ``min(contradiction_similarity,
       dedup_similarity)`` go to :func:`values_conflict`.
    2. SPEC-003 §6.6 dedup over the pairs that do NOT value-conflict (cos > dedup_similarity):
       greedy in score order (ties by fact id), the higher score is kept.
    3. Conflicting pairs (cos > contradiction_similarity) among the survivors, ordered by the pair's
       higher authority (descending) then fact ids; a pair with an already-suppressed fact is
       ``skipped``; otherwise the higher authority wins, a tie keeps both (NOTE block), an operator
       decision (``decisions[pair_key]``) dismisses or overrides.
    4. Backfill (``config.backfill``): each loser's slot goes to the next fact of ``ranked_pool``
       that is not selected, conflicts with no kept fact and is no near-duplicate of one.

    ``recency``: the pipeline's RecencyTable (or a row -> factor mapping); rows it lacks are
    computed at ``now``. ``roles`` (row -> "anchor"/"connector") goes into the audit events;
    ``scores`` (row -> CDR or connector score) orders the dedup. ``decisions``: pair key ->
    ``{"kind", "winner"}`` (or a triage ``DecisionSet``).
    """
    kb = corpus.kb
    sel = _unique_rows(selected_rows)
    ids = [kb.facts[int(r)].fact_id for r in sel]
    vecs = np.asarray(corpus.vectors, dtype=np.float32)
    V = vecs[sel]
    G = V @ V.T if sel.size else np.zeros((0, 0), dtype=np.float32)
    low = min(config.contradiction_similarity, config.dedup_similarity)
    iu, ju = np.nonzero(np.triu(G > low, k=1))

    conflicts: dict[tuple[int, int], ValueConflict] = {}  # positions (p, q), p < q
    near_dups: list[tuple[int, int]] = []
    for p, q in zip(iu.tolist(), ju.tolist()):
        vc = values_conflict(kb.facts[int(sel[p])].content, kb.facts[int(sel[q])].content)
        if vc is not None:
            if G[p, q] > config.contradiction_similarity:
                conflicts[(p, q)] = vc
        elif G[p, q] > config.dedup_similarity:
            near_dups.append((p, q))

    # --- 2. SPEC-003 §6.6 dedup (non-conflicting pairs only) --------------------------------------
    dup_of: dict[int, list[int]] = {}
    for p, q in near_dups:
        dup_of.setdefault(p, []).append(q)
        dup_of.setdefault(q, []).append(p)
    order = sorted(range(sel.size), key=lambda p: (-_score_of(scores, int(sel[p])), ids[p]))
    alive: set[int] = set()
    deduplicated: list[tuple[int, int]] = []
    dropped: set[int] = set()
    for p in order:
        keepers = [q for q in dup_of.get(p, ()) if q in alive]
        if keepers:
            best = min(keepers, key=lambda q: (-_score_of(scores, int(sel[q])), ids[q]))
            deduplicated.append((int(sel[p]), int(sel[best])))
            dropped.add(p)
        else:
            alive.add(p)

    # --- 3. arbitration ------------------------------------------------------------------------
    live_pairs = [(p, q) for (p, q) in conflicts if p not in dropped and q not in dropped]
    involved = sorted({p for pq in live_pairs for p in pq})
    factors = _recency_factors(corpus, sel[involved] if involved else np.zeros(0, np.int64), recency, now, config)
    auth = {p: authority_of(kb.facts[int(sel[p])], factors[int(sel[p])], config) for p in involved}

    def order_key(pq: tuple[int, int]) -> tuple:
        p, q = pq
        lo, hi = sorted((ids[p], ids[q]))
        return (-max(auth[p].authority, auth[q].authority), lo, hi)

    suppressed_pos: list[int] = []
    suppressed_set: set[int] = set()
    pairs: list[ConflictPair] = []
    audit: list[AuditEvent] = []
    notes: list[str] = []
    for p, q in sorted(live_pairs, key=order_key):
        if ids[q] < ids[p]:
            p, q = q, p  # fact_a is the smaller id
        a, b = auth[p], auth[q]
        vc = conflicts[(min(p, q), max(p, q))]
        sim = float(G[p, q])
        margin = abs(a.authority - b.authority)
        if p in suppressed_set or q in suppressed_set:
            pairs.append(ConflictPair(ids[p], ids[q], sim, vc.patterns, vc, {ids[p]: a, ids[q]: b},
                                      tuple(i for k, i in ((p, ids[p]), (q, ids[q])) if k not in suppressed_set),
                                      None, False, skipped=True, margin=margin))
            continue
        kind, winner = _decision_for(decisions, ids[p], ids[q])
        arb = _arbitrate(a, b, config, kind, winner)
        pair = ConflictPair(ids[p], ids[q], sim, vc.patterns, vc, {ids[p]: a, ids[q]: b}, arb.kept,
                            arb.suppressed, arb.tied, skipped=False, margin=margin, decision=arb.decision)
        pairs.append(pair)
        audit.append(_conflict_event(pair, roles={ids[p]: str(roles.get(int(sel[p]), "")),
                                                  ids[q]: str(roles.get(int(sel[q]), ""))}))
        if arb.suppressed is not None:
            loser = p if arb.suppressed == ids[p] else q
            suppressed_pos.append(loser)
            suppressed_set.add(loser)
        if arb.tied:
            notes.append(note_for(kb.facts[int(sel[p])], kb.facts[int(sel[q])]))

    # --- 4. backfill -----------------------------------------------------------------------------
    kept_rows = [int(sel[p]) for p in range(sel.size) if p not in dropped and p not in suppressed_set]
    backfilled: list[tuple[int, int]] = []
    if config.backfill and suppressed_pos:
        taken = {int(r) for r in sel}
        retrievable = np.asarray(corpus.retrievable, dtype=bool)
        pool = [int(r) for r in np.asarray(ranked_pool, dtype=np.int64).reshape(-1)]
        cursor = 0
        for loser in suppressed_pos:
            while cursor < len(pool):
                c = pool[cursor]
                cursor += 1
                if c in taken or not retrievable[c]:
                    continue
                taken.add(c)
                if _fits(c, kept_rows, vecs, kb, config):
                    backfilled.append((c, int(sel[loser])))
                    kept_rows.append(c)
                    break

    # --- final selection: selection order, a backfill in its loser's slot -------------------------
    fill_for = {old: new for new, old in backfilled}
    final: list[int] = []
    for p in range(sel.size):
        r = int(sel[p])
        if p in dropped:
            continue
        if p in suppressed_set:
            if r in fill_for:
                final.append(fill_for[r])
            continue
        final.append(r)
    return Resolution(
        selected=frozen_array(np.array(final, dtype=np.int64)),
        pairs=tuple(pairs),
        suppressed=frozen_array(np.array([int(sel[p]) for p in suppressed_pos], dtype=np.int64)),
        deduplicated=tuple(deduplicated),
        backfilled=tuple(backfilled),
        notes=tuple(notes),
        audit=tuple(audit),
    )


def _fits(c: int, kept_rows: list[int], vecs: np.ndarray, kb: Any, config: CRPConfig) -> bool:
    """A backfill candidate: no near-duplicate of a kept fact, no value conflict with one."""
    if not kept_rows:
        return True
    cos = vecs[kept_rows] @ vecs[c]
    if np.any(cos > config.dedup_similarity):
        return False
    text = kb.facts[c].content
    for k in np.flatnonzero(cos > config.contradiction_similarity):
        if values_conflict(text, kb.facts[kept_rows[int(k)]].content) is not None:
            return False
    return True


# ================================================================================================
# Whole-CKF conflict scan (issue 3)
# ================================================================================================

@dataclass(frozen=True, eq=False)
class ConflictScan:
    """Every conflicting pair of the CKF's retrievable facts, each arbitrated on its own."""

    pairs: tuple[ConflictPair, ...]  # triage order: ties first, then smallest margin, then ids
    counts: Mapping[str, int]  # pattern -> number of pairs showing it (dismissed pairs excluded)
    n_facts: int  # retrievable facts scanned
    n_candidates: int  # distinct pairs with cosine > contradiction_similarity (text-checked)
    k: int  # neighbours per fact taken from the index (deepened where a row was still above threshold)
    threshold: float
    now: datetime
    recency: Any  # RecencyTable of the facts in a pair (None when no pair)
    timings_ms: Mapping[str, float]  # "neighbours", "text_check", "arbitration", "total"
    rows: Mapping[str, int] = field(default_factory=dict)  # fact id -> row, for the facts in a pair

    @property
    def tied(self) -> int:
        return sum(1 for p in self.pairs if p.tied)

    @property
    def dismissed(self) -> int:
        return sum(1 for p in self.pairs if p.decision == "dismiss")


def candidate_pairs(corpus: Any, config: CRPConfig, threshold: float | None = None) -> tuple[np.ndarray, int]:
    """Distinct (row_i, row_j), i < j, of retrievable facts with cosine > ``threshold`` (default
    ``contradiction_similarity``), from the HNSW neighbour table: never all n^2 pairs.

    Starts from ``corpus.neighbours(graph_k)`` (cached, shared with the graph); rows whose k-th
    neighbour is still above the threshold are re-queried with k doubled until it is not.
    Returns ``(pairs (m, 2) int64 sorted, largest k used)``.
    """
    thr = config.contradiction_similarity if threshold is None else float(threshold)
    retr = np.asarray(corpus.retrievable, dtype=bool)
    rows = np.flatnonzero(retr)
    n_r = rows.size
    if n_r < 2:
        return np.zeros((0, 2), dtype=np.int64), 0
    k = max(1, min(config.graph_k, n_r - 1))
    table = corpus.neighbours(k, config)
    ids, sims = table.ids[rows], table.sims[rows]
    chunks_src = [np.repeat(rows, ids.shape[1])]
    chunks_dst = [ids.reshape(-1)]
    chunks_sim = [sims.reshape(-1)]
    with np.errstate(invalid="ignore"):
        deep = rows[sims[:, -1] > thr]
    while deep.size and k < n_r - 1:
        k = min(2 * k, n_r - 1)
        got_ids, got_sims = corpus.search(corpus.vectors[deep], k + 1, config)
        chunks_src.append(np.repeat(deep, got_ids.shape[1]))
        chunks_dst.append(got_ids.reshape(-1))
        chunks_sim.append(got_sims.reshape(-1))
        with np.errstate(invalid="ignore"):
            deep = deep[got_sims[:, -1] > thr]
    src = np.concatenate(chunks_src)
    dst = np.concatenate(chunks_dst)
    sim = np.concatenate(chunks_sim)
    with np.errstate(invalid="ignore"):
        ok = (dst >= 0) & (dst != src) & (sim > thr)
    a, b = src[ok], dst[ok]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs = np.unique(np.stack([lo, hi], axis=1), axis=0) if lo.size else np.zeros((0, 2), dtype=np.int64)
    if pairs.size:  # one exact cosine per pair, the same arithmetic as the brute-force check
        v = np.asarray(corpus.vectors, dtype=np.float32)
        exact = np.einsum("ij,ij->i", v[pairs[:, 0]], v[pairs[:, 1]])
        pairs = pairs[exact > thr]
    return pairs.astype(np.int64), k


def triage_order(pair: ConflictPair) -> tuple:
    """Ties first, then the smallest authority margin, then ids; dismissed pairs last."""
    return (pair.decision == "dismiss", not pair.tied, pair.margin, pair.fact_a, pair.fact_b)


def scan_ckf(corpus: Any, config: CRPConfig, now: datetime,
             decisions: Mapping[str, Any] | None = None) -> ConflictScan:
    """Whole-CKF conflict scan (issue 3; SPEC-027 §2 applied to every retrievable pair).

    Candidate pairs come from the HNSW neighbours (:func:`candidate_pairs`), each goes through
    :func:`values_conflict`, and each conflicting pair is arbitrated independently (no
    suppression chain: the scan reports, the envelope decides). Recency is computed at ``now``.
    """
    from crp_core.factors.recency import compute_recency

    t0 = time.perf_counter()
    kb = corpus.kb
    cand, k = candidate_pairs(corpus, config)
    t1 = time.perf_counter()
    found: list[tuple[int, int, ValueConflict]] = []
    facts = kb.facts
    for i, j in cand.tolist():
        ca, cb = facts[i].content, facts[j].content
        if ca == cb:
            continue
        vc = values_conflict(ca, cb)
        if vc is not None:
            found.append((i, j, vc))
    t2 = time.perf_counter()
    involved = np.array(sorted({r for i, j, _ in found for r in (i, j)}), dtype=np.int64)
    rec = compute_recency(kb, involved, now, config) if involved.size else None
    factor = {} if rec is None else dict(zip(rec.idx.tolist(), rec.factor.tolist()))
    auth = {r: authority_of(facts[r], factor[r], config) for r in involved.tolist()}
    v = np.asarray(corpus.vectors, dtype=np.float32)
    pairs: list[ConflictPair] = []
    for i, j, vc in found:
        if facts[j].fact_id < facts[i].fact_id:
            i, j = j, i
        a, b = auth[i], auth[j]
        kind, winner = _decision_for(decisions, a.fact_id, b.fact_id)
        arb = _arbitrate(a, b, config, kind, winner)
        pairs.append(ConflictPair(a.fact_id, b.fact_id, float(v[i] @ v[j]), vc.patterns, vc,
                                  {a.fact_id: a, b.fact_id: b}, arb.kept, arb.suppressed, arb.tied,
                                  skipped=False, margin=abs(a.authority - b.authority), decision=arb.decision))
    pairs.sort(key=triage_order)
    counts = {pat: 0 for pat in PATTERNS}
    for p in pairs:
        if p.decision != "dismiss":
            for pat in p.patterns:
                counts[pat] += 1
    t3 = time.perf_counter()
    return ConflictScan(
        pairs=tuple(pairs), counts=counts, n_facts=int(np.count_nonzero(corpus.retrievable)),
        n_candidates=int(cand.shape[0]), k=k, threshold=float(config.contradiction_similarity), now=now,
        recency=rec,
        timings_ms={"neighbours": (t1 - t0) * 1e3, "text_check": (t2 - t1) * 1e3,
                    "arbitration": (t3 - t2) * 1e3, "total": (t3 - t0) * 1e3},
        rows={facts[r].fact_id: r for r in involved.tolist()},
    )


def pair_dict(pair: ConflictPair) -> dict[str, Any]:
    """SPEC_NOTES §4 conflict fields (+ margin, decision, skipped, diffs) for JSON output."""
    return {
        "fact_a": pair.fact_a, "fact_b": pair.fact_b, "similarity": pair.similarity,
        "patterns": list(pair.patterns),
        "authority": {fid: authority_dict(a) for fid, a in sorted(pair.authority.items())},
        "kept": list(pair.kept), "suppressed": pair.suppressed, "tied": pair.tied,
        "margin": pair.margin, "skipped": pair.skipped, "decision": pair.decision,
        "diffs": [diff_dict(d) for d in pair.conflict.diffs],
    }

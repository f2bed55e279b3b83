"""Value-conflict detection (SPEC-027 §2.2, SPEC-005 §5.3, SPEC_NOTES §2.6).

:func:`values_conflict` compares two texts token by token and names the value(s) that changed,
with character spans for highlighting. Pure and memoised.
"""
from __future__ import annotations

import difflib
import re
from functools import lru_cache
from typing import Iterable, NamedTuple, Sequence

from crp_core.records import ValueConflict, ValueDiff

NUMBER_CHANGED = "NUMBER_CHANGED"
ENTITY_SUBSTITUTED = "ENTITY_SUBSTITUTED"
NEGATION_FLIP = "NEGATION_FLIP"
DATE_SHIFTED = "DATE_SHIFTED"
MAGNITUDE_ALTERED = "MAGNITUDE_ALTERED"
PATTERNS: tuple[str, ...] = (DATE_SHIFTED, ENTITY_SUBSTITUTED, MAGNITUDE_ALTERED, NEGATION_FLIP,
                             NUMBER_CHANGED)

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



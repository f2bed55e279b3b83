"""Value-conflict detection between two fact texts (SPEC_NOTES §2.6, SPEC-027 §2.2, SPEC-005 §5.3).

:func:`values_conflict` answers one question: do two texts assert *different values for the same
attribute*? It names the SPEC-005 §5.3 pattern of every changed value and keeps character spans
into both texts for highlighting. A paraphrase with no changed value is not a conflict.

How it works (every rule is documented with examples in ``docs/decisions/detector.md``):

1. :func:`tokenize` (memoised per text) reads values in a normalised form: numbers with their unit
   folded in (``30 s`` = ``30 seconds``, ``168 hours`` = ``7 days``, ``three`` = ``3``), dates
   (``2025-06-30`` = ``30 June 2025``), percentages, multipliers, money, rates, clock times,
   entities (proper nouns, acronyms, identifiers, lexicon names), polarity words (``enabled`` /
   ``disabled``), negation cues, clause breaks, content and function words.
2. Each text is cut into clauses; the *attribute context* of a value is the set of content words
   of its clause (stemmed, synonyms folded, function words left out).
3. Two clauses are *aligned* when neither carries a qualifier the other text lacks and their
   contexts overlap (Jaccard >= 0.5). Values are paired only across aligned clauses, best context
   first, equal values first, then by position - so a swap ("client 2379, peer 2380" against
   "client 2380, peer 2379") is caught and two numbers of different attributes ("client port
   2379" / "peer port 2380") are never compared.
4. Aligned clauses whose polarity differs (odd number of negations or opposite polarity words)
   are a NEGATION_FLIP.

The lexicons are data files under ``crp_core/data/lexicon/``, read once at import.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from pathlib import Path
from typing import NamedTuple

from crp_core.records import ValueConflict, ValueDiff

NUMBER_CHANGED = "NUMBER_CHANGED"
ENTITY_SUBSTITUTED = "ENTITY_SUBSTITUTED"
NEGATION_FLIP = "NEGATION_FLIP"
DATE_SHIFTED = "DATE_SHIFTED"
MAGNITUDE_ALTERED = "MAGNITUDE_ALTERED"

__all__ = ["DATE_SHIFTED", "ENTITY_SUBSTITUTED", "MAGNITUDE_ALTERED", "NEGATION_FLIP", "NUMBER_CHANGED", "tokenize",
           "values_conflict"]

#: a bare 4-digit integer in this range is a year (SPEC_NOTES §2.6); etcd's 2379 is a number
YEAR_MIN, YEAR_MAX = 1900, 2099
#: two clauses state the same attribute when their contexts overlap at least this much (Jaccard)
ALIGN_MIN = 0.5

# token kinds
WORD, FUNC, ENTITY, NUMBER, DATE, POLAR, NEG, BREAK = ("word", "func", "entity", "number", "date", "polar",
                                                       "neg", "break")


# ================================================================================================
# Lexicons (data files, read once)
# ================================================================================================

_LEXICON_DIR = Path(__file__).resolve().parents[2] / "data" / "lexicon"


def _rows(name: str) -> Iterator[list[str]]:
    """Non-comment, non-blank lines of a lexicon file, split on tabs."""
    with open(_LEXICON_DIR / name, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.strip() and not line.lstrip().startswith("#"):
                yield [c.strip() for c in line.split("\t")]


@cache
def _stem(w: str) -> str:
    """A small suffix stripper so inflections share a key (uses/use, retries/retried/retry,
    encryption/encrypted, caches/cache, running/run). Not a linguistic stemmer: only equality of
    stems matters."""
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix, min_len in (("ation", 8), ("ion", 6), ("ing", 6), ("ed", 5), ("ly", 6), ("ence", 7), ("ance", 7)):
        if w.endswith(suffix) and len(w) >= min_len:
            w = w[:-len(suffix)]
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsaeiou":
        w = w[:-1]  # dropped / drop, running / run
    return w


def _load_words(name: str) -> frozenset[str]:
    return frozenset(r[0].lower() for r in _rows(name))


FUNCTION_WORDS = _load_words("function_words.txt")
_COMMON_WORDS = _load_words("common_words.txt")
_COMMON_STEMS = frozenset(_stem(w) for w in _COMMON_WORDS)
#: suffixes of derived common words ("Encryption", "Deployers", "Retention"): never names
_COMMON_SUFFIXES = ("tion", "sion", "ment", "ments", "ness", "ity", "ities", "ing", "ings", "ed", "ly", "able",
                    "ible", "ance", "ence", "ive", "ives", "ous", "ism", "ist", "ists", "ize", "ise", "ify", "ure",
                    "ures", "age", "ship", "er", "ers", "or", "ors", "al", "als", "ic", "ics", "ary", "ory", "ies",
                    "ant", "ants", "ent", "ents", "ate", "ates", "ful", "less", "ency", "ancy")


class _LexEntity(NamedTuple):
    category: str
    any_case: bool
    canonical: str


def _load_entities() -> dict[str, _LexEntity]:
    out: dict[str, _LexEntity] = {}
    for row in _rows("entities.tsv"):
        name = row[0].lower()
        canonical = row[3].lower() if len(row) > 3 and row[3] else name
        out[name] = _LexEntity(row[1] if len(row) > 1 else "", len(row) < 3 or row[2] != "cap", canonical)
    return out


ENTITY_LEXICON = _load_entities()


class _Polar(NamedTuple):
    group: str
    sign: int  # +1 / -1
    predicative: bool  # counts only right after be / turn / switch / set ...


def _load_polarity() -> dict[str, _Polar]:
    out: dict[str, _Polar] = {}
    for row in _rows("antonyms.tsv"):
        group = row[0]
        for col, sign in ((1, 1), (2, -1)):
            for w in row[col].split(","):
                w = w.strip().lower()
                if w:
                    out[w.rstrip("*")] = _Polar(group, sign, w.endswith("*"))
    return out


POLARITY = _load_polarity()
_PREDICATIVE_BEFORE = frozenset(["is", "are", "was", "were", "be", "been", "being", "turned", "turn", "turns",
                                 "switched", "switch", "set", "stays", "stay", "remains", "remain", "left", "keep",
                                 "keeps", "kept", "toggled"])


def _load_synonyms() -> dict[str, str]:
    out: dict[str, str] = {}
    for row in _rows("synonyms.tsv"):
        words = [w.strip().lower() for w in ",".join(row).split(",") if w.strip()]
        head = _stem(words[0])
        for w in words:
            out.setdefault(_stem(w), head)
    return out


_SYNONYMS = _load_synonyms()


class _Unit(NamedTuple):
    dim: str
    factor: float
    name: str
    glued: bool
    spaced: bool
    power: int  # data-size prefix power; -1 when not a data-size unit


def _load_units() -> dict[str, _Unit]:
    out: dict[str, _Unit] = {}
    for surface, dim, factor, name, place, power in _rows("units.tsv"):
        out[surface] = _Unit(dim, float(factor), name, place in ("glued", "both"), place in ("spaced", "both"),
                             -1 if power == "-" else int(power))
    return out


UNITS = _load_units()


def _load_negations() -> tuple[frozenset[str], frozenset[tuple[str, ...]], dict[tuple[str, ...], int]]:
    cues: set[str] = set()
    idioms: set[tuple[str, ...]] = set()
    bounds: dict[tuple[str, ...], int] = {}
    for kind, phrase, value in _rows("negations.tsv"):
        words = tuple(phrase.split())
        if kind == "cue":
            cues.add(phrase)
        elif kind == "idiom":
            idioms.add(words)
        elif kind == "bound":
            bounds[words] = 1 if value == "lower" else -1
    return frozenset(cues), frozenset(idioms), bounds


NEGATION_CUES, _NEG_IDIOMS, _BOUNDS = _load_negations()
_BOUND_LENGTHS = sorted({len(k) for k in _BOUNDS}, reverse=True)
_NEG_CONTRACTIONS = frozenset({"can't", "won't", "shan't", "ain't", "cannot"})

# ---- small closed tables (language, not domain knowledge: kept in code) ------------------------
_MONTHS = {"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
           "september": 9, "october": 10, "november": 11, "december": 12}
_MONTH_ABBR = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
               "oct": 10, "nov": 11, "dec": 12}
_WEEKDAYS = {"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6, "sunday": 7}
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12,
}
_NUMBER_MULT = {"hundred": 100.0, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9, "mn": 1e6}
_SCALE_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "bn": 1e9, "mn": 1e6, "T": 1e12}
#: multiplier words (MAGNITUDE_ALTERED) and their factor
_MULT_WORDS = {"twice": 2.0, "double": 2.0, "doubled": 2.0, "doubles": 2.0, "thrice": 3.0, "triple": 3.0,
               "tripled": 3.0, "triples": 3.0, "quadruple": 4.0, "quadrupled": 4.0, "halved": 0.5, "halves": 0.5}
_TIMES_WORDS = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
#: "N times" is a multiplier before these words ("3 times faster"), otherwise a count ("retries 3 times")
_COMPARATIVE_NEXT = frozenset(["more", "less", "fewer", "as", "the", "larger", "smaller", "faster", "slower", "higher",
                               "lower", "bigger", "greater", "longer", "shorter", "cheaper", "quicker"])
_CURRENCY_SYMBOL = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
_CURRENCY_CODES = frozenset(["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "CNY", "INR", "SEK", "NOK", "DKK",
                             "PLN", "CZK", "HUF", "BRL", "MXN", "SGD", "HKD", "ZAR", "KRW"])
_CURRENCY_WORDS = {"dollar": "USD", "dollars": "USD", "euro": "EUR", "euros": "EUR", "pound": "GBP",
                   "pounds": "GBP", "yen": "JPY"}
#: frequency adverbs: a rate of one per unit ("backups run daily")
_FREQ_ADVERBS = {"hourly": 3600.0, "daily": 86400.0, "nightly": 86400.0, "weekly": 604800.0}
_RATE_MARKERS = frozenset({"per", "a", "an", "each", "every"})
_ABBREVIATIONS = frozenset(["e.g", "i.e", "etc", "vs", "approx", "incl", "art", "sec", "no", "fig", "eq", "cf", "inc",
                            "ltd", "corp", "dr", "mr", "ms", "st", "para", "ca", "resp", "viz"])
#: ALL-CAPS words that are ordinary words (RFC 2119 keywords, admonitions), not acronyms
_CAPS_WORDS = frozenset(["must", "shall", "should", "may", "required", "recommended", "optional", "not", "note",
                         "warning", "important", "tip", "caution", "info"])
#: clause-opening words: a new clause starts here (the word itself is a break token)
_CLAUSE_WORDS = frozenset(["and", "or", "but", "while", "whereas", "although", "though", "unless", "which", "where",
                           "when", "whenever", "because"])
#: words skipped when looking for the word a negation governs ("does not always apply")
_SCOPE_SKIP = FUNCTION_WORDS | {"yet", "necessarily", "currently", "longer"}
_IDENT_RE = re.compile(r"\d.*[^\W\d_]|[^\W\d_].*\d|_|[^\W\d_][./][^\W\d_]")


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


class _Raw(NamedTuple):
    group: str
    text: str
    start: int
    end: int
    low: str


_NUM = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
_RAW_RE = re.compile(
    r"(?P<url>\b(?:https?|wss?|grpcs?)://[^\s<>\"'`]*[^\s<>\"'`.,;:!?)\]])"
    r"|(?P<email>\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<flag>(?<![\w-])--?[^\W\d_][\w-]*(?:=[\w./:-]+)?)"
    r"|(?P<path>(?<![\w/.~])(?:~|\.{1,2})?/[\w.@:-]+(?:/[\w.@:-]+)*/?)"
    r"|(?P<iso>(?<![\w.-])\d{4}-\d{2}(?:-\d{2})?(?:T\d{2}:\d{2}(?::\d{2})?Z?)?(?![\w-]|\.\d))"
    r"|(?P<sdate>(?<![\w/.])(?:\d{1,2}/\d{1,2}/\d{4}|\d{4}/\d{1,2}/\d{1,2})(?![\w/]))"
    r"|(?P<clock>(?<![\w.:])\d{1,2}:\d{2}(?::\d{2})?(?![\w:])(?:\s?[AaPp]\.?[Mm]\.?(?!\w))?)"
    r"|(?P<ip>(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?![\w.]))"
    r"|(?P<ver>(?<![\w.])(?:[vV]\d+(?:\.(?:\d+|[xX*]))*(?:-[^\W\d_][\w.]*)?"
    r"|\d+\.\d+\.(?:\d+|[xX*])(?:\.(?:\d+|[xX*]))*(?:-[^\W\d_][\w.]*)?|\d+\.[xX*])(?![\w]|\.\d))"
    r"|(?P<money>[$€£¥]\s?" + _NUM + r"(?:\s?(?:bn|mn|[kKMBT])(?![\w]))?)"
    r"|(?P<numw>(?<![\w.])" + _NUM + r"[^\W\d_][\w]*)"
    r"|(?P<num>(?<![\w.])[-+−]?" + _NUM + r"(?![\w]))"
    r"|(?P<sym>[%×])"
    r"|(?P<word>[^\W\d][\w]*(?:['’][^\W\d_]+)?(?:[-./+][\w]+(?:['’][^\W\d_]+)?)*\+*)"
    r"|(?P<brk>[.!?]+(?=[\s\"'”’)\]]|$)|[;:,()\[\]]|(?<=\s)[-–—](?=\s)|[–—])"
)
_NUM_RE = re.compile(_NUM)


def _fnum(s: str) -> float:
    return float(s.replace(",", "").replace("−", "-"))


def _one(v: float) -> tuple[tuple[float, float], ...]:
    return ((v, v),)


def _time_readings(base: float, unit: _Unit) -> tuple[tuple[float, float], ...]:
    """Seconds; calendar units become day ranges (a month is 28-31 days, a year 365-366)."""
    if unit.dim != "cal":
        return _one(base * unit.factor)
    months = base * unit.factor
    years = math.floor(months / 12 + 1e-9)
    rest = months - 12 * years
    return (((years * 365 + rest * 28) * 86400.0, (years * 366 + rest * 31) * 86400.0),)


def _size_readings(base: float, unit: _Unit) -> tuple[tuple[float, float], ...]:
    """Bytes. KB/MB/GB/TB read both as powers of 1000 and of 1024 (operational text uses both);
    KiB/MiB/GiB are strictly binary."""
    v = base * unit.factor
    if unit.power > 0 and "i" not in unit.name:
        alt = base * 1024.0 ** unit.power
        return ((v, v), (alt, alt))
    return _one(v)


class _Lexer:
    """Turns the regex matches of one text into tokens (one instance per text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw = [_Raw(m.lastgroup or "", m.group(), m.start(), m.end(), m.group().lower().replace("’", "'"))
                    for m in _RAW_RE.finditer(text)]
        self.out: list[Token] = []
        self.forced_func: set[int] = set()  # raw indices consumed as a rate's "per second"

    # ---- helpers --------------------------------------------------------------------------------
    def low(self, j: int) -> str:
        return self.raw[j].low if 0 <= j < len(self.raw) and self.raw[j].group == "word" else ""

    def gap(self, a: int, b: int) -> str:
        return self.text[a:b]

    def adjacent(self, j: int, end: int, allow: str = " -\u00a0") -> bool:
        """Is raw token ``j`` right after character ``end`` (only a space or hyphen between)?"""
        if j >= len(self.raw):
            return False
        g = self.text[end:self.raw[j].start]
        return len(g) <= 1 and all(c in allow for c in g)

    def bound_before(self, i: int) -> tuple[int, int]:
        """A bound phrase ("at least", "up to", "no more than") ending right before raw ``i``."""
        for n in _BOUND_LENGTHS:
            if i - n < 0:
                continue
            words = tuple(self.low(j) for j in range(i - n, i))
            if all(words) and words in _BOUNDS and all(self.adjacent(j + 1, self.raw[j].end, " ")
                                                       for j in range(i - n, i)):
                return _BOUNDS[words], self.raw[i - n].start
        return 0, -1

    def every_before(self, i: int) -> bool:
        """Is raw ``i`` preceded by "every" / "each" (an interval: "every 30 minutes")?"""
        return i > 0 and self.low(i - 1) in ("every", "each")

    # ---- main loop ------------------------------------------------------------------------------
    def run(self) -> list[Token]:
        raw, out = self.raw, self.out
        n = len(raw)
        i = 0
        sent_start = True
        while i < n:
            r = raw[i]
            g = r.group
            start_i = i
            if i in self.forced_func:
                out.append(Token(r.text, r.start, r.end, FUNC, r.low))
                i += 1
                continue
            if g == "brk":
                kind = self.break_kind(i)
                if kind:
                    out.append(Token(r.text, r.start, r.end, BREAK, kind))
                    sent_start = kind == "sent" or r.text in ":([" or sent_start
                i += 1
                continue
            if g in ("url", "email", "flag", "path", "ver", "ip"):
                out.append(Token(r.text, r.start, r.end, ENTITY, r.low, parts=((r.low, r.text, r.start, r.end),),
                                 sub="ident"))
                i += 1
            elif g == "iso":
                i = self.iso_date(i)
            elif g == "sdate":
                i = self.slash_date(i)
            elif g == "clock":
                i = self.clock(i)
            elif g == "money":
                i = self.money(i)
            elif g == "numw":
                i = self.glued_number(i)
            elif g == "num":
                i = self.number(i, _fnum(r.text), r.text.replace(",", ""), r.start, r.end, i + 1)
            elif g == "sym":
                i += 1
            else:
                i = self.word(i, sent_start)
            if i <= start_i:  # every reader consumes at least one raw token
                i = start_i + 1
            sent_start = False
        return out

    def break_kind(self, i: int) -> str:
        r = self.raw[i]
        if r.text[0] in ".!?":
            if r.text[0] == ".":
                prev = self.low(i - 1)
                if prev in _ABBREVIATIONS or (len(prev) == 1 and prev.isalpha()):
                    return ""
                nxt = self.raw[i + 1] if i + 1 < len(self.raw) else None
                if nxt is not None and nxt.group == "word" and nxt.text[0].islower():
                    return ""
            return "sent"
        if r.text == ";":
            return "sent"
        if r.text == ":":
            return "label"  # "Minor infringements: up to 2%": the label is the value's attribute
        return "clause"

    # ---- numbers --------------------------------------------------------------------------------
    def push_qty(self, start: int, end: int, q: Quantity) -> None:
        self.out.append(Token(self.text[start:end], start, end, NUMBER, "#q", qty=q))

    def number(self, i: int, base: float, exact: str, start: int, end: int, j: int,
               currency: str = "", scale: float = 1.0, first: int = -1) -> int:
        """Finish a number whose digits end at raw ``j - 1``: percent, multiplier, scale word,
        currency, unit, rate ("per second"), bound ("at least"). Returns the next raw index."""
        raw, n = self.raw, len(self.raw)
        first = i if first < 0 else first
        bound, bstart = self.bound_before(first)
        if j < n and raw[j].group == "sym" and raw[j].start - end <= 1:
            dim = "pct" if raw[j].text == "%" else "x"
            q = Quantity(dim, dim, base, 1.0, exact, _one(base), -1, bound, bstart)
            self.push_qty(start, raw[j].end, q)
            return j + 1
        w = self.low(j)
        if w in _SCALE_WORDS and scale == 1.0 and self.adjacent(j, end, " "):
            scale, end, j = _SCALE_WORDS[w], raw[j].end, j + 1
            w = self.low(j)
        if not currency and j < n and self.adjacent(j, end, " ") and (w in _CURRENCY_WORDS
                                                                      or raw[j].text in _CURRENCY_CODES):
            currency, end, j = _CURRENCY_WORDS.get(w, raw[j].text), raw[j].end, j + 1  # "35 million euros"
            w = self.low(j)
        v = base * scale
        if currency:
            q = Quantity("money", currency, base, scale, exact, _one(v), -1, bound, bstart)
            return self.rate_or_push(start, end, j, q, first)
        if w in ("percent", "pct") and self.adjacent(j, end, " "):
            self.push_qty(start, raw[j].end, Quantity("pct", "%", v, 1.0, exact, _one(v), -1, bound, bstart))
            return j + 1
        if w in ("per", "percentage", "basis") and self.low(j + 1) in ("cent", "point", "points"):
            factor = 0.01 if w == "basis" else 1.0
            self.push_qty(start, raw[j + 1].end, Quantity("pct", "%" if factor == 1.0 else "bp", v, 1.0, exact,
                                                          _one(v * factor), -1, bound, bstart))
            return j + 2
        if w == "fold" and self.adjacent(j, end):  # "10-fold", "10 fold"
            self.push_qty(start, raw[j].end, Quantity("x", "x", v, 1.0, exact, _one(v), -1, bound, bstart))
            return j + 1
        if w == "times" and self.adjacent(j, end, " "):
            nxt = self.low(j + 1)
            if nxt in _COMPARATIVE_NEXT or (nxt.endswith("er") and len(nxt) > 4 and nxt not in FUNCTION_WORDS):
                self.push_qty(start, raw[j].end, Quantity("x", "x", v, 1.0, exact, _one(v), -1, bound, bstart))
                return j + 1
            q = Quantity("times", "times", base, scale, exact, _one(v), -1, bound, bstart)
            return self.rate_or_push(start, raw[j].end, j + 1, q, first)
        unit_word = w
        unit_end_j = j
        if w in ("business", "working") and self.low(j + 1) in ("day", "days"):
            unit_word, unit_end_j = w + "-" + self.low(j + 1), j + 1
        elif w == "calendar" and self.low(j + 1) in ("day", "days", "month", "months", "year", "years"):
            unit_word, unit_end_j = self.low(j + 1), j + 1
        u = UNITS.get(unit_word)
        if u is not None and u.spaced and self.adjacent(j, end):
            return self.unit_qty(start, raw[unit_end_j].end, unit_end_j + 1, base, scale, exact, u, bound, bstart,
                                 first)
        if w in ("am", "pm", "a.m", "p.m") and base <= 12 and base == int(base) and scale == 1.0:
            minutes = (int(base) % 12 + (12 if w.startswith("p") else 0)) * 60
            self.push_qty(start, raw[j].end, Quantity("clock", "clock", float(minutes), 1.0, str(minutes),
                                                      _one(float(minutes)), -1, bound, bstart))
            return j + 1
        if (scale == 1.0 and re.fullmatch(r"\d{4}", exact) and YEAR_MIN <= base <= YEAR_MAX and bound == 0):
            self.out.append(Token(self.text[start:end], start, end, DATE, "#d",
                                  date=DateValue(((int(base), 0, 0, 0),), True),
                                  parts=(("y", self.text[start:end], start, end),)))
            return j
        q = Quantity("", "", base, scale, exact if scale == 1.0 else "", _one(v), -1, bound, bstart)
        return self.rate_or_push(start, end, j, q, first)

    def unit_qty(self, start: int, end: int, j: int, base: float, scale: float, exact: str, u: _Unit,
                 bound: int, bstart: int, first: int) -> int:
        """A number with its unit; "every 30 minutes" becomes a rate of one per 30 minutes."""
        b = base * scale
        if u.dim in ("time", "cal"):
            readings = _time_readings(b, u)
            if self.every_before(first):
                q = Quantity("rate", "1/" + u.name, b, 1.0, exact, tuple((1 / hi, 1 / lo) for lo, hi in readings),
                             -1, bound, bstart)
                self.push_qty(start, end, q)
                return j
            q = Quantity("time", u.name, base, scale, exact, readings, -1, bound, bstart)
            self.push_qty(start, end, q)
            return j
        if u.dim == "size":
            q = Quantity("size", u.name, base, scale, exact, _size_readings(b, u), u.power, bound, bstart)
            return self.rate_or_push(start, end, j, q, first)
        if u.dim == "pct":
            q = Quantity("pct", "%", b, 1.0, exact, _one(b), -1, bound, bstart)
        else:
            q = Quantity(u.dim, u.name, base, scale, exact, _one(b * u.factor), u.power, bound, bstart)
        self.push_qty(start, end, q)
        return j

    def rate_or_push(self, start: int, end: int, j: int, q: Quantity, first: int) -> int:
        """"150 requests per second", "EUR 20 per month", "2 GB a day": a rate of the quantity."""
        raw, n = self.raw, len(self.raw)
        k = j
        skipped = 0
        while k < n and raw[k].group == "word" and skipped <= 3:
            w = raw[k].low
            if w in _RATE_MARKERS:
                break
            if "/" in w:
                head, _, tail = w.rpartition("/")
                u = UNITS.get(tail)
                if u is not None and u.dim in ("time", "cal") and head:
                    self.push_qty(start, end, self.as_rate(q, 1.0, u))
                    return j
            if w in FUNCTION_WORDS or w in UNITS:
                k = n
                break
            k += 1
            skipped += 1
        if k < n and raw[k].group == "word" and raw[k].low in _RATE_MARKERS:
            m = k + 1
            count = 1.0
            if m < n and raw[m].group == "num" and raw[k].low == "per":
                count, m = _fnum(raw[m].text), m + 1
            u = UNITS.get(self.low(m))
            singular = self.low(m) in ("second", "minute", "hour", "day", "week", "month", "year", "sec", "min")
            if u is not None and u.dim in ("time", "cal") and u.spaced and (raw[k].low == "per" or singular):
                self.forced_func.update(range(k, m + 1))
                self.push_qty(start, end, self.as_rate(q, count, u))
                return j
        self.push_qty(start, end, q)
        return j

    @staticmethod
    def as_rate(q: Quantity, count: float, u: _Unit) -> Quantity:
        den = _time_readings(count, u)
        readings = tuple((lo / dhi, hi / dlo) for lo, hi in q.readings for dlo, dhi in den)
        dim = "rate" if q.dim in ("", "times") else "rate:" + q.dim
        unit = f"{q.unit}/{'' if count == 1.0 else format(count, 'g')}{u.name}"
        return q._replace(dim=dim, unit=unit, readings=readings)

    def money(self, i: int) -> int:
        r = self.raw[i]
        cur = _CURRENCY_SYMBOL[r.text[0]]
        body = r.text[1:].strip()
        m = _NUM_RE.match(body)
        base = _fnum(m.group()) if m else 0.0
        suffix = body[m.end():].strip() if m else ""
        scale = _SCALE_SUFFIX.get(suffix, 1e9 if suffix == "B" else 1.0)
        return self.number(i, base, m.group().replace(",", "") if m else "", r.start, r.end, i + 1, currency=cur,
                           scale=scale)

    def glued_number(self, i: int) -> int:
        """Digits glued to letters: "30s", "500ms", "2GiB", "10x", "5th", "10k", "2pm", or an identifier."""
        r = self.raw[i]
        m = _NUM_RE.match(r.text)
        assert m is not None
        base, exact, suffix = _fnum(m.group()), m.group().replace(",", ""), r.text[m.end():]
        low = suffix.lower()
        if low == "x":
            bound, bstart = self.bound_before(i)
            self.push_qty(r.start, r.end, Quantity("x", "x", base, 1.0, exact, _one(base), -1, bound, bstart))
            return i + 1
        if suffix in _SCALE_SUFFIX or (suffix == "B" and "." in exact):
            scale = _SCALE_SUFFIX.get(suffix, 1e9)
            return self.number(i, base, "", r.start, r.end, i + 1, scale=scale)
        if low in ("st", "nd", "rd", "th"):
            return self.number(i, base, exact, r.start, r.end, i + 1)
        if low in ("am", "pm") and base <= 12:
            minutes = (int(base) % 12 + (12 if low == "pm" else 0)) * 60
            self.push_qty(r.start, r.end, Quantity("clock", "clock", float(minutes), 1.0, str(minutes),
                                                   _one(float(minutes)), -1, 0, -1))
            return i + 1
        u = UNITS.get(low) or UNITS.get(suffix)
        if u is not None and u.glued:
            bound, bstart = self.bound_before(i)
            return self.unit_qty(r.start, r.end, i + 1, base, 1.0, exact, u, bound, bstart, i)
        self.out.append(Token(r.text, r.start, r.end, ENTITY, r.low, parts=((r.low, r.text, r.start, r.end),),
                              sub="ident"))
        return i + 1

    # ---- dates and times ------------------------------------------------------------------------
    def iso_date(self, i: int) -> int:
        r = self.raw[i]
        ymd = [int(p) for p in r.text[:10].split("T")[0].split("-")]
        y, m = ymd[0], ymd[1]
        d = ymd[2] if len(ymd) > 2 else 0
        if not (1 <= m <= 12 and 0 <= d <= 31):
            for pm in re.finditer(r"\d+", r.text):
                v = float(pm.group())
                self.push_qty(r.start + pm.start(), r.start + pm.end(),
                              Quantity("", "", v, 1.0, pm.group(), _one(v), -1, 0, -1))
            return i + 1
        parts = tuple((c, r.text, r.start, r.end) for c in ("y", "m", "d")[:len(ymd)])
        self.out.append(Token(r.text, r.start, r.end, DATE, "#d", date=DateValue(((y, m, d, 0),), False), parts=parts))
        return i + 1

    def slash_date(self, i: int) -> int:
        r = self.raw[i]
        p = [int(x) for x in r.text.split("/")]
        if p[0] > 31:
            readings: tuple[tuple[int, int, int, int], ...] = ((p[0], p[1], p[2], 0),)
        elif p[0] > 12:
            readings = ((p[2], p[1], p[0], 0),)
        elif p[1] > 12:
            readings = ((p[2], p[0], p[1], 0),)
        else:
            readings = ((p[2], p[1], p[0], 0), (p[2], p[0], p[1], 0))
        parts = tuple((c, r.text, r.start, r.end) for c in ("y", "m", "d"))
        self.out.append(Token(r.text, r.start, r.end, DATE, "#d", date=DateValue(readings, False), parts=parts))
        return i + 1

    def clock(self, i: int) -> int:
        r = self.raw[i]
        hh, mm = (int(x) for x in r.text[:5].split(":")[:2]) if ":" in r.text[:3] else (0, 0)
        low = r.low.replace(".", "")
        if low.endswith("pm") and hh < 12:
            hh += 12
        elif low.endswith("am") and hh == 12:
            hh = 0
        minutes = float(hh * 60 + mm)
        self.push_qty(r.start, r.end, Quantity("clock", "clock", minutes, 1.0, str(minutes), _one(minutes), -1, 0, -1))
        return i + 1

    def month(self, i: int, month: int) -> int:
        """A month name with its day and year around it: "5 March 2024", "March 5, 2024",
        "the 5th of March", "May 2021", "June"."""
        raw, out = self.raw, self.out
        r = raw[i]
        start, end = r.start, r.end
        parts: list[tuple[str, str, int, int]] = [("m", r.text, r.start, r.end)]
        day = year = 0
        # a day before: "5 March", "5th of March" (the number was already emitted)
        if out and out[-1].kind == NUMBER and out[-1].qty is not None and out[-1].qty.dim == "" and \
                out[-1].qty.scale == 1.0 and 1 <= out[-1].qty.base <= 31 and out[-1].qty.base == int(out[-1].qty.base):
            between = self.text[out[-1].end:r.start].strip().lower()
            if between in ("", "of", "of the"):
                prev = out.pop()
                day, start = int(prev.qty.base), prev.start  # type: ignore[union-attr]
                parts.insert(0, ("d", prev.text, prev.start, prev.end))
        j = i + 1
        n = len(raw)
        if not day and j < n and raw[j].group in ("num", "numw") and self.adjacent(j, end, " "):
            m = _NUM_RE.match(raw[j].text)
            suffix = raw[j].text[m.end():].lower() if m else "x"
            if m and suffix in ("", "st", "nd", "rd", "th") and "." not in m.group() and 1 <= int(m.group()) <= 31:
                day, end = int(m.group()), raw[j].end
                parts.append(("d", raw[j].text, raw[j].start, raw[j].end))
                j += 1
        k = j
        if k < n and raw[k].text == ",":
            k += 1
        if k < n and raw[k].group == "num" and re.fullmatch(r"\d{4}", raw[k].text) and \
                YEAR_MIN <= int(raw[k].text) <= YEAR_MAX and len(self.text[end:raw[k].start].strip(" ,")) == 0:
            year, end = int(raw[k].text), raw[k].end
            parts.append(("y", raw[k].text, raw[k].start, raw[k].end))
            j = k + 1
        out.append(Token(self.text[start:end], start, end, DATE, "#d", date=DateValue(((year, month, day, 0),), False),
                         parts=tuple(parts)))
        return j

    def quarter(self, i: int, q: int, half: bool) -> int:
        r = self.raw[i]
        months = range(1, 7) if half and q == 1 else range(7, 13) if half else range(3 * q - 2, 3 * q + 1)
        end, j, year = r.end, i + 1, 0
        parts: list[tuple[str, str, int, int]] = [("m", r.text, r.start, r.end)]
        if j < len(self.raw) and self.raw[j].group == "num" and re.fullmatch(r"\d{4}", self.raw[j].text) and \
                self.adjacent(j, end, " "):
            year, end = int(self.raw[j].text), self.raw[j].end
            parts.append(("y", self.raw[j].text, self.raw[j].start, self.raw[j].end))
            j += 1
        self.out.append(Token(self.text[r.start:end], r.start, end, DATE, "#d",
                              date=DateValue(tuple((year, m, 0, 0) for m in months), False), parts=tuple(parts)))
        return j

    # ---- words ----------------------------------------------------------------------------------
    def number_words(self, i: int) -> tuple[float, int]:
        """Value of a run of number words ("twenty-five", "two hundred and fifty") and the raw
        index after it."""
        total, current, j = 0.0, 0.0, i
        n = len(self.raw)
        while j < n and self.raw[j].group == "word":
            w = self.raw[j].low
            pieces = w.split("-")
            if all(p in _NUMBER_WORDS for p in pieces) and len(pieces) <= 2:
                current += sum(_NUMBER_WORDS[p] for p in pieces)
            elif w in _NUMBER_MULT and (current or total):
                mult = _NUMBER_MULT[w]
                if mult == 100.0:
                    current *= 100.0
                else:
                    total += current * mult
                    current = 0.0
            elif w == "and" and j + 1 < n and self.raw[j + 1].low in _NUMBER_WORDS and (current >= 100 or total):
                pass
            else:
                break
            j += 1
        return total + current, j

    def word(self, i: int, sent_start: bool) -> int:
        raw, out = self.raw, self.out
        r = raw[i]
        s, low = r.text, r.low
        poss = False
        if low.endswith("'s") and len(low) > 3:
            low, poss = low[:-2], True
        nxt = self.low(i + 1)
        # negation: contractions, cues (minus idioms and bounds such as "no more than")
        if low in _NEG_CONTRACTIONS or low.endswith("n't"):
            out.append(Token(s, r.start, r.end, NEG, "#neg"))
            return i + 1
        if low in NEGATION_CUES:
            if (low, nxt) in _NEG_IDIOMS or (self.low(i - 1), low) in _NEG_IDIOMS or \
                    (low, nxt, self.low(i + 2)) in _BOUNDS or (low, nxt) in _BOUNDS:
                out.append(Token(s, r.start, r.end, FUNC, low))
            else:
                out.append(Token(s, r.start, r.end, NEG, "#neg"))
            return i + 1
        if low in ("need", "needs") and nxt in ("not", "no"):
            out.append(Token(s, r.start, r.end, FUNC, low))  # modal "need not" (= not required)
            return i + 1
        if s.isupper() and len(s) > 1 and low in _CAPS_WORDS:
            s_case = s.lower()  # RFC 2119 "MUST", "NOTE": ordinary words
        else:
            s_case = s
        # numbers written as words
        head, _, tail = low.partition("-")
        if head in _NUMBER_WORDS and not (low == "one" and nxt in ("another", "of")) and \
                not (low == "one" and self.low(i - 1) in ("no", "any", "each", "every", "the", "this", "that")):
            if tail and tail.split("-")[0] not in _NUMBER_WORDS:
                return self.number_word_compound(i, float(_NUMBER_WORDS[head]), len(head), tail)
            value, j = self.number_words(i)
            end = raw[j - 1].end
            return self.number(i, value, "", r.start, end, j)
        if low in _TIMES_WORDS or low in _MULT_WORDS:
            return self.times_word(i, low)
        if low.endswith("fold") and (low[:-4] in _NUMBER_WORDS or low[:-4] in _NUMBER_MULT):
            v = float(_NUMBER_WORDS.get(low[:-4], 0) or _NUMBER_MULT.get(low[:-4], 0.0))  # "tenfold"
            bound, bstart = self.bound_before(i)
            self.push_qty(r.start, r.end, Quantity("x", "x", v, 1.0, "", _one(v), -1, bound, bstart))
            return i + 1
        if low == "half" and nxt in ("a", "an") and self.low(i + 2) in UNITS:
            u = UNITS[self.low(i + 2)]
            if u.dim in ("time", "cal"):
                out.append(Token(s, r.start, r.end, FUNC, low))
                out.append(Token(raw[i + 1].text, raw[i + 1].start, raw[i + 1].end, FUNC, "a"))
                return self.unit_qty(raw[i + 2].start, raw[i + 2].end, i + 3, 0.5, 1.0, "", u, 0, -1, i)
        if low in ("a", "an") and nxt in ("second", "minute", "hour", "day", "week", "month", "year", "fortnight") and \
                self.low(i - 1) in ("within", "for", "after", "in", "than", "over", "under", "about", "least", "most",
                                    "to", "once", "every", "each", "past", "last", "takes", "take", "lasts"):
            if self.low(i - 1) in ("once",):
                out.append(Token(s, r.start, r.end, FUNC, low))
                return i + 1
            u = UNITS[nxt]
            bound, bstart = self.bound_before(i)
            return self.unit_qty(r.start, raw[i + 1].end, i + 2, 1.0, 1.0, "1", u, bound, bstart, i)
        if low in ("every", "each") and nxt in ("second", "minute", "hour", "day", "week", "month", "year", "night"):
            u = UNITS["day" if nxt == "night" else nxt]
            out.append(Token(s, r.start, r.end, FUNC, low))
            return self.unit_qty(raw[i + 1].start, raw[i + 1].end, i + 2, 1.0, 1.0, "1", u, 0, -1, i)
        if low in _FREQ_ADVERBS or low in ("monthly", "yearly", "annually", "quarterly"):
            following = raw[i + 1] if i + 1 < len(raw) else None
            attributive = following is not None and following.group == "word" and \
                following.low not in FUNCTION_WORDS and following.low not in _CLAUSE_WORDS
            if not attributive:
                if low in _FREQ_ADVERBS:
                    secs = _FREQ_ADVERBS[low]
                    readings = _one(1.0 / secs)
                else:
                    months = {"monthly": 1, "quarterly": 3}.get(low, 12)
                    lo, hi = _time_readings(float(months), UNITS["month"])[0]
                    readings = ((1.0 / hi, 1.0 / lo),)
                self.push_qty(r.start, r.end, Quantity("rate", "1/" + low, 1.0, 1.0, "1", readings, -1, 0, -1))
                return i + 1
        # dates
        month = _MONTHS.get(low) or _MONTH_ABBR.get(low.rstrip("."))
        if month and s[0].isupper():
            near_number = (i + 1 < len(raw) and raw[i + 1].group in ("num", "numw")) or (
                i > 0 and raw[i - 1].group in ("num", "numw")) or self.low(i - 1) == "of"
            if (low in _MONTHS and low != "may") or near_number:
                return self.month(i, month)
        if low.rstrip("s") in _WEEKDAYS and s[0].isupper():
            out.append(Token(s, r.start, r.end, DATE, "#d", date=DateValue(((0, 0, 0, _WEEKDAYS[low.rstrip("s")]),),
                                                                           False), parts=(("w", s, r.start, r.end),)))
            return i + 1
        if re.fullmatch(r"[qh][1-4]", low) and s[0].isupper() and (low[0] == "q" or low[1] in "12"):
            return self.quarter(i, int(low[1]), low[0] == "h")
        if low in ("noon", "midnight") and self.low(i - 1) in ("at", "until", "by", "before", "after", "from"):
            v = 720.0 if low == "noon" else 0.0
            self.push_qty(r.start, r.end, Quantity("clock", "clock", v, 1.0, str(v), _one(v), -1, 0, -1))
            return i + 1
        # currency code before a number: "EUR 35 million"
        if s in _CURRENCY_CODES and i + 1 < len(raw) and raw[i + 1].group in ("num", "money") and \
                self.adjacent(i + 1, r.end, " "):
            nr = raw[i + 1]
            if nr.group == "num":
                return self.number(i + 1, _fnum(nr.text), nr.text.replace(",", ""), r.start, nr.end, i + 2,
                                   currency=s, first=i)
        # polarity words ("enabled" / "disabled")
        pol = POLARITY.get(low)
        if pol is not None and (not pol.predicative or self.predicative(i)):
            out.append(Token(s, r.start, r.end, POLAR, "#" + pol.group, sign=pol.sign))
            return i + 1
        # entities
        sub = _entity_sub(s_case, low, sent_start, poss)
        if sub:
            key = _entity_key(low, sub)
            out.append(Token(s, r.start, r.end, ENTITY, key, parts=((key, s, r.start, r.end),),
                             sub=sub + ("+poss" if poss else "")))
            return i + 1
        if low in FUNCTION_WORDS or low in _CLAUSE_WORDS:
            kind = BREAK if low in _CLAUSE_WORDS else FUNC
            out.append(Token(s, r.start, r.end, kind, "clause" if kind == BREAK else low))
            return i + 1
        out.append(Token(s, r.start, r.end, WORD, _word_key(low), sub="poss" if poss else ""))
        return i + 1

    def number_word_compound(self, i: int, value: float, head_len: int, tail: str) -> int:
        """"three-node" is the number 3 and the word "node"; "three-day" is 3 days."""
        r = self.raw[i]
        u = UNITS.get(tail)
        if u is not None and u.spaced:
            bound, bstart = self.bound_before(i)
            return self.unit_qty(r.start, r.end, i + 1, value, 1.0, "", u, bound, bstart, i)
        split = r.start + head_len
        self.push_qty(r.start, split, Quantity("", "", value, 1.0, "", _one(value), -1, 0, -1))
        self.out.append(Token(self.text[split + 1:r.end], split + 1, r.end, WORD, _word_key(tail)))
        return i + 1

    def times_word(self, i: int, low: str) -> int:
        """"twice as fast" (multiplier), "retries twice" (a count), "twice a day" (a rate)."""
        r = self.raw[i]
        nxt = self.low(i + 1)
        bound, bstart = self.bound_before(i)
        if low in _MULT_WORDS and (low not in _TIMES_WORDS or nxt in _COMPARATIVE_NEXT or nxt.endswith("er")):
            v = _MULT_WORDS[low]
            self.push_qty(r.start, r.end, Quantity("x", "x", v, 1.0, "", _one(v), -1, bound, bstart))
            return i + 1
        if low in _TIMES_WORDS:
            q = Quantity("times", "times", _TIMES_WORDS[low], 1.0, "", _one(_TIMES_WORDS[low]), -1, bound, bstart)
            if low == "once" and self.low(i + 1) not in _RATE_MARKERS:
                self.out.append(Token(r.text, r.start, r.end, FUNC, low))
                return i + 1
            return self.rate_or_push(r.start, r.end, i + 1, q, i)
        self.out.append(Token(r.text, r.start, r.end, WORD, _word_key(low)))
        return i + 1

    def predicative(self, i: int) -> bool:
        prev = self.low(i - 1)
        if prev in _PREDICATIVE_BEFORE:
            return True
        return prev == "to" and self.low(i - 2) in ("set", "defaults", "default", "switched", "turned")


def _word_key(low: str) -> str:
    """Comparison key of a content word: stem, then synonym group."""
    st = _stem(low)
    return _SYNONYMS.get(st, st)


def _is_common(low: str) -> bool:
    """An ordinary English word (a capitalised sentence-initial word that is not a name)."""
    if low in _COMMON_WORDS or low in FUNCTION_WORDS or low in POLARITY or low in _NUMBER_WORDS or low in UNITS:
        return True
    if _stem(low) in _COMMON_STEMS or (low.endswith("s") and low[:-1] in _COMMON_WORDS):
        return True
    return low.endswith(_COMMON_SUFFIXES) and len(low) > 4


def _entity_sub(s: str, low: str, sent_start: bool, poss: bool) -> str:
    """Which kind of entity a word is ("" = not an entity): a lexicon name, an identifier, an
    acronym, a proper noun (capitalised inside a sentence), or a capitalised sentence-initial word
    that is no common English word ("weak")."""
    lex = ENTITY_LEXICON.get(low)
    if lex is not None and (lex.any_case or s[0].isupper()):
        return "lex"
    if low in _ABBREVIATIONS and not s[0].isupper():
        return ""  # "e.g", "i.e" (a capitalised "Corp", "Inc" is part of a name)
    if _IDENT_RE.search(s):
        return "ident"
    letters = [c for c in s if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return "acro" if low not in UNITS else ""
    if not s[0].isupper():
        return "name" if any(c.isupper() for c in s[1:]) else ""  # "eBPF", "iPhone"
    if any(c.isupper() for c in s[1:]):
        return "name"  # "PostgreSQL", "HireSignal"
    if not sent_start:
        return "name" if len(s) > 1 else ""
    if poss:
        return "name"  # "Lumen's standard price ..."
    return "" if _is_common(low) else "weak"


def _entity_key(low: str, sub: str) -> str:
    if sub == "lex":
        return ENTITY_LEXICON[low].canonical
    if sub in ("name", "weak"):
        return _stem(low)
    return low


def _merge_names(toks: list[Token], text: str) -> list[Token]:
    """Adjacent capitalised names form one entity ("Cloud Native Computing Foundation"); a
    possessive ends a run ("Lumen's Frankfurt region")."""
    out: list[Token] = []
    for t in toks:
        if t.kind == ENTITY and t.sub in ("name", "acro", "lex", "weak", "name+poss", "acro+poss", "lex+poss",
                                          "weak+poss") and t.text[0].isupper() and out:
            p = out[-1]
            if p.kind == ENTITY and p.sub in ("name", "acro", "lex", "weak") and p.text[0].isupper() and \
                    text[p.end:t.start] == " ":
                out[-1] = Token(text[p.start:t.end], p.start, t.end, ENTITY, p.key + " " + t.key,
                                parts=p.parts + t.parts, sub=t.sub)
                continue
        out.append(t)
    return out


def _demote_weak(toks: list[Token]) -> list[Token]:
    """A capitalised sentence-initial word that appears in lower case elsewhere in the text is an
    ordinary word ("Stale entries ... stale"), not a name."""
    lower = {t.text.lower() for t in toks if t.kind in (WORD, FUNC) and t.text[:1].islower()}
    if not any(t.sub.startswith("weak") for t in toks):
        return toks
    return [Token(t.text, t.start, t.end, WORD, _word_key(t.text.lower())) if t.sub.startswith("weak")
            and t.text.lower() in lower and t.kind == ENTITY else t for t in toks]


_COMPARATIVES = frozenset(["more", "less", "longer", "later", "greater", "fewer", "shorter", "earlier", "higher",
                           "lower", "larger", "smaller", "older", "newer"])


def _absorb_comparative_negation(toks: list[Token]) -> list[Token]:
    """"must not be kept longer than necessary" says what "kept no longer than necessary" says:
    a negation whose clause holds a comparative bound ("longer than") turns the bound around
    (a number after it becomes an upper bound) and is no polarity flip of its own."""
    out = list(toks)
    for k, t in enumerate(out):
        if t.kind != NEG:
            continue
        for j in range(k + 1, len(out) - 1):
            u = out[j]
            if u.kind == BREAK and u.key != "label":
                break
            if u.text.lower() in _COMPARATIVES and out[j + 1].text.lower() == "than":
                out[k] = Token(t.text, t.start, t.end, FUNC, "not")
                for m in range(j + 2, len(out)):
                    q = out[m].qty
                    if out[m].kind == BREAK:
                        break
                    if q is not None and q.bound != 0:
                        out[m] = out[m]._replace(qty=q._replace(bound=-q.bound))
                        break
                break
    return out


def _attributive_polarity(toks: list[Token]) -> list[Token]:
    """A polarity word used attributively in a clause that states a number or a date qualifies that
    value ("the public API allows 100 rpm" / "the private API allows 1000 rpm": two attributes),
    so it becomes an ordinary word; "the bucket is public" stays an assertion."""
    out = list(toks)
    first = 0
    for k in range(len(out) + 1):
        if k < len(out) and not (out[k].kind == BREAK and out[k].key != "label"):
            continue
        if any(t.kind in (NUMBER, DATE) for t in out[first:k]):
            for j in range(first, k - 1):
                if out[j].kind == POLAR and out[j + 1].kind in (WORD, ENTITY):
                    t = out[j]
                    out[j] = Token(t.text, t.start, t.end, WORD, _word_key(t.text.lower()))
        first = k + 1
    return out


@lru_cache(maxsize=65536)
def tokenize(text: str) -> tuple[Token, ...]:
    """Tokens of ``text`` with character spans into it (SPEC-005 §5.3 value kinds): numbers with
    units, dates, percentages, multipliers, money, rates, clock times, entities, polarity words,
    negations, clause breaks, content and function words. Memoised (a pure function of the text)."""
    toks = _Lexer(text).run()
    return tuple(_merge_names(_attributive_polarity(_absorb_comparative_negation(_demote_weak(toks))), text))


# ================================================================================================
# Per-text analysis: clauses, attribute contexts, values
# ================================================================================================

class _Clause(NamedTuple):
    sent: int
    first: int  # token index range [first, last)
    last: int
    bag: frozenset[str]  # attribute context: content keys (borrowed from a neighbour when empty)
    entities: frozenset[str]
    negs: tuple[int, ...]
    polars: tuple[int, ...]
    parity: int  # (negations + negative polarity words) mod 2
    owner: str  # the name the clause is about ("The kubelet listens ...", "Kafka's port ..."), or ""


class _Value(NamedTuple):
    tok: int
    clause: int
    cls: str  # "q:<dim>" | "date" | "ent"
    rank: int  # position among the text's values of the same class
    ctx: frozenset[str]  # attribute context: the clause's content words and the other names in it
    plain: frozenset[str]  # entity: stems of its words (to find it written as ordinary words)


class _Doc(NamedTuple):
    text: str
    tokens: tuple[Token, ...]
    clauses: tuple[_Clause, ...]
    values: tuple[_Value, ...]
    words: frozenset[str]  # every content key, polarity group and entity part of the text
    entity_keys: frozenset[str]
    plain: frozenset[str]  # stems of the text's ordinary (non-entity) words
    sent_bags: tuple[frozenset[str], ...]
    signal: bool  # any value, negation or polarity word
    polar_or_neg: bool
    groups: dict[str, tuple[int, ...]]  # value class -> indices into values
    years: tuple[int, ...]  # values that are lone years (they may also pair with plain numbers)


_BE_FORMS = frozenset(["is", "are", "was", "were", "be", "been", "being"])


def _owner(toks: tuple[Token, ...], a: int, b: int) -> str:
    """The clause's owner: a name that opens it and is followed by a predicate other than a form
    of *be* ("The kubelet listens on 10250", "Kafka's default port is 9092"). "Stripe is our
    processor" and "... stores data in etcd" have none: there the name is the value."""
    k = a
    while k < b and toks[k].kind == FUNC:
        k += 1
    if k >= b or toks[k].kind != ENTITY:
        return ""
    if toks[k].sub.endswith("+poss"):
        return toks[k].key
    nxt = k + 1
    while nxt < b and toks[nxt].kind == ENTITY and toks[nxt].sub == "ident":
        nxt += 1  # "Lumen API v4 allows ...": the version belongs to the name
    if nxt >= b or toks[nxt].kind in (BREAK, NUMBER, DATE, ENTITY) or toks[nxt].key in _BE_FORMS:
        return ""
    return toks[k].key


def _value_class(t: Token) -> str:
    if t.kind == NUMBER and t.qty is not None:
        return "q:" + t.qty.dim
    if t.kind == DATE:
        return "date"
    return "ent"


@lru_cache(maxsize=65536)
def _analyse(text: str) -> _Doc:
    toks = tokenize(text)
    spans: list[tuple[int, int, int]] = []  # (sentence, first, last)
    sent, first = 0, 0
    for k, t in enumerate(toks):
        if t.kind == BREAK and t.key != "label":
            if k > first:
                spans.append((sent, first, k))
            first = k + 1
            if t.key == "sent":
                sent += 1
    if len(toks) > first:
        spans.append((sent, first, len(toks)))
    own: list[frozenset[str]] = []
    for _, a, b in spans:
        own.append(frozenset(t.key for t in toks[a:b] if t.kind in (WORD, POLAR)))
    clauses: list[_Clause] = []
    values: list[_Value] = []
    ranks: dict[str, int] = {}
    sent_words: dict[int, set[str]] = {}
    for ci, (s, a, b) in enumerate(spans):
        bag = own[ci]
        if not bag:  # "ports 2379 and 2380", "in eu-west-1 and us-east-1": the list item shares the attribute
            for cj in list(range(ci - 1, -1, -1)) + list(range(ci + 1, len(spans))):
                if spans[cj][0] == s and own[cj]:
                    bag = own[cj]
                    break
        negs = tuple(k for k in range(a, b) if toks[k].kind == NEG)
        polars = tuple(k for k in range(a, b) if toks[k].kind == POLAR)
        parity = (len(negs) + sum(1 for k in polars if toks[k].sign < 0)) % 2
        ents = frozenset(toks[k].key for k in range(a, b) if toks[k].kind == ENTITY)
        clauses.append(_Clause(s, a, b, bag, ents, negs, polars, parity, _owner(toks, a, b)))
        sent_words.setdefault(s, set()).update(own[ci])
        for k in range(a, b):
            if toks[k].kind in (NUMBER, DATE, ENTITY):
                cls = _value_class(toks[k])
                ctx = bag | (ents - {toks[k].key}) if toks[k].kind == ENTITY else bag | ents
                plain_stems = frozenset(_stem(part[1].lower()) for part in toks[k].parts) if cls == "ent" \
                    else frozenset()
                values.append(_Value(k, ci, cls, ranks.get(cls, 0), ctx, plain_stems))
                ranks[cls] = ranks.get(cls, 0) + 1
    words: set[str] = set()
    entity_keys: set[str] = set()
    for t in toks:
        if t.kind in (WORD, POLAR):
            words.add(t.key)
        elif t.kind == ENTITY:
            entity_keys.add(t.key)
            words.update(p[0] for p in t.parts)
            words.add(t.key)
    plain = frozenset(_stem(t.text.lower()) for t in toks if t.kind in (WORD, FUNC))
    n_sent = (max(sent_words) + 1) if sent_words else 0
    sent_bags = tuple(frozenset(sent_words.get(s, ())) for s in range(n_sent))
    polar_or_neg = any(t.kind in (NEG, POLAR) for t in toks) or any(
        t.qty is not None and t.qty.bound != 0 for t in toks)
    groups: dict[str, list[int]] = {}
    for x, v in enumerate(values):
        groups.setdefault(v.cls, []).append(x)
    years = tuple(x for x, v in enumerate(values) if v.cls == "date" and toks[v.tok].date is not None
                  and toks[v.tok].date.bare_year)  # type: ignore[union-attr]
    return _Doc(text, toks, tuple(clauses), tuple(values), frozenset(words), frozenset(entity_keys), plain, sent_bags,
                bool(values) or polar_or_neg, polar_or_neg, {k: tuple(v) for k, v in groups.items()}, years)


# ================================================================================================
# Comparing values
# ================================================================================================

def _close(x: float, y: float) -> bool:
    return x == y or abs(x - y) <= 1e-9 * max(abs(x), abs(y))


def _same_quantity(p: Quantity, q: Quantity) -> bool:
    if p.unit == q.unit:
        if p.exact and q.exact and "." in p.exact + q.exact and p.dim == "" and p.scale == q.scale == 1.0:
            return p.exact == q.exact  # unit-less decimals: "Kubernetes 1.30" is not "1.3"
        return _close(p.base * p.scale, q.base * q.scale)
    if p.dim == "money":
        return False
    for lo, hi in p.readings:
        for lo2, hi2 in q.readings:
            tol = 1e-9 * max(abs(hi), abs(hi2))
            if lo <= hi2 + tol and lo2 <= hi + tol:
                return True
    return False


def _same_date(p: DateValue, q: DateValue) -> bool:
    for ra in p.readings:
        for rb in q.readings:
            if all(x == y or not x or not y for x, y in zip(ra, rb)):
                return True
    return False


def _entity_parts(t: Token) -> frozenset[str]:
    return frozenset(p[0] for p in t.parts)


def _same_entity(a: Token, b: Token) -> bool:
    """Same name, or one name contains the other ("Lumen Payments API" / "Lumen API")."""
    if a.key == b.key:
        return True
    pa, pb = _entity_parts(a), _entity_parts(b)
    return pa <= pb or pb <= pa


def _same_value(a: Token, b: Token) -> bool:
    if a.qty is not None and b.qty is not None:
        return _same_quantity(a.qty, b.qty)
    if a.date is not None and b.date is not None:
        return _same_date(a.date, b.date)
    if a.kind == ENTITY and b.kind == ENTITY:
        return _same_entity(a, b)
    return False


def _quantity_pattern(p: Quantity, q: Quantity) -> str:
    if p.dim in ("pct", "x") or q.dim in ("pct", "x"):
        return MAGNITUDE_ALTERED
    if p.dim == "clock":
        return DATE_SHIFTED
    if p.dim == "money" and p.unit != q.unit:
        return ENTITY_SUBSTITUTED if _close(p.base * p.scale, q.base * q.scale) else NUMBER_CHANGED
    if _close(p.base, q.base) and (p.scale != q.scale or (p.power >= 0 and q.power >= 0 and p.power != q.power)):
        return MAGNITUDE_ALTERED  # "$4.2M" / "$4.2B", "2 GiB" / "2 TiB"
    return NUMBER_CHANGED


def _value_diffs(ta: Token, tb: Token, text_a: str, text_b: str) -> list[ValueDiff]:
    """The diffs of two paired values that differ (or whose bounds are reversed)."""
    out: list[ValueDiff] = []
    if ta.qty is not None and tb.qty is not None:
        if not _same_quantity(ta.qty, tb.qty):
            out.append(ValueDiff(_quantity_pattern(ta.qty, tb.qty), (ta.text,), (tb.text,), (ta.start, ta.end),
                                 (tb.start, tb.end)))
        if ta.qty.bound * tb.qty.bound < 0:  # "at least 6 months" / "at most 6 months"
            sa = ta.qty.bound_start if ta.qty.bound_start >= 0 else ta.start
            sb = tb.qty.bound_start if tb.qty.bound_start >= 0 else tb.start
            out.append(ValueDiff(NEGATION_FLIP, (text_a[sa:ta.end],), (text_b[sb:tb.end],), (sa, ta.end),
                                 (sb, tb.end)))
        return out
    if ta.date is not None and tb.date is not None:
        if not _same_date(ta.date, tb.date):
            out.append(_date_diff(ta, tb))
        return out
    if ta.date is not None or tb.date is not None:  # a year against a number
        if ta.text != tb.text:
            out.append(ValueDiff(NUMBER_CHANGED, (ta.text,), (tb.text,), (ta.start, ta.end), (tb.start, tb.end)))
        return out
    if ta.kind == ENTITY and not _same_entity(ta, tb):
        out.append(_entity_diff(ta, tb))
    return out


def _date_diff(ta: Token, tb: Token) -> ValueDiff:
    """Point at the one date part that moved ("March 5" / "March 7": the day), else the whole date."""
    assert ta.date is not None and tb.date is not None
    ra, rb = ta.date.readings[0], tb.date.readings[0]
    moved = [c for c, x, y in zip("ymdw", ra, rb) if x and y and x != y]
    if len(moved) == 1:
        pa = [p for p in ta.parts if p[0] == moved[0]]
        pb = [p for p in tb.parts if p[0] == moved[0]]
        if pa and pb:
            return ValueDiff(DATE_SHIFTED, (pa[0][1],), (pb[0][1],), (pa[0][2], pa[0][3]), (pb[0][2], pb[0][3]))
    return ValueDiff(DATE_SHIFTED, (ta.text,), (tb.text,), (ta.start, ta.end), (tb.start, tb.end))


def _entity_diff(ta: Token, tb: Token) -> ValueDiff:
    """The differing words of two names (shared leading / trailing words left out)."""
    pa, pb = list(ta.parts), list(tb.parts)
    while len(pa) > 1 and len(pb) > 1 and pa[0][0] == pb[0][0]:
        pa, pb = pa[1:], pb[1:]
    while len(pa) > 1 and len(pb) > 1 and pa[-1][0] == pb[-1][0]:
        pa, pb = pa[:-1], pb[:-1]
    return ValueDiff(ENTITY_SUBSTITUTED, tuple(p[1] for p in pa), tuple(p[1] for p in pb), (pa[0][2], pa[-1][3]),
                     (pb[0][2], pb[-1][3]))


# ================================================================================================
# Pairing
# ================================================================================================

class _Pair:
    """One comparison of two analysed texts (short-lived: caches clause alignment)."""

    __slots__ = ("_lone_a", "_lone_b", "_matching", "da", "db", "foreign_a", "foreign_b", "scores")

    def __init__(self, da: _Doc, db: _Doc) -> None:
        self.da, self.db = da, db
        self.foreign_a = tuple(bool(bag - db.words) for bag in da.sent_bags)
        self.foreign_b = tuple(bool(bag - da.words) for bag in db.sent_bags)
        self.scores: dict[tuple[int, int], tuple[float, bool]] = {}
        self._matching: list[tuple[int, int]] | None = None
        self._lone_a: dict[int, bool] = {}
        self._lone_b: dict[int, bool] = {}

    def lone_entity(self, side_a: bool, ci: int) -> bool:
        """Does clause ``ci`` name something the other text never mentions?"""
        cache = self._lone_a if side_a else self._lone_b
        got = cache.get(ci)
        if got is None:
            clause = (self.da if side_a else self.db).clauses[ci]
            got = cache[ci] = _one_sided_entity(clause, self.db if side_a else self.da)
        return got

    def score(self, ia: int, ib: int) -> tuple[float, bool]:
        """How well clause ``ia`` of text a and clause ``ib`` of text b state the same attribute:
        (-1, _) when one carries a qualifier word the other text lacks, else the Jaccard overlap of
        their contexts; the flag says whether a name on one side only qualifies the clause ("in
        eu-west-1"), which separates two values but not two opposite assertions."""
        key = (ia, ib)
        got = self.scores.get(key)
        if got is not None:
            return got
        ca, cb = self.da.clauses[ia], self.db.clauses[ib]
        da, db = self.da, self.db
        if self.foreign_a[ca.sent] and self.foreign_b[cb.sent]:
            s = -1.0  # both sentences carry words the other text lacks: they talk about different things
        elif not (ca.bag <= db.words and cb.bag <= da.words):
            s = -1.0  # an inserted or substituted qualifier next to the value
        elif ca.owner and cb.owner and ca.owner != cb.owner and not (_present(ca.owner, db)
                                                                   and _present(cb.owner, da)):
            s = -1.0  # about another thing: "The kubelet listens on 10250" / "The kube-proxy listens on 10249"
        elif ca.bag - cb.bag and cb.bag - ca.bag:
            s = -1.0  # each clause has a qualifier the other lacks ("client port" / "peer port")
        elif not ca.bag and not cb.bag:
            s = 1.0
        else:
            s = len(ca.bag & cb.bag) / len(ca.bag | cb.bag)
        got = (s, s >= 0 and self.lone_entity(True, ia) != self.lone_entity(False, ib))
        self.scores[key] = got
        return got

    def value_score(self, ia: int, ib: int) -> float:
        s, entity_qualified = self.score(ia, ib)
        return -1.0 if entity_qualified else s

    def matching(self) -> list[tuple[int, int]]:
        """Clauses of a paired one to one with clauses of b: best alignment first, then the
        nearest position (so two clauses with the same context keep their order)."""
        if self._matching is not None:
            return self._matching
        cands: list[tuple[float, int, int, int]] = []
        for ia in range(len(self.da.clauses)):
            for ib in range(len(self.db.clauses)):
                s = self.score(ia, ib)[0]
                if s >= ALIGN_MIN:
                    cands.append((-s, abs(ia - ib), ia, ib))
        cands.sort()
        used_a: set[int] = set()
        used_b: set[int] = set()
        out: list[tuple[int, int]] = []
        for _, _, ia, ib in cands:
            if ia not in used_a and ib not in used_b:
                used_a.add(ia)
                used_b.add(ib)
                out.append((ia, ib))
        self._matching = out
        return out


def _present(e: str, other: _Doc) -> bool:
    """Is the name ``e`` (an entity key) mentioned anywhere in the other text?"""
    return e in other.entity_keys or e in other.words or all(p in other.words for p in e.split(" "))


def _one_sided_entity(c: _Clause, other: _Doc) -> bool:
    return any(not _present(e, other) for e in c.entities)


def _equal_pair(a: Token, b: Token) -> bool:
    return _same_value(a, b) and (a.qty is None or b.qty is None or a.qty.bound * b.qty.bound >= 0)


def _pair_values(p: _Pair, diffs: list[ValueDiff]) -> None:
    """Pair the values of the two texts and record the pairs that differ. A pair needs aligned
    clauses (no qualifier on one side only) and overlapping attribute contexts; the best context
    match is taken first, equal values before unequal ones, then the nearest position. So a swap
    ("client 2379, peer 2380" / "client 2380, peer 2379") is two changed pairs, a list in another
    order is none, and values of different attributes are never compared."""
    da, db = p.da, p.db
    ta, tb = da.tokens, db.tokens
    va_all, vb_all = da.values, db.values
    cands: list[tuple[float, int, int, int, int, int, int, int]] = []

    def collect(xs: tuple[int, ...], ys: tuple[int, ...]) -> None:
        for x in xs:
            va = va_all[x]
            # a name the other text writes as ordinary words ("Pod" / "Pods are ...") is present there
            if va.plain and ta[va.tok].key not in db.entity_keys and va.plain <= db.plain:
                continue
            a_tok, ctx_a = ta[va.tok], va.ctx
            for y in ys:
                vb = vb_all[y]
                if vb.plain and tb[vb.tok].key not in da.entity_keys and vb.plain <= da.plain:
                    continue
                if p.value_score(va.clause, vb.clause) < 0:
                    continue
                ctx_b = vb.ctx
                if ctx_a or ctx_b:
                    s = len(ctx_a & ctx_b) / len(ctx_a | ctx_b)
                    if s < ALIGN_MIN:
                        continue
                else:
                    s = 1.0
                b_tok = tb[vb.tok]
                eq = 0 if _equal_pair(a_tok, b_tok) else 1
                cands.append((-s, eq, abs(va.rank - vb.rank), va.rank + vb.rank, va.tok, vb.tok, x, y))

    for cls, xs in da.groups.items():
        ys = db.groups.get(cls)
        if ys:
            collect(xs, ys)
    # a lone year against a plain number ("the default port is 2000" / "... 2379"): NUMBER_CHANGED
    if da.years and "q:" in db.groups:
        collect(da.years, db.groups["q:"])
    if db.years and "q:" in da.groups:
        collect(da.groups["q:"], db.years)
    if not cands:
        return
    cands.sort()
    used_a: set[int] = set()
    used_b: set[int] = set()
    for c in cands:
        x, y = c[6], c[7]
        if x in used_a or y in used_b:
            continue
        used_a.add(x)
        used_b.add(y)
        if c[1]:
            diffs.extend(_value_diffs(ta[va_all[x].tok], tb[vb_all[y].tok], da.text, db.text))


def _governed(toks: tuple[Token, ...], k: int, last: int) -> int:
    """The token a negation at ``k`` governs: the next token that is not a function word."""
    for j in range(k + 1, last):
        t = toks[j]
        if t.kind in (FUNC, NEG) or (t.kind == WORD and t.key in _SCOPE_SKIP):
            continue
        return j
    return -1


def _find_key(toks: tuple[Token, ...], c: _Clause, governed: Token) -> int:
    """Where the other clause states what the negation governs (zero-width NEGATION_FLIP span)."""
    for j in range(c.first, c.last):
        t = toks[j]
        if t.kind == governed.kind and (t.key == governed.key if t.kind in (WORD, POLAR, ENTITY)
                                        else _same_value(t, governed)):
            return t.start
    for j in range(c.first, c.last):
        if toks[j].kind not in (FUNC, NEG):
            return toks[j].start
    return toks[c.first].start


def _flip_diff(da: _Doc, ca: _Clause, db: _Doc, cb: _Clause) -> ValueDiff | None:
    """NEGATION_FLIP between two aligned clauses of opposite polarity, or None."""
    if ca.parity == cb.parity:
        return None
    ta, tb = da.tokens, db.tokens
    if len(ca.negs) % 2 != len(cb.negs) % 2:
        if len(ca.negs) > len(cb.negs):
            k = ca.negs[0]
            g = _governed(ta, k, ca.last)
            pos = _find_key(tb, cb, ta[g]) if g >= 0 else tb[cb.first].start
            return ValueDiff(NEGATION_FLIP, (ta[k].text,), (), (ta[k].start, ta[k].end), (pos, pos))
        k = cb.negs[0]
        g = _governed(tb, k, cb.last)
        pos = _find_key(ta, ca, tb[g]) if g >= 0 else ta[ca.first].start
        return ValueDiff(NEGATION_FLIP, (), (tb[k].text,), (pos, pos), (tb[k].start, tb[k].end))
    for ka in ca.polars:
        for kb in cb.polars:
            if ta[ka].key == tb[kb].key and ta[ka].sign != tb[kb].sign:
                return ValueDiff(NEGATION_FLIP, (ta[ka].text,), (tb[kb].text,), (ta[ka].start, ta[ka].end),
                                 (tb[kb].start, tb[kb].end))
    return None


def _pair_clauses(p: _Pair, diffs: list[ValueDiff]) -> None:
    """NEGATION_FLIP for every matched clause pair that shares context and differs in polarity."""
    da, db = p.da, p.db
    for ia, ib in p.matching():
        ca, cb = da.clauses[ia], db.clauses[ib]
        if ca.parity == cb.parity:
            continue
        only_a, only_b = ca.entities - cb.entities, cb.entities - ca.entities
        if (only_a and all(_present(e, db) for e in only_a)) or (only_b and all(_present(e, da) for e in only_b)):
            continue  # names something the other text states in another clause: "not for 4xx" / "for 5xx, not for 4xx"
        if ca.bag & cb.bag or (not ca.bag and not cb.bag and ca.entities & cb.entities):
            d = _flip_diff(da, ca, db, cb)
            if d is not None:
                diffs.append(d)


def _compare(text_a: str, text_b: str) -> ValueConflict | None:
    da, db = _analyse(text_a), _analyse(text_b)
    if not (da.signal or db.signal):
        return None
    p = _Pair(da, db)
    diffs: list[ValueDiff] = []
    if da.values and db.values:
        _pair_values(p, diffs)
    if da.polar_or_neg or db.polar_or_neg:
        _pair_clauses(p, diffs)
    if not diffs:
        return None
    return _conflict(diffs)


def _conflict(diffs: list[ValueDiff]) -> ValueConflict:
    uniq = sorted(set(diffs), key=lambda d: (d.span_a, d.span_b, d.pattern, d.tokens_a, d.tokens_b))
    return ValueConflict(patterns=tuple(sorted({d.pattern for d in uniq})), diffs=tuple(uniq))


def _mirror(vc: ValueConflict | None) -> ValueConflict | None:
    if vc is None:
        return None
    return _conflict([ValueDiff(d.pattern, d.tokens_b, d.tokens_a, d.span_b, d.span_a) for d in vc.diffs])


@lru_cache(maxsize=131072)
def values_conflict(text_a: str, text_b: str) -> ValueConflict | None:
    """Do the two texts assert different values for the same attribute? (SPEC_NOTES §2.6,
    SPEC-027 §2.2, SPEC-005 §5.3 patterns applied pairwise.)

    Returns None for a paraphrase with no changed value, else the distinct sorted patterns and one
    :class:`ValueDiff` per changed value (``span_a`` / ``tokens_a`` refer to ``text_a``). Pure and
    memoised; symmetric by construction (the pair is compared in a canonical order and mirrored).
    """
    if text_a == text_b:
        return None
    if text_b < text_a:
        return _mirror(_compare(text_b, text_a))
    return _compare(text_a, text_b)

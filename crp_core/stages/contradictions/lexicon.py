"""The lexicons of value-conflict detection (docs/reference/pipeline.md §4): pattern names, token kinds, the
data files under ``crp_core/data/lexicon/`` (read once) and the small closed tables of English."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from .memos import text_memo

NUMBER_CHANGED = "NUMBER_CHANGED"
ENTITY_SUBSTITUTED = "ENTITY_SUBSTITUTED"
NEGATION_FLIP = "NEGATION_FLIP"
DATE_SHIFTED = "DATE_SHIFTED"
MAGNITUDE_ALTERED = "MAGNITUDE_ALTERED"

#: the SPEC-005 §5.3 patterns, sorted
PATTERNS: tuple[str, ...] = (DATE_SHIFTED, ENTITY_SUBSTITUTED, MAGNITUDE_ALTERED, NEGATION_FLIP, NUMBER_CHANGED)

#: a bare 4-digit integer in this range is a year (docs/reference/pipeline.md §4); etcd's 2379 is a number
YEAR_MIN, YEAR_MAX = 1900, 2099
#: an older 4-digit number (from this year up) is a year only after a word that introduces a date ("in 1066",
#: "since 1789", "14 July 1789"): "in 1500 ms" has a unit, "port 1433" no such word
OLD_YEAR_MIN = 1000
YEAR_BEFORE = frozenset(["in", "since", "until", "till", "by", "from", "before", "after", "circa", "c.", "year"])
#: two clauses state the same attribute when their contexts overlap at least this much (Jaccard)
ALIGN_MIN = 0.5
#: pairing two texts compares clauses, values of one class and polarity words pairwise, so each side is
#: bounded: the first this many of each in text order (a fact is a claim, not a table; beyond this the
#: comparison of two long texts would grow with the product of their lengths)
PAIR_MAX_CLAUSES = 64
PAIR_MAX_VALUES = 128

# token kinds
WORD, FUNC, ENTITY, NUMBER, DATE, POLAR, NEG, BREAK = (
    "word",
    "func",
    "entity",
    "number",
    "date",
    "polar",
    "neg",
    "break",
)


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


#: irregular forms read as their word: past forms ("may be sold" / "do not sell"), plurals (irregular_forms.tsv)
IRREGULAR_FORMS = {form: base for base, forms in _rows("irregular_forms.tsv") for form in forms.split()}


@text_memo()
def stem(w: str) -> str:
    """A small suffix stripper so inflections share a key (uses/use, retries/retried/retry, encryption/encrypted,
    caches/cache, running/run; irregular forms: sold/sell, children/child). Not a linguistic stemmer."""
    if w in IRREGULAR_FORMS:
        return stem(IRREGULAR_FORMS[w])
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
            w = w[:-1] if w.endswith("eed") else w[: -len(suffix)]  # guaranteed / guarantee, agreed / agree
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsaeiou":
        w = w[:-1]  # dropped / drop, running / run
    return w


def _load_words(name: str) -> frozenset[str]:
    return frozenset(r[0].lower() for r in _rows(name))


FUNCTION_WORDS = _load_words("function_words.txt")
COMMON_WORDS = _load_words("common_words.txt")
COMMON_STEMS = frozenset(stem(w) for w in COMMON_WORDS)
#: suffixes of derived common words ("Encryption", "Deployers", "Retention"): never names
COMMON_SUFFIXES = (
    "tion",
    "sion",
    "ment",
    "ments",
    "ness",
    "ity",
    "ities",
    "ing",
    "ings",
    "ed",
    "ly",
    "able",
    "ible",
    "ance",
    "ence",
    "ive",
    "ives",
    "ous",
    "ism",
    "ist",
    "ists",
    "ize",
    "ise",
    "ify",
    "ure",
    "ures",
    "age",
    "ship",
    "er",
    "ers",
    "or",
    "ors",
    "al",
    "als",
    "ic",
    "ics",
    "ary",
    "ory",
    "ies",
    "ant",
    "ants",
    "ent",
    "ents",
    "ate",
    "ates",
    "ful",
    "less",
    "ency",
    "ancy",
)


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
#: words that begin like a negating prefix but negate nothing ("inflammable", "import")
PREFIX_EXCEPTIONS = _load_words("prefix_exceptions.txt")
#: the exceptions' stems: their inflections are exceptions too ("discounts", "installing")
PREFIX_EXCEPTION_STEMS = frozenset(stem(w) for w in PREFIX_EXCEPTIONS)
#: negating prefixes and the letters their base may start with ("" = any letter: "in-house" is none)
NEG_PREFIXES = (("non-", ""), ("non", ""), ("un", ""), ("dis", ""), ("im", "pbm"), ("il", "l"), ("ir", "r"), ("in", ""))
#: prefixes of their own that begin like a negating one: "inter-" (between: "interrupted", "interlock") and
#: "under-" ("underground", "undercooked") turn nothing around; "interminable" is "in-" + "terminable"
OTHER_PREFIXES = ("inter", "under")
OTHER_PREFIX_NEGATIONS = frozenset(["interminable", "interminably"])
#: the shortest base a negating prefix may take ("unable" has none: it is a cue)
PREFIX_BASE_MIN = 4
#: the negating suffixes ("barbless": without barbs, "dairy-free": without dairy) and the shortest base they take
NEG_SUFFIXES = ("less", "-free")
SUFFIX_BASE_MIN = 3
#: words ending in the suffix that negate no base of theirs
SUFFIX_EXCEPTIONS = frozenset(["unless", "regardless", "nevertheless", "nonetheless", "bless", "doubtless"])


def negated_base(low: str) -> str:
    """The base a negating prefix turns around ("unaffected" -> "affected", "non-refundable" ->
    "refundable"), or "" when the word has none or is an exception."""
    if low in PREFIX_EXCEPTIONS or not low[:1].isalpha() or stem(low) in PREFIX_EXCEPTION_STEMS:
        return ""
    if low.startswith(OTHER_PREFIXES) and low not in OTHER_PREFIX_NEGATIONS:
        return ""
    for prefix, starts in NEG_PREFIXES:
        if low.startswith(prefix):
            base = low[len(prefix) :]
            ok = len(base) >= PREFIX_BASE_MIN and base.replace("-", "").isalpha()
            return base if ok and (base[0] in starts if starts else base[0].isalpha()) else ""
    for suffix in NEG_SUFFIXES:
        base = low[: -len(suffix)]
        if low.endswith(suffix) and low not in SUFFIX_EXCEPTIONS and len(base) >= SUFFIX_BASE_MIN and base.isalpha():
            return base  # "barbless" / "barbed", "dairy-free" / "contains dairy": the base without
    return ""


#: adjective suffixes (as stems) that turn a verb into "can be ...": "non-refundable" denies "refunded", "refund"
ABLE_SUFFIXES = ("abl", "ibl")
#: the shortest verb such a suffix may leave ("cable", "table" leave none)
ABLE_ROOT_MIN = 4


def able_root(key: str) -> str:
    """The verb key under an "-able" / "-ible" word key ("refundabl" -> "refund", "removabl" -> "remov"),
    or "" when the key has none."""
    if key.endswith(ABLE_SUFFIXES) and len(key) - 3 >= ABLE_ROOT_MIN:
        return key[:-3]
    return ""


#: the articles (a list item's, a subject's: "a torch, a whistle and a map", "the pool")
ARTICLES = frozenset(["the", "a", "an"])
#: generic attribute nouns among the function words: they fill a word's slot ("the probe period is")
GENERIC_NOUNS = frozenset(["period", "value", "setting", "amount", "number", "duration", "total", "count", "figure"])
#: light words of the loose alignment, as written and as stems
LIGHT_WORDS = frozenset(w for v in _load_words("light_words.txt") for w in (v, stem(v)))
#: a word right after one of these is a predicate verb ("members may reserve", "you can book")
VERB_BEFORE = frozenset(
    ["must", "may", "can", "could", "should", "shall", "will", "would", "might", "do", "does", "did"]
    + ["you", "we", "they", "i", "please"]
)
#: "to" before a verb follows one of these ("able to book", "have to pay"); elsewhere it is a preposition
INFINITIVE_BEFORE = frozenset(
    ["able", "have", "has", "had", "need", "needs", "want", "wants", "going", "ought", "used", "due", "likely"]
    + ["expected", "try", "tries", "plan", "plans", "allowed", "required", "permitted", "free", "how", "order"]
)
PREDICATIVE_BEFORE = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "turned",
        "turn",
        "turns",
        "switched",
        "switch",
        "set",
        "stays",
        "stay",
        "remains",
        "remain",
        "left",
        "keep",
        "keeps",
        "kept",
        "toggled",
    ]
)


def _load_synonyms() -> dict[str, str]:
    out: dict[str, str] = {}
    for row in _rows("synonyms.tsv"):
        words = [w.strip().lower() for w in ",".join(row).split(",") if w.strip()]
        head = stem(words[0])
        for w in words:
            out.setdefault(stem(w), head)
    return out


SYNONYMS = _load_synonyms()
#: words that name an attribute (a synonym group's head, a generic noun): a modifier before one of them
#: names another attribute ("the replacement fee" / "the fee")
ATTRIBUTE_HEADS = frozenset(SYNONYMS.values()) | GENERIC_NOUNS


class Unit(NamedTuple):
    dim: str
    factor: float
    name: str
    glued: bool
    spaced: bool
    power: int  # data-size prefix power; -1 when not a data-size unit
    approx: bool = False  # a unit of another measurement system: a converted figure is rounded


#: how far a figure in a unit of another system may be from its conversion and still be equal
APPROX_TOLERANCE = 0.015


def _load_units() -> dict[str, Unit]:
    out: dict[str, Unit] = {}
    for row in _rows("units.tsv"):
        surface, dim, factor, name, place, power = row[:6]
        out[surface] = Unit(
            dim,
            float(factor),
            name,
            place in ("glued", "both"),
            place in ("spaced", "both"),
            -1 if power == "-" else int(power),
            len(row) > 6 and row[6] == "approx",
        )
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


NEGATION_CUES, NEG_IDIOMS, BOUNDS = _load_negations()
BOUND_LENGTHS = sorted({len(k) for k in BOUNDS}, reverse=True)
#: a bound written after its number: "21 or older", "5 or fewer" ("or" / "and" then one of these)
BOUNDS_AFTER = {w: 1 for w in ("more", "over", "above", "older", "longer", "later", "higher", "greater", "beyond")} | {
    w: -1 for w in ("less", "fewer", "under", "below", "younger", "shorter", "earlier", "lower")
}
NEG_CONTRACTIONS = frozenset({"can't", "won't", "shan't", "ain't", "cannot"})

# ---- small closed tables (language, not domain knowledge: kept in code) ------------------------
MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
MONTH_ABBR = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
WEEKDAYS = {"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6, "sunday": 7}
#: words naming a set of weekdays: one date whose readings are the days
DAY_SETS = {
    w: tuple((0, 0, 0, d) for d in days)
    for words, days in ((("weekday", "weekdays"), range(1, 6)), (("weekend", "weekends"), range(6, 8)))
    for w in words
}
NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "dozen": 12,
}
NUMBER_MULT = {"hundred": 100.0, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9, "mn": 1e6}
SCALE_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "bn": 1e9, "mn": 1e6, "T": 1e12}
#: multiplier words (MAGNITUDE_ALTERED) and their factor
MULT_WORDS = {
    "twice": 2.0,
    "double": 2.0,
    "doubled": 2.0,
    "doubles": 2.0,
    "thrice": 3.0,
    "triple": 3.0,
    "tripled": 3.0,
    "triples": 3.0,
    "quadruple": 4.0,
    "quadrupled": 4.0,
    "halved": 0.5,
    "halves": 0.5,
}
TIMES_WORDS = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
#: "N times" is a multiplier before these words ("3 times faster"), otherwise a count ("retries 3 times")
COMPARATIVE_NEXT = frozenset(
    [
        "more",
        "less",
        "fewer",
        "as",
        "the",
        "larger",
        "smaller",
        "faster",
        "slower",
        "higher",
        "lower",
        "bigger",
        "greater",
        "longer",
        "shorter",
        "cheaper",
        "quicker",
    ]
)
CURRENCY_SYMBOL = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
CURRENCY_CODES = frozenset(
    [
        "USD",
        "EUR",
        "GBP",
        "JPY",
        "CHF",
        "CAD",
        "AUD",
        "NZD",
        "CNY",
        "INR",
        "SEK",
        "NOK",
        "DKK",
        "PLN",
        "CZK",
        "HUF",
        "BRL",
        "MXN",
        "SGD",
        "HKD",
        "ZAR",
        "KRW",
    ]
)
CURRENCY_WORDS = {
    "dollar": "USD",
    "dollars": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "pound": "GBP",
    "pounds": "GBP",
    "yen": "JPY",
}
#: frequency adverbs: a rate of one per unit ("backups run daily")
#: the periods a frequency or a rate names without a count ("every month", "£40 a quarter"): the clock and calendar
#: units and the periods named by words of their own (a fortnight is 14 days, a quarter 3 months; units.tsv)
SINGLE_PERIODS = frozenset(
    ["second", "minute", "hour", "day", "week", "month", "year", "sec", "min", "fortnight", "quarter", "decade"]
)
FREQ_ADVERBS = {"hourly": 3600.0, "daily": 86400.0, "nightly": 86400.0, "weekly": 604800.0, "fortnightly": 1209600.0}
RATE_MARKERS = frozenset({"per", "a", "an", "each", "every"})
ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "vs",
        "approx",
        "incl",
        "art",
        "sec",
        "no",
        "fig",
        "eq",
        "cf",
        "inc",
        "ltd",
        "corp",
        "dr",
        "mr",
        "ms",
        "st",
        "para",
        "ca",
        "resp",
        "viz",
    ]
)
#: ALL-CAPS words that are ordinary words (RFC 2119 keywords, admonitions), not acronyms
CAPS_WORDS = frozenset(
    [
        "must",
        "shall",
        "should",
        "may",
        "required",
        "recommended",
        "optional",
        "not",
        "note",
        "warning",
        "important",
        "tip",
        "caution",
        "info",
    ]
)
#: clause-opening words: a new clause starts here (the word itself is a break token)
CLAUSE_WORDS = frozenset(
    ["and", "or", "but", "while", "whereas", "although", "though", "unless", "which", "where", "when"]
    + ["whenever", "because"]
)
#: words skipped when looking for the word a negation governs ("does not always apply")
SCOPE_SKIP = FUNCTION_WORDS | {"yet", "necessarily", "currently", "longer"}
#: a letter, a dot or slash, a letter ("a.b", "x/y"): fixed width, so linear in the word
_DOTTED_RE = re.compile(r"[^\W\d_][./][^\W\d_]")


def _is_letter(c: str) -> bool:
    """A word character that is neither a decimal digit nor ``_`` (the regex class ``[^\\W\\d_]``)."""
    return c.isalnum() and not c.isdecimal()


def _digit_and_letter(line: str) -> bool:
    """A decimal digit somewhere before a letter, or a letter before a digit, in one pass."""
    seen_digit = seen_letter = False
    for c in line:
        if c.isdecimal():
            if seen_letter:
                return True
            seen_digit = True
        elif _is_letter(c):
            if seen_digit:
                return True
            seen_letter = True
    return False


def is_identifier(word: str) -> bool:
    """A word shaped like an identifier: letters and digits mixed on one line ("v2", "x86", "2fa"), an
    underscore, or letters joined by a dot or slash ("a.b"). Linear in the word's length, whatever its
    shape: a backtracking pattern for "digit, anything, letter" is quadratic on a long word."""
    if "_" in word:
        return True
    if any(_digit_and_letter(line) for line in word.split("\n")):
        return True
    return _DOTTED_RE.search(word) is not None

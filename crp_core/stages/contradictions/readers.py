"""The lexer's readers of short word phrases (docs/decisions/detector-round26.md to detector-round28.md and
detector-round30.md): "free to" a verb as a permission, an acronym glued to a word, a number in words glued to a unit
("twenty-five-minute"), "half a dozen", an instruction's verb opening a sentence.
:class:`PhraseLexer` extends the number and share readers; the lexer (:mod:`.lexer`) extends it."""

from __future__ import annotations

import re

from crp_core.stages.contradictions.lexicon import ENTITY, FUNCTION_WORDS, NUMBER_WORDS, UNITS, WORD
from crp_core.stages.contradictions.shares import ShareLexer
from crp_core.stages.contradictions.tokens import Token, entity_key, word_key

__all__ = ["ACRONYM_GLUED", "PhraseLexer"]

#: the words that open a verb's object ("free to sell any surplus", "free to cancel the order")
_OBJECT_OPENERS = frozenset(
    ["the", "a", "an", "any", "all", "their", "your", "its", "our", "his", "her", "them", "it", "some", "other"]
)

#: an acronym glued to a lower-case word ("DEFRA-exempt", "UK-based"): the acronym and the word
ACRONYM_GLUED = re.compile(r"[A-Z]{2,}-[a-z]{3,}")

#: the words that open an instruction's object after its verb ("Steep the heads", "Ask a steward", "Bring your pass")
_VERB_OBJECTS = frozenset(["the", "a", "an", "your", "our", "their", "its"])

#: the measures "a" or "an" counts as one of ("a litre of vinegar", "an acre"): no word of another sense ("a yard",
#: "a stone", "a pound", "a cup"), no unit of time (round 14's readers take "a year and a half")
_ONE_MEASURES = frozenset(
    """litre liter kilogram kilo gram tonne metre meter kilometre centimetre millimetre mile inch acre
    hectare gallon""".split()
)
#: the largest denominator of a mixed number's fraction ("6 7/8", "2 1/2", "10 15/16")
_MIXED_DENOMINATOR_MAX = 64

#: the tens a unit number word joins with a hyphen ("twenty-five")
_TENS = frozenset([20, 30, 40, 50, 60, 70, 80, 90])


class PhraseLexer(ShareLexer):
    """Readers of short word phrases, each returning the next raw index (0 when the phrase is none)."""

    def free_to(self, i: int) -> bool:
        """Is the "free" at raw ``i`` a permission: before "to", a verb and its object ("the grower is free to sell any
        surplus", "you are free to cancel the order"; the lexer also asks for a form of be before it)? "Entry is free
        to members" and "the app is free to use" keep free of charge (no verb, or no object after it)."""
        raw = self.raw
        return (
            self.low(i + 1) == "to"
            and i + 3 < len(raw)
            and raw[i + 2].group == "word"
            and self.low(i + 2) not in FUNCTION_WORDS
            and self.low(i + 3) in _OBJECT_OPENERS
        )

    def acronym_word(self, i: int) -> int:
        """ "DEFRA-exempt", "NHS-funded": an acronym glued to a lower-case word names the acronym, and the word, which
        names a kind ("FAA-approved concentrators"), is an ordinary word: two tokens."""
        r = self.raw[i]
        head, _, rest = r.text.partition("-")
        cut = r.start + len(head)
        key = entity_key(head.lower(), "acro")
        self.out.append(Token(head, r.start, cut, ENTITY, key, parts=((key, head, r.start, cut),), sub="acro"))
        self.out.append(Token(rest, cut + 1, r.end, WORD, word_key(rest)))
        return i + 1

    def tens_compound(self, i: int) -> int:
        """ "twenty-five-minute", "thirty-two-page": a number of tens and units in words glued to a word, read as the
        number and its unit or word, as "five-minute" is; 0 for any other word."""
        parts = self.low(i).split("-")
        if len(parts) < 3 or parts[2] in NUMBER_WORDS:
            return 0
        tens, units = NUMBER_WORDS.get(parts[0], 0), NUMBER_WORDS.get(parts[1], 0)
        if tens not in _TENS or not 1 <= units <= 9:
            return 0
        head = len(parts[0]) + 1 + len(parts[1])
        return self.number_word_compound(i, float(tens + units), head, "-".join(parts[2:]))

    def half_dozen(self, i: int) -> int:
        """ "half a dozen eggs", "a half dozen", "half-a-dozen" are the number 6, as "six eggs" is ("a dozen" is 12
        through the number words); 0 for any other phrase."""
        low, raw = self.low(i), self.raw
        if low == "half-a-dozen":
            return self.number(i, 6.0, "", raw[i].start, raw[i].end, i + 1)
        if low != "half":
            return 0
        j = i + 2 if self.low(i + 1) == "a" else i + 1
        if self.low(j) != "dozen":
            return 0
        return self.number(i, 6.0, "", raw[i].start, raw[j].end, j + 1)

    def verb_object(self, i: int) -> bool:
        """Is the capitalised word opening a sentence at raw ``i`` an instruction's verb: an article or a possessive
        and a word after it, both in lower case ("Steep *the heads*", "Drizzle *a little* syrup"; "Hangar *A* houses"
        names a designator, "Pike holds" a name)?"""
        raw = self.raw
        return (
            i + 2 < len(raw)
            and self.low(i + 1) in _VERB_OBJECTS
            and raw[i + 1].text.islower()
            and raw[i + 2].text[:1].islower()
        )

    def one_measure(self, i: int) -> int:
        """ "a litre of malt vinegar", "an acre": the article before a measure's unit counts one of it; the index
        after the unit, 0 when the words are none."""
        u = UNITS.get(self.low(i + 1)) if self.low(i) in ("a", "an") and self.low(i + 1) in _ONE_MEASURES else None
        if u is None:
            return 0
        bound, bstart = self.bound_before(i)
        return self.unit_qty(self.raw[i].start, self.raw[i + 1].end, i + 2, 1.0, 1.0, "1", u, bound, bstart, i)

    def mixed_fraction(self, i: int) -> float:
        """The fraction of a mixed number opening at raw ``i`` ("6 7/8" is 6.875, "2 1/2" 2.5: whole digits, one
        space, digits, a slash, digits, the fraction below one): its value, 0 when the digits are none."""
        raw = self.raw
        if i + 2 >= len(raw) or not raw[i].text.isdigit():
            return 0.0
        num, den = raw[i + 1], raw[i + 2]
        if num.group != "num" or den.group != "num" or not (num.text.isdigit() and den.text.isdigit()):
            return 0.0
        if self.text[raw[i].end : num.start] != " " or self.text[num.end : den.start] != "/":
            return 0.0
        if den.end < len(self.text) and self.text[den.end : den.end + 1] == "/":
            return 0.0  # "1 2/3/2025": a date
        n, d = int(num.text), int(den.text)
        return n / d if 0 < n < d <= _MIXED_DENOMINATOR_MAX else 0.0

    def plain_count(self, i: int) -> int:
        """Digits at raw ``i``: a mixed number ("a size 6 7/8"), else the share and number readers' reading."""
        part = self.mixed_fraction(i)
        if part:
            r = self.raw[i]
            return self.number(i, int(r.text) + part, "", r.start, self.raw[i + 2].end, i + 3)
        return super().plain_count(i)

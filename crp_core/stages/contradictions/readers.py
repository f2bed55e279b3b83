"""The lexer's readers of short word phrases (docs/decisions/detector-round26.md to detector-round28.md and
detector-round30.md): "free to" a verb as a permission, an acronym glued to a word, a number in words glued to a unit
("twenty-five-minute"), "half a dozen", an instruction's verb opening a sentence.
:class:`PhraseLexer` extends the number and share readers; the lexer (:mod:`.lexer`) extends it."""

from __future__ import annotations

import re

from crp_core.stages.contradictions.lexicon import ENTITY, FUNCTION_WORDS, NUMBER_WORDS, WORD
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

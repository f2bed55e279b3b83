"""The value-conflict lexer's reading of a fraction in words that sizes a change or a share without "of":
"cut by half", "discounted by a quarter", "a fifth off", "one in five welds", "a one-third deposit" are the
percentages 50, 25, 20, 20 and 33.3 (docs/decisions/detector-round16.md); "nine in ten", "3 out of 4" 90 and 75
(detector-round25.md). "A quarter of the fee" and
"two-thirds of the seats" are read by the number readers (:class:`~.quantities.NumberLexer`);
:class:`ShareLexer` extends them, and :class:`~crp_core.stages.contradictions.lexer.Lexer` extends it."""

from __future__ import annotations

from crp_core.stages.contradictions.lexicon import FUNCTION_WORDS, NUMBER_WORDS, UNITS
from crp_core.stages.contradictions.quantities import FRACTION_ONE, FRACTION_PARTS, NumberLexer

__all__ = ["PROPORTION_MAX", "ShareLexer"]

#: words between "by" and its fraction that hedge it ("cut by roughly half", "rose by nearly a third")
HEDGES = frozenset(["about", "roughly", "around", "approximately", "nearly", "almost", "some", "just", "over"])
#: words after a fraction that make it the size of a discount or a difference ("a fifth off", "a third more")
DIFFERENCE_AFTER = frozenset(["off", "cheaper", "more", "less", "fewer", "extra", "lower", "higher"])
#: the largest whole a proportion of two counts is read against ("one in a million" is no count; "1 in 5000" none)
PROPORTION_MAX = 1000


class ShareLexer(NumberLexer):
    """The lexer's readers of a fraction in words as a percentage (one instance per text)."""

    def fraction_size(self, i: int) -> int:
        """A fraction opening at raw ``i`` that sizes a change ("by a quarter", "by half", "by two thirds") or a
        difference ("a fifth off", "a third more"), read as the percentage it is: the index after it, 0 when the
        words are none. The fraction must end its phrase: "by a third party" is no share."""
        low, nxt = self.low(i), self.low(i + 1)
        if low == "half":
            part, end = 0.5, i + 1
        elif low in ("a", "one") and nxt in FRACTION_ONE and nxt != "half":
            part, end = FRACTION_PARTS[nxt], i + 2
        elif low in NUMBER_WORDS and 1 < NUMBER_WORDS[low] < 10 and nxt in FRACTION_PARTS and nxt not in FRACTION_ONE:
            part, end = NUMBER_WORDS[low] * FRACTION_PARTS[nxt], i + 2
        elif self.hyphenated_fraction(low) and self.low(i + 1) in DIFFERENCE_AFTER:
            return self.share_at(i, i + 1, self.hyphenated_fraction(low))  # "one-third off", "two-thirds more"
        else:
            return 0
        if not 0 < part < 1:
            return 0
        after = self.low(end)
        if after in ("of", "a", "an"):  # "a quarter of the fee", "half an hour": the number readers' shares
            return 0
        if after in DIFFERENCE_AFTER:
            return self.share_at(i, end, part)
        if not self.by_before(i) or after in UNITS:
            return 0
        if end < len(self.raw) and self.raw[end].group == "word" and after not in FUNCTION_WORDS:
            return 0
        return self.share_at(i, end, part)

    @staticmethod
    def hyphenated_fraction(low: str) -> float:
        """The part a fraction written as one hyphenated word names ("one-third" 1/3, "three-quarters" 0.75), else 0."""
        head, _, tail = low.partition("-")
        if tail not in FRACTION_PARTS or head not in NUMBER_WORDS:
            return 0.0
        if (head == "one") != (tail in FRACTION_ONE):
            return 0.0  # "one-thirds", "two-third": no fraction
        part = NUMBER_WORDS[head] * FRACTION_PARTS[tail]
        return part if 0 < part < 1 else 0.0

    def count_at(self, i: int) -> float:
        """The whole count written at raw ``i`` (digits or a number word), 0 when there is none."""
        if i >= len(self.raw):
            return 0.0
        r = self.raw[i]
        if r.group == "num" and r.text.isdigit():
            return float(r.text)
        return float(NUMBER_WORDS.get(r.low, 0))

    def plain_count(self, i: int) -> int:
        """Digits at raw ``i``: a proportion they open ("3 in 4 tenants"), an hour of a part of the day ("8 in the
        morning"), else the number reader's quantity."""
        return self.count_in(i) or self.day_time(i) or self.plain_number(i)

    def count_in(self, i: int) -> int:
        """ "one in five welds", "nine out of ten seeds", "3 in 4 of them": the share it states (20%, 90%, 75%);
        the index after it, 0 when the words are none. The whole is 2 to :data:`PROPORTION_MAX`, the part at most
        the whole, and a noun or "of" follows ("one in 2 days" is a duration; "3 in 2019" a year)."""
        part = self.count_at(i)
        if self.low(i + 1) == "in":
            at = i + 2
        elif self.low(i + 1) == "out" and self.low(i + 2) == "of":
            at = i + 3
        else:
            return 0
        whole = self.count_at(at)
        if not (2 <= whole <= PROPORTION_MAX and 0 < part <= whole):
            return 0
        if at + 1 >= len(self.raw) or self.raw[at + 1].group != "word" or self.low(at + 1) in UNITS:
            return 0
        return self.share_at(i, at + 1, part / whole)

    def by_before(self, i: int) -> bool:
        """Is raw ``i`` right after "by", or after "by" and one hedge ("by roughly half")?"""
        k = i - 1 if self.low(i - 1) in HEDGES else i
        return self.low(k - 1) == "by"

    def share_at(self, i: int, end: int, part: float) -> int:
        """Push raw ``i`` to ``end`` (exclusive) as the share ``part`` of a whole; the index after it."""
        bound, bstart = self.bound_before(i)
        return self.share(self.raw[i].start, self.raw[end - 1].end, end, part, bound, bstart)

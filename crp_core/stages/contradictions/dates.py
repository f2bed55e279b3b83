"""The value-conflict lexer's state and its date and time readers (ISO dates, day/month/year,
clock times, month names, quarters): :class:`LexerBase`, extended by the number readers
(:mod:`.quantities`) and the lexer (:mod:`.lexer`)."""

from __future__ import annotations

import re
from bisect import bisect_left

from crp_core.stages.contradictions.lexicon import (
    BOUND_LENGTHS,
    BOUNDS,
    BOUNDS_AFTER,
    DATE,
    FUNCTION_WORDS,
    NUMBER,
    NUMBER_WORDS,
    OLD_YEAR_MIN,
    POLARITY,
    UNITS,
    YEAR_MAX,
)
from crp_core.stages.contradictions.tokens import (
    NUM_RE,
    RAW_RE,
    DateValue,
    Quantity,
    RawToken,
    Token,
    exact_reading,
)

#: bounds of a moment that, before a lead time, bound that lead time the other way
_MOMENT_BOUNDS = frozenset(["no later than", "not later than", "no earlier than", "not earlier than"])
#: the words after a duration that make it a lead time before a moment ("14 days *prior to* release")
_LEAD_AFTER = frozenset(["before", "prior", "ahead", "beforehand", "earlier"])


#: the words of a time of day before its hour and the minutes they add to it ("half past nine", "quarter to ten")
_CLOCK_WORDS = {("half", "past"): 30, ("quarter", "past"): 15, ("quarter", "to"): -15}

#: the parts of the day after an hour and the hours they add ("8 in the morning", "6 in the evening"; -1: "at night")
_DAY_PARTS: dict[tuple[str, ...], int] = {
    ("in", "the", "morning"): 0,
    ("in", "the", "afternoon"): 12,
    ("in", "the", "evening"): 12,
    ("at", "night"): -1,
}

#: the hours and minutes that open a time of day
_HOURS_MINUTES = re.compile(r"(\d{1,2}):(\d{2})")


def clock_quantity(minutes: float) -> Quantity:
    """A time of day, ``minutes`` after midnight, read as exactly that time ("9:30", "noon", "8 in the morning")."""
    return Quantity("clock", "clock", minutes, 1.0, str(minutes), exact_reading(minutes), -1, 0, -1)


class LexerBase:
    """The lexer's state and its date and time readers (one instance per text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw = [
            RawToken(m.lastgroup or "", m.group(), m.start(), m.end(), m.group().lower().replace("’", "'"))
            for m in RAW_RE.finditer(text)
        ]
        self.out: list[Token] = []
        self.forced_func: set[int] = set()  # raw indices consumed as a rate's "per second"
        self.starts = [r.start for r in self.raw]

    # ---- helpers --------------------------------------------------------------------------------
    def low(self, j: int) -> str:
        return self.raw[j].low if 0 <= j < len(self.raw) and self.raw[j].group == "word" else ""

    def gap(self, a: int, b: int) -> str:
        return self.text[a:b]

    def adjacent(self, j: int, end: int, allow: str = " -\u00a0") -> bool:
        """Is raw token ``j`` right after character ``end`` (only a space or hyphen between)?"""
        if j >= len(self.raw):
            return False
        g = self.text[end : self.raw[j].start]
        return len(g) <= 1 and all(c in allow for c in g)

    def modified_unit(self, j: int) -> bool:
        """Is raw ``j`` one word naming which kind of time unit follows it, after a count ("four cutting days", "ten
        calendar days", "two rest nights")? A lower-case content word that is no unit, number or polarity word
        (``free`` in "3 free days" is the value), then a spaced unit of time or of the calendar."""
        w = self.low(j)
        u = UNITS.get(self.low(j + 1))
        return (
            u is not None
            and u.spaced
            and u.dim in ("time", "cal")
            and len(w) > 2
            and w.isalpha()
            and self.raw[j].text.islower()
            and w not in FUNCTION_WORDS
            and w not in UNITS
            and w not in NUMBER_WORDS
            and w not in POLARITY
            and self.adjacent(j + 1, self.raw[j].end, " ")
        )

    def bound_before(self, i: int) -> tuple[int, int]:
        """A bound phrase ("at least", "up to", "no more than") ending right before raw ``i``, or before a
        run of "not" / "never" there (an odd run turns the bound around, an even one cancels out)."""
        k = i
        while k > 0 and self.low(k - 1) in ("not", "never") and self.adjacent(k, self.raw[k - 1].end, " "):
            k -= 1
        if k < i:
            bound, start = self.bound_before(k)
            return (-bound if (i - k) % 2 else bound), start
        for n in BOUND_LENGTHS:
            if i - n < 0:
                continue
            words = tuple(self.low(j) for j in range(i - n, i))
            if (
                all(words)
                and words in BOUNDS
                and all(self.adjacent(j + 1, self.raw[j].end, " ") for j in range(i - n, i))
            ):
                return BOUNDS[words], self.raw[i - n].start
        return 0, -1

    def every_before(self, i: int) -> bool:
        """Is raw ``i`` preceded by "every" / "each" (an interval: "every 30 minutes")?"""
        return i > 0 and self.low(i - 1) in ("every", "each")

    # ---- main loop ------------------------------------------------------------------------------
    # ---- numbers --------------------------------------------------------------------------------
    def push_qty(self, start: int, end: int, q: Quantity) -> None:
        if q.bound == 0 and q.dim != "clock":
            q = self.bound_after(end, q)
        elif q.dim in ("time", "bday") and self.lead_time(start, end, q):
            q = q._replace(bound=-q.bound)
        self.out.append(Token(self.text[start:end], start, end, NUMBER, "#q", qty=q))

    def lead_time(self, start: int, end: int, q: Quantity) -> bool:
        """Is the duration a lead time bounded by a moment ("no later than 14 days before release")? The bound
        is then on the moment, and the lead time's runs the other way: "no later than 14 days before" says
        what "at least 14 days before" says, "no earlier than 3 hours ahead" what "up to 3 hours ahead" says."""
        if q.bound_start < 0 or " ".join(self.text[q.bound_start : start].lower().split()) not in _MOMENT_BOUNDS:
            return False
        j = bisect_left(self.starts, end)
        return self.low(j) in _LEAD_AFTER or (self.low(j) == "in" and self.low(j + 1) == "advance")

    def bound_after(self, end: int, q: Quantity) -> Quantity:
        """A bound written after the number: "21 or older", "£1,500 or more" (lower), "5 or fewer"
        (upper); its two words become function words."""
        j = bisect_left(self.starts, end)
        if j + 1 < len(self.raw) and self.low(j) in ("or", "and") and self.adjacent(j + 1, self.raw[j].end, " "):
            bound = BOUNDS_AFTER.get(self.low(j + 1), 0)
            if bound:
                self.forced_func.update((j, j + 1))
                return q._replace(bound=bound)
        return q

    # ---- dates and times ------------------------------------------------------------------------
    def iso_date(self, i: int) -> int:
        r = self.raw[i]
        ymd = [int(p) for p in r.text[:10].split("T")[0].split("-")]
        y, m = ymd[0], ymd[1]
        d = ymd[2] if len(ymd) > 2 else 0
        if not (1 <= m <= 12 and 0 <= d <= 31):
            for pm in re.finditer(r"\d+", r.text):
                v = float(pm.group())
                self.push_qty(
                    r.start + pm.start(),
                    r.start + pm.end(),
                    Quantity("", "", v, 1.0, pm.group(), exact_reading(v), -1, 0, -1),
                )
            return i + 1
        parts = tuple((c, r.text, r.start, r.end) for c in ("y", "m", "d")[: len(ymd)])
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
        m = _HOURS_MINUTES.match(r.text)  # "9:30", "9:30am", "21:15:00"
        hh, mm = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        low = r.low.replace(".", "")
        if low.endswith("pm") and hh < 12:
            hh += 12
        elif low.endswith("am") and hh == 12:
            hh = 0
        minutes = float(hh * 60 + mm)
        self.push_qty(r.start, r.end, clock_quantity(minutes))
        return i + 1

    def clock_words(self, i: int) -> int:
        """A time of day in words at raw ``i``: "half past nine", "quarter past 8", "quarter to ten", read as both
        halves of the day (a clock time in words says neither am nor pm); 0 when the words are none."""
        low, rel = self.low(i), self.low(i + 1)
        offset = _CLOCK_WORDS.get((low, rel))
        if offset is None or i + 2 >= len(self.raw):
            return 0
        r = self.raw[i + 2]
        hour = int(r.text) if r.group == "num" and r.text.isdigit() and len(r.text) <= 2 else NUMBER_WORDS.get(r.low, 0)
        if not 1 <= hour <= 12:
            return 0
        minutes = float((hour % 12) * 60 + offset) % 720
        readings = ((minutes, minutes), (minutes + 720, minutes + 720))
        q = Quantity("clock", "clock12", minutes, 1.0, "", readings, -1, 0, -1)  # compared by its readings
        self.push_qty(self.raw[i].start, r.end, q)
        return i + 3

    def day_time(self, i: int) -> int:
        """An hour in digits at raw ``i`` with the part of the day it falls in ("8 in the morning", "6 in the evening",
        "11 at night"): that clock time; 0 when the words are none."""
        r = self.raw[i]
        if not (r.group == "num" and r.text.isdigit() and len(r.text) <= 2 and 1 <= int(r.text) <= 12):
            return 0  # the length first: a digit string of any length reaches here
        words = (self.low(i + 1), self.low(i + 2), self.low(i + 3))
        half = _DAY_PARTS.get(words) if words[1] == "the" else _DAY_PARTS.get(words[:2])
        if half is None:
            return 0
        hour = int(r.text) % 12
        if half == -1:  # "at night": from six in the evening to the small hours
            half = 12 if hour >= 6 else 0
        end = i + (3 if words[1] == "the" else 2)
        self.push_qty(r.start, self.raw[end].end, clock_quantity(float((hour + half) * 60)))
        return end + 1

    def ratio(self, i: int) -> int:
        """ "1:25,000", "1:250": a scale, the number 25,000 in the unit "ratio" (a changed scale is a changed
        number); the part after the colon has a thousands group or three digits, so no time of day reads so."""
        r = self.raw[i]
        head, _, tail = r.text.replace(",", "").partition(":")
        v = float(tail) / float(head) if float(head) else float(tail)
        self.push_qty(r.start, r.end, Quantity("ratio", "ratio", v, 1.0, format(v, "g"), exact_reading(v), -1, 0, -1))
        return i + 1

    def month(self, i: int, month: int) -> int:
        """A month name with its day and year around it: "5 March 2024", "March 5, 2024",
        "the 5th of March", "May 2021", "June"."""
        raw, out = self.raw, self.out
        r = raw[i]
        start, end = r.start, r.end
        parts: list[tuple[str, str, int, int]] = [("m", r.text, r.start, r.end)]
        day = year = 0
        days: tuple[int, ...] = ()
        # a day before: "5 March", "5th of March" (the number was already emitted)
        if (
            out
            and out[-1].kind == NUMBER
            and out[-1].qty is not None
            and out[-1].qty.dim == ""
            and out[-1].qty.scale == 1.0
            and 1 <= out[-1].qty.base <= 31
            and out[-1].qty.base == int(out[-1].qty.base)
        ):
            between = self.text[out[-1].end : r.start].strip().lower()
            if between in ("", "of", "of the"):
                prev = out.pop()
                day, start = int(prev.qty.base), prev.start  # type: ignore[union-attr]
                parts.insert(0, ("d", prev.text, prev.start, prev.end))
                first = self.first_day(day, start)
                if first:  # "12-13 July": the days of one date
                    days, start = tuple(range(first, day + 1)), out.pop().start
        j = i + 1
        n = len(raw)
        if not day and j < n and raw[j].group in ("num", "numw") and self.adjacent(j, end, " "):
            m = NUM_RE.match(raw[j].text)
            suffix = raw[j].text[m.end() :].lower() if m else "x"
            if m and suffix in ("", "st", "nd", "rd", "th") and "." not in m.group() and 1 <= int(m.group()) <= 31:
                day, end = int(m.group()), raw[j].end
                parts.append(("d", raw[j].text, raw[j].start, raw[j].end))
                j += 1
        k = j
        if k < n and raw[k].text == ",":
            k += 1
        if (
            k < n
            and raw[k].group == "num"
            and re.fullmatch(r"\d{4}", raw[k].text)
            and OLD_YEAR_MIN <= int(raw[k].text) <= YEAR_MAX
            and len(self.text[end : raw[k].start].strip(" ,")) == 0
        ):
            year, end = int(raw[k].text), raw[k].end
            parts.append(("y", raw[k].text, raw[k].start, raw[k].end))
            j = k + 1
        out.append(
            Token(
                self.text[start:end],
                start,
                end,
                DATE,
                "#d",
                date=DateValue(tuple((year, month, d, 0) for d in days or (day,)), False),
                parts=tuple(parts),
            )
        )
        return j

    def first_day(self, day: int, start: int) -> int:
        """The first day of a range of days written before a month's day with a hyphen or a dash ("12-13 July",
        "3–5 May"): a plain number before ``day``, joined to it with no space, at most a week earlier; else 0."""
        out = self.out
        dash = bool(out) and out[-1].text == "\u2013" and out[-1].start < start  # a dash is a clause break
        k = len(out) - 1 - dash
        q = out[k].qty if k >= 0 and out[k].kind == NUMBER else None
        if q is None or q.dim != "":
            return 0
        joined = self.text[out[k].end : start] in ("-", "\u2013")
        first = int(q.base) if q.base == int(q.base) and q.scale == 1.0 else 0
        if not (joined and 1 <= first < day <= first + 7):
            return 0
        del out[k + 1 :]  # the dash, when it was read as a break
        return first

    def quarter(self, i: int, q: int, half: bool) -> int:
        r = self.raw[i]
        months = range(1, 7) if half and q == 1 else range(7, 13) if half else range(3 * q - 2, 3 * q + 1)
        end, j, year = r.end, i + 1, 0
        parts: list[tuple[str, str, int, int]] = [("m", r.text, r.start, r.end)]
        if (
            j < len(self.raw)
            and self.raw[j].group == "num"
            and re.fullmatch(r"\d{4}", self.raw[j].text)
            and self.adjacent(j, end, " ")
        ):
            year, end = int(self.raw[j].text), self.raw[j].end
            parts.append(("y", self.raw[j].text, self.raw[j].start, self.raw[j].end))
            j += 1
        self.out.append(
            Token(
                self.text[r.start : end],
                r.start,
                end,
                DATE,
                "#d",
                date=DateValue(tuple((year, m, 0, 0) for m in months), False),
                parts=tuple(parts),
            )
        )
        return j


def weekday_dates(toks: list[Token], text: str) -> list[Token]:
    """A single weekday right before a date, a comma between them allowed, is part of that date ("Saturday 14 June
    2025", "Friday, 9 May"): one date whose readings carry the weekday. Read apart, the weekday was a value of its
    own that stated any date on that weekday, so "Saturday 14 June 2025" / "21 June 2025" (a week later, a Saturday
    too) paired the weekday with the other date and left the shifted day unread."""
    out: list[Token] = []
    k = 0
    while k < len(toks):
        t = toks[k]
        j = k + 2 if k + 2 < len(toks) and toks[k + 1].text == "," else k + 1
        nxt = toks[j] if j < len(toks) else None
        if _one_weekday(t) and nxt is not None and nxt.kind == DATE and nxt.date is not None and not _one_weekday(nxt):
            assert t.date is not None
            day = t.date.readings[0][3]
            readings = tuple((y, m, d, w or day) for y, m, d, w in nxt.date.readings)
            out.append(
                nxt._replace(
                    text=text[t.start : nxt.end],
                    start=t.start,
                    date=DateValue(readings, nxt.date.bare_year),
                    parts=(*t.parts, *nxt.parts),
                )
            )
            k = j + 1
            continue
        out.append(t)
        k += 1
    return out


def _one_weekday(t: Token) -> bool:
    """A date token that is one weekday and nothing more ("Saturday")."""
    return (
        t.kind == DATE
        and t.date is not None
        and len(t.date.readings) == 1
        and t.date.readings[0][:3] == (0, 0, 0)
        and t.date.readings[0][3] > 0
    )

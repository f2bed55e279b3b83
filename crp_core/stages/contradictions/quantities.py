"""The value-conflict lexer's number readers: a number with what follows it (percent, multiplier,
scale word, currency, unit, rate, bound), money, numbers glued to a unit, numbers written as words:
:class:`NumberLexer`, extended by :class:`~crp_core.stages.contradictions.lexer.Lexer`."""

from __future__ import annotations

import re

from crp_core.stages.contradictions.dates import LexerBase
from crp_core.stages.contradictions.lexicon import (
    APPROX_TOLERANCE,
    BOUNDS_AFTER,
    COMPARATIVE_NEXT,
    CURRENCY_CODES,
    CURRENCY_SYMBOL,
    CURRENCY_WORDS,
    DATE,
    ENTITY,
    FUNC,
    FUNCTION_WORDS,
    MULT_WORDS,
    NUMBER_MULT,
    NUMBER_WORDS,
    OLD_YEAR_MIN,
    RATE_MARKERS,
    SCALE_SUFFIX,
    SCALE_WORDS,
    SINGLE_PERIODS,
    TIMES_WORDS,
    UNITS,
    WORD,
    YEAR_BEFORE,
    YEAR_MAX,
    YEAR_MIN,
    Unit,
)
from crp_core.stages.contradictions.nuclides import nuclide_key
from crp_core.stages.contradictions.tokens import (
    NUM_RE,
    DateValue,
    Quantity,
    Token,
    exact_reading,
    parse_number,
    size_readings,
    time_readings,
    word_key,
)

#: a unit symbol that means another unit after a space than glued to its number ("5m" is five minutes,
#: "3 m long" three metres)
SPACED_ONLY = {"m": "metre"}
#: "N times" or "twice" before these is a multiplier: a comparative, or a determiner of the thing multiplied ("four
#: times their resting length", "twice its weight")
MULTIPLIER_NEXT = COMPARATIVE_NEXT | {"their", "its", "our", "your", "his", "her", "what"}
#: the dimensions a fraction in words divides ("half an hour", "three-quarters of an inch", "a quarter of a mile")
HALVED_DIMS = frozenset(["time", "cal", "mass", "volume", "length", "energy", "area"])
#: a power word before a unit of length: an area or a volume ("12 square metres", "250 cubic metres", "100 sq ft")
POWER_WORDS = {"square": 2, "sq": 2, "cubic": 3, "cu": 3}
#: fractions written as one character ("1½", "¾ cup")
VULGAR_FRACTIONS = {"½": 0.5, "⅓": 1 / 3, "⅔": 2 / 3, "¼": 0.25, "¾": 0.75, "⅕": 0.2, "⅛": 0.125}
#: a share of a whole written as a fraction ("three quarters of", "a fifth of"): the part each word is
FRACTION_PARTS = {
    "half": 0.5,
    "halves": 0.5,
    "third": 1 / 3,
    "thirds": 1 / 3,
    "quarter": 0.25,
    "quarters": 0.25,
    "fifth": 0.2,
    "fifths": 0.2,
    "tenth": 0.1,
    "tenths": 0.1,
}
#: the singular fractions ("a quarter"; "three quarters" is plural)
FRACTION_ONE = frozenset(["half", "third", "quarter", "fifth", "tenth"])
#: the minor units of a currency written in words after its major unit ("and fifty cents", "and 20 pence")
MINOR_UNITS = frozenset(["cent", "cents", "penny", "pence", "p"])
#: frequency adverbs after a count of times and the period they name ("twice daily" = "twice a day")
ADVERB_PERIODS = {
    "hourly": "hour",
    "daily": "day",
    "nightly": "day",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
    "annually": "year",
}
#: temperature scales after a degree sign or "degrees" (each read in kelvin)
TEMPERATURE_SCALES = {"c": "c", "celsius": "c", "centigrade": "c", "f": "f", "fahrenheit": "f"}
#: how far a converted temperature may be from the other figure and still be equal (kelvin)
TEMPERATURE_TOLERANCE = 0.5


#: words that put a minus sign before the temperature after them ("minus 30 degrees Celsius" is -30 °C)
MINUS_WORDS = frozenset(["minus", "negative"])


def powered_unit(word: str, u: Unit | None) -> Unit | None:
    """The area or volume unit a power word makes of a unit of length (``square`` + ``feet`` is the square foot,
    in square metres; ``cubic`` + ``metres`` the cubic metre, in litres as every volume), else None."""
    power = POWER_WORDS.get(word, 0)
    if u is None or u.dim != "length" or not u.spaced or not power:
        return None
    if power == 2:
        return Unit("area", u.factor**2, "sq" + u.name, False, True, -1, u.approx)
    return Unit("volume", u.factor**3 * 1e3, u.name + "3", False, True, -1, u.approx)


def temperature_readings(scale: str, base: float) -> tuple[tuple[float, float], ...]:
    """A temperature on scale ``c`` or ``f`` in kelvin (a Fahrenheit figure is a rounded conversion, equal within
    half a kelvin)."""
    if scale == "f":
        k = (base + 459.67) * 5 / 9
        return ((k - TEMPERATURE_TOLERANCE, k + TEMPERATURE_TOLERANCE),)
    return exact_reading(base + 273.15)


def signed_temperatures(toks: list[Token], text: str) -> list[Token]:
    """A sign written as a word right before a temperature is that temperature's sign: "minus 18 degrees
    Celsius" is -18 °C (-0.4 °F), the same value as "-18 °C"; "minus" before any other number stays a word."""
    out: list[Token] = []
    for t in toks:
        p = out[-1] if out else None
        q = t.qty
        if (
            p is not None
            and q is not None
            and q.dim == "temp"
            and q.base > 0
            and p.kind == WORD
            and p.text.lower() in MINUS_WORDS
            and text[p.end : t.start] == " "
        ):
            neg = -q.base
            signed = q._replace(base=neg, exact="-" + q.exact, readings=temperature_readings(q.unit[-1:], neg))
            out[-1] = t._replace(text=text[p.start : t.end], start=p.start, qty=signed)
            continue
        out.append(t)
    return out


#: words that hedge the measure after them ("roughly 30 cm"): against another unit it is read within
#: :data:`HEDGE_TOLERANCE` of its value, as a rounded figure
_HEDGES = frozenset(["about", "roughly", "around", "approximately", "some"])
#: the relative width of a hedged measure's reading (a converted figure rounded to a round number)
HEDGE_TOLERANCE = 0.05


class NumberLexer(LexerBase):
    """The lexer's number and quantity readers (one instance per text)."""

    def plain_number(self, i: int) -> int:
        r = self.raw[i]
        return self.number(i, parse_number(r.text), r.text.replace(",", ""), r.start, r.end, i + 1)

    def number(  # noqa: C901, PLR0913  the suffixes a number takes, in priority order; its parts as matched
        self,
        i: int,
        base: float,
        exact: str,
        start: int,
        end: int,
        j: int,
        currency: str = "",
        scale: float = 1.0,
        first: int = -1,
    ) -> int:
        """Finish a number whose digits end at raw ``j - 1``: percent, multiplier, scale word,
        currency, unit, rate ("per second"), bound ("at least"). Returns the next raw index."""
        raw, n = self.raw, len(self.raw)
        first = i if first < 0 else first
        bound, bstart = self.bound_before(first)
        if j < n and raw[j].group == "sym" and raw[j].text in "°º":
            return self.temperature(start, end, j, base, exact, bound, bstart)
        if j < n and raw[j].group == "sym" and raw[j].start - end <= 1:
            dim = "pct" if raw[j].text == "%" else "x"
            q = Quantity(dim, dim, base, 1.0, exact, exact_reading(base), -1, bound, bstart)
            self.push_qty(start, raw[j].end, q)
            return j + 1
        w = self.low(j)
        if w in SCALE_WORDS and scale == 1.0 and self.adjacent(j, end, " "):
            scale, end, j = SCALE_WORDS[w], raw[j].end, j + 1
            w = self.low(j)
        if (
            not currency
            and j < n
            and self.adjacent(j, end, " ")
            and (w in CURRENCY_WORDS or raw[j].text in CURRENCY_CODES)
        ):
            currency, end, j = CURRENCY_WORDS.get(w, raw[j].text), raw[j].end, j + 1  # "35 million euros"
            w = self.low(j)
        if not currency and self.low(first - 1) == "of" and self.low(first - 2) == "factor":
            v = base * scale  # "cut by a factor of five" is a multiplier, as "fivefold" is
            self.push_qty(raw[first - 2].start, end, Quantity("x", "x", v, 1.0, exact, exact_reading(v), -1, 0, -1))
            return j
        if currency and scale == 1.0:
            minor, after = self.cents(j)
            if minor:  # "three dollars and fifty cents" is 3.50
                base, exact, end, j = base + minor, "", raw[after - 1].end, after
        v = base * scale
        if currency:
            q = Quantity("money", currency, base, scale, exact, exact_reading(v), -1, bound, bstart)
            return self.rate_or_push(start, end, j, q, first)
        if w in ("degree", "degrees") and self.low(j + 1) in TEMPERATURE_SCALES and self.adjacent(j, end, " "):
            return self.temperature(start, end, j, base, exact, bound, bstart)
        if w in ("percent", "pct") and self.adjacent(j, end, " "):
            self.push_qty(start, raw[j].end, Quantity("pct", "%", v, 1.0, exact, exact_reading(v), -1, bound, bstart))
            return j + 1
        if w in ("per", "percentage", "basis") and self.low(j + 1) in ("cent", "point", "points"):
            factor = 0.01 if w == "basis" else 1.0
            self.push_qty(
                start,
                raw[j + 1].end,
                Quantity(
                    "pct", "%" if factor == 1.0 else "bp", v, 1.0, exact, exact_reading(v * factor), -1, bound, bstart
                ),
            )
            return j + 2
        if w == "fold" and self.adjacent(j, end):  # "10-fold", "10 fold"
            self.push_qty(start, raw[j].end, Quantity("x", "x", v, 1.0, exact, exact_reading(v), -1, bound, bstart))
            return j + 1
        if w == "times" and self.adjacent(j, end, " "):
            nxt = self.low(j + 1)
            if nxt in MULTIPLIER_NEXT or (nxt.endswith("er") and len(nxt) > 4 and nxt not in FUNCTION_WORDS):
                self.push_qty(start, raw[j].end, Quantity("x", "x", v, 1.0, exact, exact_reading(v), -1, bound, bstart))
                return j + 1
            q = Quantity("times", "times", base, scale, exact, exact_reading(v), -1, bound, bstart)
            return self.rate_or_push(start, raw[j].end, j + 1, q, first)
        if w == "and" and self.low(j + 1) in ("a", "an") and self.low(j + 2) == "half" and scale == 1.0:
            u = UNITS.get(self.low(j + 3))
            if u is not None and u.spaced:  # "two and a half hours"
                return self.unit_qty(start, raw[j + 3].end, j + 4, base + 0.5, 1.0, "", u, bound, bstart, first)
        if (
            w in ("quarter", "quarters", "third", "thirds")
            and self.low(j + 1) == "of"
            and self.low(j + 2) in ("a", "an")
        ):
            u = UNITS.get(self.low(j + 3))
            if u is not None and u.dim in HALVED_DIMS and u.spaced:  # "three quarters of an hour / of an inch"
                part = 0.25 if w.startswith("quarter") else 1 / 3
                return self.unit_qty(start, raw[j + 3].end, j + 4, base * part, 1.0, "", u, bound, bstart, first)
        if w in FRACTION_PARTS and self.low(j + 1) == "of" and scale == 1.0 and not self.time_after(j + 2):
            return self.share(start, raw[j].end, j + 1, base * FRACTION_PARTS[w], bound, bstart)
        unit_word = w.removesuffix("'s").removesuffix("’s")  # "one week's allowance" is one week
        unit_end_j = j
        if w in ("business", "working") and self.low(j + 1) in ("day", "days", "week", "weeks"):
            unit_word, unit_end_j = w + "-" + self.low(j + 1), j + 1
        elif self.modified_unit(j):  # "ten calendar days", "four cutting days": a count of the unit
            unit_word, unit_end_j = self.low(j + 1), j + 1
        elif w in ("fl", "fluid") and self.low(j + 1) in ("oz", "ounce", "ounces"):
            unit_word, unit_end_j = "fl-oz", j + 1  # the fluid ounce, a volume ("5 fl oz"; "oz" alone is a mass)
        u = UNITS.get(SPACED_ONLY.get(unit_word, unit_word))
        if u is None and w in POWER_WORDS:
            nxt = self.low(j + 1)
            u, unit_end_j = powered_unit(w, UNITS.get(SPACED_ONLY.get(nxt, nxt))), j + 1
        if u is not None and u.spaced and self.adjacent(j, end):
            return self.unit_qty(
                start, raw[unit_end_j].end, unit_end_j + 1, base, scale, exact, u, bound, bstart, first
            )
        if w in ("am", "pm", "a.m", "p.m") and base <= 12 and base == int(base) and scale == 1.0:
            minutes = (int(base) % 12 + (12 if w.startswith("p") else 0)) * 60
            self.push_qty(
                start,
                raw[j].end,
                Quantity(
                    "clock",
                    "clock",
                    float(minutes),
                    1.0,
                    str(minutes),
                    exact_reading(float(minutes)),
                    -1,
                    bound,
                    bstart,
                ),
            )
            return j + 1
        if (
            scale == 1.0
            and re.fullmatch(r"\d{4}", exact)
            and bound == 0
            and (
                YEAR_MIN <= base <= YEAR_MAX or (OLD_YEAR_MIN <= base < YEAR_MIN and self.low(first - 1) in YEAR_BEFORE)
            )
        ):
            self.out.append(
                Token(
                    self.text[start:end],
                    start,
                    end,
                    DATE,
                    "#d",
                    date=DateValue(((int(base), 0, 0, 0),), True),
                    parts=(("y", self.text[start:end], start, end),),
                )
            )
            return j
        q = Quantity("", "", base, scale, exact if scale == 1.0 else "", exact_reading(v), -1, bound, bstart)
        return self.rate_or_push(start, end, j, q, first)

    def temperature(self, start: int, end: int, j: int, base: float, exact: str, bound: int, bstart: int) -> int:
        """ "40 °C", "104°F", "40 degrees Celsius": a temperature in kelvin (a Fahrenheit figure is a
        rounded conversion, equal within half a kelvin); a degree sign with no scale is an angle, a plain number."""
        scale = TEMPERATURE_SCALES.get(self.low(j + 1), "")
        if not scale or self.raw[j + 1].start - self.raw[j].end > 1:
            q = Quantity("", "", base, 1.0, exact, exact_reading(base), -1, bound, bstart)
            self.push_qty(start, self.raw[j].end, q)
            return j + 1
        q = Quantity("temp", "deg" + scale, base, 1.0, exact, temperature_readings(scale, base), -1, bound, bstart)
        self.push_qty(start, self.raw[j + 1].end, q)
        return j + 2

    def named_before(self, i: int) -> bool:
        """Does a capitalised word stand right before raw ``i``?"""
        if i == 0:
            return False
        p = self.raw[i - 1]
        return p.group == "word" and p.text[:1].isupper() and self.raw[i].start - p.end == 1

    def time_after(self, j: int) -> bool:
        """Is a time unit next, after an optional article ("of an hour", "of the day" is none)?"""
        k = j + 1 if self.low(j) in ("a", "an") else j
        u = UNITS.get(self.low(k))
        return u is not None and u.dim in ("time", "cal")

    def share(self, start: int, end: int, j: int, part: float, bound: int, bstart: int) -> int:
        """A share of a whole written as a fraction ("three quarters of its capacity", "a quarter of the
        fee"): the percentage it is."""
        v = part * 100.0
        self.push_qty(start, end, Quantity("pct", "%", v, 1.0, "", exact_reading(v), -1, bound, bstart))
        return j

    def and_fraction(self, j: int) -> float:
        """The fraction "and a half" / "and a quarter" / "and three quarters" written at ``j`` after a measure
        (its three words), else 0."""
        if self.low(j) != "and":
            return 0.0
        count, part = self.low(j + 1), FRACTION_PARTS.get(self.low(j + 2), 0.0)
        n = 1.0 if count in ("a", "an", "one") else float(NUMBER_WORDS.get(count, 0))
        if not part or not 0 < n * part < 1 or (n == 1.0) != (self.low(j + 2) in FRACTION_ONE):
            return 0.0
        return n * part

    def cents(self, j: int) -> tuple[float, int]:
        """The minor units written after an amount in words ("three dollars and fifty cents"): (the fraction of
        the major unit, the index after them), else (0, j)."""
        if self.low(j) != "and" or self.low(j + 2) not in MINOR_UNITS:
            return 0.0, j
        r = self.raw[j + 1]
        w = r.text if r.group == "num" else self.low(j + 1)
        n = float(w) if w.isdigit() else float(NUMBER_WORDS.get(w, 0))
        if not 0 < n < 100:  # a hundred minor units make one major unit
            return 0.0, j
        return n / 100, j + 3

    def unit_qty(  # noqa: PLR0913  a quantity's parts as the number reader matched them
        self,
        start: int,
        end: int,
        j: int,
        base: float,
        scale: float,
        exact: str,
        u: Unit,
        bound: int,
        bstart: int,
        first: int,
    ) -> int:
        """A number with its unit; "every 30 minutes" becomes a rate of one per 30 minutes; "an hour and
        a half" is 1.5 hours."""
        part = self.and_fraction(j) if scale == 1.0 else 0.0
        if part:  # "an hour and a half", "an hour and a quarter", "two days and three quarters"
            base, exact, end, j = base + part, "", self.raw[j + 2].end, j + 3
        if u.name == "y" and self.low(j) == "old" and scale == 1.0:
            # "25 years old" is an age, a count of years: it compares with "the minimum age is 21"
            q = Quantity("", "", base, 1.0, exact, exact_reading(base), -1, bound, bstart)
            self.push_qty(start, self.raw[j].end, q)
            return j + 1
        b = base * scale
        if u.dim in ("time", "cal"):
            readings = time_readings(b, u)
            if self.every_before(first):
                q = Quantity(
                    "rate",
                    "1/" + u.name,
                    b,
                    1.0,
                    exact,
                    tuple((1 / hi, 1 / lo) for lo, hi in readings),
                    -1,
                    bound,
                    bstart,
                )
                self.push_qty(start, end, q)
                return j
            q = Quantity("time", u.name, base, scale, exact, readings, -1, bound, bstart)
            self.push_qty(start, end, q)
            return j
        if u.dim == "size":
            q = Quantity("size", u.name, base, scale, exact, size_readings(b, u), u.power, bound, bstart)
            return self.rate_or_push(start, end, j, q, first)
        if u.dim == "pct":
            q = Quantity("pct", "%", b, 1.0, exact, exact_reading(b), -1, bound, bstart)
        else:
            v = b * u.factor
            tol = HEDGE_TOLERANCE if self.low(first - 1) in _HEDGES else APPROX_TOLERANCE if u.approx else 0.0
            readings = ((v * (1 - tol), v * (1 + tol)),) if tol else exact_reading(v)
            q = Quantity(u.dim, u.name, base, scale, exact, readings, u.power, bound, bstart)
        self.push_qty(start, end, q)
        return j

    def period_part(self, i: int) -> bool:
        """Is the period at raw ``i`` a fraction of the unit after it ("a quarter hour", "a quarter of an hour")?"""
        nxt = self.low(i + 1)
        after = self.low(i + 3) if nxt == "of" and self.low(i + 2) in ("a", "an") else nxt
        u = UNITS.get(after)
        return self.low(i) == "quarter" and u is not None and u.dim in ("time", "cal")

    def rate_or_push(self, start: int, end: int, j: int, q: Quantity, first: int) -> int:
        """ "150 requests per second", "EUR 20 per month", "2 GB a day": a rate of the quantity."""
        raw, n = self.raw, len(self.raw)
        if q.dim == "times" and j < n and raw[j].group == "word" and raw[j].low in ADVERB_PERIODS:
            self.forced_func.add(j)  # "twice daily" is "twice a day"
            self.push_qty(start, end, self.as_rate(q, 1.0, UNITS[ADVERB_PERIODS[raw[j].low]]))
            return j
        k = j
        skipped = 0
        while k < n and raw[k].group == "word" and skipped <= 3:
            w = raw[k].low
            if w in RATE_MARKERS:
                break
            if w in ("or", "and") and self.low(k + 1) in BOUNDS_AFTER:
                k += 2  # "£1,500 or more each month": the bound stands between the number and its rate
                continue
            if "/" in w:
                head, _, tail = w.rpartition("/")
                u = UNITS.get(tail)
                if u is not None and u.dim in ("time", "cal") and head:
                    self.push_qty(start, end, self.as_rate(q, 1.0, u))
                    return j
            if w in FUNCTION_WORDS or w in UNITS or w in NUMBER_WORDS:
                k = n  # another number in words before the marker owns the rate ("3 pupils attend two classes a week")
                break
            k += 1
            skipped += 1
        if k < n and raw[k].group == "word" and raw[k].low in RATE_MARKERS:
            m = k + 1
            count = 1.0
            if m < n and raw[m].group == "num" and raw[k].low == "per":
                count, m = parse_number(raw[m].text), m + 1
            u = UNITS.get(self.low(m))
            singular = self.low(m) in SINGLE_PERIODS and not self.period_part(m)
            if u is not None and u.dim in ("time", "cal") and u.spaced and (raw[k].low == "per" or singular):
                self.forced_func.update(range(k, m + 1))
                self.push_qty(start, end, self.as_rate(q, count, u))
                return j
        self.push_qty(start, end, q)
        return j

    @staticmethod
    def as_rate(q: Quantity, count: float, u: Unit) -> Quantity:
        den = time_readings(count, u)
        readings = tuple((lo / dhi, hi / dlo) for lo, hi in q.readings for dlo, dhi in den)
        dim = "rate" if q.dim in ("", "times") else "rate:" + q.dim
        unit = f"{q.unit}/{'' if count == 1.0 else format(count, 'g')}{u.name}"
        return q._replace(dim=dim, unit=unit, readings=readings)

    def money(self, i: int) -> int:
        r = self.raw[i]
        cur = CURRENCY_SYMBOL[r.text[0]]
        body = r.text[1:].strip()
        m = NUM_RE.match(body)
        base = parse_number(m.group()) if m else 0.0
        suffix = body[m.end() :].strip() if m else ""
        scale = SCALE_SUFFIX.get(suffix, 1e9 if suffix == "B" else 1.0)
        return self.number(
            i, base, m.group().replace(",", "") if m else "", r.start, r.end, i + 1, currency=cur, scale=scale
        )

    def glued_number(self, i: int) -> int:
        """Digits glued to letters: "30s", "500ms", "2GiB", "10x", "5th", "10k", "2pm", or an identifier."""
        r = self.raw[i]
        m = NUM_RE.match(r.text)
        assert m is not None
        base, exact, suffix = parse_number(m.group()), m.group().replace(",", ""), r.text[m.end() :]
        low = suffix.lower()
        if low == "x":
            bound, bstart = self.bound_before(i)
            self.push_qty(r.start, r.end, Quantity("x", "x", base, 1.0, exact, exact_reading(base), -1, bound, bstart))
            return i + 1
        if suffix in SCALE_SUFFIX or (suffix == "B" and "." in exact):
            scale = SCALE_SUFFIX.get(suffix, 1e9)
            return self.number(i, base, "", r.start, r.end, i + 1, scale=scale)
        if suffix in VULGAR_FRACTIONS and "." not in exact:  # "1½": one and a half
            return self.number(i, base + VULGAR_FRACTIONS[suffix], "", r.start, r.end, i + 1)
        if suffix == "p" and base < 1000:  # "24.5p": pence ("1080p" is a resolution)
            return self.number(i, base, exact, r.start, r.end, i + 1, currency="GBP", scale=0.01)
        if low in ("st", "nd", "rd", "th"):
            return self.number(i, base, exact, r.start, r.end, i + 1)
        if low in ("am", "pm") and base <= 12:
            # "9.30am": the digits after the point are minutes, as after the colon of "9:30am"
            whole, _, part = exact.partition(".")
            mins = int(part) if len(part) == 2 and int(part) < 60 else 0
            minutes = (int(whole) % 12 + (12 if low == "pm" else 0)) * 60 + mins
            self.push_qty(
                r.start,
                r.end,
                Quantity("clock", "clock", float(minutes), 1.0, str(minutes), exact_reading(float(minutes)), -1, 0, -1),
            )
            return i + 1
        u = UNITS.get(low) or UNITS.get(suffix)
        if u is not None and len(suffix) == 1 and suffix.isupper() and self.named_before(i):
            u = None  # "Merlin 1D", "Suite 4B": a designation after a name, not a duration or a size
        if u is not None and u.glued:
            bound, bstart = self.bound_before(i)
            return self.unit_qty(r.start, r.end, i + 1, base, 1.0, exact, u, bound, bstart, i)
        key = nuclide_key(r.low) or r.low  # "18F" = "F-18"
        self.out.append(Token(r.text, r.start, r.end, ENTITY, key, parts=((key, r.text, r.start, r.end),), sub="ident"))
        return i + 1

    # ---- words ----------------------------------------------------------------------------------
    def number_words(self, i: int) -> tuple[float, int]:
        """Value of a run of number words ("twenty-five", "two hundred and fifty") and the raw
        index after it."""
        total, current, j = 0.0, 0.0, i
        n = len(self.raw)
        while j < n and self.raw[j].group == "word":
            w = self.raw[j].low
            pieces = w.split("-")
            if w in ("dozen", "dozens") and current:
                current *= 12  # "two dozen" is 24
            elif all(p in NUMBER_WORDS for p in pieces) and len(pieces) <= 2:
                current += sum(NUMBER_WORDS[p] for p in pieces)
            elif w in NUMBER_MULT and (current or total):
                mult = NUMBER_MULT[w]
                if mult == 100.0:
                    current *= 100.0
                else:
                    total += current * mult
                    current = 0.0
            elif (
                w == "and"
                and j + 1 < n
                and all(p in NUMBER_WORDS for p in self.raw[j + 1].low.split("-")[:2])
                and (current >= 100 or total)
            ):  # "nine hundred and ninety-nine"
                pass
            else:
                break
            j += 1
        return total + current, j

    def number_word_compound(self, i: int, value: float, head_len: int, tail: str) -> int:
        """ "three-node" is the number 3 and the word "node"; "three-day" is 3 days."""
        r = self.raw[i]
        if tail in FRACTION_PARTS:
            return self.fraction_compound(i, value * FRACTION_PARTS[tail])
        u = UNITS.get(tail)
        if u is not None and u.spaced:
            bound, bstart = self.bound_before(i)
            return self.unit_qty(r.start, r.end, i + 1, value, 1.0, "", u, bound, bstart, i)
        split = r.start + head_len
        self.push_qty(r.start, split, Quantity("", "", value, 1.0, "", exact_reading(value), -1, 0, -1))
        self.out.append(Token(self.text[split + 1 : r.end], split + 1, r.end, WORD, word_key(tail)))
        return i + 1

    def fraction_compound(self, i: int, part: float) -> int:
        """ "three-quarters of an hour" is 45 minutes, "two-thirds of the seats", "a two-thirds majority" and "cut
        by two-thirds" a share, "three-quarters" alone the number 0.75 (not three calendar quarters)."""
        r = self.raw[i]
        bound, bstart = self.bound_before(i)
        if self.low(i + 1) == "of" and self.low(i + 2) in ("a", "an"):
            u = UNITS.get(self.low(i + 3))
            if u is not None and u.dim in HALVED_DIMS and u.spaced:  # "three-quarters of an inch"
                return self.unit_qty(r.start, self.raw[i + 3].end, i + 4, part, 1.0, "", u, bound, bstart, i)
        if (self.low(i + 1) == "of" and not self.time_after(i + 2)) or self.low(i - 1) in ("a", "an", "by"):
            return self.share(r.start, r.end, i + 1, part, bound, bstart)  # "a one-third deposit", "by two-thirds"
        self.push_qty(r.start, r.end, Quantity("", "", part, 1.0, "", exact_reading(part), -1, bound, bstart))
        return i + 1

    def times_word(self, i: int, low: str) -> int:
        """ "twice as fast" (multiplier), "retries twice" (a count), "twice a day" (a rate)."""
        r = self.raw[i]
        nxt = self.low(i + 1)
        bound, bstart = self.bound_before(i)
        if low in MULT_WORDS and (low not in TIMES_WORDS or nxt in MULTIPLIER_NEXT or nxt.endswith("er")):
            v = MULT_WORDS[low]
            self.push_qty(r.start, r.end, Quantity("x", "x", v, 1.0, "", exact_reading(v), -1, bound, bstart))
            return i + 1
        if low in TIMES_WORDS:
            q = Quantity(
                "times", "times", TIMES_WORDS[low], 1.0, "", exact_reading(TIMES_WORDS[low]), -1, bound, bstart
            )
            if low == "once" and self.low(i + 1) not in RATE_MARKERS:
                self.out.append(Token(r.text, r.start, r.end, FUNC, low))
                return i + 1
            return self.rate_or_push(r.start, r.end, i + 1, q, i)
        self.out.append(Token(r.text, r.start, r.end, WORD, word_key(low)))
        return i + 1

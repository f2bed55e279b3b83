"""The lexer of value-conflict detection: one text read into tokens with normalised values
(numbers with units folded in, dates, percentages, money, rates, entities, polarity, negation)."""

from __future__ import annotations

import re

from crp_core.stages.contradictions.dates import LexerBase
from crp_core.stages.contradictions.lexicon import (
    ABBREVIATIONS,
    BOUNDS,
    BREAK,
    CAPS_WORDS,
    CLAUSE_WORDS,
    COMPARATIVE_NEXT,
    CURRENCY_CODES,
    CURRENCY_SYMBOL,
    CURRENCY_WORDS,
    DATE,
    ENTITY,
    FREQ_ADVERBS,
    FUNC,
    FUNCTION_WORDS,
    MONTH_ABBR,
    MONTHS,
    MULT_WORDS,
    NEG,
    NEG_CONTRACTIONS,
    NEG_IDIOMS,
    NEGATION_CUES,
    NUMBER_MULT,
    NUMBER_WORDS,
    POLAR,
    POLARITY,
    PREDICATIVE_BEFORE,
    RATE_MARKERS,
    SCALE_SUFFIX,
    SCALE_WORDS,
    TIMES_WORDS,
    UNITS,
    WEEKDAYS,
    WORD,
    YEAR_MAX,
    YEAR_MIN,
    Unit,
)
from crp_core.stages.contradictions.tokens import (
    NUM_RE,
    DateValue,
    Quantity,
    Token,
    entity_key,
    entity_sub,
    exact_reading,
    parse_number,
    size_readings,
    time_readings,
    word_key,
)


class Lexer(LexerBase):
    """Turns the regex matches of one text into tokens (one instance per text)."""

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
                out.append(
                    Token(r.text, r.start, r.end, ENTITY, r.low, parts=((r.low, r.text, r.start, r.end),), sub="ident")
                )
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
                i = self.number(i, parse_number(r.text), r.text.replace(",", ""), r.start, r.end, i + 1)
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
                if prev in ABBREVIATIONS or (len(prev) == 1 and prev.isalpha()):
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

    def number(
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
        v = base * scale
        if currency:
            q = Quantity("money", currency, base, scale, exact, exact_reading(v), -1, bound, bstart)
            return self.rate_or_push(start, end, j, q, first)
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
            if nxt in COMPARATIVE_NEXT or (nxt.endswith("er") and len(nxt) > 4 and nxt not in FUNCTION_WORDS):
                self.push_qty(start, raw[j].end, Quantity("x", "x", v, 1.0, exact, exact_reading(v), -1, bound, bstart))
                return j + 1
            q = Quantity("times", "times", base, scale, exact, exact_reading(v), -1, bound, bstart)
            return self.rate_or_push(start, raw[j].end, j + 1, q, first)
        unit_word = w
        unit_end_j = j
        if w in ("business", "working") and self.low(j + 1) in ("day", "days"):
            unit_word, unit_end_j = w + "-" + self.low(j + 1), j + 1
        elif w == "calendar" and self.low(j + 1) in ("day", "days", "month", "months", "year", "years"):
            unit_word, unit_end_j = self.low(j + 1), j + 1
        u = UNITS.get(unit_word)
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
        if scale == 1.0 and re.fullmatch(r"\d{4}", exact) and YEAR_MIN <= base <= YEAR_MAX and bound == 0:
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

    def unit_qty(
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
        """A number with its unit; "every 30 minutes" becomes a rate of one per 30 minutes."""
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
            q = Quantity(u.dim, u.name, base, scale, exact, exact_reading(b * u.factor), u.power, bound, bstart)
        self.push_qty(start, end, q)
        return j

    def rate_or_push(self, start: int, end: int, j: int, q: Quantity, first: int) -> int:
        """ "150 requests per second", "EUR 20 per month", "2 GB a day": a rate of the quantity."""
        raw, n = self.raw, len(self.raw)
        k = j
        skipped = 0
        while k < n and raw[k].group == "word" and skipped <= 3:
            w = raw[k].low
            if w in RATE_MARKERS:
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
        if k < n and raw[k].group == "word" and raw[k].low in RATE_MARKERS:
            m = k + 1
            count = 1.0
            if m < n and raw[m].group == "num" and raw[k].low == "per":
                count, m = parse_number(raw[m].text), m + 1
            u = UNITS.get(self.low(m))
            singular = self.low(m) in ("second", "minute", "hour", "day", "week", "month", "year", "sec", "min")
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
        if low in ("st", "nd", "rd", "th"):
            return self.number(i, base, exact, r.start, r.end, i + 1)
        if low in ("am", "pm") and base <= 12:
            minutes = (int(base) % 12 + (12 if low == "pm" else 0)) * 60
            self.push_qty(
                r.start,
                r.end,
                Quantity("clock", "clock", float(minutes), 1.0, str(minutes), exact_reading(float(minutes)), -1, 0, -1),
            )
            return i + 1
        u = UNITS.get(low) or UNITS.get(suffix)
        if u is not None and u.glued:
            bound, bstart = self.bound_before(i)
            return self.unit_qty(r.start, r.end, i + 1, base, 1.0, exact, u, bound, bstart, i)
        self.out.append(
            Token(r.text, r.start, r.end, ENTITY, r.low, parts=((r.low, r.text, r.start, r.end),), sub="ident")
        )
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
            if all(p in NUMBER_WORDS for p in pieces) and len(pieces) <= 2:
                current += sum(NUMBER_WORDS[p] for p in pieces)
            elif w in NUMBER_MULT and (current or total):
                mult = NUMBER_MULT[w]
                if mult == 100.0:
                    current *= 100.0
                else:
                    total += current * mult
                    current = 0.0
            elif w == "and" and j + 1 < n and self.raw[j + 1].low in NUMBER_WORDS and (current >= 100 or total):
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
        if low in NEG_CONTRACTIONS or low.endswith("n't"):
            out.append(Token(s, r.start, r.end, NEG, "#neg"))
            return i + 1
        if low in NEGATION_CUES:
            if (
                (low, nxt) in NEG_IDIOMS
                or (self.low(i - 1), low) in NEG_IDIOMS
                or (low, nxt, self.low(i + 2)) in BOUNDS
                or (low, nxt) in BOUNDS
            ):
                out.append(Token(s, r.start, r.end, FUNC, low))
            else:
                out.append(Token(s, r.start, r.end, NEG, "#neg"))
            return i + 1
        if low in ("need", "needs") and nxt in ("not", "no"):
            out.append(Token(s, r.start, r.end, FUNC, low))  # modal "need not" (= not required)
            return i + 1
        if s.isupper() and len(s) > 1 and low in CAPS_WORDS:
            s_case = s.lower()  # RFC 2119 "MUST", "NOTE": ordinary words
        else:
            s_case = s
        # numbers written as words
        head, _, tail = low.partition("-")
        if (
            head in NUMBER_WORDS
            and not (low == "one" and nxt in ("another", "of"))
            and not (low == "one" and self.low(i - 1) in ("no", "any", "each", "every", "the", "this", "that"))
        ):
            if tail and tail.split("-")[0] not in NUMBER_WORDS:
                return self.number_word_compound(i, float(NUMBER_WORDS[head]), len(head), tail)
            value, j = self.number_words(i)
            end = raw[j - 1].end
            return self.number(i, value, "", r.start, end, j)
        if low in TIMES_WORDS or low in MULT_WORDS:
            return self.times_word(i, low)
        if low.endswith("fold") and (low[:-4] in NUMBER_WORDS or low[:-4] in NUMBER_MULT):
            v = float(NUMBER_WORDS.get(low[:-4], 0) or NUMBER_MULT.get(low[:-4], 0.0))  # "tenfold"
            bound, bstart = self.bound_before(i)
            self.push_qty(r.start, r.end, Quantity("x", "x", v, 1.0, "", exact_reading(v), -1, bound, bstart))
            return i + 1
        if low == "half" and nxt in ("a", "an") and self.low(i + 2) in UNITS:
            u = UNITS[self.low(i + 2)]
            if u.dim in ("time", "cal"):
                out.append(Token(s, r.start, r.end, FUNC, low))
                out.append(Token(raw[i + 1].text, raw[i + 1].start, raw[i + 1].end, FUNC, "a"))
                return self.unit_qty(raw[i + 2].start, raw[i + 2].end, i + 3, 0.5, 1.0, "", u, 0, -1, i)
        if (
            low in ("a", "an")
            and nxt in ("second", "minute", "hour", "day", "week", "month", "year", "fortnight")
            and self.low(i - 1)
            in (
                "within",
                "for",
                "after",
                "in",
                "than",
                "over",
                "under",
                "about",
                "least",
                "most",
                "to",
                "once",
                "every",
                "each",
                "past",
                "last",
                "takes",
                "take",
                "lasts",
            )
        ):
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
        if low in FREQ_ADVERBS or low in ("monthly", "yearly", "annually", "quarterly"):
            following = raw[i + 1] if i + 1 < len(raw) else None
            attributive = (
                following is not None
                and following.group == "word"
                and following.low not in FUNCTION_WORDS
                and following.low not in CLAUSE_WORDS
            )
            if not attributive:
                if low in FREQ_ADVERBS:
                    secs = FREQ_ADVERBS[low]
                    readings = exact_reading(1.0 / secs)
                else:
                    months = {"monthly": 1, "quarterly": 3}.get(low, 12)
                    lo, hi = time_readings(float(months), UNITS["month"])[0]
                    readings = ((1.0 / hi, 1.0 / lo),)
                self.push_qty(r.start, r.end, Quantity("rate", "1/" + low, 1.0, 1.0, "1", readings, -1, 0, -1))
                return i + 1
        # dates
        month = MONTHS.get(low) or MONTH_ABBR.get(low.rstrip("."))
        if month and s[0].isupper():
            near_number = (
                (i + 1 < len(raw) and raw[i + 1].group in ("num", "numw"))
                or (i > 0 and raw[i - 1].group in ("num", "numw"))
                or self.low(i - 1) == "of"
            )
            if (low in MONTHS and low != "may") or near_number:
                return self.month(i, month)
        if low.rstrip("s") in WEEKDAYS and s[0].isupper():
            out.append(
                Token(
                    s,
                    r.start,
                    r.end,
                    DATE,
                    "#d",
                    date=DateValue(((0, 0, 0, WEEKDAYS[low.rstrip("s")]),), False),
                    parts=(("w", s, r.start, r.end),),
                )
            )
            return i + 1
        if re.fullmatch(r"[qh][1-4]", low) and s[0].isupper() and (low[0] == "q" or low[1] in "12"):
            return self.quarter(i, int(low[1]), low[0] == "h")
        if low in ("noon", "midnight") and self.low(i - 1) in ("at", "until", "by", "before", "after", "from"):
            v = 720.0 if low == "noon" else 0.0
            self.push_qty(r.start, r.end, Quantity("clock", "clock", v, 1.0, str(v), exact_reading(v), -1, 0, -1))
            return i + 1
        # currency code before a number: "EUR 35 million"
        if (
            s in CURRENCY_CODES
            and i + 1 < len(raw)
            and raw[i + 1].group in ("num", "money")
            and self.adjacent(i + 1, r.end, " ")
        ):
            nr = raw[i + 1]
            if nr.group == "num":
                return self.number(
                    i + 1, parse_number(nr.text), nr.text.replace(",", ""), r.start, nr.end, i + 2, currency=s, first=i
                )
        # polarity words ("enabled" / "disabled")
        pol = POLARITY.get(low)
        if pol is not None and (not pol.predicative or self.predicative(i)):
            out.append(Token(s, r.start, r.end, POLAR, "#" + pol.group, sign=pol.sign))
            return i + 1
        # entities
        sub = entity_sub(s_case, low, sent_start, poss)
        if sub:
            key = entity_key(low, sub)
            out.append(
                Token(
                    s,
                    r.start,
                    r.end,
                    ENTITY,
                    key,
                    parts=((key, s, r.start, r.end),),
                    sub=sub + ("+poss" if poss else ""),
                )
            )
            return i + 1
        if low in FUNCTION_WORDS or low in CLAUSE_WORDS:
            kind = BREAK if low in CLAUSE_WORDS else FUNC
            out.append(Token(s, r.start, r.end, kind, "clause" if kind == BREAK else low))
            return i + 1
        out.append(Token(s, r.start, r.end, WORD, word_key(low), sub="poss" if poss else ""))
        return i + 1

    def number_word_compound(self, i: int, value: float, head_len: int, tail: str) -> int:
        """ "three-node" is the number 3 and the word "node"; "three-day" is 3 days."""
        r = self.raw[i]
        u = UNITS.get(tail)
        if u is not None and u.spaced:
            bound, bstart = self.bound_before(i)
            return self.unit_qty(r.start, r.end, i + 1, value, 1.0, "", u, bound, bstart, i)
        split = r.start + head_len
        self.push_qty(r.start, split, Quantity("", "", value, 1.0, "", exact_reading(value), -1, 0, -1))
        self.out.append(Token(self.text[split + 1 : r.end], split + 1, r.end, WORD, word_key(tail)))
        return i + 1

    def times_word(self, i: int, low: str) -> int:
        """ "twice as fast" (multiplier), "retries twice" (a count), "twice a day" (a rate)."""
        r = self.raw[i]
        nxt = self.low(i + 1)
        bound, bstart = self.bound_before(i)
        if low in MULT_WORDS and (low not in TIMES_WORDS or nxt in COMPARATIVE_NEXT or nxt.endswith("er")):
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

    def predicative(self, i: int) -> bool:
        prev = self.low(i - 1)
        if prev in PREDICATIVE_BEFORE:
            return True
        return prev == "to" and self.low(i - 2) in ("set", "defaults", "default", "switched", "turned")

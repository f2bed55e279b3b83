"""The lexer of value-conflict detection: one text read into tokens with normalised values
(numbers with units folded in, dates, percentages, money, rates, entities, polarity, negation)."""

from __future__ import annotations

import re
from collections.abc import Callable

from crp_core.stages.contradictions.dates import clock_quantity
from crp_core.stages.contradictions.lexicon import (
    ABBREVIATIONS,
    BOUNDS,
    BOUNDS_AFTER,
    BREAK,
    CAPS_WORDS,
    CLAUSE_WORDS,
    CURRENCY_CODES,
    DATE,
    DAY_SETS,
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
    SINGLE_PERIODS,
    TIMES_WORDS,
    UNITS,
    WEEKDAYS,
    WORD,
    negated_base,
)
from crp_core.stages.contradictions.quantities import FRACTION_ONE, FRACTION_PARTS, HALVED_DIMS, VULGAR_FRACTIONS
from crp_core.stages.contradictions.readers import ACRONYM_GLUED, PhraseLexer
from crp_core.stages.contradictions.tokens import (
    DateValue,
    Quantity,
    Token,
    entity_key,
    entity_sub,
    exact_reading,
    parse_number,
    time_readings,
    word_key,
)

#: what "no" / "without" before it makes free of charge ("at no extra cost", "without charge")
_COST_WORDS = frozenset(["cost", "charge", "fee"])
#: the words between "no" and a cost word that keep it free of charge ("no separate charge": included)
_COST_QUALIFIERS = frozenset(["extra", "additional", "separate", "further"])
#: the prefixes a hyphen joins to a name without changing which name it states ("pre-Christmas" states Christmas;
#: "non-EU" and "post-Brexit" name another group or period)
NAME_PREFIXES = frozenset(["pre", "mid"])
#: the verb a negation turns into an upper bound ("cannot exceed", "doesn't exceed")
_EXCEED = frozenset(["exceed", "exceeds"])
#: the forms of "fall" that, before "on", say when something happens ("Lantern Night falls on 12 February")
_FALL_VERBS = frozenset(["fall", "falls", "fell", "falling"])
#: words before "a week" that make it a duration ("within a week", "takes an hour"), among them verbs that take a
#: duration as their object ("they get a fortnight to comment", "allow a day for delivery")
_DURATION_BEFORE = frozenset(
    [
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
        "roughly",
        "around",
        "approximately",
        "nearly",
        "almost",
    ]
    + ["get", "gets", "have", "has", "had", "given", "give", "gives", "allow", "allows", "wait", "waits"]
)
#: polarity groups whose word, predicative and followed by "to", grants or denies access to someone ("The beach is
#: no longer open to dogs" denies "Dogs are welcome on the beach")
_ACCESS_GROUPS = frozenset(["open"])
#: words after "a week" that make it a duration: "a day before travel", "a week ahead", "a month beforehand"
_DURATION_NEXT = frozenset(["before", "after", "ahead", "beforehand", "earlier", "later", "prior"])

#: the prepositions of time after which a capitalised "May" is the month ("from May", "until May")
_MONTH_BEFORE = frozenset(["from", "in", "until", "till", "since", "through", "during", "between", "before", "after"])
#: the determiners after which "half" is a share of the noun phrase they open, as "half of" is ("half the adult
#: rate", "half its original scale")
_HALF_DETERMINERS = frozenset(["the", "its", "their", "our", "your", "his", "her"])
#: the regex groups read as one identifier entity each
IDENT_GROUPS = ("url", "email", "flag", "path", "ver", "ip")
#: standards bodies: their code and a number name one standard ("EN 966", "ISO 9001", "BS 7671"), an entity, not a
#: count; other codes before a number keep it a number ("HTTP 429", "VLAN 99")
STANDARD_BODIES = frozenset(
    ["EN", "ISO", "IEC", "BS", "DIN", "ANSI", "ASTM", "IEEE", "NFPA", "UL", "CSA", "AS", "NZS", "JIS", "ASME", "SAE"]
)


class Lexer(PhraseLexer):
    """Turns the regex matches of one text into tokens (one instance per text)."""

    def run(self) -> list[Token]:
        raw, out = self.raw, self.out
        readers: dict[str, Callable[[int], int]] = {
            "iso": self.iso_date,
            "sdate": self.slash_date,
            "clock": self.clock,
            "ratio": self.ratio,
            "money": self.money,
            "numw": self.glued_number,
            "num": self.plain_count,
            "sym": self.symbol,
        }
        readers.update(dict.fromkeys(IDENT_GROUPS, self.ident))
        n = len(raw)
        i = 0
        sent_start = True
        while i < n:
            r = raw[i]
            start_i = i
            if i in self.forced_func:
                out.append(Token(r.text, r.start, r.end, FUNC, r.low))
                i += 1
                continue
            if r.group == "brk":
                kind = self.break_kind(i)
                if kind:
                    out.append(Token(r.text, r.start, r.end, BREAK, kind))
                    sent_start = kind == "sent" or r.text in ":([" or sent_start
                i += 1
                continue
            reader = readers.get(r.group)
            i = self.word(i, sent_start) if reader is None else reader(i)
            if i <= start_i:  # every reader consumes at least one raw token
                i = start_i + 1
            sent_start = False
        return out

    def ident(self, i: int) -> int:
        """A URL, e-mail address, command-line flag, path, version or IP address: one identifier entity."""
        r = self.raw[i]
        self.out.append(
            Token(r.text, r.start, r.end, ENTITY, r.low, parts=((r.low, r.text, r.start, r.end),), sub="ident")
        )
        return i + 1

    def half_unit(self, i: int, low: str, nxt: str) -> int:
        """ "a half hour", "half-day": half of a time unit; 0 when the word is none."""
        r = self.raw[i]
        head, _, tail = low.partition("-")
        if head != "half":
            return 0
        if tail:
            u, end, j = UNITS.get(tail), r.end, i + 1  # "a half-hour slot"
        else:
            u, end, j = UNITS.get(nxt), (self.raw[i + 1].end if i + 1 < len(self.raw) else r.end), i + 2
        if u is None or u.dim not in ("time", "cal") or not u.spaced:
            return 0
        bound, bstart = self.bound_before(i)
        return self.unit_qty(r.start, end, j, 0.5, 1.0, "", u, bound, bstart, i)

    def symbol(self, i: int) -> int:
        """A ``%`` or ``×`` no number claimed: skipped."""
        return i + 1

    def break_kind(self, i: int) -> str:
        r = self.raw[i]
        if r.text[0] in ".!?":
            if r.text[0] == ".":
                prev = self.low(i - 1)
                degree = i > 0 and self.text[self.raw[i - 1].start - 1 : self.raw[i - 1].start] == "°"
                if prev in ABBREVIATIONS or (len(prev) == 1 and prev.isalpha() and not degree):
                    return ""  # "e.g.", an initial ("J. Smith"); "8 °C." ends its sentence
                nxt = self.raw[i + 1] if i + 1 < len(self.raw) else None
                if nxt is not None and nxt.group == "word" and nxt.text[0].islower():
                    return ""
            return "sent"
        if r.text == ";":
            return "sent"
        if r.text == ":":
            return "label"  # "Minor infringements: up to 2%": the label is the value's attribute
        return "clause"

    def word(self, i: int, sent_start: bool) -> int:  # noqa: C901  the word readers in priority order, each returning the next index
        raw, out = self.raw, self.out
        r = raw[i]
        s, low = r.text, r.low
        poss = False
        if low.endswith("'s") and len(low) > 3:
            low, poss = low[:-2], True
        nxt = self.low(i + 1)
        # negation: contractions, cues (minus idioms and bounds such as "no more than")
        if low in NEG_CONTRACTIONS or low.endswith("n't"):
            # "cannot exceed": an upper bound, as "must not exceed" is (negations.tsv); "don't mind": an idiom
            func = nxt in _EXCEED or ("not", nxt) in NEG_IDIOMS
            out.append(Token(s, r.start, r.end, FUNC, low) if func else Token(s, r.start, r.end, NEG, "#neg"))
            return i + 1
        if low in ("no", "without") and (
            nxt in _COST_WORDS or (nxt in _COST_QUALIFIERS and self.low(i + 2) in _COST_WORDS)
        ):
            last = i + 1 if nxt in _COST_WORDS else i + 2  # "at no extra cost": free of charge
            out.append(Token(self.text[r.start : raw[last].end], r.start, raw[last].end, POLAR, "#charged", sign=-1))
            return last + 1
        if low in ("no", "not") and nxt in ("longer", "anymore") and self.low(i + 2) != "than":
            self.forced_func.add(i + 1)  # "no longer supported": the negation, not a comparative
            out.append(Token(s, r.start, r.end, NEG, "#neg"))
            return i + 1
        if low == "no" and nxt == "one":
            # "No one may stay on the deck": one negation, as "nobody" (not the number one)
            j = i + 1
            out.append(Token(self.text[r.start : raw[j].end], r.start, raw[j].end, NEG, "#neg"))
            return j + 1
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
        size = self.count_in(i) or self.fraction_size(i)  # "one in five", "by a quarter", "a fifth off"
        if size:
            return size
        # numbers written as words
        head, _, tail = low.partition("-")
        if (
            head in NUMBER_WORDS
            and not (low == "one" and nxt in ("another", "of"))
            and not (low == "one" and self.low(i - 1) in ("no", "any", "each", "every", "the", "this", "that"))
        ):
            if tail and tail.split("-")[0] not in NUMBER_WORDS:
                return self.number_word_compound(i, float(NUMBER_WORDS[head]), len(head), tail)
            tens = self.tens_compound(i)  # "twenty-five-minute"
            if tens:
                return tens
            value, j = self.number_words(i)
            if j > i:  # a word of number words and more ("twenty-twelve-minute") is read as a word below
                return self.number(i, value, "", r.start, raw[j - 1].end, j)
        if low == "once" and nxt in ("every", "each"):
            out.append(Token(s, r.start, r.end, FUNC, low))  # "once every two days" is "every two days"
            return i + 1
        if low in TIMES_WORDS or low in MULT_WORDS:
            return self.times_word(i, low)
        if low.endswith("fold") and (low[:-4] in NUMBER_WORDS or low[:-4] in NUMBER_MULT):
            v = float(NUMBER_WORDS.get(low[:-4], 0) or NUMBER_MULT.get(low[:-4], 0.0))  # "tenfold"
            bound, bstart = self.bound_before(i)
            self.push_qty(r.start, r.end, Quantity("x", "x", v, 1.0, "", exact_reading(v), -1, bound, bstart))
            return i + 1
        if (
            low in ("a", "one")
            and nxt in FRACTION_ONE
            and nxt != "half"
            and self.low(i + 2) == "of"
            and self.low(i + 3) in ("a", "an")
        ):
            u = UNITS.get(self.low(i + 4))
            if u is not None and u.dim in HALVED_DIMS and u.spaced:  # "a quarter of an hour", "a tenth of a kilogram"
                part = FRACTION_PARTS[nxt]
                bound, bstart = self.bound_before(i)
                return self.unit_qty(r.start, raw[i + 4].end, i + 5, part, 1.0, "", u, bound, bstart, i)
        half = self.half_unit(i, low, nxt) or self.clock_words(i) or self.half_dozen(i) or self.one_measure(i)
        if half:
            return half
        if low in VULGAR_FRACTIONS:  # "¾ cup": a number written as one character
            return self.number(i, VULGAR_FRACTIONS[low], "", r.start, r.end, i + 1)
        if (
            (low == "a" and nxt in FRACTION_PARTS and self.low(i + 2) == "of" and not self.time_after(i + 3))
            or (low == "half" and nxt == "of" and not self.time_after(i + 2))
            or self.half_determiner(i)
        ):
            bound, bstart = self.bound_before(i)
            end_j = i + 2 if low == "a" else i + 1
            part = FRACTION_PARTS[nxt] if low == "a" else 0.5
            return self.share(r.start, raw[end_j - 1].end, end_j, part, bound, bstart)  # "a quarter of the fee"
        if low == "half" and nxt in ("a", "an") and self.low(i + 2) in UNITS:
            u = UNITS[self.low(i + 2)]
            if u.dim in HALVED_DIMS and u.spaced:  # "half an hour", "half a tonne", "half a litre"
                out.append(Token(s, r.start, r.end, FUNC, low))
                out.append(Token(raw[i + 1].text, raw[i + 1].start, raw[i + 1].end, FUNC, "a"))
                return self.unit_qty(raw[i + 2].start, raw[i + 2].end, i + 3, 0.5, 1.0, "", u, 0, -1, i)
        if (
            low in ("a", "an")
            and nxt in ("second", "minute", "hour", "day", "week", "month", "year", "fortnight")
            and (self.low(i - 1) in _DURATION_BEFORE or self.duration_after(i + 2) or self.and_fraction(i + 2))
        ):  # "a year and a half" is an amount wherever it stands
            if self.low(i - 1) in ("once",):
                out.append(Token(s, r.start, r.end, FUNC, low))
                return i + 1
            u = UNITS[nxt]
            bound, bstart = self.bound_before(i)
            return self.unit_qty(r.start, raw[i + 1].end, i + 2, 1.0, 1.0, "1", u, bound, bstart, i)
        if low in ("every", "each") and (nxt == "night" or nxt in SINGLE_PERIODS and not self.period_part(i + 1)):
            u = UNITS["day" if nxt == "night" else nxt]  # "every quarter" is every 3 months, "each fortnight" 14 days
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
            if (low in MONTHS and low != "may") or near_number or self.month_may(i):
                return self.month(i, month)
        if low.rstrip("s") in WEEKDAYS and s[0].isupper():
            return self.weekdays(i, WEEKDAYS[low.rstrip("s")])
        if low in DAY_SETS:
            days = DAY_SETS[low]
            out.append(
                Token(s, r.start, r.end, DATE, "#d", date=DateValue(days, False), parts=(("w", s, r.start, r.end),))
            )
            return i + 1
        if (
            re.fullmatch(r"[qh][1-4]", low)
            and s[0].isupper()
            and (low[0] == "q" or low[1] in "12")
            and not self.named_code(i)
        ):
            return self.quarter(i, int(low[1]), low[0] == "h")
        if low in ("noon", "midnight") and self.low(i - 1) in (
            "at",
            "until",
            "till",
            "to",
            "and",
            "by",
            "before",
            "after",
            "from",
            "around",
        ):
            self.push_qty(r.start, r.end, clock_quantity(720.0 if low == "noon" else 0.0))
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
        if pol is not None and low == "free" and nxt == "of" and self.low(i + 2) in _COST_WORDS:
            end = raw[i + 2].end  # "free of charge": one polarity word
            out.append(Token(self.text[r.start : end], r.start, end, POLAR, "#" + pol.group, sign=pol.sign))
            return i + 3
        if pol is not None and low == "free" and self.free_to(i) and self.predicative(i):
            # "the grower is free to sell": a permission (the group of "allowed"), not free of charge
            out.append(Token(s, r.start, r.end, POLAR, "#allow", sign=1))
            return i + 1
        if pol is not None and low == "fall" and i + 1 < len(raw) and raw[i + 1].group == "num":
            pol = None  # "fall 2026": the season
        if pol is not None and low in _FALL_VERBS and nxt == "on":
            pol = None  # "falls on 12 February": when something happens, no decrease
        if pol is not None and low == "on" and (nxt in WEEKDAYS or nxt in MONTHS):
            pol = None  # "the dance is on Saturday 3 May": when it happens, not switched on
        if (
            pol is not None
            and pol.group in _ACCESS_GROUPS
            and nxt == "to"
            and i + 2 < len(raw)
            and raw[i + 2].group == "word"
            and self.low(i + 2) not in UNITS
            and self.predicative(i)
        ):
            # "open to dogs" / "closed to the public": a permission for someone, the group of "allowed"
            out.append(Token(s, r.start, r.end, POLAR, "#allow", sign=pol.sign))
            return i + 1
        if pol is not None and (not pol.predicative or self.predicative(i)):
            out.append(Token(s, r.start, r.end, POLAR, "#" + pol.group, sign=pol.sign))
            return i + 1
        # entities
        if s in STANDARD_BODIES and self.standard_number(i):
            return self.standard(i)
        sub = entity_sub(s_case, low, sent_start, poss)
        if sub == "weak" and i > 0 and raw[i - 1].text == ":" and (i + 1 == len(raw) or raw[i + 1].group == "brk"):
            sub = "name"  # "Servers for the group stage: Stockholm.": the value a label names
        elif sub == "weak" and self.verb_object(i):
            sub = ""  # "Steep the heads for 48 hours": an instruction's verb before its object, no name
        if not sub and self.code_span(r.start, r.end):
            sub = "ident"  # `main`, `npm ci`: a name written as code
        elif not sub and len(s) == 1 and s.isupper() and i > 0 and not sent_start and self.designator(i):
            sub = "name"  # "Bay D", "the G clef", "symbol K": a one-letter designator or symbol
        if sub and ACRONYM_GLUED.fullmatch(s):
            return self.acronym_word(i)
        if sub:
            head, _, rest = s.partition("-")
            # "pre-Christmas", "mid-March": the name the prefix dates from or around is the name stated
            key = entity_key(rest.lower(), sub) if head.lower() in NAME_PREFIXES and rest[:1].isupper() else ""
            key = key or entity_key(low, sub)
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
        base = negated_base(low)
        bpol = POLARITY.get(base) if base and not poss else None
        if bpol is not None and self.predicative(i):
            # a polarity word with a negating prefix, stated of its subject, is its group with the other sign:
            # "are disallowed" denies "#allow" as "are prohibited" does; before a noun it names a kind
            # ("unopened cartridges") and stays a prefixed word
            out.append(Token(s, r.start, r.end, POLAR, "#" + bpol.group, sign=-bpol.sign))
            return i + 1
        if base and not poss:
            # "unaffected": the word of its base, negated when the other text states the base or a negation
            out.append(Token(s, r.start, r.end, WORD, word_key(base), sub="negpfx"))
            return i + 1
        out.append(Token(s, r.start, r.end, WORD, word_key(low), sub="poss" if poss else ""))
        return i + 1

    def standard_number(self, i: int) -> bool:
        """Does a standard's number (digits, no unit or percent after it) follow the body's code at raw ``i``?"""
        nr = self.raw[i + 1] if i + 1 < len(self.raw) else None
        if nr is None or nr.group != "num" or not nr.text.isdigit() or not self.adjacent(i + 1, self.raw[i].end, " "):
            return False
        after = self.raw[i + 2] if i + 2 < len(self.raw) else None
        return after is None or (after.text != "%" and after.low not in UNITS)

    def standard(self, i: int) -> int:
        """ "EN 966": one name (a changed standard is a substituted entity, SPEC-005 §5.3)."""
        r, nr = self.raw[i], self.raw[i + 1]
        text = self.text[r.start : nr.end]
        key = text.lower()
        self.out.append(Token(text, r.start, nr.end, ENTITY, key, parts=((key, text, r.start, nr.end),), sub="ident"))
        return i + 2

    def designator(self, i: int) -> bool:
        """Is the capital letter at raw ``i`` a designator? Any letter; "A", also the article, only right after a
        capitalised word and before no capitalised one ("Studio A is", "a Category A licence"; "Room With A View"
        and "Yesterday A ..." keep the article); "I", also the pronoun, only as the first Roman numeral right
        after a name ("Grade I buildings", "Phase I trials"; "Yesterday I ...", "On Tuesday I ..." keep the pronoun)."""
        s = self.raw[i].text
        if s == "I":
            return self.named_before(i) and bool(self.out) and self.out[-1].kind == ENTITY
        nxt = self.raw[i + 1] if i + 1 < len(self.raw) else None
        return s != "A" or (self.named_before(i) and not (nxt is not None and nxt.text[:1].isupper()))

    def weekdays(self, i: int, first: int) -> int:
        """A weekday, or a range of them ("Monday to Friday", "Mon-Fri"): one date whose readings are
        the days of the range, so a day inside the range is no other date ("open Monday to Friday" /
        "open on Wednesdays" narrows the scope)."""
        raw, r = self.raw, self.raw[i]
        j = i + 1
        if j < len(raw) and (self.low(j) in ("to", "through", "thru", "until") or raw[j].text in ("-", "–", "—")):
            last_low = self.low(j + 1).rstrip("s")
            if last_low in WEEKDAYS and raw[j + 1].text[0].isupper():
                last = WEEKDAYS[last_low]
                days = tuple((0, 0, 0, d) for d in range(first, (last if last >= first else last + 7) + 1))
                days = tuple((0, 0, 0, (d[3] - 1) % 7 + 1) for d in days)
                end = raw[j + 1].end
                self.out.append(
                    Token(
                        self.text[r.start : end],
                        r.start,
                        end,
                        DATE,
                        "#d",
                        date=DateValue(days, False),
                        parts=(("w", self.text[r.start : end], r.start, end),),
                    )
                )
                return j + 2
        self.out.append(
            Token(
                r.text,
                r.start,
                r.end,
                DATE,
                "#d",
                date=DateValue(((0, 0, 0, first),), False),
                parts=(("w", r.text, r.start, r.end),),
            )
        )
        return i + 1

    def duration_after(self, j: int) -> bool:
        """Does the word at ``j`` make the "a week" before it a duration: a bound after it ("a week or more"),
        or a word that places it before or after an event ("a day before travel", "a week ahead")?"""
        nxt = self.low(j)
        return (nxt == "or" and self.low(j + 1) in BOUNDS_AFTER) or nxt in _DURATION_NEXT

    def code_span(self, start: int, end: int) -> bool:
        """Is the word written between backticks (alone or with other words: `npm ci`)?"""
        before = self.text[max(0, start - 1) : start]
        after = self.text[end : end + 1]
        return before == "`" or after == "`"

    def month_may(self, i: int) -> bool:
        """Is the capitalised "May" at raw ``i`` the month, after a preposition of time ("from May to September",
        "closed in May") or before "to" / "until" and another month ("May to September")? Elsewhere it may be
        the modal verb opening a sentence."""
        if self.low(i) != "may":
            return False
        if self.low(i - 1) in _MONTH_BEFORE:
            return True
        return self.low(i + 1) in ("to", "until", "through", "till") and self.low(i + 2) in MONTHS

    def half_determiner(self, i: int) -> bool:
        """Is raw ``i`` a "half" right before a determiner and the noun it opens, a share of that noun's amount
        ("pay half the adult rate", "half its original scale")? Not before a time ("half the day", "half the
        time": a duration or an idiom of frequency)."""
        if self.low(i) != "half" or self.low(i + 1) not in _HALF_DETERMINERS:
            return False
        nxt = self.low(i + 2)
        return (
            nxt != "time" and not self.time_after(i + 2) and i + 2 < len(self.raw) and self.raw[i + 2].group == "word"
        )

    def named_code(self, i: int) -> bool:
        """Is the quarter- or half-shaped code at raw ``i`` the name of a thing, right after the noun it names ("stand
        H1", "Berth Q2"), rather than a part of a year ("in Q3", "the H1 results", "Q1 2026")? The word before it is a
        content word (no function word), written just before it, and no year follows."""
        prev = self.low(i - 1)
        if not prev.isalpha() or prev in FUNCTION_WORDS or not self.adjacent(i, self.raw[i - 1].end, " "):
            return False
        nxt = self.raw[i + 1] if i + 1 < len(self.raw) else None
        return not (nxt is not None and nxt.group == "num" and re.fullmatch(r"\d{4}", nxt.text))

    def predicative(self, i: int) -> bool:
        prev = self.low(i - 1)
        if prev in PREDICATIVE_BEFORE:
            return True
        # a negation between the verb and the word keeps it predicative: "is not billed", "isn't free", "is no
        # longer open"
        if prev in ("not", "never") and self.low(i - 2) in PREDICATIVE_BEFORE:
            return True
        if prev == "longer" and self.low(i - 2) in ("no", "not") and self.low(i - 3) in PREDICATIVE_BEFORE:
            return True  # "is no longer open"
        if prev.endswith("n't") and prev[:-3] in PREDICATIVE_BEFORE:
            return True
        return prev == "to" and self.low(i - 2) in ("set", "defaults", "default", "switched", "turned")

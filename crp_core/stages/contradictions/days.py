"""Weekday scopes across two texts (docs/decisions/detector-round21.md, detector-round30.md): a set of weekdays that
scopes a sentence's values (``clauses.DAYS_KEY`` words: "until 11pm on Fridays") makes another set of days, or a day's
exception against what is said for every day, another attribute."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import DAYS_KEY, Doc, analyse, scope_day
from crp_core.stages.contradictions.memos import text_memo
from crp_core.stages.contradictions.tokens import sentence_spans

__all__ = ["days_disjoint", "fronted_days", "sentence_days"]

#: the prepositions that open a sentence's scope of weekdays ("On Sundays, ...")
_DAY_FRAMES = frozenset(["on", "at", "during", "over"])


@text_memo()
def sentence_days(text: str) -> tuple[frozenset[str], ...]:
    """Per sentence of the text, the weekdays it takes as its scope ("@days5" is Fridays)
    as day digits, empty when it names none. Memoised per text (one pass over its clauses)."""
    d = analyse(text)
    days: list[set[str]] = [set() for _ in range(len(d.sent_shape))]
    for c in d.clauses:
        for k in range(c.first, c.last):
            if scope_day(d.tokens, k) and c.sent < len(days):
                days[c.sent].update(d.tokens[k].key[len(DAYS_KEY) :])
    return tuple(frozenset(x) for x in days)


def days_disjoint(da: Doc, sa: int, db: Doc, sb: int) -> bool:
    """Do the two sentences scope their values to sets of weekdays with no day in common (two scopes, two
    attributes), or does one open with its scope of weekdays while the other names none (a day's exception to what is
    said for every day: "rides run 10 am-5 pm" / "On Sundays, rides run 11 am-4 pm")? Read only when a text names a
    scope of weekdays."""
    if not (da.has_days or db.has_days):
        return False
    xa, xb = sentence_days(da.text), sentence_days(db.text)
    if sa >= len(xa) or sb >= len(xb):
        return False
    if xa[sa] and xb[sb]:
        return not (xa[sa] & xb[sb])
    d, k = (da, sa) if xa[sa] else (db, sb)
    return bool(xa[sa] or xb[sb]) and k < len(fronted := fronted_days(d.text)) and fronted[k]


@text_memo()
def fronted_days(text: str) -> tuple[bool, ...]:
    """Per sentence of the text, does it open with its scope of weekdays: a preposition, the days, a comma ("On
    Sundays, ...", "At weekends, ...")? Memoised per text."""
    toks = analyse(text).tokens
    out = []
    for first, end in sentence_spans(toks):
        t = toks[first:end]
        out.append(len(t) >= 3 and t[0].text.lower() in _DAY_FRAMES and scope_day(t, 1) and t[2].text == ",")
    return tuple(out)

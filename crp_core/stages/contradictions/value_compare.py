"""Whether two values are the same value, and the SPEC-005 §5.3 pattern of a changed one (docs/decisions/detector.md):
quantities compared in their canonical unit or by overlapping readings, dates by their readings, names by
their parts. :func:`same_value` and :func:`value_diffs` serve the pairing in :mod:`.values`."""

from __future__ import annotations

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.lexicon import (
    DATE_SHIFTED,
    ENTITY,
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
)
from crp_core.stages.contradictions.tokens import DateValue, Quantity, Token

#: the words that name one end of a range: a value of the low end and one of the high end are two attributes
#: ("The minimum age ... is 14" / "The maximum age ... is 17")
EXTREMES = {"minimum": -1, "min": -1, "lowest": -1, "maximum": 1, "max": 1, "highest": 1}


def opposite_extremes(ctx_a: frozenset[str], ctx_b: frozenset[str]) -> bool:
    """Does one context name the low end of a range and the other the high end, neither both? Then the two values
    are the two ends (another attribute), whatever else their words share."""
    if ctx_a.isdisjoint(EXTREMES) or ctx_b.isdisjoint(EXTREMES):
        return False
    ends_a = {EXTREMES[w] for w in ctx_a if w in EXTREMES}
    ends_b = {EXTREMES[w] for w in ctx_b if w in EXTREMES}
    return len(ends_a) == len(ends_b) == 1 and ends_a != ends_b


#: the verbs that name one end of a period, as context keys (synonyms folded: "opens", "begins" are "start";
#: "ends", "ceases" are "stop"; "finishes" is "complet")
PERIOD_ENDS = {"start": -1, "stop": 1, "clos": 1, "complet": 1}


def opposite_ends(ctx_a: frozenset[str], ctx_b: frozenset[str]) -> bool:
    """Does one context name the start of a period and the other its end, neither both ("Registration opens on 1
    March" / "Registration closes on 30 April")? Then the two dates are the period's two ends, two attributes."""
    if ctx_a.isdisjoint(PERIOD_ENDS) or ctx_b.isdisjoint(PERIOD_ENDS):
        return False
    ends_a = {PERIOD_ENDS[w] for w in ctx_a if w in PERIOD_ENDS}
    ends_b = {PERIOD_ENDS[w] for w in ctx_b if w in PERIOD_ENDS}
    return len(ends_a) == len(ends_b) == 1 and ends_a != ends_b


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


def _spells(acro: Token, name: Token) -> bool:
    """Is ``acro`` an acronym of the initials of the name's words ("OP" / "Orange Pekoe", "HFS" / "Harbour Ferry
    Services")? A name of one word has no initials to spell."""
    letters = acro.text[:-2] if acro.text.endswith("'s") else acro.text
    return (
        acro.sub.startswith("acro")
        and len(name.parts) >= 2
        and len(letters) == len(name.parts)
        and letters.lower() == "".join(p[1][:1] for p in name.parts).lower()
    )


def _same_entity(a: Token, b: Token) -> bool:
    """Same name, one name contains the other ("Lumen Payments API" / "Lumen API"), or one is the acronym of the
    other's words."""
    if a.key == b.key:
        return True
    pa, pb = _entity_parts(a), _entity_parts(b)
    return pa <= pb or pb <= pa or _spells(a, b) or _spells(b, a)


def same_value(a: Token, b: Token) -> bool:
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
    if p.dim == "money" and p.unit != q.unit:
        return ENTITY_SUBSTITUTED if _close(p.base * p.scale, q.base * q.scale) else NUMBER_CHANGED
    if _close(p.base, q.base) and (p.scale != q.scale or (p.power >= 0 and q.power >= 0 and p.power != q.power)):
        return MAGNITUDE_ALTERED  # "$4.2M" / "$4.2B", "2 GiB" / "2 TiB"
    return NUMBER_CHANGED


#: the words after a percentage that make it the part taken off a whole ("60% less than the fee", "10% below its
#: weight", "25% off the fare", "a 40% discount"), so that the whole's share left is 100 less that percentage
LESS_AFTER = ("less than ", "lower than ", "cheaper than ", "below ", "under ", "off ", "discount")


def _after(text: str, t: Token) -> str:
    return text[t.end : t.end + 16].lower().lstrip()


def complement_share(ta: Token, tb: Token, text_a: str, text_b: str) -> bool:
    """Is one percentage the part taken off a whole ("pay 60% less than the standard fee") and the other the share
    of that whole left ("pay 40% of the standard fee"), one value in two forms (SPEC-005 §5.3: no change)?"""
    p, q = ta.qty, tb.qty
    if p is None or q is None or p.dim != "pct" or q.dim != "pct":
        return False
    after_a, after_b = _after(text_a, ta), _after(text_b, tb)
    if after_a.startswith(LESS_AFTER) and after_b.startswith("of "):
        return _close(100.0 - p.base * p.scale, q.base * q.scale)
    if after_b.startswith(LESS_AFTER) and after_a.startswith("of "):
        return _close(100.0 - q.base * q.scale, p.base * p.scale)
    return False


def value_diffs(ta: Token, tb: Token, text_a: str, text_b: str) -> list[ValueDiff]:
    """The diffs of two paired values that differ (or whose bounds are reversed)."""
    out: list[ValueDiff] = []
    if ta.qty is not None and tb.qty is not None:
        if not _same_quantity(ta.qty, tb.qty) and not complement_share(ta, tb, text_a, text_b):
            pattern = _quantity_pattern(ta.qty, tb.qty)
            out.append(ValueDiff(pattern, (ta.text,), (tb.text,), (ta.start, ta.end), (tb.start, tb.end)))
        if ta.qty.bound * tb.qty.bound < 0:  # "at least 6 months" / "at most 6 months"
            sa = ta.qty.bound_start if ta.qty.bound_start >= 0 else ta.start
            sb = tb.qty.bound_start if tb.qty.bound_start >= 0 else tb.start
            out.append(
                ValueDiff(NEGATION_FLIP, (text_a[sa : ta.end],), (text_b[sb : tb.end],), (sa, ta.end), (sb, tb.end))
            )
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
    return ValueDiff(
        ENTITY_SUBSTITUTED,
        tuple(p[1] for p in pa),
        tuple(p[1] for p in pb),
        (pa[0][2], pa[-1][3]),
        (pb[0][2], pb[-1][3]),
    )

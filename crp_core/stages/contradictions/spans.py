"""A range's two numbers read as one measure after the lexer (docs/decisions/detector-round25.md): the low end
takes the unit its high end states ("35–55 mm" is 35 mm to 55 mm, the same range as "3.5 to 5.5 cm"). SPEC-005
§5.3: one value in two forms is no conflict; a changed end is a changed number."""

from __future__ import annotations

from crp_core.stages.contradictions.lexicon import NUMBER
from crp_core.stages.contradictions.quantities import temperature_readings
from crp_core.stages.contradictions.tokens import Quantity, Token

__all__ = ["range_units"]

#: what stands between the two ends of a range of one unit ("35–55 mm", "30 to 45 minutes", "between 2 and 3 kg")
RANGE_JOINS = frozenset(["-", "–", "—", " - ", " – ", " — ", " to ", " and "])

#: the dimensions a range end cannot borrow: a count has no unit, a clock time is no measure from zero
_UNBORROWED_DIMS = frozenset(["", "clock"])


def _count(t: Token) -> Quantity | None:
    """The plain count a token holds (a number with no unit, scale or bound), else None."""
    q = t.qty
    if t.kind != NUMBER or q is None or q.dim or q.scale != 1.0 or q.bound:
        return None
    return q


def _borrowed(low: Quantity, high: Quantity) -> Quantity:
    """``low`` in the unit of ``high``: its readings are ``high``'s scaled to ``low``'s number."""
    if high.dim == "temp":
        readings = temperature_readings(high.unit[-1:], low.base)
    else:
        ratio = low.base / high.base
        readings = tuple((lo * ratio, hi * ratio) for lo, hi in high.readings)
    return Quantity(high.dim, high.unit, low.base, high.scale, low.exact, readings, high.power, 0, -1)


def _range_end(low: Token, high: Token, text: str, before: str) -> bool:
    """Is ``low`` the low end of a range whose high end ``high`` states a unit: a plain count, smaller, joined by a
    dash or "to" ("and" only after "between"), the high end a measure read in proportion to its number?"""
    lq, hq = _count(low), high.qty
    if lq is None or hq is None or high.kind != NUMBER or hq.dim in _UNBORROWED_DIMS or hq.base <= 0:
        return False
    join = text[low.end : high.start]
    if join not in RANGE_JOINS or (join == " and " and before != "between"):
        return False
    return 0 <= lq.base < hq.base


def range_units(toks: list[Token], text: str) -> list[Token]:
    """Each range's unitless low end with the unit of its high end ("6–8 weeks": 6 weeks); other tokens as they
    are."""
    out = list(toks)
    for k in range(len(out) - 1):
        low = out[k]
        high = out[k + 2] if k + 2 < len(out) and out[k + 1].kind != NUMBER else out[k + 1]
        before = out[k - 1].text.lower() if k > 0 else ""
        if high.kind == NUMBER and _range_end(low, high, text, before):
            assert low.qty is not None and high.qty is not None
            out[k] = low._replace(qty=_borrowed(low.qty, high.qty))
    return out

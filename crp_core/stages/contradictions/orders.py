"""Lists written in another order (docs/decisions/detector-round7.md): "We cut Yale, Union and Chubb keys" /
"We cut Chubb, Yale and Union keys" state the same set of items, so no value of theirs changed; "rows 1-12 are
Braeburn and rows 13-20 are Jazz" / "rows 1-12 are Jazz and rows 13-20 are Braeburn" move a value to another label.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from crp_core.stages.contradictions.clauses import Doc, analyse
from crp_core.stages.contradictions.lexicon import BREAK, DATE, ENTITY, NUMBER
from crp_core.stages.contradictions.tokens import Token

#: words that bind the items of one list to those of another by their order ("tubs and cones respectively")
ORDER_WORDS = frozenset(["respectively", "order", "ranked", "first", "second", "then", "followed"])

Unit = tuple[str, str]


def _unit(t: Token) -> Unit:
    if t.kind in (NUMBER, DATE, ENTITY):
        return (t.kind, t.text.lower())
    return (t.kind, t.key)


#: what separates two items of one list (a bracket or a sentence end does not)
SEPARATORS = frozenset([",", ";", "and", "or"])


@lru_cache(maxsize=65536)
def units(text: str) -> tuple[tuple[Unit, ...], tuple[Unit, ...]]:
    """The text's tokens as compared here, in order and sorted (memoised per text)."""
    got = tuple(_unit(t) for t in analyse(text).tokens)
    return got, tuple(sorted(got))


def _separators(toks: tuple[Token, ...]) -> list[bool]:
    """Which tokens separate two items: the "and" of "between Central Station and the Airport" joins one."""
    out = []
    between = False
    for t in toks:
        low = t.text.lower()
        sep = low in SEPARATORS and not (between and low == "and")
        between = (between or low == "between") and not (low == "and" or t.kind == BREAK)
        out.append(sep)
    return out


def _items(seq: tuple[Unit, ...], seps: list[bool]) -> Counter[tuple[Unit, ...]]:
    out: Counter[tuple[Unit, ...]] = Counter()
    item: list[Unit] = []
    for u, sep in zip(seq, seps, strict=True):
        if sep:
            if item:
                out[tuple(item)] += 1
            item = []
        else:
            item.append(u)
    if item:
        out[tuple(item)] += 1
    return out


def _head(toks: tuple[Token, ...], seps: list[bool], step: int, start: int) -> int:
    """Walking from ``start`` by ``step``, the index of the first separator or sentence break (or the end): the
    part of a shared prefix or suffix that belongs to the list's first or last item lies before it."""
    k = start
    while 0 <= k < len(toks) and not seps[k] and not (toks[k].kind == BREAK and toks[k].key != "clause"):
        k += step
    return k


def reordered(da: Doc, db: Doc) -> bool:
    """Do the two texts differ only by the order of the items of one list, each item kept whole (its words and
    values: "Tokyo (up to 6 guests), Seoul (up to 12 guests)" / "Seoul (up to 12 guests), Tokyo (up to 6
    guests)")? A word that binds a list's order to something ("respectively", "first", "ranked") keeps the order
    meaningful."""
    ta, tb = da.tokens, db.tokens
    if len(ta) != len(tb) or not ta:
        return False
    (ua, bag_a), (ub, bag_b) = units(da.text), units(db.text)
    if bag_a != bag_b or any(u[1] in ORDER_WORDS for u in ua):
        return False
    n = len(ua)
    p = 0
    while p < n and ua[p] == ub[p]:
        p += 1
    s = 0
    while s < n - p and ua[n - 1 - s] == ub[n - 1 - s]:
        s += 1
    if p == n:
        return False
    end = n - s
    sa, sb = _separators(ta), _separators(tb)
    if _items(ua[p:end], sa[p:end]) == _items(ub[p:end], sb[p:end]):
        return True
    # the shared words before the first break and after the last one belong to the list's first and last items
    lo = _head(ta, sa, -1, p - 1) + 1 if p else 0
    hi = _head(ta, sa, 1, end) if s else n
    return (lo < p or hi > end) and _items(ua[lo:hi], sa[lo:hi]) == _items(ub[lo:hi], sb[lo:hi])

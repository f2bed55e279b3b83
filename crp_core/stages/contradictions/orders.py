"""Lists written in another order (docs/decisions/detector-round7.md): "We cut Yale, Union and Chubb keys" /
"We cut Chubb, Yale and Union keys" state the same set of items, so no value of theirs changed; "rows 1-12 are
Braeburn and rows 13-20 are Jazz" / "rows 1-12 are Jazz and rows 13-20 are Braeburn" move a value to another label.
"""

from __future__ import annotations

from collections import Counter

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import Doc, analyse
from crp_core.stages.contradictions.lexicon import ARTICLES, BREAK, DATE, ENTITY, NUMBER, WORD
from crp_core.stages.contradictions.memos import text_memo
from crp_core.stages.contradictions.tokens import Token

#: words that bind the items of one list to those of another by their order ("tubs and cones respectively")
ORDER_WORDS = frozenset(["respectively", "order", "ranked", "first", "second", "then", "followed"])

Unit = tuple[str, str]
#: the words that join the last two items of a list, compared as written wherever the lexer put them
_JOINS = frozenset(["and", "or"])


def _unit(t: Token) -> Unit:
    low = t.text.lower()
    if low in _JOINS:
        return ("join", low)  # the lexer reads "and" as a clause break or a word by its neighbours
    if t.kind in (NUMBER, DATE, ENTITY):
        return (t.kind, t.text.lower())
    return (t.kind, t.key)


#: what separates two items of one list (a bracket or a sentence end does not)
SEPARATORS = frozenset([",", ";", "and", "or"])


@text_memo()
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
    # an article before the first item belongs to it ("Pack a torch, a whistle and a map" / "Pack a map, ...")
    art = p
    while art > 0 and ta[art - 1].key in ARTICLES:
        art -= 1
    if _items(ua[art:end], sa[art:end]) == _items(ub[art:end], sb[art:end]):
        return True
    # the shared words before the first break and after the last one belong to the list's first and last items
    lo = _head(ta, sa, -1, p - 1) + 1 if p else 0
    hi = _head(ta, sa, 1, end) if s else n
    return (lo < p or hi > end) and _items(ua[lo:hi], sa[lo:hi]) == _items(ub[lo:hi], sb[lo:hi])


def _lone_value(t: Token) -> bool:
    return t.kind in (NUMBER, DATE, ENTITY) and not t.sub.startswith("weak")


def _listed(toks: tuple[Token, ...], first: int, last: int, k: int) -> frozenset[Unit]:
    """The items of the list of single values the value at ``k`` stands in ("levels R1, R2 and R3": names,
    numbers or dates joined by commas, "and", "or"), when that list holds every value of its sentence
    [first, last) and two or more items; else the empty set."""
    item = [j for j in range(first, last) if _lone_value(toks[j])]
    if k not in item or len(item) < 2:
        return frozenset()
    for x, y in zip(item, item[1:]):
        gap = toks[x + 1 : y]
        if not gap or any(t.text.lower() not in SEPARATORS for t in gap):
            return frozenset()  # a word between two values: a label or a predicate, no list
    return frozenset(_unit(toks[j]) for j in item)


def _beside_separator(text: str, span: tuple[int, int]) -> bool:
    """Does a separator of a list stand right after or right before the characters ``span`` of ``text``?"""
    after = text[span[1] : span[1] + 5].lower()
    before = text[max(0, span[0] - 5) : span[0]].lower()
    return after.startswith((",", ";", " and ", " or ")) or before.endswith((", ", "; ", " and ", " or "))


def _token_at(d: Doc, pos: int) -> int:
    return next((k for k, t in enumerate(d.tokens) if t.start == pos), -1)


def _sentence_bounds(d: Doc, k: int) -> tuple[int, int]:
    return next(((s.first, s.last) for s in d.sentences if s.first <= k < s.last), (k, k + 1))


def list_reorder(da: Doc, db: Doc, diff: ValueDiff) -> bool:
    """Is the changed value of ``diff`` one item of a list the other text restates in another order, in a
    sentence reworded around it ("Chain control levels R1, R2 and R3 are shown on overhead signs" / "Overhead
    signs show chain control levels R2, R3 and R1")? Each sentence's values are the one list's items, the two
    lists hold the same items, and no word binds their order (:data:`ORDER_WORDS`): the same set, no changed
    value. Values with a label between them ("client 2379, peer 2380") are no such list."""
    if not (_beside_separator(da.text, diff.span_a) and _beside_separator(db.text, diff.span_b)):
        return False  # no list item: most diffs stop here, before any scan of the tokens
    if listed_alike(da, db):
        return True  # one list of words and names in another order ("in black, navy and red" / "red, black and navy")
    ka, kb = _token_at(da, diff.span_a[0]), _token_at(db, diff.span_b[0])
    if ka < 0 or kb < 0:
        return False
    items = _listed(da.tokens, *_sentence_bounds(da, ka), ka)
    if not items or items != _listed(db.tokens, *_sentence_bounds(db, kb), kb):
        return False
    return not any(t.key in ORDER_WORDS for t in (*da.tokens, *db.tokens))


#: the kinds of token an item of a list is made of (function words and breaks are left out of its key)
_ITEM_KINDS = frozenset([WORD, ENTITY, NUMBER, DATE])


@text_memo()
def _segments(text: str) -> tuple[tuple[bool, tuple[Unit, ...]], ...]:
    """The text cut at list separators and sentence breaks: (opens after a separator, its items' units). Memoised
    per text: every diff of a pair beside a separator asks (:func:`list_reorder`)."""
    toks = analyse(text).tokens
    out: list[tuple[bool, tuple[Unit, ...]]] = []
    item: list[Unit] = []
    after_sep = False
    for t, sep in zip(toks, _separators(toks), strict=True):
        if sep or t.kind == BREAK:
            if item:
                out.append((after_sep, tuple(item)))
            item = []
            after_sep = sep
        elif t.kind in _ITEM_KINDS:
            item.append(_item_unit(t))
    if item:
        out.append((after_sep, tuple(item)))
    return tuple(out)


def _item_unit(t: Token) -> Unit:
    """A token as part of a list item, by its lower-case text: a word and a name are one kind, so "Payment" (a
    capitalised first word) and "payment" are one item word."""
    return ("w" if t.kind in (WORD, ENTITY) else t.kind, t.text.lower())


def _held(item: tuple[Unit, ...], whole: Counter[tuple[Unit, ...]], opening: list[tuple[Unit, ...]]) -> bool:
    """Is the list item stated on the other side: as an item there, or as the end of a segment that opens a list?"""
    return whole[item] > 0 or any(len(seg) > len(item) and seg[-len(item) :] == item for seg in opening)


#: the most items after a separator a text may hold for :func:`listed_alike` to read it as one list
LIST_ITEMS_MAX = 64


def listed_alike(da: Doc, db: Doc) -> bool:
    """Do the two texts state one list of words in another order, the sentence reworded around it ("We accept
    payment by card, bank transfer or direct debit" / "Payment can be made by direct debit, card or bank
    transfer")? Each item after a separator is on the other side as an item, or as the end of the segment that
    opens the list (its first item with the words before it); as many items each side; no word binds the order
    (:data:`ORDER_WORDS`). A swap of two values between two labels ("kelp from April, and dulse from June") keeps
    its labels in the items and is no such list."""
    sa, sb = _segments(da.text), _segments(db.text)
    wa = Counter(seg for after, seg in sa if after)
    wb = Counter(seg for after, seg in sb if after)
    if not wa or sum(wa.values()) != sum(wb.values()) or wa == wb or sum(wa.values()) > LIST_ITEMS_MAX:
        return False  # a text of more items than any list is compared by its values (and in bounded time)
    if any(t.key in ORDER_WORDS for t in (*da.tokens, *db.tokens)):
        return False
    oa = [seg for after, seg in sa if not after]
    ob = [seg for after, seg in sb if not after]
    return all(_held(seg, wb, ob) for seg in wa) and all(_held(seg, wa, oa) for seg in wb)

"""The swap reading of the learned comparison: two items and two labels that both texts state once each, paired
the other way round across the segments of a sentence ("£5 for buses and £8 for trains" / "Buses are capped at £8
and trains at £5"). :func:`swaps` finds them, :func:`swap_pattern` and :func:`swap_diffs` name and show the change;
candidates.py makes the swap candidate of them."""

from __future__ import annotations

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import Doc, analyse
from crp_core.stages.contradictions.lexicon import (
    BREAK,
    DATE,
    DATE_SHIFTED,
    ENTITY,
    ENTITY_SUBSTITUTED,
    FUNC,
    NUMBER,
    NUMBER_CHANGED,
    WORD,
)
from crp_core.stages.contradictions.memos import text_memo
from crp_core.stages.contradictions.subjects import designator
from crp_core.stages.contradictions.tokens import Quantity, Token, word_key

__all__ = ["SWAPS_MAX", "SWAP_KEYS_MAX", "Swap", "dates_as_labels", "segments", "swap_diffs", "swap_pattern", "swaps"]

#: words that join two statements of one sentence ("£5 for buses and £8 for trains")
_JOINERS = frozenset(["and", "while", "whereas", "but"])

#: (u1, u2, v1, v2): text a keeps u1 with v1 and u2 with v2, text b crosses them
Swap = tuple[str, str, str, str]
#: shared items read for swaps (the search is quadratic in them) and swaps listed (the features count up to 3)
SWAP_KEYS_MAX = 64
SWAPS_MAX = 32


def _item_key(t: Token) -> str:
    """A token's reading as a swap item: an amount ``#``, a date ``@``, a word or a name by its key."""
    if t.kind == NUMBER and t.qty is not None:
        return f"#{t.qty.dim}:{t.qty.unit}:{t.qty.base * t.qty.scale:g}"
    if t.kind == DATE and t.date is not None:
        return f"@{t.date.readings[0]}"
    if t.kind == ENTITY and t.text[1:].islower() and t.text.isalpha():
        return word_key(t.text.lower())  # "Cones are ..." / "... and cones": one item, capitalised or not
    if t.kind in (WORD, ENTITY):
        return t.key
    return ""


@text_memo()
def segments(text: str) -> dict[str, tuple[int, int]]:
    """Each word, name and value of the text that occurs in exactly one segment (the tokens between two clause
    breaks or joining words) -> (that segment, its first token). Memoised per text; callers must not mutate."""
    seen: dict[str, tuple[int, int]] = {}
    seg = 0
    between = False  # "between Central Station and the Airport" is one segment
    toks = analyse(text).tokens
    measured: Token | None = None  # the sentence's last amount with a unit
    for k, t in enumerate(toks):
        if between and t.text.lower() == "and":
            between = False
            continue
        if t.kind == BREAK or (t.kind == FUNC and t.key in _JOINERS):
            seg += 1
            between = False
            measured = None if t.key == "sent" else measured
            continue
        between = between or (t.kind == FUNC and t.key == "between")
        key = _item_key(t)
        if measured is not None and measured.qty is not None and t.qty is not None and _elided(toks, k, measured.qty):
            key = _item_key(measured._replace(qty=measured.qty._replace(base=t.qty.base, scale=t.qty.scale)))
        elif t.qty is not None and t.qty.dim not in ("", "ratio"):
            measured = t
        for item in (key, _compound_head(t)) if key else ():
            if not item:
                continue
            got = seen.get(item)
            if got is None:
                seen[item] = (seg, k)
            elif got[0] != seg:
                seen[item] = (-1, -1)
    return {key: v for key, v in seen.items() if v[0] >= 0}


def _compound_head(t: Token) -> str:
    """The key of the first word of a hyphenated word or name, an item of its own: "red-tagged bikes" / "red
    tags", "the ground-floor units" / "the ground floor"; "" for any other token."""
    if t.kind not in (WORD, ENTITY) or "-" not in t.text:
        return ""
    head = t.text.split("-", 1)[0].lower()
    return word_key(head) if len(head) > 1 and head.isalpha() else ""


def _elided(toks: tuple[Token, ...], k: int, measured: Quantity) -> bool:
    """Is the number at ``k`` an amount whose unit its sentence stated before it, in ``measured``: a plain number
    ("60 minutes ... and the Vault gives them 90", "every 8 hours ..., the chain every 40") or an amount of the
    currency of a rate ("30p a minute, standard scooters at 40p"), with no noun or rate word after it ("40p
    each"), no bound and no name before it?"""
    t = toks[k]
    if t.kind != NUMBER or t.qty is None or t.qty.bound != 0 or designator(toks, k):
        return False
    if t.qty.dim == "money":
        rate = measured.dim == "rate:money" and measured.unit.startswith(t.qty.unit + "/")
    else:
        rate = t.qty.dim == ""
    after = toks[k + 1] if k + 1 < len(toks) else None
    own = after is not None and t.qty.dim == "money" and after.key in _OWN_RATE
    return rate and not own and (after is None or after.kind not in (WORD, ENTITY, NUMBER))


#: words after an amount of money that give it a rate of its own ("45p each", "£9 a head")
_OWN_RATE = frozenset(["each", "per", "a", "an", "every"])


def swaps(da: Doc, db: Doc) -> list[Swap]:
    """Two items (u1, u2) and two labels (v1, v2) that both texts state once each, where text a keeps u1 with
    v1 and u2 with v2 in distinct segments and text b crosses them: u1 with v2. In key order, at most
    :data:`SWAPS_MAX` of them."""
    sa, sb = segments(da.text), segments(db.text)
    if len({v[0] for v in sa.values()}) < 2 or len({v[0] for v in sb.values()}) < 2:
        return []  # a swap needs two segments on each side
    keys = sorted(set(sa) & set(sb))[:SWAP_KEYS_MAX]
    cell: dict[tuple[int, int], list[str]] = {}  # (segment in a, segment in b) -> the keys there, in key order
    for k in keys:
        cell.setdefault((sa[k][0], sb[k][0]), []).append(k)
    out: list[Swap] = []
    for i, u1 in enumerate(keys):
        for u2 in keys[i + 1 :]:
            if sa[u1][0] == sa[u2][0] or sb[u1][0] == sb[u2][0]:
                continue
            for v1 in cell.get((sa[u1][0], sb[u2][0]), ()):
                for v2 in cell.get((sa[u2][0], sb[u1][0]), ()):
                    if v1 not in (u1, u2) and v2 not in (u1, u2, v1):
                        out.append((u1, u2, v1, v2))
                        if len(out) == SWAPS_MAX:
                            return out
    return out


def _named_number(d: Doc, key: str) -> bool:
    """Is the swap key a number that names its item ("Line 3", "Ward 2"): a label, never the changed value?"""
    return key[:1] == "#" and designator(d.tokens, segments(d.text)[key][1])


def swap_pattern(da: Doc, found: list[Swap]) -> str:
    """A swap of amounts is a changed number, of dates a shifted date, of names or words a substitution; a number
    that names a thing is a label ("Line 3 runs to the Airport" / "Line 3 runs to the University")."""
    kinds = {k[:1] for q in found for k in q if not _named_number(da, k)}
    if "#" in kinds:
        return NUMBER_CHANGED
    return DATE_SHIFTED if "@" in kinds else ENTITY_SUBSTITUTED


def swap_diffs(da: Doc, db: Doc, swap: Swap, pattern: str) -> tuple[ValueDiff, ...]:
    """The two changed pairs of a swap: under each label, the item text a states against the one text b states.
    The items are the amounts or dates of the swap when the labels are not."""
    u1, u2, v1, v2 = swap
    if (v1[:1] in "#@" and u1[:1] not in "#@" and not _named_number(da, v1)) or _named_number(da, u1):
        u1, u2, v1, v2 = v1, v2, u1, u2  # the amounts were the labels: keep them as the changed items
    return _crossed(da, db, u1, u2, pattern)


def _crossed(da: Doc, db: Doc, u1: str, u2: str, pattern: str) -> tuple[ValueDiff, ...]:
    """The two changed pairs of two crossed items: under the label of each item in text a, the item b states."""
    sa, sb = segments(da.text), segments(db.text)
    out = []
    for x, y in ((u1, u2), (u2, u1)):  # under the label of x in a, text b states y
        ta, tb = da.tokens[sa[x][1]], db.tokens[sb[y][1]]
        out.append(ValueDiff(pattern, (ta.text,), (tb.text,), (ta.start, ta.end), (tb.start, tb.end)))
    return tuple(out)


def _dates_in_place(diffs: list[ValueDiff]) -> bool:
    """Are the diffs two shifted dates crossed between the texts ("Monday" / "Wednesday" and "Wednesday" /
    "Monday") that both texts state in one order, each in its own place?"""
    if len(diffs) != 2 or any(d.pattern != DATE_SHIFTED for d in diffs):
        return False
    d1, d2 = diffs
    if d1.tokens_a != d2.tokens_b or d1.tokens_b != d2.tokens_a:
        return False
    # date x stands at d1.span_a in a and at d2.span_b in b; date y at d2.span_a in a and at d1.span_b in b
    return (d1.span_a < d2.span_a) == (d2.span_b < d1.span_b)


def dates_as_labels(da: Doc, db: Doc, diffs: list[ValueDiff]) -> list[ValueDiff]:
    """Two dates that keep their places while the words or names beside them cross ("Dr Okafor runs the Monday
    clinic and Dr Lindqvist the Wednesday clinic" / "Dr Lindqvist runs the Monday clinic and Dr Okafor the
    Wednesday clinic") label the slots; the crossed names are the changed values, an ENTITY_SUBSTITUTED (SPEC-005
    §5.3). The value pairing reads the swap the other way round (each date paired by its neighbours' words): its
    two shifted dates give way to the two substituted names. Any other diffs are returned as they are."""
    if not _dates_in_place(diffs):
        return diffs
    for u1, u2, v1, v2 in swaps(da, db):
        if u1[:1] not in "#@" and u2[:1] not in "#@" and v1[:1] == "@" and v2[:1] == "@":
            return list(_crossed(da, db, u1, u2, ENTITY_SUBSTITUTED))
    return diffs

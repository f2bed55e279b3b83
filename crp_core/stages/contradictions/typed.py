"""Typed value roles: one value of a type on each side of a reworded statement (docs/decisions/detector-rewordings.md,
"Round 4").

The clause and loose alignments of :mod:`.values` ask the words around a value to match. A writer who
rewords a fact names the attribute with other words ("The rated load of lift 3 is 1,000 kg" / "Lift 3 is
rated for 1.6 tonnes"), so neither alignment pairs the two values. This test reads the *type* of a value
instead: when each text states exactly one value of a type (a mass, a length, a duration, a percentage, an
amount of money, a date, ...), the two sentences that carry them share their subject words, and the value
differs, the two texts give that attribute two values.
"""

from __future__ import annotations

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import Doc
from crp_core.stages.contradictions.lexicon import PAIR_MAX_CLAUSES, PAIR_MAX_VALUES
from crp_core.stages.contradictions.loose import aligned, foreign
from crp_core.stages.contradictions.subjects import designator, equal_pair, present, stated_by
from crp_core.stages.contradictions.tokens import Token
from crp_core.stages.contradictions.value_compare import value_diffs

#: the fewest subject words the two sentences must share
TYPED_MIN_SHARED = 2
TYPED_WIDE = 2
TYPED_ONE_SIDE = 1


def _single(d: Doc, cls: str, other: Doc) -> int:
    """The index of the text's one value of class ``cls`` that is no designator ("Falcon 9") and that no
    value of the other text states (a shared value is part of the subject: "the 2025 season"), or -1."""
    found = -1
    ys = other.groups.get(cls, ())[:PAIR_MAX_VALUES]
    for x in d.groups.get(cls, ())[:PAIR_MAX_VALUES]:
        t = d.tokens[d.values[x].tok]
        if designator(d.tokens, d.values[x].tok) or any(_states(other.tokens[other.values[y].tok], t) for y in ys):
            continue
        if found >= 0:
            return -1
        found = x
    return found


def _states(u: Token, t: Token) -> bool:
    """Does ``u`` state the value ``t``, every part of it ("2026" states no "3 April 2026")?"""
    if not stated_by(t, u):
        return False
    if t.date is None or u.date is None:
        return True
    return all(not x or y for x, y in zip(t.date.readings[0], u.date.readings[0]))


def typed_diffs(da: Doc, db: Doc) -> list[ValueDiff]:
    """The changed value of the one class each text states once, when exactly one class changed."""
    changed: list[tuple[int, int]] = []
    scopes = 0
    for cls in da.groups:
        if cls == "ent" or cls not in db.groups:
            continue
        x, y = _single(da, cls, db), _single(db, cls, da)
        if x < 0 or y < 0:
            continue
        if not equal_pair(da.tokens[da.values[x].tok], db.tokens[db.values[y].tok]):
            if cls == "q:":
                scopes += 1
            else:
                changed.append((x, y))
    if scopes or len(changed) > 1:
        return []  # a scope and its value changed together ("a 200-point gap ... 76%" / "400-point ... 91%")
    if changed:
        return _typed_pair(da, db, changed[0], frozenset())
    x, y = _single_name(da, db), _single_name(db, da)
    if x < 0 or y < 0:
        return []
    keys = frozenset((da.tokens[da.values[x].tok].key, db.tokens[db.values[y].tok].key))
    return _typed_pair(da, db, (x, y), keys)


def _single_name(d: Doc, other: Doc) -> int:
    """The index of the text's one name the other text never mentions (a capitalised first word is too weak
    a name), or -1."""
    found = -1
    for x in d.groups.get("ent", ())[:PAIR_MAX_VALUES]:
        v = d.values[x]
        t = d.tokens[v.tok]
        if t.sub.startswith("weak") or present(t.key, other) or (v.plain and v.plain <= other.plain):
            continue
        if found >= 0:
            return -1
        found = x
    return found


def _typed_pair(da: Doc, db: Doc, xy: tuple[int, int], names: frozenset[str]) -> list[ValueDiff]:
    """The diffs of the changed pair ``xy`` when their sentences state one thing in other words."""
    va, vb = da.values[xy[0]], db.values[xy[1]]
    ca, cb = da.clauses[va.clause], db.clauses[vb.clause]
    sa, sb = da.sentences[ca.sent], db.sentences[cb.sent]
    if da.sent_shape[ca.sent][1] != db.sent_shape[cb.sent][1]:
        return []  # a denial against an assertion: a condition, not a changed value
    if sa.owner and sb.owner and sa.owner != sb.owner and not present(sa.owner, db) and not present(sb.owner, da):
        return []
    if _one_sided_name(da, ca.sent, db, names) or _one_sided_name(db, cb.sent, da, names):
        return []  # a name on one side only scopes the value: "kept for 90 days in the EU region"
    fa = foreign(sa, db.loose_words, names, TYPED_WIDE + 2)
    fb = foreign(sb, da.loose_words, names, TYPED_WIDE + 2)
    if min(len(fa), len(fb)) > TYPED_ONE_SIDE:
        return []  # words of its own on both sides: two attributes ("hook block weighs" / "maximum tip load")
    if not aligned(sa, sb, da.loose_words, db.loose_words, names, TYPED_WIDE):
        return []
    return value_diffs(da.tokens[va.tok], db.tokens[vb.tok], da.text, db.text)


def _one_sided_name(d: Doc, sent: int, other: Doc, names: frozenset[str]) -> bool:
    """Does sentence ``sent`` of ``d`` name something (besides the compared ``names``) the other text never
    mentions?"""
    return any(
        c.sent == sent and any(e not in names and not present(e, other) for e in c.entities)
        for c in d.clauses[:PAIR_MAX_CLAUSES]
    )

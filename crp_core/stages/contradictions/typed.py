"""Typed value roles: one value of a type on each side of a reworded statement (docs/decisions/detector-rewordings.md,
"Round 4").

The clause and loose alignments of :mod:`.values` ask the words around a value to match. A writer who
rewords a fact names the attribute with other words ("The rated load of lift 3 is 1,000 kg" / "Lift 3 is
rated for 1.6 tonnes"), so neither alignment pairs the two values. This test reads the *type* of a value
instead: when each text states exactly one value of a type (a mass, a length, a duration, a percentage, an
amount of money, a date, a clock time, a count of one thing, a name), the two sentences that carry them state
one thing in other words (a wider loose alignment, its guards, and more of its own words on one side only), and
the value differs, the two texts give that attribute two values. A scope changed with it (a second type or an
untyped count), a denial against an assertion, another owner or a name on one side only pair nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import Doc, analyse
from crp_core.stages.contradictions.days import days_disjoint
from crp_core.stages.contradictions.lexicon import ENTITY, NUMBER_CHANGED, PAIR_MAX_CLAUSES, PAIR_MAX_VALUES, WORD
from crp_core.stages.contradictions.loose import aligned, foreign
from crp_core.stages.contradictions.memos import text_memo
from crp_core.stages.contradictions.ranges import period_ends
from crp_core.stages.contradictions.subjects import designator, equal_pair, present, stated_by
from crp_core.stages.contradictions.tokens import Token
from crp_core.stages.contradictions.value_compare import opposite_extremes, value_diffs

#: foreign words a sentence may carry beyond the loose alignment's allowance: the shared type is the evidence
TYPED_WIDE = 2
#: words of its own a sentence may carry when the other sentence carries more (one side reworded, not both)
TYPED_ONE_SIDE = 1
#: two intervals within this share of each other are one (a rate is stored per second, rounded)
INTERVAL_TOLERANCE = 0.01


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


def _counted(d: Doc, x: int) -> str:
    """The key of the word a plain number counts ("two letters of recommendation": letter), or ""."""
    k = d.values[x].tok + 1
    return d.tokens[k].key if k < len(d.tokens) and d.tokens[k].kind == WORD else ""


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
            if cls != "q:" or _counted(da, x) and _counted(da, x) == _counted(db, y):
                changed.append((x, y))  # a count of one thing is typed by it: "two letters" / "three letters"
            else:
                scopes += 1
    if scopes or len(changed) > 1:
        return []  # a scope and its value changed together ("a 200-point gap ... 76%" / "400-point ... 91%")
    acro = acronym_keys(da, db)
    if changed:
        x, y = changed[0]
        if days_disjoint(da, da.clauses[da.values[x].clause].sent, db, db.clauses[db.values[y].clause].sent):
            return []  # two scopes of weekdays: "until 11pm on Fridays" / "until 10pm from Sunday to Thursday"
        return _typed_pair(da, db, changed[0], frozenset(), acro)
    interval = _interval_pair(da, db, acro)
    if interval is not None:
        return interval
    named = named_acronyms(da, db) if acro else acro
    x, y = _single_name(da, db, named), _single_name(db, da, named)
    if x < 0 or y < 0:
        return []
    keys = frozenset((da.tokens[da.values[x].tok].key, db.tokens[db.values[y].tok].key))
    return _typed_pair(da, db, (x, y), keys, acro)


def _period(t: Token) -> float:
    """The seconds between two events of a value read as an interval: a duration ("a service interval of 4
    weeks"), or a rate of one per duration ("every six weeks"); 0 for any other value."""
    q = t.qty
    if q is None:
        return 0.0
    if q.dim == "time":
        return (q.readings[0][0] + q.readings[0][1]) / 2
    if q.dim == "rate" and q.unit.startswith("1/") and q.readings[0][0] > 0:
        lo, hi = q.readings[0]
        return (1.0 / lo + 1.0 / hi) / 2  # the middle of the periods the rate spans ("monthly": 28-31 days)
    return 0.0


def _interval_pair(da: Doc, db: Doc, acro: frozenset[str]) -> list[ValueDiff] | None:
    """One duration against one "every" rate: the same interval in two forms ("service interval is 4 weeks" /
    "a visit every six weeks"). None when the texts state no such pair."""
    found = interval_values(da, db)
    if found is None:
        return None
    x, y, pa, pb = found
    if abs(pa - pb) <= INTERVAL_TOLERANCE * max(pa, pb):
        return []
    ta, tb = da.tokens[da.values[x].tok], db.tokens[db.values[y].tok]
    diff = ValueDiff(NUMBER_CHANGED, (ta.text,), (tb.text,), (ta.start, ta.end), (tb.start, tb.end))
    return [diff] if _one_statement(da, db, (x, y), acro, acro) else []


def interval_values(da: Doc, db: Doc) -> tuple[int, int, float, float] | None:
    """The one duration of one text and the one "every" rate of the other, each text stating only its form,
    neither bounded nor how long a thing lasts: (their value indices in a and b, their periods in seconds), or
    None. The interval in two forms: "service interval is 4 weeks" / "a visit every six weeks"."""
    for ta_cls, tb_cls in (("q:time", "q:rate"), ("q:rate", "q:time")):
        if ta_cls in db.groups or tb_cls in da.groups:
            continue  # the other form stated too: no single interval
        x, y = _single(da, ta_cls, db), _single(db, tb_cls, da)
        if x < 0 or y < 0:
            continue
        ta, tb = da.tokens[da.values[x].tok], db.tokens[db.values[y].tok]
        pa, pb = _period(ta), _period(tb)
        if not (pa and pb) or ta.qty is None or tb.qty is None or ta.qty.bound or tb.qty.bound:
            continue
        if _lasting(da, da.values[x].tok) or _lasting(db, db.values[y].tok):
            continue  # how long a thing lasts is no interval: "kept for 3 months" / "inspected every 7 days"
        return x, y, pa, pb
    return None


def _lasting(d: Doc, k: int) -> bool:
    """Is the duration at token ``k`` governed by "for" ("retained for 3 years", "valid for 90 days"): how long
    something lasts, not the time between two events?"""
    return k > 0 and d.tokens[k - 1].key == "for"


def _single_name(d: Doc, other: Doc, named: frozenset[str]) -> int:
    """The index of the text's one name the other text never mentions (a capitalised first word is too weak
    a name; a name in ``named``, :func:`named_acronyms`, is mentioned: "Scoville heat units" / "SHU"), or -1."""
    found = -1
    for x in d.groups.get("ent", ())[:PAIR_MAX_VALUES]:
        v = d.values[x]
        t = d.tokens[v.tok]
        if t.sub.startswith("weak") or present(t.key, other) or t.key in named or (v.plain and v.plain <= other.plain):
            continue
        if found >= 0:
            return -1
        found = x
    return found


def _typed_pair(da: Doc, db: Doc, xy: tuple[int, int], names: frozenset[str], acro: frozenset[str]) -> list[ValueDiff]:
    """The diffs of the changed pair ``xy`` when their sentences state one thing in other words."""
    if not _one_statement(da, db, xy, names | acro, acro):
        return []
    return value_diffs(da.tokens[da.values[xy[0]].tok], db.tokens[db.values[xy[1]].tok], da.text, db.text)


def _one_statement(da: Doc, db: Doc, xy: tuple[int, int], names: frozenset[str], acro: frozenset[str]) -> bool:
    """Do the sentences of the values ``xy`` state one thing in other words? ``names``: keys left out of the
    comparison (the compared names, acronyms and their words); ``acro``: the acronyms and their words."""
    va, vb = da.values[xy[0]], db.values[xy[1]]
    ca, cb = da.clauses[va.clause], db.clauses[vb.clause]
    sa, sb = da.sentences[ca.sent], db.sentences[cb.sent]
    if da.sent_shape[ca.sent][1] != db.sent_shape[cb.sent][1]:
        return False  # a denial against an assertion: a condition, not a changed value
    if opposite_extremes(va.ctx, vb.ctx) or period_ends(da, va.tok, va.ctx, db, vb.tok, vb.ctx):
        return False  # the two ends of a range ("The minimum age is 14" / "The maximum age is 17") or of a period
    if (
        sa.owner
        and sb.owner
        and sa.owner != sb.owner
        and not (sa.owner in acro and sb.owner in acro)  # "JWST" / "The James Webb Space Telescope"
        and not present(sa.owner, db)
        and not present(sb.owner, da)
    ):
        return False
    if _one_sided_name(da, ca.sent, db, names) or _one_sided_name(db, cb.sent, da, names):
        return False  # a name on one side only scopes the value: "kept for 90 days in the EU region"
    fa = foreign(sa, db.loose_words, names, TYPED_WIDE + 2)
    fb = foreign(sb, da.loose_words, names, TYPED_WIDE + 2)
    if min(len(fa), len(fb)) > TYPED_ONE_SIDE:
        return False  # words of its own on both sides: two attributes ("hook block weighs" / "maximum tip load")
    if not aligned(sa, sb, da.loose_words, db.loose_words, names, TYPED_WIDE):
        return False
    return True


def _one_sided_name(d: Doc, sent: int, other: Doc, names: frozenset[str]) -> bool:
    """Does sentence ``sent`` of ``d`` name something (besides the compared ``names``) the other text never
    mentions? A capitalised first word is too weak a name ("Switch to 5 mm needles")."""
    s = d.sentences[sent]
    weak = {t.key for t in d.tokens[s.first : s.last] if t.sub.startswith("weak")}
    return any(
        c.sent == sent and any(e not in names and e not in weak and not present(e, other) for e in c.entities)
        for c in d.clauses[:PAIR_MAX_CLAUSES]
    )


#: the longest acronym read against the words of the other text
ACRONYM_MAX = 6


#: the small words inside a name that its acronym skips ("LGSCO" / "Local Government and Social Care Ombudsman")
NAME_CONNECTORS = frozenset(["and", "of", "for", "&"])


def _inside_name(toks: tuple[Token, ...], k: int) -> bool:
    """Is token ``k`` a connector word between two names ("Parliamentary and Health Service Ombudsman")?"""
    return (
        0 < k < len(toks) - 1
        and toks[k].text.lower() in NAME_CONNECTORS
        and toks[k - 1].kind == ENTITY
        and toks[k + 1].kind == ENTITY
    )


@text_memo()
def _initials(text: str) -> tuple[str, tuple[str, ...]]:
    """The first letters of the text's words and names in order (a hyphenated word and a name of several words
    give one letter a part; a connector between two names none), and the key each letter comes from (memoised
    per text)."""
    letters: list[str] = []
    keys: list[str] = []
    toks = analyse(text).tokens
    for k, t in enumerate(toks):
        if _inside_name(toks, k):
            continue
        if t.kind == ENTITY and len(t.parts) > 1:
            parts = [p[1] for p in t.parts]
        elif t.kind in (WORD, ENTITY):
            parts = [p for p in t.text.split("-") if p]
        else:
            letters.append(" ")  # a function word, value or break ends a run
            keys.append("")
            continue
        for p in parts:
            letters.append(p[0].lower())
            keys.append(t.key)
    return "".join(letters), tuple(keys)


@text_memo()
def _acronyms(text: str) -> tuple[Token, ...]:
    """The text's acronyms of two to :data:`ACRONYM_MAX` letters (memoised per text)."""
    toks = analyse(text).tokens
    found = [t for t in toks if t.sub == "acro" and 2 <= len(t.text) <= ACRONYM_MAX and t.text.isalpha()]
    return tuple(found[:PAIR_MAX_VALUES])


def _spelled_acronyms(da: Doc, db: Doc) -> Iterator[tuple[Token, list[str], Doc]]:
    """Each acronym of one text spelled by the first letters of consecutive words of the other, with the keys of
    those words and the other text."""
    for d, other in ((da, db), (db, da)):
        acros = _acronyms(d.text)
        if not acros:
            continue
        letters, keys = _initials(other.text)
        for t in acros:
            at = letters.find(t.text.lower())
            if at >= 0:
                yield t, [k for k in keys[at : at + len(t.text)] if k], other


def acronym_keys(da: Doc, db: Doc) -> frozenset[str]:
    """The keys of each acronym of one text spelled by the first letters of consecutive words of the other
    ("SWL" / "safe working load", "JWST" / "James Webb Space Telescope"), and the keys of those words."""
    return frozenset(k for t, words, _ in _spelled_acronyms(da, db) for k in (t.key, *words))


def named_acronyms(da: Doc, db: Doc) -> frozenset[str]:
    """The keys of each acronym of one text that abbreviates words of the other holding a name ("SHU" / "Scoville
    heat units", "FSA" / "Food Standards Agency"), and of those words: an acronym of ordinary words ("BT" /
    "broadband technology") may be a name of its own."""
    return frozenset(
        k
        for t, words, other in _spelled_acronyms(da, db)
        if any(w in other.entity_keys for w in words)
        for k in (t.key, *words)
    )


def spelled_names(da: Doc, db: Doc) -> frozenset[str]:
    """The keys of the acronyms one text spells out in the other's words, and of those words: the two name one
    thing. An acronym its own text spells out too is a symbol of its own ("the special opening quotation ...
    published under the symbol SOQ"), left out."""
    found = acronym_keys(da, db)
    return found - acronym_keys(da, da) - acronym_keys(db, db) if found else found

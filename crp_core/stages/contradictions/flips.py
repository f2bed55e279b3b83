"""Opposite polarity between two aligned clauses: NEGATION_FLIP, where the negation sits and what it governs,
and negating prefixes (docs/decisions/detector.md, "Negation"). Serves the pairing in :mod:`.values`."""

from __future__ import annotations

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import Clause, Doc
from crp_core.stages.contradictions.lexicon import (
    ARTICLES,
    BREAK,
    ENTITY,
    FUNC,
    NEG,
    NEGATION_FLIP,
    PAIR_MAX_CLAUSES,
    PAIR_MAX_VALUES,
    POLAR,
    SCOPE_SKIP,
    WORD,
    able_root,
    stem,
)
from crp_core.stages.contradictions.loose import derived
from crp_core.stages.contradictions.tokens import Token
from crp_core.stages.contradictions.value_compare import same_value


def governed(toks: tuple[Token, ...], k: int, last: int) -> int:
    """The token a negation at ``k`` governs: the next token that is not a function word."""
    for j in range(k + 1, last):
        t = toks[j]
        if t.kind in (FUNC, NEG) or (t.kind == WORD and t.key in SCOPE_SKIP):
            continue
        return j
    return -1


def _find_key(toks: tuple[Token, ...], c: Clause, governed: Token) -> int:
    """Where the other clause states what the negation governs (zero-width NEGATION_FLIP span)."""
    for j in range(c.first, c.last):
        t = toks[j]
        if t.kind == governed.kind and (
            t.key == governed.key if t.kind in (WORD, POLAR, ENTITY) else same_value(t, governed)
        ):
            return t.start
    for j in range(c.first, c.last):
        if toks[j].kind not in (FUNC, NEG):
            return toks[j].start
    return toks[c.first].start


def flip_diff(da: Doc, ca: Clause, db: Doc, cb: Clause) -> ValueDiff | None:
    """NEGATION_FLIP between two aligned clauses of opposite polarity, or None."""
    if ca.parity == cb.parity:
        return None
    ta, tb = da.tokens, db.tokens
    if len(ca.negs) % 2 != len(cb.negs) % 2:
        if _restated(da, ca, db, cb) or _restated(db, cb, da, ca):
            return None
        if len(ca.negs) > len(cb.negs):
            k = ca.negs[0]
            g = governed(ta, k, ca.last)
            pos = _find_key(tb, cb, ta[g]) if g >= 0 else tb[cb.first].start
            return ValueDiff(NEGATION_FLIP, (ta[k].text,), (), (ta[k].start, ta[k].end), (pos, pos))
        k = cb.negs[0]
        g = governed(tb, k, cb.last)
        pos = _find_key(ta, ca, tb[g]) if g >= 0 else ta[ca.first].start
        return ValueDiff(NEGATION_FLIP, (), (tb[k].text,), (pos, pos), (tb[k].start, tb[k].end))
    for ka in ca.polars[:PAIR_MAX_VALUES]:
        for kb in cb.polars[:PAIR_MAX_VALUES]:
            if ta[ka].key == tb[kb].key and ta[ka].sign != tb[kb].sign:
                return ValueDiff(
                    NEGATION_FLIP,
                    (ta[ka].text,),
                    (tb[kb].text,),
                    (ta[ka].start, ta[ka].end),
                    (tb[kb].start, tb[kb].end),
                )
    return _one_polar(da, ca, db, cb)


#: "only" before these states the one time something happens ("admitted only at the interval", "only after
#: payment"): the same restriction as "not ... until"; "only before" / "only until" states the opposite one
_ONLY_WHEN = frozenset(["at", "after", "once", "from", "when", "on", "in", "during"])
#: an obligation before which the other event waits ("must complete training before being issued")
_MUST = frozenset(["must", "required", "need", "needs", "has", "have"])


#: how many words a time phrase closed by "only" may hold ("from Saturday only", "after the first week only")
_ONLY_REACH = 4


def _only_after(words: list[str]) -> bool:
    """Does an "only" close a time phrase ("allowed from Saturday only", "admitted at the interval only")? The
    same restriction as "only from Saturday"."""
    return any(
        w == "only" and any(x in _ONLY_WHEN for x in words[max(0, i - _ONLY_REACH) : i]) for i, w in enumerate(words)
    )


def _not_until(dn: Doc, cn: Clause, do: Doc, co: Clause) -> bool:
    """A negation of ``cn`` that governs an "until" ("not admitted until the interval", "No permit is issued until
    the fee is paid") is a time restriction, not a flip, against a clause stating the same restriction: "only" at a
    time ("admitted only at the interval") or an obligation before it ("must pay before a permit is issued").
    Against a plain assertion ("open until 9pm" / "not open until 9pm") it stays a flip."""
    if len(cn.negs) <= len(co.negs):
        return False
    words = [t.text.lower() for t in dn.tokens[cn.negs[0] : cn.last]]
    if "until" not in words and "till" not in words:
        return False
    other = [t.text.lower() for t in do.tokens[co.first : co.last]]
    only = any(w == "only" and nxt in _ONLY_WHEN for w, nxt in zip(other, other[1:])) or _only_after(other)
    return only or ("before" in other and any(w in _MUST for w in other[: other.index("before")]))


#: a place inside which "only" confines what a negation forbids outside it ("only inside the lab", "only within
#: the ring", "only in the paddock")
_ONLY_WHERE = frozenset(["inside", "within", "in", "at"])
_ARTICLES = ARTICLES | {"its", "their"}


def _place_after(words: list[str], k: int) -> str:
    """The first word after position ``k`` that is no article (the place a preposition names)."""
    return next((w for w in words[k + 1 :] if w not in _ARTICLES), "")


def _not_outside(dn: Doc, cn: Clause, do: Doc, co: Clause) -> bool:
    """A negation of ``cn`` that governs an "outside" ("must never be broken outside the laboratory") is a
    restriction to that place, not a flip, against a clause that allows it "only" inside the same place ("may
    only be broken inside the laboratory"). Against a plain assertion ("is stored outside the building" / "is
    not stored outside the building") it stays a flip."""
    if len(cn.negs) <= len(co.negs):
        return False
    words = [t.text.lower() for t in dn.tokens[cn.negs[0] : cn.last]]
    other = [t.text.lower() for t in do.tokens[co.first : co.last]]
    if "outside" not in words or "only" not in other:
        return False
    place = _place_after(words, words.index("outside"))
    rest = other[other.index("only") :]
    return any(w in _ONLY_WHERE and _place_after(rest, k) == place != "" for k, w in enumerate(rest))


def _restated(dn: Doc, cn: Clause, do: Doc, co: Clause) -> bool:
    """Does the negation of ``cn`` restate the restriction ``co`` states with "only" (a time or a place)?"""
    return _not_until(dn, cn, do, co) or _not_outside(dn, cn, do, co)


def restriction_restated(da: Doc, db: Doc) -> bool:
    """Does a clause of one text restate, as "not ... until" or "not ... outside", the restriction a clause of the
    other states with "only" or an obligation before it (:func:`_not_until`, :func:`_not_outside`)? Then the
    texts' polarity differs by no flip."""
    return any(
        _restated(da, ca, db, cb) or _restated(db, cb, da, ca)
        for ca in da.clauses[:PAIR_MAX_CLAUSES]
        for cb in db.clauses[:PAIR_MAX_CLAUSES]
        if ca.negs or cb.negs
    )


def _after(d: Doc, word: str) -> frozenset[str]:
    """The content words (stems) after the first ``word`` of the text, to the end of its sentence."""
    toks = d.tokens
    k = next((j for j, t in enumerate(toks) if t.text.lower() == word), -1)
    if k < 0:
        return frozenset()
    out: set[str] = set()
    for t in toks[k + 1 :]:
        if t.kind == BREAK and t.key == "sent":
            break
        if t.kind in (WORD, ENTITY):
            out.add(t.key)
    return frozenset(out)


def without_unless(dw: Doc, du: Doc) -> bool:
    """A negation "without" a condition ("No flames without the officer's approval") restates the exception
    "unless" the same condition holds ("Flames are prohibited unless the officer approves"): one restriction,
    whose texts' polarities differ by the negation "without" counts and "unless" does not. The condition is the
    same when a content word after "without" is one after "unless". A feature of the learned polarity candidate
    (``unless_restated``), read on both texts; against a text with no "unless" ("Flames are allowed without
    approval") it is 0."""
    if not any(dw.tokens[k].text.lower() == "without" for c in dw.clauses for k in c.negs):
        return False
    if any(t.text.lower() == "unless" for t in dw.tokens):
        return False
    return bool(_after(dw, "without") & _after(du, "unless"))


def _one_polar(da: Doc, ca: Clause, db: Doc, cb: Clause) -> ValueDiff | None:
    """A polarity word on one side only, against the bare assertion of the other ("Headphones are banned"
    / "Runners may wear headphones"): the word against the other clause's first content word."""
    if ca.polars and not cb.polars and not cb.negs:
        k = ca.polars[0]
        pos = _find_key(db.tokens, cb, da.tokens[k])
        return ValueDiff(NEGATION_FLIP, (da.tokens[k].text,), (), (da.tokens[k].start, da.tokens[k].end), (pos, pos))
    if cb.polars and not ca.polars and not ca.negs:
        k = cb.polars[0]
        pos = _find_key(da.tokens, ca, db.tokens[k])
        return ValueDiff(NEGATION_FLIP, (), (db.tokens[k].text,), (pos, pos), (db.tokens[k].start, db.tokens[k].end))
    return None


#: polarity groups whose positive word of one is the negative of the other: "included in the price" is "not
#: billed", "covered" is "free" of a charge
LINKED_GROUPS = frozenset([frozenset(["#include", "#charged"])])


def linked_diff(da: Doc, ca: Clause, db: Doc, cb: Clause) -> ValueDiff:
    """NEGATION_FLIP between the polarity words of two linked groups ("is included" / "is billed separately")."""
    ta, tb = da.tokens[ca.polars[0]], db.tokens[cb.polars[0]]
    return ValueDiff(NEGATION_FLIP, (ta.text,), (tb.text,), (ta.start, ta.end), (tb.start, tb.end))


def prefixed(d: Doc, c: Clause, other: Doc) -> tuple[int, ...]:
    """The words of clause ``c`` whose negating prefix counts against the other text: it states their
    base ("unaffected" / "affected") or a negation ("incomplete" / "not yet complete"). Elsewhere
    ("unopened vials" against a text that never speaks of opening) the word is only a word."""
    if not c.prefixed:
        return ()
    # the base may be the last part of a hyphenated word there ("unsealed" / "weather-sealed"), or the verb
    # under an "-able" base ("non-refundable" / "refunded on request")
    # the same prefixed word in the other text ("unopened cartridges" in both, "ingredient" read as in- + base) is
    # shared, not turned around; against a base only, a text that states the base beside the prefixed word
    # ("Non-members pay full price; members pay 20% less") speaks of two groups, and its prefixed word denies
    # nothing the other text states (against a negation it still reads as one: "not collected" / "uncollected")
    return tuple(
        k
        for k in c.prefixed
        if not _prefixed_too(d.tokens[k], other)
        and (other.negated or (_base_stated(d.tokens[k].key, other) and not _base_beside(d.tokens[k].key, d)))
        and not _kind_named(d, k, other)
    )


def _kind_named(d: Doc, k: int, other: Doc) -> bool:
    """Does the prefixed word at ``k`` open its sentence before a noun the other text states after a modifier of its
    own ("Unannounced inspections are ..." / "Annual inspections are announced ...")? Then it names a kind of the
    thing, as the other modifier does, and denies nothing the other text asserts of its kind."""
    toks, otoks = d.tokens, other.tokens
    if (k > 0 and toks[k - 1].kind != BREAK) or k + 1 >= len(toks) or toks[k + 1].kind != WORD:
        return False
    noun = toks[k + 1].key
    return any(
        otoks[j].key == noun
        and otoks[j - 1].kind in (WORD, ENTITY)
        and otoks[j - 1].key not in d.words
        and otoks[j - 1].key not in d.entity_keys
        for j in range(1, len(otoks))
    )


def _prefixed_too(tok: Token, other: Doc) -> bool:
    """Does the other text state the same prefixed word: read so, or written alike in another reading (a
    capitalised "Egg-free" that opens a sentence reads as a name)?"""
    low = tok.text.lower()
    return any((t.sub == "negpfx" and t.key == tok.key) or t.text.lower() == low for t in other.tokens)


def _base_beside(key: str, d: Doc) -> bool:
    """Does ``d`` also state the base of its prefixed word ``key`` as a plain word ("non-members" and "members")?"""
    return any(t.kind == WORD and t.sub != "negpfx" and t.key == key for t in d.tokens)


def _base_stated(key: str, other: Doc) -> bool:
    if key in other.words or derived(key, other.loose_words):
        return True  # the base or a derivation of its root: "intolerant of" / "tolerate"
    root = able_root(key)
    return bool(root) and (root in other.words or root in other.loose_words)


def prefix_diff(da: Doc, pa: tuple[int, ...], db: Doc, cb: Clause, pb: tuple[int, ...], ca: Clause) -> ValueDiff:
    """NEGATION_FLIP of a prefixed word against its base in the other clause ("unaffected" / "affected")."""
    if len(pa) % 2:
        k = pa[0]
        t = da.tokens[k]
        pos = _find_key(db.tokens, cb, t)
        other = next((u for u in db.tokens[cb.first : cb.last] if u.key == t.key), None)
        if other is not None:
            return ValueDiff(NEGATION_FLIP, (t.text,), (other.text,), (t.start, t.end), (other.start, other.end))
        return ValueDiff(NEGATION_FLIP, (t.text,), (), (t.start, t.end), (pos, pos))
    k = pb[0]
    t = db.tokens[k]
    pos = _find_key(da.tokens, ca, t)
    other = next((u for u in da.tokens[ca.first : ca.last] if u.key == t.key), None)
    if other is not None:
        return ValueDiff(NEGATION_FLIP, (other.text,), (t.text,), (other.start, other.end), (t.start, t.end))
    return ValueDiff(NEGATION_FLIP, (), (t.text,), (pos, pos), (t.start, t.end))


def negation_moved(da: Doc, ca: Clause, db: Doc, cb: Clause) -> bool:
    """Two sentences of one polarity cut into clauses differently: the negation sits in another clause
    ("Refuelling is not permitted when passengers are aboard" / "A plane with passengers aboard cannot
    refuel").
    Sentences with as many clauses on each side keep their clause-by-clause polarity (a swap of
    "enabled" and "disabled" between two clauses is two flips)."""
    (na, pa), (nb, pb) = da.sent_shape[ca.sent], db.sent_shape[cb.sent]
    if pa != pb:
        return False
    if na != nb:
        return True
    # a list reordered before one negation ("Drones, bottles and speakers are not allowed" / "Speakers,
    # drones and bottles are not allowed"): the same words, and one of the clauses carries no polarity
    bare = not (ca.negs or ca.polars or ca.prefixed) or not (cb.negs or cb.polars or cb.prefixed)
    worded = ca.negs or ca.polars or cb.negs or cb.polars  # a negating prefix is no list's negation
    return (
        bare
        and bool(worded)
        and ca.bag != cb.bag
        and ca.sent < len(da.sentences)
        and cb.sent < len(db.sentences)
        and (da.sentences[ca.sent].bag == db.sentences[cb.sent].bag)
    )


def negated_stated(da: Doc, ca: Clause, db: Doc, cb: Clause) -> bool:
    """Does clause ``cb`` state, without a negation, the word the first negation of ``ca`` governs
    ("Sale items cannot be returned" / "Sale items can be returned", "do not require" / "is required")?"""
    ta = da.tokens
    g = governed(ta, ca.negs[0], ca.last)
    if g < 0 or ta[g].kind not in (WORD, POLAR):
        return False
    key = stem(ta[g].text.lower())
    tb = db.tokens
    return any(
        tb[j].kind in (WORD, POLAR)
        and (tb[j].key == ta[g].key or stem(tb[j].text.lower()) == key)
        and j > cb.first
        and tb[j - 1].text.lower() in _PREDICATE_BEFORE
        for j in range(cb.first, cb.last)
    )


#: what stands right before a verb used as a predicate ("can be returned", "is required", "must renew"):
#: the stated word is then the same assertion as the denied one, not a noun ("Support for X ended")
_PREDICATE_BEFORE = frozenset(
    "is are was were be been being can could may might must shall should will would do does did".split()
)

"""Value-conflict detection between two fact texts (docs/reference/pipeline.md §4, SPEC-027 §2.2, SPEC-005 §5.3).

:func:`values_conflict` answers one question: do two texts assert *different values for the same
attribute*? It names the SPEC-005 §5.3 pattern of every changed value and keeps character spans
into both texts for highlighting. A paraphrase with no changed value is not a conflict.

How it works (every rule is documented with examples in ``docs/decisions/detector.md``):

1. :func:`tokenize` (memoised per text) reads values in a normalised form: numbers with their unit
   folded in (``30 s`` = ``30 seconds``, ``168 hours`` = ``7 days``, ``three`` = ``3``), dates
   (``2025-06-30`` = ``30 June 2025``), percentages, multipliers, money, rates, clock times,
   entities (proper nouns, acronyms, identifiers, lexicon names), polarity words (``enabled`` /
   ``disabled``), negation cues, clause breaks, content and function words.
2. Each text is cut into clauses; the *attribute context* of a value is the set of content words
   of its clause (stemmed, synonyms folded, function words left out).
3. Two clauses are *aligned* when neither carries a qualifier the other text lacks and their
   contexts overlap (Jaccard >= 0.5). Values are paired only across aligned clauses, best context
   first, equal values first, then by position - so a swap ("client 2379, peer 2380" against
   "client 2380, peer 2379") is caught and two numbers of different attributes ("client port
   2379" / "peer port 2380") are never compared.
4. Aligned clauses whose polarity differs (odd number of negations or opposite polarity words)
   are a NEGATION_FLIP.

The lexicons are data files under ``crp_core/data/lexicon/``, read once at import.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from crp_core.records import ValueConflict, ValueDiff
from crp_core.stages.contradictions.clauses import BE_FORMS, Clause, Doc, analyse, tokenize
from crp_core.stages.contradictions.flips import flip_diff, negated_stated, negation_moved, prefix_diff, prefixed
from crp_core.stages.contradictions.lexicon import (
    ALIGN_MIN,
    BREAK,
    DATE,
    DATE_SHIFTED,
    ENTITY,
    ENTITY_SUBSTITUTED,
    FUNC,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER,
    NUMBER_CHANGED,
    PAIR_MAX_CLAUSES,
    PAIR_MAX_VALUES,
    PATTERNS,
    WORD,
)
from crp_core.stages.contradictions.loose import aligned
from crp_core.stages.contradictions.phrases import phrase_substitution
from crp_core.stages.contradictions.tokens import Token
from crp_core.stages.contradictions.value_compare import same_value, value_diffs

__all__ = [
    "DATE_SHIFTED",
    "ENTITY_SUBSTITUTED",
    "MAGNITUDE_ALTERED",
    "NEGATION_FLIP",
    "NUMBER_CHANGED",
    "PATTERNS",
    "Token",
    "tokenize",
    "values_conflict",
]

# ================================================================================================
# Pairing
# ================================================================================================


class _Pair:
    """One comparison of two analysed texts (short-lived: caches clause alignment)."""

    __slots__ = ("_lone_a", "_lone_b", "_matching", "da", "db", "foreign_a", "foreign_b", "overlaps", "scores")

    def __init__(self, da: Doc, db: Doc) -> None:
        self.da, self.db = da, db
        self.foreign_a = tuple(bool(bag - db.words) for bag in da.sent_bags)
        self.foreign_b = tuple(bool(bag - da.words) for bag in db.sent_bags)
        self.scores: dict[tuple[int, int], tuple[float, bool]] = {}
        self.overlaps: dict[tuple[int, int], float] = {}
        self._matching: list[tuple[int, int]] | None = None
        self._lone_a: dict[int, bool] = {}
        self._lone_b: dict[int, bool] = {}

    def lone_entity(self, side_a: bool, ci: int) -> bool:
        """Does clause ``ci`` name something the other text never mentions?"""
        cache = self._lone_a if side_a else self._lone_b
        got = cache.get(ci)
        if got is None:
            clause = (self.da if side_a else self.db).clauses[ci]
            got = cache[ci] = _one_sided_entity(clause, self.db if side_a else self.da)
        return got

    def score(self, ia: int, ib: int) -> tuple[float, bool]:
        """How well clause ``ia`` of text a and clause ``ib`` of text b state the same attribute:
        (-1, _) when one carries a qualifier word the other text lacks, else the Jaccard overlap of
        their contexts; the flag says whether a name on one side only qualifies the clause ("in
        eu-west-1"), which separates two values but not two opposite assertions."""
        key = (ia, ib)
        got = self.scores.get(key)
        if got is not None:
            return got
        ca, cb = self.da.clauses[ia], self.db.clauses[ib]
        da, db = self.da, self.db
        # a name one side writes as an ordinary word ("Dogs are ..." / "No dogs ...") is that word
        bag_a = _attribute_words(ca.bag, cb.bag) | (ca.entities & cb.bag)
        bag_b = _attribute_words(cb.bag, ca.bag) | (cb.entities & ca.bag)
        if self.foreign_a[ca.sent] and self.foreign_b[cb.sent]:
            s = -1.0  # both sentences carry words the other text lacks: they talk about different things
        elif not (bag_a <= db.words and bag_b <= da.words):
            s = -1.0  # an inserted or substituted qualifier next to the value
        elif (
            ca.owner and cb.owner and ca.owner != cb.owner and not _present(ca.owner, db) and not _present(cb.owner, da)
        ):
            s = -1.0  # about another thing: "The kubelet listens on 10250" / "The kube-proxy listens on 10249"
        elif bag_a - bag_b and bag_b - bag_a:
            s = -1.0  # each clause has a qualifier the other lacks ("client port" / "peer port")
        elif not ca.bag and not cb.bag:
            s = 1.0
        else:
            s = max(len(ca.bag & cb.bag) / len(ca.bag | cb.bag), len(bag_a & bag_b) / len(bag_a | bag_b or {""}))
        got = (s, s >= 0 and self.lone_entity(True, ia) != self.lone_entity(False, ib))
        self.scores[key] = got
        return got

    def context_overlap(self, ctx_a: frozenset[str], ctx_b: frozenset[str]) -> float:
        """Jaccard overlap of two values' attribute contexts (1 when both are empty), memoised: the
        values of one clause share one context object. Keyed on identity (the Docs hold the sets alive
        while the pair lives): equal sets of different values would cost a full comparison per lookup."""
        key = (id(ctx_a), id(ctx_b))
        got = self.overlaps.get(key)
        if got is None:
            got = self.overlaps[key] = len(ctx_a & ctx_b) / len(ctx_a | ctx_b) if ctx_a or ctx_b else 1.0
        return got

    def value_score(self, ia: int, ib: int) -> float:
        s, entity_qualified = self.score(ia, ib)
        return -1.0 if entity_qualified else s

    def matching(self) -> list[tuple[int, int]]:
        """Clauses of a paired one to one with clauses of b: best alignment first, then the
        nearest position (so two clauses with the same context keep their order)."""
        if self._matching is not None:
            return self._matching
        cands: list[tuple[float, int, int, int]] = []
        for ia in range(min(len(self.da.clauses), PAIR_MAX_CLAUSES)):
            for ib in range(min(len(self.db.clauses), PAIR_MAX_CLAUSES)):
                s = self.score(ia, ib)[0]
                if s >= ALIGN_MIN:
                    cands.append((-s, abs(ia - ib), ia, ib))
        cands.sort()
        used_a: set[int] = set()
        used_b: set[int] = set()
        out: list[tuple[int, int]] = []
        for _, _, ia, ib in cands:
            if ia not in used_a and ib not in used_b:
                used_a.add(ia)
                used_b.add(ib)
                out.append((ia, ib))
        self._matching = out
        return out


def _attribute_words(bag: frozenset[str], other: frozenset[str]) -> frozenset[str]:
    """A clause's attribute words against another clause's: its polarity groups are left out when the
    other clause has none or shares one, since then a polarity word is the asserted value, not the
    attribute ("Dogs are allowed on the beach" / "No dogs on the beach": one assertion and its denial)."""
    polar = [w for w in bag if w[:1] == "#"]
    if not polar:
        return bag
    other_polar = [w for w in other if w[:1] == "#"]
    if other_polar and not set(polar) & set(other_polar):
        return bag
    return bag - frozenset(polar)


def _present(e: str, other: Doc) -> bool:
    """Is the name ``e`` (an entity key) mentioned anywhere in the other text? A name glued to its release
    ("python3.11") is mentioned as the name and the release written apart ("Python 3.11")."""
    if e in other.entity_keys or e in other.words or all(p in other.words for p in e.split(" ")):
        return True
    m = _GLUED_RELEASE.fullmatch(e)
    return (
        m is not None
        and m.group(1) in other.words
        and any(t.qty is not None and t.qty.exact == m.group(2) for t in other.tokens)
    )


#: a lower-case name glued to a release number ("python3.11", "node18"); the two parts share no character
_GLUED_RELEASE = re.compile(r"([a-z]+)(\d+(?:\.\d+)*)")


def _one_sided_entity(c: Clause, other: Doc) -> bool:
    return any(not _present(e, other) for e in c.entities)


def _equal_pair(a: Token, b: Token) -> bool:
    return same_value(a, b) and (a.qty is None or b.qty is None or a.qty.bound * b.qty.bound >= 0)


#: a candidate value pair: (-context overlap, unequal, rank distance, rank sum, token a, token b, value a, value b)
_Candidate = tuple[float, int, int, int, int, int, int, int]


def _value_candidates(p: _Pair, xs: tuple[int, ...], ys: tuple[int, ...], out: list[_Candidate]) -> None:
    """The pairs of values ``xs`` of text a and ``ys`` of text b in aligned clauses with overlapping
    attribute contexts, appended to ``out``."""
    da, db = p.da, p.db
    ta, tb = da.tokens, db.tokens
    va_all, vb_all = da.values, db.values
    ys = ys[:PAIR_MAX_VALUES]
    for x in xs[:PAIR_MAX_VALUES]:
        va = va_all[x]
        # a name the other text writes as ordinary words ("Pod" / "Pods are ...") is present there
        if va.plain and ta[va.tok].key not in db.entity_keys and va.plain <= db.plain:
            continue
        a_tok, ctx_a = ta[va.tok], va.ctx
        for y in ys:
            vb = vb_all[y]
            if vb.plain and tb[vb.tok].key not in da.entity_keys and vb.plain <= da.plain:
                continue
            if p.value_score(va.clause, vb.clause) < 0:
                continue
            s = p.context_overlap(ctx_a, vb.ctx)
            if s < ALIGN_MIN:
                continue
            b_tok = tb[vb.tok]
            eq = 0 if _equal_pair(a_tok, b_tok) else 1
            out.append((-s, eq, abs(va.rank - vb.rank), va.rank + vb.rank, va.tok, vb.tok, x, y))


def _pair_values(p: _Pair, diffs: list[ValueDiff]) -> None:
    """Pair the values of the two texts and record the pairs that differ. A pair needs aligned
    clauses (no qualifier on one side only) and overlapping attribute contexts; the best context
    match is taken first, equal values before unequal ones, then the nearest position. So a swap
    ("client 2379, peer 2380" / "client 2380, peer 2379") is two changed pairs, a list in another
    order is none, and values of different attributes are never compared."""
    da, db = p.da, p.db
    cands: list[_Candidate] = []
    for cls, xs in da.groups.items():
        ys = db.groups.get(cls)
        if ys:
            _value_candidates(p, xs, ys, cands)
    # a lone year against a plain number ("the default port is 2000" / "... 2379"): NUMBER_CHANGED
    if da.years and "q:" in db.groups:
        _value_candidates(p, da.years, db.groups["q:"], cands)
    if db.years and "q:" in da.groups:
        _value_candidates(p, da.groups["q:"], db.years, cands)
    used_a: set[int] = set()
    used_b: set[int] = set()
    _take(p, sorted(cands), used_a, used_b, diffs)
    loose: list[_Candidate] = []
    _loose_candidates(p, used_a, used_b, loose)
    _take(p, sorted(loose), used_a, used_b, diffs)


def _take(p: _Pair, cands: list[_Candidate], used_a: set[int], used_b: set[int], diffs: list[ValueDiff]) -> None:
    """Pair greedily in the candidates' order, each value once; record the pairs that differ."""
    da, db = p.da, p.db
    for c in cands:
        x, y = c[6], c[7]
        if x in used_a or y in used_b:
            continue
        used_a.add(x)
        used_b.add(y)
        if c[1]:
            diffs.extend(value_diffs(da.tokens[da.values[x].tok], db.tokens[db.values[y].tok], da.text, db.text))


def _stated_by(a: Token, b: Token) -> bool:
    """Does ``b`` state the value ``a`` states? Equal values; two dates also need a part both state
    ("Sunday" says nothing of "14 December")."""
    if not _equal_pair(a, b):
        return False
    if a.date is None or b.date is None:
        return True
    return any(x and y for ra in a.date.readings for rb in b.date.readings for x, y in zip(ra, rb))


def _lone(d: Doc, xs: tuple[int, ...], other: Doc, ys: tuple[int, ...]) -> dict[int, int]:
    """Sentence -> its one value among ``xs`` that no value ``ys`` of the other text equals (sentences
    with none or several such values are left out): the changed value of a reworded sentence."""
    seen: dict[int, int] = {}
    toks, otoks = d.tokens, other.tokens
    for x in xs[:PAIR_MAX_VALUES]:
        v = d.values[x]
        t = toks[v.tok]
        if v.cls == "ent":
            if t.sub.startswith("weak") or _present(t.key, other) or (v.plain and v.plain <= other.plain):
                continue  # a capitalised first word is too weak a name to pair across sentences
        elif any(_stated_by(t, otoks[other.values[y].tok]) for y in ys[:PAIR_MAX_VALUES]):
            continue
        s = d.clauses[v.clause].sent
        seen[s] = -1 if s in seen else x
    return {s: x for s, x in seen.items() if x >= 0 and s < PAIR_MAX_CLAUSES}


def _loose_candidates(p: _Pair, used_a: set[int], used_b: set[int], out: list[_Candidate]) -> None:
    """Value pairs across loosely aligned sentences (loose.py): one changed value of a class on each
    side of two sentences that state one thing in other words. They rank after every pair of the
    clause alignment."""
    da, db = p.da, p.db
    if not da.loose_words & db.loose_words:
        return  # no two sentences share a word
    found: dict[tuple[int, int], list[_Candidate]] = {}
    classes: dict[tuple[int, int], set[str]] = {}
    for cls, xs in da.groups.items():
        ys = db.groups.get(cls)
        if not ys or all(x in used_a for x in xs) or all(y in used_b for y in ys):
            continue  # every value of the class already paired on one side
        lone_a = _lone(da, xs, db, ys)
        if not lone_a:
            continue
        lone_b = _lone(db, ys, da, xs)
        for sa, x in lone_a.items():
            for sb, y in lone_b.items():
                va, vb = da.values[x], db.values[y]
                ta, tb = da.tokens[va.tok], db.tokens[vb.tok]
                drop = frozenset((ta.key, tb.key)) if cls == "ent" else frozenset()
                oa, ob = da.sentences[sa].owner, db.sentences[sb].owner
                if oa and ob and oa != ob and not _present(oa, db) and not _present(ob, da):
                    continue  # two subjects: "pip 24.0 requires ..." / "pip 24.1 requires ..."
                if aligned(da.sentences[sa], db.sentences[sb], da.loose_words, db.loose_words, drop):
                    c = (0.0, 1, abs(va.rank - vb.rank), va.rank + vb.rank, va.tok, vb.tok, x, y)
                    found.setdefault((sa, sb), []).append(c)
                    classes.setdefault((sa, sb), set()).add(cls)
    for key, cands in found.items():
        if len(classes[key]) == 1:
            out.extend(cands)  # two classes changed at once: a scope and its value ("64 clients on the 5 GHz band")


def _pair_clauses(p: _Pair, diffs: list[ValueDiff]) -> None:
    """NEGATION_FLIP for every matched clause pair that shares context and differs in polarity."""
    da, db = p.da, p.db
    matched = p.matching()
    for ia, ib in matched:
        ca, cb = da.clauses[ia], db.clauses[ib]
        pa, pb = prefixed(da, ca, db), prefixed(db, cb, da)
        if (ca.parity + len(pa)) % 2 == (cb.parity + len(pb)) % 2:
            continue
        only_a = frozenset(e for e in ca.entities - cb.entities if e not in cb.bag)  # "Dogs" / "dogs"
        only_b = frozenset(e for e in cb.entities - ca.entities if e not in ca.bag)
        if (only_a and all(_polar_elsewhere(e, db) for e in only_a)) or (
            only_b and all(_polar_elsewhere(e, da) for e in only_b)
        ):
            continue  # names something the other text states in another clause: "not for 4xx" / "for 5xx, not for 4xx"
        if negation_moved(da, ca, db, cb):
            continue
        if ca.bag & cb.bag or (not ca.bag and not cb.bag and ca.entities & cb.entities):
            d = flip_diff(da, ca, db, cb) if ca.parity != cb.parity else prefix_diff(da, pa, db, cb, pb, ca)
            if d is not None:
                diffs.append(d)
    # a clause matched to the qualifier of a longer sentence ("Subletting is allowed with consent" / ", even with
    # consent") is left to the loose test against that sentence's polarity clause
    held = [(ia, ib) for ia, ib in matched if not (_qualifier(da, da.clauses[ia]) or _qualifier(db, db.clauses[ib]))]
    _loose_flips(p, {ia for ia, _ in held}, {ib for _, ib in held}, diffs)


def _polar_elsewhere(e: str, other: Doc) -> bool:
    """Is the name ``e`` in the other text, and not only in a clause without polarity ("Portable concentrators
    are not permitted, even if FAA-approved": the qualifier names it, the denial is about the concentrators)?"""
    if not _present(e, other):
        return False
    holders = [c for c in other.clauses[:PAIR_MAX_CLAUSES] if e in c.entities]
    return not holders or any(_polar_clause(c) for c in holders)


def _qualifier(d: Doc, c: Clause) -> bool:
    """A clause without polarity in a sentence of several clauses."""
    return not _polar_clause(c) and d.sent_shape[c.sent][0] > 1


def _polar_clause(c: Clause) -> bool:
    return bool(c.negs or c.polars or c.prefixed)


def _single_clauses(d: Doc, taken: set[int]) -> list[int]:
    """The clauses that carry their sentence's polarity, not matched by the clause alignment: a whole
    sentence, or the one clause of its sentence with a negation, polarity word or negating prefix
    ("Subletting is prohibited, even with the landlord's consent")."""
    polar: dict[int, int] = {}
    for ci, c in enumerate(d.clauses[:PAIR_MAX_CLAUSES]):
        if _polar_clause(c):
            polar[c.sent] = -1 if c.sent in polar else ci
    return [
        ci
        for ci, c in enumerate(d.clauses[:PAIR_MAX_CLAUSES])
        if ci not in taken
        and c.sent < len(d.sentences)
        and (d.sent_shape[c.sent][0] == 1 or polar.get(c.sent, -1) == ci)
    ]


def _polar_groups(d: Doc, c: Clause) -> frozenset[str]:
    return frozenset(d.tokens[k].key for k in c.polars)


def _loose_flips(p: _Pair, taken_a: set[int], taken_b: set[int], diffs: list[ValueDiff]) -> None:
    """NEGATION_FLIP between two one-clause sentences that state one thing in other words (loose.py)
    with opposite polarity: "Towels are provided at no extra cost" / "Towels are billed separately".
    The difference must be a polarity word of one group on both sides, a negation on one side against a
    polarity word on the other ("Dogs are allowed" / "No dogs"), or a negating prefix: "X no longer
    receives updates" / "updates for X ended" is none (the second denies without a polarity word)."""
    da, db = p.da, p.db
    xs = _single_clauses(da, taken_a)
    ys = _single_clauses(db, taken_b) if xs else []
    for ia in xs:
        ca = da.clauses[ia]
        for ib in ys:
            cb = db.clauses[ib]
            pa, pb = prefixed(da, ca, db), prefixed(db, cb, da)
            if (ca.parity + len(pa)) % 2 == (cb.parity + len(pb)) % 2:
                continue
            ga, gb = _polar_groups(da, ca), _polar_groups(db, cb)
            if not (
                pa
                or pb
                or ga & gb
                or (ca.negs and not ga and gb and not cb.negs)
                or (cb.negs and not gb and ga and not ca.negs)
                or (ca.negs and not cb.negs and negated_stated(da, ca, db, cb))
                or (cb.negs and not ca.negs and negated_stated(db, cb, da, ca))
            ):
                continue  # the difference is no polarity word denied or turned around
            if aligned(da.sentences[ca.sent], db.sentences[cb.sent], da.loose_words, db.loose_words, frozenset()):
                d = flip_diff(da, ca, db, cb) if ca.parity != cb.parity else prefix_diff(da, pa, db, cb, pb, ca)
                if d is not None:
                    diffs.append(d)
                    return


#: a preposition that opens a scope frame ("In the US, ...", "For Zone 3, ...", "On Line 2, ...")
_SCOPE_FRAMES = frozenset(["in", "for", "on", "at", "within", "across", "under"])
#: an auxiliary that ends a sentence's subject ("Year 7 pupils may ...", "ballots from Ward 2 are counted")
_AUXILIARIES = frozenset(["must", "may", "can", "could", "should", "shall", "will", "would", "might"])


def _designator(toks: tuple[Token, ...], k: int, first: int) -> bool:
    """A plain number right after a capitalised word names a thing ("Ward 2", "District 9", "Year 7"),
    it is no amount of anything."""
    t = toks[k]
    if t.kind != NUMBER or t.qty is None or t.qty.dim != "" or t.qty.bound != 0 or k <= first:
        return False
    p = toks[k - 1]
    return p.kind in (WORD, ENTITY) and p.text[:1].isupper() and p.end < t.start


def _unstated(d: Doc, k: int, other: Doc) -> bool:
    """Is the value at token ``k`` missing from the other text?"""
    t = d.tokens[k]
    if t.kind == ENTITY:
        return not _present(t.key, other)
    return not any(_stated_by(t, other.tokens[v.tok]) for v in other.values[:PAIR_MAX_VALUES])


class _Subject(NamedTuple):
    changed: bool  # the sentence opens with a name or designator the other text lacks
    before_aux: bool  # ... standing before an auxiliary or a passive ("are counted")
    more: bool  # another value after it that the other text lacks


def _subject(d: Doc, first: int, last: int, other: Doc) -> _Subject:
    """What the subject test reads of one sentence: its first value when that is a name or a designator."""
    toks = d.tokens
    lead = -1
    cut = False
    framed = _framed(toks, first)
    for k in range(first, last):
        t = toks[k]
        if t.kind == FUNC and t.key == "only":
            return _Subject(False, False, False)  # "only Gold members ...": the subject is the asserted value
        if lead < 0 and (t.key in _AUXILIARIES or t.key in BE_FORMS):
            return _Subject(False, False, False)  # past the verb: "the database is postgres 15" names the value
        if t.kind in (NUMBER, DATE, ENTITY):
            if lead < 0:
                got = _lead(d, k, first, last, other)
                if got < 0:
                    return _Subject(False, False, False)
                lead = k if got else lead
                cut = cut or got == 2  # a bounded group ("Drivers under 25") is another subject only with more
            elif _unstated(d, k, other):
                return _Subject(True, False, True)
        elif lead >= 0 and t.kind == BREAK:
            if framed and not cut:
                return _Subject(True, True, False)  # "In the US, a varietal wine must ...": the scope is the subject
            cut = True  # "According to X, keys must ...": a name in another clause is no subject of the verb
        elif lead >= 0 and (
            t.key in _AUXILIARIES or (t.key in BE_FORMS and k + 1 < last and toks[k + 1].text.endswith("ed"))
        ):
            return _Subject(True, not cut, _more(d, k, last, other))
    return _Subject(lead >= 0, False, False)


def _lead(d: Doc, k: int, first: int, last: int, other: Doc) -> int:
    """The value at ``k``, the first one of its sentence, as a subject: 1 a name or designator the other
    text lacks, 0 none yet (read on), -1 a plain value (the sentence has no changed subject)."""
    toks = d.tokens
    t = toks[k]
    if t.kind == ENTITY and k + 1 < last and _designator(toks, k + 1, first):
        return 0  # "Ward 2": the number is the designator
    if not _unstated(d, k, other):
        return 0  # the same name on both sides ("Absentee ballots ...", "Redis ...")
    if t.kind == ENTITY or _designator(toks, k, first):
        return 1
    return 2 if _bounded_group(toks, k, first) else -1


def _bounded_group(toks: tuple[Token, ...], k: int, first: int) -> bool:
    """A bounded count after the noun it limits, opening the sentence ("Drivers under 25 pay ...",
    "Children aged 12 or over ..."): which group, when the sentence states another value too."""
    q = toks[k].qty
    if q is None or q.bound == 0 or q.dim not in ("", "time") or k - first > _GROUP_MAX:
        return False
    j = k - 1
    while j > first and toks[j].kind == FUNC:
        j -= 1
    return toks[j].kind in (WORD, ENTITY) and toks[j].key not in BE_FORMS and toks[j].text[:1].isalpha()


#: the farthest a bounded group's number stands from the start of its sentence (in tokens)
_GROUP_MAX = 4


def _framed(toks: tuple[Token, ...], first: int) -> bool:
    """Does the sentence open with a scope frame's preposition ("In the US, ...")?"""
    return toks[first].kind == FUNC and toks[first].key in _SCOPE_FRAMES


def _more(d: Doc, k: int, last: int, other: Doc) -> bool:
    return any(d.tokens[j].kind in (NUMBER, DATE, ENTITY) and _unstated(d, j, other) for j in range(k, last))


def _sentence_of(d: Doc, pos: int) -> int:
    """The sentence (index into ``d.sentences``) holding character ``pos`` (a binary search)."""
    lo, hi = 0, len(d.sentences) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        sent = d.sentences[mid]
        if sent.last > sent.first and d.tokens[sent.first].start > pos:
            hi = mid - 1
        else:
            lo = mid
    return lo


def _other_subjects(da: Doc, db: Doc, diffs: list[ValueDiff]) -> list[ValueDiff]:
    """Leave out the diffs of two sentences about different things: each opens with a name or a
    designator the other text lacks (which gate, which district, which country) and either says more
    that differs ("Gate A closes at 9" / "Gate B closes at 10") or the name stands before an auxiliary
    ("pupils of Year 7 may leave" / "pupils of Year 9 may not leave"). A list of names swapped between
    two attributes states both names on both sides, so it is no other subject."""
    verdict: dict[tuple[int, int], bool] = {}
    out: list[ValueDiff] = []
    for diff in diffs:
        key = (_sentence_of(da, diff.span_a[0]), _sentence_of(db, diff.span_b[0]))
        other = verdict.get(key)
        if other is None:
            sa, sb = da.sentences[key[0]], db.sentences[key[1]]
            xa, xb = _subject(da, sa.first, sa.last, db), _subject(db, sb.first, sb.last, da)
            other = verdict[key] = (
                xa.changed
                and xb.changed
                and ((xa.more and xb.more) or (xa.before_aux and xb.before_aux) or diff.pattern == NEGATION_FLIP)
            )
        if not other:
            out.append(diff)
    return out


def _compare(text_a: str, text_b: str) -> ValueConflict | None:
    da, db = analyse(text_a), analyse(text_b)
    diffs: list[ValueDiff] = []
    if da.clauses and db.clauses and len(da.sentences) == len(db.sentences):
        phrase_substitution(da, db, diffs)
    if not (da.signal or db.signal):
        return _conflict(diffs) if diffs else None
    p = _Pair(da, db)
    if da.values and db.values:
        _pair_values(p, diffs)
    if da.polar_or_neg or db.polar_or_neg:
        _pair_clauses(p, diffs)
    if diffs and da.sentences and db.sentences:
        diffs = _other_subjects(da, db, diffs)
    if not diffs:
        return None
    return _conflict(diffs)


def _conflict(diffs: list[ValueDiff]) -> ValueConflict:
    uniq = sorted(set(diffs), key=lambda d: (d.span_a, d.span_b, d.pattern, d.tokens_a, d.tokens_b))
    return ValueConflict(patterns=tuple(sorted({d.pattern for d in uniq})), diffs=tuple(uniq))


def _mirror(vc: ValueConflict | None) -> ValueConflict | None:
    if vc is None:
        return None
    return _conflict([ValueDiff(d.pattern, d.tokens_b, d.tokens_a, d.span_b, d.span_a) for d in vc.diffs])


@lru_cache(maxsize=131072)
def values_conflict(text_a: str, text_b: str) -> ValueConflict | None:
    """Do the two texts assert different values for the same attribute? (docs/reference/pipeline.md §4,
    SPEC-027 §2.2, SPEC-005 §5.3 patterns applied pairwise.)

    Returns None for a paraphrase with no changed value, else the distinct sorted patterns and one
    :class:`ValueDiff` per changed value (``span_a`` / ``tokens_a`` refer to ``text_a``). Pure and
    memoised; symmetric by construction (the pair is compared in a canonical order and mirrored).
    """
    if text_a == text_b:
        return None
    if text_b < text_a:
        return _mirror(_compare(text_b, text_a))
    return _compare(text_a, text_b)

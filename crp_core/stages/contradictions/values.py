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
5. Where these rules find nothing, the learned comparison (learned.py, ``detector_learned``) may
   accept one candidate the rules' analysis proposes (candidates.py); its conflict is marked
   ``learned``.

The lexicons are data files under ``crp_core/data/lexicon/``, read once at import.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from crp_core.records import ValueConflict, ValueDiff
from crp_core.stages.contradictions.candidates import Candidate, propose
from crp_core.stages.contradictions.clauses import Clause, Doc, analyse, tokenize
from crp_core.stages.contradictions.days import days_disjoint
from crp_core.stages.contradictions.flips import (
    LINKED_GROUPS,
    flip_diff,
    linked_diff,
    negated_stated,
    negation_moved,
    prefix_diff,
    prefixed,
)
from crp_core.stages.contradictions.learned import learned_conflict
from crp_core.stages.contradictions.lexicon import (
    ALIGN_MIN,
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    FUNC,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER,
    NUMBER_CHANGED,
    PAIR_MAX_CLAUSES,
    PAIR_MAX_VALUES,
    PATTERNS,
)
from crp_core.stages.contradictions.loose import aligned
from crp_core.stages.contradictions.memos import TEXT_MEMO_SIZE, text_memo
from crp_core.stages.contradictions.modifiers import narrowed_nouns
from crp_core.stages.contradictions.orders import list_reorder, reordered
from crp_core.stages.contradictions.phrases import phrase_substitution
from crp_core.stages.contradictions.ranges import bound_split, date_within_span, period_ends
from crp_core.stages.contradictions.subjects import (
    added_names,
    designator,
    equal_pair,
    opposed_qualifiers,
    other_subjects,
    present,
    stated_by,
)
from crp_core.stages.contradictions.swaps import dates_as_labels
from crp_core.stages.contradictions.tokens import Token
from crp_core.stages.contradictions.typed import spelled_names, typed_diffs
from crp_core.stages.contradictions.value_compare import opposite_extremes, value_diffs

__all__ = [
    "DATE_SHIFTED",
    "ENTITY_SUBSTITUTED",
    "MAGNITUDE_ALTERED",
    "NEGATION_FLIP",
    "NUMBER_CHANGED",
    "PATTERNS",
    "Token",
    "conflict_check",
    "learned_candidates",
    "tokenize",
    "values_conflict",
]

# ================================================================================================
# Pairing
# ================================================================================================


class _Pair:
    """One comparison of two analysed texts (short-lived: caches clause alignment)."""

    __slots__ = (
        "_lone_a",
        "_lone_b",
        "_matching",
        "da",
        "db",
        "foreign_a",
        "foreign_b",
        "overlaps",
        "scores",
        "spelled",
    )

    def __init__(self, da: Doc, db: Doc) -> None:
        self.da, self.db = da, db
        self.foreign_a = tuple(bool(bag - db.words) for bag in da.sent_bags)
        self.foreign_b = tuple(bool(bag - da.words) for bag in db.sent_bags)
        self.scores: dict[tuple[int, int], tuple[float, bool]] = {}
        self.overlaps: dict[tuple[int, int], float] = {}
        self._matching: list[tuple[int, int]] | None = None
        self._lone_a: dict[int, bool] = {}
        self._lone_b: dict[int, bool] = {}
        self.spelled = spelled_names(da, db)  # a name and the acronym that abbreviates it

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
        elif ca.owner and cb.owner and ca.owner != cb.owner and not present(ca.owner, db) and not present(cb.owner, da):
            s = -1.0  # about another thing: "The kubelet listens on 10250" / "The kube-proxy listens on 10249"
        elif bag_a - bag_b and bag_b - bag_a:
            s = -1.0  # each clause has a qualifier the other lacks ("client port" / "peer port")
        elif days_disjoint(da, ca.sent, db, cb.sent):
            s = (
                -1.0
            )  # two sets of weekdays with no day in common: "until 11pm on Fridays" / "until 10pm Sunday to Thursday"
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


def _one_sided_entity(c: Clause, other: Doc) -> bool:
    return any(not present(e, other) for e in c.entities)


#: a candidate value pair: (-context overlap, unequal, rank distance, rank sum, token a, token b, value a, value b)
_Candidate = tuple[float, int, int, int, int, int, int, int]


def _stated_in_words(p: _Pair, plain: frozenset[str], tok: Token, other: Doc) -> bool:
    """Does the other text state the name ``tok`` (its words' stems ``plain``) in words: as ordinary words ("Pod" /
    "Pods are ...") or as the words an acronym abbreviates ("PHSO" / "Parliamentary and Health Service
    Ombudsman")?"""
    return bool(plain and tok.key not in other.entity_keys and plain <= other.plain) or tok.key in p.spelled


def _value_candidates(p: _Pair, xs: tuple[int, ...], ys: tuple[int, ...], out: list[_Candidate]) -> None:
    """The pairs of values ``xs`` of text a and ``ys`` of text b in aligned clauses with overlapping
    attribute contexts, appended to ``out``."""
    da, db = p.da, p.db
    ta, tb = da.tokens, db.tokens
    va_all, vb_all = da.values, db.values
    ys = ys[:PAIR_MAX_VALUES]
    for x in xs[:PAIR_MAX_VALUES]:
        va = va_all[x]
        if _stated_in_words(p, va.plain, ta[va.tok], db):
            continue
        a_tok, ctx_a = ta[va.tok], va.ctx
        for y in ys:
            vb = vb_all[y]
            if _stated_in_words(p, vb.plain, tb[vb.tok], da):
                continue
            if p.value_score(va.clause, vb.clause) < 0 or opposite_extremes(ctx_a, vb.ctx):
                continue
            if period_ends(p.da, va.tok, ctx_a, p.db, vb.tok, vb.ctx):
                continue  # the start and the end of one period: two attributes
            s = p.context_overlap(ctx_a, vb.ctx)
            if s < ALIGN_MIN:
                continue
            b_tok = tb[vb.tok]
            eq = 0 if equal_pair(a_tok, b_tok) else 1
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


def _lone(d: Doc, xs: tuple[int, ...], other: Doc, ys: tuple[int, ...]) -> dict[int, int]:
    """Sentence -> its one value among ``xs`` that no value ``ys`` of the other text equals (sentences
    with none or several such values are left out): the changed value of a reworded sentence."""
    seen: dict[int, int] = {}
    toks, otoks = d.tokens, other.tokens
    for x in xs[:PAIR_MAX_VALUES]:
        v = d.values[x]
        t = toks[v.tok]
        if v.cls == "ent":
            if t.sub.startswith("weak") or present(t.key, other) or (v.plain and v.plain <= other.plain):
                continue  # a capitalised first word is too weak a name to pair across sentences
        elif any(
            stated_by(t, otoks[other.values[y].tok])
            and designator(toks, v.tok) == designator(otoks, other.values[y].tok)
            for y in ys[:PAIR_MAX_VALUES]
        ):
            continue  # stated; an amount is not stated by a designator ("nine engines" / "Falcon 9")
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
                if oa and ob and oa != ob and not present(oa, db) and not present(ob, da):
                    continue  # two subjects: "pip 24.0 requires ..." / "pip 24.1 requires ..."
                if (
                    days_disjoint(da, sa, db, sb)
                    or opposite_extremes(va.ctx, vb.ctx)
                    or period_ends(da, va.tok, va.ctx, db, vb.tok, vb.ctx)
                ):
                    continue  # two scopes of weekdays ("until 11pm on Fridays" / "until 10pm Sunday to Thursday"),
                    # the two ends of a range ("The minimum age is 14" / "The maximum age is 17")
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
        if not _affix_flip(da, ca, pa, db, cb, pb) and negation_moved(da, ca, db, cb):
            continue
        if ca.bag & cb.bag or (not ca.bag and not cb.bag and ca.entities & cb.entities):
            d = flip_diff(da, ca, db, cb) if ca.parity != cb.parity else prefix_diff(da, pa, db, cb, pb, ca)
            if d is not None:
                diffs.append(d)
    # a clause matched to the qualifier of a longer sentence ("Subletting is allowed with consent" / ", even with
    # consent") is left to the loose test against that sentence's polarity clause
    held = [(ia, ib) for ia, ib in matched if not (_qualifier(da, da.clauses[ia]) or _qualifier(db, db.clauses[ib]))]
    _loose_flips(p, {ia for ia, _ in held}, {ib for _, ib in held}, diffs)


def _affix_flip(da: Doc, ca: Clause, pa: tuple[int, ...], db: Doc, cb: Clause, pb: tuple[int, ...]) -> bool:
    """Two sentences whose polarity differs by a negating prefix or suffix, in these clauses and in the whole
    sentences ("Barbless hooks are mandatory" / "Barbed hooks may be used"; "is suitable for beginners who ..." /
    "is unsuitable for beginners, even those who ..."): a flip, never a negation moved to another clause."""
    return (len(pa) - len(pb)) % 2 == 1 and (
        _sentence_affixes(da, ca.sent, db) - _sentence_affixes(db, cb.sent, da)
    ) % 2 == 1


def _sentence_affixes(d: Doc, sent: int, other: Doc) -> int:
    """How many negating affixes of sentence ``sent`` count against the other text."""
    return sum(len(prefixed(d, c, other)) for c in d.clauses[:PAIR_MAX_CLAUSES] if c.sent == sent)


def _polar_elsewhere(e: str, other: Doc) -> bool:
    """Is the name ``e`` in the other text, and not only in a clause without polarity ("Portable concentrators
    are not permitted, even if FAA-approved": the qualifier names it, the denial is about the concentrators)?"""
    if not present(e, other):
        return False
    holders = [c for c in other.clauses[:PAIR_MAX_CLAUSES] if e in c.entities]
    return not holders or any(_polar_clause(c) for c in holders)


def _qualifier(d: Doc, c: Clause) -> bool:
    """A clause without polarity in a sentence of several clauses."""
    return not _polar_clause(c) and d.sent_shape[c.sent][0] > 1


def _polar_clause(c: Clause) -> bool:
    return bool(c.negs or c.polars or c.prefixed)


def _single_clauses(d: Doc, taken: set[int], other: Doc) -> list[int]:
    """The clauses that carry their sentence's polarity, not matched by the clause alignment: a whole
    sentence, or the one clause of its sentence with a negation, polarity word or negating prefix
    ("Subletting is prohibited, even with the landlord's consent")."""
    polar: dict[int, int] = {}
    for ci, c in enumerate(d.clauses[:PAIR_MAX_CLAUSES]):
        # a negating affix counts only against the other text ("maintenance-free" where it never speaks of maintenance)
        if c.negs or c.polars or prefixed(d, c, other):
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
    xs = _single_clauses(da, taken_a, db)
    ys = _single_clauses(db, taken_b, da) if xs else []
    for ia in xs:
        ca = da.clauses[ia]
        for ib in ys:
            cb = db.clauses[ib]
            pa, pb = prefixed(da, ca, db), prefixed(db, cb, da)
            ga, gb = _polar_groups(da, ca), _polar_groups(db, cb)
            same = (ca.parity + len(pa)) % 2 == (cb.parity + len(pb)) % 2
            if frozenset((*ga, *gb)) in LINKED_GROUPS and len(ga) == len(gb) == 1 and not _counted(da, ca, db, cb):
                # "included in the rate" is "not billed": one polarity of each group, of the same sense, is a flip
                if same and aligned(
                    da.sentences[ca.sent], db.sentences[cb.sent], da.loose_words, db.loose_words, _NONE
                ):
                    diffs.append(linked_diff(da, ca, db, cb))
                    return
                continue
            if same:
                continue
            if not (
                pa
                or pb
                or ga & gb
                or (ca.negs and not ga and gb and not cb.negs)
                or (cb.negs and not gb and ga and not ca.negs)
                or (ca.negs and not cb.negs and negated_stated(da, ca, db, cb))
                or (cb.negs and not ca.negs and negated_stated(db, cb, da, ca))
                or (ga == _ALLOW and not gb and not cb.negs and _permits(db, cb))
                or (gb == _ALLOW and not ga and not ca.negs and _permits(da, ca))
                or (ga == _REQUIRE and not gb and not cb.negs and _permits(db, cb, _OBLIGATION_MODALS))
                or (gb == _REQUIRE and not ga and not ca.negs and _permits(da, ca, _OBLIGATION_MODALS))
            ):
                continue  # the difference is no polarity word denied or turned around
            if aligned(da.sentences[ca.sent], db.sentences[cb.sent], da.loose_words, db.loose_words, frozenset()):
                d = flip_diff(da, ca, db, cb) if ca.parity != cb.parity else prefix_diff(da, pa, db, cb, pb, ca)
                if d is not None:
                    diffs.append(d)
                    return


_NONE: frozenset[str] = frozenset()


def _counted(da: Doc, ca: Clause, db: Doc, cb: Clause) -> bool:
    """Does either clause state an amount ("includes up to 15 metres of cable": an allowance, beyond which a
    charge is no flip)?"""
    return any(t.kind == NUMBER for t in da.tokens[ca.first : ca.last]) or any(
        t.kind == NUMBER for t in db.tokens[cb.first : cb.last]
    )


#: the permission group, and the modals that grant a permission ("Drones may be flown" / "Drones are not allowed")
_ALLOW = frozenset(["#allow"])
_PERMISSION_MODALS = frozenset(["may", "can"])
#: the requirement group, and the modal that imposes one ("must still present a certificate" / "no longer required")
_REQUIRE = frozenset(["#require"])
_OBLIGATION_MODALS = frozenset(["must"])


def _permits(d: Doc, c: Clause, modals: frozenset[str] = _PERMISSION_MODALS) -> bool:
    """Does the clause grant a permission (or impose a duty: ``modals``) with a modal, and no polarity word of
    its own?"""
    return any(d.tokens[k].kind == FUNC and d.tokens[k].key in modals for k in range(c.first, c.last))


def _compare(text_a: str, text_b: str, learned: bool) -> ValueConflict | None:
    da, db = analyse(text_a), analyse(text_b)
    if reordered(da, db):
        return None  # one list in another order, every item kept whole (orders.py)
    diffs: list[ValueDiff] = []
    if da.clauses and db.clauses and len(da.sentences) == len(db.sentences):
        phrase_substitution(da, db, diffs)
    if not (da.signal or db.signal):
        if diffs:
            return _conflict(diffs)
        return learned_conflict(da, db, _Pair(da, db)) if learned else None
    p = _Pair(da, db)
    if da.values and db.values:
        _pair_values(p, diffs)
    if da.polar_or_neg or db.polar_or_neg:
        _pair_clauses(p, diffs)
    if not diffs and da.values and db.values and da.sentences and db.sentences:
        diffs = typed_diffs(da, db)
    if diffs and da.sentences and db.sentences:
        diffs = opposed_qualifiers(da, db, other_subjects(da, db, [d for d in diffs if not list_reorder(da, db, d)]))
        diffs = added_names(da, db, diffs)
        diffs = bound_split(da, db, date_within_span(da, db, dates_as_labels(da, db, diffs)))
        if narrowed_nouns(da, db):  # two kinds, each named by a modifier of its own: their permissions may differ
            diffs = [d for d in diffs if d.pattern != NEGATION_FLIP]
    if not diffs:
        # the rules found nothing: the learned comparison reads the same analysis and clause alignment
        return learned_conflict(da, db, p) if learned else None
    return _conflict(diffs)


def _conflict(diffs: list[ValueDiff], learned: bool = False) -> ValueConflict:
    """One diff per pattern and pair of spans: two readings of one changed value (a name read word by word
    and as a whole, 'Wayne Systems') are one diff, the one of fewest tokens (the value whole)."""
    best: dict[tuple[str, tuple[int, int], tuple[int, int]], ValueDiff] = {}
    for d in sorted(set(diffs), key=lambda d: (len(d.tokens_a) + len(d.tokens_b), d.tokens_a, d.tokens_b)):
        best.setdefault((d.pattern, d.span_a, d.span_b), d)
    uniq = sorted(best.values(), key=lambda d: (d.span_a, d.span_b, d.pattern, d.tokens_a, d.tokens_b))
    return ValueConflict(patterns=tuple(sorted({d.pattern for d in uniq})), diffs=tuple(uniq), learned=learned)


def _mirror(vc: ValueConflict | None) -> ValueConflict | None:
    if vc is None:
        return None
    diffs = [ValueDiff(d.pattern, d.tokens_b, d.tokens_a, d.span_b, d.span_a) for d in vc.diffs]
    return _conflict(diffs, vc.learned)


@text_memo(2 * TEXT_MEMO_SIZE)
def values_conflict(text_a: str, text_b: str, learned: bool = True) -> ValueConflict | None:
    """Do the two texts assert different values for the same attribute? (docs/reference/pipeline.md §4,
    SPEC-027 §2.2, SPEC-005 §5.3 patterns applied pairwise.)

    Returns None for a paraphrase with no changed value, else the distinct sorted patterns and one
    :class:`ValueDiff` per changed value (``span_a`` / ``tokens_a`` refer to ``text_a``). With ``learned``
    (the ``detector_learned`` setting), where the rules find nothing the learned comparison may find a
    conflict, marked ``learned``. Pure and memoised; symmetric by construction (the pair is compared in a
    canonical order and mirrored).
    """
    if text_a == text_b:
        return None
    if text_b < text_a:
        return _mirror(_compare(text_b, text_a, learned))
    return _compare(text_a, text_b, learned)


_RULES_ONLY: Callable[[str, str], ValueConflict | None] = partial(values_conflict, learned=False)


def conflict_check(learned: bool) -> Callable[[str, str], ValueConflict | None]:
    """:func:`values_conflict` with the learned comparison on, or the rules alone (``detector_learned``)."""
    return values_conflict if learned else _RULES_ONLY


def learned_candidates(text_a: str, text_b: str) -> tuple[Candidate, ...]:
    """The candidates the learned comparison weighs for two texts, read in the canonical order
    :func:`values_conflict` compares them in (for training and measuring it: tools/train_detector.py)."""
    if text_b < text_a:
        text_a, text_b = text_b, text_a
    da, db = analyse(text_a), analyse(text_b)
    return propose(da, db, _Pair(da, db))

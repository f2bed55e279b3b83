"""Candidate conflicts the rules left, read from the rules' own analysis, and their features (learned.py scores them).

Where :func:`~crp_core.stages.contradictions.values.values_conflict`'s rules find nothing, the analysis of the two
texts (``clauses.analyse``: values by class, negations, polarity words, clause contexts, loose sentences) proposes:

* a *value* candidate per value class that both texts state with a value the other text does not state: the first
  such value on each side, compared by ``value_compare.value_diffs`` (which names the pattern and the spans; a
  hyphenated name the other text states by its parts, "Basic-plan" / "the Basic plan", is stated); none
  where both sentences open with a numbered thing the other text lacks (``subjects.numbered_subjects``: "Bay 4
  reopens in March" / "Bay 9 reopens in May" speak of two bays) or with subjects whose words the other text does
  not state (``subjects.apart_subjects``: "Junior members may book" / "Visiting guests are allowed to book"), where a
  qualifier one text adds to all the other says scopes the value (``_qualified_scope``), between the dates of a
  period's two ends (``ranges.period_ends``), for a date inside a span the other text states or a quantity the texts
  split by its bounds (ranges.py), between weekday scopes apart or one-sided (``days.days_disjoint``) or for a name
  one text says it *also* holds (``subjects.added_names``); its feature ``narrowed``: a noun both texts state with a
  modifier on each side the other lacks ("*Freight* / *Passenger* trains", ``modifiers.narrowed_nouns``), so the
  value may be another thing's; its feature ``other_subject``: the rules' subject test (``subjects.other_subjects``)
  reads the two sentences as two subjects;
* a value candidate of the class ``interval`` for a duration in one text against an "every" rate in the other
  whose periods differ (``typed.interval_values``: "renewed every 3 years" / "at five-year intervals"), the one
  interval in two forms that the rules compare only when the two sentences state one thing;
* a *swap* candidate (swaps.py) when two items and two labels that each text states once are paired the other way
  round across the segments of the sentence ("£5 for buses and £8 for trains" / "Buses are capped at £8 and trains at
  £5"): a changed number for amounts, a shifted date for dates, a substitution for names and words; a plain
  number with no noun after it is an amount in the unit its sentence stated before it ("every 8 hours ..., the
  chain every 40"), an amount of money one of the rate before it ("30p a minute, scooters at 40p");
* a *polarity* candidate when the two texts' polarity parities (negations, negative polarity words, negating
  affixes) differ: a NEGATION_FLIP; not when the rules' subject test reads the flip's two sentences as two
  subjects (``subjects.other_subjects``: "Pupils in Form 5 may bring phones" / "Pupils in Form 2 may not bring
  phones"), each text states one of a pair of opposed qualifiers (``subjects.opposed``) or a noun both state is
  narrowed by a modifier on each side (``narrowed``: "*Annual* parking permits" / "*Daily* parking permits"); its
  feature ``narrowed_flip``, which weighed that last shape, is therefore always 0 (kept: the weights file's format).

Each candidate carries integer or rounded features (docs/decisions/detector-learned.md lists them), so the learned
score computed from them does not depend on the CPU.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Protocol

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import Doc
from crp_core.stages.contradictions.days import days_disjoint
from crp_core.stages.contradictions.flips import flip_diff, governed, prefixed, restriction_restated, without_unless
from crp_core.stages.contradictions.lexicon import (
    DATE,
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    FUNCTION_WORDS,
    NEGATION_FLIP,
    NUMBER,
    NUMBER_CHANGED,
    PAIR_MAX_CLAUSES,
    PAIR_MAX_VALUES,
    PATTERNS,
    POLAR,
    WORD,
    stem,
)
from crp_core.stages.contradictions.loose import aligned, derived
from crp_core.stages.contradictions.modifiers import Mod, modifier_swap, narrowed_nouns
from crp_core.stages.contradictions.orders import listed_alike
from crp_core.stages.contradictions.ranges import bound_split, date_within_span, period_ends
from crp_core.stages.contradictions.subjects import (
    added_names,
    apart_subjects,
    designator,
    numbered_subjects,
    opposed,
    opposed_qualifiers,
    other_subjects,
    present,
    stated_by,
)
from crp_core.stages.contradictions.swaps import Swap, swap_diffs, swap_pattern, swaps
from crp_core.stages.contradictions.tokens import Token
from crp_core.stages.contradictions.typed import INTERVAL_TOLERANCE, interval_values, spelled_names
from crp_core.stages.contradictions.value_compare import value_diffs

__all__ = ["FEATURE_NAMES", "Candidate", "ClauseScorer", "propose"]

#: the kinds of a value candidate (by value class), of a swap and of a polarity candidate
KINDS = ("count", "typed", "date", "ent", "swap", "polar", "mod")

#: every feature a candidate can carry, in the order of the weights file (a missing feature is 0)
FEATURE_NAMES: tuple[str, ...] = tuple(
    sorted(
        [
            # the pair: word overlaps, sentence counts, words of each side's own, negations, polarity words
            "words",
            "loose",
            "plain",
            "sent_same",
            "own_min",
            "own_max",
            "sents",
            "negs",
            "polars",
            # the candidate's kind and pattern
            *("kind_" + k for k in KINDS),
            *("pat_" + p for p in PATTERNS),
            # a value candidate: unstated and shared values, contexts, clause and sentence alignment, neighbours
            "unstated",
            "unstated_max",
            "shared",
            "other_changed",
            "ctx",
            "clause",
            "same_rank",
            "weak",
            "bounds_differ",
            "next_same",
            "prev_same",
            "clause_score",
            "aligned",
            "sent_loose",
            "log_ratio",
            "clause_own_min",
            "clause_own_max",
            "narrowed",
            "other_subject",
            # a swap and a polarity candidate
            "swap_values",
            "swaps",
            "flip_clauses",
            # a modifier swap: the words of the two modifiers
            "mod_words",
            # a polarity candidate: where the two polarities come from (docs/reference/detector.md, "Polarity")
            "neg_sides",
            "clean_side",
            "polar_opposed",
            "polar_agree",
            "gov_stated",
            "neg_valued",
            "only_sides",
            "unless_restated",
            "narrowed_flip",
        ]
    )
)


class ClauseScorer(Protocol):
    """The rules' clause alignment of one pair of texts: how well clause ``ia`` of text a and ``ib`` of text b
    state the same attribute (-1 when a qualifier separates them), and whether a one-sided name qualifies one."""

    def score(self, ia: int, ib: int) -> tuple[float, bool]: ...


class Candidate(NamedTuple):
    """One proposed conflict: its patterns, the value differences to show and its features."""

    patterns: tuple[str, ...]
    diffs: tuple[ValueDiff, ...]
    features: dict[str, float]


def propose(da: Doc, db: Doc, scorer: ClauseScorer) -> tuple[Candidate, ...]:
    """Every candidate conflict the analysis of the two texts proposes (value candidates by class, then a swap,
    then a polarity flip). The pair's features are read only when there is a candidate."""
    changed = _changed_classes(da, db)
    interval = _interval_change(da, db)
    given = None
    if interval is not None:
        changed.append(interval[0])
        given = interval[1]
    found = swaps(da, db)
    flipped = _parities_differ(da, db) and not restriction_restated(da, db)
    mod = modifier_swap(da, db) if not changed else None
    if not (changed or found or flipped or mod):
        return ()
    base = pair_features(da, db)
    vbase = {**base, "narrowed": float(narrowed_nouns(da, db))} if changed else base
    values = (
        _value_candidate(da, db, scorer, vbase, ch, len(changed), given if ch[0] == "interval" else None)
        for ch in changed
    )
    out = [
        c
        for c in values
        if c is not None
        and not numbered_subjects(da, db, c.diffs)
        and date_within_span(da, db, list(c.diffs))
        and bound_split(da, db, list(c.diffs))
        and opposed_qualifiers(da, db, list(c.diffs))
        and added_names(da, db, list(c.diffs))
    ]
    if found and not listed_alike(da, db):  # one list in another order swaps nothing (orders.py)
        out.append(_swap_candidate(da, db, found, base, len(changed)))
    if flipped and not opposed(da, db) and not narrowed_nouns(da, db):
        polar = _polar_candidate(da, db, base, len(changed))
        if not (da.sentences and db.sentences) or other_subjects(da, db, list(polar.diffs)):
            out.append(polar)
    if mod:
        out.append(_mod_candidate(da, db, mod, base))
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# Features of the pair
# ------------------------------------------------------------------------------------------------


def jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    """The overlap of two word sets in hundredths (1 when both are empty)."""
    return round(len(x & y) / len(x | y), 2) if x | y else 1.0


def pair_features(da: Doc, db: Doc) -> dict[str, float]:
    """The features every candidate of the pair shares."""
    own_a, own_b = len(da.plain - db.plain), len(db.plain - da.plain)
    return {
        "words": jaccard(da.words, db.words),
        "loose": jaccard(da.loose_words, db.loose_words),
        "plain": jaccard(da.plain, db.plain),
        "sent_same": float(len(da.sentences) == len(db.sentences)),
        "own_min": float(min(3, own_a, own_b)),
        "own_max": float(min(5, max(own_a, own_b))),
        "sents": float(min(3, max(len(da.sentences), len(db.sentences)))),
        "negs": float(min(2, sum(len(c.negs) for c in da.clauses) + sum(len(c.negs) for c in db.clauses))),
        "polars": float(min(2, sum(len(c.polars) for c in da.clauses) + sum(len(c.polars) for c in db.clauses))),
    }


# ------------------------------------------------------------------------------------------------
# A changed value
# ------------------------------------------------------------------------------------------------

#: a value class both texts state with values the other text does not: (class, unstated of a, unstated of b)
_Changed = tuple[str, list[int], list[int]]


def _unstated(d: Doc, cls: str, other: Doc, spelled: frozenset[str]) -> list[int]:
    """The values of class ``cls`` of ``d`` that no value of the other text states (designators left out; an
    acronym is stated by the words it abbreviates: ``spelled``, the pair's :func:`~.typed.spelled_names`); of each
    side, the first values the rules compare too (``PAIR_MAX_VALUES``): the comparison stays bounded."""
    out = []
    ys = other.groups.get(cls, ())[:PAIR_MAX_VALUES]
    for x in d.groups.get(cls, ())[:PAIR_MAX_VALUES]:
        v = d.values[x]
        t = d.tokens[v.tok]
        if cls == "ent":
            if present(t.key, other) or t.key in spelled or (v.plain and v.plain <= other.plain):
                continue
            if _hyphen_stated(t.key, other):
                continue
        elif designator(d.tokens, v.tok) or any(stated_by(t, other.tokens[other.values[y].tok]) for y in ys):
            continue
        out.append(x)
    return out


def _hyphen_stated(key: str, other: Doc) -> bool:
    """Does the other text state a hyphenated name by its parts ("D-to-Z" / "from D to Z") or a name as a part of
    a hyphenated one ("eGFR" / "eGFR-based")? Parts compare as written (a stemmed part's key differs)."""
    names = other.words | other.entity_keys
    parts = [p for p in key.split("-") if p and p not in FUNCTION_WORDS]
    if len(parts) > 1 and all(p in names for p in parts):
        return True
    return any(key in n.split("-") for n in names if "-" in n)


def _changed_classes(da: Doc, db: Doc) -> list[_Changed]:
    out = []
    spelled = spelled_names(da, db) if "ent" in da.groups and "ent" in db.groups else frozenset()
    for cls in da.groups:
        if cls in db.groups:
            ua, ub = _unstated(da, cls, db, spelled), _unstated(db, cls, da, spelled)
            if ua and ub:
                out.append((cls, ua, ub))
    return out


def _interval_change(da: Doc, db: Doc) -> tuple[_Changed, tuple[ValueDiff, ...]] | None:
    """A duration in one text against an "every" rate in the other whose periods differ (typed.interval_values:
    "every 10 minutes" / "at fifteen-minute intervals"): a changed value of the class ``interval``."""
    found = interval_values(da, db)
    if found is None:
        return None
    x, y, pa, pb = found
    if abs(pa - pb) <= INTERVAL_TOLERANCE * max(pa, pb):
        return None
    ta, tb = da.tokens[da.values[x].tok], db.tokens[db.values[y].tok]
    diff = ValueDiff(NUMBER_CHANGED, (ta.text,), (tb.text,), (ta.start, ta.end), (tb.start, tb.end))
    return ("interval", [x], [y]), (diff,)


def _kind(cls: str) -> str:
    if cls == "q:":
        return "count"
    return "typed" if cls.startswith("q:") or cls == "interval" else cls


def _key_at(d: Doc, k: int) -> str:
    return d.tokens[k].key if 0 <= k < len(d.tokens) else ""


def _log_ratio(ta: Token, tb: Token) -> float:
    """|log10| of the ratio of two quantities of one unit or one dimension (in its base unit: "10 years" / "14
    months"), in steps of a half (0 when not comparable)."""
    if ta.qty is None or tb.qty is None:
        return 0.0
    if ta.qty.unit == tb.qty.unit:
        x, y = ta.qty.base * ta.qty.scale, tb.qty.base * tb.qty.scale
    elif ta.qty.dim == tb.qty.dim and ta.qty.dim not in ("", "money") and ta.qty.readings and tb.qty.readings:
        x, y = sum(ta.qty.readings[0]) / 2, sum(tb.qty.readings[0]) / 2
    else:
        return 0.0
    if x <= 0 or y <= 0:
        return 0.0
    return min(3.0, round(abs(math.log10(x / y)) * 2) / 2)


def _value_candidate(
    da: Doc,
    db: Doc,
    scorer: ClauseScorer,
    base: dict[str, float],
    changed: _Changed,
    n_changed: int,
    given: tuple[ValueDiff, ...] | None = None,
) -> Candidate | None:
    cls, ua, ub = changed
    va, vb = da.values[ua[0]], db.values[ub[0]]
    ta, tb = da.tokens[va.tok], db.tokens[vb.tok]
    diffs = list(given) if given is not None else value_diffs(ta, tb, da.text, db.text)
    if not diffs or period_ends(da, va.tok, va.ctx, db, vb.tok, vb.ctx):
        return None
    pats = tuple(sorted({d.pattern for d in diffs}))
    f = dict(base)
    f["kind_" + _kind(cls)] = 1.0
    for p in pats:
        f["pat_" + p] = 1.0
    if ta.qty is not None and ta.qty.dim == "clock":
        # a time of day is reported as a changed number, but weighed as the point in time it also is
        f["pat_" + DATE_SHIFTED] = 1.0
    f["unstated"] = float(min(4, len(ua) + len(ub)))
    f["unstated_max"] = float(min(3, max(len(ua), len(ub))))
    f["shared"] = float(min(3, min(len(da.groups.get(cls, ua)), PAIR_MAX_VALUES) - len(ua)))
    f["other_changed"] = float(min(2, n_changed - 1))
    f["ctx"] = jaccard(va.ctx, vb.ctx)
    ca, cb = da.clauses[va.clause], db.clauses[vb.clause]
    f["clause"] = jaccard(ca.bag, cb.bag)
    f["same_rank"] = float(va.rank == vb.rank)
    f["weak"] = float(ta.sub.startswith("weak") or tb.sub.startswith("weak"))
    f["bounds_differ"] = float(ta.qty is not None and tb.qty is not None and ta.qty.bound != tb.qty.bound)
    nxt, prv = _key_at(da, va.tok + 1), _key_at(da, va.tok - 1)
    f["next_same"] = float(nxt != "" and nxt == _key_at(db, vb.tok + 1))
    f["prev_same"] = float(prv != "" and prv == _key_at(db, vb.tok - 1))
    f["clause_score"] = round(scorer.score(va.clause, vb.clause)[0], 2)
    if ca.sent < len(da.sentences) and cb.sent < len(db.sentences):
        sa, sb = da.sentences[ca.sent], db.sentences[cb.sent]
        drop = frozenset((ta.key, tb.key)) if cls == "ent" else frozenset()
        f["aligned"] = float(aligned(sa, sb, da.loose_words, db.loose_words, drop))
        f["sent_loose"] = jaccard(sa.bag, sb.bag)
        if apart_subjects(da, ca.sent, db, cb.sent) or days_disjoint(da, ca.sent, db, cb.sent):
            return None
    f["log_ratio"] = _log_ratio(ta, tb)
    own_a, own_b = len(ca.bag - db.words), len(cb.bag - da.words)
    f["clause_own_min"] = float(min(2, own_a, own_b))
    f["clause_own_max"] = float(min(3, max(own_a, own_b)))
    if _qualified_scope(f):
        return None
    f["other_subject"] = float(not other_subjects(da, db, diffs))
    return Candidate(pats, tuple(diffs), f)


def _qualified_scope(f: dict[str, float]) -> bool:
    """One sentence on each side, the rules' clause alignment reads a qualifier one text states and the other
    lacks (score -1), and one text has no word of its own, in the pair or in the value's clause: the other text
    says all it says plus the qualifier ("Backups are kept for 30 days" / "Backups are kept for 90 days in the EU
    region"), so its value is the qualified scope's, as the rules read it."""
    return f["sents"] == 1.0 and f["clause_score"] == -1.0 and f["own_min"] == 0.0 and f["clause_own_min"] == 0.0


# ------------------------------------------------------------------------------------------------
# A swap of two items between two labels
# ------------------------------------------------------------------------------------------------


def _swap_candidate(da: Doc, db: Doc, found: list[Swap], base: dict[str, float], n_changed: int) -> Candidate:
    pattern = swap_pattern(da, found)
    f = dict(base)
    f["kind_swap"] = 1.0
    f["pat_" + pattern] = 1.0
    f["swap_values"] = float(any(k[:1] in "#@" for q in found for k in q))
    f["swaps"] = float(min(3, len(found)))
    f["other_changed"] = float(min(2, n_changed))
    return Candidate((pattern,), swap_diffs(da, db, found[0], pattern), f)


# ------------------------------------------------------------------------------------------------
# A modifier swapped before a shared noun
# ------------------------------------------------------------------------------------------------


def _mod_candidate(da: Doc, db: Doc, mod: Mod, base: dict[str, float]) -> Candidate:
    a0, a1, b0, b1 = mod
    ta, tb = da.tokens[a0:a1], db.tokens[b0:b1]
    f = dict(base)
    f["kind_mod"] = 1.0
    f["pat_" + ENTITY_SUBSTITUTED] = 1.0
    f["mod_words"] = float(len(ta) + len(tb))
    diff = ValueDiff(
        ENTITY_SUBSTITUTED,
        tuple(t.text for t in ta),
        tuple(t.text for t in tb),
        (ta[0].start, ta[-1].end),
        (tb[0].start, tb[-1].end),
    )
    return Candidate((ENTITY_SUBSTITUTED,), (diff,), f)


# ------------------------------------------------------------------------------------------------
# A changed polarity
# ------------------------------------------------------------------------------------------------


def parity(d: Doc, other: Doc) -> int:
    """The text's polarity against the other text: its negations, negative polarity words and negating affixes
    that count against the other, mod 2."""
    return sum(c.parity + len(prefixed(d, c, other)) for c in d.clauses) % 2


def _polar_diff(da: Doc, db: Doc) -> ValueDiff:
    """The flip to show: two clauses of opposite polarity sharing a word, else the first negation, polarity word
    or negating affix of either text against the start of the other."""
    for ca in da.clauses[:PAIR_MAX_CLAUSES]:
        for cb in db.clauses[:PAIR_MAX_CLAUSES]:
            if ca.parity != cb.parity and ca.bag & cb.bag:
                d = flip_diff(da, ca, db, cb)
                if d is not None:
                    return d
    for doc, a_side in ((da, True), (db, False)):
        for c in doc.clauses:
            cues = (*c.negs, *c.polars, *c.prefixed)
            if cues:
                t = doc.tokens[min(cues)]
                if a_side:
                    return ValueDiff(NEGATION_FLIP, (t.text,), (), (t.start, t.end), (0, 0))
                return ValueDiff(NEGATION_FLIP, (), (t.text,), (0, 0), (t.start, t.end))
    return ValueDiff(NEGATION_FLIP, (), (), (0, 0), (0, 0))


def _parities_differ(da: Doc, db: Doc) -> bool:
    return (da.polar_or_neg or db.polar_or_neg) and parity(da, db) != parity(db, da)


def _polar_candidate(da: Doc, db: Doc, base: dict[str, float], n_changed: int) -> Candidate:
    f = dict(base)
    f["kind_polar"] = 1.0
    f["pat_" + NEGATION_FLIP] = 1.0
    f["other_changed"] = float(min(2, n_changed))
    sa, sb = da.sentences[:PAIR_MAX_CLAUSES], db.sentences[:PAIR_MAX_CLAUSES]
    ca, cb = da.clauses[:PAIR_MAX_CLAUSES], db.clauses[:PAIR_MAX_CLAUSES]
    f["sent_loose"] = max((jaccard(x.bag, y.bag) for x in sa for y in sb), default=0.0)
    f["flip_clauses"] = float(any(x.parity != y.parity and x.bag & y.bag for x in ca for y in cb))
    f.update(polarity_features(da, db))
    f["narrowed_flip"] = float(narrowed_nouns(da, db))
    return Candidate((NEGATION_FLIP,), (_polar_diff(da, db),), f)


def _cued(d: Doc, other: Doc) -> bool:
    """Does the text carry a negation, a negative polarity word or a negating prefix that counts against the
    other text?"""
    toks = d.tokens
    return any(
        c.negs or any(toks[k].sign < 0 for k in c.polars) or prefixed(d, c, other) for c in d.clauses[:PAIR_MAX_CLAUSES]
    )


#: modal verbs read as a polarity word of a group: "may", "can" grant a permission ("may not" denies it, as
#: "prohibited" does); "must", "need" are an obligation, "need not" its denial, and "must not" a prohibition
_MODAL_GROUPS = {
    "may": "#allow",
    "can": "#allow",
    "cannot": "#allow",
    "can't": "#allow",
    "must": "#require",
    "need": "#require",
    "needs": "#require",
    "needn't": "#require",
}


def _polar_signs(d: Doc) -> dict[str, set[int]]:
    """Each polarity group the text states -> the signs it asserts it with, a negation in the clause turning the
    word's sign round ("not allowed" is the negative of "allowed", as "prohibited" is); modal verbs count in the
    groups of :data:`_MODAL_GROUPS` ("may use" / "No flash photography ... may": opposite permissions)."""
    out: dict[str, set[int]] = {}
    toks = d.tokens
    for c in d.clauses[:PAIR_MAX_CLAUSES]:
        turn = -1 if len(c.negs) % 2 else 1
        for k in c.polars[:PAIR_MAX_VALUES]:
            t = toks[k]
            out.setdefault(t.key, set()).add(t.sign * turn)
        for t in toks[c.first : c.last]:
            group = _MODAL_GROUPS.get(t.text.lower())
            if group is None:
                continue
            if group == "#require" and turn < 0 and t.text.lower() == "must":
                group, turn_here = "#allow", -1  # "must not": prohibited
            else:
                turn_here = turn
            out.setdefault(group, set()).add(turn_here)
    return out


def _governed_stated(d: Doc, other: Doc) -> bool:
    """Does the other text state, in a clause without a negation, the word a negation of this text governs
    ("It does not fold" / "It folds flat": the stem "fold")?"""
    toks = d.tokens
    bare: set[str] = set()
    for c in other.clauses[:PAIR_MAX_CLAUSES]:
        if not c.negs:
            bare.update(stem(t.text.lower()) for t in other.tokens[c.first : c.last] if t.kind in (WORD, POLAR))
    for c in d.clauses[:PAIR_MAX_CLAUSES]:
        for k in c.negs:
            g = governed(toks, k, c.last)
            if g >= 0 and toks[g].kind in (WORD, POLAR) and stem(toks[g].text.lower()) in bare:
                return True
    return False


def _neg_valued(d: Doc) -> bool:
    """A negation in a clause that states a number or a date: mostly a bound written as a negation ("not
    loaded beyond 75%" / "at or below three quarters"), no flip."""
    toks = d.tokens
    return any(
        c.negs and any(t.kind in (NUMBER, DATE) for t in toks[c.first : c.last]) for c in d.clauses[:PAIR_MAX_CLAUSES]
    )


def polarity_features(da: Doc, db: Doc) -> dict[str, float]:
    """The features of a polarity candidate that say where each text's polarity comes from: how many texts carry
    a negation; whether one text carries no negative cue at all; a polarity group both texts assert with opposite
    or with the same sign (negations in the clause counted); a negated word the other text states without a
    negation; a negation beside a number or a date; how many texts restrict with "only"."""
    sa, sb = _polar_signs(da), _polar_signs(db)
    shared = sa.keys() & sb.keys()
    cued_a, cued_b = _cued(da, db), _cued(db, da)
    return {
        "neg_sides": float(any(c.negs for c in da.clauses) + any(c.negs for c in db.clauses)),
        "clean_side": float(cued_a != cued_b),
        "polar_opposed": float(
            any(x != y for g in shared for x in sa[g] for y in sb[g]) or _base_opposed(da, db) or _denied(da, db)
        ),
        "polar_agree": float(any(sa[g] & sb[g] for g in shared) or _polar_named(da, db) or _polar_named(db, da)),
        "gov_stated": float(_governed_stated(da, db) or _governed_stated(db, da)),
        "neg_valued": float(_neg_valued(da) or _neg_valued(db)),
        "only_sides": float(_restricted(da) + _restricted(db)),
        "unless_restated": float(without_unless(da, db) or without_unless(db, da)),
    }


def _base_opposed(da: Doc, db: Doc) -> bool:
    """Does one text deny with a negating prefix a word whose base the other text asserts with no negation in its
    clause ("the ladder is unsafe" / "the ladder is safe")? The two assert one word with opposite signs, as two
    polarity words of one group do."""
    for d, other in ((da, db), (db, da)):
        if any(prefixed(d, c, other) for c in d.clauses[:PAIR_MAX_CLAUSES]) and not other.negated:
            return True
    return False


def _denied(da: Doc, db: Doc) -> bool:
    """Does a clause of one text deny with a negation and no polarity word what a clause of the other text, sharing a
    word with it, asserts with a positive polarity word and no negation ("Towels are included in the pass" / "Towels
    are not part of the pass")?"""
    for d, other in ((da, db), (db, da)):
        toks = other.tokens
        asserted = [
            c for c in other.clauses[:PAIR_MAX_CLAUSES] if not c.negs and any(toks[k].sign > 0 for k in c.polars)
        ]
        denied = [c for c in d.clauses[:PAIR_MAX_CLAUSES] if c.negs and not c.polars]
        if any(x.bag & y.bag for x in asserted for y in denied):
            return True
    return False


def _polar_named(d: Doc, other: Doc) -> bool:
    """Does the other text name, as a plain word, the state a polarity word of this text asserts ("will be closed" /
    "the lock closure runs": a derivation of the word itself, not of its group, so "opening hours" names no
    closing), with no polarity word of its own?"""
    if any(c.polars or c.negs for c in other.clauses[:PAIR_MAX_CLAUSES]):
        return False
    return any(
        derived(stem(d.tokens[k].text.lower()), other.loose_words)
        for c in d.clauses[:PAIR_MAX_CLAUSES]
        if not c.negs
        for k in c.polars[:PAIR_MAX_VALUES]
    )


def _restricted(d: Doc) -> bool:
    """Does the text restrict with "only" ("permitted only from the primary room" denies the backup room
    without a negation word)?"""
    return any(t.key == "only" for t in d.tokens[: PAIR_MAX_VALUES * 4])

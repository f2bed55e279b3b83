"""Which thing a sentence is about, and whether a value is stated in the other text (docs/decisions/detector.md,
"Subjects: which thing, not a changed value"). Serves the pairing in :mod:`.values`: a changed name or designator
that opens both sentences (which gate, which district, which country) is another subject, not a changed value."""

from __future__ import annotations

import re
from typing import NamedTuple

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import BE_FORMS, Doc, analyse
from crp_core.stages.contradictions.lexicon import (
    ARTICLES,
    BREAK,
    DATE,
    DATE_SHIFTED,
    ENTITY,
    ENTITY_SUBSTITUTED,
    FUNC,
    MAGNITUDE_ALTERED,
    NEG,
    NEGATION_FLIP,
    NUMBER,
    NUMBER_CHANGED,
    NUMBER_WORDS,
    PAIR_MAX_VALUES,
    POLAR,
    UNITS,
    WORD,
    stem,
)
from crp_core.stages.contradictions.loose import Sentence, derived, subject_end
from crp_core.stages.contradictions.memos import text_memo
from crp_core.stages.contradictions.tokens import Token
from crp_core.stages.contradictions.value_compare import same_value


def present(e: str, other: Doc) -> bool:
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


def equal_pair(a: Token, b: Token) -> bool:
    return same_value(a, b) and (a.qty is None or b.qty is None or a.qty.bound * b.qty.bound >= 0)


def stated_by(a: Token, b: Token) -> bool:
    """Does ``b`` state the value ``a`` states? Equal values; two dates also need a part both state
    ("Sunday" says nothing of "14 December")."""
    if not equal_pair(a, b):
        return False
    if a.date is None or b.date is None:
        return True
    return any(x and y for ra in a.date.readings for rb in b.date.readings for x, y in zip(ra, rb))


#: a preposition that opens a scope frame ("In the US, ...", "For Zone 3, ...", "On Line 2, ...")
_SCOPE_FRAMES = frozenset(["in", "for", "on", "at", "within", "across", "under"])
#: an auxiliary that ends a sentence's subject ("Year 7 pupils may ...", "ballots from Ward 2 are counted")
_AUXILIARIES = frozenset(["must", "may", "can", "could", "should", "shall", "will", "would", "might"])


def designator(toks: tuple[Token, ...], k: int) -> bool:
    """Is the number at token ``k`` a designator ("Falcon 9", "Ward 2"): part of a name, no amount?"""
    return _designator(toks, k, 0)


def _designator(toks: tuple[Token, ...], k: int, first: int) -> bool:
    """A plain number right after a capitalised word names a thing ("Ward 2", "District 9", "Year 7"),
    it is no amount of anything; so does a scale before a noun ("the 1:25,000 sheets": which map series)."""
    t = toks[k]
    if t.kind == NUMBER and t.qty is not None and t.qty.dim == "ratio":
        return k + 1 < len(toks) and toks[k + 1].kind == WORD
    if t.kind != NUMBER or t.qty is None or t.qty.dim != "" or t.qty.bound != 0 or k <= first:
        return False
    p = toks[k - 1]
    return p.kind in (WORD, ENTITY) and p.text[:1].isupper() and p.end < t.start


#: a verb that ends a subject right after its number ("pump 2 has ...", "clarifier 1 is ...", "line 3 will ...")
_SUBJECT_VERBS = _AUXILIARIES | BE_FORMS | frozenset(["has", "have", "had"])


def _numbered_noun(toks: tuple[Token, ...], k: int, first: int, last: int) -> bool:
    """A plain number between the lower-case noun that opens a sentence and the sentence's verb says which one of
    a series ("Primary clarifier 1 has ..." / "Primary clarifier 2 has ..."), as a capitalised word before it does
    ("Ward 2"). A participle before it states an amount ("children aged 5 are ..."), and so does a number before a
    noun; a noun inside a prepositional phrase ("the port of gateway 3 is ...") is left to the other rules: only
    an article may stand among the words before the number."""
    t = toks[k]
    if t.kind != NUMBER or t.qty is None or t.qty.dim != "" or t.qty.bound != 0 or not first < k < last - 1:
        return False
    p = toks[k - 1]
    return (
        all(u.kind == WORD or u.key in ARTICLES for u in toks[first : k - 1])
        and p.kind == WORD
        and p.text.isalpha()
        and p.text.islower()
        and not p.text.endswith("ed")
        and p.end < t.start
        and toks[k + 1].key in _SUBJECT_VERBS
    )


def _unstated(d: Doc, k: int, other: Doc) -> bool:
    """Is the value at token ``k`` missing from the other text?"""
    t = d.tokens[k]
    if t.kind == ENTITY:
        return not present(t.key, other)
    return not any(stated_by(t, other.tokens[v.tok]) for v in other.values[:PAIR_MAX_VALUES])


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
        elif lead >= 0 and t.kind == POLAR and t.key not in other.words:
            return _Subject(True, False, True)  # "Delivery within the UK is free" / "... to the EU costs £450"
        elif lead >= 0 and t.kind == BREAK:
            if framed and not cut:
                # "In the US, a varietal wine must ...": the scope is the subject, and what it says may differ
                return _Subject(True, True, _more(d, k, last, other))
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
    if t.kind == ENTITY or _designator(toks, k, first) or _numbered_noun(toks, k, first, last):
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


def other_subjects(da: Doc, db: Doc, diffs: list[ValueDiff]) -> list[ValueDiff]:
    """Leave out the diffs of two sentences about different things: each opens with a name or a
    designator the other text lacks (which gate, which district, which country) and either says more
    that differs ("Gate A closes at 9" / "Gate B closes at 10") or the name stands before an auxiliary
    ("pupils of Year 7 may leave" / "pupils of Year 9 may not leave"). A list of names swapped between
    two attributes states both names on both sides, so it is no other subject."""
    verdict: dict[tuple[int, int], bool] = {}
    keys = [(_sentence_of(da, d.span_a[0]), _sentence_of(db, d.span_b[0])) for d in diffs]
    brackets = _brackets(da, db, diffs, keys) | _date_tiers(da, db, keys)
    out: list[ValueDiff] = []
    for diff, key in zip(diffs, keys):
        other = verdict.get(key)
        if key in brackets:
            other = True
        if other is None:
            sa, sb = da.sentences[key[0]], db.sentences[key[1]]
            xa, xb = _subject(da, sa.first, sa.last, db), _subject(db, sb.first, sb.last, da)
            other = verdict[key] = (
                xa.changed
                and xb.changed
                and ((xa.more and xb.more) or (xa.before_aux and xb.before_aux) or diff.pattern == NEGATION_FLIP)
            ) or prefixed_group(da, sa.first, sa.last, db, sb.first, sb.last)
        if not other:
            out.append(diff)
    return out


def _bounded(d: Doc, span: tuple[int, int]) -> bool:
    """Does a bounded value ("over 300", "fewer than 300") end at the span's end?"""
    return any(t.qty is not None and t.qty.bound != 0 and t.end == span[1] for t in d.tokens)


def _brackets(da: Doc, db: Doc, diffs: list[ValueDiff], keys: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The sentence pairs that state one number with opposite bounds ("for flocks of over 300 sheep" / "of fewer
    than 300 sheep") and another changed value: two brackets of a tiered rule (the rate of each), as a bounded
    group is another subject with more (:func:`_bounded_group`). The bounds reversed alone ("at least 6 months" /
    "at most 6 months") stay a flip."""
    flips = {
        k
        for d, k in zip(diffs, keys)
        if d.pattern == NEGATION_FLIP and _bounded(da, d.span_a) and _bounded(db, d.span_b)
    }
    if not flips:
        return set()
    return {k for d, k in zip(diffs, keys) if k in flips and d.pattern != NEGATION_FLIP}


#: the words before a date that bound a period on one side: what came before it, and what came after it
_DATE_EARLIER = frozenset(["before", "until", "till", "prior"])  # "prior" as in "prior to"
_DATE_LATER = frozenset(["after", "since"])


def _date_side(d: Doc, k: int) -> tuple[int, str]:
    """(-1, the word bounded) when the date at token ``k`` closes a period ("bought before 1 April", "prior to",
    "until"), (1, the word) when it opens one ("bought after 1 April", "on or after", "since"), (0, "") otherwise.
    A length of time before the bound makes the date an anchor, no bound ("30 days after 1 June": one deadline)."""
    toks = d.tokens
    j = k - 1
    if j >= 1 and toks[j].key == "to" and toks[j - 1].key == "prior":
        j -= 1
    key = toks[j].key if j >= 0 else ""
    side = -1 if key in _DATE_EARLIER else 1 if key in _DATE_LATER else 0
    if not side:
        return 0, ""
    j -= 1
    if j >= 1 and toks[j].text.lower() == "or" and toks[j - 1].key == "on":
        j -= 2  # "on or after"
    if j < 0 or toks[j].qty is not None or toks[j].kind not in (WORD, POLAR) or toks[j].text.lower() in UNITS:
        return 0, ""  # "the day after 1 May": an anchor
    return side, toks[j].key


def _date_tiers(da: Doc, db: Doc, keys: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The sentence pairs of ``keys`` that are two tiers of one date (:func:`_tiered`)."""
    return {key for key in set(keys) if _tiered(da, key[0], db, key[1])}


def _tiered(da: Doc, ia: int, db: Doc, ib: int) -> bool:
    """Do sentences ``ia`` and ``ib`` bound one date from opposite sides after the same word ("bought before 1 April
    2025" / "purchased on or after 1 April 2025")? Then they state two tiers of a rule, each with its own value
    ("valid for 12 months" / "for 6 months"), as two brackets of a number do (:func:`_brackets`). A sentence that
    bounds a date from both sides ("£20 until 1 April and £25 after 1 April") states both tiers itself: no tier."""
    sides_a = _sentence_date_sides(da, da.sentences[ia])
    sides_b = _sentence_date_sides(db, db.sentences[ib]) if sides_a else []
    return any(
        x[0] * y[0] == -1 and x[1] == y[1] and same_value(da.tokens[i], db.tokens[j])
        for i, x in sides_a
        for j, y in sides_b
    )


def _sentence_date_sides(d: Doc, sent: Sentence) -> list[tuple[int, tuple[int, str]]]:
    """The bounded dates of one sentence with their sides; none when it bounds dates from both sides."""
    found = [(k, _date_side(d, k)) for k in range(sent.first, sent.last) if d.tokens[k].kind == DATE]
    found = [(k, s) for k, s in found if s[0]]
    return [] if len({s[0] for _, s in found}) > 1 else found


def _predicate_keys(d: Doc, start: int, last: int) -> frozenset[str]:
    """The words of a sentence's predicate (its tokens from ``start``, where its subject ends, to ``last``)."""
    return frozenset(t.key for t in d.tokens[start:last] if t.kind in (WORD, POLAR, NEG, FUNC))


def _group_end(toks: tuple[Token, ...], a: int, b: int) -> int:
    """Where the group a sentence [a, b) speaks of ends: at the subject's end (its first modal, form of be / have /
    do or negation), else, in a sentence with none of those, at its first value ("A non-resident permit costs
    $90": the words before the value name the group); ``a`` when neither is found."""
    end = subject_end(toks, a, b)
    if end != a:
        return end
    for j in range(a, b):
        if toks[j].kind == BREAK:
            return a
        if toks[j].kind in (NUMBER, DATE):
            return j if any(t.kind in (WORD, ENTITY) for t in toks[a:j]) else a
    return a


def prefixed_group(da: Doc, fa: int, la: int, db: Doc, fb: int, lb: int) -> bool:
    """Do two sentences state one predicate of two groups, one named with a negating prefix on the other's
    word ("Non-members can book courts up to 2 days ahead" / "Members can book courts up to 7 days ahead")?
    The prefixed word stands in the subject (before the first modal, form of be / have / do or negation; in a
    sentence with none, before its first value: "A non-resident permit costs $90" / "A resident permit costs
    $45"), the other text states its base bare, and the predicates carry the same words: another subject, no
    changed value and no flip. A predicate in other words ("Barbless hooks are mandatory" / "Barbed hooks may be
    used") keeps the prefix a negation."""
    ea, eb = _group_end(da.tokens, fa, la), _group_end(db.tokens, fb, lb)
    if ea == fa or eb == fb:
        return False
    if not (_prefixed_subject(da, fa, ea, db, fb, eb) or _prefixed_subject(db, fb, eb, da, fa, ea)):
        return False
    return _predicate_keys(da, ea, la) == _predicate_keys(db, eb, lb)


def _prefixed_subject(d: Doc, first: int, end: int, other: Doc, ofirst: int, oend: int) -> bool:
    """Does the subject [first, end) of ``d`` carry a prefixed word whose base the other subject states bare?"""
    mine = [t.key for t in d.tokens[first:end] if t.sub == "negpfx"]
    if not mine:
        return False
    otoks = other.tokens[ofirst:oend]
    if any(t.sub == "negpfx" for t in otoks):
        return False
    own = {t.key for t in otoks}
    return any(k in own for k in mine)


def numbered_subjects(da: Doc, db: Doc, diffs: tuple[ValueDiff, ...]) -> bool:
    """Do the differences lie in two sentences that each open with a numbered thing the other text lacks ("Bay 4
    reopens in March" / "Bay 9 reopens in May", "Press 2 is ..." / "Press 4's ...", "gradle 8.4 requires Java 17"
    / "gradle 8.5 requires Java 21")? The number names which thing: a difference elsewhere in the two sentences is
    another subject's value, and the number itself is no changed value where each sentence states another value
    the other text lacks."""
    if not (diffs and da.sentences and db.sentences):
        return False
    for d in diffs:
        sa, sb = da.sentences[_sentence_of(da, d.span_a[0])], db.sentences[_sentence_of(db, d.span_b[0])]
        ka, kb = _opening_number(da, sa.first, sa.last, db), _opening_number(db, sb.first, sb.last, da)
        if ka < 0 or kb < 0:
            return False
        at_a, at_b = da.tokens[ka].start == d.span_a[0], db.tokens[kb].start == d.span_b[0]
        if (at_a or at_b) and not (_more(da, ka + 1, sa.last, db) and _more(db, kb + 1, sb.last, da)):
            return False
    return True


def _opening_number(d: Doc, first: int, last: int, other: Doc) -> int:
    """The token of the number that names what the sentence is about (a designator, or a plain number after the
    sentence's first word) when the other text lacks it, or -1."""
    toks = d.tokens
    k = next((j for j in range(first, last) if toks[j].kind in (NUMBER, DATE, ENTITY)), -1)
    if k >= 0 and toks[k].kind == ENTITY and k + 1 < last and _plain(toks[k + 1]):
        k += 1  # "Press 2": the name's number
    named = k == first + 1 and toks[first].kind in (WORD, ENTITY) and _plain(toks[k])  # "gradle 8.4"
    if k < 0 or not (named or _designator(toks, k, first) or _numbered_noun(toks, k, first, last)):
        return -1
    return k if _unstated(d, k, other) else -1


def apart_subjects(da: Doc, ia: int, db: Doc, ib: int) -> bool:
    """Do sentences ``ia`` of ``da`` and ``ib`` of ``db`` each open with a subject (the words before the first modal,
    form of be / have / do or negation) none of whose words the other text states, not even as a derivation
    ("*Junior members* may book ..." / "*Visiting guests* are allowed to book ...")? Then a value each states is
    another thing's: the learned comparison proposes no value candidate between the two sentences. So do two tiers
    of one date (:func:`_tiered`)."""
    return (_foreign_subject(da, ia, db) and _foreign_subject(db, ib, da)) or _tiered(da, ia, db, ib)


def _foreign_subject(d: Doc, i: int, other: Doc) -> bool:
    """Does sentence ``i`` open with a subject whose words the other text does not state?"""
    s = d.sentences[i]
    words = [t for t in d.tokens[s.first : subject_end(d.tokens, s.first, s.last)] if t.kind in (WORD, ENTITY)]
    return bool(words) and not any(derived(t.key, other.loose_words) or present(t.key, other) for t in words)


def _plain(t: Token) -> bool:
    """A number with no unit and no bound: a designator or a release after a name."""
    return t.kind == NUMBER and t.qty is not None and t.qty.dim == "" and t.qty.bound == 0


#: qualifiers that name two kinds or parts of one thing ("Adult day tickets" / "Child day tickets", "Half-day treks" /
#: "Full-day treks", "the upper jaw" / "the lower jaw", "Freight trains" / "Passenger trains", "the summer timetable" /
#: "the winter timetable", "the north ward" / "the south ward"), as stems; words whose stem is also a common word of
#: another sense stay out ("day" / "night": "per day"; "short" / "long": "3 metres long")
OPPOSED_QUALIFIERS = (
    ("adult", "child"),
    ("half", "full"),
    ("upper", "lower"),
    ("inner", "outer"),
    ("junior", "senior"),
    ("indoor", "outdoor"),
    ("weekday", "weekend"),
    ("interior", "exterior"),
    ("domestic", "international"),
) + tuple(
    (stem(x), stem(y))
    for x, y in (
        ("freight", "passenger"),
        ("loaded", "empty"),
        ("next", "last"),
        ("standard", "express"),
        ("theory", "practical"),
        ("beginner", "advanced"),
        ("male", "female"),
        ("men", "women"),
        ("boys", "girls"),
        ("single", "double"),
        ("arrival", "departure"),
        ("wet", "dry"),
        ("hot", "cold"),
        ("small", "large"),
        ("private", "commercial"),
        ("inbound", "outbound"),
        ("summer", "winter"),
        ("spring", "autumn"),
        ("north", "south"),
        ("east", "west"),
    )
)
_VALUE_PATTERNS = frozenset([NUMBER_CHANGED, MAGNITUDE_ALTERED, DATE_SHIFTED])
_LETTERS = re.compile(r"[a-z]+")


@text_memo()
def _stems(text: str) -> frozenset[str]:
    """The stems of every word of ``text``, a hyphenated word's parts ("Half-day") and a possessive's noun included
    (memoised per text)."""
    return frozenset(stem(w) for t in analyse(text).tokens for w in _LETTERS.findall(t.text.lower()))


#: words that name the units of a thing beyond the first or the included ones ("each additional class", "every
#: further journey"), after a distributive determiner
MARGINAL_WORDS = frozenset(["additional", "further", "extra", "subsequent"])
_DISTRIBUTIVE = frozenset(["each", "every", "any", "per"])


def _marginal(d: Doc) -> bool:
    """Does the text price or count the units of a thing beyond the first ("Each additional class costs £50",
    "any further journeys that day are free")?"""
    words = [t.text.lower() for t in d.tokens]
    return any(w in _DISTRIBUTIVE and nxt in MARGINAL_WORDS for w, nxt in zip(words, words[1:]))


def _margin_word(d: Doc) -> bool:
    return any(t.text.lower() in MARGINAL_WORDS for t in d.tokens)


def marginal_unit(da: Doc, db: Doc) -> bool:
    """Does one text state the value of each unit beyond the first ("Each additional class costs £50 to renew") and
    the other none of those words ("The renewal fee for one class is £200")? Then the texts state the values of two
    kinds of one thing: the first or the whole, and each one more. Both texts naming the further units
    ("each additional class" / "every further class") keep their diffs."""
    return (_marginal(da) and not _margin_word(db)) or (_marginal(db) and not _margin_word(da))


def opposed(da: Doc, db: Doc) -> bool:
    """Does each text state one of a pair of opposed qualifiers and not the other ("Junior members ..." / "Senior
    members ...")? Then the texts speak of two kinds of one thing; so do a thing and each further unit of it
    (:func:`marginal_unit`)."""
    wa, wb = _stems(da.text), _stems(db.text)
    return (
        marginal_unit(da, db)
        or compound_kinds(da, db)
        or any(
            (x in wa) != (x in wb) and (y in wa) != (y in wb) and (x in wa) != (y in wa) for x, y in OPPOSED_QUALIFIERS
        )
    )


#: a hyphenated word of two lower-case parts, the first a word of three letters or more ("kiln-dried",
#: "single-cylinder"; "Pb-equivalent" names an element, no kind)
_COMPOUND = re.compile(r"([a-z]{3,})-([a-z]+)")


@text_memo()
def _compounds(text: str) -> dict[str, frozenset[str]]:
    """The text's hyphenated words by their second part's stem: the stems of the first parts it joins to it
    ("kiln-dried" -> {"dri": {"kiln"}}), number words left out ("one-hour" states a value, not a kind); memoised."""
    out: dict[str, set[str]] = {}
    for t in analyse(text).tokens:
        m = _COMPOUND.fullmatch(t.text.lower())
        if m and m.group(1) not in NUMBER_WORDS:
            out.setdefault(stem(m.group(2)), set()).add(stem(m.group(1)))
    return {k: frozenset(v) for k, v in out.items()}


def compound_kinds(da: Doc, db: Doc) -> bool:
    """Do the texts name two kinds of one thing by the first parts of one hyphenated word ("Kiln-dried logs" /
    "Air-dried logs", "a single-cylinder softener" / "Twin-cylinder softeners"): the same second part, and each
    text's first part one the other text does not state? Their values are the values of two kinds."""
    ca, cb = _compounds(da.text), _compounds(db.text)
    wa, wb = _stems(da.text), _stems(db.text)
    return any(not (ca[k] & wb) and not (cb[k] & wa) for k in ca.keys() & cb.keys())


def opposed_qualifiers(da: Doc, db: Doc, diffs: list[ValueDiff]) -> list[ValueDiff]:
    """Leave out the changed values and flips of two texts that each state one of a pair of opposed qualifiers and
    not the other ("Half-day treks cost $95" / "Full-day treks cost $160"; "Juniors may not enter the final" /
    "Seniors may enter the final"): the values and the permissions of two kinds of one thing. A text that states
    both (a swap: "Adult tickets cost £14 and child tickets £9") keeps its diffs, and so does a changed name."""
    if not opposed(da, db):
        return diffs
    return [d for d in diffs if d.pattern not in _VALUE_PATTERNS and d.pattern != NEGATION_FLIP]


#: words that say a text adds to what it names ("X also runs the cameras on Y", "as well")
_ADDING = frozenset(["also"])


def _adds(d: Doc) -> bool:
    return any(t.text.lower() in _ADDING for t in d.tokens)


def added_names(da: Doc, db: Doc, diffs: list[ValueDiff]) -> list[ValueDiff]:
    """Leave out the changed names of two texts one of which says it *also* holds ("Permits are sold at the ranger
    station" / "Permits can also be bought online through the DNR portal"): the name it states is one more, beside
    the other text's, not one in its place. Two texts that both say "also", or neither, keep their diffs."""
    if _adds(da) == _adds(db):
        return diffs
    return [d for d in diffs if d.pattern != ENTITY_SUBSTITUTED]

"""Two sentences equal but for one noun phrase after a preposition or a copula: the phrase names the value
(docs/decisions/detector.md, "Reworded statements"). Serves :mod:`.values`."""

from __future__ import annotations

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import DAYS_KEY, Doc
from crp_core.stages.contradictions.lexicon import DATE, ENTITY, ENTITY_SUBSTITUTED, NUMBER, PAIR_MAX_CLAUSES, WORD
from crp_core.stages.contradictions.tokens import Token, is_common_word
from crp_core.stages.contradictions.value_compare import same_value

#: a determiner before a noun phrase, and what may stand before it when the phrase is a complement
_DETERMINERS = frozenset(["the", "a", "an", "its", "their", "our", "your"])
#: a word opening a sentence that says how much of its subject, not which ("Any damage ..." / "Damage ..."): left
#: out when one sentence opens with it and the other does not
_LEADING = frozenset(["any", "all", "every", "each", "the", "a", "an"])
_PREPOSITIONS = frozenset(["to", "at", "in", "into", "from", "by", "with", "via", "on"])
_COMPLEMENT_BEFORE = _PREPOSITIONS | frozenset(["is", "are", "was", "were"])
#: the longest noun phrase read as a substituted name ("the old town square")
_PHRASE_MAX = 4


def _token_same(a: Token, b: Token) -> bool:
    if a.kind != b.kind:
        # a word capitalised where it opens one sentence only ("Spills ..." / "Any spills ...") is that word
        return {a.kind, b.kind} == {ENTITY, WORD} and "weak" in (a.sub, b.sub) and a.key == b.key
    if a.kind in (NUMBER, DATE):
        return same_value(a, b)
    return a.key == b.key


def _symbols(ma: tuple[Token, ...], mb: tuple[Token, ...]) -> bool:
    """One lower-case word against another, neither a common English word: a symbol, command or code
    ("mode is set to rstp" / "set to mst"), a value even with no determiner before it."""
    return (
        len(ma) == 1
        and len(mb) == 1
        and all(t.kind == WORD and t.sub != "negpfx" and not is_common_word(t.text.lower()) for t in (*ma, *mb))
    )


def _technical(ma: tuple[Token, ...], mb: tuple[Token, ...]) -> bool:
    """Two lower-case noun phrases after a preposition with no word in common, each holding a word no common
    English word: a substance, material or agent named without a determiner ("deacidified with magnesium
    bicarbonate" / "with calcium hydroxide"), a value like a name. A phrase of common words ("with warm water") is
    no such name, nor an adjective after a copula ("is flammable" / "is inflammable": the caller asks a
    preposition)."""

    def technical(m: tuple[Token, ...]) -> bool:
        return all(t.kind == WORD and t.sub != "negpfx" and t.text.islower() for t in m) and any(
            not is_common_word(t.key) for t in m
        )

    return technical(ma) and technical(mb) and not {t.key for t in ma} & {t.key for t in mb}


def _scoped_days(m: tuple[Token, ...]) -> bool:
    """A set of weekdays read as the scope of a value (clauses: "open on weekdays from 9 am" / "on Mondays"):
    another scope or a narrower one, never a substituted value."""
    return any(t.kind == WORD and t.key.startswith(DAYS_KEY) for t in m)


def _strip(m: tuple[Token, ...]) -> tuple[Token, ...]:
    return m[1:] if m and m[0].key in _DETERMINERS else m


def _named(ma: tuple[Token, ...], mb: tuple[Token, ...]) -> bool:
    """A name against a noun phrase, a determiner before either or not ("report it to Ridewell support" /
    "to the council's transport office", "treated with Virkon" / "with sodium hypochlorite")."""
    a, b = _strip(ma), _strip(mb)
    if not a or not b:
        return False

    def name(m: tuple[Token, ...]) -> bool:
        return any(t.kind == ENTITY and not t.sub.startswith("weak") for t in m)

    return (name(a) or name(b)) and all(t.kind in (WORD, ENTITY) for t in (*a, *b))


def _unled(ta: tuple[Token, ...], tb: tuple[Token, ...]) -> tuple[tuple[Token, ...], tuple[Token, ...]]:
    """The two sentences without a leading quantifier or article only one of them has."""
    lead_a = bool(ta) and ta[0].key in _LEADING
    lead_b = bool(tb) and tb[0].key in _LEADING
    if lead_a and not lead_b:
        return ta[1:], tb
    if lead_b and not lead_a:
        return ta, tb[1:]
    return ta, tb


def phrase_substitution(da: Doc, db: Doc, diffs: list[ValueDiff]) -> None:
    """Two sentences equal but for one noun phrase that complements a preposition or a copula through a
    determiner ("complaints go to the shift supervisor" / "to the store owner", "the meeting point is the north
    gate" / "is the car park"): the phrase names the value, whatever its case. The subject or the object
    of a verb ("Clean the kitchen filter" / "Clean the bathroom filter") is which thing, not a value.
    Sentences are compared at the same position, so this stays linear."""
    for sa, sb in zip(da.sentences[:PAIR_MAX_CLAUSES], db.sentences):
        if sa.bag == sb.bag or abs((sa.last - sa.first) - (sb.last - sb.first)) >= _PHRASE_MAX:
            continue  # no content word differs, or more than one phrase does
        ta, tb = _unled(da.tokens[sa.first : sa.last], db.tokens[sb.first : sb.last])
        i = 0
        while i < len(ta) and i < len(tb) and _token_same(ta[i], tb[i]):
            i += 1
        j = 0
        while j < len(ta) - i and j < len(tb) - i and _token_same(ta[-1 - j], tb[-1 - j]):
            j += 1
        ma, mb = ta[i : len(ta) - j], tb[i : len(tb) - j]
        if not (0 < len(ma) <= _PHRASE_MAX and 0 < len(mb) <= _PHRASE_MAX) or i < 1:
            continue
        if _scoped_days(ma) or _scoped_days(mb):
            continue
        bare = ta[i - 1].key in _COMPLEMENT_BEFORE and (
            _symbols(ma, mb) or _named(ma, mb) or (ta[i - 1].key in _PREPOSITIONS and _technical(ma, mb))
        )
        if not bare and (i < 2 or ta[i - 1].key not in _DETERMINERS or ta[i - 2].key not in _COMPLEMENT_BEFORE):
            continue
        ma, mb = _strip(ma), _strip(mb)
        if len(ma) == len(mb) == 1 and ma[0].kind == mb[0].kind == ENTITY and same_value(ma[0], mb[0]):
            continue  # one name written two ways ("Harbour Ferry Services" / "HFS")
        if ma and mb and all(t.kind in (WORD, ENTITY) and t.sub != "negpfx" for t in (*ma, *mb)):
            diffs.append(
                ValueDiff(
                    ENTITY_SUBSTITUTED,
                    tuple(t.text for t in ma),
                    tuple(t.text for t in mb),
                    (ma[0].start, ma[-1].end),
                    (mb[0].start, mb[-1].end),
                )
            )

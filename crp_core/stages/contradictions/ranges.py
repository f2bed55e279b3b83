"""A date inside a span of dates the other text states (docs/decisions/detector-round19.md): "Trips run daily from
May to September" / "Trips run every day in July" speak of one month of the season, a narrower scope, not of a
season moved (SPEC-005 §5.3: a DATE_SHIFTED is a date that differs for the same attribute). A date outside the
span ("... in October"), a span against another span ("from June to September") and a date that ends or opens
a period ("The season ends in July") stay shifted dates."""

from __future__ import annotations

from crp_core.records import ValueDiff
from crp_core.stages.contradictions.clauses import Doc
from crp_core.stages.contradictions.lexicon import DATE, DATE_SHIFTED, NEGATION_FLIP, NUMBER
from crp_core.stages.contradictions.tokens import Token
from crp_core.stages.contradictions.value_compare import opposite_ends, same_value

__all__ = ["bound_split", "date_within_span", "period_ends"]

#: the words between the two ends of a span of dates ("May to September", "1 May until 30 June")
SPAN_WORDS = frozenset(["to", "until", "till", "through", "and"])

#: the keys of words that make a date one end of a period ("ends in July", "opens on 3 May", "until July"): such a
#: date inside the other text's span moves that end, a shifted date
END_WORDS = frozenset(
    [
        "start",
        "stop",
        "clos",
        "open",
        "#open",
        "complet",
        "last",
        "first",
        "final",
        "deadlin",
        "expir",
        "until",
        "till",
        "by",
        "from",
        "since",
        "befor",
        "after",
        "no",
    ]
)

#: a date's comparable reading: (year, month, day, weekday), 0 where the text says nothing
Reading = tuple[int, int, int, int]


def _at(d: Doc, start: int) -> int:
    return next((k for k, t in enumerate(d.tokens) if t.start == start), -1)


def _span(d: Doc, k: int) -> tuple[Token, Token] | None:
    """The two ends of the span of dates the date at ``k`` opens or closes ("from May to September", "between 1 May
    and 30 June"; "and" only after "between"), else None."""
    toks = d.tokens

    def date(j: int) -> bool:
        return 0 <= j < len(toks) and toks[j].kind == DATE and toks[j].date is not None

    def joins(j: int, first: int) -> bool:
        low = toks[j].text.lower()
        return low in SPAN_WORDS and (low != "and" or (first > 0 and toks[first - 1].text.lower() == "between"))

    if date(k + 2) and joins(k + 1, k):
        return toks[k], toks[k + 2]
    if date(k - 2) and joins(k - 1, k - 2):
        return toks[k - 2], toks[k]
    return None


def _sentence_start(d: Doc, k: int) -> int:
    return next((s.first for s in d.sentences if s.first <= k < s.last), 0)


def _key(r: Reading, fields: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(r[f] for f in fields)


def _inside(x: Reading, lo: Reading, hi: Reading) -> bool:
    """Is the date ``x`` within [lo, hi], compared on the parts all three state (year, month, day; a span that
    wraps a year's end, "October to March", holds the months after its start and before its end)?"""
    fields = tuple(f for f in (0, 1, 2) if x[f] and lo[f] and hi[f])
    if 1 not in fields:
        return False  # a span of months or of days in months: a weekday or a lone year is read elsewhere
    a, b, v = _key(lo, fields), _key(hi, fields), _key(x, fields)
    return a <= v <= b if a <= b else v >= a or v <= b


def _within(d: Doc, span: tuple[int, int], other: Doc, point: tuple[int, int]) -> bool:
    """Is the date at ``point`` of ``other``, no end of a span itself, inside the span the date at ``span`` of
    ``d`` belongs to?"""
    k, j = _at(d, span[0]), _at(other, point[0])
    if k < 0 or j < 0:
        return False
    ends = _span(d, k)
    x = other.tokens[j].date
    if ends is None or x is None or _span(other, j) is not None:
        return False
    if any(t.key in END_WORDS for t in other.tokens[_sentence_start(other, j) : j]):
        return False
    lo, hi = ends[0].date, ends[1].date
    assert lo is not None and hi is not None
    return any(_inside(r, a, b) for r in x.readings for a in lo.readings for b in hi.readings)


def date_within_span(da: Doc, db: Doc, diffs: list[ValueDiff]) -> list[ValueDiff]:
    """Leave out a shifted date whose one side is an end of a span of dates and whose other side is a date inside
    that span: the narrower text states a part of the span, no other date."""
    return [
        d
        for d in diffs
        if d.pattern != DATE_SHIFTED or not (_within(da, d.span_a, db, d.span_b) or _within(db, d.span_b, da, d.span_a))
    ]


def _bounded(d: Doc) -> dict[tuple[str, float], set[int]]:
    """Each bounded quantity of the text (unit, value in it) -> the bounds it is stated with ("up to 10 metres": -1,
    "longer than 10 metres": 1)."""
    out: dict[tuple[str, float], set[int]] = {}
    for t in d.tokens:
        if t.qty is not None and t.qty.bound:
            out.setdefault((t.qty.unit, t.qty.base * t.qty.scale), set()).add(t.qty.bound)
    return out


def _split_spans(da: Doc, db: Doc) -> tuple[set[tuple[int, int]], set[tuple[int, int]]] | None:
    """The spans of a quantity that one text bounds from above and the other from below, each text stating one
    side ("boats up to 10 metres" / "boats longer than 10 metres"), or None."""
    ba, bb = _bounded(da), _bounded(db)
    split = {k for k in ba.keys() & bb.keys() if len(ba[k]) == len(bb[k]) == 1 and ba[k] != bb[k]}
    if not split:
        return None

    def spans(d: Doc) -> set[tuple[int, int]]:
        return {
            (t.start, t.end)
            for t in d.tokens
            if t.qty is not None and t.qty.bound and (t.qty.unit, t.qty.base * t.qty.scale) in split
        }

    return spans(da), spans(db)


def bound_split(da: Doc, db: Doc, diffs: list[ValueDiff]) -> list[ValueDiff]:
    """Leave out the changed values of two texts that split one quantity between them, one bounding it from above
    and the other from below ("Moorings cost £28 for boats up to 10 metres" / "Boats longer than 10 metres pay
    £35"): the two sides of the split are two subjects, each with its own value, and the reversed bound is the split
    itself, no flip; a flip elsewhere stays. Texts whose only change is the bound ("at least 18" / "at most 18")
    keep their diff."""
    found = _split_spans(da, db)
    if found is None:
        return diffs
    sa, sb = found
    on_split = [d for d in diffs if _on(d.span_a, sa) or _on(d.span_b, sb)]
    others = [d for d in diffs if d not in on_split]
    if not others:
        return [] if _own_value(da, sa, db) or _own_value(db, sb, da) else diffs
    return [d for d in others if d.pattern == NEGATION_FLIP]  # a flip elsewhere in the texts stays


def _on(span: tuple[int, int], split: set[tuple[int, int]]) -> bool:
    """Is ``span`` a split quantity, with or without its bound's words ("10 metres", "under 10 metres")?"""
    return any(span[0] <= start and span[1] == end for start, end in split)


def _own_value(d: Doc, split: set[tuple[int, int]], other: Doc) -> bool:
    """Does the text state a number or a date off the split that the other text does not state at all ("Boats under
    8 metres pay *40%* less" / "Boats over 8 metres pay the standard rate")? Then that side of the split has a value
    of its own, as a changed value is each side's own."""
    theirs = [u for u in other.tokens if u.kind in (NUMBER, DATE)]
    return any(
        t.kind in (NUMBER, DATE) and (t.start, t.end) not in split and not any(same_value(t, u) for u in theirs)
        for t in d.tokens
    )


#: words right before a date that make it the start of what its clause names ("close from 2 April", "shut
#: starting 2 April": the closure's start, not the end of an opening)
FROM_WORDS = frozenset(["from", "starting", "beginning", "effective"])


def _word_before(d: Doc, k: int) -> str:
    return d.tokens[k - 1].text.lower() if 0 < k <= len(d.tokens) else ""


def period_ends(da: Doc, ka: int, ctx_a: frozenset[str], db: Doc, kb: int, ctx_b: frozenset[str]) -> bool:
    """Are the tokens ``ka`` of ``da`` and ``kb`` of ``db`` dates of the two ends of one period, one clause naming its
    start and the other its end ("Registration opens on 1 March" / "Registration closes on 30 April"), neither date
    after a word that makes it the start of what its clause names ("closes from 2 April": a closure's start)?"""
    if da.tokens[ka].kind != DATE or db.tokens[kb].kind != DATE or not opposite_ends(ctx_a, ctx_b):
        return False
    return _word_before(da, ka) not in FROM_WORDS and _word_before(db, kb) not in FROM_WORDS

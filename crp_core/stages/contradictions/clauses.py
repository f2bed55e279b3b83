"""Per-text analysis for value-conflict detection: :func:`tokenize` (memoised), then clauses, their
attribute contexts and the values they state."""

from __future__ import annotations

from typing import NamedTuple

from crp_core.stages.contradictions.dates import weekday_dates
from crp_core.stages.contradictions.lexer import Lexer
from crp_core.stages.contradictions.lexicon import BREAK, DATE, ENTITY, FUNC, NEG, NUMBER, POLAR, WORD, stem
from crp_core.stages.contradictions.loose import Sentence, sentence, vocabulary
from crp_core.stages.contradictions.memos import text_memo
from crp_core.stages.contradictions.names import demote_weak, merge_names
from crp_core.stages.contradictions.quantities import signed_temperatures
from crp_core.stages.contradictions.spans import range_units
from crp_core.stages.contradictions.tokens import Quantity, Token, measured_things, sentence_spans, word_key

_COMPARATIVES = frozenset(
    [
        "more",
        "less",
        "longer",
        "later",
        "greater",
        "fewer",
        "shorter",
        "earlier",
        "higher",
        "lower",
        "larger",
        "smaller",
        "older",
        "newer",
    ]
)
#: comparatives of a measure ("no deeper than 15 cm", "not heavier than 25 kg"): a bound only right after its
#: negation; "No vehicle heavier than 3.5 t may enter" negates the clause, the comparative sizes its subject
_MEASURE_COMPARATIVES = frozenset(
    [
        "younger",
        "deeper",
        "shallower",
        "wider",
        "narrower",
        "taller",
        "heavier",
        "lighter",
        "faster",
        "slower",
        "bigger",
        "thicker",
        "thinner",
        "further",
        "farther",
        "closer",
        "nearer",
        "hotter",
        "colder",
        "warmer",
        "cooler",
        "louder",
        "steeper",
        "sooner",
    ]
)


def _after_negation(toks: list[Token], j: int) -> bool:
    """Does "no" or "not" stand right before token ``j``, or before "be" right before it ("must not be heavier")?
    "No one younger than 21 may ..." negates its clause."""
    k = j - 1 if j > 0 and toks[j - 1].text.lower() == "be" else j
    return k > 0 and toks[k - 1].kind == NEG and toks[k - 1].text.lower() in ("no", "not")


def _absorb_comparative_negation(toks: list[Token]) -> list[Token]:
    """ "must not be kept longer than necessary" says what "kept no longer than necessary" says:
    a negation whose clause holds a comparative bound ("longer than") turns the bound around
    (a number after it becomes an upper bound) and is no polarity flip of its own.

    Each negation takes the first comparative after it in its clause, and each comparative turns the
    first bounded number after it (before any break) once per negation that took it: two negations
    turn it back. Nearest-to-the-right tables keep this linear in the clause's length."""
    out = list(toks)
    n = len(out)
    comparative: list[int | None] = [None] * (n + 1)  # the first comparative at or after k, within the clause
    bounded: list[int | None] = [None] * (n + 1)  # the first bounded number at or after k, before any break
    for j in range(n - 1, -1, -1):
        u = out[j]
        clause_end = u.kind == BREAK and u.key != "label"
        low = u.text.lower()
        is_cmp = (
            j < n - 1
            and out[j + 1].text.lower() == "than"
            and (low in _COMPARATIVES or (low in _MEASURE_COMPARATIVES and _after_negation(out, j)))
        )
        comparative[j] = None if clause_end else (j if is_cmp else comparative[j + 1])
        q = u.qty
        bounded[j] = None if u.kind == BREAK else (j if q is not None and q.bound != 0 else bounded[j + 1])
    turns: dict[int, int] = {}
    for k, t in enumerate(toks):
        taken = comparative[k + 1] if t.kind == NEG and k + 1 < n else None
        if taken is not None:
            out[k] = Token(t.text, t.start, t.end, FUNC, "not")
            turns[taken] = turns.get(taken, 0) + 1
    for j, count in turns.items():
        m = bounded[j + 2] if j + 2 < n else None
        if m is not None and count % 2:
            q = out[m].qty
            assert q is not None
            out[m] = out[m]._replace(qty=q._replace(bound=-q.bound))
    return out


def _attributive_polarity(toks: list[Token]) -> list[Token]:
    """A polarity word used attributively in a clause that states a number or a date qualifies that
    value ("the public API allows 100 rpm" / "the private API allows 1000 rpm": two attributes),
    so it becomes an ordinary word; "the bucket is public" stays an assertion."""
    out = list(toks)
    first = 0
    for k in range(len(out) + 1):
        if k < len(out) and not (out[k].kind == BREAK and out[k].key != "label"):
            continue
        if any(t.kind in (NUMBER, DATE) for t in out[first:k]):
            for j in range(first, k - 1):
                if out[j].kind == POLAR and out[j + 1].kind in (WORD, ENTITY):
                    t = out[j]
                    out[j] = Token(t.text, t.start, t.end, WORD, word_key(t.text.lower()))
        first = k + 1
    return out


#: the key prefix of a set of weekdays read as a value's scope, followed by its day digits ("@days5": Fridays)
DAYS_KEY = "@days"


def _beside_date(toks: list[Token], k: int) -> bool:
    """Does a date (not a weekday alone) stand right before or after token ``k``, a comma between them allowed
    ("Friday, 11 April": the weekday is part of that date)?"""
    nxt = k + 2 if k + 2 < len(toks) and toks[k + 1].text == "," else k + 1
    prv = k - 2 if k >= 2 and toks[k - 1].text == "," else k - 1
    return any(0 <= j < len(toks) and toks[j].kind == DATE and not _weekday_only(toks[j]) for j in (nxt, prv))


def _weekday_only(t: Token) -> bool:
    return t.kind == DATE and t.date is not None and all(not (y or m or d) for y, m, d, _ in t.date.readings)


def _weekday_scope(toks: list[Token]) -> list[Token]:
    """A weekday (or a set of them) in a sentence that states another value is the scope of that value,
    not a value of its own ("open 06:00-20:00 on weekdays" / "opens 07:00-18:00 on Saturdays": two
    attributes; "on Sunday 14 December": the date is the value). It becomes an attribute word whose key
    names its days, so another set of days is another attribute."""
    out = list(toks)
    for first, k in sentence_spans(toks):  # the breaks are never rewritten: the spans of ``out`` too
        span = out[first:k]
        if any(_weekday_only(t) for t in span) and any(
            t.kind == NUMBER or (t.kind == DATE and not _weekday_only(t)) for t in span
        ):
            for j in range(first, k):
                t = out[j]
                if _weekday_only(t) and not _beside_date(out, j):
                    assert t.date is not None
                    days = "".join(str(r[3]) for r in sorted(t.date.readings))
                    out[j] = Token(t.text, t.start, t.end, WORD, DAYS_KEY + days)
    return out


#: function words a noun phrase may hold before a coordinated noun ("No food or drink", "between A and B")
_NOUN_PHRASE_FUNC = frozenset(
    ["the", "a", "an", "no", "all", "any", "some", "each", "every", "both", "between", "of", "in", "on", "for"]
    + ["with", "from", "to", "at", "by", "our", "your", "their", "its", "this", "these", "those", "that"]
)


def _ends_list(toks: list[Token], k: int) -> bool:
    """Does a coordinated name end its phrase at ``k`` (a break, the end, or its head noun: "GMAT or GRE
    results")? "Visa by Adyen and Mastercard by Stripe" goes on with a gapped clause."""
    return k >= len(toks) or toks[k].kind in (BREAK, WORD)


def _noun_coordination(toks: list[Token]) -> list[Token]:
    """ "and" / "or" joining two nouns of the phrase that opens a clause is no clause break ("No food or
    drink in the room", "Sending GMAT or GRE results is ...", "between Leeds and York"): the
    negation and the predicate govern both nouns. After a verb, a value, an identifier or three content
    words it still cuts the clause, unless it joins two names ("required to send GMAT or GRE results")."""
    out = list(toks)
    phrase = True  # the clause so far is a noun phrase
    nouns = 0  # its content words (a phrase of three is a clause with a verb: "reads go to eu-west-1")
    for k, t in enumerate(out):
        if t.kind == BREAK:
            if (
                t.text.lower() in ("and", "or")
                and 0 < k < len(out) - 1
                and out[k - 1].kind in (WORD, ENTITY)
                and out[k + 1].kind in (WORD, ENTITY)
                and (
                    (phrase and nouns <= 2) or (out[k - 1].kind == out[k + 1].kind == ENTITY and _ends_list(out, k + 2))
                )
            ):
                out[k] = Token(t.text, t.start, t.end, FUNC, t.text.lower())
                continue
            phrase, nouns = True, 0
            continue
        if t.kind in (WORD, ENTITY):
            nouns += 1
            phrase = phrase and t.sub != "ident"
        elif not (t.kind == NEG or (t.kind == FUNC and t.key in _NOUN_PHRASE_FUNC)):
            phrase = False
    return out


#: what may stand between the parts of one duration ("2 hours 15 minutes", "one month and seven days")
_DURATION_JOINS = frozenset([" ", " and ", ", "])


def _one_duration(p: Token, t: Token, text: str) -> bool:
    """Are two time quantities the parts of one duration: adjacent (or joined by "and"), the second
    shorter than one unit of the first ("2 hours 15 minutes"; "30 minutes, 15 minutes" is two)?"""
    q, r = p.qty, t.qty
    if q is None or r is None or q.dim != "time" or r.dim != "time" or q.base * q.scale <= 0:
        return False
    if text[p.end : t.start] not in _DURATION_JOINS or r.bound != 0 and q.bound != 0:
        return False
    one_unit = q.readings[0][0] / (q.base * q.scale)
    return r.readings[-1][1] < one_unit


def _compound_durations(toks: list[Token], text: str) -> list[Token]:
    """A duration written in two units is one quantity, its parts summed: "2 hours 15 minutes" is
    "135 minutes", "one month and seven days" is 35-38 days."""
    out: list[Token] = []
    for t in toks:
        if t.kind == NUMBER and len(out) > 1 and out[-1].text.lower() == "and" and out[-2].kind == NUMBER:
            if _one_duration(out[-2], t, text):
                out.pop()  # "one month and seven days": the "and" joins the parts
        p = out[-1] if out else None
        if p is not None and p.kind == NUMBER and t.kind == NUMBER and _one_duration(p, t, text):
            q, r = p.qty, t.qty
            assert q is not None and r is not None
            lo, hi = q.readings[0][0] + r.readings[0][0], q.readings[-1][1] + r.readings[-1][1]
            bound, bstart = (q.bound, q.bound_start) if q.bound else (r.bound, r.bound_start)
            merged = Quantity("time", "compound", lo, 1.0, "", ((lo, hi),), -1, bound, bstart)
            out[-1] = Token(text[p.start : t.end], p.start, t.end, NUMBER, "#q", qty=merged)
            continue
        out.append(t)
    return out


@text_memo()
def tokenize(text: str) -> tuple[Token, ...]:
    """Tokens of ``text`` with character spans into it (SPEC-005 §5.3 value kinds): numbers with
    units, dates, percentages, multipliers, money, rates, clock times, entities, polarity words,
    negations, clause breaks, content and function words. Memoised (a pure function of the text)."""
    toks = signed_temperatures(Lexer(text).run(), text)
    toks = weekday_dates(_compound_durations(range_units(toks, text), text), text)
    return tuple(
        merge_names(
            _attributive_polarity(_absorb_comparative_negation(_weekday_scope(_noun_coordination(demote_weak(toks))))),
            text,
        )
    )


# ================================================================================================
# Per-text analysis: clauses, attribute contexts, values
# ================================================================================================


class Clause(NamedTuple):
    sent: int
    first: int  # token index range [first, last)
    last: int
    bag: frozenset[str]  # attribute context: content keys (borrowed from a neighbour when empty)
    entities: frozenset[str]
    negs: tuple[int, ...]
    polars: tuple[int, ...]
    parity: int  # (negations + negative polarity words) mod 2
    owner: str  # the name the clause is about ("The kubelet listens ...", "Kafka's port ..."), or ""
    prefixed: tuple[int, ...] = ()  # words with a negating prefix ("unaffected"): negations only in a pair


class _Value(NamedTuple):
    tok: int
    clause: int
    cls: str  # "q:<dim>" | "date" | "ent"
    rank: int  # position among the text's values of the same class
    ctx: frozenset[str]  # attribute context: the clause's content words and the other names in it
    plain: frozenset[str]  # entity: stems of its words (to find it written as ordinary words)


class Doc(NamedTuple):
    text: str
    tokens: tuple[Token, ...]
    clauses: tuple[Clause, ...]
    values: tuple[_Value, ...]
    words: frozenset[str]  # every content key, polarity group and entity part of the text
    entity_keys: frozenset[str]
    plain: frozenset[str]  # stems of the text's ordinary (non-entity) words
    sent_bags: tuple[frozenset[str], ...]
    signal: bool  # any value, negation or polarity word
    polar_or_neg: bool
    groups: dict[str, tuple[int, ...]]  # value class -> indices into values
    years: tuple[int, ...]  # values that are lone years (they may also pair with plain numbers)
    sentences: tuple[Sentence, ...]  # the loose reading of each sentence (loose.py)
    loose_words: frozenset[str]  # every word of the text, loose and predicate, with prefix markers (loose.py)
    sent_shape: tuple[tuple[int, int], ...]  # per sentence: (number of clauses, polarity parity)
    negated: bool  # any negation cue
    has_days: bool = False  # a set of weekdays scopes a value ("until 11pm on Fridays": ``_weekday_scope``)


BE_FORMS = frozenset(["is", "are", "was", "were", "be", "been", "being"])


def _owner(toks: tuple[Token, ...], a: int, b: int) -> str:
    """The clause's owner: a name that opens it and is followed by a predicate other than a form
    of *be* ("The kubelet listens on 10250", "Kafka's default port is 9092"). "Stripe is our
    processor" and "... stores data in etcd" have none: there the name is the value. A release
    number between the name and its predicate belongs to the owner ("pip 24.0 requires Python 3.7"
    and "pip 24.1 requires Python 3.8" are about two releases)."""
    k = a
    while k < b and toks[k].kind == FUNC:
        k += 1
    if k >= b:
        return ""
    if toks[k].kind == WORD and k + 1 < b and toks[k + 1].qty is not None and "." in toks[k + 1].text:
        pass  # a lower-case name with its release: "pip 24.0 requires ..."
    elif toks[k].kind != ENTITY:
        return ""
    if toks[k].sub.endswith("+poss"):
        return toks[k].key
    nxt = k + 1
    while nxt < b and toks[nxt].kind == ENTITY and toks[nxt].sub == "ident":
        nxt += 1  # "Lumen API v4 allows ...": the version belongs to the name
    version = ""
    q = toks[nxt].qty if nxt < b else None
    if q is not None and q.dim == "" and q.bound == 0 and nxt + 1 < b and toks[nxt + 1].kind in (WORD, POLAR, NEG):
        version, nxt = " " + toks[nxt].text, nxt + 1  # "pip 24.0 requires ...": which release is the subject
    if nxt >= b or toks[nxt].kind in (BREAK, NUMBER, DATE, ENTITY) or toks[nxt].key in BE_FORMS | {"and", "or"}:
        return ""  # "Harbor and Skyline": a list of names, no owner
    return toks[k].key + version


def _value_class(t: Token) -> str:
    if t.kind == NUMBER and t.qty is not None:
        return "q:" + t.qty.dim
    if t.kind == DATE:
        return "date"
    return "ent"


def _clause_spans(toks: tuple[Token, ...]) -> list[tuple[int, int, int]]:
    """(sentence, first, last) of each clause: the tokens between two breaks (a label's colon is none)."""
    spans: list[tuple[int, int, int]] = []
    sent, first = 0, 0
    for k, t in enumerate(toks):
        if t.kind == BREAK and t.key != "label":
            if k > first:
                spans.append((sent, first, k))
            first = k + 1
            if t.key == "sent":
                sent += 1
    if len(toks) > first:
        spans.append((sent, first, len(toks)))
    return spans


def _shared_bags(spans: list[tuple[int, int, int]], own: list[frozenset[str]]) -> list[frozenset[str]]:
    """Each clause's attribute words: its own, or for a clause without any ("ports 2379 and 2380", "in
    eu-west-1 and us-east-1": the list item shares the attribute) those of the nearest earlier clause of
    its sentence that has some, else of the nearest later one. Two linear passes."""
    before: list[frozenset[str]] = []
    last: tuple[int, frozenset[str]] = (-1, frozenset())
    for (s, _, _), bag in zip(spans, own):
        if last[0] != s:
            last = (s, frozenset())
        before.append(last[1])
        if bag:
            last = (s, bag)
    after: list[frozenset[str]] = [frozenset()] * len(spans)
    last = (-1, frozenset())
    for ci in range(len(spans) - 1, -1, -1):
        s = spans[ci][0]
        if last[0] != s:
            last = (s, frozenset())
        after[ci] = last[1]
        if own[ci]:
            last = (s, own[ci])
    return [bag or before[ci] or after[ci] for ci, bag in enumerate(own)]


def _clauses_and_values(
    toks: tuple[Token, ...], spans: list[tuple[int, int, int]]
) -> tuple[list[Clause], list[_Value], dict[int, set[str]]]:
    """Each clause with its attribute context, each value (number, date, name) with its own, and each
    sentence's content keys."""
    own = [frozenset(t.key for t in toks[a:b] if t.kind in (WORD, POLAR)) for _, a, b in spans]
    shared = _shared_bags(spans, own)
    clauses: list[Clause] = []
    values: list[_Value] = []
    ranks: dict[str, int] = {}
    sent_words: dict[int, set[str]] = {}
    for ci, (s, a, b) in enumerate(spans):
        bag = shared[ci]
        negs = tuple(k for k in range(a, b) if toks[k].kind == NEG)
        polars = tuple(k for k in range(a, b) if toks[k].kind == POLAR)
        parity = (len(negs) + sum(1 for k in polars if toks[k].sign < 0)) % 2
        ents = frozenset(toks[k].key for k in range(a, b) if toks[k].kind == ENTITY)
        prefixed = tuple(k for k in range(a, b) if toks[k].sub == "negpfx")
        clauses.append(Clause(s, a, b, bag, ents, negs, polars, parity, _owner(toks, a, b), prefixed))
        sent_words.setdefault(s, set()).update(own[ci])
        # one object for the clause's numbers and dates (pairing memoises on it); a designator names which
        # thing the clause is about ("Hall 1 opens at 09:00 and Hall 2 at 10:00")
        clause_ctx = bag | ents | _designators(toks, a, b)
        for k in range(a, b):
            if toks[k].kind in (NUMBER, DATE, ENTITY):
                cls = _value_class(toks[k])
                ctx = bag | (ents - _coordinated(toks, k, a, b)) if toks[k].kind == ENTITY else clause_ctx
                plain_stems = (
                    frozenset(stem(part[1].lower()) for part in toks[k].parts) if cls == "ent" else frozenset()
                )
                values.append(_Value(k, ci, cls, ranks.get(cls, 0), ctx, plain_stems))
                ranks[cls] = ranks.get(cls, 0) + 1
    return clauses, values, sent_words


def _designators(toks: tuple[Token, ...], a: int, b: int) -> frozenset[str]:
    """The designators of a clause ("Hall 2", "Ward 7": a plain number right after a capitalised word) and its
    attributive durations ("the two-year fix", "a 5-year plan": a hyphenated amount before a word), as context
    keys."""
    out: set[str] = set()
    for k in range(a, b):
        t = toks[k]
        q = t.qty
        if t.kind == NUMBER and q is not None and q.dim in ("time", "cal") and "-" in t.text and k + 1 < b:
            if toks[k + 1].kind == WORD:
                out.add(f"@{q.dim}:{q.readings[0][0]:g}")
            continue
        if k == a:
            continue
        p = toks[k - 1]
        if (
            t.kind == NUMBER
            and q is not None
            and q.dim == ""
            and q.bound == 0
            and p.kind in (WORD, ENTITY)
            and p.text[:1].isupper()
            and p.end < t.start
        ):
            out.add("@" + p.key + " " + t.text)
    return frozenset(out)


#: how far (in tokens) a list of names joined by "and" / "or" is followed from one of its names
_LIST_REACH = 16


def _coordinated(toks: tuple[Token, ...], k: int, a: int, b: int) -> frozenset[str]:
    """The name at ``k`` and the names joined to it by "and" / "or" in its clause ("Harbor and Skyline"):
    one list, so none is the context of another."""
    keys = {toks[k].key}
    for step in (-2, 2):
        j = k + step
        while (
            a <= j < b
            and abs(j - k) <= _LIST_REACH
            and toks[j].kind == ENTITY
            and toks[j - step // 2].kind == FUNC
            and toks[j - step // 2].key in ("and", "or")
        ):
            keys.add(toks[j].key)
            j += step
    return frozenset(keys)


def _word_sets(toks: tuple[Token, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """(every content key, polarity group and entity part of the text; its entity keys)."""
    words: set[str] = set()
    entity_keys: set[str] = set()
    for t in toks:
        if t.kind in (WORD, POLAR):
            words.add(t.key)
        elif t.kind == ENTITY:
            entity_keys.add(t.key)
            words.update(p[0] for p in t.parts)
            words.add(t.key)
    return frozenset(words), frozenset(entity_keys)


@text_memo()
def analyse(text: str) -> Doc:
    """One text's clauses, values and word sets, what every comparison of it reads (memoised)."""
    toks = measured_things(tokenize(text))
    spans = _clause_spans(toks)
    clauses, values, sent_words = _clauses_and_values(toks, spans)
    sentences = _sentences(toks, clauses)
    words, entity_keys = _word_sets(toks)
    plain = frozenset(stem(t.text.lower()) for t in toks if t.kind in (WORD, FUNC))
    n_sent = (max(sent_words) + 1) if sent_words else 0
    sent_bags = tuple(frozenset(sent_words.get(s, ())) for s in range(n_sent))
    polar_or_neg = any(t.kind in (NEG, POLAR) or t.sub == "negpfx" for t in toks) or any(
        t.qty is not None and t.qty.bound != 0 for t in toks
    )
    groups: dict[str, list[int]] = {}
    for x, v in enumerate(values):
        groups.setdefault(v.cls, []).append(x)
    years = tuple(
        x
        for x, v in enumerate(values)
        if v.cls == "date" and toks[v.tok].date is not None and toks[v.tok].date.bare_year  # type: ignore[union-attr]
    )
    return Doc(
        text,
        toks,
        tuple(clauses),
        tuple(values),
        words,
        entity_keys,
        plain,
        sent_bags,
        bool(values) or polar_or_neg,
        polar_or_neg,
        {k: tuple(v) for k, v in groups.items()},
        years,
        sentences,
        vocabulary(
            {w for s in sentences for w in s.bag}
            | {stem(t.text.lower()) if t.kind == POLAR else t.key for t in toks if t.kind in (POLAR, WORD)}
        ),
        _sent_shape(clauses, n_sent),
        any(t.kind == NEG for t in toks),
        any(scope_day(toks, k) for k in range(len(toks))),
    )


def _sent_shape(clauses: list[Clause], n_sent: int) -> tuple[tuple[int, int], ...]:
    counts = [0] * max(n_sent, max((c.sent + 1 for c in clauses), default=0))
    parity = [0] * len(counts)
    for c in clauses:
        counts[c.sent] += 1
        parity[c.sent] ^= c.parity
    return tuple(zip(counts, parity))


def _sentences(toks: tuple[Token, ...], clauses: list[Clause]) -> tuple[Sentence, ...]:
    """The loose reading of each sentence: its tokens from its first clause to its last, the owner of
    its first clause."""
    out: list[Sentence] = []
    k = 0
    while k < len(clauses):
        j = k
        while j + 1 < len(clauses) and clauses[j + 1].sent == clauses[k].sent:
            j += 1
        while len(out) < clauses[k].sent:
            out.append(Sentence(frozenset(), {}, {}, ""))
        out.append(sentence(toks, clauses[k].first, clauses[j].last, clauses[k].owner))
        k = j + 1
    return tuple(out)


def scope_day(toks: tuple[Token, ...] | list[Token], k: int) -> bool:
    """Is token ``k`` a set of weekdays read as a scope (:func:`_weekday_scope` made it a ``DAYS_KEY`` word)?"""
    return toks[k].kind == WORD and toks[k].key.startswith(DAYS_KEY)

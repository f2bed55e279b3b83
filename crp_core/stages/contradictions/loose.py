"""Loose alignment of reworded sentences (docs/decisions/detector.md, "Reworded statements").

The clause alignment of :mod:`.values` asks two clauses to carry the same content words. A writer who
rewords a fact ("divers must wait at least 18 hours before boarding a flight" / "before they board a
flight, divers need a minimum of 24 hours") changes the words around the value, so this second,
looser test compares whole *sentences*:

- each sentence is read as its **loose bag**: content words and names, stemmed and synonym-folded,
  without the predicate (light verbs from ``light_words.txt``, a word right after a modal, a subject
  pronoun or an infinitive's ``to``), without polarity words (they are the asserted value, not the
  attribute) and without comparator words (``minimum``, ``exceed``: the bound is read with the
  number); every word of a text, predicates included, still counts as present in it;
- a word of one text is **foreign** when the other text has no word with its key or a key that
  extends it or that it extends (``snow`` / ``snowfall``, ``renew`` / ``renewal``: a derivation), no
  word sharing its six-letter root (``registr`` / ``register``), and, for a hyphenated word, not all
  of its parts (``move-out`` / ``moving out``);
- two sentences are **loosely aligned** when they share enough words (derivations counted; at least
  two, or the whole bag of a one-word sentence, and at least half of the smaller bag), each carries
  at most two foreign words (one when they share fewer than two), no foreign word **modifies** a
  word of the other text on both sides, or on one side before an attribute word (``the replacement
  fee`` / ``the fee``), no foreign word stands where the other sentence has another word its own
  text lacks (``pump timeout is`` / ``pump period is``), no two foreign words are a
  **substitution** (the same word before or after both: ``front brake pads`` / ``rear
  brake pads``) and the two sentences do not both **open** with their foreign words (``Junior
  members may ...`` / ``Visiting guests ...``: the subject replaced); owners that differ, neither
  named in the other text, are two subjects (checked by the caller).

Values pair across loosely aligned sentences only when each sentence has exactly one value of the
class that the other text does not state: one changed value on each side (``values._lone``); two
classes changed in one sentence pair are a scope and its value, and pair nothing.
"""

from __future__ import annotations

from typing import NamedTuple

from crp_core.stages.contradictions.lexicon import (
    ATTRIBUTE_HEADS,
    BREAK,
    DATE,
    ENTITY,
    FUNC,
    GENERIC_NOUNS,
    INFINITIVE_BEFORE,
    LIGHT_WORDS,
    NEG,
    NUMBER,
    POLAR,
    VERB_BEFORE,
    WORD,
)
from crp_core.stages.contradictions.tokens import Token, word_key

#: the shortest stem a derivation may extend ("snow" / "snowfall"; "car" / "card" is none)
DERIVATION_MIN = 4
#: the longest word read for derivations (a longer one is compared whole)
DERIVATION_MAX = 32
#: the shortest common beginning that makes two longer words derivations of one root
STEM_SHARED = 6
#: foreign words a sentence may carry when it shares at least :data:`WIDE_SHARE` words with the other
#: (a rewording changes the verb and a noun: "Sending a domestic wire costs $30" / "The fee for an
#: outgoing domestic wire transfer is $25"); one below that
MOST_FOREIGN = 2
WIDE_SHARE = 2


#: a modal written with its negation in one word
_NEGATED_MODALS = frozenset(
    ["cannot", "can't", "won't", "mustn't", "shouldn't", "couldn't", "wouldn't", "mayn't", "shan't", "needn't"]
)
#: forms of *be* between a modal (or an infinitive's "to") and its verb: a passive predicate
_INFINITIVE_BE = frozenset(["be", "been", "being", "have"])


class Sentence(NamedTuple):
    """What the loose alignment reads of one sentence."""

    bag: frozenset[str]  # loose bag: content keys and entity keys, predicate and polarity left out
    left: dict[str, str]  # key -> the key of the token before its first occurrence ("" at a break)
    right: dict[str, str]  # key -> the key of the token after it
    owner: str
    first: int = 0  # the sentence's tokens [first, last)
    last: int = 0
    seq: tuple[str, ...] = ()  # the bag's keys in the order they first occur


def _neighbour_key(toks: tuple[Token, ...], k: int, first: int) -> str:
    """A neighbour as the substitution tests read it: "" for a break, "#v" for a value, "~" before a
    function word or a predicate (they never fill a word's slot), else the word's key."""
    t = toks[k]
    if t.kind == BREAK:
        return ""
    if t.kind in (NUMBER, DATE):
        return "#v"
    if (t.kind in (FUNC, NEG, POLAR) and t.key not in GENERIC_NOUNS) or (
        t.kind == WORD and _is_predicate(toks, k, first)
    ):
        return "~" + t.key
    return t.key


def _is_predicate(toks: tuple[Token, ...], k: int, first: int) -> bool:
    """Is the word at ``k`` a predicate verb: listed as light, or right after a modal, ``to`` or a
    subject pronoun (a negation between them skipped: "may not receive")?"""
    t = toks[k]
    if t.text.lower() in LIGHT_WORDS or t.key in LIGHT_WORDS:
        return True
    j = k - 1
    while j >= first and (toks[j].kind == NEG or (toks[j].kind == FUNC and toks[j].key in _INFINITIVE_BE)):
        if toks[j].kind == NEG and toks[j].text.lower().replace("’", "'") in _NEGATED_MODALS:
            return True  # "cannot be exchanged": a modal and its negation in one word
        j -= 1  # "may not receive", "must be brought", "has to be taken": the verb after a modal
    if j < first or toks[j].kind != FUNC:
        return False
    if toks[j].key == "to":  # an infinitive only after a word that takes one ("unable to renew"), not "to members"
        return j > first and (toks[j - 1].kind == NEG or toks[j - 1].text.lower() in INFINITIVE_BEFORE)
    return toks[j].key in VERB_BEFORE


#: the words that open a clause's predicate: modals and forms of be, have and do
PREDICATE_OPENERS = frozenset(
    ["can", "could", "may", "might", "must", "shall", "should", "will", "would", "need", "needs"]
    + ["is", "are", "was", "were", "be", "has", "have", "had", "do", "does", "did"]
)


def subject_end(toks: tuple[Token, ...], a: int, b: int) -> int:
    """Where the subject of the clause or sentence [a, b) ends: at its first modal, form of be / have / do or
    negation ("Non-members | can book courts"); ``a`` when it has none (no subject is read)."""
    for j in range(a, b):
        if toks[j].kind == NEG or toks[j].text.lower() in PREDICATE_OPENERS:
            return j
    return a


def sentence(toks: tuple[Token, ...], first: int, last: int, owner: str) -> Sentence:
    """The loose reading of the tokens ``[first, last)`` of one sentence."""
    bag: set[str] = set()
    left: dict[str, str] = {}
    right: dict[str, str] = {}
    seq: list[str] = []
    for k in range(first, last):
        t = toks[k]
        if t.kind == WORD:
            if _is_predicate(toks, k, first):
                continue
        elif t.kind != ENTITY:
            continue
        key = t.key
        if key in bag:
            continue
        bag.add(key)
        seq.append(key)
        left[key] = _neighbour_key(toks, k - 1, first) if k > first else ""
        right[key] = _neighbour_key(toks, k + 1, first) if k + 1 < last else ""
    return Sentence(frozenset(bag), left, right, owner, first, last, tuple(seq))


def vocabulary(words: set[str]) -> frozenset[str]:
    """A text's loose words with a marker ``^p`` for every proper prefix ``p`` (of at least
    :data:`DERIVATION_MIN` letters) of each word up to :data:`DERIVATION_MAX` letters: a derivation is
    then found by hashing, linear in the word, whatever the size of the other text."""
    out = set(words)
    for w in words:
        if DERIVATION_MIN < len(w) <= DERIVATION_MAX:
            out.update("^" + w[:k] for k in range(DERIVATION_MIN, len(w)))
        if "-" in w:
            out.update(_parts(w))  # "move-out": "move" is in the text too
    return frozenset(out)


def _parts(w: str) -> list[str]:
    """The keys of a hyphenated word's parts of three letters or more ("docking-station": dock, station)."""
    return [word_key(p) for p in w.split("-")[:4] if len(p) >= 3 and p.isalpha()]


def _has_derivation(w: str, words: frozenset[str]) -> bool:
    """Does the vocabulary ``words`` hold ``w``, a word that extends it or one that it extends?"""
    if w in words:
        return True
    if "-" in w:
        parts = _parts(w)  # "after-hours" against "after hours", "docking-station" against "docking stations"
        return bool(parts) and all(_has_derivation(p, words) for p in parts)
    if not DERIVATION_MIN <= len(w) <= DERIVATION_MAX:
        return False
    if "^" + w in words or any(w[:k] in words for k in range(DERIVATION_MIN, len(w))):
        return True
    # two derivations of one root: "registr(ation)" / "register", "submiss(ion)" / "submit" is none
    return len(w) > STEM_SHARED and "^" + w[: max(STEM_SHARED, len(w) - 2)] in words


def derived(w: str, words: frozenset[str]) -> bool:
    """Does the vocabulary ``words`` (:func:`vocabulary`) hold ``w`` or a derivation of its root ("tolerant" /
    "tolerate")?"""
    return _has_derivation(w, words)


def foreign(s: Sentence, other_words: frozenset[str], drop: frozenset[str], most: int = 1) -> list[str]:
    """The words of sentence ``s`` the other text lacks (``drop``: the compared values' own keys); the
    first ``most + 1`` at most, all the alignment needs."""
    out: list[str] = []
    for w in s.bag:
        if w not in drop and not _has_derivation(w, other_words):
            out.append(w)
            if len(out) > most:
                break
    return out


def _slot_taken(u: str, s: Sentence, other: Sentence, own: frozenset[str]) -> bool:
    """Does another word stand where the foreign word ``u`` stands, next to a shared word ("the probe
    timeout is" / "the probe period is": a substitution even when the other word is a generic noun)?
    A word that ``u``'s own text (vocabulary ``own``) also states is moved there, not substituted
    ("after-hours prescriptions" / "After hours, emergency prescriptions")."""
    lu, ru = s.left.get(u, ""), s.right.get(u, "")
    if lu and lu in other.bag:
        x = other.right.get(lu, "")
        if x and x[0] not in "~#" and x != u and not _has_derivation(x, own):
            return True
    if ru and ru in other.bag:
        x = other.left.get(ru, "")
        if x and x[0] not in "~#" and x != u and not _has_derivation(x, own):
            return True
    return False


def _opens(s: Sentence, f: list[str], other_bag: frozenset[str]) -> bool:
    """Do the foreign words ``f`` of sentence ``s`` all stand before its first word shared with the other
    sentence (its subject replaced)?"""
    seen = 0
    for w in s.seq:
        if w in other_bag:
            return False
        if w in f:
            seen += 1
            if seen == len(f):
                return True
    return False


def _shared(bag_a: frozenset[str], bag_b: frozenset[str]) -> int:
    """How many words of ``bag_a`` the other sentence has, derivations and hyphenated parts counted
    ("register" / "registration", "docking-station" / "docking stations")."""
    shared = len(bag_a & bag_b)
    if shared < len(bag_a) and shared < len(bag_b):
        vb = vocabulary(set(bag_b - bag_a))
        shared += sum(1 for w in bag_a - bag_b if _has_derivation(w, vb))
    return shared


def aligned(
    sa: Sentence,
    sb: Sentence,
    words_a: frozenset[str],
    words_b: frozenset[str],
    drop: frozenset[str],
    wide: int = 0,
) -> bool:
    """Are the two sentences one statement reworded (module docstring)? ``words_a`` / ``words_b``: the
    loose bags of the whole texts; ``wide``: foreign words allowed beyond the usual number (typed values)."""
    bag_a, bag_b = sa.bag - drop, sb.bag - drop
    shared = _shared(bag_a, bag_b)
    if shared < min(2, len(bag_a), len(bag_b)) or not shared or 2 * shared < min(len(bag_a), len(bag_b)):
        return False
    most = (MOST_FOREIGN if shared >= WIDE_SHARE else 1) + wide
    fa = foreign(sa, words_b, drop, most)
    if len(fa) > most:
        return False
    fb = foreign(sb, words_a, drop, most)
    if len(fb) > most:
        return False
    if fa and fb and _opens(sa, fa, bag_b) and _opens(sb, fb, bag_a):
        return False  # each sentence opens with words the other lacks: "Junior members may ..." / "Visiting guests ..."
    mods = [
        [u for u in f if _has_derivation(s.right.get(u, "") or "~", other)]
        for f, s, other in ((fa, sa, words_b), (fb, sb, words_a))
    ]
    if mods[0] and mods[1]:
        return False  # a modifier of a shared word on each side: "adult cardholders" / "a children's card"
    for m, s in zip(mods, (sa, sb)):
        if any(s.right.get(u, "") in ATTRIBUTE_HEADS for u in m):
            return False  # a modifier on one side names another attribute: "the replacement fee" / "the fee"
    if any(_slot_taken(u, sa, sb, words_a) for u in fa) or any(_slot_taken(v, sb, sa, words_b) for v in fb):
        return False
    for u in fa:
        lu, ru = sa.left.get(u, ""), sa.right.get(u, "")
        for v in fb:
            lv, rv = sb.left.get(v, ""), sb.right.get(v, "")
            if (lu and lu == lv) or (ru and ru == rv):
                return False  # a substitution: "front brake pads" / "rear brake pads"
    return True

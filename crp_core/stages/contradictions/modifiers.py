"""A modifier swapped before a shared noun (the learned comparison's modifier-swap candidate,
docs/decisions/detector-round8.md): "done in the *rotary* parlour" / "takes place in the *herringbone* parlour".
The noun both texts state once in a complement, each with a modifier the other text does not state."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import Doc, analyse
from crp_core.stages.contradictions.lexicon import BREAK, ENTITY, FUNC, WORD
from crp_core.stages.contradictions.loose import derived
from crp_core.stages.contradictions.memos import text_memo
from crp_core.stages.contradictions.subjects import present

#: what may stand before a complement's modifier: a preposition, a copula or a determiner
_COMPLEMENT_OPENERS = frozenset(
    ["to", "at", "in", "into", "from", "by", "with", "via", "on", "using", "is", "are", "was", "were"]
    + ["the", "a", "an", "its", "their", "our", "your"]
)
#: the most words a swapped modifier holds ("the *ion-exchange resin* columns")
MODIFIER_MAX = 2
#: the most shared nouns read for a modifier swap
MOD_HEADS_MAX = 64

#: (start, end) token ranges of the modifier in a and in b
Mod = tuple[int, int, int, int]


def _modifier(d: Doc, k: int, subject: bool = False) -> tuple[int, int] | None:
    """The words right before the noun at ``k`` that modify it in a complement ("in the *rotary* parlour",
    "with *steel* strings"): up to :data:`MODIFIER_MAX` ordinary words after a preposition, copula or
    determiner; None when there are none or the phrase opens otherwise (a subject: "*Raw* sugar arriving").
    ``subject``: a phrase that opens the text or follows a break is read too ("*Freight* trains are limited")."""
    toks = d.tokens
    j = k
    while j > 0 and k - j < MODIFIER_MAX and toks[j - 1].kind in (WORD, ENTITY) and toks[j - 1].sub != "negpfx":
        j -= 1
    if j == k:
        return None
    if subject and (j == 0 or toks[j - 1].kind == BREAK):
        return j, k
    if j == 0 or toks[j - 1].kind != FUNC or toks[j - 1].key not in _COMPLEMENT_OPENERS:
        return None
    return j, k


@text_memo()
def complement_nouns(text: str) -> dict[str, tuple[int, int, int]]:
    """The nouns the text states once with a modifier in a complement (:func:`_modifier`): key -> (the noun, the
    modifier's first token, its end). Memoised per text; callers must not mutate."""
    return _modified_nouns(text, False)


@text_memo()
def modified_nouns(text: str) -> dict[str, tuple[int, int, int]]:
    """As :func:`complement_nouns`, with the nouns a modifier opens a sentence with ("*Freight* trains").
    Memoised per text; callers must not mutate."""
    return _modified_nouns(text, True)


def _modified_nouns(text: str, subject: bool) -> dict[str, tuple[int, int, int]]:
    d = analyse(text)
    seen: dict[str, int] = {}
    for k, t in enumerate(d.tokens):
        if t.kind == WORD:
            seen[t.key] = -1 if t.key in seen else k
    out: dict[str, tuple[int, int, int]] = {}
    for key, k in seen.items():
        if k >= 0 and d.tokens[k].sub != "negpfx":
            m = _modifier(d, k, subject)
            if m is not None:
                out[key] = (k, *m)
    return out


def _unstated_modifiers(da: Doc, db: Doc, a0: int, a1: int, b0: int, b1: int) -> bool:
    """Does neither text state the other's modifier, not even as a derivation?"""
    return not (
        any(derived(t.key, db.loose_words) or present(t.key, db) for t in da.tokens[a0:a1])
        or any(derived(t.key, da.loose_words) or present(t.key, da) for t in db.tokens[b0:b1])
    )


def narrowed_nouns(da: Doc, db: Doc) -> bool:
    """A noun both texts state once, each with a modifier the other text does not state, as the sentence's
    subject or in a complement ("*Freight* trains on the Carrow branch" / "*Passenger* trains on the Carrow
    branch", "at the *outer* harbour" / "on the *inner* harbour pontoons"): a qualifier that narrows the thing
    to another one, so a value each states may belong to another thing (the learned comparison's
    ``narrowed`` feature)."""
    na, nb = modified_nouns(da.text), modified_nouns(db.text)
    shared = sorted(na.keys() & nb.keys(), key=lambda h: na[h][0])[:MOD_HEADS_MAX]
    return any(_unstated_modifiers(da, db, na[key][1], na[key][2], nb[key][1], nb[key][2]) for key in shared)


def modifier_swap(da: Doc, db: Doc) -> Mod | None:
    """A noun both texts state once, in a complement, with a modifier on each side that the other text does
    not state, not even as a derivation ("done in the *rotary* parlour" / "takes place in the *herringbone*
    parlour", "set up with *steel* strings" / "fitted with *synthetic-core* strings"): the thing named changed
    while the sentence is reworded around it. The first such noun in text a's order, or None."""
    na, nb = complement_nouns(da.text), complement_nouns(db.text)
    if not (na and nb):
        return None
    for key in sorted(na.keys() & nb.keys(), key=lambda h: na[h][0])[:MOD_HEADS_MAX]:
        _, a0, a1 = na[key]
        _, b0, b1 = nb[key]
        if _unstated_modifiers(da, db, a0, a1, b0, b1):
            return (a0, a1, b0, b1)
    return None

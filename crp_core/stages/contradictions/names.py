"""Names across tokens, for :func:`~crp_core.stages.contradictions.clauses.tokenize`: adjacent capitalised names
are one entity, and so are two joined by a linking word; a capitalised sentence-initial word the text also writes in
lower case is an ordinary word (docs/decisions/detector.md, "Entities")."""

from __future__ import annotations

from crp_core.stages.contradictions.lexicon import ENTITY, FUNC, WORD
from crp_core.stages.contradictions.tokens import Token, word_key

__all__ = ["demote_weak", "merge_names"]

#: the words that link two capitalised parts of one name ("Bank of England", "Joint Council for Qualifications")
_NAME_LINKS = frozenset(["of", "for"])


def _linked_name(out: list[Token], t: Token, text: str) -> bool:
    """Do the last two tokens of ``out`` and ``t`` read as one name joined by a linking word ("Joint Council" "for"
    "Qualifications"), each part a capitalised name with single spaces between?"""
    if len(out) < 2 or out[-1].kind != FUNC or out[-1].key not in _NAME_LINKS:
        return False
    p, link = out[-2], out[-1]
    return (
        p.kind == ENTITY
        and p.sub in ("name", "lex")
        and p.text[0].isupper()
        and t.sub in ("name", "lex", "name+poss", "lex+poss")
        and text[p.end : link.start] == " "
        and text[link.end : t.start] == " "
    )


def merge_names(toks: list[Token], text: str) -> list[Token]:
    """Adjacent capitalised names form one entity ("Cloud Native Computing Foundation"), and so do two joined by
    a linking word ("Joint Council for Qualifications": its parts spell "JCQ"); a possessive ends a run ("Lumen's
    Frankfurt region")."""
    out: list[Token] = []
    for t in toks:
        if (
            t.kind == ENTITY
            and t.sub in ("name", "acro", "lex", "weak", "name+poss", "acro+poss", "lex+poss", "weak+poss")
            and t.text[0].isupper()
            and out
        ):
            if _linked_name(out, t, text):
                del out[-1]
                out[-1] = _joined(out[-1], t, text)
                continue
            p = out[-1]
            if (
                p.kind == ENTITY
                and p.sub in ("name", "acro", "lex", "weak")
                and p.text[0].isupper()
                and text[p.end : t.start] == " "
            ):
                out[-1] = _joined(p, t, text)
                continue
        out.append(t)
    return out


def _joined(p: Token, t: Token, text: str) -> Token:
    """One name from ``p`` to ``t`` (the text between them included), keyed by both."""
    return Token(text[p.start : t.end], p.start, t.end, ENTITY, p.key + " " + t.key, parts=p.parts + t.parts, sub=t.sub)


def demote_weak(toks: list[Token]) -> list[Token]:
    """A capitalised sentence-initial word that appears in lower case elsewhere in the text is an
    ordinary word ("Stale entries ... stale"), not a name."""
    lower = {t.text.lower() for t in toks if t.kind in (WORD, FUNC) and t.text[:1].islower()}
    if not any(t.sub.startswith("weak") for t in toks):
        return toks
    return [
        Token(t.text, t.start, t.end, WORD, word_key(t.text.lower()))
        if t.sub.startswith("weak") and t.text.lower() in lower and t.kind == ENTITY
        else t
        for t in toks
    ]

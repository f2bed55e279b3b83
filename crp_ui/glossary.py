"""The glossary: every term the dashboard shows, defined once, with the spec section it comes from.

The Glossary page lists :data:`TERMS`; every other view reads the same text through :func:`help`
(a widget's or a column's ``help=``) and :func:`column_help` / :func:`with_help` (the help of a
dataframe's columns, by column name through :data:`COLUMN_TERMS`). The entries are static text
(:mod:`crp_ui.glossary_terms`, no data), so they are safe to render as Markdown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .glossary_terms import TERMS, Term

_BY_NAME: dict[str, Term] = {}
for _t in TERMS:
    for _n in (_t.name, *_t.aliases):
        _BY_NAME.setdefault(_n.lower(), _t)

#: dataframe column -> glossary term (the help of that column wherever it is shown)
COLUMN_TERMS: Mapping[str, str] = {
    "cdr_score": "CDR",
    "score": "CDR",
    "relevance": "relevance",
    "residual_pull": "residual pull",
    "effective_relevance": "residual pull",
    "novelty": "novelty",
    "coverage_score": "coverage score",
    "coverage_penalty": "coverage penalty",
    "recency_factor": "recency factor",
    "recency": "expired vs ageing",
    "SPEC-027 recency": "recency factor",
    "age_days": "age",
    "ttl_days": "TTL",
    "ngram_penalty": "n-gram penalty",
    "bridge_value": "bridge value",
    "importance_weight": "importance",
    "role": "anchor",
    "band": "primacy/recency bands",
    "tier": "primacy/recency bands",
    "tokens": "envelope",
    "in a contradictory pair": "contradictory pair",
    "fan-out duplicate": "fan-out duplicates",
    "similarity": "fan-in dedup",
    "NOTE block": "tie / NOTE block",
    "jaccard": "Jaccard / overlap",
    "kind": "expired vs ageing",
    "expired": "expired vs ageing",
    "ageing": "expired vs ageing",
    "leaks": "leak",
    "wrong_winners": "wrong winner",
    "recall": "must_include",
    "connector_score": "connector",
    "mean_recency": "recency factor",
    "recency_penalised": "recency factor",
}
#: help of columns that are not glossary terms (what the column holds)
COLUMN_TEXT: Mapping[str, str] = {
    "fact_id": "The fact's id in the CKF.",
    "content": "The fact's text, as in the CKF.",
    "outcome": "Where the fact ended: packed, suppressed, gated, not selected...",
    "reason": "Why the fact ended where it did, read off the pipeline's records.",
    "why": "Why the fact left or entered the envelope, read off the pipeline's records.",
    "source_type": "The kind of source (sets the default TTL, importance and source authority).",
    "status": "The fact's CKF status (ACTIVE, STALE, ...).",
    "only on this side": "In this envelope and not in the other one.",
    "in the envelope": "The facts of this duplicate that were packed.",
    "branches": "The fan-out branches that picked the fact(s).",
}


def term(name: str) -> Term | None:
    """The entry named ``name`` (or one of its aliases), case-insensitively."""
    return _BY_NAME.get(name.strip().lower())


def help(name: str) -> str:  # shadows the builtin: the accessor pages call as glossary.help(term)
    """The one-line definition of ``name`` and its spec section, for a widget's or a column's ``help=``.

    An unknown term raises ``KeyError`` (a typo must fail the tests, not show an empty tooltip).
    """
    t = term(name)
    if t is None:
        raise KeyError(f"no glossary term {name!r}")
    return f"{t.short} ({t.cite}; see the Glossary page)"


def column_help(column: str) -> str | None:
    """The help of a dataframe column by its name, or None when the glossary has nothing for it."""
    if column in COLUMN_TERMS:
        return help(COLUMN_TERMS[column])
    if column in COLUMN_TEXT:
        return COLUMN_TEXT[column]
    t = term(column)
    return help(t.name) if t is not None else None


def with_help(columns: Iterable[str], config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``config`` (a ``column_config`` mapping) with a ``help`` on every column the glossary knows.

    Existing entries keep their type, label, format and width; a column without an entry gets a plain
    ``st.column_config.Column`` with its help. A ``help`` already set is kept.
    """
    import streamlit as st

    out: dict[str, Any] = dict(config or {})
    for col in columns:
        text = column_help(str(col))
        if text is None:
            continue
        got = out.get(col)
        if got is None:
            out[col] = st.column_config.Column(str(col), help=text)
        elif isinstance(got, dict) and not got.get("help"):
            out[col] = {**got, "help": text}
    return out


def search(text: str) -> tuple[Term, ...]:
    """Terms whose name, aliases or definition contain ``text`` (case-insensitive); all for an empty text."""
    q = text.strip().lower()
    if not q:
        return TERMS
    return tuple(
        t
        for t in TERMS
        if q in t.name.lower()
        or any(q in a.lower() for a in t.aliases)
        or q in t.definition.lower()
        or q in t.short.lower()
    )


def report_terms(
    names: Iterable[str] = (
        "TTL",
        "stale floor",
        "expired vs ageing",
        "Fact Authority Resolution",
        "tie / NOTE block",
        "fan-out",
        "fan-out duplicates",
        "envelope",
        "Jaccard / overlap",
    ),
) -> dict[str, str]:
    """Term -> one-line definition, for the words the HTML report uses."""
    out: dict[str, str] = {}
    for n in names:
        t = term(n)
        if t is not None:
            out[t.name] = f"{t.short} ({t.cite})"
    return out


__all__ = [
    "COLUMN_TERMS",
    "COLUMN_TEXT",
    "TERMS",
    "Term",
    "column_help",
    "help",
    "report_terms",
    "search",
    "term",
    "with_help",
]

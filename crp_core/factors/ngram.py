"""The n-gram output guard (SPEC-024 §5; docs/reference/pipeline.md §2).

Tokens are the lower-cased ``\\w+`` runs of a text. The blacklist holds the distinct word
n-grams (n = ``ngram_n``, 6) of each prior output taken separately (no n-gram spans two texts).
A fact's overlap is the number of its *distinct* n-grams found in the blacklist.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from crp_core.model import KnowledgeBase
from crp_core.support.memo import WeakMemo

_WORD = re.compile(r"\w+")

NGram = tuple[str, ...]


def tokens(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens (docs/reference/pipeline.md §2)."""
    return _WORD.findall(text.lower())


def ngrams(text: str, n: int) -> frozenset[NGram]:
    """Distinct word n-grams of one text (empty when it has fewer than n tokens)."""
    t = tokens(text)
    return frozenset(tuple(t[i : i + n]) for i in range(len(t) - n + 1))


def build_blacklist(prior_outputs: Iterable[str], n: int) -> frozenset[NGram]:
    """Union of the distinct n-grams of each prior output, each text taken separately (SPEC-024 §5.1)."""
    out: set[NGram] = set()
    for text in prior_outputs:
        out.update(ngrams(text, n))
    return frozenset(out)


def count_overlap(text: str, blacklist: frozenset[NGram] | set[NGram], n: int) -> int:
    """Number of the text's distinct n-grams that are blacklisted (SPEC-024 §5.2)."""
    if not blacklist:
        return 0
    return len(ngrams(text, n) & blacklist)


# per-KB caches: each fact's n-gram set (lazily, for the rows actually scored), and per blacklist the
# overlap count of every fact scored so far (-1 = not yet computed), so a repeated run is pure numpy
_MAX_BLACKLISTS_PER_KB = 8
_FACT_NGRAMS: WeakMemo[KnowledgeBase, tuple[int, int], frozenset[NGram]] = WeakMemo()
_OVERLAPS: WeakMemo[KnowledgeBase, tuple[int, frozenset[NGram]], np.ndarray] = WeakMemo(_MAX_BLACKLISTS_PER_KB)


def fact_overlaps(
    kb: KnowledgeBase, idx: Sequence[int] | np.ndarray, blacklist: frozenset[NGram], n: int
) -> np.ndarray:
    """(len(idx),) int64 overlap counts of the facts ``idx`` with the blacklist.

    Each fact's n-gram set is computed once per (KnowledgeBase, n), and each fact's count once per
    (KnowledgeBase, n, blacklist); both caches are weak on the KnowledgeBase.
    """
    idx = np.asarray(idx, dtype=np.int64).reshape(-1)
    if not blacklist or idx.size == 0:
        return np.zeros(idx.size, dtype=np.int64)
    key = (n, blacklist if type(blacklist) is frozenset else frozenset(blacklist))
    counts = _OVERLAPS.get_or_build(kb, key, lambda: np.full(len(kb), -1, dtype=np.int64))
    got = counts[idx]  # a new array (fancy indexing): the caller owns it
    if got.min() >= 0:  # every row counted before: no per-fact work
        return got
    grams_of = _FACT_NGRAMS.memo(kb)
    facts = kb.facts
    for row in np.unique(idx[got < 0]).tolist():
        grams = grams_of.get((row, n))
        if grams is None:
            grams = grams_of.put((row, n), ngrams(facts[row].content, n))
        counts[row] = len(grams & blacklist)
    return counts[idx]

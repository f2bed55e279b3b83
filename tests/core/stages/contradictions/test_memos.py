"""The register of the detector's memos of texts (crp_core.stages.contradictions.memos)."""

from __future__ import annotations

import pathlib

import crp_core.stages.contradictions as package
from crp_core.stages.contradictions import values_conflict
from crp_core.stages.contradictions.memos import forget_texts, memo_sizes, text_memo

PACKAGE = pathlib.Path(package.__file__).parent


def test_every_memo_of_the_package_is_registered():
    """A memo the register does not hold would outlive a scan worker's chunks: ``lru_cache`` is used by the
    register alone."""
    users = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "memos.py" and "lru_cache" in p.read_text())
    assert users == []


def test_forget_texts_empties_every_memo():
    forget_texts()
    assert len(memo_sizes()) >= 9 and sum(memo_sizes()) == 0
    assert values_conflict("The gate opens at 9:00 on Mondays.", "The gate opens at 10:00 on Mondays.")
    values_conflict("Ports 80 and 443 are open to tram depots", "Ports 443 and 80 are open to tram depots")
    filled = memo_sizes()
    assert sum(filled) > 0 and sum(1 for n in filled if n) >= 5
    forget_texts()
    assert sum(memo_sizes()) == 0


def test_a_memo_is_bounded_and_registered():
    before = len(memo_sizes())
    calls: list[str] = []

    @text_memo(2)
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    assert len(memo_sizes()) == before + 1
    assert [upper(t) for t in ("a", "a", "b", "c", "a")] == ["A", "A", "B", "C", "A"]
    # "a" was the least recently used when "c" came in: a memo of two entries computed it again
    assert calls == ["a", "b", "c", "a"] and memo_sizes()[-1] == 2
    forget_texts()
    assert memo_sizes()[-1] == 0

"""The register of the detector's memos of texts (crp_core.stages.contradictions.memos)."""

from __future__ import annotations

import ast
import pathlib

import crp_core.stages.contradictions as package
from crp_core.stages.contradictions import values_conflict
from crp_core.stages.contradictions.lexicon import stem
from crp_core.stages.contradictions.memos import TEXT_MEMO_SIZE, forget_texts, memo_sizes, text_memo

PACKAGE = pathlib.Path(package.__file__).parent


def test_every_memo_of_the_package_is_registered():
    """A memo the register does not hold would outlive a scan worker's chunks: ``lru_cache`` is used by the
    register alone."""
    users = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "memos.py" and "lru_cache" in p.read_text())
    assert users == []


def _unbounded_memos(source: str) -> list[str]:
    """The functions of ``source`` memoised by ``functools.cache`` (bare or as ``functools.cache``) that take an
    argument: such a memo grows with every distinct argument."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef) or not (node.args.args or node.args.vararg or node.args.kwonlyargs):
            continue
        names = {ast.unparse(d) for d in node.decorator_list}
        if names & {"cache", "functools.cache"}:
            out.append(node.name)
    return out


def test_no_unbounded_memo_of_an_argument():
    """Hostile or generated text has no bounded vocabulary: a memo of a word or a text is bounded and registered
    (the stem of a word included); ``functools.cache`` is for functions without arguments."""
    found = {p.name: _unbounded_memos(p.read_text()) for p in sorted(PACKAGE.glob("*.py"))}
    assert {name: fns for name, fns in found.items() if fns} == {}
    assert _unbounded_memos("import functools\n@functools.cache\ndef f(w):\n    return w\n") == ["f"]
    assert _unbounded_memos("from functools import cache\n@cache\ndef g():\n    return 1\n") == []


def test_the_stem_memo_is_bounded_and_forgotten():
    forget_texts()
    # words of letters only (a word with a digit is its own stem): zqaaaas, zqaaabs, ...
    words = ["zq" + "".join(chr(97 + i // 26**k % 26) for k in (3, 2, 1, 0)) + "s" for i in range(TEXT_MEMO_SIZE + 10)]
    assert [stem(w) for w in words[:2]] == ["zqaaaa", "zqaaab"]
    for w in words[2:]:
        stem(w)
    assert max(memo_sizes()) == TEXT_MEMO_SIZE  # the oldest words were dropped, not kept
    forget_texts()
    assert sum(memo_sizes()) == 0


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

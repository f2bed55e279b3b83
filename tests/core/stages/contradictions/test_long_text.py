"""The detector on long and repetitive text: every step linear in its input, the pairwise steps bounded
(docs/reference/pipeline.md §4, "Long texts"). Speed itself is measured by bench/long_text.py; these
tests pin that the linear rewrites decide exactly what the plain definitions decide."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.stages.contradictions import values_conflict
from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.lexicon import PAIR_MAX_VALUES, is_identifier

#: the definition of an identifier-shaped word, as a (backtracking) pattern: the oracle for short words
IDENTIFIER_DEFINITION = re.compile(r"\d.*[^\W\d_]|[^\W\d_].*\d|_|[^\W\d_][./][^\W\d_]")

_WORD_CHARS = st.sampled_from(list("ab1_./\n-²٣éZ x"))


@settings(max_examples=3000)
@given(st.text(alphabet=_WORD_CHARS, max_size=14) | st.text(max_size=10))
def test_is_identifier_decides_as_the_definition(word: str) -> None:
    assert is_identifier(word) == (IDENTIFIER_DEFINITION.search(word) is not None)


def test_is_identifier_examples() -> None:
    assert is_identifier("v2") and is_identifier("x86") and is_identifier("2fa") and is_identifier("max_conn")
    assert is_identifier("a.b") and is_identifier("tcp/ip")
    assert not is_identifier("kafka") and not is_identifier("2024") and not is_identifier("a\n1")


def test_a_long_word_is_one_identifier_check() -> None:
    # 200 k letters then a digit: the definition's backtracking pattern takes minutes on this, the check one pass
    assert is_identifier("a" * 200_000 + "1")
    assert not is_identifier("a" * 200_000)


_CLAUSE_WORDS = st.sampled_from(
    ["not", "no", "never", "longer", "more", "fewer", "less", "than", "5", "10 days", "at least 3", "up to 4",
     "within 2 hours", "over 3", ",", ".", ":", ";", "and", "kept", "ports", "2379", "is", "client"]
)  # fmt: skip


def _bounds(text: str) -> tuple[tuple[int, int], ...]:
    """(token index, bound) of every bounded quantity of the analysed text."""
    doc = analyse(text)
    return tuple((k, t.qty.bound) for k, t in enumerate(doc.tokens) if t.qty is not None and t.qty.bound)


@settings(max_examples=400, deadline=None)
@given(st.lists(_CLAUSE_WORDS, max_size=16))
def test_negated_comparatives_turn_bounds_consistently(words: list[str]) -> None:
    """Each negation before a comparative ("longer than") turns the first bounded number after it, so a
    second negation turns it back: doubling every negation leaves every bound as it is without negations."""
    text = "Data is " + " ".join(words)
    doubled = "Data is " + " ".join(w + " " + w if w in ("not", "never") else w for w in words)
    plain = "Data is " + " ".join(w for w in words if w not in ("not", "never"))
    bounds_doubled = [b for _, b in _bounds(doubled)]
    bounds_plain = [b for _, b in _bounds(plain)]
    assert bounds_doubled == bounds_plain, text


def test_list_items_share_the_nearest_attribute_of_their_sentence() -> None:
    doc = analyse("The client ports are 2379, 2380 and 2381. Backups run at 02:00, 03:00.")
    bags = {doc.tokens[v.tok].text: v.ctx for v in doc.values}
    assert bags["2379"] == bags["2380"] == bags["2381"]
    assert "client" in " ".join(bags["2380"])
    assert bags["02:00"] == bags["03:00"] != bags["2380"]


def _numbers(n: int, changed_at: int | None) -> str:
    return "The limits are " + ", ".join(str(9000 + i if i != changed_at else 1) for i in range(n)) + "."


def test_pairing_reads_the_first_values_of_a_long_list() -> None:
    assert values_conflict(_numbers(300, None), _numbers(300, 5)) is not None
    # a value past the bound is not compared: the documented price of bounded pairing
    assert values_conflict(_numbers(300, None), _numbers(300, PAIR_MAX_VALUES + 20)) is None


def test_a_long_repetitive_pair_is_compared() -> None:
    text = "The value is " + "not " * 20_000 + "enabled today."
    assert values_conflict(text, text.replace("enabled", "disabled")) is not None

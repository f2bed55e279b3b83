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


def _bound_of(text: str) -> int:
    (bound,) = [t.qty.bound for t in analyse(text).tokens if t.qty is not None]
    return bound


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["kept", "ports", "client", "data", "and", "logs"]), max_size=6),
    st.sampled_from(["longer", "more", "fewer", "less"]),
    st.sampled_from(["5", "10 days", "2 hours", "2379"]),
    st.integers(0, 3),
)
def test_negated_comparatives_turn_bounds_consistently(filler: list[str], comparative: str, value: str, k: int) -> None:
    """Each negation before a comparative ("not more than 5") turns the bound of the number after it, so a
    second negation turns it back: k negations bound the number as k - 2 do, and one turns the bare bound."""

    def text(n: int) -> str:
        return " ".join(["Data is", *filler, *(["not"] * n), comparative, "than", value])

    assert _bound_of(text(k + 2)) == _bound_of(text(k)), text(k)
    assert _bound_of(text(1)) == -_bound_of(text(0)) != 0, text(1)


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

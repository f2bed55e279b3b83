"""The cross-CPU report comparison: float rounding passes, anything a reader would see differently fails."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.report_compare import ABS, REL, assert_same_report, report_differences

REPORT = {
    "scenario": "etcd_upgrade",
    "facts": [{"id": "f1", "cdr": 0.4213, "packed": True, "rank": 1}, {"id": "f2", "cdr": 0.1, "packed": False}],
    "headers": {"CRP-Context-Facts-Used": "2/3"},
    "pairs": [],
}


def _with(path: list[object], value: object) -> dict:
    import copy

    doc = copy.deepcopy(REPORT)
    node = doc
    for key in path[:-1]:
        node = node[key]  # type: ignore[index]
    node[path[-1]] = value  # type: ignore[index]
    return doc


def test_float_rounding_of_another_kernel_is_equal():
    assert_same_report(_with(["facts", 0, "cdr"], 0.4213 * (1 + 1.2e-6)), REPORT)
    assert_same_report(_with(["facts", 1, "cdr"], 0.1 - 3e-8), REPORT)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["facts", 0, "cdr"], 0.4213 * (1 + 5 * REL)),  # a float beyond the tolerance
        (["facts", 0, "id"], "f9"),  # an id
        (["facts", 0, "rank"], 2),  # an int
        (["facts", 0, "packed"], False),  # a verdict
        (["facts", 0, "rank"], 1.0),  # an int that became a float
        (["headers", "CRP-Context-Facts-Used"], "1/3"),  # a header
        (["pairs"], [{"a": "f1"}]),  # a count
    ],
)
def test_anything_else_that_changed_is_reported(path, value):
    assert report_differences(_with(path, value), REPORT)
    with pytest.raises(AssertionError):
        assert_same_report(_with(path, value), REPORT)


def test_order_and_keys_are_exact():
    swapped = dict(REPORT, facts=list(reversed(REPORT["facts"])))
    assert report_differences(swapped, REPORT)
    reordered = {k: REPORT[k] for k in reversed(list(REPORT))}
    assert report_differences(reordered, REPORT) == [f"$: keys {list(reordered)} != {list(REPORT)}"]


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.floats(min_value=-1.0, max_value=1.0))
def test_the_tolerance_is_relative_with_a_floor(x, wiggle):
    moved = x + wiggle * max(abs(x) * REL * 0.5, ABS * 0.5)
    assert report_differences({"v": moved}, {"v": x}) == []
    far = x + max(abs(x) * REL * 4, ABS * 4)
    assert report_differences({"v": far}, {"v": x}) != []

"""report.plain: JSON-plain values (docs/reference/reports.md), the exact-type fast path included."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from crp_core.report import plain


def test_exact_values_by_hand():
    assert plain(np.float64(0.25)) == 0.25 and type(plain(np.float64(0.25))) is float
    assert plain(np.float32(0.5)) == 0.5 and type(plain(np.float32(0.5))) is float
    assert plain(np.int64(7)) == 7 and type(plain(np.int64(7))) is int
    assert plain(np.int32(7)) == 7 and type(plain(np.int32(7))) is int
    assert plain(np.bool_(True)) is True
    assert plain(float("nan")) is None and plain(np.float64("inf")) is None and plain(-math.inf) is None
    assert plain({"a": (1, np.float64(2.5)), 3: [None, "x", False]}) == {"a": [1, 2.5], "3": [None, "x", False]}
    assert plain(np.array([1.0, np.nan])) == [1.0, None]
    assert plain({2, 1}) == [1, 2]


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=5),
    st.integers(-(2**40), 2**40),
    st.floats(),
    st.floats().map(np.float64),
    st.integers(-(2**40), 2**40).map(np.int64),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=3), inner, max_size=4),
    ),
    max_leaves=20,
)


def _only_builtins(v):
    if isinstance(v, list):
        return all(_only_builtins(x) for x in v)
    if isinstance(v, dict):
        return all(type(k) is str and _only_builtins(x) for k, x in v.items())
    return v is None or type(v) in (bool, int, float, str)


@given(VALUES)
def test_plain_gives_builtin_json_that_keeps_every_finite_number(value):
    out = plain(value)
    assert _only_builtins(out)
    assert json.loads(json.dumps(out, allow_nan=False)) == out

    def same(a, b):
        if isinstance(a, (list, tuple)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return list(map(str, a)) == list(b) and all(same(x, y) for x, y in zip(a.values(), b.values()))
        if isinstance(a, (float, np.floating)) and not math.isfinite(a):
            return b is None
        return a == b and (type(a) is bool) == (type(b) is bool)

    assert same(value, out)

"""Comparing reports across CPUs: floats that went through BLAS (float32 products rounded by whichever
OpenBLAS kernel the machine picks) are equal within a relative tolerance; everything else (ids, order,
counts, verdicts, headers, strings, ints, booleans, keys) is compared exactly."""

from __future__ import annotations

import math
from typing import Any

#: relative tolerance for floats (float32 products differ by up to ~1e-6 relative between kernels)
REL = 1e-5
#: absolute floor for floats near zero, where a relative bound means nothing
ABS = 1e-7


def report_differences(got: Any, expected: Any, path: str = "$") -> list[str]:
    """Every place where ``got`` differs from ``expected`` (JSON-shaped values), as ``path: reason``."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return [] if type(got) is type(expected) and got == expected else [f"{path}: {got!r} != {expected!r}"]
    if isinstance(expected, float) or isinstance(got, float):
        if type(got) is not type(expected):  # an int that became a float reads differently
            return [f"{path}: {got!r} != {expected!r}"]
        if math.isnan(expected) and math.isnan(got):
            return []
        if math.isclose(got, expected, rel_tol=REL, abs_tol=ABS):
            return []
        return [f"{path}: {got!r} != {expected!r} (beyond rel {REL:g} / abs {ABS:g})"]
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [f"{path}: {type(got).__name__} != object"]
        if list(got) != list(expected):
            return [f"{path}: keys {list(got)} != {list(expected)}"]
        return [d for k in expected for d in report_differences(got[k], expected[k], f"{path}.{k}")]
    if isinstance(expected, list):
        if not isinstance(got, list):
            return [f"{path}: {type(got).__name__} != array"]
        if len(got) != len(expected):
            return [f"{path}: {len(got)} items != {len(expected)}"]
        return [d for i, (g, e) in enumerate(zip(got, expected)) for d in report_differences(g, e, f"{path}[{i}]")]
    return [] if type(got) is type(expected) and got == expected else [f"{path}: {got!r} != {expected!r}"]


def assert_same_report(got: Any, expected: Any) -> None:
    """``got`` equals ``expected`` up to float rounding; the message lists the first differences."""
    diffs = report_differences(got, expected)
    assert not diffs, "\n".join(diffs[:20])

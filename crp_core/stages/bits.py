"""Rows of a 2-D bool array as Python ints (bit j = column j): the bit masks stages 3 and 4 test with
integer ``&`` instead of per-element Python loops."""

from __future__ import annotations

import numpy as np


def row_bits(mask: np.ndarray) -> list[int]:
    """Each row of a 2-D bool array as an int whose bit j is column j."""
    m, n = mask.shape
    words = max(-(-n // 64), 1)
    padded = np.zeros((m, words * 64), dtype=bool)
    padded[:, :n] = mask
    packed = np.packbits(padded, axis=1, bitorder="little").view("<u8")  # (m, words): bit j of word w = column 64w + j
    if words == 1:
        return packed[:, 0].tolist()
    return [sum(w << (64 * k) for k, w in enumerate(ws)) for ws in packed.tolist()]


def bits_of(row: np.ndarray) -> int:
    """One 1-D bool array as an int whose bit j is element j (:func:`row_bits` of a single row)."""
    return int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")

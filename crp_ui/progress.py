"""Progress bars for work that takes more than a moment: counts, rate and time left.

:func:`progress_line` is plain (tested without Streamlit); :class:`Bar` wraps ``st.progress`` and is
what a page hands to a ``crp_core`` function as its ``progress(done, total)`` callback. The text reads
``<label>: 120 / 400 runs · 35 runs/s · about 8 s left``. Updates are throttled (at most one every
:data:`MIN_UPDATE_S`, plus the last), so a callback per item costs nothing noticeable.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from . import render
from .progress_text import format_duration

#: seconds between two updates of the bar (the final count is always shown)
MIN_UPDATE_S = 0.25


def progress_line(label: str, done: int, total: int, elapsed_s: float, *, unit: str = "", what: str = "") -> str:
    """``label: done / total unit · rate unit/s · about N s left · what`` (rate and ETA once known)."""
    u = f" {unit}" if unit else ""
    bits = [f"{label}: {done:,} / {total:,}{u}"]
    if done > 0 and elapsed_s > 0:
        rate = done / elapsed_s
        bits.append(f"{rate:,.1f}{u}/s" if rate < 10 else f"{rate:,.0f}{u}/s")
        if done < total:
            bits.append(f"about {format_duration((total - done) / rate)} left")
    if what:
        bits.append(what)
    return " · ".join(bits)


class Bar:
    """An ``st.progress`` bar fed by ``bar(done, total)`` (or ``bar.step(done, total, what)``)."""

    def __init__(self, label: str, *, unit: str = "", clock: Callable[[], float] = time.perf_counter) -> None:
        self.label = label
        self.unit = unit
        self._clock = clock
        self._t0 = clock()
        self._last = -1e9
        self._bar: DeltaGenerator = st.progress(0.0, text=f"{label}…")

    def __call__(self, done: int, total: int) -> None:
        self.step(done, total)

    def step(self, done: int, total: int, what: str = "") -> None:
        """Show ``done`` of ``total`` (throttled; the last step is always drawn)."""
        now = self._clock()
        if done < total and now - self._last < MIN_UPDATE_S:
            return
        self._last = now
        text = progress_line(self.label, done, total, now - self._t0, unit=self.unit, what=what)
        self._bar.progress(min(1.0, done / max(total, 1)), text=render.md_escape(text))

    def empty(self) -> None:
        """Remove the bar (the work is done)."""
        self._bar.empty()

"""Prints how the value-conflict detector's cost grows with the length of a text, for repetitive shapes
(one long word, thousands of numbers, negations, list items, unique words): each pair of texts is
analysed and compared cold at two lengths, and the ratio of the times says linear (about the ratio of
the lengths) or worse. A check, with timings: docs/reference/pipeline.md §4 ("Long texts").

    python bench/long_text.py                  # 20 k and 100 k characters
    python bench/long_text.py --sizes 5000 50000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crp_core.stages.contradictions import values_conflict

SHAPES = {
    "one long word": "a",
    "digits": "1",
    "word-hyphen": "a-",
    "word-plus": "a+",
    "numbers, commas": "1,",
    "numbers, spaces": "1 ",
    "negations": "not ",
    "list with and": "1 and ",
    "port phrases": "port 80 ",
    "names": "Kafka ",
    "dates": "2024-01-01 ",
    "money": "$1 ",
    "polarity words": "enabled disabled ",
    "sentences": "The port is 80. ",
}


def _unique_words(n: int) -> str:
    return " ".join("".join(chr(97 + int(d)) for d in str(i)) for i in range(n))


def _seconds(text: str) -> float:
    t = time.perf_counter()
    values_conflict(text + " today.", text[:-3] + "zz today.")
    return time.perf_counter() - t


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs=2, default=[20_000, 100_000], metavar=("SMALL", "LARGE"))
    args = ap.parse_args(argv)
    small, large = args.sizes
    print(f"load average {os.getloadavg()[0]:.2f}; sizes {small} and {large} characters (ratio {large / small:.0f})")
    print(f"{'shape':<18} {'small ms':>10} {'large ms':>10} {'ratio':>7}")
    worst = 0.0
    cases = [(name, lambda n, u=unit: "The value is " + (u * (n // len(u) + 1))[:n]) for name, unit in SHAPES.items()]
    cases.append(("unique words", lambda n: _unique_words(n // 6) + " 1 2 3" * 50))
    for name, make in cases:
        a, b = _seconds(make(small)), _seconds(make(large))
        worst = max(worst, b)
        print(f"{name:<18} {a * 1000:10.1f} {b * 1000:10.1f} {b / max(a, 1e-9):7.1f}", flush=True)
    print(f"slowest pair at {large} characters: {worst:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

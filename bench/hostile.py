"""Prints the hostile-input corpus's counts and outcomes: every family of tests/support/hostile_gen.py
(the hand-made inputs of tests/data/hostile/hostile.toml and the generated ones), each in one bounded
child process calling the CLI in-process per input, two children at a time; then every numeric setting
at its range boundaries through ``run --set``.

    python bench/hostile.py            # per family, per reader, per outcome; the --set sweep
    python bench/hostile.py --no-set   # without the sweep
    python bench/hostile.py -v         # also every input that did not end as expected, and the slowest
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.hostile import sweep_set
from tests.support.hostile_gen import families
from tests.support.hostile_run import run_family

OUTCOMES = ("refused", "warned", "loaded")


def _families(tmp: Path) -> dict[str, list[dict]]:
    def one(name: str) -> tuple[str, list[dict]]:
        d = tmp / name
        d.mkdir()
        return name, run_family(name, d)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, [f.name for f in families()]))


def _table(title: str, by: dict[str, list[dict]]) -> int:
    print(f"\n{title:<56} {'inputs':>7} " + " ".join(f"{o:>8}" for o in OUTCOMES) + f" {'failed':>7}")
    failed = 0
    totals: Counter[str] = Counter()
    for key, rows in by.items():
        c = Counter(r["expected"] for r in rows)
        bad = sum(bool(r["failures"]) for r in rows)
        failed += bad
        totals.update(c)
        print(f"{key:<56} {len(rows):>7} " + " ".join(f"{c[o]:>8}" for o in OUTCOMES) + f" {bad:>7}")
    n = sum(len(rows) for rows in by.values())
    print(f"{'all':<56} {n:>7} " + " ".join(f"{totals[o]:>8}" for o in OUTCOMES) + f" {failed:>7}")
    return failed


def main(argv: list[str]) -> int:
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = _families(Path(tmp))
    took = time.perf_counter() - t
    fams = families()
    _table("family", {f.name: rows[f.name] for f in fams})
    by_reader: dict[str, list[dict]] = defaultdict(list)
    for f in fams:
        by_reader[f.reader] += rows[f.name]
    failed = _table("reader", dict(by_reader))
    print(f"\n{took:.0f} s for the families (two children at a time)")
    every = [r for f in fams for r in rows[f.name]]
    if "-v" in argv:
        for r in every:
            for msg in r["failures"]:
                print(f"  ! {r['case'][:70]}: {msg[:300]}")
        for r in sorted(every, key=lambda r: -r["seconds"])[:10]:
            print(f"  slowest: {r['case'][:70]} {r['seconds']:.2f} s")
    if "--no-set" not in argv:
        srows = sweep_set()
        sby = Counter((r["expected"], r["ok"]) for r in srows)
        print(
            f"\n--set sweep: {len(srows)} values; "
            + ", ".join(f"{n} {exp} {'as expected' if ok else 'FAILED'}" for (exp, ok), n in sorted(sby.items()))
        )
        failed += sum(not r["ok"] for r in srows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

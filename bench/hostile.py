"""Prints the hostile-input table: every input of tests/data/hostile/hostile.toml through
the commands that read it (``validate`` and ``run``; ``check`` for suites, configs, baselines; ``triage
decisions`` for a database; bounded child processes), then every numeric setting at its
range boundaries through ``run --set``, with the counts the closing note needs.

    python bench/hostile.py            # both tables
    python bench/hostile.py --no-set   # only the files
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.hostile import check, commands, manifest, sweep_set  # noqa: E402


def main(argv: list[str]) -> int:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, entry in enumerate(manifest()):
            d = Path(tmp) / str(i)
            d.mkdir()
            row = check(entry, d)
            rows.append(row)
            ran = "  ".join(
                f"{c} {row.get(f'{c}_rc', row.get(c, '-'))!s:>2} ({row.get(f'{c}_s', 0):5.2f} s)"
                for c in commands(entry, Path(tmp))
            )
            print(f"{row['input']:<48} {entry.outcome:<8} {ran}  {row['outcome']}", flush=True)
            for f in row["failures"]:
                print(f"    ! {f}")
    by = Counter((r["expected"], r["outcome"]) for r in rows)
    print(f"\nfiles: {len(rows)} inputs; " + ", ".join(f"{n} {exp} {out}" for (exp, out), n in sorted(by.items())))
    failed = sum(r["outcome"] != "as expected" for r in rows)
    if "--no-set" not in argv:
        srows = sweep_set()
        for r in srows:
            mark = "ok" if r["ok"] else "FAILED"
            print(
                f"--set {r['key']}={r['value']:<24} expected {r['expected']:<8} rc {r['rc']!s:<4} "
                f"{r['seconds']:6.2f} s {mark}  {' '.join(r['stderr'])[:100]}"
            )
        sby = Counter((r["expected"], r["ok"]) for r in srows)
        print(
            f"\n--set: {len(srows)} values; "
            + ", ".join(f"{n} {exp} {'as expected' if ok else 'FAILED'}" for (exp, ok), n in sorted(sby.items()))
        )
        failed += sum(not r["ok"] for r in srows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Check the sample CKF's planted pairs against the value-conflict detector (docs/decisions/detector.md).

    python bench/detector_planted.py

Every planted conflict must be detected with its planted pattern; every planted paraphrase and
near-duplicate must give None. Mirrors tests/repo/test_sample_ckf.py's text checks without the model.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from types import ModuleType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _import_detector() -> ModuleType:
    """The detector module of this checkout (the repository root put first on the path)."""
    sys.path.insert(0, ROOT)
    return importlib.import_module("crp_core.stages.contradictions.values")


values_conflict = _import_detector().values_conflict


def main() -> int:
    contents: dict[str, str] = {}
    with open(os.path.join(ROOT, "sample_ckf", "knowledge_base.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            contents[row["fact_id"]] = row["content"]
    with open(os.path.join(ROOT, "sample_ckf", "planted_conflicts.json"), encoding="utf-8") as fh:
        planted = json.load(fh)
    failures = 0
    for c in planted["conflicts"]:
        vc = values_conflict(contents[c["fact_a"]], contents[c["fact_b"]])
        found = vc.patterns if vc else ()
        ok = c["pattern"] in found
        failures += not ok
        print(f"{c['pair_id']:4} {'ok  ' if ok else 'FAIL'} expected {c['pattern']:18} found {','.join(found) or '-'}")
    for group in ("paraphrases", "near_duplicates"):
        for p in planted[group]:
            vc = values_conflict(contents[p["fact_a"]], contents[p["fact_b"]])
            ok = vc is None
            failures += not ok
            print(
                f"{p['pair_id']:4} {'ok  ' if ok else 'FAIL'} expected None               found "
                f"{','.join(vc.patterns) if vc else '-'}"
            )
    print(f"\n{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

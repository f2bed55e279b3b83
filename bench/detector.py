"""Benchmark: the value-conflict detector on the labelled corpus (SPEC-005 §5.3; docs/decisions/detector.md).

    python bench/detector.py            # from the repository root
    python bench/detector.py -v         # and every miss and false alarm of the blind batches

Prints, for the detector as shipped (the rules, then the learned comparison where they find nothing;
bench/detector_learned.py compares the two), one table of precision / recall / F1 per category and
overall for the dev set, the held-out set and both, then one per blind batch (``blind/batch-*.jsonl``,
written by people who never saw the rules; see its README for the learning curve) with every batch's
figures per category
(scoring as in tests/core/stages/contradictions/test_detector_corpus.py: a pair is
correct when the conflict / no-conflict answer matches and the expected patterns are a subset of those found; a
conflict found with a missing pattern is both a miss and a false alarm), then the cost per pair:

* warm - each text already analysed (as in the whole-CKF scan, where a text meets many
  neighbours): the pair comparison alone, memo of ``values_conflict`` cleared; once with the rules
  alone (``detector_learned = false``) and once as shipped (the learned comparison where the rules
  find nothing);
* cold - tokenising and analysing both texts too.

Times are CPU time per pair (best of several rounds) and wall time next to the machine's load
average: on a busy machine wall time grows with the load, CPU time much less.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from types import ModuleType

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _import(name: str) -> ModuleType:
    """A module of this checkout (the repository root put first on the path)."""
    if sys.path[0] != ROOT:
        sys.path.insert(0, ROOT)
    return importlib.import_module(name)


@functools.cache
def trainer() -> ModuleType:
    """tools/train_detector.py, loaded once as a module (tools/ is no package): the training recipe and the corpus's
    batch order (``batch_number``)."""
    spec = importlib.util.spec_from_file_location(
        "tools_train_detector", os.path.join(ROOT, "tools", "train_detector.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: a blind batch's number from its name or file ("batch-07.jsonl" -> 7): the corpus's order
batch_number = trainer().batch_number
detector = _import("crp_core.stages.contradictions.values")
clauses = _import("crp_core.stages.contradictions.clauses")
memos = _import("crp_core.stages.contradictions.memos")

DATA = os.path.join(ROOT, "tests", "data", "conflict_pairs")
CATEGORIES = (
    "number_changed",
    "entity_substituted",
    "negation_flip",
    "date_shifted",
    "magnitude_altered",
    "paraphrase",
    "unit_forms",
    "different_attributes",
    "swapped_values",
    "multi_sentence",
)


def load(name: str) -> list[dict]:
    with open(os.path.join(DATA, name), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def judge(row: dict) -> tuple[str, bool, tuple[str, ...]]:
    """("tp" | "fn" | "fp" | "tn", whether a miss is also a false alarm, the patterns found)."""
    vc = detector.values_conflict(row["a"], row["b"])
    found = vc.patterns if vc is not None else ()
    if row["conflict"]:
        if vc is not None and set(row["patterns"]) <= set(found):
            return "tp", False, found
        return "fn", vc is not None, found
    return ("fp" if vc is not None else "tn"), False, found


def prf(rows: list[dict]) -> tuple[float, float, float, int]:
    tp = fp = fn = 0
    for row in rows:
        kind, also_fp, _ = judge(row)
        tp += kind == "tp"
        fn += kind == "fn"
        fp += kind == "fp" or also_fp
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f, len(rows)


def per_pair(
    pairs: list[tuple[str, str]], prepare: Callable[[], None], rounds: int, learned: bool = True
) -> tuple[float, float]:
    """Best CPU and wall microseconds per pair over ``rounds`` rounds; ``prepare`` runs before each;
    ``learned=False``: the rules alone (``detector_learned = false``)."""
    best_cpu = best_wall = float("inf")
    check = detector.conflict_check(learned)
    for _ in range(rounds):
        prepare()
        c0, w0 = time.process_time(), time.perf_counter()
        for a, b in pairs:
            check(a, b)
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    return best_cpu / len(pairs) * 1e6, best_wall / len(pairs) * 1e6


def table(splits: dict[str, list[dict]]) -> None:
    header = f"| {'category':22} |" + "".join(f" {name + ' P':>9} {'R':>6} {'F1':>6} {'n':>4} |" for name in splits)
    print(header)
    print("|" + "-" * (len(header) - 2) + "|")
    for cat in (*CATEGORIES, "overall"):
        cells = []
        for rows in splits.values():
            sel = rows if cat == "overall" else [r for r in rows if r["category"] == cat]
            p, r, f, n = prf(sel)
            cells.append(f" {p:9.3f} {r:6.3f} {f:6.3f} {n:4d} |")
        print(f"| {cat:22} |" + "".join(cells))


def blind_batches() -> dict[str, list[dict]]:
    """Every blind batch, by name (``batch-01``, ...)."""
    folder = os.path.join(DATA, "blind")
    names = (
        sorted((n for n in os.listdir(folder) if n.startswith("batch-") and n.endswith(".jsonl")), key=batch_number)
        if os.path.isdir(folder)
        else []
    )
    return {n[: -len(".jsonl")]: load(os.path.join("blind", n)) for n in names}


def print_errors(name: str, rows: list[dict]) -> None:
    for row in rows:
        kind, _, found = judge(row)
        if kind in ("fn", "fp"):
            label = "miss" if kind == "fn" else "false alarm"
            print(f"{name} {row['id']}: {label}, expected {row['patterns']} found {list(found)}")
            print(f"    a: {row['a']}")
            print(f"    b: {row['b']}")


def main() -> int:
    verbose = "-v" in sys.argv[1:]
    dev, holdout = load("dev.jsonl"), load("holdout.jsonl")
    table({"dev": dev, "holdout": holdout, "both": dev + holdout})
    blind = blind_batches()
    if blind:
        print()
        table(blind | {"blind": [r for rows in blind.values() for r in rows]})
    if verbose:
        print()
        for name, rows in {"dev": dev, "holdout": holdout, **blind}.items():
            print_errors(name, rows)

    pairs = [(r["a"], r["b"]) for r in dev + holdout]
    pairs += [(b, a) for a, b in pairs]

    def warm() -> None:
        detector.values_conflict.cache_clear()
        for a, b in pairs:
            clauses.analyse(a)
            clauses.analyse(b)

    def cold() -> None:
        memos.forget_texts()

    rules_cpu, rules_wall = per_pair(pairs, warm, 7, learned=False)
    warm_cpu, warm_wall = per_pair(pairs, warm, 7)
    cold_cpu, cold_wall = per_pair(pairs, cold, 3)
    load1, load5, _ = os.getloadavg()
    print()
    print(f"pairs timed: {len(pairs)} (the corpus in both directions)")
    print(f"warm, rules alone (detector_learned false):  {rules_cpu:6.1f} us/pair CPU, {rules_wall:6.1f} us/pair wall")
    print(f"warm (texts analysed, pair comparison only): {warm_cpu:6.1f} us/pair CPU, {warm_wall:6.1f} us/pair wall")
    print(f"cold (tokenise + analyse + compare):         {cold_cpu:6.1f} us/pair CPU, {cold_wall:6.1f} us/pair wall")
    print(f"load average: {load1:.2f} (1 min), {load5:.2f} (5 min) on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

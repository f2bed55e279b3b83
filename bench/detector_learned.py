"""Measurement of the detector's learned comparison, leave-one-batch-out and on new files (issue #32).

    python bench/detector_learned.py            # from the repository root
    python bench/detector_learned.py -v         # and the held-out pairs whose verdict the learned part changed
    python bench/detector_learned.py --score new-01.jsonl new-02.jsonl   # train on every corpus, score new files
    python bench/detector_learned.py --score new-01.jsonl --batches=8,16,24   # ... trained on the first N batches

Options: ``--C=`` (regularisation, tools/train_detector.py's default), ``--t=`` (threshold, likewise),
``--only=batch-07,...`` (held-out batches to score); with ``--score``, ``--batches=8,16,...``: one row per count
N, the weights trained on dev, holdout and the first N blind batches only (how fresh writing's score moves with the
size of the training corpus, the rules fixed). Other learners over the same candidate features, for
comparison with the shipped logistic regression (docs/decisions/detector-round15.md): ``--pairs=kind_polar*words,...``
adds the products of those features to the regression's inputs; ``--model=trees`` fits scikit-learn's
HistGradientBoostingClassifier instead (``--depth=`` its max_depth, ``--rounds=`` its max_iter, ``--rate=`` its
learning_rate; fixed random_state, no early stopping).

The detector (``values_conflict``) runs its rules first; where they find nothing, the learned comparison
(crp_core/stages/contradictions/candidates.py and learned.py) accepts one of the candidates the rules' analysis
proposes, or none. Here its weights are not the shipped ones: for each blind batch they are trained
(tools/train_detector.py's recipe) on the other batches plus ``dev`` and ``holdout`` and the held-out batch is scored
with the detector's scoring (bench/detector.py: a conflict counts only with every expected pattern), against the
rules alone on the same batch. ``--score`` trains on every corpus here and scores files no one working on the
detector has read.

The rules saw every blind batch, so their figure on a batch here is an upper bound of what they do on unseen
writing; the honest figure for the rules is the learning curve in tests/data/conflict_pairs/blind/README.md.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if sys.path[0] != ROOT:
    sys.path.insert(0, ROOT)

from bench import detector as bench  # noqa: E402
from crp_core.stages.contradictions.candidates import FEATURE_NAMES, Candidate  # noqa: E402
from crp_core.stages.contradictions.learned import Weights, best_candidate  # noqa: E402
from crp_core.stages.contradictions.values import learned_candidates, values_conflict  # noqa: E402

trainer = bench.trainer()
Judge = Callable[[dict], tuple[str, bool, tuple[str, ...]]]


def _option(args: list[str], name: str, default: str) -> str:
    return next((a.split("=", 1)[1] for a in args if a.startswith(name + "=")), default)


def weights_for(rows: list[dict], c: float, threshold: float) -> Weights:
    coefs, intercept = trainer.fit(*trainer.training_rows(rows), c)
    return Weights(tuple(coefs), intercept, threshold, "", len(rows), c)


Score = Callable[[Candidate], float]


def _pairs(args: list[str]) -> list[tuple[int, int]]:
    """The feature products ``--pairs=`` names, as index pairs into FEATURE_NAMES."""
    spec = _option(args, "--pairs", "")
    out = []
    for item in filter(None, spec.split(",")):
        left, right = item.split("*")
        out.append((FEATURE_NAMES.index(left), FEATURE_NAMES.index(right)))
    return out


def _inputs(x: list[float], pairs: list[tuple[int, int]]) -> list[float]:
    return x + [x[i] * x[j] for i, j in pairs]


def score_for(rows: list[dict], args: list[str]) -> Score:
    """A learner other than the shipped one (``--model=trees`` or ``--pairs=``), trained on ``rows``: each
    candidate's probability of being a conflict with its patterns."""
    xs, ys = trainer.training_rows(rows)
    pairs = _pairs(args)
    inputs = [_inputs(x, pairs) for x in xs]
    model: Any
    if _option(args, "--model", "lr") == "trees":
        from sklearn.ensemble import HistGradientBoostingClassifier

        model = HistGradientBoostingClassifier(
            max_depth=int(_option(args, "--depth", "3")),
            max_iter=int(_option(args, "--rounds", "100")),
            learning_rate=float(_option(args, "--rate", "0.1")),
            early_stopping=False,
            random_state=0,
        )
    else:
        from sklearn.linear_model import LogisticRegression

        c = float(_option(args, "--C", str(trainer.REGULARISATION)))
        model = LogisticRegression(C=c, solver="newton-cholesky", max_iter=100, tol=1e-12, random_state=0)
    model.fit(inputs, ys)

    def score(cand: Candidate) -> float:
        return float(model.predict_proba([_inputs(trainer.vector(cand), pairs)])[0][1])

    return score


def _verdict(row: dict, found: tuple[str, ...] | None) -> tuple[str, bool, tuple[str, ...]]:
    """("tp" | "fn" | "fp" | "tn", whether a miss is also a false alarm, the patterns found): bench/detector.py's
    scoring."""
    if row["conflict"]:
        if found is not None and set(row["patterns"]) <= set(found):
            return "tp", False, found
        return "fn", found is not None, found or ()
    return ("fp" if found is not None else "tn"), False, found or ()


def rules_judge(row: dict) -> tuple[str, bool, tuple[str, ...]]:
    """The rules alone (``detector_learned = false``)."""
    vc = values_conflict(row["a"], row["b"], False)
    return _verdict(row, vc.patterns if vc is not None else None)


def learned_judge(w: Weights) -> Judge:
    """The rules, then these weights where the rules find nothing."""

    def judge(row: dict) -> tuple[str, bool, tuple[str, ...]]:
        vc = values_conflict(row["a"], row["b"], False)
        if vc is not None:
            return _verdict(row, vc.patterns)
        best = best_candidate(w, learned_candidates(row["a"], row["b"]))
        return _verdict(row, best[1].patterns if best is not None and best[0] >= w.threshold else None)

    return judge


def scored_judge(score: Score, threshold: float) -> Judge:
    """The rules, then a learner's best candidate where the rules find nothing (the first of equal scores)."""

    def judge(row: dict) -> tuple[str, bool, tuple[str, ...]]:
        vc = values_conflict(row["a"], row["b"], False)
        if vc is not None:
            return _verdict(row, vc.patterns)
        best: tuple[float, Candidate] | None = None
        for cand in learned_candidates(row["a"], row["b"]):
            s = score(cand)
            if best is None or s > best[0]:
                best = (s, cand)
        return _verdict(row, best[1].patterns if best is not None and best[0] >= threshold else None)

    return judge


def prf(rows: list[dict], judge: Judge) -> tuple[float, float, float]:
    tp = fp = fn = 0
    for row in rows:
        kind, also_fp, _ = judge(row)
        tp += kind == "tp"
        fn += kind == "fn"
        fp += kind == "fp" or also_fp
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def leave_one_batch_out(base: list[dict], blind: dict[str, list[dict]], only: list[str], args: list[str]) -> dict:
    """Train on every other batch plus ``base``, score each held-out batch; print one row per batch and the mean."""
    c = float(_option(args, "--C", str(trainer.REGULARISATION)))
    threshold = float(_option(args, "--t", str(trainer.THRESHOLD)))
    print(f"C={c} threshold={threshold}")
    print("| batch | rules P | R | F1 | learned P | R | F1 | delta |")
    print("|---|---|---|---|---|---|---|---|")
    judges: dict[str, Judge] = {}
    f_rules, f_learned = [], []
    for name, held in blind.items():
        if name not in only:
            continue
        train = base + [r for n, rows in blind.items() if n != name for r in rows]
        other = any(a.startswith("--pairs=") for a in args) or _option(args, "--model", "lr") != "lr"
        judges[name] = judge = (
            scored_judge(score_for(train, args), threshold)
            if other
            else learned_judge(weights_for(train, c, threshold))
        )
        pr, rr, fr = prf(held, rules_judge)
        pl, rl, fl = prf(held, judge)
        f_rules.append(fr)
        f_learned.append(fl)
        print(f"| {name} | {pr:.3f} | {rr:.3f} | {fr:.3f} | {pl:.3f} | {rl:.3f} | {fl:.3f} | {fl - fr:+.3f} |")
    n = max(len(f_rules), 1)
    mean_r, mean_l = sum(f_rules) / n, sum(f_learned) / n
    print(f"| mean | | | {mean_r:.4f} | | | {mean_l:.4f} | {mean_l - mean_r:+.4f} |")
    return judges


def _by_batch(judges: dict[str, Judge], batch_of: dict[str, str]) -> Judge:
    """Judge each pair with the model its batch was held out from."""

    def judge(row: dict) -> tuple[str, bool, tuple[str, ...]]:
        return judges[batch_of[row["id"]]](row)

    return judge


def per_category(blind: dict[str, list[dict]], judges: dict[str, Judge]) -> None:
    """Each category over every held-out pair, each judged by the model its batch was held out from."""
    print()
    print("| category | rules P | R | F1 | learned P | R | F1 |")
    print("|---|---|---|---|---|---|---|")
    held = [(name, row) for name, rows in blind.items() if name in judges for row in rows]
    for cat in (*bench.CATEGORIES, "overall"):
        pairs = [(n, r) for n, r in held if cat in ("overall", r["category"])]
        batch_of = {r["id"]: n for n, r in pairs}
        pr, rr, fr = prf([r for _, r in pairs], rules_judge)
        pl, rl, fl = prf([r for _, r in pairs], _by_batch(judges, batch_of))
        print(f"| {cat} | {pr:.3f} | {rr:.3f} | {fr:.3f} | {pl:.3f} | {rl:.3f} | {fl:.3f} |")


def changed_verdicts(blind: dict[str, list[dict]], judges: dict[str, Judge]) -> None:
    for name, judge in judges.items():
        for row in blind[name]:
            before, after = rules_judge(row)[0], judge(row)[0]
            if before != after:
                print(f"{name} {row['id']}: {before} -> {after}\n    a: {row['a']}\n    b: {row['b']}")


def score_files(base: list[dict], blind: dict[str, list[dict]], paths: list[str], args: list[str]) -> None:
    """Train on every corpus here (dev, holdout, every blind batch; with ``--batches=``, the first N blind batches
    for each N) and score new labelled files, rules alone against rules with the learned comparison."""
    c = float(_option(args, "--C", str(trainer.REGULARISATION)))
    threshold = float(_option(args, "--t", str(trainer.THRESHOLD)))
    counts = [int(n) for n in _option(args, "--batches", str(len(blind))).split(",")]
    files = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            files.append((Path(path).name, [json.loads(line) for line in fh if line.strip()]))
    print("| file | blind batches trained on | rules P | R | F1 | learned P | R | F1 | delta |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in counts:
        trained = [r for name in list(blind)[:n] for r in blind[name]]
        judge = learned_judge(weights_for(base + trained, c, threshold))
        for name, rows in files:
            pr, rr, fr = prf(rows, rules_judge)
            pl, rl, fl = prf(rows, judge)
            cells = f"{pr:.3f} | {rr:.3f} | {fr:.3f} | {pl:.3f} | {rl:.3f} | {fl:.3f} | {fl - fr:+.3f}"
            print(f"| {name} | {n} | {cells} |")


def main() -> int:
    args = sys.argv[1:]
    if "--help" in args or "-h" in args:
        print(__doc__)
        return 0
    base = bench.load("dev.jsonl") + bench.load("holdout.jsonl")
    blind = bench.blind_batches()
    if "--score" in args:
        score_files(base, blind, [a for a in args[args.index("--score") + 1 :] if not a.startswith("-")], args)
        return 0
    only = _option(args, "--only", ",".join(blind)).split(",")
    judges = leave_one_batch_out(base, blind, only, args)
    per_category(blind, judges)
    if "-v" in args:
        changed_verdicts(blind, judges)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

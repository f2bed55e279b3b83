"""Experiment: a learned veto of the detector rules' own verdicts (docs/decisions/detector-veto.md).

    PYTHONPATH=. python bench/detector_veto.py        # from the repository root
    PYTHONPATH=. python bench/detector_veto.py -v     # and the test pairs whose verdict the veto changes
    PYTHONPATH=. python bench/detector_veto.py --train-only   # the training corpus alone (no test figure printed)
    PYTHONPATH=. python bench/detector_veto.py --test-only    # no leave-one-batch-out

Question: can a logistic regression that reads a pair the rules flag (``values_conflict(a, b, False)`` is not
None) tell the rules' false alarms from their true conflicts on writing the rules were not fitted to, and so raise
the whole detector's F1? Nothing here ships: the detector is read, never changed.

Method, fixed before the test batches were scored:

* Training corpus: ``dev``, ``holdout`` and ``blind/batch-*.jsonl`` (tools/train_detector.py's corpus). Test:
  ``blind/scored/batch-*.jsonl``, which neither the rules nor the shipped weights saw (at the measurement of
  docs/decisions/detector-veto.md: trained on 01-68, tested on 69-72).
* One row per pair the rules flag, read in the detector's canonical order: the rules' patterns and diffs (how
  many, a zero-width side, the longest side, a substitution of lower-case words), the pair's features
  (``candidates.pair_features``) and the features of the learned candidate that matches a rule diff (spans that
  overlap on both sides, else a shared pattern; zeros when none), how many candidates there are. Every feature is an
  integer or a value rounded to hundredths, as the shipped model's. Label 1: the rules' verdict is right (a conflict
  and every expected pattern found), 0: a false alarm (no conflict, or a pattern missing).
* scikit-learn's L2 logistic regression (C = 1, lbfgs, random_state 0), unscaled features as the shipped model.
  A vetoed pair is answered "no conflict" (the learned comparison does not run on it: it was never trained on
  pairs the rules flag).
* Threshold (veto when P(right) < t): chosen on the training corpus alone, from out-of-fold probabilities (ten
  folds of whole batches: dev and holdout count as batches) on a grid of hundredths. Primary policy **f1**: the t
  that maximises the pooled F1 of the whole detector over the training pairs (the learned comparison's verdicts on
  the pairs the rules leave from weights trained on the same corpus; the smallest such t). Secondary policy
  **keep99**: the largest t that keeps at least 99 % of the rules' true conflicts out of fold.
* Test: the detector as shipped (rules, shipped weights) without and with the veto trained on the whole corpus.
* Leave-one-batch-out over the 68 blind batches: for each batch, the learned weights (tools/train_detector.py's
  recipe) and the veto (its threshold by the same inner cross-validation) trained on the other batches plus dev
  and holdout, the batch scored with and without the veto. The rules were fitted to these batches, so their false
  alarms here are the ones rule rounds left: fewer than on fresh writing.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if sys.path[0] != ROOT:
    sys.path.insert(0, ROOT)

from bench import detector as bench  # noqa: E402
from bench import detector_learned  # noqa: E402
from crp_core.records import ValueConflict  # noqa: E402
from crp_core.stages.contradictions.candidates import FEATURE_NAMES, Candidate, pair_features  # noqa: E402
from crp_core.stages.contradictions.clauses import analyse  # noqa: E402
from crp_core.stages.contradictions.learned import Weights, best_candidate, weights  # noqa: E402
from crp_core.stages.contradictions.lexicon import ENTITY_SUBSTITUTED, PATTERNS  # noqa: E402
from crp_core.stages.contradictions.values import learned_candidates, values_conflict  # noqa: E402

#: the veto's inverse L2 strength, the folds of the inner cross-validation and the threshold grid
VETO_C = 1.0
INNER_FOLDS = 10
GRID = tuple(i / 100 for i in range(100))
#: the share of the rules' true conflicts the keep99 policy keeps out of fold
KEEP = 0.99
#: the two threshold policies (the first is the one the verdict rests on)
POLICIES = ("f1", "keep99")

PAIR_NAMES = ("words", "loose", "plain", "sent_same", "own_min", "own_max", "sents", "negs", "polars")
RULE_NAMES = (
    *("r_pat_" + p for p in PATTERNS),
    "r_diffs",
    "r_patterns",
    "r_zero_width",
    "r_tokens",
    "r_lower_ent",
    "n_cands",
    "m_span",
    "m_pattern",
)
CAND_NAMES = tuple(n for n in FEATURE_NAMES if n not in PAIR_NAMES)
VETO_NAMES = (*RULE_NAMES, *PAIR_NAMES, *("c_" + n for n in CAND_NAMES))


trainer = detector_learned.trainer  # tools/train_detector.py, as the learned bench loads it


# ------------------------------------------------------------------------------------------------
# One labelled pair, read once
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """A labelled pair with the rules' verdict, the learned candidates and (where the rules fire) the veto row."""

    row: dict[str, Any]
    group: str
    rule: tuple[str, ...] | None  # the rules' patterns, None when they find nothing
    cands: tuple[Candidate, ...]
    x: tuple[float, ...]  # the veto's features (empty when the rules find nothing)

    @property
    def expected(self) -> frozenset[str]:
        return frozenset(self.row["patterns"])

    @property
    def conflict(self) -> bool:
        return bool(self.row["conflict"])

    def right(self, found: tuple[str, ...] | None) -> bool:
        """Is this verdict right: a conflict with every expected pattern, or no conflict where there is none?"""
        if self.conflict:
            return found is not None and self.expected <= set(found)
        return found is None


def _overlap(x: tuple[int, int], y: tuple[int, int]) -> bool:
    return x[0] < y[1] and y[0] < x[1] or x == y


def _matching(vc: ValueConflict, cands: tuple[Candidate, ...]) -> tuple[Candidate | None, bool]:
    """The candidate whose spans overlap a rule diff's on both sides (True), else the first that shares a
    pattern with the rules (False), else none."""
    for c in cands:
        if any(_overlap(d.span_a, e.span_a) and _overlap(d.span_b, e.span_b) for d in vc.diffs for e in c.diffs):
            return c, True
    for c in cands:
        if set(c.patterns) & set(vc.patterns):
            return c, False
    return None, False


def _lower_words(tokens: tuple[str, ...]) -> bool:
    return bool(tokens) and all(t.isalpha() and t.islower() for t in tokens)


def veto_features(a: str, b: str, vc: ValueConflict, cands: tuple[Candidate, ...]) -> tuple[float, ...]:
    """The veto's row for a pair the rules flag (a, b in canonical order), in VETO_NAMES order."""
    match, by_span = _matching(vc, cands)
    rule = {
        **{"r_pat_" + p: float(p in vc.patterns) for p in PATTERNS},
        "r_diffs": float(min(4, len(vc.diffs))),
        "r_patterns": float(len(vc.patterns)),
        "r_zero_width": float(any(not d.tokens_a or not d.tokens_b for d in vc.diffs)),
        "r_tokens": float(min(6, max(max(len(d.tokens_a), len(d.tokens_b)) for d in vc.diffs))),
        "r_lower_ent": float(
            any(d.pattern == ENTITY_SUBSTITUTED and _lower_words(d.tokens_a + d.tokens_b) for d in vc.diffs)
        ),
        "n_cands": float(min(3, len(cands))),
        "m_span": float(match is not None and by_span),
        "m_pattern": float(match is not None and not by_span),
    }
    pair = pair_features(analyse(a), analyse(b))
    cand = match.features if match is not None else {}
    return (
        *(rule[n] for n in RULE_NAMES),
        *(pair[n] for n in PAIR_NAMES),
        *(float(cand.get(n, 0.0)) for n in CAND_NAMES),
    )


def read_pair(row: dict[str, Any], group: str) -> Pair:
    a, b = sorted((row["a"], row["b"]))
    vc = values_conflict(a, b, False)
    cands = learned_candidates(a, b)
    if vc is None:
        return Pair(row, group, None, cands, ())
    return Pair(row, group, vc.patterns, cands, veto_features(a, b, vc, cands))


def load_corpus() -> tuple[list[Pair], dict[str, list[Pair]]]:
    """The training pairs (dev, holdout, blind batches) and the test batches (blind/scored), by name."""
    train = [read_pair(r, "dev") for r in bench.load("dev.jsonl")]
    train += [read_pair(r, "holdout") for r in bench.load("holdout.jsonl")]
    for name, rows in bench.blind_batches().items():
        train += [read_pair(r, name) for r in rows]
    folder = os.path.join(bench.DATA, "blind", "scored")
    test: dict[str, list[Pair]] = {}
    names = (n for n in os.listdir(folder) if n.startswith("batch-") and n.endswith(".jsonl"))
    for n in sorted(names, key=bench.batch_number):
        with open(os.path.join(folder, n), encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        test[n[: -len(".jsonl")]] = [read_pair(r, n[: -len(".jsonl")]) for r in rows]
    return train, test


# ------------------------------------------------------------------------------------------------
# The learned comparison (tools/train_detector.py's recipe) and the veto
# ------------------------------------------------------------------------------------------------


def learned_weights(pairs: Iterable[Pair]) -> Weights:
    """The learned comparison's weights trained on these pairs: one row per candidate of a pair the rules leave."""
    xs: list[list[float]] = []
    ys: list[int] = []
    for p in pairs:
        if p.rule is None:
            for c in p.cands:
                xs.append(trainer.vector(c))
                ys.append(trainer.label(p.row, c))
    coefs, intercept = trainer.fit(xs, ys)
    return Weights(tuple(coefs), intercept, trainer.THRESHOLD, "", 0, trainer.REGULARISATION)


def learned_found(w: Weights, p: Pair) -> tuple[str, ...] | None:
    """The learned comparison's patterns for a pair the rules leave, or None."""
    best = best_candidate(w, p.cands)
    return best[1].patterns if best is not None and best[0] >= w.threshold else None


Proba = Callable[[Sequence[Pair]], list[float]]


def fit_veto(pairs: Sequence[Pair]) -> Proba:
    """The veto trained on the pairs the rules flag: P(the rules' verdict is right) for each pair given."""
    from sklearn.linear_model import LogisticRegression

    flagged = [p for p in pairs if p.rule is not None]
    model = LogisticRegression(C=VETO_C, solver="lbfgs", max_iter=20000, tol=1e-10, random_state=0)
    model.fit([list(p.x) for p in flagged], [int(p.right(p.rule)) for p in flagged])

    def proba(given: Sequence[Pair]) -> list[float]:
        if not given:
            return []
        return [float(v) for v in model.predict_proba([list(p.x) for p in given])[:, 1]]

    return proba


def out_of_fold(pairs: Sequence[Pair]) -> dict[int, float]:
    """P(right) of every flagged pair (by id()) from a veto trained on the other folds of whole batches."""
    groups = sorted({p.group for p in pairs})
    fold_of = {g: i % INNER_FOLDS for i, g in enumerate(groups)}
    out: dict[int, float] = {}
    for k in range(INNER_FOLDS):
        held = [p for p in pairs if p.rule is not None and fold_of[p.group] == k]
        if held:
            proba = fit_veto([p for p in pairs if fold_of[p.group] != k])
            out.update(zip((id(p) for p in held), proba(held)))
    return out


# ------------------------------------------------------------------------------------------------
# Scoring (bench/detector.py's: a conflict counts only with every expected pattern)
# ------------------------------------------------------------------------------------------------


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, p: Pair, found: tuple[str, ...] | None) -> None:
        if p.conflict:
            if p.right(found):
                self.tp += 1
            else:
                self.fn += 1
                self.fp += found is not None
        else:
            self.fp += found is not None

    def prf(self) -> tuple[float, float, float]:
        pr = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        rc = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        return pr, rc, (2 * pr * rc / (pr + rc) if pr + rc else 0.0)


def verdict(p: Pair, w: Weights, vetoed: bool) -> tuple[str, ...] | None:
    """The detector's patterns for the pair: the rules' unless vetoed, else the learned comparison's."""
    if p.rule is not None:
        return None if vetoed else p.rule
    return learned_found(w, p)


def pick_thresholds(pairs: Sequence[Pair], w: Weights) -> tuple[float, float]:
    """(f1, keep99) thresholds from out-of-fold probabilities on the training pairs alone."""
    probs = out_of_fold(pairs)
    base = Counts()
    for p in pairs:
        if p.rule is None:
            base.add(p, learned_found(w, p))
    flagged = [(probs[id(p)], p) for p in pairs if p.rule is not None]
    true_total = sum(p.right(p.rule) for _, p in flagged)
    best_t, best_f = 0.0, -1.0
    keep_t = 0.0
    for t in GRID:
        c = Counts(base.tp, base.fp, base.fn)
        for pr, p in flagged:
            c.add(p, None if pr < t else p.rule)
        f = c.prf()[2]
        if f > best_f + 1e-12:
            best_t, best_f = t, f
        kept = sum(p.right(p.rule) for pr, p in flagged if pr >= t)
        if kept >= KEEP * true_total:
            keep_t = t
    return best_t, keep_t


@dataclass
class Effect:
    """What a veto did on some pairs: the detector's counts without and with it, false alarms removed, right
    verdicts lost."""

    before: Counts
    after: Counts
    removed: int = 0
    lost: int = 0

    def merge(self, other: Effect) -> None:
        for mine, theirs in ((self.before, other.before), (self.after, other.after)):
            mine.tp += theirs.tp
            mine.fp += theirs.fp
            mine.fn += theirs.fn
        self.removed += other.removed
        self.lost += other.lost


def score(pairs: Iterable[Pair], w: Weights, proba: Proba, t: float, changed: list[Pair] | None = None) -> Effect:
    pairs = list(pairs)
    flagged = [p for p in pairs if p.rule is not None]
    pr = dict(zip((id(p) for p in flagged), proba(flagged)))
    eff = Effect(Counts(), Counts())
    for p in pairs:
        vetoed = p.rule is not None and pr[id(p)] < t
        eff.before.add(p, verdict(p, w, False))
        eff.after.add(p, verdict(p, w, vetoed))
        if vetoed:
            eff.removed += not p.right(p.rule)
            eff.lost += p.right(p.rule)
            if changed is not None:
                changed.append(p)
    return eff


# ------------------------------------------------------------------------------------------------
# Reports
# ------------------------------------------------------------------------------------------------


def _cells(c: Counts) -> str:
    pr, rc, f = c.prf()
    return f"{pr:.3f} | {rc:.3f} | {f:.3f}"


HEADER = "| set | t | P | R | F1 | veto P | R | F1 | delta | rule FAs | removed | right rule verdicts | lost |"


def effect_row(name: str, eff: Effect, t: float, flagged: Sequence[Pair]) -> str:
    fas = sum(not p.right(p.rule) for p in flagged)
    rights = len(flagged) - fas
    delta = eff.after.prf()[2] - eff.before.prf()[2]
    return (
        f"| {name} | {t:.2f} | {_cells(eff.before)} | {_cells(eff.after)} | {delta:+.3f} | {fas} | {eff.removed} "
        f"| {rights} | {eff.lost} |"
    )


def error_kind(p: Pair, w: Weights) -> str | None:
    """Which kind of error the shipped detector makes on the pair, or None."""
    found = verdict(p, w, False)
    if p.right(found):
        return None
    if found is not None and p.conflict:
        return "wrong patterns"
    if found is not None:
        return "rule false alarm" if p.rule is not None else "learned false alarm"
    return "miss, no candidate" if not p.cands else "miss, candidate rejected"


def error_table(test: dict[str, list[Pair]], w: Weights) -> None:
    kinds = (
        "rule false alarm",
        "learned false alarm",
        "miss, no candidate",
        "miss, candidate rejected",
        "wrong patterns",
    )
    print("| errors of the shipped detector | " + " | ".join(test) + " | all |")
    print("|---|" + "---|" * (len(test) + 1))
    for kind in kinds:
        counts = [sum(error_kind(p, w) == kind for p in rows) for rows in test.values()]
        print(f"| {kind} | " + " | ".join(map(str, counts)) + f" | {sum(counts)} |")


def no_candidate_misses(name: str, pairs: Iterable[Pair]) -> None:
    """Conflicts the rules miss with no learned candidate at all, by category (no weights can find them)."""
    by_cat: dict[str, int] = {}
    for p in pairs:
        if p.conflict and p.rule is None and not p.cands:
            by_cat[p.row["category"]] = by_cat.get(p.row["category"], 0) + 1
    total = sum(by_cat.values())
    cells = ", ".join(f"{c} {n}" for c, n in sorted(by_cat.items(), key=lambda kv: (-kv[1], kv[0])))
    print(f"| {name} | {total} | {cells} |")


def test_report(train: list[Pair], test: dict[str, list[Pair]], verbose: bool) -> None:
    w = weights()
    t_f1, t_keep = pick_thresholds(train, w)
    proba = fit_veto(train)
    print(
        f"veto trained on {sum(p.rule is not None for p in train)} flagged training pairs "
        f"({sum(p.rule is not None and not p.right(p.rule) for p in train)} false alarms); "
        f"thresholds from the training corpus: f1 {t_f1:.2f}, keep99 {t_keep:.2f}"
    )
    print()
    error_table(test, w)
    for policy, t in zip(POLICIES, (t_f1, t_keep)):
        print()
        print(f"test batches, policy {policy} (shipped rules and weights; veto trained on dev, holdout, 01-68)")
        print(HEADER)
        print("|" + "---|" * 13)
        changed: list[Pair] = []
        every = [p for batch in test.values() for p in batch]
        for name, rows in (*test.items(), ("all", every)):
            eff = score(rows, w, proba, t, changed if name == "all" else None)
            print(effect_row(name, eff, t, [p for p in rows if p.rule is not None]))
        if verbose:
            for p in changed:
                verdict_word = "false alarm removed" if not p.right(p.rule) else "right verdict lost"
                print(f"  {p.row['id']}: {verdict_word}, rules {list(p.rule or ())}, expected {p.row['patterns']}")


def lobo_report(train: list[Pair]) -> None:
    """Leave-one-batch-out over the blind batches: the learned weights and the veto (with its thresholds) trained
    on the other batches plus dev and holdout."""
    names = sorted({p.group for p in train if p.group.startswith("batch-")})
    totals = {policy: Effect(Counts(), Counts()) for policy in POLICIES}
    f_before: list[float] = []
    f_after: dict[str, list[float]] = {policy: [] for policy in POLICIES}
    print("| batch | F1 without | f1: t | F1 with | removed | lost | keep99: t | F1 with | removed | lost |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        held = [p for p in train if p.group == name]
        rest = [p for p in train if p.group != name]
        w = learned_weights(rest)
        thresholds = pick_thresholds(rest, w)
        proba = fit_veto(rest)
        cells = []
        for policy, t in zip(POLICIES, thresholds):
            eff = score(held, w, proba, t)
            totals[policy].merge(eff)
            f_after[policy].append(eff.after.prf()[2])
            cells.append(f"{t:.2f} | {eff.after.prf()[2]:.3f} | {eff.removed} | {eff.lost}")
        f_before.append(eff.before.prf()[2])
        print(f"| {name} | {f_before[-1]:.3f} | " + " | ".join(cells) + " |", flush=True)
    n = len(names)
    mean_b = sum(f_before) / n
    print()
    print(
        f"| LOBO ({n} blind batches) | mean F1 without | with | delta | batches up / down | worst | "
        "pooled P / R / F1 without | with | rule FAs removed | right verdicts lost |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for policy in POLICIES:
        fa = f_after[policy]
        mean_a = sum(fa) / n
        up = sum(a > b + 1e-12 for a, b in zip(fa, f_before))
        down = sum(a < b - 1e-12 for a, b in zip(fa, f_before))
        worst = min(a - b for a, b in zip(fa, f_before))
        tot = totals[policy]
        print(
            f"| {policy} | {mean_b:.4f} | {mean_a:.4f} | {mean_a - mean_b:+.4f} | {up} / {down} | {worst:+.3f} "
            f"| {_cells(tot.before)} | {_cells(tot.after)} | {tot.removed} | {tot.lost} |"
        )


def ranking_report(train: list[Pair]) -> None:
    """How well the out-of-fold veto ranks the rules' false alarms first (training corpus alone): a veto gains
    F1 only where more than (2 - F1) / 2 of the pairs it vetoes, about 55 %, are false alarms."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    probs = out_of_fold(train)
    flagged = [p for p in train if p.rule is not None]
    wrong = [int(not p.right(p.rule)) for p in flagged]
    doubt = [1.0 - probs[id(p)] for p in flagged]
    ranked = [y for _, y in sorted(zip(doubt, wrong), key=lambda t: -t[0])]
    tops = ", ".join(f"top {k}: {sum(ranked[:k])}" for k in (10, 20, 50, 100))
    auc, ap = roc_auc_score(wrong, doubt), average_precision_score(wrong, doubt)
    print(
        f"out-of-fold ranking of the rules' false alarms: AUC {auc:.3f}, average precision {ap:.3f}; "
        f"false alarms in {tops}"
    )


def main() -> int:
    args = sys.argv[1:]
    train, test = load_corpus()
    flagged = [p for p in train if p.rule is not None]
    fas = sum(not p.right(p.rule) for p in flagged)
    print(f"training pairs {len(train)}, flagged by the rules {len(flagged)}, false alarms among them {fas}")
    print(f"veto features: {len(VETO_NAMES)}")
    ranking_report(train)
    print()
    print("| conflicts the rules miss with no learned candidate | n | by category |")
    print("|---|---|---|")
    blind = [p for p in train if p.group.startswith("batch-")]
    no_candidate_misses("01-68 (the same in LOBO: no weights involved)", blind)
    if "--train-only" not in args:
        for name, rows in test.items():
            no_candidate_misses(name, rows)
        no_candidate_misses("all test", [p for rows in test.values() for p in rows])
    print()
    if "--test-only" not in args:
        print("leave-one-batch-out")
        lobo_report(train)
        print()
    if "--train-only" not in args:
        test_report(train, test, "-v" in args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Experiment: a learned comparison beside the value-conflict rules, measured leave-one-batch-out (issue #32).

    python bench/detector_learned.py            # from the repository root
    python bench/detector_learned.py -v         # and the held-out pairs whose verdict the model changed
    python bench/detector_learned.py --score new-01.jsonl new-02.jsonl   # train on every corpus, score new files

Options: ``--C=`` (regularisation, 1.0), ``--t=`` (threshold, 0.5), ``--veto``, ``--trees``, ``--all-pairs``,
``--cosine=PATH.npy`` (the sentence cosine as a feature; the vectors are embedded there first when missing),
``--rules=DIR`` (another commit's ``crp_core``), ``--only=batch-07,...`` (held-out batches to score).

The rules (``values_conflict``) answer first. Where they find nothing, the rules' own analysis of the two texts
(``clauses.analyse``: values by class, negations, polarity words, clause contexts) proposes *candidates*:

* a value candidate per value class that both texts state with a value the other text does not state (the first
  such value on each side, paired and compared by ``value_compare.value_diffs``, which names its pattern);
* a swap candidate when two items and two labels that each text states once are paired the other way round
  across the segments of the sentence (``£5 for buses and £8 for trains`` / ``Buses are capped at £8 a day and
  trains at £5``): a changed number for amounts, a shifted date for dates, a substitution for names and words;
* a polarity candidate when the two texts' polarity parities (negations, negative polarity words, negating
  affixes) differ: ``NEGATION_FLIP``.

A logistic regression over integer and rounded lexical features of the candidate and the pair (how many values of
the class each side leaves unstated, how many it shares, the overlap of the two values' clause contexts and of the
two texts' words, the candidate's pattern, how many other classes changed, ...) says whether the candidate is a
conflict with its pattern. A second model may veto a flag of the rules (``--veto``). Both are trained with
scikit-learn on the other eleven blind batches plus ``dev`` and ``holdout`` and score the held-out batch with the
detector's scoring (bench/detector.py: a conflict counts only with every expected pattern).

The rules saw every blind batch, so their figure on a batch here is an upper bound of what they do on unseen
writing; the honest figure for the rules is the learning curve in tests/data/conflict_pairs/blind/README.md.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: ``--rules=DIR``: a tree holding another commit's ``crp_core`` (``git archive <commit> crp_core``), whose rules
#: answer first and whose analysis gives the features: the rules as they stood before a batch arrived
RULES = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--rules=")), "")
if RULES:
    sys.path.insert(0, RULES)
    importlib.import_module("crp_core.stages.contradictions.values")
    sys.path.remove(RULES)


def _import(name: str) -> ModuleType:
    if sys.path[0] != ROOT:
        sys.path.insert(0, ROOT)
    return importlib.import_module(name)


bench = _import("bench.detector")
values = _import("crp_core.stages.contradictions.values")
clauses = _import("crp_core.stages.contradictions.clauses")
subjects = _import("crp_core.stages.contradictions.subjects")
compare = _import("crp_core.stages.contradictions.value_compare")
lexicon = _import("crp_core.stages.contradictions.lexicon")
loose = _import("crp_core.stages.contradictions.loose")

PATTERNS = tuple(lexicon.PATTERNS)
KINDS = ("count", "typed", "date", "ent", "polar")


# ------------------------------------------------------------------------------------------------
# Candidates and their features (read from the rules' analysis)
# ------------------------------------------------------------------------------------------------


def _jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    return round(len(x & y) / len(x | y), 2) if x | y else 1.0


def _unstated(d: Any, cls: str, other: Any) -> list[int]:
    """The values of class ``cls`` of ``d`` that no value of the other text states (designators left out)."""
    out = []
    ys = other.groups.get(cls, ())
    for x in d.groups.get(cls, ()):
        t = d.tokens[d.values[x].tok]
        if cls == "ent":
            if subjects.present(t.key, other) or (d.values[x].plain and d.values[x].plain <= other.plain):
                continue
        elif subjects.designator(d.tokens, d.values[x].tok) or any(
            subjects.stated_by(t, other.tokens[other.values[y].tok]) for y in ys
        ):
            continue
        out.append(x)
    return out


def _parity(d: Any, other: Any) -> int:
    """The text's polarity: negations and negative polarity words of its clauses and negating affixes, mod 2."""
    flips = _import("crp_core.stages.contradictions.flips")
    return sum(c.parity + len(flips.prefixed(d, c, other)) for c in d.clauses) % 2


#: sentence vectors of the corpus texts (``--cosine=PATH``: a .npy of rows and a .json list of their texts)
COSINES: dict[str, list[float]] = {}


def load_vectors(path: str, texts_needed: list[str]) -> None:
    """Read the corpus's sentence vectors from ``path`` (embedding them with the project's MiniLM embedder and
    saving them there first when the file is missing)."""
    import json

    import numpy as np

    if not os.path.exists(path):
        embedding = _import("crp_core.corpus.embedding")
        ordered = sorted(set(texts_needed))
        np.save(path, np.asarray(embedding.default_embedder().encode(ordered), dtype=np.float32))
        with open(path[: -len(".npy")] + "_texts.json", "w", encoding="utf-8") as fh:
            json.dump(ordered, fh)
    rows = np.load(path).astype(np.float64)
    with open(path[: -len(".npy")] + "_texts.json", encoding="utf-8") as fh:
        texts = json.load(fh)
    COSINES.update({t: rows[i].tolist() for i, t in enumerate(texts)})


def _cosine(text_a: str, text_b: str) -> float:
    """The two texts' sentence cosine, rounded to a twentieth (0 when no vectors are loaded)."""
    if text_a not in COSINES or text_b not in COSINES:
        return 0.0
    return round(math.fsum(x * y for x, y in zip(COSINES[text_a], COSINES[text_b])) * 20) / 20


def _pair_features(da: Any, db: Any) -> dict[str, float]:
    return {
        "cosine": _cosine(da.text, db.text),
        "words": _jaccard(da.words, db.words),
        "loose": _jaccard(da.loose_words, db.loose_words),
        "plain": _jaccard(da.plain, db.plain),
        "sent_same": float(len(da.sentences) == len(db.sentences)),
        "own_min": float(min(3, len(da.plain - db.plain), len(db.plain - da.plain))),
        "own_max": float(min(5, max(len(da.plain - db.plain), len(db.plain - da.plain)))),
        "sents": float(min(3, max(len(da.sentences), len(db.sentences)))),
        "negs": float(min(2, sum(len(c.negs) for c in da.clauses) + sum(len(c.negs) for c in db.clauses))),
        "polars": float(min(2, sum(len(c.polars) for c in da.clauses) + sum(len(c.polars) for c in db.clauses))),
    }


def _kind(cls: str) -> str:
    if cls == "q:":
        return "count"
    if cls.startswith("q:"):
        return "typed"
    return cls


def candidates(text_a: str, text_b: str) -> list[tuple[tuple[str, ...], dict[str, float]]]:
    """(patterns, features) of every candidate conflict the analysis proposes."""
    da, db = clauses.analyse(text_a), clauses.analyse(text_b)
    base = _pair_features(da, db)
    pair = values._Pair(da, db)  # the rules' clause alignment, read as a feature (this experiment only)
    changed: list[tuple[str, list[int], list[int]]] = []
    for cls in da.groups:
        if cls in db.groups:
            ua, ub = _unstated(da, cls, db), _unstated(db, cls, da)
            if ua and ub:
                changed.append((cls, ua, ub))
    out: list[tuple[tuple[str, ...], dict[str, float]]] = []
    for cls, ua, ub in changed:
        va, vb = da.values[ua[0]], db.values[ub[0]]
        ta, tb = da.tokens[va.tok], db.tokens[vb.tok]
        diffs = compare.value_diffs(ta, tb, text_a, text_b)
        if not diffs:
            continue
        pats = tuple(sorted({d.pattern for d in diffs}))
        f = dict(base)
        f["kind_" + _kind(cls)] = 1.0
        for p in pats:
            f["pat_" + p] = 1.0
        f["unstated"] = float(min(4, len(ua) + len(ub)))
        f["unstated_max"] = float(min(3, max(len(ua), len(ub))))
        f["shared"] = float(min(3, len(da.groups[cls]) - len(ua)))
        f["other_changed"] = float(min(2, len(changed) - 1))
        f["ctx"] = _jaccard(va.ctx, vb.ctx)
        f["clause"] = _jaccard(da.clauses[va.clause].bag, db.clauses[vb.clause].bag)
        f["same_rank"] = float(va.rank == vb.rank)
        f["weak"] = float(ta.sub.startswith("weak") or tb.sub.startswith("weak"))
        f["bounds_differ"] = float(ta.qty is not None and tb.qty is not None and ta.qty.bound != tb.qty.bound)
        f["next_same"] = float(_next_key(da, va.tok) != "" and _next_key(da, va.tok) == _next_key(db, vb.tok))
        f["prev_same"] = float(_prev_key(da, va.tok) != "" and _prev_key(da, va.tok) == _prev_key(db, vb.tok))
        f["clause_score"] = round(pair.score(va.clause, vb.clause)[0], 2)
        sa, sb = da.clauses[va.clause].sent, db.clauses[vb.clause].sent
        if sa < len(da.sentences) and sb < len(db.sentences):
            drop = frozenset((ta.key, tb.key)) if cls == "ent" else frozenset()
            f["aligned"] = float(
                loose.aligned(da.sentences[sa], db.sentences[sb], da.loose_words, db.loose_words, drop)
            )
            f["sent_loose"] = _jaccard(da.sentences[sa].bag, db.sentences[sb].bag)
        f["log_ratio"] = _log_ratio(ta, tb)
        own_a, own_b = len(da.clauses[va.clause].bag - db.words), len(db.clauses[vb.clause].bag - da.words)
        f["clause_own_min"] = float(min(2, own_a, own_b))
        f["clause_own_max"] = float(min(3, max(own_a, own_b)))
        out.append((pats, f))
    found = swaps(da, db)
    if found:
        f = dict(base)
        f["kind_swap"] = 1.0
        pats = _swap_pattern(found)
        f["pat_" + pats[0]] = 1.0
        f["swap_values"] = float(any(k[:1] in "#@" for q in found for k in q))
        f["swaps"] = float(min(3, len(found)))
        f["other_changed"] = float(min(2, len(changed)))
        out.append((pats, f))
    if da.polar_or_neg or db.polar_or_neg:
        if _parity(da, db) != _parity(db, da):
            f = dict(base)
            f["kind_polar"] = 1.0
            f["pat_" + lexicon.NEGATION_FLIP] = 1.0
            f["other_changed"] = float(min(2, len(changed)))
            f["sent_loose"] = max((_jaccard(x.bag, y.bag) for x in da.sentences for y in db.sentences), default=0.0)
            f["flip_clauses"] = float(
                any(ca.parity != cb.parity and ca.bag & cb.bag for ca in da.clauses for cb in db.clauses)
            )
            out.append(((lexicon.NEGATION_FLIP,), f))
    return out


#: words that join two statements of one sentence ("£5 for buses and £8 for trains")
_JOINERS = frozenset(["and", "while", "whereas", "but"])


def _segments(d: Any) -> dict[str, int]:
    """Each word, name and value of the text that occurs in exactly one segment (the tokens between two
    clause breaks or joining words) -> that segment; a value is keyed by its normalised reading."""
    seen: dict[str, int] = {}
    seg = 0
    for t in d.tokens:
        if t.kind == lexicon.BREAK or (t.kind == lexicon.FUNC and t.key in _JOINERS):
            seg += 1
            continue
        key = _item_key(t)
        if key:
            seen[key] = seg if seen.get(key, seg) == seg else -1
    return {k: v for k, v in seen.items() if v >= 0}


def _item_key(t: Any) -> str:
    if t.kind == lexicon.NUMBER and t.qty is not None:
        return f"#{t.qty.dim}:{t.qty.unit}:{t.qty.base * t.qty.scale:g}"
    if t.kind == lexicon.DATE and t.date is not None:
        return f"@{t.date.readings[0]}"
    if t.kind in (lexicon.WORD, lexicon.ENTITY):
        return t.key
    return ""


def swaps(da: Any, db: Any) -> list[tuple[str, str, str, str]]:
    """Two items (u1, u2) and two labels (v1, v2) that both texts state once each, where text a keeps u1 with
    v1 and u2 with v2 in four distinct segments' worth of pairing and text b crosses them: u1 with v2."""
    sa, sb = _segments(da), _segments(db)
    keys = sorted(set(sa) & set(sb))
    out = []
    for i, u1 in enumerate(keys):
        for u2 in keys[i + 1 :]:
            if sa[u1] == sa[u2] or sb[u1] == sb[u2]:
                continue
            for v1 in keys:
                if v1 in (u1, u2) or sa[v1] != sa[u1] or sb[v1] != sb[u2]:
                    continue
                for v2 in keys:
                    if v2 not in (u1, u2, v1) and sa[v2] == sa[u2] and sb[v2] == sb[u1]:
                        out.append((u1, u2, v1, v2))
    return out


def _swap_pattern(items: list[tuple[str, str, str, str]]) -> tuple[str, ...]:
    """A swap of amounts is a changed number, of dates a shifted date, of names or words a substitution."""
    kinds = {k[:1] for q in items for k in q}
    if "#" in kinds:
        return (lexicon.NUMBER_CHANGED,)
    if "@" in kinds:
        return (lexicon.DATE_SHIFTED,)
    return (lexicon.ENTITY_SUBSTITUTED,)


def _prev_key(d: Any, k: int) -> str:
    return d.tokens[k - 1].key if k > 0 else ""


def _log_ratio(ta: Any, tb: Any) -> float:
    """|log10| of the ratio of two quantities of one unit, in steps of a half (0 when not comparable)."""
    if ta.qty is None or tb.qty is None or ta.qty.unit != tb.qty.unit:
        return 0.0
    x, y = ta.qty.base * ta.qty.scale, tb.qty.base * tb.qty.scale
    if x <= 0 or y <= 0:
        return 0.0
    return min(3.0, round(abs(math.log10(x / y)) * 2) / 2)


def _next_key(d: Any, k: int) -> str:
    return d.tokens[k + 1].key if k + 1 < len(d.tokens) else ""


# ------------------------------------------------------------------------------------------------
# Model and scoring
# ------------------------------------------------------------------------------------------------

FEATURES: list[str] = []
#: train on the pairs the rules leave (the default) or on every pair (``--all-pairs``: the residue of a batch the
#: rules were tuned on is mostly non-conflicts, a prior that fresh writing does not share)
RESIDUAL = "--all-pairs" not in sys.argv[1:]
#: small gradient-boosted trees instead of the logistic regression (``--trees``; an experiment arm only)
TREES = "--trees" in sys.argv[1:]


def vectorise(f: dict[str, float]) -> list[float]:
    return [f.get(name, 0.0) for name in FEATURES]


def _label(row: dict, pats: tuple[str, ...]) -> int:
    return int(bool(row["conflict"]) and set(row["patterns"]) <= set(pats))


def train_rows(rows: list[dict]) -> tuple[list[list[float]], list[int]]:
    xs: list[list[float]] = []
    ys: list[int] = []
    for row in rows:
        if RESIDUAL and values.values_conflict(row["a"], row["b"]) is not None:
            continue
        for pats, f in candidates(row["a"], row["b"]):
            xs.append(vectorise(f))
            ys.append(_label(row, pats))
    return xs, ys


def veto_features(row: dict) -> dict[str, float]:
    vc = values.values_conflict(row["a"], row["b"])
    da, db = clauses.analyse(row["a"]), clauses.analyse(row["b"])
    f = _pair_features(da, db)
    f["diffs"] = float(min(3, len(vc.diffs)))
    for p in vc.patterns:
        f["pat_" + p] = 1.0
    return f


def fit(xs: list[list[float]], ys: list[int], c: float) -> Any:
    from sklearn.linear_model import LogisticRegression

    if TREES:
        from sklearn.ensemble import GradientBoostingClassifier

        trees = GradientBoostingClassifier(n_estimators=100, max_depth=2, learning_rate=0.1, random_state=0)
        return trees.fit(xs, ys)

    model = LogisticRegression(C=c, max_iter=2000, class_weight=None)
    model.fit(xs, ys)
    return model


def score(model: Any, f: dict[str, float]) -> float:
    """The model's probability in float64 with a fixed summation order (no BLAS)."""
    if TREES:
        return float(model.predict_proba([vectorise(f)])[0][1])
    z = math.fsum([float(model.intercept_[0]), *(w * x for w, x in zip(model.coef_[0].tolist(), vectorise(f)))])
    return 1.0 / (1.0 + math.exp(-z))


def learned_judge(model: Any, veto: Any, threshold: float) -> Callable[[dict], tuple[str, bool, tuple[str, ...]]]:
    def judge(row: dict) -> tuple[str, bool, tuple[str, ...]]:
        vc = values.values_conflict(row["a"], row["b"])
        found: tuple[str, ...] | None = vc.patterns if vc is not None else None
        if found is not None and veto is not None and score(veto, veto_features(row)) < 1 - threshold:
            found = None
        if found is None and model is not None:
            best = max(((score(model, f), pats) for pats, f in candidates(row["a"], row["b"])), default=None)
            if best is not None and best[0] >= threshold:
                found = best[1]
        if row["conflict"]:
            if found is not None and set(row["patterns"]) <= set(found):
                return "tp", False, found
            return "fn", found is not None, found or ()
        return ("fp" if found is not None else "tn"), False, found or ()

    return judge


def prf(rows: list[dict], judge: Callable[[dict], tuple[str, bool, tuple[str, ...]]]) -> tuple[float, float, float]:
    tp = fp = fn = 0
    for row in rows:
        kind, also_fp, _ = judge(row)
        tp += kind == "tp"
        fn += kind == "fn"
        fp += kind == "fp" or also_fp
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def collect_features(rows: list[dict]) -> None:
    names: set[str] = set()
    for row in rows:
        for _, f in candidates(row["a"], row["b"]):
            names |= set(f)
        if values.values_conflict(row["a"], row["b"]) is not None:
            names |= set(veto_features(row))
    FEATURES[:] = sorted(names)


def veto_rows(rows: list[dict]) -> tuple[list[list[float]], list[int]]:
    xs: list[list[float]] = []
    ys: list[int] = []
    for row in rows:
        vc = values.values_conflict(row["a"], row["b"])
        if vc is not None:
            xs.append(vectorise(veto_features(row)))
            ys.append(_label(row, vc.patterns))
    return xs, ys


Judge = Callable[[dict], tuple[str, bool, tuple[str, ...]]]


def _option(args: list[str], name: str, default: str) -> str:
    return next((a.split("=", 1)[1] for a in args if a.startswith(name + "=")), default)


def leave_one_batch_out(
    base: list[dict], blind: dict[str, list[dict]], only: list[str], args: list[str]
) -> dict[str, Judge]:
    """Train on every other batch plus ``base``, score each held-out batch; print one row per batch and the mean."""
    c, threshold = float(_option(args, "--C", "1.0")), float(_option(args, "--t", "0.5"))
    print(f"C={c} threshold={threshold} veto={'--veto' in args} cosine={bool(COSINES)} features={len(FEATURES)}")
    print("| batch | rules P | R | F1 | learned P | R | F1 | delta |")
    print("|---|---|---|---|---|---|---|---|")
    judges: dict[str, Judge] = {}
    f_rules, f_learned = [], []
    for name, held in blind.items():
        if name not in only:
            continue
        train = base + [r for n, rows in blind.items() if n != name for r in rows]
        veto = fit(*veto_rows(train), c) if "--veto" in args else None
        judges[name] = judge = learned_judge(fit(*train_rows(train), c), veto, threshold)
        pr, rr, fr = bench.prf(held)[:3]
        pl, rl, fl = prf(held, judge)
        f_rules.append(fr)
        f_learned.append(fl)
        print(f"| {name} | {pr:.3f} | {rr:.3f} | {fr:.3f} | {pl:.3f} | {rl:.3f} | {fl:.3f} | {fl - fr:+.3f} |")
    n = len(f_rules)
    mean_r, mean_l = sum(f_rules) / n, sum(f_learned) / n
    print(f"| mean | | | {mean_r:.3f} | | | {mean_l:.3f} | {mean_l - mean_r:+.3f} |")
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
        pr, rr, fr = bench.prf([r for _, r in pairs])[:3]
        pl, rl, fl = prf([r for _, r in pairs], _by_batch(judges, {r["id"]: n for n, r in pairs}))
        print(f"| {cat} | {pr:.3f} | {rr:.3f} | {fr:.3f} | {pl:.3f} | {rl:.3f} | {fl:.3f} |")


def changed_verdicts(blind: dict[str, list[dict]], judges: dict[str, Judge]) -> None:
    for name, judge in judges.items():
        for row in blind[name]:
            before, after = bench.judge(row)[0], judge(row)[0]
            if before != after:
                print(f"{name} {row['id']}: {before} -> {after}\n    a: {row['a']}\n    b: {row['b']}")


def cost(rows: list[dict], judge: Judge) -> None:
    """CPU microseconds per pair of the rules alone and of the rules with the learned part (texts analysed)."""
    pairs = [r for r in rows for _ in (0, 1)]
    for r in rows:
        clauses.analyse(r["a"])
        clauses.analyse(r["b"])
    runs: tuple[tuple[str, Judge], ...] = (("rules", bench.judge), ("rules + learned", judge))
    for label, run in runs:
        best = float("inf")
        for _ in range(5):
            values.values_conflict.cache_clear()
            t0 = time.process_time()
            for r in pairs:
                run(r)
            best = min(best, time.process_time() - t0)
        print(f"cost, {label}: {best / len(pairs) * 1e6:6.1f} us/pair CPU (texts analysed)")


def score_files(base: list[dict], blind: dict[str, list[dict]], paths: list[str], args: list[str]) -> None:
    """Train on every corpus here (dev, holdout, every blind batch) and score new labelled files, rules alone
    against rules with the learned comparison: the measurement for batches no one working on this has read."""
    import json

    c, threshold = float(_option(args, "--C", "1.0")), float(_option(args, "--t", "0.5"))
    train = base + [r for rows in blind.values() for r in rows]
    judge = learned_judge(fit(*train_rows(train), c), None, threshold)
    print("| file | rules P | R | F1 | learned P | R | F1 | delta |")
    print("|---|---|---|---|---|---|---|---|")
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        pr, rr, fr = bench.prf(rows)[:3]
        pl, rl, fl = prf(rows, judge)
        name = os.path.basename(path)
        print(f"| {name} | {pr:.3f} | {rr:.3f} | {fr:.3f} | {pl:.3f} | {rl:.3f} | {fl:.3f} | {fl - fr:+.3f} |")


def main() -> int:
    args = sys.argv[1:]
    if "--help" in args or "-h" in args:
        print(__doc__)
        return 0
    base = bench.load("dev.jsonl") + bench.load("holdout.jsonl")
    blind = bench.blind_batches()
    every = base + [r for rows in blind.values() for r in rows]
    vectors = _option(args, "--cosine", "")
    if vectors:
        load_vectors(vectors, [t for r in every for t in (r["a"], r["b"])])
    collect_features(every)
    if "--score" in args:
        score_files(base, blind, [a for a in args[args.index("--score") + 1 :] if not a.startswith("-")], args)
        return 0
    only = _option(args, "--only", ",".join(blind)).split(",")
    judges = leave_one_batch_out(base, blind, only, args)
    per_category(blind, judges)
    if "-v" in args:
        changed_verdicts(blind, judges)
    print()
    cost(base, next(iter(judges.values())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

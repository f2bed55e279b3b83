"""The Conflicts page after an operator's pair decision, at the issue-36 size: 145,000 conflict pairs.

    .venv/bin/python bench/queue_decision.py [--pairs 145000] [--runs 7] [--mode incremental|full]

Builds the checked pairs of a synthetic whole-CKF scan (``CheckedPairs`` of ``--pairs`` value conflicts over
two facts each, the facts of ``bench/queue_page.py``: source types, ages and statuses drawn at random), arbitrates
them once (``arbitrate_checked``) with a decision log deciding about 2 % of them, builds the queue frame, and then,
``--runs`` times, records one more decision (the first undecided pair of the queue dismissed) and shows the next
page of the "undecided" queue in triage order. Each step runs the functions the dashboard runs:

* ``decision set``: the log folded into the decisions in force (``DecisionSet.from_decisions``; for a status
  mark, the corpus re-marked);
* ``scan``: ``--mode full`` arbitrates every checked pair again (``arbitrate_checked``);
  ``--mode incremental`` arbitrates the pairs whose decision changed (``decision_change``, ``rearbitrate``);
* ``queue frame``: ``full`` builds the frame of every pair (``conflict_queue.queue_frame``); ``incremental``
  patches the previous frame's changed rows (``queue_patch.patched_frame``);
* ``counts``: the counts above the queue: ``full`` counts the new frame (``queue_view.queue_counts``);
  ``incremental`` gets them patched with the frame (``queue_patch.patched_queue``, timed in ``queue frame``);
* ``next page``: the filtered, ordered view (its positions and pair keys), the page and its display frame
  (``queue_view``, ``QueueView.page``, ``page_display``).

Wall p50 / max per step and for the whole decision, ms; the machine's load average before and after.
``--decision stale`` marks the pair's second fact STALE instead (``incremental``: ``restatused``, the pairs of
that fact; ``full``: every checked pair arbitrated over the re-marked corpus, the text check not counted).
``--mode full`` runs on a tree without ``crp_core.rearbitrate`` too (the code before incremental updates).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
from queue_page import NOW, _facts  # noqa: E402

from crp_core import PATTERNS, CRPConfig, Decision, DecisionSet, KnowledgeBase, ValueConflict  # noqa: E402
from crp_core.analysis.scan import CheckedPairs, PairSearch, arbitrate_checked  # noqa: E402
from crp_core.analysis.scan_input import ScanCorpus  # noqa: E402
from crp_ui import conflict_queue, queue_view, triage_queue  # noqa: E402

STEPS = ("decision set", "scan", "queue frame", "counts", "next page")
TARGET_MS = 1000.0


def checked_pairs(n_pairs: int, seed: int = 0) -> tuple[CheckedPairs, ScanCorpus]:
    """``n_pairs`` value conflicts (rows 2i, 2i+1) over the facts of ``queue_page._facts``."""
    rng = np.random.default_rng(seed)
    facts, _types = _facts(n_pairs, rng)
    kb = KnowledgeBase(facts=tuple(facts))
    v = rng.normal(size=(2 * n_pairs, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    rows = np.arange(2 * n_pairs, dtype=np.int64).reshape(-1, 2)
    found = tuple(
        (2 * i, 2 * i + 1, ValueConflict(tuple(sorted({PATTERNS[i % len(PATTERNS)], "NUMBER_CHANGED"})), ()))
        for i in range(n_pairs)
    )
    corpus = ScanCorpus(kb, v, np.ones(2 * n_pairs, dtype=bool), "bench-queue-decision", "bench")
    return CheckedPairs(PairSearch(rows, "gram", 0), found, 0.0, 0.0), corpus


def with_retrievable_marks(corpus: ScanCorpus, ds: DecisionSet) -> ScanCorpus:
    """``corpus`` with the operators' ACTIVE / STALE marks (the statuses of the checked corpus the dashboard keeps)."""
    marks = ds.retrievable_marks()
    if not marks:
        return corpus
    return ScanCorpus(corpus.kb.with_statuses(marks), corpus.vectors, corpus.retrievable, corpus.fingerprint, "bench")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=145_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--mode", choices=("incremental", "full"), default="incremental")
    ap.add_argument("--decision", choices=("dismiss", "stale"), default="dismiss")
    ap.add_argument("--page-size", type=int, default=triage_queue.PAGE_SIZE)
    args = ap.parse_args()
    config, size = CRPConfig(), args.page_size
    t0 = time.perf_counter()
    checked, corpus = checked_pairs(args.pairs)
    kb = corpus.kb
    scan = arbitrate_checked(checked, corpus, config, NOW)
    log = [
        Decision.accept(
            p.fact_a, p.fact_b, operator="bench", id=n + 1, decided_at=(NOW + timedelta(seconds=n)).isoformat()
        )
        for n, p in enumerate(scan.pairs[::50])
    ]
    ds = DecisionSet.from_decisions(log)
    scan = arbitrate_checked(checked, corpus, config, NOW, ds)
    frame = conflict_queue.queue_frame(scan, kb, ds)
    counts = queue_view.queue_counts(frame)
    print(
        f"{args.mode}, {args.decision}: {len(scan.pairs):,} pairs over {len(kb.facts):,} facts, {ds.count} decisions "
        f"({time.perf_counter() - t0:.1f} s to build)"
    )
    print(f"load average before: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.mode == "incremental":
        from crp_core import decision_change, rearbitrate, restatused
        from crp_ui.queue_patch import QueueInputs, patched_queue
    got: dict[str, list[float]] = {s: [] for s in (*STEPS, "total")}
    view = queue_view.queue_view(frame, ((), (), ()), "undecided", "triage")
    for run in range(args.runs):
        first = view.page(1, 1).iloc[0]
        a, b = str(first["fact_a"]), str(first["fact_b"])
        if args.decision == "stale":
            new = Decision.mark_status(a, b, fact=b, status="STALE", operator="bench", id=len(log) + 1)
        else:
            new = Decision.dismiss(a, b, operator="bench", id=len(log) + 1)
        new = replace(new, decided_at=(NOW + timedelta(days=1, seconds=run)).isoformat())
        times = [time.perf_counter()]
        ds_new = DecisionSet.from_decisions([*log, new])
        marked = with_retrievable_marks(corpus, ds_new)
        times.append(time.perf_counter())
        if args.mode == "incremental" and args.decision == "stale":
            scan_new = restatused(scan, marked, config, ds_new, [b]).scan
            times.append(time.perf_counter())
            before, after = QueueInputs(scan, ds, {}, None), QueueInputs(scan_new, ds_new, {}, None)
            frame, counts = patched_queue(frame, counts, kb, before, after)
            times.append(time.perf_counter())
        elif args.mode == "incremental":
            scan_new = rearbitrate(scan, decision_change(ds, ds_new, kb), config).scan
            times.append(time.perf_counter())
            before, after = QueueInputs(scan, ds, {}, None), QueueInputs(scan_new, ds_new, {}, None)
            frame, counts = patched_queue(frame, counts, kb, before, after)
            times.append(time.perf_counter())  # the counts come patched with the frame
        else:
            scan_new = arbitrate_checked(checked, marked, config, NOW, ds_new)
            times.append(time.perf_counter())
            frame = conflict_queue.queue_frame(scan_new, kb, ds_new)
            times.append(time.perf_counter())
            counts = queue_view.queue_counts(frame)
        times.append(time.perf_counter())
        view = queue_view.queue_view(frame, ((), (), ()), "undecided", "triage")
        triage_queue.page_display(view.page(1, size), {})
        times.append(time.perf_counter())
        for step, a, b in zip(STEPS, times, times[1:]):
            got[step].append((b - a) * 1e3)
        got["total"].append((times[-1] - times[0]) * 1e3)
        log.append(new)
        scan, ds = scan_new, ds_new
        assert first["pair"] not in set(view.keys[:size]), "the decided pair left the undecided queue"
    print(f"\n{'step (' + args.mode + ')':<40} {'p50 ms':>9} {'max ms':>9}")
    for step, ms in got.items():
        flag = "  over the 1 s target" if step == "total" and statistics.median(ms) > TARGET_MS else ""
        print(f"{step:<40} {statistics.median(ms):>9.1f} {max(ms):>9.1f}{flag}")
    fresh = arbitrate_checked(checked, with_retrievable_marks(corpus, ds), config, NOW, ds)
    assert fresh.pairs == scan.pairs and dict(fresh.counts) == dict(scan.counts), "the scan differs from a fresh one"
    check = conflict_queue.queue_frame(fresh, kb, ds)
    assert frame.reset_index(drop=True).equals(check), "the queue frame differs from a fresh one"
    assert counts == queue_view.queue_counts(check), "the counts differ from a fresh count"
    print("the last scan and frame equal a fresh arbitration's and a fresh frame")
    print(f"load average after: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

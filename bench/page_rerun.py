"""Rerun time of the issue-4 dashboard pages after a widget change, on the synthetic 10k CKF.

    .venv/bin/python bench/page_rerun.py [--ckf-dir bench/data/synth10k] [--repeat 5]

Points the app (through ``CRP_SAMPLE_DIR``) at a temporary samples folder holding the synthetic CKF
directory and its scenario, warms the caches (corpus, pipeline result), then times ``AppTest`` reruns
(the whole script: app shell, sidebar and page) after each widget change. Prints one table: page,
change, median / max ms. The first pipeline run with a new config is timed separately ("config
change": the pipeline itself reruns then).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckf-dir", default=str(ROOT / "bench" / "data" / "synth10k"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    src = Path(args.ckf_dir)
    if not (src / "facts.jsonl").is_file():
        print(f"{src} has no facts.jsonl: run bench/make_synthetic_ckf.py --facts 10000 --out {src}")
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="crp-bench-pages-"))
    (tmp / "scenarios").mkdir()
    os.symlink(src.resolve(), tmp / "synth")
    shutil.copy(src / "scenario.json", tmp / "scenarios" / "scenario.json")
    os.environ["CRP_SAMPLE_DIR"] = str(tmp)
    os.environ["CRP_CACHE_DIR"] = str(tmp / "cache")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.query_params["ckf"] = "synth"
    at.query_params["scenario"] = "scenario.json"
    t0 = time.perf_counter()
    at.run()
    cold = (time.perf_counter() - t0) * 1e3
    rows: list[tuple[str, str, list[float]]] = []

    def timed(page: str, label: str, act) -> None:
        times = []
        for k in range(args.repeat):
            t = time.perf_counter()
            act(k)
            times.append((time.perf_counter() - t) * 1e3)
            assert not at.exception, [e.value for e in at.exception]
        rows.append((page, label, times))

    def pick(kind: str, prefix: str):
        hits = [w for w in getattr(at, kind) if str(w.key).startswith(prefix)]
        assert len(hits) == 1, (prefix, [w.key for w in getattr(at, kind)])
        return hits[0]

    for page in ("overview", "breakdown", "graph", "envelope"):
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        timed(page, "rerun (no change)", lambda k: at.run())
    at.switch_page("pages/breakdown.py").run()
    n_rows = len(at.dataframe[0].value) if at.dataframe else 0
    sorts = ["relevance", "cdr_score", "novelty", "age_days", "recency_factor"]
    timed("breakdown", "sort by another column", lambda k: pick("selectbox", "crp.page.breakdown.sort")
          .set_value(sorts[k % len(sorts)]).run())
    texts = ["a", "b", "c", "", "d"]
    timed("breakdown", "text filter", lambda k: pick("text_input", "crp.page.breakdown.text")
          .set_value(texts[k % len(texts)]).run())
    ids = list(at.dataframe[0].value["fact_id"])[:10] if at.dataframe else []

    def select(k):
        pick("selectbox", "crp.page.breakdown.pick.").set_value(ids[(k + 1) % len(ids)]).run()

    timed("breakdown", "select a fact", select)
    timed("breakdown", "log age axis toggle", lambda k: pick("toggle", "crp.page.breakdown.logx")
          .set_value(k % 2 == 0).run())
    gates = [0.50, 0.52, 0.56, 0.58, 0.60]

    def gate(k):
        hits = [w for w in at.number_input if str(w.key).startswith("crp.w.config.cdr_min_relevance.")]
        hits[0].set_value(gates[k % len(gates)]).run()

    timed("breakdown", "config change (pipeline reruns)", gate)
    timed("breakdown", "same config again (cached)", lambda k: at.run())

    print(f"synthetic CKF: {src} · first full run (load + index + pipeline) {cold:.0f} ms · "
          f"{n_rows} table rows shown on the breakdown page")
    print(f"{'page':<10} {'change':<34} {'median ms':>10} {'max ms':>8}")
    for page, label, times in rows:
        print(f"{page:<10} {label:<34} {statistics.median(times):>10.1f} {max(times):>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

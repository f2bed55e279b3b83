"""Server-side rerun time of every dashboard page, and of widget changes, with ``AppTest``.

    .venv/bin/python bench/page_rerun.py [--ckf sample|synth10k|both] [--ckf-dir bench/data/synth10k] [--repeat 5]

The script's own cost, without the browser (``bench/ui_latency.py`` measures what a person waits
for): ``AppTest`` runs the whole script (app shell, sidebar, page) in this process. For the 10k
synthetic CKF the app is pointed (through ``CRP_SAMPLE_DIR``) at a temporary samples folder holding
the CKF directory and its scenario; ``sample`` is the bundled ``sample_ckf/``. After warming the
caches (corpus, pipeline result) it times a rerun of every page with nothing changed, then widget
changes on the Score breakdown page, then a config change (the sidebar's ``cdr_min_relevance``, a new
value every time: the pipeline reruns). Prints one table per CKF (median / max ms) with the load
average.
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


PAGES = ("overview", "breakdown", "graph", "envelope", "conflicts", "fanout", "tuning", "glossary", "home")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckf", choices=("sample", "synth10k", "both"), default="both")
    ap.add_argument("--ckf-dir", default=str(ROOT / "bench" / "data" / "synth10k"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("CRP_INSPECT_TRIAGE_DB", str(Path(tempfile.mkdtemp(prefix="crp-bench-db-")) / "t.sqlite"))
    if args.ckf in ("sample", "both"):
        bench_one("bundled sample (sample_ckf/)", None, {}, args.repeat)
    if args.ckf in ("synth10k", "both"):
        src = Path(args.ckf_dir)
        if not (src / "facts.jsonl").is_file():
            print(f"{src} has no facts.jsonl: run bench/make_synthetic_ckf.py --facts 10000 --out {src}")
            return 2
        tmp = Path(tempfile.mkdtemp(prefix="crp-bench-pages-"))
        (tmp / "scenarios").mkdir()
        os.symlink(src.resolve(), tmp / "synth")
        shutil.copy(src / "scenario.json", tmp / "scenarios" / "scenario.json")
        bench_one(f"10k synthetic CKF ({src})", tmp, {"ckf": "synth", "scenario": "scenario.json"}, args.repeat)
    return 0


def bench_one(name: str, sample_dir: Path | None, params: dict[str, str], repeat: int) -> None:  # noqa: C901  one straight script of timed page actions, read top to bottom
    if sample_dir is None:
        os.environ.pop("CRP_SAMPLE_DIR", None)
    else:
        os.environ["CRP_SAMPLE_DIR"] = str(sample_dir)
    from streamlit.testing.v1 import AppTest

    from crp_ui import sidebar

    load = os.getloadavg()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    for k, v in params.items():
        at.query_params[k] = v
    t0 = time.perf_counter()
    at.run()
    cold = (time.perf_counter() - t0) * 1e3
    rows: list[tuple[str, str, list[float]]] = []

    def timed(page: str, label: str, act) -> None:
        times = []
        for k in range(repeat):
            t = time.perf_counter()
            act(k)
            times.append((time.perf_counter() - t) * 1e3)
            assert not at.exception, [e.value for e in at.exception]
        rows.append((page, label, times))

    def pick(kind: str, prefix: str):
        hits = [w for w in getattr(at, kind) if str(w.key).startswith(prefix)]
        assert len(hits) == 1, (prefix, [w.key for w in getattr(at, kind)])
        return hits[0]

    for page in PAGES:
        at.switch_page(f"pages/{page}.py").run()
        at.run()  # first visit: the page's own caches (scan, figures) fill here
        assert not at.exception, [e.value for e in at.exception]
        timed(page, "rerun (no change)", lambda k: at.run())
    at.switch_page("pages/breakdown.py").run()
    n_rows = len(at.dataframe[0].value) if at.dataframe else 0
    sorts = ["relevance", "cdr_score", "novelty", "age_days", "recency_factor"]
    timed(
        "breakdown",
        "sort by another column",
        lambda k: pick("selectbox", "crp.page.breakdown.sort").set_value(sorts[k % len(sorts)]).run(),
    )
    texts = ["a", "b", "c", "", "d"]
    timed(
        "breakdown",
        "text filter",
        lambda k: pick("text_input", "crp.page.breakdown.text").set_value(texts[k % len(texts)]).run(),
    )
    pick("text_input", "crp.page.breakdown.text").set_value("").run()
    ids = list(at.dataframe[0].value["fact_id"])[:10] if at.dataframe else []

    def select(k):
        pick("selectbox", "crp.page.breakdown.pick.").set_value(ids[(k + 1) % len(ids)]).run()

    timed("breakdown", "select a fact", select)
    # the recency curves (and their toggle) are drawn once their expander is open (kept for the session);
    # a version without that expander draws them at once
    from pages import breakdown as breakdown_page

    keep = getattr(breakdown_page, "RECENCY_KEEP", None)
    if keep is not None:
        at.session_state[keep] = True
        at.run()
        timed("breakdown", "rerun, recency curves open", lambda k: at.run())
    timed(
        "breakdown",
        "log age axis toggle",
        lambda k: pick("toggle", "crp.page.breakdown.logx").set_value(k % 2 == 0).run(),
    )
    open_key = getattr(sidebar, "CONFIG_OPEN", None)  # None: a version that always draws the editors
    if open_key is not None:
        at.session_state[open_key] = True
    at.run()
    timed("breakdown", "sidebar config opened, no change", lambda k: at.run())

    def gate(k):
        hits = [w for w in at.number_input if str(w.key).startswith("crp.w.config.cdr_min_relevance.")]
        hits[0].set_value(round(0.50 + 0.01 * (k + 1), 2)).run()

    timed("breakdown", "config change (pipeline reruns)", gate)
    timed("breakdown", "same config again (cached)", lambda k: at.run())
    if open_key is not None:
        at.session_state[open_key] = False
        at.run()

    print(
        f"\n{name} · first full run (load + index + pipeline) {cold:.0f} ms · {n_rows} table rows on the "
        f"breakdown page · load average before {load[0]:.2f} / after {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(f"| {'page':<10} | {'change':<34} | {'median ms':>9} | {'max ms':>7} |")
    print(f"|{'-' * 12}|{'-' * 36}|{'-' * 11}|{'-' * 9}|")
    for page, label, times in rows:
        print(f"| {page:<10} | {label:<34} | {statistics.median(times):>9.1f} | {max(times):>7.1f} |")


if __name__ == "__main__":
    raise SystemExit(main())

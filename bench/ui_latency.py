"""What a person waits for in the browser: in-app page switches and widget reruns, p50 / p95.

    .venv/bin/python bench/ui_latency.py [--ckf sample|synth10k|both] [--tries 20]

Starts ``streamlit run app.py`` on a free loopback port (the shipped ``.streamlit/config.toml``
applies) and drives it with headless Debian Chromium (Playwright, ``/usr/bin/chromium``; never
``playwright install``). Each try is timed in the page itself: from the browser's ``click`` /
``keydown`` event to the last change of the app's script state back to ``notRunning`` (a
``MutationObserver`` on ``[data-testid="stApp"]``), once the app has stayed idle for a moment and the
expected page heading is shown. That "idle" figure is the one the targets are stated for; each row also
gives a "drawn" figure: to the end of the browser's last long (>= 50 ms) main-thread task after the click
(Long Tasks API), because Streamlit's frontend draws a plotly chart after the script state has gone back
to idle. Both come from timestamps taken in the page, never from when the polling noticed, so the quiet
wait and the polling interval are not in them. Rows:

* ``switch → <page>``: a click on the page's navigation link (an in-app page switch, no reload), the
  pages visited round-robin;
* ``switch → Score breakdown, recency curves open``: Overview → Score breakdown once the page's recency
  curves expander is open (closed at first, then kept open for the session; not in a version without it);
* ``widget rerun``: the Score breakdown page's "log age axis" toggle (no config change), with the recency
  curves open;
* ``config change rerun``: the sidebar's ``cdr_min_relevance`` step button (a new value every try, so
  the pipeline reruns every time).

CKFs: the bundled sample (``sample_ckf/``, as served by default) and the 10k synthetic CKF
(``bench/data/synth10k``, offered as the bundled sample ``synth`` of a temporary samples folder, opened
with ``?ckf=synth&scenario=scenario.json``). Prints one table per CKF with the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
#: navigation title -> the page's heading (its st.title)
PAGES: tuple[tuple[str, str], ...] = (
    ("Overview", "Overview"),
    ("Score breakdown", "Score breakdown"),
    ("Graph", "Graph (CDGR)"),
    ("Envelope", "Envelope"),
    ("Conflicts", "Conflict triage"),
    ("Fan-out", "Fan-out simulator"),
    ("Tuning", "Tuning"),
    ("Glossary", "Glossary"),
    ("Knowledge base", "crp-inspect"),
)
#: the start of the label of the Score breakdown page's recency curves expander
RECENCY_EXPANDER = "Recency factor vs age per TTL"
#: ms the app must stay idle before a try counts as settled (a queued rerun shows up within this)
QUIET_MS = 300
LOAD_TIMEOUT_MS = 600_000
TRY_TIMEOUT_MS = 60_000

OBSERVE_JS = """(heading) => {
  if (!window.__crp) {
    const st = {log: [], input: 0, heading: null, seen: 0, lt: []};
    // main-thread tasks of 50 ms or more (the Long Tasks API): a chart drawn after the app went idle
    try {
      new PerformanceObserver((l) => { for (const e of l.getEntries()) st.lt.push(e.startTime + e.duration); })
        .observe({type: 'longtask'});
    } catch (e) { /* no Long Tasks API: the drawn figure equals the idle one */ }
    // subtree: the app element may be replaced; every script-state change is logged with its time
    new MutationObserver((recs) => { for (const r of recs) st.log.push(performance.now()); })
      .observe(document.documentElement, {attributes: true, subtree: true,
                                          attributeFilter: ['data-test-script-state']});
    for (const ev of ['click', 'keydown']) {
      document.addEventListener(ev, () => { st.input = performance.now(); st.seen = 0; }, true);
    }
    const poll = () => {  // once per frame: when the expected heading is first shown after the input
      if (st.input && !st.seen && st.heading !== null) {
        const hs = Array.from(document.querySelectorAll('[data-testid="stMain"] h1'));
        if (hs.some((h) => h.textContent.trim().startsWith(st.heading))) st.seen = performance.now();
      }
      requestAnimationFrame(poll);
    };
    requestAnimationFrame(poll);
    window.__crp = st;
  }
  window.__crp.input = 0;
  window.__crp.seen = 0;
  window.__crp.heading = heading;
  window.__crp.log = [];
  window.__crp.lt = [];
}"""

#: settled: input seen, the heading shown, idle now and for QUIET_MS after the last script-state change
#: (or, when no change was seen at all, a run too short to observe, NOCHANGE_MS after the input);
#: the latency is the later of the heading's appearance and the last change back to idle
SETTLED_JS = """([quiet, nochange]) => {
  const st = window.__crp;
  if (!st || !st.input || !st.seen) return false;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelectorAll('[data-testid="stSkeleton"]').length) return false;
  const now = performance.now();
  const after = st.log.filter((t) => t >= st.input);
  if (!after.length) return now - st.input >= nochange ? st.seen - st.input : false;
  const last = after[after.length - 1];
  if (now - last < quiet) return false;
  return Math.max(last, st.seen) - st.input;
}"""
#: ms after the input with no script-state change at all before a try counts as settled on the heading
NOCHANGE_MS = 2000


#: the entry script the server runs: app.py's one call, timed; each run appends its milliseconds to a
#: file, so every try also reports how long the script itself took (the rest is transport and browser)
TIMED_ENTRY = """import sys, time
sys.path.insert(0, {root!r})
from crp_ui import shell
_t0 = time.perf_counter()
try:
    shell.run()
finally:
    with open({log!r}, "a", encoding="utf-8") as _fh:
        _fh.write(f"{{(time.perf_counter() - _t0) * 1e3:.1f}}\\n")
"""
SCRIPT_LOG: Path | None = None


def script_ms_since(mark: int) -> tuple[float | None, int]:
    """(total script milliseconds logged after line ``mark``, or None when no run was logged; new mark)."""
    if SCRIPT_LOG is None or not SCRIPT_LOG.exists():
        return None, mark
    lines = SCRIPT_LOG.read_text(encoding="utf-8").split()
    new = [float(x) for x in lines[mark:]]
    return (sum(new) if new else None), len(lines)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return bool(r.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def serve(sample_dir: Path | None, workdir: Path) -> Iterator[str]:
    """``streamlit run app.py`` headless on a free loopback port for the block; yields its base URL."""
    port = free_port()
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
        CRP_INSPECT_TRIAGE_DB=str(workdir / "triage.sqlite"),
    )
    if sample_dir is not None:
        env["CRP_SAMPLE_DIR"] = str(sample_dir)
    log_path = workdir / "streamlit.log"
    global SCRIPT_LOG
    SCRIPT_LOG = workdir / "script_ms.txt"
    entry = workdir / "timed_app.py"
    entry.write_text(TIMED_ENTRY.format(root=str(ROOT), log=str(SCRIPT_LOG)), encoding="utf-8")
    app = os.environ.get("CRP_BENCH_APP", str(entry))
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        app,
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
    ]
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)
        if os.environ.get("CRP_BENCH_KEEP_LOG"):
            shutil.copy(log_path, os.environ["CRP_BENCH_KEEP_LOG"])
        overflow = log_path.read_text(errors="replace").count("Inotify queue overflowed")
        if overflow:
            print(f"  (server log: {overflow} 'Inotify queue overflowed' lines)")


#: ms from the input to the end of the last long main-thread task that started after it (read once the
#: try has settled, after one more frame and a short pause, so the observer has delivered every entry)
DRAWN_JS = """async () => {
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)));
  const st = window.__crp;
  const ends = st.lt.filter((t) => t >= st.input);
  return ends.length ? Math.max(...ends) - st.input : 0;
}"""


def settle(page: Any) -> tuple[float, float]:
    """(ms from the last input event to the settled app (see SETTLED_JS), ms to the end of the browser's
    last long task after it: the later of the two is when the page is drawn and the main thread free).

    Both are read from timestamps taken in the page (``performance.now()`` at the input, at each
    script-state change, at each long task's end), never from when the polling noticed, so neither
    the QUIET_MS wait nor the 50 ms polling interval is in them."""
    handle = page.wait_for_function(SETTLED_JS, arg=[QUIET_MS, NOCHANGE_MS], timeout=TRY_TIMEOUT_MS, polling=50)
    idle = float(handle.json_value())
    return idle, max(idle, float(page.evaluate(DRAWN_JS)))


Sample = tuple[float, float, float | None]  # (idle ms, drawn ms, script ms or None for a fragment-only run)


def timed(page: Any, heading: str, act: Callable[[], None]) -> Sample:
    _, mark = script_ms_since(0)
    page.evaluate(OBSERVE_JS, heading)
    act()
    try:
        ms, drawn = settle(page)
    except Exception:
        state = page.evaluate("""() => ({state: document.querySelector('[data-testid="stApp"]')
            .getAttribute('data-test-script-state'), log: window.__crp && window.__crp.log.length,
            input: window.__crp && window.__crp.input, seen: window.__crp && window.__crp.seen,
            h1: Array.from(document.querySelectorAll('[data-testid="stMain"] h1')).map((h) => h.textContent),
            skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length})""")
        print(f"  try did not settle (want heading {heading!r}): {state}", file=sys.stderr)
        raise
    exc = page.locator('[data-testid="stException"]')
    if exc.count():
        raise AssertionError("the page shows an exception:\n" + exc.first.inner_text()[:2000])
    script, _ = script_ms_since(mark)
    return ms, drawn, script


def nav_link(page: Any, title: str) -> Any:
    links = page.locator('[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]')
    for i in range(links.count()):
        link = links.nth(i)
        if link.inner_text().strip().splitlines()[-1].strip() == title:
            return link
    raise LookupError(f"no navigation link {title!r}")


def wait_first_load(page: Any, url: str) -> float:
    t = time.perf_counter()
    page.goto(url, timeout=LOAD_TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=LOAD_TIMEOUT_MS)
    page.wait_for_function(
        """() => document.querySelector('[data-testid="stApp"]')
        .getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelectorAll('[data-testid="stSkeleton"]').length
        && !document.querySelectorAll('[data-testid="stProgress"]').length""",
        timeout=LOAD_TIMEOUT_MS,
    )
    page.wait_for_timeout(1000)
    page.wait_for_selector(IDLE, timeout=LOAD_TIMEOUT_MS)
    return (time.perf_counter() - t) * 1e3


def measure(browser: Any, url: str, query: str, tries: int) -> tuple[float, list[tuple[str, list[Sample]]]]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    try:
        first = wait_first_load(page, url + "/" + query)
        rows: dict[str, list[Sample]] = {}
        for title, _h in PAGES:  # one unmeasured visit each: first-visit costs are not steady state
            link = nav_link(page, title)
            timed(page, _h, link.click)
        for _ in range(tries):
            for title, heading in PAGES:
                link = nav_link(page, title)
                rows.setdefault(f"switch → {title}", []).append(timed(page, heading, link.click))
        timed(page, "Score breakdown", nav_link(page, "Score breakdown").click)
        # the recency curves (with the toggle) are drawn only once their expander is opened (kept open for
        # the session); a version without that expander draws them at once
        main = page.locator('[data-testid="stMain"]')
        recency = main.locator('[data-testid="stExpander"] summary').filter(has_text=RECENCY_EXPANDER)
        if recency.count():
            recency.first.scroll_into_view_if_needed()
            timed(page, "Score breakdown", recency.first.click)
            for _ in range(tries):  # the page switch with the chart open, as a user who opened it sees it
                timed(page, "Overview", nav_link(page, "Overview").click)
                rows.setdefault("switch → Score breakdown, recency curves open", []).append(
                    timed(page, "Score breakdown", nav_link(page, "Score breakdown").click)
                )
        toggle = main.get_by_text("log age axis", exact=True)
        toggle.scroll_into_view_if_needed()
        rows["widget rerun (breakdown: log age axis)"] = [
            timed(page, "Score breakdown", toggle.click) for _ in range(tries)
        ]
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Configuration", exact=True).click()
        page.wait_for_timeout(500)
        page.wait_for_selector(IDLE)
        box = sidebar.locator('[data-testid="stNumberInput"]').filter(has_text="cdr_min_relevance")
        up = box.locator('[data-testid="stNumberInputStepUp"]')
        up.scroll_into_view_if_needed()
        rows["config change rerun (cdr_min_relevance +0.01)"] = [
            timed(page, "Score breakdown", up.click) for _ in range(tries)
        ]
        return first, list(rows.items())
    finally:
        ctx.close()


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def report(name: str, first: float, rows: list[tuple[str, list[Sample]]], load: tuple[float, ...]) -> None:
    print(
        f"\n{name} · first page load {first / 1e3:.1f} s · load average before "
        f"{load[0]:.2f} / after {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(
        "idle: click to the app's last script-state change back to idle (the heading shown); drawn: to the "
        "end of the browser's last long (>= 50 ms) main-thread task after the click, when a chart is still "
        "being drawn after idle; script: the entry script's own run time ('-' = a fragment rerun)"
    )
    print(
        f"| {'action':<48} | {'n':>3} | {'idle p50':>8} | {'idle p95':>8} | {'drawn p50':>9} | {'drawn p95':>9} "
        f"| {'script p50':>10} |"
    )
    print(f"|{'-' * 50}|{'-' * 5}|{'-' * 10}|{'-' * 10}|{'-' * 11}|{'-' * 11}|{'-' * 12}|")
    for label, samples in rows:
        xs = [b for b, _, _ in samples]
        ds = [d for _, d, _ in samples]
        sc = [x for _, _, x in samples if x is not None]
        script = f"{statistics.median(sc):>10.0f}" if sc else f"{'-':>10}"
        print(
            f"| {label:<48} | {len(xs):>3} | {statistics.median(xs):>8.0f} | {pct(xs, 0.95):>8.0f} "
            f"| {statistics.median(ds):>9.0f} | {pct(ds, 0.95):>9.0f} | {script} |"
        )


def synth_samples(src: Path, tmp: Path) -> Path:
    d = tmp / "samples"
    (d / "scenarios").mkdir(parents=True)
    os.symlink(src.resolve(), d / "synth")
    shutil.copy(src / "scenario.json", d / "scenarios" / "scenario.json")
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckf", choices=("sample", "synth10k", "both"), default="both")
    ap.add_argument("--synth-dir", default=str(ROOT / "bench" / "data" / "synth10k"))
    ap.add_argument("--tries", type=int, default=20)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    runs: list[tuple[str, Path | None, str]] = []
    tmp = Path(tempfile.mkdtemp(prefix="crp-bench-ui-"))
    if args.ckf in ("sample", "both"):
        runs.append(("bundled sample (sample_ckf/knowledge_base.jsonl)", None, ""))
    if args.ckf in ("synth10k", "both"):
        src = Path(args.synth_dir)
        if not (src / "facts.jsonl").is_file():
            print(f"{src} has no facts.jsonl: run bench/make_synthetic_ckf.py --facts 10000 --out {src}")
            return 2
        runs.append((f"10k synthetic CKF ({src})", synth_samples(src, tmp), "?ckf=synth&scenario=scenario.json"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for i, (name, sample_dir, query) in enumerate(runs):
                work = tmp / f"run{i}"
                work.mkdir()
                load = os.getloadavg()
                with serve(sample_dir, work) as url:
                    first, rows = measure(browser, url, query, args.tries)
                report(name, first, rows, load)
        finally:
            browser.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The dashboard on a large knowledge base, as an operator opens one: ``crp-inspect dashboard --ckf PATH``.

    .venv/bin/python bench/dashboard_scale.py --ckf bench/data/synth1m --max-bytes 2000000000 [--tries 2]

Starts ``crp-inspect dashboard`` on a free loopback port with PATH as its first CKF (PATH's folder its
scenarios folder unless ``--scenarios``) and drives it with headless Debian Chromium (Playwright,
``/usr/bin/chromium``; never ``playwright install``):

1. the first render: from opening ``/overview?scenario=<--scenario>`` to the app idle, each change of the page's
   text printed with the time and the server's resident memory (loading the CKF, building or reading the HNSW
   index, the run with its known-conflict guard);
2. a new browser session on the warm server (what every later visitor waits for);
3. page switches: a click on each navigation link (``--pages``, default all) to the page drawn, ``--tries``
   rounds (the first round builds each page's own caches, later rounds are what a person clicking around
   waits for); the Conflicts page's first visit includes the whole-CKF scan of its triage queue;
4. with ``--queue``, on the Conflicts page, ``--tries`` rounds of what an operator does with the triage queue:
   sort by similarity, then back to the triage order, filter on a pattern, on "undecided", clear both, and
   turn to the next page (the queue is paged, filtered and sorted on the server; the browser receives one
   page), with what the page says after each (its match and rows lines, the "Decided" choice).

Each time runs from the start of the action (its own clicks included) to the app idle with the page drawn:
the last change of the page's elements after it, read from the page's own clock, with no script-state or
element change for 300 ms after; in brackets, the end of the action's run (the server's part; the rest is the
browser drawing charts and tables). The queue's table also gives both times from the deciding input: the last
click or key press before the run started (an option chosen, not the click that opened its list), which is
what a person waits for after choosing.

Prints the server's peak resident memory (its ``/proc`` status, ``VmHWM``) and the load average. The HNSW
index persists in the cache (``$CRP_CACHE_DIR``), so a second run measures a server start with the index on
disk. Targets (issue 36): first render after the index exists <= 60 s, page switches <= 1 s, <= 6 GB.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from ui_latency import CHROMIUM, CHROMIUM_ARGS, NOCHANGE_MS, OBSERVE_JS, QUIET_MS, free_port, healthy

ROOT = Path(__file__).resolve().parent.parent
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
#: navigation titles clicked in each round (Story collapses the sidebar, so it is not among them)
PAGES = ("Overview", "Score breakdown", "Graph", "Envelope", "Conflicts", "Fan-out", "Tuning", "Glossary")
#: the longest a first render may take before the run gives up
FIRST_RENDER_S = 4 * 3600


def server_pid(port: int) -> int | None:
    """The Streamlit server process listening on ``port`` (the child of ``crp-inspect dashboard``)."""
    out = subprocess.run(["pgrep", "-f", f"server.port {port}"], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else None


def memory_gb(pid: int | None, field: str = "VmRSS") -> float:
    """A field of the process's ``/proc/<pid>/status`` in GB (0 when it is gone)."""
    if pid is None:
        return 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return 0.0


def first_render(page, url: str, port: int) -> float:
    """Open ``url`` and wait for the app to go idle, printing each change of the main area's first line."""
    t0 = time.monotonic()
    page.goto(url)
    last = None
    while time.monotonic() - t0 < FIRST_RENDER_S:
        try:
            text = page.locator('[data-testid="stMain"]').inner_text(timeout=5000)
        except Exception:  # noqa: BLE001  the page is being redrawn: read it again
            text = ""
        line = " | ".join(x for x in text.splitlines() if x.strip())[:160]
        if line != last:
            print(f"  {time.monotonic() - t0:7.1f} s  {memory_gb(server_pid(port)):5.2f} GB  {line}", flush=True)
            last = line
        state = page.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
        if state == "notRunning" and time.monotonic() - t0 > 5 and "Loading" not in line:
            return time.monotonic() - t0
        time.sleep(2)
    raise TimeoutError("no first render")


#: settled after ``t0`` (a page timestamp): idle, no skeleton, and neither a script-state change nor a change of the
#: page's elements for ``quiet`` ms; the value is ``[run, drawn, decided]`` in ms after ``t0`` on the page's own
#: clock: the last script-state change (the run's end), the last of those changes (the page drawn) and the deciding
#: input (the last click or key press before the run started: an option chosen, not the click that opened its
#: list). A run too short for the app to show its state is seen by the elements it changed; nothing changed within
#: ``nochange`` ms (the action started no run) settles on the time waited.
SETTLED_AFTER_JS = """([t0, quiet, nochange]) => {
  const st = window.__crp;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!st || !app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelectorAll('[data-testid="stSkeleton"]').length) return false;
  const now = performance.now();
  const after = st.log.concat(window.__crpDom).filter((t) => t >= t0);
  if (!after.length) return now - t0 >= nochange ? [now - t0, now - t0, 0] : false;
  const last = Math.max(...after);
  const ran = st.log.filter((t) => t >= t0);
  const start = ran.length ? Math.min(...ran) : Math.min(...after);
  const inputs = window.__crpIn.filter((t) => t >= t0 && t <= start);
  const decided = inputs.length ? Math.max(...inputs) - t0 : 0;
  return now - last >= quiet ? [ran.length ? Math.max(...ran) - t0 : last - t0, last - t0, decided] : false;
}"""
#: every change of the main area's elements or text, and every click or key press, with its time (installed once
#: per page)
WATCH_MAIN_JS = """() => {
  if (window.__crpDom === undefined) {
    window.__crpDom = [];
    window.__crpIn = [];
    new MutationObserver(() => window.__crpDom.push(performance.now()))
      .observe(document.body, {childList: true, subtree: true, characterData: true});
    for (const ev of ['click', 'keydown']) {
      document.addEventListener(ev, () => window.__crpIn.push(performance.now()), true);
    }
  }
  window.__crpDom.length = 0;
  window.__crpIn.length = 0;
}"""


def idle_after(page, act) -> float:  # type: ignore[no-untyped-def]
    """Seconds from the start of ``act()`` (a click, a choice: its own clicks included) to the app idle with the
    page drawn, both read from the page's clock (``ui_latency.OBSERVE_JS`` logs every script-state change,
    :data:`WATCH_MAIN_JS` every change of the elements and every input): neither the polling interval nor the
    wait for a quiet app is counted. The seconds to the run's end (the server's part) go to :data:`RUN_S`; the
    seconds from the deciding input (what the person waits for after their last click) to the page drawn and to
    the run's end go to :data:`AFTER_INPUT_S`."""
    page.evaluate(OBSERVE_JS, None)
    page.evaluate(WATCH_MAIN_JS)
    t0 = page.evaluate("performance.now()")
    act()
    run_ms, drawn_ms, decided_ms = page.wait_for_function(
        SETTLED_AFTER_JS, arg=[t0, QUIET_MS, NOCHANGE_MS], timeout=FIRST_RENDER_S * 1000, polling=50
    ).json_value()
    RUN_S.append(float(run_ms) / 1000.0)
    AFTER_INPUT_S.append(((float(drawn_ms) - float(decided_ms)) / 1000.0, (float(run_ms) - float(decided_ms)) / 1000.0))
    return float(drawn_ms) / 1000.0


#: the seconds to the run's end of each :func:`idle_after`, in call order
RUN_S: list[float] = []
#: the seconds from the deciding input to the page drawn and to the run's end, of each :func:`idle_after`
AFTER_INPUT_S: list[tuple[float, float]] = []


def switch(page, title: str) -> float:
    """Seconds from a click on the navigation link ``title`` to the app idle again."""
    return idle_after(page, page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click)


def _pick(page, label: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """Choose ``option`` in the select box or multiselect labelled ``label`` (a combobox by its label)."""
    page.get_by_role("combobox", name=label).click()
    page.locator('[role="option"]', has_text=option).first.click()
    page.keyboard.press("Escape")


def _clear(page, label: str) -> None:  # type: ignore[no-untyped-def]
    """Remove the last choice of the multiselect labelled ``label`` (Backspace in its box)."""
    box = page.get_by_role("combobox", name=label)
    box.click()
    box.press("Backspace")
    page.keyboard.press("Escape")


def _decided(page):  # type: ignore[no-untyped-def]
    """The queue's "Decided" radio group."""
    return page.get_by_test_id("stRadio").filter(has_text="Decided").first


def _next_page(page) -> None:  # type: ignore[no-untyped-def]
    """Type the next page's number into the queue's page box."""
    box = page.locator('input[aria-label^="page (of"]').first
    box.fill(str(int(box.input_value()) + 1))
    box.press("Enter")


#: the queue actions timed by ``--queue``
QUEUE_ACTIONS = (
    ("sort by similarity", lambda p: _pick(p, "Sort (all pairs)", "similarity (highest first)")),
    ("sort in triage order", lambda p: _pick(p, "Sort (all pairs)", "triage order")),
    ("filter: number changed", lambda p: _pick(p, "Pattern", "number changed")),
    ("filter: undecided", lambda p: _decided(p).get_by_text("undecided", exact=True).click()),
    ("filters cleared", lambda p: (_clear(p, "Pattern"), _decided(p).get_by_text("all", exact=True).click())),
    ("next page", _next_page),
)


def _says(page) -> str:  # type: ignore[no-untyped-def]
    """The queue's own account of the view shown: its match line and its rows line."""
    match = page.get_by_text("pairs match").first.inner_text(timeout=5000).split(" · scan")[0]
    rows = page.get_by_text("rows ").filter(has_text=" of ").first.inner_text(timeout=5000)
    decided = _decided(page).get_by_role("radio", checked=True).evaluate("e => e.closest('label').innerText")
    return f"{match} · {rows} · decided: {decided.strip()}"


def queue_rounds(page, tries: int) -> None:  # type: ignore[no-untyped-def]
    """``tries`` rounds of :data:`QUEUE_ACTIONS` on the Conflicts page, as a table with what the page said
    after each action of the first round (proof that the action took effect)."""
    switch(page, "Conflicts")
    times: dict[str, list[float]] = {name: [] for name, _ in QUEUE_ACTIONS}
    runs: dict[str, list[float]] = {name: [] for name, _ in QUEUE_ACTIONS}
    waits: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in QUEUE_ACTIONS}
    said: dict[str, str] = {}
    for _ in range(tries):
        for name, act in QUEUE_ACTIONS:
            try:
                times[name].append(idle_after(page, lambda act=act: act(page)))
                runs[name].append(RUN_S[-1])
                waits[name].append(AFTER_INPUT_S[-1])
                said.setdefault(name, _says(page))
            except Exception:
                shot = Path(os.environ.get("TMPDIR", "/tmp")) / "dashboard_scale_failed.png"
                page.screenshot(path=str(shot), full_page=True)
                shot.with_suffix(".html").write_text(page.content(), encoding="utf-8")
                print(f"{name!r} failed: the page is in {shot} and {shot.with_suffix('.html')}", flush=True)
                raise
    print(
        "| triage queue action | "
        + " | ".join(f"round {r + 1}: drawn (run's end), s | after the deciding input" for r in range(tries))
        + " | the page says |"
    )
    print("|---|" + "---:|---:|" * tries + "---|")
    for name, got in times.items():
        cells = " | ".join(
            f"{t:.2f} ({r:.2f}) | {w[0]:.2f} ({w[1]:.2f})" for t, r, w in zip(got, runs[name], waits[name])
        )
        print(f"| {name} | {cells} | {said[name]} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ckf", required=True, help="the CKF folder or file to open")
    ap.add_argument("--scenarios", help="scenario folder (default: the CKF's folder)")
    ap.add_argument("--scenario", default="scenario.json", help="the scenario the pages open with")
    ap.add_argument("--max-bytes", type=int, default=2_000_000_000, help="the server's CKF size limit")
    ap.add_argument("--tries", type=int, default=2, help="rounds of page switches")
    ap.add_argument("--pages", default=",".join(PAGES), help="comma-separated navigation titles to switch to")
    ap.add_argument("--queue", action="store_true", help="then time sorting, filtering and paging the triage queue")
    args = ap.parse_args()
    pages = tuple(t.strip() for t in args.pages.split(",") if t.strip())
    ckf = Path(args.ckf).resolve()
    scenarios = Path(args.scenarios).resolve() if args.scenarios else (ckf if ckf.is_dir() else ckf.parent)
    port = free_port()
    cmd = [sys.executable, "-m", "crp_core.cli", "dashboard", "--ckf", str(ckf), "--scenarios", str(scenarios)]
    cmd += ["--max-bytes", str(args.max_bytes), "--port", str(port)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            if healthy(base):
                break
            time.sleep(0.5)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            url = f"{base}/overview?scenario={args.scenario}"
            print(f"{ckf.name}: first render (load {os.getloadavg()[0]:.1f})", flush=True)
            first = first_render(browser.new_page(viewport={"width": 1400, "height": 1000}), url, port)
            print(f"first render: {first:.1f} s", flush=True)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            t0 = time.monotonic()
            page.goto(url)
            page.wait_for_timeout(1000)
            page.wait_for_selector(IDLE, timeout=FIRST_RENDER_S * 1000)
            print(f"a new session on the warm server: {time.monotonic() - t0:.1f} s", flush=True)
            print("| page | " + " | ".join(f"round {r + 1}: drawn (run's end), s" for r in range(args.tries)) + " |")
            print("|---|" + "---:|" * args.tries)
            times: dict[str, list[tuple[float, float]]] = {title: [] for title in pages}
            for _ in range(args.tries):
                for title in pages:
                    times[title].append((switch(page, title), RUN_S[-1]))
            for title in pages:
                print(f"| {title} | " + " | ".join(f"{t:.2f} ({r:.2f})" for t, r in times[title]) + " |")
            if args.queue:
                queue_rounds(page, args.tries)
                page.screenshot(path=str(Path(os.environ.get("TMPDIR", "/tmp")) / "dashboard_scale_queue.png"))
            browser.close()
        pid = server_pid(port)
        print(f"server resident now {memory_gb(pid):.2f} GB, peak {memory_gb(pid, 'VmHWM'):.2f} GB")
        print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        pid = server_pid(port)
        if pid is not None:
            os.kill(pid, 15)  # the Streamlit server, then the command that started it
        server.terminate()
        server.wait(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

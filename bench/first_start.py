"""A new user's first start: ``make run`` on a clone, timed to the first rendered Overview page.

    python bench/first_start.py                 # this checkout's .venv, an empty cache
    python bench/first_start.py --clone         # a fresh `git clone` of HEAD: times `make install` too
    python bench/first_start.py --clone --keep  # ... and leaves the clone in place (path printed)

Two phases, each timed with ``time.monotonic``:

* ``install``: with ``--clone``, ``make install`` in the fresh clone (a new .venv, torch first, then the
  project constrained by ``requirements.lock``). It is the install step of ``make run``; the figure
  depends on the package index and the wheel cache, so it is printed but not held to a target.
* ``first Overview``: from starting ``make run`` (the stamps are fresh, so make goes straight to
  ``streamlit run app.py``) to the Overview page's heading being visible in headless Chromium and the
  script settled (``data-test-script-state="notRunning"``), with ``CRP_CACHE_DIR`` a new empty
  directory (no cached vectors, index or token counts). The target is <= 15 s.

Then a second page load on the same server (``warm reload``): the cache is filled, the process warm.
The 1-minute load average is printed beside the table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# the bench folder's server and browser helpers (this script's folder is on sys.path when run as a script)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ui_latency import CHROMIUM, CHROMIUM_ARGS, free_port, healthy
from ui_latency import IDLE as SETTLED

REPO = Path(__file__).resolve().parents[1]


def _overview(page, url: str, timeout_ms: int) -> None:  # type: ignore[no-untyped-def]
    page.goto(url + "/", wait_until="domcontentloaded", timeout=timeout_ms)
    page.get_by_role("heading", name="Overview", exact=True, level=1).wait_for(state="visible", timeout=timeout_ms)
    page.wait_for_selector(SETTLED, timeout=timeout_ms)


def first_start(repo: Path, timeout_s: float) -> tuple[float, float, float]:
    """Seconds to the server's health check, to the first rendered Overview, and for a warm reload."""
    from playwright.sync_api import sync_playwright

    cache = Path(tempfile.mkdtemp(prefix="crp-first-start-cache-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, CRP_CACHE_DIR=str(cache), CRP_INSPECT_TRIAGE_DB=str(cache / "triage.sqlite"))
    log = open(cache / "streamlit.log", "w", encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        t0 = time.monotonic()
        proc = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=repo,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            while not healthy(url):
                if proc.poll() is not None:
                    raise SystemExit(f"make run exited with {proc.returncode}: see {cache / 'streamlit.log'}")
                if time.monotonic() - t0 > timeout_s:
                    raise SystemExit(f"no health check within {timeout_s:.0f} s")
                time.sleep(0.05)
            t_health = time.monotonic() - t0
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            _overview(page, url, int(timeout_s * 1000))
            t_first = time.monotonic() - t0
            page.close()
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            t1 = time.monotonic()
            _overview(page, url, int(timeout_s * 1000))
            t_warm = time.monotonic() - t1
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=20)
            log.close()
            browser.close()
    shutil.rmtree(cache, ignore_errors=True)
    return t_health, t_first, t_warm


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clone", action="store_true", help="time a fresh git clone of HEAD (make install included)")
    ap.add_argument("--keep", action="store_true", help="keep the clone")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for each step")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()[0]
    rows: list[tuple[str, str]] = []
    repo = REPO
    tmp: Path | None = None
    if args.clone:
        tmp = Path(tempfile.mkdtemp(prefix="crp-first-start-"))
        repo = tmp / "crp-inspect"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(repo)], check=True)
        t0 = time.monotonic()
        subprocess.run(["make", "install"], cwd=repo, check=True, stdout=subprocess.DEVNULL)
        rows.append(("install (make install, fresh .venv)", f"{time.monotonic() - t0:8.1f} s"))
    t_health, t_first, t_warm = first_start(repo, args.timeout)
    rows += [
        ("make run -> health check", f"{t_health:8.1f} s"),
        ("make run -> first Overview (empty cache)", f"{t_first:8.1f} s   (target <= 15 s)"),
        ("warm reload of Overview", f"{t_warm:8.1f} s"),
    ]
    width = max(len(r[0]) for r in rows)
    print(
        f"first start of {repo} (load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, "
        f"{os.cpu_count()} cores)"
    )
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    if tmp is not None:
        if args.keep:
            print(f"clone kept at {repo}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

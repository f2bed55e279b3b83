"""The shared triage log under load and faults: two dashboard servers and four CLI writers on one PostgreSQL.

    python bench/team_load.py                    # 40 facts, 4 writers, 20 SIGKILLs, one server restart
    python bench/team_load.py --kills 5 --no-browser

Starts a throw-away PostgreSQL (``tests/support/postgres.py``), writes a small CKF (the first ``--facts``
facts of ``sample_ckf/``, with their embeddings) and its pairs (facts 1-2, 3-4, ..., and the shared pair),
starts two ``streamlit run app.py`` servers in ``proxy`` mode (a team file with several operators) on the same
``CRP_INSPECT_TRIAGE_DB`` URL, and runs:

- four CLI writer loops: each picks a pair, reads its latest id (the library), runs
  ``crp-inspect triage record --based-on LATEST`` as a child process and, on exit 0, appends the
  acknowledged id to its own log file (fsynced) before anything else. A stale refusal (exit 2, "changed
  since it was shown") is counted and the writer decides again on the new state (a new decision); a
  "database away" failure is counted and the same decision is sent again on the same ``based_on``, so a
  decision committed without its answer comes back as a stale refusal, never as a second entry;
- a Playwright loop with two browser contexts (one per server, two operators by their proxy header)
  opening the CKF's conflict pair k8s-0026 / k8s-0027 on the Conflicts page and recording a dismissal
  with a unique note, over and over; the CLI writers decide that pair too, so both sides meet stale
  refusals; a page that shows the "database cannot be reached" banner records nothing that round;
- faults: a random writer SIGKILLed (its whole process group, the CLI child included) ``--kills`` times
  and started again, and the PostgreSQL server stopped (``pg_ctl stop -m fast``) and started once when
  half the kills are done.

Then it checks: every acknowledged id is in the log exactly once with the content its writer sent; no
decision (a unique note token) is in the log twice; for every pair each entry's ``based_on`` is the id of
the pair's previous entry (no lost update); ``crp-inspect triage verify`` says ok. It prints one table and
exits 1 on any violation (a dashboard page showing an exception is one). Every process it started is
stopped on the way out, failure or not.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

HEADER = "X-Forwarded-Email"
OPERATORS = ("alice@example.org", "bob@example.org")
TEAM = f"""identity = "proxy"
proxy_header = "{HEADER}"
refresh_seconds = 2.0
lease_seconds = 60

[roles]
default = "operator"
admin = ["alice@example.org"]
viewer = ["vic@example.org"]
"""
#: the pair the two dashboards (and the CLI writers too) decide: a conflict the detector finds in the CKF
SHARED_PAIR = "k8s-0026|k8s-0027"
STALE_TEXT = "changed since it was shown"
ENV = {
    **os.environ,
    "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
}


# ---- one writer (a child process of the bench: ``--writer``) ------------------------------------------
def _append(log: Any, line: str) -> None:
    log.write(line + "\n")
    log.flush()
    os.fsync(log.fileno())


def writer(args: argparse.Namespace) -> int:
    """Record decisions through the CLI forever; log every acknowledged one (fsynced) and every refusal."""
    from crp_core.triage import DecisionStore, TriageStoreUnavailable

    pairs = [tuple(p.split("|")) for p in args.pairs.split(",")]
    rng = random.Random(f"{args.writer}-{os.getpid()}")
    n = 0
    with open(args.log, "a", encoding="utf-8") as log:
        while True:
            try:
                store = DecisionStore(args.db, create=False, busy_timeout=5)
                break
            except TriageStoreUnavailable:
                _append(log, "away open")
                time.sleep(0.3)
        while True:
            a, b = rng.choice(pairs)
            n += 1
            token = f"{args.writer}-{os.getpid()}-{n}"
            try:
                seen = store.latest_id((a, b))
            except TriageStoreUnavailable:
                _append(log, f"away read {token}")
                time.sleep(0.3)
                continue
            kind = rng.choice(("dismiss", "override"))
            cmd = [sys.executable, "-m", "crp_core.cli", "triage", "record", "--db", args.db, "--ckf", args.ckf]
            cmd += ["--pair", a, b, "--kind", kind, "--operator", args.writer, "--note", token]
            cmd += ["--based-on", str(seen)] + (["--winner", a] if kind == "override" else [])
            while True:  # the same decision again while the database is away
                done = subprocess.run(cmd, capture_output=True, text=True, env=ENV, cwd=REPO, check=False)
                if done.returncode == 0:
                    got = json.loads(done.stdout.strip().splitlines()[-1])
                    _append(log, f"ack {got['id']} {token} {a}|{b} {seen} {kind}")
                    break
                if done.returncode == 2 and STALE_TEXT in done.stderr:
                    _append(log, f"stale {token} {a}|{b} {seen}")
                    break
                _append(log, f"away write {token} rc={done.returncode} {done.stderr.strip()[-160:]!r}")
                time.sleep(0.3)


# ---- browser loop (a child process: ``--browser``) --------------------------------------------------
def browser_loop(args: argparse.Namespace) -> int:
    """Two contexts, one per server, as two operators: load the Conflicts page until killed."""
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

    urls = args.browser.split(",")
    with open(args.log, "a", encoding="utf-8") as log, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        pages = []
        for url, who in zip(urls, OPERATORS, strict=True):
            ctx = browser.new_context(viewport=VIEWPORT, base_url=url, extra_http_headers={HEADER: who})
            pg = ctx.new_page()
            pg.set_default_timeout(180_000)
            pages.append((who, pg))
        for n in itertools.count(1):
            for who, pg in pages:
                try:
                    page_round(pg, who, log, n)
                except Exception as exc:  # noqa: BLE001  a failed round is counted, the loop goes on
                    _append(log, f"load failed {who} {type(exc).__name__}")


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def page_round(pg: Any, who: str, log: Any, n: int) -> None:
    """Open the shared pair on the Conflicts page and record a dismissal on the state it shows."""
    import re
    from urllib.parse import quote

    t0 = time.monotonic()
    pg.goto(f"/conflicts?scenario=etcd_upgrade.json&pair={quote(SHARED_PAIR)}")
    pg.wait_for_selector(IDLE, state="attached")
    pg.get_by_text("Conflict triage").first.wait_for()
    pg.wait_for_timeout(500)
    pg.wait_for_selector(IDLE, state="attached")
    bad = pg.locator('[data-testid="stException"]').count()
    away = "cannot be reached since" in pg.locator('[data-testid="stMain"]').inner_text()
    _append(log, f"load {'exception' if bad else 'banner' if away else 'ok'} {who} {time.monotonic() - t0:.1f}")
    record = pg.get_by_role("button", name="Record decision")
    if bad or away or record.count() == 0 or record.is_disabled():
        return
    pg.get_by_text("Dismiss: not a conflict", exact=True).click()
    pg.wait_for_selector(IDLE, state="attached")
    token = f"{who.split('@')[0]}-{os.getpid()}-{n}"
    pg.get_by_label("Note (optional)").fill(token)
    record.click()
    done = pg.get_by_text(re.compile(r"^(Recorded decision #\d+ on|Not recorded|Already recorded)"))
    done.first.wait_for(timeout=120_000)
    text = done.first.inner_text()
    m = re.match(r"^Recorded decision #(\d+) on (\S+) \u2194 (\S+):", text)
    if m:
        _append(log, f"dack {m.group(1)} {who} {m.group(2)}|{m.group(3)} {token}")
    elif text.startswith("Not recorded: this pair changed"):
        _append(log, f"stale dashboard {who}")
    else:
        _append(log, f"dother {who} {text[:80]!r}")


# ---- the bench ----------------------------------------------------------------------------------------
def write_ckf(out: Path, n: int) -> list[tuple[str, str]]:
    """The first ``n`` facts of sample_ckf (with embeddings) and its scenarios; the pairs 1-2, 3-4, ..."""
    out.mkdir(parents=True)
    lines = (REPO / "sample_ckf" / "knowledge_base.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    (out / "knowledge_base.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copytree(REPO / "sample_ckf" / "scenarios", out / "scenarios")
    ids = [json.loads(line)["fact_id"] for line in lines]
    pairs = [(ids[i], ids[i + 1]) for i in range(0, len(ids) - 1, 2)]
    a, b = SHARED_PAIR.split("|")
    return pairs + [(a, b)] if a in ids and b in ids else pairs


def spawn(argv: list[str], out: Any = subprocess.DEVNULL, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        argv,
        cwd=REPO,
        env=env or ENV,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=15)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def processes() -> Iterator[list[subprocess.Popen]]:
    """Every child started in the block, stopped (group and all) on the way out."""
    started: list[subprocess.Popen] = []
    try:
        yield started
    finally:
        for p in reversed(started):
            kill_group(p, signal.SIGTERM)


def start_server(work: Path, name: str, db: str, started: list[subprocess.Popen]) -> str:
    from tests.support.postgres import free_port

    port = free_port()
    env = {**ENV, "CRP_SAMPLE_DIR": str(work / "kb"), "CRP_INSPECT_TRIAGE_DB": db}
    env["CRP_INSPECT_TEAM"] = str(work / "team.toml")
    log = open(work / f"{name}.log", "w", encoding="utf-8")
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    cmd += ["--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    started.append(spawn(cmd, out=log, env=env))
    return f"http://127.0.0.1:{port}"


def wait_healthy(url: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as r:
                if r.status == 200:
                    return
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer its health check within {timeout:.0f} s")


def read_events(paths: list[Path]) -> tuple[dict[int, tuple[str, str, int, str, str]], Counter, list[str]]:
    """The acknowledged decisions (id -> token, pair, based_on, kind, writer), counts, and problems."""
    acked: dict[int, tuple[str, str, int, str, str]] = {}
    counts: Counter = Counter()
    problems: list[str] = []
    for path in paths:
        w = path.stem
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "ack" and len(parts) == 6:
                i = int(parts[1])
                if i in acked:
                    problems.append(f"id {i} acknowledged twice")
                acked[i] = (parts[2], parts[3], int(parts[4]), parts[5], w)
                counts["ack"] += 1
            elif parts[0] == "stale":
                counts["stale"] += 1
            elif parts[0] == "away":
                counts["away"] += 1
            # a line cut short by SIGKILL is not an acknowledgement (the fsync comes after the write)
    return acked, counts, problems


def browser_events(path: Path) -> tuple[Counter, dict[int, tuple[str, str, str]]]:
    """Page loads and stale refusals by outcome, and the decisions the dashboards acknowledged (id -> who, pair)."""
    loads: Counter = Counter()
    dacked: dict[int, tuple[str, str, str]] = {}
    if not path.exists():
        return loads, dacked
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "load":
            loads[parts[1]] += 1
        elif parts and parts[0] == "stale":
            loads["stale"] += 1
        elif len(parts) == 5 and parts[0] == "dack":
            dacked[int(parts[1])] = (parts[2], parts[3], parts[4])
    return loads, dacked


def check_dashboard(db: str, dacked: dict[int, tuple[str, str, str]]) -> list[str]:
    """Every decision a dashboard acknowledged is in the log, as that operator's, from the dashboard."""
    from crp_core.triage import DecisionStore

    with DecisionStore(db, create=False, readonly=True) as s:
        by_id = {d.id: d for d in s.all()}
    problems = []
    for i, (who, pair, token) in sorted(dacked.items()):
        d = by_id.get(i)
        if d is None or (d.operator, d.origin, f"{d.fact_a}|{d.fact_b}", d.note) != (who, "dashboard", pair, token):
            problems.append(f"dashboard-acknowledged #{i} ({who}, {pair}) is not in the log as such")
    return problems


def check(db: str, acked: dict[int, tuple[str, str, int, str, str]]) -> tuple[list[str], Counter, Counter, str]:
    """Violations, entries per origin, entries per pair, the chain verdict's line."""
    from crp_core.triage import DecisionStore

    problems: list[str] = []
    with DecisionStore(db, create=False, readonly=True) as s:
        log = s.all()
    by_id = {d.id: d for d in log}
    for i, (token, pair, based_on, kind, w) in sorted(acked.items()):
        d = by_id.get(i)
        if d is None:
            problems.append(f"acknowledged #{i} ({token}) is not in the log")
        elif (d.note, f"{d.fact_a}|{d.fact_b}", d.based_on, d.kind) != (token, pair, based_on, kind):
            problems.append(f"#{i} in the log differs from what {w} acknowledged")
    notes = Counter(d.note for d in log if d.note)
    problems += [f"decision {t} applied {c} times" for t, c in notes.items() if c > 1]
    if len(by_id) != len(log):
        problems.append("an id is in the log twice")
    last: dict[str, int] = {}
    for d in sorted(log, key=lambda d: d.id):
        key = f"{d.fact_a}|{d.fact_b}"
        if d.based_on is not None and d.based_on != last.get(key, 0):
            problems.append(
                f"lost update: #{d.id} on {key} based on #{d.based_on}, the pair's previous #{last.get(key, 0)}"
            )
        last[key] = d.id
    verify = subprocess.run(
        [sys.executable, "-m", "crp_core.cli", "triage", "verify", "--db", db],
        capture_output=True, text=True, env=ENV, cwd=REPO, check=False,
    )  # fmt: skip
    verdict = (verify.stdout.strip() or verify.stderr.strip()).splitlines()[0]
    if verify.returncode != 0:
        problems.append(f"triage verify: {verdict}")
    return problems, Counter(d.origin for d in log), Counter(f"{d.fact_a}|{d.fact_b}" for d in log), verdict


def run(args: argparse.Namespace) -> int:  # noqa: C901  one straight script: set up, fault, check
    from tests.support.postgres import PostgresServer, pg_bin

    bindir = pg_bin()
    if bindir is None:
        print("no PostgreSQL binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
        return 2
    t_start = time.monotonic()
    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="crp-team-load-"))
    os.chmod(work, 0o755)
    pg = PostgresServer(bindir)
    rng = random.Random(args.seed)
    kills = restarts = 0
    writer_logs = [work / f"w{i + 1}.events" for i in range(args.writers)]
    for path in writer_logs:
        path.touch()
    try:
        pg.start()
        db = pg.new_database()
        from crp_core.triage import DecisionStore

        DecisionStore(db).close()
        pairs = write_ckf(work / "kb", args.facts)
        ckf = str(work / "kb" / "knowledge_base.jsonl")
        (work / "team.toml").write_text(TEAM, encoding="utf-8")
        with processes() as started:
            urls = [start_server(work, f"server{i + 1}", db, started) for i in range(2)]
            for u in urls:
                wait_healthy(u)
            if args.browser:
                started.append(
                    spawn(
                        [sys.executable, __file__, "--browser", ",".join(urls), "--log", str(work / "browser.events")],
                        out=open(work / "browser.log", "w", encoding="utf-8"),
                    )
                )

            def start_writer(i: int) -> subprocess.Popen:
                argv = [sys.executable, __file__, "--writer", f"w{i + 1}", "--db", db, "--ckf", ckf]
                argv += ["--pairs", ",".join(f"{a}|{b}" for a, b in pairs), "--log", str(writer_logs[i])]
                p = spawn(argv, out=open(work / f"w{i + 1}.out", "a", encoding="utf-8"))
                started.append(p)
                return p

            writers = [start_writer(i) for i in range(args.writers)]
            while kills < args.kills:
                time.sleep(rng.uniform(args.interval / 2, args.interval * 1.5))
                i = rng.randrange(args.writers)
                kill_group(writers[i])
                kills += 1
                writers[i] = start_writer(i)
                if kills == args.kills // 2 and not restarts:
                    pg.stop("fast")
                    time.sleep(args.down)
                    pg.start()
                    restarts += 1
            time.sleep(args.interval)
            for p in writers:
                kill_group(p)
            for p in started:
                kill_group(p, signal.SIGTERM)
        acked, counts, problems = read_events(writer_logs)
        more, origins, per_pair, verdict = check(db, acked)
        problems += more
        loads, dacked = browser_events(work / "browser.events")
        problems += check_dashboard(db, dacked)
        if loads["exception"]:
            problems.append(f"a dashboard page showed an exception {loads['exception']} time(s)")
        wall = time.monotonic() - t_start
        load_end = os.getloadavg()
        rows = [
            ("wall time", f"{wall:.0f} s"),
            ("load average (1 min) start / end", f"{load_start[0]:.2f} / {load_end[0]:.2f} (2 cores)"),
            ("facts / pairs", f"{args.facts} / {len(pairs)}"),
            ("writers / dashboard servers", f"{args.writers} CLI loops / 2 (proxy mode, one PostgreSQL)"),
            ("decisions acknowledged: cli / dashboard", f"{len(acked)} / {len(dacked)}"),
            ("decisions stored: cli / dashboard", f"{origins.get('cli', 0)} / {origins.get('dashboard', 0)}"),
            ("stored without an answer (killed mid-write)", f"{sum(origins.values()) - len(acked) - len(dacked)}"),
            ("entries per pair min / max", f"{min(per_pair.values(), default=0)} / {max(per_pair.values())}"),
            ("SIGKILLs of writers / PostgreSQL restarts", f"{kills} / {restarts}"),
            ("stale refusals cli / dashboard", f"{counts['stale']} / {loads['stale']}"),
            ("retries on 'database away'", f"{counts['away']}"),
            ("dashboard page loads ok / banner / failed / exception",
             f"{loads['ok']} / {loads['banner']} / {loads['failed']} / {loads['exception']}"),
            ("chain", verdict),
            ("violations", str(len(problems))),
        ]  # fmt: skip
        width = max(len(k) for k, _ in rows)
        print(f"\n{'measure':<{width}} | value\n{'-' * width}-|{'-' * 40}")
        for k, v in rows:
            print(f"{k:<{width}} | {v}")
        for p in problems[:20]:
            print("VIOLATION:", p)
        return 1 if problems else 0
    finally:
        pg.remove()
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=40)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--interval", type=float, default=8.0, help="mean seconds between two kills")
    ap.add_argument("--down", type=float, default=3.0, help="seconds the PostgreSQL server stays stopped")
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--no-browser", dest="browser_on", action="store_false", help="no Playwright page loads")
    ap.add_argument("--keep", action="store_true", help="keep the work folder (logs, CKF)")
    # child modes
    ap.add_argument("--writer", help=argparse.SUPPRESS)
    ap.add_argument("--browser", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--ckf", help=argparse.SUPPRESS)
    ap.add_argument("--pairs", help=argparse.SUPPRESS)
    ap.add_argument("--log", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.writer:
        return writer(args)
    if args.browser:
        return browser_loop(args)
    args.browser = args.browser_on
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

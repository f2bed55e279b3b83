"""The hand-made hostile-input corpus and the --set sweep (issues 12 and 32; docs/decisions/hardening.md,
"The hostile-input corpus").

:func:`manifest` reads ``tests/data/hostile/hostile.toml``; :func:`materialise` makes the inputs git
cannot hold; :func:`commands` names the command lines that read each kind of input (a CKF or a
scenario: ``validate`` and ``run``; a suite: ``check --suite``; a config TOML: ``run`` and ``check
--config``; a baseline: ``check --baseline``; a triage database: ``triage decisions --db``; an SDK
source-type mapping: ``run --sdk-map``). The ``stored_corpus`` family of
:mod:`tests.support.hostile_gen_misc` runs them through :mod:`tests.support.hostile_run`. Every numeric
configuration key goes through ``run --set`` at its range boundaries and one step beyond
(:func:`set_cases`, run in one bounded child by :func:`sweep_set`).
"""

from __future__ import annotations

import io
import json
import math
import os
import resource
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.paths import REPO_ROOT, TEST_DATA
from tests.support.triage_cli import NULL_FACT_ROW, forge_db

HOSTILE = TEST_DATA / "hostile"
SCENARIO_OK = HOSTILE / "scenario_ok.json"
CKF_OK = HOSTILE / "dir_ok"
SWEEP_KB = HOSTILE / "sweep_kb.jsonl"
#: address space of each child (the pipeline over these small inputs peaks far below)
MEM_LIMIT = 1536 * 1024 * 1024
#: the kinds of input of the manifest, each a table of entries
KINDS = ("ckf", "scenario", "suite", "config", "baseline", "triage_db", "sdk_map")
#: the name a made special file (fifo, symlink_loop, dangling_link) gets, by kind
_MADE_NAME = {
    "ckf": "kb.jsonl",
    "scenario": "scenario.json",
    "suite": "suite.json",
    "config": "config.toml",
    "baseline": "baseline.json",
    "triage_db": "triage.sqlite",
    "sdk_map": "map.toml",
}


@dataclass(frozen=True)
class Entry:
    """One input of the manifest."""

    kind: str  # one of KINDS
    what: str
    outcome: str  # "refused", "warned" or "loaded"
    file: str | None = None
    make: str | None = None
    line: int | None = None
    field: str | None = None
    max_bytes: int | None = None
    says: str | None = None  # a text every refusing command's stderr holds (errors without line and field)

    @property
    def name(self) -> str:
        return self.file or f"<{self.make}>"

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}" + (f"@max{self.max_bytes}" if self.max_bytes else "")


def manifest() -> list[Entry]:
    data = tomllib.loads((HOSTILE / "hostile.toml").read_text(encoding="utf-8"))
    return [Entry(kind=kind, **row) for kind in KINDS for row in data.get(kind, [])]


def _limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


def materialise(entry: Entry, tmp: Path) -> Path:
    """The path to hand to the CLI: the stored file, or the special file ``make`` names, made in ``tmp``."""
    if entry.file is not None:
        return HOSTILE / entry.file
    make = entry.make
    if make == "fifo":
        path = tmp / _MADE_NAME[entry.kind]
        os.mkfifo(path)
    elif make == "symlink_loop":
        path = tmp / _MADE_NAME[entry.kind]
        path.symlink_to(path)
    elif make == "symlink_loop_no_ext":
        path = tmp / "kb"
        path.symlink_to(path)
    elif make == "dir_self_link":
        path = tmp / "kbdir"
        path.mkdir()
        (path / "facts.jsonl").symlink_to(path / "facts.jsonl")
    elif make == "dangling_link":
        path = tmp / _MADE_NAME[entry.kind]
        path.symlink_to(tmp / "gone.jsonl")
    elif make == "dir_facts_is_folder":
        path = tmp / "kbdir"
        (path / "facts.jsonl").mkdir(parents=True)
    elif make is not None and make.startswith("suite_dir_"):
        path = _suite_dir(make, tmp)
    elif make == "triage_null_fact_id":
        path = Path(forge_db(tmp / "forged.sqlite", [NULL_FACT_ROW]))
    elif make == "scenario_150k_listed_twice":
        path = tmp / "twice.json"
        _write_scenario(path, expect={"must_include": ["f0"] * 150_000})
    elif make == "suite_200k_unknown_ids":
        path = tmp / "unknown.json"
        _write_scenario(path, expect={"must_include": [f"nope-{i:06d}" for i in range(200_000)]})
    else:
        raise ValueError(f"unknown make {make!r}")
    return path


def _write_scenario(path: Path, **changes: Any) -> None:
    """``scenario_ok.json`` with ``changes`` (indent 1, as _build.py writes: keys in their order)."""
    doc = {**json.loads(SCENARIO_OK.read_text(encoding="utf-8")), **changes}
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")


def _suite_dir(make: str, tmp: Path) -> Path:
    """A suite folder holding ``scenario_ok.json`` and one entry of the kind ``make`` names."""
    d = tmp / "suite"
    d.mkdir()
    (d / "ok.json").write_bytes(SCENARIO_OK.read_bytes())
    if make == "suite_dir_fifo":
        os.mkfifo(d / "x.json")
    elif make == "suite_dir_symlink_loop":
        (d / "l.json").symlink_to(d / "l.json")
    elif make == "suite_dir_dangling_link":
        (d / "d.json").symlink_to(d / "nowhere.json")
    elif make == "suite_dir_linked_subfolder":
        (tmp / "shared").mkdir()
        _write_scenario(tmp / "shared" / "other.json", name="hostile-other")
        (d / "linked").symlink_to(tmp / "shared", target_is_directory=True)
    elif make == "suite_dir_link_to_ancestor":
        (d / "sub").mkdir()
        (d / "sub" / "up").symlink_to(d, target_is_directory=True)
    else:
        raise ValueError(f"unknown make {make!r}")
    return d


def commands(entry: Entry, path: Path) -> dict[str, list[str]]:
    """The command lines that read one input, by name (``validate`` and ``run`` for a CKF or a scenario)."""
    if entry.kind == "suite":
        return {"check": ["check", "--ckf", str(CKF_OK), "--suite", str(path), "--json"]}
    if entry.kind == "config":
        return {
            "run": ["run", "--ckf", str(CKF_OK), "--scenario", str(SCENARIO_OK), "--config", str(path), "--json"],
            "check": ["check", "--ckf", str(CKF_OK), "--suite", str(SCENARIO_OK), "--config", str(path), "--json"],
        }
    if entry.kind == "baseline":
        return {
            "check": ["check", "--ckf", str(CKF_OK), "--suite", str(SCENARIO_OK), "--baseline", str(path), "--json"]
        }
    if entry.kind == "triage_db":
        return {"decisions": ["triage", "decisions", "--db", str(path)]}
    if entry.kind == "sdk_map":
        return {"run": ["run", "--ckf", str(CKF_OK), "--scenario", str(SCENARIO_OK), "--sdk-map", str(path), "--json"]}
    if entry.kind == "ckf":
        validate = ["validate", "--json", str(path)]
        run = ["run", "--ckf", str(path), "--scenario", str(SCENARIO_OK), "--json"]
        if entry.max_bytes is not None:
            validate += ["--max-bytes", str(entry.max_bytes)]
            run += ["--set", f"ckf_max_bytes={entry.max_bytes}"]
    else:
        validate = ["validate", "--json", "--scenario", str(path)]
        run = ["run", "--ckf", str(CKF_OK), "--scenario", str(path), "--json"]
    return {"validate": validate, "run": run}


# ---- --set at the range boundaries ------------------------------------------------------------
def _toml(v: float | int) -> str:
    return str(v) if isinstance(v, int) else repr(float(v))


def set_cases() -> list[tuple[str, str, str]]:
    """``(key, value as TOML, expected)`` for every numeric key at each end of its range (expected
    "accepted") and one step beyond (expected "refused"): 1 for whole numbers; for real numbers 1 and
    the next representable float. Also each table cell's type of bound, each choice and flag."""
    from crp_core.config import INT_KEYS, KNOWN_CONFLICT_ACTIONS, RANGES, SOURCE_TYPES

    out: list[tuple[str, str, str]] = []
    for key, (lo, hi) in RANGES.items():
        if key in INT_KEYS:
            vals = [(int(lo) - 1, "refused"), (int(lo), "accepted"), (int(hi), "accepted"), (int(hi) + 1, "refused")]
        else:
            vals = [
                (lo - 1, "refused"),
                (math.nextafter(lo, -math.inf), "refused"),
                (lo, "accepted"),
                (hi, "accepted"),
                (math.nextafter(hi, math.inf), "refused"),
                (hi + 1, "refused"),
            ]
        for v, want in vals:
            if key == "fresh_fraction" and v == hi:
                want = "refused"  # also must be below 1.0: a fresh window as long as the TTL
            out.append((key, _toml(v), want))
        out.append((key, "nan", "refused"))
        out.append((key, "inf" if key not in INT_KEYS else "1e400", "refused"))
        out.append((key, "1" + "0" * 400, "refused"))  # float(10**400) raised OverflowError: a traceback
    st = SOURCE_TYPES[6]
    for v, want in (
        ("0", "refused"),
        ("-1", "refused"),
        ("1e-9", "accepted"),
        ("1e308", "accepted"),
        ("inf", "refused"),
        ('"none"', "accepted"),
        ("1" + "0" * 400, "refused"),
        ("1" + "0" * 5000, "refused"),
    ):
        out.append((f"ttl_days.{st}", v, want))
    for table in ("source_authority", "importance"):
        for v, want in (
            ("-1", "refused"),
            ("0", "accepted"),
            ("1", "accepted"),
            ("1.0000000000000002", "refused"),
            ("2", "refused"),
            ("nan", "refused"),
            ("1" + "0" * 400, "refused"),
        ):
            out.append((f"{table}.{st}", v, want))
    for action in KNOWN_CONFLICT_ACTIONS:
        out.append(("known_conflict_action", f'"{action}"', "accepted"))
    out.append(("known_conflict_action", '"explode"', "refused"))
    for v, want in (("true", "accepted"), ("false", "accepted"), ("2", "refused")):
        out.append(("graph_retrieval", v, want))
        out.append(("backfill", v, want))
    return out


class _Alarm(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Alarm()


def sweep_child(per_case_s: float) -> Iterator[dict[str, Any]]:
    """In the bounded child: every case through ``crp_core.cli.main`` in turn (one process: the imports
    are paid once), each under an alarm; a crash, hang or MemoryError is a row, not the end."""
    from crp_core.cli import main

    signal.signal(signal.SIGALRM, _on_alarm)
    base = ["run", "--ckf", str(SWEEP_KB), "--scenario", str(SCENARIO_OK), "--json"]
    for key, value, want in set_cases():
        out, err = io.StringIO(), io.StringIO()
        t = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, per_case_s)
        try:
            with redirect_stdout(out), redirect_stderr(err):
                rc: int | str = main([*base, "--set", f"{key}={value}"])
        except _Alarm:
            rc = "timeout"
        except SystemExit as exc:
            rc = f"exit {exc.code}"
        except BaseException as exc:  # noqa: BLE001  the finding: anything main() lets escape
            rc = f"crash {type(exc).__name__}: {str(exc)[:200]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        yield {
            "key": key,
            "value": value,
            "expected": want,
            "rc": rc,
            "seconds": round(time.perf_counter() - t, 3),
            "stderr": err.getvalue().strip().splitlines()[:3],
        }


def sweep_set(per_case_s: float = 60.0, timeout: float = 900.0) -> list[dict[str, Any]]:
    """Run :func:`set_cases` in one child process with the memory limit; its rows, each with ``ok``."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    code = (
        "import json\nfrom tests.support.hostile import sweep_child\n"
        f"for r in sweep_child({per_case_s!r}): print(json.dumps(r), flush=True)"
    )
    got = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO_ROOT,
        preexec_fn=_limit_child,
    )
    rows = [json.loads(x) for x in got.stdout.splitlines() if x.startswith("{")]
    for r in rows:
        if r["expected"] == "accepted":
            r["ok"] = r["rc"] == 0 or (
                r["rc"] == 2 and r["key"] == "ckf_max_bytes" and "over the limit" in " ".join(r["stderr"])
            )
        else:
            r["ok"] = r["rc"] == 2 and f"'{r['key']}'" in " ".join(r["stderr"])
    if got.returncode != 0 or len(rows) != len(set_cases()):
        rows.append(
            {
                "key": "(child)",
                "value": "",
                "expected": "all cases",
                "rc": got.returncode,
                "ok": False,
                "seconds": 0,
                "stderr": got.stderr.strip().splitlines()[-3:],
            }
        )
    return rows

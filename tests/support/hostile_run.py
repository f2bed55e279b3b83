"""Runs the generated hostile families (:mod:`tests.support.hostile_gen`; docs/decisions/hardening.md,
"Generated families").

A family's inputs are written into a temporary folder and run in ONE child process with the
address-space limit of :data:`tests.support.hostile.MEM_LIMIT`: the child calls ``crp_core.cli.main``
in-process for each command line of each input (the imports are paid once), each under an alarm,
capturing the exit status, stdout and stderr; a case that is not a command line (a dashboard link, a
text through the escaping functions) is a call. The child judges each case against its expected
outcome (:func:`judge`) and prints one JSON row per case; an exception that escapes ``main`` or a
``Traceback`` in its output is a failure, as is an alarm (a hang) or a child that dies (memory).
"""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from tests.support.hostile import MEM_LIMIT
from tests.support.hostile_gen import Case, families, family
from tests.support.paths import REPO_ROOT

#: seconds one command of one case may take (every input here is small: minutes would be a hang)
PER_COMMAND_S = 30.0
#: the exit status of a refusal by command (validate 1, session 1 for a broken chain, the others 2)
REFUSED_RC = {"validate": 1, "session": 1}


class _Alarm(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Alarm()


def call_main(argv: list[str], seconds: float) -> tuple[int | str, str, str, float]:
    """``crp_core.cli.main(argv)`` in this process under an alarm: (exit status or what went wrong,
    stdout, stderr, seconds)."""
    from crp_core.cli import main

    out, err = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc: int | str = main(argv)
    except _Alarm:
        rc = "timeout"
    except SystemExit as exc:  # argparse refusing a command line: a usage message, exit 2
        rc = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # noqa: BLE001  anything main() lets escape is a traceback for a user
        rc = f"crash {type(exc).__name__}: {str(exc)[:300]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return rc, out.getvalue(), err.getvalue(), time.perf_counter() - t


def _where(line: int | None, field: str | None) -> str:
    """How errors.Problem prints a place (a case without a line checks the field alone)."""
    if line is None:
        return f"field {field!r}"
    return f"{'file' if line == 0 else f'line {line}'}, field {field!r}"


def _judge_validate(case: Case, out: str) -> list[str]:
    try:
        report = json.loads(out)[case.validate_kind]
    except (ValueError, KeyError) as exc:
        return [f"validate: no JSON report ({exc!r}): {out[:200]}"]
    if case.outcome == "refused":
        # a scenario's expect ids checked against --ckf are listed apart, as labels.unknown
        problems = report.get("problems") or report.get("labels", {}).get("unknown", [])
        if report.get("ok", True) or not problems:
            return ["validate: not refused"]
        first = problems[0]
        got = (first["line"] if case.line is not None else None, first["field"])
        if case.field is not None and got != (case.line, case.field):
            return [f"validate: first problem at {got}, expected {(case.line, case.field)}: {first['message']}"]
        return []
    if not report["ok"]:
        return [f"validate: refused: {report['problems'][:2]}"]
    if case.outcome == "warned" and case.field is not None:  # a warning, or a fact skipped --lenient
        seen = [(w["line"], w["field"]) for w in report.get("warnings", []) + report.get("skipped", [])]
        if (case.line, case.field) not in seen:
            return [f"validate: no warning or skipped fact at {(case.line, case.field)} (at {seen})"]
    return []


def _judge_session(case: Case, out: str) -> list[str]:
    try:
        report = json.loads(out)
    except ValueError:
        return [f"session: no JSON report: {out[:200]}"]
    chain = report["chain"]
    lines = [p["line"] for p in report.get("problems", [])]
    lines += [b["line"] for b in chain.get("breaks", [])] + [g["line"] for g in chain.get("gaps", [])]
    if case.outcome == "refused" and case.line is not None and case.line not in lines:
        return [f"session: no break, gap or problem at line {case.line} (at {sorted(set(lines))[:10]})"]
    return []


def judge(case: Case, argv: list[str], rc: int | str, out: str, err: str) -> list[str]:
    """What is wrong with one command's result for ``case`` (empty: the expected outcome)."""
    cmd = argv[0]
    if isinstance(rc, str):
        return [f"{cmd}: {rc}"]
    if "Traceback (most recent call last)" in err or "Traceback (most recent call last)" in out:
        return [f"{cmd}: a traceback: {err[-300:]}"]
    refused_rc = case.refused_rc if case.refused_rc is not None else REFUSED_RC.get(cmd, 2)
    want = (refused_rc,) if case.outcome == "refused" else case.loaded_rcs
    if rc not in want:
        return [f"{cmd}: exit status {rc}, expected {' or '.join(map(str, want))}: {err.strip()[-300:]}"]
    if cmd == "validate" and "--json" in argv and rc in (0, 1):
        return _judge_validate(case, out)
    if cmd == "session" and "--json" in argv and rc in (0, 1):
        return _judge_session(case, out)
    if case.outcome != "refused":
        return []
    needles = [case.says] if case.says else []
    if case.field is not None:
        needles.append(_where(case.line, case.field))
    return [f"{cmd}: stderr does not name {n!r}: {err.strip()[-300:]}" for n in needles if n not in err]


def run_case(case: Case, seconds: float) -> dict[str, Any]:
    """One case in this process: its row (``failures`` empty when the outcome is the expected one)."""
    failures: list[str] = []
    row: dict[str, Any] = {"case": case.name, "expected": case.outcome, "rcs": [], "commands": []}
    t = time.perf_counter()
    for argv in case.argvs:
        rc, out, err, _s = call_main(list(argv), seconds)
        row["rcs"].append(rc)
        row["commands"].append(argv[0])
        failures += judge(case, list(argv), rc, out, err)
    if case.call is not None:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            failures += case.call()
        except _Alarm:
            failures.append("call: no answer within the alarm")
        except BaseException as exc:  # noqa: BLE001  the finding: anything the call lets escape
            failures.append(f"call: crash {type(exc).__name__}: {str(exc)[:300]}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    row["seconds"] = round(time.perf_counter() - t, 3)
    row["failures"] = failures
    return row


def child(name: str, tmp: str, seconds: float = PER_COMMAND_S) -> None:
    """In the bounded child: build family ``name``'s inputs in ``tmp`` and print one JSON row per case."""
    signal.signal(signal.SIGALRM, _on_alarm)
    fam = family(name)
    cases = fam.build(Path(tmp))
    print(json.dumps({"count": len(cases)}), flush=True)
    for case in cases:
        print(json.dumps(run_case(case, seconds)), flush=True)


def _limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


def run_family(name: str, tmp: Path, timeout: float = 600.0) -> list[dict[str, Any]]:
    """Family ``name`` in one bounded child process: its rows; a child that dies or does not finish
    adds a failed row saying so."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "STREAMLIT_GLOBAL_SHOW_WARNING_ON_DIRECT_EXECUTION": "false",
        # every thread's malloc arena reserves address space: under RLIMIT_AS, the reader threads of
        # hundreds of in-process runs (Arrow's pools) would exhaust it without using the memory
        "MALLOC_ARENA_MAX": "2",
        # the family builders write Parquet with pyarrow before crp_core's reader sets this: its default
        # allocator (mimalloc) reserves about 1 GiB of address space at first use (crp_core/io/ckf/parquet.py)
        "ARROW_DEFAULT_MEMORY_POOL": "system",
    }
    code = f"from tests.support.hostile_run import child\nchild({name!r}, {str(tmp)!r})"
    try:
        got = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=REPO_ROOT,
            preexec_fn=_limit_child,
        )
        stdout, stderr, rc = got.stdout, got.stderr, got.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr, rc = f"the child did not finish within {timeout:g} s", "timeout"
    parsed = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    count = parsed[0]["count"] if parsed and "count" in parsed[0] else None
    rows = [r for r in parsed if "case" in r]
    if rc != 0 or count is None or len(rows) != count:
        rows.append(
            {
                "case": f"{name}: the child",
                "expected": "every case",
                "rcs": [rc],
                "seconds": 0,
                "failures": [f"child exit {rc}, {len(rows)} of {count} cases: {stderr.strip()[-600:]}"],
            }
        )
    return rows


__all__ = ["families", "child", "judge", "run_family"]

"""No result depends on the CPU: the reports that go through BLAS (the golden run / fan-out reports and the
CLI's first start) agree with the recorded ones under more than one OpenBLAS kernel. Each kernel is forced
in a child pytest (``OPENBLAS_CORETYPE``); a kernel this CPU cannot execute is skipped, never faked."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
KERNELS = ("Sandybridge", "Haswell")
CHECKS = ("test_golden_reports.py", "test_startup.py", "test_report_compare.py")

pytestmark = pytest.mark.model


def _env(coretype: str) -> dict[str, str]:
    return {**os.environ, "OPENBLAS_CORETYPE": coretype, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def _kernel_in_use(coretype: str) -> str | None:
    """The OpenBLAS kernel numpy runs with ``coretype`` forced, after a float32 product ran on it
    (None when the process could not run it, e.g. an instruction set this CPU lacks)."""
    probe = (
        "import numpy as np, threadpoolctl\n"
        "a = np.ones((64, 64), dtype=np.float32)\n"
        "assert float((a @ a).sum()) == 64.0 ** 3\n"
        "print([i.get('architecture') for i in threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas'])"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=_env(coretype), timeout=120)
    found = re.findall(r"'(\w+)'", p.stdout) if p.returncode == 0 else []
    return found[0] if found else None


def _check_files() -> list[str]:
    files = [str(p) for name in CHECKS for p in sorted((ROOT / "tests").rglob(name))]
    assert len(files) == len(CHECKS), files
    return files


@pytest.mark.parametrize("coretype", KERNELS)
def test_reports_agree_with_the_recorded_ones_under_the_kernel(coretype, tmp_path):
    if _kernel_in_use(coretype) != coretype:
        pytest.skip(f"OpenBLAS cannot run its {coretype} kernels on this CPU")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *_check_files()]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_env(coretype), timeout=1200)
    tail = p.stdout[-3000:]
    assert p.returncode == 0, tail
    passed = re.search(r"(\d+) passed", tail)
    assert passed and int(passed.group(1)) >= 20, tail
    assert " skipped" not in tail.splitlines()[-1], tail

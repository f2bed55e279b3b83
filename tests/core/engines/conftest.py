"""Shared data of the engine tests: the 10k synthetic CKF (bench/make_synthetic_ckf.py, deterministic),
generated once per session unless bench/data/synth10k is there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT


@pytest.fixture(scope="session")
def synth10k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    have = REPO_ROOT / "bench" / "data" / "synth10k"
    if (have / "facts.jsonl").is_file() and (have / "embeddings.npy").is_file():
        return have
    out = tmp_path_factory.mktemp("synth") / "synth10k"
    subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "bench" / "make_synthetic_ckf.py"),
            "--facts",
            "10000",
            "--scenarios",
            "0",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out

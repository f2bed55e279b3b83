"""Where things are: the repository root (every test finds files from here, whatever its folder depth),
the dashboard's entry script and the test data folder."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
APP = str(REPO_ROOT / "app.py")
TEST_DATA = REPO_ROOT / "tests" / "data"

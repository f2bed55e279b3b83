"""A repository script loaded as a module (tools/ and sample_ckf/ are no packages), for the tests that read it."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

from tests.support.paths import REPO_ROOT


@cache
def script_module(relative: str, name: str) -> ModuleType:
    """The script at ``relative`` (from the repository root), loaded once under ``name``."""
    spec = importlib.util.spec_from_file_location(name, Path(REPO_ROOT) / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trainer() -> ModuleType:
    """tools/train_detector.py: the detector's training recipe and the corpus's batch order."""
    return script_module("tools/train_detector.py", "tools_train_detector")

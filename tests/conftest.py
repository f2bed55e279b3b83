"""Root test configuration: offline model hubs, and the fixtures every folder may use.

Fixtures: ``sample_dir`` (a fresh synthetic samples folder per test), ``synthetic_sample_dir``
(session-wide, read-only by convention), ``ui_env`` (the dashboard pointed at ``sample_dir`` with a
throw-away embedding cache and triage store, offline). The samples themselves are written by
:mod:`tests.support.samples`; helpers are imported from the modules of ``tests/support/``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.samples import write_sample_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# check / tune and the dashboard's suite runs keep nothing in the experiment history unless a test asks
# for it (tests/core/history): a ./.crp_triage.sqlite must never collect the runs of the test suite
os.environ.setdefault("CRP_INSPECT_HISTORY", "off")
# the pipeline commands apply the operator decisions of $CRP_INSPECT_TRIAGE_DB, else of ./.crp_triage.sqlite:
# neither a team store named in the developer's shell nor a store the dashboard left in the working directory
# may feed its decisions into the tests. The variable names a file in a folder that does not exist, so no
# store is there and none can be created by accident; a test that wants a store sets or clears it.
os.environ["CRP_INSPECT_TRIAGE_DB"] = os.path.join(
    tempfile.gettempdir(), f"crp-tests-{os.getpid()}-no-such-folder", "no-store.sqlite"
)

# no result may depend on the machine: hypothesis examples have no time limit (a loaded CI machine runs one
# example several times slower); speed is measured by the scripts under bench/, never by a test
settings.register_profile("crp", deadline=None)
settings.load_profile("crp")


@pytest.fixture
def sample_dir(tmp_path: Path) -> Path:
    """A fresh synthetic samples folder for this test."""
    return write_sample_dir(tmp_path / "samples")


@pytest.fixture(scope="session")
def synthetic_sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Session-wide copy of the synthetic samples folder (read-only by convention)."""
    return write_sample_dir(tmp_path_factory.mktemp("synthetic") / "samples")


@pytest.fixture
def ui_env(sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the dashboard at ``sample_dir`` with a throw-away cache and triage store; returns the folder."""
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(sample_dir))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    # operator decisions go to a throw-away store: a ./.crp_triage.sqlite left in the repo must
    # never feed its decisions into the page tests
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return sample_dir

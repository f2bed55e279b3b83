"""The README's "Use it as a library" example runs as written, through the public API only."""

from __future__ import annotations

import re

import pytest

import crp_core
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def _example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use it as a library", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the library section holds one python example"
    return blocks[0]


def test_example_imports_only_the_public_api():
    names = re.findall(r"from crp_core import ([^\n]+)", _example())
    assert names, "the example imports from crp_core"
    for name in (n.strip() for line in names for n in line.split(",")):
        assert name in crp_core.__all__, name


def test_public_api_names_resolve():
    missing = [n for n in crp_core.__all__ if not hasattr(crp_core, n)]
    assert not missing
    for needed in (
        "load_ckf",
        "load_scenario",
        "prepare_corpus",
        "run_pipeline",
        "scan_ckf",
        "CRPConfig",
        "DecisionStore",
        "PipelineResult",
        "Resolution",
        "Envelope",
        "ConflictPair",
    ):
        assert needed in crp_core.__all__


@pytest.mark.model
def test_readme_example_runs(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(_example(), "README.md", "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out
    assert "conflicting pairs" in out and "tied" in out

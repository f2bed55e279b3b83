"""The package tree is the one docs/ARCHITECTURE.md draws: every module listed, none over 600 lines,
at most 12 modules directly in crp_core/, and no Streamlit anywhere in the library."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "crp_core"


def _modules() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for p in CORE.rglob("*.py") if "__pycache__" not in p.parts}


def test_module_table_matches_the_package():
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(crp_core/[\w/]+\.py)` \|", doc, flags=re.M))
    actual = _modules()
    assert listed - actual == set(), "listed in docs/ARCHITECTURE.md but not in the package"
    assert actual - listed == set(), "in the package but missing from docs/ARCHITECTURE.md"


def test_at_most_twelve_modules_at_the_top():
    top = [p for p in CORE.glob("*.py")]
    assert len(top) <= 12, sorted(p.name for p in top)


def test_no_module_over_600_lines():
    for rel in sorted(_modules()):
        n = len((ROOT / rel).read_text(encoding="utf-8").splitlines())
        assert n <= 600, f"{rel}: {n} lines"


def test_the_library_never_imports_streamlit():
    for rel in sorted(_modules()):
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n == "streamlit" or n.startswith("streamlit.") for n in names), rel

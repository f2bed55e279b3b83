"""The test tree's own rules: test modules never import one another (what two of them share lives in
``tests/support/`` or a ``conftest.py``), and every folder of tests is a package, so two test files of the
same name in different folders are two modules."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO_ROOT

TESTS = REPO_ROOT / "tests"


def _test_folders() -> list[Path]:
    return sorted(
        p
        for p in [TESTS, *TESTS.rglob("*")]
        if p.is_dir() and p.name != "__pycache__" and "data" not in p.relative_to(TESTS).parts
    )


def _imported_modules(path: Path) -> list[str]:
    """Every module a file imports (``import a.b`` and ``from a.b import c`` give ``a.b``; a relative
    import gives its module name after the dots)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += [alias.name for alias in node.names]
    return found


def test_no_test_module_imports_another_test_module():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if "data" in path.relative_to(TESTS).parts:
            continue
        for module in _imported_modules(path):
            if any(part.startswith("test_") for part in module.split(".")):
                offenders.append(f"{path.relative_to(REPO_ROOT)} imports {module}")
    assert not offenders, "move what is shared into tests/support/ or a conftest.py:\n" + "\n".join(offenders)


def test_every_test_folder_is_a_package():
    missing = [str(d.relative_to(REPO_ROOT)) for d in _test_folders() if not (d / "__init__.py").is_file()]
    assert not missing, missing

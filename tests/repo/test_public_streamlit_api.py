"""The project uses Streamlit's public API only: no ``streamlit.runtime`` / ``streamlit.web`` internals,
no private (``_``-prefixed) module or attribute of a Streamlit object, in the app, the libraries or
the tests. Internals change between Streamlit releases without notice (the reason the page shell
is built on ``st.navigation`` / ``st.Page`` alone)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

#: what is checked: the entry point, the dashboard and core libraries, the pages and the tests
SCOPE = ("app.py", "crp_ui", "pages", "tests", "crp_core", "bench")
THIS_FILE = Path(__file__).resolve()

#: a reference, in code, a string or a comment, to a non-public Streamlit package or module
INTERNAL_REF = re.compile(
    r"\bstreamlit\s*\.\s*(?:runtime|web)\b"  # streamlit.runtime..., streamlit.web.server...
    r"|\bfrom\s+streamlit\s+import\s+[^\n]*\b(?:runtime|web)\b"  # from streamlit import runtime
    r"|\bstreamlit(?:\.\w+)*\._\w+"  # a private module or attribute: streamlit.x._y
)
#: a private attribute of an AppTest object or of an element it returned (named ``at``, ``at2``, ...)
APPTEST_PRIVATE = re.compile(r"\bat\d*\s*\.\s*_\w+")


def python_files() -> list[Path]:
    """Every ``*.py`` file in :data:`SCOPE` except this one."""
    out: list[Path] = []
    for name in SCOPE:
        p = REPO_ROOT / name
        files = [p] if p.is_file() else sorted(p.rglob("*.py"))
        out += [f for f in files if f.resolve() != THIS_FILE and "__pycache__" not in f.parts]
    return out


def streamlit_aliases(tree: ast.AST) -> set[str]:
    """Local names bound to Streamlit modules or objects by the file's imports."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "streamlit"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "streamlit":
            names |= {a.asname or a.name for a in node.names}
    return names


def private_uses(source: str) -> list[str]:
    """Every non-public Streamlit use in ``source``, as ``line N: text``."""
    hits = [m.group(0) for m in INTERNAL_REF.finditer(source)] + [m.group(0) for m in APPTEST_PRIVATE.finditer(source)]
    tree = ast.parse(source)
    aliases = streamlit_aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "streamlit":
            hits += [
                f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")
            ]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in aliases:
                hits.append(f"line {node.lineno}: {ast.unparse(node)}")
    return hits


@pytest.mark.parametrize(
    "bad",
    [
        "from streamlit.runtime.pages_manager import PagesManager",
        "import streamlit.runtime.scriptrunner as sr",
        "from streamlit.web.server import Server",
        "from streamlit import runtime",
        "importlib.import_module('streamlit.runtime.pages_manager')",
        "import streamlit as st\nst._main.text('x')",
        "import streamlit as st\nst.session_state._state",
        "from streamlit.testing.v1 import AppTest\nAppTest._tree",
        "at = None\nat._tree",
        "from streamlit.elements import _private",
    ],
)
def test_the_check_catches_private_use(bad):
    assert private_uses(bad), bad


@pytest.mark.parametrize(
    "fine",
    [
        "import streamlit as st\nst.navigation([st.Page('pages/a.py')]).run()",
        "from streamlit.testing.v1 import AppTest\nAppTest.from_file('app.py').switch_page('pages/a.py')",
        "import streamlit as st\nst.session_state.__class__",
        "import streamlit as st\nx._private = st.sidebar",
    ],
)
def test_the_check_lets_public_use_pass(fine):
    assert private_uses(fine) == []


def test_no_file_uses_streamlit_internals():
    files = python_files()
    assert len(files) > 50 and (REPO_ROOT / "app.py") in files
    found = {str(f.relative_to(REPO_ROOT)): hits for f in files if (hits := private_uses(f.read_text("utf-8")))}
    assert found == {}, f"non-public Streamlit API in use: {found}"

"""The package tree is the one docs/architecture.md draws: every module listed, none over 600 lines (400 in
the dashboard), at most 12 modules directly in crp_core/, no Streamlit anywhere in the library, no import
cycle, no private name crossing a module, and the dashboard on crp_core's public names only."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
CORE = ROOT / "crp_core"


def _modules() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for p in CORE.rglob("*.py") if "__pycache__" not in p.parts}


def test_module_table_matches_the_package():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(crp_core/[\w/]+\.py)` \|", doc, flags=re.M))
    actual = _modules()
    assert listed - actual == set(), "listed in docs/architecture.md but not in the package"
    assert actual - listed == set(), "in the package but missing from docs/architecture.md"


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


def _imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of every ``from module import name`` in one file, relative imports resolved."""
    rel = path.relative_to(ROOT).with_suffix("")
    package = rel.parts[:-1]  # a module's package; for an __init__, the package itself
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            out.extend((module, a.name, node.lineno) for a in node.names)
    return out


def _tree_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for top in ("crp_core", "crp_ui", "pages"):
        files.extend(p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)
    return sorted(files)


def test_no_private_name_crosses_a_module():
    crossings = [
        f"{p.relative_to(ROOT)}:{line} imports {name} from {module}"
        for p in _tree_files()
        for module, name, line in _imports(p)
        if name.startswith("_")
        and not name.startswith("__")
        and module.split(".")[0] in {"crp_core", "crp_ui", "pages"}
    ]
    assert crossings == []


def test_the_dashboard_uses_only_the_public_api_of_crp_core():
    import crp_core

    public = set(crp_core.__all__)
    outside = [
        f"{p.relative_to(ROOT)}:{line} {module}.{name}"
        for p in _tree_files()
        if p.parts[len(ROOT.parts)] in {"crp_ui", "pages", "app.py"}
        for module, name, line in _imports(p)
        if module.startswith("crp_core") and (module != "crp_core" or name not in public)
    ]
    assert outside == []


def _import_cycles() -> list[list[str]]:
    """Strongly connected groups of two or more modules in the import graph of the whole tree (grimp's
    graph, function-level imports included; scipy's strong components)."""
    import grimp
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = grimp.build_graph("crp_core", "crp_ui", "pages")
    modules = sorted(graph.modules)
    at = {m: i for i, m in enumerate(modules)}
    edges = [(at[m], at[t]) for m in modules for t in graph.find_modules_directly_imported_by(m)]
    rows, cols = (np.array(x, dtype=np.int64) for x in zip(*edges)) if edges else (np.zeros(0), np.zeros(0))
    adjacency = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(modules), len(modules)))
    _, labels = connected_components(adjacency, directed=True, connection="strong")
    groups: dict[int, list[str]] = {}
    for module, label in zip(modules, labels):
        groups.setdefault(int(label), []).append(module)
    return sorted(g for g in groups.values() if len(g) > 1)


def test_no_import_cycles():
    assert _import_cycles() == []


def test_dashboard_modules_stay_small():
    """Every module of crp_ui and pages at most 400 lines (after ruff format)."""
    files = [p for top in ("crp_ui", "pages") for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts]
    assert len(files) > 20
    too_long = {
        str(p.relative_to(ROOT)): n for p in files if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert too_long == {}


def test_every_table_of_the_dashboard_is_drawn_by_render_dataframe():
    """``st.dataframe`` is called in crp_ui/render.py only: every table's text cells go through its inert
    screen and a missing value shows as ``render.MISSING_CELL``, never "None"."""
    files = [p for top in ("crp_ui", "pages") for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts]
    files.append(ROOT / "app.py")
    direct = sorted(
        str(p.relative_to(ROOT))
        for p in files
        if p.name != "render.py" and re.search(r"\bst\.dataframe\(", p.read_text(encoding="utf-8"))
    )
    assert direct == []
    assert re.search(r"\bst\.dataframe\(", (ROOT / "crp_ui" / "render.py").read_text(encoding="utf-8"))


def test_what_users_read_cites_no_document_outside_the_repository():
    """The code, the dashboard and the docs name the public CRP specifications (SPEC-0xx §n) and this
    repository's docs; never the project's private reading notes (SPEC_NOTES) or a path outside the repository."""
    outside = re.compile(r"SPEC_NOTES|\.\./shared/|/work/shared")
    hits = []
    for folder in ("crp_core", "crp_ui", "pages", "docs", "bench", "tools"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md", ".toml") and path.is_file():
                text = path.read_text(encoding="utf-8")
                hits += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in outside.finditer(text)]
    for name in ("app.py", "README.md"):
        hits += [f"{name}: {m.group(0)}" for m in outside.finditer((ROOT / name).read_text(encoding="utf-8"))]
    assert not hits, hits

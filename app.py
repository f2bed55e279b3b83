"""crp-inspect dashboard entry point: ``streamlit run app.py``.

Registers the pages that exist (in the order of ``PAGES``) with ``st.navigation``, draws the
shared sidebar once for every page, then runs the selected page.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from crp_ui import sidebar, state

ROOT = Path(__file__).resolve().parent
#: (file under pages/, title, icon) in navigation order
PAGES: tuple[tuple[str, str, str], ...] = (
    ("overview.py", "Overview", ":material/dashboard:"),
    ("breakdown.py", "Score breakdown", ":material/table_chart:"),
    ("graph.py", "Graph", ":material/hub:"),
    ("envelope.py", "Envelope", ":material/mail:"),
    ("conflicts.py", "Conflicts", ":material/gavel:"),
    ("fanout.py", "Fan-out", ":material/call_split:"),
    ("tuning.py", "Tuning", ":material/tune:"),
)
#: sidebar width in pixels: room for the scenario and config editors
SIDEBAR_WIDTH = 440
#: the sidebar starts at least SIDEBAR_WIDTH wide while expanded (it can still be dragged wider or
#: collapsed); static CSS, no user content
SIDEBAR_CSS = (f'<style>section[data-testid="stSidebar"][data-collapsed="false"]'
               f'{{min-width:{SIDEBAR_WIDTH}px}}</style>')
HOME = ("home.py", "Knowledge base", ":material/database:")


def available_pages(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """The pages whose file exists; the knowledge-base summary (home.py) comes first until the
    Overview page exists, and last after that."""
    found = [p for p in PAGES if (root / "pages" / p[0]).is_file()]
    home = [HOME] if (root / "pages" / HOME[0]).is_file() else []
    if found and found[0][0] == "overview.py":
        return found + home
    return home + found


def main() -> None:
    st.set_page_config(layout="wide", page_title="crp-inspect", page_icon=":material/manage_search:",
                       initial_sidebar_state=SIDEBAR_WIDTH)
    st.html(SIDEBAR_CSS)
    state.ensure_shell()  # leave Streamlit's legacy pages/-folder mode before navigating
    pages = [st.Page(str(ROOT / "pages" / f), title=title, icon=icon, url_path=Path(f).stem, default=(i == 0))
             for i, (f, title, icon) in enumerate(available_pages())]
    nav = st.navigation(pages)
    sidebar.render_sidebar()
    nav.run()
    state.sync_query_params()  # a page may have selected a fact


if __name__ == "__main__":  # streamlit runs the entry script as __main__; tests import it
    main()

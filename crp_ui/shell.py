"""The app shell: the page list, the frame drawn around every page, and the way into it.

``app.py`` (the entrypoint) calls :func:`run` on every rerun: it registers the page files of
``pages/`` with ``st.navigation``, draws the shared sidebar and runs the page the URL names. Each
page file ends with ``if __name__ == "__main__": shell.run_page(main)`` (Streamlit executes page
files as scripts; importing one, as the tests do, runs nothing).

Why page files hand over to the shell (:func:`run_page`): a ``pages/`` folder beside the entrypoint
is also Streamlit's legacy multipage convention, and Streamlit follows it until some session calls
``st.navigation`` ("As soon as any session of your app executes the st.navigation command, your app
will ignore the pages/ directory (across all sessions)", st.navigation API reference). So when a
fresh server's very first request is a deep link (``/graph``), or when ``AppTest`` runs a page (it
starts every run afresh), Streamlit executes ``pages/graph.py`` alone, without ``app.py``. The page
file then runs the shell itself: ``st.navigation`` registers the pages (the legacy convention is off
from then on, for every session), the sidebar is drawn, and the page the URL names runs inside it.
Only public Streamlit API is involved.
"""

from __future__ import annotations

import contextvars
import functools
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from . import long_lived, render, sidebar, state
from .theme import SIDEBAR_WIDTH

PAGES_DIR = Path(__file__).resolve().parent.parent / "pages"


@dataclass(frozen=True)
class PageSpec:
    """One page of the dashboard: its file under ``pages/``, navigation title and icon."""

    file: str
    title: str
    icon: str

    @property
    def url_path(self) -> str:
        """The page's URL pathname: its file name without ``.py`` (``/graph``)."""
        return Path(self.file).stem

    @property
    def path(self) -> Path:
        """Absolute path of the page file (valid whichever file Streamlit runs as the entry script)."""
        return PAGES_DIR / self.file


#: the pages in navigation order; the first one is the default page, served at the root URL
PAGES: tuple[PageSpec, ...] = (
    PageSpec("story.py", "Story", ":material/auto_stories:"),
    PageSpec("overview.py", "Overview", ":material/dashboard:"),
    PageSpec("breakdown.py", "Score breakdown", ":material/table_chart:"),
    PageSpec("graph.py", "Graph", ":material/hub:"),
    PageSpec("envelope.py", "Envelope", ":material/mail:"),
    PageSpec("conflicts.py", "Conflicts", ":material/gavel:"),
    PageSpec("session.py", "SDK session", ":material/receipt_long:"),
    PageSpec("fanout.py", "Fan-out", ":material/call_split:"),
    PageSpec("tuning.py", "Tuning", ":material/tune:"),
    PageSpec("glossary.py", "Glossary", ":material/menu_book:"),
    PageSpec("home.py", "Knowledge base", ":material/database:"),
)
DEFAULT_PAGE = PAGES[0]

#: True while :func:`run` executes the selected page (per script thread, so sessions never mix)
_IN_SHELL: contextvars.ContextVar[bool] = contextvars.ContextVar("crp_in_shell", default=False)


@functools.lru_cache(maxsize=1)
def page_icon() -> bytes:
    """The favicon, drawn here (PIL, as PNG bytes), served by this server like any media file.

    Not a ``:material/...:`` icon: Streamlit's frontend fetches those favicons from fonts.gstatic.com,
    which fails offline; the page must fetch nothing from outside (tests/e2e/test_e2e_hostile_ui.py).
    """
    from PIL import Image, ImageDraw

    img = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((2, 2, 62, 62), radius=12, fill=(59, 91, 146, 255))
    d.ellipse((12, 10, 42, 40), outline=(255, 255, 255, 255), width=6)  # a magnifier: inspect
    d.line((37, 35, 52, 52), fill=(255, 255, 255, 255), width=8)
    # PNG bytes, encoded once: given an image object, Streamlit would encode it again on every rerun
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def navigation_pages() -> list[st.Page]:
    """The ``st.Page`` objects handed to ``st.navigation``, one per page file.

    The default page is served at the root URL only (``st.Page(default=True)``), so its own pathname
    gets a hidden page of the same file as well: ``/overview`` shows the Overview like ``/`` does,
    instead of Streamlit's "Page not found".
    """
    pages = [
        st.Page(str(p.path), title=p.title, icon=p.icon, default=True, url_path="")
        if p is DEFAULT_PAGE
        else st.Page(str(p.path), title=p.title, icon=p.icon, url_path=p.url_path)
        for p in PAGES
    ]
    pages.append(
        st.Page(
            str(DEFAULT_PAGE.path),
            title=DEFAULT_PAGE.title,
            icon=DEFAULT_PAGE.icon,
            url_path=DEFAULT_PAGE.url_path,
            visibility="hidden",
        )
    )
    return pages


def run() -> None:
    """One run of the dashboard: page config, navigation, the shared sidebar, the page, the URL."""
    st.set_page_config(
        layout="wide", page_title="crp-inspect", page_icon=page_icon(), initial_sidebar_state=SIDEBAR_WIDTH
    )
    render.apply_stylesheet()
    nav = st.navigation(navigation_pages())
    sidebar.render_sidebar(nav.url_path)
    token = _IN_SHELL.set(True)
    try:
        nav.run()
        state.sync_query_params()  # a page may have selected a fact
    finally:
        _IN_SHELL.reset(token)
        long_lived.after_run()  # Streamlit's post-run full collection then walks only new objects


def run_page(render: Callable[[], None]) -> None:
    """Run a page file's ``render`` function inside the shell.

    Called by :func:`run` (through ``st.navigation``), it renders the page. Called when Streamlit
    executed the page file on its own (the legacy ``pages/`` convention, or the file given as the entry
    script), it runs the whole shell instead, which runs the page the URL names.
    """
    if _IN_SHELL.get():
        render()
    else:
        run()

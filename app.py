"""crp-inspect dashboard entry point: ``streamlit run app.py``.

Every rerun goes through :func:`crp_ui.shell.run`: the pages of ``pages/`` registered with
``st.navigation`` (the list is :data:`crp_ui.shell.PAGES`), the shared sidebar, then the page the URL
names.
"""

from __future__ import annotations

from crp_ui import shell

if __name__ == "__main__":  # Streamlit executes the entry script as __main__
    shell.run()

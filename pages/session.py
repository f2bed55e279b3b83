"""A crprotocol session, judged by SPEC-027 (docs/reference/sessions.md): upload the session's audit
trail (with its anchor) beside the knowledge base it ran on, and see

* **the chain verdict**: every entry's hash and link recomputed, the first break and what differs,
  deleted or foreign entries, truncation, the anchor, signatures counted (:mod:`crp_ui.session_chain`);
* **the windows**: per window the SDK's packed facts in its order, SPEC-027's verdict on that set, the
  SDK's own findings beside ours, the envelope SPEC-027 would pack for the window's question
  (:mod:`crp_ui.session_windows`);
* **the write-back**: the facts the session wrote from its model's answers, what each contradicts or
  restates, and the action that quarantines them (:mod:`crp_ui.session_writeback`).

The inputs and the cached analysis are :mod:`crp_ui.session_input`.
"""

from __future__ import annotations

import streamlit as st

from crp_core import CRPError
from crp_ui import render, session_chain, session_input, session_windows, session_writeback, shell, state


def main() -> None:
    st.title("SDK session audit")
    state.init_state()
    session_input.upload_section()
    session_windows.declare_uploads()  # the uploads are not in the link: the notice says so
    loaded = session_input.loaded_trail()
    if loaded is None:
        st.info(session_input.WHAT_TO_UPLOAD)
        return
    session_chain.chain_block(loaded.trail, loaded.name)
    try:
        judged = session_input.judged_against()
        if judged is None:
            return
        corpus, before, label = judged
        report = session_input.session_report(loaded, corpus, before)
    except CRPError as exc:
        st.error(f"The session could not be judged against this knowledge base: {render.md_escape(exc)}")
        return
    session_windows.windows_block(report, label)
    session_writeback.writeback_block(report)


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

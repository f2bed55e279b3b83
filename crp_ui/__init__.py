"""Shared Streamlit helpers of the crp-inspect dashboard (thin: all computation is in crp_core).

``state`` is what pages import: the per-user session state (built from ``session``, ``config_state``,
``scenario_state``, ``ckf_state`` and ``results``) and the URL mirror (``url_codec``); ``shell`` runs
every page inside the shared sidebar (``sidebar`` and its sections); ``cache`` and ``memo`` keep the
heavy crp_core calls from repeating on a rerun; ``decisions`` brings the operators' triage decisions
into every run; ``render`` renders untrusted text escaped. The other modules draw one page's views.
"""

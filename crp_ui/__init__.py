"""Shared Streamlit helpers of the crp-inspect dashboard (thin: all computation is in crp_core).

``state`` holds the per-user session state and the accessors pages call; ``sidebar`` draws the
shared sidebar; ``cache`` wraps the heavy crp_core calls in Streamlit caches; ``render`` renders
untrusted text escaped.
"""

"""The Conflicts page's whole-CKF scan kept in the cache folder: a new server over the same CKF arbitrates the
checked pairs the last one kept and shows the same queue without scanning (crp_core.load_checked)."""

from __future__ import annotations

import streamlit as st
from streamlit.testing.v1 import AppTest

from crp_ui import whole_scan
from tests.support.conflicts_page import open_page


def _queue_rows(at: AppTest) -> list[tuple[str, str, str]]:
    hits = [d.value for d in at.dataframe if "arbitration" in d.value.columns and "fact_a" in d.value.columns]
    assert len(hits) == 1
    frame = hits[0]
    return list(zip(frame["fact_a"], frame["fact_b"], frame["arbitration"].astype(str)))


def test_a_new_server_reads_the_scan_the_last_one_kept(triage_env, monkeypatch):
    st.cache_resource.clear()  # a first server: nothing scanned in this process
    scans = triage_env.parent / "cache" / "scans"
    page = open_page()
    first = _queue_rows(page)
    kept = sorted(scans.glob("checked-*.npz"))
    assert not any("read from the cache" in str(c.value) for c in page.caption)
    assert len(first) == 3 and len(kept) == 1

    def no_scan(*_a, **_k):
        raise AssertionError("the whole CKF was scanned again")

    st.cache_resource.clear()  # a new server: the process's scans are gone, the cache folder stays
    monkeypatch.setattr(whole_scan, "check_ckf", no_scan)
    second = open_page()
    assert _queue_rows(second) == first
    assert sorted(scans.glob("checked-*.npz")) == kept
    assert any("(by an earlier server: read from the cache)" in str(c.value) for c in second.caption)


def test_a_damaged_kept_scan_is_scanned_again(triage_env):
    st.cache_resource.clear()
    first = _queue_rows(open_page())
    (path,) = (triage_env.parent / "cache" / "scans").glob("checked-*.npz")
    path.write_bytes(b"damaged")
    st.cache_resource.clear()
    assert _queue_rows(open_page()) == first
    assert path.read_bytes()[:2] == b"PK"  # written again, whole

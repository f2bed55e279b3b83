"""The Conflicts page's paged triage queue in AppTest: open it, read its table, pair picker, page box and
"rows X-Y of Z" line (tests/pages/test_page_conflicts_paging.py, test_page_conflicts_decision.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.paths import APP
from tests.support.queue_sample import write_queue_sample

K = "crp.page.conflicts."


def open_queue(params: dict[str, str] | None = None, size: int | None = None) -> AppTest:
    """The Conflicts page (its queue tab is open by default), ``size`` rows per page from its first draw."""
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    if size is not None:
        at.session_state[K + "page_size"] = size
    at.switch_page("pages/conflicts.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def queue_table(at: AppTest) -> list[str]:
    """The pairs of the queue table's rows, in order."""
    hits = [d.value for d in at.dataframe if "fact_a" in d.value.columns and "state" in d.value.columns]
    assert len(hits) == 1
    return [f"{a}|{b}" for a, b in zip(hits[0]["fact_a"], hits[0]["fact_b"])]


def picker_keys(at: AppTest) -> list[str]:
    """The pair keys the "Pair to triage" select box offers (its options are shown as labels)."""
    return [str(o).replace(" ↔ ", "|").split(" · ")[0] for o in at.selectbox(key=K + "pair").options]


def page_box(at: AppTest):  # type: ignore[no-untyped-def]
    hits = [n for n in at.number_input if str(n.key).startswith(K + "page.")]
    assert len(hits) == 1, [n.key for n in at.number_input]
    return hits[0]


def rows_line(at: AppTest) -> str:
    hits = [c.value for c in at.caption if str(c.value).startswith("rows ")]
    assert len(hits) == 1
    return str(hits[0])


def queue_env_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> Path:
    """A samples folder with the queue sample of ``n`` pairs, a cache and a triage database under ``tmp_path``,
    set for the app; returns the database's path."""
    d = write_queue_sample(tmp_path / "samples", n)
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "triage.sqlite"

"""The Conflict triage page under AppTest: a sample with three hand-computed conflict pairs
(``write_conflict_sample``), opening the page and its tabs, the operator name and recording a decision
through the page's form. The ``triage_env`` fixture over the sample is in ``tests/pages/conftest.py``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.paths import APP
from tests.support.samples import TEST_MODEL, write_bare_scenario

K = "crp.page.conflicts."


SCRIPT = "<script>alert(1)</script>"


def _vec(k: int, second: bool) -> list[float]:
    v = [0.0] * 5
    v[k] = 1.0
    v[4] = 1.0
    if second:
        v[3] = 0.2
    return v


FACTS = [
    # E: official docs, fresh (age 153 d <= 182.5 d: recency 1.0): 0.80 * 1.0 * 0.80 = 0.64
    ("E1", "The etcd client port is 2379.", "official_documentation", "2026-06-01T00:00:00Z", _vec(0, False)),
    # community, modified 2021 (age > 365 d: stale_floor 0.30): 0.75 * 0.30 * 0.60 = 0.135
    ("E2", "The etcd client port is 4001.", "community", "2021-01-01T00:00:00Z", _vec(0, True)),
    # T: two internal pages, same date (age 31 d: 1.0): 0.75 * 1.0 * 0.70 = 0.525 each -> tie
    (
        "T1",
        "Internal wiki: the build cache holds 40 GB per runner.",
        "internal",
        "2026-10-01T00:00:00Z",
        _vec(1, False),
    ),
    ("T2", "Internal wiki: the build cache holds 80 GB per runner.", "internal", "2026-10-01T00:00:00Z", _vec(1, True)),
    # X: web, fresh: 0.70 * 1.0 * 0.50 = 0.35; web, age 549 d > 365 d: 0.70 * 0.30 * 0.50 = 0.105
    ("X1", f"{SCRIPT} The API rate limit is 100 requests per minute.", "web", "2026-10-01T00:00:00Z", _vec(2, False)),
    ("X2", f"{SCRIPT} The API rate limit is 200 requests per minute.", "web", "2025-05-01T00:00:00Z", _vec(2, True)),
]
# margins: T 0 (tie), X 0.35 - 0.105 = 0.245, E 0.64 - 0.135 = 0.505 -> queue order T, X, E


def write_conflict_sample(d: Path) -> Path:
    (d / "scenarios").mkdir(parents=True)
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for fid, content, src, modified, vec in FACTS:
            fh.write(
                json.dumps(
                    {
                        "fact_id": fid,
                        "content": content,
                        "source_type": src,
                        "modified_at": modified,
                        "ingested_at": modified,
                        "embedding": vec,
                        "embedding_model": TEST_MODEL,
                    }
                )
                + "\n"
            )
    write_bare_scenario(
        d / "scenarios" / "conflicts.json", "conflicts", "ports, cache sizes and rate limits", [0.0, 0.0, 0.0, 0.0, 1.0]
    )
    return d


def open_page(page: str = "conflicts") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


QUEUE, ENV, QUALITY, EXPORT = (
    "Triage queue (whole CKF)",
    "Envelope conflicts (current run)",
    "Detector quality",
    "Export & audit log",
)


def show_tab(at: AppTest, label: str) -> AppTest:
    """Open the page tab ``label`` (only the open tab is built), as a click on it would."""
    at.session_state["tab"] = label
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def unmd(text: str) -> str:
    """Undo ``render.md_escape`` (backslash before punctuation)."""
    return re.sub(r"\\(.)", r"\1", text)


def set_operator(at: AppTest, name: str) -> None:
    at.text_input(key="crp.w.operator").input(name).run()


def decide(
    at: AppTest,
    pair: str,
    kind: str,
    *,
    winner: str | None = None,
    target: str | None = None,
    status: str | None = None,
    note: str = "",
) -> None:
    show_tab(at, QUEUE)  # the decision form is in the queue tab
    at.selectbox(key=K + "pair").set_value(pair).run()
    at.radio(key=K + "kind." + pair).set_value(kind).run()  # the form then holds that kind's fields
    if winner:
        at.selectbox(key=K + "winner." + pair).set_value(winner)
    if target:
        at.selectbox(key=K + "target." + pair).set_value(target)
    if status:
        at.selectbox(key=K + "status." + pair).set_value(status)
    if note:
        at.text_area(key=K + "note." + pair).input(note)
    at.button(key=K + "submit." + pair).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def sample_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: Callable[[Path], Path]) -> Path:
    """The sample ``write`` makes as the dashboard's sample dir, a cache and a temporary decision database (tests
    never touch a shared one); returns the database path."""
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(write(tmp_path / "samples")))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "triage.sqlite"

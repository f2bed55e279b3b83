"""Helpers of the page tests (test_page_*.py): run a dashboard page with AppTest, compute the run
the page must show straight from crp_core, find sidebar widgets, write a sample whose graph has a
connector bridging two anchors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

from crp_core.config import CRPConfig
from tests.support.paths import APP
from tests.support.samples import TEST_MODEL

__all__ = [
    "expected_result",
    "figures",
    "frame_with",
    "frames_with",
    "metric",
    "open_sidebar",
    "run_page",
    "sidebar_input",
    "unit",
    "widget",
    "write_bridge_sample",
]


def open_sidebar(at: AppTest) -> AppTest:
    """Open the sidebar's Scenario and Configuration expanders, and every stage group of the latter, for
    the next run (their contents are drawn only while open), as a user clicking them would."""
    from crp_ui import sidebar

    at.session_state[sidebar.SCENARIO_OPEN] = True
    at.session_state[sidebar.CONFIG_OPEN] = True
    at.session_state[sidebar.CONFIG_GROUPS_KEEP] = {i: True for i in range(len(sidebar.config_groups()))}
    return at


def run_page(page: str, *, params: Mapping[str, str] | None = None, timeout: float = 180) -> AppTest:
    """AppTest of ``app.py`` switched to ``pages/<page>.py`` (first run on the default page), as a user
    would get there: the shared sidebar ran first, then the page."""
    at = open_sidebar(AppTest.from_file(APP, default_timeout=timeout))
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def expected_result(
    sample_dir: Path,
    *,
    ckf: str = "knowledge_base.jsonl",
    scenario: str | None = None,
    edits: Mapping[str, Any] | None = None,
) -> Any:
    """``run_pipeline`` on the files the dashboard shows, with the dashboard's config precedence
    (defaults < the scenario's config < edits) and, as the dashboard, the known conflicts of the whole-CKF
    scan checked against the selection."""
    from crp_core.corpus.prepared import prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario
    from crp_core.pipeline import run_pipeline

    scen_dir = sample_dir / "scenarios"
    name = scenario or sorted(p.name for p in scen_dir.iterdir() if p.suffix in (".json", ".toml"))[0]
    kb = load_ckf(str(sample_dir / ckf))
    s = load_scenario(str(scen_dir / name))
    config = CRPConfig().with_overrides(dict(s.config or {}))
    if edits:
        config = config.with_overrides(dict(edits))
    embedder = None
    if kb.embeddings is None:
        from crp_core.corpus.embedding import default_embedder

        embedder = default_embedder()
    corpus = prepare_corpus(kb, embedder=embedder, config=config)
    known: tuple[Any, ...] = ()
    if config.known_conflict_action != "off":  # as the dashboard: the whole-CKF scan's decided conflicts
        from crp_core.analysis.known import known_conflicts
        from crp_core.analysis.scan import scan_ckf

        known = known_conflicts(scan_ckf(corpus, config, s.now), None)
    return run_pipeline(corpus, s, config, now=s.now, embedder=embedder, known_conflicts=known)


def sidebar_input(at: AppTest, config_key: str) -> Any:
    """The sidebar number input editing ``config_key`` (its widget key carries a generation)."""
    prefix = f"crp.w.config.{config_key}."
    hits = [w for w in at.number_input if str(w.key).startswith(prefix)]
    assert len(hits) == 1, [w.key for w in at.number_input]
    return hits[0]


def widget(at: AppTest, kind: str, key_prefix: str) -> Any:
    """The one widget of ``kind`` (``"selectbox"``, ``"multiselect"``, ...) whose key starts with ``key_prefix``."""
    hits = [w for w in getattr(at, kind) if str(w.key).startswith(key_prefix)]
    assert len(hits) == 1, [w.key for w in getattr(at, kind)]
    return hits[0]


def frames_with(at: AppTest, *columns: str) -> list[Any]:
    """Values (DataFrames) of the dataframe elements holding every one of ``columns``."""
    out = []
    for d in at.dataframe:
        v = d.value
        if all(c in v.columns for c in columns):
            out.append(v)
    return out


def frame_with(at: AppTest, *columns: str) -> Any:
    """The one dataframe value holding every one of ``columns``."""
    hits = frames_with(at, *columns)
    assert len(hits) == 1, f"{len(hits)} dataframes with columns {columns}"
    return hits[0]


def figures(at: AppTest) -> list[dict]:
    """The plotly figures of the page, as dicts (``data`` / ``layout``)."""
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


def metric(at: AppTest, label: str) -> str:
    """The value of the one metric labelled ``label``."""
    hits = [m.value for m in at.metric if m.label == label]
    assert len(hits) == 1, [m.label for m in at.metric]
    return hits[0]


def unit(v: Any) -> list[float]:
    """``v`` scaled to length 1, as a list."""
    a = np.asarray(v, dtype=np.float64)
    return [float(x) for x in a / np.linalg.norm(a)]


def write_bridge_sample(d: Path) -> Path:
    """A sample whose graph has one connector bridging two anchors with no direct edge.

    3-d vectors (cosines by hand): A1 = (1, 0.8, 0), A2 = (1, -0.8, 0): cos(A1, A2) = (1 - 0.64) / 1.64
    = 0.2195 < 0.60, no edge. C = (1, 0, 0.8): cos(C, A1) = cos(C, A2) = 1 / (1.2806 * 1.2806) = 0.6098 >= 0.60,
    edges C-A1 and C-A2. Query q = (1, 0, -0.6): relevance A1 = A2 = 1 / (1.1662 * 1.2806) = 0.6696 (passes the
    0.55 gate), C = (1 - 0.48) / (1.1662 * 1.2806) = 0.3482 (gated out, so it is not an anchor). D = (0, 0, -1)
    is far from everything (relevance 0.5145, gated; no edge). C is a connector candidate at 1 hop of both
    anchors with one bridged pair (A1, A2).
    """
    (d / "scenarios").mkdir(parents=True, exist_ok=True)
    facts = [
        ("A1", "Anchor one: the etcd client port is 2379.", "official_documentation", (1, 0.8, 0)),
        ("A2", "Anchor two: the etcd peer port is 2380.", "official_documentation", (1, -0.8, 0)),
        ("C", "Connector: etcd listens on client and peer URLs.", "community", (1, 0, 0.8)),
        ("D", "Unrelated <b>markup</b> & [link](javascript:alert(1)) text.", "web", (0, 0, -1)),
    ]
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for fid, text, stype, vec in facts:
            fh.write(
                json.dumps(
                    {
                        "fact_id": fid,
                        "content": text,
                        "source_type": stype,
                        "ingested_at": "2026-01-01T00:00:00Z",
                        "embedding": unit(vec),
                        "embedding_model": TEST_MODEL,
                    }
                )
                + "\n"
            )
    scen = {
        "name": "bridge",
        "query": {"text": "etcd ports", "embedding": unit((1, 0, -0.6))},
        "now": "2026-03-01T00:00:00Z",
        "sub_queries": [],
        "addressed": [],
        "prior_outputs": [],
        "fanout_width": 0,
        "embedding_model": TEST_MODEL,
        "config": {"envelope_fact_budget": 4},
    }
    (d / "scenarios" / "bridge.json").write_text(json.dumps(scen), encoding="utf-8")
    return d

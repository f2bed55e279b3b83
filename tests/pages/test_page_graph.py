"""Graph (CDGR) page: anchors, connectors, edge weights, bridge values; selecting a
connector shows the anchor pairs it bridges."""

from __future__ import annotations

import math

import pytest

from tests.support.pages import expected_result, figures, frame_with, metric, run_page, widget, write_bridge_sample

K = "crp.page.graph."


@pytest.fixture
def bridge_env(tmp_path, monkeypatch):
    d = write_bridge_sample(tmp_path / "samples")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    return d


def _network(at):
    figs = [f for f in figures(at) if f["layout"]["title"]["text"].startswith("CDGR")]
    assert len(figs) == 1
    return figs[0]


def test_network_shows_anchors_connector_and_weights(bridge_env):
    exp = expected_result(bridge_env)
    at = run_page("graph")
    assert metric(at, "anchors") == "2"
    assert metric(at, "connectors selected") == "1"
    assert metric(at, "bridge score") == exp.headers["CRP-Context-Bridge-Score"]
    fig = _network(at)
    nodes = {t["name"]: t for t in fig["data"] if t.get("mode") == "markers+text"}
    assert sorted(nodes["anchor"]["customdata"]) == ["A1", "A2"]
    assert nodes["connector (selected)"]["customdata"] == ["C"]
    # bridge value of C = 1 bridged pair * mean path weight cos(C, A) = 1 / (1.2806 * 1.2806) = 0.6098
    assert nodes["connector (selected)"]["text"] == ["C<br>bridge value 0.61"]
    # edges C-A1 and C-A2 (weight 0.6098 each), no edge A1-A2 (cos 0.2195 < 0.60)
    labels = [t for t in fig["data"] if t.get("name") == "edge weight"][0]
    assert labels["text"] == ["0.61", "0.61"]
    # the drawn edges' table is built once its expander is opened (kept open for the session)
    from pages.graph import EDGES_OPEN

    assert not [d for d in at.dataframe if "weight" in d.value.columns]
    at.session_state[EDGES_OPEN + ".keep"] = True
    at.run()
    edges = frame_with(at, "a", "b", "weight")
    assert sorted(zip(edges["a"], edges["b"])) == [("A1", "C"), ("A2", "C")]
    assert all(math.isclose(w, 1 / 1.64, rel_tol=1e-5) for w in edges["weight"])


def test_selecting_a_connector_shows_the_pairs_it_bridges(bridge_env):
    exp = expected_result(bridge_env)
    at = run_page("graph")
    widget(at, "selectbox", K + "connector.").set_value("C").run()
    assert not at.exception
    pairs = frame_with(at, "anchor_a", "anchor_b", "content_a", "content_b")
    assert list(zip(pairs["anchor_a"], pairs["anchor_b"])) == [("A1", "A2")]
    c = exp.cdgr.connectors
    i = int((c.idx == exp.corpus.kb.index_of("C")).nonzero()[0][0])
    assert metric(at, "bridge value") == f"{float(c.bridge_value[i]):.4f}"
    assert math.isclose(float(c.bridge_value[i]), 1 / 1.64, rel_tol=1e-5)
    fig = _network(at)
    gaps = [t for t in fig["data"] if str(t.get("name", "")).startswith("pairs bridged by C")]
    assert len(gaps) == 1 and gaps[0]["line"]["dash"] == "dash"
    # the selection is the app-wide selected fact (it carries over to the breakdown page)
    at.switch_page("pages/breakdown.py").run()
    assert widget(at, "selectbox", "crp.page.breakdown.pick.").value == "C"


def test_graph_page_without_connectors(ui_env):
    exp = expected_result(ui_env)
    at = run_page("graph")
    assert metric(at, "connectors selected") == str(len(exp.cdgr.selected_connectors))
    fig = _network(at)
    anchors = [t for t in fig["data"] if t.get("name") == "anchor"][0]
    kb = exp.corpus.kb
    want = sorted(kb.facts[r].fact_id for r in list(exp.cdgr.anchors) + list(exp.cdgr.extra_anchors))
    assert sorted(anchors["customdata"]) == want
    assert any("No connector candidate bridges" in i.value for i in at.info)

"""AppTest of the Conflict triage page's winner over time: the selected pair's strip and exact instants,
and the envelope over time drawn once its expander is open (the sample of tests/support/conflicts_page.py)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.support.conflicts_page import K, open_page


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def test_the_selected_pair_has_its_strip_and_instants(triage_env):
    at = open_page()
    titles = [f["layout"]["title"]["text"] for f in _figures(at)]
    assert "Winner over time" in titles
    instants = [d.value for d in at.dataframe if "what" in d.value.columns]
    assert len(instants) == 1 and "now (this run)" in instants[0]["what"].tolist()
    assert any(e.label == "Envelope over time (this scenario)" for e in at.expander)
    assert not any(f["data"][0]["type"] == "heatmap" for f in _figures(at))  # closed: not computed


def test_the_envelope_over_time_once_open(triage_env):
    at = open_page()
    pair = at.selectbox(key=K + "pair").value.replace("|", ".")
    at.session_state[f"{K}authority.time.{pair}.envelope.keep"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (heat,) = [f for f in _figures(at) if f["data"][0]["type"] == "heatmap"]
    rows = [r.replace("◆ ", "") for r in heat["data"][0]["y"]]
    assert {"T1", "T2", "X1", "E1"} <= set(rows)  # the pair's facts and the run's other anchors
    assert any(x.endswith("(now)") for x in heat["data"][0]["x"])

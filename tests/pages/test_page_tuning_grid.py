"""Tuning page, Suite tab, 2-D sweep (crp_ui.suite_grid) with AppTest: the heatmap holds crp_core's
``sweep_grid`` values for the suite chosen on the Suite tab, rings the current values, redraws another
metric without running again, and sweeps ``now`` as a key; the pure figure helpers by hand."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime

import pytest

from crp_core.analysis.evaluate import prepare_suite
from crp_core.analysis.metrics import METRICS
from crp_core.analysis.suite import load_suite
from crp_core.analysis.sweep_grid import AxisSpec, grid_axis, suite_current, sweep_grid
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_ui.suite_grid import axis_label, grid_frame, grid_heatmap, metric_keys
from tests.support.pages import figures, run_page, widget
from tests.support.suites import corpus, write_suite

G = "crp.tuning.suite.grid."


def _label_suite(d) -> None:
    """Labels for the synthetic sample's scenario: three facts of each topic's first rows to include,
    one to exclude (whether they are packed is crp_core's to say; the test compares with it)."""
    path = d / "scenarios" / "demo.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["expect"] = {"must_include": ["f000", "f001", "f002"], "must_exclude": ["f003"]}
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")


def _prepared(d):
    return prepare_suite(prepare_corpus(load_ckf(str(d / "knowledge_base.jsonl"))), load_suite(d / "scenarios"))


def _heatmap(at) -> dict:
    return next(f for f in figures(at) if any(t.get("type") == "heatmap" for t in f["data"]))


def _set_axis(at, slot: str, key: str, lo, hi, n: int):
    at.selectbox(key=f"{G}{slot}.key").set_value(key).run()
    kind = "date_input" if key == "now" else "number_input"
    widget(at, kind, f"{G}{slot}.lo.{key}").set_value(lo)
    widget(at, kind, f"{G}{slot}.hi.{key}").set_value(hi)
    widget(at, "number_input", f"{G}{slot}.n").set_value(n)
    at.run()


def test_heatmap_holds_crp_core_grid_with_current_values_ringed(ui_env):
    _label_suite(ui_env)
    at = run_page("tuning", params={"tab": "Suite"})
    _set_axis(at, "rows", "cdr_min_relevance", 0.0, 0.9, 4)
    _set_axis(at, "cols", "stale_floor", 0.0, 0.8, 3)
    at.button(key=G + "run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    p, c = _prepared(ui_env), CRPConfig()
    rows = grid_axis(AxisSpec("cdr_min_relevance", 0.0, 0.9, 4), 0.55)
    cols = grid_axis(AxisSpec("stale_floor", 0.0, 0.8, 3), 0.3)
    # step 0.2 -> 0, 0.2, .., 0.8 (5 points, 1 from 4) and 0.55; step 0.5 -> 0, 0.5 (2) and 0.3
    assert rows.values == (0.0, 0.2, 0.4, 0.55, 0.6, 0.8) and cols.values == (0.0, 0.3, 0.5)
    ref = sweep_grid(p, c, [rows, cols])
    fig = _heatmap(at)
    heat = next(t for t in fig["data"] if t["type"] == "heatmap")
    assert heat["y"] == ["0", "0.2", "0.4", "0.55", "0.6", "0.8"] and heat["x"] == ["0", "0.3", "0.5"]
    assert len({v for line in ref.matrix("recall.mean") for v in line}) > 1  # the grid moves recall
    want = [[None if v is None else pytest.approx(v) for v in line] for line in ref.matrix("recall.mean")]
    assert heat["z"] == want
    ring = next(t for t in fig["data"] if t.get("name") == "current values")
    assert ring["x"] == ["0.3"] and ring["y"] == ["0.55"]
    # another metric: redrawn from the kept grid, no run
    at.selectbox(key=G + "metric").set_value("leaks.total").run()
    heat = next(t for t in _heatmap(at)["data"] if t["type"] == "heatmap")
    assert heat["z"] == [[float(v) for v in line] for line in ref.matrix("leaks.total")]
    assert heat["reversescale"] is True  # fewer leaks is better: green at the low end
    assert "leaks.total (lower is better)" in json.dumps(_heatmap(at)["layout"]["title"])


def test_now_as_a_key_on_the_page(ui_env):
    _label_suite(ui_env)
    at = run_page("tuning", params={"tab": "Suite"})
    _set_axis(at, "rows", "now", date(2025, 1, 1), date(2027, 1, 1), 3)
    _set_axis(at, "cols", "cdr_min_relevance", 0.5, 0.6, 2)
    at.button(key=G + "run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    p = _prepared(ui_env)
    current = suite_current(p.suite, CRPConfig(), "now", p.nows)
    rows = grid_axis(AxisSpec("now", datetime(2025, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC), 3), current)
    heat = next(t for t in _heatmap(at)["data"] if t["type"] == "heatmap")
    assert heat["y"] == [axis_label(v) for v in rows.values]
    # yearly steps give 3 points (six-monthly 5), then the scenarios' shared now, ringed
    assert [v for v in heat["y"] if v != axis_label(current)] == ["2025-01-01", "2026-01-01", "2027-01-01"]
    ring = next(t for t in _heatmap(at)["data"] if t.get("name") == "current values")
    assert ring["y"] == [axis_label(current)] and ring["x"] == ["0.55"]


def test_figure_and_table_by_hand(tmp_path):
    p = prepare_suite(corpus(), load_suite(write_suite(tmp_path / "suite")))
    ttl = grid_axis(AxisSpec("ttl_days.official_documentation", 1000.0, 1000.0, 1), 365.0)
    gate = grid_axis(AxisSpec("cdr_min_relevance", 0.5, 0.6, 2), 0.55)
    grid = sweep_grid(p, CRPConfig(), [ttl, gate])
    fig = grid_heatmap(grid, "expired.total")
    heat = fig.data[0]
    # G (official, 882 days old) is expired at a 365-day TTL, not at 1000
    assert [list(r) for r in heat.z] == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    ring = fig.data[1]
    assert list(ring.x) == ["0.55"] and list(ring.y) == ["365"]
    table = grid_frame(grid, "expired.total")
    assert list(table.columns) == ["ttl_days.official_documentation", "0.5", "0.55", "0.6"]
    assert list(table.iloc[1]) == ["1000", 0, 0, 0]
    # s1 expects three conflicts, s2 none: conflicts_detected.worst is s1's alone, defined at every point
    assert not any(math.isnan(v) for row in grid_heatmap(grid, "conflicts_detected.worst").data[0].z for v in row)
    assert metric_keys()[:2] == ["recall.mean", "recall.worst"]
    assert len(metric_keys()) == sum(2 if m.fraction else 3 for m in METRICS)
    assert axis_label(datetime(2026, 3, 1, tzinfo=UTC)) == "2026-03-01"
    assert axis_label(datetime(2026, 3, 1, 6, tzinfo=UTC)) == "2026-03-01T06:00:00Z"

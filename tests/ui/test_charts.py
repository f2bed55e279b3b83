"""crp_ui.charts and crp_ui.tables: pure builders over pipeline records (no Streamlit)."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.factors.recency import recency_factor
from crp_core.pipeline import run_pipeline
from crp_core.report import fact_rows_report, run_report
from crp_core.support.memo import LRU
from crp_ui import cache, charts, tables
from crp_ui.before_after_view import RULE_COLOURS, SIDE_COLOURS
from crp_ui.chart_style import (
    AGEING,
    BAD,
    EXPIRED,
    FRESH,
    GOOD,
    OUTCOME_COLOURS,
    RECENCY_STATE_COLOURS,
    RULE_STATES,
    RULE_WORDS,
)
from tests.support.factories import fact, make_corpus, make_scenario


@pytest.fixture(scope="module")
def result():
    """Five facts around the query (ages 10..700 days, several source types, one STALE, one
    timeless, one without timestamps), one addressed sub-query, one prior output."""
    facts = [
        fact("F1", "the etcd client port is 2379 for all client requests today", modified_at="2026-05-22"),
        fact("F2", "etcd peers talk over port 2380", source_type="news", modified_at="2026-05-12"),
        fact("F3", "etcd 3.5 supports learners", source_type="version_specific", modified_at="2025-09-01"),
        fact("F4", "old etcd note", source_type="community", status="STALE", modified_at="2026-05-01"),
        fact("F5", "timeless etcd fact", source_type="regulatory", ttl="none", modified_at="2020-01-01"),
        fact("F6", "etcd fact with unknown age", source_type="web"),
        fact("F7", "etcd fact with a 90 day ttl", ttl="P90D", modified_at="2026-03-01"),
    ]
    vecs = [[1, 0.1, 0], [1, 0.2, 0.1], [1, -0.1, 0.2], [1, 0.3, -0.1], [1, 0, 0.3], [1, -0.2, -0.2], [1, 0.1, 0.3]]
    corpus = make_corpus(facts, vecs)
    scen = make_scenario(
        [1, 0, 0],
        sub_queries=[("s1", [1, 0.2, 0]), ("s2", [1, 0, 0.2])],
        addressed=[("s1", 0.8)],
        prior_outputs=["the etcd client port is 2379 for all client requests"],
        now="2026-06-01",
    )
    return run_pipeline(corpus, scen)


def test_recency_curve_points_match_the_spec_examples():
    # docs/reference/pipeline.md §2, ttl 365 d: fresh = 182.5 d; 273.75 d -> 1 - 0.7 * 91.25 / 182.5 = 0.65;
    # 300 d -> 1 - 0.7 * 117.5 / 182.5 = 0.549315; >= 365 d -> 0.30
    ys = charts.recency_curve_points(
        365.0, np.array([100, 182.5, 273.75, 300, 365, 500]), stale_floor=0.3, fresh_fraction=0.5
    )
    assert ys.tolist() == pytest.approx([1.0, 1.0, 0.65, 1 - 0.7 * 117.5 / 182.5, 0.3, 0.3], abs=1e-12)
    assert charts.recency_curve_points(math.inf, np.array([0, 1e6]), stale_floor=0.3, fresh_fraction=0.5).tolist() == [
        1.0,
        1.0,
    ]


def test_curve_ttls_group_source_types_and_add_explicit_ttls():
    curves = charts.curve_ttls(CRPConfig(), explicit_ttls=[90.0, 365.0, float("nan")])
    assert [t for t, _ in curves] == [30.0, 90.0, 180.0, 365.0, 1825.0, math.inf]
    labels = dict(curves)
    assert labels[30.0] == "TTL 30 d: news"
    assert labels[90.0] == "TTL 90 d: explicit ttl"
    assert labels[math.inf] == "no expiry: user_provided"
    assert "official_documentation" in labels[365.0] and "unverified" in labels[365.0]
    # a fact's own ttl on a type's curve: the label says the curve is theirs too (a fact of `ttl none` sat
    # on "no expiry: user_provided" though it is internal)
    assert labels[365.0].endswith(", facts' own ttl") and not labels[1825.0].endswith("own ttl")
    shared = dict(charts.curve_ttls(CRPConfig(), explicit_ttls=[math.inf]))
    assert shared[math.inf] == "no expiry: user_provided, facts' own ttl" and len(shared) == 5


def test_recency_chart_markers_lie_on_their_curves(result):
    frame = tables.breakdown_frame(result)
    fig = charts.recency_chart(frame, result.config, selected="F1")
    cfg = result.config
    drawn = set()
    for t in fig.data:
        if t.mode != "markers" or not t.name.startswith("facts ("):
            continue
        label = t.name[len("facts (") : -1]
        ttl = math.inf if label == "no expiry" else float(label.split()[1])
        assert t.hovertemplate == charts.MARKER_HOVER and t.hovertext is None
        for x, y, c in zip(t.x, t.y, t.customdata):
            # the stored factor equals the pipeline's formula at the fact's age on its curve (float32 sent)
            assert y == pytest.approx(
                recency_factor(
                    float(x),
                    None if math.isinf(ttl) else ttl,
                    stale_floor=cfg.stale_floor,
                    fresh_fraction=cfg.fresh_fraction,
                ),
                rel=1e-6,
            )
            drawn.add(c[0])
    stale = [t for t in fig.data if t.name == "status STALE → expired (floor)"]
    assert len(stale) == 1 and list(stale[0].y) == [cfg.stale_floor]
    assert list(stale[0].marker.color) == [EXPIRED] and stale[0].customdata[0][2] == "expired (status STALE)"
    scored = set(frame["fact_id"])
    # every scored fact of known age is drawn once; F6 (unknown age) is not drawn
    assert drawn | {"F4"} == scored - {"F6"}
    assert [t.name for t in fig.data if t.name.startswith("selected")] == ["selected: F1"]
    curves = [t for t in fig.data if t.mode == "lines"]
    assert any(t.name == "TTL 90 d: explicit ttl" for t in curves)


def test_recency_markers_are_filled_by_state_and_outlined_by_curve(result):
    """Each fact marker's fill is its recency state (fresh / ageing / expired), its outline its curve's colour;
    the legend names the states drawn; the hover says the rule in words, never the rule id 'decay'."""
    frame = tables.breakdown_frame(result)
    fig = charts.recency_chart(frame, result.config)
    rule_of = dict(zip(frame["fact_id"], frame["recency_rule"]))
    curve_colour = {t.legendgroup: t.line.color for t in fig.data if t.mode == "lines"}
    fills = {}
    for t in fig.data:
        if t.mode != "markers" or not t.name.startswith("facts ("):
            continue
        assert t.marker.line.color == curve_colour[t.legendgroup]
        for c, colour in zip(t.customdata, t.marker.color):
            fills[c[0]] = colour
            assert c[2] == RULE_WORDS[rule_of[c[0]]] and "decay" not in c[2]
    assert fills and all(fills[f] == RECENCY_STATE_COLOURS[RULE_STATES[rule_of[f]]] for f in fills)
    states = {RULE_STATES[r] for f, r in rule_of.items() if f != "F6"}
    key = {t.name: t.marker.color for t in fig.data if t.legendgroup == "state"}
    names = {"fresh": "fresh fact", "ageing": "ageing fact", "expired": "expired fact"}
    assert key == {names[s]: {"fresh": FRESH, "ageing": AGEING, "expired": EXPIRED}[s] for s in states}
    assert "decay" not in " ".join(charts.legend_names(fig))


def test_rule_states_match_the_core_split():
    """The words and colours of a rule follow crp_core's one definition of expired / ageing / fresh."""
    from crp_core.factors.recency import RULES, recency_state

    assert set(RULE_WORDS) == set(RULES)
    assert {r: RULE_STATES[r] for r in RULES} == {r: recency_state(r) for r in RULES}
    assert all(RULE_WORDS[r].split(" ")[0] == recency_state(r) for r in RULES)


def test_good_and_bad_are_one_pair_of_colours_everywhere():
    """Before / after, outcomes and recency states share the good / bad constants."""
    assert SIDE_COLOURS == {"SPEC-024 only": BAD, "SPEC-027": GOOD}
    assert (OUTCOME_COLOURS["in envelope"], OUTCOME_COLOURS["suppressed"]) == (GOOD, BAD)
    assert (RULE_COLOURS["fresh"], RULE_COLOURS["decay"], RULE_COLOURS["expired"]) == (FRESH, AGEING, EXPIRED)
    # a recency curve never takes a state's colour (its markers are filled with the states)
    assert not set(charts.CURVE_COLOURS) & {FRESH, AGEING, EXPIRED, GOOD, BAD}


def test_cdr_steps_by_hand():
    row = pd.Series(
        {
            "importance_weight": 0.8,
            "effective_relevance": 0.9,
            "novelty": 0.5,
            "recency_factor": 0.65,
            "ngram_penalty": 0.15,
            "cdr_score": 0.1989,
        }
    )
    steps = tables.cdr_steps(row)
    # 0.8 -> * 0.9 = 0.72 -> * 0.5 = 0.36 -> * 0.65 = 0.234 -> * (1 - 0.15) = 0.1989
    assert steps["running_product"].tolist() == pytest.approx([0.8, 0.72, 0.36, 0.234, 0.1989, 0.1989], abs=1e-12)
    assert steps["multiplier"].iloc[4] == pytest.approx(0.85)
    fig = charts.cdr_waterfall(steps, "F1")
    w = fig.data[0]
    assert list(w.measure) == ["absolute", "relative", "relative", "relative", "relative", "total"]
    assert list(w.y) == pytest.approx([0.8, -0.08, -0.36, -0.126, -0.0351, 0.1989], abs=1e-12)
    assert w.x[0] == "importance" and w.x[-1] == "CDR score"
    assert (w.increasing.marker.color, w.decreasing.marker.color) == (GOOD, BAD)  # a factor that lowers it: bad


def test_cdr_steps_reproduce_every_stored_score(result):
    frame = tables.breakdown_frame(result)
    for _, row in frame.iterrows():
        steps = tables.cdr_steps(row)
        assert steps["running_product"].iloc[4] == pytest.approx(row["cdr_score"], rel=1e-6, abs=1e-9)


def test_breakdown_frame_is_the_reports_fact_rows(result):
    frame = tables.breakdown_frame(result)
    facts = run_report(result)["facts"]
    assert list(frame["fact_id"]) == [f["fact_id"] for f in facts]
    for col in ("cdr_score", "relevance", "novelty", "recency_factor", "importance_weight", "ngram_penalty"):
        assert frame[col].tolist() == [f[col] for f in facts]
    assert tables.breakdown_frame(result) is frame  # memoised per result
    assert set(frame["outcome"]) <= set(tables.OUTCOMES)
    env = {p.fact_id for p in result.envelope.order}
    assert set(frame.loc[frame["outcome"] == "in envelope", "fact_id"]) == env


def test_breakdown_frame_equals_the_frame_of_the_report_rows(result):
    """The column-by-column frame is the plain construction (a frame of the rows, then each column
    converted): same columns, order, dtypes and values."""
    rows = [dict(r, outcome=tables.outcome_of(r)) for r in run_report(result)["facts"]]
    ref = pd.DataFrame(rows)
    for col in tables.FLOAT_COLUMNS:
        ref[col] = pd.to_numeric(ref[col], errors="coerce").astype("float64")
    ref["ngram_overlap"] = pd.to_numeric(ref["ngram_overlap"], errors="coerce").fillna(0).astype("int64")
    ref["position"] = pd.to_numeric(ref["position"], errors="coerce").astype("Int64")
    ref = ref[list(tables.BREAKDOWN_COLUMNS) + [c for c in ref.columns if c not in tables.BREAKDOWN_COLUMNS]]
    frame = tables.build_breakdown_frame(result)
    pd.testing.assert_frame_equal(frame, ref, check_exact=True)
    assert frame["bridge_value"].isna().any() and frame["position"].isna().any()  # None became missing


def test_breakdown_csv_round_trips_the_floats(result):
    frame = tables.breakdown_frame(result)
    back = pd.read_csv(io.StringIO(tables.breakdown_csv(result)))
    assert list(back["fact_id"]) == list(frame["fact_id"])
    assert back["cdr_score"].tolist() == frame["cdr_score"].tolist()  # unrounded
    assert list(back.columns) == list(frame.columns)


def test_breakdown_csv_writes_formula_like_text_as_text_and_numbers_as_numbers():
    """Issue 32, hostile item 6: ids and texts a spreadsheet would run get an apostrophe; a negative
    number in a numeric column (a fact pointing away from the query: negative relevance) stays a number."""
    facts = [
        fact("=cmd|' /C calc'!A0", "@SUM(1+1) etcd port", modified_at="2026-05-22"),
        fact("+1", '=HYPERLINK("http://x","y") etcd', modified_at="2026-05-01"),
        fact("-1+1", "\tetcd note", source_type="news", modified_at="2026-05-12"),
    ]
    corpus = make_corpus(facts, [[1, 0.1, 0], [1, 0.2, 0.1], [-1, 0.1, 0.2]])
    result = run_pipeline(corpus, make_scenario([1, 0, 0], now="2026-06-01"))
    text = tables.breakdown_csv(result)
    back = pd.read_csv(io.StringIO(text), dtype={"fact_id": str})
    assert set(back["fact_id"]) == {"'=cmd|' /C calc'!A0", "'+1", "'-1+1"}
    for row in list(csv.reader(io.StringIO(text)))[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
    frame = tables.breakdown_frame(result)
    assert (frame["relevance"] < 0).any()
    assert back["relevance"].tolist() == frame["relevance"].tolist()  # a negative number stays a number


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["anchor", "gated", "candidate", "connector"]), min_size=1, max_size=40),
    st.text(max_size=3),
    st.integers(1, 7),
    st.integers(1, 9),
)
def test_filter_sort_page_invariants(roles, text, page, size):
    n = len(roles)
    df = pd.DataFrame(
        {
            "fact_id": [f"F{i}" for i in range(n)],
            "role": roles,
            "outcome": ["gated" if r == "gated" else "not selected" for r in roles],
            "source_type": ["news"] * n,
            "content": [f"text {i} (x)" for i in range(n)],
            "cdr_score": np.linspace(0, 1, n),
        }
    )
    sub = tables.filter_breakdown(df, roles=["anchor", "gated"], text=text)
    assert set(sub["role"]) <= {"anchor", "gated"}
    t = text.lower()
    want = [i for i in range(n) if roles[i] in ("anchor", "gated") and (t in f"f{i}" or t in f"text {i} (x)")]
    assert sub.index.tolist() == want  # exactly the matching rows (a literal substring, never a regex)
    srt = tables.sort_breakdown(sub, "cdr_score", True)
    assert srt["cdr_score"].tolist() == sorted(sub["cdr_score"].tolist(), reverse=True)
    pages = tables.n_pages(len(srt), size)
    got = pd.concat([tables.page_of(srt, p, size) for p in range(1, pages + 1)])
    assert got["fact_id"].tolist() == srt["fact_id"].tolist()  # pages partition the rows in order
    assert len(tables.page_of(srt, page + pages, size)) == len(tables.page_of(srt, pages, size))  # clamped


def test_funnel_and_token_bar(result):
    funnel = tables.funnel_frame(result)
    assert funnel["count"].tolist() == [
        len(result.candidates.idx),
        int(result.candidates.passed_gate.sum()),
        len(result.cdgr.anchors) + len(result.cdgr.extra_anchors),
        len(result.cdgr.selected_connectors),
        len(result.resolution.suppressed),
        len(result.resolution.backfilled),
        len(result.envelope.order),
    ]
    assert funnel["time_ms"].iloc[0] == result.timings_ms["candidates"]
    fig = charts.stage_funnel(funnel)
    assert list(fig.data[0].x) == funnel["count"].tolist()
    env = tables.envelope_frame(result)
    bar = charts.token_budget_bar(env, 50, int(env["tokens"].sum()) + 7)
    segs = [t for t in bar.data if t.type == "bar"]
    assert sum(t.x[0] for t in segs) == int(env["tokens"].sum()) + 7
    assert segs[-1].name == "NOTE blocks" and segs[-1].x[0] == 7


def test_spring_layout_is_deterministic_and_bounded():
    edges = [(0, 1, 0.9), (1, 2, 0.7), (2, 3, 0.65), (3, 0, 0.8), (4, 0, 0.6)]
    a = charts.spring_layout(5, edges)
    b = charts.spring_layout(5, edges)
    assert np.array_equal(a, b) and a.shape == (5, 2)
    assert np.abs(a).max() == pytest.approx(1.0)
    d = np.linalg.norm(a[:, None] - a[None], axis=-1)
    assert d[np.triu_indices(5, 1)].min() > 0.05  # no two nodes on top of each other
    assert charts.spring_layout(0, []).shape == (0, 2)
    # a clique of 6 (all hop distances 1) is spread out, and an isolated node sits right of the main square
    clique = [(i, j, 0.9) for i in range(6) for j in range(i + 1, 6)]
    p = charts.spring_layout(7, clique)
    d = np.linalg.norm(p[:6, None] - p[None, :6], axis=-1)[np.triu_indices(6, 1)]
    assert d.min() > 0.4 * d.max()  # a hexagon-like ring (adjacent / opposite = 0.5), no overlap
    assert p[6, 0] > 1.0 and np.abs(p[:6]).max() == pytest.approx(1.0)
    assert charts.spring_layout(1, []).tolist() == [[0.0, 0.0]]


def test_labels_keep_off_each_other_and_off_the_markers():
    """Pixels: the axes' 2 x 2 units drawn over 200 x 200 px (100 px per unit); markers 18 x 18 px, labels
    60 x 14 px. A at px (100, 100), B at (120, 100), C at (110, 100), D at (190, 190).
    A: top box [70, 109]-[130, 123] touches no marker (they end at y 109): top.
    B: top box [90, 109]-[150, 123] shares 40 x 14 with A's label; bottom box [90, 77]-[150, 91] nothing: bottom.
    C: top overlaps A's label, bottom B's; right box [121, 93]-[181, 107] shares 8 x 14 = 112 with B's marker
    [111, 91]-[129, 109], left box [39, 93]-[99, 107] the same 112 with A's [91, 91]-[109, 109]: the tie keeps
    the earlier side, right. D, far off: top."""
    from crp_ui.graph_layout import label_sides

    pos = np.array([[0.0, 0.0], [0.2, 0.0], [0.1, 0.0], [0.9, 0.9]])
    sides = label_sides(pos, [(60.0, 14.0)] * 4, ((-1.0, 1.0), (-1.0, 1.0)), plot_px=(200.0, 200.0))
    assert sides == ["top center", "bottom center", "middle right", "top center"]
    assert label_sides(np.zeros((0, 2)), [], ((-1.0, 1.0), (-1.0, 1.0))) == []


def test_network_labels_escape_fact_text():
    nodes = pd.DataFrame(
        [
            {
                "row": 0,
                "fact_id": "<i>A</i>",
                "kind": "anchor",
                "cdr_score": 0.5,
                "bridge_value": np.nan,
                "connector_score": np.nan,
                "in_envelope": True,
                "suppressed": False,
                "content": "<script>x</script>",
            },
            {
                "row": 1,
                "fact_id": "C",
                "kind": "connector",
                "cdr_score": np.nan,
                "bridge_value": 1.25,
                "connector_score": 0.4,
                "in_envelope": True,
                "suppressed": False,
                "content": "<a href='javascript:1'>l</a>",
            },
        ]
    )
    edges = pd.DataFrame([{"a": "<i>A</i>", "b": "C", "weight": 0.8}])
    fig = charts.cdgr_network(nodes, edges)
    text = " ".join(str(v) for t in fig.data for v in list(t.hovertext or []) + list(t.text or []))
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "<a href" not in text and "<i>A</i>" not in text and "&lt;i&gt;A&lt;/i&gt;" in text
    assert "C<br>bridge value 1.25" in text


@pytest.mark.parametrize("log_x", [False, True])
def test_recency_curves_are_exact_at_their_kinks_and_points(result, log_x):
    # each curve: the two kinks exactly, n points over its decay, CURVE_SPAN_POINTS across the axis
    cfg = result.config
    fig = charts.recency_chart(tables.breakdown_frame(result), cfg, log_x=log_x, n_points=10)
    curves = [t for t in fig.data if t.mode == "lines"]
    news = [t for t in curves if t.name == "TTL 30 d: news"][0]
    xs = [float(x) for x in news.x]
    assert 15.0 in xs and 30.0 in xs  # fresh_fraction 0.5 x 30 d, and the TTL
    assert len(xs) <= 10 + 2 + charts.CURVE_SPAN_POINTS
    for x, y in zip(news.x, news.y):
        assert float(y) == pytest.approx(
            recency_factor(float(x), 30.0, stale_floor=cfg.stale_floor, fresh_fraction=cfg.fresh_fraction), rel=1e-6
        )
    flat = [t for t in curves if t.name.startswith("no expiry")][0]
    assert len(flat.x) == charts.CURVE_SPAN_POINTS and set(float(y) for y in flat.y) == {1.0}


def test_recency_chart_draws_the_stale_floor_line_with_its_label(result):
    fig = charts.recency_chart(tables.breakdown_frame(result), result.config).to_plotly_json()
    floor = result.config.stale_floor
    (line,) = fig["layout"]["shapes"]
    assert (line["type"], line["xref"], line["x0"], line["x1"], line["y0"], line["y1"]) == (
        "line",
        "x domain",
        0,
        1,
        floor,
        floor,
    )
    (note,) = fig["layout"]["annotations"]
    assert note["text"] == f"stale_floor {floor:g}" and note["y"] == floor
    assert (note["x"], note["xanchor"], note["yanchor"], note["showarrow"]) == (1, "right", "top", False)
    assert fig["layout"]["yaxis"]["range"] == (0, 1.08) or list(fig["layout"]["yaxis"]["range"]) == [0, 1.08]


def test_frame_digest_follows_the_values_not_the_object(result):
    frame = tables.breakdown_frame(result)
    cols = charts.RECENCY_COLUMNS
    d = tables.frame_digest(frame, cols)
    assert tables.frame_digest(frame.copy(), cols) == d  # another object, the same values
    other = frame.copy()
    other.loc[0, "recency_factor"] = other.loc[0, "recency_factor"] + 1e-9
    assert tables.frame_digest(other, cols) != d
    assert tables.frame_digest(frame.iloc[::-1], cols) != d  # row order counts
    assert tables.frame_digest(frame.iloc[:-1], cols) != d
    # a column outside the digest's list does not change it
    gated = frame.copy()
    gated["relevance"] = 0.0
    assert tables.frame_digest(gated, cols) == d
    # text columns count too: a changed rule, a missing value against the text "None"
    ruled = frame.copy()
    ruled.loc[0, "recency_rule"] = str(ruled.loc[0, "recency_rule"]) + "x"
    assert tables.frame_digest(ruled, cols) != d
    a = pd.DataFrame({"t": pd.Series([None, "b"], dtype=object)})
    b = pd.DataFrame({"t": pd.Series(["None", "b"], dtype=object)})
    assert tables.frame_digest(a, ["t"]) != tables.frame_digest(b, ["t"])
    joined = pd.DataFrame({"t": pd.Series(["a\x1fb"], dtype=object)})
    split = pd.DataFrame({"t": pd.Series(["a", "b"], dtype=object)})
    assert tables.frame_digest(joined, ["t"]) != tables.frame_digest(split.iloc[:1], ["t"])


def test_recency_settings_name_what_the_chart_reads():
    base = CRPConfig()
    assert charts.recency_settings(base) == charts.recency_settings(base.with_overrides({"cdr_min_relevance": 0.9}))
    assert charts.recency_settings(base) != charts.recency_settings(base.with_overrides({"stale_floor": 0.2}))
    assert charts.recency_settings(base) != charts.recency_settings(base.with_overrides({"ttl_days.news": 7}))


def test_memo_shared_builds_once_per_key_and_keeps_the_last_used(monkeypatch):
    monkeypatch.setattr(cache, "_SHARED", LRU(2, locked=True))
    built: list[str] = []

    def build(k: str):
        return lambda: built.append(k) or k.upper()

    assert cache.memo_shared("a", build("a")) == "A"
    assert cache.memo_shared("a", build("a")) == "A" and built == ["a"]
    cache.memo_shared("b", build("b"))
    cache.memo_shared("a", build("a"))  # "a" used last: "b" is the oldest now
    cache.memo_shared("c", build("c"))
    assert "a" in cache._SHARED and "c" in cache._SHARED and "b" not in cache._SHARED
    cache.memo_shared("b", build("b"))
    assert built == ["a", "b", "c", "b"]


def _plain_types(v, path="row"):
    """Every value JSON-plain by type (a numpy scalar compares equal to a float, so == cannot tell)."""
    if isinstance(v, dict):
        for k, x in v.items():
            assert type(k) is str, path
            _plain_types(x, f"{path}.{k}")
    elif isinstance(v, list):
        for k, x in enumerate(v):
            _plain_types(x, f"{path}[{k}]")
    else:
        assert v is None or type(v) in (str, int, float, bool), (path, type(v))
        assert not (type(v) is float and not math.isfinite(v)), path


def test_fact_rows_are_built_plain_with_the_reports_types(result):
    from crp_core.report import fact_rows_report, plain

    rows = fact_rows_report(result)
    assert rows
    for r in rows:
        _plain_types(r)
    # what plain() made of the rows before they were built plain: the same values and the same types
    again = plain(rows)
    assert again == rows
    assert [[type(v) for v in r.values()] for r in again] == [[type(v) for v in r.values()] for r in rows]
    assert json.loads(json.dumps(rows, allow_nan=False)) == rows


def test_fact_rows_are_the_reports_and_the_frame_leaves_the_report_alone(result):
    report = tables.report_of(result)
    assert fact_rows_report(result) == run_report(result)["facts"] == report["facts"]
    frame = tables.build_breakdown_frame(result)
    assert "outcome" in frame.columns
    # the JSON report (the Envelope page's download) keeps the CLI's fields: no outcome column added
    assert all("outcome" not in row for row in tables.report_of(result)["facts"])


def test_wrap_label_breaks_at_spaces_within_the_line_width():
    from crp_ui.chart_style import LABEL_LINE, wrap_label

    assert wrap_label("contradictory pairs") == "contradictory<br>pairs"  # a word longer than the line keeps its own
    assert wrap_label("expired facts") == "expired<br>facts"
    assert wrap_label("× 1 - n-gram penalty") == "× 1 -<br>n-gram<br>penalty"
    assert wrap_label("CDR score") == "CDR score"
    for text in ("fan-out duplicates", "× effective relevance", "a b c d e f g h i j k l m"):
        lines = wrap_label(text).split("<br>")
        assert " ".join(lines) == text
        assert all(len(line) <= LABEL_LINE or " " not in line for line in lines)


def test_waterfall_and_before_after_labels_are_wrapped():
    steps = tables.cdr_steps(
        pd.Series(
            {
                "importance_weight": 0.8,
                "effective_relevance": 0.9,
                "novelty": 0.5,
                "recency_factor": 0.65,
                "ngram_penalty": 0.15,
                "cdr_score": 0.1989,
            }
        )
    )
    x = list(charts.cdr_waterfall(steps, "F1").data[0].x)
    assert x == [
        "importance",
        "× effective<br>relevance",
        "× novelty",
        "× recency",
        "× 1 -<br>n-gram<br>penalty",
        "CDR score",
    ]


def test_the_network_title_says_where_the_weights_are():
    """Weights are written on at most MAX_EDGE_LABELS edges; past that the title says they are on hover."""
    from crp_ui.graph_chart import MAX_EDGE_LABELS

    ids = [f"F{i}" for i in range(13)]
    nodes = pd.DataFrame(
        [
            {
                "row": i,
                "fact_id": f,
                "kind": "anchor",
                "cdr_score": 0.5,
                "bridge_value": np.nan,
                "connector_score": np.nan,
                "in_envelope": True,
                "suppressed": False,
                "content": "x",
            }
            for i, f in enumerate(ids)
        ]
    )
    full = [{"a": a, "b": b, "weight": 0.9} for i, a in enumerate(ids) for b in ids[i + 1 :]]  # 78 edges
    assert len(full) > MAX_EDGE_LABELS >= len(full[:MAX_EDGE_LABELS])
    few = charts.cdgr_network(nodes, pd.DataFrame(full[:MAX_EDGE_LABELS]))
    many = charts.cdgr_network(nodes, pd.DataFrame(full))
    assert few.layout.title.text.endswith("(edge label = weight)")
    assert many.layout.title.text.endswith("(edge width = weight, on hover at its middle)")


def test_the_network_builds_each_label_once(monkeypatch):
    """A node's label lines are built once per render and the same lines are placed and drawn (they were built
    once to place the labels and again to draw them)."""
    from crp_ui import graph_chart

    calls: list[str] = []
    built = graph_chart._node_label

    def counted(r, kind):
        calls.append(r.fact_id)
        return built(r, kind)

    monkeypatch.setattr(graph_chart, "_node_label", counted)
    row = {"cdr_score": 0.5, "connector_score": np.nan, "in_envelope": True, "suppressed": False, "content": "x"}
    nodes = pd.DataFrame(
        [
            {**row, "row": 0, "fact_id": "A", "kind": "anchor", "bridge_value": np.nan},
            {**row, "row": 1, "fact_id": "B", "kind": "anchor", "bridge_value": np.nan},
            {**row, "row": 2, "fact_id": "C", "kind": "connector", "bridge_value": 1.25},
        ]
    )
    fig = charts.cdgr_network(nodes, pd.DataFrame([{"a": "A", "b": "C", "weight": 0.8}]))
    assert sorted(calls) == ["A", "B", "C"]
    drawn = [t for t in fig.data if t.mode == "markers+text"]
    assert [list(t.text) for t in drawn] == [["A", "B"], ["C<br>bridge value 1.25"]]


def test_a_second_cluster_keeps_its_room_beside_many_isolated_nodes():
    """A 6-node main component, a 5-node cluster, a pair and 7 isolated nodes (a demo rehearsal's transit KB:
    the fare cluster was drawn in a corner a sixth of the main one's width, its labels on top of each other).
    The cluster spans at least half the main component's width; every node right of the main square; no two
    nodes closer than 0.2; the whole drawing within x <= 3.2."""
    main = [(0, 1, 0.8), (1, 2, 0.8), (2, 3, 0.8), (3, 4, 0.8), (4, 5, 0.8), (0, 2, 0.7), (1, 3, 0.7)]
    cluster = [(6, 7, 0.8), (7, 8, 0.8), (8, 9, 0.8), (9, 10, 0.8), (6, 8, 0.7), (7, 9, 0.7), (6, 10, 0.7)]
    p = charts.spring_layout(20, [*main, *cluster, (11, 12, 0.9)])
    assert np.ptp(p[6:11], axis=0).min() >= 0.5 * np.ptp(p[:6], axis=0).max()
    assert (p[6:, 0] > 1.0).all() and p[:, 0].max() <= 3.2 and np.abs(p[:, 1]).max() <= 1.0
    d = np.linalg.norm(p[:, None] - p[None], axis=-1)[np.triu_indices(20, 1)]
    assert d.min() > 0.2
    # a lone isolated node stays next to the main square
    lone = charts.spring_layout(7, [(i, j, 0.9) for i in range(6) for j in range(i + 1, 6)])
    assert 1.0 < lone[6, 0] <= 1.7


def test_recency_curves_no_fact_lies_on_are_in_the_legend_only(result):
    """A TTL no scored fact has (a source type absent from the run) is named so and drawn only when clicked;
    the curves of the facts' TTLs are drawn, a STALE fact's and one of unknown age included."""
    frame = tables.breakdown_frame(result)
    curves = [t for t in charts.recency_chart(frame, result.config).data if t.mode == "lines"]
    groups_with_facts = {
        t.legendgroup
        for t in charts.recency_chart(frame, result.config).data
        if t.mode == "markers" and t.name.startswith("facts (")
    }
    hidden = {t.name for t in curves if t.visible == "legendonly"}
    shown = {t.name for t in curves if t.visible is True}
    # the fixture's facts sit on 30 d (news), 90 d (own ttl), 180 d, 365 d and no expiry (F5, regulatory, gives
    # itself `ttl none`): nothing lies on regulatory's 1825 d
    assert hidden == {"TTL 1825 d: regulatory" + charts.NO_FACT_SUFFIX}
    assert all(n.endswith(charts.NO_FACT_SUFFIX) for n in hidden)
    assert not any(n.endswith(charts.NO_FACT_SUFFIX) for n in shown)
    assert {t.legendgroup for t in curves if t.visible is True} == groups_with_facts
    # every age unknown: no marker anywhere, yet the TTLs the facts have are drawn and 1825 d stays hidden
    unknown = frame.assign(age_days=float("nan"))
    lines = [t for t in charts.recency_chart(unknown, result.config).data if t.mode == "lines"]
    assert {t.name for t in lines if t.visible == "legendonly"} == hidden
    assert len(lines) == 5  # the 90 d of F7 (its own ttl) is drawn from a known age only
    # F5 (regulatory) given its type's 1825 d and made STALE: that TTL is held, its curve drawn though no marker
    # lies on it; no fact is left without expiry, so that curve is the hidden one
    stale = frame.copy()
    stale.loc[stale["fact_id"] == "F5", ["ttl_days", "ttl_source", "status"]] = [1825.0, "default", "STALE"]
    drawn = [t for t in charts.recency_chart(stale, result.config).data if t.mode == "lines"]
    assert [t.name for t in drawn if t.visible == "legendonly"] == ["no expiry: user_provided" + charts.NO_FACT_SUFFIX]

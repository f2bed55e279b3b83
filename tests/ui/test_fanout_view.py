"""crp_ui.fanout_view: the Fan-out page's pure helpers (no Streamlit runtime, no model)."""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from crp_core.config import CRPConfig
from crp_core.model import Addressed
from crp_core.pipeline import run_pipeline
from crp_core.records import Duplicate, FanoutRun
from crp_ui import fanout_view as fv
from tests.support.factories import make_corpus, make_scenario
from tests.support.fanout_topics import DIM, topic_vectors

# ---- a small fan-out run (3 topics, 2 sub-queries each, width 3) -----------------------------------


@pytest.fixture(scope="module")
def run():
    facts, vecs, subs, topics = topic_vectors()
    corpus = make_corpus(facts, vecs)
    scen = make_scenario(
        topics.sum(axis=0), sub_queries=subs + [("done", np.eye(DIM)[4])], addressed=[("done", 0.9)], fanout_width=3
    )
    res = run_pipeline(corpus, scen, CRPConfig())
    assert res.fanout is not None
    return corpus, scen, res


# ---- page overrides ---------------------------------------------------------------------------------
@pytest.mark.parametrize("given_, want", [(0, 1), (1, 1), (3, 3), (8, 8), (12, 8), (-2, 1), (None, 1), ("x", 1)])
def test_clamp_width(given_, want):
    assert fv.clamp_width(given_) == want


def test_page_scenario_unchanged_is_the_same_object(run):
    _, scen, _ = run
    residual = [sq.id for sq in scen.residual_set]
    assert fv.page_scenario(scen, width=3, residual_ids=residual, branch_depth_weight=0.7) is scen


def test_page_scenario_moves_sub_queries_between_residual_set_and_coverage(run):
    _, scen, _ = run
    s2 = fv.page_scenario(scen, width=2, residual_ids=["s0a", "s2b", "done"], branch_depth_weight=0.55)
    assert s2.fanout_width == 2
    assert [sq.id for sq in s2.residual_set] == ["s0a", "s2b", "done"]
    # 'done' left the Coverage Set; the others joined it with depth 0.55, window = latest window (1)
    assert s2.addressed == tuple(Addressed(id=i, depth_weight=0.55, window=1) for i in ("s0b", "s1a", "s1b", "s2a"))
    assert scen.fanout_width == 3 and len(scen.addressed) == 1  # the original is untouched
    s3 = fv.page_scenario(scen, width=3, residual_ids=["s0a"], branch_depth_weight=0.2)
    # an entry addressed in the scenario keeps its own depth and window, and comes first
    assert s3.addressed[0] == Addressed(id="done", depth_weight=0.9, window=1)
    with pytest.raises(ValueError, match="nope"):
        fv.page_scenario(scen, width=3, residual_ids=["nope"], branch_depth_weight=0.7)


def test_page_config():
    c = CRPConfig()
    assert fv.page_config(c, 0.7) is c
    assert fv.page_config(c, 0.4).branch_depth_weight == 0.4
    assert fv.page_config(c, 0.4).diff(c) == {"branch_depth_weight": (0.4, 0.7)}


def test_inactive_reason():
    assert "no fan-out" in fv.inactive_reason(1, 5)
    assert "empty" in fv.inactive_reason(3, 0)
    assert fv.inactive_reason(2, 1) == ""


@pytest.mark.parametrize(
    "value, n, want",
    [
        (None, 5, (0, False)),
        ("", 5, (0, False)),
        ("1", 5, (0, False)),
        ("5", 5, (4, False)),
        (" 3 ", 5, (2, False)),
        ("6", 5, (0, True)),
        ("0", 5, (0, True)),
        ("-4", 5, (0, True)),
        ("abc", 5, (0, True)),
        ("3", 0, (0, False)),
    ],
)
def test_parse_step_param(value, n, want):
    idx, note = fv.parse_step_param(value, n)
    assert (idx, bool(note)) == want


def test_a_step_the_run_does_not_have_is_ignored_in_the_words_of_every_link_parameter():
    """Not clamped to the last step: ignored (step 1), as a view number out of its range is."""
    assert fv.parse_step_param("999", 10) == (0, "step=999: outside 1..10; ignored")
    assert fv.parse_step_param("abc", 10) == (0, "step=abc: not a whole number between 1 and 10; ignored")
    assert fv.parse_step_param("2.5", 10)[1] == "step=2.5: not a whole number between 1 and 10; ignored"


# ---- PCA projection --------------------------------------------------------------------------------
def test_projection_by_hand():
    # four unit vectors in the x-y plane, mean 0: var_y = 4 * 0.64 / 3, var_x = 4 * 0.36 / 3, cov_xy = 0
    # -> PC1 is the y axis (explained 0.64 / (0.64 + 0.36) = 0.64), PC2 the x axis (0.36); coordinates
    # |PC1| = 0.8, |PC2| = 0.6 for every point
    vec = {"a": [0.6, 0.8, 0.0], "b": [-0.6, -0.8, 0.0], "c": [0.6, -0.8, 0.0], "d": [-0.6, 0.8, 0.0]}
    proj = fv.project_partitions([["a", "c"], ["b", "d"]], vec)
    assert proj.components == 2
    assert proj.explained == pytest.approx((0.64, 0.36), abs=1e-12)
    pts = proj.points.set_index("sub_query")
    assert np.allclose(np.abs(pts["x"]), 0.8) and np.allclose(np.abs(pts["y"]), 0.6)
    assert list(pts["partition"]) == [0, 0, 1, 1]
    # centroid of {a, c} = (0.6, 0, 0): PC1 0, PC2 = +-0.6, on the side of a and c
    c = proj.centroids.set_index("partition")
    assert c.loc[0, "x"] == pytest.approx(0.0, abs=1e-12)
    assert c.loc[0, "y"] == pytest.approx(pts.loc["a", "y"]) and c.loc[1, "y"] == pytest.approx(-c.loc[0, "y"])
    assert "random_state=0" in proj.note


def test_projection_centroid_is_the_mean_of_its_members_and_deterministic():
    rng = np.random.default_rng(5)
    vec = {f"q{i}": rng.normal(size=10).tolist() for i in range(9)}
    parts = [["q0", "q3", "q4"], ["q1", "q2"], ["q5", "q6", "q7", "q8"]]
    proj = fv.project_partitions(parts, vec)
    for p, members in enumerate(parts):
        sub = proj.points[proj.points["partition"] == p]
        assert list(sub["sub_query"]) == members
        row = proj.centroids[proj.centroids["partition"] == p].iloc[0]
        # PCA is affine: the projected centroid is the mean of the projected members
        assert row["x"] == pytest.approx(sub["x"].mean()) and row["y"] == pytest.approx(sub["y"].mean())
        assert row["size"] == len(members)
    again = fv.project_partitions(parts, vec)
    assert again.points.equals(proj.points) and again.centroids.equals(proj.centroids)


def test_projection_addressed_points_do_not_change_the_fit():
    rng = np.random.default_rng(6)
    vec = {f"q{i}": rng.normal(size=8).tolist() for i in range(5)}
    vec["old"] = rng.normal(size=8).tolist()
    parts = [["q0", "q1"], ["q2", "q3", "q4"]]
    base = fv.project_partitions(parts, vec)
    withcov = fv.project_partitions(parts, vec, addressed_ids=["old", "missing"])
    assert withcov.explained == base.explained
    res = withcov.points[withcov.points["kind"] == "residual"].reset_index(drop=True)
    assert res.equals(base.points)
    cov = withcov.points[withcov.points["kind"] == "addressed"]
    assert list(cov["sub_query"]) == ["old"] and list(cov["partition"]) == [-1]


def test_projection_of_one_or_two_or_identical_sub_queries():
    one = fv.project_partitions([["a"]], {"a": [1.0, 2.0, 3.0]})
    assert one.components == 0 and list(one.points["x"]) == [0.0] and list(one.points["y"]) == [0.0]
    assert "nothing to project" in one.note
    # two unit vectors (1,0,0), (0,1,0): one component along their difference, at +-sqrt(2)/2
    two = fv.project_partitions([["a"], ["b"]], {"a": [2.0, 0.0, 0.0], "b": [0.0, 5.0, 0.0]})
    assert two.components == 1 and two.explained == pytest.approx((1.0,))
    assert sorted(np.abs(two.points["x"])) == pytest.approx([math.sqrt(2) / 2] * 2)
    assert list(two.points["y"]) == [0.0, 0.0]
    assert "one PCA component" in two.note
    same = fv.project_partitions([["a", "b"], ["c"]], {k: [1.0, 1.0] for k in "abc"})
    assert same.components == 0
    empty = fv.project_partitions([], {})
    assert empty.components == 0 and len(empty.points) == 0


@settings(max_examples=40, deadline=None)
@given(n=hst.integers(1, 9), dim=hst.integers(2, 12), seed=hst.integers(0, 10_000), k=hst.integers(1, 4))
def test_projection_never_crashes_and_keeps_every_sub_query(n, dim, seed, k):
    rng = np.random.default_rng(seed)
    ids = [f"s{i}" for i in range(n)]
    vec = {s: rng.normal(size=dim).tolist() for s in ids}
    k = min(k, n)
    parts = [ids[i::k] for i in range(k)]
    proj = fv.project_partitions(parts, vec)
    assert sorted(proj.points["sub_query"]) == sorted(ids)
    assert len(proj.centroids) == k
    assert np.isfinite(proj.points[["x", "y"]].to_numpy()).all()
    assert np.isfinite(proj.centroids[["x", "y"]].to_numpy()).all()
    assert 0 <= proj.components <= 2


def test_partition_figure_draws_every_point_and_centroid_escaped():
    vec = {"<b>a</b>": [1.0, 0.0, 0.0], "b": [0.2, 1.0, 0.0], "c": [0.0, 0.3, 1.0], "d": [1.0, 1.0, 0.0]}
    proj = fv.project_partitions([["<b>a</b>", "b"], ["c"]], vec, addressed_ids=["d"])
    fig = fv.partition_figure(proj).to_dict()
    names = [t["name"] for t in fig["data"]]
    assert names == ["partition 0 (branch 0)", "partition 1 (branch 1)", "addressed (Coverage Set)", "centroids"]
    drawn = {t["name"]: [html.unescape(c[0]) for c in t["customdata"]] for t in fig["data"][:3]}
    assert drawn == {
        "partition 0 (branch 0)": ["<b>a</b>", "b"],
        "partition 1 (branch 1)": ["c"],
        "addressed (Coverage Set)": ["d"],
    }
    shown = " ".join(str(t.get("text")) + str(t.get("hovertext")) for t in fig["data"])
    assert "<b>a</b>" not in shown and "&lt;b&gt;a&lt;/b&gt;" in shown
    assert [c[0] for c in fig["data"][3]["customdata"]] == [0, 1]
    # where each point is drawn is the projection's
    xs = {html.unescape(c[0]): x for t in fig["data"][:3] for c, x in zip(t["customdata"], t["x"])}
    assert xs == dict(zip(proj.points["sub_query"], proj.points["x"]))
    assert fig["layout"]["xaxis"]["title"]["text"].startswith("PC1 (")


def test_partition_figure_of_a_single_point_is_centred():
    proj = fv.project_partitions([["a"]], {"a": [1.0, 0.0]})
    fig = fv.partition_figure(proj).to_dict()
    assert fig["data"][0]["x"] == [0.0] and fig["data"][0]["y"] == [0.0]
    assert fig["layout"]["xaxis"]["title"]["text"] == "PC1"


# ---- stepper helpers over a real run -----------------------------------------------------------------
def test_step_labels(run):
    _, _, res = run
    fan = res.fanout
    labels = [fv.step_label(s) for s in fan.steps]
    assert labels[0].startswith("T0 · Parent · ")
    assert labels[1] == "T0 · Parent · ResidualSet split into 3 disjoint partitions (k-means)"
    assert labels[2] == "T1 · Branch 0 · read-only snapshot of the Coverage Set"
    assert labels[5] == "T1 · Branch 0 · retrieves for its own partition only"
    assert labels[8].startswith("T2 · Branch 0 · local coverage additions")
    assert labels[-2].startswith("T3 · Parent · Fan-in")
    assert labels[-1].startswith("T3 · Parent · Cross-branch dedup")
    naive = [fv.step_label(s) for s in fan.naive_steps]
    assert naive[1] == "T1 · Branch 0 · reads the shared Coverage Set and retrieves"
    assert naive[4] == "T2 · Branch 0 · writes into the shared Coverage Set"
    assert naive[-1].startswith("T3 · Parent · ")


def test_naive_step_alignment(run):
    _, _, res = run
    fan = res.fanout
    kinds = [(s.kind, s.branch) for s in fan.steps]
    got = [fv.naive_step_for(s, fan.naive_steps) for s in fan.steps]
    # parent, partition, 3 snapshots -> naive T0; retrieval b -> naive 1 + b; additions b -> naive 4 + b;
    # merge -> last naive write (6); dedup -> naive result (7)
    assert kinds[:5] == [("parent", None), ("partition", None), ("snapshot", 0), ("snapshot", 1), ("snapshot", 2)]
    assert got == [0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 6, 7]
    for s, n in zip(fan.steps, got):
        ns = fan.naive_steps[n]
        if s.kind in ("retrieval", "additions"):
            assert (ns.kind, ns.branch) == (s.kind, s.branch)
    assert fv.naive_step_for(fan.steps[0], ()) == 0


def test_coverage_frame_reads_depths(run):
    _, scen, res = run
    fan = res.fanout
    step = next(s for s in fan.steps if s.kind == "additions")
    frame = fv.coverage_frame(step, scen, CRPConfig(branch_depth_weight=0.4))
    assert list(frame["entry"]) == list(step.coverage)
    assert frame.loc[frame["entry"] == "done", "depth_weight"].item() == 0.9
    assert frame.loc[frame["entry"] == "done", "origin"].item() == "addressed"
    adds = frame[frame["entry"] != "done"]
    assert set(adds["depth_weight"]) == {0.4} and set(adds["origin"]) == {"branch addition"}
    assert list(frame.loc[frame["added"], "entry"]) == list(step.added)
    tips = fv.coverage_tips(frame)
    assert tips["done"] == "addressed, depth 0.9, label done"


def test_step_facts_frame_shows_the_stored_factors(run):
    corpus, _, res = run
    fan = res.fanout
    step = next(s for s in fan.steps if s.kind == "retrieval")
    branch = fan.partitioned.branches[step.branch]
    frame = fv.step_facts_frame(step, corpus, duplicates={step.facts[0]: (0, 2)})
    assert list(frame["fact_id"]) == list(branch.selected) == list(step.facts)
    rows = [corpus.kb.index_of(f) for f in branch.selected]
    pos = [int(np.flatnonzero(branch.cdr.idx == r)[0]) for r in rows]
    assert list(frame["cdr_score"]) == [float(branch.cdr.cdr_score[p]) for p in pos]
    assert list(frame["novelty"]) == [float(branch.cdr.novelty[p]) for p in pos]
    assert list(frame["residual_pull"]) == [float(branch.cdr.residual_pull[p]) for p in pos]
    assert list(frame["rank"]) == list(range(1, len(frame) + 1))
    assert frame["also_chosen_by"].iloc[0] == ("branch 2" if step.branch == 0 else "branch 0, branch 2")
    assert frame["content"].iloc[0] == corpus.kb.get(step.facts[0]).content
    empty = fv.step_facts_frame(fan.steps[0], corpus)
    assert len(empty) == 0 and "cdr_score" in empty.columns


def _run_with(branches_selected, duplicates, merged, depth=5, fan_in_dedup=False):
    from crp_core.records import BranchResult

    branches = tuple(
        BranchResult(branch=i, sub_queries=(f"s{i}",), cdr=None, selected=tuple(sel), coverage_additions=(f"s{i}",))
        for i, sel in enumerate(branches_selected)
    )
    return FanoutRun(
        mode="naive",
        partitions=tuple((f"s{i}",) for i in range(len(branches))),
        branches=branches,
        duplicates=tuple(duplicates),
        merged=tuple(merged),
        coverage_depth=depth,
        fan_in_dedup=fan_in_dedup,
    )


def test_duplicates_helpers_and_dedup_frame():
    dups = [
        Duplicate(("a",), (0, 2), 1.0, kept="a", removed_at_fan_in=True),
        Duplicate(("b",), (0, 1), 1.0, kept="b", removed_at_fan_in=True),
        Duplicate(("c", "d"), (1, 2), 0.97, kept="c", removed_at_fan_in=True),
    ]
    run_ = _run_with([["a", "b"], ["b", "c"], ["a", "d"]], dups, ["a", "b", "c"], fan_in_dedup=True)
    assert fv.chosen_by_several(run_) == {"a": (0, 2), "b": (0, 1)}
    assert fv.duplicate_fact_ids(run_) == frozenset("abcd")
    assert fv.picks(run_) == 6
    texts = {"a": "Alpha  fact\nwith a line break", "c": "x" * 60}
    frame = fv.dedup_frame(run_, texts)
    assert list(frame.columns) == ["fate", "facts", "kind", "branches", "similarity", "kept", "fact_ids"]
    # the facts as text (shortened to SHORT_TEXT, on one line), the ids last
    assert list(frame["facts"]) == ["Alpha fact with a line break", "b", "x" * 47 + "… ~ d"]
    assert list(frame["fact_ids"]) == ["a", "b", "c ~ d"]
    assert list(frame["fate"]) == [fv.REMOVED_AT_FAN_IN] * 3
    assert list(frame["kind"]) == ["same fact", "same fact", "near-duplicates by cosine"]
    assert list(frame["branches"]) == ["0, 2", "0, 1", "1, 2"]
    assert list(frame["kept"]) == ["a", "b", "c"]
    assert list(frame["similarity"]) == [1.0, 1.0, 0.97]
    assert fv.duplicates_sentence(run_) == "0 duplicate(s) reach the model; 3 caught and removed at fan-in"
    race = _run_with([["a"], ["a"]], [Duplicate(("a",), (0, 1), 1.0, kept="a")], ["a"])
    assert list(fv.dedup_frame(race)["fate"]) == [fv.REACHED_MODEL]
    assert list(fv.dedup_frame(race)["kept"]) == ["every copy"]
    assert fv.duplicates_sentence(race) == "1 of 1 duplicate(s) reach the model (the race has no fan-in dedup)"
    assert fv.dedup_report_text(run_) == (
        "Cross-branch dedup report: 3 duplicate(s), 3 caught and removed at fan-in (one copy kept each), "
        "0 reaching the model (3 distinct facts)."
    )
    assert fv.dedup_report_text(race) == (
        "Cross-branch dedup report: 1 duplicate(s), 1 reaching the model: the race has no fan-in dedup "
        "(1 distinct facts)."
    )
    assert fv.dedup_report_text(_run_with([["a"]], [], ["a"], fan_in_dedup=True)) == (
        "Cross-branch dedup report: 0 duplicates (1 distinct facts); 0 reach the model."
    )


def test_comparison_frame_and_strip(run):
    _, _, res = run
    fan = res.fanout
    comp = fv.comparison_frame(fan).set_index("measure")
    assert list(comp.index) == [
        "fan-out duplicates",
        "duplicates reaching the model",
        "duplicates removed at fan-in",
        "distinct facts covered",
        "coverage entries after merge",
        "facts chosen (with repeats)",
    ]
    assert tuple(comp.loc["fan-out duplicates"]) == (fan.naive.duplicate_count, fan.partitioned.duplicate_count)
    assert tuple(comp.loc[fv.REACHING_MODEL]) == (fan.naive.reaching_model, fan.partitioned.reaching_model)
    assert tuple(comp.loc[fv.REMOVED]) == (fan.naive.removed_at_fan_in, fan.partitioned.removed_at_fan_in)
    assert tuple(comp.loc["distinct facts covered"]) == (len(fan.naive.merged), len(fan.partitioned.merged))
    assert tuple(comp.loc["coverage entries after merge"]) == (fan.naive.coverage_depth, fan.partitioned.coverage_depth)
    assert comp.loc["facts chosen (with repeats)", "naive"] == sum(len(b.selected) for b in fan.naive.branches)
    # three topics, round-robin branches mix them: the naive run repeats facts and hands them to the model,
    # the partitioned one has none to remove
    assert comp.loc[fv.REACHING_MODEL, "naive"] == fan.naive.duplicate_count > 0
    assert comp.loc[fv.REACHING_MODEL, "partitioned"] == 0 == comp.loc[fv.REMOVED, "partitioned"]


def test_same_step_keeps_the_steps_meaning_across_widths(run):
    _, _, res = run
    steps = res.fanout.steps  # width 3: parent, partition, 3 x (snapshot, retrieval, additions), merge, dedup
    retrieval_2 = next(s.index for s in steps if s.kind == "retrieval" and s.branch == 2)
    assert fv.same_step(steps, "retrieval", 2) == (retrieval_2, "")
    assert fv.same_step(steps, "dedup", None) == (len(steps) - 1, "")
    # a branch this width does not run: the same kind for the last branch there is, said so
    assert fv.same_step(steps, "retrieval", 4) == (retrieval_2, "branch 4 does not run at this width; showing branch 2")
    assert fv.same_step(steps, "nope", None) == (0, "no nope step in this run; showing step 1")


def test_fact_chips_show_text_and_keep_the_id_in_the_tip():
    texts = {"f1": "The <b>etcd</b> client port is 2379", "f2": "y" * 80}
    out = fv.chips_html(["f1", "f2"], kind="fact", labels=fv.fact_labels(texts), tips=fv.fact_tips(texts))
    chips = re.findall(r'<span class="crp-fact" data-id="([^"]*)" data-hl="0" title="([^"]*)">([^<]*)</span>', out)
    assert [(i, html.unescape(t), html.unescape(x)) for i, t, x in chips] == [
        ("f1", "f1: The <b>etcd</b> client port is 2379", "The <b>etcd</b> client port is 2379"),
        ("f2", "f2: " + "y" * 80, "y" * 47 + "…"),
    ]
    assert "<b>" not in out


def test_timeline_folds_long_rows_of_facts(run):
    _, _, res = run
    fan = res.fanout
    out = fv.timeline_html(fan.steps, len(fan.steps) - 1, labels={}, tips={})
    long_rows = [s for s in fan.steps if s.facts and len(s.facts) > fv.FOLD_FACTS]
    assert long_rows and out.count('<details class="crp-fold"><summary>facts (') == len(long_rows)
    short_rows = [s for s in fan.steps if 0 < len(s.facts) <= fv.FOLD_FACTS]
    assert out.count("facts: <span") == len(short_rows)


# ---- HTML (escaping, highlights) ---------------------------------------------------------------------
NASTY = ['<img src=x onerror="alert(1)">', "a&b", "x*y_z", "line\nbreak", "$e=mc^2$", "[link](javascript:x)"]


def test_chips_escape_and_mark_highlights():
    out = fv.chips_html(NASTY + ["plain"], highlight=["plain", NASTY[0]], tips={"plain": "<i>tip</i>"})
    assert "<img" not in out and "<i>" not in out and 'onerror="' not in out
    chips = re.findall(r'<span class="crp-cov" data-id="([^"]*)" data-hl="([01])"', out)
    assert [html.unescape(c[0]) for c in chips] == [s.replace("\n", " ") for s in NASTY] + ["plain"]
    assert [c[1] for c in chips] == ["1", "0", "0", "0", "0", "0", "1"]
    assert 'title="&lt;i&gt;tip&lt;/i&gt;"' in out
    assert "(empty)" in fv.chips_html([])


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.text(min_size=1, max_size=20), min_size=1, max_size=5, unique=True))
def test_chips_never_emit_raw_markup(ids):
    out = fv.chips_html(ids, highlight=ids[:1], tips={i: i for i in ids})
    # attribute values are escaped (no quote, < or >), so every tag matches this and nothing else remains
    body = re.sub(r'<span(?: [a-z-]+="[^"<>]*")*>|</span>|<br>', "", out)
    assert "<" not in body and ">" not in body
    assert "\n" not in out


def test_timeline_rows_up_to_the_current_step(run):
    _, _, res = run
    fan = res.fanout
    dups = fv.chosen_by_several(fan.naive)
    out = fv.timeline_html(fan.naive_steps, 3, duplicates=dups.keys(), title="Race <timeline>")
    rows = re.findall(r'<div class="crp-step( crp-current)?" data-index="(\d+)"', out)
    assert [int(i) for _, i in rows] == [0, 1, 2, 3]
    assert [bool(c) for c, _ in rows] == [False, False, False, True]
    assert "Race &lt;timeline&gt;" in out
    hl = {
        html.unescape(i) for i, h in re.findall(r'class="crp-fact" data-id="([^"]*)" data-hl="([01])"', out) if h == "1"
    }
    shown = {f for s in fan.naive_steps[:4] for f in s.facts}
    assert hl == shown & set(dups)
    assert "T1" in out and "Branch 2" in out


def test_rule_text():
    assert "one sub-query per partition" in fv.rule_text(fv.RULE_ONE_EACH, 3, 4)
    assert "k-means (k = 3)" in fv.rule_text(fv.RULE_KMEANS, 6, 3)
    assert "single partition" in fv.rule_text(fv.RULE_SINGLE, 6, 1)


def test_partitions_frame(run):
    _, scen, res = run
    frame = fv.partitions_frame(res.fanout, scen)
    assert [tuple(frame.loc[frame["partition"] == p, "sub_query"]) for p in range(3)] == [
        tuple(p) for p in res.fanout.partitioned.partitions
    ]
    assert set(frame["text"]) == {f"sub-query {s}" for s in frame["sub_query"]}
    # shown whole in a wrapping table: the branch names the partition, the text is kept whole
    shown = fv.partitions_table(frame)
    assert list(shown["text"]) == list(frame["text"]) and list(shown["branch"]) == list(frame["branch"])
    labelled = frame.assign(label=["a label"] + [""] * (len(frame) - 1))
    assert list(fv.partitions_table(labelled).columns) == ["branch", "sub-query", "label", "text"]
    assert list(fv.partitions_table(frame.assign(label="")).columns) == ["branch", "sub-query", "text"]


def test_two_facts_whose_shortened_texts_read_the_same_show_their_ids():
    """Two luggage rules that differ only past the cut: each chip names its fact; a unique text stays bare."""
    head = "Each passenger may carry up to three items of luggage "
    texts = {"f1": head + "on intercity trains.", "f2": head + "on regional trains.", "f3": "Dogs travel free."}
    labels = fv.fact_labels(texts)
    assert labels == {"f1": head[:47] + "… (f1)", "f2": head[:47] + "… (f2)", "f3": "Dogs travel free."}

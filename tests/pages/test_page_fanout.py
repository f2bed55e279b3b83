"""The Fan-out simulator page driven by Streamlit's AppTest.

Synthetic tests use their own samples folder (30 facts around 3 topics with 8-d embeddings, model
"test-model"): no model loads. The expected step states come from an independent
``crp_core.pipeline.run_pipeline`` over the same files, never from the page. The bundled-sample tests
(marker ``model``) load MiniLM and check every sample scenario step by step.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_core.io.scenario import load_scenario
from crp_core.pipeline import run_pipeline
from crp_ui import fanout_view as fv
from tests.support.pages import figures
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT
APP = str(REPO / "app.py")
PAGE = "pages/fanout.py"
TIMEOUT = 120
MODEL_TIMEOUT = 900
MODEL = "test-model"
DIM = 8
SCENARIO = "a_fan.json"

COV = re.compile(r'<div class="crp-coverage" data-mode="(\w+)" data-step="(\d+)"[^>]*>(.*?)</div>', re.S)
CHIP = re.compile(r'<span class="crp-cov" data-id="([^"]*)" data-hl="([01])"(?: title="([^"]*)")?')


# ---- synthetic samples -------------------------------------------------------------------------------
def _topics() -> np.ndarray:
    return np.eye(DIM)[:4] * 1.0


def _fact_rows() -> list[dict]:
    """10 facts per topic (topics 0-2), vectors topic + 0.25 * noise (seed 7)."""
    rng = np.random.default_rng(7)
    rows = []
    for t in range(3):
        for j in range(10):
            v = _topics()[t] + 0.25 * rng.normal(size=DIM)
            rows.append(
                {
                    "fact_id": f"t{t}-{j:02d}",
                    "content": f"Topic {t} fact {j} <b>not bold</b>",
                    "source_type": "official_documentation",
                    "modified_at": "2026-01-01T00:00:00Z",
                    "embedding": [round(float(x), 6) for x in v],
                    "embedding_model": MODEL,
                }
            )
    return rows


def _scenario(width: int = 3, **over: Any) -> dict:
    """Six ResidualSet sub-queries (two per topic, listed t0,t0,t1,t1,t2,t2) + one addressed (topic 3)."""
    rng = np.random.default_rng(11)
    tp = _topics()
    subs = []
    for t in range(3):
        for k in "ab":
            subs.append(
                {
                    "id": f"sq{t}{k}",
                    "text": f"topic {t} question {k}",
                    "label": f"topic{t}",
                    "embedding": [float(x) for x in tp[t] + 0.1 * rng.normal(size=DIM)],
                }
            )
    subs.append({"id": "done", "text": "already covered", "embedding": [float(x) for x in tp[3]]})
    d = {
        "name": "fan",
        "query": {"text": "all topics", "embedding": [float(x) for x in tp[:3].sum(axis=0)]},
        "now": "2026-06-01T00:00:00Z",
        "sub_queries": subs,
        "addressed": [{"id": "done", "depth_weight": 0.9, "window": 2}],
        "prior_outputs": [],
        "fanout_width": width,
        "embedding_model": MODEL,
    }
    d.update(over)
    return d


def _write_samples(d: Path) -> Path:
    (d / "scenarios").mkdir(parents=True)
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for r in _fact_rows():
            fh.write(json.dumps(r) + "\n")
    (d / "scenarios" / SCENARIO).write_text(json.dumps(_scenario()), encoding="utf-8")
    nasty = _scenario(width=2)
    nasty["sub_queries"][0]["id"] = "<img src=x onerror=alert(1)>"
    nasty["sub_queries"][1]["text"] = "<script>alert(2)</script>"
    (d / "scenarios" / "b_escape.json").write_text(json.dumps(nasty), encoding="utf-8")
    (d / "scenarios" / "c_narrow.json").write_text(json.dumps(_scenario(width=0)), encoding="utf-8")
    return d


@pytest.fixture
def fan_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = _write_samples(tmp_path / "samples")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return d


def _expected(samples: Path, name: str, tmp: Path, *, scenario_change=None, config_change=None) -> Any:
    """The pipeline's own result for the bundled files (independent of the page)."""
    kb = load_ckf(str(samples / "knowledge_base.jsonl"))
    scen = load_scenario(str(samples / "scenarios" / name))
    config = CRPConfig().with_overrides(dict(scen.config or {}))
    if scenario_change:
        scen = scenario_change(scen)
    if config_change:
        config = config_change(config)
    corpus = prepare_corpus(kb, config=config, cache_dir=tmp)
    return run_pipeline(corpus, scen, config, now=scen.now)


# ---- AppTest helpers -------------------------------------------------------------------------------
def _open(timeout: float = TIMEOUT, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params.update(query)
    at.run()
    _ok(at)
    at.switch_page(PAGE).run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _coverage(at: AppTest, mode: str) -> tuple[int, list[str], list[str], list[str]]:
    """(step index, entries shown, highlighted entries, chip titles) of the Coverage Set block ``mode``."""
    for m in at.html:
        hit = COV.search(m.value)
        if hit and hit.group(1) == mode:
            chips = CHIP.findall(hit.group(3))
            return (
                int(hit.group(2)),
                [html.unescape(c[0]) for c in chips],
                [html.unescape(c[0]) for c in chips if c[1] == "1"],
                [html.unescape(c[2]) for c in chips],
            )
    raise AssertionError(f"no {mode} Coverage Set block on the page")


def _plain(md: str) -> str:
    """Markdown text without the backslash escapes of ``render.md_escape``."""
    return re.sub(r"\\(.)", r"\1", md)


def _shown(elements, text: str) -> bool:
    return any(text in _plain(e.value) for e in elements)


def _widget(elements, label: str):
    hits = [w for w in elements if w.label == label]
    assert len(hits) == 1, (label, [w.label for w in elements])
    return hits[0]


def _comparison(at: AppTest) -> dict[str, tuple[int, int]]:
    """The comparison strip's metrics: measure -> (naive, partitioned); each metric shows the partitioned
    value and its difference from the naive one."""
    measures = {
        "duplicates reaching the model",
        "duplicates removed at fan-in",
        "distinct facts covered",
        "coverage entries after merge",
    }
    got = {m.label: (int(m.value) - int(m.delta), int(m.value)) for m in at.metric if m.label in measures}
    assert got, "no comparison strip"
    assert not [m for m in at.metric if m.label == "fan-out duplicates"]  # shown as its two parts
    return got


def _check_step(at: AppTest, fan: Any, idx: int) -> None:
    """The page shows step ``idx``: session state, URL, both Coverage Sets equal to the step states."""
    assert at.session_state["crp.fanout.step"] == idx
    assert at.query_params.get("step") == str(idx + 1)
    step = fan.steps[idx]
    shown_idx, shown, hl, _ = _coverage(at, "partitioned")
    assert shown_idx == step.index
    assert shown == list(step.coverage), (idx, step.kind)
    assert hl == list(step.added), (idx, step.kind)
    nstep = fan.naive_steps[fv.naive_step_for(step, fan.naive_steps)]
    n_idx, n_shown, n_hl, _ = _coverage(at, "naive")
    assert (n_idx, n_shown, n_hl) == (nstep.index, list(nstep.coverage), list(nstep.added))
    assert any(m.value.startswith(f"Step **{idx + 1}** of {len(fan.steps)}: ") for m in at.markdown)
    if step.kind == "retrieval":  # the facts table holds the branch's stored factors, unrounded
        frames = [d.value for d in at.dataframe if "cdr_score" in d.value.columns]
        got = frames[0]
        assert list(got["fact_id"]) == list(step.facts)
        assert list(got["cdr_score"]) == [s["cdr_score"] for s in step.detail["scores"]]
        assert list(got["novelty"]) == [s["novelty"] for s in step.detail["scores"]]
        assert list(got["residual_pull"]) == [s["residual_pull"] for s in step.detail["scores"]]


def _step_all_the_way(at: AppTest, fan: Any) -> None:
    """Next to the last step, then Previous back to the first, checking every state."""
    n = len(fan.steps)
    _check_step(at, fan, 0)
    assert at.button(key="crp.fanout.prev").disabled
    for i in range(1, n):
        at.button(key="crp.fanout.next").click().run()
        _ok(at)
        _check_step(at, fan, i)
    assert at.button(key="crp.fanout.next").disabled
    for i in range(n - 2, -1, -1):
        at.button(key="crp.fanout.prev").click().run()
        _ok(at)
        _check_step(at, fan, i)
    assert at.button(key="crp.fanout.prev").disabled


# ---- synthetic: stepping -----------------------------------------------------------------------------
def test_stepping_forward_and_back_matches_the_pipeline_step_states(fan_env, tmp_path):
    fan = _expected(fan_env, SCENARIO, tmp_path / "c2").fanout
    assert fan is not None
    # 6 sub-queries > width 3 -> k-means; parent, partition, 3 x (snapshot, retrieval, additions), merge, dedup
    assert len(fan.steps) == 2 + 3 * 3 + 2
    at = _open(scenario=SCENARIO)
    code = [c.value for c in at.code]
    assert "CRP-Context-Coverage-Partitions: 3" in code
    _step_all_the_way(at, fan)


def test_partitions_table_and_comparison_strip_come_from_the_records(fan_env, tmp_path):
    fan = _expected(fan_env, SCENARIO, tmp_path / "c2").fanout
    at = _open(scenario=SCENARIO)
    # a static table that wraps its cells (a dataframe cut the sub-queries' text in the view's narrow column),
    # the sub-queries' text whole
    (parts,) = [t.value for t in at.table if "sub-query" in t.value.columns]
    shown = [tuple(parts.loc[parts["branch"] == f"Branch {p}", "sub-query"]) for p in range(len(set(parts["branch"])))]
    assert shown == [tuple(p) for p in fan.partitioned.partitions]
    texts = {sq.id: sq.text for sq in load_scenario(str(fan_env / "scenarios" / SCENARIO)).sub_queries}
    assert [_plain(t) for t in parts["text"]] == [texts[s] for s in parts["sub-query"]]
    assert not [d for d in at.dataframe if "sub_query" in d.value.columns or "sub-query" in d.value.columns]
    # k-means on three well separated topics groups the two sub-queries of each topic
    assert sorted(shown) == [("sq0a", "sq0b"), ("sq1a", "sq1b"), ("sq2a", "sq2b")]
    assert _shown(at.markdown, "k-means (k = 3)")
    # the partition view: one point per ResidualSet sub-query in its partition's colour, one cross per
    # partition (a plotly scatter)
    (fig,) = figures(at)
    drawn = [(c[0], c[1]) for t in fig["data"] if t["name"] != "centroids" for c in t["customdata"]]
    want = [(sid, p) for p, part in enumerate(fan.partitioned.partitions) for sid in part]
    assert sorted(d for d in drawn if d[1] != -1) == sorted(want)
    # the addressed sub-queries (the Coverage Set) as grey rings, for context
    assert [d[0] for d in drawn if d[1] == -1] == ["done"]
    (centroids,) = [t for t in fig["data"] if t["name"] == "centroids"]
    assert len(centroids["x"]) == len(fan.partitioned.partitions)
    comp = _comparison(at)
    assert comp["duplicates reaching the model"] == (fan.naive.reaching_model, fan.partitioned.reaching_model)
    assert comp["duplicates removed at fan-in"] == (fan.naive.removed_at_fan_in, fan.partitioned.removed_at_fan_in)
    assert comp["distinct facts covered"] == (len(fan.naive.merged), len(fan.partitioned.merged))
    assert comp["coverage entries after merge"] == (fan.naive.coverage_depth, fan.partitioned.coverage_depth)
    # this decomposition is built for the race: naive branches share topics and hand the duplicates to the
    # model, partitions do not
    assert comp["duplicates reaching the model"] == (fan.naive.duplicate_count, 0) and fan.naive.duplicate_count > 0
    n = fan.naive.duplicate_count
    assert _shown(at.markdown, "Partitioned (SPEC-027):** 0 duplicate(s) reach the model; 0 caught and removed")
    assert _shown(at.markdown, f"Naive race:** {n} of {n} duplicate(s) reach the model (the race has no fan-in dedup)")


def test_step_list_click_and_url_deep_link(fan_env, tmp_path):
    fan = _expected(fan_env, SCENARIO, tmp_path / "c2").fanout
    n = len(fan.steps)
    at = _open(scenario=SCENARIO)
    _widget(at.radio, "Steps").set_value(6).run()
    _ok(at)
    _check_step(at, fan, 6)
    at.button(key="crp.fanout.next").click().run()
    _check_step(at, fan, 7)
    assert _widget(at.radio, "Steps").value == 7
    # a link to step 9 (1-based) opens there in a new session
    at2 = _open(scenario=SCENARIO, step="9")
    _check_step(at2, fan, 8)
    # out of range / not a number: ignored (step 1), with the warning every link parameter gives, above the
    # page; spent once the user moves to another step
    at3 = _open(scenario=SCENARIO, step=str(n + 5))
    _check_step(at3, fan, 0)
    said = f"Link parameter ignored: step={n + 5}: outside 1..{n}; ignored"
    assert _shown(at3.main.warning, said), [w.value for w in at3.main.warning]
    at3.run()
    assert _shown(at3.main.warning, said)  # a rerun keeps it
    at3.button(key="crp.fanout.next").click().run()
    _check_step(at3, fan, 1)
    assert not _shown(at3.main.warning, "Link parameter ignored: step=")
    at4 = _open(scenario=SCENARIO, step="abc")
    _check_step(at4, fan, 0)
    assert _shown(at4.main.warning, f"Link parameter ignored: step=abc: not a whole number between 1 and {n}; ignored")
    # the shell's own parameters are kept next to ours
    assert at4.query_params.get("scenario") == SCENARIO


FACT_CHIP = re.compile(r'<span class="crp-fact" data-id="([^"]*)" data-hl="[01]" title="([^"]*)">(?:⚠ )?([^<]*)</span>')


def test_facts_show_as_text_with_the_id_on_hover(fan_env, tmp_path):
    """The fan-in union and the timelines show each fact's text (escaped, shortened) with its id in the
    hover title; the dedup tables lead with the fate and the facts' text, the ids last."""
    fan = _expected(fan_env, SCENARIO, tmp_path / "c2").fanout
    merge = next(s.index for s in fan.steps if s.kind == "merge")
    at = _open(scenario=SCENARIO, step=str(merge + 1))
    _check_step(at, fan, merge)
    union = [m.value for m in at.html if "crp-fact" in m.value and "crp-timeline" not in m.value]
    assert len(union) == 1
    chips = [(i, html.unescape(t), html.unescape(x)) for i, t, x in FACT_CHIP.findall(union[0])]
    assert [c[0] for c in chips] == list(fan.steps[merge].facts)
    for fid, tip, label in chips:
        content = f"Topic {fid[1]} fact {int(fid[3:])} <b>not bold</b>"
        assert tip == f"{fid}: {content}" and label == content
    assert "<b>" not in union[0]
    assert any(e.label.startswith(f"Union of the branches' facts ({len(fan.steps[merge].facts)},") for e in at.expander)
    at.button(key="crp.fanout.next").click().run()  # the dedup step: the naive race's table
    frames = [d.value for d in at.dataframe if "fate" in d.value.columns]
    assert len(frames) == 1  # the partitioned run has no duplicate here, the race has
    naive = frames[0]
    assert list(naive.columns[:2]) == ["fate", "facts"] and list(naive.columns)[-1] == "fact_ids"
    assert list(naive["fate"]) == [fv.REACHED_MODEL] * fan.naive.duplicate_count
    assert list(naive["fact_ids"]) == [" ~ ".join(d.fact_ids) for d in fan.naive.duplicates]
    assert _shown(at.error, f"{fan.naive.duplicate_count} reaching the model: the race has no fan-in dedup")


def test_stepping_never_reruns_the_pipeline(fan_env, tmp_path, monkeypatch):
    from crp_ui import cache as pipeline  # the dashboard's one call of crp_core.run_pipeline

    calls: list[int] = []
    real = pipeline.run_pipeline

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(pipeline, "run_pipeline", counting)
    import streamlit as st

    st.cache_resource.clear()  # results of earlier tests (same files) would hide the first run
    at = _open(scenario=SCENARIO)
    before = len(calls)
    assert before >= 1  # the page's run (and the base run of the other pages, which is the same here)
    for _ in range(4):
        at.button(key="crp.fanout.next").click().run()
        _ok(at)
    at.button(key="crp.fanout.prev").click().run()
    assert at.session_state["crp.fanout.step"] == 3
    assert len(calls) == before


def test_operator_decisions_reach_this_pages_run(fan_env, tmp_path, monkeypatch):
    """The page's own run gets the triage decisions in force, like every other page."""
    import crp_ui.decisions as triage_decisions
    from crp_ui import cache as pipeline  # the dashboard's one call of crp_core.run_pipeline

    seen: list[Any] = []
    real = pipeline.run_pipeline

    def spying(*a, **k):
        seen.append(k.get("decisions"))
        return real(*a, **k)

    marker = {"t0-00|t0-01": {"kind": "dismiss", "winner": None}}
    monkeypatch.setattr(pipeline, "run_pipeline", spying)
    monkeypatch.setattr(triage_decisions, "pipeline_decisions", lambda ds=None: (marker, "spy-key"))
    import streamlit as st

    st.cache_resource.clear()
    _open(scenario=SCENARIO)
    assert seen and all(d == marker for d in seen)


# ---- synthetic: controls -------------------------------------------------------------------------
def test_width_control_overrides_the_scenario_for_this_page(fan_env, tmp_path):
    at = _open(scenario=SCENARIO)
    _widget(at.slider, "fan-out width").set_value(2).run()
    _ok(at)
    fan = _expected(fan_env, SCENARIO, tmp_path / "c2", scenario_change=lambda s: s.replace(fanout_width=2)).fanout
    assert "CRP-Context-Coverage-Partitions: 2" in [c.value for c in at.code]
    assert at.session_state["crp.fanout.step"] == 0
    _step_all_the_way(at, fan)
    # the scenario itself is untouched (the control is page-local)
    assert at.session_state["crp.scenario"].fanout_width == 3
    _widget(at.slider, "fan-out width").set_value(1).run()
    _ok(at)
    assert _shown(at.info, "no fan-out")
    assert not any("CRP-Context-Coverage-Partitions" in c.value for c in at.code)
    assert _shown(at.markdown, "Why not a lock?")


def test_the_step_keeps_its_meaning_when_the_width_changes(fan_env, tmp_path):
    """At width 3 on branch 1's retrieval; at width 2 the stepper shows branch 1's retrieval there (another
    step number, said so, the URL following); at width 4 and back at 3 the same; a branch the width does not
    run falls back to the last branch, said so."""
    fans = {
        w: _expected(
            fan_env, SCENARIO, tmp_path / f"c{w}", scenario_change=lambda s, w=w: s.replace(fanout_width=w)
        ).fanout
        for w in (2, 3, 4)
    }

    def index(w: int, kind: str, branch: int | None) -> int:
        return next(s.index for s in fans[w].steps if s.kind == kind and s.branch == branch)

    at = _open(scenario=SCENARIO)
    _widget(at.radio, "Steps").set_value(index(3, "retrieval", 1)).run()
    _check_step(at, fans[3], index(3, "retrieval", 1))
    for w in (2, 4, 3):
        _widget(at.slider, "fan-out width").set_value(w).run()
        _ok(at)
        _check_step(at, fans[w], index(w, "retrieval", 1))
        assert _shown(at.info, "the stepper stays on the same step (retrieval, branch 1)")
    # branch 2 does not run at width 2: the last branch's step, said so
    _widget(at.radio, "Steps").set_value(index(3, "additions", 2)).run()
    _widget(at.slider, "fan-out width").set_value(2).run()
    _ok(at)
    _check_step(at, fans[2], index(2, "additions", 1))
    assert _shown(at.info, "branch 2 does not run at this width; showing branch 1")
    # moving on spends the note
    at.button(key="crp.fanout.next").click().run()
    assert not _shown(at.info, "the stepper stays on the same step")


def test_width_at_least_residual_size_gives_one_sub_query_each(fan_env, tmp_path):
    at = _open(scenario=SCENARIO)
    _widget(at.slider, "fan-out width").set_value(8).run()
    _ok(at)
    fan = _expected(fan_env, SCENARIO, tmp_path / "c2", scenario_change=lambda s: s.replace(fanout_width=8)).fanout
    assert fan.rule == fv.RULE_ONE_EACH and len(fan.partitioned.partitions) == 6
    assert "CRP-Context-Coverage-Partitions: 6" in [c.value for c in at.code]
    assert _shown(at.markdown, "one sub-query per partition")
    _check_step(at, fan, 0)


def test_residual_set_control_moves_sub_queries_into_the_coverage_set(fan_env, tmp_path):
    at = _open(scenario=SCENARIO)
    keep = ["sq0a", "sq1a", "sq2a", "sq2b"]
    _widget(at.multiselect, "ResidualSet (sub-queries still to cover)").set_value(keep).run()
    _ok(at)

    def change(s):
        return fv.page_scenario(s, width=3, residual_ids=keep, branch_depth_weight=0.7)

    fan = _expected(fan_env, SCENARIO, tmp_path / "c2", scenario_change=change).fanout
    # T0: the addressed entry, then the two sub-queries taken out of the ResidualSet, which become
    # addressed entries with the branch depth weight (0.7) in the scenario's latest window
    assert fan.steps[0].coverage == ("done", "sq0b", "sq1b")
    _step_all_the_way(at, fan)
    _, _, _, tips = _coverage(at, "partitioned")
    assert tips == ["addressed, depth 0.9", "addressed, depth 0.7, label topic0", "addressed, depth 0.7, label topic1"]


def test_branch_depth_weight_control(fan_env, tmp_path):
    at = _open(scenario=SCENARIO)
    _widget(at.slider, "branch depth weight").set_value(0.5).run()
    _ok(at)
    fan = _expected(
        fan_env, SCENARIO, tmp_path / "c2", config_change=lambda c: c.replace(branch_depth_weight=0.5)
    ).fanout
    idx = next(s.index for s in fan.steps if s.kind == "additions")
    _widget(at.radio, "Steps").set_value(idx).run()
    _ok(at)
    _check_step(at, fan, idx)
    _, shown, hl, tips = _coverage(at, "partitioned")
    # 'done' keeps its own depth 0.9; the branch's local additions are written with depth 0.5
    assert tips[0] == "addressed, depth 0.9"
    assert all(t.startswith("branch addition, depth 0.5") for e, t in zip(shown, tips) if e in hl) and hl
    assert _shown(at.html, "Local additions (depth 0.5)")
    assert at.session_state["crp.config"].branch_depth_weight == 0.7  # the sidebar config is untouched


def test_inactive_when_the_scenario_has_no_fanout(fan_env):
    at = _open(scenario="c_narrow.json")
    assert _widget(at.slider, "fan-out width").value == 1
    assert _shown(at.info, "no fan-out")
    _widget(at.slider, "fan-out width").set_value(3).run()
    _ok(at)
    assert "CRP-Context-Coverage-Partitions: 3" in [c.value for c in at.code]
    _widget(at.multiselect, "ResidualSet (sub-queries still to cover)").set_value([]).run()
    _ok(at)
    assert _shown(at.info, "ResidualSet is empty")


def test_untrusted_ids_and_texts_are_escaped(fan_env):
    at = _open(scenario="b_escape.json")
    # the page's HTML blocks are st.html elements (never re-parsed as Markdown)
    html_blocks = [m.value for m in at.html if "crp-" in m.value]
    assert not [m.value for m in at.markdown if "crp-" in m.value]
    assert html_blocks
    for block in html_blocks:
        assert "<img" not in block and "<script" not in block
    assert any("&lt;img src=x onerror=alert(1)&gt;" in b for b in html_blocks)
    # the id is still shown (escaped), in the ResidualSet of the T0 step
    at.button(key="crp.fanout.next").click().run()
    _ok(at)


# ---- bundled samples (MiniLM) -----------------------------------------------------------------------
SAMPLES = REPO / "sample_ckf"
SAMPLE_SCENARIOS = (
    sorted(p.name for p in (SAMPLES / "scenarios").glob("*.json")) if (SAMPLES / "scenarios").is_dir() else []
)


@pytest.fixture(scope="module")
def sample_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fanout-sample-cache")


@pytest.mark.model
@pytest.mark.parametrize("name", SAMPLE_SCENARIOS)
def test_sample_scenarios_step_by_step(name, sample_cache, monkeypatch):
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(SAMPLES))
    monkeypatch.setenv("CRP_CACHE_DIR", str(sample_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from crp_core.corpus.embedding import default_embedder

    kb = load_ckf(str(SAMPLES / "knowledge_base.jsonl"))
    scen = load_scenario(str(SAMPLES / "scenarios" / name))
    config = CRPConfig().with_overrides(dict(scen.config or {}))
    embedder = default_embedder()
    corpus = prepare_corpus(kb, embedder=embedder, config=config, cache_dir=sample_cache)
    fan = run_pipeline(corpus, scen, config, now=scen.now, embedder=embedder).fanout
    assert fan is not None, f"{name}: fan-out inactive"
    at = _open(timeout=MODEL_TIMEOUT, scenario=name)
    _step_all_the_way(at, fan)
    comp = _comparison(at)
    assert comp["duplicates reaching the model"] == (fan.naive.reaching_model, fan.partitioned.reaching_model)
    # every sample scenario is meant to show the race: naive > 0 reach the model, partitioned 0
    assert comp["duplicates reaching the model"][0] == fan.naive.duplicate_count > 0, name
    assert comp["duplicates reaching the model"][1] == 0, name
    assert comp["duplicates removed at fan-in"] == (0, fan.partitioned.duplicate_count), name

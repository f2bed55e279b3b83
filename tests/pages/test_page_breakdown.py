"""Score breakdown page: the table holds the pipeline's factors, filters/sorts over all
rows, follows the sidebar config, and the selected fact's CDR product is shown step by step."""

from __future__ import annotations

import math

import numpy as np

from crp_core import gate_note
from crp_ui import render
from tests.support.pages import (
    expected_result,
    figures,
    frame_with,
    run_page,
    sidebar_input,
    widget,
    write_bridge_sample,
)

K = "crp.page.breakdown."


def _table(at):
    return frame_with(at, "sel", "fact_id", "cdr_score", "outcome")


def _open_recency(at):
    """Open the recency curves' expander for the next run, as a user clicking it would."""
    from pages.breakdown import RECENCY_KEEP

    at.session_state[RECENCY_KEEP] = True
    return at


def _cdr_by_id(exp):
    kb = exp.corpus.kb
    return {kb.facts[r].fact_id: float(s) for r, s in zip(exp.cdr.idx.tolist(), exp.cdr.cdr_score.tolist())}


def test_table_holds_the_pipelines_factors(ui_env):
    exp = expected_result(ui_env)
    at = run_page("breakdown")
    table = _table(at)
    assert len(table) == len(exp.outcomes)  # 20 scored facts: one page
    assert set(table["fact_id"]) == {o.fact_id for o in exp.outcomes}
    cdr = _cdr_by_id(exp)
    for fid, score in zip(table["fact_id"], table["cdr_score"]):
        assert score == cdr[fid]  # the stored score, not a recomputation
    roles = {o.fact_id: o.role for o in exp.outcomes}
    assert dict(zip(table["fact_id"], table["role"])) == roles
    reasons = {o.fact_id: o.reason for o in exp.outcomes}
    assert dict(zip(table["fact_id"], table["reason"])) == reasons
    assert list(table["cdr_score"]) == sorted(table["cdr_score"], reverse=True)  # default: CDR descending


def test_changing_the_gate_changes_the_table(ui_env):
    at = run_page("breakdown")
    before = _table(at)
    sidebar_input(at, "cdr_min_relevance").set_value(0.1).run()
    assert not at.exception
    after = _table(at)
    exp = expected_result(ui_env, edits={"cdr_min_relevance": 0.1})
    gated = {o.fact_id for o in exp.outcomes if o.role == "gated"}
    assert set(after.loc[after["outcome"] == "gated", "fact_id"]) == gated
    assert (before["outcome"] == "gated").sum() != len(gated)


def test_filter_and_sort_apply_to_all_rows(ui_env):
    exp = expected_result(ui_env)
    at = run_page("breakdown")
    widget(at, "multiselect", K + "outcomes").set_value(["gated"]).run()
    table = _table(at)
    assert set(table["outcome"]) == {"gated"}
    assert len(table) == sum(1 for o in exp.outcomes if o.role == "gated")
    widget(at, "selectbox", K + "sort").set_value("relevance").run()
    rel = list(_table(at)["relevance"])
    assert rel == sorted(rel, reverse=True)
    widget(at, "toggle", K + "desc").set_value(False).run()
    rel = list(_table(at)["relevance"])
    assert rel == sorted(rel)
    widget(at, "text_input", K + "text").set_value("(").run()  # a literal substring, never a regex
    assert not at.exception  # matches nothing: the empty state instead of an empty table
    assert any("No scored fact matches these filters" in i.value for i in at.info)


def test_selected_fact_shows_its_cdr_product(ui_env):
    exp = expected_result(ui_env)
    kb = exp.corpus.kb
    at = _open_recency(run_page("breakdown"))
    fid = "f006"
    widget(at, "selectbox", K + "pick.").set_value(fid).run()
    assert not at.exception
    # a static table (its formula labels wrap whole, never cut): the stored factors' values, shown rounded
    steps = at.table[0].value
    assert list(steps.index) == [
        "importance weight",
        "effective relevance = max(relevance, residual pull)",
        "novelty = max(1 - coverage penalty, floor)",
        "recency factor",
        f"1 - n-gram penalty (penalty {float(exp.cdr.ngram_penalty[exp.cdr.position(kb.index_of(fid))]):.4f})",
        "CDR score (stored)",
    ]
    i = exp.cdr.position(kb.index_of(fid))
    c = exp.cdr
    multipliers = steps["× multiplier"].tolist()
    assert multipliers[:5] == [
        float(c.importance_weight[i]),
        float(c.effective_relevance[i]),
        float(c.novelty[i]),
        float(c.recency_factor[i]),
        1.0 - float(c.ngram_penalty[i]),
    ]
    assert math.isnan(multipliers[5])  # the stored score's row multiplies nothing: an empty cell
    running = steps["running product"].tolist()
    # importance * eff. relevance * novelty * recency * (1 - ngram penalty) = the stored CDR
    assert math.isclose(running[4], float(c.cdr_score[i]), rel_tol=1e-6)
    assert running[5] == float(c.cdr_score[i])
    figs = figures(at)
    waterfall = [f for f in figs if f["data"] and f["data"][0]["type"] == "waterfall"]
    assert len(waterfall) == 1 and waterfall[0]["data"][0]["measure"][-1] == "total"
    assert math.isclose(waterfall[0]["data"][0]["y"][-1], float(c.cdr_score[i]), rel_tol=1e-12)
    table = _table(at)
    assert list(table.loc[table["sel"] == "▶", "fact_id"]) == [fid]
    # the recency chart marks the selected fact
    assert any(t.get("name", "").startswith("selected: f006") for f in figs for t in f["data"])


def test_deep_link_selects_the_fact(ui_env):
    exp = expected_result(ui_env)
    fid = "f012"
    at = run_page("breakdown", params={"scenario": "demo.json", "fact": fid})
    assert widget(at, "selectbox", K + "pick.").value == fid
    steps = at.table[0].value
    i = exp.cdr.position(exp.corpus.kb.index_of(fid))
    assert steps["running product"].iloc[-1] == float(exp.cdr.cdr_score[i])
    # the fact card: its id as code, then its badges
    assert any(m.value.startswith(f"`{fid}` :blue-badge[") for m in at.markdown)


def test_recency_chart_and_histograms(ui_env):
    exp = expected_result(ui_env)
    at = run_page("breakdown")
    # no plotly chart until an expander is opened: the recency curves' is closed at first
    assert not figures(at)
    assert any(e.label.startswith("Recency factor vs age per TTL") for e in at.expander)
    _open_recency(at).run()
    assert not at.exception
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any(t.startswith("Recency factor vs age") for t in titles)
    # open for the rest of the session: a visit to another page and back keeps it open
    at.switch_page("pages/glossary.py").run()
    at.switch_page("pages/breakdown.py").run()
    assert any(f["layout"]["title"]["text"].startswith("Recency factor vs age") for f in figures(at))
    # the histograms are built only once their expander is opened (the choice is kept in the session)
    assert not any(t.startswith(("Relevance", "CDR score")) for t in titles)
    from pages.breakdown import DIST_KEEP

    at.session_state[DIST_KEEP] = True
    at.run()
    assert not at.exception and not at.warning
    figs = figures(at)
    titles = [f["layout"]["title"]["text"] for f in figs]
    assert any(t.startswith("CDR score") for t in titles)
    rel = [f for f in figs if f["layout"]["title"]["text"].startswith("Relevance")][0]
    gate = [s for s in rel["layout"]["shapes"] if s.get("x0") == s.get("x1")]
    assert [s["x0"] for s in gate] == [exp.config.cdr_min_relevance]
    counted = sum(len(t["x"]) for t in rel["data"] if t["type"] == "histogram")
    assert counted == len(exp.outcomes)


def test_fact_text_is_escaped(tmp_path, monkeypatch):
    d = write_bridge_sample(tmp_path / "samples")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    at = _open_recency(run_page("breakdown", params={"fact": "D"}))
    at.run()
    # the card's text is escaped Markdown: no tag, no link can form
    texts = [m.value for m in at.markdown if "markup" in m.value]
    assert len(texts) == 1
    assert "<b>markup</b>" not in texts[0] and "\\<b\\>markup\\<\\/b\\>" in texts[0]
    assert "javascript\\:" in texts[0] and "](javascript" not in texts[0]
    for f in figures(at):
        for t in f["data"]:
            for h in np.ravel([t.get("hovertext") or []]).tolist() + np.ravel([t.get("customdata") or []]).tolist():
                assert "<b>markup" not in str(h)


def _column_help(at, *columns: str) -> dict[str, str]:
    """column -> its help text in the dataframe element holding every one of ``columns``."""
    import json

    for d in at.dataframe:
        if all(c in d.value.columns for c in columns):
            cfg = json.loads(d.proto.columns or "{}")
            return {k: (v or {}).get("help") or "" for k, v in cfg.items()}
    raise AssertionError(f"no dataframe with {columns}")


def test_reason_sits_next_to_the_outcome_and_columns_have_help(ui_env):
    from crp_ui import glossary

    at = run_page("breakdown")
    table = _table(at)
    cols = list(table.columns)
    assert cols.index("reason") == cols.index("outcome") + 1  # a gated row says why where it is read
    gated = table[table["outcome"] == "gated"]
    assert len(gated) and all(r.startswith("gated: relevance") for r in gated["reason"])
    helps = _column_help(at, "sel", "fact_id", "cdr_score", "outcome")
    for col in (
        "cdr_score",
        "relevance",
        "residual_pull",
        "novelty",
        "recency_factor",
        "ttl_days",
        "bridge_value",
        "ngram_penalty",
        "coverage_score",
        "importance_weight",
    ):
        assert helps.get(col) == glossary.column_help(col), col
    assert "ResidualSet" in helps["residual_pull"] and "SPEC-024" in helps["residual_pull"]


def test_an_empty_search_clears_the_selected_fact(ui_env):
    exp = expected_result(ui_env)
    fid = exp.envelope.order[0].fact_id
    at = run_page("breakdown", params={"fact": fid})
    assert widget(at, "selectbox", K + "pick.").value == fid
    assert len(frames_with_cdr_steps(at)) == 1  # the selected fact's detail, before the search clears it
    widget(at, "text_input", K + "text").set_value("no fact has this text zzzq").run()
    assert not at.exception
    assert any("No scored fact matches these filters" in i.value for i in at.info)
    assert not [s for s in at.selectbox if str(s.key).startswith(K + "pick.")]  # no picker, no old detail
    assert not frames_with_cdr_steps(at)
    assert at.query_params.get("fact") in (None, [], "")
    # clearing the search brings the table back, with no fact selected
    widget(at, "text_input", K + "text").set_value("").run()
    assert len(_table(at)) == len(exp.outcomes)
    assert widget(at, "selectbox", K + "pick.").value is None


def frames_with_cdr_steps(at):
    """The selected fact's CDR step table (a static table: its formula labels wrap whole)."""
    return [t for t in at.table if "running product" in t.value.columns]


def _recency_figure(at):
    (fig,) = [f for f in figures(at) if f["layout"]["title"]["text"].startswith("Recency factor vs age")]
    return fig


def test_recency_chart_follows_a_recency_setting_and_is_reused_across_the_gate(ui_env):
    # the figure is kept per content of its inputs: a gate change (same recency columns) reuses it, a
    # stale floor change draws a new one (the line and every curve move)
    at = _open_recency(run_page("breakdown"))
    at.run()
    before = _recency_figure(at)
    sidebar_input(at, "cdr_min_relevance").set_value(0.31).run()
    assert not at.exception
    assert _recency_figure(at) == before
    sidebar_input(at, "stale_floor").set_value(0.2).run()
    assert not at.exception
    after = _recency_figure(at)
    assert [s["y0"] for s in after["layout"]["shapes"]] == [0.2]
    assert after["layout"]["annotations"][0]["text"] == "stale_floor 0.2"
    curves = [t["y"] for t in after["data"] if t["mode"] == "lines"]
    assert curves and curves != [t["y"] for t in before["data"] if t["mode"] == "lines"]


def test_breakdown_shows_the_gate_note_under_the_distributions(ui_env):
    at = run_page("breakdown")
    sidebar_input(at, "cdr_min_relevance").set_value(0.8).run()
    note = gate_note(expected_result(ui_env, edits={"cdr_min_relevance": 0.8}))
    assert note is not None
    assert [c for c in at.caption if render.md_escape(note.message) in c.value]
    assert [b for b in at.button if b.label == f"Try cdr_min_relevance {note.suggested:.2f}"]

"""The app shell: app.py + page registration + shared sidebar + home page, driven by Streamlit's AppTest.

Uses the synthetic samples folder of tests/support/ (24 facts with their own 8-d embeddings,
model "test-model"; scenario "demo.json"), so no embedding model is loaded.
"""

from __future__ import annotations

import html
import json
import re

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as hst
from streamlit.testing.v1 import AppTest

from crp_core.config import SCALAR_KEYS, CRPConfig
from crp_ui import render, shell, sidebar
from tests.support.pages import open_sidebar
from tests.support.paths import APP, REPO_ROOT
from tests.support.samples import synthetic_ckf_rows

HOME = str(REPO_ROOT / "pages" / "home.py")
TIMEOUT = 60


def _app(page: str | None = None, **query) -> AppTest:
    """Run app.py (with URL ``query``); ``page`` (e.g. "pages/home.py") is switched to afterwards."""
    at = open_sidebar(AppTest.from_file(APP, default_timeout=TIMEOUT))
    at.query_params.update(query)
    at.run()
    if page is not None:
        _ok(at)
        at.switch_page(page).run()
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _widget(elements, label: str):
    hits = [w for w in elements if w.label == label]
    assert len(hits) == 1, (label, [w.label for w in elements])
    return hits[0]


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# ---- the shell runs and shows the CKF summary ---------------------------------------------------
def test_app_runs_on_the_sample_and_shows_the_summary(ui_env):
    at = _app("pages/home.py")
    _ok(at)
    metrics = {m.label: m.value for m in at.metric}
    # 24 facts; status cycle puts DELETED at i % 6 == 5 -> i = 5, 11, 17, 23: 4 not retrievable
    assert metrics["facts"] == "24"
    assert metrics["retrievable"] == "20"
    assert any("Embedding state: ready. 24 vectors of dimension 8" in s.value for s in at.success)
    assert "Knowledge base (CKF)" in [h.value for h in at.sidebar.subheader]
    kb = at.session_state["crp.kb"]
    assert len(kb) == 24 and at.session_state["crp.ckf_sample"] == "knowledge_base.jsonl"
    # the first bundled scenario is active, and the URL names it (the default CKF is not repeated)
    assert at.session_state["crp.scenario_name"] == "demo.json"
    assert at.query_params == {"scenario": "demo.json"}


def test_sidebar_has_every_editor_widget(ui_env):
    at = _app()
    _ok(at)
    sb = at.sidebar
    assert _widget(sb.selectbox, "Knowledge base on the server").value == "knowledge_base.jsonl"
    assert _widget(sb.selectbox, "Scenario on the server").value == "demo.json"
    assert _widget(sb.toggle, "Lenient loading (skip bad facts, list them)").value is False
    assert _widget(sb.text_input, "Operator name").value == ""
    assert _widget(sb.text_area, "Query").value == "Which ports are used?"
    assert _widget(sb.date_input, "now (time travel)").value.isoformat() == "2025-10-01"
    assert _widget(sb.number_input, "fan-out width").value == 0
    assert len(sb.get("file_uploader")) == 4  # CKF, scenario, config TOML, view snapshot
    # one widget per scalar config key, labelled with * when the default is the project's
    labels = {w.label for w in list(sb.number_input) + list(sb.toggle) + list(sb.selectbox)}
    for key in SCALAR_KEYS:
        assert sidebar.config_label(key) in labels, key
    assert "token_budget *" in labels and "cdr_min_relevance" in labels  # project vs spec default
    # sub-query editor, prior-output editor, source-type tables
    assert len(sb.get("dataframe")) == 3
    assert {b.label for b in sb.button} >= {"Reset to defaults"}


def _home_page_alone() -> None:
    """The Knowledge base page's render function on its own (AppTest runs this body as a script)."""
    from pages import home

    home.main()


def test_home_page_renders_alone(ui_env):
    """A page's render function reads everything through crp_ui.state: it works without the shell."""
    at = AppTest.from_function(_home_page_alone, default_timeout=TIMEOUT).run()
    _ok(at)
    assert {m.label: m.value for m in at.metric}["facts"] == "24"
    assert not at.sidebar.subheader  # no shell, no sidebar


def test_page_file_run_as_the_entry_script_gets_the_shell(ui_env):
    """Executed without app.py, a page file hands over to the shell (navigation + sidebar)."""
    at = open_sidebar(AppTest.from_file(HOME, default_timeout=TIMEOUT)).run()
    _ok(at)
    assert "Knowledge base (CKF)" in [h.value for h in at.sidebar.subheader]
    assert [t.value for t in at.title] == ["What SPEC-027 changes"]  # the entry script is no page: the default


def test_facts_by_type_and_status_counts(ui_env):
    from crp_core.io.ckf import load_ckf
    from pages.home import facts_by_type_and_status  # importing a page module renders nothing

    kb = load_ckf(str(ui_env / "knowledge_base.jsonl"))
    t = facts_by_type_and_status(kb)
    # source cycle of 6 and status cycle of 6 line up: type i%6 always has status i%6, 4 facts each
    assert t.loc["official_documentation", "ACTIVE"] == 4
    assert t.loc["regulatory", "STALE"] == 4 and t.loc["regulatory", "ACTIVE"] == 0
    assert t.loc["internal", "DELETED"] == 4
    assert t.loc["total", "total"] == 24 and t.loc["total", "DELETED"] == 4
    assert list(t.columns) == ["ACTIVE", "STALE", "DELETED", "QUARANTINED", "total"]


# ---- config editor: state + URL ----------------------------------------------------------------------
def test_changing_a_config_value_updates_state_and_url(ui_env):
    at = _app()
    _widget(at.sidebar.number_input, "cdr_min_relevance").set_value(0.6).run()
    _ok(at)
    assert at.session_state["crp.config"].cdr_min_relevance == 0.6
    assert at.query_params["cfg.cdr_min_relevance"] == "0.6"
    _widget(at.sidebar.toggle, "graph_retrieval").set_value(False).run()
    assert at.session_state["crp.config"].graph_retrieval is False
    assert at.query_params["cfg.graph_retrieval"] == "false"
    # reset: back to the defaults, and the cfg.* parameters leave the URL
    _widget(at.sidebar.button, "Reset to defaults").click().run()
    _ok(at)
    assert at.session_state["crp.config"] == CRPConfig()
    assert not any(k.startswith("cfg.") for k in at.query_params)


def test_invalid_config_value_is_refused_and_config_kept(ui_env):
    at = _app()
    # the widget carries the key's range (0-1); 1.0 is inside it but refused by the rule fresh_fraction < 1
    _widget(at.sidebar.number_input, "fresh_fraction").set_value(1.0).run()
    _ok(at)
    assert at.session_state["crp.config"].fresh_fraction == 0.5
    assert any("fresh\\_fraction" in e.value and "kept" in e.value for e in at.sidebar.error)
    assert _widget(at.sidebar.number_input, "fresh_fraction").value == 0.5  # widget rebuilt


def test_deep_link_reproduces_the_view(ui_env):
    at = _app(
        **{
            "cfg.token_budget": "1000",
            "cfg.ttl_days.news": "none",
            "fact": "f003",
            "ckf": "second.jsonl",
            "now": "2025-12-24",
        }
    )
    _ok(at)
    c = at.session_state["crp.config"]
    assert c.token_budget == 1000 and c.ttl_days.news is None
    assert at.session_state["crp.selected_fact"] == "f003"
    assert len(at.session_state["crp.kb"]) == 9
    assert at.session_state["crp.scenario"].now.isoformat() == "2025-12-24T00:00:00+00:00"
    assert _widget(at.sidebar.number_input, "token_budget *").value == 1000
    assert at.query_params == {
        "ckf": "second.jsonl",
        "scenario": "demo.json",
        "now": "2025-12-24",
        "cfg.token_budget": "1000",
        "cfg.ttl_days.news": "none",
        "fact": "f003",
    }


def test_bad_link_parameters_warn_and_are_ignored(ui_env):
    at = _app(**{"cfg.nope": "1", "cfg.candidate_k": "many", "ckf": "missing.jsonl"})
    _ok(at)
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "nope" in warnings and "candidate\\_k" in warnings and "missing" in warnings
    assert at.session_state["crp.config"] == CRPConfig()
    assert len(at.session_state["crp.kb"]) == 24  # fell back to the default sample


def test_a_link_value_with_a_line_break_warns_and_applies_nothing(ui_env):
    """Issue 32, hostile item 7: ``cfg.token_budget=1500%0Afoo=2`` applied 1500 and dropped the rest."""
    at = _app(**{"cfg.token_budget": "1500\nfoo=2", "cfg.candidate_k": "8\x1b[2J"})
    _ok(at)
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "token\\_budget" in warnings and "candidate\\_k" in warnings and "control character" in warnings
    assert at.session_state["crp.config"] == CRPConfig()


def test_config_toml_upload_good_and_bad(ui_env):
    at = _app()
    up = at.sidebar.get("file_uploader")[2]
    up.upload("bad.toml", b"token_budget = [", "application/toml")
    at.run()
    _ok(at)
    assert at.session_state["crp.config"] == CRPConfig()
    assert any("not valid TOML" in e.value for e in at.sidebar.error)
    up = at.sidebar.get("file_uploader")[2]
    up.set_value(("good.toml", CRPConfig(token_budget=512, backfill=False).to_toml().encode(), "application/toml"))
    at.run()
    _ok(at)
    assert at.session_state["crp.config"].token_budget == 512
    assert at.session_state["crp.config"].backfill is False
    assert at.query_params["cfg.token_budget"] == "512"


# ---- CKF picker -------------------------------------------------------------------------------------------
def test_switching_sample_and_url(ui_env):
    at = _app("pages/home.py")
    _widget(at.sidebar.selectbox, "Knowledge base on the server").set_value("second.jsonl").run()
    _ok(at)
    assert len(at.session_state["crp.kb"]) == 9
    assert at.query_params["ckf"] == "second.jsonl"
    assert {m.label: m.value for m in at.metric}["facts"] == "9"


def test_refused_upload_keeps_the_previous_ckf(ui_env):
    at = _app()
    rows = synthetic_ckf_rows(n=4, seed=3)
    rows[1]["content"] = ""  # line 2: empty content
    rows[2]["source_type"] = "rumour"  # line 3: unknown source type
    at.sidebar.get("file_uploader")[0].upload("bad.jsonl", _jsonl(rows), "application/json")
    at.run()
    _ok(at)
    kb = at.session_state["crp.kb"]
    assert len(kb) == 24 and at.session_state["crp.ckf_label"] == "knowledge_base.jsonl"
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "line 2" in errors and "content" in errors
    assert "line 3" in errors and "source\\_type" in errors.replace("`source_type`", "source\\_type")
    assert "previously loaded CKF stays active" in errors
    # lenient mode: the same file loads with exactly the two bad facts skipped
    _widget(at.sidebar.toggle, "Lenient loading (skip bad facts, list them)").set_value(True).run()
    _ok(at)
    kb = at.session_state["crp.kb"]
    assert [f.fact_id for f in kb.facts] == ["f000", "f003"]
    assert at.session_state["crp.ckf_label"] == "bad.jsonl (uploaded)"
    assert "ckf" not in at.query_params  # an upload cannot be linked


def test_good_upload_replaces_and_oversize_upload_is_refused(ui_env):
    at = _app()
    at.sidebar.get("file_uploader")[0].upload("five.jsonl", _jsonl(synthetic_ckf_rows(n=5, seed=2)))
    at.run()
    _ok(at)
    assert len(at.session_state["crp.kb"]) == 5
    # shrink the limit below the next file's size: refused by size, the 5-fact CKF stays
    _widget(at.sidebar.number_input, "ckf_max_bytes *").set_value(100).run()
    at.sidebar.get("file_uploader")[0].set_value(("big.jsonl", _jsonl(synthetic_ckf_rows(n=3)), "text/plain"))
    at.run()
    _ok(at)
    assert len(at.session_state["crp.kb"]) == 5
    assert any("ckf\\_max\\_bytes" in e.value or "ckf_max_bytes" in e.value for e in at.sidebar.error)


# ---- scenario editor -------------------------------------------------------------------------------------
def test_editing_query_and_time_travel(ui_env):
    at = _app()
    _widget(at.sidebar.text_area, "Query").input("Which metrics ports?").run()
    _ok(at)
    s = at.session_state["crp.scenario"]
    assert s.query == "Which metrics ports?" and s.query_embedding is None  # text changed: embedding dropped
    assert at.session_state["crp.scenario_edited"] is True
    _widget(at.sidebar.date_input, "now (time travel)").set_value(__import__("datetime").date(2024, 2, 29)).run()
    _ok(at)
    assert at.session_state["crp.scenario"].now.isoformat() == "2024-02-29T00:00:00+00:00"
    assert at.query_params["now"] == "2024-02-29"


def test_scenario_editor_dict_keeps_embeddings_of_unchanged_texts(ui_env):
    import pandas as pd

    from crp_core.io.scenario import load_scenario, scenario_to_dict

    s = load_scenario(str(ui_env / "scenarios" / "demo.json"))
    rows = sidebar.subquery_frame(s)
    rows.loc[1, "text"] = "peer and raft ports"  # sq2 edited
    rows.loc[2, "addressed"] = True  # sq3 addressed, depth and window left empty
    rows.loc[3] = [None, None, None, False, None, None]  # a fresh empty row is ignored
    prior = pd.DataFrame({"text": ["one", "", None]})
    d = sidebar.scenario_dict_from_editors(
        scenario_to_dict(s), s, query=s.query, rows=rows, prior=prior, fanout_width=3, now_date=None
    )
    sqs = {q["id"]: q for q in d["sub_queries"]}
    assert list(sqs) == ["sq1", "sq2", "sq3"]
    assert "embedding" in sqs["sq1"] and "embedding" not in sqs["sq2"] and "embedding" in sqs["sq3"]
    assert d["addressed"] == [
        {"id": "sq1", "depth_weight": 0.7, "window": 1},
        {"id": "sq3", "depth_weight": 1.0, "window": 1},
    ]
    assert d["prior_outputs"] == ["one"] and d["fanout_width"] == 3
    assert d["query"]["embedding"] == list(s.query_embedding)  # query text unchanged: kept


def test_table_edits_give_dotted_keys():
    c = CRPConfig()
    df = sidebar.tables_frame(c)
    assert list(df["source_type"])[:2] == ["regulatory", "official_documentation"]
    assert list(df.columns) == ["source_type", "TTL (days)", "authority", "importance"]  # fits the sidebar
    df.loc[df.source_type == "news", "TTL (days)"] = 60.0
    df.loc[df.source_type == "web", "authority"] = 0.65
    df.loc[df.source_type == "regulatory", "TTL (days)"] = float("nan")  # emptied: no expiry
    assert sidebar.table_edits(c, df) == {
        "ttl_days.news": 60.0,
        "source_authority.web": 0.65,
        "ttl_days.regulatory": "none",
    }
    assert sidebar.table_edits(c, sidebar.tables_frame(c)) == {}


def test_the_project_defaults_of_the_tables_are_said_under_them_per_table():
    """Which cells are this project's defaults, in a caption that wraps (a column of them was cut off at the
    sidebar's edge): every project cell of crp_core.PROJECT_TABLE_CELLS, and no spec cell."""
    from crp_core.config.tables import PROJECT_TABLE_CELLS

    words = {"ttl_days": "TTL", "source_authority": "authority", "importance": "importance"}
    said = sidebar.project_cells_text()
    for part, (table, cells) in zip(said.split("; "), PROJECT_TABLE_CELLS.items(), strict=True):
        name, _, types = part.partition(" of ")
        assert name == words[table] and set(types.split(", ")) == cells, part


def test_operator_name_is_kept(ui_env):
    at = _app()
    _widget(at.sidebar.text_input, "Operator name").input("ada").run()
    _ok(at)
    assert at.session_state["crp.operator"] == "ada"


# ---- page registration and routing ---------------------------------------------------------------------
def test_every_page_file_is_registered_once():
    files = sorted(p.name for p in (REPO_ROOT / "pages").glob("*.py") if p.name != "__init__.py")
    assert sorted(p.file for p in shell.PAGES) == files
    assert len({p.url_path for p in shell.PAGES}) == len(shell.PAGES)
    assert shell.DEFAULT_PAGE.file == "story.py" and shell.PAGES[-1].file == "home.py"


def _list_navigation_pages() -> None:
    """Write title, URL path and visibility of every page the shell hands to st.navigation."""
    import streamlit as st

    from crp_ui import shell

    for p in shell.navigation_pages():  # st.Page needs a script run: AppTest runs this body as one
        st.text(f"{p.title}|{p.url_path}|{p.visibility}")


def test_navigation_pages_cover_every_url():
    """What st.navigation gets: each page at its own path, the default at the root, and a hidden page
    of the default's file at its own path (a default page is served at the root URL only)."""
    at = AppTest.from_function(_list_navigation_pages, default_timeout=TIMEOUT).run()
    _ok(at)
    rows = [t.value.split("|") for t in at.text]
    expected = [[s.title, "" if s is shell.DEFAULT_PAGE else s.url_path, "visible"] for s in shell.PAGES]
    assert rows == expected + [["Story", "story", "hidden"]]


def test_navigation_serves_the_default_page_under_its_own_path_too(ui_env):
    """The default page is served at ``/``; ``/story`` is a hidden page of the same file."""
    at = _app()
    _ok(at)
    assert [t.value for t in at.title] == ["What SPEC-027 changes"]
    at.switch_page("pages/story.py").run()  # the page registered at /story
    _ok(at)
    assert [t.value for t in at.title] == ["What SPEC-027 changes"]
    assert "Knowledge base (CKF)" in [h.value for h in at.sidebar.subheader]


PAGE_TITLES = {
    "story.py": "What SPEC-027 changes",
    "overview.py": "Overview",
    "breakdown.py": "Score breakdown",
    "graph.py": "Graph (CDGR)",
    "envelope.py": "Envelope",
    "conflicts.py": "Conflict triage",
    "session.py": "SDK session audit",
    "fanout.py": "Fan-out simulator",
    "tuning.py": "Tuning",
    "glossary.py": "Glossary",
    "home.py": "crp-inspect",
}


def test_every_page_runs_inside_the_shell_on_every_run(ui_env):
    """Each page, reached with switch_page and run again: the page's own title and the shared sidebar
    every time (AppTest starts each run afresh, as a new server would)."""
    assert set(PAGE_TITLES) == {p.file for p in shell.PAGES}
    at = _app()
    _ok(at)
    for spec in shell.PAGES:
        at.switch_page(f"pages/{spec.file}").run()
        for _ in range(2):
            _ok(at)
            assert [t.value for t in at.title][:1] == [PAGE_TITLES[spec.file]], spec.file
            assert "Knowledge base (CKF)" in [h.value for h in at.sidebar.subheader], spec.file
            at.run()


def test_a_deep_link_to_a_page_applies_its_parameters(ui_env):
    """First run straight on a page (like a first request to /home?...): the URL's view, the page, the sidebar."""
    at = open_sidebar(AppTest.from_file(APP, default_timeout=TIMEOUT))
    at.query_params.update({"ckf": "second.jsonl", "cfg.token_budget": "1000"})
    at.switch_page("pages/home.py").run()
    _ok(at)
    assert {m.label: m.value for m in at.metric}["facts"] == "9"
    assert _widget(at.sidebar.number_input, "token_budget *").value == 1000
    assert at.query_params == {"ckf": "second.jsonl", "scenario": "demo.json", "cfg.token_budget": "1000"}
    _widget(at.sidebar.selectbox, "Knowledge base on the server").set_value("knowledge_base.jsonl").run()
    _ok(at)
    assert {m.label: m.value for m in at.metric}["facts"] == "24"  # still the home page, on the next run
    assert "ckf" not in at.query_params


# ---- escaping of untrusted text ---------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(hst.text())
def test_html_text_is_inert_and_lossless(text):
    out = render.html_text(text)
    assert "<" not in out.replace("<br>", "") and ">" not in out.replace("<br>", "")
    assert "\n" not in out and "\r" not in out
    # every character comes back (line breaks normalised to \n)
    norm = render.visible(text).replace("\r\n", "\n").replace("\r", "\n")  # bidi controls shown, not applied
    assert html.unescape(out.replace("<br>", "\n")) == norm


@settings(max_examples=300, deadline=None)
@given(hst.text())
def test_md_escape_leaves_no_active_punctuation(text):
    assert _active_punctuation(render.md_escape(text)) == []


def _active_punctuation(md: str) -> list[str]:
    """The ASCII punctuation of ``md`` that Markdown could act on, read left to right as Markdown
    does: an escaped pair (backslash + punctuation) is inert, a code span (a run of backticks up to
    the next run of the same length; URLs and e-mail addresses become those) is shown literally."""
    punct = re.compile(r"[!-/:-@\[-`{-~]")
    found, i = [], 0
    while i < len(md):
        c = md[i]
        if c == "\\" and i + 1 < len(md) and punct.match(md[i + 1]):
            i += 2
        elif c == "`":
            run = re.match(r"`+", md[i:]).group(0)
            close = re.search(rf"(?<!`){run}(?!`)", md[i + len(run) :])
            if close is None:
                found.append(run)
                i += len(run)
            else:
                i += len(run) + close.end()
        else:
            if punct.match(c):
                found.append(c)
            i += 1
    return found


@settings(max_examples=300, deadline=None)
@given(hst.text(), hst.one_of(hst.none(), hst.integers(min_value=1, max_value=40)))
def test_esc_is_inert_and_shortens(text, limit):
    """``render.esc`` (plotly labels): no markup survives, nothing is lost unless shortened."""
    out = render.esc(text, limit)
    assert not re.search(r"[<>\"']", out) and not re.search(r"&(?!(amp|lt|gt|quot|#x27);)", out)
    back = html.unescape(out)
    shown = render.visible(text)  # bidi controls and invisible characters as visible escapes
    if limit is None or len(shown) <= limit:
        assert back == shown
    else:
        assert len(back) == limit and back.endswith("…") and shown.startswith(back[:-1])


@settings(max_examples=300, deadline=None)
@given(
    hst.text(
        alphabet=hst.sampled_from(
            "ab \u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u2060\ufeff"
        )
    )
)
def test_no_bidi_control_or_invisible_character_survives_any_renderer(text):
    controls = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u2060\ufeff")
    for out in (
        render.md_escape(text),
        render.md_code(text),
        render.html_text(text),
        render.esc(text),
        render.plain(text),
        render.inert_frame(pd.DataFrame({text: [text]}, index=[text])).to_csv(),
    ):
        assert not controls & set(out), repr(out)
    assert render.visible("id\u202eab") == "id⟨U+202E⟩ab"


def test_inert_frame_rebuilds_only_what_holds_a_control():
    """A frame with no control anywhere is handed on as it is (no copy on every rerun); otherwise the
    columns that hold one are rebuilt in their own dtype (Arrow-backed strings included), the others and
    ``df`` itself left alone."""
    clean = pd.DataFrame({"id": pd.array(["F1", "F2"], dtype="string[pyarrow]"), "x": [0.5, 1.5], "note": ["ok", None]})
    assert render.inert_frame(clean) is clean
    dirty = clean.assign(id=pd.array(["F1", "F\u202e2"], dtype="string[pyarrow]"))
    out = render.inert_frame(dirty)
    assert out is not dirty and dirty["id"].tolist() == ["F1", "F\u202e2"]
    assert out["id"].tolist() == ["F1", "F⟨U+202E⟩2"] and out["id"].dtype == dirty["id"].dtype
    assert out["x"].tolist() == [0.5, 1.5] and out["note"].equals(dirty["note"])
    named = pd.DataFrame({"a\u200b": [1]}, index=["r\u2066"])
    assert list(render.inert_frame(named).columns) == ["a⟨U+200B⟩"]
    assert list(render.inert_frame(named).index) == ["r⟨U+2066⟩"]
    twice = pd.DataFrame([["x\u202e", "y"]], columns=["c", "c"])  # duplicate labels: by position
    assert render.inert_frame(twice).iloc[0].tolist() == ["x⟨U+202E⟩", "y"]
    cat = pd.DataFrame({"k": pd.Categorical(["a\u2067", "b"])}, index=pd.CategoricalIndex(["i\u202e", "j"]))
    shown = render.inert_frame(cat)
    assert shown["k"].tolist() == ["a⟨U+2067⟩", "b"] and list(shown.index) == ["i⟨U+202E⟩", "j"]


def test_views_share_one_esc():
    from crp_ui import charts, fanout_blocks, fanout_partitions, tuning_view

    assert charts.esc is tuning_view.esc is fanout_partitions.esc is render.esc
    # the Fan-out page's chips and timeline are HTML: they escape through render.html_text
    assert fanout_blocks.html_text is render.html_text


def test_fact_card_escapes_content():
    from crp_core.model import Fact

    f = Fact("F<1>", "<script>alert(1)</script>\n\n![x](http://e/x.png) $x$", source_type="web")
    out = render.fact_card_html(f)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "![x](" not in out and "\n" not in out and "$x$" not in out
    assert "F&lt;1&gt;" in out


def test_fact_card_shows_a_missing_value_as_a_dash():
    from crp_core.model import Fact

    out = render.fact_card_html(Fact("c1", "text"), extra={"tier": float("nan"), "band": None, "score": 1.00441})
    assert "<b>tier</b>&nbsp;—" in out and "<b>band</b>&nbsp;—" in out and "<b>score</b>&nbsp;1.0044" in out
    assert "nan" not in out and "None" not in out


def test_problems_list_names_line_and_field():
    from crp_core.errors import Problem

    text = render.problems_list([Problem(3, "ttl", "not a duration: 'P3X'", "f9"), Problem(0, "file", "empty")])
    assert text.splitlines() == [
        "- **line 3**, field `ttl` (fact f9): not a duration\\: \\'P3X\\'",
        "- **file**, field `file`: empty",
    ]


def test_lenient_toggle_rereads_the_sample_not_an_old_upload(ui_env):
    at = _app()
    at.sidebar.get("file_uploader")[0].upload("five.jsonl", _jsonl(synthetic_ckf_rows(n=5, seed=2)))
    at.run()
    assert len(at.session_state["crp.kb"]) == 5
    # back to a bundled sample while the upload still sits in the uploader
    _widget(at.sidebar.selectbox, "Knowledge base on the server").set_value("second.jsonl").run()
    assert len(at.session_state["crp.kb"]) == 9
    _widget(at.sidebar.toggle, "Lenient loading (skip bad facts, list them)").set_value(True).run()
    _ok(at)
    assert len(at.session_state["crp.kb"]) == 9 and at.session_state["crp.ckf_sample"] == "second.jsonl"


def test_invalid_scenario_edit_is_listed_once_and_last_valid_kept(ui_env):
    at = _app()
    _widget(at.sidebar.text_area, "Query").input("   ").run()
    _ok(at)
    assert at.session_state["crp.scenario"].query == "Which ports are used?"
    msgs = [e.value for e in at.sidebar.error if "last valid scenario stays active" in e.value]
    assert len(msgs) == 1 and "query" in msgs[0]
    assert not any("previous scenario stays active" in e.value for e in at.sidebar.error)
    assert "now" not in at.query_params  # nothing valid was edited


def test_scenario_without_now_uses_today_and_stays_unedited(ui_env):
    d = json.loads((ui_env / "scenarios" / "demo.json").read_text())
    del d["now"]
    (ui_env / "scenarios" / "zz_no_now.json").write_text(json.dumps(d))
    at = _app(scenario="zz_no_now.json")
    _ok(at)
    assert at.session_state["crp.scenario"].now is None  # resolved at use, not written back
    assert at.session_state["crp.scenario_edited"] is False
    assert at.query_params == {"scenario": "zz_no_now.json"}
    import datetime as dt

    today = dt.datetime.now(dt.UTC).date()
    assert _widget(at.sidebar.date_input, "now (time travel)").value == today


def test_sample_list_skips_json_that_is_not_a_ckf(tmp_path, monkeypatch):
    """sample_ckf/ also holds planted_conflicts.json (data about the sample): not offered as a CKF."""
    import json as _json

    from crp_ui import state

    (tmp_path / "knowledge_base.jsonl").write_text('{"fact_id": "a", "content": "x"}\n', encoding="utf-8")
    (tmp_path / "list.json").write_text(_json.dumps([{"fact_id": "a", "content": "x"}]), encoding="utf-8")
    (tmp_path / "wrapped.json").write_text(_json.dumps({"facts": []}), encoding="utf-8")
    (tmp_path / "planted_conflicts.json").write_text(_json.dumps({"conflicts": []}), encoding="utf-8")
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(tmp_path))
    assert state.list_samples() == ["knowledge_base.jsonl", "broken.json", "list.json", "wrapped.json"]
    # and the real bundled folder
    monkeypatch.delenv("CRP_SAMPLE_DIR")
    assert "planted_conflicts.json" not in state.list_samples()
    assert state.list_samples()[0] == "knowledge_base.jsonl"


def test_a_first_visit_lands_on_the_demo_guides_scenario(tmp_path, monkeypatch):
    """The bundled folder opens payments_api_migration (where docs/guide/demo.md starts), not the first name
    in order; a folder without it opens its first; $CRP_DEFAULT_SCENARIO names another."""
    from crp_ui import samples

    monkeypatch.delenv("CRP_SAMPLE_DIR", raising=False)
    monkeypatch.delenv("CRP_SCENARIO_DIR", raising=False)
    monkeypatch.delenv("CRP_DEFAULT_SCENARIO", raising=False)
    bundled = samples.list_scenarios()
    assert bundled[0] == "payments_api_migration.json" and bundled[1:] == sorted(bundled[1:])
    assert "ai_act_compliance.json" in bundled[1:]
    real = samples.scenarios_dir() / "etcd_upgrade.json"
    for name in ("b.json", "a.json"):
        (tmp_path / name).write_bytes(real.read_bytes())
    monkeypatch.setenv("CRP_SCENARIO_DIR", str(tmp_path))
    assert samples.list_scenarios() == ["a.json", "b.json"]
    monkeypatch.delenv("CRP_SCENARIO_DIR")
    monkeypatch.setenv("CRP_DEFAULT_SCENARIO", "etcd_upgrade.json")
    assert samples.list_scenarios()[0] == "etcd_upgrade.json"


def test_config_widgets_carry_the_valid_range(ui_env):
    at = _app()
    _ok(at)
    w = _widget(at.sidebar.number_input, "candidate_k")
    assert (w.min, w.max) == (1, 10_000)


def test_a_hostile_config_link_is_refused_not_run(ui_env):
    at = _app(**{"cfg.candidate_k": "1000000000"})
    _ok(at)
    assert at.session_state["crp.config"].candidate_k == 50


def test_md_escape_never_leaves_a_url_to_be_linked():
    out = render.md_escape("see [d](http://evil.example/d), www.evil.example or me@evil.example")
    assert "`http://evil.example/d),`" in out and "`www.evil.example`" in out and "`me@evil.example`" in out
    assert "[" not in out.replace("\\[", "")


def test_md_code_shows_text_literally():
    from crp_ui.render import md_code

    assert md_code("sentence-transformers/all-MiniLM-L6-v2") == "`sentence-transformers/all-MiniLM-L6-v2`"
    assert md_code("a`b") == "``a`b``" and md_code("`x") == "`` `x ``"
    assert md_code("two\nlines") == "`two lines`"


#: the definition of what GitHub-flavoured Markdown links by itself, as a plain pattern (quadratic on a long
#: word, so only an oracle for short texts)
_AUTOLINK_DEFINITION = re.compile(r"(?i)(?:\b(?:https?|ftp|mailto|xmpp):|\bwww\.)\S*|[\w.+-]+@[\w-]+\.\w[\w.-]*")


@settings(max_examples=3000)
@given(hst.text(alphabet=list("ab1.+-@_ :/wWhtps"), max_size=20))
def test_autolinks_are_found_where_the_definition_finds_them(text: str) -> None:
    assert list(render.autolink_spans(text)) == [m.span() for m in _AUTOLINK_DEFINITION.finditer(text)]


def test_an_address_right_after_a_link_is_linked_too() -> None:
    """GFM links ``+@1.1`` after ``1@1.1`` (hypothesis found it: the run's lookbehind skipped that start)."""
    assert list(render.autolink_spans("1@1.1+@1.1")) == [(0, 5), (5, 10)]
    assert render.md_escape("1@1.1+@1.1") == "`1@1.1+@1.1`"  # touching links: one code span


def test_a_long_word_is_escaped_whole() -> None:
    word = "a" * 200_000
    assert render.md_escape(word) == word
    assert render.md_escape("x" * 100_000 + "@example.com").startswith("`x")


def test_the_ckf_picker_is_named_for_its_folder(monkeypatch):
    """The repository's bundled samples, or the knowledge bases of a folder the server's operator named
    ($CRP_SAMPLE_DIR, set by crp-inspect dashboard --ckf)."""
    from crp_ui.samples import samples_label

    monkeypatch.delenv("CRP_SAMPLE_DIR", raising=False)
    assert samples_label() == "Bundled sample"
    monkeypatch.setenv("CRP_SAMPLE_DIR", "/srv/kbs")
    assert samples_label() == "Knowledge base on the server"


def test_a_samples_folder_that_cannot_be_listed_is_named_with_the_reason(ui_env, monkeypatch, tmp_path):
    """The operator pointed the server at a file instead of a folder: the sidebar says so, where the picker
    would be, and the upload stays open; a scenarios folder that is a file is named the same way."""
    blocker = tmp_path / "kbs.jsonl"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(blocker))
    monkeypatch.setenv("CRP_SCENARIO_DIR", str(blocker))
    at = _app("pages/home.py")
    _ok(at)
    said = [w.value.replace("\\", "") for w in at.sidebar.warning]  # shown as markdown, its escapes dropped
    assert f"The knowledge bases in {blocker} cannot be offered: not a folder." in said
    assert f"The scenarios in {blocker} cannot be offered: not a folder." in said
    assert any("upload a CKF" in u.label for u in at.sidebar.get("file_uploader"))


def test_an_uploaded_scenario_clears_the_bundled_scenario_box(ui_env):
    """The sidebar's scenario box ("Scenario on the server" here) names the active scenario, and nothing once an
    upload replaced it (it kept naming the bundled one picked before; walk-through finding)."""
    at = _app()
    box = _widget(at.sidebar.selectbox, "Scenario on the server")
    assert box.value is not None
    doc = json.loads((ui_env / "scenarios" / box.value).read_text(encoding="utf-8"))
    doc["query"] = "an uploaded question"
    at.sidebar.get("file_uploader")[1].upload("mine.json", json.dumps(doc).encode(), "application/json")
    at.run()
    _ok(at)
    assert at.session_state["crp.scenario"].query == "an uploaded question"
    assert _widget(at.sidebar.selectbox, "Scenario on the server").value is None


def test_the_scenario_box_is_bundled_only_for_the_repositorys_scenarios(monkeypatch):
    """A server on another folder (``crp-inspect dashboard --ckf``, ``$CRP_SAMPLE_DIR`` or
    ``$CRP_SCENARIO_DIR``) offers that folder's scenarios: not "bundled" (a demo of one's own KB read so)."""
    from crp_ui import samples

    monkeypatch.delenv("CRP_SAMPLE_DIR", raising=False)
    monkeypatch.delenv("CRP_SCENARIO_DIR", raising=False)
    assert samples.scenarios_label() == "Bundled scenario" and samples.scenarios_bundled()
    monkeypatch.setenv("CRP_SCENARIO_DIR", "/srv/scenarios")
    assert samples.scenarios_label() == "Scenario on the server" and not samples.scenarios_bundled()
    monkeypatch.delenv("CRP_SCENARIO_DIR")
    monkeypatch.setenv("CRP_SAMPLE_DIR", "/srv/kb")
    assert samples.scenarios_label() == "Scenario on the server"


def test_scenario_and_config_uploaders_state_their_own_limit(ui_env):
    """A scenario or config file is read up to 16 MiB: its uploader said the server's 200 MB (a demo
    rehearsal read the one and the docs the other); the browser cap is the whole MB at or above the limit."""
    from crp_core import MAX_CONFIG_BYTES, MAX_SCENARIO_BYTES

    at = _app()
    _ok(at)
    ups = at.sidebar.get("file_uploader")
    scenario, config = ups[1], ups[2]
    assert "at most 16 MiB = 16,777,216 bytes" in scenario.proto.label
    assert "at most 16 MiB = 16,777,216 bytes" in config.proto.label
    assert scenario.proto.max_upload_size_mb == 17 == -(-MAX_SCENARIO_BYTES // 10**6)
    assert config.proto.max_upload_size_mb == 17 == -(-MAX_CONFIG_BYTES // 10**6)


def test_the_counts_table_shows_the_longest_source_type_whole(ui_env):
    """The counts table's source-type column is wide enough for "official_documentation" (the content width
    cut it to "official_docume": a demo rehearsal's screenshot)."""
    import json

    from pages.home import SOURCE_TYPE_PX
    from tests.support.pages import run_page

    at = run_page("home")
    (table,) = [d for d in at.dataframe if "ACTIVE" in d.value.columns]
    assert json.loads(table.proto.columns)["_index"]["width"] == SOURCE_TYPE_PX >= 180

"""AppTest of the Conflict triage page: queue order and counts, authority arithmetic by
hand, decisions recorded through the page (override, quarantine, dismiss) and their effect on the
queue, on this run's envelope conflicts and on the other pages; decisions visible to a second
session; escaping of a fact holding a <script> tag; the decision database path refusals.

The sample is written here: 3 conflicting pairs whose vectors and authorities are known by hand.
5-d vectors, c = e5 the common direction: pair k's first fact = e_k + c, its second = e_k + c + 0.2 e4.
cos(first, second) = 2 / (sqrt 2 * sqrt 2.04) = 0.9901 > 0.85 (contradiction_similarity); facts of
different pairs: 1 / 2 = 0.5 (first/first) or 1.04 / 2.04 = 0.5098 (second/second); query = c:
relevance = 1 / sqrt 2 = 0.7071 (first) or 1 / sqrt 2.04 = 0.7001 (second) >= 0.55, so all six
are anchors (budget 20 -> 14 anchors).
"""

from __future__ import annotations

import json
import math

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.conflicts_page import (
    ENV,
    EXPORT,
    QUALITY,
    QUEUE,
    K,
    decide,
    open_page,
    set_operator,
    show_tab,
    unmd,
)
from tests.support.pages import run_page
from tests.support.paths import APP


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def queue(at: AppTest):
    hits = [d.value for d in at.dataframe if "arbitration" in d.value.columns and "fact_a" in d.value.columns]
    assert len(hits) == 1
    return hits[0]


def env_pairs(at: AppTest):
    hits = [d.value for d in at.dataframe if "outcome" in d.value.columns]
    return hits[0] if hits else None


def html_blocks(at: AppTest) -> list[str]:
    """The fact texts of the pair cards (the one piece of HTML in them)."""
    return [m.value for m in at.html if "crp-fact-text" in m.value]


def test_queue_order_counts_and_authority_by_hand(triage_env):
    at = open_page()
    m = metrics(at)
    assert (m["conflict pairs"], m["ties"], m["undecided"], m["decided"]) == ("3", "1", "3", "0")
    q = queue(at)
    assert list(zip(q.fact_a, q.fact_b)) == [("T1", "T2"), ("X1", "X2"), ("E1", "E2")]  # tie, then margin
    assert q.authority_a.tolist() == pytest.approx([0.525, 0.35, 0.64], abs=1e-12)
    assert q.authority_b.tolist() == pytest.approx([0.525, 0.105, 0.135], abs=1e-12)
    assert q.margin.tolist() == pytest.approx([0.0, 0.245, 0.505], abs=1e-12)
    assert q.arbitration.tolist() == ["tie", "X1 wins", "E1 wins"]
    # the scan says the instant its ages (hence authorities and ties) are measured at: the scenario's now
    assert any("ages at 2026-11-01T00:00:00Z (the session's now" in c.value for c in at.caption)
    assert q.similarity.tolist() == pytest.approx([2 / (math.sqrt(2) * math.sqrt(2.04))] * 3, abs=1e-6)
    assert q.patterns.tolist() == ["NUMBER_CHANGED"] * 3
    assert not q.decided.any()
    # the first pair (the tie) is selected; its authority table shows the arithmetic
    assert at.selectbox(key=K + "pair").value == "T1|T2"
    m = metrics(at)
    (auth,) = [d.value for d in at.dataframe if "arithmetic" in d.value.columns]
    assert auth.fact_id.tolist() == ["T1", "T2"] and auth.role.tolist() == ["tied", "tied"]
    assert auth.arithmetic.tolist() == ["0.75 × 1.0000 × 0.7 = 0.5250"] * 2
    assert auth.authority.tolist() == pytest.approx([0.525, 0.525], abs=1e-12)
    # the heading: both ids, the figures and the arbitration
    assert any(h.value == "T1 ↔ T2" for h in at.subheader)
    assert (m["authority margin"], m["arbitration"]) == ("0.0000", "tie")
    # a form cannot be submitted without an operator name
    assert at.button(key=K + "submit.T1|T2").disabled
    assert any("Operator name" in w.value for w in at.warning)


def test_the_pattern_filter_shows_the_queues_labels_and_filters_by_name(triage_env):
    """The filter's chips read as the queue's pattern(s) column ("number changed", cut between words in a narrow
    column, never mid-word); the value chosen is still the pattern's name."""
    at = open_page()
    ms = at.multiselect(key=K + "f.patterns")
    assert ms.options == ["date shifted", "entity substituted", "magnitude altered", "negation flip", "number changed"]
    assert set(queue(at)["pattern(s)"]) == {"number changed"}
    ms.set_value(["NEGATION_FLIP"]).run()
    assert len(queue(at)) == 0
    at.multiselect(key=K + "f.patterns").set_value(["NUMBER_CHANGED"]).run()
    assert len(queue(at)) == 3


def test_envelope_view_winner_tie_note_and_audit_event(triage_env):
    at = show_tab(open_page(), ENV)
    env = env_pairs(at)
    got = {(r.fact_a, r.fact_b): (r.outcome, r.suppressed) for r in env.itertuples()}
    assert got == {("E1", "E2"): ("E1 wins", "E2"), ("T1", "T2"): ("tie", ""), ("X1", "X2"): ("X1 wins", "X2")}
    notes = [c.value for c in at.code if c.value.startswith("NOTE:")]
    assert len(notes) == 1
    assert "  [Internal wiki: the build cache holds 40 GB per runner.]" in notes[0]
    assert "  [Internal wiki: the build cache holds 80 GB per runner.]" in notes[0]
    events = [j.value for j in at.json]
    events = [json.loads(e) if isinstance(e, str) else e for e in events]
    e_pair = [e for e in events if e.get("fact_a") == "E1"]
    assert e_pair and e_pair[0]["winner"] == "E1" and e_pair[0]["suppressed"] == "E2"
    assert e_pair[0]["authority"]["E2"]["authority"] == pytest.approx(0.135, abs=1e-12)
    assert [e for e in events if e.get("fact_a") == "T1"][0]["tied"] is True
    assert any(ex.label.startswith("CONTRADICTION_RESOLVED") for ex in at.expander)


def test_fact_text_is_escaped_and_highlighted(triage_env):
    at = open_page()
    at.selectbox(key=K + "pair").set_value("X1|X2").run()
    blocks = html_blocks(at)
    assert blocks, "no conflict side rendered"
    joined = "\n".join(m.value for m in at.markdown)
    assert "<script>" not in joined
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in b for b in blocks)
    # the differing tokens are marked: 100 on X1's side, 200 on X2's
    assert any('<mark class="crp-diff" title="NUMBER_CHANGED"' in b and ">100<" in b for b in blocks)
    assert any(">200<" in b for b in blocks)


def test_decisions_apply_update_queue_and_every_view(triage_env):
    at = open_page()
    set_operator(at, "alice")
    # 1. override: E2 wins over the higher-authority E1
    decide(at, "E1|E2", "override", winner="E2", note="legacy port still used in prod")
    assert any("Recorded decision #1 on E1 ↔ E2: override: E2 wins (by alice" in unmd(s.value) for s in at.success)
    q = queue(at)
    row = q[q.fact_a == "E1"].iloc[0]
    assert (row.arbitration, row.decision, row.decided_by, bool(row.decided)) == (
        "override: E2 wins",
        "override: E2 wins",
        "alice",
        True,
    )
    env = env_pairs(show_tab(at, ENV))
    e = env[env.fact_a == "E1"].iloc[0]
    assert (e.outcome, e.suppressed, e.decision) == ("override: E2 wins", "E1", "override")
    assert metrics(at)["decided"] == "1"
    # 2. quarantine X2: the pair leaves this run and the queue (no run pairs a fact out of retrieval), and is
    # listed apart with the mark, open in the queue pair's place (docs/decisions/triage.md, "Out of retrieval")
    decide(at, "X1|X2", "mark_status", target="X2", status="QUARANTINED")
    q = queue(at)
    assert "X1" not in set(q.fact_a) and metrics(at)["conflict pairs"] == "2"
    (apart,) = [d.value for d in at.dataframe if "out of retrieval" in d.value.columns]
    assert apart[["fact_a", "fact_b", "out of retrieval", "by"]].values.tolist() == [
        ["X1", "X2", "X2 QUARANTINED", "alice"]
    ]
    assert at.selectbox(key=K + "aside").value == "X1|X2"
    assert any("X1 ↔ X2 is out of the queue: X2 is QUARANTINED by alice" in unmd(i.value) for i in at.info)
    env = env_pairs(show_tab(at, ENV))
    assert ("X1", "X2") not in set(zip(env.fact_a, env.fact_b))
    before = [d.value for d in at.dataframe if "without operator decisions" in d.value.columns][0]
    rows = {r[""]: (r["without operator decisions"], r["with them (this run)"]) for r in before.to_dict("records")}
    # without decisions: E2 and X2 suppressed, T tied; with them: E1 suppressed (override), X2 never retrieved
    assert rows["CRP-Context-Conflicts-Resolved"] == ("3; unresolved=1", "2; unresolved=1")
    assert rows["suppressed facts"] == ("E2, X2", "E1")
    assert rows["facts in the envelope"] == ("4", "4")
    changes = [unmd(m.value) for m in at.markdown if "Left the envelope" in m.value]
    assert changes == ["**Left the envelope:** E1 · **entered it:** E2"]
    effects = [d.value for d in at.dataframe if "operator status" in d.value.columns][0]
    assert effects.to_dict("records")[0] == {
        "fact_id": "X2",
        "status in CKF": "ACTIVE",
        "operator status": "QUARANTINED",
        "effect": "never retrieved",
        "scored in this run": False,
        "in envelope": False,
        "by": "alice",
        "at": effects.at[0, "at"],
    }
    # 3. dismiss the tie: no NOTE block any more, the pair goes last
    decide(at, "T1|T2", "dismiss")
    q = queue(at)
    assert list(zip(q.fact_a, q.fact_b))[-1] == ("T1", "T2")
    assert q.arbitration.tolist()[-1] == "dismissed"
    assert not [c.value for c in show_tab(at, ENV).code if c.value.startswith("NOTE:")]
    m = metrics(at)
    assert (m["decided"], m["undecided"], m["dismissed"], m["decisions in the log"]) == ("2", "0", "1", "3")
    # filters: undecided -> nothing; decided -> the two pairs left, none QUARANTINED
    show_tab(at, QUEUE).radio(key=K + "f.decided").set_value("undecided").run()
    assert len(queue(at)) == 0
    at.radio(key=K + "f.decided").set_value("decided").run()
    assert sorted(queue(at).fact_a.tolist()) == ["E1", "T1"]
    at.multiselect(key=K + "f.statuses").set_value(["QUARANTINED"]).run()
    assert len(queue(at)) == 0
    # the pair out of retrieval, opened from the list: its history (audit log) with who and the note
    at.selectbox(key=K + "aside").set_value("X1|X2").run()
    hist = [d.value for d in at.dataframe if "operator" in d.value.columns and "kind" in d.value.columns]
    assert hist and hist[0].kind.tolist() == ["mark_status"] and hist[0].operator.tolist() == ["alice"]

    # another session sees the same decisions, and the other pages run with them
    at2 = open_page("envelope")
    text = "\n".join(m.value for m in at2.markdown)
    assert "<code>E2</code>" in text and "<code>T1</code>" in text
    assert "<code>E1</code>" not in text and "<code>X2</code>" not in text
    assert not [c.value for c in at2.code if c.value.startswith("NOTE:")]
    at2.switch_page("pages/conflicts.py")
    at2.run()
    assert metrics(at2)["decisions in the log"] == "3"


def test_accept_after_override_restores_authority_winner(triage_env):
    at = open_page()
    set_operator(at, "bob")
    decide(at, "E1|E2", "override", winner="E2")
    decide(at, "E1|E2", "accept")
    q = queue(at)
    row = q[q.fact_a == "E1"].iloc[0]
    assert (row.arbitration, row.decision) == ("E1 wins", "accepted (E1 wins)")
    from crp_core.triage import DecisionStore

    with DecisionStore(str(triage_env), create=False) as store:
        log = store.all()
    assert [(d.kind, d.winner, d.operator) for d in log] == [("override", "E2", "bob"), ("accept", "E1", "bob")]
    assert all(d.ckf_fingerprint for d in log)


def test_foreign_database_is_refused_with_a_clear_error(triage_env):
    import sqlite3

    con = sqlite3.connect(triage_env)
    con.execute("CREATE TABLE other (x)")
    con.commit()
    con.close()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/conflicts.py")
    at.run()
    assert not at.exception
    assert any(
        "operator decision database" in unmd(e.value) and "not a crp-inspect triage database" in unmd(e.value)
        for e in at.error
    )
    # a session-local path to a fresh file works again
    at.text_input(key=K + "db_path").input(str(triage_env.parent / "mine.sqlite")).run()
    assert not at.error
    assert metrics(at)["conflict pairs"] == "3"


def test_db_path_field_refuses_a_directory(triage_env):
    at = open_page()
    at.text_input(key=K + "db_path").input(str(triage_env.parent)).run()
    assert any("is a directory" in unmd(e.value) for e in at.error)
    # the path in force did not change
    assert unmd(at.expander[0].label) == f"Decision database: {triage_env} ($CRP_INSPECT_TRIAGE_DB)"


def test_exports_json_csv_and_cleaned_ckf(triage_env):
    at = open_page()
    set_operator(at, "carol")
    decide(at, "X1|X2", "mark_status", target="X2", status="QUARANTINED")
    show_tab(at, EXPORT)
    labels = [b.proto.label for b in at.get("download_button") if b.proto.id and K in b.proto.id]
    assert labels == [
        "Decisions as JSON",
        "Decisions as CSV",
        "Cleaned CKF",
        "crprotocol snapshot",
        "Audit log as JSONL",
    ]
    log = [d.value for d in at.dataframe if "pair" in d.value.columns and "kind" in d.value.columns]
    assert log and log[0].pair.tolist() == ["X1|X2"]


def test_facts_in_another_language_are_named_above_the_queue(triage_env):
    """The detector reads English: facts in another language are counted and named above the queue (an
    English CKF shows no such warning)."""
    at = open_page()
    assert not [w for w in at.warning if "read as English" in w.value]
    kb = triage_env.parent / "samples" / "knowledge_base.jsonl"
    rows = [json.loads(line) for line in kb.read_text(encoding="utf-8").splitlines()]
    german = {"E1": "Der Client-Port von etcd ist 2379.", "E2": "Der Client-Port von etcd ist nicht 2379."}
    rows = [dict(r, content=german.get(r["fact_id"], r["content"])) for r in rows]
    kb.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    at = open_page()
    said = [unmd(w.value) for w in at.warning if "read as English" in w.value]
    assert said == [
        "2 of 6 fact(s) do not read as English (German 2; e.g. E1, E2): the contradiction detector reads "
        "English, so a negation, a date or a changed name in another language is missed and its findings on "
        "them are incomplete"
    ]


def test_a_pair_only_an_operators_override_makes_is_arbitrated_and_says_why(triage_env):
    """E1 (etcd port, e0 + e4) and X1 (API rate limit, e2 + e4) share one axis of two: cosine 1/2, far below
    contradiction_similarity 0.85: stage 4 never pairs them until an operator overrides, "X1 wins"; the run then
    arbitrates the pair, X1 suppresses E1, and the pair's card says why it is there."""
    from crp_core.decisions import Decision
    from crp_core.records import NO_PATTERN_READ
    from crp_core.triage import DecisionStore

    at = show_tab(open_page(), ENV)
    assert ("E1", "X1") not in {(r.fact_a, r.fact_b) for r in env_pairs(at).itertuples()}
    with DecisionStore(triage_env) as store:
        store.record(Decision.override("E1", "X1", winner="X1", operator="alice"))
    at = show_tab(open_page(), ENV)
    rows = {(r.fact_a, r.fact_b): r for r in env_pairs(at).itertuples()}
    pair = rows[("E1", "X1")]
    assert (pair.patterns, pair.outcome, pair.suppressed) == (NO_PATTERN_READ, "override: X1 wins", "E1")
    why = [c.value for c in at.caption if c.value.startswith("Paired by an operator's decision")]
    assert why == [
        "Paired by an operator's decision: stage 4 would not pair these facts itself (cosine 0.5000, not above "
        "contradiction_similarity 0.85)."
    ]


# ---- the open tab in the URL (?tab=<label>) ---------------------------------------------------------------
def _link_warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if w.value.startswith("Link parameter ignored: ")]


@pytest.mark.parametrize(
    "value",
    ["Nope", "[open](http://evil.example) **bold** <b>tag</b>", "two\nlines \u202eevil"],
)
def test_a_tab_the_page_does_not_have_is_named_as_every_link_parameter_is_and_drawn_inert(triage_env, value):
    """Streamlit drops a ``tab`` value no tab has and opens the first tab without a word: the page says so with the
    link warning the other pages give (the value quoted as ``url_codec.shown_value`` quotes it, escaped as every
    warning is), on the reruns that follow too, until the user opens a tab."""
    from crp_ui import render
    from crp_ui.url_codec import shown_value

    at = run_page("conflicts", params={"tab": value})
    tabs = ", ".join((QUEUE, ENV, QUALITY, EXPORT))
    said = f"tab={shown_value(value)}: not one of this page's tabs ({tabs}); ignored"
    assert _link_warnings(at) == [f"Link parameter ignored: {render.md_escape(said)}"]
    assert at.session_state["tab"] == QUEUE  # the first tab, opened in its place
    (shown,) = _link_warnings(at)
    assert not any(raw in shown for raw in ("<b>", "](http", "**", "\n", "\u202e"))  # no markup, break or bidi drawn
    at.run()
    assert len(_link_warnings(at)) == 1  # the value is gone from the URL by now: the page still says it
    show_tab(at, ENV)
    assert _link_warnings(at) == []


def test_a_tab_the_page_has_opens_without_a_warning(triage_env):
    at = run_page("conflicts", params={"tab": QUALITY})
    assert at.session_state["tab"] == QUALITY and _link_warnings(at) == []

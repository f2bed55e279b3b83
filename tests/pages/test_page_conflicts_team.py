"""AppTest of the Conflicts page as a team's queue, on the hand-computed sample of
tests/support/conflicts_page.py (queue order T1|T2 (tie), X1|X2, E1|E2): the form resets after a write
and a second click records nothing; "Record and next" moves down the queue as shown; the kind's keyboard
shortcuts; the audit log with its pair and knowledge-base columns, this KB's decisions by default;
agreement per pair of operators on the Detector quality tab."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from crp_core.triage import Decision, DecisionStore
from tests.support.conflicts_page import EXPORT, QUALITY, K, decide, open_page, set_operator, show_tab, unmd
from tests.support.pages import frame_with, metric

pytestmark = pytest.mark.usefixtures("triage_env")


def infos(at: AppTest) -> list[str]:
    return [unmd(i.value) for i in at.info]


def fingerprint(db) -> str:
    """The sample's fingerprint, as the page stamps it (read back from a decision recorded through it)."""
    with DecisionStore(str(db), create=False) as store:
        fp = store.all()[0].ckf_fingerprint
    assert fp
    return fp


def test_the_form_resets_and_a_second_click_records_nothing(triage_env):
    at = open_page()
    set_operator(at, "alice")
    decide(at, "E1|E2", "dismiss", note="different clusters")
    pk = "E1|E2"
    assert at.text_area(key=f"{K}note.{pk}").value == ""  # the note is cleared
    assert metric(at, "decisions in the log") == "1"
    # the browser sends the form as it was when clicked twice: the same note, the same kind
    at.text_area(key=f"{K}note.{pk}").input("different clusters")
    at.button(key=f"{K}submit.{pk}").click().run()
    assert not at.exception and not at.error
    assert metric(at, "decisions in the log") == "1"
    assert any(i.startswith("Already recorded as decision #1 (") and i.endswith("nothing recorded.") for i in infos(at))
    # a corrected note is a new decision (the log keeps both; the latest is in force)
    decide(at, pk, "dismiss", note="same cluster, different namespaces")
    assert metric(at, "decisions in the log") == "2"
    with DecisionStore(str(triage_env), create=False) as store:
        assert [d.note for d in store.all()] == ["different clusters", "same cluster, different namespaces"]


def test_record_and_next_moves_down_the_queue_as_shown():
    at = open_page()
    set_operator(at, "bob")
    assert at.selectbox(key=K + "pair").value == "T1|T2"
    at.radio(key=K + "kind.T1|T2").set_value("dismiss").run()
    at.button(key=K + "submit_next.T1|T2").click().run()
    assert not at.exception and not at.error
    # the dismissed tie goes last in the queue; the pair after it in the queue as shown is X1|X2
    assert at.selectbox(key=K + "pair").value == "X1|X2"
    assert at.query_params["pair"] in ("X1|X2", ["X1|X2"])
    assert metric(at, "decisions in the log") == "1"
    at.radio(key=K + "kind.X1|X2").set_value("accept").run()
    at.button(key=K + "submit_next.X1|X2").click().run()
    assert at.selectbox(key=K + "pair").value == "E1|E2"
    at.button(key=K + "submit_next.E1|E2").click().run()  # the queue now ends with the dismissed tie
    assert at.selectbox(key=K + "pair").value == "T1|T2"
    at.radio(key=K + "kind.T1|T2").set_value("override").run()
    at.selectbox(key=K + "winner.T1|T2").set_value("T1")
    at.button(key=K + "submit_next.T1|T2").click().run()
    assert metric(at, "decisions in the log") == "4"
    assert at.selectbox(key=K + "pair").value == "T1|T2"
    assert "That was the last pair of the queue as shown." in infos(at)


def test_the_four_kinds_have_keyboard_shortcuts():
    at = open_page()
    pk = "T1|T2"
    buttons = {k: at.button(key=f"{K}key.{k}.{pk}") for k in ("accept", "override", "mark_status", "dismiss")}
    assert all(b.disabled for b in buttons.values())  # no operator yet
    assert at.button(key=f"{K}submit_next.{pk}").proto.shortcut == "n"
    set_operator(at, "carol")
    shortcuts = {k: at.button(key=f"{K}key.{k}.{pk}").proto.shortcut for k in buttons}
    assert shortcuts == {"accept": "a", "override": "o", "mark_status": "m", "dismiss": "d"}
    for kind in ("override", "mark_status", "dismiss", "accept"):
        at.button(key=f"{K}key.{kind}.{pk}").click().run()
        assert not at.exception
        assert at.radio(key=K + "kind." + pk).value == kind
    at.button(key=f"{K}key.override.{pk}").click().run()
    assert {str(w.key) for w in at.selectbox} >= {f"{K}winner.{pk}"}


def test_audit_log_has_pair_and_kb_columns_and_shows_this_kbs_decisions(triage_env):
    at = open_page()
    set_operator(at, "dana")
    decide(at, "X1|X2", "accept")
    fp = fingerprint(triage_env)
    with DecisionStore(str(triage_env), create=True) as store:
        store.record(Decision.dismiss("E1", "E2", operator="eve", ckf_fingerprint="f" * 64))  # another KB
        store.record(Decision.dismiss("Q1", "Q2", operator="eve"))  # no fingerprint: every KB
    show_tab(at, EXPORT)
    log = frame_with(at, "pair", "kb", "kind")
    assert log.pair.tolist() == ["X1|X2", "Q1|Q2"]
    assert log.kb.tolist() == [f"knowledge_base.jsonl · {fp[:12]}", "(none: applies to every KB)"]
    assert list(log.columns[:3]) == ["id", "pair", "kb"]
    assert any(
        "Audit log** (oldest first): 2 of 3 decision(s), this knowledge base's" in unmd(m.value) for m in at.markdown
    )
    at.toggle(key=K + "log.all_kbs").set_value(True).run()
    log = frame_with(at, "pair", "kb", "kind")
    assert log.pair.tolist() == ["X1|X2", "E1|E2", "Q1|Q2"]
    assert log.kb.tolist()[1] == "f" * 12


def test_audit_log_columns_have_widths_the_note_and_reverts_read_at(triage_env):
    """The audit log's thirteen columns drawn at their content's width cut the note and the reverts column off at a
    1400 px window; each column now has its width (the note 520 px, reverts 72 px, the short ones narrow), the id
    and the pair pinned while the table scrolls sideways; the pair's own history (no pair, no kb column) too."""
    import json

    from crp_ui.conflicts_view import HISTORY_WIDTHS

    at = open_page()
    set_operator(at, "dana")
    decide(at, "X1|X2", "dismiss", note="two different clusters, see the runbook")
    hist = [d for d in at.dataframe if {"kind", "note"} <= set(d.value.columns) and "pair" not in d.value.columns]
    assert hist, "the pair's decision history is shown"
    config = json.loads(hist[0].proto.columns)
    assert config["note"]["width"] == 520 and config["id"]["pinned"] is True and "pair" not in config
    show_tab(at, EXPORT)
    log = next(d for d in at.dataframe if {"pair", "kb", "reverts", "note"} <= set(d.value.columns))
    config = json.loads(log.proto.columns)
    assert {c: config[c]["width"] for c in log.value.columns} == HISTORY_WIDTHS
    assert (config["note"]["width"], config["reverts"]["width"]) == (520, 72)
    assert [c for c in log.value.columns if config[c].get("pinned")] == ["id", "pair"]
    assert "Double-click" in config["note"]["help"]


def test_quality_tab_shows_agreement_per_pair_of_operators(triage_env):
    at = open_page()
    set_operator(at, "ann")
    decide(at, "E1|E2", "accept")  # winner E1
    decide(at, "T1|T2", "dismiss")
    fp = fingerprint(triage_env)
    with DecisionStore(str(triage_env), create=True) as store:
        store.record(Decision.override("E1", "E2", winner="E1", operator="ben", ckf_fingerprint=fp))
        store.record(Decision.override("T1", "T2", winner="T2", operator="ben", ckf_fingerprint=fp))
    show_tab(at, QUALITY)
    got = frame_with(at, "operator_a", "operator_b", "Cohen's kappa")
    # ann: winner E1, dismiss; ben: winner E1, winner T2: p_o = 1/2; p_e = (1 * 1 + 1 * 0) / 4 = 1/4;
    # kappa = (1/2 - 1/4) / (3/4) = 1/3
    assert got.to_dict("records") == [
        {
            "operator_a": "ann",
            "operator_b": "ben",
            "shared pairs": 2,
            "agreed": 1,
            "percent agreement": "50.0 %",
            "Cohen's kappa": "0.333",
        }
    ]

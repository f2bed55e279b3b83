"""AppTest of "Revert a decision on any pair" (the Conflicts page's Export & audit log tab, crp_ui.revert_any): a
decision whose pair the triage queue does not hold is reverted from the dashboard as a queue pair's is (nothing
preselected, a required reason, the store's stale and role checks), under the role book's rule (an admin any
decision, a single-mode operator their own, another role none).

Samples: :mod:`tests.support.near_conflict_world` (N1 / N2, a near conflict just below contradiction_similarity) and
:mod:`tests.support.conflicts_page` (queue T1|T2, X1|X2, E1|E2; E1 and X1 are no conflict pair)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from crp_core.decisions import Decision
from crp_core.triage import DecisionStore
from tests.support.conflicts_page import (
    ENV,
    EXPORT,
    K,
    decide,
    open_page,
    sample_env,
    set_operator,
    show_tab,
    unmd,
    write_conflict_sample,
)
from tests.support.near_conflict_world import write_near_conflict_sample

ANY = K + "revert.target.any"
REASON = K + "revert.reason.any"
GO = K + "revert.go.any"


@pytest.fixture
def near_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return sample_env(tmp_path, monkeypatch, write_near_conflict_sample)


def team_file(tmp: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    p = tmp / "team.toml"
    p.write_text(text, encoding="utf-8")
    monkeypatch.setenv("CRP_INSPECT_TEAM", str(p))


def revert_titles(at: AppTest) -> list[str]:
    return [e.label for e in at.expander if "on any pair" in e.label]


def captions(at: AppTest) -> list[str]:
    return [unmd(c.value) for c in at.caption]


def revert(at: AppTest, target: int, reason: str) -> None:
    at.selectbox(key=ANY).set_value(target).run()
    at.text_input(key=REASON).input(reason)
    at.button(key=GO).click().run()
    assert not at.exception, [e.value for e in at.exception]


def near_shown(at: AppTest) -> bool:
    return any("just below contradiction_similarity" in unmd(w.value) for w in at.warning)


def test_a_dismissed_near_conflict_is_reverted_from_the_dashboard(near_env):
    at = show_tab(open_page(), ENV)
    set_operator(at, "rosa")
    at.button(key=K + "near.submit.N1|N2").click().run()  # dismiss: the near conflict is no longer reported
    assert not at.error and not near_shown(at)
    show_tab(at, EXPORT)
    assert revert_titles(at) == ["Revert a decision of yours, on any pair"]
    target = at.selectbox(key=ANY)
    assert target.value is None  # nothing preselected
    (option,) = target.options
    assert re.fullmatch(
        r"#1 · N1 ↔ N2 \(not in the queue\) · rosa · dismiss · dismissed \(not a conflict\) · \S+", option
    )
    assert at.button(key=GO).disabled  # until a decision is chosen
    target.set_value(1).run()
    assert any(c.startswith("#1 is on N1 ↔ N2: not in the queue. The detector does not flag") for c in captions(at))
    at.button(key=GO).click().run()
    assert any("give the reason" in unmd(e.value) for e in at.error)
    revert(at, 1, "they do contradict: one says not")
    assert [unmd(s.value) for s in at.success if "reverted" in s.value] == ["Decision #1 reverted by entry #2 (rosa)."]
    assert "No decision of yours on this CKF to revert." in captions(at)  # the one reverted is offered no more
    with DecisionStore(str(near_env), create=False) as store:
        rev = store.all()[-1]
    assert (rev.kind, rev.reverts, rev.based_on, rev.operator, rev.note, rev.origin) == (
        "revert",
        1,
        1,
        "rosa",
        "they do contradict: one says not",
        "dashboard",
    )
    assert rev.ckf_fingerprint and rev.kb_name == "knowledge_base.jsonl"
    assert near_shown(show_tab(at, ENV))  # the near conflict is reported again


def test_every_decision_of_yours_is_offered_wherever_its_pair_is(triage_env):
    """Single mode: dana's decisions on a queue pair, on a pair out of retrieval and on a pair the detector does not
    flag, newest first, each with its place; tom's is not offered; one on facts this CKF lacks is counted apart."""
    with DecisionStore(triage_env) as store:
        store.record(Decision.override("E1", "X1", winner="X1", operator="dana"))  # #1: no conflict pair
        store.record(Decision.dismiss("Z1", "Z2", operator="dana"))  # #2: facts this CKF lacks
        store.record(Decision.dismiss("E1", "E2", operator="tom"))  # #3: another operator's
    at = open_page()
    set_operator(at, "dana")
    decide(at, "T1|T2", "accept")  # #4: in the queue
    decide(at, "X1|X2", "mark_status", target="X2", status="QUARANTINED")  # #5: takes X1|X2 out of retrieval
    show_tab(at, EXPORT)
    options = [o.rsplit(" · ", 1)[0] for o in at.selectbox(key=ANY).options]
    assert options == [
        "#5 · X1 ↔ X2 (out of retrieval) · dana · mark_status · X2 marked QUARANTINED",
        "#4 · T1 ↔ T2 (in the queue) · dana · accept · accepted",
        "#1 · E1 ↔ X1 (not in the queue) · dana · override · override: X1 wins",
    ]
    assert "1 more on facts this CKF lacks: load their CKF to revert them." in captions(at)
    revert(at, 1, "E1 and X1 are two different settings")
    assert any(unmd(s.value) == "Decision #1 reverted by entry #6 (dana)." for s in at.success)
    assert [o.split(" · ")[0] for o in at.selectbox(key=ANY).options] == ["#5", "#4"]
    set_operator(at, "tom")
    assert [o.rsplit(" · ", 1)[0] for o in at.selectbox(key=ANY).options] == [
        "#3 · E1 ↔ E2 (in the queue) · tom · dismiss · dismissed (not a conflict)"
    ]


def test_an_admin_reverts_any_operators_decision_and_an_operator_none(triage_env, tmp_path, monkeypatch):
    team_file(tmp_path, monkeypatch, '[roles]\nadmin = ["root"]\n')
    with DecisionStore(triage_env) as store:
        store.record(Decision.override("E1", "X1", winner="X1", operator="olga"))  # #1
    op = show_tab(open_page(), EXPORT)
    set_operator(op, "olga")
    assert revert_titles(op) == ["Revert a decision on any pair (admin)"]
    assert "Only an admin reverts a decision; olga is operator." in captions(op)
    assert not [s for s in op.selectbox if s.key == ANY]
    admin = show_tab(open_page(), EXPORT)
    set_operator(admin, "root")
    assert revert_titles(admin) == ["Revert a decision on any pair"]
    revert(admin, 1, "X1 is another service's limit")
    assert any(unmd(s.value) == "Decision #1 reverted by entry #2 (root)." for s in admin.success)
    with DecisionStore(str(triage_env), create=False) as store:
        rev = store.all()[-1]
    assert (rev.kind, rev.reverts, rev.role, rev.operator) == ("revert", 1, "admin", "root")
    assert "No decision on this CKF to revert." in captions(admin)


def test_a_pair_changed_meanwhile_refuses_the_revert(triage_env, tmp_path, monkeypatch):
    """The store's stale check: the revert is based on the pair's latest entry as drawn."""
    team_file(tmp_path, monkeypatch, '[roles]\nadmin = ["root"]\n')
    with DecisionStore(triage_env) as store:
        store.record(Decision.override("E1", "X1", winner="X1", operator="olga"))  # #1
    admin = show_tab(open_page(), EXPORT)
    set_operator(admin, "root")
    admin.selectbox(key=ANY).set_value(1).run()
    with DecisionStore(str(triage_env), create=False) as store:
        store.record(Decision.dismiss("E1", "X1", operator="bob"))  # #2, while the admin has #1 chosen
    admin.text_input(key=REASON).input("X1 is another service's limit")
    admin.button(key=GO).click().run()
    assert [unmd(e.value) for e in admin.error] == [
        "Not reverted: bob recorded #2 on this pair meanwhile; review it and try again."
    ]
    with DecisionStore(str(triage_env), create=False) as store:
        assert [d.kind for d in store.all()] == ["override", "dismiss"]


MD_ID = "**bold**[link](http://evil.example/id):red[x]$x^2$"
BIDI_ID = "rtl\u202eevil\u202c-id"


def write_hostile_ids_sample(d: Path) -> Path:
    """The conflict sample with E1 and X1 renamed to ids carrying Markdown and a bidi control."""
    import json

    write_conflict_sample(d)
    kb = d / "knowledge_base.jsonl"
    rows = [json.loads(line) for line in kb.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["fact_id"] = {"E1": MD_ID, "X1": BIDI_ID}.get(r["fact_id"], r["fact_id"])
    kb.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return d


def test_ids_drawn_from_the_data_stay_inert(tmp_path, monkeypatch):
    from crp_ui import render

    db = sample_env(tmp_path, monkeypatch, write_hostile_ids_sample)
    with DecisionStore(db) as store:
        store.record(Decision.override(MD_ID, BIDI_ID, winner=MD_ID, operator="dana"))
    at = show_tab(open_page(), EXPORT)
    set_operator(at, "dana")
    (option,) = at.selectbox(key=ANY).options
    assert option.startswith(f"#1 · {MD_ID} ↔ rtl⟨U+202E⟩evil⟨U+202C⟩-id (not in the queue) · dana · override")
    at.selectbox(key=ANY).set_value(1).run()
    assert not at.exception
    (pair,) = [c.value for c in at.caption if c.value.startswith("\\#1 is on")]
    assert pair.startswith(render.md_escape(f"#1 is on {MD_ID} ↔ {BIDI_ID}: not in the queue"))


def test_a_choice_changed_in_the_same_run_as_the_click_records_nothing(triage_env):
    """The Revert button carries the decision shown when it was drawn: a click that arrives with another choice
    (a rerun not drawn yet) records nothing and says so."""
    with DecisionStore(triage_env) as store:
        store.record(Decision.override("E1", "X1", winner="X1", operator="dana"))  # #1
        store.record(Decision.dismiss("T1", "X2", operator="dana"))  # #2
    at = show_tab(open_page(), EXPORT)
    set_operator(at, "dana")
    at.selectbox(key=ANY).set_value(1).run()
    at.selectbox(key=ANY).set_value(2)
    at.text_input(key=REASON).input("two different settings")
    at.button(key=GO).click().run()
    assert [unmd(e.value) for e in at.error] == [
        "Not reverted: the decision chosen changed as you clicked; check it and click Revert again."
    ]
    with DecisionStore(str(triage_env), create=False) as store:
        assert len(store.all()) == 2

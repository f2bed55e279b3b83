"""AppTest of the Conflicts page as a live shared queue, two sessions (two AppTests) against one store, on
the hand-computed sample of tests/support/conflicts_page.py (queue order T1|T2, X1|X2, E1|E2): a decision
made on a state of the pair that changed meanwhile is refused with who decided what and when, and one
click records it over the newer entry; the other session sees the change on its next run; claims; the
hash chain's verdict and the JSONL log; the database away (a banner, the form kept, writing resumed);
the disagreements filter under a quorum of 2; an admin's revert."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from crp_core import TriageStoreUnavailable
from crp_core.triage import DecisionStore
from tests.support.conflicts_page import EXPORT, QUEUE, K, decide, open_page, set_operator, show_tab, unmd
from tests.support.pages import frame_with, metric

PK = "T1|T2"


def errors(at: AppTest) -> list[str]:
    return [unmd(e.value) for e in at.error]


def team_file(tmp: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    p = tmp / "team.toml"
    p.write_text(text, encoding="utf-8")
    monkeypatch.setenv("CRP_INSPECT_TEAM", str(p))


def test_a_decision_on_a_pair_changed_meanwhile_is_refused_then_confirmed(triage_env):
    alice, bob = open_page(), open_page()
    set_operator(alice, "alice")
    set_operator(bob, "bob")
    # both have T1|T2 open; Alice dismisses it first
    decide(alice, PK, "dismiss", note="same cache, two runners")
    bob.radio(key=K + "kind." + PK).set_value("override").run()
    bob.selectbox(key=K + "winner." + PK).set_value("T1")
    bob.button(key=K + "submit." + PK).click().run()
    assert not bob.exception
    (refusal,) = [e for e in errors(bob) if e.startswith("Not recorded")]
    assert re.fullmatch(
        r"Not recorded: this pair changed after the form was drawn\. alice \(operator, dashboard\) recorded "
        r'decision #1 at \S+: dismissed \(not a conflict\) \(note: "same cache, two runners"\)\.',
        refusal,
    ), refusal
    assert metric(bob, "decisions in the log") == "1"  # the page itself read the new entry
    assert any(unmd(c.value).startswith("Yours was: override: T1 wins.") for c in bob.caption)
    # one click records Bob's decision, based on Alice's
    bob.button(key=K + "confirm." + PK).click().run()
    assert not bob.exception and not [e for e in errors(bob) if e.startswith("Not recorded")]
    assert any(
        unmd(s.value).startswith("Recorded decision #2 on T1 ↔ T2: override: T1 wins (by bob") for s in bob.success
    )
    with DecisionStore(str(triage_env), create=False) as store:
        log = store.all()
    assert [(d.operator, d.kind, d.based_on, d.role, d.origin) for d in log] == [
        ("alice", "dismiss", 0, "operator", "dashboard"),
        ("bob", "override", 1, "operator", "dashboard"),
    ]
    assert all(d.kb_name == "knowledge_base.jsonl" and d.ckf_fingerprint for d in log)
    # Alice's page, on its next run (the poll's), says what changed since she opened the pair
    alice.run()
    warn = [unmd(w.value) for w in alice.warning if "changed since you opened it" in w.value]
    assert warn and "the latest #2 by bob at" in warn[0] and "override: T1 wins" in warn[0]
    assert metric(alice, "decisions in the log") == "2"
    # her next decision there is refused until she takes #2 into account
    alice.radio(key=K + "kind." + PK).set_value("accept").run()
    alice.button(key=K + "submit." + PK).click().run()
    assert any(
        e.startswith("Not recorded") and "bob (operator, dashboard) recorded decision #2" in e for e in errors(alice)
    )
    alice.button(key=K + "ack." + PK).click().run()
    assert not [w for w in alice.warning if "changed since you opened it" in w.value]
    alice.button(key=K + "submit." + PK).click().run()
    assert metric(alice, "decisions in the log") == "3"


def test_claims_hand_out_different_pairs_and_mark_them(triage_env):
    alice, bob = open_page(), open_page()
    set_operator(alice, "alice")
    set_operator(bob, "bob")
    alice.button(key=K + "claim_next").click().run()
    assert alice.selectbox(key=K + "pair").value == "T1|T2"
    assert any(unmd(s.value).startswith("Claimed T1|T2 until ") for s in alice.success)
    bob.run()
    bob.button(key=K + "claim_next").click().run()
    assert bob.selectbox(key=K + "pair").value == "X1|X2"  # T1|T2 is Alice's
    q = frame_with(bob, "A", "B", "state")
    states = dict(zip(q["A"].str.split(":").str[0], q["state"]))
    assert re.fullmatch(r"undecided · held by alice \(\d+ s left\)", states["T1"]), states
    assert states["X1"].endswith("claimed by you")
    # a decision ends the claim
    decide(alice, "T1|T2", "dismiss")
    bob.run()
    q = frame_with(bob, "A", "B", "state")
    assert "held by" not in dict(zip(q["A"].str.split(":").str[0], q["state"]))["T1"]


def test_the_audit_log_shows_the_chain_verdict_and_exports_jsonl(triage_env):
    at = open_page()
    set_operator(at, "alice")
    decide(at, "E1|E2", "accept")
    decide(at, "X1|X2", "dismiss")
    show_tab(at, EXPORT)
    assert any(
        unmd(s.value).startswith("Hash chain verified: 2 entries, each one holding the hash of the one before (")
        for s in at.success
    )
    (verdict,) = [unmd(s.value) for s in at.success if unmd(s.value).startswith("Hash chain verified")]
    assert "removing the newest entries leaves a valid chain" in verdict
    assert verdict.endswith("`crp-inspect triage verify --head HASH`).")
    with DecisionStore(str(triage_env), create=False) as store:
        head = store.verify().head
    assert len(head) == 64
    assert [c.value for c in at.code] == [head]  # the full value, copyable
    assert f"Head hash (the newest entry's): {head[:12]}… (full value below, to copy)" in [
        unmd(c.value) for c in at.caption
    ]
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Audit log as JSONL" in labels
    log = frame_with(at, "pair", "kb", "role", "origin")
    assert (log.role.tolist(), log.origin.tolist()) == (["operator"] * 2, ["dashboard"] * 2)


def test_a_log_changed_outside_names_the_broken_entry_and_the_command(triage_env):
    at = open_page()
    set_operator(at, "alice")
    decide(at, "E1|E2", "accept")
    decide(at, "X1|X2", "dismiss")
    decide(at, "T1|T2", "dismiss")
    con = sqlite3.connect(triage_env)
    con.execute("DROP TRIGGER decisions_append_only_update")
    con.execute("UPDATE decisions SET note = 'edited' WHERE id = 2")
    con.commit()
    con.close()
    show_tab(at, EXPORT)
    (broken,) = [e for e in at.error if unmd(e.value).startswith("Hash chain broken")]
    assert re.fullmatch(
        r"Hash chain broken at entry #2 \(1 entry before it verified\): .+\. The log was changed outside "
        r"crp-inspect from that entry on\. `crp-inspect triage verify` names it too\.",
        unmd(broken.value),
    ), broken.value
    assert broken.value.endswith(" `crp-inspect triage verify` names it too.")  # a code span, not escaped backticks
    assert not at.code  # no head hash to keep from a broken chain


def test_the_database_away_shows_a_banner_keeps_the_form_and_resumes(triage_env, monkeypatch):
    at = open_page()
    set_operator(at, "alice")
    decide(at, "E1|E2", "accept")
    down = TriageStoreUnavailable("connection refused (server at 127.0.0.1:5432)")

    def refuse(*_a, **_k):
        raise down

    with monkeypatch.context() as m:
        for name in ("all", "history", "latest_id", "__len__", "record", "claims", "verify"):
            m.setattr(DecisionStore, name, refuse)
        at.run()
        assert not at.exception
        banner = [e for e in errors(at) if e.startswith("The decision database cannot be reached since")]
        assert banner and "connection refused (server at 127.0.0.1:5432)" in banner[0]
        assert metric(at, "decisions in the log") == "1"  # what this session read last
        show_tab(at, QUEUE)
        at.selectbox(key=K + "pair").set_value("E1|E2").run()
        hist = frame_with(at, "id", "kind", "decided_at")
        assert hist.kind.tolist() == ["accept"]  # E1|E2's history as read before
        at.selectbox(key=K + "pair").set_value(PK).run()
        at.radio(key=K + "kind." + PK).set_value("dismiss").run()
        at.text_area(key=K + "note." + PK).input("two runners, one cache")
        at.button(key=K + "submit." + PK).click().run()
        assert not at.exception
        assert any(e.startswith("The decision database cannot be reached: nothing was recorded") for e in errors(at))
        assert at.text_area(key=K + "note." + PK).value == "two runners, one cache"  # the form kept
    # back: the same click records, the banner goes
    at.button(key=K + "submit." + PK).click().run()
    assert not [e for e in errors(at) if "cannot be reached" in e]
    assert metric(at, "decisions in the log") == "2"


def test_disagreements_filter_under_a_quorum_of_two(triage_env, tmp_path, monkeypatch):
    team_file(tmp_path, monkeypatch, "review_quorum = 2\n")
    alice, bob = open_page(), open_page()
    set_operator(alice, "alice")
    set_operator(bob, "bob")
    decide(alice, "X1|X2", "dismiss")
    decide(alice, "E1|E2", "accept")  # winner E1
    bob.run()
    decide(bob, "E1|E2", "override", winner="E1")  # the same position as Alice's: settled
    bob.run()
    bob.selectbox(key=K + "pair").set_value("X1|X2").run()
    bob.radio(key=K + "kind.X1|X2").set_value("override").run()
    bob.selectbox(key=K + "winner.X1|X2").set_value("X1")
    bob.button(key=K + "submit.X1|X2").click().run()
    show_tab(bob, QUEUE)
    bob.radio(key=K + "f.decided").set_value("disagreements").run()
    q = frame_with(bob, "A", "B", "review")
    assert q["fact_a"].tolist() == ["X1"]
    bob.toggle(key=K + "all_columns").set_value(True).run()
    bob.radio(key=K + "f.decided").set_value("all").run()
    q = frame_with(bob, "A", "B", "review")
    assert dict(zip(q.fact_a, q.review)) == {"T1": "open", "X1": "disagreement", "E1": "settled"}


def test_an_admin_reverts_with_a_reason_and_an_operator_cannot(triage_env, tmp_path, monkeypatch):
    team_file(tmp_path, monkeypatch, '[roles]\nadmin = ["root"]\n')
    op, admin = open_page(), open_page()
    set_operator(op, "olga")
    decide(op, "E1|E2", "override", winner="E2")
    assert op.button(key=K + "revert.go.E1|E2").disabled
    assert any("Only an admin reverts a decision; olga is operator." in unmd(c.value) for c in op.caption)
    set_operator(admin, "ROOT")
    admin.selectbox(key=K + "pair").set_value("E1|E2").run()
    assert admin.selectbox(key=K + "revert.target.E1|E2").value is None  # nothing preselected
    assert admin.button(key=K + "revert.go.E1|E2").disabled  # until a decision is chosen
    admin.selectbox(key=K + "revert.target.E1|E2").set_value(1).run()
    assert not admin.button(key=K + "revert.go.E1|E2").disabled
    admin.button(key=K + "revert.go.E1|E2").click().run()
    assert any("give the reason" in e for e in errors(admin))
    admin.text_input(key=K + "revert.reason.E1|E2").input("E2 is the retired port")
    admin.button(key=K + "revert.go.E1|E2").click().run()
    assert any(unmd(s.value) == "Decision #1 reverted by entry #2 (root)." for s in admin.success)
    # the admin's own revert is no change since the form opened (it warned her against herself)
    assert not any("changed since you opened it" in unmd(w.value) for w in admin.warning)
    q = frame_with(admin, "A", "B", "arbitration")
    assert dict(zip(q.fact_a, q.arbitration))["E1"] == "E1 wins"  # the override is no longer in force
    with DecisionStore(str(triage_env), create=False) as store:
        rev = store.all()[-1]
    assert (rev.kind, rev.reverts, rev.note, rev.role, rev.operator) == (
        "revert",
        1,
        "E2 is the retired port",
        "admin",
        "root",
    )


def test_the_revert_takes_back_the_decision_chosen_not_the_newest(triage_env, tmp_path, monkeypatch):
    team_file(tmp_path, monkeypatch, '[roles]\nadmin = ["root"]\n')
    olga, bob, admin = open_page(), open_page(), open_page()
    set_operator(olga, "olga")
    set_operator(bob, "bob")
    set_operator(admin, "root")
    decide(olga, "E1|E2", "override", winner="E2")  # #1
    admin.selectbox(key=K + "pair").set_value("E1|E2").run()
    target = admin.selectbox(key=K + "revert.target.E1|E2")
    assert re.fullmatch(r"#1 · olga · override · override: E2 wins · \S+", target.options[0]), target.options
    decide(bob, "E1|E2", "dismiss")  # #2, another operator's, arrives while the admin has the pair open
    admin.run()
    target = admin.selectbox(key=K + "revert.target.E1|E2")
    assert target.value is None and len(target.options) == 2
    assert re.fullmatch(r"#2 · bob · dismiss · dismissed \(not a conflict\) · \S+", target.options[1])
    assert admin.button(key=K + "revert.go.E1|E2").disabled
    target.set_value(1).run()
    admin.text_input(key=K + "revert.reason.E1|E2").input("E2 is the retired port")
    admin.button(key=K + "revert.go.E1|E2").click().run()
    assert not admin.exception
    assert any(unmd(s.value) == "Decision #1 reverted by entry #3 (root)." for s in admin.success)
    with DecisionStore(str(triage_env), create=False) as store:
        assert [(d.id, d.kind, d.reverts) for d in store.all()] == [
            (1, "override", None),
            (2, "dismiss", None),
            (3, "revert", 1),
        ]
    # the choice is cleared: only #2 is left to revert, and nothing is chosen
    target = admin.selectbox(key=K + "revert.target.E1|E2")
    assert target.value is None and [o.split(" · ")[0] for o in target.options] == ["#2"]
    assert admin.button(key=K + "revert.go.E1|E2").disabled


def test_single_mode_an_operator_reverts_their_own_decision_and_only_theirs(triage_env):
    # no team file: one person on a laptop takes back their own mistake; another name's decision is not offered
    dana, tom = open_page(), open_page()
    set_operator(dana, "dana")
    set_operator(tom, "tom")
    decide(dana, "E1|E2", "override", winner="E2")  # #1
    decide(tom, "X1|X2", "dismiss")  # #2
    dana.run()
    assert [e.label for e in dana.expander if "Revert" in e.label] == ["Revert a decision of yours"]
    target = dana.selectbox(key=K + "revert.target.E1|E2")
    assert len(target.options) == 1 and target.options[0].startswith("#1 · dana · override")
    target.set_value(1).run()
    dana.text_input(key=K + "revert.reason.E1|E2").input("not a conflict: two ports")
    dana.button(key=K + "revert.go.E1|E2").click().run()
    assert any(unmd(s.value) == "Decision #1 reverted by entry #3 (dana)." for s in dana.success)
    dana.selectbox(key=K + "pair").set_value("X1|X2").run()
    assert any("None of this pair's decisions is dana's" in unmd(c.value) for c in dana.caption)
    with DecisionStore(str(triage_env), create=False) as store:
        rev = store.all()[-1]
    assert (rev.kind, rev.reverts, rev.role, rev.operator) == ("revert", 1, "operator", "dana")

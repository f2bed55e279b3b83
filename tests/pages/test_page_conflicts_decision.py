"""AppTest of the Conflicts page after a pair decision (tests/support/queue_sample.py: 25 pairs in triage order
Q00, Q01, ...): the queue frame is patched, not built again; the counts follow; the decided pair leaves the
"undecided" view and a dismissed pair goes last in triage order; the next pair is selected."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest
from streamlit.testing.v1 import AppTest

from crp_ui import queue_patch, whole_scan
from tests.support.conflicts_page import set_operator
from tests.support.queue_page import K, open_queue, page_box, queue_env_at, queue_table, rows_line
from tests.support.queue_sample import pair_of

N = 25


@pytest.fixture
def queue_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return queue_env_at(tmp_path, monkeypatch, N)


def metric(at: AppTest, label: str) -> int:
    hits = [m.value for m in at.metric if m.label == label]
    assert len(hits) == 1, label
    return int(str(hits[0]).replace(",", ""))


def decide(at: AppTest, pk: str, kind: str) -> None:
    at.radio(key=K + "kind." + pk).set_value(kind).run()
    at.button(key=K + "submit_next." + pk).click().run()
    assert not at.exception, [e.value for e in at.exception]


def test_a_dismissal_patches_the_queue_and_the_pair_leaves_the_undecided_view(queue_env):
    at = open_queue(size=10)
    set_operator(at, "alice")
    at.radio(key=K + "f.decided").set_value("undecided").run()
    assert (metric(at, "undecided"), metric(at, "decided"), metric(at, "dismissed")) == (N, 0, 0)
    assert at.selectbox(key=K + "pair").value == pair_of(0)
    with (
        mock.patch.object(queue_patch, "built_frame", wraps=queue_patch.built_frame) as built,
        mock.patch.object(queue_patch, "patched_queue", wraps=queue_patch.patched_queue) as patched,
        mock.patch.object(whole_scan, "arbitrate_checked", wraps=whole_scan.arbitrate_checked) as full,
    ):
        decide(at, pair_of(0), "dismiss")
    assert built.call_count == 0 and patched.call_count >= 1 and full.call_count == 0
    assert (metric(at, "undecided"), metric(at, "decided"), metric(at, "dismissed")) == (N - 1, 1, 1)
    assert pair_of(0) not in queue_table(at)
    assert queue_table(at) == [pair_of(k) for k in range(1, 11)]
    assert rows_line(at) == f"rows 1-10 of {N - 1}"
    assert at.selectbox(key=K + "pair").value == pair_of(1)  # "Record and next"
    # every pair in triage order: the dismissed pair last
    at.radio(key=K + "f.decided").set_value("all").run()
    page_box(at).set_value(3).run()
    assert queue_table(at) == [*(pair_of(k) for k in range(21, 25)), pair_of(0)]


def test_an_override_keeps_the_pair_in_place_with_its_new_winner(queue_env):
    at = open_queue({"pair": pair_of(4)}, size=10)
    set_operator(at, "alice")
    pk = pair_of(4)
    decide(at, pk, "override")  # the form's winner: the side that loses by authority, Q04b
    assert queue_table(at)[:10] == [pair_of(k) for k in range(10)]  # an override is no dismissal: same place
    hits = [d.value for d in at.dataframe if "fact_a" in d.value.columns and "state" in d.value.columns]
    state = dict(zip(hits[0]["fact_a"], hits[0]["state"]))["Q04a"]
    assert "override: Q04b wins" in state and "A suppressed" in state, state
    assert (metric(at, "undecided"), metric(at, "decided"), metric(at, "dismissed")) == (N - 1, 1, 0)


def test_a_stale_mark_reorders_the_pair_without_a_new_scan_or_check(queue_env):
    at = open_queue({"pair": pair_of(3)}, size=10)
    set_operator(at, "alice")
    pk = pair_of(3)
    at.radio(key=K + "kind." + pk).set_value("mark_status").run()
    at.selectbox(key=K + "status." + pk).set_value("STALE")  # sent with the submit; the target: Q03b, the loser
    with (
        mock.patch.object(queue_patch, "built_frame", wraps=queue_patch.built_frame) as built,
        mock.patch.object(whole_scan, "arbitrate_checked", wraps=whole_scan.arbitrate_checked) as full,
        mock.patch.object(whole_scan, "check_ckf", wraps=whole_scan.check_ckf) as checks,
    ):
        at.button(key=K + "submit_next." + pk).click().run()
        assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error], [e.value for e in at.error]
    assert (built.call_count, full.call_count, checks.call_count) == (0, 0, 0)
    assert (metric(at, "undecided"), metric(at, "decided")) == (N - 1, 1)
    # Q03b's recency falls to the stale floor: its margin is now the largest, so the pair goes last
    at.radio(key=K + "f.decided").set_value("all").run()
    page_box(at).set_value(3).run()
    assert queue_table(at) == [*(pair_of(k) for k in range(21, 25)), pair_of(3)]
    hits = [d.value for d in at.dataframe if "fact_a" in d.value.columns and "state" in d.value.columns]
    assert "Q03b marked STALE" in dict(zip(hits[0]["fact_a"], hits[0]["state"]))["Q03a"]


def test_under_an_override_the_form_says_what_an_accept_records_and_preselects_the_override(queue_env):
    """alice overrides Q04 (Q04b wins, against authority). For bob the Accept caption says it returns the pair to
    authority (Q04a wins) and replaces the override, and Override preselects Q04b, so recording it confirms
    alice (a walk-through's reviewer pressed Accept under 'Q04b wins (operator override)' meaning to agree, and
    recorded Q04a against it). Bob's Override is then the same position as alice's."""
    from crp_core import DecisionStore

    at = open_queue({"pair": pair_of(4)}, size=10)
    set_operator(at, "alice")
    pk = pair_of(4)
    decide(at, pk, "override")
    at.selectbox(key=K + "pair").set_value(pk).run()
    set_operator(at, "bob")
    at.radio(key=K + "kind." + pk).set_value("accept").run()
    said = [c.value.replace("\\", "") for c in at.caption if "arbitration by authority" in c.value.replace("\\", "")]
    assert said and said[0].startswith("Returns the pair to arbitration by authority: Q04a wins by authority.")
    assert "replaces the override in force (Q04b wins (operator override); Q04a suppressed)" in said[0]
    at.radio(key=K + "kind." + pk).set_value("override").run()
    assert at.selectbox(key=K + "winner." + pk).value == "Q04b"
    at.button(key=K + "submit." + pk).click().run()
    assert not at.exception, [e.value for e in at.exception]
    with DecisionStore(str(queue_env)) as store:  # queue_env is the store file
        mine = [(d.operator, d.kind, d.winner) for d in store.all()]
    assert mine[-2:] == [("alice", "override", "Q04b"), ("bob", "override", "Q04b")]

"""AppTest of the Conflicts page's paged triage queue (crp_ui.triage_queue, crp_ui.paging) on a CKF of 25
conflict pairs in triage order Q00, Q01, ... Q24 (tests/support/queue_sample.py): the table and the pair
select box hold one page; a linked pair opens the page holding it; "Record and next" moves to the next
pair across a page boundary; a new filter or order opens page 1; the order is linked as ``?qsort=``."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from crp_core.triage import Decision, DecisionStore
from tests.support.conflicts_page import set_operator
from tests.support.queue_page import K, open_queue, page_box, picker_keys, queue_env_at, queue_table, rows_line
from tests.support.queue_sample import pair_of

N = 25


@pytest.fixture
def queue_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return queue_env_at(tmp_path, monkeypatch, N)


def test_the_table_and_the_select_box_hold_one_page(queue_env):
    at = open_queue()
    assert queue_table(at) == [pair_of(k) for k in range(N)]  # default 50 rows per page: every pair
    assert rows_line(at) == "rows 1-25 of 25"
    at.selectbox(key=K + "page_size").set_value(10).run()
    assert queue_table(at) == [pair_of(k) for k in range(10)]
    assert picker_keys(at) == [pair_of(k) for k in range(10)]
    assert page_box(at).label == "page (of 3)" and rows_line(at) == "rows 1-10 of 25"
    notice = " ".join(w.value for w in at.sidebar.warning if "This link does not carry" in w.value)
    assert "the triage queue's page size (rows per page 10)" in notice.replace("\\", ""), notice
    page_box(at).set_value(3).run()
    assert not at.exception
    assert queue_table(at) == [pair_of(k) for k in range(20, 25)]
    assert picker_keys(at) == [pair_of(k) for k in range(20, 25)]
    assert rows_line(at) == "rows 21-25 of 25"
    # a page turn selects the page's first pair (the select box cannot hold a pair of another page)
    assert at.selectbox(key=K + "pair").value == pair_of(20)
    assert at.query_params["pair"] == pair_of(20)


def test_a_pair_link_opens_the_page_holding_it(queue_env):
    at = open_queue({"pair": pair_of(22)}, size=10)
    assert page_box(at).value == 3
    assert at.selectbox(key=K + "pair").value == pair_of(22)
    assert queue_table(at) == [pair_of(k) for k in range(20, 25)]
    # a new page size keeps the selected pair in view: its page under that size opens
    at.selectbox(key=K + "page_size").set_value(25).run()
    assert page_box(at).value == 1 and at.selectbox(key=K + "pair").value == pair_of(22)
    at.selectbox(key=K + "page_size").set_value(10).run()
    assert page_box(at).value == 3 and at.selectbox(key=K + "pair").value == pair_of(22)


def test_record_and_next_crosses_a_page_boundary(queue_env):
    at = open_queue({"pair": pair_of(9)}, size=10)
    assert page_box(at).value == 1 and at.selectbox(key=K + "pair").value == pair_of(9)
    set_operator(at, "alice")
    pk = pair_of(9)
    at.radio(key=K + "kind." + pk).set_value("accept").run()
    at.button(key=K + "submit_next." + pk).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key=K + "pair").value == pair_of(10)
    assert page_box(at).value == 2
    assert queue_table(at) == [pair_of(k) for k in range(10, 20)]
    assert at.query_params["pair"] == pair_of(10)


def test_a_new_filter_or_order_opens_page_1(queue_env):
    at = open_queue({"pair": pair_of(22)}, size=10)
    assert page_box(at).value == 3
    at.radio(key=K + "f.decided").set_value("undecided").run()
    assert page_box(at).value == 1 and rows_line(at) == "rows 1-10 of 25"
    assert at.selectbox(key=K + "pair").value == pair_of(0)
    page_box(at).set_value(2).run()
    assert at.selectbox(key=K + "pair").value == pair_of(10)
    at.selectbox(key=K + "sort").set_value("margin").run()
    assert page_box(at).value == 1 and at.selectbox(key=K + "pair").value == pair_of(0)
    assert at.query_params["qsort"] == "margin"


def test_a_linked_order_sorts_every_page(queue_env):
    # Q03 decided, then Q17: "decided (latest first)" puts Q17, Q03 on top, the undecided after in triage order
    with DecisionStore(str(queue_env), create=True) as store:
        for k in (3, 17):
            store.record(Decision.dismiss(f"Q{k:02d}a", f"Q{k:02d}b", operator="alice"))
    at = open_queue({"qsort": "decided"}, size=10)
    assert at.selectbox(key=K + "sort").value == "decided"
    assert queue_table(at) == [pair_of(k) for k in (17, 3, 0, 1, 2, 4, 5, 6, 7, 8)]
    assert at.selectbox(key=K + "pair").value in picker_keys(at)
    page_box(at).set_value(3).run()
    assert queue_table(at) == [pair_of(k) for k in range(20, 25)]


def test_an_unknown_order_in_the_link_is_ignored_with_a_warning(queue_env):
    at = open_queue({"qsort": "<b>x</b>"})
    assert at.selectbox(key=K + "sort").value == "triage"
    warned = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "qsort=<b>x</b>: not one of the choices this page offers; ignored" in warned, warned
    assert queue_table(at)[:2] == [pair_of(0), pair_of(1)]


def download_label(at: AppTest) -> str:
    hits = [str(b.proto.label) for b in at.get("download_button") if "shown by the filters" in str(b.proto.label)]
    assert len(hits) == 1
    return hits[0]


def test_the_download_holds_every_pair_the_filters_leave_not_one_page(queue_env):
    at = open_queue(size=10)
    assert len(queue_table(at)) == 10
    assert download_label(at) == f"Download the {N} pairs shown by the filters (CSV)"
    at.radio(key=K + "f.decided").set_value("decided").run()
    assert not [b for b in at.get("download_button") if "shown by the filters" in str(b.proto.label)]  # none left

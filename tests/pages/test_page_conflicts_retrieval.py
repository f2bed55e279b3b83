"""AppTest of the Conflict triage page with a fact an operator took out of retrieval: the page's scan is
``crp-inspect conflicts``' on the same store (the counts, the retrievable facts, the candidate pairs), and the
pair the mark took out stays explainable: listed apart with the mark, opened by a link, brought back by an
ACTIVE mark (docs/decisions/triage.md, "Out of retrieval").

The sample of :mod:`tests.support.conflicts_page`: three conflicting pairs T1|T2 (a tie), X1|X2, E1|E2."""

from __future__ import annotations

import json
import re

import pytest

from crp_core.cli import main
from crp_core.triage import Decision, DecisionStore
from tests.support.conflicts_page import K, decide, open_page, set_operator, unmd
from tests.support.pages import run_page

NOW = "2026-11-01T00:00:00Z"  # the sample scenario's now


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def page_figures(at) -> tuple[int, int, int]:
    """(conflict pairs, retrievable facts, candidate pairs) as the queue says them."""
    (caption,) = [c.value for c in at.caption if "scan over" in c.value]
    got = re.search(r"scan over (\d+) retrievable facts, (\d+) pairs with cosine", caption)
    assert got is not None, caption
    return int(metrics(at)["conflict pairs"]), int(got.group(1)), int(got.group(2))


def cli_figures(triage_env, capsys) -> tuple[int, int, int]:
    """(conflicting pairs, retrievable facts, candidate pairs) of ``crp-inspect conflicts`` on the same store."""
    ckf = triage_env.parent / "samples" / "knowledge_base.jsonl"
    argv = ["conflicts", "--ckf", str(ckf), "--now", NOW, "--triage-db", str(triage_env), "--check-workers", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    facts = re.search(r"(\d+) retrievable fact\(s\) scanned", out)
    candidates = re.search(r"candidate pairs \(cosine > [0-9.]+\): (\d+)", out)
    pairs = re.search(r"conflicting pairs: (\d+)", out)
    assert facts and candidates and pairs, out
    return int(pairs.group(1)), int(facts.group(1)), int(candidates.group(1))


@pytest.mark.parametrize("status", ["QUARANTINED", "DELETED"])
def test_the_queue_counts_what_crp_inspect_conflicts_counts_after_a_mark_out_of_retrieval(triage_env, capsys, status):
    with DecisionStore(str(triage_env), create=True) as store:
        store.record(Decision.override("X1", "X2", winner="X1", operator="rosa"))
        store.record(Decision.mark_status("X1", "X2", fact="X2", status=status, operator="rosa", note="old page"))
    at = open_page()
    assert page_figures(at) == cli_figures(triage_env, capsys) == (2, 5, 2)
    m = metrics(at)
    assert (m["undecided"], m["decided"]) == ("2", "0")  # X1|X2 and its decisions are out of the queue
    (apart,) = [d.value for d in at.dataframe if "out of retrieval" in d.value.columns]
    assert apart.to_dict("records") == [
        {
            "fact_a": "X1",
            "fact_b": "X2",
            "patterns": "NUMBER_CHANGED",
            "out of retrieval": f"X2 {status}",
            "by": "rosa",
            "at": apart.at[0, "at"],
            "note": "old page",
            "decision": "override: X1 wins",
        }
    ]


def test_crp_inspect_conflicts_lists_apart_the_pairs_the_page_lists_out_of_retrieval(triage_env, capsys):
    """One rule (``crp_core.within_retrievable``, ``DecisionSet.out_of_retrieval``) for both: the same pairs, in the
    same order, taken out by the same marks (``--json --out-of-retrieval``; the summary lists them always)."""
    with DecisionStore(str(triage_env), create=True) as store:
        store.record(Decision.mark_status("X1", "X2", fact="X2", status="QUARANTINED", operator="rosa"))
        store.record(Decision.mark_status("E1", "E2", fact="E1", status="DELETED", operator="ana", note="dup"))
    at = open_page()
    (apart,) = [d.value for d in at.dataframe if "out of retrieval" in d.value.columns]
    page = [(r["fact_a"], r["fact_b"], r["out of retrieval"], r["by"]) for r in apart.to_dict("records")]
    ckf = triage_env.parent / "samples" / "knowledge_base.jsonl"
    argv = ["conflicts", "--ckf", str(ckf), "--now", NOW, "--triage-db", str(triage_env), "--check-workers", "1"]
    assert main([*argv, "--json", "--out-of-retrieval"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if "out_of_retrieval" in r]
    cli = [
        (
            r["fact_a"],
            r["fact_b"],
            ", ".join(f"{m['fact']} {m['status']}" for m in r["out_of_retrieval"]),
            ", ".join(m["operator"] for m in r["out_of_retrieval"]),
        )
        for r in rows
    ]
    assert cli == page and len(page) == 2


def test_a_link_to_a_pair_out_of_retrieval_opens_it_with_the_mark_and_an_active_mark_brings_it_back(triage_env):
    with DecisionStore(str(triage_env), create=True) as store:
        store.record(Decision.mark_status("X1", "X2", fact="X2", status="QUARANTINED", operator="rosa"))
    at = run_page("conflicts", params={"pair": "X2|X1"})
    assert not [w for w in at.warning if "not a conflict pair" in w.value]
    assert at.selectbox(key=K + "aside").value == "X1|X2"
    (why,) = [unmd(i.value) for i in at.info if "out of the queue" in i.value]
    assert why.startswith("X1 ↔ X2 is out of the queue: X2 is QUARANTINED by rosa (decision #1")
    assert "Mark the fact ACTIVE (or STALE) to bring the pair back" in why
    assert at.query_params["pair"] in ("X1|X2", ["X1|X2"])  # the link names the pair shown
    set_operator(at, "ana")
    at.radio(key=K + "kind.X1|X2").set_value("mark_status").run()
    at.selectbox(key=K + "target.X1|X2").set_value("X2")
    at.selectbox(key=K + "status.X1|X2").set_value("ACTIVE")
    at.button(key=K + "submit.X1|X2").click().run()
    assert not at.exception and not at.error
    assert metrics(at)["conflict pairs"] == "3"
    assert not [d for d in at.dataframe if "out of retrieval" in d.value.columns]
    assert at.selectbox(key=K + "pair").value == "X1|X2"  # back in the queue, selected there


def test_a_quarantine_recorded_on_the_queues_pair_keeps_it_open_and_back_goes_to_the_queue(triage_env):
    at = open_page()
    set_operator(at, "ana")
    decide(at, "E1|E2", "mark_status", target="E2", status="DELETED")
    assert metrics(at)["conflict pairs"] == "2"
    assert at.selectbox(key=K + "aside").value == "E1|E2"
    assert at.selectbox(key=K + "pair").value is None  # no pair of the queue shown meanwhile
    at.button(key=K + "aside.back").click().run()
    assert not at.exception
    assert at.selectbox(key=K + "pair").value == "T1|T2"  # the queue's first undecided pair
    assert not [i for i in at.info if "out of the queue" in i.value]


def test_claim_next_closes_the_pair_out_of_retrieval_for_the_pair_it_claims(triage_env):
    with DecisionStore(str(triage_env), create=True) as store:
        store.record(Decision.mark_status("X1", "X2", fact="X2", status="QUARANTINED", operator="rosa"))
    at = run_page("conflicts", params={"pair": "X1|X2"})
    set_operator(at, "ana")
    assert at.selectbox(key=K + "aside").value == "X1|X2"
    at.button(key=K + "claim_next").click().run()
    assert not at.exception
    assert at.selectbox(key=K + "pair").value == "T1|T2"  # the claimed pair, in the queue pair's place
    assert not [i for i in at.info if "out of the queue" in i.value]

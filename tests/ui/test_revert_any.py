"""The pure parts of "Revert a decision on any pair" (crp_ui.revert_any, crp_ui.triage_revert): where a decision's
pair is, which pairs the CKF loaded holds, what an option says, and which entries may still be taken back."""

from __future__ import annotations

from dataclasses import replace

from crp_core.decisions import Decision
from crp_ui.revert_any import IN_QUEUE, NOT_IN_QUEUE, OUT_OF_RETRIEVAL, on_this_ckf, pair_place
from crp_ui.triage_revert import option_label, revertible


def recorded(d: Decision, i: int) -> Decision:
    return replace(d, id=i, decided_at=f"2026-12-0{i}T00:00:00Z")


class Ckf:
    """A knowledge base holding ``ids`` (``get`` is all the section asks of one)."""

    def __init__(self, *ids: str):
        self.ids = set(ids)

    def get(self, fact_id: str) -> object | None:
        return object() if fact_id in self.ids else None


def test_pair_place_names_the_queue_out_of_retrieval_or_neither():
    d = recorded(Decision.dismiss("B", "A", operator="ann"), 1)  # stored in canonical order: A|B
    assert pair_place(d, {"A|B"}, set()) == IN_QUEUE
    assert pair_place(d, set(), {"A|B"}) == OUT_OF_RETRIEVAL
    assert pair_place(d, {"A|C"}, {"B|C"}) == NOT_IN_QUEUE


def test_only_pairs_whose_two_facts_the_ckf_holds_are_on_it():
    d = recorded(Decision.dismiss("A", "B", operator="ann"), 1)
    assert on_this_ckf(d, Ckf("A", "B", "C"))  # type: ignore[arg-type]
    assert not on_this_ckf(d, Ckf("A"))  # type: ignore[arg-type]


def test_an_option_names_its_pair_and_place_and_shows_controls_literally():
    d = recorded(Decision.override("N1", "N\u202e2", winner="N1", operator="rosa"), 3)
    assert option_label(d) == "#3 · rosa · override · override: N1 wins · 2026-12-03T00:00:00Z"
    assert option_label(d, NOT_IN_QUEUE) == (
        "#3 · N1 ↔ N⟨U+202E⟩2 (not in the queue) · rosa · override · override: N1 wins · 2026-12-03T00:00:00Z"
    )


def test_revert_entries_and_the_decisions_they_took_back_are_not_offered():
    a = recorded(Decision.dismiss("A", "B", operator="ann"), 1)
    b = recorded(Decision.override("C", "D", winner="C", operator="ann"), 2)
    c = recorded(Decision.revert("A", "B", reverts=1, operator="ann", reason="wrong"), 3)
    assert revertible([a, b, c]) == [b]

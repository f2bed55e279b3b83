"""crp_ui.before_after_view: the before / after tables."""

from __future__ import annotations

from types import SimpleNamespace

from crp_core import before_after
from crp_ui import before_after_view
from tests.support.sweep_case import tiny_case


def test_the_note_block_column_says_in_words_whether_the_model_is_told():
    """The table renders cells as text: a bool read "true" / "false" (a demo rehearsal's finding)."""
    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    side = SimpleNamespace(contradictory_pairs=(("P1", "P2"), ("F1", "F2")), noted_pairs=(("F1", "F2"),))
    frame = before_after_view.pairs_frame(ba, side)  # type: ignore[arg-type]
    assert frame["NOTE block"].tolist() == ["no", "yes (tied)"]
    assert frame["text a"].iloc[0] == corpus.kb.get("P1").content

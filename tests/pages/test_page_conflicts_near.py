"""AppTest of the Conflicts page's near conflicts (docs/decisions/near-conflicts.md): a pair of the envelope just
below contradiction_similarity whose texts value-conflict is named with the way to act, and the page decides it
where it shows it: a dismissal silences it (the run tab, the Story), an override has it arbitrated; a link to it
says where it is decided, not only that the queue does not hold it.

The sample of :mod:`tests.support.near_conflict_world`: N1 / N2 flip a negation at cosine .830 (the threshold is
.85), P1 / P2 change a number above it (stage 4's own pair)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.conflicts_page import ENV, K, open_page, sample_env, set_operator, show_tab, unmd
from tests.support.near_conflict_world import write_near_conflict_sample
from tests.support.pages import run_page

NEAR = "N1|N2"


@pytest.fixture
def near_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return sample_env(tmp_path, monkeypatch, write_near_conflict_sample)


def near_warnings(at) -> list[str]:
    return [unmd(w.value) for w in at.warning if "just below contradiction_similarity" in unmd(w.value)]


def env_pairs(at) -> set[tuple[str, str]]:
    frames = [d.value for d in at.dataframe if "outcome" in d.value.columns]
    return {(r.fact_a, r.fact_b) for r in frames[0].itertuples()} if frames else set()


def story_says_near(at) -> bool:
    return any("read as a value conflict just below" in unmd(m.value) for m in at.markdown)


def test_a_near_conflict_is_dismissed_where_it_is_shown_and_no_longer_reported(near_env):
    assert story_says_near(open_page("story"))
    at = show_tab(open_page(), ENV)
    (warning,) = near_warnings(at)
    assert re.search(r"N2 ↔ N1 \(cos 0\.8[23]\d\d, NEGATION_FLIP\)", warning), warning  # in the packed order
    assert "The triage queue holds only pairs above the threshold: decide each pair below" in warning
    assert "decide the pair in the triage queue" not in warning  # it does not hold it
    assert at.radio(key=K + "near.kind." + NEAR).value == "dismiss"
    assert at.button(key=K + "near.submit." + NEAR).disabled  # no operator yet
    set_operator(at, "rosa")
    at.text_area(key=K + "near.note." + NEAR).input("two different rules")
    at.button(key=K + "near.submit." + NEAR).click().run()
    assert not at.exception and not at.error
    recorded = "Recorded decision #1 on N1 ↔ N2: dismissed (not a conflict) (by rosa"
    assert any(recorded in unmd(s.value) for s in at.success)
    assert near_warnings(at) == [] and not [r for r in at.radio if r.key == K + "near.kind." + NEAR]
    # the Story page of another session says no near conflict any more
    assert not story_says_near(open_page("story"))


def test_an_override_has_the_near_pair_arbitrated_in_the_run(near_env):
    at = show_tab(open_page(), ENV)
    assert env_pairs(at) == {("P1", "P2")}
    set_operator(at, "rosa")
    at.radio(key=K + "near.kind." + NEAR).set_value("override").run()
    at.button(key=K + "near.submit." + NEAR).click().run()
    assert any("Choose the winner" in unmd(e.value) for e in at.error)  # none preselected
    at.selectbox(key=K + "near.winner." + NEAR).set_value("N2")
    at.button(key=K + "near.submit." + NEAR).click().run()
    assert not at.exception
    assert near_warnings(at) == []
    assert env_pairs(at) == {("P1", "P2"), ("N1", "N2")}  # stage 4 arbitrates it by the decision


def test_a_link_to_a_near_pair_says_where_it_is_decided(near_env):
    at = run_page("conflicts", params={"pair": NEAR})
    (miss,) = [unmd(w.value) for w in at.warning if "not a conflict pair" in w.value]
    assert "a near conflict of the current run is decided in its Envelope conflicts tab" in miss

"""``fact_outcomes``'s short path (candidates that are gated out, ranked below the anchor budget or
unchosen connector candidates) words every outcome exactly as the general per-row ``_reason`` does:
compared on random small corpora (Hypothesis) with the short path off (every row through ``_reason``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from crp_core import outcomes as outcomes_mod
from crp_core.outcomes import fact_outcomes
from tests.support.pipeline_worlds import run_world, worlds


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_short_path_words_outcomes_as_the_general_path(world):
    corpus, _, r = run_world(world)
    roles = {corpus.kb.index_of(p.fact_id): p.role for p in r.envelope.order}
    guarded = {o.fact_id: "guarded here" for o in r.outcomes[::5]}
    args = (corpus, r.candidates, r.cdr, r.cdgr, r.resolution, r.envelope, roles)
    got = fact_outcomes(*args, guarded=guarded)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(outcomes_mod, "SHORT_PATH", False)
        want = fact_outcomes(*args, guarded=guarded)
    assert got == want

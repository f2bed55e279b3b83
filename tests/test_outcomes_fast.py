"""``fact_outcomes``'s short path (candidates that are gated out, ranked below the anchor budget or
unchosen connector candidates) words every outcome exactly as the general per-row ``_reason`` does:
compared on random small corpora (Hypothesis) with the short path off (every row through ``_reason``)."""
from __future__ import annotations

import pytest
from factories import make_corpus, make_scenario
from hypothesis import HealthCheck, given, settings
from test_properties_pipeline import NOW, worlds

from crp_core import outcomes as outcomes_mod
from crp_core.outcomes import fact_outcomes
from crp_core.pipeline import run_pipeline


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_short_path_words_outcomes_as_the_general_path(world):
    facts, vecs, centre, subs, addressed, prior, cfg = world
    corpus = make_corpus(facts, vecs, cfg)
    scen = make_scenario(centre, sub_queries=subs, addressed=addressed, prior_outputs=prior, now=NOW)
    r = run_pipeline(corpus, scen, cfg)
    roles = {corpus.kb.index_of(p.fact_id): p.role for p in r.envelope.order}
    guarded = {o.fact_id: "guarded here" for o in r.outcomes[::5]}
    args = (corpus, r.candidates, r.cdr, r.cdgr, r.resolution, r.envelope, roles)
    got = fact_outcomes(*args, guarded=guarded)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(outcomes_mod, "SHORT_PATH", False)
        want = fact_outcomes(*args, guarded=guarded)
    assert got == want

"""The relevance gate's note (crp_core.relevance_gate, docs/decisions/gate-note.md): exact fields and message on a
hand-built corpus, the cases without a note, and the hint's promise (a run at the suggested gate admits the
facts it counts)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core import gate_counts, gate_note, run_report
from crp_core.config import CRPConfig
from crp_core.pipeline import run_pipeline
from tests.support.factories import at_cos, fact, make_corpus, make_scenario

DIM = 12
QUERY = np.eye(DIM)[0]


def _run(relevances, **config):
    """One run: fact ``Fi`` at cosine ``relevances[i]`` to the query, each towards its own axis (no two
    facts alike), no graph walk unless asked (every place is an anchor place)."""
    n = len(relevances)
    facts = [fact(f"F{i}", f"fact number {i} about topic {i}", modified_at="2026-05-01") for i in range(n)]
    vecs = [at_cos(QUERY, np.eye(DIM)[i + 1], r) for i, r in enumerate(relevances)]
    cfg = CRPConfig().with_overrides({"graph_retrieval": False, **config})
    corpus = make_corpus(facts, vecs, cfg)
    return run_pipeline(corpus, make_scenario(QUERY), cfg)


RELEVANCES = [0.9, 0.8, 0.5057, 0.4553, 0.3051, 0.1057]


def test_note_fields_and_message_by_hand():
    # gate 0.55 passes F0, F1 (2 facts); no graph walk: anchor places = envelope_fact_budget = 10 > 2;
    # the envelope packs the two, 8 places empty; the 4 gated facts sorted: 0.5057, 0.4553, 0.3051, 0.1057;
    # min(10 - 2, 4) = 4 of them fill places: the 4th's relevance rounded down to two decimals, 0.10, admits all 4
    result = _run(RELEVANCES, envelope_fact_budget=10)
    note = gate_note(result)
    assert note is not None
    assert (note.threshold, note.retrieved, note.passed, note.anchor_places, note.budget, note.packed) == (
        0.55,
        6,
        2,
        10,
        10,
        2,
    )
    assert note.nearest == pytest.approx((0.5057, 0.4553, 0.3051), abs=1e-6)  # cosines through float32 vectors
    assert (note.suggested, note.admitted) == (0.10, 4)
    assert note.message == (
        "The relevance gate (cdr_min_relevance 0.55) passed 2 of 6 retrieved facts, fewer than the envelope's 10 "
        "anchor places, and the envelope holds 2 of its 10 facts. The most relevant facts it kept out score 0.505, "
        "0.455, 0.305; cdr_min_relevance 0.10 would let 4 more compete for an anchor place."
    )
    assert run_report(result)["gate_note"] == note.as_dict()


def test_suggestion_fills_only_the_empty_anchor_places():
    # budget 4: places 4, passed 2: two more fill them; the 2nd gated fact, 0.4553, rounds down to 0.45,
    # which admits exactly those two
    note = gate_note(_run(RELEVANCES, envelope_fact_budget=4))
    assert note is not None and (note.anchor_places, note.suggested, note.admitted) == (4, 0.45, 2)


def test_anchor_places_follow_the_connector_budget():
    # with the graph walk, S = floor((1 - 0.3) x 10) = 7 anchor places (SPEC-025 §2.2)
    result = _run(RELEVANCES, envelope_fact_budget=10, graph_retrieval=True)
    note = gate_note(result)
    assert note is not None and note.anchor_places == 7 and note.budget == 10


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ({"cdr_min_relevance": -1.0}, "the gate keeps nothing out"),
        ({"envelope_fact_budget": 2}, "the gate passed as many facts as there are anchor places"),
        ({"cdr_min_relevance": 0.3, "envelope_fact_budget": 4}, "the gate passes 5 facts for the 4 places"),
        ({"token_budget": 1}, "a selected fact was left out for the token budget: the room is not empty"),
    ],
)
def test_no_note(config, why):
    result = _run(RELEVANCES, **{"envelope_fact_budget": 10, **config})
    assert gate_note(result) is None, why
    assert run_report(result)["gate_note"] is None


def test_no_note_when_the_gate_passes_as_many_facts_as_there_are_places():
    # eleven facts from 0.95 down to 0.75, all above the gate: 11 >= the 10 places, and the envelope is full
    full = _run([0.95 - 0.02 * i for i in range(11)], envelope_fact_budget=10)
    assert len(full.envelope.order) == 10 and gate_note(full) is None


def test_no_note_when_the_envelope_is_full_though_the_gate_left_anchor_places_empty():
    # the conditions one at a time on the by-hand run (2 passed of 10 places): an envelope holding as many
    # facts as its budget (connectors can fill it) has no room the gate keeps empty
    result = _run(RELEVANCES, envelope_fact_budget=10)
    assert gate_note(result) is not None
    order = result.envelope.order
    full = dataclasses.replace(result.envelope, order=order * 5)  # 10 packed facts
    assert gate_note(SimpleNamespace(candidates=result.candidates, envelope=full, config=result.config)) is None


def test_no_note_when_no_gate_in_range_admits_the_facts_kept_out():
    # a cosine a hair below -1 (float32 rounding) under a gate of -1: no two-decimal gate >= -1 admits it
    result = _run(RELEVANCES, envelope_fact_budget=10)
    cand = dataclasses.replace(
        result.candidates,
        relevance=np.array([0.9, 0.8, -1.0000001]),
        passed_gate=np.array([True, True, False]),
        idx=result.candidates.idx[:3],
    )
    config = result.config.replace(cdr_min_relevance=-1.0)
    assert gate_note(SimpleNamespace(candidates=cand, envelope=result.envelope, config=config)) is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rel=st.lists(st.floats(-0.9, 0.95).map(lambda x: round(x, 4)), min_size=1, max_size=DIM - 1),
    gate=st.sampled_from([0.2, 0.4, 0.55, 0.7]),
    budget=st.integers(1, 12),
)
def test_a_run_at_the_suggested_gate_admits_what_the_note_counts(rel, gate, budget):
    """The hint is true: at ``suggested`` the gate passes ``passed + admitted`` facts, at least as many as the
    anchor places (or every retrieved fact when there are fewer)."""
    result = _run(rel, cdr_min_relevance=gate, envelope_fact_budget=budget)
    note = gate_note(result)
    if note is None:
        return
    again = _run(rel, cdr_min_relevance=note.suggested, envelope_fact_budget=budget)
    passed = int(np.count_nonzero(again.candidates.passed_gate))
    assert passed == note.passed + note.admitted
    assert passed >= min(note.anchor_places, note.retrieved)
    assert note.suggested <= note.threshold and note.nearest[0] < note.threshold


def test_gate_counts_by_hand():
    # the note's corpus: F0, F1 pass the 0.55 gate, F2-F5 fall under it, no graph walk: no connector
    counts = gate_counts(_run(RELEVANCES, envelope_fact_budget=10))
    assert (counts.retrieved, counts.passed, counts.below, counts.connectors, counts.gated_out) == (6, 2, 4, 0, 4)
    assert counts.summary() == "4 below the relevance gate"


def test_a_connector_under_the_gate_is_counted_apart():
    # A and D at relevance 0.56 (anchors), B at 0 (under the gate) bridges them: cos(A, B) = cos(D, B) =
    # sqrt(1 - 0.56^2) * 0.78 = 0.6462 (edges), cos(A, D) = 0.6864 * 0.30 + 0.3136 = 0.5195 (no edge); the graph
    # walk chooses B as a connector, which SPEC-025 §2.5 does not gate
    low = np.linalg.cholesky(np.array([[1, 0.3, 0.78], [0.3, 1, 0.78], [0.78, 0.78, 1]]))
    a, b = np.sqrt(1 - 0.56**2), 0.56
    vecs = np.array([np.append(a * low[0], b), np.append(a * low[1], b), np.append(low[2], 0.0)])
    facts = [fact(x, f"fact {x} about its own topic", modified_at="2026-05-01") for x in ("A", "D", "B")]
    result = run_pipeline(make_corpus(facts, vecs), make_scenario(np.array([0, 0, 0, 1.0])))
    assert [p.fact_id for p in result.envelope.order if p.role == "connector"] == ["B"]
    counts = gate_counts(result)
    assert (counts.retrieved, counts.passed, counts.below, counts.connectors, counts.gated_out) == (3, 2, 1, 1, 0)
    assert counts.summary() == "1 below the relevance gate, 1 of them chosen as a connector, which is not gated"

"""Stage 4 keeps step 1's detections per selection (crp_core.stages.contradictions.resolve.DETECTIONS_KEPT): a
rerun over the same selection reads them back, and every result is the one a fresh detection gives; another
selection, another threshold, the detector's other setting or a changed fact is detected afresh."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crp_core.stages.contradictions.resolve as resolve
from crp_core.config import CRPConfig
from crp_core.records import Resolution
from crp_core.stages.contradictions.resolve import resolve_contradictions
from tests.support.factories import fact, make_corpus
from tests.support.tie_worlds import TEXT


def _corpus(texts: list[str], seed: int = 0):
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=16)
    vecs = centre / np.linalg.norm(centre) + 0.02 * rng.normal(size=(len(texts), 16))
    facts = [fact(f"f{i:02d}", t, modified_at="2026-03-01") for i, t in enumerate(texts)]
    return make_corpus(facts, vecs)


def _texts(n: int) -> list[str]:
    # every other fact the same value: some pairs conflict, the others are near-duplicates
    return [TEXT.format(n=100 + i % 3) if i % 2 else TEXT.format(n=100) for i in range(n)]


def _run(corpus, rows: list[int], config: CRPConfig) -> Resolution:
    roles = dict.fromkeys(rows, "anchor")
    scores = {r: 1.0 - 0.01 * k for k, r in enumerate(rows)}
    return resolve_contradictions(corpus, rows, roles, scores, [], dict.fromkeys(rows, 1.0), config, now=None)


def _view(r: Resolution) -> tuple:
    return (
        r.selected.tolist(),
        r.suppressed.tolist(),
        tuple(r.deduplicated),
        tuple(r.pairs),
        r.tied_rows.tolist(),
        r.detected_count,
        tuple(r.notes),
    )


def _fresh(monkeypatch: pytest.MonkeyPatch, corpus, rows: list[int], config: CRPConfig) -> tuple:
    with monkeypatch.context() as m:
        m.setattr(resolve, "DETECTIONS_KEPT", 0)
        return _view(_run(corpus, rows, config))


def _kept(corpus) -> int:
    return len(corpus.derived(resolve._DETECTIONS, lambda: resolve.LRU(resolve.DETECTIONS_KEPT, locked=True)))


def test_a_rerun_reads_the_detection_back_and_matches_a_fresh_one(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus(_texts(8))
    config = CRPConfig()
    rows = list(range(8))
    first = _run(corpus, rows, config)
    assert _kept(corpus) == 1
    again = _run(corpus, rows, config)
    assert _kept(corpus) == 1  # read back, not detected again
    assert _view(again) == _view(first) == _fresh(monkeypatch, corpus, rows, config)
    assert first.detected_count > 0 and first.deduplicated  # both kinds of pair are there


def test_another_selection_or_setting_is_detected_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus(_texts(8))
    config = CRPConfig()
    _run(corpus, list(range(8)), config)
    for rows, cfg in (
        (list(range(7, -1, -1)), config),  # the same rows in another order: positions differ
        (list(range(6)), config),
        (list(range(8)), config.replace(contradiction_similarity=0.999)),
        (list(range(8)), config.replace(dedup_similarity=0.5)),
        (list(range(8)), config.replace(detector_learned=not config.detector_learned)),
    ):
        assert _view(_run(corpus, rows, cfg)) == _fresh(monkeypatch, corpus, rows, cfg)
    assert _kept(corpus) == 6


def test_a_changed_fact_is_detected_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts(6)
    config = CRPConfig()
    before = _run(_corpus(texts), list(range(6)), config)
    texts[1] = TEXT.format(n=100)  # now the same value as fact 0: a near-duplicate, not a conflict
    corpus = _corpus(texts)
    after = _run(corpus, list(range(6)), config)
    assert _view(after) == _fresh(monkeypatch, corpus, list(range(6)), config)
    assert _view(after) != _view(before)


def test_the_kept_detections_are_bounded() -> None:
    corpus = _corpus(_texts(12))
    config = CRPConfig()
    for k in range(resolve.DETECTIONS_KEPT + 5):
        _run(corpus, [k % 12, (k + 1) % 12, (k + 5) % 12], config)
    assert _kept(corpus) == resolve.DETECTIONS_KEPT


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(st.integers(0, 9), min_size=0, max_size=10, unique=True),
    close=st.sampled_from([0.5, 0.85, 0.95]),
    dedup=st.sampled_from([0.5, 0.9, 0.99]),
)
def test_kept_or_not_the_resolution_is_the_same(rows: list[int], close: float, dedup: float) -> None:
    corpus = _corpus(_texts(10), seed=3)
    config = CRPConfig(contradiction_similarity=close, dedup_similarity=dedup)
    kept = [_view(_run(corpus, rows, config)) for _ in range(2)]
    saved = resolve.DETECTIONS_KEPT
    resolve.DETECTIONS_KEPT = 0
    try:
        fresh = _view(_run(corpus, rows, config))
    finally:
        resolve.DETECTIONS_KEPT = saved
    assert kept[0] == kept[1] == fresh


def test_authorities_are_kept_per_attributes_and_tables() -> None:
    from datetime import UTC, datetime

    from crp_core.factors.recency import fact_attributes
    from crp_core.stages.contradictions.authority import authorities_of, authority_of

    facts = [
        fact("a", "x", source_type="official_documentation", modified_at="2026-03-01"),
        fact("b", "y", source_type="web", modified_at="2020-01-01", importance_weight=0.3),
        fact("c", "z", source_type="user_provided"),
    ]
    corpus = make_corpus(facts, np.eye(3))
    config = CRPConfig()
    now = datetime(2026, 6, 1, tzinfo=UTC)
    attrs = fact_attributes(corpus.kb, now, config)

    def fresh(cfg: CRPConfig, at=attrs) -> list:
        return [authority_of(corpus.kb.facts[r], float(at.factor[r]), cfg) for r in (2, 0, 1)]

    first = authorities_of(attrs, [2, 0, 1], config)
    assert first == fresh(config)
    assert authorities_of(attrs, [0], config)[0] is first[1]  # kept
    other = config.with_overrides({"source_authority": {"web": 0.95}})
    changed = authorities_of(attrs, [2, 0, 1], other)  # other tables: made again
    assert changed == fresh(other) and changed[2] != first[2]
    later = fact_attributes(corpus.kb, datetime(2031, 6, 1, tzinfo=UTC), config)  # other factors
    assert authorities_of(later, [2, 0, 1], config) == fresh(config, later) != first


def test_the_kept_authorities_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC, datetime

    import crp_core.stages.contradictions.authority as authority
    from crp_core.factors.recency import fact_attributes

    corpus = _corpus(_texts(6))
    config = CRPConfig()
    attrs = fact_attributes(corpus.kb, datetime(2026, 6, 1, tzinfo=UTC), config)
    monkeypatch.setattr(authority, "AUTHORITIES_KEPT", 3)
    want = [authority.authority_of(corpus.kb.facts[r], float(attrs.factor[r]), config) for r in range(6)]
    for rows in ([0, 1], [2, 3], [4, 5], [0, 5, 3]):
        assert authority.authorities_of(attrs, rows, config) == [want[r] for r in rows]
        assert len(authority._AUTHORITIES.get(attrs, None)[2]) <= 3

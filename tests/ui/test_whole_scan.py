"""The dashboard's whole-CKF scans: an operator's pair decision or another ``now`` re-arbitrates the kept checked
pairs (no second pair search or text check), and the result equals a fresh ``scan_ckf`` with those decisions."""

from __future__ import annotations

from datetime import UTC, datetime
from unittest import mock

import numpy as np

from crp_core.analysis.scan import scan_ckf
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact, KnowledgeBase
from crp_core.triage import Decision, DecisionSet
from crp_ui import decisions as dmod
from crp_ui import whole_scan

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _corpus() -> Corpus:
    """Two conflicting pairs, texts of this test only (the process-wide caches hold nothing of them yet)."""
    texts = [
        "The whole-scan test queue port is 7301.",
        "The whole-scan test queue port is 7302.",
        "The whole-scan test spool holds 12 GB.",
        "The whole-scan test spool holds 24 GB.",
    ]
    facts = tuple(Fact(f"W{i}", t, source_type="internal", line=i + 1) for i, t in enumerate(texts))
    vectors = np.array([[1, 0, 0], [1, 0, 0.1], [0, 1, 0], [0, 1, 0.1]], dtype=np.float32)
    return Corpus.from_vectors(KnowledgeBase(facts=facts), vectors)


def _view(scan):
    return [(p.fact_a, p.fact_b, p.patterns, p.kept, p.suppressed, p.tied, p.decision) for p in scan.pairs]


def test_a_pair_decision_or_another_now_rearbitrates_without_checking_again():
    corpus, config = _corpus(), CRPConfig()
    with mock.patch.object(whole_scan, "check_ckf", wraps=whole_scan.check_ckf) as checks:
        first = dmod.conflict_scan(corpus, config, NOW, DecisionSet.empty()).scan
        ds = DecisionSet.from_decisions([Decision.dismiss("W0", "W1", operator="ann")])
        decided = dmod.conflict_scan(corpus, config, NOW, ds).scan
        later = dmod.conflict_scan(corpus, config, datetime(2027, 6, 1, tzinfo=UTC), ds).scan
        assert checks.call_count == 1
        dmod.conflict_scan(corpus, config.replace(contradiction_similarity=0.9), NOW, ds)
        assert checks.call_count == 2  # the detection settings are the checked pairs' own key
    assert len(first.pairs) == 2 and first.n_candidates == 2
    decisions, _ = dmod.pipeline_decisions(ds)
    assert _view(decided) == _view(scan_ckf(corpus, config, NOW, decisions=decisions))
    assert [p.decision for p in decided.pairs if p.fact_a == "W0"] == ["dismiss"]
    assert _view(later) == _view(scan_ckf(corpus, config, datetime(2027, 6, 1, tzinfo=UTC), decisions=decisions))


def test_a_pair_decision_rearbitrates_only_the_changed_pair():
    corpus, config = _corpus(), CRPConfig()
    now = datetime(2026, 12, 2, tzinfo=UTC)  # a time of this test only: no scan of it is kept yet
    first = dmod.conflict_scan(corpus, config, now, DecisionSet.empty()).scan
    ds = DecisionSet.from_decisions([Decision.override("W2", "W3", winner="W3", operator="ann")])
    with (
        mock.patch.object(whole_scan, "arbitrate_checked", wraps=whole_scan.arbitrate_checked) as full,
        mock.patch.object(whole_scan, "rearbitrate", wraps=whole_scan.rearbitrate) as part,
    ):
        decided = dmod.conflict_scan(corpus, config, now, ds).scan
    assert full.call_count == 0 and part.call_count == 1
    decisions, _ = dmod.pipeline_decisions(ds)
    assert _view(decided) == _view(scan_ckf(corpus, config, now, decisions=decisions))
    untouched = [p for p in decided.pairs if p.fact_a == "W0"]
    assert untouched[0] is [p for p in first.pairs if p.fact_a == "W0"][0]  # the other pair's own object
    assert [p.kept for p in decided.pairs if p.fact_a == "W2"] == [("W3",)]


def test_a_stale_mark_that_keeps_the_fact_retrievable_does_not_check_the_texts_again():
    corpus, config = _corpus(), CRPConfig()
    now = datetime(2026, 12, 3, tzinfo=UTC)
    with mock.patch.object(whole_scan, "check_ckf", wraps=whole_scan.check_ckf) as checks:
        dmod.conflict_scan(corpus, config, now, DecisionSet.empty())
        calls = checks.call_count
        ds = DecisionSet.from_decisions([Decision.mark_status("W0", "W1", fact="W1", status="STALE", operator="ann")])
        with mock.patch.object(whole_scan, "arbitrate_checked", wraps=whole_scan.arbitrate_checked) as full:
            marked = dmod.conflict_scan(corpus, config, now, ds).scan
        assert checks.call_count == calls
        assert full.call_count == 0  # the pairs of W1 re-arbitrated (crp_core.restatused), not the whole scan
        dmod.conflict_scan(corpus.with_statuses({"W1": "DELETED"}), config, now, DecisionSet.empty())
        assert checks.call_count == calls + 1  # another set of retrievable facts is checked
    stale = dmod.scan_corpus(corpus, ds)
    assert _view(marked) == _view(scan_ckf(stale, config, now))
    assert [p.authority["W1"].recency_factor for p in marked.pairs if p.fact_a == "W0"] == [config.stale_floor]


def test_sessions_asking_at_once_share_one_check():
    """Two sessions open the Conflicts page of one CKF at once: the second waits for the first's check (a
    notice says so) and arbitrates its pairs; the texts are checked once."""
    import threading

    corpus, config = _corpus(), CRPConfig()
    now = datetime(2026, 12, 3, tzinfo=UTC)
    config = config.replace(contradiction_similarity=0.8)  # checked pairs of this test only
    started, release = threading.Event(), threading.Event()
    real = whole_scan.check_ckf

    def slow_check(*args, **kwargs):
        started.set()
        assert release.wait(10)
        return real(*args, **kwargs)

    got: dict[str, object] = {}
    spinners: list[str] = []

    def session(name):
        got[name] = dmod.conflict_scan(corpus, config, now, DecisionSet.empty()).scan

    with (
        mock.patch.object(whole_scan, "check_ckf", side_effect=slow_check) as checks,
        mock.patch.object(whole_scan, "load_checked", return_value=None),
        mock.patch.object(whole_scan, "save_checked"),
        mock.patch.object(
            whole_scan.st, "spinner", side_effect=lambda text: (spinners.append(text), mock.MagicMock())[1]
        ),
    ):
        first = threading.Thread(target=session, args=("a",))
        first.start()
        assert started.wait(10)
        second = threading.Thread(target=session, args=("b",))
        second.start()
        second.join(0.3)
        assert second.is_alive()  # waiting for the first session's check
        release.set()
        first.join(10)
        second.join(10)
    assert checks.call_count == 1 and spinners == [whole_scan.WAITING_NOTE]
    assert _view(got["a"]) == _view(got["b"]) and len(got["a"].pairs) == 2


def test_a_quarantine_cuts_the_scan_of_the_decisions_in_force_without_checking_or_arbitrating_again():
    """The queue's scan is ``crp-inspect conflicts``' on the same store: a QUARANTINED mark takes its fact out of
    retrieval and its pair out of the scan (the counts, the retrievable facts, the candidate pairs), from the kept
    scan; the pair stays known, apart."""
    from crp_core.triage import apply_to_corpus

    corpus, config = _corpus(), CRPConfig()
    now = datetime(2026, 12, 4, tzinfo=UTC)  # a time of this test only
    first = dmod.conflict_scan(corpus, config, now, DecisionSet.empty())
    assert (len(first.scan.pairs), first.scan.n_facts, first.aside) == (2, 4, ())
    ds = DecisionSet.from_decisions(
        [
            Decision.override("W0", "W1", winner="W1", operator="ann"),
            Decision.mark_status("W0", "W1", fact="W0", status="QUARANTINED", operator="ann"),
        ]
    )
    with (
        mock.patch.object(whole_scan, "check_ckf", wraps=whole_scan.check_ckf) as checks,
        mock.patch.object(whole_scan, "arbitrate_checked", wraps=whole_scan.arbitrate_checked) as full,
    ):
        cut = dmod.conflict_scan(corpus, config, now, ds)
        assert dmod.conflict_scan(corpus, config, now, ds).scan is cut.scan  # a rerun: the same scan object
    assert checks.call_count == 0 and full.call_count == 0
    decisions, _ = dmod.pipeline_decisions(ds)
    cli = scan_ckf(apply_to_corpus(corpus, ds), config, now, decisions=decisions)  # crp-inspect conflicts
    assert _view(cut.scan) == _view(cli)
    assert (cut.scan.n_facts, cut.scan.n_candidates, dict(cut.scan.counts)) == (3, 1, dict(cli.counts))
    assert [(p.fact_a, p.fact_b, p.decision) for p in cut.aside] == [("W0", "W1", "override")]

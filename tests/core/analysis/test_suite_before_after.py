"""``suite_before_after``: each scenario's SPEC-027 side is the suite run ``check`` measures, and the
totals add up every scenario's figures (tiny suite of ``tests.support.suites``, no model)."""

from __future__ import annotations

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.suite import load_suite
from crp_core.analysis.suite_before_after import suite_before_after
from crp_core.config import CRPConfig
from tests.support.suites import corpus, write_suite


def test_spec027_side_is_the_suite_run_and_totals_add_up(tmp_path):
    prepared = prepare_suite(corpus(), load_suite(str(write_suite(tmp_path / "suite"))))
    got = suite_before_after(prepared, CRPConfig())
    run = run_suite(prepared, CRPConfig(), reference=False)
    assert [n for n, _ in got.entries] == ["s1", "s2"]
    for (name, ba), result in zip(got.entries, run.results or ()):
        assert [p.fact_id for p in ba.full.envelope.order] == [p.fact_id for p in result.envelope.order], name
        assert ba.full.now == result.now
    totals = got.totals()
    assert list(totals) == ["SPEC-024 only", "SPEC-027"]
    for label, side in (("SPEC-024 only", "before"), ("SPEC-027", "after")):
        per = [getattr(ba, side).reaching_model for _n, ba in got.entries]
        assert totals[label] == tuple(sum(p[i] for p in per) for i in range(4))
    # s1 packs the expired B and the tied pair H1/H2 without SPEC-027 (tests/support/suites.py's table)
    s1 = dict(got.entries)["s1"]
    assert "B" in s1.before.expired_in_envelope and "B" not in s1.after.envelope


def test_width_override_applies_to_both_sides(tmp_path):
    prepared = prepare_suite(corpus(), load_suite(str(write_suite(tmp_path / "suite"))))
    got = suite_before_after(prepared, CRPConfig(), fanout_width=2)
    assert all(ba.fanout_width == 2 for _n, ba in got.entries)

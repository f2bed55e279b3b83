"""``crp-inspect check``'s text output names the fact ids behind each broken bound (missing, leaked,
packed losers with their winner), on the tiny suite of ``tests/support/suites.py``."""

from __future__ import annotations

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.suite import load_suite
from crp_core.cli import main
from crp_core.cli.check import MAX_IDS, failure_facts, id_list
from crp_core.config import CRPConfig
from tests.support.suites import corpus, write_ckf, write_suite


def test_each_broken_bound_names_its_facts(tmp_path, capsys):
    ckf, suite = write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite")
    base = tmp_path / "base.json"
    assert main(["check", "--ckf", str(ckf), "--suite", str(suite), "--write-baseline", str(base)]) == 0
    capsys.readouterr()
    # a 10-year TTL for version_specific facts lets the legacy fact B beat A (test_cli_check_tune.py says why)
    rc = main(
        ["check", "--ckf", str(ckf), "--suite", str(suite), "--baseline", str(base)]
        + ["--set", "ttl_days.version_specific=3650"]
    )
    out = capsys.readouterr().out
    assert rc == 1
    verdict = out[out.index("FAIL") :].splitlines()
    assert verdict == [
        "FAIL: 5 of 14 bound(s) broken",
        "  - s1: leaks 2 breaks expect.max_leaks (must be <= 1)",
        "      leaked: B, E",
        "  - s1: wrong_winners 2 breaks expect.max_wrong_winners (must be <= 1)",
        "      packed loser(s): B (winner A, suppressed), E (winner F, gated)",
        "  - s1: recall 0.333333 is worse than the baseline's 0.666667",
        "      missing: A, D",
        "  - s1: leaks 2 is worse than the baseline's 1",
        "      leaked: B, E",
        "  - s1: wrong_winners 2 is worse than the baseline's 1",
        "      packed loser(s): B (winner A, suppressed), E (winner F, gated)",
    ]


def test_failure_facts_per_metric_and_the_cap(tmp_path):
    p = prepare_suite(corpus(), load_suite(write_suite(tmp_path / "suite")))
    m = run_suite(p, CRPConfig()).metrics
    s1 = m.scenario("s1")
    assert failure_facts(m, "s1", "tokens") == ""
    assert failure_facts(m, "nope", "recall") == ""
    assert failure_facts(m, "s1", "expired") == "expired: " + ", ".join(s1.expired)
    assert failure_facts(m, "s1", "contradictions") == "pairs packed: " + ", ".join(
        f"{c.fact_a} + {c.fact_b}" for c in s1.contradictions
    )
    assert s1.expired and s1.contradictions
    many = [f"x{i}" for i in range(MAX_IDS + 3)]
    assert id_list(many) == ", ".join(many[:MAX_IDS]) + " and 3 more"

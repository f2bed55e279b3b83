"""The JSON shapes of the analysis layer: a suite's metrics and the regression gate's verdict
(``crp-inspect check --json``, also the ``--write-baseline`` file), an auto-tuning study
(``crp-inspect tune --json``; docs/decisions/suites.md) and a conflict pair's agreement with the
SDK's ``superseded_by`` (``crp-inspect conflicts --json``). Plain dicts, values through
:func:`crp_core.report.plain`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crp_core.analysis.gate import SUITE_METRICS_KIND
from crp_core.config import CRPConfig
from crp_core.report import plain
from crp_core.stages.contradictions.audit import authority_dict

if TYPE_CHECKING:  # annotations only: a command's report imports none of the other commands' analysis
    from crp_core.analysis.gate import GateResult
    from crp_core.analysis.metrics import ScenarioMetrics, SuiteMetrics
    from crp_core.analysis.sdk_agreement import PairAgreement
    from crp_core.analysis.tune import TrialRecord, TuneResult

TUNE_KIND = "crp-inspect/tune"


def scenario_metrics_dict(m: ScenarioMetrics) -> dict[str, Any]:
    """One scenario's metrics (``metrics``: name -> number or null) and the fact ids behind them."""
    return {
        "metrics": plain(m.values()),
        "details": {
            "envelope": list(m.envelope),
            "tokens": m.tokens,
            "token_budget": m.token_budget,
            "max_tokens": m.max_tokens,
            "included": list(m.included),
            "missing": list(m.missing),
            "leaks": list(m.leaks),
            "wrong_winners": [
                {"loser": w.loser, "winner": w.winner, "winner_state": w.winner_state} for w in m.wrong_winners
            ],
            "expired": list(m.expired),
            "ageing": list(m.ageing),
            "recency": plain(dict(m.recency)),
            "contradictions": [
                {
                    "fact_a": c.fact_a,
                    "fact_b": c.fact_b,
                    "expected": c.expected,
                    "detected": c.detected,
                    "noted": c.noted,
                }
                for c in m.contradictions
            ],
            "duplicates": [list(d) for d in m.duplicates],
            "conflicts_detected": [list(p) for p in m.conflicts_detected],
            "false_conflicts": [list(p) for p in m.false_conflicts],
            "conflicts_undetected": [list(p) for p in m.conflicts_undetected],
            "entering": list(m.entering),
            "leaving": list(m.leaving),
        },
    }


def suite_summary_dict(metrics: SuiteMetrics) -> dict[str, Any]:
    """metric name -> ``{mean, worst, total, worst_scenario, count}``."""
    return {
        name: {
            "mean": plain(s.mean),
            "worst": plain(s.worst),
            "total": plain(s.total),
            "worst_scenario": s.worst_scenario,
            "count": s.count,
        }
        for name, s in metrics.summary.items()
    }


def gate_dict(result: GateResult) -> dict[str, Any]:
    return {
        "passed": result.passed,
        "checked": result.checked,
        "failures": [
            {
                "scenario": f.scenario,
                "metric": f.metric,
                "value": plain(f.value),
                "bound": f.bound,
                "source": f.source,
                "kind": f.kind,
                "message": f.message,
            }
            for f in result.failures
        ],
        "notes": list(result.notes),
    }


def config_changes(config: CRPConfig) -> dict[str, Any]:
    """Flat keys where ``config`` differs from the defaults: key -> ``[default, value]``."""
    return {k: [plain(a), plain(b)] for k, (a, b) in CRPConfig().diff(config).items()}


def suite_metrics_report(
    metrics: SuiteMetrics,
    *,
    config: CRPConfig,
    ckf_source: str = "",
    ckf_fingerprint: str = "",
    suite_source: str = "",
    set_args: tuple[str, ...] = (),
    gate: GateResult | None = None,
) -> dict[str, Any]:
    """The ``crp-inspect check --json`` object, also the ``--write-baseline`` file (kind
    :data:`SUITE_METRICS_KIND`): the CKF, the config's changes from the defaults, the summary and
    every scenario's metrics, and the gate's verdict when one ran."""
    out: dict[str, Any] = {
        "kind": SUITE_METRICS_KIND,
        "version": 1,
        "ckf": {"source": ckf_source, "fingerprint": ckf_fingerprint},
        "suite": suite_source,
        "config_changes": config_changes(config),
        "set": list(set_args),
        "summary": suite_summary_dict(metrics),
        "scenarios": {m.name: scenario_metrics_dict(m) for m in metrics.scenarios},
    }
    if gate is not None:
        out["gate"] = gate_dict(gate)
    return out


def trial_dict(t: TrialRecord) -> dict[str, Any]:
    return {
        "number": t.number,
        "params": plain(dict(t.params)),
        "values": plain(list(t.values)),
        "feasible": t.feasible,
        "violations": plain(dict(t.violations)),
        "metrics": plain(t.metrics.flat()),
        "elapsed_ms": t.elapsed_ms,
    }


def tune_report(result: TuneResult) -> dict[str, Any]:
    """The ``crp-inspect tune --json`` object: ``best`` (``config``: the full configuration as its TOML
    holds it, ``metrics``: the suite summary flattened, ``scenarios``: each scenario's metrics, the
    trial's ``params`` and ``values``), every trial, the objective and the search space."""
    best = result.best
    return {
        "kind": TUNE_KIND,
        "version": 1,
        "objective": {
            "name": result.objective.name,
            "directions": list(result.objective.directions),
            "targets": list(result.objective.targets),
            "description": result.objective.description,
        },
        "seed": result.seed,
        "sampler": result.sampler,
        "space": [{"key": p.key, "low": p.low, "high": p.high, "step": p.step, "log": p.log} for p in result.space],
        "best": {
            "trial": best.number,
            "params": plain(dict(best.params)),
            "values": plain(list(best.values)),
            "feasible": best.feasible,
            "config": result.best_config.to_dict(),
            "config_changes": config_changes(result.best_config),
            # the trial's moves put back because no suite metric moved with them (tune_simplify)
            "reverted": list(result.simplified.reverted) if result.simplified is not None else [],
            "metrics": plain(best.metrics.flat()),
            "scenarios": {m.name: plain(m.values()) for m in best.metrics.scenarios},
        },
        "baseline": trial_dict(result.trials[0]) if result.trials else None,
        "trials": [trial_dict(t) for t in result.trials],
    }


def sdk_agreement_dict(a: PairAgreement) -> dict[str, Any]:
    """One pair's agreement with the SDK's ``superseded_by`` (key ``sdk_agreement`` of a ``conflicts``
    pair when the CKF came from an SDK snapshot; docs/decisions/sdk-snapshots.md): the independent
    arbitration (the SDK's STALE neutralised) with its authority components, and the as-loaded one."""

    def judgement(j: Any) -> dict[str, Any]:
        return {"verdict": j.verdict, "reason": j.reason, "winner": j.winner}

    return {
        "sdk_superseded": a.sdk_superseded,
        "independent": {
            **judgement(a.independent),
            "margin": a.margin,
            "neutralised": list(a.neutralised),
            "authority": {x.fact_id: authority_dict(x) for x in (a.authority_a, a.authority_b)},
        },
        "as_loaded": judgement(a.as_loaded),
    }

"""The tuned configuration as a reviewable TOML file (``crp-inspect tune --out``, the dashboard's download)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crp_core.config import CRPConfig

if TYPE_CHECKING:
    from crp_core.analysis.tune import TuneResult


def _comment(text: str) -> str:
    """``text`` on one TOML comment line: control characters (a line break would end the comment) shown escaped."""
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in text)


def tuned_toml(result: TuneResult, *, kb: str = "", suite: str = "") -> str:
    """The best configuration as a reviewable TOML file: only the keys that differ from the defaults
    (``CRPConfig()``), after comment lines saying what produced them (objective, trials, seed, the best
    trial, the KB and suite names). :meth:`CRPConfig.from_toml` of it gives :attr:`TuneResult.best_config`."""
    import tomli_w

    best = result.best_config
    flat = {k: b for k, (_, b) in CRPConfig().diff(best).items()}
    tables: dict[str, dict[str, object]] = {}
    for k, v in flat.items():
        if "." in k:
            table, cell = k.split(".", 1)
            tables.setdefault(table, {})[cell] = v
    doc: dict[str, object] = {k: v for k, v in flat.items() if "." not in k}
    doc.update(tables)
    b = result.best
    head = [
        f"# crp-inspect tune: objective {result.objective.name}, {len(result.trials)} trial(s), seed {result.seed}, "
        f"best trial {b.number} ({'feasible' if b.feasible else 'NOT feasible'}, value "
        + "/".join(f"{v:.6g}" for v in b.values)
        + ")",
    ]
    if kb or suite:
        head.append(f"# knowledge base: {kb or '-'}; suite: {suite or '-'}")
    head.append(
        f"# {len(flat)} key(s) differ from the defaults; every other key keeps its default (docs/reference/config.md)"
    )
    if result.simplified is not None and result.simplified.reverted:
        head.append(
            "# left at their starting values, as no suite metric moved with them: "
            + ", ".join(result.simplified.reverted)
        )
    body = tomli_w.dumps(doc)
    return "\n".join(_comment(h) for h in head) + "\n" + (("\n" + body) if body else "")

"""Fact Authority (SPEC-027 §2.3): ``source_authority * recency_factor * importance_weight``."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact
from crp_core.records import Authority

def authority_of(fact: Fact, recency_factor: float, config: CRPConfig) -> Authority:
    """``authority = source_authority_weight * recency_factor * importance_weight`` (SPEC-027 §2.3).

    Source authority comes from ``config.source_authority[source_type]``; importance is the fact's
    explicit ``importance_weight`` or ``config.importance[source_type]`` (SPEC-009 §4.4).
    """
    source_authority = float(config.source_authority[fact.source_type])  # type: ignore[arg-type]
    importance = (float(fact.importance_weight) if fact.importance_weight is not None
                  else float(config.importance[fact.source_type]))  # type: ignore[arg-type]
    recency = float(recency_factor)
    return Authority(fact_id=fact.fact_id, source_type=fact.source_type, source_authority=source_authority,
                     recency_factor=recency, importance_weight=importance,
                     authority=source_authority * recency * importance)


def recency_factors(corpus: Corpus, rows: np.ndarray, recency: Any, now: datetime | None,
                     config: CRPConfig) -> dict[int, float]:
    """row -> recency factor, from the pipeline's RecencyTable (or a mapping); rows it lacks are
    computed with :func:`crp_core.factors.recency.compute_recency` at ``now``."""
    out: dict[int, float] = {}
    if recency is not None:
        if isinstance(recency, Mapping):
            out.update({int(k): float(v) for k, v in recency.items()})
        else:
            out.update(zip((int(r) for r in recency.idx), (float(f) for f in recency.factor)))
    missing = np.array(sorted({int(r) for r in rows} - set(out)), dtype=np.int64)
    if missing.size:
        if now is None:
            raise ValueError(f"recency factors missing for {missing.size} fact row(s) and no `now` given "
                             "to compute them")
        from crp_core.factors.recency import compute_recency
        table = compute_recency(corpus.kb, missing, now, config)
        out.update(zip((int(r) for r in table.idx), (float(f) for f in table.factor)))
    return out


"""Fact Authority (SPEC-027 §2.3): ``source_authority * recency_factor * importance_weight``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import cast

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.factors.recency import FactAttributes, RecencyTable, fact_attributes
from crp_core.model import Fact
from crp_core.records import Authority
from crp_core.support.memo import WeakMemo


def authority_of(fact: Fact, recency_factor: float, config: CRPConfig) -> Authority:
    """``authority = source_authority_weight * recency_factor * importance_weight`` (SPEC-027 §2.3).

    Source authority comes from ``config.source_authority[source_type]``; importance is the fact's
    explicit ``importance_weight`` or ``config.importance[source_type]`` (SPEC-009 §4.4).
    """
    source_authority = float(config.source_authority[fact.source_type])  # type: ignore[arg-type]
    importance = (
        float(fact.importance_weight)
        if fact.importance_weight is not None
        else float(config.importance[fact.source_type])  # type: ignore[arg-type]
    )
    recency = float(recency_factor)
    return Authority.make(
        fact_id=fact.fact_id,
        source_type=fact.source_type,
        source_authority=source_authority,
        recency_factor=recency,
        importance_weight=importance,
        authority=source_authority * recency * importance,
    )


#: where stage 4 reads recency factors: the run's per-fact attributes, a recency table, or row -> factor
RecencySource = FactAttributes | RecencyTable | Mapping[int, float] | None


def recency_factors(
    corpus: Corpus, rows: np.ndarray, recency: RecencySource, now: datetime | None, config: CRPConfig
) -> dict[int, float]:
    """row -> recency factor of ``rows``: from the run's :class:`FactAttributes`, a RecencyTable or a
    mapping; rows a table or mapping lacks are read off :func:`fact_attributes` at ``now``."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    if isinstance(recency, FactAttributes):
        return dict(zip(rows.tolist(), recency.factor[rows].tolist()))
    out: dict[int, float] = {}
    if isinstance(recency, RecencyTable):
        out.update(zip(recency.idx.tolist(), recency.factor.tolist()))
    elif recency is not None:
        out.update({int(k): float(v) for k, v in recency.items()})
    missing = np.array(sorted(set(rows.tolist()) - set(out)), dtype=np.int64)
    if missing.size:
        if now is None:
            raise ValueError(
                f"recency factors missing for {missing.size} fact row(s) and no `now` given to compute them"
            )
        attrs = fact_attributes(corpus.kb, now, config)
        out.update(zip(missing.tolist(), attrs.factor[missing].tolist()))
    return out


#: per run attributes: the authority tables they were read under and the :class:`Authority` of the rows asked so far
_AUTHORITIES: WeakMemo[FactAttributes, None, tuple[object, object, dict[int, Authority]]] = WeakMemo(1)
#: rows whose authority one attributes object keeps (beyond, the kept ones are dropped and kept again)
AUTHORITIES_KEPT = 4096


def authorities_of(attrs: FactAttributes, rows: list[int], config: CRPConfig) -> list[Authority]:
    """:func:`authority_of` of each fact row of ``rows`` with its recency factor from ``attrs`` (the run's
    :class:`FactAttributes`). The record depends on the fact, its factor and the config's two authority tables
    alone, and ``attrs`` holds the facts and factors: it keeps the records made under the same two tables."""
    sa, imp = config.source_authority, config.importance
    got = _AUTHORITIES.get(attrs, None)
    if got is None or (got[0] is not sa and got[0] != sa) or (got[1] is not imp and got[1] != imp):
        got = _AUTHORITIES.put(attrs, None, (sa, imp, {}))
    kept = got[2]
    found = {r: kept.get(r) for r in rows}  # read once: another thread may drop the kept ones meanwhile
    missing = [r for r, a in found.items() if a is None]
    if missing:
        facts, factor = attrs.facts, attrs.factor[np.asarray(missing, dtype=np.int64)].tolist()
        made = {r: authority_of(facts[r], f, config) for r, f in zip(missing, factor)}
        if len(kept) + len(made) > AUTHORITIES_KEPT:
            kept.clear()
        kept.update(made)
        found.update(made)
    return [cast("Authority", found[r]) for r in rows]

"""Near conflicts: two facts of an envelope whose texts value-conflict though their cosine is not above
``contradiction_similarity`` (docs/decisions/near-conflicts.md).

Stage 4 asks the detector only about pairs above the threshold (SPEC-027 §2.2), so a contradiction written in
words far enough apart reaches the model unresolved and uncounted: a run's headline says no contradiction while
both facts are packed. This reads the packed facts' pairs within ``near_conflict_margin`` below the threshold,
asks the detector about each, and names those it reads a value difference in. It resolves nothing (the pipeline
is SPEC-027's); it is the hint that the threshold let a contradiction through, for the person tuning it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from crp_core.decisions import pair_key
from crp_core.stages.contradictions.values import values_conflict

if TYPE_CHECKING:
    from crp_core.records import PipelineResult


@dataclass(frozen=True)
class NearConflict:
    """Two packed facts (``fact_a`` packed first) at ``similarity``, within the margin below the threshold,
    whose texts the detector reads as a value conflict with ``patterns``."""

    fact_a: str
    fact_b: str
    similarity: float
    patterns: tuple[str, ...]
    learned: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "fact_a": self.fact_a,
            "fact_b": self.fact_b,
            "similarity": round(self.similarity, 6),
            "patterns": list(self.patterns),
            "learned": self.learned,
        }


def near_conflicts(result: PipelineResult) -> tuple[NearConflict, ...]:
    """The near conflicts of ``result``'s envelope, most similar first (then envelope order); none when
    ``near_conflict_margin`` is 0. A pair stage 4 already holds (arbitrated, tied, dismissed or decided) is
    left out: it is no hint."""
    config = result.config
    margin = float(config.near_conflict_margin)
    ids = [p.fact_id for p in result.envelope.order]
    if margin <= 0.0 or len(ids) < 2:
        return ()
    kb = result.corpus.kb
    rows = np.array([kb.index_of(f) for f in ids], dtype=np.int64)
    vecs = np.asarray(result.corpus.vectors, dtype=np.float32)[rows]
    # float32 products compared in float64, as stage 4 compares its pairs' cosines with the threshold
    cos = (vecs @ vecs.T).astype(np.float64)
    top = float(config.contradiction_similarity)
    held = {pair_key(p.fact_a, p.fact_b) for p in result.resolution.pairs}
    found: list[tuple[float, int, int, NearConflict]] = []
    p_idx, q_idx = np.nonzero(np.triu((cos <= top) & (cos > top - margin), k=1))
    for p, q in zip(p_idx.tolist(), q_idx.tolist(), strict=True):
        a, b = ids[p], ids[q]
        if pair_key(a, b) in held:
            continue
        vc = values_conflict(kb.facts[int(rows[p])].content, kb.facts[int(rows[q])].content, config.detector_learned)
        if vc is not None:
            s = float(cos[p, q])
            found.append((-s, p, q, NearConflict(a, b, s, tuple(vc.patterns), bool(vc.learned))))
    return tuple(n for *_, n in sorted(found, key=lambda t: t[:3]))

"""Near conflicts: two facts of an envelope whose texts value-conflict though their cosine is not above
``contradiction_similarity`` (docs/decisions/near-conflicts.md).

Stage 4 asks the detector only about pairs above the threshold (SPEC-027 §2.2), so a contradiction written in
words far enough apart reaches the model unresolved and uncounted: a run's headline says no contradiction while
both facts are packed. This reads the packed facts' pairs within ``near_conflict_margin`` below the threshold,
asks the detector about each, and names those it reads a value difference in. It resolves nothing (the pipeline
is SPEC-027's); it is the hint that the threshold let a contradiction through, for the person tuning it. A pair an
operator dismissed (not a conflict) is no hint: a dismissal counts wherever the pair appears.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from crp_core.decisions import Decisions, pair_decision_map, pair_key
from crp_core.records import NearConflict
from crp_core.stages.contradictions.values import values_conflict

if TYPE_CHECKING:
    from crp_core.config import CRPConfig
    from crp_core.corpus.prepared import Corpus
    from crp_core.records import Envelope, Resolution


def near_conflicts(
    config: CRPConfig, corpus: Corpus, envelope: Envelope, resolution: Resolution, decisions: Decisions = None
) -> tuple[NearConflict, ...]:
    """The near conflicts of ``envelope``, most similar first (then envelope order); none when
    ``near_conflict_margin`` is 0. A pair stage 4 already holds in ``resolution`` (arbitrated, tied, dismissed
    or decided) is left out: it is no hint; so is a pair an operator dismissed (``decisions``, the run's: an
    operator said it is no conflict). A run computes them once: ``PipelineResult.near_conflicts``."""
    margin = float(config.near_conflict_margin)
    ids = [p.fact_id for p in envelope.order]
    if margin <= 0.0 or len(ids) < 2:
        return ()
    kb = corpus.kb
    rows = np.array([kb.index_of(f) for f in ids], dtype=np.int64)
    vecs = np.asarray(corpus.vectors, dtype=np.float32)[rows]
    # float32 products compared in float64, as stage 4 compares its pairs' cosines with the threshold
    cos = (vecs @ vecs.T).astype(np.float64)
    top = float(config.contradiction_similarity)
    held = {pair_key(p.fact_a, p.fact_b) for p in resolution.pairs}
    held.update(k for k, d in pair_decision_map(decisions).items() if d.get("kind") == "dismiss")
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

"""Detector quality from operators: the triage decisions are labels for ``values_conflict``
(SPEC-027 §2.2, SPEC-005 §5.3). A dismissed pair ("not a conflict") is a false positive; an accepted
or overridden pair is a true conflict. Precision is counted over the decided pairs the detector flags
today, overall and per pattern it names; a decided pair whose texts it does not flag (a pair an operator
named by hand, or one an earlier detector flagged) is listed and counted apart, never as a label."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from crp_core.config import CRPConfig
from crp_core.decisions import DecisionSet, split_pair_key
from crp_core.model import KnowledgeBase
from crp_core.stages.contradictions.arbitration import winner_by_authority
from crp_core.stages.contradictions.values import PATTERNS, values_conflict


@dataclass(frozen=True)
class PatternQuality:
    """Operator labels of the pairs showing one pattern."""

    pattern: str
    confirmed: int  # accepted or overridden: true conflicts
    dismissed: int  # dismissed: false positives

    @property
    def labelled(self) -> int:
        return self.confirmed + self.dismissed

    @property
    def precision(self) -> float | None:
        """confirmed / labelled; None while no pair with this pattern is labelled."""
        return self.confirmed / self.labelled if self.labelled else None


@dataclass(frozen=True)
class LabelledPair:
    """One pair an operator decided: its label and what the detector says of it today."""

    fact_a: str
    fact_b: str
    kind: str  # accept | override | dismiss
    winner: str | None
    patterns: tuple[str, ...]  # () when the detector no longer flags the pair
    note: str
    operator: str
    decided_at: str
    #: the winner by authority today (SPEC-027 §2.3; None: a tie or not asked): an override naming it agrees with
    #: the arbitration and overrules nothing
    by_authority: str | None = None


@dataclass(frozen=True)
class DetectorQuality:
    """Precision of the value-conflict detector as operators judged it."""

    per_pattern: tuple[PatternQuality, ...]  # every pattern, PATTERNS order
    pairs: tuple[LabelledPair, ...]  # every decided pair, by fact ids
    unknown: tuple[str, ...]  # pair keys naming a fact the CKF does not hold

    @property
    def flagged(self) -> tuple[LabelledPair, ...]:
        """The decided pairs the detector flags today: the labels precision counts."""
        return tuple(p for p in self.pairs if p.patterns)

    @property
    def unflagged(self) -> int:
        """Decided pairs whose texts the detector does not flag today (not counted in precision)."""
        return len(self.pairs) - len(self.flagged)

    @property
    def confirmed(self) -> int:
        return sum(1 for p in self.flagged if p.kind != "dismiss")

    @property
    def dismissed(self) -> int:
        return sum(1 for p in self.flagged if p.kind == "dismiss")

    @property
    def precision(self) -> float | None:
        """confirmed / flagged decided pairs; None while none is decided."""
        n = len(self.flagged)
        return self.confirmed / n if n else None

    @property
    def overruled(self) -> tuple[LabelledPair, ...]:
        """Pairs where the operator disagreed: dismissed ones, and overrides naming another winner than authority's
        (an override of authority's own winner confirms the run, as the operator guide says)."""
        return tuple(
            p for p in self.pairs if p.kind == "dismiss" or (p.kind == "override" and p.winner != p.by_authority)
        )


def detector_quality(
    decisions: DecisionSet,
    kb: KnowledgeBase,
    config: CRPConfig | None = None,
    now: datetime | None = None,
) -> DetectorQuality:
    """Label every pair decision in force (accept, override, dismiss) and count per pattern, the patterns
    read by the detector as ``config`` (default: the defaults) configures it (``detector_learned``); an
    override's pair is arbitrated by authority under the same ``config`` at ``now`` (default: now) to tell
    whether it overrules."""
    # one config and one instant for every override: the fact attributes they read are computed once
    cfg, at = config or CRPConfig(), now or datetime.now(UTC)
    confirmed = dict.fromkeys(PATTERNS, 0)
    dismissed = dict.fromkeys(PATTERNS, 0)
    pairs: list[LabelledPair] = []
    unknown: list[str] = []
    for key, d in sorted(decisions.pair_decisions.items()):
        a, b = split_pair_key(key)
        fa, fb = kb.get(a), kb.get(b)
        if fa is None or fb is None:
            unknown.append(key)
            continue
        vc = values_conflict(fa.content, fb.content, cfg.detector_learned)
        patterns = vc.patterns if vc is not None else ()
        kind = str(d.get("kind"))
        for pat in patterns:
            (dismissed if kind == "dismiss" else confirmed)[pat] += 1
        latest = decisions.latest.get(key)
        pairs.append(
            LabelledPair(
                fact_a=a,
                fact_b=b,
                kind=kind,
                winner=d.get("winner"),
                patterns=patterns,
                note=latest.note if latest else "",
                operator=latest.operator if latest else "",
                decided_at=(latest.decided_at or "") if latest else "",
                by_authority=winner_by_authority(kb, a, b, cfg, at) if kind == "override" else None,
            )
        )
    return DetectorQuality(
        per_pattern=tuple(PatternQuality(p, confirmed[p], dismissed[p]) for p in PATTERNS),
        pairs=tuple(pairs),
        unknown=tuple(unknown),
    )


def detector_quality_dict(q: DetectorQuality) -> dict[str, Any]:
    """``crp-inspect triage stats --json``: precision per pattern and the overruled pairs."""
    return {
        "pairs": len(q.pairs),
        "flagged": len(q.flagged),
        "unflagged": q.unflagged,
        "confirmed": q.confirmed,
        "dismissed": q.dismissed,
        "precision": q.precision,
        "per_pattern": {
            p.pattern: {"confirmed": p.confirmed, "dismissed": p.dismissed, "precision": p.precision}
            for p in q.per_pattern
        },
        "overruled": [
            {
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "kind": p.kind,
                "winner": p.winner,
                "patterns": list(p.patterns),
                "note": p.note,
                "operator": p.operator,
                "decided_at": p.decided_at,
            }
            for p in q.overruled
        ],
        "unknown_pairs": list(q.unknown),
    }

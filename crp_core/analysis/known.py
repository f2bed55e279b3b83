"""The conflicts known outside one run, for the known-conflict guard (beyond SPEC-027;
docs/decisions/known-conflicts.md).

Stage 4 (SPEC-027 §2) arbitrates only the facts an envelope selected: when the higher-authority
side of a conflict is not retrieved, the loser reaches the model unopposed. Conflicts are known
outside one run, from the whole-CKF scan (:func:`crp_core.analysis.scan.scan_ckf`, every pair
arbitrated by authority) and from operator decisions (an override or an accepted arbitration names
a winner). :func:`known_conflicts` collects them for ``run_pipeline(known_conflicts=)``; the guard
that checks a run's selection against them is :mod:`crp_core.stages.known`.

The guard reads only the conflicts whose loser the run selected, so it needs the scan's pairs of the
selected facts, not every pair: :class:`SelectionKnownConflicts` is handed to the pipeline in place of a
list and finds them when the guard asks, with :func:`crp_core.analysis.scan_rows.rows_scan` (the same pairs,
verdicts and rulings as the whole scan, for ``len(selection) x n`` products); :class:`RowChecks` keeps the
searched and text-checked pairs per selection, which neither ``now`` nor the decisions change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from crp_core.analysis.scan import CheckedPairs, ConflictScan, ScanSource, arbitrate_checked
from crp_core.analysis.scan_rows import rows_checked
from crp_core.config import CRPConfig
from crp_core.decisions import DecisionSet, split_pair_key
from crp_core.records import SOURCE_OPERATOR, SOURCE_SCAN, KnownConflict
from crp_core.support.memo import LRU

#: selections whose checked pairs one :class:`RowChecks` keeps (most recent last)
ROW_CHECKS_KEPT = 64


def known_conflicts(
    scan: ConflictScan | None = None, decisions: DecisionSet | None = None
) -> tuple[KnownConflict, ...]:
    """The conflicts with a decided winner: arbitrated (not tied, not dismissed) pairs of the scan and
    the operators' overrides and accepted arbitrations. An operator decision on a pair wins over the
    scan's arbitration of it; the result is sorted by (loser, winner)."""
    by_pair: dict[frozenset[str], KnownConflict] = {}
    if scan is not None:
        for p in scan.pairs:
            if p.skipped or p.tied or p.suppressed is None or p.decision == "dismiss" or not p.kept:
                continue
            by_pair[frozenset((p.fact_a, p.fact_b))] = KnownConflict(
                winner=p.kept[0],
                loser=p.suppressed,
                source=SOURCE_OPERATOR if p.decision else SOURCE_SCAN,
                patterns=tuple(p.patterns),
                margin=float(p.margin),
            )
    if decisions is not None:
        for key, d in decisions.pair_decisions.items():
            a, b = split_pair_key(key)
            pair = frozenset((a, b))
            winner = d.get("winner")
            if d.get("kind") == "dismiss":
                by_pair.pop(pair, None)
            elif winner in (a, b):
                loser = b if winner == a else a
                patterns = by_pair[pair].patterns if pair in by_pair else ()
                by_pair[pair] = KnownConflict(
                    winner=str(winner), loser=loser, source=SOURCE_OPERATOR, patterns=patterns
                )
    return tuple(sorted(by_pair.values(), key=lambda k: (k.loser, k.winner)))


class RowChecks:
    """The searched and text-checked pairs of each selection over one corpus's vectors, texts and retrievable
    facts at one configuration's threshold and detector (:func:`~crp_core.analysis.scan_rows.rows_checked`),
    the last :data:`ROW_CHECKS_KEPT` selections kept. A corpus that differs only in a status that keeps its
    facts retrievable (STALE / ACTIVE) may share them: the arbitration reads the status, the check does not."""

    def __init__(self, corpus: ScanSource, config: CRPConfig) -> None:
        self.corpus = corpus
        self.config = config
        self._kept: LRU[tuple[int, ...], CheckedPairs] = LRU(ROW_CHECKS_KEPT, locked=True)

    def __call__(self, rows: Sequence[int] | np.ndarray) -> CheckedPairs:
        key = tuple(sorted({int(r) for r in np.asarray(rows, dtype=np.int64).tolist()}))
        return self._kept.get_or_build(key, lambda: rows_checked(self.corpus, self.config, key))


@dataclass(frozen=True, eq=False)
class SelectionKnownConflicts:
    """The known conflicts of a run's selection, found when the guard asks (``run_pipeline(known_conflicts=)``
    calls it with stage 4's selected rows): the whole-CKF scan's arbitrated pairs that hold a selected fact,
    at ``now`` with ``decisions``, and the operators' pair decisions, as :func:`known_conflicts` collects
    them. For the facts of a selection this is what ``known_conflicts(scan_ckf(corpus, ...), decisions)``
    holds; the guard reads nothing else. ``checks`` shares the checked pairs between runs (another ``now``,
    other decisions); by default each lookup has its own."""

    corpus: ScanSource
    config: CRPConfig
    now: datetime
    decisions: DecisionSet | None = None
    checks: RowChecks | None = None
    _rows: RowChecks = field(init=False, repr=False)  # ``checks``, else this lookup's own

    def __post_init__(self) -> None:
        object.__setattr__(self, "_rows", self.checks or RowChecks(self.corpus, self.config))

    def __call__(self, rows: Sequence[int] | np.ndarray) -> tuple[KnownConflict, ...]:
        scan = arbitrate_checked(self._rows(rows), self.corpus, self.config, self.now, self.decisions)
        return known_conflicts(scan, self.decisions)

"""The conflicts known outside one run, for the known-conflict guard (beyond SPEC-027;
docs/decisions/known-conflicts.md).

Stage 4 (SPEC-027 §2) arbitrates only the facts an envelope selected: when the higher-authority
side of a conflict is not retrieved, the loser reaches the model unopposed. Conflicts are known
outside one run, from the whole-CKF scan (:func:`crp_core.analysis.scan.scan_ckf`, every pair
arbitrated by authority) and from operator decisions (an override or an accepted arbitration names
a winner). :func:`known_conflicts` collects them for ``run_pipeline(known_conflicts=)``; the guard
that checks a run's selection against them is :mod:`crp_core.stages.known`.
"""

from __future__ import annotations

from crp_core.analysis.scan import ConflictScan
from crp_core.decisions import DecisionSet, split_pair_key
from crp_core.records import SOURCE_OPERATOR, SOURCE_SCAN, KnownConflict


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

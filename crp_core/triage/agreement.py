"""Agreement between operators and the two-person review policy, from the audit log alone.

* **A position** is what one operator's latest decision on a pair says, reduced to what a second
  reviewer could agree or disagree with (:func:`decision_label`): the winner of an accept or an override
  (an accept names the winner the arbitration gave, so an accept and an override naming the same fact
  agree), ``dismiss``, or a status mark (``<fact> <STATUS>``). The note and the time are not part of it.
* **Agreement per pair of operators** (:func:`operator_agreement`): over the conflict pairs both operators
  took a position on, the share of pairs where the positions are equal (percent agreement, ``p_o``) and
  Cohen's kappa ``(p_o - p_e) / (1 - p_e)``, where ``p_e = sum over labels of p_1(label) * p_2(label)``
  is the agreement two raters with those label frequencies would reach by chance. Kappa is undefined
  (``None``) when ``p_e = 1``: both operators used one and the same label on every shared pair.
* **Review status of a pair** (:func:`review_status`) under a quorum ``N``: ``settled`` when at least
  ``N`` operators hold the same position and no operator holds another; ``disagreement`` when two
  operators hold different positions; ``open`` otherwise (no decision, or fewer than ``N`` agreeing). A
  quorum of 1 is the single-reviewer policy: the latest decision settles the pair, whoever recorded it,
  so a later decision correcting an earlier one is never a disagreement.

Pure functions of :class:`~crp_core.decisions.Decision` records in recording order. An admin's revert
entry and the decision it takes back are left out (neither is a position); operator names are compared
in their normal form (:func:`~crp_core.decisions.normalise_operator`), so "ALICE" of an older entry and
"alice" are one operator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from crp_core.decisions import REVERT, Decision, DecisionError, normalise_operator

#: a pair's review status under the two-person policy
SETTLED = "settled"
DISAGREEMENT = "disagreement"
OPEN = "open"
REVIEW_STATES: tuple[str, ...] = (SETTLED, DISAGREEMENT, OPEN)


def _operator(d: Decision) -> str:
    try:
        return normalise_operator(d.operator)
    except DecisionError:  # a name the store could not have written today: compared as recorded
        return d.operator


def taken_positions(decisions: Iterable[Decision]) -> list[Decision]:
    """``decisions`` without the revert entries and the decisions they take back (recording order kept)."""
    rows = list(decisions)
    reverted = {d.reverts for d in rows if d.kind == REVERT and d.reverts is not None}
    return [d for d in rows if d.kind != REVERT and (d.id is None or d.id not in reverted)]


def decision_label(d: Decision) -> str:
    """The position ``d`` takes on its pair: ``winner <id>`` (accept with a winner, override), ``tie``
    (an accepted tie), ``dismiss``, or ``<fact> <STATUS>`` (a status mark)."""
    if d.kind in ("accept", "override"):
        return f"winner {d.winner}" if d.winner else "tie"
    if d.kind == "mark_status":
        return f"{d.target_fact} {d.new_status}"
    return str(d.kind)


def positions(decisions: Iterable[Decision]) -> dict[str, str]:
    """operator -> the position of that operator's latest decision among ``decisions`` (one pair's, in
    recording order)."""
    out: dict[str, str] = {}
    for d in taken_positions(decisions):
        out[_operator(d)] = decision_label(d)
    return out


def review_status(decisions: Sequence[Decision], quorum: int) -> str:
    """``settled`` / ``disagreement`` / ``open`` for one pair's ``decisions`` (recording order) under
    ``quorum`` (>= 1) agreeing operators; a pair whose only decisions were reverted is open."""
    if quorum < 1:
        raise ValueError(f"quorum must be at least 1, got {quorum}")
    held = Counter(positions(decisions).values())
    if not held:
        return OPEN
    if quorum == 1:
        return SETTLED
    if len(held) > 1:
        return DISAGREEMENT
    return SETTLED if next(iter(held.values())) >= quorum else OPEN


def review_statuses(decisions: Iterable[Decision], quorum: int) -> dict[str, str]:
    """pair key -> :func:`review_status` for every pair the log names (pairs it does not name are open)."""
    by_pair: dict[str, list[Decision]] = {}
    for d in taken_positions(decisions):
        by_pair.setdefault(d.pair_key, []).append(d)
    return {key: review_status(ds, quorum) for key, ds in by_pair.items()}


def percent_agreement(labels_a: Sequence[str], labels_b: Sequence[str]) -> float:
    """``p_o``: the share of items where the two raters' labels are equal (the sequences are aligned)."""
    _check_aligned(labels_a, labels_b)
    return sum(a == b for a, b in zip(labels_a, labels_b)) / len(labels_a)


def cohen_kappa(labels_a: Sequence[str], labels_b: Sequence[str]) -> float | None:
    """Cohen's kappa of two aligned label sequences; None when chance agreement ``p_e`` is 1."""
    _check_aligned(labels_a, labels_b)
    n = len(labels_a)
    p_o = percent_agreement(labels_a, labels_b)
    freq_a, freq_b = Counter(labels_a), Counter(labels_b)
    p_e = sum(freq_a[label] * freq_b[label] for label in freq_a) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def _check_aligned(labels_a: Sequence[str], labels_b: Sequence[str]) -> None:
    if len(labels_a) != len(labels_b) or not labels_a:
        raise ValueError(f"two non-empty aligned label sequences needed, got {len(labels_a)} and {len(labels_b)}")


@dataclass(frozen=True)
class OperatorAgreement:
    """How two operators agree over the conflict pairs both took a position on.

    ``pairs``: the shared pair keys (sorted); ``agreed``: how many of them carry equal positions;
    ``percent``: ``agreed / len(pairs)``; ``kappa``: Cohen's kappa (None when undefined).
    """

    operator_a: str
    operator_b: str
    pairs: tuple[str, ...]
    agreed: int
    percent: float
    kappa: float | None

    @property
    def shared(self) -> int:
        return len(self.pairs)


def operator_agreement(decisions: Iterable[Decision]) -> tuple[OperatorAgreement, ...]:
    """Agreement of every two operators with at least one shared pair, ordered by their names."""
    by_pair: dict[str, list[Decision]] = {}
    for d in taken_positions(decisions):
        by_pair.setdefault(d.pair_key, []).append(d)
    held = {key: positions(ds) for key, ds in by_pair.items()}  # pair -> operator -> position
    operators = sorted({op for pos in held.values() for op in pos})
    out = []
    for a, b in combinations(operators, 2):
        shared = tuple(sorted(key for key, pos in held.items() if a in pos and b in pos))
        if not shared:
            continue
        la = [held[key][a] for key in shared]
        lb = [held[key][b] for key in shared]
        out.append(
            OperatorAgreement(
                operator_a=a,
                operator_b=b,
                pairs=shared,
                agreed=sum(x == y for x, y in zip(la, lb)),
                percent=percent_agreement(la, lb),
                kappa=cohen_kappa(la, lb),
            )
        )
    return tuple(out)

"""A whole-CKF scan after a change of operator pair decisions: only the pairs the change names are
arbitrated again (SPEC-027 §2.3-§2.5), the rest of the scan is kept as it is.

What one pair decision can change in :func:`~crp_core.analysis.scan.arbitrate_checked`:

* the scan arbitrates **each conflicting pair on its own** (no suppression chain: the scan reports, the
  envelope decides), so a pair's ``kept`` / ``suppressed`` / ``tied`` / ``decision`` are a function of
  its two authorities, ``authority_tie_tolerance`` and the decision in force *for that pair key* alone
  (:func:`~crp_core.stages.contradictions.arbitration.decision_for`);
* the authorities (source authority, importance, recency at ``now``) do not read pair decisions; neither
  do the similarity, the patterns, the recency table or the rows. A *status* mark is not a pair decision:
  it reaches the scan through the corpus (ACTIVE / STALE change a fact's recency, hence the authority of
  every pair of that fact: :func:`restatused` arbitrates those pairs again); a QUARANTINED / DELETED mark
  takes its fact out of retrieval, and with it every pair of that fact: the pairs of the other facts keep
  their objects and their order (:func:`within_retrievable`);
* the triage order reads the pair's own ``tied`` and ``decision`` (a dismissed pair goes last), and the
  counts per pattern leave dismissed pairs out: both change only through the re-arbitrated pairs;
* the decisions an exported CKF carries (``with_carried_decisions``) lie under the given ones pair by
  pair: removing a given decision uncovers the carried one of *that* pair only.

So the affected set of a change is exactly the pairs whose decision in force (kind, winner), after the
carried decisions are laid underneath, differs (:func:`decision_change`); the known-conflict guard and
the triage queue read the scan's pairs and follow from them.
"""

from __future__ import annotations

import bisect
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from crp_core.analysis.scan import (
    CheckedPairs,
    ConflictScan,
    PairSearch,
    ScanSource,
    count_patterns,
    ruling,
    scan_timings,
    triage_order,
)
from crp_core.carried import with_carried_decisions
from crp_core.config import CRPConfig
from crp_core.decisions import Decisions, pair_decision_map, pair_key
from crp_core.factors.recency import RecencyTable, compute_recency
from crp_core.model import KnowledgeBase
from crp_core.records import ConflictPair
from crp_core.stages.contradictions.arbitration import decision_for
from crp_core.stages.contradictions.authority import authority_of
from crp_core.support.memo import WeakMemo

#: each scan's pairs by pair key (:func:`pair_index`), kept while the scan lives
_INDEX: WeakMemo[ConflictScan, None, dict[str, ConflictPair]] = WeakMemo(1)
#: each scan made by :func:`rearbitrate` / :func:`restatused`: the scan it was made from (weakly) and
#: :func:`rows_from` of it
_STEPS: WeakMemo[ConflictScan, None, tuple[weakref.ref[ConflictScan], np.ndarray]] = WeakMemo(1)
#: re-arbitrations :func:`rows_from` follows back at most
MAX_STEPS = 64
#: a pair decision in force as arbitration reads it: (kind, winner); (None, None) for no decision
PairRuling = tuple[str | None, str | None]


@dataclass(frozen=True)
class DecisionChange:
    """The pairs whose decision in force differs between two sets of decisions (pair key -> the decision
    in force after the change, as ``{"kind", "winner"}``; None when the pair has none any more)."""

    pairs: Mapping[str, Mapping[str, object] | None]

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def ruling(self, a: str, b: str) -> PairRuling:
        """(kind, winner) after the change for the pair {a, b}, validated as arbitration reads it."""
        return decision_for(self.ruled(a, b), a, b)

    def ruled(self, a: str, b: str) -> Mapping[str, Mapping[str, object]]:
        """The decision in force after the change for the pair {a, b}, as the decisions arbitration reads
        (empty: none)."""
        d = self.pairs.get(pair_key(a, b))
        return {} if d is None else {pair_key(a, b): d}


@dataclass(frozen=True, eq=False)
class ScanUpdate:
    """A scan after a :class:`DecisionChange` or a change of statuses: the new scan and the pairs of it arbitrated
    again (their keys, in the new scan's order); every other pair is the previous scan's own object."""

    scan: ConflictScan
    changed: tuple[str, ...]


def _ruling(d: Mapping[str, object] | None) -> tuple[object, object]:
    return (None, None) if d is None else (d.get("kind"), d.get("winner"))


def decision_change(before: Decisions, after: Decisions, kb: KnowledgeBase | None = None) -> DecisionChange:
    """The pairs whose decision in force (kind, winner) differs from ``before`` to ``after``, each with
    ``kb``'s carried decisions underneath (what :func:`~crp_core.analysis.scan.arbitrate_checked` reads)."""
    if kb is not None:
        before, after = with_carried_decisions(kb, before), with_carried_decisions(kb, after)
    old, new = pair_decision_map(before), pair_decision_map(after)
    if old is new:
        return DecisionChange(MappingProxyType({}))
    changed: dict[str, Mapping[str, object] | None] = {}
    for key in old.keys() | new.keys():
        o, n = old.get(key), new.get(key)
        if _ruling(o) != _ruling(n):
            changed[key] = None if n is None else MappingProxyType({"kind": n.get("kind"), "winner": n.get("winner")})
    return DecisionChange(MappingProxyType(dict(sorted(changed.items()))))


def _rearbitrated(pair: ConflictPair, change: DecisionChange, config: CRPConfig) -> ConflictPair:
    """``pair`` arbitrated again under the change (its authorities, similarity and conflict kept)."""
    a, b = pair.fact_a, pair.fact_b
    return replace(pair, **ruling(pair.authority[a], pair.authority[b], config, change.ruled(a, b)))


def _position(pairs: list[ConflictPair], pair: ConflictPair) -> int:
    """Where ``pair`` (that very object) sits in ``pairs`` (in triage order): by bisection, or by a walk
    when the order cannot tell (a NaN margin compares with nothing)."""
    at = bisect.bisect_left(pairs, triage_order(pair), key=triage_order)
    if at < len(pairs) and pairs[at] is pair:
        return at
    return next(i for i, p in enumerate(pairs) if p is pair)


def pair_index(scan: ConflictScan) -> Mapping[str, ConflictPair]:
    """The scan's pairs by pair key (:func:`~crp_core.decisions.pair_key`), built once per scan object (a scan
    made by :func:`rearbitrate` or :func:`restatused` inherits its previous scan's index, changed pairs replaced)."""
    return MappingProxyType(_index_of(scan))


def _index_of(scan: ConflictScan) -> dict[str, ConflictPair]:
    return _INDEX.get_or_build(scan, None, lambda: {pair_key(p.fact_a, p.fact_b): p for p in scan.pairs})


def rearbitrate(previous: ConflictScan, change: DecisionChange, config: CRPConfig) -> ScanUpdate:
    """``previous`` (an arbitrated scan) with the pairs ``change`` names arbitrated again: equal, pair for
    pair and count for count, to :func:`~crp_core.analysis.scan.arbitrate_checked` of the same checked
    pairs, corpus, scan fields of ``config`` and ``now`` with the decisions after the change. A changed
    pair the scan does not hold (not a conflict of this CKF) changes nothing."""
    t0 = time.perf_counter()
    index = _index_of(previous)
    old = [index[k] for k in change.pairs if k in index]
    return _replaced(previous, old, lambda pair: _rearbitrated(pair, change, config), t0)


def restatused(
    previous: ConflictScan, corpus: ScanSource, config: CRPConfig, decisions: Decisions, facts: Iterable[str]
) -> ScanUpdate:
    """``previous`` (arbitrated over a corpus that ``corpus`` differs from by the statuses of ``facts`` alone,
    every fact as retrievable as before) with the pairs of those facts arbitrated again: their recency at the
    scan's ``now`` (a STALE status takes ``stale_floor``, SPEC-027 §3), hence their authority, margin and
    outcome under ``decisions`` (the decisions ``previous`` was arbitrated with). Equal to
    :func:`~crp_core.analysis.scan.arbitrate_checked` over ``corpus``; the recency table is computed again."""
    t0 = time.perf_counter()
    rows = previous.rows
    changed = sorted({rows[f] for f in facts if f in rows})
    if not changed:
        return ScanUpdate(previous, ())
    kb = corpus.kb
    rec = compute_recency(kb, np.array(sorted(rows.values()), dtype=np.int64), previous.now, config)
    at = np.searchsorted(rec.idx, changed)
    auth = {kb.facts[r].fact_id: authority_of(kb.facts[r], rec.factor[k].item(), config) for r, k in zip(changed, at)}
    decisions = with_carried_decisions(kb, decisions)
    old = [p for p in previous.pairs if p.fact_a in auth or p.fact_b in auth]

    def again(pair: ConflictPair) -> ConflictPair:
        a = auth.get(pair.fact_a, pair.authority[pair.fact_a])
        b = auth.get(pair.fact_b, pair.authority[pair.fact_b])
        return replace(pair, **ruling(a, b, config, decisions))

    return _replaced(previous, old, again, t0, recency=rec)


@dataclass(frozen=True, eq=False)
class RetrievableSplit:
    """A scan cut to the facts a corpus retrieves (:func:`within_retrievable`): ``scan``, the scan of that corpus;
    ``aside``, the pairs cut from it (a fact of each is not retrievable there), in triage order."""

    scan: ConflictScan
    aside: tuple[ConflictPair, ...]


def within_retrievable(previous: ConflictScan, checked: CheckedPairs, corpus: ScanSource) -> RetrievableSplit:
    """``previous`` (arbitrated from ``checked`` over a corpus of ``corpus``'s facts and vectors in which every fact
    ``corpus`` retrieves is retrievable too, with the same status) cut to the facts ``corpus`` retrieves: its
    ``scan`` equals :func:`~crp_core.analysis.scan.arbitrate_checked` of ``check_ckf(corpus)`` with the decisions
    ``previous`` was arbitrated with, pair for pair and count for count (the recency table aside, which may also
    hold the facts of the pairs cut). The pair search keeps the pairs of retrievable facts and the text check reads
    each pair alone; each pair is arbitrated on its own from its two facts, whose statuses are the same in both
    corpora: so the pairs of two retrievable facts are ``previous``'s own objects, in its order. What a
    QUARANTINED / DELETED mark changes in the whole-CKF scan, without a text check or an arbitration."""
    ok = np.asarray(corpus.retrievable, dtype=bool)
    if int(np.count_nonzero(ok)) == previous.n_facts:  # the same retrievable facts (a subset of equal size)
        return RetrievableSplit(previous, ())
    rows = previous.rows
    kept: list[ConflictPair] = []
    aside: list[ConflictPair] = []
    for p in previous.pairs:
        (kept if ok[rows[p.fact_a]] and ok[rows[p.fact_b]] else aside).append(p)
    counts = dict(previous.counts)
    for p in aside:
        count_patterns(counts, p, -1)
    found = checked.search.pairs
    search = PairSearch(found[ok[found[:, 0]] & ok[found[:, 1]]], checked.search.method, checked.search.products)
    in_pairs = {f for p in kept for f in (p.fact_a, p.fact_b)}
    scan = replace(
        previous,
        pairs=tuple(kept),
        counts=counts,
        n_facts=int(np.count_nonzero(ok)),
        n_candidates=int(search.pairs.shape[0]),
        k=search.max_partners,
        rows={f: r for f, r in rows.items() if f in in_pairs},
    )
    return RetrievableSplit(scan, tuple(aside))


def _replaced(
    previous: ConflictScan,
    old: list[ConflictPair],
    again: Callable[[ConflictPair], ConflictPair],
    t0: float,
    recency: RecencyTable | None = None,
) -> ScanUpdate:
    """``previous`` with each pair of ``old`` replaced by ``again(pair)`` at its triage place, the counts
    adjusted; the new scan's pair index and its :func:`rows_from` kept."""
    if not old:
        return ScanUpdate(previous, ())
    old = sorted(old, key=triage_order)
    index = _index_of(previous)
    pairs = list(previous.pairs)
    removed = []
    for pair in reversed(old):  # removed last first: each position is the previous scan's own
        removed.append(_position(pairs, pair))
        del pairs[removed[-1]]
    counts = dict(previous.counts)
    new: list[ConflictPair] = []
    for pair in old:
        count_patterns(counts, pair, -1)
        got = again(pair)
        count_patterns(counts, got, +1)
        new.append(got)
    new.sort(key=triage_order)
    inserted = []
    for got in new:  # inserted first first: each position is the new scan's own
        inserted.append(bisect.bisect_left(pairs, triage_order(got), key=triage_order))
        pairs.insert(inserted[-1], got)
    ms = (time.perf_counter() - t0) * 1e3
    timings = scan_timings(previous.timings_ms.get("neighbours", 0.0), previous.timings_ms.get("text_check", 0.0), ms)
    rec = previous.recency if recency is None else recency
    scan = replace(previous, pairs=tuple(pairs), counts=counts, timings_ms=timings, recency=rec)
    keys = tuple(pair_key(p.fact_a, p.fact_b) for p in new)
    patched = index.copy()  # a dict's own copy: no walk through the mapping protocol
    patched.update(zip(keys, new))
    _INDEX.put(scan, None, patched)
    _STEPS.put(scan, None, (weakref.ref(previous), _sources(len(pairs), removed, inserted)))
    return ScanUpdate(scan, keys)


def _sources(n: int, removed: list[int], inserted: list[int]) -> np.ndarray:
    """For each of ``n`` positions of the new order, the previous position of its pair (-1: inserted)."""
    src = np.full(n, -1, dtype=np.int64)
    keep = np.ones(n, dtype=bool)
    keep[inserted] = False
    src[keep] = np.delete(np.arange(n + len(removed) - len(inserted), dtype=np.int64), removed)
    return src


def rows_from(previous: ConflictScan, scan: ConflictScan) -> np.ndarray | None:
    """For each pair of ``scan``, the position in ``previous`` of that very pair object (-1: a pair arbitrated
    again), when ``scan`` was made from ``previous`` by :func:`rearbitrate` (once or in a chain of at most
    :data:`MAX_STEPS`, every scan of it alive); None otherwise."""
    if scan is previous:
        return np.arange(len(scan.pairs), dtype=np.int64)
    steps: list[np.ndarray] = []
    cur = scan
    while cur is not previous:
        step = _STEPS.get(cur, None)
        before = None if step is None or len(steps) >= MAX_STEPS else step[0]()
        if step is None or before is None:
            return None
        steps.append(step[1])
        cur = before
    got = steps[0]
    for src in steps[1:]:
        got = np.where(got >= 0, src[np.maximum(got, 0)], -1)
    return got

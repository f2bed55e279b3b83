"""The triage queue's frame after a decision: the previous frame with only the rows whose inputs changed
built again, the others moved to the new scan's order (the frame stays what
:func:`crp_ui.conflict_queue.queue_frame` would build).

A queue row is a function of its pair (the scan's :class:`~crp_core.ConflictPair`), the CKF, the pair's
latest decision, the statuses in force of its two facts, its review state and (for an SDK snapshot) its
SDK verdict. After a decision the new scan holds the previous scan's own pair objects for every pair
``crp_core.rearbitrate`` / ``restatused`` did not arbitrate again (``crp_core.rows_from`` says where each
was), so a row is built again when its pair is a new object,
its pair key's latest decision or review state changed, or an operator's status of one of its facts
changed; every other row is the previous frame's, at its pair's new place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from crp_core import LRU, ConflictScan, DecisionSet, KnowledgeBase, SdkAgreement, rows_from

from .conflict_queue import pairs_frame, queue_frame
from .conflict_sdk import with_sdk_column
from .memo import by_identity
from .queue_view import queue_counts

#: queue frames kept per process to patch from (one per CKF and SDK flag, the latest built)
MAX_QUEUES = 8


@dataclass(frozen=True, eq=False)
class QueueInputs:
    """What a queue frame was built from (the CKF aside)."""

    scan: ConflictScan
    ds: DecisionSet
    reviews: Mapping[str, str]
    agreement: SdkAgreement | None


def built_frame(kb: KnowledgeBase, inputs: QueueInputs) -> pd.DataFrame:
    """The queue frame of ``inputs`` built whole (with its SDK column for a snapshot)."""
    return with_sdk_column(queue_frame(inputs.scan, kb, inputs.ds, inputs.reviews), inputs.agreement)


def _differing(before: Mapping[str, object], after: Mapping[str, object]) -> set[str]:
    """The keys whose value differs between two mappings (a key on one side only included)."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def stale_rows(frame: pd.DataFrame, before: QueueInputs, after: QueueInputs) -> tuple[np.ndarray, np.ndarray]:
    """``(source, rebuild)``: for each pair of ``after.scan``, its row in ``frame`` (-1: none), and the positions
    (in ``after.scan``'s order) whose row must be built again."""
    source = rows_from(before.scan, after.scan)
    if source is None:  # not a chain of re-arbitrations: the previous row of each pair object (-1: a new object)
        at = dict(zip(map(id, before.scan.pairs), range(len(before.scan.pairs))))
        found = np.array(list(map(at.get, map(id, after.scan.pairs))), dtype=np.float64)
        source = np.where(np.isnan(found), -1, found).astype(np.int64)
    stale = source < 0
    keys = _differing(before.ds.latest, after.ds.latest) | _differing(before.reviews, after.reviews)
    facts = _differing(before.ds.statuses, after.ds.statuses)  # facts whose operator status changed
    if keys or facts:
        safe = np.where(stale, 0, source)
        hit = frame["pair"].isin(keys) | frame["fact_a"].isin(facts) | frame["fact_b"].isin(facts)
        stale |= hit.to_numpy(dtype=bool)[safe] & ~stale
    return source, np.nonzero(stale)[0]


def patched_frame(frame: pd.DataFrame, kb: KnowledgeBase, before: QueueInputs, after: QueueInputs) -> pd.DataFrame:
    """``frame`` (the queue of ``before`` over ``kb``) made the queue of ``after``: equal to
    :func:`built_frame` of ``after``, building only the rows :func:`stale_rows` names."""
    return patched_queue(frame, None, kb, before, after)[0]


Counts = dict[str, int]


def patched_queue(
    frame: pd.DataFrame, counts: Counts | None, kb: KnowledgeBase, before: QueueInputs, after: QueueInputs
) -> tuple[pd.DataFrame, Counts]:
    """:func:`patched_frame` and its :func:`~crp_ui.queue_view.queue_counts`: ``counts`` (those of ``frame``;
    None: counted whole) less the counts of the rows replaced, plus those of the rows built again."""
    source, rebuild = stale_rows(frame, before, after)
    if rebuild.size == 0 and np.array_equal(source, np.arange(len(frame))):
        return frame, counts if counts is not None else queue_counts(frame)
    if len(frame) == 0 or rebuild.size == source.size:
        whole = built_frame(kb, after)
        return whole, queue_counts(whole)
    pairs = [after.scan.pairs[i] for i in rebuild.tolist()]
    fresh = with_sdk_column(pairs_frame(pairs, kb, after.ds, after.reviews), after.agreement)
    out = pd.concat(_pieces(frame, fresh, source, rebuild), ignore_index=True)
    if counts is None:
        return out, queue_counts(out)
    kept = np.zeros(len(frame), dtype=bool)
    kept[source[source >= 0]] = True
    kept[source[rebuild][source[rebuild] >= 0]] = False  # a row built again replaces its previous one
    less, more = queue_counts(frame.iloc[np.nonzero(~kept)[0]]), queue_counts(fresh)
    return out, {k: v - less[k] + more[k] for k, v in counts.items()}


def _pieces(frame: pd.DataFrame, fresh: pd.DataFrame, source: np.ndarray, rebuild: np.ndarray) -> list[pd.DataFrame]:
    """The new frame as slices: each run of consecutive previous rows one slice of ``frame`` (no copy), each
    rebuilt row its row of ``fresh``, in the new order."""
    from_fresh = np.full(source.size, -1, dtype=np.int64)
    from_fresh[rebuild] = np.arange(rebuild.size)
    kept = from_fresh < 0
    starts = np.nonzero(~kept | np.r_[True, source[1:] != source[:-1] + 1] | np.r_[True, ~kept[:-1]])[0]
    out: list[pd.DataFrame] = []
    for a, b in zip(starts.tolist(), [*starts[1:].tolist(), source.size]):
        if kept[a]:
            out.append(frame.iloc[int(source[a]) : int(source[a]) + (b - a)])
        else:
            out.append(fresh.iloc[int(from_fresh[a]) : int(from_fresh[a]) + 1])
    return out


@st.cache_resource(show_spinner=False)
def _latest() -> LRU[tuple[str, bool], tuple[KnowledgeBase, QueueInputs, pd.DataFrame, Counts]]:
    """The latest queue frame per CKF (and SDK column), shared by every session: the frame the next one is
    patched from."""
    return LRU(MAX_QUEUES, locked=True)


def queue_frame_of(kb: KnowledgeBase, kb_id: str, inputs: QueueInputs) -> pd.DataFrame:
    """The queue frame of ``inputs``: the latest frame of this CKF (``kb_id``: its digest) patched when there is
    one, built whole otherwise. Its counts (:func:`~crp_ui.queue_view.queue_counts`) are patched alike and
    kept as ``by_identity("queue_counts", frame, ...)`` holds them. Callers must not mutate either."""
    key = (kb_id, inputs.agreement is not None)
    prev = _latest().get(key)
    if prev is not None and prev[0] is kb:
        frame, counts = patched_queue(prev[2], prev[3], kb, prev[1], inputs)
    else:
        frame = built_frame(kb, inputs)
        counts = queue_counts(frame)
    _latest().put(key, (kb, inputs, frame, counts))
    by_identity("queue_counts", frame, lambda _f: counts)
    return frame


__all__ = [
    "MAX_QUEUES",
    "Counts",
    "QueueInputs",
    "built_frame",
    "patched_frame",
    "patched_queue",
    "queue_frame_of",
    "stale_rows",
]

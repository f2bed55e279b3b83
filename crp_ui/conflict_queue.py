"""The triage queue of the Conflicts page: one row per conflict pair of the whole-CKF scan (its filters, orders
and counts: :mod:`crp_ui.queue_view`), the operators' decision log and what their labels say of the detector.

Pure functions of crp_core records (no Streamlit): the pairs of a :class:`~crp_core.ConflictScan`, the
decisions in force (:class:`~crp_core.DecisionSet`) and the CKF as loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from crp_core import (
    ConflictPair,
    ConflictScan,
    Decision,
    DecisionSet,
    DetectorQuality,
    Fact,
    KnowledgeBase,
    OperatorAgreement,
    pair_key,
)

from .conflict_case import arbitration_label

QUEUE_COLUMNS = (
    "pair",
    "fact_a",
    "fact_b",
    "patterns",
    "similarity",
    "authority_a",
    "authority_b",
    "margin",
    "arbitration",
    "source_a",
    "source_b",
    "status_a",
    "status_b",
    "decision",
    "decided_by",
    "decided_at",
    "decided",
    "text_a",
    "text_b",
    "marks",
    "review",
)


def decision_summary(d: Decision | None) -> str:
    """A decision in a few words ("" for none): "override: X wins", "accepted", "X marked STALE"..."""
    if d is None:
        return ""
    if d.kind == "override":
        return f"override: {d.winner} wins"
    if d.kind == "accept":
        return "accepted" + (f" ({d.winner} wins)" if d.winner else "")
    if d.kind == "dismiss":
        return "dismissed (not a conflict)"
    if d.kind == "mark_status":
        return f"{d.target_fact} marked {d.new_status}"
    if d.kind == "revert":
        return f"revert of #{d.reverts}"
    return str(d.kind)


def p_key(pair: ConflictPair) -> str:
    """The triage store's key of the pair (:func:`crp_core.pair_key`)."""
    return pair_key(pair.fact_a, pair.fact_b)


def pair_marks(pair: ConflictPair, fa: Fact | None, fb: Fact | None, statuses: Mapping[str, str]) -> str:
    """What happens to the pair's facts, by side: "B suppressed", "A STALE (operator)", ... ("" when
    nothing): the stage-4 loser and every fact whose status an operator changed."""
    bits = []
    for side, fid, f in (("A", pair.fact_a, fa), ("B", pair.fact_b, fb)):
        if pair.suppressed == fid:
            bits.append(f"{side} suppressed")
        s = statuses.get(fid)
        if f is not None and s is not None and s != f.status:
            bits.append(f"{side} {s} (operator)")
    return " · ".join(bits)


def _queue_row(
    pair: ConflictPair, kb: KnowledgeBase, ds: DecisionSet, statuses: Mapping[str, str], reviews: Mapping[str, str]
) -> dict[str, object]:
    fa, fb = kb.get(pair.fact_a), kb.get(pair.fact_b)
    key = p_key(pair)
    latest = ds.latest.get(key)
    auth_a, auth_b = pair.authority[pair.fact_a], pair.authority[pair.fact_b]
    return {
        "pair": key,
        "fact_a": pair.fact_a,
        "fact_b": pair.fact_b,
        "patterns": ", ".join(pair.patterns),
        "similarity": pair.similarity,
        "authority_a": auth_a.authority,
        "authority_b": auth_b.authority,
        "margin": pair.margin,
        "arbitration": arbitration_label(pair),
        "source_a": auth_a.source_type,
        "source_b": auth_b.source_type,
        "status_a": statuses.get(pair.fact_a, fa.status if fa is not None else ""),
        "status_b": statuses.get(pair.fact_b, fb.status if fb is not None else ""),
        "decision": decision_summary(latest),
        "decided_by": latest.operator if latest is not None else "",
        "decided_at": (latest.decided_at or "") if latest is not None else "",
        "decided": latest is not None,
        "text_a": fa.content if fa is not None else "",
        "text_b": fb.content if fb is not None else "",
        "marks": pair_marks(pair, fa, fb, statuses),
        "review": reviews.get(key) or ("settled" if latest is not None else "open"),
    }


def with_writeback_marks(frame: pd.DataFrame, written: Mapping[str, str]) -> pd.DataFrame:
    """``frame`` with each pair whose fact an SDK session wrote back from its model's answer marked as such
    ("A written back: window 2 of SDK session 7c200535"): a pair of its own kind, the answer against the
    knowledge base (the Session page found it; docs/reference/sessions.md)."""
    if not written or frame.empty:
        return frame
    out = frame.copy()

    def marks(row: pd.Series) -> str:
        bits = [str(row["marks"])] if row["marks"] else []
        for side, col in (("A", "fact_a"), ("B", "fact_b")):
            origin = written.get(str(row[col]))
            if origin is not None:
                bits.append(f"{side} written back: {origin}")
        return " · ".join(bits)

    out["marks"] = out.apply(marks, axis=1)
    return out


def queue_frame(
    scan: ConflictScan, kb: KnowledgeBase, ds: DecisionSet, reviews: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """The triage queue: one row per conflict pair of the whole-CKF scan of the decisions in force, in triage
    order (ties first, then the smallest authority margin; dismissed pairs last).

    ``status_a`` / ``status_b`` are the statuses in force (the CKF's, then the operators'); a pair is
    ``decided`` when it has a decision of its own. A pair whose fact an operator took out of retrieval is not
    one of the scan's (:func:`aside_frame` lists those). ``review``: the pair's status under the team's review
    policy (``reviews``: pair key -> settled / disagreement / open); a pair the log does not name is settled
    when decided, open otherwise.
    """
    return pairs_frame(scan.pairs, kb, ds, reviews)


def pairs_frame(
    pairs: Sequence[ConflictPair], kb: KnowledgeBase, ds: DecisionSet, reviews: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """The queue's rows of ``pairs`` (:func:`queue_frame`), in their order."""
    statuses = dict(ds.statuses)
    rows = [_queue_row(p, kb, ds, statuses, reviews or {}) for p in pairs]
    frame = pd.DataFrame(rows, columns=list(QUEUE_COLUMNS))
    return frame.astype(
        {
            "similarity": "float64",
            "authority_a": "float64",
            "authority_b": "float64",
            "margin": "float64",
            "decided": "bool",
        }
    )


#: the columns of the pairs out of retrieval (:func:`aside_frame`)
ASIDE_COLUMNS = ("pair", "fact_a", "fact_b", "patterns", "out of retrieval", "by", "at", "note", "decision")


def aside_frame(pairs: Sequence[ConflictPair], ds: DecisionSet) -> pd.DataFrame:
    """One row per pair an operator's QUARANTINED / DELETED mark took out of the scan (``RetrievableSplit.aside``):
    the facts out of retrieval with their status, and the mark in force on each (who, when, its note), and the
    pair's own decision in force, if any (docs/decisions/triage.md, "Out of retrieval")."""
    rows = []
    for p in pairs:
        held = ds.retrieval_marks(p.fact_a, p.fact_b)
        marks = [d for _, _, d in held]
        pair_decision = ds.pair_records.get(p_key(p))
        rows.append(
            {
                "pair": p_key(p),
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "patterns": ", ".join(p.patterns),
                "out of retrieval": ", ".join(f"{f} {status}" for f, status, _ in held),
                "by": ", ".join(d.operator for d in marks if d is not None),
                "at": ", ".join(d.decided_at or "" for d in marks if d is not None),
                "note": " · ".join(d.note for d in marks if d is not None and d.note),
                "decision": decision_summary(pair_decision),
            }
        )
    return pd.DataFrame(rows, columns=list(ASIDE_COLUMNS))


def aside_text(pair: ConflictPair, ds: DecisionSet) -> str:
    """Why ``pair`` is out of the queue, in one paragraph: the mark that took its fact out of retrieval and how to
    bring the pair back."""
    bits = []
    for f, status, d in ds.retrieval_marks(pair.fact_a, pair.fact_b):
        who = "" if d is None else f" by {d.operator} (decision #{d.id}, {d.decided_at})"
        note = f' ("{d.note}")' if d is not None and d.note else ""
        bits.append(f"{f} is {status}{who}{note}")
    return (
        f"{pair.fact_a} ↔ {pair.fact_b} is out of the queue: {'; '.join(bits)}. A fact out of retrieval reaches no "
        "envelope, so no run pairs it and the pair is no conflict pair: the counts above and crp-inspect "
        "conflicts leave it out. Mark the fact ACTIVE (or STALE) to bring the pair back."
    )


def with_claims(display: pd.DataFrame, keys: Sequence[str], cells: Mapping[str, str]) -> pd.DataFrame:
    """The queue as shown with each claimed pair's claim ("held by bob (120 s left)") after its state;
    ``keys`` are the rows' pair keys, in row order. ``display`` itself when no row is claimed."""
    if not any(k in cells for k in keys):
        return display
    out = display.copy()
    out["state"] = [" · ".join(x for x in (s, cells.get(k, "")) if x) for s, k in zip(display["state"].tolist(), keys)]
    return out


def pair_label(row: Mapping[str, object]) -> str:
    """Selectbox label of a queue row: the pair and its pattern(s) (its state is shown beside it)."""
    return f"{row['fact_a']} ↔ {row['fact_b']} · {row['patterns']}"


# ---- the decision log and the detector's quality -------------------------------------------------
#: the audit log's columns: the pair, the knowledge base and the decision first, so a row reads on its own
HISTORY_COLUMNS = (
    "id",
    "pair",
    "kb",
    "kind",
    "winner",
    "target_fact",
    "new_status",
    "operator",
    "role",
    "origin",
    "decided_at",
    "reverts",
    "note",
)
#: each audit log column's width on screen, in pixels: the short columns as narrow as their longest usual value
#: (a mark_status kind, a QUARANTINED status, a microsecond timestamp, a KB name with its fingerprint), the note
#: wide: at a 1400 px window, scrolled to the end, the decision a revert takes back and the note fill the table
#: beside the pinned columns (:data:`HISTORY_PINNED`)
HISTORY_WIDTHS = {
    "id": 48,
    "pair": 150,
    "kb": 240,
    "kind": 95,
    "winner": 100,
    "target_fact": 100,
    "new_status": 110,
    "operator": 100,
    "role": 75,
    "origin": 80,
    "decided_at": 215,
    "reverts": 72,
    "note": 520,
}
#: the audit log columns that stay in view while the table scrolls sideways: which decision a row is
HISTORY_PINNED = ("id", "pair")
#: the KB cell of a decision recorded without a fingerprint (it applies to every knowledge base)
NO_KB = "(none: applies to every KB)"


def kb_cell(d: Decision) -> str:
    """The knowledge base a decision was recorded on: "name · fingerprint" (the fingerprint's first 12
    hex digits), the fingerprint alone when the name is unknown, :data:`NO_KB` without one."""
    fp = d.ckf_fingerprint
    name = d.kb_name
    if not fp:
        return NO_KB if not name else f"{name} · (no fingerprint)"
    return f"{name} · {fp[:12]}" if name else fp[:12]


def log_for_kb(decisions: Sequence[Decision], fingerprint: str) -> list[Decision]:
    """The decisions recorded on the knowledge base of ``fingerprint``, and those recorded without a
    fingerprint (they apply to every KB), in log order."""
    return [d for d in decisions if d.ckf_fingerprint in (fingerprint, None, "")]


def next_pair(keys: Sequence[str], current: str) -> str | None:
    """The pair after ``current`` in the queue as shown (``keys``); the first when ``current`` is not
    shown; None after the last."""
    if current not in keys:
        return keys[0] if keys else None
    i = list(keys).index(current)
    return keys[i + 1] if i + 1 < len(keys) else None


def history_frame(decisions: Sequence[Decision]) -> pd.DataFrame:
    """Audit log rows (oldest first): id, pair, knowledge base, kind, winner, target, status, who (with the
    role held and where the decision was taken), when, the decision a revert takes back, note."""
    rows = [
        {
            "id": d.id,
            "pair": d.pair_key,
            "kb": kb_cell(d),
            "decided_at": d.decided_at,
            "operator": d.operator,
            "role": d.role,
            "origin": d.origin,
            "kind": d.kind,
            "winner": d.winner or "",
            "target_fact": d.target_fact or "",
            "new_status": d.new_status or "",
            "reverts": f"#{d.reverts}" if d.reverts is not None else "",
            "note": d.note,
        }
        for d in decisions
    ]
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def quality_frame(quality: DetectorQuality) -> pd.DataFrame:
    """Precision of the detector per pattern, as the operators' decisions judge it."""
    return pd.DataFrame(
        [
            {
                "pattern": q.pattern,
                "confirmed": q.confirmed,
                "dismissed": q.dismissed,
                "labelled": q.labelled,
                "precision": "-" if q.precision is None else f"{q.precision:.2f}",
            }
            for q in quality.per_pattern
        ]
    )


def overruled_frame(quality: DetectorQuality, kb: KnowledgeBase) -> pd.DataFrame:
    """The pairs operators dismissed or overrode, with both texts (shown as plain text cells)."""
    rows = []
    for p in quality.overruled:
        fa, fb = kb.get(p.fact_a), kb.get(p.fact_b)
        rows.append(
            {
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "decision": "dismissed" if p.kind == "dismiss" else f"override: {p.winner} wins",
                "patterns": ", ".join(p.patterns) or "(none today)",
                "text_a": fa.content if fa else "",
                "text_b": fb.content if fb else "",
                "operator": p.operator,
                "note": p.note,
            }
        )
    return pd.DataFrame(
        rows, columns=["fact_a", "fact_b", "decision", "patterns", "text_a", "text_b", "operator", "note"]
    )


def agreement_frame(agreements: Sequence[OperatorAgreement]) -> pd.DataFrame:
    """Agreement per pair of operators: shared pairs, agreed, percent agreement, Cohen's kappa ("-"
    where undefined: both used one and the same position on every shared pair)."""
    return pd.DataFrame(
        [
            {
                "operator_a": g.operator_a,
                "operator_b": g.operator_b,
                "shared pairs": g.shared,
                "agreed": g.agreed,
                "percent agreement": f"{100 * g.percent:.1f} %",
                "Cohen's kappa": "-" if g.kappa is None else f"{g.kappa:.3f}",
            }
            for g in agreements
        ],
        columns=["operator_a", "operator_b", "shared pairs", "agreed", "percent agreement", "Cohen's kappa"],
    )

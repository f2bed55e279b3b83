"""The operator decisions outside the store: the audit log's JSON and CSV exports, and the statuses
the decisions in force set, applied to a knowledge base or a prepared corpus. The decision model is
:mod:`crp_core.decisions`; the SQLite store is :mod:`crp_core.triage.store`."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

from crp_core.corpus.prepared import Corpus
from crp_core.decisions import COLUMNS, Decision, DecisionSet
from crp_core.model import KnowledgeBase
from crp_core.support.spreadsheet import csv_cell
from crp_core.triage.schema import SCHEMA_VERSION

#: what a decision says: two decisions equal on these record the same thing (a second click, a retried command)
_SAYS = ("fact_a", "fact_b", "kind", "winner", "target_fact", "new_status", "note", "operator", "ckf_fingerprint")


def same_decision(a: Decision, b: Decision) -> bool:
    """Whether ``b`` would record again what ``a`` records: same pair, kind, winner, target, status, note,
    operator and knowledge base. The dashboard and ``triage record`` refuse to append a decision that
    repeats its pair's latest entry (a double click, a command retried after its answer was lost)."""
    return all(getattr(a, f) == getattr(b, f) for f in _SAYS)


def apply_to_kb(kb: KnowledgeBase, decision_set: DecisionSet) -> KnowledgeBase:
    """``kb`` with the operators' statuses applied (ids the CKF does not hold are ignored)."""
    return kb.with_statuses(decision_set.statuses_on(kb))


def apply_to_corpus(corpus: Corpus, decision_set: DecisionSet) -> Corpus:
    """A prepared ``Corpus`` with the statuses applied (shares vectors and index; ``Corpus.with_statuses``)."""
    return corpus.with_statuses(decision_set.statuses_on(corpus.kb))


def export_json(decisions: Iterable[Decision]) -> str:
    """JSON export: ``{"application", "schema_version", "decisions": [...], "current": {...}}``."""
    decisions = list(decisions)
    doc = {
        "application": "crp-inspect triage",
        "schema_version": SCHEMA_VERSION,
        "decisions": [d.to_dict() for d in decisions],
        "current": DecisionSet.from_decisions(decisions).to_dict(),
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def export_csv(decisions: Iterable[Decision]) -> str:
    """CSV export: header ``id,pair_key,fact_a,...``; one row per decision, oldest first."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(COLUMNS)
    for d in decisions:
        row = d.to_dict()
        w.writerow([csv_cell(row[c]) for c in COLUMNS])
    return buf.getvalue()

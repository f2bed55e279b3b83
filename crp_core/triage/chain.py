"""The hash chain of the audit log (docs/decisions/triage.md "The chain").

Every entry stores ``prev_hash`` (the previous entry's ``entry_hash``; :data:`GENESIS` for the first)
and ``entry_hash`` = SHA-256 of the canonical JSON of its fields (:data:`CHAINED_FIELDS`: UTF-8, keys
sorted, no spaces). The chain's order is id order; the store appends one entry at a time, so the chain
is linear. Changing, removing or inserting an entry breaks it at that entry or the next one, and
:func:`verify_chain` names the first entry where it breaks. The id is not hashed (ids are assigned by
the database); removing the newest entries cannot be seen from the log alone: keep the head hash
(:attr:`ChainVerdict.head`) elsewhere to see that too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from crp_core.decisions import COLUMNS, Decision

#: the ``prev_hash`` of the first entry
GENESIS = "0" * 64
#: the fields an entry's hash covers (every field but id and entry_hash)
CHAINED_FIELDS: tuple[str, ...] = (
    "pair_key",
    "fact_a",
    "fact_b",
    "kb_name",
    "ckf_fingerprint",
    "operator",
    "role",
    "origin",
    "os_user",
    "kind",
    "winner",
    "target_fact",
    "new_status",
    "note",
    "decided_at",
    "based_on",
    "reverts",
    "prev_hash",
)


def canonical_json(row: Mapping[str, Any]) -> bytes:
    """The bytes an entry's hash is taken over: its :data:`CHAINED_FIELDS` as JSON, keys sorted, no
    spaces, UTF-8 (text a version wrote with lone surrogates is kept as such, ``surrogatepass``)."""
    doc = {k: row.get(k) for k in CHAINED_FIELDS}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def entry_hash(row: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of ``row``."""
    return hashlib.sha256(canonical_json(row)).hexdigest()


def decision_row(d: Decision) -> dict[str, Any]:
    """``d`` as a row dict (pair_key included), the shape :func:`entry_hash` reads."""
    return d.to_dict()


def chained(d: Decision, prev_hash: str) -> Decision:
    """``d`` with ``prev_hash`` and its ``entry_hash`` set."""
    from dataclasses import replace

    linked = replace(d, prev_hash=prev_hash)
    return replace(linked, entry_hash=entry_hash(decision_row(linked)))


@dataclass(frozen=True)
class ChainVerdict:
    """What :func:`verify_chain` found: ``ok``; ``entries`` checked (up to and including the first broken
    one); ``total``: the entries the log holds; ``first_broken_id`` and ``reason`` (what differs) at the first
    broken entry; ``head``: the last entry's hash when the whole chain verifies (None otherwise). A kept head
    that is not an entry of the log makes the verdict not ok with ``first_broken_id`` None: entries were
    removed from the log's end (or the log was replaced), which no chain shows from inside."""

    ok: bool
    entries: int
    first_broken_id: int | None = None
    reason: str | None = None
    head: str | None = GENESIS
    total: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "total": self.entries if self.total is None else self.total,
            "first_broken_id": self.first_broken_id,
            "reason": self.reason,
            "head": self.head,
        }


def _break(row: Mapping[str, Any], prev: str, prev_id: int | None) -> str | None:
    """Why ``row`` does not continue the chain whose last verified hash is ``prev`` (None: it does)."""
    if row.get("prev_hash") != prev:
        before = "the start of the log" if prev_id is None else f"entry #{prev_id}'s entry_hash"
        return (
            f"prev_hash {str(row.get('prev_hash'))[:16]}... differs from {before} {prev[:16]}...: an entry "
            "before it was changed, removed or inserted"
        )
    try:
        want = entry_hash(row)
    except (TypeError, ValueError) as exc:  # a blob or another value no version writes
        return f"a field holds a value the schema refuses ({exc}); written by another tool"
    if row.get("entry_hash") != want:
        return (
            f"entry_hash {str(row.get('entry_hash'))[:16]}... differs from the hash of its fields {want[:16]}...: "
            "a field of this entry was changed after it was written"
        )
    return None


def verify_chain(rows: Iterable[Mapping[str, Any]], *, kept_head: str | None = None) -> ChainVerdict:
    """Recompute the chain over ``rows`` (dicts with every decision column, in id order). ``kept_head``: a
    head hash kept outside the log earlier (``triage verify --head``); it must be one of the log's entries,
    else entries after it were removed."""
    prev, prev_id, n = GENESIS, None, 0
    seen = {GENESIS}
    it = iter(rows)
    for row in it:
        n += 1
        why = _break(row, prev, prev_id)
        if why is not None:
            return ChainVerdict(False, n, row.get("id"), why, head=None, total=n + sum(1 for _ in it))
        prev, prev_id = str(row.get("entry_hash")), row.get("id")
        seen.add(prev)
    if kept_head is not None and kept_head.strip().lower() not in seen:
        why = (
            f"the kept head {kept_head.strip()[:16]}... is not an entry of this log: entries written after it "
            "were removed from the log's end, or the log was replaced"
        )
        return ChainVerdict(False, n, None, why, head=prev, total=n)
    return ChainVerdict(True, n, head=prev, total=n)


def jsonl_lines(decisions: Iterable[Decision]) -> str:
    """The log as JSON Lines: one entry per line, keys in :data:`crp_core.decisions.COLUMNS` order."""
    return "".join(json.dumps({c: d.to_dict()[c] for c in COLUMNS}, ensure_ascii=False) + "\n" for d in decisions)

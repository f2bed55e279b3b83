"""The crprotocol audit trail's hash chain, re-checked one entry at a time (docs/reference/sessions.md#the-chain).

Each chain entry of ``<session>.audit.jsonl`` carries ``entry_hash``, the SHA-256 of the canonical JSON
(sorted keys, ``(",", ":")`` separators, ASCII escapes) of its ``event_type``, ``timestamp``,
``session_id``, ``data`` and ``sequence``, and ``previous_hash``, the ``entry_hash`` of the entry
before it (64 zeros for the first). :class:`ChainChecker` recomputes both for every entry it is fed,
in constant memory: it keeps the previous entry's hash and sequence, counts, and at most
:data:`MAX_LISTED` items of each list. The HMAC ``signature`` and the Ed25519 ``receipt`` are counted,
never verified: the HMAC key is the session's own and never leaves it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "GENESIS",
    "MAX_LISTED",
    "ENTRY_FIELDS",
    "BreakKind",
    "ChainBreak",
    "SequenceGap",
    "ForeignEntry",
    "ChainReport",
    "ChainChecker",
    "entry_hash",
    "as_written",
]

#: the ``previous_hash`` of a trail's first entry
GENESIS = "0" * 64
#: items kept of each list of a report (breaks, gaps, foreign entries, ...); the rest are counted
MAX_LISTED = 100
#: the fields every chain entry must have, with the JSON kinds accepted
ENTRY_FIELDS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("event_type", (str,)),
    ("timestamp", (int, float)),
    ("session_id", (str,)),
    ("data", (dict,)),
    ("sequence", (int,)),
    ("previous_hash", (str,)),
    ("entry_hash", (str,)),
)

#: ``sequence``: sequences missing before the entry (deleted entries, a cut head) or out of order;
#: ``content``: the entry does not hash to its ``entry_hash``; ``link``: its ``previous_hash`` is not the
#: previous entry's ``entry_hash`` (or, first, not :data:`GENESIS`); ``unreadable``: a line that is not
#: a chain entry (not JSON, a field missing or of the wrong kind, cut short at the end of the file).
#: ``previous_hash`` is not among the hashed fields, so an entry deleted and the next one's link
#: rewritten shows only as a ``sequence`` break; one at one line is listed in this order.
BreakKind = Literal["sequence", "content", "link", "unreadable"]


@dataclass(frozen=True)
class ChainBreak:
    """One place where the chain does not hold."""

    line: int  # 1-based line of the file
    sequence: int | None  # the entry's sequence (None: unreadable)
    kind: BreakKind
    message: str
    stored: str = ""  # content: the entry_hash written; link: the previous_hash written
    expected: str = ""  # content: the hash recomputed; link: the previous entry's entry_hash


@dataclass(frozen=True)
class SequenceGap:
    """Sequences that do not follow each other: entries missing (deleted, or the head cut), or out of order."""

    line: int  # the line of the entry after the gap
    after: int | None  # the sequence of the entry before it (None: the first entry)
    found: int  # the sequence found
    kind: Literal["missing", "out_of_order"]
    missing: int  # how many sequences are missing (0 for out_of_order)


@dataclass(frozen=True)
class ForeignEntry:
    """An entry whose ``session_id`` is not the trail's (the first entry's)."""

    line: int
    sequence: int
    session_id: str
    event_type: str


@dataclass(frozen=True)
class ChainReport:
    """The verdict on a trail's chain. ``verdict`` is ``intact`` when every entry hashes to its
    ``entry_hash``, links to the one before, the sequences run from 0 without a gap and no line is
    unreadable; ``broken`` otherwise; ``empty`` when no entry was read."""

    verdict: Literal["intact", "broken", "empty"]
    session_id: str | None  # the first entry's session
    entries: int  # chain entries checked
    first_sequence: int | None
    last_sequence: int | None
    first_break: ChainBreak | None
    breaks: tuple[ChainBreak, ...]  # the first MAX_LISTED, in file order
    breaks_total: int
    gaps: tuple[SequenceGap, ...]
    gaps_total: int
    missing_entries: int  # sequences missing in all (deleted entries, a cut head)
    foreign: tuple[ForeignEntry, ...]
    foreign_total: int
    signed: int  # entries carrying an HMAC signature (not verifiable without the session's key)
    receipts: int  # entries carrying an Ed25519 receipt (verifiable only with the signer's public key)
    reformatted: tuple[int, ...]  # lines whose bytes are not the SDK's serialisation of the same entry
    reformatted_total: int
    closed: bool  # the last entry is compliance.session_closed
    truncated: bool  # the last line ends inside an entry (the file was cut)


def entry_hash(entry: dict[str, Any]) -> str:
    """The SHA-256 (hex) the SDK writes as an entry's ``entry_hash``: the canonical JSON of its five
    hashed fields (sorted keys, no spaces, non-ASCII escaped, as ``json.dumps`` does by default)."""
    content = {k: entry[k] for k in ("event_type", "timestamp", "session_id", "data", "sequence")}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def as_written(entry: dict[str, Any]) -> str:
    """The line the SDK writes for a parsed entry (its key order, no spaces): a line read that differs
    was rewritten by another hand, even when every hashed value is the same."""
    return json.dumps(entry, separators=(",", ":"))


def _short(h: str) -> str:
    return h[:12] + "..." if len(h) > 12 else h or "(empty)"


@dataclass
class ChainChecker:
    """Feed it every line of a trail in order (:meth:`entry`, :meth:`unreadable`), then :meth:`report`.
    Constant memory: the previous entry's hash and sequence, counters, and capped lists."""

    session_id: str | None = None
    entries: int = 0
    first_sequence: int | None = None
    last_sequence: int | None = None
    prev_hash: str | None = None  # None: the line before was unreadable (no link to check)
    prev_line: int = 0
    last_event: str = ""
    signed: int = 0
    receipts: int = 0
    truncated: bool = False
    missing: int = 0
    breaks: list[ChainBreak] = field(default_factory=list)
    breaks_total: int = 0
    gaps: list[SequenceGap] = field(default_factory=list)
    gaps_total: int = 0
    foreign: list[ForeignEntry] = field(default_factory=list)
    foreign_total: int = 0
    reformatted: list[int] = field(default_factory=list)
    reformatted_total: int = 0

    def unreadable(self, line: int, message: str, *, truncated: bool = False) -> None:
        """A line that is not a chain entry: a break; the next entry's link is not checked (the entry
        it should link to is unknown)."""
        self._break(ChainBreak(line, None, "unreadable", message))
        self.prev_hash = None
        self.prev_line = line
        self.truncated = self.truncated or truncated

    def entry(self, line: int, entry: dict[str, Any], text: str) -> bool:
        """Check one chain entry (every :data:`ENTRY_FIELDS` present and of its kind) read from ``text``;
        True when it belongs to the trail's session."""
        seq = int(entry["sequence"])
        sid = entry["session_id"]
        if self.session_id is None:
            self.session_id = sid
        self.entries += 1
        self._sequence(line, seq)
        computed = entry_hash(entry)
        stored = entry["entry_hash"]
        if computed != stored:
            self._break(
                ChainBreak(
                    line,
                    seq,
                    "content",
                    f"line {line} (sequence {seq}): the entry does not hash to its entry_hash (written "
                    f"{_short(stored)}, computed {_short(computed)}): its event_type, timestamp, session_id, "
                    "data or sequence was changed after the SDK wrote it",
                    stored,
                    computed,
                )
            )
        self._link(line, seq, entry["previous_hash"])
        if as_written(entry) != text:
            self.reformatted_total += 1
            if len(self.reformatted) < MAX_LISTED:
                self.reformatted.append(line)
        self.signed += bool(entry.get("signature"))
        self.receipts += bool(entry.get("receipt"))
        self.prev_hash, self.prev_line, self.last_event = stored, line, entry["event_type"]
        if sid != self.session_id:
            self.foreign_total += 1
            if len(self.foreign) < MAX_LISTED:
                self.foreign.append(ForeignEntry(line, seq, sid, entry["event_type"]))
            return False
        return True

    def _link(self, line: int, seq: int, previous: str) -> None:
        if self.entries == 1 and self.prev_line == 0:
            expected, what = GENESIS, "the genesis value (64 zeros) a trail's first entry links to"
        elif self.prev_hash is None:
            return  # the line before is unreadable: already a break
        else:
            expected, what = self.prev_hash, f"line {self.prev_line}'s entry_hash {_short(self.prev_hash)}"
        if previous == expected:
            return
        why = (
            "entries before it are missing (the head of the trail was cut)"
            if expected == GENESIS
            else "an entry between them was removed or moved, or the line before was rewritten with a fresh hash"
        )
        self._break(
            ChainBreak(
                line,
                seq,
                "link",
                f"line {line} (sequence {seq}): previous_hash {_short(previous)} is not {what}: {why}",
                previous,
                expected,
            )
        )

    def _sequence(self, line: int, seq: int) -> None:
        last = self.last_sequence
        if last is None:
            self.first_sequence = seq
            if seq != 0:
                self._gap(SequenceGap(line, None, seq, "missing", seq))
        elif seq > last + 1:
            self._gap(SequenceGap(line, last, seq, "missing", seq - last - 1))
        elif seq <= last:
            self._gap(SequenceGap(line, last, seq, "out_of_order", 0))
        self.last_sequence = seq if last is None else max(last, seq)

    def _gap(self, gap: SequenceGap) -> None:
        self.missing += gap.missing
        self.gaps_total += 1
        if len(self.gaps) < MAX_LISTED:
            self.gaps.append(gap)
        if gap.kind == "out_of_order":
            what = f"comes after sequence {gap.after}: the entries were reordered or repeated"
        elif gap.after is None:
            what = f"is the first entry: sequences 0 to {gap.found - 1} are missing (the head of the trail was cut)"
        else:
            lost = f"sequence {gap.after + 1}" if gap.missing == 1 else f"sequences {gap.after + 1} to {gap.found - 1}"
            what = f"follows sequence {gap.after}: {lost} missing (entries deleted)"
        self._break(ChainBreak(gap.line, gap.found, "sequence", f"line {gap.line} (sequence {gap.found}) {what}"))

    def _break(self, b: ChainBreak) -> None:
        self.breaks_total += 1
        if len(self.breaks) < MAX_LISTED:
            self.breaks.append(b)

    def report(self) -> ChainReport:
        broken = self.breaks_total > 0
        verdict: Literal["intact", "broken", "empty"] = (
            "broken" if broken else "empty" if self.entries == 0 else "intact"
        )
        return ChainReport(
            verdict=verdict,
            session_id=self.session_id,
            entries=self.entries,
            first_sequence=self.first_sequence,
            last_sequence=self.last_sequence,
            first_break=self.breaks[0] if self.breaks else None,
            breaks=tuple(self.breaks),
            breaks_total=self.breaks_total,
            gaps=tuple(self.gaps),
            gaps_total=self.gaps_total,
            missing_entries=self.missing,
            foreign=tuple(self.foreign),
            foreign_total=self.foreign_total,
            signed=self.signed,
            receipts=self.receipts,
            reformatted=tuple(self.reformatted),
            reformatted_total=self.reformatted_total,
            closed=self.last_event == "compliance.session_closed" and not self.truncated,
            truncated=self.truncated,
        )

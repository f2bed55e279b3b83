"""Reading a crprotocol audit trail whole, one line at a time (docs/reference/sessions.md).

:func:`read_audit` never holds more than one line of the file: each line is parsed, its chain fields
checked (:class:`~crp_core.io.session.chain.ChainChecker`), its hash added to the Merkle root the
anchor is compared with, and the session's own entries handed to the window collector, which keeps at
most :data:`~crp_core.io.session.windows.MAX_WINDOWS` windows. Memory is bounded by
:data:`MAX_LINE_BYTES` plus the capped lists, whatever the file's size.

A line that cannot be read (not UTF-8, not JSON, not an object, a chain field missing or of the wrong
kind, longer than the limit, the file ending inside it) is a :class:`~crp_core.errors.Problem` at its
line and a chain break; reading goes on with the next line, so nothing read before or after is lost.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from crp_core.errors import Problem
from crp_core.io.located import type_name
from crp_core.io.session.anchor import AnchorCheck, MerkleRoot, anchor_path_for, check_anchor
from crp_core.io.session.chain import ENTRY_FIELDS, MAX_LISTED, ChainChecker, ChainReport
from crp_core.io.session.windows import KNOWN_EVENT_TYPES, AuditWindow, WindowCollector
from crp_core.support.files import check_regular_file

__all__ = ["MAX_LINE_BYTES", "MAX_EVENT_TYPES", "UnknownEvent", "AuditTrail", "read_audit"]

#: the longest line read (a transcript line carries a window's whole prompt); a longer one is skipped
MAX_LINE_BYTES = 32 * 1024 * 1024
#: distinct event types counted by name; further ones are counted together under "(other types)"
MAX_EVENT_TYPES = 1000
_CLOSED = "compliance.session_closed"
_CREATED = "compliance.session_created"


@dataclass(frozen=True)
class UnknownEvent:
    """An entry whose event type crprotocol 6.2.5 does not record: kept in the chain, listed here."""

    line: int
    sequence: int
    event_type: str


@dataclass(frozen=True)
class AuditTrail:
    """What one pass over a trail found: the chain verdict, the anchor's, the session's windows."""

    path: str
    lines: int  # physical lines read (blank ones included)
    chain: ChainReport
    anchor: AnchorCheck | None  # None: no anchor file beside the trail
    windows: tuple[AuditWindow, ...]  # the session's own, in order (the first MAX_WINDOWS)
    windows_total: int
    transcripts: int  # transcript lines
    transcripts_unmatched: int  # transcript lines naming no window of the trail
    event_counts: Mapping[str, int]  # event type -> entries, by name
    unknown_events: tuple[UnknownEvent, ...]  # the first MAX_LISTED
    unknown_total: int
    problems: tuple[Problem, ...]  # unreadable lines, the first MAX_LISTED
    problems_total: int
    model: str  # compliance.session_created's model ("" when absent)
    protocol_version: str
    closing: Mapping[str, Any]  # compliance.session_closed's numeric data (windows_completed, audit_entries, ...)
    first_timestamp: float | None  # the session's earliest entry (POSIX seconds)
    last_timestamp: float | None  # its latest


def _lines(fh: IO[bytes], limit: int) -> Iterator[tuple[int, bytes | None, int, bool]]:
    """(line number, bytes without the line break or None when longer than ``limit``, length, ended
    by a line break). Reads at most ``limit + 1`` bytes at a time."""
    n = 0
    while True:
        chunk = fh.readline(limit + 1)
        if not chunk:
            return
        n += 1
        ended = chunk.endswith(b"\n")
        if len(chunk) > limit and not ended:
            size = len(chunk)
            while not ended:
                more = fh.readline(1 << 20)
                size += len(more)
                ended = more.endswith(b"\n")
                if not more:
                    break
            yield n, None, size, ended
            continue
        yield n, chunk.rstrip(b"\r\n"), len(chunk), ended


def _field_problem(n: int, obj: Mapping[str, Any]) -> Problem | None:
    for name, kinds in ENTRY_FIELDS:
        if name not in obj:
            return Problem(
                n,
                name,
                "missing: a chain entry has event_type, timestamp, session_id, data, "
                "sequence, previous_hash and entry_hash",
            )
        v = obj[name]
        if isinstance(v, bool) or not isinstance(v, kinds):
            want = "a string" if kinds[0] is str else "an object" if kinds[0] is dict else "a number"
            if name == "sequence":
                want = "an integer"
            return Problem(n, name, f"{type_name(v)}, not {want}")
        if name == "timestamp" and not _finite_float(v):  # POSIX seconds: a float holds them
            return Problem(n, name, f"{json.dumps(v)[:40]}, not a finite number of seconds a float holds")
    return None


def _finite_float(v: Any) -> bool:
    """A finite number a float holds (a JSON integer of 400 digits overflows ``float()``)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


@dataclass
class _Reader:
    path: str
    limit: int
    chain: ChainChecker
    merkle: MerkleRoot
    collector: WindowCollector
    lines: int = 0
    transcripts: int = 0
    problems_total: int = 0
    unknown_total: int = 0
    model: str = ""
    protocol_version: str = ""
    first_ts: float | None = None
    last_ts: float | None = None

    def __post_init__(self) -> None:
        self.problems: list[Problem] = []
        self.unknown: list[UnknownEvent] = []
        self.counts: dict[str, int] = {}
        self.closing: dict[str, Any] = {}

    def problem(self, p: Problem, *, truncated: bool = False) -> None:
        self.problems_total += 1
        if len(self.problems) < MAX_LISTED:
            self.problems.append(p)
        self.chain.unreadable(p.line, f"line {p.line}: {p.message}", truncated=truncated)

    def line(self, n: int, raw: bytes | None, size: int, ended: bool) -> None:
        self.lines = n
        if raw is None:
            self.problem(Problem(n, "line", f"{size:,} bytes long, over the {self.limit:,} a line may have: not read"))
            return
        if not raw.strip():
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.problem(Problem(n, "line", f"not UTF-8 (byte {exc.start + 1} of the line)"))
            return
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:
            if not ended:
                msg = f"the file ends inside this entry ({size:,} bytes of it): the trail was cut mid-line"
                self.problem(Problem(n, "line", msg), truncated=True)
            else:
                what = (
                    f"not JSON ({exc.msg} at column {exc.colno})"
                    if isinstance(exc, json.JSONDecodeError)
                    else (f"not JSON ({type(exc).__name__})")
                )
                self.problem(Problem(n, "line", what))
            return
        if not isinstance(obj, dict):
            self.problem(Problem(n, "line", f"{type_name(obj)}, not an audit entry (a JSON object)"))
            return
        if obj.get("record_type") == "transcript":
            self.transcripts += 1
            self.collector.transcript(obj)
            return
        bad = _field_problem(n, obj)
        if bad is not None:
            self.problem(bad)
            return
        self.entry(n, obj, text)

    def entry(self, n: int, obj: dict[str, Any], text: str) -> None:
        event = obj["event_type"]
        own = self.chain.entry(n, obj, text)
        self.merkle.add(obj["entry_hash"])
        key = event if event in self.counts or len(self.counts) < MAX_EVENT_TYPES else "(other types)"
        self.counts[key] = self.counts.get(key, 0) + 1
        if event not in KNOWN_EVENT_TYPES:
            self.unknown_total += 1
            if len(self.unknown) < MAX_LISTED:
                self.unknown.append(UnknownEvent(n, obj["sequence"], event))
        if not own:
            return
        ts = float(obj["timestamp"])
        if math.isfinite(ts):
            self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        data = obj["data"]
        if event == _CREATED:
            self.model = str(data.get("model", "")) if isinstance(data.get("model"), str) else ""
            pv = data.get("protocol_version")
            self.protocol_version = pv if isinstance(pv, str) else ""
        elif event == _CLOSED:
            self.closing = {k: v for k, v in data.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        self.collector.entry(n, obj)

    def trail(self, anchor: AnchorCheck | None) -> AuditTrail:
        c = self.collector
        return AuditTrail(
            path=self.path,
            lines=self.lines,
            chain=self.chain.report(),
            anchor=anchor,
            windows=c.windows(),
            windows_total=c.total,
            transcripts=self.transcripts,
            transcripts_unmatched=c.transcripts_unmatched,
            event_counts=dict(sorted(self.counts.items())),
            unknown_events=tuple(self.unknown),
            unknown_total=self.unknown_total,
            problems=tuple(self.problems),
            problems_total=self.problems_total,
            model=self.model,
            protocol_version=self.protocol_version,
            closing=self.closing,
            first_timestamp=self.first_ts,
            last_timestamp=self.last_ts,
        )


def read_audit(
    path: str | os.PathLike[str], *, anchor: str | os.PathLike[str] | None = None, max_line_bytes: int = MAX_LINE_BYTES
) -> AuditTrail:
    """Read and check the trail at ``path`` in one streamed pass (any size).

    ``anchor``: the SDK's anchor file to compare with (default: ``<path>.anchor.json`` when it exists).
    A path that is not a readable regular file is refused (:class:`~crp_core.errors.ValidationError`);
    every problem inside the file is reported on the trail, never raised.
    """
    p = os.fspath(path)
    check_regular_file(p, max_bytes=sys.maxsize, what="audit trail")
    reader = _Reader(p, max_line_bytes, ChainChecker(), MerkleRoot(), WindowCollector())
    try:
        with open(p, "rb") as fh:
            for n, raw, size, ended in _lines(fh, max_line_bytes):
                reader.line(n, raw, size, ended)
    except OSError as exc:
        reader.problem(Problem(reader.lines + 1, "file", f"reading stopped: {exc.strerror or exc}"))
    anchor_file = os.fspath(anchor) if anchor is not None else anchor_path_for(p)
    check = None
    if anchor is not None or os.path.lexists(anchor_file):
        check = check_anchor(anchor_file, reader.chain.entries, reader.merkle.root())
    return reader.trail(check)

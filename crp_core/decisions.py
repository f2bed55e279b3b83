"""Operator decisions on conflict pairs, the pure model (SPEC-027 §2, SPEC-009 §8).

:class:`Decision` (one audit-log row, :func:`validate_decision`), :class:`DecisionSet` (the decisions
in force: latest per pair, latest status per fact), :func:`pair_key` (the canonical key of an
unordered pair of fact ids); the decisions a cleaned CKF carries in its facts' metadata are
:mod:`crp_core.carried`'s. Stage 4 arbitrates with them
(:data:`Decisions`); the triage workflow (:mod:`crp_core.triage`) records, exports and reports them.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from types import MappingProxyType
from typing import Any

from crp_core.config import NEVER_RETRIEVED, STATUSES
from crp_core.errors import CRPError
from crp_core.model import KnowledgeBase, has_unpaired_surrogate
from crp_core.support.digest import content_digest
from crp_core.support.text import control_char

#: decision kinds an operator chooses
KINDS: tuple[str, ...] = ("accept", "override", "mark_status", "dismiss")
#: the kind of an admin's revert entry: it takes back the decision named by ``Decision.reverts``
REVERT = "revert"
#: every kind an audit-log row may have
ALL_KINDS: tuple[str, ...] = (*KINDS, REVERT)
#: the roles a decision is recorded under (``crp_core.triage.roles.Role``)
ROLES: tuple[str, ...] = ("viewer", "operator", "admin")
#: where a new decision is taken; ``ORIGINS`` adds ``migrated``: a schema-1 row, whose origin was not recorded
NEW_ORIGINS: tuple[str, ...] = ("dashboard", "cli", "session")
ORIGINS: tuple[str, ...] = (*NEW_ORIGINS, "migrated")
#: the kinds that decide how a pair is arbitrated (``DecisionSet.pair_decisions``)
PAIR_KINDS: tuple[str, ...] = ("accept", "override", "dismiss")
#: statuses an operator may set; ACTIVE restores a fact marked earlier (the log is append-only)
MARKABLE_STATUSES: tuple[str, ...] = tuple(STATUSES)
#: limits on free text, so a pasted file does not end up in the audit log by accident
MAX_OPERATOR_CHARS = 200
MAX_NOTE_CHARS = 10_000
MAX_KB_NAME_CHARS = 1_000
#: the only control characters a note may hold (a multi-line note); the operator's name holds none
NOTE_ALLOWED_CONTROLS = "\t\n"
#: the columns of a decision row: the CSV export header and the store's table
COLUMNS: tuple[str, ...] = tuple(
    "id pair_key fact_a fact_b kind winner target_fact new_status note operator decided_at ckf_fingerprint "
    "kb_name role origin os_user based_on reverts prev_hash entry_hash".split()
)


# ---- errors ----------------------------------------------------------------------------------
class TriageStoreError(CRPError):
    """The decision database cannot be used: corrupt, foreign, newer schema, busy, closed, ..."""


class DecisionError(TriageStoreError, ValueError):
    """A decision was refused; ``problems`` lists ``(field, message)`` for every problem found."""

    def __init__(self, problems: Iterable[tuple[str, str]], *, title: str = "invalid triage decision"):
        self.problems = tuple(problems)
        super().__init__(f"{title}: " + "; ".join(f"field '{f}': {m}" for f, m in self.problems))


class TriageStoreUnavailable(TriageStoreError):
    """The decision database cannot be reached right now (server gone, connection refused or lost):
    nothing was written; the same call may succeed once it is back."""


class StaleDecisionError(TriageStoreError):
    """A decision was made on a state of its pair that is no longer the latest: ``latest`` is the
    decision recorded meanwhile (who decided what, when); nothing was written."""

    def __init__(self, decision: Decision, latest: Decision):
        self.decision = decision
        self.latest = latest
        shown = "none" if decision.based_on == 0 else f"decision #{decision.based_on}"
        super().__init__(
            f"pair [{decision.fact_a} | {decision.fact_b}] changed since it was shown ({shown}): "
            f"{latest.operator} ({latest.role}, {latest.origin}) recorded #{latest.id} {latest.kind}"
            + (f" (winner {latest.winner})" if latest.winner else "")
            + f" at {latest.decided_at}; review it and confirm again"
        )


# ---- pair keys -------------------------------------------------------------------------------
def _escape(fact_id: str) -> str:
    return fact_id.replace("\\", "\\\\").replace("|", "\\|")


def pair_key(a: str, b: str) -> str:
    """Canonical key of the unordered pair {a, b}: ``"a|b"`` with the ids sorted.

    ``\\`` and ``|`` inside an id are backslash-escaped, so two different pairs never share a key
    (without escaping, ("x|y", "z") and ("x", "y|z") would both give "x|y|z").
    """
    lo, hi = (a, b) if a <= b else (b, a)
    return f"{_escape(lo)}|{_escape(hi)}"


def split_pair_key(key: str) -> tuple[str, str]:
    """Inverse of :func:`pair_key`: the two fact ids, sorted. Raises ``ValueError`` on a bad key."""
    parts: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(key):
        ch = key[i]
        if ch == "\\":
            if i + 1 >= len(key) or key[i + 1] not in "\\|":
                raise ValueError(f"bad pair key {key!r}: dangling escape at position {i}")
            cur.append(key[i + 1])
            i += 2
            continue
        if ch == "|":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    if len(parts) != 2:
        raise ValueError(f"bad pair key {key!r}: expected two fact ids separated by an unescaped '|'")
    return parts[0], parts[1]


# ---- operators -------------------------------------------------------------------------------
def normalise_operator(name: str) -> str:
    """The canonical form of an operator's name: Unicode NFC, outer spaces stripped, inner runs of
    white space made one space, case folded ("  ALICE  Smith" -> "alice smith"), so one person is one
    name. Raises :class:`DecisionError` (field ``operator``) for a non-string, an empty name, one
    longer than :data:`MAX_OPERATOR_CHARS`, or one holding a control or bidi character."""
    if not isinstance(name, str):
        raise DecisionError([("operator", f"must be a string, got {type(name).__name__}")])
    why = _operator_problem(name.strip(), True)
    folded = (
        "" if why else unicodedata.normalize("NFC", " ".join(unicodedata.normalize("NFC", name).split()).casefold())
    )
    if why or (why := _operator_problem(folded, True)):
        raise DecisionError([("operator", why)])
    return folded


# ---- records ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Decision:
    """One operator decision on a conflict pair: a row of the audit log.

    ``id`` and ``decided_at`` are set by :meth:`DecisionStore.record`; build new decisions with
    the constructors :meth:`accept`, :meth:`override`, :meth:`mark_status`, :meth:`dismiss`.
    ``fact_a`` < ``fact_b`` always (the canonical order of :func:`pair_key`).
    """

    fact_a: str
    fact_b: str
    kind: str
    operator: str
    winner: str | None = None  # override (required) / accept (optional: the arbitration's winner)
    target_fact: str | None = None  # mark_status
    new_status: str | None = None  # mark_status
    note: str = ""
    ckf_fingerprint: str | None = None
    id: int | None = None
    decided_at: str | None = None  # UTC ISO 8601, stamped by the store inside the transaction
    kb_name: str | None = None  # the knowledge base's name (its CKF file's name) beside its fingerprint
    role: str = "operator"  # the role the operator held (ROLES); the store stamps it from its role book
    origin: str = "cli"  # where it was taken (NEW_ORIGINS; "migrated" for a schema-1 row)
    os_user: str | None = None  # the operating-system user of a CLI decision
    #: the id of the pair's latest decision the deciding form showed (0: it showed none); None: no check
    based_on: int | None = None
    reverts: int | None = None  # a revert entry: the id of the decision it takes back (the note says why)
    prev_hash: str | None = None  # the previous log entry's entry_hash (stamped by the store)
    entry_hash: str | None = None  # sha256 of this entry's canonical JSON (crp_core.triage.chain)

    @property
    def pair_key(self) -> str:
        return pair_key(self.fact_a, self.fact_b)

    @property
    def pair(self) -> tuple[str, str]:
        return self.fact_a, self.fact_b

    @classmethod
    def new(cls, a: str, b: str, kind: str, operator: str, **kw: Any) -> Decision:
        """A not-yet-recorded decision on the pair {a, b} (ids put in canonical order)."""
        if isinstance(a, str) and isinstance(b, str) and b < a:
            a, b = b, a
        return cls(fact_a=a, fact_b=b, kind=kind, operator=operator, **kw)

    @classmethod
    def accept(cls, a: str, b: str, *, operator: str, winner: str | None = None, **kw: Any) -> Decision:
        """Accept the arbitration as shown (``winner``: the winner it showed; None for a tie). ``kw``: the
        other fields (note, ckf_fingerprint, kb_name, origin, os_user, based_on, ...)."""
        return cls.new(a, b, "accept", operator, winner=winner, **kw)

    @classmethod
    def override(cls, a: str, b: str, *, winner: str, operator: str, **kw: Any) -> Decision:
        """Override the arbitration: ``winner`` wins the pair whatever its authority."""
        return cls.new(a, b, "override", operator, winner=winner, **kw)

    @classmethod
    def dismiss(cls, a: str, b: str, *, operator: str, **kw: Any) -> Decision:
        """Not a conflict: the pair is not arbitrated (both facts stay)."""
        return cls.new(a, b, "dismiss", operator, **kw)

    @classmethod
    def mark_status(cls, a: str, b: str, *, fact: str, status: str, operator: str, **kw: Any) -> Decision:
        """Set the lifecycle status (SPEC-009 §8) of ``fact``, one of the pair's facts."""
        return cls.new(a, b, "mark_status", operator, target_fact=fact, new_status=status, **kw)

    @classmethod
    def revert(cls, a: str, b: str, *, reverts: int, operator: str, reason: str, **kw: Any) -> Decision:
        """An admin's revert of decision ``reverts`` on the pair {a, b}: a new log entry; ``reason`` (the
        note) is required. The reverted decision stops being in force (:class:`DecisionSet`)."""
        return cls.new(a, b, REVERT, operator, reverts=reverts, note=reason, **kw)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, keys in the export's column order (``pair_key`` included)."""
        d = asdict(self)
        d["pair_key"] = self.pair_key
        return {c: d[c] for c in COLUMNS}


#: bidi embedding / override / isolate controls: they reorder what a terminal or a page draws after them
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _bad_char(text: str, *, allow: str = "") -> str | None:
    """The first character of ``text`` an operator field refuses, as ``U+XXXX``: a control character
    (Unicode Cc: C0, DEL, C1; ESC starts the terminal sequences that clear or recolour a screen) not in
    ``allow``, or a bidi control (:data:`BIDI_CONTROLS`). None when there is none."""
    for ch in text:
        if (unicodedata.category(ch) == "Cc" and ch not in allow) or ch in BIDI_CONTROLS:
            return f"U+{ord(ch):04X}"
    return None


def _id_problems(d: Decision, new: bool) -> list[tuple[str, str]]:
    """Problems of the pair's two fact ids, each a non-empty string of valid text."""
    problems: list[tuple[str, str]] = []
    for name in ("fact_a", "fact_b"):
        v = getattr(d, name)
        if not isinstance(v, str) or v == "":
            problems.append((name, f"a fact id must be a non-empty string, got {v!r}"))
        elif has_unpaired_surrogate(v):
            problems.append((name, f"a fact id must be valid UTF-8 text, got bytes that are not: {v!r}"))
        elif new and (bad := control_char(v)) is not None:  # as the CKF loader: a bidi control is data there
            problems.append((name, f"a fact id must not hold control characters (found {bad}): {v!r}"))
    return problems


def _operator_problem(operator: Any, new: bool) -> str | None:
    """Why the (stripped) operator's name is refused, or None."""
    if not isinstance(operator, str) or operator == "":
        return "the operator's name is required (got an empty value)"
    if len(operator) > MAX_OPERATOR_CHARS:
        return f"longer than {MAX_OPERATOR_CHARS} characters"
    if has_unpaired_surrogate(operator):
        return "must be valid UTF-8 text"
    if not new and any(ch in operator for ch in "\r\n\t\x00"):  # what every version refused
        return "must be a single line without control characters"
    if new and (bad := _bad_char(operator)) is not None:
        return (
            f"must be a single line without control characters (found {bad}; no tab, newline, escape or bidi control)"
        )
    return None


def _note_problem(note: Any, new: bool) -> str | None:
    """Why the note is refused, or None."""
    if not isinstance(note, str):
        return f"must be a string, got {type(note).__name__}"
    if has_unpaired_surrogate(note):
        return "must be valid UTF-8 text"
    if len(note) > MAX_NOTE_CHARS:
        return f"longer than {MAX_NOTE_CHARS} characters ({len(note)})"
    if new and (bad := _bad_char(note, allow=NOTE_ALLOWED_CONTROLS)) is not None:
        return (
            f"must not hold control characters other than tab and newline (found {bad}; "
            "an escape sequence could clear or recolour the terminal that prints it)"
        )
    return None


def _kind_problems(d: Decision, ids_ok: bool) -> list[tuple[str, str]]:
    """Problems of the fields each kind takes or refuses (winner, target_fact, new_status)."""
    problems: list[tuple[str, str]] = []
    kind, pair = d.kind, (d.fact_a, d.fact_b)
    if kind == "override" and d.winner is None:
        problems.append(("winner", "an override names the fact that must win"))
    if kind in ("accept", "override") and d.winner is not None and ids_ok and d.winner not in pair:
        problems.append(("winner", f"{d.winner!r} is not in the pair ({d.fact_a!r}, {d.fact_b!r})"))
    if kind in ("dismiss", "mark_status", REVERT) and d.winner is not None:
        problems.append(("winner", f"a {kind} decision takes no winner (got {d.winner!r})"))
    if kind == "mark_status":
        if d.target_fact is None:
            problems.append(("target_fact", "mark_status names the fact whose status changes"))
        elif ids_ok and d.target_fact not in pair:
            problems.append(("target_fact", f"{d.target_fact!r} is not in the pair ({d.fact_a!r}, {d.fact_b!r})"))
        if d.new_status is None:
            problems.append(("new_status", f"mark_status needs a status ({', '.join(MARKABLE_STATUSES)})"))
        elif d.new_status not in MARKABLE_STATUSES:
            problems.append(
                ("new_status", f"unknown status {d.new_status!r} (expected one of {', '.join(MARKABLE_STATUSES)})")
            )
    elif kind in ALL_KINDS:
        for name in ("target_fact", "new_status"):
            if getattr(d, name) is not None:
                problems.append((name, f"only a mark_status decision takes {name} (kind is {kind!r})"))
    return problems


#: the fields a team adds to a decision (who, where, on what state, the chain)
_TEAM_FIELDS = ("role", "origin", "os_user", "kb_name", "based_on", "reverts", "prev_hash", "entry_hash")


def _team_problem(d: Decision, name: str, new: bool) -> str | None:
    """Why the team field ``name`` of ``d`` is refused, or None."""
    v = getattr(d, name)
    if name in ("role", "origin"):
        allowed = ROLES if name == "role" else NEW_ORIGINS if new else ORIGINS
        return None if v in allowed else f"unknown {name} {v!r} (expected one of {', '.join(allowed)})"
    if v is None:
        return None
    if name in ("based_on", "reverts"):
        least = int(name == "reverts")
        return None if type(v) is int and v >= least else f"must be a whole number >= {least} or None, got {v!r:.60}"
    if new and name in ("prev_hash", "entry_hash"):
        return "stamped by the store; a new decision has none"
    if not isinstance(v, str):
        return f"must be a string or None, got {type(v).__name__}"
    if has_unpaired_surrogate(v):
        return "must be valid UTF-8 text"
    if len(v) > (limit := MAX_KB_NAME_CHARS if name == "kb_name" else MAX_OPERATOR_CHARS):
        return f"longer than {limit} characters"
    if new and (bad := _bad_char(v)) is not None:
        return f"must be a single line without control characters (found {bad})"
    return None


def _team_problems(d: Decision, new: bool) -> list[tuple[str, str]]:
    """Problems of the team fields, and of a revert entry (it names the decision it takes back and says
    why; no other kind names one)."""
    problems = [(n, why) for n in _TEAM_FIELDS if (why := _team_problem(d, n, new)) is not None]
    if d.kind == REVERT and d.reverts is None:
        problems.append(("reverts", "a revert names the id of the decision it takes back"))
    if d.kind == REVERT and isinstance(d.note, str) and d.note.strip() == "":
        problems.append(("note", "a revert says why (the note is its reason)"))
    if d.kind != REVERT and d.reverts is not None:
        problems.append(("reverts", f"only a revert entry names a decision to take back (kind is {d.kind!r})"))
    return problems


def validate_decision(d: Decision, *, new: bool = True) -> Decision:
    """Check ``d`` and return it normalised (operator stripped, pair in canonical order).

    Raises :class:`DecisionError` listing every problem (field and message). ``new`` (a decision being
    recorded, the default) also refuses control characters in the fact ids, the operator's name (any
    control or bidi character) and the note (any but tab and newline), normalises the operator's name
    (:func:`normalise_operator`) and refuses store-stamped hashes. ``new=False`` (a decision read
    back: the audit log, a cleaned CKF) keeps the text rules of the version that wrote it: such text is
    data, drawn visibly where printed, never a reason to drop a decision an operator took.
    """
    problems = _id_problems(d, new)
    ids_ok = not problems
    if ids_ok and d.fact_a == d.fact_b:
        problems.append(("fact_b", f"a pair needs two different facts, got {d.fact_a!r} twice"))
    if d.kind not in ALL_KINDS:
        problems.append(("kind", f"unknown kind {d.kind!r} (expected one of {', '.join(ALL_KINDS)})"))
    operator = d.operator.strip() if isinstance(d.operator, str) else d.operator
    if (why := _operator_problem(operator, new)) is not None:
        problems.append(("operator", why))
    elif new:
        operator = normalise_operator(operator)
    if (why := _note_problem(d.note, new)) is not None:
        problems.append(("note", why))
    if d.ckf_fingerprint is not None and not isinstance(d.ckf_fingerprint, str):
        problems.append(("ckf_fingerprint", "must be a string or None"))
    problems += _kind_problems(d, ids_ok)
    problems += _team_problems(d, new)
    if problems:
        raise DecisionError(problems)
    a, b = (d.fact_a, d.fact_b) if d.fact_a < d.fact_b else (d.fact_b, d.fact_a)
    return replace(d, fact_a=a, fact_b=b, operator=operator)


@dataclass(frozen=True, eq=False)
class DecisionSet:
    """The decisions in force: built from the audit log, oldest first, latest wins.

    ``statuses``: fact id -> status from ``mark_status`` decisions (the latest per fact).
    ``pair_decisions``: pair key -> ``{"kind": "accept"|"override"|"dismiss", "winner": id or None}``,
    the latest accept/override/dismiss per pair not reverted: the shape ``resolve_contradictions(decisions=)`` and
    ``scan_ckf(decisions=)`` take. ``latest``: pair key -> the latest decision of any kind.
    ``pair_records``: pair key -> the accept/override/dismiss :class:`Decision` in force (who decided,
    when, why: what the cleaned-CKF export writes, docs/decisions/triage.md "Export").
    """

    statuses: Mapping[str, str]
    pair_decisions: Mapping[str, Mapping[str, str | None]]
    latest: Mapping[str, Decision]
    status_decisions: Mapping[str, Decision]  # fact id -> the mark_status decision in force
    count: int  # decisions read (the audit log's length)
    pair_records: Mapping[str, Decision] = field(default_factory=lambda: MappingProxyType({}))
    #: decision id -> the admin's revert entry that took it back (those decisions are not in force)
    reverted: Mapping[int, Decision] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_decisions(cls, decisions: Iterable[Decision]) -> DecisionSet:
        """Fold an audit log (in recording order) into the decisions in force (DecisionError on a bad one).

        A revert entry takes back the decision it names: that decision is folded as if it had not been
        taken (the pair or fact returns to what the decisions before and after it say); the revert
        entry itself decides nothing. A revert of a revert entry is refused by the store."""
        rows = [validate_decision(d, new=False) for d in decisions]  # a hand-built log gets the structural checks
        reverted = {d.reverts: d for d in rows if d.kind == REVERT and d.reverts is not None}
        statuses: dict[str, str] = {}
        status_decisions: dict[str, Decision] = {}
        pairs: dict[str, Mapping[str, str | None]] = {}
        pair_records: dict[str, Decision] = {}
        latest: dict[str, Decision] = {}
        for d in rows:
            if d.kind == REVERT or (d.id is not None and d.id in reverted):
                continue
            key = d.pair_key
            latest[key] = d
            if d.kind == "mark_status":
                assert d.target_fact is not None and d.new_status is not None  # validated
                statuses[d.target_fact] = d.new_status
                status_decisions[d.target_fact] = d
            else:
                pairs[key] = MappingProxyType({"kind": d.kind, "winner": d.winner})
                pair_records[key] = d
        return cls(
            statuses=MappingProxyType(statuses),
            pair_decisions=MappingProxyType(pairs),
            latest=MappingProxyType(latest),
            status_decisions=MappingProxyType(status_decisions),
            count=len(rows),
            pair_records=MappingProxyType(pair_records),
            reverted=MappingProxyType(reverted),
        )

    @classmethod
    def empty(cls) -> DecisionSet:
        return cls.from_decisions(())

    def overlaid_on(self, base: DecisionSet) -> DecisionSet:
        """``base``'s pair decisions with this set's on top (this set wins on a pair both decide);
        statuses and records likewise. The decisions an exported CKF carries under the store's."""

        def over(a: Mapping[Any, Any], b: Mapping[Any, Any]) -> Mapping[Any, Any]:
            return MappingProxyType({**a, **b})

        return DecisionSet(
            statuses=over(base.statuses, self.statuses),
            pair_decisions=over(base.pair_decisions, self.pair_decisions),
            latest=over(base.latest, self.latest),
            status_decisions=over(base.status_decisions, self.status_decisions),
            count=base.count + self.count,
            pair_records=over(base.pair_records, self.pair_records),
            reverted=over(base.reverted, self.reverted),
        )

    def __bool__(self) -> bool:
        return bool(self.statuses) or bool(self.pair_decisions)

    def for_pair(self, a: str, b: str) -> Mapping[str, str | None] | None:
        """The arbitration decision in force for {a, b}, or None."""
        return self.pair_decisions.get(pair_key(a, b))

    def statuses_on(self, kb: Any) -> dict[str, str]:
        """The operators' statuses in force on ``kb``'s facts (anything with ``get(fact_id)``; ids it does not
        hold left out): what every run and the whole-CKF scan apply, on every page and in every command
        (``triage.apply_to_kb``, ``triage.apply_to_corpus``; docs/decisions/triage.md, "Out of retrieval")."""
        return {f: s for f, s in self.statuses.items() if kb.get(f) is not None}

    def retrievable_marks(self) -> dict[str, str]:
        """The operators' status marks that leave their fact retrievable (ACTIVE / STALE). The corpus with these
        alone is the one whose text check the dashboard keeps: the facts an operator took out of retrieval
        (QUARANTINED / DELETED) stay in it, so a quarantine never checks the texts again and the pairs it took
        out of the scan stay known (``analysis.scan_update.within_retrievable``)."""
        return {f: s for f, s in self.statuses.items() if s not in NEVER_RETRIEVED}

    def out_of_retrieval(self, a: str, b: str) -> tuple[str, ...]:
        """The facts of the pair {``a``, ``b``} an operator took out of retrieval (a QUARANTINED / DELETED mark in
        force), ``a`` first: why a pair of ``RetrievableSplit.aside`` is out of the whole-CKF scan, on the
        Conflicts page and in ``crp-inspect conflicts`` (docs/decisions/triage.md, "Out of retrieval")."""
        return tuple(f for f in (a, b) if self.statuses.get(f) in NEVER_RETRIEVED)

    def retrieval_marks(self, a: str, b: str) -> tuple[tuple[str, str, Decision | None], ...]:
        """The marks that took the pair {``a``, ``b``} out of retrieval (:meth:`out_of_retrieval`), ``a``'s first:
        (fact, its status, the ``mark_status`` decision in force that set it). One reading for the Conflicts page's
        "Out of retrieval" list and ``crp-inspect conflicts``'s."""
        return tuple((f, self.statuses[f], self.status_decisions.get(f)) for f in self.out_of_retrieval(a, b))

    def unknown_facts(self, kb: KnowledgeBase) -> tuple[str, ...]:
        """Fact ids named by the decisions in force that ``kb`` does not hold (sorted)."""
        named = set(self.statuses)
        for key in self.pair_decisions:
            named.update(split_pair_key(key))
        return tuple(sorted(f for f in named if kb.get(f) is None))

    def to_dict(self) -> dict[str, Any]:
        return {
            "statuses": dict(sorted(self.statuses.items())),
            "pair_decisions": {k: dict(v) for k, v in sorted(self.pair_decisions.items())},
        }

    def in_force_on(self, kb: Any) -> tuple[int, str]:
        """How many of these decisions name facts of ``kb`` (anything with ``get(fact_id)``: pair decisions
        on two of its facts, status marks on one), and their digest (20 hex digits; equal decisions, equal
        digests; "" for none): what a report or an experiment says of the decisions it ran with."""
        pairs = {k: dict(v) for k, v in sorted(self.pair_decisions.items()) if all(map(kb.get, split_pair_key(k)))}
        statuses = dict(sorted(self.statuses_on(kb).items()))
        n = len(pairs) + len(statuses)
        mine = {"pair_decisions": pairs, "statuses": statuses}
        return n, content_digest(json.dumps(mine, sort_keys=True, ensure_ascii=False), length=20) if n else ""


def decisions_record(store: str | None, named_by: str | None, in_force: int, digest: str) -> dict[str, object]:
    """What a JSON report and a kept experiment say of the operator decisions a run applied
    (``operator_decisions``): the store as it may be shown (None: no store), where it was named
    (``--triage-db``, ``$CRP_INSPECT_TRIAGE_DB``, ``default``), how many name the CKF's facts and their digest
    (:meth:`DecisionSet.in_force_on`)."""
    return {"store": store, "named_by": named_by, "in_force": in_force, "digest": digest}


#: operator decisions handed to stage 4: the :class:`DecisionSet` in force, or a plain mapping of
#: pair key -> ``{"kind", "winner"}``
Decisions = DecisionSet | Mapping[str, Mapping[str, Any]] | None


def pair_decision_map(decisions: Decisions) -> Mapping[str, Mapping[str, Any]]:
    """Pair key -> ``{"kind", "winner"}`` of ``decisions``, whichever form it is given in (empty for None)."""
    if decisions is None:
        return {}
    return decisions.pair_decisions if isinstance(decisions, DecisionSet) else decisions

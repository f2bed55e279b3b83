"""The store of operator decisions (SPEC-027 §2, SPEC-009 §8): SQLite (a file, the embedded default) or
PostgreSQL (a ``postgresql://`` URL, for several dashboard servers), one schema for both
(:mod:`crp_core.triage.schema`), decisions in a hash-chained, append-only log.

This module does I/O, explicitly, behind :class:`DecisionStore`; the decision model it stores is the pure
:mod:`crp_core.decisions`. The backends (:mod:`crp_core.triage.sqlite_store`,
:mod:`crp_core.triage.pg_store`) open, check and migrate the database and run one serialised write
transaction per write; what a write does is said once, here (docs/decisions/triage.md):

* a decision is validated (operator name normalised), its role checked (a viewer records nothing,
  only an admin reverts), its facts checked against the knowledge base when one is given;
* ``based_on`` (the pair's latest decision id the deciding form showed; 0 = none) that is no longer
  the latest refuses the write with :class:`StaleDecisionError` naming the decision made meanwhile;
* the entry is stamped (``decided_at``) and chained (``prev_hash`` = the previous entry's hash)
  inside the transaction, so id order is commit order is chain order;
* a decision ends the pair's claim (:mod:`crp_core.triage.claims`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, func, or_, select, true

from crp_core.decisions import (
    COLUMNS,
    REVERT,
    Decision,
    DecisionError,
    DecisionSet,
    StaleDecisionError,
    TriageStoreError,
    normalise_operator,
    pair_key,
    validate_decision,
)
from crp_core.io.timeparse import format_timestamp
from crp_core.model import KnowledgeBase
from crp_core.triage.chain import GENESIS, ChainVerdict, chained, jsonl_lines, verify_chain
from crp_core.triage.claims import Claim, Tx, claim_next_in, claim_of, live_claims_query
from crp_core.triage.log import export_csv, export_json
from crp_core.triage.migrations import V1_COLUMNS, checked_row, v1_rows_as_v2
from crp_core.triage.pg_store import PostgresBackend, is_postgres_url
from crp_core.triage.roles import PermissionRefused, Role, RoleBook, check_role, may_revert
from crp_core.triage.schema import APPLICATION_ID, SCHEMA_VERSION, claims, decisions
from crp_core.triage.sqlite_store import DEFAULT_BUSY_TIMEOUT_S, SqliteBackend

__all__ = [
    "APPLICATION_ID",
    "DB_PATH_ENV",
    "DEFAULT_BUSY_TIMEOUT_S",
    "SCHEMA_VERSION",
    "Claim",
    "DecisionStore",
    "default_db_path",
    "open_store",
]

#: environment variable naming the default database: an SQLite file or a ``postgresql://`` URL
DB_PATH_ENV = "CRP_INSPECT_TRIAGE_DB"


def default_db_path() -> str | None:
    """The database named by ``$CRP_INSPECT_TRIAGE_DB`` (a file or a URL), or None."""
    v = os.environ.get(DB_PATH_ENV, "").strip()
    return v or None


def _utcnow() -> datetime:
    return datetime.now(UTC)


class DecisionStore:
    """The decision store of a SQLite file or a PostgreSQL URL. Use as a context manager or call
    :meth:`close`. Safe to share between threads; after ``fork()`` the child opens its own connection.

    ``create=False``: the database must exist already (read commands use this, so a typo in a path does
    not create an empty database). ``readonly=True``: never writes; :meth:`record` raises. ``roles``:
    the role book the store checks every write against (None: the decision's own ``role`` is checked).
    """

    def __init__(
        self,
        target: str | os.PathLike[str],
        *,
        create: bool = True,
        readonly: bool = False,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S,
        clock: Callable[[], datetime] = _utcnow,
        roles: RoleBook | None = None,
    ):
        where = os.fspath(target)
        self._clock = clock
        self.roles = roles
        opts: dict[str, Any] = {"create": create, "readonly": readonly, "busy_timeout": busy_timeout, "clock": clock}
        self.backend: SqliteBackend | PostgresBackend = (
            PostgresBackend(where, **opts) if is_postgres_url(where) else SqliteBackend(where, **opts)
        )

    # -- what it is ----------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The file, or the URL without its password."""
        return self.backend.where

    @property
    def dialect(self) -> str:
        """ "sqlite" or "postgresql"."""
        return self.backend.dialect

    @property
    def readonly(self) -> bool:
        return self.backend.readonly

    @property
    def readonly_reason(self) -> str | None:
        """Why the store reads only although it was not asked to (an SQLite file in a read-only place)."""
        return self.backend.readonly_reason

    # -- writing -------------------------------------------------------------------------------
    def _refuse_readonly(self) -> None:
        if self.readonly:
            if self.readonly_reason is not None:
                raise TriageStoreError(
                    f"{self.path}: writes refused: {self.readonly_reason}; decisions can be read but not recorded"
                )
            raise TriageStoreError(f"{self.path}: decision store opened read-only")

    def _role(self, d: Decision) -> Role:
        return self.roles.check(d) if self.roles is not None else check_role(d, d.role)

    def record(self, decision: Decision, *, kb: KnowledgeBase | None = None) -> Decision:
        """Validate and append ``decision`` in its own transaction; returns it with id, decided_at and
        its chain hashes. With ``kb``: fact ids the knowledge base does not hold are refused, and the
        decision is stamped with its fingerprint and name. Raises :class:`DecisionError`,
        :class:`~crp_core.triage.roles.PermissionRefused`, :class:`StaleDecisionError` or
        :class:`TriageStoreError` (``TriageStoreUnavailable`` when the server cannot be reached)."""
        if not isinstance(decision, Decision):
            raise DecisionError([("decision", f"expected a Decision, got {type(decision).__name__}")])
        if decision.id is not None or decision.decided_at is not None:
            raise DecisionError([("id", f"decision already recorded (id {decision.id}, {decision.decided_at})")])
        d = validate_decision(decision)
        if kb is not None:
            d = _on_kb(d, kb)
        d = replace(d, role=self._role(d).value)
        self._refuse_readonly()
        return self.backend.write(lambda tx: self._append(tx, d), "record the decision")

    def _append(self, tx: Tx, d: Decision) -> Decision:
        """Inside the write transaction: the checks that depend on the log, then the chained insert."""
        if d.kind == REVERT:
            self._check_revert(tx, d)
        if d.based_on is not None:
            rows = tx.rows(
                select(decisions).where(decisions.c.pair_key == d.pair_key).order_by(decisions.c.id.desc()).limit(1)
            )
            latest = self._decision(rows[0]) if rows else None
            if (latest.id if latest is not None else 0) != d.based_on:
                if latest is None:
                    raise DecisionError(
                        [("based_on", f"the pair has no decision, so #{d.based_on} is not its latest (0 means none)")]
                    )
                raise StaleDecisionError(d, latest)
        last = tx.rows(select(decisions.c.entry_hash).order_by(decisions.c.id.desc()).limit(1))
        stamped = chained(
            replace(d, decided_at=format_timestamp(self._clock().astimezone(UTC))), last[0][0] if last else GENESIS
        )
        row = stamped.to_dict()
        rid = tx.insert(decisions.insert().values({c: row[c] for c in COLUMNS[1:]}))
        tx.run(delete(claims).where(claims.c.pair_key == d.pair_key))
        return replace(stamped, id=rid)

    def _check_revert(self, tx: Tx, d: Decision) -> None:
        rows = tx.rows(select(decisions).where(decisions.c.id == d.reverts))
        if not rows:
            raise DecisionError([("reverts", f"there is no decision #{d.reverts}")])
        target = self._decision(rows[0])
        if target.pair_key != d.pair_key:
            raise DecisionError(
                [("reverts", f"decision #{d.reverts} is on the pair [{target.fact_a} | {target.fact_b}], not this one")]
            )
        if target.kind == REVERT:
            raise DecisionError([("reverts", f"#{d.reverts} is a revert itself; record the decision again instead")])
        why = may_revert(d.operator, d.role, target, own_reverts=self.roles is not None and self.roles.own_reverts)
        if why is not None:
            raise PermissionRefused(d.operator, d.role, why)
        done = tx.rows(select(decisions.c.id).where(decisions.c.reverts == d.reverts))
        if done:
            raise DecisionError([("reverts", f"decision #{d.reverts} was reverted already (by #{done[0][0]})")])

    # -- claims --------------------------------------------------------------------------------
    def claim_next(
        self,
        pair_keys: Sequence[str],
        operator: str,
        *,
        kb_fingerprint: str | None = None,
        lease_seconds: float = 600,
        now: datetime | None = None,
    ) -> Claim | None:
        """Claim the first pair of ``pair_keys`` (queue order) without a decision and not claimed by
        someone else (:mod:`crp_core.triage.claims`); None when there is none. A viewer claims nothing."""
        op = normalise_operator(operator)
        role = self.roles.role_of(op) if self.roles is not None else Role.OPERATOR
        if role is Role.VIEWER:
            raise PermissionRefused(op, role, "a viewer sees the queue but claims no pair")
        if not lease_seconds > 0:
            raise DecisionError([("lease_seconds", f"must be > 0, got {lease_seconds!r}")])
        self._refuse_readonly()
        at = (now or self._clock()).astimezone(UTC)
        keys = list(pair_keys)
        return self.backend.write(
            lambda tx: claim_next_in(tx, keys, op, kb_fingerprint=kb_fingerprint, lease_seconds=lease_seconds, now=at),
            "claim a pair",
        )

    def release(self, key: str, operator: str) -> bool:
        """End ``operator``'s claim on the pair ``key``; whether there was one."""
        op = normalise_operator(operator)
        self._refuse_readonly()
        stmt = delete(claims).where((claims.c.pair_key == key) & (claims.c.operator == op))
        return self.backend.write(lambda tx: tx.run(stmt) > 0, "release a claim") is True

    def claims(self, now: datetime | None = None) -> dict[str, Claim]:
        """The live claims (lease not ended at ``now``): pair key -> :class:`Claim`."""
        if self.backend.version < SCHEMA_VERSION:
            return {}  # a schema-1 file opened read-only has no claims
        rows = self.backend.read(live_claims_query((now or self._clock()).astimezone(UTC)), "read claims")
        return {c.pair_key: c for c in map(claim_of, rows)}

    # -- reading -------------------------------------------------------------------------------
    def _decision(self, row: Sequence[Any]) -> Decision:
        """The decision of one row, its types and then its rules checked (a store we wrote holds them by
        its CHECKs; a row another tool wrote that breaks them is refused by every reader alike)."""
        d = checked_row(row, COLUMNS, self.path)
        d.pop("pair_key")
        decision = Decision(**d)
        try:
            validate_decision(decision, new=False)
        except DecisionError as exc:
            said = "; ".join(f"field '{f}': {m[:200]}" for f, m in exc.problems)
            raise TriageStoreError(
                f"{self.path}: decision #{d['id']!r:.30} cannot be read ({said}); the schema refuses such a row: "
                "the database was written or altered by another tool; refusing to read it"
            ) from None
        return decision

    def _rows(
        self, cond: ColumnElement[bool] | None = None, keep: Callable[[dict[str, Any]], bool] | None = None
    ) -> list[dict[str, Any]]:
        """Decision rows (dicts, id order) matching ``cond`` (SQL) / ``keep`` (the same test in Python,
        for a schema-1 file read as migrated)."""
        if self.backend.version < SCHEMA_VERSION:
            v1 = select(*(decisions.c[c] for c in V1_COLUMNS)).order_by(decisions.c.id)
            rows = v1_rows_as_v2(self.backend.read(v1, "read decisions"), self.path)
            return [r for r in rows if keep is None or keep(r)]
        stmt = select(decisions).where(cond if cond is not None else true()).order_by(decisions.c.id)
        return [dict(zip(COLUMNS, r)) for r in self.backend.read(stmt, "read decisions")]

    def _select(
        self, cond: ColumnElement[bool] | None = None, keep: Callable[[dict[str, Any]], bool] | None = None
    ) -> list[Decision]:
        return [self._decision([r[c] for c in COLUMNS]) for r in self._rows(cond, keep)]

    def all(self) -> list[Decision]:
        """Every decision (the whole audit log), oldest first."""
        return self._select()

    def history(self, key: str | tuple[str, str]) -> list[Decision]:
        """The audit log of one pair (a :func:`pair_key` or a pair of ids), oldest first."""
        if isinstance(key, tuple):
            key = pair_key(*key)
        return self._select(decisions.c.pair_key == key, lambda r: r["pair_key"] == key)

    def fact_history(self, fact_id: str) -> list[Decision]:
        """Every decision on a pair that holds ``fact_id``, oldest first."""
        c = decisions.c
        return self._select(
            or_(c.fact_a == fact_id, c.fact_b == fact_id), lambda r: fact_id in (r["fact_a"], r["fact_b"])
        )

    def since(self, decision_id: int) -> list[Decision]:
        """The decisions recorded after ``decision_id`` (0: all), oldest first: what a polling view
        has not seen yet."""
        return self._select(decisions.c.id > decision_id, lambda r: r["id"] > decision_id)

    def latest_id(self, key: str | tuple[str, str] | None = None) -> int:
        """The id of the pair's latest decision (the ``based_on`` a form shows), 0 when it has none;
        without a pair, the log's latest id."""
        if isinstance(key, tuple):
            key = pair_key(*key)
        if self.backend.version < SCHEMA_VERSION:
            rows = self._rows(None, None if key is None else (lambda r: r["pair_key"] == key))
            return int(rows[-1]["id"]) if rows else 0
        stmt = select(func.max(decisions.c.id))
        if key is not None:
            stmt = stmt.where(decisions.c.pair_key == key)
        got = self.backend.read(stmt, "read decisions")[0][0]
        return int(got or 0)

    def current(self, *, ckf_fingerprint: str | None = None) -> DecisionSet:
        """The decisions in force. With ``ckf_fingerprint``: only decisions recorded for that CKF
        or without a fingerprint (revert entries always count)."""
        if ckf_fingerprint is None:
            return DecisionSet.from_decisions(self._select())
        c = decisions.c
        return DecisionSet.from_decisions(
            self._select(
                or_(c.ckf_fingerprint.is_(None), c.ckf_fingerprint == ckf_fingerprint, c.kind == REVERT),
                lambda r: r["ckf_fingerprint"] in (None, ckf_fingerprint),
            )
        )

    def __len__(self) -> int:
        return int(self.backend.read(select(func.count()).select_from(decisions), "count decisions")[0][0])

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ("ok" or the problems found); "ok" on PostgreSQL."""
        return self.backend.integrity_check()

    # -- the chain and the exports -------------------------------------------------------------
    def verify(self, *, kept_head: str | None = None) -> ChainVerdict:
        """Recompute the hash chain over the whole log (:func:`crp_core.triage.chain.verify_chain`);
        ``kept_head``: a head hash kept elsewhere earlier, which must still be an entry of the log."""
        if self.backend.version < SCHEMA_VERSION:
            return verify_chain(self._rows(), kept_head=kept_head)
        stmt = select(decisions).order_by(decisions.c.id)
        rows = (dict(zip(COLUMNS, r)) for r in self.backend.read(stmt, "read decisions"))
        return verify_chain(rows, kept_head=kept_head)

    def export_json(self) -> str:
        """The audit log and the decisions in force, as one JSON document (deterministic)."""
        return export_json(self.all())

    def export_csv(self) -> str:
        """The audit log as CSV, one decision per row (RFC 4180, header row, empty cell = null)."""
        return export_csv(self.all())

    def export_jsonl(self) -> str:
        """The audit log as JSON Lines, one entry per line with its chain hashes, oldest first."""
        return jsonl_lines(self.all())

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> DecisionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        closed = ", closed" if getattr(self.backend, "_closed", False) else ""
        return f"DecisionStore({self.path!r}{', readonly' if self.readonly else ''}{closed})"


def open_store(
    target: str | os.PathLike[str],
    *,
    create: bool = True,
    readonly: bool = False,
    roles: RoleBook | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S,
) -> DecisionStore:
    """The :class:`DecisionStore` of an SQLite path or a ``postgresql://`` URL."""
    return DecisionStore(target, create=create, readonly=readonly, roles=roles, busy_timeout=busy_timeout)


def _on_kb(d: Decision, kb: KnowledgeBase) -> Decision:
    """``d`` checked against ``kb`` (both facts held) and stamped with its fingerprint and name."""
    problems = [
        (f, f"{getattr(d, f)!r} is not in the knowledge base {kb.source or ''}".rstrip())
        for f in ("fact_a", "fact_b")
        if kb.get(getattr(d, f)) is None
    ]
    if d.ckf_fingerprint is not None and d.ckf_fingerprint != kb.fingerprint:
        problems.append(("ckf_fingerprint", f"{d.ckf_fingerprint!r} is not the knowledge base's ({kb.fingerprint})"))
    if problems:
        raise DecisionError(problems)
    return replace(d, ckf_fingerprint=kb.fingerprint, kb_name=d.kb_name or (os.path.basename(kb.source) or None))

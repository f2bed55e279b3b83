"""The leases of a shared review queue (docs/decisions/triage.md "Claims"): "claim next" hands an
operator the first pair of the queue nobody else holds, for ``lease_seconds``; the others skip it until
the lease ends, the operator releases it, or a decision on the pair ends it. One lease per operator: a
new claim ends the operator's previous one. The steps run inside the store's serialised write
transaction, so two operators never receive the same pair."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import delete, select
from sqlalchemy.sql import Executable

from crp_core.io.timeparse import format_timestamp
from crp_core.triage.schema import claims, decisions

#: pair keys per ``IN (...)`` list
_CHUNK = 500


class Tx(Protocol):
    def rows(self, stmt: Executable) -> list[tuple[Any, ...]]: ...
    def insert(self, stmt: Any) -> int: ...
    def run(self, stmt: Executable) -> int: ...


@dataclass(frozen=True)
class Claim:
    """A lease: ``operator`` holds ``pair_key`` until ``expires_at`` (UTC)."""

    pair_key: str
    operator: str
    expires_at: datetime
    kb_fingerprint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pair_key": self.pair_key,
            "operator": self.operator,
            "expires_at": format_timestamp(self.expires_at),
            "kb_fingerprint": self.kb_fingerprint,
        }


def claim_of(row: Sequence[Any]) -> Claim:
    """The claim of a ``claims`` row (pair_key, operator, kb_fingerprint, expires_at)."""
    return Claim(str(row[0]), str(row[1]), datetime.fromtimestamp(float(row[3]), UTC), row[2])


def live_claims_query(now: datetime) -> Executable:
    c = claims.c
    return select(c.pair_key, c.operator, c.kb_fingerprint, c.expires_at).where(c.expires_at > now.timestamp())


def _decided(tx: Tx, keys: Sequence[str]) -> set[str]:
    """The pairs among ``keys`` with at least one recorded decision."""
    found: set[str] = set()
    for i in range(0, len(keys), _CHUNK):
        part = list(keys[i : i + _CHUNK])
        found.update(
            r[0] for r in tx.rows(select(decisions.c.pair_key).where(decisions.c.pair_key.in_(part)).distinct())
        )
    return found


def claim_next_in(
    tx: Tx, keys: Sequence[str], operator: str, *, kb_fingerprint: str | None, lease_seconds: float, now: datetime
) -> Claim | None:
    """Inside a write transaction: the operator's claim on the first pair of ``keys`` (queue order)
    that has no decision and no live claim by someone else (their own live claim is renewed), or None."""
    live = {r[0]: r[1] for r in tx.rows(live_claims_query(now))}
    decided = _decided(tx, keys)
    chosen = next((k for k in keys if k not in decided and live.get(k, operator) == operator), None)
    if chosen is None:
        return None
    tx.run(delete(claims).where((claims.c.operator == operator) | (claims.c.pair_key == chosen)))
    expires = now.timestamp() + float(lease_seconds)
    tx.run(
        claims.insert().values(
            pair_key=chosen,
            operator=operator,
            kb_fingerprint=kb_fingerprint,
            claimed_at=format_timestamp(now),
            expires_at=expires,
        )
    )
    return Claim(chosen, operator, datetime.fromtimestamp(expires, UTC), kb_fingerprint)

"""The store of experiments (docs/decisions/history.md): the decision database of the triage log (an SQLite
file or a ``postgresql://`` URL, :class:`~crp_core.triage.store.DecisionStore` opens and checks it), with the
history's own tables (:mod:`crp_core.history.schema`).

Writes go through the decision store's serialised write transaction (``BEGIN IMMEDIATE`` on SQLite, the
advisory lock on PostgreSQL), so a history write and a triage write never interleave; the tables are added
in the first write to a database that lacks them. Reading never creates anything: a database without the
tables has no experiments yet. A server that cannot be reached raises
:class:`~crp_core.decisions.TriageStoreUnavailable`, like the triage store.
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, func, select, true

from crp_core.analysis.suite import Suite
from crp_core.config import CRPConfig
from crp_core.decisions import TriageStoreError
from crp_core.history.records import (
    KINDS,
    Experiment,
    ExperimentError,
    config_diff,
    kb_label,
    suite_fingerprint,
    suite_label,
    validate_experiment,
)
from crp_core.history.schema import EXPERIMENT_COLUMNS, ensure_tables, experiments, read_state
from crp_core.io.timeparse import format_timestamp
from crp_core.model import KnowledgeBase
from crp_core.triage.store import DEFAULT_BUSY_TIMEOUT_S, DecisionStore, default_db_path

__all__ = [
    "DEFAULT_HISTORY_DB",
    "HISTORY_ENV",
    "MAX_LIST",
    "ExperimentStore",
    "experiment_inputs",
    "history_db_path",
    "history_enabled",
    "list_experiments",
    "record_experiment",
]

#: the database when ``$CRP_INSPECT_TRIAGE_DB`` names none: the dashboard's default decision database, so
#: the CLI's experiments and the dashboard's land in one place
DEFAULT_HISTORY_DB = ".crp_triage.sqlite"
#: ``off`` (or ``0``, ``no``, ``false``): the check / tune / sweep commands and the dashboard record nothing
HISTORY_ENV = "CRP_INSPECT_HISTORY"
#: the most experiments one listing returns
MAX_LIST = 1000


def history_db_path() -> str:
    """Where experiments are kept: ``$CRP_INSPECT_TRIAGE_DB``, else :data:`DEFAULT_HISTORY_DB`."""
    return default_db_path() or DEFAULT_HISTORY_DB


def history_enabled() -> bool:
    """Whether runs are recorded (``$CRP_INSPECT_HISTORY`` is not ``off``)."""
    return os.environ.get(HISTORY_ENV, "").strip().lower() not in ("off", "0", "no", "false")


def _utcnow() -> datetime:
    return datetime.now(UTC)


def experiment_inputs(
    kb: KnowledgeBase | None,
    suite: Suite | None,
    config: CRPConfig | None,
) -> dict[str, Any]:
    """The fields of an :class:`Experiment` that say what it ran on: the knowledge base's and the suite's
    names and fingerprints, and the configuration's keys that differ from the defaults."""
    return {
        "kb_name": kb_label(kb.source) if kb is not None else None,
        "kb_fingerprint": kb.fingerprint if kb is not None else None,
        "suite_name": suite_label(suite) if suite is not None else None,
        "suite_fingerprint": suite_fingerprint(suite) if suite is not None else None,
        "config_diff": config_diff(config) if config is not None else {},
    }


class ExperimentStore:
    """The experiments of one database. ``target``: an SQLite path, a ``postgresql://`` URL, or an open
    :class:`DecisionStore` to share (the dashboard's; it is not closed with this store). ``create=False``:
    the database must exist already; ``readonly=True``: :meth:`record` raises."""

    def __init__(
        self,
        target: str | os.PathLike[str] | DecisionStore,
        *,
        create: bool = True,
        readonly: bool = False,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S,
        clock: Callable[[], datetime] = _utcnow,
    ):
        if isinstance(target, DecisionStore):
            self.decisions, self._owned = target, False
        else:
            self.decisions = DecisionStore(target, create=create, readonly=readonly, busy_timeout=busy_timeout)
            self._owned = True
        self._clock = clock
        self._ready = False  # the tables are known to be there

    @property
    def path(self) -> str:
        """The file, or the URL without its password."""
        return self.decisions.path

    @property
    def readonly(self) -> bool:
        return self.decisions.readonly

    def _tables(self) -> bool:
        if not self._ready:
            backend = self.decisions.backend
            self._ready = read_state(
                lambda s: backend.read(s, "read the experiment history"), backend.dialect, self.path
            )
        return self._ready

    # -- writing -------------------------------------------------------------------------------
    def record(self, experiment: Experiment) -> Experiment:
        """Check and append ``experiment`` in its own transaction (adding the history's tables first when
        the database has none); returns it with its id and ``recorded_at``. Raises :class:`ExperimentError`
        (every bad field) or ``TriageStoreError`` (``TriageStoreUnavailable``: the server is away)."""
        if not isinstance(experiment, Experiment):
            raise ExperimentError([("experiment", f"expected an Experiment, got {type(experiment).__name__}")])
        if experiment.id is not None or experiment.recorded_at is not None:
            raise ExperimentError([("id", f"already recorded (#{experiment.id}, {experiment.recorded_at})")])
        e = validate_experiment(experiment)
        if self.readonly:
            why = self.decisions.readonly_reason
            raise TriageStoreError(f"{self.path}: experiments cannot be recorded: {why or 'opened read-only'}")
        backend = self.decisions.backend
        return backend.write(lambda tx: self._append(tx, e), "record the experiment")

    def _append(self, tx: Any, e: Experiment) -> Experiment:
        now = format_timestamp(self._clock().astimezone(UTC))
        ensure_tables(tx, self.decisions.backend.dialect, self.path, now)
        row = _row(replace(e, recorded_at=now))
        rid = tx.insert(experiments.insert().values({c: row[c] for c in EXPERIMENT_COLUMNS[1:]}))
        self._ready = True
        return replace(e, id=rid, recorded_at=now)

    # -- reading -------------------------------------------------------------------------------
    def _read(self, cond: ColumnElement[bool], *, limit: int, offset: int) -> list[Experiment]:
        if not self._tables():
            return []
        stmt = select(experiments).where(cond).order_by(experiments.c.id.desc()).limit(limit).offset(offset)
        rows = self.decisions.backend.read(stmt, "read the experiment history")
        return [self._experiment(dict(zip(EXPERIMENT_COLUMNS, r))) for r in rows]

    def list(
        self,
        *,
        kb: str | None = None,
        suite: str | None = None,
        kind: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Experiment]:
        """Experiments, newest first: those of the knowledge base named ``kb`` (its name or fingerprint),
        of the suite ``suite`` (name or fingerprint), of ``kind``; ``limit`` (1 .. :data:`MAX_LIST`) of them
        after skipping ``offset``."""
        said = []
        if kind is not None and kind not in KINDS:
            said.append(("kind", f"{kind[:40]!r} is not one of {', '.join(KINDS)}"))
        if not (isinstance(limit, int) and 1 <= limit <= MAX_LIST):
            said.append(("limit", f"must be a whole number from 1 to {MAX_LIST}, got {limit!r}"))
        if not (isinstance(offset, int) and offset >= 0):
            said.append(("offset", f"must be a whole number >= 0, got {offset!r}"))
        if said:
            raise ExperimentError(said, title="experiment listing refused")
        c = experiments.c
        cond: list[ColumnElement[bool]] = [true()]
        if kb is not None:
            cond.append((c.kb_name == kb) | (c.kb_fingerprint == kb))
        if suite is not None:
            cond.append((c.suite_name == suite) | (c.suite_fingerprint == suite))
        if kind is not None:
            cond.append(c.kind == kind)
        return self._read(and_(*cond), limit=limit, offset=offset)

    def get(self, ids: Sequence[int]) -> builtins.list[Experiment]:
        """The experiments ``ids``, in the order given; an id the history does not hold raises
        :class:`ExperimentError` naming it."""
        want = [int(i) for i in ids]
        found = {e.id: e for e in self._read(experiments.c.id.in_(want), limit=MAX_LIST, offset=0)} if want else {}
        missing = [i for i in want if i not in found]
        if missing:
            raise ExperimentError(
                [("id", f"no experiment #{i} in {self.path}") for i in missing], title="experiments not found"
            )
        return [found[i] for i in want]

    def __len__(self) -> int:
        if not self._tables():
            return 0
        got = self.decisions.backend.read(select(func.count()).select_from(experiments), "count experiments")
        return int(got[0][0])

    def _experiment(self, r: dict[str, Any]) -> Experiment:
        """The experiment of one row; a row whose JSON another tool broke is refused, naming it."""
        try:
            diff, metrics = json.loads(r["config_diff"]), json.loads(r["metrics"])
            summary = None if r["summary"] is None else json.loads(r["summary"])
            e = Experiment(
                kind=r["kind"],
                recorded_by=r["recorded_by"],
                metrics=metrics,
                config_diff={k: tuple(v) for k, v in diff.items()},
                kb_name=r["kb_name"],
                kb_fingerprint=r["kb_fingerprint"],
                suite_name=r["suite_name"],
                suite_fingerprint=r["suite_fingerprint"],
                summary=summary,
                note=r["note"],
                origin=r["origin"],
            )
            checked = validate_experiment(e)
        except (TypeError, ValueError, AttributeError) as exc:
            raise TriageStoreError(
                f"{self.path}: experiment #{r['id']!r:.30} cannot be read ({str(exc)[:300]}); the database was "
                "written or altered by another tool"
            ) from None
        return replace(checked, id=int(r["id"]), recorded_at=str(r["recorded_at"]))

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        if self._owned:
            self.decisions.close()

    def __enter__(self) -> ExperimentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row(e: Experiment) -> dict[str, Any]:
    d = e.to_dict()
    for k in ("config_diff", "metrics"):
        d[k] = json.dumps(d[k], sort_keys=k == "config_diff", allow_nan=False, ensure_ascii=False)
    d["summary"] = None if d["summary"] is None else json.dumps(d["summary"], sort_keys=True, ensure_ascii=False)
    return d


def record_experiment(target: str | os.PathLike[str] | DecisionStore, experiment: Experiment) -> Experiment:
    """Record ``experiment`` in the database ``target`` (created when it is an SQLite file that does not
    exist yet); returns it with its id and time (:meth:`ExperimentStore.record`)."""
    with ExperimentStore(target) as store:
        return store.record(experiment)


def list_experiments(
    target: str | os.PathLike[str] | DecisionStore,
    *,
    kb: str | None = None,
    suite: str | None = None,
    kind: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[Experiment]:
    """The experiments of the database ``target``, newest first, filtered and paged
    (:meth:`ExperimentStore.list`); a database that does not exist is refused, never created."""
    with ExperimentStore(target, create=False, readonly=not isinstance(target, DecisionStore)) as store:
        return store.list(kb=kb, suite=suite, kind=kind, limit=limit, offset=offset)

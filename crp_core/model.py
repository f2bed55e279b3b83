"""Immutable input records: facts, knowledge bases (CKF) and scenarios (docs/reference/ckf.md).

These hold the data *as loaded*. Values that depend on the configuration (default TTL,
importance and authority by source type) are resolved by the pipeline stages, never here, so a
config change never requires reloading a CKF.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

import numpy as np

from crp_core.config import NEVER_RETRIEVED
from crp_core.errors import Problem
from crp_core.support.digest import Digest, Part, array_part, content_digest

TTLKind = Literal["default", "explicit", "timeless"]

#: the metadata keys a fact carries a supersession and the operators' decisions in: the fact that
#: superseded it (an SDK snapshot's, or an operator's carried by an export), the newest triage record
#: and the earlier ones (docs/decisions/triage.md, "Export")
META_SUPERSEDED_BY = "superseded_by"
META_TRIAGE = "triage"
META_TRIAGE_HISTORY = "triage_history"
#: who set ``metadata.superseded_by`` when it was not the CKF's producer (the crprotocol SDK, or whoever
#: wrote the CKF): :data:`ORIGIN_OPERATOR` for an operator's triage decision; absent: the producer's own
META_SUPERSEDED_BY_ORIGIN = "superseded_by_origin"
ORIGIN_OPERATOR = "operator"


def _iso(dt: datetime | None) -> str:
    return "" if dt is None else dt.isoformat()


def _data_row(f: Fact) -> str:
    """One fact's every field as ``KnowledgeBase.data_fingerprint`` feeds it: joined by NUL, ended by \\x01."""
    fields_ = (
        f.fact_id,
        f.content,
        f.source_type,
        f.status,
        repr(f.importance_weight),
        _iso(f.ingested_at),
        _iso(f.modified_at),
        f.ttl_kind,
        repr(f.ttl_seconds),
        f.ttl_text or "",
        f.source_id or "",
        f.source_location or "",
        f.community_label or "",
        json.dumps(dict(f.metadata), sort_keys=True, ensure_ascii=False, default=str) if f.metadata else "{}",
    )
    return "\x00".join(fields_) + "\x01"


#: given embeddings at least this large are hashed on a thread beside the facts' rows (``data_fingerprint``)
_BESIDE_BYTES = 1 << 24


def has_unpaired_surrogate(text: str) -> bool:
    """Does ``text`` hold a lone surrogate, i.e. is it not valid Unicode? (what Python makes of input
    bytes that are not UTF-8: such text can be neither stored nor printed)"""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


@dataclass(frozen=True)
class Fact:
    """One CKF fact node (SPEC-009 §2 plus ``source_type``)."""

    fact_id: str
    content: str
    source_type: str = "unverified"
    status: str = "ACTIVE"
    importance_weight: float | None = None  # None: default by source type (config.importance)
    ingested_at: datetime | None = None
    modified_at: datetime | None = None  # as given; see effective_modified_at
    ttl_kind: TTLKind = "default"  # "default": by source type; "timeless": ttl = "none"
    ttl_seconds: float | None = None  # set only when ttl_kind == "explicit"
    ttl_text: str | None = None  # the ttl string as written in the file, for display
    source_id: str | None = None
    source_location: str | None = None
    community_label: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    line: int = 0  # line (JSONL/CSV row) or list position (JSON) the fact came from, 1-based

    @property
    def effective_modified_at(self) -> datetime | None:
        """``modified_at``, defaulting to ``ingested_at``; None means age unknown (docs/reference/ckf.md)."""
        return self.modified_at if self.modified_at is not None else self.ingested_at

    @property
    def retrievable(self) -> bool:
        """DELETED and QUARANTINED facts are never retrieved (SPEC-009 §2.2)."""
        return self.status not in NEVER_RETRIEVED

    @property
    def content_hash(self) -> str:
        """SHA-256 of the content (hex), the ``content_hash`` of SPEC-009 §2."""
        return content_digest(self.content)


@dataclass(frozen=True)
class GivenEdge:
    """An edge the CKF's producer drew between two facts (a crprotocol SDK ``FactEdge``), kept as given:
    not a SPEC-009 §5.2 similarity edge, never read by the pipeline (docs/decisions/sdk-snapshots.md)."""

    edge_id: str
    source_id: str
    target_id: str
    relation_type: str
    confidence: float | None = None
    source_stage: int | None = None


@dataclass(frozen=True)
class ImportSummary:
    """What reading a foreign format mapped, defaulted and dropped (docs/decisions/sdk-snapshots.md).

    Each of ``mapped`` / ``kept`` / ``defaulted`` / ``dropped`` is ``(what, number of facts or items)``,
    in a fixed order (``kept``: what the CKF fields do not carry, held unchanged on
    ``KnowledgeBase.sdk_state``); ``integrity`` says how the checksum was checked (``ok``, ``mismatch``,
    ``unverifiable``, ``absent``) and ``algorithm`` with what (``sha256``, ``blake3`` or empty)."""

    producer: str
    schema_version: int
    facts_in: int
    facts_loaded: int
    edges_in: int
    edges_kept: int
    superseded: int
    integrity: str
    algorithm: str = ""
    session_id: str = ""
    created_at: str = ""  # ISO UTC of header.created_at, empty when absent or unreadable
    mapped: tuple[tuple[str, int], ...] = ()
    defaulted: tuple[tuple[str, int], ...] = ()
    dropped: tuple[tuple[str, int], ...] = ()
    kept: tuple[tuple[str, int], ...] = ()  # kept as given on KnowledgeBase.sdk_state, not scored

    def lines(self) -> tuple[str, ...]:
        """The summary as text lines (the CLI, ``validate`` and the dashboard show these)."""
        out = [
            f"{self.producer} schema {self.schema_version}"
            + (f", session {self.session_id!r}" if self.session_id else "")
            + (f", written {self.created_at}" if self.created_at else ""),
            f"facts: {self.facts_loaded} of {self.facts_in} loaded, {self.superseded} superseded (STALE); "
            f"edges: {self.edges_kept} of {self.edges_in} kept",
            "checksum: "
            + {
                "ok": f"verified ({self.algorithm})",
                "mismatch": "MISMATCH (see warnings)",
                "unverifiable": "cannot be verified (see warnings)",
                "absent": "none in the header",
            }.get(self.integrity, self.integrity),
        ]
        for title, items in (
            ("mapped", self.mapped),
            ("kept", self.kept),
            ("defaulted", self.defaulted),
            ("dropped", self.dropped),
        ):
            if items:
                out.append(f"{title}: " + "; ".join(f"{what} ({n})" for what, n in items))
        return tuple(out)


# ---- a crprotocol snapshot's state beyond the facts ---------------------------------------------
class FrozenObject(Mapping[str, Any]):
    """A JSON object that cannot be changed (what :func:`frozen_json` makes of a dict): a read-only
    mapping in the object's key order, equal to a dict of the same items; it pickles (a cached or
    shipped KnowledgeBase carries it), unlike ``types.MappingProxyType``."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> None:
        self._items: dict[str, Any] = dict(items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"FrozenObject({self._items!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenObject, (self._items,))


_EMPTY: Mapping[str, Any] = FrozenObject()


def _walk_json(
    value: Any,
    is_obj: Callable[[Any], bool],
    is_arr: Callable[[Any], bool],
    obj: Callable[[list[Any]], Any],
    arr: Callable[[list[Any]], Any],
) -> Any:
    """``value`` with every object rebuilt by ``obj`` (from its ``(key, value)`` pairs) and every array by
    ``arr`` (from its items), children first; iterative, so no nesting depth overflows the stack."""
    if not (is_obj(value) or is_arr(value)):
        return value

    def opened(node: Any) -> tuple[Any, Any, list[Any]]:
        return node, iter(node.items()) if is_obj(node) else iter(node), []

    stack = [opened(value)]
    while True:
        node, items, done = stack[-1]
        for item in items:
            child = item[1] if is_obj(node) else item
            if is_obj(child) or is_arr(child):
                done.append(item)  # a placeholder, replaced when the child is built
                stack.append(opened(child))
                break
            done.append(item)
        else:
            stack.pop()
            built = obj(done) if is_obj(node) else arr(done)
            if not stack:
                return built
            parent, _, parent_done = stack[-1]
            parent_done[-1] = (parent_done[-1][0], built) if is_obj(parent) else built


def frozen_json(value: Any) -> Any:
    """A parsed JSON value made immutable: each object a :class:`FrozenObject` (its key order kept), each
    array a tuple, scalars as they are. :func:`thawed_json` gives the plain value back."""
    return _walk_json(
        value,
        lambda v: isinstance(v, dict),
        lambda v: isinstance(v, list),
        FrozenObject,
        tuple,
    )


def thawed_json(value: Any) -> Any:
    """The plain JSON value (dicts, lists) of a :func:`frozen_json` one; a numpy array becomes the list
    of its numbers (Python floats, whose JSON text is the one they were read from)."""

    def plain(v: Any) -> Any:
        return v.tolist() if isinstance(v, np.ndarray) else v

    return plain(
        _walk_json(
            value,
            lambda v: isinstance(v, Mapping),
            lambda v: isinstance(v, (tuple, list)),
            lambda pairs: {k: plain(v) for k, v in pairs},
            lambda items: [plain(v) for v in items],
        )
    )


#: the payload keys of a crprotocol snapshot (the rest are kept as unknown) ...
SDK_PAYLOAD_KEYS = frozenset({"warm_store", "event_log", "community_map"})
#: ... and those of its ``warm_store``
SDK_STORE_KEYS = frozenset(
    {"schema_version", "facts", "edges", "critical_state", "structural_state", "window_count", "current_window_id"}
)


@dataclass(frozen=True, eq=False)
class SdkState:
    """What a crprotocol SDK snapshot holds besides its facts' CKF fields, kept unchanged
    (docs/decisions/sdk-snapshots.md): the header, the payload's event log, the session state and
    every key the reader does not know, and each loaded fact's and edge's SDK object. Never scored;
    the SDK export (``crp_core.io.ckf.sdk_write``) writes it back. JSON objects are
    :class:`FrozenObject` and arrays tuples (:func:`frozen_json`); a fact's ``embedding`` is a read-only float array.

    ``payload`` is the snapshot's payload as given without ``warm_store.facts`` and
    ``warm_store.edges`` (those are ``facts`` and ``edges``); the properties read it, ``None`` (or
    empty) where the snapshot has no such key."""

    header: Mapping[str, Any]  # the header object as given (schema_version, created_at, session_id, counts, ...)
    payload: Mapping[str, Any]  # the payload as given but the store's facts and edges
    facts: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: _EMPTY
    )  # fact id -> the SDK fact object, for each loaded fact
    edges: tuple[Mapping[str, Any], ...] = ()  # the SDK edge object of each of KnowledgeBase.edges, in order
    digest: str = ""  # content digest of the whole snapshot (set by the reader; computed when not given)

    def __post_init__(self) -> None:
        if not self.digest:
            doc = {"header": self.header, "payload": self.payload, "facts": self.facts, "edges": self.edges}
            text = json.dumps(thawed_json(doc), sort_keys=True, default=str)
            object.__setattr__(self, "digest", content_digest(text.encode("utf-8", "surrogatepass")))

    @property
    def store(self) -> Mapping[str, Any]:
        """``payload.warm_store`` without its facts and edges."""
        got = self.payload.get("warm_store")
        return got if isinstance(got, Mapping) else _EMPTY

    @property
    def event_log(self) -> tuple[Mapping[str, Any], ...]:
        """``payload.event_log``: the SDK's fact lifecycle events (``event_id``, ``timestamp``,
        ``window_id``, ``event_type``, ``fact_id``, ``payload``), in order; () when absent."""
        got = self.payload.get("event_log")
        return got if isinstance(got, tuple) else ()

    @property
    def critical_state(self) -> Any:
        return self.store.get("critical_state")

    @property
    def structural_state(self) -> Any:
        return self.store.get("structural_state")

    @property
    def window_count(self) -> Any:
        return self.store.get("window_count")

    @property
    def current_window_id(self) -> Any:
        return self.store.get("current_window_id")

    @property
    def store_schema_version(self) -> Any:
        return self.store.get("schema_version")

    @property
    def community_map(self) -> Any:
        """``payload.community_map`` (fact id -> community number) as given, None when absent."""
        return self.payload.get("community_map")

    @property
    def unknown_payload(self) -> Mapping[str, Any]:
        """The payload's keys the reader does not know, as given."""
        return FrozenObject((k, v) for k, v in self.payload.items() if k not in SDK_PAYLOAD_KEYS)

    @property
    def unknown_store(self) -> Mapping[str, Any]:
        """The warm store's keys the reader does not know, as given."""
        return FrozenObject((k, v) for k, v in self.store.items() if k not in SDK_STORE_KEYS)


@dataclass(frozen=True, eq=False)
class KnowledgeBase:
    """A loaded CKF: facts in file order, plus their embeddings when the file carried them."""

    facts: tuple[Fact, ...]
    embeddings: np.ndarray | None = None  # (n, dim) float32, rows in fact order, as given (not normalised)
    embedding_model: str | None = None
    source: str = ""  # path or upload name
    fmt: str = ""  # "jsonl" | "json" | "csv" | "dir" | "sdk" (a crprotocol SDK snapshot)
    skipped: tuple[Problem, ...] = ()  # lenient mode: problems of the facts that were skipped
    warnings: tuple[Problem, ...] = ()  # data-quality warnings found at load time (e.g. unknown age)
    edges: tuple[GivenEdge, ...] = ()  # edges the producer gave (an SDK snapshot's), not similarity edges
    imported: ImportSummary | None = None  # set when read from a foreign format (an SDK snapshot)
    sdk_state: SdkState | None = None  # an SDK snapshot's event log, session state, ... as given (never scored)
    _ids: dict[str, int] = field(init=False, repr=False, compare=False)  # fact id -> row, set below

    def __post_init__(self) -> None:
        object.__setattr__(self, "_ids", {f.fact_id: i for i, f in enumerate(self.facts)})
        if self.embeddings is not None:
            self.embeddings.setflags(write=False)

    def __len__(self) -> int:
        return len(self.facts)

    def index_of(self, fact_id: str) -> int:
        return self._ids[fact_id]

    def get(self, fact_id: str) -> Fact | None:
        i = self._ids.get(fact_id)
        return None if i is None else self.facts[i]

    @cached_property
    def fingerprint(self) -> str:
        """Identity of the knowledge: the facts' ids and contents and the given embeddings.

        Stable under status / metadata edits, so operator decisions stamped with it still
        match a cleaned export of the same CKF. Not a cache key for scores: see ``data_fingerprint``.
        Computed once per object (a knowledge base is immutable).
        """
        h = Digest()
        h.update_rows(f"{f.fact_id}\x00{f.content}\x01" for f in self.facts)
        self._hash_embeddings(h)
        return h.hex()

    @cached_property
    def data_fingerprint(self) -> str:
        """Digest of every fact field (ids, contents, source types, statuses, weights, timestamps,
        TTLs, provenance, metadata), of the given embeddings and, when there are any, of the given
        edges and the SDK state: the cache key for anything built from the CKF (a prepared corpus
        carries its knowledge base, whose edges the Graph page draws). Two CKFs that differ only in a
        timestamp or a TTL differ here. Computed once per object (a knowledge base is immutable)."""
        h = Digest()
        if self.embeddings is not None and self.embeddings.nbytes >= _BESIDE_BYTES:
            # the vectors' own digest on a thread beside the rows (hashlib lets the GIL go while it hashes)
            with ThreadPoolExecutor(max_workers=1) as pool:
                vectors = pool.submit(lambda: Digest(self._vector_bytes()).raw())
                h.update_rows(map(_data_row, self.facts), "surrogatepass")
                h.update(b"\x04" + vectors.result())
            h.update((self.embedding_model or "").encode("utf-8"))
        else:
            h.update_rows(map(_data_row, self.facts), "surrogatepass")
            self._hash_embeddings(h)
        if self.edges or self.sdk_state is not None:  # what a producer gave beyond the facts (the Graph page)
            h.update(b"\x02" + repr(self.edges).encode("utf-8", "surrogatepass"))
            h.update(b"\x03" + (self.sdk_state.digest if self.sdk_state is not None else "").encode("ascii"))
        return h.hex()

    def _hash_embeddings(self, h: Digest) -> None:
        if self.embeddings is not None:
            h.update(self._vector_bytes())
        h.update((self.embedding_model or "").encode("utf-8"))

    def _vector_bytes(self) -> Part:
        """The given embeddings' own bytes, in row order, without a copy of them (a million 384-d rows are 1.5 GB)."""
        return array_part(np.ascontiguousarray(self.embeddings, dtype=np.float32))

    def with_statuses(self, statuses: Mapping[str, str]) -> KnowledgeBase:
        """A copy with some facts' ``status`` changed (operator decisions)."""
        if not statuses:
            return self
        facts = tuple(replace(f, status=statuses[f.fact_id]) if f.fact_id in statuses else f for f in self.facts)
        return replace(self, facts=facts)


@dataclass(frozen=True)
class SubQuery:
    """One item of the task decomposition (SPEC-024 §2.1)."""

    id: str
    text: str
    label: str | None = None
    embedding: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Addressed:
    """A sub-query already covered by an earlier window: one Coverage Set entry (SPEC-024 §2.1)."""

    id: str
    depth_weight: float
    window: int = 1


@dataclass(frozen=True)
class ExpectedConflict:
    """A labelled contradiction (docs/decisions/suites.md): ``fact_a`` and ``fact_b`` conflict and
    ``winner`` is the one that must reach the model (one of the two), or None for an expected tie
    (SPEC-027 §2.5: both packed with a NOTE)."""

    fact_a: str
    fact_b: str
    winner: str | None

    @property
    def loser(self) -> str | None:
        """The fact that must not reach the model (None for an expected tie)."""
        if self.winner is None:
            return None
        return self.fact_b if self.winner == self.fact_a else self.fact_a

    @property
    def pair(self) -> frozenset[str]:
        return frozenset((self.fact_a, self.fact_b))


#: the regression-gate thresholds an ``expect`` table may set, with the metric each one bounds and how
#: (``min``: the metric must be at least the threshold; ``max``: at most) - docs/decisions/suites.md
GATE_THRESHOLDS: tuple[tuple[str, str, str], ...] = (
    ("min_recall", "recall", "min"),
    ("max_leaks", "leaks", "max"),
    ("max_wrong_winners", "wrong_winners", "max"),
    ("max_expired", "expired", "max"),
    ("max_contradictions", "contradictions", "max"),
    ("max_duplicates", "duplicates", "max"),
    ("max_false_conflicts", "false_conflicts", "max"),
    ("min_conflicts_detected", "conflicts_detected", "min"),
    ("min_overlap", "overlap", "min"),
    ("max_tokens", "tokens", "max"),
    ("min_ndcg@10", "ndcg@10", "min"),
    ("min_mrr", "mrr", "min"),
    ("min_precision@10", "precision@10", "min"),
    ("min_recall@10", "recall@10", "min"),
)
#: the graded-relevance scale of ``expect.relevance`` (0: not relevant ... 3: essential)
MAX_GRADE = 3


@dataclass(frozen=True)
class Expectations:
    """A scenario's labels for suite evaluation (the ``expect`` table, docs/decisions/suites.md).

    ``must_include``: fact ids the envelope should hold; ``must_exclude``: facts (stale, superseded,
    losing) that must not reach the model; ``conflicts``: pairs that should be detected, each with its
    expected winner; ``not_conflicts``: pairs that look alike but do not contradict (stage 4 must not flag
    them: a false flag suppresses a correct fact); ``relevance``: graded judgements, fact id -> grade 0 to
    :data:`MAX_GRADE` (the ranking metrics' labels; a fact not graded counts as 0); ``thresholds``:
    regression-gate bounds by name (:data:`GATE_THRESHOLDS`; ``max_tokens`` is one of them). Ids are checked
    against a CKF only when the suite is (``crp_core.analysis.suite.check_suite``)."""

    must_include: tuple[str, ...] = ()
    must_exclude: tuple[str, ...] = ()
    conflicts: tuple[ExpectedConflict, ...] = ()
    thresholds: Mapping[str, float] = field(default_factory=dict, hash=False)
    relevance: Mapping[str, int] = field(default_factory=dict, hash=False)
    not_conflicts: tuple[tuple[str, str], ...] = ()  # pairs stage 4 must not flag (fact_a, fact_b as given)

    @property
    def max_tokens(self) -> int | None:
        v = self.thresholds.get("max_tokens")
        return None if v is None else int(v)

    def fact_ids(self) -> frozenset[str]:
        """Every fact id the labels name."""
        ids = set(self.must_include) | set(self.must_exclude) | set(self.relevance)
        for c in self.conflicts:
            ids |= {c.fact_a, c.fact_b}
        for a, b in self.not_conflicts:
            ids |= {a, b}
        return frozenset(ids)


@dataclass(frozen=True)
class Scenario:
    """The retrieval session being inspected (docs/reference/scenarios.md)."""

    query: str
    query_embedding: tuple[float, ...] | None = None
    now: datetime | None = None  # None: wall clock at run time
    sub_queries: tuple[SubQuery, ...] = ()
    addressed: tuple[Addressed, ...] = ()
    prior_outputs: tuple[str, ...] = ()
    fanout_width: int = 0
    config: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    embedding_model: str | None = None
    name: str = ""
    description: str = ""
    expect: Expectations | None = None  # suite labels (docs/decisions/suites.md); never read by the pipeline

    @property
    def addressed_ids(self) -> frozenset[str]:
        return frozenset(a.id for a in self.addressed)

    @property
    def residual_set(self) -> tuple[SubQuery, ...]:
        """``sub_queries`` minus ``addressed``, in decomposition order (SPEC-024 §2.1)."""
        done = self.addressed_ids
        return tuple(sq for sq in self.sub_queries if sq.id not in done)

    @property
    def coverage_entries(self) -> tuple[tuple[SubQuery, Addressed], ...]:
        """One Coverage Set entry per addressed sub-query: (its sub-query, depth and window)."""
        by_id = {sq.id: sq for sq in self.sub_queries}
        return tuple((by_id[a.id], a) for a in self.addressed if a.id in by_id)

    def replace(self, **changes: Any) -> Scenario:
        return replace(self, **changes)

    def with_residual(self, residual_ids: Iterable[str], *, fanout_width: int, depth_weight: float) -> Scenario:
        """This scenario with only ``residual_ids`` left in the ResidualSet and the given fan-out width
        (SPEC-027 §1: a what-if over the task decomposition).

        Every other sub-query is addressed: one addressed in the scenario keeps its ``depth_weight`` and
        ``window``; one moved out of the ResidualSet becomes a Coverage Set entry with ``depth_weight``
        (as if an earlier branch had covered it) in the scenario's latest window (1 when none). Addressed
        entries keep the scenario's order, newly addressed ones follow in decomposition order. Returns
        ``self`` when nothing changes (so a cached run is shared).
        """
        keep = set(residual_ids)
        known = [sq.id for sq in self.sub_queries]
        unknown = keep - set(known)
        if unknown:
            raise ValueError(f"not sub-queries of the scenario: {', '.join(sorted(unknown))}")
        window = max((a.window for a in self.addressed), default=1)
        addressed = [a for a in self.addressed if a.id not in keep]
        have = {a.id for a in self.addressed}
        addressed += [
            Addressed(id=s, depth_weight=float(depth_weight), window=window)
            for s in known
            if s not in keep and s not in have
        ]
        addressed_t = tuple(addressed)
        if int(fanout_width) == int(self.fanout_width) and addressed_t == tuple(self.addressed):
            return self
        return self.replace(fanout_width=int(fanout_width), addressed=addressed_t)

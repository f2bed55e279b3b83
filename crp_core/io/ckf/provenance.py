"""Where a fact came from in a crprotocol SDK deployment: the SDK's own fields of the fact, read back from
``Fact.metadata`` (docs/decisions/sdk-snapshots.md, docs/reference/ckf.md#provenance-on-screen).

Reading a snapshot keeps the SDK's fields of each fact in ``metadata`` as given
(:data:`crp_core.io.ckf.sdk_facts.META_FIELDS`), and ``import-sdk`` / a triage export write them into the
CKF file, so a CKF read back carries them too. An operator judges a conflict pair on them: which
extraction window wrote a fact, what kind of fact the SDK took it for, how sure its extractor was.

:func:`sdk_provenance` reads them, read-only and type-checked: a value of the wrong JSON type (a CKF's
metadata is free JSON) is named in :attr:`SdkProvenance.invalid` and left out, never shown as if valid.
A fact is an SDK fact when its metadata holds ``source_window_id`` or ``extraction_stage`` (fields every
SDK fact has and no CKF field is named after); a plain CKF's facts have no provenance (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crp_core.io.ckf.sdk_facts import META_FIELDS, type_error
from crp_core.model import Fact

#: the SDK fields shown, in display order
PROVENANCE_FIELDS: tuple[str, ...] = (
    "source_window_id",
    "category",
    "confidence",
    "tier",
    "extraction_stage",
    "superseded_by",
)
#: metadata keys that make a fact an SDK fact (every SDK fact has them; the SDK's default "" / 0 included)
SDK_MARKERS: tuple[str, ...] = ("source_window_id", "extraction_stage")
#: the SDK's extraction stages by number (its six-stage extraction pipeline; 0: none recorded)
EXTRACTION_STAGES: dict[int, str] = {
    1: "regex",
    2: "statistical",
    3: "named entities",
    4: "relation triples",
    5: "discourse",
    6: "LLM-assisted",
}
#: the SDK's warm-store tiers by number
TIERS: dict[int, str] = {0: "critical", 1: "hot", 2: "warm", 3: "cold"}
#: how each field is named on screen
_LABELS: dict[str, str] = {
    "source_window_id": "window",
    "category": "category",
    "confidence": "confidence",
    "tier": "tier",
    "extraction_stage": "extraction stage",
    "superseded_by": "superseded by",
}
#: the JSON type of each field, as the snapshot reader checks it (``superseded_by``: a fact id)
_KINDS: dict[str, str] = {**dict(META_FIELDS), "superseded_by": "string"}


@dataclass(frozen=True)
class SdkProvenance:
    """The SDK's fields of one fact, each None when absent, empty or of the wrong type.

    ``source_window_id``: the window (one dispatch of a session) whose text the fact was extracted
    from; ``category``: the SDK's semantic category; ``confidence``: its extractor's confidence (the
    SDK says in [0, 1]; kept as given); ``tier``: the warm-store tier it sat in (:data:`TIERS`);
    ``extraction_stage``: the stage of the SDK's extraction pipeline that produced it
    (:data:`EXTRACTION_STAGES`); ``superseded_by``: the fact that replaced it
    (``metadata.superseded_by`` as loaded). ``invalid``: the fields present with a wrong type, in
    :data:`PROVENANCE_FIELDS` order (None above)."""

    source_window_id: str | None = None
    category: str | None = None
    confidence: float | None = None
    tier: int | None = None
    extraction_stage: int | None = None
    superseded_by: str | None = None
    invalid: tuple[str, ...] = ()

    @property
    def tier_name(self) -> str | None:
        """``warm`` for tier 2 (:data:`TIERS`), None for no tier or a number the SDK does not use."""
        return None if self.tier is None else TIERS.get(self.tier)

    @property
    def stage_name(self) -> str | None:
        """``regex`` for stage 1 (:data:`EXTRACTION_STAGES`), None for no stage or another number."""
        return None if self.extraction_stage is None else EXTRACTION_STAGES.get(self.extraction_stage)

    def items(self) -> tuple[tuple[str, str | int | float], ...]:
        """``(field, value)`` of the fields present, in :data:`PROVENANCE_FIELDS` order."""
        out: list[tuple[str, str | int | float]] = []
        for name in PROVENANCE_FIELDS:
            v = getattr(self, name)
            if v is not None:
                out.append((name, v))
        return tuple(out)

    def labelled(self) -> tuple[tuple[str, str, str], ...]:
        """The fields present as ``(field, label, value as text)``, in :data:`PROVENANCE_FIELDS` order
        then the invalid ones (``invalid``, "wrong type, ignored", their names): what the CLI prints and
        the dashboard shows. Texts are as given (the caller makes them inert); the confidence to four
        significant digits, a tier and a stage with their names."""
        out: list[tuple[str, str, str]] = []
        for name, value in self.items():
            text = str(value)
            if name == "confidence":
                text = f"{value:.4g}"
            elif name == "tier" and self.tier_name:
                text = f"{value} ({self.tier_name})"
            elif name == "extraction_stage" and self.stage_name:
                text = f"{value} ({self.stage_name})"
            out.append((name, _LABELS[name], text))
        if self.invalid:
            out.append(("invalid", "wrong type, ignored", ", ".join(self.invalid)))
        return tuple(out)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: every field of :data:`PROVENANCE_FIELDS` (``null`` when absent) and ``invalid``."""
        return {**{name: getattr(self, name) for name in PROVENANCE_FIELDS}, "invalid": list(self.invalid)}


def _value(meta: Mapping[str, Any], name: str, kind: str) -> tuple[Any, bool]:
    """``(value, is invalid)`` of ``meta[name]``: None when absent, null or an empty string."""
    v = meta.get(name)
    if v is None or (isinstance(v, str) and not v):
        return None, False
    try:
        if type_error(v, kind) is not None:
            return None, True
        return (float(v) if kind == "number" else v), False
    except OverflowError:  # an integer beyond the float range where a number is expected
        return None, True


def sdk_provenance(fact: Fact) -> SdkProvenance | None:
    """The SDK provenance of ``fact`` (module docstring), None for a fact that is not an SDK fact."""
    meta = fact.metadata
    if not isinstance(meta, Mapping) or not any(meta.get(k) is not None for k in SDK_MARKERS):
        return None
    values: dict[str, Any] = {}
    invalid: list[str] = []
    for name in PROVENANCE_FIELDS:
        v, bad = _value(meta, name, _KINDS[name])
        values[name] = v
        if bad:
            invalid.append(name)
    return SdkProvenance(**values, invalid=tuple(invalid))

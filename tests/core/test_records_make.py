"""The records a run builds by the dozen have a ``make`` class method (no frozen ``__init__`` per-field
``object.__setattr__``): it must build the very record the constructor builds, for every field, whether the
record keeps its fields in a ``__dict__`` or in slots (the per-pair records a whole-CKF scan holds by the
hundred thousand)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from crp_core.records import Authority, ConflictPair, PackedFact, ValueConflict, ValueDiff

AUTH = {
    "fact_id": "F1",
    "source_type": "internal",
    "source_authority": 0.8,
    "recency_factor": 0.5,
    "importance_weight": 0.9,
    "authority": 0.8 * 0.5 * 0.9,
}
CASES = {
    Authority: AUTH,
    ConflictPair: {
        "fact_a": "F1",
        "fact_b": "F2",
        "similarity": 0.91,
        "patterns": ("port",),
        "conflict": ValueConflict(patterns=("port",), diffs=()),
        "authority": {"F1": Authority(**AUTH)},
        "kept": ("F1",),
        "suppressed": "F2",
        "tied": False,
        "skipped": True,
        "margin": 0.25,
        "decision": "override",
    },
    PackedFact: {
        "fact_id": "F1",
        "role": "connector",
        "score": 1.5,
        "tier": None,
        "band": "middle",
        "tokens": 12,
        "bridges_anchor": "F0",
    },
}


@pytest.mark.parametrize("cls", list(CASES), ids=lambda c: c.__name__)
def test_make_takes_every_field_in_order(cls):
    names = [f.name for f in dataclasses.fields(cls)]
    assert list(inspect.signature(cls.make).parameters) == names
    assert not hasattr(cls, "__post_init__")


def test_the_per_pair_records_have_slots():
    """No ``__dict__`` per record: a scan's 155,000 pairs hold about 1 KB less each."""
    assert all("__slots__" in cls.__dict__ for cls in (Authority, ConflictPair, ValueConflict, ValueDiff))
    assert "__slots__" not in PackedFact.__dict__


def _fields(record):
    return [(f.name, getattr(record, f.name)) for f in dataclasses.fields(record)]


@pytest.mark.parametrize("cls", list(CASES), ids=lambda c: c.__name__)
def test_make_builds_the_record_the_constructor_builds(cls):
    values = CASES[cls]
    made, built = cls.make(**values), cls(**values)
    assert type(made) is cls and made == built and repr(made) == repr(built)
    assert _fields(made) == _fields(built)
    assert pickle.loads(pickle.dumps(made)) == built
    assert dataclasses.replace(made) == built and dataclasses.asdict(made) == dataclasses.asdict(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.__setattr__(dataclasses.fields(cls)[0].name, "changed")

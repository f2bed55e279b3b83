"""The generated hostile families: the registry (docs/decisions/hardening.md, "Generated families").

A family is a reader and a deterministic generator: given a temporary folder it writes its inputs
(seeded: the same cases every run) and returns them as :class:`Case` rows, each with the command lines
that read it and its expected outcome (refused at a line and field, warned, loaded). The expected
outcomes come from rules stated once per reader (:func:`ckf_expect` for a CKF field, ...), from the
format's reference, not from recorded runs. :mod:`tests.support.hostile_run` runs a family in one
bounded child process. The families themselves live in ``hostile_gen_*`` modules; this one holds the
shared pieces and the registry :data:`FAMILIES`.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.paths import TEST_DATA

HOSTILE = TEST_DATA / "hostile"
SCENARIO_OK = HOSTILE / "scenario_ok.json"
CKF_OK = HOSTILE / "dir_ok"
MODEL = "test-model"
DIM = 8
#: the seed every family's random choices start from (offsets, positions): the same cases every run
SEED = 32


@dataclass(frozen=True)
class Case:
    """One generated input: the command lines that read it and its expected outcome."""

    name: str
    outcome: str  # "refused", "warned" or "loaded"
    argvs: tuple[tuple[str, ...], ...] = ()
    line: int | None = None
    field: str | None = None
    says: str | None = None  # a text every refusing command's stderr holds
    validate_kind: str = "ckf"  # the key of validate --json's report ("ckf" or "scenario")
    refused_rc: int | None = None  # the exit status of a refusal when not the command's usual one
    loaded_rcs: tuple[int, ...] = (0,)  # the exit statuses of a loaded input (check: 1 when its gate fails)
    call: Callable[[], list[str]] | None = dataclasses.field(
        default=None, compare=False
    )  # a non-CLI reader: its failures


@dataclass(frozen=True)
class Family:
    """A generator of cases for one reader."""

    name: str
    reader: str
    what: str
    build: Callable[[Path], list[Case]]


def rng(name: str) -> random.Random:
    """The family's own random stream (seeded by :data:`SEED` and its name)."""
    return random.Random(f"{SEED}:{name}")


# ---- the facts every CKF family mutates -----------------------------------------------------------
def vec(i: int) -> list[float]:
    """A deterministic 8-d vector, three topics (as tests/data/hostile/_build.py writes them)."""
    base = [0.0] * DIM
    base[i % 3] = 1.0
    base[3 + i % 5] = 0.25 + 0.01 * i
    return base


def fact(i: int, **extra: object) -> dict[str, object]:
    return {
        "fact_id": f"f{i}",
        "content": f"Fact {i}: port {2379 + i} serves service {i % 4}.",
        "source_type": "official_documentation",
        "ingested_at": "2025-03-01T00:00:00Z",
        "embedding": vec(i),
        "embedding_model": MODEL,
        **extra,
    }


#: marks the value to replace with raw JSON text (a value json.dumps cannot write: NaN spelt, 5,000 digits)
RAW = "\u0000RAW\u0000"


def fact_json(i: int, key: str, raw: str | None) -> str:
    """Fact ``i`` as one JSON object text with ``key`` given the raw JSON text ``raw`` (``None``: absent)."""
    obj = fact(i)
    if raw is None:
        obj.pop(key, None)
        return json.dumps(obj, ensure_ascii=False)
    obj[key] = RAW
    return json.dumps(obj, ensure_ascii=False).replace(json.dumps(RAW), raw)


def run_ckf(path: Path, *extra: str) -> tuple[tuple[str, ...], ...]:
    """The command lines that read a CKF: validate --json and run (with the 8-d scenario)."""
    return (
        ("validate", "--json", str(path), *extra),
        ("run", "--ckf", str(path), "--scenario", str(SCENARIO_OK), "--json", *_set_args(extra)),
    )


def _set_args(extra: tuple[str, ...]) -> tuple[str, ...]:
    if "--max-bytes" in extra:
        return ("--set", f"ckf_max_bytes={extra[extra.index('--max-bytes') + 1]}")
    return tuple(x for x in extra if x in ("--lenient",))


def sample(cases: list[Any], n: int, name: str) -> list[Any]:
    """``n`` of ``cases`` chosen by the family's seeded stream, in their order (a family whose full
    product would cost more time than it tells: every field and every value still appear)."""
    if len(cases) <= n:
        return cases
    keep = set(rng(name).sample(range(len(cases)), n))
    return [c for i, c in enumerate(cases) if i in keep]


def cut_offsets(size: int, n: int, r: random.Random, lo: int = 1) -> list[int]:
    """``n`` distinct offsets in [lo, size) (all of them when fewer), sorted."""
    span = range(lo, size)
    return sorted(r.sample(span, min(n, len(span))))


def _registry() -> tuple[Family, ...]:
    from tests.support import hostile_gen_ckf, hostile_gen_inputs, hostile_gen_misc

    return hostile_gen_ckf.FAMILIES + hostile_gen_inputs.FAMILIES + hostile_gen_misc.FAMILIES


FAMILIES: tuple[Family, ...] = ()


def families() -> tuple[Family, ...]:
    """Every family of the registry, in order."""
    global FAMILIES
    if not FAMILIES:
        FAMILIES = _registry()
    return FAMILIES


def family(name: str) -> Family:
    for f in families():
        if f.name == name:
            return f
    raise KeyError(name)

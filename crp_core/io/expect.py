"""A scenario's ``expect`` table: the labels of suite evaluation (docs/decisions/suites.md §2).

``must_include`` and ``must_exclude`` (lists of fact ids), ``conflicts`` (a list of
``{fact_a, fact_b, winner}`` with ``winner`` one of the two ids or ``"tie"``), ``not_conflicts`` (a list
of ``{fact_a, fact_b}``: look-alike pairs stage 4 must not flag), ``relevance`` (graded
judgements: a table fact id -> whole number 0 to 3, the labels of the ranking metrics) and the
regression-gate thresholds of :data:`crp_core.model.GATE_THRESHOLDS` (``min_recall``, ``max_leaks``, ...,
``max_tokens``). Validated strictly, every problem reported through the scenario loader's ``err``
callback with its path (``expect.conflicts[1].winner``) so it carries the scenario file's line.
Fact ids are only checked for shape here; whether they exist is a question for a CKF
(``crp_core.analysis.suite.check_suite``).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from crp_core.io.located import DocPath
from crp_core.model import GATE_THRESHOLDS, MAX_GRADE, Expectations, ExpectedConflict

__all__ = ["EXPECT_KEYS", "TIE", "parse_expect", "expect_to_dict"]

#: the value of ``winner`` for a pair whose authority is expected to tie (SPEC-027 §2.5)
TIE = "tie"
_LIST_KEYS = ("must_include", "must_exclude")
_CONFLICT_KEYS = ("fact_a", "fact_b", "winner")
#: thresholds bounded to [0, 1] (fractions); the others are whole numbers
_FRACTIONS = frozenset({"min_recall", "min_overlap", "min_ndcg@10", "min_mrr", "min_precision@10", "min_recall@10"})
#: thresholds of the ranking metrics: they need a fact graded 1 or more in ``relevance``
_RANKING = frozenset({"min_ndcg@10", "min_mrr", "min_precision@10", "min_recall@10"})
EXPECT_KEYS: tuple[str, ...] = (
    _LIST_KEYS + ("conflicts", "not_conflicts", "relevance") + tuple(t for t, _, _ in GATE_THRESHOLDS)
)
_PAIR_KEYS = ("fact_a", "fact_b")

Err = Callable[[DocPath, str], None]
T = TypeVar("T")
#: a pair of ``expect`` read from its item: its two fact ids as given, and what it stands for
Pair = tuple[str, str, T]


def _show(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 64:
        return _big_int(v)
    return json.dumps(v, default=str, ensure_ascii=False)[:60]


def _big_int(v: int) -> str:
    """A huge integer said by its size (its digits are noise, and beyond 4300 of them ``str`` raises)."""
    try:
        n = str(len(str(abs(v))))
    except ValueError:
        n = f"more than {sys.get_int_max_str_digits()}"
    return f"an integer of {n} digits"


def _fact_id(err: Err, v: Any, path: DocPath) -> str | None:
    if not isinstance(v, str) or not v.strip():
        err(path, f"must be a non-empty fact id (a string), got {_show(v)}")
        return None
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        err(path, "contains an unpaired surrogate (not valid Unicode)")
        return None
    return v


def _id_list(err: Err, doc: Mapping[str, Any], key: str) -> tuple[str, ...]:
    raw = doc.get(key)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        err(("expect", key), f"must be a list of fact ids, got {_show(raw)}")
        return ()
    out: list[str] = []
    first: dict[str, int] = {}
    for i, v in enumerate(raw):
        fid = _fact_id(err, v, ("expect", key, i))
        if fid is None:
            continue
        if fid in first:
            err(("expect", key, i), f"{fid!r} listed twice (first at expect.{key}[{first[fid]}])")
            continue
        first[fid] = i
        out.append(fid)
    return tuple(out)


def _pair_list(err: Err, raw: Any, key: str, shape: str, parse: Callable[[Any, DocPath], Pair[T] | None]) -> list[T]:
    """The items of ``expect.<key>``, a list of pairs of facts (``shape`` names an item's keys), each read by
    ``parse`` (its two ids as given and what it stands for, or None when refused, said through ``err``); a pair
    listed twice is refused where it repeats."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        err(("expect", key), f"must be a list of {shape}, got {_show(raw)}")
        return []
    out: list[T] = []
    seen: dict[frozenset[str], int] = {}
    for i, item in enumerate(raw):
        p: DocPath = ("expect", key, i)
        got = parse(item, p)
        if got is None:
            continue
        a, b, value = got
        pair = frozenset((a, b))
        if pair in seen:
            err(p, f"the pair {a!r} / {b!r} is listed twice (first at expect.{key}[{seen[pair]}])")
            continue
        seen[pair] = i
        out.append(value)
    return out


def _conflicts(err: Err, raw: Any) -> tuple[ExpectedConflict, ...]:
    def parse(item: Any, p: DocPath) -> Pair[ExpectedConflict] | None:
        got = _conflict(err, item, p)
        return None if got is None else (got.fact_a, got.fact_b, got)

    return tuple(_pair_list(err, raw, "conflicts", "{fact_a, fact_b, winner}", parse))


def _conflict(err: Err, item: Any, p: DocPath) -> ExpectedConflict | None:
    """One ``{fact_a, fact_b, winner}`` at ``p``, or None when it is not well-formed (said through ``err``)."""
    if not isinstance(item, Mapping):
        err(p, f"must be an object {{fact_a, fact_b, winner}}, got {_show(item)}")
        return None
    for k in item:
        if k not in _CONFLICT_KEYS:
            err(p + (str(k),), f"unknown key; allowed: {', '.join(_CONFLICT_KEYS)}")
    a = _fact_id(err, item.get("fact_a"), p + ("fact_a",))
    b = _fact_id(err, item.get("fact_b"), p + ("fact_b",))
    w = item.get("winner")
    if a is None or b is None:
        if w is None:
            err(p + ("winner",), f"missing (required: fact_a, fact_b or {TIE!r})")
        return None
    if a == b:
        err(p + ("fact_b",), f"a conflict needs two different facts, got {a!r} twice")
        return None
    if w is None:
        err(p + ("winner",), f"missing (required: {a!r}, {b!r} or {TIE!r})")
        return None
    if w not in (a, b, TIE):
        err(p + ("winner",), f"must be {a!r}, {b!r} or {TIE!r}, got {_show(w)}")
        return None
    return ExpectedConflict(fact_a=a, fact_b=b, winner=None if w == TIE else str(w))


def _not_conflicts(err: Err, raw: Any, conflicts: tuple[ExpectedConflict, ...]) -> tuple[tuple[str, str], ...]:
    """``not_conflicts``: a list of ``{fact_a, fact_b}``, two different facts, each pair once and not also
    in ``conflicts``."""
    labelled = {c.pair for c in conflicts}

    def parse(item: Any, p: DocPath) -> Pair[tuple[str, str]] | None:
        if not isinstance(item, Mapping):
            err(p, f"must be an object {{fact_a, fact_b}}, got {_show(item)}")
            return None
        for k in item:
            if k not in _PAIR_KEYS:
                err(p + (str(k),), f"unknown key; allowed: {', '.join(_PAIR_KEYS)}")
        a = _fact_id(err, item.get("fact_a"), p + ("fact_a",))
        b = _fact_id(err, item.get("fact_b"), p + ("fact_b",))
        if a is None or b is None:
            return None
        if a == b:
            err(p + ("fact_b",), f"a pair needs two different facts, got {a!r} twice")
            return None
        if frozenset((a, b)) in labelled:
            err(p, f"the pair {a!r} / {b!r} is also in expect.conflicts")
            return None
        return a, b, (a, b)

    return tuple(_pair_list(err, raw, "not_conflicts", "{fact_a, fact_b}", parse))


def _relevance(err: Err, raw: Any) -> dict[str, int]:
    """``relevance``: a table fact id -> grade, a whole number from 0 to :data:`MAX_GRADE` (not a
    boolean, not 2.0); a bad id or grade is reported at ``expect.relevance.<id>``."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        err(("expect", "relevance"), f"must be a table of fact id -> grade (0 to {MAX_GRADE}), got {_show(raw)}")
        return {}
    out: dict[str, int] = {}
    for k, v in raw.items():
        p: DocPath = ("expect", "relevance", str(k))
        fid = _fact_id(err, k, p)
        if fid is None:
            continue
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_GRADE:
            out[fid] = int(v)
        else:
            err(p, f"must be a grade, a whole number from 0 to {MAX_GRADE}, got {_show(v)}")
    return out


def _consistent(err: Err, include: tuple[str, ...], exclude: tuple[str, ...], grades: Mapping[str, int]) -> None:
    """Labels that contradict each other: a ``must_include`` fact graded 0, a ``must_exclude`` fact graded 1+."""
    for fid in include:
        if grades.get(fid) == 0:
            err(("expect", "relevance", fid), f"{fid!r} is in expect.must_include but graded 0 (not relevant)")
    for fid in exclude:
        if grades.get(fid, 0) > 0:
            err(
                ("expect", "relevance", fid),
                f"{fid!r} is in expect.must_exclude but graded {grades[fid]} (relevant); grade it 0 or drop it",
            )


#: the largest whole-number threshold: every integer up to it is exact as a float (the gate compares
#: floats), and no count of facts or tokens comes near it
MAX_WHOLE = 2**53


def _thresholds(err: Err, doc: Mapping[str, Any]) -> dict[str, float]:
    """The gate thresholds; one message per threshold whatever is wrong (type, range, size): a
    fraction "must be a number between 0 and 1", a count "must be a whole number between N and 2^53"."""
    out: dict[str, float] = {}
    for key, _, _ in GATE_THRESHOLDS:
        if key not in doc:
            continue
        v = doc[key]
        p: DocPath = ("expect", key)
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        if key in _FRACTIONS:
            # ints compare exactly (float() of a 400-digit int overflows); NaN fails the comparison
            if number and 0 <= v <= 1:
                out[key] = float(v)
            else:
                err(p, f"must be a number between 0 and 1, got {_show(v)}")
            continue
        least = 1 if key == "max_tokens" else 0
        whole = number and (isinstance(v, int) or (math.isfinite(v) and float(v).is_integer()))
        if whole and least <= v <= MAX_WHOLE:
            out[key] = int(v)
        else:
            err(p, f"must be a whole number between {least} and 2^53, got {_show(v)}")
    return out


def _bounded(
    err: Err,
    thresholds: Mapping[str, float],
    include: tuple[str, ...],
    grades: Mapping[str, int],
    pairs: tuple[tuple[str, str], ...],
    conflicts: int,
) -> None:
    """A threshold of a metric the labels leave undefined: ``min_recall`` without ``must_include``,
    ``max_false_conflicts`` without ``not_conflicts``, a ranking bound without a fact graded 1 or more, and
    ``min_conflicts_detected`` above the ``conflicts`` it counts (the gate would fail it on every run)."""
    if "min_conflicts_detected" in thresholds and thresholds["min_conflicts_detected"] > conflicts:
        err(
            ("expect", "min_conflicts_detected"),
            f"asks for {int(thresholds['min_conflicts_detected'])} detected of the {conflicts} pair(s) of "
            "expect.conflicts",
        )
    if "min_recall" in thresholds and not include:
        err(("expect", "min_recall"), "bounds the recall of expect.must_include, which is empty or missing")
    if "max_false_conflicts" in thresholds and not pairs:
        err(("expect", "max_false_conflicts"), "bounds the flags of expect.not_conflicts, which is empty or missing")
    if not any(g > 0 for g in grades.values()):
        for key in sorted(_RANKING & thresholds.keys()):
            err(("expect", key), "bounds a ranking metric, but expect.relevance grades no fact 1 or more")


def parse_expect(v: Any, err: Err) -> Expectations | None:
    """The :class:`Expectations` of an ``expect`` value (None when absent); problems go to ``err``."""
    if v is None:
        return None
    if not isinstance(v, Mapping):
        err(("expect",), f"must be a table of labels ({', '.join(EXPECT_KEYS[:4])}, thresholds), got {_show(v)}")
        return None
    for k in v:
        if k not in EXPECT_KEYS:
            err(("expect", str(k)), f"unknown key; allowed: {', '.join(EXPECT_KEYS)}")
    include = _id_list(err, v, "must_include")
    exclude = _id_list(err, v, "must_exclude")
    included, excluded = set(include), set(exclude)  # sets: one membership test per item
    for i, fid in enumerate(exclude):
        if fid in included:
            err(("expect", "must_exclude", i), f"{fid!r} is also in expect.must_include")
    conflicts = _conflicts(err, v.get("conflicts"))
    for i, c in enumerate(conflicts):
        if c.winner is not None and c.winner in excluded:
            err(("expect", "conflicts", i, "winner"), f"the winner {c.winner!r} is in expect.must_exclude")
        if c.loser is not None and c.loser in included:
            err(("expect", "conflicts", i, "winner"), f"the loser {c.loser!r} is in expect.must_include")
    not_conflicts = _not_conflicts(err, v.get("not_conflicts"), conflicts)
    grades = _relevance(err, v.get("relevance"))
    _consistent(err, include, exclude, grades)
    thresholds = _thresholds(err, v)
    _bounded(err, thresholds, include, grades, not_conflicts, len(conflicts))
    return Expectations(
        must_include=include,
        must_exclude=exclude,
        conflicts=conflicts,
        thresholds=MappingProxyType(thresholds),
        relevance=MappingProxyType(grades),
        not_conflicts=not_conflicts,
    )


def expect_to_dict(e: Expectations) -> dict[str, Any]:
    """Plain dict that :func:`parse_expect` turns back into an equal :class:`Expectations`."""
    d: dict[str, Any] = {}
    if e.must_include:
        d["must_include"] = list(e.must_include)
    if e.must_exclude:
        d["must_exclude"] = list(e.must_exclude)
    if e.conflicts:
        d["conflicts"] = [{"fact_a": c.fact_a, "fact_b": c.fact_b, "winner": c.winner or TIE} for c in e.conflicts]
    if e.not_conflicts:
        d["not_conflicts"] = [{"fact_a": a, "fact_b": b} for a, b in e.not_conflicts]
    if e.relevance:
        d["relevance"] = dict(e.relevance)
    for key, _, _ in GATE_THRESHOLDS:
        if key in e.thresholds:
            d[key] = e.thresholds[key]
    return d

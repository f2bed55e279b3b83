"""The value-conflict detector on the labelled corpus (docs/reference/pipeline.md §4, SPEC-005 §5.3 patterns).

``tests/data/conflict_pairs/dev.jsonl`` (the rules were developed on it) and ``holdout.jsonl``
(written after the rules were frozen, never tuned on) hold one labelled pair a line:
``{"id", "category", "a", "b", "conflict", "patterns"}``. A pair is correct when the detector's
conflict / no-conflict answer matches and, for a conflict, the expected patterns are a subset of
the patterns found. Scoring is strict: a conflict found with a missing pattern is both a miss and a
false alarm. Every category must reach F1 >= 0.90 (dev and holdout together), the whole corpus 0.97.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import pytest

from crp_core.stages.contradictions.values import values_conflict
from tests.support.detector_cases import CATEGORIES, PATTERNS
from tests.support.paths import TEST_DATA

DATA = TEST_DATA / "conflict_pairs"


def load_pairs() -> list[dict]:
    rows: list[dict] = []
    for name in ("dev.jsonl", "holdout.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                row["split"] = name.split(".")[0]
                rows.append(row)
    return rows


PAIRS = load_pairs()


class Score(NamedTuple):
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score(rows: list[dict]) -> tuple[Score, list[str]]:
    tp = fp = fn = 0
    wrong: list[str] = []
    for row in rows:
        vc = values_conflict(row["a"], row["b"])
        found = set(vc.patterns) if vc else set()
        if row["conflict"]:
            if vc is not None and set(row["patterns"]) <= found:
                tp += 1
            else:
                fn += 1
                fp += vc is not None  # found a conflict, but not the one labelled
                wrong.append(f"{row['id']}: expected {row['patterns']}, found {sorted(found) or None}")
        elif vc is not None:
            fp += 1
            wrong.append(f"{row['id']}: expected no conflict, found {sorted(found)}")
    return Score(tp, fp, fn), wrong


def test_corpus_shape() -> None:
    ids = [r["id"] for r in PAIRS]
    assert len(ids) == len(set(ids))
    assert sum(r["split"] == "dev" for r in PAIRS) >= 220
    assert sum(r["split"] == "holdout" for r in PAIRS) >= 60
    for row in PAIRS:
        assert row["category"] in CATEGORIES, row["id"]
        assert isinstance(row["conflict"], bool), row["id"]
        if row["conflict"]:
            assert row["patterns"] and set(row["patterns"]) <= PATTERNS, row["id"]
        assert row["a"] != row["b"], row["id"]
    for cat in CATEGORIES:
        rows = [r for r in PAIRS if r["category"] == cat]
        assert len(rows) >= 15, cat
        assert any(r["conflict"] for r in rows) and any(not r["conflict"] for r in rows), cat


@pytest.mark.parametrize("category", CATEGORIES)
def test_category_f1(category: str) -> None:
    s, wrong = score([r for r in PAIRS if r["category"] == category])
    assert s.f1 >= 0.90, f"{category}: P={s.precision:.3f} R={s.recall:.3f} F1={s.f1:.3f}\n" + "\n".join(wrong)


def test_overall_f1() -> None:
    s, wrong = score(PAIRS)
    assert s.f1 >= 0.97, f"P={s.precision:.3f} R={s.recall:.3f} F1={s.f1:.3f}\n" + "\n".join(wrong)


def test_answers_are_symmetric_on_the_corpus() -> None:
    for row in PAIRS:
        ab, ba = values_conflict(row["a"], row["b"]), values_conflict(row["b"], row["a"])
        assert (ab is None) == (ba is None), row["id"]
        if ab is not None and ba is not None:
            assert ab.patterns == ba.patterns, row["id"]

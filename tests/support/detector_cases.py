"""The detector tests' shared check (a pair's patterns, with the symmetry every answer keeps) and the labelled
corpora's categories and patterns."""

from __future__ import annotations

from crp_core.stages.contradictions.values import values_conflict

#: the labelled corpora's ten categories (tests/data/conflict_pairs, blind/WRITING_GUIDE.md)
CATEGORIES = (
    "number_changed",
    "entity_substituted",
    "negation_flip",
    "date_shifted",
    "magnitude_altered",
    "paraphrase",
    "unit_forms",
    "different_attributes",
    "swapped_values",
    "multi_sentence",
)
#: the detector's patterns a labelled conflict may name
PATTERNS = {"NUMBER_CHANGED", "ENTITY_SUBSTITUTED", "NEGATION_FLIP", "DATE_SHIFTED", "MAGNITUDE_ALTERED"}


def patterns(a: str, b: str, learned: bool = True) -> tuple[str, ...] | None:
    """The patterns ``values_conflict(a, b)`` names (None: no conflict); the reverse order agrees.
    ``learned=False``: the rules alone."""
    vc = values_conflict(a, b, learned=learned)
    back = values_conflict(b, a, learned=learned)
    assert (vc is None) == (back is None)  # symmetric
    return vc.patterns if vc else None


def score(rows: list[dict], learned: bool = True) -> tuple[float, float]:
    """Precision and F1 of the detector on labelled ``rows`` (scored as bench/detector.py scores: a conflict
    found with an expected pattern missing is both a miss and a false alarm); ``learned=False``: the rules alone."""
    tp = fp = fn = 0
    for r in rows:
        vc = values_conflict(r["a"], r["b"], learned)
        found = set(vc.patterns) if vc else set()
        if not r["conflict"]:
            fp += vc is not None
        elif vc is not None and set(r["patterns"]) <= found:
            tp += 1
        else:
            fn += 1
            fp += vc is not None
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, 2 * precision * recall / (precision + recall) if precision + recall else 0.0

"""The learned comparison: where the rules find nothing, accept one of the candidates (candidates.py) or none.

A logistic regression over the candidate's features (docs/decisions/detector-learned.md) gives each candidate a
probability; the best candidate at or above the threshold is the answer, with its patterns and value differences
and ``learned=True`` on the :class:`~crp_core.records.ValueConflict`. The weights are a small JSON file,
``crp_core/data/detector_weights.json`` (docs/reference/pipeline.md §4), written by ``tools/train_detector.py`` from
the labelled corpus; it is read and checked once. The score is a ``math.fsum`` in float64 over rounded features, so
a verdict does not depend on the CPU or on a numeric library.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from crp_core.errors import DetectorWeightsError
from crp_core.records import ValueConflict, ValueDiff
from crp_core.stages.contradictions.candidates import FEATURE_NAMES, Candidate, ClauseScorer, propose
from crp_core.stages.contradictions.clauses import Doc

__all__ = [
    "WEIGHTS_FILE",
    "WEIGHTS_FORMAT",
    "Weights",
    "candidate_score",
    "learned_conflict",
    "load_weights",
    "parse_weights",
    "weights",
]

#: the shipped weights (tools/train_detector.py writes them)
WEIGHTS_FILE = Path(__file__).resolve().parent.parent.parent / "data" / "detector_weights.json"
#: the version of the weights file's layout
WEIGHTS_FORMAT = 1
#: largest weights file read (it holds a few dozen numbers)
_MAX_BYTES = 1024 * 1024


class Weights(NamedTuple):
    """A trained logistic regression over :data:`~.candidates.FEATURE_NAMES` and where it came from."""

    coefficients: tuple[float, ...]  # one per feature, in FEATURE_NAMES order
    intercept: float
    threshold: float  # a candidate whose probability reaches it is accepted
    corpus_sha256: str  # the training corpus's fingerprint (tools/train_detector.py)
    corpus_pairs: int
    regularisation: float  # the inverse L2 strength C it was trained with

    def to_json(self) -> dict[str, Any]:
        """The file's content for these weights."""
        return {
            "format": WEIGHTS_FORMAT,
            "features": list(FEATURE_NAMES),
            "coefficients": list(self.coefficients),
            "intercept": self.intercept,
            "threshold": self.threshold,
            "regularisation": self.regularisation,
            "corpus_sha256": self.corpus_sha256,
            "corpus_pairs": self.corpus_pairs,
        }


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if name not in data:
        raise DetectorWeightsError(f"{where}: field '{name}' is missing")
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise DetectorWeightsError(f"{where}: field '{name}' has the wrong type ({type(value).__name__})")
    return value


def _finite(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DetectorWeightsError(f"{where}: field '{name}' must hold finite numbers")
    return float(value)


def parse_weights(data: Any, where: str) -> Weights:
    """The weights in ``data`` (a parsed weights file), checked against this code's features; ``where`` names
    the file in every error."""
    if not isinstance(data, dict):
        raise DetectorWeightsError(f"{where}: a JSON object is expected")
    version = _field(data, "format", int, where)
    if version != WEIGHTS_FORMAT:
        raise DetectorWeightsError(f"{where}: field 'format' is {version}, this code reads format {WEIGHTS_FORMAT}")
    names = _field(data, "features", list, where)
    if tuple(names) != FEATURE_NAMES:
        missing = sorted(set(FEATURE_NAMES) - set(map(str, names)))
        extra = sorted(set(map(str, names)) - set(FEATURE_NAMES))
        raise DetectorWeightsError(
            f"{where}: field 'features' does not list this code's features in order "
            f"(missing {missing or 'none'}, unknown {extra or 'none'}); retrain with tools/train_detector.py"
        )
    coefs = _field(data, "coefficients", list, where)
    if len(coefs) != len(FEATURE_NAMES):
        raise DetectorWeightsError(f"{where}: field 'coefficients' has {len(coefs)} numbers, {len(names)} expected")
    threshold = _finite(_field(data, "threshold", (int, float), where), "threshold", where)
    if not 0.0 < threshold < 1.0:
        raise DetectorWeightsError(f"{where}: field 'threshold' must lie strictly between 0 and 1")
    return Weights(
        coefficients=tuple(_finite(c, "coefficients", where) for c in coefs),
        intercept=_finite(_field(data, "intercept", (int, float), where), "intercept", where),
        threshold=threshold,
        corpus_sha256=str(_field(data, "corpus_sha256", str, where)),
        corpus_pairs=int(_field(data, "corpus_pairs", int, where)),
        regularisation=_finite(_field(data, "regularisation", (int, float), where), "regularisation", where),
    )


def load_weights(path: Path) -> Weights:
    """Read and check a weights file (a clear :class:`~crp_core.errors.DetectorWeightsError` naming the file and
    the field when it is unreadable, of another format or for other features)."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise DetectorWeightsError(f"{path}: cannot be read ({exc.strerror})") from None
    if len(raw) > _MAX_BYTES:
        raise DetectorWeightsError(f"{path}: larger than {_MAX_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise DetectorWeightsError(f"{path}: not a JSON file ({exc})") from None
    return parse_weights(data, str(path))


@cache
def weights() -> Weights:
    """The shipped weights, read and checked once."""
    return load_weights(WEIGHTS_FILE)


def candidate_score(w: Weights, features: dict[str, float]) -> float:
    """The probability that a candidate is a conflict with its patterns: float64, a fixed summation order."""
    terms = [w.intercept]
    terms.extend(c * features[name] for c, name in zip(w.coefficients, FEATURE_NAMES) if name in features)
    z = math.fsum(terms)
    if z < -700.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(-z))


def best_candidate(w: Weights, cands: tuple[Candidate, ...]) -> tuple[float, Candidate] | None:
    """The highest-scoring candidate (the first of equal scores) and its score, or None without candidates."""
    best: tuple[float, Candidate] | None = None
    for c in cands:
        s = candidate_score(w, c.features)
        if best is None or s > best[0]:
            best = (s, c)
    return best


def learned_conflict(da: Doc, db: Doc, scorer: ClauseScorer) -> ValueConflict | None:
    """The learned comparison's verdict on two analysed texts the rules found no conflict in: the best candidate
    when it reaches the threshold, marked ``learned``, else None."""
    w = weights()
    best = best_candidate(w, propose(da, db, scorer))
    if best is None or best[0] < w.threshold:
        return None
    diffs = sorted(set(best[1].diffs), key=_diff_order)
    return ValueConflict(patterns=best[1].patterns, diffs=tuple(diffs), learned=True)


def _diff_order(d: ValueDiff) -> tuple[tuple[int, int], tuple[int, int], str, tuple[str, ...], tuple[str, ...]]:
    return (d.span_a, d.span_b, d.pattern, d.tokens_a, d.tokens_b)

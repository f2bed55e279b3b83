"""Train the detector's learned comparison and write its weights (docs/decisions/detector-learned.md).

    python tools/train_detector.py            # from the repository root: rewrite crp_core/data/detector_weights.json
    python tools/train_detector.py --check    # exit 1 when the shipped file differs from what the corpus gives

The corpus is every labelled pair under tests/data/conflict_pairs/: dev.jsonl, holdout.jsonl and
blind/batch-*.jsonl. Each pair is read in the detector's canonical order; a pair the rules already flag is left
out (the comparison only runs where they find nothing), and each candidate the analysis proposes for the others is
one training row, labelled 1 when the pair is a conflict and the candidate names every expected pattern.

The model is scikit-learn's L2 logistic regression solved by Newton's method (newton-cholesky: a handful of exact
steps to the unique optimum, a tight tolerance), on the candidates' integer and rounded features: the same corpus gives
the same weights on any CPU and BLAS kernel (a quasi-Newton solver such as lbfgs stops at a point that depends on the
kernel's rounding, about 1e-5 from the optimum here). The test
tests/core/stages/contradictions/test_learned_weights.py holds the shipped file to this recipe.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from crp_core.stages.contradictions.candidates import FEATURE_NAMES, Candidate  # noqa: E402
from crp_core.stages.contradictions.learned import WEIGHTS_FILE, Weights  # noqa: E402
from crp_core.stages.contradictions.values import learned_candidates, values_conflict  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "conflict_pairs"
#: the inverse L2 strength and the acceptance threshold (docs/decisions/detector-learned.md: how they were chosen)
REGULARISATION = 1.0
THRESHOLD = 0.5


def batch_number(path: str | Path) -> int:
    """A blind batch's number, from its name or file ("batch-07", "blind/batch-07.jsonl" -> 7; "batch-100" -> 100):
    the corpus's order, which bench/ and the tests use too."""
    return int(Path(path).name.removesuffix(".jsonl").removeprefix("batch-"))


def corpus_files(folder: Path = CORPUS) -> list[Path]:
    """The training corpus's files, in a fixed order."""
    blind = sorted((folder / "blind").glob("batch-*.jsonl"), key=batch_number)
    return [folder / "dev.jsonl", folder / "holdout.jsonl", *blind]


def load_rows(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        with path.open(encoding="utf-8") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    return rows


def fingerprint(paths: Sequence[Path]) -> str:
    """SHA-256 over each file's name relative to the corpus folder and its bytes."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(CORPUS).as_posix().encode("utf-8") + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def vector(c: Candidate) -> list[float]:
    return [c.features.get(name, 0.0) for name in FEATURE_NAMES]


def label(row: dict[str, Any], c: Candidate) -> int:
    """1 when the pair is a conflict and the candidate names every expected pattern."""
    return int(bool(row["conflict"]) and set(row["patterns"]) <= set(c.patterns))


def training_rows(rows: Iterable[dict[str, Any]]) -> tuple[list[list[float]], list[int]]:
    """One (features, label) per candidate of each pair the rules leave."""
    xs: list[list[float]] = []
    ys: list[int] = []
    for row in rows:
        if values_conflict(row["a"], row["b"], False) is not None:
            continue
        for c in learned_candidates(row["a"], row["b"]):
            xs.append(vector(c))
            ys.append(label(row, c))
    return xs, ys


def fit(xs: list[list[float]], ys: list[int], regularisation: float = REGULARISATION) -> tuple[list[float], float]:
    """Coefficients (in FEATURE_NAMES order) and intercept of the L2 logistic regression."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=regularisation, solver="newton-cholesky", max_iter=100, tol=1e-12, random_state=0)
    model.fit(xs, ys)
    return [float(w) for w in model.coef_[0]], float(model.intercept_[0])


def train(paths: Sequence[Path] | None = None) -> Weights:
    """The weights the corpus gives."""
    files = corpus_files() if paths is None else list(paths)
    rows = load_rows(files)
    coefs, intercept = fit(*training_rows(rows))
    return Weights(
        coefficients=tuple(coefs),
        intercept=intercept,
        threshold=THRESHOLD,
        corpus_sha256=fingerprint(files),
        corpus_pairs=len(rows),
        regularisation=REGULARISATION,
    )


def render(w: Weights) -> str:
    return json.dumps(w.to_json(), indent=1) + "\n"


def main(argv: Sequence[str]) -> int:
    w = train()
    if "--check" in argv:
        same = WEIGHTS_FILE.read_text(encoding="utf-8") == render(w)
        print("up to date" if same else f"{WEIGHTS_FILE} differs from the corpus's weights: rerun without --check")
        return 0 if same else 1
    WEIGHTS_FILE.write_text(render(w), encoding="utf-8")
    print(f"wrote {WEIGHTS_FILE} ({w.corpus_pairs} pairs, corpus {w.corpus_sha256[:12]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

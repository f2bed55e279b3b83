"""The learned comparison's shipped weights (crp_core/data/detector_weights.json): what tools/train_detector.py
produces from the corpus on disk, and a clear error naming the file and field for a file that does not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crp_core.errors import DetectorWeightsError
from crp_core.stages.contradictions.candidates import FEATURE_NAMES
from crp_core.stages.contradictions.learned import WEIGHTS_FILE, WEIGHTS_FORMAT, load_weights, weights
from tests.support.modules import trainer


def test_the_shipped_weights_are_what_the_recipe_gives_on_the_corpus():
    tool = trainer()
    shipped = weights()
    files = tool.corpus_files()
    assert shipped.corpus_sha256 == tool.fingerprint(files), "the corpus changed: run tools/train_detector.py"
    assert shipped.corpus_pairs == len(tool.load_rows(files))
    fresh = tool.train(files)
    assert (shipped.threshold, shipped.regularisation) == (fresh.threshold, fresh.regularisation)
    assert shipped.intercept == pytest.approx(fresh.intercept, abs=1e-9)
    assert len(shipped.coefficients) == len(FEATURE_NAMES)
    for name, got, want in zip(FEATURE_NAMES, shipped.coefficients, fresh.coefficients, strict=True):
        assert got == pytest.approx(want, abs=1e-9), name


def _write(tmp_path: Path, change: dict) -> Path:
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    data.update(change)
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"format": WEIGHTS_FORMAT + 1}, "field 'format' is 2"),
        ({"features": list(reversed(FEATURE_NAMES))}, "field 'features' does not list this code's features"),
        ({"features": [*FEATURE_NAMES, "cosine"]}, "unknown ['cosine']"),
        ({"coefficients": [0.0]}, f"field 'coefficients' has 1 numbers, {len(FEATURE_NAMES)} expected"),
        ({"threshold": 1.5}, "field 'threshold' must lie strictly between 0 and 1"),
        ({"intercept": "high"}, "field 'intercept' has the wrong type (str)"),
        ({"corpus_pairs": None}, "field 'corpus_pairs' has the wrong type (NoneType)"),
    ],
    ids=["version", "order", "unknown-feature", "coefficients", "threshold", "intercept", "pairs"],
)
def test_a_weights_file_that_does_not_fit_is_refused_naming_the_file_and_field(tmp_path, change, says):
    path = _write(tmp_path, change)
    with pytest.raises(DetectorWeightsError) as err:
        load_weights(path)
    assert str(path) in str(err.value)
    assert says in str(err.value)


def test_a_missing_field_and_a_file_that_is_no_json_are_refused(tmp_path):
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    del data["intercept"]
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DetectorWeightsError, match="field 'intercept' is missing"):
        load_weights(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(DetectorWeightsError, match="not a JSON file"):
        load_weights(path)
    with pytest.raises(DetectorWeightsError, match="cannot be read"):
        load_weights(tmp_path / "absent.json")


def test_the_shipped_weights_load_and_name_their_features():
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    assert data["format"] == WEIGHTS_FORMAT
    assert tuple(data["features"]) == FEATURE_NAMES
    assert load_weights(WEIGHTS_FILE) == weights()

"""An engineer's own data, not the bundled sample: a 30-fact CKF of public-records governance facts
(ids ``gov-0000`` .. ``gov-0029``, 8-d embeddings of the test model around 3 topics) and 4 labelled
scenarios over it, as the bytes a user would upload. No model loads.

``write_own_data(d)`` writes ``d/gov.jsonl`` and ``d/scenarios/*.json`` and returns their paths;
``own_ckf_bytes()`` / ``own_scenario_files()`` give the same content in memory (AppTest uploads).
``embedded=False``: texts only, embedded by the dashboard's own model (a browser session starts on the
bundled sample, whose scenario refuses a CKF of another embedding model).
The bundled suite of the test samples (``f000`` ids) names none of these facts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.support.samples import TEST_MODEL

TOPICS = ("records retention", "freedom of information requests", "data protection audits")
SOURCES = ("regulatory", "official_documentation", "internal", "news", "community")
N_FACTS = 30


def _topics(dim: int = 8) -> np.ndarray:
    return np.random.default_rng(7).normal(size=(3, dim))


def own_ckf_rows(*, embedded: bool = True) -> list[dict[str, object]]:
    """30 facts, 10 per topic, cycling through 5 source types and 3 years of dates."""
    rng = np.random.default_rng(11)
    topics = _topics()
    rows: list[dict[str, object]] = []
    for i in range(N_FACTS):
        t = i % 3
        vec = topics[t] + 0.25 * rng.normal(size=topics.shape[1])
        rows.append(
            {
                "fact_id": f"gov-{i:04d}",
                "content": f"Governance rule {i} on {TOPICS[t]}: keep case files for {3 + i % 7} years.",
                "source_type": SOURCES[i % len(SOURCES)],
                "status": "ACTIVE",
                "ingested_at": f"{2023 + i % 3}-0{1 + i % 9}-10T00:00:00Z",
                **({"embedding": [round(float(x), 6) for x in vec], "embedding_model": TEST_MODEL} if embedded else {}),
            }
        )
    return rows


def own_ckf_bytes(*, embedded: bool = True) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in own_ckf_rows(embedded=embedded)).encode("utf-8")


def _scenario(name: str, topic: int, include: list[str], exclude: list[str], embedded: bool) -> dict[str, object]:
    text = f"What are the rules on {TOPICS[topic]}?"
    q = [float(x) for x in _topics()[topic]]
    return {
        "name": name,
        "query": {"text": text, "embedding": q} if embedded else text,
        "now": "2026-01-01T00:00:00Z",
        **({"embedding_model": TEST_MODEL} if embedded else {}),
        "expect": {"must_include": include, "must_exclude": exclude},
    }


def own_scenarios(*, embedded: bool = True) -> dict[str, dict[str, object]]:
    """4 labelled scenarios by file name (labels name ``gov-`` facts of their topic)."""
    e = embedded
    return {
        "retention.json": _scenario("retention", 0, ["gov-0000", "gov-0003"], ["gov-0001"], e),
        "foi.json": _scenario("foi", 1, ["gov-0001", "gov-0004"], [], e),
        "audits.json": _scenario("audits", 2, ["gov-0002", "gov-0005"], ["gov-0000"], e),
        "retention_old.json": _scenario("retention_old", 0, ["gov-0006", "gov-0009"], [], e),
    }


def own_scenario_files(*, embedded: bool = True) -> list[tuple[str, bytes]]:
    """(file name, JSON bytes) of the 4 scenarios, as uploaded."""
    return [(n, json.dumps(doc, indent=1).encode("utf-8")) for n, doc in own_scenarios(embedded=embedded).items()]


def write_own_data(d: Path, *, embedded: bool = True) -> tuple[Path, list[Path]]:
    """Write the CKF and the 4 scenario files under ``d``; (CKF path, scenario paths)."""
    (d / "scenarios").mkdir(parents=True, exist_ok=True)
    ckf = d / "gov.jsonl"
    ckf.write_bytes(own_ckf_bytes(embedded=embedded))
    paths = []
    for name, data in own_scenario_files(embedded=embedded):
        p = d / "scenarios" / name
        p.write_bytes(data)
        paths.append(p)
    return ckf, paths

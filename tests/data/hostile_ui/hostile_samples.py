"""The hostile-id sample folder of the dashboard's e2e test (tests/e2e/test_e2e_hostile_ui.py).

``python tests/data/hostile_ui/hostile_samples.py OUT`` writes ``OUT/knowledge_base.jsonl`` and
``OUT/scenarios/hostile.json``; the test calls :func:`write_hostile_samples` on a temporary folder.
Ids, contents, labels and the scenario's texts carry Markdown (``**x**``, links, ``:red[x]``,
``$x^2$``), HTML (``<script>``, ``<img onerror>``), bidi controls, zero-width characters and a very
long id. Every fact carries its own 8-d embedding (model ``test-model``), so no model loads; the
vectors are laid out so the pipeline has anchors, a connector, two value conflicts and a fan-out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

MODEL = "test-model"
EVIL = "http://evil.example"

#: hostile ids, by role (the e2e test looks for them on the pages)
MD_ID = f"**bold**[link]({EVIL}/id):red[x]$x^2$"
HTML_ID = "<img src=x onerror=alert('id')>"
BIDI_ID = "rtl\u202eevil\u202c-id\u2066iso\u2069"
ZW_ID = "zero\u200bwidth\u2060id"
LONG_ID = "long-" + "0123456789abcdef" * 18 + "-end"
HOSTILE_IDS = (MD_ID, HTML_ID, BIDI_ID, ZW_ID, LONG_ID)

#: strings that must never become live markup anywhere
SCRIPT = "<script>alert('c1')</script>"
IMG = "<img src=x onerror=alert('c2')>"


def _unit(v: np.ndarray) -> list[float]:
    return [round(float(x), 6) for x in v / np.linalg.norm(v)]


def facts() -> list[dict]:
    rng = np.random.default_rng(27)
    topics = np.eye(8)[:3] * 3 + rng.normal(scale=0.2, size=(3, 8))
    t0, t1, t2 = topics
    near = lambda base, s=0.05: base + rng.normal(scale=s, size=8)  # noqa: E731
    rows = [
        # a value conflict between two hostile ids (near-identical vectors, different port)
        (
            MD_ID,
            f"The etcd default client port is 2379 {SCRIPT} {IMG} [click]({EVIL}/c) :red[alarm] $x^2$",
            "official_documentation",
            near(t0, 0.01),
        ),
        (
            HTML_ID,
            f"The etcd default client port is 4001 {SCRIPT} {IMG} [click]({EVIL}/c) :red[alarm] $x^2$",
            "community",
            near(t0, 0.01),
        ),
        # a second conflict: the long id and the zero-width id
        (LONG_ID, "The etcd peer port is 2380, used between members.", "official_documentation", near(t1, 0.01)),
        (ZW_ID, "The etcd peer port is 7001, used between members.", "web", near(t1, 0.01)),
        # bidi controls in the id and the content; a connector between the topics
        (
            BIDI_ID,
            "Bridge: reversed \u202etext here\u202c and isolate \u2066inside\u2069 with zero\u200bwidth; "
            f"[x]({EVIL}/b) $y^3$",
            "internal",
            (t0 + t1) / 2,
        ),
    ]
    words = (
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
        "mike",
        "november",
        "oscar",
    )
    for i, w in enumerate(words):
        base = (t0, t1, t2)[i % 3]
        rows.append(
            (
                f"f{i:02d}",
                f"Filler fact {w}: the {w} service keeps its own logs and notes.",
                ("news", "regulatory", "web")[i % 3],
                near(base, 0.4),
            )
        )
    return [
        {
            "fact_id": fid,
            "content": text,
            "source_type": stype,
            "ingested_at": "2026-01-01T00:00:00Z",
            "embedding": _unit(vec),
            "embedding_model": MODEL,
        }
        for fid, text, stype, vec in rows
    ]


def scenario() -> dict:
    rng = np.random.default_rng(27)
    topics = np.eye(8)[:3] * 3 + rng.normal(scale=0.2, size=(3, 8))
    return {
        "name": "hostile",
        "description": f"hostile scenario **desc** {SCRIPT} [d]({EVIL}/d) \u202eRTL",
        "query": {"text": f"etcd ports? **q** [q]({EVIL}/q) $q^2$ \u202eq", "embedding": _unit(topics[0] + topics[1])},
        "now": "2026-03-01T00:00:00Z",
        "sub_queries": [
            {"id": "sq1", "text": f"client port {IMG}", "label": "**lbl**:red[r]\u202e", "embedding": _unit(topics[0])},
            {
                "id": "sq2",
                "text": "peer port [p](http://evil.example/p)",
                "label": "<b>peer</b>",
                "embedding": _unit(topics[1]),
            },
            {"id": "sq3", "text": "other services", "embedding": _unit(topics[2])},
        ],
        "addressed": [],
        "prior_outputs": [],
        "fanout_width": 2,
        "embedding_model": MODEL,
    }


def write_hostile_samples(d: Path) -> Path:
    """Write the folder (``knowledge_base.jsonl`` + ``scenarios/hostile.json``) into ``d``."""
    (d / "scenarios").mkdir(parents=True, exist_ok=True)
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for r in facts():
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    (d / "scenarios" / "hostile.json").write_text(
        json.dumps(scenario(), ensure_ascii=False, indent=1), encoding="utf-8"
    )
    return d


if __name__ == "__main__":
    print(write_hostile_samples(Path(sys.argv[1] if len(sys.argv) > 1 else "hostile_samples")))

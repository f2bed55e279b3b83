"""A small fan-out world (3 topics, 2 sub-queries each, 6-d), shared by the Fan-out view tests and the
before / after story."""

from __future__ import annotations

import numpy as np

from tests.support.factories import fact

DIM = 6


def topic_vectors():
    rng = np.random.default_rng(3)
    topics = np.eye(DIM)[:3]
    facts, vecs = [], []
    for t in range(3):
        for j in range(6):
            facts.append(
                fact(f"t{t}-{j}", f"topic {t} fact {j} <script>x</script>", modified_at="2026-01-01T00:00:00Z")
            )
            vecs.append(topics[t] + 0.2 * rng.normal(size=DIM))
    subs = [(f"s{t}{k}", topics[t] + 0.05 * rng.normal(size=DIM)) for t in range(3) for k in "ab"]
    return facts, np.asarray(vecs), subs, topics

"""The good CKF corpus (``GOOD``: tests/data/good), the comparison that ignores line numbers
(``strip_line``) and the Hypothesis strategy of random KnowledgeBases (``kbs``), shared by the CKF
format and Parquet tests."""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime

import numpy as np
from hypothesis import strategies as st

from crp_core.config import SOURCE_TYPES, STATUSES
from crp_core.io.ckf.facts import has_visible_char
from crp_core.model import Fact, KnowledgeBase
from tests.support.paths import TEST_DATA

GOOD = os.path.join(TEST_DATA, "good")


def strip_line(kb: KnowledgeBase) -> list[Fact]:
    return [dataclasses.replace(f, line=0) for f in kb.facts]


_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).filter(lambda s: s.strip())


# ids hold no control character (Cc) and the other string fields no NUL: the loader refuses them
_id_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30).filter(
    lambda s: s.strip()
)


_label = _text.filter(lambda s: "\x00" not in s)


# content of only invisible characters (zero-width, soft hyphen) is empty to the loader
_content = _text.filter(has_visible_char)


_stamp = st.none() | st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)


_ttl = st.sampled_from([None, "none", "P30D", "P6M", "P1Y", "PT12H", "P1Y2M3DT4H5M6S", "P2W", "P0.5D"])


_meta = st.dictionaries(st.text(max_size=5), st.integers(-5, 5) | st.text(max_size=5) | st.booleans(), max_size=3)


@st.composite
def kbs(draw):
    n = draw(st.integers(1, 6))
    ids = draw(st.lists(_id_text, min_size=n, max_size=n, unique=True))
    facts = []
    for _i, fid in enumerate(ids):
        ttl = draw(_ttl)
        kind = "default" if ttl is None else ("timeless" if ttl == "none" else "explicit")
        from crp_core.io.timeparse import parse_duration_seconds

        facts.append(
            Fact(
                fact_id=fid,
                content=draw(_content),
                source_type=draw(st.sampled_from(SOURCE_TYPES)),
                status=draw(st.sampled_from(STATUSES)),
                importance_weight=draw(st.none() | st.floats(0.0, 1.0)),
                ingested_at=draw(_stamp),
                modified_at=draw(_stamp),
                ttl_kind=kind,
                ttl_seconds=None if ttl in (None, "none") else parse_duration_seconds(ttl),
                ttl_text=ttl,
                source_id=draw(st.none() | _label),
                source_location=draw(st.none() | _label),
                community_label=draw(st.none() | _label),
                metadata=draw(_meta),
            )
        )
    emb = None
    model = None
    if draw(st.booleans()):
        d = draw(st.integers(1, 5))
        # an embedding needs a direction: all-zero rows are refused by the loader
        row = st.lists(st.floats(-1e6, 1e6, width=32), min_size=d, max_size=d).filter(lambda r: any(r))
        emb = np.array(draw(st.lists(row, min_size=n, max_size=n)), dtype=np.float32)
        model = draw(_text)
    return KnowledgeBase(facts=tuple(facts), embeddings=emb, embedding_model=model)

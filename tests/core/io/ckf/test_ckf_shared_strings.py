"""Fields that repeat across facts (source type, status, TTL as written, source id, source location, community
label) are held as one string object per distinct value, in every format: a million facts from a few hundred
sources hold a few hundred strings (crp_core.io.ckf.facts.parse_fact). The values are unchanged."""

from __future__ import annotations

import csv
import io
import json

import pytest

from crp_core.io.ckf import load_ckf_bytes

SHARED = ("source_type", "status", "ttl_text", "source_id", "source_location", "community_label")


def _rows(n: int) -> list[dict[str, object]]:
    return [
        {
            "fact_id": f"f{i}",
            "content": f"The backup window of cluster {i} starts at 0{i % 10}:00",
            "source_type": ("official_documentation", "news")[i % 2],
            "status": ("ACTIVE", "STALE")[i % 2],
            "ttl": ("P6M", "P30D")[i % 2],
            "source_id": f"runbook-{i % 3}",
            "source_location": f"https://docs.example/{i % 3}",
            "community_label": "backups" if i % 2 else "restores",
        }
        for i in range(n)
    ]


def _bytes(fmt: str, rows: list[dict[str, object]]) -> bytes:
    if fmt == "jsonl":
        return "\n".join(json.dumps(r) for r in rows).encode()
    if fmt == "json":
        return json.dumps(rows).encode()
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue().encode()


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_equal_values_are_one_object_and_unchanged(fmt):
    rows = _rows(12)
    kb = load_ckf_bytes(_bytes(fmt, rows), f"kb.{fmt}")
    for name in SHARED:
        values = [getattr(f, name) for f in kb.facts]
        assert len({id(v) for v in values}) == len(set(values)), name
    assert [f.source_id for f in kb.facts] == [r["source_id"] for r in rows]
    assert [f.community_label for f in kb.facts] == [r["community_label"] for r in rows]
    assert [f.ttl_text for f in kb.facts] == [r["ttl"] for r in rows]
    assert [f.status for f in kb.facts] == [r["status"] for r in rows]
    # the ids and texts stay each fact's own
    assert len({id(f.content) for f in kb.facts}) == 12

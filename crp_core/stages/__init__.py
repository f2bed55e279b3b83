"""The six stages of the SPEC-027 §4 retrieval pipeline, one module (or package) each, in order:

1. ``candidates``      candidate gathering (HNSW top-K, relevance gate)
2. ``cdr``             CDR scoring with the recency factor
3. ``cdgr``            CDGR graph expansion (anchors, connectors, bridge value)
4. ``contradictions``  contradiction detection and Fact Authority Resolution
5. ``fanout``          parallel isolation: partitioned coverage scopes, fan-in merge and dedup
6. ``packing``         the primacy-recency envelope
"""

"""A prepared CKF: embeddings (SPEC-024 §2.5), the HNSW index (SPEC-009 §3.2) and the similarity
graph (SPEC-009 §5.2) that every pipeline stage reads."""

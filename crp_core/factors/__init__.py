"""Per-fact scoring factors shared by the stages: recency (SPEC-027 §3.2), the n-gram guard
(SPEC-024 §5) and the Coverage Set (SPEC-024 §2.1)."""

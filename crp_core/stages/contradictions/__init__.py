"""Stage 4: contradiction detection and Fact Authority Resolution (SPEC-027 §2)."""

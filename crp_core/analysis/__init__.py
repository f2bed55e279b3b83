"""Applications built on the pipeline: the whole-CKF conflict scan, sweeps, two-config comparison,
the SPEC-024-only baseline and the stakeholder HTML report."""

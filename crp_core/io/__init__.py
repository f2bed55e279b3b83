"""Reading and writing the inputs: CKF knowledge bases (docs/reference/ckf.md), scenarios (§1.2), ISO 8601."""

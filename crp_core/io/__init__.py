"""Reading and writing the inputs: CKF knowledge bases (SPEC_NOTES §1.1), scenarios (§1.2), ISO 8601."""

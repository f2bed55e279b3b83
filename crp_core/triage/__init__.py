"""Operator triage of flagged conflicts: the pure decision model and its SQLite store."""

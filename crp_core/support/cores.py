"""The cores this process's own parallel work uses by default: the index's batched queries (threads), the
embedder (threads) and the whole-CKF scan's text check (processes). The default is the machine's cores, two
at most; more is asked for explicitly (a flag or an environment variable)."""

from __future__ import annotations

import os

#: the most cores a default takes; a larger count is the caller's choice
MAX_DEFAULT_CORES = 2


def default_cores() -> int:
    """The machine's cores, between 1 and :data:`MAX_DEFAULT_CORES`."""
    return max(1, min(MAX_DEFAULT_CORES, os.cpu_count() or 1))


__all__ = ["MAX_DEFAULT_CORES", "default_cores"]

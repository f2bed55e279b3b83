"""What the contradiction detector is, as one digest: its rules (this package's source files), its lexicon
and its learned weights (``crp_core/data``). Anything persisted from the detector's verdicts (the whole-CKF
scan's checked pairs) is keyed by it, so another detector never reads verdicts it did not make."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from crp_core.support.digest import Digest

#: the detector's rules
RULES_DIR = Path(__file__).resolve().parent
#: its lexicon and learned weights
DATA_DIR = RULES_DIR.parents[1] / "data"


def _detector_files() -> list[Path]:
    rules = sorted(RULES_DIR.glob("*.py"))
    data = sorted(p for p in (DATA_DIR / "lexicon").rglob("*") if p.is_file())
    return [*rules, *data, DATA_DIR / "detector_weights.json"]


@cache
def detector_identity() -> str:
    """The digest of every file the detector reads or runs (their paths relative to the package and their
    bytes), computed once per process."""
    h = Digest()
    for path in _detector_files():
        body = path.read_bytes()
        h.update(f"{path.relative_to(DATA_DIR.parent)}\x00{len(body)}\x00").update(body)
    return h.hex(32)


__all__ = ["DATA_DIR", "RULES_DIR", "detector_identity"]

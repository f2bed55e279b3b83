"""Text checks with no CRP meaning, one home each."""

from __future__ import annotations

import unicodedata


def control_char(text: str) -> str | None:
    """The first control character (Unicode category Cc: U+0000-U+001F, U+007F-U+009F) of ``text``,
    shown as ``U+XXXX at position N``; None when there is none."""
    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Cc":
            return f"U+{ord(ch):04X} at position {i}"
    return None


def counted(k: int, word: str) -> str:
    """``k`` and ``word``, an ``s`` added unless ``k`` is 1 ("1 scenario", "3 scenarios")."""
    return f"{k} {word}{'' if k == 1 else 's'}"


def shortened(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis ``…`` as its last when it was cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"

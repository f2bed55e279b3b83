"""The detector's memos of texts and text pairs, in one register.

A function of one text (its tokens, its clauses, its segments...) or of two (``values_conflict``) is
memoised with :func:`text_memo`: a bounded ``functools.lru_cache`` that the register also holds, so
:func:`forget_texts` empties every one of them at once. A text-check worker of the whole-CKF scan
forgets them after each chunk (``crp_core.analysis.scan_check``): what it holds stays bounded by one
chunk's texts however many chunks it checks. A word's stem is memoised here too: hostile or generated text
has no bounded vocabulary. The only other memos of the package take no argument (the shipped weights, the
detector's identity): constants, not registered.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


class _Memo(Protocol):
    def cache_clear(self) -> None: ...

    def cache_info(self) -> Any: ...


#: every memo made by :func:`text_memo`, in the order the modules defining them were imported
_REGISTER: list[_Memo] = []

#: entries of a memo of one text (a pair memo takes twice as many)
TEXT_MEMO_SIZE = 65536


def text_memo(maxsize: int = TEXT_MEMO_SIZE) -> Callable[[_F], _F]:
    """``functools.lru_cache(maxsize)`` of a function of texts, registered for :func:`forget_texts`."""

    def register(fn: _F) -> _F:
        memo = lru_cache(maxsize=maxsize)(fn)
        _REGISTER.append(memo)
        return memo  # type: ignore[return-value]  # the lru_cache wrapper calls as ``fn`` does

    return register


def forget_texts() -> None:
    """Empty every registered memo (what a worker does between chunks)."""
    for memo in _REGISTER:
        memo.cache_clear()


def memo_sizes() -> tuple[int, ...]:
    """The entries each registered memo holds now (one per memo of the modules imported so far)."""
    return tuple(int(memo.cache_info().currsize) for memo in _REGISTER)

"""Content digests: SHA-256 over parts fed in order, text as UTF-8.

The one home of the library's hashing: cache keys (embedding cache rows, persisted indexes, token
counts, partitions, ONNX exports) and fingerprints (a knowledge base's, a vector set's) are all
SHA-256 digests built here, so a key is one function of its content on every machine. A caller
that needs a separator or a length prefix between parts feeds it as a part: the digest of
``("ab", "c")`` is the digest of ``"abc"``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from itertools import islice
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Part", "Digest", "array_part", "content_digest", "content_digest_bytes", "file_digest"]

#: what a digest is fed: bytes (or any contiguous buffer: a numpy array's memoryview) or text (as UTF-8)
Part = bytes | bytearray | memoryview | str

_CHUNK = 1 << 20

#: text rows joined into one part by :meth:`Digest.update_rows`
ROWS_PER_PART = 1024


def array_part(a: np.ndarray) -> Part:
    """The bytes of a C-contiguous array in row order as a digest part, without a copy of them (its buffer)."""
    return a.reshape(-1).view("uint8").data if a.size else b""


class Digest:
    """A SHA-256 fed part by part (a digest over many rows, or over files read in chunks)."""

    __slots__ = ("_h",)

    def __init__(self, *parts: Part) -> None:
        self._h = hashlib.sha256()
        for part in parts:
            self.update(part)

    def update(self, part: Part) -> Digest:
        """Feed ``part`` (text as UTF-8); returns the digest, for chaining."""
        self._h.update(part.encode("utf-8") if isinstance(part, str) else part)
        return self

    def update_rows(self, rows: Iterable[str], errors: str = "strict") -> Digest:
        """Feed text rows in order as UTF-8 (``errors`` as ``str.encode``'s), :data:`ROWS_PER_PART` rows joined
        per part: the digest of their concatenation (UTF-8 of a concatenation is the concatenation of the
        parts' UTF-8), without a call per row."""
        it = iter(rows)
        while part := list(islice(it, ROWS_PER_PART)):
            self._h.update("".join(part).encode("utf-8", errors))
        return self

    def hex(self, length: int | None = None) -> str:
        """The digest in hex digits (its first ``length`` when given)."""
        out = self._h.hexdigest()
        return out if length is None else out[:length]

    def raw(self) -> bytes:
        """The digest's 32 bytes."""
        return self._h.digest()


def content_digest(*parts: Part, length: int | None = None) -> str:
    """The hex SHA-256 of ``parts`` fed in order (its first ``length`` hex digits when given)."""
    return Digest(*parts).hex(length)


def content_digest_bytes(*parts: Part) -> bytes:
    """The SHA-256 of ``parts`` fed in order, as 32 bytes (a compact key)."""
    return Digest(*parts).raw()


def file_digest(*paths: str | os.PathLike[str]) -> str:
    """The hex SHA-256 of the files' bytes, one after the other, read in chunks."""
    d = Digest()
    for path in paths:
        with open(path, "rb") as fh:
            while block := fh.read(_CHUNK):
                d.update(block)
    return d.hex()

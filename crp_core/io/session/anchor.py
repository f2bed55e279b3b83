"""The anchor the SDK writes beside a closed session's trail (``<trail>.anchor.json``): the number of
entries and the Merkle root over their ``entry_hash`` values, so a trail cut at its tail (which its
chain cannot show) differs from its anchor (docs/reference/sessions.md#the-anchor).

The root is the SDK's scheme as its anchor files record it: leaves are the entry hashes, an inner node
is the SHA-256 of its two children's raw digests, and a node left without a partner on a level moves
up unchanged. :class:`MerkleRoot` builds it while the entries stream by, keeping one node per level.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Literal

from crp_core.errors import ValidationError
from crp_core.support.files import read_regular_file

__all__ = ["ANCHOR_SUFFIX", "MAX_ANCHOR_BYTES", "AnchorCheck", "MerkleRoot", "anchor_path_for", "check_anchor"]

#: the SDK's anchor file is the trail's path with this suffix
ANCHOR_SUFFIX = ".anchor.json"
#: an anchor is a few hundred bytes; a larger file is not one
MAX_ANCHOR_BYTES = 64 * 1024


class MerkleRoot:
    """The Merkle root of the leaves added so far, in O(log n) memory: ``nodes`` holds, per level from
    the highest, the root of each complete run of 2**level leaves not yet paired."""

    __slots__ = ("nodes", "count", "valid")

    def __init__(self) -> None:
        self.nodes: list[tuple[int, bytes]] = []
        self.count = 0
        self.valid = True  # False once a leaf was not a hex digest (the root is then unknown)

    def add(self, leaf_hex: str) -> None:
        self.count += 1
        try:
            node = (0, bytes.fromhex(leaf_hex))
        except ValueError:
            self.valid = False
            return
        while self.nodes and self.nodes[-1][0] == node[0]:
            level, left = self.nodes.pop()
            node = (level + 1, hashlib.sha256(left + node[1]).digest())
        self.nodes.append(node)

    def root(self) -> str:
        """The root (hex); ``""`` for no leaf. Unpaired runs join from the right, as the level-by-level
        build that moves a lone node up unchanged joins them."""
        if not self.valid or not self.nodes:
            return ""
        acc = self.nodes[-1][1]
        for _level, left in reversed(self.nodes[:-1]):
            acc = hashlib.sha256(left + acc).digest()
        return acc.hex()


@dataclass(frozen=True)
class AnchorCheck:
    """The trail against its anchor: ``matches`` (the same entry count and root), ``differs`` or
    ``unreadable`` (the anchor file could not be read; ``message`` says why)."""

    path: str
    verdict: Literal["matches", "differs", "unreadable"]
    message: str
    entry_count: int | None  # the anchor's
    root_hash: str  # the anchor's ("" when unreadable)
    anchored_at: str  # the anchor's ISO time, as written
    signed: bool  # the anchor carries an Ed25519 signature (not verified here)
    entries_read: int  # chain entries in the trail
    root_read: str  # the root of the trail's entry hashes


def anchor_path_for(trail: str | os.PathLike[str]) -> str:
    """The anchor file the SDK writes for ``trail``."""
    return os.fspath(trail) + ANCHOR_SUFFIX


def check_anchor(path: str, entries_read: int, root_read: str) -> AnchorCheck:
    """Read the anchor at ``path`` and compare it with the trail's entry count and root."""

    def unreadable(why: str) -> AnchorCheck:
        return AnchorCheck(path, "unreadable", f"anchor {path}: {why}", None, "", "", False, entries_read, root_read)

    try:
        raw = read_regular_file(path, max_bytes=MAX_ANCHOR_BYTES, what="audit anchor")
        doc = json.loads(raw.decode("utf-8"))
    except ValidationError as exc:
        return unreadable(exc.problems[0].message if exc.problems else str(exc))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return unreadable(f"not a JSON anchor ({type(exc).__name__})")
    if not isinstance(doc, dict):
        return unreadable("not a JSON object")
    count, root = doc.get("entry_count"), doc.get("root_hash")
    if not isinstance(count, int) or isinstance(count, bool) or not isinstance(root, str):
        return unreadable("entry_count (a number) or root_hash (a string) missing")
    at = doc.get("anchored_at")
    signed = bool(doc.get("signature"))
    if count == entries_read and root == root_read:
        return AnchorCheck(
            path,
            "matches",
            f"the trail's {entries_read} entries are those the anchor commits to",
            count,
            root,
            str(at or ""),
            signed,
            entries_read,
            root_read,
        )
    if count > entries_read:
        why = (
            f"the anchor commits to {count} entries, the trail has {entries_read}: "
            "entries were removed after the anchor was written"
        )
    elif count < entries_read:
        why = (
            f"the anchor commits to {count} entries, the trail has {entries_read}: entries were added after the anchor"
        )
    else:
        why = f"the same {count} entries, another Merkle root: an entry_hash was rewritten or the entries reordered"
    return AnchorCheck(path, "differs", why, count, root, str(at or ""), signed, entries_read, root_read)

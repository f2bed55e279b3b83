"""crprotocol session audit trails (``<session>.audit.jsonl``), read line by line in bounded memory
(docs/reference/sessions.md): the hash chain re-checked (:mod:`.chain`), the anchor beside the trail
compared (:mod:`.anchor`), the session's windows gathered (:mod:`.windows`), by :func:`read_audit`
(:mod:`.trail`)."""

from crp_core.io.session.anchor import AnchorCheck, MerkleRoot, anchor_path_for, check_anchor
from crp_core.io.session.chain import ChainBreak, ChainReport, ForeignEntry, SequenceGap, entry_hash
from crp_core.io.session.trail import MAX_LINE_BYTES, AuditTrail, UnknownEvent, read_audit
from crp_core.io.session.windows import AuditWindow, ExtractedEntry, PackedEntry, SdkFinding

__all__ = [
    "MAX_LINE_BYTES",
    "AnchorCheck",
    "AuditTrail",
    "AuditWindow",
    "ChainBreak",
    "ChainReport",
    "ExtractedEntry",
    "ForeignEntry",
    "MerkleRoot",
    "PackedEntry",
    "SdkFinding",
    "SequenceGap",
    "UnknownEvent",
    "anchor_path_for",
    "check_anchor",
    "entry_hash",
    "read_audit",
]

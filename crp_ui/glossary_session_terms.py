"""The glossary's entries for crprotocol sessions (the Session page), as plain tuples
``(name, short, definition, cite, aliases)``: :mod:`crp_ui.glossary_terms` makes them terms. Static
text written here (no data), safe to render as Markdown."""

from __future__ import annotations

_CITE = "docs/decisions/sdk-sessions.md; docs/reference/sessions.md"

SESSION_TERMS: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    (
        "audit chain",
        "The SDK's audit trail as a hash chain: each entry hashes its content and links to the one before.",
        "Each line of a session's audit trail carries the SHA-256 of its event, time, session, data and sequence, "
        "and the hash of the entry before. crp-inspect recomputes both for every entry, and checks that the "
        "sequences run without a gap: an edited entry breaks at its own line, a deleted one shows as a sequence "
        "gap, a cut file as a truncated last line. The anchor file commits to the entry count and a Merkle root.",
        _CITE,
        ("chain verdict", "chain break", "audit anchor"),
    ),
    (
        "session signatures",
        "HMAC signatures and Ed25519 receipts on audit entries: counted, not verifiable here.",
        "The SDK signs each entry with a key it draws per session and never writes anywhere, so nobody outside "
        "the session can check the signature; a receipt needs the signer's public key, which the trail lacks. "
        "The page says how many there are and that none was verified.",
        _CITE,
        ("HMAC", "receipt"),
    ),
    (
        "session window",
        "One dispatch of an SDK session: the facts the SDK packed for the model, in its order, and the answer.",
        "The SDK records the facts it packed (relevance, tokens, bookends repeated at the end, compressed ones) "
        "before the model answers. The page sets that list beside SPEC-027's verdict on the same facts: "
        "contradictory pairs packed together, superseded, expired and ageing facts, near-duplicates, and the "
        "envelope SPEC-027 would pack for the window's question.",
        _CITE,
        ("bookend", "packed facts"),
    ),
    (
        "SDK finding agreement",
        "An SDK finding agrees with one of SPEC-027's when both name a common fact.",
        "The SDK judges the model's answer (omissions, distortions, fabrications); SPEC-027 judges the packed "
        "facts and the knowledge base. A finding of each naming the same fact is where the two agree; one of ours "
        "the SDK names no fact of is one it was silent on.",
        _CITE,
        ("agrees", "SDK finding"),
    ),
    (
        "write-back",
        "Facts the SDK extracted from the model's answer and stored in the knowledge base as new facts.",
        "The SDK stores what the model answered as facts with a fresh time and a confidence near 0.85-0.95. A "
        "stale answer so becomes a new, confident fact that can contradict the documentation, revive a value the "
        "SDK had superseded, and be packed again in the next window: contamination.",
        _CITE,
        ("written back", "write-back contamination"),
    ),
    (
        "quarantine",
        "An operator's status mark QUARANTINED: the fact is never retrieved again, and stays in the CKF.",
        "Recorded like every operator decision in the triage database, with the operator's name and a note; "
        "every page's run applies it. The Session page records one for each fact a session wrote back.",
        "docs/decisions/triage.md; " + _CITE,
        ("quarantined",),
    ),
)

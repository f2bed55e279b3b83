"""The Session page in a real browser (1400x900): the knowledge base a crprotocol session started from
(tests/data/sdk_sessions/kb.json) and its source-type mapping uploaded through the sidebar, then on the
page the session's audit trail with its transcripts and its closing snapshot: the chain verdict, the
contradictory pair the SDK packed together with SPEC-027's arbitration, the SPEC-027 envelope beside the
SDK's, the write-back contradicting the knowledge base and its quarantine; a tampered trail uploaded next
breaks at its line. Screenshots in ``$CRP_E2E_SCREENSHOTS`` (``session-*.png``)."""

from __future__ import annotations

from tests.support.audit_trails import KB, MAPPING, SESSIONS
from tests.support.browser import assert_no_exception, main_text, open_page, screenshot, wait_idle
from tests.support.e2e_conflicts import until

TEL = "ead1dece-38bb-46f7-a5d8-8b96083b781f"  # "Anonymous usage telemetry is now enabled by default."


def _uploader(scope, label: str):
    """The file input of the uploader whose label starts with ``label``."""
    box = scope.get_by_test_id("stFileUploader").filter(has_text=label)
    return box.first.locator('input[type="file"]')


def _upload_kb(page) -> None:
    """kb.json as the sidebar's CKF (embedded in the background), then mapping.toml."""
    side = page.get_by_test_id("stSidebar")
    _uploader(side, "…or upload a CKF").set_input_files(str(KB))
    until(page, lambda: "Active: kb.json" in side.inner_text(), "kb.json to become active", 240_000)
    wait_idle(page)
    side.get_by_text("SDK snapshot: source-type mapping").first.click()
    _uploader(side, "Mapping (TOML").set_input_files(str(MAPPING))
    until(page, lambda: "In force: mapping.toml" in side.inner_text(), "the mapping to be in force", 120_000)
    wait_idle(page)
    assert_no_exception(page)


def test_session_page_verdict_pair_envelope_writeback(page):
    open_page(page, "/session")
    main = page.get_by_test_id("stMain")
    assert "Upload a crprotocol session's audit trail above" in main_text(page)
    _upload_kb(page)
    _uploader(main, "Audit trail").set_input_files(
        [str(SESSIONS / "contradicting.bundle.jsonl"), str(SESSIONS / "contradicting.audit.jsonl.anchor.json")]
    )
    until(page, lambda: "Loaded: contradicting.bundle.jsonl" in main_text(page), "the trail to be read", 120_000)
    wait_idle(page)
    _uploader(main, "The session's closing snapshot").set_input_files(str(SESSIONS / "contradicting.closing.json"))
    until(page, lambda: "Write-back contamination" in main_text(page), "the session's analysis", 240_000)
    wait_idle(page)
    assert_no_exception(page)
    text = main_text(page)
    # the bundle adds transcript lines after the 51 chain entries: the chain itself is intact
    assert "Chain intact: 51 entries checked (sequences 0–50)" in text
    assert "Anchor matches: the trail's 51 entries are those the anchor commits to." in text
    assert "kb-tel-off ↔ kb-tel-on · NEGATION_FLIP" in text
    assert "SPEC-027 keeps kb-tel-off (authority 0.640 vs 0.135)" in text
    assert "Is anonymous telemetry enabled by default? Answer from the stale notes." in text
    assert "SPEC-027 packs" in text and "packed by both" in text
    assert "Quarantine what the session wrote (4 fact(s))" in text
    screenshot(page, "session-top", full_page=False)
    screenshot(page, "session-full")
    main.get_by_text("SPEC-027's verdict on the same set", exact=True).scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    screenshot(page, "session-pair", full_page=False)
    # the write-back block: the fact the session wrote, what it contradicts, its quarantine
    wb = main.get_by_text("Write-back contamination", exact=True)
    wb.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    screenshot(page, "session-writeback", full_page=False)
    text = main_text(page)
    assert f"window 1 wrote {TEL}, SDK confidence 0.85: Anonymous usage telemetry is now enabled by default." in text
    assert "contradicts kb-tel-off (official_documentation, ACTIVE): Anonymous usage telemetry is disabled" in text
    assert "arbitration NEGATION_FLIP: kb-tel-off (SPEC-027 keeps kb-tel-off: authority 0.640 vs 0.350)" in text

    # the quarantine: the operator's name from the sidebar, one click, every fact marked
    op = page.get_by_role("textbox", name="Operator name")
    op.fill("ada")
    op.press("Enter")
    button = main.get_by_role("button", name="Quarantine what the session wrote (4 fact(s))")
    until(page, button.is_enabled, "the quarantine button to be enabled")
    wait_idle(page)
    button.click()
    until(
        page,
        lambda: "4 fact(s) the session wrote marked QUARANTINED (by ada)" in main_text(page),
        "the quarantine to be recorded",
    )
    wait_idle(page)
    assert_no_exception(page)
    assert "Everything the session wrote is quarantined" in main_text(page)
    main.get_by_text("Write-back contamination", exact=True).scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    screenshot(page, "session-quarantined", full_page=False)

    # a tampered trail next: broken at line 3, and the page keeps the knowledge base
    _uploader(main, "Audit trail").set_input_files(
        [str(SESSIONS / "tampered.audit.jsonl"), str(SESSIONS / "tampered.audit.jsonl.anchor.json")]
    )
    until(page, lambda: "Chain broken" in main_text(page), "the tampered trail's verdict", 240_000)
    wait_idle(page)
    assert_no_exception(page)
    text = main_text(page)
    assert "First break: line 3 (sequence 2): the entry does not hash to its entry_hash" in text
    # the closing snapshot of the contradicting session stays loaded: the page says it does not match
    assert "4 fact(s) were written by window(s) this trail does not record" in text
    main.get_by_text("Chain verdict", exact=True).scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    screenshot(page, "session-tampered", full_page=False)

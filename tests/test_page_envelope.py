"""Envelope page: packed order, bands, connectors next to the anchors they bridge, NOTE blocks,
tokens, downloads."""
from __future__ import annotations

from page_support import expected_result, frame_with, metric, run_page, write_bridge_sample


def test_envelope_order_tokens_and_note_block(ui_env):
    exp = expected_result(ui_env)
    at = run_page("envelope")
    table = frame_with(at, "position", "band", "tier", "tokens")
    assert list(table["fact_id"]) == [p.fact_id for p in exp.envelope.order]
    assert list(table["band"]) == [p.band for p in exp.envelope.order]
    assert list(table["tokens"]) == [p.tokens for p in exp.envelope.order]
    assert metric(at, f"tokens (budget {exp.envelope.token_budget})") == str(exp.envelope.tokens_used)
    assert metric(at, "NOTE blocks (ties)") == str(len(exp.envelope.notes))
    assert exp.envelope.notes, "the synthetic sample has one tied conflict"
    codes = [c.value for c in at.code]
    for note in exp.envelope.notes:
        assert note in codes  # shown on its own, right after the later fact of the tied pair
    assert exp.envelope.text in codes  # the exact envelope text
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download JSON report" in labels and "Download breakdown CSV" in labels
    assert [s.value for s in at.subheader][:1] == ["Primacy band (start)"]


def test_connector_is_shown_with_its_anchor(tmp_path, monkeypatch):
    d = write_bridge_sample(tmp_path / "samples")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    exp = expected_result(d)
    at = run_page("envelope")
    table = frame_with(at, "position", "band", "tier", "tokens")
    # A1 and A2 are the anchors (tied CDR): the primacy block (positions 1-2); C, the connector
    # bridging them, follows that block (SPEC_NOTES §2.8)
    assert list(table["fact_id"]) == [p.fact_id for p in exp.envelope.order] == ["A1", "A2", "C"]
    assert table.loc[table["fact_id"] == "C", "bridges_anchor"].iloc[0] == "A1"
    assert any("connector bridging anchor A1" in c.value for c in at.caption)
    assert metric(at, "connectors") == "1"

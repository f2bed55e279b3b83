"""The crprotocol SDK's provenance of a fact on screen (crp_ui.provenance): on both sides of a Conflicts pair
card, on the Score breakdown's selected fact and on the Graph's selected fact, for a snapshot crprotocol
6.2.5 wrote (tests/support/sdk_pages.py); absent for a plain CKF; inert for hostile values."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from crp_ui import glossary
from tests.support.conflicts_page import QUEUE, show_tab, unmd
from tests.support.conflicts_page import K as CONFLICTS
from tests.support.pages import run_page, widget, write_bridge_sample
from tests.support.sdk_pages import SDK, ready_page, sdk_samples, upload_map

#: the captions the SDK facts of supersessions.json get (Markdown escapes removed)
SHOWN = {
    "f-rate-new": "SDK · window `chat-002` · category policy · confidence 0.55 · tier 2 (warm) · "
    "extraction stage 6 (LLM-assisted)",
    "f-rate-old": "SDK · window `win-001` · category policy · confidence 0.81 · tier 2 (warm) · "
    "extraction stage 1 (regex)  \nsuperseded by `f-rate-new`",
    "f-port-new": "SDK · window `win-002` · category config · confidence 0.88 · tier 2 (warm) · "
    "extraction stage 2 (statistical)",
    "f-backup": "SDK · window `win-001` · category ops · confidence 0.9 · tier 2 (warm) · extraction stage 1 (regex)",
    "f-retention": "SDK · window `chat-002` · category ops · confidence 0.5 · tier 2 (warm) · "
    "extraction stage 6 (LLM-assisted)",
}


@pytest.fixture
def sdk_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return sdk_samples(tmp_path, monkeypatch)


def _sdk_captions(at: AppTest) -> list[str]:
    """The SDK provenance captions of the page, Markdown escapes removed, in page order."""
    return [unmd(c.value) for c in at.caption if c.value.startswith("SDK ·")]


def test_pair_card_shows_both_facts_provenance(sdk_env):
    at = show_tab(ready_page("conflicts"), QUEUE)
    at.selectbox(key=CONFLICTS + "pair").set_value("f-rate-new|f-rate-old").run()
    assert not at.exception
    assert _sdk_captions(at) == [SHOWN["f-rate-new"], SHOWN["f-rate-old"]]  # A, then B
    (cap,) = [c for c in at.caption if c.value.startswith("SDK ·") and "chat" in c.value]
    assert cap.proto.help == glossary.help("SDK provenance")


def test_breakdown_selected_fact_shows_its_provenance(sdk_env):
    at = ready_page("breakdown", {"fact": "f-rate-old"})
    assert widget(at, "selectbox", "crp.page.breakdown.pick.").value == "f-rate-old"
    assert _sdk_captions(at) == [SHOWN["f-rate-old"]]
    widget(at, "selectbox", "crp.page.breakdown.pick.").set_value("f-port-new").run()
    assert _sdk_captions(at) == [SHOWN["f-port-new"]]


def test_graph_selected_fact_shows_its_provenance(sdk_env):
    at = ready_page("graph")
    assert _sdk_captions(at) == []  # nothing selected
    at = ready_page("graph", {"fact": "f-backup"})  # a connector
    assert "Selected connector" in [h.value for h in at.subheader]
    assert _sdk_captions(at) == [SHOWN["f-backup"]]
    at = ready_page("graph", {"fact": "f-retention"})  # an anchor
    subheaders = [h.value for h in at.subheader]
    assert "Selected fact" in subheaders and "Selected connector" not in subheaders
    assert any(unmd(c.value).startswith("anchor · CDR score ") for c in at.caption)
    assert _sdk_captions(at) == [SHOWN["f-retention"]]


def test_plain_ckf_shows_no_provenance(triage_env):
    at = show_tab(run_page("conflicts"), QUEUE)
    assert any("crp-fact-text" in h.value for h in at.html)  # the pair card is drawn
    assert _sdk_captions(at) == []
    at = run_page("breakdown", params={"fact": "E1"})
    assert widget(at, "selectbox", "crp.page.breakdown.pick.").value == "E1"
    assert _sdk_captions(at) == []


def test_plain_graph_selected_fact_shows_no_provenance(tmp_path, monkeypatch):
    d = write_bridge_sample(tmp_path / "samples")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    at = run_page("graph", params={"fact": "C"})
    assert "Selected connector" in [h.value for h in at.subheader]
    assert _sdk_captions(at) == []


def test_hostile_provenance_is_inert(tmp_path, monkeypatch):
    """A CKF exported from the snapshot, its metadata edited: markup, a backtick run, a bidi control and a
    long id in the SDK fields, a confidence of the wrong type. Code spans and escaped text, the wrong type
    named, the long id cut."""
    rows = [json.loads(line) for line in _export_lines()]
    (meta,) = [r["metadata"] for r in rows if r["fact_id"] == "f-rate-new"]
    meta["source_window_id"] = "<img src=x onerror=alert(1)>``[x](http://evil.example)\u202e" + "w" * 100
    meta["category"] = "**bold** <b>x</b> :red[y]"
    meta["confidence"] = "0.99"
    sdk_samples(tmp_path, monkeypatch, ("kb.jsonl", "".join(json.dumps(r) + "\n" for r in rows)))
    at = ready_page("breakdown", {"fact": "f-rate-new"})
    (cap,) = [c.value for c in at.caption if c.value.startswith("SDK ·")]
    assert "\u202e" not in cap and "⟨U+202E⟩" in cap
    # the window id in a code span fenced longer than its backtick run, cut to 60 characters
    m = re.search(r"window (`{3,})(.*?)\1", cap)
    assert m is not None and m.group(2).startswith("<img src=x") and m.group(2).endswith("…")
    assert len(m.group(2)) == 60 + len("⟨U+202E⟩") - 1
    rest = cap[: m.start()] + cap[m.end() :]
    assert re.search(r"(?<!\\)[<*\[\]]", rest) is None  # every <, *, [ and ] outside the code span escaped
    assert "category \\*\\*bold\\*\\* \\<b\\>x\\<\\/b\\> \\:red\\[y\\]" in rest
    assert unmd(rest).endswith("extraction stage 6 (LLM-assisted)  \nwrong type, ignored: confidence")
    assert "0.99" not in unmd(rest)


def _export_lines() -> list[str]:
    """supersessions.json written as a JSONL CKF (what import-sdk writes), one line per fact."""
    import tempfile

    from crp_core import load_ckf, write_ckf

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kb.jsonl"
        write_ckf(load_ckf(str(SDK / "supersessions.json")), str(out))
        return out.read_text(encoding="utf-8").splitlines()


def test_the_selected_fact_follows_a_mapping_upload(sdk_env):
    """A mapping changes the facts' source types, not their texts nor vectors: the run and its fact card are
    the new ones (the pipeline result is keyed by every fact field)."""
    at = ready_page("breakdown", {"fact": "f-rate-old"})
    (head,) = [m.value for m in at.markdown if m.value.startswith("`f-rate-old` ")]
    assert ":blue-badge[unverified]" in head
    at = upload_map(at, "mapping.toml", (SDK / "mapping.toml").read_bytes())
    widget(at, "selectbox", "crp.page.breakdown.pick.").set_value("f-rate-old").run()
    (head,) = [m.value for m in at.markdown if m.value.startswith("`f-rate-old` ")]
    assert ":blue-badge[official\\_documentation]" in head
    assert _sdk_captions(at) == [SHOWN["f-rate-old"]]

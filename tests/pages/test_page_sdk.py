"""The dashboard on a crprotocol SDK snapshot (docs/decisions/sdk-snapshots.md): the Graph draws the
snapshot's given edges, the Conflicts queue says per pair whether SPEC-027 agrees with its superseded_by.

The snapshot carries no vectors of ours: a hashing bag-of-words embedder stands in for MiniLM (the page
logic is what is tested; ``test_sdk_agreement`` runs the real model)."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from crp_ui import cache
from tests.support.embedders import HashingEmbedder
from tests.support.pages import figures, frame_with, run_page
from tests.support.paths import REPO_ROOT, TEST_DATA
from tests.support.sdk_pages import settle

SDK = TEST_DATA / "sdk"


@pytest.fixture
def sdk_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "samples"
    (d / "scenarios").mkdir(parents=True)
    shutil.copy(SDK / "supersessions.json", d / "supersessions.json")
    scen = {
        "name": "sdk",
        "query": {"text": "etcd client port, api gateway rate limit, nightly backup snapshots"},
        "now": "2026-06-01T00:00:00Z",
        "config": {"cdr_min_relevance": -1.0, "envelope_fact_budget": 9, "graph_edge_min": 0.0},
    }
    (d / "scenarios" / "sdk.json").write_text(json.dumps(scen), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", HashingEmbedder("test-hashing", 64))
    return d


def _ready(page: str) -> AppTest:
    """The page once the background embedding of the snapshot finished."""
    return settle(run_page(page))


def test_graph_draws_the_given_edges(sdk_env):
    at = _ready("graph")
    (fig,) = [f for f in figures(at) if f["layout"]["title"]["text"].startswith("CDGR")]
    (line,) = [t for t in fig["data"] if t.get("name") == "given edge (SDK snapshot)"]
    assert line["line"]["dash"] == "dashdot"
    (hover,) = [t for t in fig["data"] if t.get("name") == "given edge relation"]
    texts = sorted(hover["hovertext"])
    assert "given edge f-backup → f-restore<br>ELABORATION · confidence 0.80" in texts
    assert "given edge f-retention → f-backup<br>CONTRAST · confidence 0.60" in texts
    given = frame_with(at, "a", "b", "relation_type", "confidence", "drawn")
    assert sorted(zip(given["edge_id"], given["relation_type"])) == [
        ("e-1", "ELABORATION"),
        ("e-2", "CONTRAST"),
        ("e-3", "SUPERSEDES"),
        ("e-4", "RELATED"),
    ]
    assert len(texts) == int(given["drawn"].sum())


def test_conflicts_queue_shows_sdk_agreement(sdk_env):
    at = _ready("conflicts")
    frame = frame_with(at, "A", "B", "arbitration")
    assert "sdk" in frame.columns
    by_pair = {frozenset((a, b)): v for a, b, v in zip(frame["fact_a"], frame["fact_b"], frame["sdk"])}
    # the rate-limit pair: the SDK superseded f-rate-old by f-rate-new. As loaded SPEC-027 keeps f-rate-new
    # (the other is STALE: stale floor); on its own both are unverified and fresh: 0.7 * 1.0 * 0.5 each, a tie
    assert by_pair[frozenset(("f-rate-new", "f-rate-old"))] == "SDK: disagrees (as loaded: agrees)"
    if frozenset(("f-port-new", "f-port-old")) in by_pair:
        assert by_pair[frozenset(("f-port-new", "f-port-old"))] == "SDK silent"
    # the ownership pair (the SDK superseded f-owner-old by f-owner-new) when the scan pairs it: the same tie
    owner = by_pair.get(frozenset(("f-owner-new", "f-owner-old")))
    assert owner in (None, "SDK: disagrees (as loaded: agrees)")
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    n_silent = list(frame["sdk"]).count("SDK silent")
    n_sdk = 1 + (owner is not None)
    assert (
        f"SPEC-027 on its own (the SDK's STALE read as ACTIVE): 0 agree · {n_sdk} disagree · {n_silent} SDK silent "
        f"— as loaded (STALE in force, stale-floor recency): {n_sdk} agree · 0 disagree"
    ) in captions


def test_sidebar_uploader_takes_a_snapshot(sdk_env):
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120)
    at.run()
    up = at.sidebar.get("file_uploader")[0]
    assert "json" in up.proto.type or ".json" in up.proto.type
    up.upload("deployment.json", (SDK / "plain.json").read_bytes(), "application/json")
    at.run()
    end = time.monotonic() + 60
    while at.session_state["crp.ckf_label"] != "deployment.json (uploaded)" and time.monotonic() < end:
        time.sleep(0.2)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    kb = at.session_state["crp.kb"]
    assert kb.fmt == "sdk" and len(kb) == 4 and kb.imported.integrity == "ok"


# ---- the mapping upload, the disagreement, the import summary -----------------------------------------
@pytest.fixture
def dis_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A samples folder with disagreement.json (written by the SDK) and a scenario at the SDK's clock."""
    d = tmp_path / "samples"
    (d / "scenarios").mkdir(parents=True)
    shutil.copy(SDK / "disagreement.json", d / "disagreement.json")
    scen = {
        "name": "dis",
        "query": {"text": "how long are audit logs of customer accounts kept"},
        "now": "2026-05-28T20:26:40Z",
        "config": {"cdr_min_relevance": -1.0},
    }
    (d / "scenarios" / "dis.json").write_text(json.dumps(scen), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", HashingEmbedder("test-hashing", 64))
    return d


_settle = settle  # the background embedding of the CKF, waited for (tests/support/sdk_pages.py)


def _map_uploader(at: AppTest):
    (up,) = [u for u in at.sidebar.get("file_uploader") if str(u.proto.label).startswith("Mapping")]
    return up


def _upload_map(at: AppTest, name: str, data: bytes) -> AppTest:
    _map_uploader(at).upload(name, data, "application/toml")
    at.run()
    return _settle(at)


def test_mapping_upload_rereads_the_snapshot_and_conflicts_shows_the_disagreement(dis_env):
    """Default mapping: both facts unverified and fresh (0.7 * 1.0 * 0.5 each): a tie on its own. With
    disagreement_mapping.toml: regulatory 0.9 * 1.0 * 0.9 = 0.81 vs web 0.7 * 1.0 * 0.5 = 0.35, SPEC-027
    on its own prefers g-retention-old, which the SDK superseded: disagrees; as loaded (0.9 * 0.3 * 0.9 =
    0.243) it agrees."""
    at = _ready("conflicts")
    assert at.session_state["crp.kb"].get("g-retention-old").source_type == "unverified"
    at = _upload_map(at, "disagreement_mapping.toml", (SDK / "disagreement_mapping.toml").read_bytes())
    kb = at.session_state["crp.kb"]
    assert kb.get("g-retention-old").source_type == "regulatory" and kb.get("g-retention-new").source_type == "web"
    frame = frame_with(at, "A", "B", "arbitration")
    assert list(frame["sdk"]) == ["SDK: disagrees (as loaded: agrees)"]
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert (
        "SPEC-027 on its own (g-retention-new 0.3500 vs g-retention-old 0.8100; g-retention-old read as "
        "ACTIVE): prefers g-retention-old — SDK superseded g-retention-old by g-retention-new: disagrees"
    ) in text
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert (
        "As loaded (the SDK's STALE in force, operator decisions applied): prefers g-retention-new — SDK "
        "superseded g-retention-old by g-retention-new: agrees"
    ) in captions
    auth = frame_with(at, "fact_id", "recency_factor", "status read as")
    assert dict(zip(auth["fact_id"], auth["authority"])) == {
        "g-retention-new": 0.7 * 1.0 * 0.5,
        "g-retention-old": 0.9 * 1.0 * 0.9,
    }
    assert "In force:" in " ".join(c.value for c in at.sidebar.caption)


def test_bad_mapping_upload_is_refused_naming_the_key(dis_env):
    at = _ready("home")
    at = _upload_map(at, "bad.toml", b'[[rule]]\ncategory = "regulation"\nsource_type = "blog"\n')
    errors = " ".join(e.value for e in at.sidebar.error).replace("\\", "")
    assert "source-type mapping bad.toml refused" in errors and "rule[1].source_type" in errors
    assert "crp.sdk_map" not in at.session_state  # no mapping in force
    assert at.session_state["crp.kb"].get("g-retention-old").source_type == "unverified"


@pytest.mark.parametrize(
    "data,says",
    [
        (b"a = " + b"[" * 1000 + b"]" * 1000 + b"\n", "nested too deeply"),
        (b'[[rule]]\nsource_type = "web"\nextraction_stage = ' + b"9" * 5000 + b"\n", "more than 4300 digits"),
    ],
    ids=["nested_1000_deep", "int_5000_digits"],
)
def test_a_hostile_mapping_upload_is_refused_not_a_traceback(dis_env, data, says):
    """Issue 32: a RecursionError / ValueError of the TOML parser was the whole page as a traceback."""
    at = _ready("home")
    at = _upload_map(at, "hostile.toml", data)
    assert not at.exception
    errors = " ".join(e.value for e in at.sidebar.error).replace("\\", "")
    assert "source-type mapping hostile.toml refused" in errors and says in errors
    assert "crp.sdk_map" not in at.session_state


def test_knowledge_base_page_shows_the_import_summary(dis_env):
    at = _ready("home")
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "Import summary (crprotocol SDK snapshot)" in " ".join(h.value for h in at.subheader)
    assert "facts: 4 of 4 loaded, 1 superseded (STALE); edges: 0 of 0 kept" in text
    assert "checksum: verified (sha256)" in text
    assert "HMAC signature: none in the header (nothing to verify)" in text
    frame = frame_with(at, "kind", "what", "count")
    rows = set(zip(frame["kind"], frame["what"], frame["count"]))
    assert ("mapped", "text -> content", 4) in rows
    assert ("mapped", "superseded_by -> status STALE + metadata.superseded_by", 1) in rows
    assert ("defaulted", "source_type -> unverified (no mapping rule matched)", 4) in rows
    at = _upload_map(at, "disagreement_mapping.toml", (SDK / "disagreement_mapping.toml").read_bytes())
    frame = frame_with(at, "kind", "what", "count")
    rows = set(zip(frame["kind"], frame["what"], frame["count"]))
    assert ("mapped", "source_type -> regulatory (rule 1: category = 'regulation')", 1) in rows
    assert ("defaulted", "source_type -> internal (no mapping rule matched)", 1) in rows
    assert "the uploaded mapping" in " ".join(c.value for c in at.caption)


def test_import_summary_is_inert(tmp_path, monkeypatch):
    """A hostile session id, an unknown fact field with markup and a bidi control, and an HMAC signature:
    shown as text (escaped Markdown, visible controls in the table), the HMAC said to be unverified."""
    doc = json.loads((SDK / "disagreement.json").read_text(encoding="utf-8"))
    doc["header"]["session_id"] = "<img src=x onerror=alert(1)> **bold** [x](http://evil.example)"
    doc["header"]["hmac_signature"] = "ab" * 32
    doc["payload"]["warm_store"]["facts"]["g-region"]["<b>x</b>\u202e"] = 1
    d = tmp_path / "samples"
    (d / "scenarios").mkdir(parents=True)
    (d / "hostile.json").write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", HashingEmbedder("test-hashing", 64))
    at = _ready("home")
    md = [m.value for m in at.markdown]
    (line,) = [v for v in md if "session" in v]
    assert re.search(r"(?<!\\)[<*\[\]]", line) is None  # every <, *, [ and ] escaped
    assert "\\<img" in line and "\\*\\*bold" in line and "`http://evil.example" in line
    assert any("HMAC signature: present, NOT verified" in v.replace("\\", "") for v in md)
    kb = at.session_state["crp.kb"]
    (kept,) = [line for line in kb.imported.lines() if line.startswith("kept: ")]  # kept on kb.sdk_state
    assert "\u202e" not in kept and "\\u202e" in kept  # the loader's repr drew the control as an escape
    frame = frame_with(at, "kind", "what", "count")  # the page's table: mapped, kept, defaulted, dropped
    assert not [w for w in frame["what"] if "\u202e" in w]  # the control drawn as an escape
    # the field's name is a dataframe cell: text, never rendered as markup
    assert ["kept"] == [k for k, w in zip(frame["kind"], frame["what"]) if "<b>x</b>\\u202e" in w]


def test_sdk_view_texts_by_hand():
    """The queue cell and the pair's two lines for a tie on its own (both 0.35) that agrees as loaded."""
    from crp_core.analysis.sdk_agreement import Judgement, PairAgreement
    from crp_core.records import Authority
    from crp_ui import conflicts_view as cv

    a = Authority("new", "unverified", 0.7, 1.0, 0.5, 0.35)
    b = Authority("old", "unverified", 0.7, 1.0, 0.5, 0.35)
    rec = PairAgreement(
        "new",
        "old",
        "old",
        Judgement("disagrees", "SPEC-027 on its own ties (both kept with a NOTE); the SDK superseded old by new", None),
        Judgement("agrees", "both keep new and drop old", "new"),
        a,
        b,
        ("old",),
    )
    assert cv.sdk_label(rec) == "SDK: disagrees (as loaded: agrees)"
    own, loaded = cv.sdk_verdict_lines(rec)
    assert own == (
        "SPEC-027 on its own (new 0.3500 vs old 0.3500; old read as ACTIVE): a tie (both kept) — SDK "
        "superseded old by new: disagrees"
    )
    assert loaded == (
        "As loaded (the SDK's STALE in force, operator decisions applied): prefers new — SDK "
        "superseded old by new: agrees"
    )
    frame = cv.sdk_authority_frame(rec)
    assert list(frame["status read as"]) == ["as loaded", "ACTIVE (the SDK's STALE neutralised)"]
    assert list(frame["authority"]) == [0.35, 0.35]
    outside = PairAgreement(
        "p",
        "q",
        None,
        Judgement("silent", "the SDK superseded p by z, outside this pair", "p"),
        Judgement("silent", "the SDK superseded p by z, outside this pair", "p"),
        Authority("p", "web", 0.7, 1.0, 0.5, 0.35),
        Authority("q", "news", 0.75, 0.3, 0.5, 0.1125),
        ("p",),
    )
    assert cv.sdk_verdict_lines(outside)[0].endswith(
        "prefers p — SDK superseded neither fact by the other: silent (the SDK superseded p by z, outside this pair)"
    )


# ---- the export tab: the crprotocol snapshot ---------------------------------------------------------
def test_export_tab_offers_the_crprotocol_snapshot_the_sdk_loads(sdk_env, tmp_path, monkeypatch):
    """Decisions recorded in the page's store, the Export tab's snapshot bytes loaded by the real SDK."""
    from crp.ckf.fabric import ContextualKnowledgeFabric

    from crp_core.triage import Decision, DecisionStore
    from crp_ui import decisions
    from tests.support.conflicts_page import EXPORT, show_tab

    with DecisionStore(tmp_path / "triage.sqlite") as store:
        store.record(Decision.override("f-port-old", "f-port-new", winner="f-port-new", operator="alice", note="n"))
    at = show_tab(_ready("conflicts"), EXPORT)
    (button,) = [b for b in at.get("download_button") if b.proto.label == "crprotocol snapshot"]
    assert not button.proto.disabled
    assert at.selectbox(key="crp.page.conflicts.sdk.checksum").value == "auto"
    kb, ds = at.session_state["crp.kb"], decisions.decision_set()
    data, name, info = decisions.sdk_snapshot_bytes(kb, ds)
    assert name == "supersessions.crprotocol.json" and info.report.sdk.algorithm == "sha256"
    out = tmp_path / name
    out.write_bytes(data)
    monkeypatch.setitem(__import__("sys").modules, "blake3", None)  # a deployment without blake3: SHA-256
    assert decisions.sdk_checksum_refusal(kb, "auto") is None
    assert "pip install blake3" in (decisions.sdk_checksum_refusal(kb, "blake3") or "")  # the button is disabled
    fab = ContextualKnowledgeFabric()
    assert fab.restore(out) == [] and fab.health().fact_count == 9 and fab.health().edge_count == 4
    cleaned, _, _ = decisions.cleaned_ckf_bytes(kb, ds)  # the cleaned CKF keeps the SDK's edges too
    assert cleaned.count(b'"sdk_edges"') == 4

"""The cleaned CKF carries every operator decision (docs/decisions/triage.md "Export"): decisions
recorded in a real DecisionStore, exported, and the exported file loaded with ``load_ckf`` and
scanned / run *without* the store.

Tiny corpus (6-d vectors, no model), now 2026-06-01, all facts modified 2026-05-01 (age 31 d, so
recency_factor 1.0 unless STALE, then the floor 0.30):
  F1 official_documentation "... client port is 2379."   authority 0.80 * 1.0 * 0.80 = 0.64 (0.192 STALE)
  F2 community              "... client port is 2380."   authority 0.75 * 1.0 * 0.60 = 0.45 (0.135 STALE)
  G1 official_documentation "Backups are kept for 30 days."  0.64
  G2 community              "Backups are kept for 14 days."  0.45
  F3 official_documentation, unrelated (cosine 0 to the others)
{F1, F2} and {G1, G2} are conflict pairs (NUMBER_CHANGED, cosine ~0.999); by authority F1 and G1 win.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crp_core.analysis.scan import scan_ckf
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.io.ckf import load_ckf, write_ckf
from crp_core.io.timeparse import parse_timestamp
from crp_core.model import KnowledgeBase
from crp_core.pipeline import run_pipeline
from crp_core.triage import (
    Decision,
    DecisionSet,
    DecisionStore,
    DismissedPair,
    ExportError,
    FactChange,
    ReplacedValue,
    carried_decisions,
    carry_decisions,
    export_cleaned_ckf,
    load_export_report,
    report_path_for,
    triage_record,
)
from crp_core.triage.export import export_report_dict
from tests.support.factories import MODEL_ID, fact, make_kb, make_scenario, unit
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
MOD = "2026-05-01T00:00:00Z"
NOW = parse_timestamp("2026-06-01T00:00:00Z")
CONFIG = CRPConfig()
FACTS = [
    fact("F1", "The etcd default client port is 2379.", modified_at=MOD, metadata={"url": "https://example.invalid/e"}),
    fact("F2", "The etcd default client port is 2380.", source_type="community", modified_at=MOD),
    fact("G1", "Backups are kept for 30 days.", modified_at=MOD),
    fact("G2", "Backups are kept for 14 days.", source_type="community", modified_at=MOD),
    fact("F3", "Kubernetes schedules pods onto nodes.", modified_at=MOD),
]
VECTORS = [
    unit([1, 0.3, 0, 0, 0, 0]),
    unit([1, 0.3, 0.05, 0, 0, 0]),
    unit([0, 0, 0, 1, 0.3, 0]),
    unit([0, 0, 0, 1, 0.3, 0.05]),
    unit([0, 0, 1, 0, 0, 1]),
]
BY_AUTHORITY = {("F1", "F2"): (("F1",), "F2", None), ("G1", "G2"): (("G1",), "G2", None)}


@pytest.fixture
def source(tmp_path) -> Path:
    """The CKF the operators worked on, as a JSONL file with embeddings."""
    return Path(write_ckf(make_kb(FACTS, VECTORS), tmp_path / "kb.jsonl"))


@pytest.fixture
def store(tmp_path):
    with DecisionStore(tmp_path / "decisions.sqlite") as s:
        yield s


def export(store: DecisionStore, source: Path, out: Path) -> tuple[KnowledgeBase, object]:
    """Export the decisions in force, then load the result as another machine would: no store."""
    done = export_cleaned_ckf(load_ckf(source), store.current(), out)
    return load_ckf(done.path), done


def scan(kb: KnowledgeBase, decisions=None) -> dict[tuple[str, str], tuple[tuple[str, ...], str | None, str | None]]:
    corpus = Corpus.from_vectors(kb, kb.embeddings, MODEL_ID, CONFIG)
    return {
        (p.fact_a, p.fact_b): (p.kept, p.suppressed, p.decision) for p in scan_ckf(corpus, CONFIG, NOW, decisions).pairs
    }


def state(kb: KnowledgeBase) -> dict[str, tuple[str, dict]]:
    return {f.fact_id: (f.status, dict(f.metadata)) for f in kb.facts}


def test_the_source_ckf_is_arbitrated_by_authority(source):
    assert scan(load_ckf(source)) == BY_AUTHORITY


def test_override_writes_the_loser_stale_with_superseded_by_and_the_triage_record(store, source, tmp_path):
    d = store.record(Decision.override("F1", "F2", winner="F2", operator="ann", note="2380 since v3.4"))
    kb, done = export(store, source, tmp_path / "clean.jsonl")
    record = {"operator": "ann", "decided_at": d.decided_at, "kind": "override", "note": "2380 since v3.4"}
    assert state(kb)["F1"] == (
        "STALE",
        {
            "url": "https://example.invalid/e",
            "superseded_by_origin": "operator",
            "superseded_by": "F2",
            "triage": record,
        },
    )
    assert {f: s for f, s in state(kb).items() if f != "F1"} == {
        f: s for f, s in state(load_ckf(source)).items() if f != "F1"
    }
    # no store: a plain re-scan arbitrates with the decisions the file carries (the override itself)
    carried = {("F1", "F2"): (("F2",), "F1", "override"), ("G1", "G2"): (("G1",), "G2", None)}
    assert scan(kb) == carried
    assert scan(kb, carried_decisions(kb)) == carried
    report = done.report
    assert report.changes == (FactChange("F1", "ACTIVE", "STALE", "F2", record, (d.id,)),)
    assert (report.issues, report.dismissed, report.replaced, dict(report.changed)) == ((), (), (), {"STALE": 1})


def test_the_pipeline_on_the_exported_ckf_packs_the_operators_winner(store, source, tmp_path):
    scen = make_scenario([1, 0, 0, 0, 0, 0], now="2026-06-01T00:00:00Z")

    def envelope(kb: KnowledgeBase) -> list[str]:
        corpus = Corpus.from_vectors(kb, kb.embeddings, MODEL_ID, CONFIG)
        return [p.fact_id for p in run_pipeline(corpus, scen).envelope.order]

    assert envelope(load_ckf(source)) == ["F1"]
    store.record(Decision.override("F1", "F2", winner="F2", operator="ann"))
    kb, _ = export(store, source, tmp_path / "clean.jsonl")
    assert envelope(kb) == ["F2"]


def test_accept_writes_the_arbitrations_loser(store, source, tmp_path):
    d = store.record(Decision.accept("G1", "G2", winner="G1", operator="bob"))
    kb, done = export(store, source, tmp_path / "clean.jsonl")
    assert state(kb)["G2"] == (
        "STALE",
        {
            "superseded_by_origin": "operator",
            "superseded_by": "G1",
            "triage": {"operator": "bob", "decided_at": d.decided_at, "kind": "accept", "note": ""},
        },
    )
    assert scan(kb) == {**BY_AUTHORITY, ("G1", "G2"): (("G1",), "G2", "accept")}  # the carried decision
    assert scan(kb, carried_decisions(kb))[("G1", "G2")] == (("G1",), "G2", "accept")
    assert done.report.issues == ()


@pytest.mark.parametrize(
    "status, pairs",
    [
        ("STALE", {("F1", "F2"): (("F2",), "F1", None), ("G1", "G2"): (("G1",), "G2", None)}),
        ("QUARANTINED", {("G1", "G2"): (("G1",), "G2", None)}),  # F1 is never retrieved: no pair left
        ("DELETED", {("G1", "G2"): (("G1",), "G2", None)}),
    ],
)
def test_a_status_mark_writes_the_status_and_the_triage_record(store, source, tmp_path, status, pairs):
    d = store.record(Decision.mark_status("F1", "F2", fact="F1", status=status, operator="cy", note="outdated"))
    kb, done = export(store, source, tmp_path / "clean.jsonl")
    assert state(kb)["F1"] == (
        status,
        {
            "url": "https://example.invalid/e",
            "triage": {"operator": "cy", "decided_at": d.decided_at, "kind": "mark_status", "note": "outdated"},
        },
    )
    assert [f.status for f in kb.facts] == [status, "ACTIVE", "ACTIVE", "ACTIVE", "ACTIVE"]
    assert scan(kb) == pairs
    assert (done.report.issues, dict(done.report.changed), done.applied) == ((), {status: 1}, 1)


def test_a_dismissed_pair_changes_no_fact_and_is_kept_in_the_report(store, source, tmp_path):
    d = store.record(Decision.dismiss("G1", "G2", operator="ann", note="different backup tiers"))
    out = tmp_path / "clean.jsonl"
    kb, done = export(store, source, out)
    assert state(kb) == state(load_ckf(source))
    assert out.read_bytes() == source.read_bytes()
    assert done.report.changes == ()
    assert done.report.dismissed == (DismissedPair("G1", "G2", d.id, "ann", d.decided_at, "different backup tiers"),)
    assert done.report.issues == ()
    assert scan(kb) == BY_AUTHORITY  # the file alone does not say "dismissed"
    doc = load_export_report(tmp_path / "clean.export_report.json")
    assert doc["dismissed"] == [
        {
            "fact_a": "G1",
            "fact_b": "G2",
            "decision_id": d.id,
            "operator": "ann",
            "decided_at": d.decided_at,
            "note": "different backup tiers",
        }
    ]
    assert scan(kb, carried_decisions(kb, doc)) == {
        ("F1", "F2"): (("F1",), "F2", None),
        ("G1", "G2"): (("G1", "G2"), None, "dismiss"),
    }


def test_conflicting_unknown_and_inexpressible_decisions_are_listed_exactly(store, source, tmp_path):
    rec = [
        store.record(d)
        for d in (
            Decision.override("F1", "F2", winner="F2", operator="ann"),  # 1: F1 loses
            Decision.mark_status("F1", "F2", fact="F1", status="ACTIVE", operator="ann"),  # 2: ... but marked ACTIVE
            Decision.override("G1", "G2", winner="G1", operator="bob"),  # 3: G2 loses
            Decision.mark_status("G1", "G2", fact="G1", status="STALE", operator="bob"),  # 4: the winner marked STALE
            Decision.accept("F3", "G1", operator="cy"),  # 5: an accepted tie
            Decision.override("F3", "ZZ", winner="F3", operator="cy"),  # 6: ZZ is not in the CKF
            Decision.mark_status("F2", "ZZ", fact="ZZ", status="DELETED", operator="cy"),  # 7: nor here
            Decision.override("F2", "F3", winner="F3", operator="dee"),  # 8: F2 (winner of 1) loses
            Decision.override("F2", "G2", winner="G2", operator="dee"),  # 9: F2 loses twice; G2 won
        )
    ]
    ids = [d.id for d in rec]
    assert ids == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    kb, done = export(store, source, tmp_path / "clean.jsonl")
    r = done.report
    got = [(i.category, i.code, i.fact_ids, i.decision_ids) for i in r.issues]
    assert got == [
        ("conflict", "loser_marked_active", ("F1",), (1, 2)),
        ("conflict", "winner_stale", ("F2", "F1"), (1, 8, 9)),
        ("conflict", "winner_stale", ("G1", "G2"), (3, 4)),
        ("conflict", "winner_stale", ("G2", "F2"), (3, 9)),
        ("unknown_fact", "unknown_fact", ("ZZ",), (6,)),
        ("unknown_fact", "unknown_fact", ("ZZ",), (7,)),
        ("inexpressible", "accept_without_winner", ("F3", "G1"), (5,)),
        ("inexpressible", "several_winners", ("F2", "F3", "G2"), (8, 9)),
    ]
    assert r.conflicts[0].message == (
        "F1 loses decision #1 (override: F2 wins over F1) but decision #2 (mark F1 ACTIVE) is in force: written "
        "ACTIVE (superseded_by and triage written), so a re-scan arbitrates by authority"
    )
    assert r.inexpressible[1].message == (
        "F2 loses to F3, G2; metadata.superseded_by holds one id: written G2 (the newest decision), the others "
        "are in metadata.triage_history only"
    )
    assert done.unknown_facts == ("ZZ",)
    t = {d.id: triage_record(d) for d in rec}
    assert state(kb) == {
        "F1": (
            "ACTIVE",
            {
                "url": "https://example.invalid/e",
                "superseded_by_origin": "operator",
                "superseded_by": "F2",
                "triage": t[2],
                "triage_history": [t[1]],
            },
        ),
        "F2": (
            "STALE",
            {"superseded_by_origin": "operator", "superseded_by": "G2", "triage": t[9], "triage_history": [t[8]]},
        ),
        "G1": ("STALE", {"triage": t[4]}),
        "G2": ("STALE", {"superseded_by_origin": "operator", "superseded_by": "G1", "triage": t[3]}),
        "F3": ("ACTIVE", {}),
    }
    assert [(c.fact_id, c.status_before, c.status, c.decision_ids) for c in r.changes] == [
        ("F1", "ACTIVE", "ACTIVE", (1, 2)),
        ("F2", "ACTIVE", "STALE", (8, 9)),
        ("G1", "ACTIVE", "STALE", (4,)),
        ("G2", "ACTIVE", "STALE", (3,)),
    ]
    doc = json.loads((tmp_path / "clean.export_report.json").read_text(encoding="utf-8"))
    assert doc == json.loads(json.dumps(export_report_dict(r)))
    assert [(i["code"], i["fact_ids"]) for i in doc["conflicts"]] == [
        ("loser_marked_active", ["F1"]),
        ("winner_stale", ["F2", "F1"]),
        ("winner_stale", ["G1", "G2"]),
        ("winner_stale", ["G2", "F2"]),
    ]
    assert [i["decision_ids"] for i in doc["unknown_facts"]] == [[6], [7]]
    assert [i["code"] for i in doc["inexpressible"]] == ["accept_without_winner", "several_winners"]


def test_a_winner_already_stale_in_the_ckf_is_inexpressible(tmp_path):
    kb = make_kb([fact("A", "x", status="STALE"), fact("B", "y")])
    ds = DecisionSet.from_decisions([Decision.override("A", "B", winner="A", operator="ann")])
    cleaned, report = carry_decisions(kb, ds)
    assert [(f.fact_id, f.status) for f in cleaned.facts] == [("A", "STALE"), ("B", "STALE")]
    assert [(i.category, i.code, i.fact_ids) for i in report.issues] == [("inexpressible", "winner_stale", ("A", "B"))]


def test_a_loser_already_deleted_keeps_its_status(tmp_path):
    kb = make_kb([fact("A", "x"), fact("B", "y", status="DELETED")])
    ds = DecisionSet.from_decisions([Decision.override("A", "B", winner="A", operator="ann")])
    cleaned, report = carry_decisions(kb, ds)
    assert [(f.fact_id, f.status, f.metadata.get("superseded_by")) for f in cleaned.facts] == [
        ("A", "ACTIVE", None),
        ("B", "DELETED", "A"),
    ]
    assert report.issues == () and dict(report.changed) == {}


def test_existing_triage_metadata_becomes_history_and_a_replaced_superseded_by_is_reported(tmp_path):
    old = {"operator": "legacy", "decided_at": "2025-01-01T00:00:00Z", "kind": "override", "note": "old tool"}
    kb = make_kb([fact("A", "x"), fact("B", "y", metadata={"domain": "k8s", "superseded_by": "OLD", "triage": old})])
    ds = DecisionSet.from_decisions([Decision.override("A", "B", winner="A", operator="ann", note="n")])
    cleaned, report = carry_decisions(kb, ds)
    new = {"operator": "ann", "decided_at": None, "kind": "override", "note": "n"}
    assert dict(cleaned.facts[1].metadata) == {
        "domain": "k8s",
        "superseded_by_origin": "operator",
        "superseded_by": "A",
        "triage": new,
        "triage_history": [old],
    }
    assert report.replaced == (ReplacedValue("B", "superseded_by", "OLD", "A"),)
    # exporting the export again with the same decisions changes nothing more
    again, report2 = carry_decisions(cleaned, ds)
    assert [dict(f.metadata) for f in again.facts] == [dict(f.metadata) for f in cleaned.facts]
    assert report2.replaced == ()


def test_re_exporting_an_export_gives_the_same_file(store, source, tmp_path):
    store.record(Decision.override("F1", "F2", winner="F2", operator="ann"))
    store.record(Decision.mark_status("F1", "F2", fact="F1", status="QUARANTINED", operator="ann"))
    first = export_cleaned_ckf(load_ckf(source), store.current(), tmp_path / "one.jsonl")
    second = export_cleaned_ckf(load_ckf(first.path), store.current(), tmp_path / "two.jsonl")
    assert Path(first.path).read_bytes() == Path(second.path).read_bytes()
    assert second.report.replaced == () and second.report.issues == ()


@pytest.mark.parametrize("name", ["clean.jsonl", "clean.json", "clean.csv", "clean_dir"])
def test_every_format_carries_the_decisions(store, source, tmp_path, name):
    d1 = store.record(Decision.override("F1", "F2", winner="F2", operator="ann", note='a "quoted", note'))
    d2 = store.record(Decision.mark_status("F1", "F2", fact="F1", status="QUARANTINED", operator="bob"))
    kb, done = export(store, source, tmp_path / name)
    assert state(kb)["F1"] == (
        "QUARANTINED",
        {
            "url": "https://example.invalid/e",
            "superseded_by_origin": "operator",
            "superseded_by": "F2",
            "triage": triage_record(d2),
            "triage_history": [triage_record(d1)],
        },
    )
    assert scan(kb) == {("G1", "G2"): (("G1",), "G2", None)}
    assert done.report.inexpressible == ()
    expected_report = (
        tmp_path / name / "export_report.json" if name == "clean_dir" else tmp_path / "clean.export_report.json"
    )
    assert done.report_path == str(expected_report) and expected_report.is_file()
    fmts = {"clean.jsonl": "jsonl", "clean.json": "json", "clean.csv": "csv", "clean_dir": "dir"}
    assert done.report.fmt == fmts[name]
    assert load_ckf(tmp_path / name).fingerprint == load_ckf(source).fingerprint  # still the same knowledge


def test_report_paths_and_the_refusal_to_overwrite_the_ckf(tmp_path):
    assert report_path_for("/x/clean.jsonl") == "/x/clean.export_report.json"
    assert report_path_for("/x/clean_dir") == "/x/clean_dir/export_report.json"
    kb = make_kb([fact("A", "x")])
    out = tmp_path / "k.json"
    with pytest.raises(ExportError, match="would overwrite the cleaned CKF"):
        export_cleaned_ckf(kb, DecisionSet.empty(), out, report_path=out)
    assert not out.exists()
    done = export_cleaned_ckf(kb, DecisionSet.empty(), out, write_report=False)
    assert done.report_path is None and not (tmp_path / "k.export_report.json").exists()


def test_the_report_names_the_ckfs_by_their_paths_or_by_the_names_given(store, source, tmp_path):
    """A command line's report keeps the paths it was given; a download's names the CKF and the file the reader
    knows, not the server's folders (crp_ui.decisions.cleaned_ckf_bytes)."""
    store.record(Decision.override("F1", "F2", winner="F1", operator="ada"))
    by_path = export_cleaned_ckf(load_ckf(source), store.current(), tmp_path / "clean_dir")
    doc = load_export_report(by_path.report_path)
    assert (doc["ckf"], doc["out"]) == (str(source), str(tmp_path / "clean_dir"))
    named = export_cleaned_ckf(
        load_ckf(source), store.current(), tmp_path / "tmp" / "cleaned", ckf_name="kb.jsonl", out_name="kb.cleaned.zip"
    )
    doc = load_export_report(named.report_path)
    assert (doc["ckf"], doc["out"], doc["format"]) == ("kb.jsonl", "kb.cleaned.zip", "dir")
    assert str(tmp_path) not in json.dumps(doc)
    assert named.path == str(tmp_path / "tmp" / "cleaned")  # where it was written, for the caller


def test_no_decisions_export_the_ckf_unchanged(source, tmp_path):
    kb = load_ckf(source)
    cleaned, report = carry_decisions(kb, DecisionSet.empty())
    assert cleaned.facts == kb.facts and [f.metadata for f in cleaned.facts] == [f.metadata for f in kb.facts]
    assert (report.changes, report.issues, report.dismissed, report.decisions) == ((), (), (), 0)


def test_the_sample_override_travels_with_the_file(tmp_path):
    """The bundled sample: gov-0148 wins over gov-0149 (a tie by authority: same source and dates)."""
    src = ROOT / "sample_ckf" / "knowledge_base.jsonl"
    with DecisionStore(tmp_path / "d.sqlite") as store:
        d = store.record(
            Decision.override(
                "gov-0148", "gov-0149", winner="gov-0148", operator="ann", note="legal confirmed the FRIA is required"
            )
        )
        done = export_cleaned_ckf(load_ckf(src), store.current(), tmp_path / "clean.jsonl")
    before, after = load_ckf(src), load_ckf(done.path)
    assert state(after)["gov-0149"] == (
        "STALE",
        {
            "domain": "gov",
            "superseded_by_origin": "operator",
            "superseded_by": "gov-0148",
            "triage": {
                "operator": "ann",
                "decided_at": d.decided_at,
                "kind": "override",
                "note": "legal confirmed the FRIA is required",
            },
        },
    )
    changed = {f for f, s in state(after).items() if s != state(before)[f]}
    assert changed == {"gov-0149"}
    assert done.report.issues == ()


@pytest.mark.model
def test_the_sample_override_is_arbitrated_the_operators_way_on_a_rescan(tmp_path):
    from crp_core.corpus.prepared import prepare_corpus

    src = ROOT / "sample_ckf" / "knowledge_base.jsonl"
    ds = DecisionSet.from_decisions([Decision.override("gov-0148", "gov-0149", winner="gov-0148", operator="ann")])
    done = export_cleaned_ckf(load_ckf(src), ds, tmp_path / "clean.jsonl")
    now = parse_timestamp("2026-11-01T00:00:00Z")

    def pair(kb: KnowledgeBase):
        found = [
            p
            for p in scan_ckf(prepare_corpus(kb, config=CONFIG), CONFIG, now).pairs
            if (p.fact_a, p.fact_b) == ("gov-0148", "gov-0149")
        ]
        return [(p.kept, p.suppressed, p.tied) for p in found]

    assert pair(load_ckf(src)) == [(("gov-0148", "gov-0149"), None, True)]
    assert pair(load_ckf(done.path)) == [(("gov-0148",), "gov-0149", False)]


def test_a_rescan_sides_with_the_operator_even_where_authority_favours_the_loser(tmp_path):
    """H1 official, fresh: 0.80 * 1.0 * 0.80 = 0.64, still 0.192 once STALE; H2 unverified and past its
    TTL (modified 2025-01-01, 516 days before now): 0.30 * 0.30 * 0.30 = 0.027. The operator makes H2
    win; the exported file alone must keep that, authority notwithstanding."""
    facts = [
        fact("H1", "The etcd default peer port is 2380.", modified_at=MOD),
        fact("H2", "The etcd default peer port is 2381.", source_type="unverified", modified_at="2025-01-01T00:00:00Z"),
    ]
    vectors = [unit([1, 0.3, 0, 0, 0, 0]), unit([1, 0.3, 0.05, 0, 0, 0])]
    src = Path(write_ckf(make_kb(facts, vectors), tmp_path / "kb.jsonl"))
    assert scan(load_ckf(src)) == {("H1", "H2"): (("H1",), "H2", None)}
    with DecisionStore(tmp_path / "d.sqlite") as st:
        st.record(Decision.override("H1", "H2", winner="H2", operator="ann", note="2381 is the new default"))
        kb, _ = export(st, src, tmp_path / "clean.jsonl")
    assert {f.fact_id: f.status for f in kb.facts} == {"H1": "STALE", "H2": "ACTIVE"}
    assert scan(kb) == {("H1", "H2"): (("H2",), "H1", "override")}
    # an operator decision given on top still wins over what the file carries
    dismissed = DecisionSet.from_decisions([Decision.dismiss("H1", "H2", operator="bob")])
    assert scan(kb, dismissed) == {("H1", "H2"): (("H1", "H2"), None, "dismiss")}


def test_an_export_report_that_is_a_fifo_is_refused_at_once(tmp_path):
    import os

    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    with pytest.raises(ExportError, match="FIFO"):
        load_export_report(fifo)


# ---- carried decisions that cannot both hold (docs/decisions/triage.md, "Export") ------------------------
def _override_rec(at: str) -> dict:
    return {"kind": "override", "operator": "ops", "note": "", "decided_at": at}


def _standoff(first: str, at_a: str, at_b: str) -> KnowledgeBase:
    """F1 superseded by F2 and F2 by F1, each with an override record, F1's line first or F2's."""
    rows = {
        "F1": fact("F1", "Port 2379.", metadata={"superseded_by": "F2", "triage": _override_rec(at_a)}),
        "F2": fact("F2", "Port 2380.", metadata={"superseded_by": "F1", "triage": _override_rec(at_b)}),
    }
    order = ["F1", "F2"] if first == "F1" else ["F2", "F1"]
    return KnowledgeBase(facts=tuple(rows[i] for i in order))


@pytest.mark.parametrize("first", ["F1", "F2"])
def test_two_overrides_superseding_each_other_at_one_time_carry_no_decision(first):
    carried = carried_decisions(_standoff(first, "2026-05-02T00:00:00Z", "2026-05-02T00:00:00Z"))
    assert carried.for_pair("F1", "F2") is None  # neither chosen by its line


@pytest.mark.parametrize("first", ["F1", "F2"])
def test_of_two_overrides_at_different_times_the_later_is_in_force_whatever_the_line_order(first):
    carried = carried_decisions(_standoff(first, "2026-05-03T00:00:00Z", "2026-05-02T00:00:00Z"))
    assert carried.for_pair("F1", "F2") == {"kind": "override", "winner": "F2"}  # F1's record is the later


def test_a_supersession_cycle_is_a_load_warning_at_its_first_fact(tmp_path):
    rows = [
        {"fact_id": "a", "content": "x 1", "metadata": {"superseded_by": "b"}},
        {"fact_id": "b", "content": "x 2", "metadata": {"superseded_by": "a"}},
        {"fact_id": "c", "content": "y 1", "metadata": {"superseded_by": "d"}},
        {"fact_id": "d", "content": "y 2", "metadata": {"superseded_by": "e"}},
        {"fact_id": "e", "content": "y 3", "metadata": {"superseded_by": "c"}},
        {"fact_id": "f", "content": "z", "metadata": {"superseded_by": "c"}},  # into a cycle, not on it
    ]
    path = tmp_path / "cycles.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    cycles = [(w.line, w.field, w.fact_id, w.message) for w in load_ckf(str(path)).warnings if "cycle" in w.message]
    tail = ": each is superseded by another of them, so none is in force; mark the one that is ACTIVE"
    assert cycles == [
        (1, "metadata.superseded_by", "a", "supersession cycle 'a' -> 'b' -> 'a'" + tail),
        (3, "metadata.superseded_by", "c", "supersession cycle 'c' -> 'd' -> 'e' -> 'c'" + tail),
    ]


def test_an_admins_revert_takes_a_mistaken_decision_out_of_the_export(store, source, tmp_path):
    """The append-only log corrects a mistake with a revert entry: the mistaken override (and its note)
    is no longer in force, so the cleaned CKF does not carry it; the earlier decision is again."""
    first = store.record(Decision.override("F1", "F2", winner="F1", operator="ann", note="2379 is documented"))
    wrong = store.record(Decision.override("F1", "F2", winner="F2", operator="bob", note="typo in the wrong pair"))
    store.record(Decision.revert("F1", "F2", reverts=wrong.id, operator="root", reason="bob's note", role="admin"))
    kb, done = export(store, source, tmp_path / "clean.jsonl")
    assert state(kb)["F2"][0] == "STALE" and state(kb)["F1"][0] == "ACTIVE"
    assert state(kb)["F2"][1]["triage"] == triage_record(first)
    assert "typo in the wrong pair" not in Path(done.path).read_text()
    assert scan(kb) == BY_AUTHORITY | {("F1", "F2"): (("F1",), "F2", "override")}

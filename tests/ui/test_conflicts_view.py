"""Pure helpers of the Conflict triage page (crp_ui.conflicts_view) and the decision plumbing of
crp_ui.decisions that needs no script run: highlighting (escaping, spans, gaps; hypothesis
round-trip), authority arithmetic by hand, queue frame / filters / counts, outcomes, cleaned CKF
export, fingerprints and pipeline decisions."""

from __future__ import annotations

import html
import io
import json
import re
import zipfile
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from crp_core.analysis.scan import scan_ckf
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact, KnowledgeBase
from crp_core.records import Authority, ConflictPair
from crp_core.stages.contradictions import values_conflict
from crp_core.triage import Decision, DecisionSet
from crp_ui import conflicts_view as cv
from crp_ui import decisions as dmod

SCRIPT = "<script>alert(1)</script>"
MARK_RE = re.compile(r'<mark class="crp-(?:diff|gap)"[^>]*>|</mark>')


def strip_html(out: str) -> str:
    """Remove the marks (and gap glyphs), turn <br> back into newlines, unescape entities."""
    out = re.sub(r'<mark class="crp-gap"[^>]*>' + cv.GAP_MARK + "</mark>", "", out)
    out = MARK_RE.sub("", out).replace("<br>", "\n")
    return html.unescape(out)


# ---- highlighting --------------------------------------------------------------------------------
def test_script_tag_is_escaped_and_diff_marked():
    text = f"{SCRIPT} The API rate limit is 100 requests."
    start = text.index("100")
    out = cv.highlight_html(text, [(start, start + 3, "NUMBER_CHANGED")])
    assert "<script>" not in out and "</script>" not in out
    assert out.startswith("&lt;script&gt;alert(1)&lt;/script&gt; The API rate limit is ")
    assert '<mark class="crp-diff" title="NUMBER_CHANGED" data-pattern="NUMBER_CHANGED">100</mark> requests.' in out
    assert "style=" not in out  # the look is the stylesheet's


def test_highlighted_slice_is_escaped_too():
    text = 'a <b onclick="x">tag</b> z'
    out = cv.highlight_html(text, [(2, 17, "ENTITY_SUBSTITUTED")])
    assert "<b" not in out.replace("<br>", "")
    assert ">&lt;b onclick=&quot;x&quot;&gt;</mark>" in out


def test_pattern_title_is_escaped():
    out = cv.highlight_html("abc", [(0, 1, '"><script>')])
    assert "<script>" not in out and 'title="&quot;&gt;&lt;script&gt;"' in out
    assert 'data-pattern="&quot;&gt;&lt;script&gt;"' in out


def test_zero_width_span_is_a_gap_mark():
    text = "etcd supports v2"
    out = cv.highlight_html(text, [(5, 5, "NEGATION_FLIP")])
    assert out == (
        'etcd <mark class="crp-gap" title="NEGATION_FLIP: the other fact has a token here" '
        'data-pattern="NEGATION_FLIP">∅</mark>supports v2'
    )


def test_merge_spans_overlap_clamp_and_patterns():
    # (0,5) and (3,8) overlap -> (0,8); (4,4) lies strictly inside -> absorbed; (10,30) clamped to 12
    got = cv.merge_spans([(3, 8, "B"), (0, 5, "A"), (4, 4, "C"), (10, 30, "D"), (8, 8, "E")], 12)
    assert got == [(0, 8, ("A", "B", "C")), (8, 8, ("E",)), (10, 12, ("D",))]


def test_markdown_and_newlines_are_neutralised():
    out = cv.highlight_html("a *b* [x](javascript:alert(1))\n\nc $x$", [])
    assert "*" not in out and "[" not in out and "$" not in out and "\n" not in out
    assert out.count("<br>") == 2


@settings(max_examples=200, deadline=None)
@given(
    text=hs.text(alphabet=hs.sampled_from(list("ab <>&\"'*_$[]\n\\`:x1")), max_size=40),
    spans=hs.lists(
        hs.tuples(hs.integers(-3, 45), hs.integers(-3, 45), hs.sampled_from(["NUMBER_CHANGED", "NEGATION_FLIP"])),
        max_size=5,
    ),
)
def test_highlight_round_trip_and_no_raw_markup(text, spans):
    spans = [(min(a, b), max(a, b), p) for a, b, p in spans]
    out = cv.highlight_html(text, spans)
    assert strip_html(out) == text
    # every "<" in the output starts one of our own tags
    assert not re.search(r"<(?!mark class=\"crp-|/mark>|br>)", out)


# ---- records for the frames ---------------------------------------------------------------------
def _auth(fid, src, sa, rf, iw):
    return Authority(fid, src, sa, rf, iw, sa * rf * iw)


def _pair(
    a,
    b,
    *,
    tied=False,
    suppressed=None,
    kept=None,
    decision=None,
    margin=None,
    sim=0.97,
    texts=("port 2379", "port 4001"),
):
    A = _auth(a, "official_documentation", 0.80, 1.0, 0.80)  # 0.64
    B = _auth(b, "community", 0.75, 0.30, 0.60)  # 0.135
    vc = values_conflict(*texts)
    assert vc is not None
    return ConflictPair(
        a,
        b,
        sim,
        vc.patterns,
        vc,
        {a: A, b: B},
        kept if kept is not None else ((a,) if suppressed else (a, b)),
        suppressed,
        tied,
        margin=abs(A.authority - B.authority) if margin is None else margin,
        decision=decision,
    )


def test_authority_frame_and_arithmetic_by_hand():
    p = _pair("E1", "E2", suppressed="E2")
    f = cv.authority_frame(p)
    # 0.80 * 1.0 * 0.80 = 0.64 ; 0.75 * 0.30 * 0.60 = 0.135
    assert f.authority.tolist() == pytest.approx([0.64, 0.135], abs=1e-15)
    assert f.arithmetic.tolist() == ["0.8 × 1.0000 × 0.8 = 0.6400", "0.75 × 0.3000 × 0.6 = 0.1350"]
    assert f.role.tolist() == ["winner", "suppressed"]


def test_roles_and_outcomes():
    assert cv.outcome_text(_pair("a", "b", suppressed="b")) == "a wins (higher authority); b suppressed"
    ov = _pair("a", "b", suppressed="a", kept=("b",), decision="override")
    assert cv.outcome_text(ov) == "b wins (operator override); a suppressed"
    assert cv.arbitration_label(ov) == "override: b wins"
    assert cv.arbitration_short(ov) == "override: B wins"  # the metric names the side, not a (long) id
    assert cv.arbitration_short(_pair("a" * 300, "b", suppressed="b")) == "A wins"
    assert cv.role_of(ov, "b") == "winner (override)" and cv.role_of(ov, "a") == "suppressed"
    tie = _pair("a", "b", tied=True, margin=0.0)
    assert cv.arbitration_label(tie) == "tie" and cv.role_of(tie, "a") == "tied"
    assert cv.arbitration_short(tie) == "tie"
    dis = _pair("a", "b", decision="dismiss")
    assert cv.arbitration_label(dis) == "dismissed" and cv.outcome_text(dis).startswith("dismissed")
    sk = ConflictPair("a", "b", 0.9, tie.patterns, tie.conflict, tie.authority, ("a",), None, False, skipped=True)
    assert cv.outcome_text(sk).startswith("skipped")


def test_a_pair_only_a_decision_makes_says_so_in_its_patterns_cell():
    from crp_core.records import NO_PATTERN_READ, ValueConflict

    read = _pair("a", "b", suppressed="b", decision="override")
    assert read.patterns_text() == "NUMBER_CHANGED" and not read.by_decision_only
    base = _pair("a", "b", suppressed="a", kept=("b",), decision="override")
    none = ValueConflict((), ())
    asserted = ConflictPair(
        "a", "b", 0.31, (), none, base.authority, ("b",), "a", False, decision="override", asserted=True
    )
    assert (
        asserted.by_decision_only and asserted.patterns_text() == NO_PATTERN_READ == "none read: an operator's decision"
    )
    plain = ConflictPair("a", "b", 0.31, (), none, base.authority, ("a", "b"), None, False)
    assert not plain.by_decision_only and plain.patterns_text() == ""
    from crp_core.config import CRPConfig

    assert cv.asserted_text(asserted, CRPConfig()) == (
        "Paired by an operator's decision: stage 4 would not pair these facts itself (cosine 0.3100, not above "
        "contradiction_similarity 0.85)."
    )
    close = ConflictPair("a", "b", 0.97, (), none, base.authority, ("b",), "a", False, decision="accept", asserted=True)
    assert cv.asserted_text(close, CRPConfig()).endswith("(the detector reads no value difference in the two texts).")
    assert cv.asserted_text(read, CRPConfig()) is None
    frame = cv.envelope_pairs_frame(type("R", (), {"resolution": type("S", (), {"pairs": (asserted, read)})()})())
    assert frame["patterns"].tolist() == [NO_PATTERN_READ, "NUMBER_CHANGED"]


def test_side_spans_follow_the_diffs():
    p = _pair("a", "b", texts=("The etcd port is 2379.", "The etcd port is 4001."))
    assert cv.side_spans(p, "a") == [(17, 21, "NUMBER_CHANGED")]
    assert cv.side_spans(p, "b") == [(17, 21, "NUMBER_CHANGED")]
    with pytest.raises(ValueError):
        cv.side_spans(p, "c")


# ---- queue over a real scan --------------------------------------------------------------------
NOW = datetime(2026, 11, 1, tzinfo=UTC)


def _corpus():
    """Two conflicting pairs (one tie) + one unrelated fact; 4-d vectors.
    P: official (0.64) vs community stale (0.135); T: two internal facts, same date (0.525 each)."""
    rows = [
        ("P1", "The etcd client port is 2379.", "official_documentation", "2026-06-01T00:00:00Z", [1, 0, 0, 1]),
        ("P2", "The etcd client port is 4001.", "community", "2021-01-01T00:00:00Z", [1, 0, 0.2, 1]),
        ("T1", "The build cache holds 40 GB.", "internal", "2026-10-01T00:00:00Z", [0, 1, 0, 1]),
        ("T2", "The build cache holds 80 GB.", "internal", "2026-10-01T00:00:00Z", [0, 1, 0.2, 1]),
        ("U", "Unrelated text.", "web", "2026-10-01T00:00:00Z", [0, 0, 1, 0]),
    ]
    from crp_core.io.timeparse import parse_timestamp

    facts = tuple(
        Fact(
            fact_id=f,
            content=c,
            source_type=s,
            modified_at=parse_timestamp(m),
            ingested_at=parse_timestamp(m),
            line=i + 1,
        )
        for i, (f, c, s, m, _v) in enumerate(rows)
    )
    kb = KnowledgeBase(facts=facts)
    return Corpus.from_vectors(kb, np.array([r[4] for r in rows], dtype=np.float32))


def test_queue_frame_order_decided_and_filters():
    corpus = _corpus()
    ds = DecisionSet.from_decisions(
        [Decision.mark_status("P1", "P2", fact="P2", status="QUARANTINED", operator="alice")]
    )
    scan = scan_ckf(corpus, CRPConfig(), NOW, decisions=ds.pair_decisions)
    f = cv.queue_frame(scan, corpus.kb, ds)
    assert list(zip(f.fact_a, f.fact_b)) == [("T1", "T2"), ("P1", "P2")]  # the tie first
    assert f.pair.tolist() == ["T1|T2", "P1|P2"]
    assert f.margin.tolist() == pytest.approx([0.0, 0.64 - 0.135], abs=1e-12)
    assert f.status_b.tolist() == ["ACTIVE", "QUARANTINED"]
    assert f.decided.tolist() == [False, True]
    assert f.decision.tolist() == ["", "P2 marked QUARANTINED"]
    assert f.decided_by.tolist() == ["", "alice"]
    counts = cv.queue_counts(f)
    assert {k: counts[k] for k in ("pairs", "ties", "undecided", "decided", "dismissed", "NUMBER_CHANGED")} == {
        "pairs": 2,
        "ties": 1,
        "undecided": 1,
        "decided": 1,
        "dismissed": 0,
        "NUMBER_CHANGED": 2,
    }
    assert cv.filter_queue(f, decided="undecided").pair.tolist() == ["T1|T2"]
    assert cv.filter_queue(f, decided="decided").pair.tolist() == ["P1|P2"]
    assert cv.filter_queue(f, source_types=["community"]).pair.tolist() == ["P1|P2"]
    assert cv.filter_queue(f, statuses=["QUARANTINED"]).pair.tolist() == ["P1|P2"]
    assert cv.filter_queue(f, patterns=["NEGATION_FLIP"]).empty
    assert cv.filter_queue(f, patterns=["NUMBER_CHANGED", "NEGATION_FLIP"]).pair.tolist() == ["T1|T2", "P1|P2"]
    with pytest.raises(ValueError):
        cv.filter_queue(f, decided="maybe")
    assert cv.pair_label(f.to_dict("records")[0]) == "T1 ↔ T2 · NUMBER_CHANGED"
    # without review states: a decided pair is settled, an undecided one open; no disagreement to filter
    assert f.review.tolist() == ["open", "settled"]
    assert cv.filter_queue(f, decided="disagreements").empty
    g = cv.queue_frame(scan, corpus.kb, ds, {"T1|T2": "disagreement"})
    assert g.review.tolist() == ["disagreement", "settled"]
    assert cv.filter_queue(g, decided="disagreements").pair.tolist() == ["T1|T2"]


def test_empty_scan_gives_an_empty_queue_with_zero_counts():
    corpus = _corpus()
    ds = DecisionSet.empty()
    scan = scan_ckf(corpus, CRPConfig().replace(contradiction_similarity=0.999), NOW)
    assert scan.pairs == ()
    f = cv.queue_frame(scan, corpus.kb, ds)
    assert list(f.columns) == list(cv.QUEUE_COLUMNS) and f.empty
    assert set(cv.queue_counts(f).values()) == {0}
    assert cv.filter_queue(f, patterns=["NUMBER_CHANGED"], decided="undecided").empty


def test_quarantined_fact_stays_in_the_scan_but_not_in_the_applied_corpus():
    corpus = _corpus()
    ds = DecisionSet.from_decisions(
        [
            Decision.mark_status("P1", "P2", fact="P2", status="QUARANTINED", operator="a"),
            Decision.mark_status("T1", "T2", fact="T2", status="STALE", operator="a"),
        ]
    )
    applied = dmod.apply_decisions(corpus, ds)
    assert applied.retrievable.tolist() == [True, False, True, True, True]
    assert applied.kb.get("T2").status == "STALE"
    scanned = dmod.scan_corpus(corpus, ds)
    assert scanned.retrievable.tolist() == [True, True, True, True, True]  # P2 still scanned
    assert scanned.kb.get("T2").status == "STALE" and scanned.kb.get("P2").status == "ACTIVE"
    # the same status set gives the same (cached) object: its graph is built once
    assert dmod.apply_decisions(corpus, ds) is applied
    # T2 STALE: recency 0.30 -> 0.75 * 0.30 * 0.70 = 0.1575: no longer a tie, T1 wins
    scan = scan_ckf(scanned, CRPConfig(), NOW)
    t = [p for p in scan.pairs if p.fact_a == "T1"][0]
    assert (t.tied, t.suppressed) == (False, "T2")
    assert t.authority["T2"].authority == pytest.approx(0.75 * 0.30 * 0.70, abs=1e-15)


def test_applied_corpus_cache_tells_apart_ckfs_differing_only_in_a_timestamp():
    """Same ids, contents and vectors, another modified_at: the status-applied corpus must be
    built from its own KB (recency, hence authority, differ)."""
    import dataclasses

    c1 = _corpus()
    kb2 = KnowledgeBase(
        facts=tuple(
            dataclasses.replace(f, modified_at=datetime(2020, 1, 1, tzinfo=UTC)) if f.fact_id == "P1" else f
            for f in c1.kb.facts
        )
    )
    c2 = Corpus.from_vectors(kb2, np.asarray(c1.vectors))
    ds = DecisionSet.from_decisions([Decision.mark_status("T1", "T2", fact="T2", status="STALE", operator="a")])
    a1, a2 = dmod.apply_decisions(c1, ds), dmod.apply_decisions(c2, ds)
    assert a1 is not a2
    assert a1.kb.get("P1").modified_at.year == 2026 and a2.kb.get("P1").modified_at.year == 2020
    assert dmod.kb_digest(c1.kb) != dmod.kb_digest(kb2) and c1.kb.fingerprint == kb2.fingerprint


def test_pipeline_decisions_and_fingerprints():
    empty = DecisionSet.empty()
    assert dmod.pipeline_decisions(empty) == (None, "")
    assert dmod.set_fingerprint(empty) == ""
    d1 = DecisionSet.from_decisions([Decision.override("a", "b", winner="b", operator="x")])
    decs, key = dmod.pipeline_decisions(d1)
    assert decs == {"a|b": {"kind": "override", "winner": "b"}} and len(key) == 20
    # the same decisions in force by another path (an earlier dismiss overridden) -> same key
    d2 = DecisionSet.from_decisions(
        [Decision.dismiss("a", "b", operator="y"), Decision.override("a", "b", winner="b", operator="x")]
    )
    assert dmod.pipeline_decisions(d2)[1] == key and dmod.set_fingerprint(d2) == dmod.set_fingerprint(d1)
    d3 = DecisionSet.from_decisions([Decision.override("a", "b", winner="a", operator="x")])
    assert dmod.pipeline_decisions(d3)[1] != key
    # statuses alone: no pair decisions for the pipeline (they travel with the corpus)
    d4 = DecisionSet.from_decisions([Decision.mark_status("a", "b", fact="a", status="STALE", operator="x")])
    assert dmod.pipeline_decisions(d4) == (None, "") and dmod.set_fingerprint(d4) != ""


@pytest.mark.parametrize(
    "source,fmt,expected",
    [
        ("/x/knowledge_base.jsonl", "jsonl", ("knowledge_base.cleaned.jsonl", ".jsonl")),
        ("facts.csv", "csv", ("facts.cleaned.csv", ".csv")),
        ("/x/kb.json", "", ("kb.cleaned.json", ".json")),
        ("upload.ndjson", "jsonl", ("upload.cleaned.jsonl", ".jsonl")),
        ("/data/synth10k", "dir", ("synth10k.cleaned.zip", "dir")),
        ("/data/synth10k", "", ("synth10k.cleaned.zip", "dir")),
    ],
)
def test_download_names(source, fmt, expected):
    assert dmod.ckf_download_name(source, fmt) == expected


def test_cleaned_ckf_bytes_jsonl_and_dir(tmp_path):
    from crp_core.io.ckf import load_ckf, load_ckf_bytes, write_ckf

    corpus = _corpus()
    ds = DecisionSet.from_decisions(
        [
            Decision.mark_status("P1", "P2", fact="P2", status="QUARANTINED", operator="a"),
            Decision.mark_status("x", "y", fact="x", status="DELETED", operator="a"),
        ]
    )  # not in this CKF
    src = write_ckf(corpus.kb, tmp_path / "kb.jsonl")
    kb = load_ckf(src)
    data, name, info = dmod.cleaned_ckf_bytes(kb, ds)
    assert name == "kb.cleaned.jsonl" and info.unknown_facts == ("x",)
    again = load_ckf_bytes(data, name)
    assert [f.status for f in again.facts] == ["ACTIVE", "QUARANTINED", "ACTIVE", "ACTIVE", "ACTIVE"]
    assert [f.content for f in again.facts] == [f.content for f in kb.facts]
    d = write_ckf(corpus.kb, tmp_path / "kbdir")
    kb_dir = load_ckf(d)
    data, name, _ = dmod.cleaned_ckf_bytes(kb_dir, ds)
    assert name == "kbdir.cleaned.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        lines = zf.read("facts.jsonl").decode().splitlines()
    assert [json.loads(x).get("status", "ACTIVE") for x in lines][1] == "QUARANTINED"


def test_history_frame_columns():
    d = Decision.override("a", "b", winner="b", operator="x", note="n")
    fp = "0123456789abcdef" * 4
    e = Decision.dismiss("c", "d", operator="y", ckf_fingerprint=fp)
    r = Decision.revert(
        "a", "b", reverts=7, operator="root", reason="wrong", ckf_fingerprint=fp, kb_name="kb.jsonl", role="admin"
    )
    f = cv.history_frame([d, e, r])
    assert list(f.columns) == [
        "id",
        "pair",
        "kb",
        "kind",
        "winner",
        "target_fact",
        "new_status",
        "operator",
        "role",
        "origin",
        "decided_at",
        "reverts",
        "note",
    ]
    assert f.to_dict("records")[0] == {
        "id": None,
        "pair": "a|b",
        "kb": "(none: applies to every KB)",
        "decided_at": None,
        "operator": "x",
        "role": "operator",
        "origin": "cli",
        "kind": "override",
        "winner": "b",
        "target_fact": "",
        "new_status": "",
        "reverts": "",
        "note": "n",
    }
    assert f.kb.tolist()[1:] == ["0123456789ab", "kb.jsonl · 0123456789ab"]  # the fingerprint's first 12 digits
    assert (f.kind[2], f.reverts[2], f.role[2], f.note[2]) == ("revert", "#7", "admin", "wrong")
    assert cv.decision_summary(r) == "revert of #7"


def test_the_log_of_one_knowledge_base_keeps_decisions_without_a_fingerprint():
    mine, other = "a" * 64, "b" * 64
    log = [
        Decision.dismiss("a", "b", operator="x", ckf_fingerprint=mine),
        Decision.dismiss("a", "b", operator="x", ckf_fingerprint=other),
        Decision.dismiss("c", "d", operator="x"),
    ]
    assert cv.log_for_kb(log, mine) == [log[0], log[2]]
    assert cv.log_for_kb(log, other) == [log[1], log[2]]


def test_same_decision_and_next_pair():
    d = Decision.override("a", "b", winner="b", operator="x", note="n", ckf_fingerprint="f")
    assert cv.same_decision(d, Decision.override("b", "a", winner="b", operator="x", note="n", ckf_fingerprint="f"))
    for other in (
        Decision.override("a", "b", winner="a", operator="x", note="n", ckf_fingerprint="f"),
        Decision.override("a", "b", winner="b", operator="y", note="n", ckf_fingerprint="f"),
        Decision.override("a", "b", winner="b", operator="x", note="corrected", ckf_fingerprint="f"),
        Decision.accept("a", "b", winner="b", operator="x", note="n", ckf_fingerprint="f"),
        Decision.override("a", "b", winner="b", operator="x", note="n", ckf_fingerprint="g"),
    ):
        assert not cv.same_decision(d, other), other
    keys = ["p|q", "r|s", "t|u"]
    assert [cv.next_pair(keys, k) for k in keys] == ["r|s", "t|u", None]
    assert cv.next_pair(keys, "gone|x") == "p|q"
    assert cv.next_pair([], "gone|x") is None


def test_agreement_frame():
    from crp_core.triage.agreement import operator_agreement

    log = [
        Decision.dismiss("a", "b", operator="ann"),
        Decision.dismiss("c", "d", operator="ann"),
        Decision.dismiss("a", "b", operator="ben"),
        Decision.override("c", "d", winner="c", operator="ben"),
    ]
    f = cv.agreement_frame(operator_agreement(log))
    # p_o = 1/2; p_e = (2 * 1) / 4 = 1/2 (ann: dismiss x2; ben: dismiss, winner c): kappa = 0
    assert f.to_dict("records") == [
        {
            "operator_a": "ann",
            "operator_b": "ben",
            "shared pairs": 2,
            "agreed": 1,
            "percent agreement": "50.0 %",
            "Cohen's kappa": "0.000",
        }
    ]
    assert cv.agreement_frame(()).empty


# ---- the deciding fields of a pair (pair cards) ---------------------------------------------------
def _evidence_kb():
    from crp_core.io.ckf import load_ckf_bytes

    rows = [
        {
            "fact_id": "A",
            "content": "port 2379",
            "source_type": "official_documentation",
            "source_id": "docs",
            "source_location": "<b>ports</b>",
            "modified_at": "2026-09-01T00:00:00Z",
            "ingested_at": "2026-09-02T00:00:00Z",
        },
        {
            "fact_id": "B",
            "content": "port 4001",
            "source_type": "community",
            "source_id": "docs",
            "ttl": "P2Y",
            "modified_at": "2026-09-01T00:00:00Z",
            "ingested_at": "2026-09-02T00:00:00Z",
        },
    ]
    return load_ckf_bytes("".join(json.dumps(r) + "\n" for r in rows).encode(), "kb.jsonl")


def test_pair_evidence_fields_ttl_origin_and_differences():
    kb = _evidence_kb()
    now = datetime(2026, 11, 1, tzinfo=UTC)
    ev = cv.pair_evidence(_pair("A", "B"), kb, {"B": "STALE"}, now=now, config=CRPConfig())
    rows = {r.field: (r.a, r.b, r.differs) for r in ev.itertuples(index=False)}
    assert list(ev["field"]) == list(cv.EVIDENCE_FIELDS)
    assert rows["source_id"] == ("docs", "docs", False)
    assert rows["source_location"] == ("<b>ports</b>", "-", True)
    assert rows["modified_at"] == ("2026-09-01T00:00:00Z", "2026-09-01T00:00:00Z", False)
    assert rows["age at now"] == ("61.0 d", "61.0 d", False)
    assert rows["TTL"] == ("365.0 d (default for official_documentation)", "P2Y = 730.0 d (the fact's own ttl)", True)
    assert rows["status in force"] == ("ACTIVE", "STALE (operator)", True)
    assert rows["recency rule"] == ("fresh", "expired (status STALE: operator mark)", True)
    assert rows["authority"] == ("0.6400", "0.1350", True)
    assert cv.differing_fields(ev)[:2] == ["source_type", "source_location"]


def test_pair_evidence_of_a_fact_the_ckf_lacks_is_dashes():
    kb = _evidence_kb()
    ev = cv.pair_evidence(_pair("A", "GONE"), kb, {}, now=datetime(2026, 11, 1, tzinfo=UTC), config=CRPConfig())
    assert set(ev["b"]) == {"-"} and ev["a"].tolist()[0] == "official_documentation"


def _draw_pair(pair_a: str, pair_b: str) -> None:
    """The selected pair's views, drawn in an AppTest script (the records built as the tests above do)."""
    import json
    from datetime import UTC, datetime

    from crp_core import Authority, ConflictPair, CRPConfig, load_ckf_bytes, values_conflict
    from crp_ui import conflicts_view as cv

    rows = [
        {"fact_id": pair_a, "content": "<script>x</script> port 2379", "source_type": "web"},
        {"fact_id": pair_b, "content": "<script>x</script> port 4001", "source_type": "community", "status": "STALE"},
    ]
    kb = load_ckf_bytes("".join(json.dumps(r) + "\n" for r in rows).encode(), "kb.jsonl")
    vc = values_conflict(rows[0]["content"], rows[1]["content"])
    auth = {
        pair_a: Authority(pair_a, "web", 0.5, 1.0, 0.5, 0.25),
        pair_b: Authority(pair_b, "community", 0.4, 0.3, 0.6, 0.072),
    }
    pair = ConflictPair(pair_a, pair_b, 0.97, vc.patterns, vc, auth, (pair_a,), pair_b, False, margin=0.178)
    cv.pair_head(pair)
    cv.pair_case(pair, kb, {}, now=datetime(2026, 11, 1, tzinfo=UTC), config=CRPConfig())
    cv.authority_table(pair, key="auth")


def test_the_pair_views_are_streamlit_elements_with_every_text_escaped():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_draw_pair, args=(SCRIPT, "E2")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert {m.label: m.value for m in at.metric} == {
        "cosine similarity": "0.9700",
        "authority margin": "0.1780",
        "arbitration": "A wins",
    }
    texts = [h.value for h in at.html if "crp-fact-text" in h.value]
    assert len(texts) == 2 and all("<script>" not in t for t in texts)
    assert "&lt;script&gt;x&lt;/script&gt;" in texts[0] and '<mark class="crp-diff"' in texts[0]
    shown = "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)
    # the ids are escaped Markdown, or code spans (shown literally)
    assert "<script>" not in re.sub(r"`[^`]*`", "", shown) and "\\<script\\>alert" in shown
    (evidence,) = [t.value for t in at.table]
    assert list(evidence.columns) == ["field", "A", "B", "differs"] and len(evidence) == len(cv.EVIDENCE_FIELDS)
    assert evidence.loc[evidence["field"] == "source\\_type", "differs"].tolist() == ["≠"]
    authority, instants = (
        next(d.value for d in at.dataframe if "role" in d.value.columns),
        next(d.value for d in at.dataframe if "what" in d.value.columns),
    )
    # the winner over time: its exact instants (the web fact has no modified_at: no marks, only now)
    assert instants["what"].tolist() == ["now (this run)"]
    assert authority["fact_id"].tolist() == [SCRIPT, "E2"] and authority["role"].tolist() == ["winner", "suppressed"]
    assert authority["authority"].tolist() == pytest.approx([0.25, 0.072])


def test_ttl_origin_for_timeless_and_no_default():
    f = Fact("T", "x", ttl_kind="timeless")
    assert cv.ttl_origin(f, float("inf"), "web") == "none: timeless (the fact's own ttl)"
    assert (
        cv.ttl_origin(Fact("U", "x", source_type="user_provided"), float("inf"), "user_provided")
        == "no expiry (no default TTL for user_provided)"
    )


def test_pair_marks_name_the_loser_and_operator_statuses():
    fa, fb = Fact("A", "x"), Fact("B", "y", status="STALE")
    p = _pair("A", "B", suppressed="B")
    assert cv.pair_marks(p, fa, fb, {}) == "B suppressed"
    assert cv.pair_marks(p, fa, fb, {"A": "QUARANTINED", "B": "STALE"}) == "A QUARANTINED (operator) · B suppressed"


# ---- what decisions do to a CKF, the pair parameter -----------------------------------------------
def test_applied_summary_counts_decisions_on_this_ckf_only():
    kb = _evidence_kb()
    ds = DecisionSet.from_decisions(
        [
            Decision.override("A", "B", winner="B", operator="o"),
            Decision.dismiss("A", "ghost", operator="o"),  # names a fact this CKF lacks: left out
            Decision.mark_status("A", "B", fact="A", status="STALE", operator="o"),
            Decision.mark_status("B", "ghost", fact="B", status="ACTIVE", operator="o"),  # no change
        ]
    )
    s = dmod.applied_summary(ds, kb)
    assert s.decisions == 3
    assert dict(s.suppressed) == {"A": "B"}
    assert dict(s.remarked) == {"A": ("ACTIVE", "STALE")}
    assert s.affected == ("A",)
    assert dmod.applied_sentence(s) == "3 operator decisions applied; 1 fact suppressed or re-marked"
    assert not dmod.applied_summary(DecisionSet.empty(), kb)


@pytest.mark.parametrize(
    "value, want", [("b|a", "a|b"), ("a|b", "a|b"), ("x\\|y|z", "x\\|y|z"), ("", None), (None, None)]
)
def test_parse_pair_param_accepts_either_order(value, want):
    assert dmod.parse_pair_param(value) == (want, "")


@pytest.mark.parametrize("value", ["solo", "a|b|c", "a\\", "a|a", "|b", "x" * 2001, "a\n|b", "a|\x85b", "a\x00|b"])
def test_parse_pair_param_refuses_with_a_warning(value):
    key, note = dmod.parse_pair_param(value)
    assert key is None and note.startswith("pair=") and "ignored" in note and len(note) < 160


def test_pairs_with_a_session_write_back_are_marked_as_their_own_kind():
    import pandas as pd

    from crp_ui.conflict_queue import with_writeback_marks

    frame = pd.DataFrame(
        {
            "fact_a": ["kb-tel-off", "kb-a", "kb-c"],
            "fact_b": ["wb-1", "kb-b", "wb-2"],
            "marks": ["B suppressed", "", ""],
        }
    )
    written = {"wb-1": "window 1 of SDK session b3163490", "wb-2": "window 2 of SDK session b3163490"}
    out = with_writeback_marks(frame, written)
    assert out["marks"].tolist() == [
        "B suppressed · B written back: window 1 of SDK session b3163490",
        "",
        "B written back: window 2 of SDK session b3163490",
    ]
    assert frame["marks"].tolist() == ["B suppressed", "", ""]  # the input frame is not changed
    assert with_writeback_marks(frame, {}) is frame


def test_claims_in_the_queue():
    from datetime import UTC, datetime

    from crp_core import Claim
    from crp_ui.triage_live import claim_cell, claimed_by_others

    until = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    mine, theirs = Claim("a|b", "ann", until), Claim("c|d", "ben", until)
    now = until.timestamp() - 90.4
    assert claim_cell(None, "ann", now) == ""
    assert claim_cell(mine, "ann", now) == "claimed by you"
    assert claim_cell(theirs, "ann", now) == "held by ben (90 s left)"
    assert claim_cell(theirs, "ann", until.timestamp() + 5) == "held by ben (0 s left)"
    assert claimed_by_others({"a|b": mine, "c|d": theirs}, "ann") == {"c|d": theirs}
    display = pd.DataFrame({"state": ["undecided", "dismissed"]})
    assert cv.with_claims(display, ["x|y", "z|w"], {"c|d": "held by ben"}) is display  # no claimed row: as is
    got = cv.with_claims(display, ["a|b", "c|d"], {"c|d": "held by ben (90 s left)"})
    assert got.state.tolist() == ["undecided", "dismissed · held by ben (90 s left)"]
    assert display.state.tolist() == ["undecided", "dismissed"]  # the shown frame is not changed


def test_authority_bars_colour_follows_the_fact_role_not_its_side():
    """The winner's bar is the winner colour whether it is side A or side B (an override or another now
    can make B win); the loser's the loser colour; a tie both tie colour; the text is the arithmetic."""
    from crp_ui import charts
    from crp_ui.chart_style import LOSER, TIE, WINNER

    def colours(p):
        fig = charts.authority_bars(p)
        return {t.y[0].split(" · ")[0]: (t.marker.color, t.name) for t in fig.data}, fig

    a_wins, fig = colours(_pair("E1", "E2", suppressed="E2"))
    assert a_wins == {"A": (WINNER, "winner"), "B": (LOSER, "suppressed")}
    assert [t.text[0] for t in fig.data] == ["0.8 × 1.0000 × 0.8 = 0.6400", "0.75 × 0.3000 × 0.6 = 0.1350"]
    assert [t.x[0] for t in fig.data] == pytest.approx([0.64, 0.135])
    b_wins, _ = colours(_pair("E1", "E2", suppressed="E1", kept=("E2",), decision="override"))
    assert b_wins == {"A": (LOSER, "suppressed"), "B": (WINNER, "winner (override)")}
    tie, fig = colours(_pair("E1", "E2", tied=True, margin=0.0))
    assert tie == {"A": (TIE, "tied"), "B": (TIE, "tied")}
    assert [t.showlegend for t in fig.data] == [True, False]  # the legend says "tied" once
    assert [t.showlegend for t in charts.authority_bars(_pair("E1", "E2", suppressed="E2")).data] == [True, True]
    hostile, _ = colours(_pair("<b>x</b>", "E2", suppressed="E2"))
    assert "A · &lt;b&gt;x&lt;/b&gt;" in {t.y[0] for t in charts.authority_bars(_pair("<b>x</b>", "E2")).data}
    assert hostile["A"] == (WINNER, "winner")

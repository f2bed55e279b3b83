"""The bundled sample knowledge base ``sample_ckf/`` (part 6).

Without the model: the file loads, has the promised size / domains / source types / statuses /
TTL shapes, the planted-conflict table is consistent with the facts (text patterns through
``values_conflict``, expected winners and ties through ``authority_of``), the scenarios load, and
the builder reproduces the committed files byte for byte.

With the real MiniLM model (``-m model``): planted pairs are near-paraphrases (cosine > 0.85),
the whole-CKF scan finds exactly the planted conflicts, and every scenario shows its SPEC-027
effects with the default configuration (resolved contradiction, tie + NOTE, stale-vs-fresh
ranking change, n-gram guard, partitioned fan-out with 0 cross-branch duplicates vs naive > 0).
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.config import SOURCE_TYPES, CRPConfig
from crp_core.factors.recency import compute_recency
from crp_core.io.ckf import load_ckf
from crp_core.io.scenario import load_scenario
from crp_core.stages.contradictions import authority_of, values_conflict
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
SAMPLE = ROOT / "sample_ckf"
KB_PATH = SAMPLE / "knowledge_base.jsonl"
PLANTED_PATH = SAMPLE / "planted_conflicts.json"
SCENARIO_PATHS = sorted((SAMPLE / "scenarios").glob("*.json"))
NOW = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)  # the scenarios' "now"
PATTERNS = {"NUMBER_CHANGED", "ENTITY_SUBSTITUTED", "NEGATION_FLIP", "DATE_SHIFTED", "MAGNITUDE_ALTERED"}


@pytest.fixture(scope="session")
def kb():
    return load_ckf(KB_PATH)


@pytest.fixture(scope="session")
def planted():
    return json.loads(PLANTED_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def raw_rows():
    return [json.loads(line) for line in KB_PATH.read_text(encoding="utf-8").splitlines()]


def _pairs(planted, group):
    return [(p["pair_id"], p["fact_a"], p["fact_b"]) for p in planted[group]]


# ---- the knowledge base itself ----------------------------------------------------------------
def test_size_domains_and_shipped_embeddings(kb, raw_rows):
    assert len(kb) >= 400
    # every fact ships its MiniLM embedding (tests/repo/test_sample_embeddings.py checks them in detail)
    assert kb.embeddings is not None and kb.embeddings.shape == (len(kb), 384)
    assert kb.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert all(len(r["embedding"]) == 384 for r in raw_rows)
    domains = Counter(f.metadata["domain"] for f in kb.facts)
    assert set(domains) == {"k8s", "gov", "lumen"}
    assert min(domains.values()) >= 100


def test_every_source_type_is_used(kb):
    assert set(f.source_type for f in kb.facts) == set(SOURCE_TYPES)


def test_status_mix(kb):
    statuses = Counter(f.status for f in kb.facts)
    assert statuses["STALE"] >= 1 and statuses["DELETED"] >= 1 and statuses["QUARANTINED"] >= 1
    assert 5 <= len(kb) - statuses["ACTIVE"] <= 10


def test_ttl_shapes_and_timestamps(kb, raw_rows):
    ttls = Counter(r.get("ttl") for r in raw_rows)
    for shape in ("none", "P90D", "P6M", "P1Y", "PT12H", "P30D"):
        assert ttls[shape] >= 1, shape
    assert ttls[None] > len(raw_rows) / 2  # most facts take the default TTL of their source type
    assert sum(1 for f in kb.facts if f.source_type == "user_provided") >= 10
    mods = [f.effective_modified_at for f in kb.facts]
    assert all(m is not None for m in mods)
    assert min(mods) < datetime(2021, 1, 1, tzinfo=UTC)  # spread over ~6 years
    assert max(mods) < NOW  # no timestamps in the scenarios' future
    assert sum(1 for f in kb.facts if f.modified_at and f.modified_at.year == 2026) > 100


def test_fact_length_and_unique_contents(kb):
    words = [len(f.content.split()) for f in kb.facts]
    assert min(words) >= 12 and max(words) <= 45
    assert len({f.content for f in kb.facts}) == len(kb)


def test_loads_without_warnings(kb):
    assert kb.skipped == () and kb.warnings == ()


# ---- planted pairs (text and metadata only) ---------------------------------------------------
def test_planted_table_shape(kb, planted):
    conflicts = planted["conflicts"]
    assert len(conflicts) >= 15
    assert {c["pattern"] for c in conflicts} == PATTERNS
    assert sum(c["expected_winner"] == "tie" for c in conflicts) >= 2
    assert len(planted["paraphrases"]) >= 2 and len(planted["near_duplicates"]) >= 2
    seen = set()
    for group in ("conflicts", "paraphrases", "near_duplicates"):
        for pid, a, b in _pairs(planted, group):
            assert kb.get(a) is not None and kb.get(b) is not None, pid
            assert kb.get(a).retrievable and kb.get(b).retrievable, pid
            key = frozenset((a, b))
            assert key not in seen, pid
            seen.add(key)


def test_planted_conflicts_have_their_pattern(kb, planted):
    for c in planted["conflicts"]:
        vc = values_conflict(kb.get(c["fact_a"]).content, kb.get(c["fact_b"]).content)
        assert vc is not None, c["pair_id"]
        assert c["pattern"] in vc.patterns, (c["pair_id"], vc.patterns)


@pytest.mark.parametrize("group", ["paraphrases", "near_duplicates"])
def test_paraphrases_and_duplicates_do_not_conflict(kb, planted, group):
    for pid, a, b in _pairs(planted, group):
        assert values_conflict(kb.get(a).content, kb.get(b).content) is None, pid


def _authorities(kb, ids, config=CRPConfig()):
    rows = np.array([kb.index_of(i) for i in ids])
    rec = compute_recency(kb, rows, NOW, config)
    return {i: authority_of(kb.get(i), float(f), config) for i, f in zip(ids, rec.factor)}


def test_expected_winners_and_ties_by_authority(kb, planted):
    for c in planted["conflicts"]:
        a, b = c["fact_a"], c["fact_b"]
        auth = _authorities(kb, [a, b])
        if c["expected_winner"] == "tie":
            # an exact tie: identical inputs, so identical authority (not merely within tolerance)
            fa, fb = kb.get(a), kb.get(b)
            assert (fa.source_type, fa.importance_weight, fa.effective_modified_at, fa.ttl_kind, fa.ttl_seconds) == (
                fb.source_type,
                fb.importance_weight,
                fb.effective_modified_at,
                fb.ttl_kind,
                fb.ttl_seconds,
            )
            assert auth[a].authority == auth[b].authority, c["pair_id"]
        else:
            loser = b if c["expected_winner"] == a else a
            assert c["expected_winner"] in (a, b)
            assert auth[c["expected_winner"]].authority > auth[loser].authority + 1e-6, c["pair_id"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offset_days=st.floats(min_value=-30.0, max_value=60.0, allow_nan=False))
def test_arbitration_is_stable_around_the_scenarios_now(kb, planted, offset_days):
    """Within a month before and two months after ``now`` every planted winner still wins and
    every planted tie stays exact (a tie's inputs are identical, so it holds at any time)."""
    at = NOW + timedelta(days=offset_days)
    config = CRPConfig()
    for c in planted["conflicts"]:
        a, b = c["fact_a"], c["fact_b"]
        rec = compute_recency(kb, np.array([kb.index_of(a), kb.index_of(b)]), at, config)
        auth = {i: authority_of(kb.get(i), float(f), config).authority for i, f in zip((a, b), rec.factor)}
        if c["expected_winner"] == "tie":
            assert auth[a] == auth[b], (c["pair_id"], at)
        else:
            loser = b if c["expected_winner"] == a else a
            assert auth[c["expected_winner"]] > auth[loser], (c["pair_id"], at)


def test_spec_example_pair_is_present(kb, planted):
    """SPEC-027 §2.1: current official v3.5 docs (2379) against legacy v2.x docs (4001)."""
    c01 = next(c for c in planted["conflicts"] if c["pair_id"] == "C01")
    cur, old = kb.get(c01["fact_a"]), kb.get(c01["fact_b"])
    assert "etcd default client port is 2379" in cur.content and cur.source_type == "official_documentation"
    assert "etcd default client port is 4001" in old.content and old.source_id.startswith("etcd-docs-v2")
    auth = _authorities(kb, [cur.fact_id, old.fact_id])
    # official: 0.80 * 1.0 (modified 2026-07-02, ttl P1Y, age 136 d <= 182.5 d) * 0.80 = 0.64
    assert auth[cur.fact_id].authority == pytest.approx(0.64)
    # version_specific: 0.80 * 0.30 (2021, default ttl 180 d, expired) * 0.85 = 0.204
    assert auth[old.fact_id].authority == pytest.approx(0.204)


# ---- scenarios ---------------------------------------------------------------------------------
def test_scenarios_load_and_have_the_promised_shape(planted):
    assert len(SCENARIO_PATHS) >= 3
    names = set()
    for path in SCENARIO_PATHS:
        s = load_scenario(path)
        names.add(s.name)
        assert s.name == path.stem and s.description and s.query
        assert s.now == NOW
        assert len(s.sub_queries) >= 6 and all(sq.label for sq in s.sub_queries)
        assert s.addressed and all(0 < a.depth_weight <= 1 for a in s.addressed)
        assert 1 <= len(s.prior_outputs) <= 2
        assert 2 <= s.fanout_width <= 4
        assert len(s.residual_set) >= 2 * s.fanout_width
    assert names == set(planted["scenarios"])


def test_builder_reproduces_the_committed_files(tmp_path, monkeypatch):
    """With the committed vectors reused (every text unchanged), the builder writes every committed file
    byte for byte: the CKF with its embeddings, the planted table, each bundled scenario with its
    embeddings and the digests; no model is needed for that (embedding is made to fail)."""
    spec = importlib.util.spec_from_file_location("sample_ckf_build", SAMPLE / "_build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def no_model(groups):
        raise AssertionError(f"the builder wanted to embed {len(groups)} group(s): a text changed without a rebuild")

    monkeypatch.setattr(mod, "embed_groups", no_model)
    mod.build(tmp_path)
    names = ["knowledge_base.jsonl", "planted_conflicts.json", "embedding_digests.json"]
    names += [p.relative_to(SAMPLE).as_posix() for g in mod.SCENARIO_GLOBS for p in sorted(SAMPLE.glob(g))]
    assert len(names) == 3 + 12
    for name in names:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


# ---- with the real MiniLM model ----------------------------------------------------------------
@pytest.fixture(scope="session")
def corpus(kb, tmp_path_factory):
    from crp_core.corpus.prepared import prepare_corpus

    return prepare_corpus(kb, cache_dir=tmp_path_factory.mktemp("sample_ckf_cache"), config=CRPConfig())


@pytest.fixture(scope="session")
def scenario_runs(corpus):
    from crp_core.pipeline import run_pipeline
    from crp_core.report import fanout_report, run_report

    runs = {}
    for path in SCENARIO_PATHS:
        s = load_scenario(path)
        result = run_pipeline(corpus, s, CRPConfig())
        runs[s.name] = (run_report(result), fanout_report(result.fanout, result.headers))
    return runs


def _cos(corpus, a, b):
    va, vb = corpus.vectors[corpus.kb.index_of(a)], corpus.vectors[corpus.kb.index_of(b)]
    return float(np.dot(va, vb))


@pytest.mark.model
def test_planted_pairs_are_near_paraphrases(corpus, planted):
    for pid, a, b in _pairs(planted, "conflicts") + _pairs(planted, "paraphrases"):
        assert _cos(corpus, a, b) > 0.85, pid
    for pid, a, b in _pairs(planted, "near_duplicates"):
        assert _cos(corpus, a, b) > 0.95, pid


@pytest.mark.model
def test_whole_ckf_scan_finds_exactly_the_planted_conflicts(corpus, planted):
    from crp_core.analysis.scan import scan_ckf

    scan = scan_ckf(corpus, CRPConfig(), NOW)
    found = {frozenset((p.fact_a, p.fact_b)): p for p in scan.pairs}
    expected = {frozenset((c["fact_a"], c["fact_b"])): c for c in planted["conflicts"]}
    assert set(found) == set(expected)
    for key, c in expected.items():
        p = found[key]
        assert c["pattern"] in p.patterns, c["pair_id"]
        if c["expected_winner"] == "tie":
            assert p.tied and p.suppressed is None, c["pair_id"]
        else:
            assert not p.tied and p.suppressed not in (None, c["expected_winner"]), c["pair_id"]


@pytest.mark.model
@pytest.mark.parametrize("name", [p.stem for p in SCENARIO_PATHS])
def test_scenario_shows_resolved_and_tied_contradictions(scenario_runs, planted, name):
    report, _ = scenario_runs[name]
    expected = planted["scenarios"][name]
    by_pair = {frozenset((c["fact_a"], c["fact_b"])): c for c in report["conflicts"]}
    table = {c["pair_id"]: c for c in planted["conflicts"]}
    facts = {f["fact_id"]: f for f in report["facts"]}
    for r in expected["resolved"]:
        c = by_pair[frozenset((r["winner"], r["suppressed"]))]
        assert not c["tied"] and c["suppressed"] == r["suppressed"], r["pair_id"]
        assert facts[r["suppressed"]]["suppressed"] and not facts[r["suppressed"]]["in_envelope"]
        assert facts[r["winner"]]["in_envelope"]
    for pid in expected["tied"]:
        t = table[pid]
        c = by_pair[frozenset((t["fact_a"], t["fact_b"]))]
        assert c["tied"] and c["suppressed"] is None, pid
        assert facts[t["fact_a"]]["in_envelope"] and facts[t["fact_b"]]["in_envelope"]
    text = report["envelope"]["text"]
    header = report["headers"]["CRP-Context-Conflicts-Resolved"]
    n_tied = sum(1 for c in report["conflicts"] if c["tied"] and not c.get("skipped"))
    assert n_tied == len(expected["tied"])
    if expected["tied"]:
        assert "NOTE: The following two facts conflict" in text
        assert header.endswith(f"; unresolved={n_tied}")
    else:
        assert "NOTE:" not in text and "unresolved" not in header
    assert int(header.split(";")[0]) >= len(expected["resolved"]) + n_tied


def test_every_effect_is_expected_somewhere(planted):
    """Across the bundled scenarios each SPEC-027 effect is planted at least once."""
    effects = planted["scenarios"].values()
    for key in ("resolved", "tied", "stale_vs_fresh", "ngram_guard"):
        assert sum(len(e[key]) for e in effects) >= 2, key


@pytest.mark.model
@pytest.mark.parametrize("name", [p.stem for p in SCENARIO_PATHS])
def test_scenario_shows_stale_vs_fresh_ranking_change(scenario_runs, planted, name):
    """A stale fact that would outrank a fresh one without the recency factor ranks below it with it."""
    report, _ = scenario_runs[name]
    facts = {f["fact_id"]: f for f in report["facts"]}
    for pair in planted["scenarios"][name]["stale_vs_fresh"]:
        stale, fresh = facts[pair["stale"]], facts[pair["fresh"]]
        assert stale["role"] != "gated" and fresh["role"] != "gated"
        assert stale["recency_factor"] < fresh["recency_factor"]
        without_s = stale["cdr_score"] / stale["recency_factor"]
        without_f = fresh["cdr_score"] / fresh["recency_factor"]
        assert without_s > without_f and stale["cdr_score"] < fresh["cdr_score"], pair
    assert int(report["headers"]["CRP-Context-Recency-Penalised"]) > 0


@pytest.mark.model
@pytest.mark.parametrize("name", [p.stem for p in SCENARIO_PATHS])
def test_scenario_fires_the_ngram_guard(scenario_runs, planted, name):
    report, _ = scenario_runs[name]
    facts = {f["fact_id"]: f for f in report["facts"]}
    for fid in planted["scenarios"][name]["ngram_guard"]:
        assert facts[fid]["ngram_penalty"] > 0 and facts[fid]["role"] != "gated", fid
    assert int(report["headers"]["CRP-Context-NGram-Guard-Activations"]) >= 1


@pytest.mark.model
@pytest.mark.parametrize("name", [p.stem for p in SCENARIO_PATHS])
def test_scenario_fanout_partitioned_has_no_duplicates_naive_has_some(scenario_runs, planted, name):
    _, fan = scenario_runs[name]
    assert fan["active"]
    assert [sorted(p) for p in fan["partitions"]] == [sorted(p) for p in planted["scenarios"][name]["partitions"]]
    assert fan["fan_in"]["duplicates"] == []
    assert len(fan["naive"]["fan_in"]["duplicates"]) > 0
    picked = [f for b in fan["branches"] for f in b["selected"]]
    assert len(picked) == len(set(picked))  # no fact chosen by two partitioned branches

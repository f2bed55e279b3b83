"""``crp-inspect run`` (docs/reference/reports.md): JSON report, summary, config precedence, clear errors."""

from __future__ import annotations

import json

import pytest

from crp_core.cli import main

FACTS = [
    {
        "fact_id": "etcd-2379",
        "content": "etcd default client port is 2379",
        "source_type": "official_documentation",
        "modified_at": "2026-03-01T00:00:00Z",
        "embedding": [1.0, 0.05, 0.0, 0.0, 0.0],
    },
    {
        "fact_id": "etcd-4001",
        "content": "etcd default client port is 4001",
        "source_type": "official_documentation",
        "modified_at": "2019-01-01T00:00:00Z",
        "embedding": [1.0, 0.0, 0.05, 0.0, 0.0],
    },
    {
        "fact_id": "etcd-peer",
        "content": "etcd peers talk to each other on port 2380",
        "modified_at": "2026-03-01T00:00:00Z",
        "embedding": [0.75, 0.0, 0.0, 0.66, 0.0],
    },
    {
        "fact_id": "gone",
        "content": "etcd default client port is 1234",
        "status": "DELETED",
        "embedding": [1.0, 0.0, 0.0, 0.0, 0.0],
    },
]
SCENARIO = {
    "name": "etcd ports",
    "query": {"text": "Which port does an etcd client use?", "embedding": [1, 0, 0, 0, 0]},
    "now": "2026-06-01T00:00:00Z",
    "embedding_model": "test-model",
    "sub_queries": [{"id": "s1", "text": "client port", "embedding": [1, 0.1, 0, 0, 0]}],
    "addressed": [],
    "prior_outputs": [],
}


@pytest.fixture()
def files(tmp_path):
    ckf = tmp_path / "ckf.json"
    ckf.write_text(json.dumps({"embedding_model": "test-model", "facts": FACTS}), encoding="utf-8")
    scen = tmp_path / "scenario.json"
    scen.write_text(json.dumps(SCENARIO), encoding="utf-8")
    return tmp_path, ckf, scen


def run(capsys, *args):
    code = main(["run", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_report(files, capsys):
    tmp, ckf, scen = files
    code, out, err = run(capsys, "--ckf", ckf, "--scenario", scen, "--cache-dir", tmp / "cache", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["headers"]["CRP-Context-Conflicts-Resolved"] == "1"
    assert "etcd-2379" in rep["envelope"]["order"] and "etcd-4001" not in rep["envelope"]["order"]
    assert "gone" not in {f["fact_id"] for f in rep["facts"]}
    (c,) = rep["conflicts"]
    assert c["kept"] == ["etcd-2379"] and c["suppressed"] == "etcd-4001"
    # byte-identical on a second run
    code2, out2, _ = run(capsys, "--ckf", ckf, "--scenario", scen, "--cache-dir", tmp / "cache", "--json")
    assert code2 == 0 and out2 == out


def test_summary(files, capsys):
    tmp, ckf, scen = files
    code, out, err = run(capsys, "--ckf", ckf, "--scenario", scen, "--cache-dir", tmp / "cache")
    assert code == 0, err
    assert "CRP-Context-Conflicts-Resolved: 1" in out
    assert "etcd-2379" in out and "anchor" in out and "cdr=" in out
    assert "kept etcd-2379, suppressed etcd-4001" in out


def test_config_precedence(files, capsys, tmp_path):
    _, ckf, scen_path = files
    cfg = tmp_path / "c.toml"
    cfg.write_text("envelope_fact_budget = 5\ntoken_budget = 900\n", encoding="utf-8")
    scen = dict(SCENARIO, config={"envelope_fact_budget": 3})
    scen_path.write_text(json.dumps(scen), encoding="utf-8")
    base = ["--ckf", ckf, "--scenario", scen_path, "--cache-dir", tmp_path / "cache", "--config", cfg, "--json"]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    c = json.loads(out)["config"]
    assert c["envelope_fact_budget"] == 3  # scenario beats the file
    assert c["token_budget"] == 900  # the file beats the defaults
    code, out, err = run(capsys, *base, "--set", "envelope_fact_budget=2", "--set", "ttl_days.news=60")
    c = json.loads(out)["config"]
    assert code == 0 and c["envelope_fact_budget"] == 2 and c["ttl_days"]["news"] == 60  # --set beats all


def test_now_overrides_the_scenario(files, capsys):
    tmp, ckf, scen = files
    code, out, _ = run(
        capsys,
        "--ckf",
        ckf,
        "--scenario",
        scen,
        "--cache-dir",
        tmp / "cache",
        "--json",
        "--now",
        "2019-01-02T00:00:00Z",
    )
    rep = json.loads(out)
    assert code == 0 and rep["now"] == "2019-01-02T00:00:00Z"
    # in 2019 the legacy fact is fresh and the 2026 one lies in the future (age 0, a warning)
    assert any("after now" in w for w in rep["warnings"])


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--set", "no_such_key=1"], "unknown configuration key 'no_such_key'"),
        (["--set", "envelope_fact_budget=many"], "envelope_fact_budget"),
        (["--now", "yesterday"], "--now"),
    ],
)
def test_bad_arguments_are_clear_errors(files, capsys, extra, needle):
    tmp, ckf, scen = files
    code, out, err = run(capsys, "--ckf", ckf, "--scenario", scen, "--cache-dir", tmp / "cache", *extra)
    assert code == 2 and needle in err and "Traceback" not in err


def test_bad_ckf_names_line_and_field(files, capsys):
    tmp, _, scen = files
    bad = tmp / "bad.json"
    rows = [dict(FACTS[0]), dict(FACTS[2], importance_weight=3.0)]
    bad.write_text(json.dumps({"embedding_model": "test-model", "facts": rows}), encoding="utf-8")
    code, _, err = run(capsys, "--ckf", bad, "--scenario", scen, "--cache-dir", tmp / "cache")
    assert code == 2 and "line 2" in err and "importance_weight" in err
    code, out, err = run(capsys, "--ckf", bad, "--scenario", scen, "--cache-dir", tmp / "cache", "--lenient", "--json")
    assert code == 0, err
    assert [f["fact_id"] for f in json.loads(out)["facts"]] == ["etcd-2379"]


def test_a_cache_that_cannot_be_kept_is_a_warning_in_words_and_the_run_goes_on(files, capsys, monkeypatch):
    """This tool's warnings read ``crp-inspect: warning: ...``, without the module and line that raised them."""
    tmp, ckf, scen = files
    blocker = tmp / "cache-is-a-file"
    blocker.write_bytes(b"x")
    monkeypatch.setenv("CRP_CACHE_DIR", str(blocker))
    code, out, err = run(capsys, "--ckf", ckf, "--scenario", scen, "--json")
    assert code == 0 and json.loads(out)["envelope"]
    said = [line for line in err.splitlines() if "could not persist the HNSW index" in line]
    assert len(said) == 1 and said[0].startswith(f"crp-inspect: warning: could not persist the HNSW index to {blocker}")
    assert "RuntimeWarning" not in err and ".py:" not in err


def test_a_dismissed_pair_reads_both_kept_and_an_override_names_the_operator(files, capsys):
    tmp, ckf, scen = files
    db = str(tmp / "d.sqlite")
    base = ["triage", "record", "--db", db, "--ckf", str(ckf), "--operator", "ann", "--pair", "etcd-2379", "etcd-4001"]
    assert main([*base, "--kind", "dismiss"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "--ckf", ckf, "--scenario", scen, "--triage-db", db)
    assert code == 0 and "None" not in out
    assert "etcd-2379 vs etcd-4001" in out and "both kept (dismiss)" in out
    assert main([*base, "--kind", "override", "--winner", "etcd-4001"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "--ckf", ckf, "--scenario", scen, "--triage-db", db)
    assert "kept etcd-4001, suppressed etcd-2379 (operator: override)" in out


def test_the_envelope_lines_name_which_score_they_show(capsys):
    """An anchor's score is its CDR (0..1), a connector's its connector score (unbounded): one column of
    'score=' mixed them (a walk-through read 8.01 beside 0.22)."""
    from tests.support.paths import REPO_ROOT

    root = REPO_ROOT / "sample_ckf"
    argv = [
        "run",
        "--ckf",
        str(root / "knowledge_base.jsonl"),
        "--scenario",
        str(root / "scenarios" / "etcd_upgrade.json"),
    ]
    assert main([*argv, "--no-triage-db"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("envelope (packed order)")
    packed = lines[start + 1 : next(i for i in range(start, len(lines)) if lines[i].startswith("  tokens "))]
    anchors = [x for x in packed if x.split()[2] == "anchor"]
    connectors = [x for x in packed if x.split()[2] == "connector"]
    assert anchors and connectors
    assert all(x.split()[3].startswith("cdr=") for x in anchors)
    assert all(x.split()[3].startswith("connector=") for x in connectors)


def test_the_envelope_section_says_when_the_gate_left_anchor_places_empty(files, capsys):
    # gate 0.9: etcd-2379 and etcd-4001 (cosine 0.99875) pass, etcd-peer (0.75 / |(0.75, 0.66)| = 0.75071) is
    # kept out; 2 < the 14 anchor places; etcd-4001 loses its conflict, so the envelope holds 1 of 20 facts;
    # 0.75071 rounded down to two decimals admits it (docs/decisions/gate-note.md)
    tmp, ckf, scen = files
    args = ("--ckf", ckf, "--scenario", scen, "--cache-dir", tmp / "cache", "--set", "cdr_min_relevance=0.9")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert (
        "  note: The relevance gate (cdr_min_relevance 0.9) passed 2 of 3 retrieved facts, fewer than the "
        "envelope's 14 anchor places, and the envelope holds 1 of its 20 facts. The most relevant facts it kept out "
        "score 0.750; cdr_min_relevance 0.75 would let 1 more compete for an anchor place.\n"
    ) in out
    code, out, err = run(capsys, *args, "--json")
    note = json.loads(out)["gate_note"]
    assert (note["passed"], note["anchor_places"], note["packed"], note["suggested"], note["admitted"]) == (
        2,
        14,
        1,
        0.75,
        1,
    )
    assert note["nearest"] == pytest.approx([0.75 / (0.75**2 + 0.66**2) ** 0.5], abs=1e-6)
    # at the default gate every fact passes: no note in the text, null in the report
    code, out, err = run(capsys, "--ckf", ckf, "--scenario", scen, "--cache-dir", tmp / "cache")
    assert "note: The relevance gate" not in out

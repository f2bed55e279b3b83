"""What keeps the dashboard quick: the shipped server config, the lazy sidebar editors, the
per-object memo of run-cache keys, and the progress reports of long work (counts, rate, time left)."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from streamlit.testing.v1 import AppTest

from crp_core.analysis.evaluate import prepare_suite, run_suite, sweep_suite
from crp_core.analysis.scan import scan_ckf
from crp_core.analysis.scan_check import PROGRESS_STEPS
from crp_core.analysis.suite import load_suite
from crp_core.config import CRPConfig
from crp_ui import cache, render, sidebar
from crp_ui.progress import progress_line
from tests.support.paths import APP, REPO_ROOT
from tests.support.scan_worlds import NOW, cluster_corpus
from tests.support.suites import corpus as suite_corpus
from tests.support.suites import write_suite


# ---- server config ---------------------------------------------------------------------------------
def test_shipped_config_watches_no_files():
    server = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["server"]
    assert server["fileWatcherType"] == "none"  # no inotify watch on data folders
    assert server["runOnSave"] is False


def test_shipped_config_keeps_streamlits_post_run_collection():
    """The post-run collection is made cheap (crp_ui.long_lived), not switched off by a hidden option."""
    shipped = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert "postScriptGC" not in shipped.get("runner", {})


class _Cycle:
    def __init__(self, log: list[str], name: str) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it
        self.log, self.name = log, name

    def __del__(self) -> None:
        self.log.append(self.name)


def test_after_run_collects_the_runs_garbage_and_freezes_the_survivors(monkeypatch):
    import gc

    from crp_ui import long_lived

    monkeypatch.setattr(long_lived, "_runs", 0)
    freed: list[str] = []
    try:
        assert long_lived.after_run() is True  # the first run: a full collection
        kept = _Cycle(freed, "kept")
        _Cycle(freed, "garbage")  # a run's cyclic garbage
        assert long_lived.after_run() is False
        assert freed == ["garbage"]  # collected before the freeze
        assert gc.get_freeze_count() > 0
        del kept  # a frozen cycle that became garbage (an evicted cache entry) ...
        for _ in range(long_lived.FULL_EVERY - 2):
            long_lived.after_run()
            gc.collect()  # Streamlit's own post-run collection skips frozen objects
        assert freed == ["garbage"]
        assert long_lived.after_run() is True  # ... is reclaimed by the periodic full collection
        assert freed == ["garbage", "kept"]
    finally:
        gc.unfreeze()


# ---- progress text ----------------------------------------------------------------------------------
def test_progress_line_counts_rate_and_time_left():
    assert progress_line("Scan", 0, 400, 0.0, unit="pairs") == "Scan: 0 / 400 pairs"
    # 100 in 4 s: 25 pairs/s, 300 left -> 12 s
    assert progress_line("Scan", 100, 400, 4.0, unit="pairs") == "Scan: 100 / 400 pairs · 25 pairs/s · about 12 s left"
    # slow work keeps a decimal: 3 in 2 s = 1.5 runs/s, 7 left -> 4.67 s -> "5 s"
    assert (
        progress_line("Sweep", 3, 10, 2.0, unit="runs", what="x = 1")
        == "Sweep: 3 / 10 runs · 1.5 runs/s · about 5 s left · x = 1"
    )
    # done: no time left shown; 1,200 in 60 s = 20/s; thousands separated
    assert progress_line("Tune", 1200, 1200, 60.0) == "Tune: 1,200 / 1,200 · 20/s"
    # 10 of 100 in 60 s: 90 left at 1/6 per s = 540 s -> 9 min
    assert progress_line("Suite", 10, 100, 60.0, unit="runs") == "Suite: 10 / 100 runs · 0.2 runs/s · about 9 min left"


def test_bar_throttles_updates_but_always_draws_the_last():
    at = AppTest.from_string("""
import streamlit as st
from crp_ui.progress import Bar
t = [0.0]
bar = Bar("Work", unit="items", clock=lambda: t[0])
for k in range(1, 11):
    t[0] = k * 0.1  # an update every 0.1 s: only every third one is drawn (0.25 s apart)...
    bar.step(k, 10)
""")
    at.run()
    assert not at.exception
    # ...and the last one always: 10 items in 1 s (the tree keeps the element's last state)
    prog = at.get("progress")[0]
    assert prog.proto.value == 100
    assert prog.proto.text == render.md_escape("Work: 10 / 10 items · 10 items/s")  # escaped Markdown


# ---- crp_core progress callbacks -------------------------------------------------------------------------
def _assert_monotone_to(seen: list[tuple[int, int]], n: int) -> None:
    assert seen, "the callback was never called"
    assert all(t == n for _, t in seen)
    counts = [d for d, _ in seen]
    assert counts == sorted(counts) and counts[-1] == n and counts[0] >= 0


@pytest.mark.parametrize("seed", [0, 1])
def test_scan_progress_counts_candidate_pairs_to_the_end(seed):
    config = CRPConfig()
    corpus = cluster_corpus(seed, config=config)
    seen: list[tuple[int, int]] = []
    scan = scan_ckf(corpus, config, NOW, progress=lambda d, t: seen.append((d, t)))
    _assert_monotone_to(seen, scan.n_candidates)
    assert seen[0] == (0, scan.n_candidates)
    assert len(seen) <= PROGRESS_STEPS + 2
    plain = scan_ckf(corpus, config, NOW)  # the callback changes nothing in the result
    assert [(p.fact_a, p.fact_b) for p in plain.pairs] == [(p.fact_a, p.fact_b) for p in scan.pairs]


@settings(max_examples=15, deadline=None)
@given(per_topic=hst.integers(2, 14), seed=hst.integers(0, 50))
def test_scan_progress_is_monotone_for_any_size(per_topic, seed):
    config = CRPConfig()
    corpus = cluster_corpus(seed, n_topics=3, per_topic=per_topic, config=config)
    seen: list[tuple[int, int]] = []
    scan = scan_ckf(corpus, config, NOW, progress=lambda d, t: seen.append((d, t)))
    _assert_monotone_to(seen, scan.n_candidates)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return prepare_suite(suite_corpus(), load_suite(write_suite(tmp_path_factory.mktemp("speed"))))


def test_suite_run_and_sweep_progress_reach_every_run(prepared):
    n = len(prepared.suite)
    seen: list[tuple[int, int]] = []
    run_suite(prepared, CRPConfig(), keep_results=False, progress=lambda d, t, _w: seen.append((d, t)))
    assert seen == [(k, n) for k in range(1, n + 1)]
    seen.clear()
    sweep_suite(prepared, CRPConfig(), "stale_floor", [0.2, 0.4], progress=lambda d, t, _w: seen.append((d, t)))
    # the baseline run plus one suite run per value
    assert seen == [(k, 3 * n) for k in range(1, 3 * n + 1)]


# ---- run-cache keys memoised per object -------------------------------------------------------------------
def test_by_identity_builds_once_per_live_object_and_key():
    calls: list[int] = []

    class Thing:
        pass

    a, b = Thing(), Thing()
    assert cache.by_identity("t", a, lambda o: calls.append(1) or "A") == "A"
    assert cache.by_identity("t", a, lambda o: calls.append(1) or "other") == "A"  # memoised
    assert cache.by_identity("t", a, lambda o: calls.append(1) or "A2", extra=2) == "A2"  # another key
    assert cache.by_identity("t", b, lambda o: calls.append(1) or "B") == "B"  # another object
    assert len(calls) == 3


def test_result_key_is_stable_and_follows_the_config():
    corpus = cluster_corpus(0)
    from crp_core.model import Scenario

    s = Scenario(query="port of etcd", now=datetime(2026, 1, 1, tzinfo=UTC))
    c = CRPConfig()
    k1 = cache.result_key(corpus, s, c, NOW)
    assert cache.result_key(corpus, s, c, NOW) == k1
    assert cache.result_key(corpus, s, CRPConfig(), NOW) == k1  # an equal config, another object
    assert cache.result_key(corpus, s, c.with_overrides({"stale_floor": 0.31}), NOW) != k1


def test_result_key_follows_every_fact_field():
    """The same vectors and statuses with another source type (a source-type mapping uploaded) or other
    metadata (another export of the same texts): another run, never the first CKF's result."""
    from dataclasses import replace

    from crp_core.corpus.prepared import Corpus
    from crp_core.model import KnowledgeBase, Scenario

    corpus = cluster_corpus(0)
    s = Scenario(query="port of etcd", now=datetime(2026, 1, 1, tzinfo=UTC))
    c = CRPConfig()
    key = cache.result_key(corpus, s, c, NOW)
    f0 = corpus.kb.facts[0]
    for changed in (
        replace(f0, source_type="regulatory" if f0.source_type != "regulatory" else "web"),
        replace(f0, metadata={"source_window_id": "win-9"}),
        replace(f0, modified_at=datetime(2020, 1, 1, tzinfo=UTC)),
    ):
        other = Corpus.from_vectors(KnowledgeBase(facts=(changed, *corpus.kb.facts[1:])), corpus.vectors, "test", c)
        assert other.fingerprint == corpus.fingerprint  # the same vectors
        assert cache.result_key(other, s, c, NOW) != key


# ---- the lazy sidebar editors ------------------------------------------------------------------------------
def test_closed_sidebar_editors_draw_nothing_and_open_ones_draw_every_key(ui_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    labels = [e.label for e in at.sidebar.expander]
    assert labels == ["Scenario", "Configuration", "Open a snapshot"]
    assert not [w for w in at.sidebar.number_input if str(w.key).startswith("crp.w.config.")]
    at.session_state[sidebar.CONFIG_OPEN] = True
    at.run()

    def config_keys():
        return {
            str(w.key).rsplit(".", 1)[0]
            for w in (*at.sidebar.number_input, *at.sidebar.toggle, *at.sidebar.selectbox)
            if str(w.key).startswith("crp.w.config.")
        }

    # opened: the stage groups are expanders of their own, and only the first (stage 1) is open
    groups = sidebar.config_groups()
    assert [e.label for e in at.sidebar.expander][2:-1] == [g for g, _ in groups]
    assert config_keys() == {f"crp.w.config.{k}" for k in groups[0][1]}
    assert config_keys() == {
        "crp.w.config.cdr_min_relevance",
        "crp.w.config.candidate_k",
        "crp.w.config.hnsw_m",
        "crp.w.config.hnsw_ef_construction",
        "crp.w.config.hnsw_ef_search",
    }
    at.session_state[sidebar.CONFIG_GROUPS_KEEP] = {i: True for i in range(len(groups))}
    at.run()
    from crp_core.config import SCALAR_KEYS

    assert {f"crp.w.config.{k}" for k in SCALAR_KEYS} <= config_keys()


def test_config_groups_open_as_remembered(ui_env):
    # what the user opened or closed (recorded by the group's on_change; clicked in tests/e2e/test_e2e_shell.py)
    at = AppTest.from_file(APP, default_timeout=60)
    packing = [i for i, (g, _) in enumerate(sidebar.config_groups()) if g.startswith("Stage 6")][0]
    at.session_state[sidebar.CONFIG_GROUPS_KEEP] = {packing: True, 0: False}
    at.session_state[sidebar.CONFIG_OPEN] = True
    at.run()
    assert not at.exception
    assert {str(w.key).rsplit(".", 1)[0] for w in at.sidebar.number_input} == {"crp.w.config.token_budget"}
    at.session_state[sidebar.CONFIG_GROUP_OPEN + str(packing)] = False  # its own state wins while it is drawn
    at.run()
    assert not [w for w in at.sidebar.number_input if str(w.key).startswith("crp.w.config.")]


def test_a_closed_then_reopened_config_editor_keeps_the_edit(ui_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[sidebar.CONFIG_OPEN] = True
    at.session_state[sidebar.CONFIG_GROUPS_KEEP] = {i: True for i in range(len(sidebar.config_groups()))}
    at.run()
    box = [w for w in at.sidebar.number_input if str(w.key).startswith("crp.w.config.token_budget.")][0]
    box.set_value(1234).run()
    at.session_state[sidebar.CONFIG_OPEN] = False
    at.run()
    at.session_state[sidebar.CONFIG_OPEN] = True
    at.run()
    assert not at.exception
    box = [w for w in at.sidebar.number_input if str(w.key).startswith("crp.w.config.token_budget.")][0]
    assert box.value == 1234
    assert at.query_params["cfg.token_budget"] == "1234"

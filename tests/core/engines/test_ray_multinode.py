"""The Ray engine across nodes (docs/scaling.md): a cluster of two Ray node processes on this machine (a
head and a worker node, one CPU each, loopback only) gives the local scan's pairs and JSON, embeds like the
local path, and a worker node killed while it runs units of the scan is retried elsewhere without losing or
duplicating a pair (marker ``ray``; skipped without Ray)."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime

import numpy as np
import pytest

from tests.support.report_compare import assert_same_report

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

from crp_core.analysis.scan import exact_pairs, scan_ckf  # noqa: E402
from crp_core.cli.conflicts import json_text  # noqa: E402
from crp_core.config import CRPConfig  # noqa: E402
from crp_core.corpus.embedding import MiniLMEmbedder  # noqa: E402
from crp_core.corpus.prepared import prepare_corpus  # noqa: E402
from crp_core.engines import scan_with_engine  # noqa: E402
from crp_core.engines.ray_engine import ray_embed, ray_searcher  # noqa: E402
from crp_core.io.ckf import load_ckf  # noqa: E402

pytestmark = pytest.mark.ray
NOW = datetime(2026, 6, 1, tzinfo=UTC)
NODE = {"num_cpus": 1, "include_dashboard": False, "node_ip_address": "127.0.0.1"}


@pytest.fixture
def two_nodes(monkeypatch):
    """A head node and one worker node (separate raylet processes), the driver connected to the head.
    Every node stays on the loopback address: Ray's switch for a one-machine cluster keeps it from
    replacing 127.0.0.1 by the machine's address (docs/scaling.md, "A cluster on one machine")."""
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # read by every node process Ray starts
    monkeypatch.setattr(ray._private.ray_constants, "ENABLE_RAY_CLUSTER", False)  # this process read it already
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args=dict(NODE))
    worker = cluster.add_node(**{k: v for k, v in NODE.items() if k != "include_dashboard"})
    ray.init(address=cluster.address, log_to_driver=False, logging_level="ERROR")
    cluster.wait_for_nodes()
    try:
        yield cluster, worker
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture(scope="module")
def synth_corpus(synth10k, tmp_path_factory):
    return prepare_corpus(load_ckf(synth10k), cache_dir=tmp_path_factory.mktemp("cache"))


def _alive_nodes() -> int:
    return sum(1 for n in ray.nodes() if n["Alive"])


def test_two_nodes_give_the_local_pairs_json_and_embedding(two_nodes, synth_corpus):
    assert _alive_nodes() == 2 and ray.cluster_resources()["CPU"] == 2
    v = synth_corpus.vectors
    ref = exact_pairs(v, 0.85)
    np.testing.assert_array_equal(ray_searcher()(v, 0.85).pairs, ref.pairs)
    assert ref.pairs.shape[0] > 1000
    config = CRPConfig()
    local = scan_ckf(synth_corpus, config, NOW)
    remote = scan_with_engine(synth_corpus, config, NOW, engine="ray")
    assert [(p.fact_a, p.fact_b, p.kept, p.tied) for p in remote.pairs] == [
        (p.fact_a, p.fact_b, p.kept, p.tied) for p in local.pairs
    ]
    assert json_text(remote, synth_corpus.kb, config) == json_text(local, synth_corpus.kb, config)
    assert_same_report(
        json.loads(json_text(remote, synth_corpus.kb, config)), json.loads(json_text(local, synth_corpus.kb, config))
    )
    texts = [f.content for f in synth_corpus.kb.facts[:32]]
    got = ray_embed(texts, 2, block_rows=8)  # one actor per node
    np.testing.assert_allclose(got, MiniLMEmbedder().encode(texts), atol=2e-5)


def test_a_worker_node_killed_mid_scan_loses_and_duplicates_no_pair(two_nodes, synth_corpus):
    """Kill the worker node once both CPUs are busy (a unit is running on it); its units are retried on
    the head and the pairs equal the exact search's, each once."""
    cluster, worker = two_nodes
    v = synth_corpus.vectors
    ref = exact_pairs(v, 0.6)
    killed: dict[str, float] = {}
    finished = threading.Event()

    def kill_when_busy() -> None:
        while not finished.is_set():
            if ray.available_resources().get("CPU", 0) == 0:  # no CPU free: both nodes hold a unit
                cluster.remove_node(worker, allow_graceful=False)
                killed["at"] = time.monotonic()
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_when_busy, daemon=True)
    killer.start()
    try:
        got = ray_searcher(workers=2, units_per_worker=16)(v, 0.6)
    finally:
        done = time.monotonic()
        finished.set()
    killer.join(timeout=30)
    assert "at" in killed and killed["at"] < done, "the worker node was not killed while the scan ran"
    np.testing.assert_array_equal(got.pairs, ref.pairs)
    assert len({tuple(p) for p in got.pairs.tolist()}) == got.pairs.shape[0]
    assert worker not in cluster.worker_nodes and not worker.any_processes_alive()

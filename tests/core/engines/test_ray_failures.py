"""The Ray engine's failures (docs/scaling.md): a cluster that is not there, an address Ray cannot read, a
local cluster that cannot start. Each ends with a message and exit 2, leaving nothing running; none waits
for Ray's own minutes-long retries. No cluster is started here (marker ``ray``; skipped without Ray)."""

from __future__ import annotations

import pytest

from tests.support.paths import REPO_ROOT

SAMPLE_CKF = REPO_ROOT / "sample_ckf" / "knowledge_base.jsonl"

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.ray


@pytest.mark.parametrize(
    "address, said",
    [
        ("127.0.0.1:1", "no Ray cluster answers at 127.0.0.1:1"),
        ("auto", "could not connect to the Ray cluster at auto: Could not find any running Ray instance"),
        ("not-an-address", "could not connect to the Ray cluster at not-an-address"),
    ],
)
def test_a_cluster_that_is_not_there_is_a_clear_error(address, said, capsys):
    from crp_core.cli import main

    code = main(["conflicts", "--ckf", str(SAMPLE_CKF), "--engine", "ray", "--address", address])
    err = capsys.readouterr().err
    assert code == 2 and said in err and "Traceback" not in err


def test_a_local_cluster_that_cannot_start_is_shut_down_and_said(monkeypatch):
    import ray

    from crp_core.engines.ray_engine import ray_session
    from crp_core.errors import ConfigError

    calls: list[str] = []

    def failing_init(*args, **kwargs):
        calls.append("init")
        raise TimeoutError("Timed out after 30 seconds waiting for the node to start")

    monkeypatch.setattr(ray, "init", failing_init)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.append("shutdown"))
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    with pytest.raises(ConfigError) as ei, ray_session(None, 2):
        pass
    assert calls == ["init", "shutdown"]
    assert str(ei.value) == (
        "could not start a local Ray cluster: Timed out after 30 seconds waiting for the node to start"
    )

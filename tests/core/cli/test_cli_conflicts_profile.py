"""``crp-inspect conflicts --profile`` (each stage's cost on stderr), ``--check-workers``, and the JSON written
pair by pair: the same bytes as one ``json.dumps`` of every pair."""

from __future__ import annotations

import io
import json
import re
from unittest import mock

import pytest

from crp_core.analysis import scan_check
from crp_core.analysis.scan import scan_ckf
from crp_core.cli import main
from crp_core.cli.conflicts import json_text, pair_rows, write_json
from crp_core.config import CRPConfig
from crp_core.support.costs import StageClock
from tests.support.cli_notes import without_missing_store_note
from tests.support.conflict_rows import NOW, run, write_rows
from tests.support.scan_worlds import NOW as WORLD_NOW
from tests.support.scan_worlds import cluster_corpus

STAGES = ("load", "pair search", "text check", "arbitration", "write", "total")


@pytest.fixture
def ckf(tmp_path):
    return write_rows(tmp_path / "kb.jsonl")


def test_profile_prints_every_stage_on_stderr_and_leaves_the_json_alone(ckf, tmp_path, capsys):
    args = ("--ckf", ckf, "--now", NOW, "--cache-dir", str(tmp_path / "c"), "--json")
    status, plain, plain_err = run(capsys, *args)
    assert status == 0 and "profile" not in plain_err
    status, out, err = run(capsys, *args, "--profile")
    assert status == 0 and out == plain
    lines = without_missing_store_note(err).strip().splitlines()
    assert lines[0] == "conflicts profile"
    assert lines[1].split() == ["stage", "wall", "s", "CPU", "s", "peak", "MB", "RSS", "MB", "workers", "peak", "MB"]
    number = r"\d+(\.\d+)?"
    for name, line in zip(STAGES, lines[2:8]):
        assert re.fullmatch(rf"{name}\s+{number}\s+{number}\s+\d+\s+\d+\s+\d+", line), line
    assert lines[8] == ("facts 6, candidate pairs 4, conflicting pairs 3, search gram (28 dot products)")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_check_workers_give_the_same_bytes(ckf, tmp_path, capsys, workers):
    """The pool is used whatever the number of pairs (threshold patched to 1): with two workers this process
    checks no text itself (the forked workers do), with one it checks them all."""
    args = ("--ckf", ckf, "--now", NOW, "--cache-dir", str(tmp_path / "c"), "--json")
    _, want, _ = run(capsys, *args, "--check-workers", "1")
    with (
        mock.patch.object(scan_check, "PARALLEL_MIN_PAIRS", 1),
        mock.patch.object(scan_check, "check_texts", wraps=scan_check.check_texts) as here,
    ):
        status, got, err = run(capsys, *args, "--check-workers", workers)
    assert status == 0 and got == want, err
    assert (here.call_count > 0) == (workers == "1")


def test_check_workers_must_be_a_positive_count(ckf, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["conflicts", "--ckf", ckf, "--check-workers", "0"])
    assert stop.value.code == 2
    assert "--check-workers: must be at least 1, got 0" in capsys.readouterr().err


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_streamed_json_is_the_bytes_of_one_dump(seed):
    config = CRPConfig()
    corpus = cluster_corpus(seed, config=config)
    scan = scan_ckf(corpus, config, WORLD_NOW)
    assert scan.pairs
    want = json.dumps(pair_rows(scan, corpus.kb, config), ensure_ascii=False, indent=2, allow_nan=False)
    buf = io.StringIO()
    write_json(buf, scan, corpus.kb, config)
    assert buf.getvalue() == want == json_text(scan, corpus.kb, config)
    empty = scan_ckf(corpus, config.replace(contradiction_similarity=0.9999), WORLD_NOW)
    assert not empty.pairs and json_text(empty, corpus.kb, config) == "[]"


def test_the_stage_clock_keeps_each_stage_in_order():
    clock = StageClock()
    with clock.stage("one"):
        sum(range(10000))
    with clock.stage("two"):
        blob = bytearray(8 << 20)
        del blob
    assert [s.name for s in clock.stages] == ["one", "two"]
    for s in clock.stages:
        assert s.wall_s >= 0 and s.cpu_s >= 0 and s.peak_mb >= s.rss_mb > 0 and s.workers_peak_mb >= 0
        assert set(s.as_dict()) == {"stage", "wall_s", "cpu_s", "peak_mb", "rss_mb", "workers_peak_mb"}
    assert clock.stages[1].peak_mb >= clock.stages[0].peak_mb  # the peak so far never goes down
    assert clock.table().splitlines()[-1].startswith("total")

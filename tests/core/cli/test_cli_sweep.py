"""``crp-inspect sweep`` on the tiny suite of ``tests/support/suites.py``: one key, a 2-D grid, ``now``
as a key, JSON / CSV / text output, and every bad flag named (exit 2)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from crp_core.cli import main
from tests.support.cli_notes import without_missing_store_note
from tests.support.suites import write_ckf, write_suite


@pytest.fixture
def files(tmp_path):
    return write_ckf(tmp_path / "kb.jsonl"), write_suite(tmp_path / "suite")


def _sweep(capsys, files, *extra):
    ckf, suite = files
    rc = main(["sweep", "--ckf", str(ckf), "--suite", str(suite), *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_one_key_json_by_hand(files, capsys):
    # a 10-year TTL for version_specific facts lifts the legacy fact B (1977 days old) to recency
    # 1 - 0.7 * (1977 - 1825) / 1825 = 0.942, so B wins its conflict against A and leaks in s1
    rc, out, err = _sweep(capsys, files, "--param", "ttl_days.version_specific=3650:3650:1", "--json")
    assert rc == 0 and without_missing_store_note(err) == ""
    doc = json.loads(out)
    assert doc["axes"] == [{"key": "ttl_days.version_specific", "values": [180.0, 3650.0], "current": 180.0}]
    assert [p["metrics"]["leaks.total"] for p in doc["points"]] == [1, 2]
    assert doc["baseline"]["leaks.total"] == 1 and doc["scenarios"] == 2
    assert "recall.mean" in doc["metrics"] and "overlap.worst" in doc["metrics"]


def test_two_keys_text_matrix_marks_the_current_values(files, capsys):
    rc, out, _ = _sweep(
        capsys,
        files,
        "--param",
        "ttl_days.version_specific=3650:3650:1",
        "--param",
        "cdr_min_relevance=0.5:0.6:2",
        "--metric",
        "leaks.total",
    )
    assert rc == 0
    lines = out.splitlines()
    assert "6 point(s)" in lines[0]
    head = next(i for i, line in enumerate(lines) if line.startswith("leaks.total (rows"))
    assert lines[head + 1].split() == ["0.5", "*0.55", "0.6"]
    assert lines[head + 2].split() == ["*", "180", "1", "1", "1"]
    assert lines[head + 3].split() == ["3650", "2", "2", "2"]


def test_now_as_a_key_and_csv(files, capsys):
    rc, out, _ = _sweep(capsys, files, "--param", "now=2026-06-01:2027-06-01:2", "--csv")
    assert rc == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["now"] for r in rows] == ["", "2026-06-01T00:00:00Z", "2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"]
    assert rows[0]["point"] == "baseline" and rows[1]["expired.total"] == rows[0]["expired.total"]
    rc, out, _ = _sweep(capsys, files, "--param", "now=2026-06-01:2027-06-01:2")
    assert rc == 0 and "* 2026-06-01T00:00:00Z" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--param", "cdr_min_relevance=0.5:0.6"], "--param cdr_min_relevance=0.5:0.6: expects KEY=LO:HI:N"),
        (["--param", "hnsw_m=2:8:3"], "--param hnsw_m=2:8:3: cannot sweep 'hnsw_m'"),
        (["--param", "stale_floor=0:1:3"] * 3, "--param: a sweep has one or two keys, got 3"),
        (["--param", "stale_floor=0:1:3"] * 2, "--param: the two swept keys are both 'stale_floor'"),
        (["--param", "cdr_min_relevance=0.5:2:3"], "--param: cdr_min_relevance value 3 of 3"),
        (["--param", "stale_floor=0:1:3", "--metric", "recall.total"], "--metric: unknown suite metric"),
        (["--param", "known_conflict_action=a:b:2"], "takes a word"),
    ],
)
def test_errors_name_the_flag(files, capsys, extra, message):
    rc, out, err = _sweep(capsys, files, *extra)
    assert rc == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_csv_and_json_are_exclusive(files, capsys):
    with pytest.raises(SystemExit) as exc:
        _sweep(capsys, files, "--param", "stale_floor=0:1:3", "--csv", "--json")
    assert exc.value.code == 2


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_only(files, capsys, monkeypatch):
    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    ckf, suite = files
    rc = main(["sweep", "--ckf", str(ckf), "--suite", str(suite), "--param", "stale_floor=0.1:0.2:2", "--json"])
    assert rc == 0
    # baseline + 0.1, 0.2 and the current 0.3: four suite runs, the last line final
    assert "sweep 4/4 suite runs (100%)" in term.getvalue()
    assert json.loads(capsys.readouterr().out)["axes"][0]["values"] == [0.1, 0.2, 0.3]


def test_a_time_sweep_before_the_ckfs_last_date_says_which_facts_it_reads_as_fresh(files, capsys):
    """Dates of the tiny CKF: B 2021-01-01, G 2024-01-01, C 2025-10-01, H1 and H2 2026-01-01, A, D and F
    2026-05-01, E 2026-05-20. At an instant before some of them their age counts as 0: a point there reads them
    as fresh, and the sweep says how many (a walk-through read recall 1 at a date before most of its facts)."""
    rc, out, _ = _sweep(capsys, files, "--param", "now=2025-12-01:2026-05-15:3", "--json")
    assert rc == 0
    doc = json.loads(out)
    dates = ["2021-01-01", "2024-01-01", "2025-10-01", "2026-01-01", "2026-01-01"] + ["2026-05-01"] * 3
    dates.append("2026-05-20")
    swept = [p["values"]["now"] for p in doc["points"]]
    want = [{"now": t, "facts": sum(d + "T00:00:00Z" > t for d in dates)} for t in swept]
    assert doc["facts_after_now"] == [w for w in want if w["facts"]] and doc["facts_after_now"]
    rc, out, _ = _sweep(capsys, files, "--param", "now=2025-12-01:2026-05-15:3")
    first = doc["facts_after_now"][0]
    assert f"  now {first['now']}: {first['facts']} fact(s) dated after it" in out
    # another key, or a time sweep after every fact: no note
    rc, out, _ = _sweep(capsys, files, "--param", "stale_floor=0.2:0.4:2", "--json")
    assert json.loads(out)["facts_after_now"] == []

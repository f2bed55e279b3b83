"""crp_ui.progress_text: the preparation bar's text, embedding then the search index build; crp_ui.render's counts."""

from __future__ import annotations

from crp_core import ProgressSnapshot
from crp_ui.progress_text import format_duration, progress_text


def _snap(**kw: object) -> ProgressSnapshot:
    base: dict[str, object] = dict(
        done=1000, total=1000, resumed=0, elapsed_s=5.0, rate=None, eta_s=None, cancel_requested=False
    )
    base.update(kw)
    return ProgressSnapshot(**base)  # type: ignore[arg-type]


def test_the_index_build_has_its_own_line_with_counts_and_time_left() -> None:
    snap = _snap(index_done=240_000, index_total=1_000_000, index_eta_s=540.0)
    assert progress_text(snap, "synth1m", own_embeddings=True) == (
        "Building the search index of synth1m: 240,000 / 1,000,000 facts · about 9 min left"
    )
    assert progress_text(_snap(index_done=0, index_total=10), "kb") == "Building the search index of kb: 0 / 10 facts"


def test_before_and_after_the_build_the_embedding_line_is_shown() -> None:
    assert progress_text(_snap(), "kb", own_embeddings=True) == "Indexing kb: 1,000 facts (embeddings from the CKF)…"
    done = _snap(index_done=10, index_total=10)
    assert progress_text(done, "kb", own_embeddings=True) == "Indexing kb: 1,000 facts (embeddings from the CKF)…"
    assert format_duration(45) == "45 s" and format_duration(540) == "9 min" and format_duration(5400) == "1 h 30 min"


def test_a_count_is_exact_with_separators_below_a_hundred_thousand_then_short() -> None:
    from crp_ui.render import count_help, count_text

    assert [count_text(n) for n in (0, 455, 99_999)] == ["0", "455", "99,999"]
    assert [count_text(n) for n in (100_000, 155_496, 999_499, 999_999, 1_000_000, 1_818_983, 12_345_678)] == [
        "100k",
        "155k",
        "999k",
        "1.00M",
        "1.00M",
        "1.82M",
        "12.3M",
    ]
    assert count_text(2_500_000_000) == "2.50G" and count_text(-150_000) == "-150k"
    assert count_help(455, "Whole CKF") == "Whole CKF" and count_help(455) is None
    assert count_help(155_496, "Whole CKF") == "155,496 · Whole CKF" and count_help(1_000_000) == "1,000,000"


def test_the_neighbour_table_s_queries_have_their_own_line() -> None:
    snap = _snap(index_done=10, index_total=10, graph_done=131_072, graph_total=1_000_000, graph_eta_s=130.0)
    assert progress_text(snap, "synth1m", own_embeddings=True) == (
        "Finding each fact's nearest neighbours in synth1m (the similarity graph): "
        "131,072 / 1,000,000 facts · about 2 min left"
    )
    done = _snap(graph_done=5, graph_total=5)
    assert progress_text(done, "kb", own_embeddings=True) == (
        "Building the similarity graph of kb from each fact's nearest neighbours…"
    )

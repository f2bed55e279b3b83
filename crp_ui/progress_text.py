"""The text of a preparation's progress bar (embedding, then the search index) and of durations: plain
functions of a :class:`crp_core.ProgressSnapshot`, tested without Streamlit."""

from __future__ import annotations

from crp_core import ProgressSnapshot


def progress_text(snap: ProgressSnapshot, label: str, *, own_embeddings: bool = False) -> str:
    """``Embedding <label>: 3,136 / 100,000 facts · 62 facts/s · about 26 min left`` (plain text); during
    the index build ``Building the search index of <label>: 240,000 / 1,000,000 facts · about 9 min left``; during
    the neighbour table's queries ``Finding each fact's nearest neighbours in <label> (the similarity graph):
    131,072 / 1,000,000 facts · about 2 min left``, then ``Building the similarity graph of <label> from each fact's
    nearest neighbours…``."""
    if snap.indexing:
        left = f" · about {format_duration(snap.index_eta_s)} left" if snap.index_eta_s is not None else ""
        return f"Building the search index of {label}: {snap.index_done:,} / {snap.index_total:,} facts{left}"
    if snap.linking:
        left = f" · about {format_duration(snap.graph_eta_s)} left" if snap.graph_eta_s is not None else ""
        return (
            f"Finding each fact's nearest neighbours in {label} (the similarity graph): "
            f"{snap.graph_done:,} / {snap.graph_total:,} facts{left}"
        )
    if snap.graph_total and snap.graph_done >= snap.graph_total:
        return f"Building the similarity graph of {label} from each fact's nearest neighbours…"
    if own_embeddings:
        return f"Indexing {label}: {snap.total:,} facts (embeddings from the CKF)…"
    if snap.total == 0 or (snap.done == snap.resumed and snap.rate is None):
        resumed = f" ({snap.resumed:,} already in the cache)" if snap.resumed else ""
        return f"Loading the embedding model, then embedding {label}: {snap.done:,} / {snap.total:,} facts{resumed}…"
    bits = [f"Embedding {label}: {snap.done:,} / {snap.total:,} facts"]
    if snap.rate:
        bits.append(f"{snap.rate:,.0f} facts/s")
    if snap.eta_s is not None:
        bits.append(f"about {format_duration(snap.eta_s)} left")
    if snap.resumed:
        bits.append(f"{snap.resumed:,} resumed from the cache")
    return " · ".join(bits)


def format_duration(seconds: float) -> str:
    """``45 s``, ``3 min``, ``1 h 05 min``."""
    s = max(0, int(round(seconds)))
    if s < 90:
        return f"{s} s"
    if s < 5400:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"

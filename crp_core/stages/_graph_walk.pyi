"""Type stub of the compiled 2-hop walk (``_graph_walk.pyx``)."""

import numpy as np

def walk_two_hops(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, anchors: np.ndarray, retrievable: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
def edges_within(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
def edge_triples(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rows: np.ndarray
) -> tuple[tuple[int, int, float], ...] | None: ...
def bridge_counts(
    hops: np.ndarray, wsum: np.ndarray, non_adj: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
def bridged_order(hops: np.ndarray, non_adj: np.ndarray, i: int) -> list[int]: ...

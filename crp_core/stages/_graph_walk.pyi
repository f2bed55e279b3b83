"""Type stub of the compiled 2-hop walk (``_graph_walk.pyx``)."""
import numpy as np

def walk_two_hops(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, anchors: np.ndarray,
                  retrievable: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
def edges_within(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                 rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

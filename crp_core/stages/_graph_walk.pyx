# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Stage 3's 2-hop walk and anchor paths in one compiled pass over the anchors' CSR neighbourhood
(SPEC-025 §2.3-2.4; SPEC_NOTES §2.5). The same result as the numpy path of
:func:`crp_core.stages.cdgr.walk_with_paths` for ``max_hops == 2`` and distinct anchors, to the bit: hop-1
weights are the edge's float32 weight widened, 2-hop totals the float64 sum of the two float32 weights,
the strongest shortest path wins, a direct edge makes an anchor 1 hop away whatever the 2-hop totals.
"""
import numpy as np

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t


def walk_two_hops(const int32_t[::1] indptr, const int32_t[::1] indices, const float[::1] data,
                  const int64_t[::1] anchors, retrievable):
    """(cands int64 ascending, hop distance int64, hops (m, s) int8, weight_sum (m, s) float64,
    aa (s, s) bool) for distinct ``anchors`` and ``max_hops == 2``; ``retrievable`` is the (n,) bool mask."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t s = anchors.shape[0]
    cdef Py_ssize_t k, k2, e, e2, x, c, a, m, i, touched_n = 0
    cdef int32_t px, pc
    cdef double w1, val
    dist_arr = np.full(n, -1, dtype=np.int8)
    cdef int8_t[::1] dist = dist_arr
    # the rows reached (hop 1 or 2), in the order first reached (each row at most once); sorted below
    touched_arr = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] touched = touched_arr
    for k in range(s):
        dist[anchors[k]] = 0
    # hop 1: every neighbour of an anchor that is not an anchor
    for k in range(s):
        a = anchors[k]
        for e in range(indptr[a], indptr[a + 1]):
            x = indices[e]
            if dist[x] < 0:
                dist[x] = 1
                touched[touched_n] = x
                touched_n += 1
    # hop 2: every neighbour of a hop-1 row not reached before (each hop-1 row once; an anchor's
    # neighbours are all reached at hop 1 already)
    cdef Py_ssize_t hop1_n = touched_n
    for i in range(hop1_n):
        for e2 in range(indptr[touched[i]], indptr[touched[i] + 1]):
            c = indices[e2]
            if dist[c] < 0:
                dist[c] = 2
                touched[touched_n] = c
                touched_n += 1
    reached = np.sort(touched_arr[:touched_n])
    keep = np.asarray(retrievable, dtype=np.bool_)[reached]
    cands_arr = reached[keep]
    cdef int64_t[::1] cands = cands_arr
    m = cands.shape[0]
    cdist_arr = np.empty(m, dtype=np.int64)
    cdef int64_t[::1] cdist = cdist_arr
    # local position of each row: candidates 0..m-1, anchors -2-k (k = anchor position), others -1
    pos_arr = np.full(n, -1, dtype=np.int32)
    cdef int32_t[::1] pos = pos_arr
    for i in range(m):
        pos[cands[i]] = <int32_t> i
        cdist[i] = dist[cands[i]]
    for k in range(s):
        pos[anchors[k]] = <int32_t> (-2 - k)
    # per anchor, one row of (s, m) tables (contiguous for the scatter), transposed at the end
    hops_arr = np.zeros((s, m), dtype=np.int8)
    wsum_arr = np.zeros((s, m), dtype=np.float64)
    best_arr = np.full(m, -np.inf, dtype=np.float64)
    aa_arr = np.zeros((s, s), dtype=np.uint8)
    cdef int8_t[:, ::1] hops = hops_arr
    cdef double[:, ::1] wsum = wsum_arr
    cdef double[::1] best = best_arr
    cdef uint8_t[:, ::1] aa = aa_arr
    cdef double minus_inf = -np.inf
    for k in range(s):
        a = anchors[k]
        # every 2-hop walk a -> x -> c: the strongest total per candidate (a branch-free running max)
        for e in range(indptr[a], indptr[a + 1]):
            x = indices[e]
            w1 = <double> data[e]
            for e2 in range(indptr[x], indptr[x + 1]):
                pc = pos[indices[e2]]
                if pc >= 0:
                    val = w1 + <double> data[e2]
                    best[pc] = val if val > best[pc] else best[pc]
        for i in range(m):
            if best[i] != minus_inf:
                hops[k, i] = 2
                wsum[k, i] = best[i]
                best[i] = minus_inf
        # direct edges last: they fix the anchor at 1 hop for that candidate, whatever the 2-hop totals
        for e in range(indptr[a], indptr[a + 1]):
            px = pos[indices[e]]
            if px >= 0:
                hops[k, px] = 1
                wsum[k, px] = <double> data[e]
            elif px <= -2:
                aa[k, -2 - px] = 1
    return (cands_arr, cdist_arr, np.ascontiguousarray(hops_arr.T), np.ascontiguousarray(wsum_arr.T),
            aa_arr.view(np.bool_))


def edges_within(const int32_t[::1] indptr, const int32_t[::1] indices, const float[::1] data,
                 const int64_t[::1] rows):
    """(a, b, weight) int64 / int64 / float32 arrays of the edges with both ends in ``rows`` (ascending and
    distinct), a < b, in CSR order: what :func:`crp_core.stages.graph_walk.edges_among` sorts and lists."""
    cdef Py_ssize_t r = rows.shape[0], i, e, count = 0, cap = 256
    cdef int64_t row, nb
    a_arr = np.empty(cap, dtype=np.int64)
    b_arr = np.empty(cap, dtype=np.int64)
    w_arr = np.empty(cap, dtype=np.float32)
    cdef int64_t[::1] a_out = a_arr
    cdef int64_t[::1] b_out = b_arr
    cdef float[::1] w_out = w_arr
    for i in range(r):
        row = rows[i]
        for e in range(indptr[row], indptr[row + 1]):
            nb = indices[e]
            if nb <= row:
                continue
            if _holds(rows, i + 1, nb):  # rows ascend: a partner above ``row`` sits after position i
                if count == cap:
                    cap *= 2
                    a_arr = np.resize(a_arr, cap)
                    b_arr = np.resize(b_arr, cap)
                    w_arr = np.resize(w_arr, cap)
                    a_out = a_arr
                    b_out = b_arr
                    w_out = w_arr
                a_out[count] = row
                b_out[count] = nb
                w_out[count] = data[e]
                count += 1
    return a_arr[:count], b_arr[:count], w_arr[:count]


def edge_triples(const int32_t[::1] indptr, const int32_t[::1] indices, const float[::1] data,
                 const int64_t[::1] rows):
    """The edges with both ends in ``rows`` (ascending and distinct) as a tuple of ``(a, b, weight)``
    triples, a < b, the weight widened to a Python float, in (a, b) order: what
    :func:`crp_core.stages.graph_walk.edges_among` returns. The rows are visited in ascending order and each
    row's partners in CSR order, which is (a, b) order when each row's column indices ascend strictly (as
    the similarity graph stores them); None when a row's partners do not (the caller sorts instead)."""
    cdef Py_ssize_t r = rows.shape[0], i, e
    cdef int64_t row, nb, last
    out = []
    for i in range(r):
        row = rows[i]
        last = row
        for e in range(indptr[row], indptr[row + 1]):
            nb = indices[e]
            if nb <= row:
                continue
            if _holds(rows, i + 1, nb):  # rows ascend: a partner above ``row`` sits after position i
                if nb <= last:
                    return None  # this row's partners are not in ascending order
                last = nb
                out.append((row, nb, <double> data[e]))
    return tuple(out)


def bridge_counts(const int8_t[:, ::1] hops, const double[:, ::1] wsum, const uint8_t[:, ::1] non_adj):
    """(bridge_count int64, mean_path_weight float64, bridge_value float64) per candidate row, for at most
    62 anchors: a row's touched anchors are one bit mask, its non-adjacent pairs ``popcount(later[k] & T)``
    summed over its touched anchors k (``later[k]``: the anchors after k with no direct edge to k); the
    path weights summed left to right over the anchors, as the numpy path of
    :func:`crp_core.stages.graph_walk.bridge_values` sums them."""
    cdef Py_ssize_t m = hops.shape[0], s = hops.shape[1], i, k, b
    cdef int64_t edges, count
    cdef uint64_t touched, bits
    cdef double total, mean
    later_arr = np.zeros(s, dtype=np.uint64)
    cdef uint64_t[::1] later = later_arr
    for k in range(s):
        for b in range(k + 1, s):
            if non_adj[k, b]:
                later[k] |= (<uint64_t> 1) << b
    count_arr = np.empty(m, dtype=np.int64)
    mean_arr = np.empty(m, dtype=np.float64)
    bridge_arr = np.empty(m, dtype=np.float64)
    cdef int64_t[::1] count_out = count_arr
    cdef double[::1] mean_out = mean_arr
    cdef double[::1] bridge_out = bridge_arr
    cdef double nan = np.nan
    for i in range(m):
        touched = 0
        edges = 0
        total = 0.0
        for k in range(s):
            if hops[i, k] > 0:
                touched |= (<uint64_t> 1) << k
                edges += hops[i, k]
            total += wsum[i, k]
        count = 0
        bits = touched
        while bits:
            k = _lowest_bit(bits)
            bits &= bits - 1
            count += _popcount(later[k] & touched)
        mean = total / (edges if edges > 1 else 1)
        count_out[i] = count
        mean_out[i] = mean if edges > 0 else nan
        bridge_out[i] = (<double> count) * mean if count > 0 else 0.0
    return count_arr, mean_arr, bridge_arr


cdef inline bint _holds(const int64_t[::1] rows, Py_ssize_t lo, int64_t value) noexcept nogil:
    """Whether ``rows[lo:]`` (ascending) holds ``value``: a binary search."""
    cdef Py_ssize_t hi = rows.shape[0], mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if rows[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo < rows.shape[0] and rows[lo] == value


cdef inline Py_ssize_t _lowest_bit(uint64_t x) nogil:
    cdef Py_ssize_t k = 0
    while not (x & 1):
        x >>= 1
        k += 1
    return k


cdef inline int64_t _popcount(uint64_t x) nogil:
    cdef int64_t c = 0
    while x:
        x &= x - 1
        c += 1
    return c

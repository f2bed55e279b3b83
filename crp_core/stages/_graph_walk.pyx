# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Stage 3's 2-hop walk and anchor paths in one compiled pass over the anchors' CSR neighbourhood
(SPEC-025 §2.3-2.4; docs/reference/pipeline.md §3). The same result as the numpy path of
:func:`crp_core.stages.graph_walk.walk_with_paths` for ``max_hops == 2`` and distinct anchors, to the bit: hop-1
weights are the edge's float32 weight widened, 2-hop totals the float64 sum of the two float32 weights,
the strongest shortest path wins, a direct edge makes an anchor 1 hop away whatever the 2-hop totals.
"""
import numpy as np

from libc.math cimport INFINITY
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define CRP_PREFETCH(p) __builtin_prefetch(p)
    #else
    #define CRP_PREFETCH(p) ((void)0)
    #endif
    """
    void CRP_PREFETCH(const void *p) noexcept nogil


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define CRP_CTZ64(x) ((Py_ssize_t) __builtin_ctzll(x))
    #else
    static inline Py_ssize_t CRP_CTZ64(uint64_t x) { Py_ssize_t k = 0; while (!(x & 1)) { x >>= 1; k++; } return k; }
    #endif
    #if defined(__POPCNT__) && (defined(__GNUC__) || defined(__clang__))
    #define CRP_POPCOUNT64(x) ((int64_t) __builtin_popcountll(x))
    #else
    /* the bit count inline (a build for a CPU without the instruction otherwise calls a library routine) */
    static inline int64_t CRP_POPCOUNT64(uint64_t x) {
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int64_t) ((x * 0x0101010101010101ULL) >> 56);
    }
    #endif
    """
    Py_ssize_t CRP_CTZ64(uint64_t x) noexcept nogil
    int64_t CRP_POPCOUNT64(uint64_t x) noexcept nogil


def walk_two_hops(const int32_t[::1] indptr, const int32_t[::1] indices, const float[::1] data,
                  const int64_t[::1] anchors, retrievable):
    """(cands int64 ascending, hop distance int64, hops (m, s) int8, weight_sum (m, s) float64,
    aa (s, s) bool) for distinct ``anchors`` and ``max_hops == 2``; ``retrievable`` is the (n,) bool mask.

    The loops over edges are small ``nogil`` functions on raw pointers (a store through a memoryview may
    alias the views' own fields in an extension build, which makes a loop reload them every iteration)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t s = anchors.shape[0]
    cdef Py_ssize_t k, e, x, a, m, i, ne = 0, lists = 0, total = 0, first = 0
    cdef int32_t px
    if s == 0 or indices.shape[0] == 0:
        return _no_walk(s)
    cdef const int32_t *ip = &indptr[0]
    cdef const int32_t *ix = &indices[0]
    cdef const float *w = &data[0]
    cdef const int64_t *an = &anchors[0]
    # the rows reached (hop 1 or 2), in the order first reached (each row at most once); sorted below
    dist_arr = np.full(n, -1, dtype=np.int8)
    touched_arr = np.empty(n, dtype=np.int64)
    cdef int8_t[::1] dist = dist_arr
    cdef int64_t[::1] touched = touched_arr
    cdef Py_ssize_t touched_n = _reach(ip, ix, w, an, s, &dist[0], &touched[0])
    reached = np.sort(touched_arr[:touched_n])
    cands_arr = reached[np.asarray(retrievable, dtype=np.bool_)[reached]]
    cdist_arr = dist_arr[cands_arr].astype(np.int64)
    cdef int64_t[::1] cands = cands_arr
    m = cands.shape[0]
    # local position of each row: candidates 0..m-1, anchors -2-k (k = anchor position), other reached
    # rows -1. Only those rows are ever read (every row read is next to an anchor or to a hop-1 row), so
    # the table is not filled
    pos_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] pos = pos_arr
    for i in range(touched_n):
        pos[touched[i]] = -1
    for i in range(m):
        pos[cands[i]] = <int32_t> i
    for k in range(s):
        pos[an[k]] = <int32_t> (-2 - k)
    # the anchors' edges a -> x in anchor order, each x's list number (x in order of first appearance)
    for k in range(s):
        ne += ip[an[k] + 1] - ip[an[k]]
    ew_arr = np.empty(ne, dtype=np.float64)  # weight, widened
    edge_list_arr = np.empty(ne, dtype=np.int64)
    list_row_arr = np.empty(ne, dtype=np.int64)
    list_id_arr = np.empty(n, dtype=np.int32)  # read only at anchor neighbours, set first below
    cdef double[::1] ew = ew_arr
    cdef int64_t[::1] edge_list = edge_list_arr
    cdef int64_t[::1] list_row = list_row_arr
    cdef int32_t[::1] list_id = list_id_arr
    for k in range(s):
        for e in range(ip[an[k]], ip[an[k] + 1]):
            list_id[ix[e]] = -1
    i = 0
    for k in range(s):
        for e in range(ip[an[k]], ip[an[k] + 1]):
            x = ix[e]
            if list_id[x] < 0:
                list_id[x] = <int32_t> lists
                list_row[lists] = x
                lists += 1
                total += ip[x + 1] - ip[x]
            edge_list[i] = list_id[x]
            ew[i] = <double> w[e]
            i += 1
    # each such x once: its candidate neighbours (local position, weight) listed contiguously, so the
    # per-anchor pass reads no position table and takes no branch per 2-hop walk
    start_arr = np.empty(lists + 1, dtype=np.int64)
    lpc_arr = np.empty(max(total, 1), dtype=np.int32)
    lw_arr = np.empty(max(total, 1), dtype=np.float64)  # the edge's float32 weight, widened once
    cdef int64_t[::1] start = start_arr
    cdef int32_t[::1] lpc = lpc_arr
    cdef double[::1] lw = lw_arr
    _list_candidates(ip, ix, w, &pos[0], &list_row[0], lists, &start[0], &lpc[0], &lw[0])
    # per anchor, one row of (s, m) tables (contiguous for the scatter), transposed at the end
    hops_arr = np.zeros((s, m), dtype=np.int8)
    wsum_arr = np.zeros((s, m), dtype=np.float64)
    best_arr = np.full(max(m, 1), -np.inf, dtype=np.float64)
    aa_arr = np.zeros((s, s), dtype=np.uint8)
    cdef int8_t[:, ::1] hops = hops_arr
    cdef double[:, ::1] wsum = wsum_arr
    cdef double[::1] best = best_arr
    cdef uint8_t[:, ::1] aa = aa_arr
    for k in range(s):
        a = an[k]
        # every 2-hop walk a -> x -> c: the strongest total per candidate, then written to row k
        _strongest(&best[0], &lpc[0], &lw[0], &start[0], &edge_list[0], &ew[0], first, first + ip[a + 1] - ip[a])
        first += ip[a + 1] - ip[a]
        if m:
            _flush(&best[0], &hops[k, 0], &wsum[k, 0], m)
        # direct edges last: they fix the anchor at 1 hop for that candidate, whatever the 2-hop totals
        for e in range(ip[a], ip[a + 1]):
            px = pos[ix[e]]
            if px >= 0:
                hops[k, px] = 1
                wsum[k, px] = <double> w[e]
            elif px <= -2:
                aa[k, -2 - px] = 1
    return (cands_arr, cdist_arr, np.ascontiguousarray(hops_arr.T), np.ascontiguousarray(wsum_arr.T),
            aa_arr.view(np.bool_))


def _no_walk(Py_ssize_t s):
    """The walk of no anchor or of an edgeless graph: no candidate."""
    return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, s), dtype=np.int8),
            np.zeros((0, s), dtype=np.float64), np.zeros((s, s), dtype=np.bool_))


cdef enum:
    _AHEAD = 4  # rows ahead whose CSR entries are prefetched


cdef Py_ssize_t _reach(const int32_t *indptr, const int32_t *indices, const float *data, const int64_t *anchors,
                       Py_ssize_t s, int8_t *dist, int64_t *touched) noexcept nogil:
    """Hop 1 (every neighbour of an anchor that is not an anchor), then hop 2 (every neighbour of a hop-1
    row not reached before; an anchor's neighbours are all reached at hop 1): ``dist`` set to 0 / 1 / 2,
    the reached rows appended to ``touched`` in the order first reached. Returns how many."""
    cdef Py_ssize_t k, hop1_n
    for k in range(s):
        dist[anchors[k]] = 0
    hop1_n = _expand(indptr, indices, data, anchors, s, 1, dist, touched, 0)
    return _expand(indptr, indices, data, touched, hop1_n, 2, dist, touched, hop1_n)


cdef Py_ssize_t _expand(const int32_t *indptr, const int32_t *indices, const float *data, const int64_t *rows,
                        Py_ssize_t count, int8_t level, int8_t *dist, int64_t *touched,
                        Py_ssize_t n_touched) noexcept nogil:
    """Every neighbour of ``rows[:count]`` not reached yet gets ``dist = level`` and is appended to
    ``touched`` (from ``n_touched`` on; ``rows`` may be ``touched`` itself, read below ``count``). Returns the
    new count. The rows' CSR entries are scattered over the whole graph: a row a few ahead is prefetched."""
    cdef Py_ssize_t i, e
    cdef int64_t c
    for i in range(min(count, _AHEAD)):
        CRP_PREFETCH(&indices[indptr[rows[i]]])
        CRP_PREFETCH(&data[indptr[rows[i]]])
    for i in range(count):
        if i + _AHEAD < count:
            CRP_PREFETCH(&indices[indptr[rows[i + _AHEAD]]])
            CRP_PREFETCH(&data[indptr[rows[i + _AHEAD]]])
        for e in range(indptr[rows[i]], indptr[rows[i] + 1]):
            c = indices[e]
            if dist[c] < 0:
                dist[c] = level
                touched[n_touched] = c
                n_touched += 1
    return n_touched


cdef void _list_candidates(const int32_t *indptr, const int32_t *indices, const float *data, const int32_t *pos,
                           const int64_t *list_row, Py_ssize_t lists, int64_t *start, int32_t *lpc,
                           double *lw) noexcept nogil:
    """For each listed row x: its neighbours that are candidates (local position ``pos >= 0``) and the edge
    weights (widened), in CSR order, at ``lpc[start[l]:start[l + 1]]`` / ``lw[...]``."""
    cdef Py_ssize_t l, e, cnt = 0
    cdef int64_t x
    cdef int32_t pc
    for l in range(lists):
        start[l] = cnt
        x = list_row[l]
        for e in range(indptr[x], indptr[x + 1]):
            pc = pos[indices[e]]
            if pc >= 0:
                lpc[cnt] = pc
                lw[cnt] = <double> data[e]
                cnt += 1
    start[lists] = cnt


cdef void _flush(double *best, int8_t *hops_row, double *wsum_row, Py_ssize_t m) noexcept nogil:
    """One anchor's row: hop 2 and the strongest total where a 2-hop walk reached the candidate; ``best``
    reset to -inf."""
    cdef Py_ssize_t i
    cdef double minus_inf = -INFINITY
    for i in range(m):
        if best[i] != minus_inf:
            hops_row[i] = 2
            wsum_row[i] = best[i]
            best[i] = minus_inf


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


def bridged_order(const int8_t[:, ::1] hops, const uint8_t[:, ::1] non_adj, Py_ssize_t i):
    """The anchor positions named by row ``i``'s bridged pairs (its touched anchors' pairs with no direct
    edge, a < b, row-major), each once in order of first appearance; at most 62 anchors. What
    :meth:`crp_core.stages.bridges.BridgedPairs.anchors` lists (as positions)."""
    cdef Py_ssize_t s = hops.shape[1], a, b
    cdef uint64_t touched = 0, seen = 0, partners, new
    for a in range(s):
        if hops[i, a] > 0:
            touched |= (<uint64_t> 1) << a
    out = []
    for a in range(s):
        if not (touched >> a) & 1:
            continue
        partners = 0
        for b in range(a + 1, s):
            if non_adj[a, b] and (touched >> b) & 1:
                partners |= (<uint64_t> 1) << b
        if not partners:
            continue
        if not (seen >> a) & 1:
            out.append(a)
            seen |= (<uint64_t> 1) << a
        new = partners & ~seen
        seen |= new
        while new:
            out.append(CRP_CTZ64(new))
            new &= new - 1
    return out


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
            k = CRP_CTZ64(bits)
            bits &= bits - 1
            count += CRP_POPCOUNT64(later[k] & touched)
        mean = total / (edges if edges > 1 else 1)
        count_out[i] = count
        mean_out[i] = mean if edges > 0 else nan
        bridge_out[i] = (<double> count) * mean if count > 0 else 0.0
    return count_arr, mean_arr, bridge_arr


cdef void _strongest(double *best, const int32_t *lpc, const double *lw, const int64_t *start,
                     const int64_t *edge_list, const double *ew, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """``best[c] = max(best[c], w(a, x) + w(x, c))`` over the anchor edges ``first:last`` (a -> x) and
    each x's listed candidate neighbours c (a small function of its own, so the loop keeps its pointers in
    registers)."""
    cdef Py_ssize_t i, t, t1
    cdef double w1, val
    cdef int32_t q
    for i in range(first, last):
        w1 = ew[i]
        t = start[edge_list[i]]
        t1 = start[edge_list[i] + 1]
        while t < t1:
            q = lpc[t]
            val = w1 + lw[t]
            best[q] = val if val > best[q] else best[q]
            t += 1


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

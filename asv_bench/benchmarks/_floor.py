"""Bare numba loops: the floor for the library's own overhead.

Each function is the plain Briggs & Torczon loop on numpy arrays with the
dtypes the library uses (``sparse``: uint32 of length capacity, ``dense``:
int32, members packed in ``dense[:n]``), with no validation, no growth and
no Python object around it. A ``SparseSet`` method can only be slower than
these by its own overhead (argument checks, dtype conversion, dispatch), so
``sparseset / floor`` in the same run is that overhead.

The names avoid asv's benchmark prefixes (``time_``, ``track_``, ``mem_``,
``peakmem_``) because asv imports every module in the package.
"""

import numba
import numpy as np

# Index arithmetic stays unsigned: numba's negative-index wraparound costs
# 1.2-2x on random gathers, and uint64 mixed with int64 promotes to float64.
# ``n`` is carried as uint64 so that ``p < n`` compares unsigned with unsigned.


@numba.njit(cache=True)
def floor_add(sparse, dense, n, ids):
    """Add ``ids`` in order to the set ``(sparse, dense, n)``; return the new n."""
    m = np.uint64(n)
    for i in range(ids.size):
        x = ids[i]
        u = np.uint64(x)
        p = sparse[u]
        if p < m and dense[p] == x:
            continue
        sparse[u] = m
        dense[m] = x
        m += np.uint64(1)
    return m


@numba.njit(cache=True)
def floor_contains(sparse, dense, n, ids):
    """Membership of each of ``ids`` as a new bool array."""
    out = np.empty(ids.size, dtype=np.bool_)
    cap = np.uint64(sparse.size)
    m = np.uint64(n)
    for i in range(ids.size):
        x = ids[i]
        u = np.uint64(x)
        hit = False
        if u < cap:
            p = sparse[u]
            hit = p < m and dense[p] == x
        out[i] = hit
    return out


@numba.njit(cache=True)
def floor_discard(sparse, dense, n, ids):
    """Swap-and-pop each member of ``ids`` in order; return the new n.

    The removed id lands at ``dense[n - 1]`` with ``sparse`` pointing at it,
    as the library's removal does (what makes rollback possible).
    """
    m = np.uint64(n)
    for i in range(ids.size):
        x = ids[i]
        u = np.uint64(x)
        p = sparse[u]
        if p < m and dense[p] == x:
            m -= np.uint64(1)
            last = dense[m]
            dense[p] = last
            sparse[np.uint64(last)] = p
            dense[m] = x
            sparse[u] = m
    return m


@numba.njit(cache=True)
def floor_intersection(sparse_a, dense_a, n_a, sparse_b, dense_b, n_b):
    """Members of both sets as a freshly allocated ``(sparse, dense, n)``.

    Walks the smaller set and probes the other, so the cost is
    ``O(min(n_a, n_b))`` probes plus the result's allocation.
    """
    if n_a > n_b:
        sparse_a, dense_a, n_a, sparse_b, dense_b, n_b = (
            sparse_b,
            dense_b,
            n_b,
            sparse_a,
            dense_a,
            n_a,
        )
    cap_b = np.uint64(sparse_b.size)
    m_b = np.uint64(n_b)
    sparse = np.empty(max(sparse_a.size, sparse_b.size), dtype=np.uint32)
    dense = np.empty(n_a, dtype=np.int32)
    m = np.uint64(0)
    for i in range(n_a):
        x = dense_a[i]
        u = np.uint64(x)
        if u < cap_b:
            p = sparse_b[u]
            if p < m_b and dense_b[p] == x:
                sparse[u] = m
                dense[m] = x
                m += np.uint64(1)
    return sparse, dense, m


def empty_arrays(capacity):
    """A new empty set's arrays: ``sparse`` left uninitialised, as allowed."""
    return np.empty(capacity, dtype=np.uint32), np.empty(capacity, dtype=np.int32)


def warm_up():
    """Compile (or load from cache) every floor loop for int64 ids.

    The argument types must match the benchmarks' exactly (C-contiguous
    1-D uint32/int32 arrays, int64 ids, Python int ``n``), otherwise the
    timed call would compile a second specialisation.
    """
    ids = np.arange(4, dtype=np.int64)
    sparse, dense = empty_arrays(8)
    n = int(floor_add(sparse, dense, 0, ids))
    floor_contains(sparse, dense, n, ids)
    floor_intersection(sparse, dense, n, sparse, dense, n)
    floor_discard(sparse, dense, n, ids)

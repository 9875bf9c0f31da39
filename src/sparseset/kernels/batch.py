"""Batch kernels: one compiled loop over a whole id array per operation.

Each loop is built from the single-id operations in :mod:`.element`, so the
set logic exists once. No kernel raises for bad user input: where a bad id
matters the kernel reports its position and the Python layer raises.
"""

import numpy as np
from numba import literal_unroll, njit

from .element import NO_NRT, find, push, swap_remove


@njit(cache=True)
def upsert(sparse, dense, n, ids, positions):
    """Append the non-members of ``ids`` once each, in batch order.

    The caller guarantees ``len(dense) >= min(capacity, n + len(ids))``.
    Unless ``positions`` is empty, ``positions[k]`` receives the dense
    position of ``ids[k]``, new or not (a store writes its rows there).
    Returns ``(new_n, fail)``. If an id is negative or not below capacity,
    the batch is undone by restoring ``n`` (appends only wrote past it) and
    ``(n, k)`` comes back with ``k`` the position of that id; otherwise
    ``fail`` is -1. Checking inside the insertion loop costs one predictable
    compare, where a validation pass would re-read the whole batch.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> positions = np.empty(3, np.int64)
    >>> upsert(sparse, dense, 0, np.array([3, 1, 3]), positions), positions
    ((2, -1), array([0, 1, 0]))
    """
    capacity = np.uint64(sparse.shape[0])
    record = positions.shape[0] != 0
    m = n
    for k in range(ids.shape[0]):
        x = ids[k]
        if np.uint64(x) >= capacity:
            return n, k
        p = find(sparse, dense, m, x)
        if p < 0:
            p = m
            m = push(sparse, dense, m, x)
        if record:
            positions[k] = p
    return m, -1


@njit(cache=True)
def add(sparse, dense, n, ids):
    """:func:`upsert` without recording positions: a set's ``add``.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> add(sparse, dense, 0, np.array([3, 1, 3]))
    (2, -1)
    >>> add(sparse, dense, 2, np.array([4, 9]))
    (2, 1)
    """
    return upsert(sparse, dense, n, ids, np.empty(0, np.int64))


@njit(**NO_NRT)
def discard_rows(sparse, dense, n, ids, rows):
    """Swap-and-pop every member of ``ids`` in batch order, moving its rows.

    ``rows`` is a tuple of 2-D arrays (a store's columns, viewed as words),
    whose row ``p`` belongs to ``dense[p]``; each removal copies the last
    member's row of every column into the hole. Non-members, including ids
    past capacity, are ignored; the caller has rejected negative ids.
    Returns the new n.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n, _ = add(sparse, dense, 0, np.array([0, 2, 3]))
    >>> mass = np.array([[10], [12], [13]], np.int64)
    >>> n = discard_rows(sparse, dense, n, np.array([0, 7]), (mass,))
    >>> dense[:n].tolist(), mass[:n, 0].tolist()
    ([3, 2], [13, 12])
    """
    for k in range(ids.shape[0]):
        p = find(sparse, dense, n, ids[k])
        if p >= 0:
            n = swap_remove(sparse, dense, n, p)
            hole = np.uint64(p)
            last = np.uint64(n)
            # Inline, in an NRT-free kernel: an out-of-line call per removal,
            # or the reference counts of the unrolled loop's column variable,
            # each cost 2x (the counts are locked, serialising cache misses).
            for column in literal_unroll(rows):
                for j in range(column.shape[1]):
                    column[hole, j] = column[last, j]
    return n


@njit(cache=True)
def discard(sparse, dense, n, ids):
    """:func:`discard_rows` for a set without columns; returns the new n.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n, _ = add(sparse, dense, 0, np.array([0, 2, 3]))
    >>> n = discard(sparse, dense, n, np.array([0, 7]))
    >>> dense[:n].tolist()
    [3, 2]
    """
    # One zero-width column: numba cannot iterate an empty tuple.
    return discard_rows(sparse, dense, n, ids, (np.empty((0, 0), np.uint8),))


@njit(cache=True)
def contains(sparse, dense, n, ids, out):
    """Fill ``out[k]`` with the membership of ``ids[k]``.

    Returns True if some id may be negative: the sign bits of all ids are
    OR-ed together, which costs no branch, so the caller looks for the
    culprit only when this says so (a uint64 id past 2**63 also sets it).

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n, _ = add(sparse, dense, 0, np.array([3, 5]))
    >>> out = np.empty(3, np.bool_)
    >>> contains(sparse, dense, n, np.array([5, 4, 99]), out), out.tolist()
    (False, [True, False, False])
    """
    signs = np.int64(0)
    for k in range(ids.shape[0]):
        x = ids[k]
        out[k] = find(sparse, dense, n, x) >= 0
        signs |= np.int64(x)
    return signs < 0


@njit(cache=True)
def index(sparse, dense, n, ids, out):
    """Fill ``out[k]`` with the dense position of ``ids[k]``, -1 if absent.

    Returns True if some id may be negative, as :func:`contains` does.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n, _ = add(sparse, dense, 0, np.array([3, 5]))
    >>> out = np.empty(2, np.int64)
    >>> index(sparse, dense, n, np.array([5, 4]), out), out.tolist()
    (False, [1, -1])
    """
    signs = np.int64(0)
    for k in range(ids.shape[0]):
        x = ids[k]
        out[k] = find(sparse, dense, n, x)
        signs |= np.int64(x)
    return signs < 0


@njit(cache=True)
def first_mismatch(sparse, dense, n, ids, want_member):
    """First position k where membership of ``ids[k]`` differs from the wish.

    With ``want_member=True`` this finds the first absent id (``remove``'s
    all-present check, subset tests); with False the first present one
    (disjointness). Returns -1 when every id matches.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n, _ = add(sparse, dense, 0, np.array([3, 5]))
    >>> first_mismatch(sparse, dense, n, np.array([5, 3, 4]), True)
    2
    """
    for k in range(ids.shape[0]):
        if (find(sparse, dense, n, ids[k]) >= 0) != want_member:
            return k
    return -1


@njit(cache=True)
def keep_only(sparse, dense, n, ids):
    """Remove every member not in ``ids``; return the new n.

    Members found in ``ids`` are swapped to the front in batch order, so the
    removed ones end up past the new n with ``sparse`` pointing at them,
    exactly as swap-and-pop leaves them (rollback restores them). The caller
    has rejected negative ids.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n, _ = add(sparse, dense, 0, np.array([1, 2, 3, 4]))
    >>> n = keep_only(sparse, dense, n, np.array([4, 2, 6]))
    >>> dense[:n].tolist()
    [4, 2]
    """
    kept = 0
    for k in range(ids.shape[0]):
        x = ids[k]
        p = find(sparse, dense, n, x)
        if p >= kept:
            # Swap x into slot `kept`; positions below it are settled.
            other = dense[np.uint32(kept)]
            dense[np.uint32(kept)] = x
            sparse[np.uint64(x)] = np.uint32(kept)
            dense[np.uint64(p)] = other
            sparse[np.uint64(other)] = np.uint32(p)
            kept += 1
    return kept


@njit(cache=True)
def sort(sparse, dense, n):
    """Sort ``dense[:n]`` ascending and point ``sparse`` at the new positions.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n, _ = add(sparse, dense, 0, np.array([5, 1, 3]))
    >>> sort(sparse, dense, n); dense[:n].tolist()
    [1, 3, 5]
    """
    dense[:n].sort()
    for k in range(n):
        sparse[np.uint64(dense[k])] = np.uint32(k)

"""Set algebra between two sparse sets, as one filtering kernel.

Union, intersection, difference and symmetric difference all reduce to
"append to an output set each id of one set whose membership in the other
is (or is not) wanted", so the loop exists once.
"""

import numpy as np
from numba import njit

from .element import find, push


@njit(cache=True)
def filter_into(
    ids, sparse, dense, n, keep_members, out_sparse, out_dense, out_n, start
):
    """Append to the out set each id of ``ids[start:]`` whose membership matches.

    ``ids`` must hold distinct ids the out index accepts (the members of
    another set), and none of them may already be in the out set. An id
    is kept when its membership in ``(sparse, dense, n)`` equals
    ``keep_members``. Returns ``(out_n, stop)`` as ``upsert`` does: ``stop``
    is -1 when done, else where the out index needs to grow first.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels import NO_POSITIONS, UPSERT_TUNING, upsert
    >>> sp = np.empty(32, np.uint32); de = np.empty(32, np.int32)
    >>> batch = np.array([3, 5, 12, 15, 18])
    >>> n, _ = upsert(sp, de, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> out_sp = np.empty(32, np.uint32); out_de = np.empty(5, np.int32)
    >>> a = np.array([1, 5, 10, 15, 20])
    >>> m, _ = filter_into(a, sp, de, n, True, out_sp, out_de, 0, 0)
    >>> out_de[:m].tolist()
    [5, 15]
    """
    for k in range(start, ids.shape[0]):
        x = ids[np.uint64(k)]
        if (find(sparse, dense, n, x) >= 0) == keep_members:
            pushed = push(out_sparse, out_dense, out_n, x)
            if pushed == out_n:
                return out_n, k
            out_n = pushed
    return out_n, -1


@njit(cache=True)
def mark_members(bits, dense, n):
    """Set bit ``x`` of ``bits`` (uint64 words, zeroed) for each member ``x``
    of ``dense[:n]``, whose ids must all be below ``64 * len(bits)``.

    A bitmap of a flat set's members is 1/32 of its index: one that fits
    in L2 answers a membership probe with one cache hit, where the index
    takes two dependent misses (its slot, then dense).

    Examples
    --------
    >>> import numpy as np
    >>> bits = np.zeros(2, np.uint64)
    >>> mark_members(bits, np.array([3, 70, 9]), 2); bits.tolist()
    [8, 64]
    """
    for k in range(n):
        x = np.uint64(dense[np.uint64(k)])
        bits[x >> np.uint64(6)] |= np.uint64(1) << (x & np.uint64(63))


@njit(cache=True)
def filter_marked(ids, bits, keep_members, out_sparse, out_dense, out_n, start):
    """:func:`filter_into` with membership read from a bitmap of the
    probed set (:func:`mark_members`) instead of its index and dense.

    Ids past the bitmap are not members. Returns ``(out_n, stop)`` as
    :func:`filter_into` does.

    Examples
    --------
    >>> import numpy as np
    >>> bits = np.zeros(1, np.uint64); mark_members(bits, np.array([5, 15]), 2)
    >>> out_sp = np.empty(128, np.uint32); out_de = np.empty(5, np.int32)
    >>> ids = np.array([1, 5, 10, 15, 99])
    >>> m, _ = filter_marked(ids, bits, True, out_sp, out_de, 0, 0)
    >>> out_de[:m].tolist()
    [5, 15]
    """
    words = np.uint64(bits.shape[0])
    for k in range(start, ids.shape[0]):
        x = ids[np.uint64(k)]
        u = np.uint64(x)
        w = u >> np.uint64(6)
        member = w < words and (bits[w] >> (u & np.uint64(63))) & np.uint64(1) != 0
        if member == keep_members:
            pushed = push(out_sparse, out_dense, out_n, x)
            if pushed == out_n:
                return out_n, k
            out_n = pushed
    return out_n, -1

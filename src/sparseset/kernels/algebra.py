"""Set algebra between two sparse sets, as one filtering kernel.

Union, intersection, difference and symmetric difference all reduce to
"append to an output set each id of one set whose membership in the other
is (or is not) wanted", so the loop exists once (:func:`filter_into`, and
:func:`filter_marked` for a bitmap of the probed set). :func:`combine`
runs a whole operation on two small sets in one call, where the cost of
starting a kernel is most of the work.
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


#: The operations of :func:`combine`: ``a & b``, ``a | b``, ``a - b``, ``a ^ b``.
AND, OR, SUB, XOR = 0, 1, 2, 3


@njit(cache=True)
def combine(op, a_sparse, a_dense, a_n, b_sparse, b_dense, b_n, out_sparse, out_dense):
    """``a op b`` (one of :data:`AND`, :data:`OR`, :data:`SUB`, :data:`XOR`)
    appended to an empty out set; returns its member count.

    ``out_dense`` must have room for every member of the result, and the
    out index must be empty. Returns -1 where the out index cannot take a
    member (past its range or capacity): the caller grows it and runs the
    operation the general way. An intersection walks the smaller operand.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels.element import push
    >>> a_sp, b_sp = np.empty(16, np.uint32), np.empty(16, np.uint32)
    >>> a_de, b_de = np.empty(3, np.int32), np.empty(3, np.int32)
    >>> a_n = b_n = 0
    >>> for x in (1, 5, 9): a_n = push(a_sp, a_de, a_n, x)
    >>> for x in (5, 9, 12): b_n = push(b_sp, b_de, b_n, x)
    >>> out_sp, out_de = np.empty(16, np.uint32), np.empty(6, np.int32)
    >>> m = combine(XOR, a_sp, a_de, a_n, b_sp, b_de, b_n, out_sp, out_de)
    >>> out_de[:m].tolist()
    [1, 12]
    """
    out_n = 0
    if op == AND and b_n < a_n:
        # Walk the smaller set: b & a has the same members.
        a_sparse, b_sparse = b_sparse, a_sparse
        a_dense, b_dense = b_dense, a_dense
        a_n, b_n = b_n, a_n
    for k in range(a_n):
        x = a_dense[np.uint64(k)]
        if op != OR and (find(b_sparse, b_dense, b_n, x) >= 0) != (op == AND):
            continue
        pushed = push(out_sparse, out_dense, out_n, x)
        if pushed == out_n:
            return -1
        out_n = pushed
    if op in (OR, XOR):
        for k in range(b_n):
            x = b_dense[np.uint64(k)]
            if find(a_sparse, a_dense, a_n, x) < 0:
                pushed = push(out_sparse, out_dense, out_n, x)
                if pushed == out_n:
                    return -1
                out_n = pushed
    return out_n


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

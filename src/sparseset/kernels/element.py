"""Single-id operations on a Briggs & Torczon sparse set.

These are the one place where membership, insertion and removal are spelled
out; every batch kernel loops over them, and the jit twins call them per
element. They take ``sparse`` (the index, of any kind in :mod:`.kinds`:
id -> candidate position, garbage where not a member), ``dense`` (members
packed in ``dense[:n]``) and ``n``. Only ``dense`` proves membership.

Index arithmetic is unsigned on purpose: an unsigned index spares numba's
negative-index wraparound on every random access.

They are compiled without NRT (``_nrt=False``): they never allocate, and an
array passed to an NRT-enabled function is reference-counted on every call,
whose locked increments serialise the cache misses a batch loop otherwise
overlaps.
"""

import numpy as np
from numba.extending import register_jitable

from .array_types import Int, IntArray, typed_njit
from .index.kinds import Index, accepts, erase, held, insert, locate, lookup, store
from .options import NO_NRT


@typed_njit(**NO_NRT)
def find(sparse: Index, dense: IntArray, n: Int, x: Int) -> int:
    """Position of ``x`` in ``dense[:n]``, or -1 if ``x`` is not a member.

    Any integer is accepted: negative ids and ids at or past capacity are
    simply absent. Membership is proven by ``dense``, so ``sparse`` may hold
    anything where ``x`` is not a member.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.zeros(8, np.uint32); dense = np.zeros(8, np.int32)
    >>> n = push(sparse, dense, 0, 5)
    >>> int(find(sparse, dense, n, 5)), int(find(sparse, dense, n, 3))
    (0, -1)
    """
    return confirm(dense, n, lookup(sparse, x), x)


@typed_njit(**NO_NRT)
def confirm(dense: IntArray, n: Int, p: Int, x: Int) -> int:
    """``p`` if ``dense`` proves that ``x`` is the member at candidate
    position ``p`` (from the index's ``lookup``), else -1.

    Examples
    --------
    >>> import numpy as np
    >>> dense = np.array([4, 9, 7], np.int64)
    >>> int(confirm(dense, 2, np.uint32(1), 9)), int(confirm(dense, 2, np.uint32(2), 7))
    (1, -1)
    """
    found = np.int64(-1)
    if p < np.uint32(n):
        # A select, not a branch: whether dense agrees is a coin flip for
        # mixed queries, and a mispredicted branch on a cache-missing load
        # stops the CPU overlapping the next lookups' misses.
        found = np.int64(p) if dense[p] == np.int64(x) else found
    # An int64 here is a Python int to the callers, compiled or not.
    return found  # type: ignore[return-value]


@typed_njit(**NO_NRT)
def push(sparse: Index, dense: IntArray, n: int, x: Int) -> int:
    """Append ``x``, a non-member the index accepts; return n + 1.

    Returns ``n`` unchanged if the index cannot take ``x`` yet: past its
    capacity or range, or out of room (paged and hash indexes allocate from
    pools), so the caller grows it or rejects ``x``; nothing is written
    then. The caller guarantees ``len(dense) > n``.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> push(sparse, dense, 0, 7)
    1
    """
    # The range check makes an id from a set of another kind safe to push:
    # a flat index would otherwise write past its end.
    if not accepts(sparse, x) or not insert(sparse, x, n):
        return n
    dense[np.uint32(n)] = x
    return n + 1


@typed_njit(**NO_NRT)
def claim(sparse: Index, dense: IntArray, n: Int, x: Int) -> int:
    """Position of ``x`` in dense, appending it at ``n`` if it is new.

    Returns ``p < n`` for a member, ``n`` for an id appended at ``n`` (the
    caller then counts ``n + 1`` members), and -1, changing nothing, where
    the index cannot take ``x`` yet (negative, past its range or capacity,
    or out of room). One walk or probe finds the slot, to read it and then
    to claim it. The caller guarantees ``len(dense) > n``.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> int(claim(sparse, dense, 0, 6)), int(claim(sparse, dense, 1, 6))
    (0, 0)
    >>> int(claim(sparse, dense, 1, 3)), int(claim(sparse, dense, 2, 99))
    (1, -1)
    """
    # int64 throughout, one type for numba to unify: a Python int to callers.
    if not accepts(sparse, x):
        return np.int64(-1)  # type: ignore[return-value]
    slot = locate(sparse, x)
    p = confirm(dense, n, held(sparse, slot, x), x)
    if p < 0:
        if not store(sparse, slot, x, n):
            return np.int64(-1)  # type: ignore[return-value]
        dense[np.uint32(n)] = x
        p = np.int64(n)  # type: ignore[assignment]
    return p


@typed_njit(**NO_NRT)
def swap_remove(sparse: Index, dense: IntArray, n: int, p: Int) -> int:
    """Remove the member at position ``p`` by swapping it with the last one.

    The removed id lands at ``dense[n - 1]``; a flat or paged index still
    points at it there, so restoring ``n`` undoes the removal, while a hash
    index erases it (see ``reindex`` for undoing that). Returns ``n - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n = 0
    >>> for x in (0, 2, 3):
    ...     n = push(sparse, dense, n, x)
    >>> n = swap_remove(sparse, dense, n, 0)
    >>> dense[:n].tolist(), int(dense[n])
    ([3, 2], 0)
    """
    last = np.uint32(n - 1)
    swap_members(sparse, dense, p, last)
    erase(sparse, dense[last])
    return n - 1


@register_jitable
def grown_length(current: int, needed: int, limit: int) -> int:
    """The length an array grows to: at least ``needed``, doubling, at most ``limit``.

    Plain Python when called from Python (nothing to compile), inlined when
    called from jitted code, so the Python containers and their jit twins
    grow alike.

    Examples
    --------
    >>> grown_length(100, 101, 2**31), grown_length(0, 3, 2**31), grown_length(8, 9, 10)
    (200, 16, 10)
    """
    return min(max(needed, 2 * current, 16), limit)


@typed_njit(**NO_NRT)
def swap_members(sparse: Index, dense: IntArray, p: Int, q: Int) -> None:
    """Exchange the members at positions ``p`` and ``q`` of dense.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n = 0
    >>> for x in (4, 6, 7):
    ...     n = push(sparse, dense, n, x)
    >>> swap_members(sparse, dense, 0, 2)
    >>> dense[:n].tolist(), int(sparse[4])
    ([7, 6, 4], 2)
    """
    pu = np.uint32(p)
    qu = np.uint32(q)
    a = dense[pu]
    b = dense[qu]
    dense[pu] = b
    insert(sparse, b, pu)
    dense[qu] = a
    insert(sparse, a, qu)

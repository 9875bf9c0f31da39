"""Many sets over one value range, one per row of two 2-D arrays, with a trail.

Row ``k`` of ``dense`` and ``sparse`` is a set over ``[0, universe)`` with a
flat index (``sparse[k]``), its members packed in ``dense[k, :sizes[k]]``.
Every row starts full and only loses values, so each row stays a
permutation of the universe: a removal swaps the value just past the
members, where the row's index still points at it. A *trail* records the
set number of each removal, so undoing the removals since trail length
``t`` is growing those sets by one each, newest first.

Each value of each set can be on the trail at most once (it must be
restored before it can be removed again), so a trail of ``count *
universe`` entries never fills. The operations below are the per-element
steps of :class:`sparseset.SetArray`, in its ``@njit`` methods and its
batches alike; they use :func:`~.element.find` and
:func:`~.element.swap_remove` on one row, as every set does.

They are compiled without NRT and never raise: a caller inside ``@njit``
code passes the state's arrays straight in, and a raise path or reference
counting in the call would cost many times the operation itself. A set
number outside ``[0, count)`` reads as an
empty set, so nothing is ever read or written outside the arrays.
"""

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

from .array_types import FlatIndex, Int, IntArray, typed_njit
from .element import find, swap_remove
from .marks import marked_count
from .options import NO_NRT


@typed_njit(**NO_NRT)
def row_contains(
    sparse: FlatIndex, dense: IntArray, sizes: IntArray, k: Int, v: Int
) -> bool:
    """Whether value ``v`` is in set ``k`` (False for a number that is no set).

    Examples
    --------
    >>> import numpy as np
    >>> dense = np.array([[0, 1, 2], [0, 1, 2]], np.int32)
    >>> sparse = dense.astype(np.uint32); sizes = np.array([3, 1])
    >>> [bool(row_contains(sparse, dense, sizes, 1, v)) for v in (0, 2)]
    [True, False]
    """
    if np.uint64(np.int64(k)) >= np.uint64(sizes.shape[0]):
        return False
    return find(sparse[k], dense[k], sizes[k], v) >= 0


@typed_njit(**NO_NRT)
def row_remove(
    sparse: FlatIndex,
    dense: IntArray,
    sizes: IntArray,
    trail: IntArray,
    t: Int,
    k: Int,
    v: Int,
) -> bool:
    """Remove value ``v`` from set ``k``, recording ``k`` at ``trail[t]``;
    True if it was a member (nothing changes otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> dense = np.array([[0, 1, 2]], np.int32); sparse = dense.astype(np.uint32)
    >>> sizes = np.array([3]); trail = np.zeros(3, np.int32)
    >>> bool(row_remove(sparse, dense, sizes, trail, 0, 0, 0)), dense[0].tolist()
    (True, [2, 1, 0])
    >>> bool(row_remove(sparse, dense, sizes, trail, 1, 0, 0)), int(sizes[0])
    (False, 2)
    """
    if np.uint64(np.int64(k)) >= np.uint64(sizes.shape[0]):
        return False
    row_sparse = sparse[k]
    row_dense = dense[k]
    n = sizes[k]
    p = find(row_sparse, row_dense, n, v)
    if p < 0:
        return False
    sizes[k] = swap_remove(row_sparse, row_dense, n, p)
    trail[np.uint64(t)] = k
    return True


@typed_njit(**NO_NRT)
def row_size(sizes: IntArray, k: Int) -> np.int64:
    """How many values set ``k`` holds (0 for a number that is no set).

    Examples
    --------
    >>> import numpy as np
    >>> int(row_size(np.array([3, 1]), 1)), int(row_size(np.array([3, 1]), 7))
    (1, 0)
    """
    if np.uint64(np.int64(k)) >= np.uint64(sizes.shape[0]):
        return np.int64(0)
    return np.int64(sizes[k])


@register_jitable(inline="always")
def undo(sizes: IntArray, trail: IntArray, start: Int, stop: Int) -> None:
    """Restore the removals ``trail[start:stop]``, newest first.

    Inlined where numba compiles it, as :func:`roll_back` is: a call of
    its own, which LLVM inlines or not by the target CPU's cost model,
    would leave its error status unknown to a twin's rollback, and with it
    a reference to the state taken and dropped around every rollback of a
    search.

    Examples
    --------
    >>> import numpy as np
    >>> sizes = np.array([1, 2]); undo(sizes, np.array([0, 1, 0]), 1, 3)
    >>> sizes.tolist()
    [2, 3]
    """
    for t in range(stop - 1, start - 1, -1):
        sizes[trail[np.uint64(t)]] += 1


@register_jitable(inline="always")
def roll_back(
    sizes: IntArray,
    trail: IntArray,
    trail_len: Int,
    marks: NDArray[np.int64],
    depth: Int,
    epoch: Int,
    serial: Int,
    stamp: Int,
) -> tuple[Int, Int, bool]:
    """Undo the removals since checkpoint ``(serial, stamp)`` of the marks
    stack (see :mod:`.marks`), if it is live.

    Returns ``(trail_len, depth, live)``: the new trail length and depth,
    or the old ones (nothing undone) for a checkpoint that is no longer
    live, so the caller stores them without a branch.

    Inlined where numba compiles it (a twin's ``rollback``), for the
    reason :func:`undo` gives; the examples run it as plain Python.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels.marks import empty_marks, put_mark
    >>> marks = empty_marks(); depth = put_mark(marks, 0, 1, 0, 0)
    >>> sizes = np.array([1, 1]); trail = np.array([0, 1, 0])
    >>> count, serial, live = roll_back(sizes, trail, 3, marks, depth, 0, 0, 0)
    >>> int(count), int(serial), live, sizes.tolist()
    (1, 1, True, [2, 2])
    >>> roll_back(sizes, trail, 1, marks, depth, 0, 0, 9)  # wrong stamp
    (1, 1, False)
    """
    count = marked_count(marks, depth, epoch, serial, stamp)
    if count < 0:
        return trail_len, depth, False
    undo(sizes, trail, count, trail_len)
    return count, serial + 1, True


@typed_njit(**NO_NRT)
def fill_rows(sparse: FlatIndex, dense: IntArray, sizes: IntArray) -> None:
    """Every set back to the whole universe, in order.

    Examples
    --------
    >>> import numpy as np
    >>> dense = np.empty((2, 3), np.int32); sparse = np.empty((2, 3), np.uint32)
    >>> sizes = np.zeros(2, np.int64); fill_rows(sparse, dense, sizes)
    >>> dense.tolist(), sizes.tolist()
    ([[0, 1, 2], [0, 1, 2]], [3, 3])
    """
    universe = dense.shape[1]
    for k in range(sizes.shape[0]):
        for v in range(universe):
            dense[k, v] = v
            sparse[k, v] = v
        sizes[k] = universe

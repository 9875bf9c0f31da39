"""Row kernels for stores: columns whose row ``p`` belongs to ``dense[p]``.

Columns reach these kernels as 2-D arrays of unsigned words (see
``sparseset.stores.component_store``), so one compiled loop serves every column dtype,
structured dtypes included.
"""

from typing import Any, TypeAlias

import numpy as np
from numba import literal_unroll, njit
from numpy.typing import NDArray

from .array_types import Int, IntArray, typed_njit
from .element import find, swap_members
from .index.kinds import Index
from .options import NO_NRT
from .prefetch import prefetch

#: A column as these kernels see it: 2-D, row ``p`` belonging to ``dense[p]``
#: (stores pass their columns as unsigned words).
Column: TypeAlias = NDArray[Any]


@njit(cache=True)
def scatter_rows(column: Column, positions: IntArray, values: Column) -> None:
    """``column[positions[k]] = values[k]`` in batch order: the last wins.

    A repeated position keeps the value of its last occurrence, as
    ``dict.update`` does; numpy's fancy assignment does not promise that.

    Examples
    --------
    >>> import numpy as np
    >>> column = np.zeros((3, 2), np.uint64)
    >>> values = np.array([[1, 1], [2, 2], [3, 3]], np.uint64)
    >>> scatter_rows(column, np.array([2, 0, 2]), values)
    >>> column[:, 0].tolist()
    [2, 0, 3]
    """
    for k in range(positions.shape[0]):
        row = positions[k]
        for j in range(column.shape[1]):
            column[row, j] = values[k, j]


@njit(cache=True)
def accumulate_rows(column: Column, positions: IntArray, values: Column) -> None:
    """``column[positions[k]] += values[k]`` for every ``k``: a repeated
    position accumulates each occurrence (``np.add.at``'s rule), in the
    column's own dtype; ``values`` of one row adds that row each time. The
    caller has checked that no sum overflows.

    Unlike the other row kernels, these columns are typed numbers (2-D:
    rows by their elements), not words: an addition needs the dtype.

    Examples
    --------
    >>> import numpy as np
    >>> column = np.zeros((3, 1), np.int32)
    >>> accumulate_rows(column, np.array([2, 0, 2]), np.ones((1, 1), np.int32))
    >>> column[:, 0].tolist()
    [1, 0, 2]
    """
    step = 1 if values.shape[0] > 1 else 0
    for k in range(positions.shape[0]):
        row = positions[k]
        for j in range(column.shape[1]):
            column[row, j] += values[k * step, j]


@typed_njit(**NO_NRT)
def take(values: NDArray[Any], at: IntArray, out: NDArray[Any]) -> None:
    """``out[k] = values[at[k]]``, for a 1-D gather by uint32 positions.

    numpy's fancy indexing first converts a uint32 index array to intp: a
    copy of the positions before the gather, which this loop skips.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(2, np.int64)
    >>> take(np.array([10, 20, 30]), np.array([2, 0], np.uint32), out)
    >>> out.tolist()
    [30, 10]
    """
    for k in range(at.shape[0]):
        out[k] = values[at[k]]


@typed_njit(**NO_NRT)
def stamp_rows(
    stamps: NDArray[Any], which: Int, positions: IntArray, tick: Int, ahead: Int
) -> None:
    """``stamps[positions[k], which] = tick`` for every k, prefetching the
    row ``ahead`` on so that the misses of scattered rows overlap.

    Examples
    --------
    >>> import numpy as np
    >>> stamps = np.zeros((3, 2), np.uint32)
    >>> stamp_rows(stamps, 1, np.array([2, 0]), 7, 8); stamps[:, 1].tolist()
    [7, 0, 7]
    """
    last = positions.shape[0] - 1
    for k in range(positions.shape[0]):
        coming = np.uint64(positions[min(k + ahead, last)])
        prefetch(stamps, coming * np.uint64(stamps.shape[1]))
        stamps[np.uint64(positions[k]), which] = tick


@typed_njit(**NO_NRT)
def rows_stamped_after(
    stamps: NDArray[Any], which: Int, since: Int, start: Int, stop: Int, out: IntArray
) -> int:
    """Write to ``out`` the rows ``p`` whose ``stamps[p, which]`` is past
    ``since``, or that lie in ``[start, stop)``, ascending; how many.

    One pass over a tracked store's stamps (a uint32 column of two per
    row, see :mod:`sparseset.world.tracking`): numpy would build a mask of
    every row, then scan it again.

    Examples
    --------
    >>> import numpy as np
    >>> stamps = np.array([[1, 5], [1, 2], [1, 1], [1, 7]], np.uint32)
    >>> out = np.empty(4, np.int64)
    >>> count = rows_stamped_after(stamps, 1, 2, 2, 3, out); out[:count].tolist()
    [0, 2, 3]
    """
    count = 0
    for p in range(stamps.shape[0]):
        if stamps[p, which] > since or (start <= p and p < stop):
            out[count] = p
            count += 1
    return count


@typed_njit(**NO_NRT)
def pack_front(
    sparse: Index,
    dense: IntArray,
    n: Int,
    start: int,
    ids: IntArray,
    rows: tuple[Column, ...],
) -> int:
    """Move each member of ``ids`` to position ``start``, ``start + 1``, ...

    Members already below ``start`` (placed earlier, or repeated in ``ids``)
    and non-members stay where they are; every other member is swapped
    into the next slot, its rows with it. Returns the new ``start``. With
    ``start = 0`` this orders a store like ``ids`` (``sort_as``); an owning
    group uses it to admit entities into its packed front.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels import NO_POSITIONS, UPSERT_TUNING, upsert
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([1, 2, 3, 4])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> hp = np.array([[10], [20], [30], [40]], np.int64)
    >>> pack_front(sparse, dense, n, 0, np.array([4, 9, 2, 4]), (hp,))
    2
    >>> dense[:n].tolist(), hp[:n, 0].tolist()
    ([4, 2, 3, 1], [40, 20, 30, 10])
    """
    for k in range(ids.shape[0]):
        p = find(sparse, dense, n, ids[k])
        if p >= start:
            swap_members(sparse, dense, p, start)
            # Inline for the same reason as in discard_rows.
            for column in literal_unroll(rows):
                for j in range(column.shape[1]):
                    word = column[p, j]
                    column[p, j] = column[start, j]
                    column[start, j] = word
            start += 1
    return start


@typed_njit(**NO_NRT)
def pack_back(
    sparse: Index,
    dense: IntArray,
    n: Int,
    end: int,
    ids: IntArray,
    rows: tuple[Column, ...],
) -> int:
    """Move each member of ``ids`` found below ``end`` to position ``end - 1``.

    The inverse of :func:`pack_front`: ``end`` shrinks by one per member
    moved out, and members at or past ``end`` are left alone. An owning
    group uses it to expel entities from its packed front before they
    lose a component. Returns the new ``end``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels import NO_POSITIONS, UPSERT_TUNING, upsert
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([1, 2, 3, 4])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> hp = np.array([[10], [20], [30], [40]], np.int64)
    >>> pack_back(sparse, dense, n, 3, np.array([1, 4, 1]), (hp,))
    2
    >>> dense[:n].tolist(), hp[:n, 0].tolist()
    ([3, 2, 1, 4], [30, 20, 10, 40])
    """
    for k in range(ids.shape[0]):
        p = find(sparse, dense, n, ids[k])
        if p >= 0 and p < end:
            end -= 1
            swap_members(sparse, dense, p, end)
            for column in literal_unroll(rows):
                for j in range(column.shape[1]):
                    word = column[p, j]
                    column[p, j] = column[end, j]
                    column[end, j] = word
    return end

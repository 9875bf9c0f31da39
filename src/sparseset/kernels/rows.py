"""Row kernels for stores: columns whose row ``p`` belongs to ``dense[p]``.

Columns reach these kernels as 2-D arrays of unsigned words (see
``sparseset.stores.component_store``), so one compiled loop serves every column dtype,
structured dtypes included.
"""

from typing import Any

import numpy as np
from numba import njit
from numba.extending import register_jitable
from numpy.typing import NDArray

from .. import config
from .array_types import Int, IntArray, typed_njit
from .columns import (
    Column,
    Sum,
    add_sum_row,
    add_sum_times,
    prefetch_sum_rows,
    put_sum_times,
    swap_rows,
)
from .element import claim, confirm, find, swap_members
from .index.kinds import (
    Index,
    held,
    keyed,
    locate,
    lookup,
    prefetch_slot,
    settle,
    slot_count,
    store,
    tally,
    tally_from,
    vacant,
)
from .options import NO_NRT, NOWHERE
from .prefetch import prefetch


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


#: The tuning argument callers pass to :func:`upsert_accumulate`
#: (:data:`~sparseset.config.ADD_PREFETCH_AHEAD`).
ACCUMULATE_TUNING = (config.ADD_PREFETCH_AHEAD,)


def candidates_for(ahead: int) -> NDArray[np.uint64]:
    """The scratch ring :func:`upsert_accumulate` keeps its looked-up
    candidates in: a power of two longer than ``ahead // 2``.

    Examples
    --------
    >>> candidates_for(32).shape, candidates_for(0).shape
    ((32,), (1,))
    """
    length = 1
    while length <= ahead // 2:
        length *= 2
    return np.empty(length, np.uint64)


def upsert_accumulate(
    sparse: Index,
    dense: IntArray,
    n: Int,
    ids: IntArray,
    sums: tuple[Sum, ...],
    positions: IntArray,
    start: int,
    exact: bool,
    tallies: bool,
    candidates: NDArray[np.uint64],
    ahead: int,
) -> tuple[Int, Int]:
    """A counter's batch in one pass: for each ``k`` in ``[start, len(ids))``
    in order, append ``ids[k]`` if it is no member (its row zeroed in every
    column of ``sums``), then add its values to its row: ``column[p] +=
    values[k]`` (``values[0]`` where ``values`` has one row), a repeated id
    once per occurrence (``np.add.at``'s rule), in the column's dtype:
    unlike the other row kernels' words, these columns are typed numbers
    (2-D: rows by their elements), since an addition needs the dtype.

    The caller has validated the ids (so the index refuses one only for
    lack of room) and checked that no sum overflows; every column has at
    least ``len(dense)`` rows. Unless ``positions`` is empty,
    ``positions[k]`` receives the row of ``ids[k]``. Returns ``(new_n,
    stop)``: ``stop`` is -1 when the batch is done, else the position of
    the first id not taken for lack of room (in ``dense``, or in the
    index); everything before it is in and added, so the caller grows and
    calls again from ``stop`` with ``new_n``.

    One pass instead of an upsert recording positions and an accumulating
    pass over them, and software-pipelined, so that the cache misses of
    many ids are in flight at once: each step prefetches the index slot of
    the id ``ahead`` places on, looks up the id ``ahead // 2`` on (its slot
    now in cache) and prefetches that candidate's ``dense`` entry and
    rows; the id itself is then proven a member by ``dense`` at its
    candidate, or claimed (new, or appended since its lookup). With
    ``exact``, the caller promises that every slot the batch's ids reach
    holds its id's position or says it holds none, and has changed since
    only by this kernel's claims: a :func:`~.kinds.keyed` index rebuilt
    from ``dense``, or a flat one filled with NOWHERE before the members'
    positions went in (never a paged one). A slot's answer is then
    trusted as it is, and ``dense`` is neither prefetched nor read per id:
    one cache miss fewer per id in a large counter. For a keyed index the
    ring then keeps the slots looked up, so that a new id claims its slot
    with no second probe (unless another id took it since:
    :func:`~.kinds.vacant`).

    With ``tallies`` (and no ``positions`` to record), a keyed index
    counts each id's occurrences in the slot it looks the id up in: a new
    id's from its first (:func:`~.kinds.tally`), a member's from its
    first in the pass, once ``dense`` proves it a member unless ``exact``
    (:func:`~.kinds.tally_from`). The pass ends by adding to each counted
    row once, ``values[0]`` times its count (:func:`~.kinds.settle`, over
    every slot; a new row is written): one cache line per occurrence
    instead of a slot and a row, for batches whose ids repeat. The caller
    promises that every ``values`` has one row, every column holds
    integers (where that product is the sum exactly) and the batch has
    fewer than 2**32 ids.

    ``candidates`` is scratch for the lookups in flight
    (:func:`candidates_for`), allocated by the caller: the kernel runs
    without NRT.

    Examples
    --------
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n_col = np.empty((8, 1), np.int64); w_col = np.empty((8, 2), np.float64)
    >>> ids = np.array([5, 2, 5, 5])
    >>> sums = ((n_col, np.ones((1, 1), np.int64)), (w_col, np.full((4, 2), 0.5)))
    >>> upsert_accumulate(
    ...     sparse, dense, 0, ids, sums, np.empty(0, np.int64), 0, False, False,
    ...     candidates_for(4), 4,
    ... )
    (2, -1)
    >>> dense[:2].tolist(), n_col[:2, 0].tolist(), w_col[:2, 1].tolist()
    ([5, 2], [3, 1], [1.5, 0.5])
    """
    # Three compiled loops, chosen here, not in compiled code: a first call
    # compiles only the loop it runs.
    if start >= ids.shape[0]:
        return n, -1
    # No promise makes a paged index exact: its unwritten leaves are garbage.
    exact = exact and (keyed(sparse) or isinstance(sparse, np.ndarray))
    if tallies and keyed(sparse) and positions.shape[0] == 0:
        return _count_in_slots(sparse, dense, n, ids, sums, start, exact, ahead)
    if candidates.shape[0] <= ahead // 2:
        # The ring would hand an id another's lookup.
        raise ValueError(
            f"candidates holds {candidates.shape[0]} lookups, ahead = {ahead} "
            "needs more: make it with candidates_for(ahead)"
        )
    if exact and keyed(sparse):
        return _accumulate_trusting(
            sparse, dense, n, ids, sums, positions, start, candidates, ahead
        )
    return _accumulate_confirming(
        sparse, dense, n, ids, sums, positions, start, exact, candidates, ahead
    )


@register_jitable
def _fill_pipeline(
    sparse: Index, ids: IntArray, first: Any, last: Any, ahead: int
) -> None:
    """The pipeline's first stages: prefetch the slots of the ids its first
    ``ahead`` steps take."""
    for k in range(first, min(first + np.uint64(ahead), last + np.uint64(1))):
        prefetch_slot(sparse, ids[k])


@typed_njit(**NO_NRT)
def _count_in_slots(
    sparse: Index,
    dense: IntArray,
    n: Int,
    ids: IntArray,
    sums: tuple[Sum, ...],
    start: int,
    exact: bool,
    ahead: int,
) -> tuple[Int, Int]:
    """:func:`upsert_accumulate` with ``tallies``, on a keyed index: every
    id counts in its slot until the pass settles."""
    m = n
    rows = np.uint64(dense.shape[0])
    last = np.uint64(ids.shape[0] - 1)
    first = np.uint64(start)
    _fill_pipeline(sparse, ids, first, last, ahead)
    stop = np.int64(-1)
    for k in range(first, last + np.uint64(1)):
        if ahead:
            prefetch_slot(sparse, ids[min(k + np.uint64(ahead), last)])
        x = ids[k]
        slot = locate(sparse, x)
        free = np.uint64(m) if np.uint64(m) < rows else np.uint64(NOWHERE)
        counted = tally(sparse, slot, x, free)
        if counted == 2:
            dense[np.uint64(m)] = x
            m += 1
        elif counted == 0:
            # A plain position: a member's, which counts in its slot
            # from here on, or (unless exact) one left stale, whose id
            # is new. dense tells them apart once per id, not per step.
            row = held(sparse, slot, x)
            if not exact and confirm(dense, m, row, x) < 0:
                if free == np.uint64(NOWHERE):
                    stop = np.int64(k)
                    break
                row = np.uint32(m)
                dense[np.uint64(m)] = x
                m += 1
            tally_from(sparse, slot, row)
        elif counted < 0:
            stop = np.int64(k)
            break
    for each in range(slot_count(sparse)):
        settled, times = settle(sparse, each)
        # Rows from before the pass add; its own are written, unread.
        if times and settled >= np.uint64(n):
            put_sum_times(sums, settled, times)
        elif times:
            add_sum_times(sums, settled, times)
    return m, stop


@typed_njit(**NO_NRT)
def _accumulate_trusting(
    sparse: Index,
    dense: IntArray,
    n: Int,
    ids: IntArray,
    sums: tuple[Sum, ...],
    positions: IntArray,
    start: int,
    candidates: NDArray[np.uint64],
    ahead: int,
) -> tuple[Int, Int]:
    """:func:`upsert_accumulate` on a keyed index it may trust (``exact``):
    a slot's answer is the id's position, with no look at ``dense``."""
    m = n
    rows = np.uint64(dense.shape[0])
    last = np.uint64(ids.shape[0] - 1)
    first = np.uint64(start)
    _fill_pipeline(sparse, ids, first, last, ahead)
    record = positions.shape[0] != 0
    mask = np.uint64(candidates.shape[0] - 1)
    near = np.uint64(ahead // 2)
    # The ring holds the slots looked up, not candidates: an id found
    # absent then claims its slot as it stands, with no second probe,
    # unless another id took that slot since.
    for k in range(first, min(first + near, last + np.uint64(1))):
        candidates[k & mask] = locate(sparse, ids[k])
    for k in range(first, last + np.uint64(1)):
        prefetch_slot(sparse, ids[min(k + np.uint64(ahead), last)])
        j = min(k + near, last)
        ahead_id = ids[j]
        slot = locate(sparse, ahead_id)
        candidates[j & mask] = slot
        found = np.uint64(held(sparse, slot, ahead_id))
        prefetch_sum_rows(sums, found if found < np.uint64(m) else np.uint64(0))
        x = ids[k]
        slot = candidates[k & mask]
        p = np.int64(held(sparse, slot, x))
        fresh = False
        if p == np.int64(NOWHERE):
            if np.uint64(m) == rows:
                return m, np.int64(k)
            if not vacant(sparse, slot):
                slot = locate(sparse, x)
                p = np.int64(held(sparse, slot, x))
            if p == np.int64(NOWHERE):
                if not store(sparse, slot, x, m):
                    return m, np.int64(k)
                dense[np.uint64(m)] = x
                p = np.int64(m)
                m += 1
                fresh = True
        if record:
            positions[k] = p
        add_sum_row(sums, np.uint64(p), k, fresh)
    return m, -1


@typed_njit(**NO_NRT)
def _accumulate_confirming(
    sparse: Index,
    dense: IntArray,
    n: Int,
    ids: IntArray,
    sums: tuple[Sum, ...],
    positions: IntArray,
    start: int,
    exact: bool,
    candidates: NDArray[np.uint64],
    ahead: int,
) -> tuple[Int, Int]:
    """:func:`upsert_accumulate` on any index: ``dense`` proves each
    candidate the index answers, unless ``exact`` (an unkeyed index whose
    every slot holds its id's position or NOWHERE): then a candidate below
    ``m`` is the id's, read from no ``dense`` entry."""
    m = n
    rows = np.uint64(dense.shape[0])
    last = np.uint64(ids.shape[0] - 1)
    first = np.uint64(start)
    _fill_pipeline(sparse, ids, first, last, ahead)
    record = positions.shape[0] != 0
    mask = np.uint64(candidates.shape[0] - 1)
    near = np.uint64(ahead // 2)
    for k in range(first, min(first + near, last + np.uint64(1))):
        candidates[k & mask] = lookup(sparse, ids[k])
    for k in range(first, last + np.uint64(1)):
        # Unsigned throughout: numba would otherwise guard every access
        # against negative indexes.
        prefetch_slot(sparse, ids[min(k + np.uint64(ahead), last)])
        j = k + near
        found = np.uint64(lookup(sparse, ids[min(j, last)]))
        candidates[j & mask] = found
        c = found if found < np.uint64(m) else np.uint64(0)
        if not exact:
            prefetch(dense, c)
        prefetch_sum_rows(sums, c)
        x = ids[k]
        candidate = candidates[k & mask]
        if exact:
            # Looked up near steps ago: a slot changes in the pass only by
            # its own id's claim, from NOWHERE, which the claim below finds.
            p = np.int64(candidate) if candidate < np.uint64(m) else np.int64(-1)
        else:
            p = np.int64(confirm(dense, m, candidate, x))
        fresh = False
        if p < 0:
            if np.uint64(m) == rows:
                return m, np.int64(k)
            p = np.int64(claim(sparse, dense, m, x))
            if p < 0:
                return m, np.int64(k)
            if p == m:
                m += 1
                fresh = True
        if record:
            positions[k] = p
        add_sum_row(sums, np.uint64(p), k, fresh)
    return m, -1


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


#: Rows a stamp scan tests at once: one vector compare and count, the
#: rows written out only where one is past (most blocks have none).
_SCAN_BLOCK = 8
#: How many rows ahead the scan asks for its stamps: the hardware's own
#: prefetchers stop at each 4 KiB page's end, a stall per page of a scan.
_SCAN_AHEAD = 2048


@typed_njit(**NO_NRT, nogil=True)
def rows_stamped_after(
    stamps: NDArray[Any], which: Int, since: Int, start: Int, stop: Int, out: IntArray
) -> int:
    """Write to ``out`` the rows ``p`` whose ``stamps[p, which]`` is past
    ``since``, or that lie in ``[start, stop)``, ascending; how many.
    ``out`` has a slot for every row.

    One pass over a tracked store's stamps (a column of two per row, see
    :mod:`sparseset.world.tracking`), a block of rows per compare: numpy
    would build a mask of every row, then scan it again.

    Examples
    --------
    >>> import numpy as np
    >>> stamps = np.array([[1, 5], [1, 2], [1, 1], [1, 7]], np.uint16)
    >>> out = np.empty(4, np.int64)
    >>> count = rows_stamped_after(stamps, 1, 2, 2, 3, out); out[:count].tolist()
    [0, 2, 3]
    """
    m = stamps.shape[0]
    count = 0
    if start < stop:
        # Rows noted written as a range (a group's touch): most are out.
        for p in range(m):
            if stamps[p, which] > since or (start <= p and p < stop):
                out[count] = p
                count += 1
        return count
    # One loop from row 0 in whole blocks: the same loop between bounds
    # passed in (a helper for each side of a range) compiled to slower code.
    full = m - m % _SCAN_BLOCK
    width = stamps.shape[1]
    for b in range(0, full, _SCAN_BLOCK):
        prefetch(stamps, (b + _SCAN_AHEAD) * width)
        past = 0
        for j in range(_SCAN_BLOCK):
            past += stamps[b + j, which] > since
        if past:
            # Every row is written and the count moves only past a hit: no
            # branch per row.
            for p in range(b, b + _SCAN_BLOCK):
                out[count] = p
                count += stamps[p, which] > since
    for p in range(full, m):
        out[count] = p
        count += stamps[p, which] > since
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
            swap_rows(rows, np.uint64(p), np.uint64(start))
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
            swap_rows(rows, np.uint64(p), np.uint64(end))
    return end

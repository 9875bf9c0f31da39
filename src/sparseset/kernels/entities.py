"""Entity handle kernels: create, destroy and resolve generational handles.

A handle is an int64 ``index | generation << 32``. The world keeps, per
index ever used, its current ``generations[index]`` (uint32) and whether it
is ``alive``, plus a stack of ``free`` indexes to recycle. A handle resolves
only while its generation matches and the index is alive, so a destroyed
handle stays dead after its index is reused.
"""

from typing import TypeAlias

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .array_types import Int, IntArray, typed_njit
from .element import find
from .index.kinds import Index, looks_ahead, lookup, prefetch_slot
from .options import NO_NRT
from .prefetch import prefetch

#: Bits of a handle that hold the index; the generation sits above them.
INDEX_BITS = 32
INDEX_MASK = (1 << INDEX_BITS) - 1

#: Per index: its current generation.
Generations: TypeAlias = NDArray[np.uint32]
#: Per index: whether it is alive.
Alive: TypeAlias = NDArray[np.bool_]
#: Handles (``index | generation << 32``), or indexes where a handle is dead.
Handles: TypeAlias = NDArray[np.int64]


@njit(cache=True)
def create_entities(
    generations: Generations,
    alive: Alive,
    free: NDArray[np.int32],
    n_free: int,
    count: int,
    out: Handles,
) -> tuple[int, int]:
    """Fill ``out`` with new handles, recycling free indexes first (LIFO).

    The caller guarantees room: ``len(generations) >= count + len(out)``.
    Returns ``(n_free, count)`` after the creation.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.zeros(4, np.uint32); alive = np.zeros(4, np.bool_)
    >>> free = np.array([1, 0, 0, 0], np.int32); generations[1] = 3
    >>> out = np.empty(2, np.int64)
    >>> create_entities(generations, alive, free, 1, 2, out), out.tolist()
    ((0, 3), [12884901889, 2])
    """
    for k in range(out.shape[0]):
        if n_free > 0:
            n_free -= 1
            i = np.int64(free[np.uint32(n_free)])
        else:
            i = np.int64(count)
            count += 1
            generations[np.uint64(i)] = 0
        alive[np.uint64(i)] = True
        out[k] = (np.int64(generations[np.uint64(i)]) << INDEX_BITS) | i
    return n_free, count


@njit(cache=True)
def destroy_entities(
    generations: Generations,
    alive: Alive,
    free: NDArray[np.int32],
    n_free: int,
    indexes: IntArray,
    last_generation: Int,
) -> tuple[int, int]:
    """Kill the live indexes among ``indexes``; return ``(n_free, killed)``.

    Each killed index moves to its next generation and onto the free
    stack, except one already at ``last_generation``: it is retired, never
    to be reused, so no handle can come back to life by wrapping around.
    Repeats and dead indexes are skipped.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([0, 7], np.uint32); alive = np.ones(2, np.bool_)
    >>> free = np.empty(2, np.int32)
    >>> destroy_entities(generations, alive, free, 0, np.array([0, 1, 0]), 7)
    (1, 2)
    >>> generations.tolist(), alive.tolist(), free[:1].tolist()
    ([1, 7], [False, False], [0])
    """
    killed = 0
    for k in range(indexes.shape[0]):
        i = np.uint64(indexes[k])
        if alive[i]:
            alive[i] = False
            killed += 1
            if generations[i] < last_generation:
                generations[i] += 1
                free[np.uint32(n_free)] = np.int32(i)
                n_free += 1
    return n_free, killed


@njit(cache=True)
def resolve(
    generations: Generations,
    alive: Alive,
    count: Int,
    handles: IntArray,
    out: Handles,
    dead: Int,
    ahead: Int,
) -> int:
    """``out[k]`` = the index of ``handles[k]`` if it is alive, else ``dead``.

    Returns the position of the first dead handle, or -1 if all are alive.
    A handle is dead if negative, if its index was never used, or if its
    generation is not the index's current one on a live index. Each step
    prefetches the generation and liveness of the handle ``ahead`` on
    (:data:`~sparseset.config.ADD_PREFETCH_AHEAD`), so the misses of a
    batch of scattered handles overlap.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([1, 0], np.uint32); alive = np.ones(2, np.bool_)
    >>> out = np.empty(3, np.int64)
    >>> resolve(generations, alive, 2, np.array([1, 0, 2**32]), out, -1, 8)
    1
    >>> out.tolist()
    [1, -1, 0]
    """
    first = -1
    last = handles.shape[0] - 1
    for k in range(handles.shape[0]):
        coming = np.uint64(np.int64(handles[min(k + ahead, last)]) & INDEX_MASK)
        prefetch(generations, coming)
        prefetch(alive, coming)
        i = live_index(generations, alive, count, handles[k])
        if i >= 0:
            out[k] = i
        else:
            out[k] = dead
            if first < 0:
                first = k
    return first


@njit(cache=True, nogil=True)
def rows_of_handles(
    generations: Generations,
    alive: Alive,
    count: Int,
    sparse: Index,
    dense: IntArray,
    n: Int,
    handles: IntArray,
    out: Handles,
    ahead: Int,
) -> int:
    """``out[k]`` = the row of ``handles[k]`` in a store keyed by entity
    index (``sparse``, ``dense``, ``n``), for handles that must all be
    alive and have a row there.

    Returns -1 when every one does, else the position of the first that
    does not (dead, negative, or without a row), where it stops: its
    caller then takes the path that says why. One pass where resolving
    the handles (:func:`resolve`) and then looking up their indexes would
    each read the batch and wait for their own misses: each step
    prefetches the generation, liveness and index slot of the handle
    ``ahead`` on (:data:`~sparseset.config.ADD_PREFETCH_AHEAD`) and, where
    the index kind looks ahead, the ``dense`` entry of the handle half as
    far on. It only reads, so it releases the GIL.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([0, 1], np.uint32); alive = np.ones(2, np.bool_)
    >>> sparse = np.array([1, 0], np.uint32); dense = np.array([1, 0], np.int32)
    >>> out = np.empty(2, np.int64); handles = np.array([2**32 + 1, 0])
    >>> rows_of_handles(generations, alive, 2, sparse, dense, 2, handles, out, 8)
    -1
    >>> out.tolist()
    [0, 1]
    >>> rows_of_handles(generations, alive, 2, sparse, dense, 1, handles, out, 8)
    1
    """
    last = handles.shape[0] - 1
    half = ahead // 2
    for k in range(handles.shape[0]):
        coming = np.uint64(np.int64(handles[min(k + ahead, last)]) & INDEX_MASK)
        prefetch(generations, coming)
        prefetch(alive, coming)
        prefetch_slot(sparse, coming)
        if looks_ahead(sparse):
            near = np.int64(handles[min(k + half, last)]) & INDEX_MASK
            c = lookup(sparse, near)
            prefetch(dense, c if c < np.uint64(n) else np.uint64(0))
        i = live_index(generations, alive, count, handles[k])
        if i < 0:
            return k
        p = find(sparse, dense, n, i)
        if p < 0:
            return k
        out[k] = p
    return -1


@typed_njit(**NO_NRT)
def live_index(
    generations: Generations, alive: Alive, count: Int, handle: Int
) -> np.int64:
    """The index of ``handle`` if it is alive, else -1 (see :func:`resolve`).

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([1, 0], np.uint32); alive = np.ones(2, np.bool_)
    >>> live_index(generations, alive, 2, 2**32), live_index(generations, alive, 2, 0)
    (0, -1)
    """
    h = np.int64(handle)
    i = h & INDEX_MASK
    if h >= 0 and i < count:
        iu = np.uint64(i)
        if alive[iu] and np.int64(generations[iu]) == (h >> INDEX_BITS):
            return i
    return np.int64(-1)


@njit(cache=True, nogil=True)
def handles_of(generations: Generations, indexes: IntArray, out: Handles) -> None:
    """``out[k]`` = the current handle of index ``indexes[k]``.

    It only reads the table, so it releases the GIL: a big batch is made in
    spans on several threads (:mod:`sparseset.sets.pool`).

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(2, np.int64)
    >>> handles_of(np.array([0, 2], np.uint32), np.array([1, 0]), out)
    >>> out.tolist()
    [8589934593, 0]
    """
    for k in range(indexes.shape[0]):
        i = np.uint64(indexes[k])
        out[k] = (np.int64(generations[i]) << INDEX_BITS) | np.int64(i)


@njit(cache=True, nogil=True)
def handles_at(
    generations: Generations, indexes: IntArray, at: IntArray, out: Handles, ahead: Int
) -> None:
    """``out[k]`` = the current handle of index ``indexes[at[k]]``.

    A view's handles, its matches' indexes picked from a store's members
    and their generations read in one pass, with no array of the picked
    indexes between them. Each step prefetches the generation of the
    match ``ahead`` on (:data:`~sparseset.config.ADD_PREFETCH_AHEAD`): the
    generations of scattered indexes are misses that then overlap. It
    releases the GIL, as :func:`handles_of` does.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(2, np.int64)
    >>> indexes = np.array([7, 1, 0], np.int32); at = np.array([2, 1], np.uint32)
    >>> handles_at(np.array([0, 2], np.uint32), indexes, at, out, 8)
    >>> out.tolist()
    [0, 8589934593]
    """
    last = at.shape[0] - 1
    for k in range(at.shape[0]):
        coming = indexes[np.uint64(at[min(k + ahead, last)])]
        prefetch(generations, np.uint64(coming))
        i = np.uint64(indexes[np.uint64(at[k])])
        out[k] = (np.int64(generations[i]) << INDEX_BITS) | np.int64(i)

"""Entity handle kernels: create, destroy and resolve generational handles.

A handle is an int64 ``index | generation << 32``, the generation below
``2**31``. The world keeps, per index, one uint32 word ``generations[index]``:
the index's current generation, with bit 31 (:data:`LIVE`) set while the
index holds a live entity, plus a stack of ``free`` indexes to recycle. A
handle resolves only while its word is its generation with :data:`LIVE`
set, so a destroyed handle stays dead after its index is reused, and one
load tells whether a handle is alive. An index never used has the word 0
(the arrays are zero-filled): no generation, not alive.
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

#: The bit of an index's word set while the index holds a live entity.
LIVE = 1 << 31
#: The bits of an index's word that hold its generation.
GENERATION_MASK = LIVE - 1

#: Per index: its current generation, with :data:`LIVE` while it is alive.
Generations: TypeAlias = NDArray[np.uint32]
#: Handles (``index | generation << 32``), or indexes where a handle is dead.
Handles: TypeAlias = NDArray[np.int64]


@njit(cache=True)
def create_entities(
    generations: Generations,
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
    >>> generations = np.zeros(4, np.uint32)
    >>> free = np.array([1, 0, 0, 0], np.int32); generations[1] = 3
    >>> out = np.empty(2, np.int64)
    >>> create_entities(generations, free, 1, 2, out), out.tolist()
    ((0, 3), [12884901889, 2])
    >>> (generations[:3] & GENERATION_MASK).tolist(), (generations[:3] >= LIVE).tolist()
    ([0, 3, 0], [False, True, True])
    """
    for k in range(out.shape[0]):
        if n_free > 0:
            n_free -= 1
            i = np.int64(free[np.uint32(n_free)])
        else:
            i = np.int64(count)
            count += 1
            generations[np.uint64(i)] = 0
        generation = generations[np.uint64(i)]
        generations[np.uint64(i)] = generation | np.uint32(LIVE)
        out[k] = (np.int64(generation) << INDEX_BITS) | i
    return n_free, count


@njit(cache=True)
def destroy_entities(
    generations: Generations,
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
    >>> generations = np.array([0, 7], np.uint32) | np.uint32(LIVE)
    >>> free = np.empty(2, np.int32)
    >>> destroy_entities(generations, free, 0, np.array([0, 1, 0]), 7)
    (1, 2)
    >>> generations.tolist(), free[:1].tolist()
    ([1, 7], [0])
    """
    killed = 0
    for k in range(indexes.shape[0]):
        i = np.uint64(indexes[k])
        word = generations[i]
        if word & np.uint32(LIVE):
            generation = word & np.uint32(GENERATION_MASK)
            killed += 1
            if generation < last_generation:
                generations[i] = generation + np.uint32(1)
                free[np.uint32(n_free)] = np.int32(i)
                n_free += 1
            else:
                generations[i] = generation
    return n_free, killed


@njit(cache=True, nogil=True)
def resolve(
    generations: Generations,
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
    prefetches the word of the handle ``ahead`` on
    (:data:`~sparseset.config.ADD_PREFETCH_AHEAD`), so the misses of a
    batch of scattered handles overlap.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([1, 0], np.uint32) | np.uint32(LIVE)
    >>> out = np.empty(3, np.int64)
    >>> resolve(generations, 2, np.array([1, 0, 2**32]), out, -1, 8)
    1
    >>> out.tolist()
    [1, -1, 0]
    """
    first = -1
    last = handles.shape[0] - 1
    for k in range(handles.shape[0]):
        coming = np.uint64(np.int64(handles[min(k + ahead, last)]) & INDEX_MASK)
        prefetch(generations, coming)
        i = live_index(generations, count, handles[k])
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
    prefetches the word and the index slot of the handle
    ``ahead`` on (:data:`~sparseset.config.ADD_PREFETCH_AHEAD`) and, where
    the index kind looks ahead, the ``dense`` entry of the handle half as
    far on. It only reads, so it releases the GIL.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([0, 1], np.uint32) | np.uint32(LIVE)
    >>> sparse = np.array([1, 0], np.uint32); dense = np.array([1, 0], np.int32)
    >>> out = np.empty(2, np.int64); handles = np.array([2**32 + 1, 0])
    >>> rows_of_handles(generations, 2, sparse, dense, 2, handles, out, 8)
    -1
    >>> out.tolist()
    [0, 1]
    >>> rows_of_handles(generations, 2, sparse, dense, 1, handles, out, 8)
    1
    """
    for k in range(handles.shape[0]):
        prefetch_handle_row(generations, sparse, dense, n, handles, k, ahead)
        i = live_index(generations, count, handles[k])
        if i < 0:
            return k
        p = find(sparse, dense, n, i)
        if p < 0:
            return k
        out[k] = p
    return -1


@njit(cache=True, nogil=True)
def index_handles(
    generations: Generations,
    count: Int,
    sparse: Index,
    dense: IntArray,
    n: Int,
    handles: IntArray,
    out: Handles,
    ahead: Int,
) -> None:
    """``out[k]`` = the row of ``handles[k]`` in a store keyed by entity
    index (``sparse``, ``dense``, ``n``), -1 where the handle is dead or
    has no row there: :func:`rows_of_handles` that does not stop, one pass
    where resolving the handles and then looking up their indexes would
    read the batch twice. It only reads, so it releases the GIL.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([0, 1], np.uint32) | np.uint32(LIVE)
    >>> sparse = np.array([1, 0], np.uint32); dense = np.array([1, 0], np.int32)
    >>> out = np.empty(3, np.int64); handles = np.array([2**32 + 1, 0, 1])
    >>> index_handles(generations, 2, sparse, dense, 1, handles, out, 8)
    >>> out.tolist()
    [0, -1, -1]
    """
    for k in range(handles.shape[0]):
        prefetch_handle_row(generations, sparse, dense, n, handles, k, ahead)
        i = live_index(generations, count, handles[k])
        out[k] = -1 if i < 0 else find(sparse, dense, n, i)


@typed_njit(**NO_NRT)
def live_index(generations: Generations, count: Int, handle: Int) -> np.int64:
    """The index of ``handle`` if it is alive, else -1 (see :func:`resolve`):
    its index's word must be its generation with :data:`LIVE` set.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([1, 0], np.uint32) | np.uint32(LIVE)
    >>> live_index(generations, 2, 2**32), live_index(generations, 2, 0)
    (0, -1)
    """
    h = np.int64(handle)
    i = h & INDEX_MASK
    if h >= 0 and i < count:
        word = np.int64(generations[np.uint64(i)])
        if word == (h >> INDEX_BITS) | LIVE:
            return i
    return np.int64(-1)


@typed_njit(**NO_NRT)
def handle_of(generations: Generations, index: Int) -> np.int64:
    """The current handle of live index ``index``: its generation (its word
    without :data:`LIVE`) above the index.

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([0, 2], np.uint32) | np.uint32(LIVE)
    >>> int(handle_of(generations, 1))
    8589934593
    """
    i = np.uint64(index)
    generation = np.int64(generations[i] & np.uint32(GENERATION_MASK))
    return (generation << INDEX_BITS) | np.int64(i)


@njit(cache=True, nogil=True)
def handles_of(generations: Generations, indexes: IntArray, out: Handles) -> None:
    """``out[k]`` = the current handle of index ``indexes[k]``.

    It only reads the table, so it releases the GIL: a big batch is made in
    spans on several threads (:mod:`sparseset.sets.pool`).

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(2, np.int64)
    >>> generations = np.array([0, 2], np.uint32) | np.uint32(LIVE)
    >>> handles_of(generations, np.array([1, 0]), out)
    >>> out.tolist()
    [8589934593, 0]
    """
    for k in range(indexes.shape[0]):
        out[k] = handle_of(generations, indexes[k])


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
    >>> generations = np.array([0, 2], np.uint32) | np.uint32(LIVE)
    >>> handles_at(generations, indexes, at, out, 8)
    >>> out.tolist()
    [0, 8589934593]
    """
    last = at.shape[0] - 1
    for k in range(at.shape[0]):
        coming = indexes[np.uint64(at[min(k + ahead, last)])]
        prefetch(generations, np.uint64(coming))
        out[k] = handle_of(generations, indexes[np.uint64(at[k])])


@typed_njit(**NO_NRT)
def prefetch_handle_row(
    generations: Generations,
    sparse: Index,
    dense: IntArray,
    n: Int,
    handles: IntArray,
    k: Int,
    ahead: Int,
) -> None:
    """Prefetch for a handle-to-row pass at step ``k``: the word and index
    slot of the handle ``ahead`` on and, where the index kind looks ahead,
    the ``dense`` entry of the handle half as far on, so the misses of
    scattered handles overlap (:func:`rows_of_handles`,
    :func:`index_handles`).

    Examples
    --------
    >>> import numpy as np
    >>> generations = np.array([0], np.uint32) | np.uint32(LIVE)
    >>> sparse = np.array([0], np.uint32); dense = np.array([0], np.int32)
    >>> prefetch_handle_row(generations, sparse, dense, 1, np.array([0]), 0, 8)
    """
    last = handles.shape[0] - 1
    coming = np.uint64(np.int64(handles[min(k + ahead, last)]) & INDEX_MASK)
    prefetch(generations, coming)
    prefetch_slot(sparse, coming)
    if looks_ahead(sparse):
        near = np.int64(handles[min(k + ahead // 2, last)]) & INDEX_MASK
        c = lookup(sparse, near)
        prefetch(dense, c if c < np.uint64(n) else np.uint64(0))

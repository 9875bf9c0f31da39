"""Bare numba loops for a world: the floor under ``World``'s overhead.

An entity is an index with a uint32 ``generations`` and a bool ``alive``
array beside it, and a handle ``index | generation << 32`` (int64), as in
the library. A component is a plain store of the ``_store_floor`` layout
with one column: ``sparse`` uint32 of length capacity (indexed by entity
index), ``dense`` int32 with the members packed in ``dense[:n]``, and a
float64 ``(rows, 3)`` column whose row ``k`` belongs to ``dense[k]``.

Each workload of ``world.py`` is one ``@njit`` call here, with no
validation (no liveness check of handles), no growth, no dtype handling and
no Python in between, so ``library / floor`` in the same run is everything
the library adds: its separate calls, its checks, and the arrays it hands
back (a view's handles and rows). Where splitting a loop in two passes
measured faster, the floor splits it too (see each function).

The names avoid asv's benchmark prefixes (``time_``, ``track_``, ``mem_``,
``peakmem_``) because asv imports every module in the package.
"""

import numba
import numpy as np

# The group update is the store floor's loop over two equally long
# contiguous ``(n, 3)`` columns; it exists once, there.
from ._store_floor import integrate

# As in ``_floor``: index arithmetic stays unsigned, counts travel as uint64.
INDEX_BITS = 32
INDEX_MASK = (1 << INDEX_BITS) - 1


@numba.njit(cache=True)
def create(generations, alive, count, n):
    """``n`` new entities at indexes ``count, count + 1, ...``: their handles.

    Marks each alive, sets its generation to 0 (a fresh index) and returns
    a freshly allocated int64 array of the handles, as ``World.create``
    returns. No free list: the world is fresh, nothing to recycle.
    """
    out = np.empty(n, dtype=np.int64)
    i = np.uint64(count)
    for k in range(n):
        generations[i] = 0
        alive[i] = True
        out[k] = (np.int64(generations[i]) << INDEX_BITS) | np.int64(i)
        i += np.uint64(1)
    return out


@numba.njit(cache=True)
def store_discard(sparse, dense, n, handles, column):
    """Swap-and-pop the entities of ``handles`` from a one-column store; new n.

    The last member and its row move into each hole; the removed index
    lands at ``dense[n - 1]``, as in the library.
    """
    m = np.uint64(n)
    for k in range(handles.size):
        x = np.int32(np.uint64(handles[k]) & np.uint64(INDEX_MASK))
        u = np.uint64(x)
        p = np.uint64(sparse[u])
        if p < m and dense[p] == x:
            m -= np.uint64(1)
            last = dense[m]
            dense[p] = last
            sparse[np.uint64(last)] = p
            dense[m] = x
            sparse[u] = m
            for j in range(3):
                column[p, j] = column[m, j]
    return m


@numba.njit(cache=True)
def kill(generations, alive, free, n_free, handles):
    """Mark the entities of ``handles`` dead, bump and free them; new n_free."""
    f = np.uint64(n_free)
    for k in range(handles.size):
        i = np.uint64(handles[k]) & np.uint64(INDEX_MASK)
        alive[i] = False
        generations[i] += np.uint32(1)
        free[f] = np.int32(i)
        f += np.uint64(1)
    return f


@numba.njit(cache=True)
def destroy(
    generations,
    alive,
    free,
    n_free,
    handles,
    pos_sparse,
    pos_dense,
    n_pos,
    pos,
    vel_sparse,
    vel_dense,
    n_vel,
    vel,
):
    """Destroy ``handles``: swap-and-pop from both stores, bump generations.

    Each handle's index leaves the ``pos`` store and the ``vel`` store
    (each moving its last member and row into the hole), is marked dead,
    gets its next generation and is pushed on the ``free`` stack. Returns
    ``(n_free, n_pos, n_vel)``. One pass per store, then one over the
    entities, as the library does: the same work fused into one loop
    measured 1.2x slower here (and 3x as an inlined helper per store).
    """
    m_pos = store_discard(pos_sparse, pos_dense, n_pos, handles, pos)
    m_vel = store_discard(vel_sparse, vel_dense, n_vel, handles, vel)
    f = kill(generations, alive, free, n_free, handles)
    return f, m_pos, m_vel


@numba.njit(cache=True)
def join_update(pos_sparse, pos_dense, n_pos, pos, vel_dense, n_vel, vel, dt):
    """``pos += vel * dt`` for the entities in both stores; how many matched.

    Walks ``vel``'s dense rows in order (the smaller store) and looks each
    entity up in ``pos`` through its ``sparse`` array, recording the pair
    of rows of each match; then updates the matched ``pos`` rows in place.
    Two passes, as in ``_store_floor.store_add``: updating the row inside
    the lookup loop measured 1.3-1.4x slower here, each row's address
    waiting on that entity's cache-missing probe.
    """
    m = np.uint64(n_pos)
    pos_rows = np.empty(n_vel, dtype=np.uint32)
    vel_rows = np.empty(n_vel, dtype=np.uint32)
    matched = np.uint64(0)
    for k in range(n_vel):
        x = vel_dense[k]
        p = np.uint64(pos_sparse[np.uint64(x)])
        if p < m and pos_dense[p] == x:
            pos_rows[matched] = p
            vel_rows[matched] = k
            matched += np.uint64(1)
    for i in range(matched):
        p = np.uint64(pos_rows[i])
        q = np.uint64(vel_rows[i])
        for j in range(3):
            pos[p, j] += vel[q, j] * dt
    return matched


def empty_entities(capacity):
    """A fresh world's entity arrays, ``(generations, alive, free)``.

    Allocated as ``World`` allocates them: zeroed ``generations`` and
    ``alive`` (pages mapped on first touch), an uninitialised ``free``.
    """
    return (
        np.zeros(capacity, dtype=np.uint32),
        np.zeros(capacity, dtype=np.bool_),
        np.empty(capacity, dtype=np.int32),
    )


def store_arrays(capacity, order, values):
    """A one-column store holding entity indexes ``order``, in that order.

    Returns ``(sparse, dense, n, column)``: row ``k`` of ``column`` is
    ``values[order[k]]`` (``values`` is indexed by entity index).
    """
    n = order.shape[0]
    sparse = np.empty(capacity, dtype=np.uint32)
    sparse[order] = np.arange(n, dtype=np.uint32)
    dense = np.empty(capacity, dtype=np.int32)
    dense[:n] = order
    column = np.empty((capacity, 3), dtype=np.float64)
    column[:n] = values[order]
    return sparse, dense, n, column


def warm_up():
    """Compile (or load from cache) every floor loop for the benchmarks' types.

    int64 handles, the arrays of ``empty_entities`` and ``store_arrays``, a
    Python int for counts and a Python float ``dt``, as the timed calls use.
    """
    generations, alive, free = empty_entities(8)
    handles = create(generations, alive, 0, 4)
    values = np.ones((8, 3))
    order = np.arange(4)
    pos_sparse, pos_dense, n_pos, pos = store_arrays(8, order, values)
    vel_sparse, vel_dense, n_vel, vel = store_arrays(8, order[::-1], values)
    join_update(pos_sparse, pos_dense, n_pos, pos, vel_dense, n_vel, vel, 0.5)
    integrate(pos[:n_pos], vel[:n_pos], 0.5)
    destroy(
        generations,
        alive,
        free,
        0,
        handles[:2],
        pos_sparse,
        pos_dense,
        n_pos,
        pos,
        vel_sparse,
        vel_dense,
        n_vel,
        vel,
    )

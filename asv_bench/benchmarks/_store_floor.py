"""Bare numba loops for stores: the floor under ``ComponentStore``'s overhead.

The layout is the library's: ``sparse`` uint32 of length capacity, ``dense``
int32 with the members packed in ``dense[:n]``, and two float64 columns of
shape ``(rows, 3)`` whose row ``k`` belongs to ``dense[k]``. A removal
swaps the last member into the hole and copies the last row of every column
there (swap-and-pop). No validation, no growth, no dtype handling, no
Python between the passes, and the two columns are named arrays rather than
a tuple of word views, so ``ComponentStore / floor`` in the same run is
everything the library adds.

The names avoid asv's benchmark prefixes (``time_``, ``track_``, ``mem_``,
``peakmem_``) because asv imports every module in the package.
"""

import numba
import numpy as np

# As in ``_floor``: index arithmetic stays unsigned, ``n`` travels as uint64.
# Rows are 3 wide, a constant the compiler unrolls: the floor knows the
# layout that the library only learns at run time.


@numba.njit(cache=True)
def store_add(sparse, dense, n, ids, pos, vel, new_pos, new_vel):
    """Add or replace ``ids`` with rows ``new_pos[k]``, ``new_vel[k]``; new n.

    Like a dict update: a member gets its rows overwritten in place, a new
    id is appended at ``n`` with its rows. Two passes, as the library does:
    the ids first (recording each one's row), then the rows. Writing the
    rows in the id loop measured 1.6-1.8x slower here: each row's address
    then waits on that id's cache-missing probe of ``dense``, and the CPU
    stops overlapping the probes of the next ids.
    """
    m = np.uint64(n)
    rows = np.empty(ids.size, dtype=np.uint64)
    for k in range(ids.size):
        x = ids[k]
        u = np.uint64(x)
        p = np.uint64(sparse[u])
        if not (p < m and dense[p] == x):
            p = m
            sparse[u] = m
            dense[m] = x
            m += np.uint64(1)
        rows[k] = p
    for k in range(ids.size):
        p = rows[k]
        for j in range(3):
            pos[p, j] = new_pos[k, j]
        for j in range(3):
            vel[p, j] = new_vel[k, j]
    return m


@numba.njit(cache=True)
def store_discard(sparse, dense, n, ids, pos, vel):
    """Swap-and-pop each member of ``ids`` in order, moving rows; new n.

    The last member's id and rows move into the hole; the removed id lands
    at ``dense[n - 1]`` (as in the library), its rows are overwritten.
    """
    m = np.uint64(n)
    for i in range(ids.size):
        x = ids[i]
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
                pos[p, j] = pos[m, j]
                vel[p, j] = vel[m, j]
    return m


@numba.njit(cache=True)
def integrate(pos, vel, dt):
    """``pos += vel * dt`` row by row over two equally long ``(n, 3)`` arrays."""
    for k in range(pos.shape[0]):
        for j in range(3):
            pos[k, j] += vel[k, j] * dt


def empty_arrays(capacity, rows):
    """A new empty store's arrays: ``sparse``, ``dense`` and two columns."""
    return (
        np.empty(capacity, dtype=np.uint32),
        np.empty(capacity, dtype=np.int32),
        np.empty((rows, 3), dtype=np.float64),
        np.empty((rows, 3), dtype=np.float64),
    )


def warm_up():
    """Compile (or load from cache) every floor loop for the benchmarks' types.

    int64 ids, C-contiguous ``(rows, 3)`` float64 columns, a Python int
    ``n`` and a Python float ``dt``, as the timed calls use.
    """
    ids = np.arange(4, dtype=np.int64)
    sparse, dense, pos, vel = empty_arrays(8, 8)
    values = np.ones((4, 3))
    n = int(store_add(sparse, dense, 0, ids, pos, vel, values, values))
    integrate(pos[:n], vel[:n], 0.5)
    store_discard(sparse, dense, n, ids[:2], pos, vel)

"""Cold start, without twins: ``twins.py``'s work on plain numpy arrays.

A hand-written sparse set (``sparse``, ``dense``, a count) for the ids and
one with two row arrays for the bodies, in a cached ``@njit`` function.
Imports numpy and numba only. ``sparse`` starts uninitialised, as the
library's does, so it is unsigned: a garbage entry is then a large
position that fails ``p < n``, never a negative index.
"""

import numpy as np
from numba import njit

N = 1_000
DT = 0.5


@njit(cache=True)
def _add(sparse, dense, n, i):
    p = sparse[i]
    if p < n and dense[p] == i:
        return n
    sparse[i] = n
    dense[n] = i
    return n + 1


@njit(cache=True)
def _position(sparse, dense, n, i):
    p = sparse[i]
    if p < n and dense[p] == i:
        return p
    return -1


@njit(cache=True)
def step(seen, bodies, pos, vel, n, dt):
    """Add ids 0..n-1 to both sets, move the bodies, drop every third id.

    ``seen`` and ``bodies`` are ``(sparse, dense)`` pairs; returns the
    number removed and the two final sizes.
    """
    seen_sparse, seen_dense = seen
    body_sparse, body_dense = bodies
    n_seen = 0
    n_bodies = 0
    for i in range(n):
        n_seen = _add(seen_sparse, seen_dense, n_seen, i)
        m = _add(body_sparse, body_dense, n_bodies, i)
        if m > n_bodies:
            pos[n_bodies] = 0.0
            vel[n_bodies] = 0.0
            n_bodies = m
    for k in range(n_bodies):
        vel[k, 0] = 1.0
        for j in range(3):
            pos[k, j] += vel[k, j] * dt
    removed = 0
    for i in range(0, n, 3):
        p = _position(seen_sparse, seen_dense, n_seen, i)
        if p >= 0:
            n_seen -= 1
            last = seen_dense[n_seen]
            seen_dense[p] = last
            seen_sparse[last] = p
            q = _position(body_sparse, body_dense, n_bodies, i)
            n_bodies -= 1
            last = body_dense[n_bodies]
            body_dense[q] = last
            body_sparse[last] = q
            pos[q] = pos[n_bodies]
            vel[q] = vel[n_bodies]
            removed += 1
    return removed, n_seen, n_bodies


def main():
    seen = np.empty(N, np.uint32), np.empty(N, np.int64)
    bodies = np.empty(N, np.uint32), np.empty(N, np.int64)
    pos = np.empty((N, 3))
    vel = np.empty((N, 3))
    removed, n_seen, n_bodies = step(seen, bodies, pos, vel, N, DT)
    assert removed == len(range(0, N, 3))
    assert n_seen == n_bodies == N - removed
    assert np.all(pos[:n_bodies, 0] == DT)


if __name__ == "__main__":
    main()

"""Cold start, with twins: a SparseSet and a ComponentStore, driven from a
cached ``@njit`` function through their jit twins.

Run as a script (``python twins.py``); ``plain.py`` does the same work on
plain numpy arrays, and the benchmark module ``cold_start`` times both as
whole processes. This directory has no ``__init__.py``, so asv does not
import it as part of the suite; numba caches ``step`` in its
``__pycache__``.
"""

import numpy as np
from numba import njit

from sparseset import ComponentStore, SparseSet

N = 1_000
DT = 0.5


@njit(cache=True)
def step(seen, bodies, n, dt):
    """Add ids 0..n-1 to both twins, move the bodies, drop every third id."""
    for i in range(n):
        seen.add(i)
        bodies.add(i)
    pos = bodies.pos
    vel = bodies.vel
    for k in range(bodies.size):
        vel[k, 0] = 1.0
        for j in range(3):
            pos[k, j] += vel[k, j] * dt
    removed = 0
    for i in range(0, n, 3):
        if seen.contains(i):
            seen.remove(i)
            bodies.remove(i)
            removed += 1
    return removed


def main():
    seen = SparseSet(capacity=N)
    bodies = ComponentStore({"pos": ("f8", 3), "vel": ("f8", 3)}, capacity=N)
    removed = step(seen.jit, bodies.jit, N, DT)
    assert removed == len(range(0, N, 3))
    assert len(seen) == len(bodies) == N - removed
    assert np.all(bodies["pos"][:, 0] == DT)


if __name__ == "__main__":
    main()

"""The particle demo's step by hand: the floor under ``python -m sparseset demo``.

The same particles and the same work per step as
:class:`sparseset.demo.particles.ParticleWorld`, on plain numpy arrays and
``@njit`` loops, with no entities, no stores, no schedule and no change
tracking: particle ``k`` is row ``k`` of every array, ``n`` rows are live.
A lifetime and a drag coefficient are a value and a bool mask beside it
(the demo keeps them in their own stores, on about half and a third of the
particles). One step:

1. ``integrate``: the demo's own kernel, every particle;
2. ``age``: the lifetimes of the mortal shorten by ``dt``;
3. ``drag``: the particles with drag slow down;
4. ``regrid``: the positions copied into the cell list's own rows, as
   the demo's World grid keeps them (every particle moved and nothing
   asked the grid since its last catch-up, so the catch-up copies the
   rows and leaves the sort to the next query); ``counts`` sorts them
   when asked: each particle's cell from its position (cells of side
   ``CELL``, ``floor(x / CELL)``), a counting sort of the rows and their
   positions into cell order;
5. ``despawn``: the expired leave (swap-and-pop of every array's row), and
   as many are spawned at the end (the demo's draws, appended).

So ``demo step / floor step`` in the same run is what the World, its
stores, views, groups, change tracking, grid, deferred commands and the
schedule add to the demo's work.

The names avoid asv's benchmark prefixes (``time_``, ``track_``, ``mem_``,
``peakmem_``) because asv imports every module in the package.
"""

import numba
import numpy as np

from sparseset.demo import particles
from sparseset.demo.particles import (
    BOX,
    DRAG_SHARE,
    DT,
    GRAVITY,
    GRID,
    MORTAL_SHARE,
    integrate,
)

#: The demo's cell side: ``GRID`` cells across the box. Read from the demo
#: where it names it, so that ``asv_bench/history.py`` can time commits
#: from before it did (the suite imports every module at every commit).
CELL = getattr(particles, "CELL", 2.0 * BOX / GRID)


@numba.njit(cache=True, nogil=True)
def age(life, mortal, n, dt):
    """Shorten the lifetimes of the mortal among the first ``n`` rows."""
    for k in range(n):
        if mortal[k]:
            life[k] -= dt


@numba.njit(cache=True, nogil=True)
def drag(vel, coefficient, dragged, n, dt):
    """Slow each particle with drag by its own coefficient."""
    for k in range(n):
        if dragged[k]:
            factor = 1.0 - coefficient[k] * dt
            vel[k, 0] *= factor
            vel[k, 1] *= factor


@numba.njit(cache=True, nogil=True)
def despawn(pos, vel, life, mortal, coefficient, dragged, n):
    """Remove every expired particle (the last row moves into its place);
    returns the new ``n``."""
    k = 0
    while k < n:
        if mortal[k] and life[k] <= 0.0:
            n -= 1
            pos[k] = pos[n]
            vel[k] = vel[n]
            life[k] = life[n]
            mortal[k] = mortal[n]
            coefficient[k] = coefficient[n]
            dragged[k] = dragged[n]
        else:
            k += 1
    return n


@numba.njit(cache=True, nogil=True)
def cell_list(pos, n, side, cell, keys, start, order, ordered):
    """Counting-sort rows ``0 .. n - 1`` by cell: the rows of cell ``c`` of
    the box are ``order[start[c] : start[c + 1]]``, their positions
    ``ordered[start[c] : start[c + 1]]``; ``keys`` is scratch."""
    half = side // 2
    width = side + 1
    start[:] = 0
    for k in range(n):
        column = int(np.floor(pos[k, 0] / cell)) + half
        row = int(np.floor(pos[k, 1] / cell)) + half
        c = row * width + column
        keys[k] = c
        start[c + 1] += 1
    for c in range(start.shape[0] - 1):
        start[c + 1] += start[c]
    for k in range(n):
        c = keys[k]
        j = start[c]
        start[c] = j + 1
        order[j] = k
        ordered[j, 0] = pos[k, 0]
        ordered[j, 1] = pos[k, 1]
    # The fill moved each start to its cell's end: shift them back.
    for c in range(start.shape[0] - 1, 0, -1):
        start[c] = start[c - 1]
    start[0] = 0


class FloorParticles:
    """``count`` particles on plain arrays, stepped as the demo steps them.

    Examples
    --------
    >>> sim = FloorParticles(100, seed=1)
    >>> for _ in range(3):
    ...     sim.step()
    >>> sim.n, int(sim.counts.sum())
    (100, 100)
    """

    def __init__(self, count, seed=0):
        self.rng = np.random.default_rng(seed)
        self.pos = np.zeros((count, 2))
        self.vel = np.zeros((count, 2))
        self.life = np.zeros(count, np.float32)
        self.mortal = np.zeros(count, np.bool_)
        self.coefficient = np.zeros(count, np.float32)
        self.dragged = np.zeros(count, np.bool_)
        # The cell list: the box's (GRID + 1) ** 2 cells (the last of an
        # axis holds the particles on the wall at BOX).
        self.keys = np.zeros(count, np.int64)
        self.start = np.zeros((GRID + 1) ** 2 + 1, np.int64)
        self.order = np.zeros(count, np.int64)
        self.ordered = np.zeros((count, 2))
        #: The positions the cell list is of, copied each step; how many,
        #: and whether the cell list is theirs yet.
        self.kept = np.zeros((count, 2))
        self.kept_n = 0
        self.listed = True
        self.n = 0
        self.spawn(count)

    @property
    def counts(self):
        """Particles per cell of the box at the last step's regrid (its
        cell list, sorted now if not yet)."""
        if not self.listed:
            cell_list(
                self.kept,
                self.kept_n,
                GRID,
                CELL,
                self.keys,
                self.start,
                self.order,
                self.ordered,
            )
            self.listed = True
        return np.diff(self.start)

    def spawn(self, count):
        """Append ``count`` particles, drawn as the demo's ``spawn`` draws."""
        rng, start, stop = self.rng, self.n, self.n + count
        self.pos[start:stop] = rng.uniform(-0.05, 0.05, (count, 2)) - [0, 0.9]
        speed = rng.uniform(0.5, 1.5, count)
        angle = rng.uniform(0.25 * np.pi, 0.75 * np.pi, count)
        self.vel[start:stop] = (
            np.stack([np.cos(angle), np.sin(angle)], 1) * speed[:, None]
        )
        mortal = rng.random(count) < MORTAL_SHARE
        self.mortal[start:stop] = mortal
        self.life[start:stop][mortal] = rng.uniform(0.5, 3.0, int(mortal.sum()))
        dragged = rng.random(count) < DRAG_SHARE
        self.dragged[start:stop] = dragged
        self.coefficient[start:stop][dragged] = rng.uniform(
            0.1, 1.0, int(dragged.sum())
        )
        self.n = stop

    def step(self):
        """One step: integrate, age, drag, regrid, despawn and respawn."""
        n = self.n
        integrate(self.pos[:n], self.vel[:n], DT, GRAVITY, BOX)
        age(self.life, self.mortal, n, np.float32(DT))
        drag(self.vel, self.coefficient, self.dragged, n, DT)
        self.kept[:n] = self.pos[:n]
        self.kept_n = n
        self.listed = False
        self.n = despawn(
            self.pos,
            self.vel,
            self.life,
            self.mortal,
            self.coefficient,
            self.dragged,
            n,
        )
        self.spawn(n - self.n)

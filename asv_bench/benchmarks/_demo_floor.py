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
4. ``despawn``: the expired leave (swap-and-pop of every array's row, the
   grid's count of its cell down), and as many are spawned at the end
   (the demo's draws, appended, counted in the grid);
5. ``regrid``: each particle's cell from its position; one that crossed
   into another moves in the grid's counts.

So ``demo step / floor step`` in the same run is what the World, its
stores, views, groups, change tracking, deferred commands and the
schedule add to the demo's work.

The names avoid asv's benchmark prefixes (``time_``, ``track_``, ``mem_``,
``peakmem_``) because asv imports every module in the package.
"""

import numba
import numpy as np

from sparseset.demo.particles import (
    BOX,
    DRAG_SHARE,
    DT,
    GRAVITY,
    GRID,
    MORTAL_SHARE,
    integrate,
)


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
def despawn(pos, vel, life, mortal, coefficient, dragged, cells, grid, n):
    """Remove every expired particle (the last row moves into its place);
    returns the new ``n``."""
    k = 0
    while k < n:
        if mortal[k] and life[k] <= 0.0:
            grid[cells[k]] -= 1
            n -= 1
            pos[k] = pos[n]
            vel[k] = vel[n]
            life[k] = life[n]
            mortal[k] = mortal[n]
            coefficient[k] = coefficient[n]
            dragged[k] = dragged[n]
            cells[k] = cells[n]
        else:
            k += 1
    return n


@numba.njit(cache=True, nogil=True)
def cell_of(x, y, side, box):
    scale = side / (2.0 * box)
    column = min(max(int((x + box) * scale), 0), side - 1)
    row = min(max(int((y + box) * scale), 0), side - 1)
    return row * side + column


@numba.njit(cache=True, nogil=True)
def place(pos, cells, grid, start, stop, side, box):
    """Give rows ``start .. stop`` their cells, counted in the grid."""
    for k in range(start, stop):
        cell = cell_of(pos[k, 0], pos[k, 1], side, box)
        cells[k] = cell
        grid[cell] += 1


@numba.njit(cache=True, nogil=True)
def regrid(pos, cells, grid, n, side, box):
    """Move each particle that crossed into another cell; returns how many."""
    moved = 0
    for k in range(n):
        cell = cell_of(pos[k, 0], pos[k, 1], side, box)
        if cell != cells[k]:
            grid[cells[k]] -= 1
            grid[cell] += 1
            cells[k] = cell
            moved += 1
    return moved


class FloorParticles:
    """``count`` particles on plain arrays, stepped as the demo steps them.

    Examples
    --------
    >>> sim = FloorParticles(100, seed=1)
    >>> for _ in range(3):
    ...     sim.step()
    >>> sim.n, int(sim.grid.sum())
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
        self.cells = np.zeros(count, np.int32)
        self.grid = np.zeros(GRID * GRID, np.int64)
        self.n = 0
        self.spawn(count)

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
        place(self.pos, self.cells, self.grid, start, stop, GRID, BOX)
        self.n = stop

    def step(self):
        """One step: integrate, age, drag, despawn and respawn, regrid."""
        n = self.n
        integrate(self.pos[:n], self.vel[:n], DT, GRAVITY, BOX)
        age(self.life, self.mortal, n, np.float32(DT))
        drag(self.vel, self.coefficient, self.dragged, n, DT)
        self.n = despawn(
            self.pos,
            self.vel,
            self.life,
            self.mortal,
            self.coefficient,
            self.dragged,
            self.cells,
            self.grid,
            n,
        )
        regrid(self.pos, self.cells, self.grid, self.n, GRID, BOX)
        self.spawn(n - self.n)

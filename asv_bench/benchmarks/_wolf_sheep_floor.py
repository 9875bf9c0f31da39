"""Bare numba wolf-sheep: the floor for sparseset.models.WolfSheep.

What a numba user writes by hand for Mesa's wolf-sheep predation on
plain arrays: animals as rows of coordinate and energy arrays with an
alive flag, newborns appended past the rows a turn activates and the
dead compacted away after each turn, the grass as one array of
regrowth steps. Sheep do not look at sheep nor wolves at wolves, so the
sheep's turn reads a count of wolves per cell, and the wolves' turn a
table of the sheep of each cell (a counting sort, made after the
sheep's turn, whose segments shrink as sheep are eaten). The rules and
the activation (sheep one at a time in a shuffled order, then wolves)
are the model's, the activation order drawn as the models draw it
(``_models_floor.floor_order``). ``model / floor`` in the same run is what the World,
its grids, the deferred commands and the model's bookkeeping add.

The names avoid asv's benchmark prefixes because asv imports every module.
"""

import numba
import numpy as np

from ._models_floor import floor_order

_DX = np.array([-1, 0, 0, 1], np.int64)
_DY = np.array([0, -1, 1, 0], np.int64)


class Herd:
    """Rows of animals: coordinates, energy, alive; room for births."""

    def __init__(self, x, y, energy):
        n = x.shape[0]
        self.n = n
        self.x = np.empty(2 * n + 16, np.int64)
        self.y = np.empty_like(self.x)
        self.energy = np.empty(2 * n + 16, np.float64)
        self.alive = np.zeros(2 * n + 16, np.bool_)
        self.x[:n], self.y[:n], self.energy[:n], self.alive[:n] = x, y, energy, True

    def room(self):
        """Room for each row to give birth once in a turn."""
        if self.x.shape[0] < 2 * self.n:
            size = 2 * self.n + 16
            for name in ("x", "y", "energy", "alive"):
                old = getattr(self, name)
                new = np.zeros(size, old.dtype)
                new[: self.n] = old[: self.n]
                setattr(self, name, new)

    def compact(self):
        self.n = floor_compact(self.x, self.y, self.energy, self.alive, self.n)


class WolfSheepFloor:
    """Mesa's wolf-sheep on a ``width x height`` torus, on plain arrays."""

    def __init__(self, n_sheep, n_wolves, width, height, seed, regrowth=30):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.width, self.height, self.regrowth = width, height, regrowth
        cells = width * height
        self.sheep = Herd(
            rng.integers(0, width, n_sheep),
            rng.integers(0, height, n_sheep),
            rng.random(n_sheep) * 8.0,
        )
        self.wolves = Herd(
            rng.integers(0, width, n_wolves),
            rng.integers(0, height, n_wolves),
            rng.random(n_wolves) * 40.0,
        )
        grown = rng.random(cells) < 0.5
        self.regrow = np.where(grown, 0, rng.integers(0, regrowth, cells))
        self.count = np.zeros(cells, np.int64)  # animals per cell
        self.start = np.zeros(cells + 1, np.int64)  # the sheep's table
        self.members = np.empty(0, np.int64)
        self.now = 0

    def step(self):
        s, w = self.sheep, self.wolves
        s.room()
        floor_census(w.x, w.y, w.n, self.height, self.count)
        s.n = floor_sheep(
            s.x, s.y, s.energy, s.alive, s.n, floor_order(self.rng, s.n),
            self.count, self.regrow, self.now, self.width, self.height,
            self.regrowth, 4.0, 0.04, int(self.rng.integers(0, 2**31 - 1)),
        )  # fmt: skip
        s.compact()
        if self.members.shape[0] < s.n:
            self.members = np.empty(s.x.shape[0], np.int64)
        floor_table(s.x, s.y, s.n, self.height, self.count, self.start, self.members)
        w.room()
        w.n = floor_wolves(
            w.x, w.y, w.energy, w.alive, w.n, floor_order(self.rng, w.n),
            s.alive, self.count, self.start, self.members, self.width,
            self.height, 20.0, 0.05, int(self.rng.integers(0, 2**31 - 1)),
        )  # fmt: skip
        s.compact()
        w.compact()
        self.now += 1


@numba.njit(cache=True)
def floor_census(x, y, n, height, count):
    count[:] = 0
    for a in range(n):
        count[x[a] * height + y[a]] += 1


@numba.njit(cache=True)
def floor_table(x, y, n, height, count, start, members):
    """The sheep of each cell: ``members[start[c]:start[c] + count[c]]``."""
    floor_census(x, y, n, height, count)
    start[0] = 0
    for c in range(count.shape[0]):
        start[c + 1] = start[c] + count[c]
        count[c] = 0
    for a in range(n):
        c = x[a] * height + y[a]
        members[start[c] + count[c]] = a
        count[c] += 1


@numba.njit(cache=True)
def _around(x, y, width, height, nx, ny):
    k = 0
    for d in range(4):
        cx = (x + _DX[d]) % width
        cy = (y + _DY[d]) % height
        seen = False
        for e in range(k):
            if nx[e] == cx and ny[e] == cy:
                seen = True
        if not seen:
            nx[k] = cx
            ny[k] = cy
            k += 1
    return k


@numba.njit(cache=True)
def floor_sheep(
    x, y, energy, alive, n, order, wolves_at, regrow, now, width, height,
    regrowth, gain, p, seed,
):  # fmt: skip
    np.random.seed(seed)
    nx = np.empty(4, np.int64)
    ny = np.empty(4, np.int64)
    safe = np.empty(4, np.int64)
    grassy = np.empty(4, np.int64)
    for i in range(order.shape[0]):
        a = order[i]
        k = _around(x[a], y[a], width, height, nx, ny)
        ns = 0
        ng = 0
        for d in range(k):
            c = nx[d] * height + ny[d]
            if wolves_at[c] == 0:
                safe[ns] = d
                ns += 1
                if regrow[c] <= now:
                    grassy[ng] = d
                    ng += 1
        if ns > 0:
            if ng > 0:
                d = grassy[np.random.randint(0, ng)]
            else:
                d = safe[np.random.randint(0, ns)]
            x[a] = nx[d]
            y[a] = ny[d]
        c = x[a] * height + y[a]
        energy[a] -= 1.0
        if regrow[c] <= now:
            energy[a] += gain
            regrow[c] = now + 1 + regrowth
        if energy[a] < 0.0:
            alive[a] = False
        elif np.random.random() < p:
            energy[a] /= 2.0
            x[n], y[n], energy[n], alive[n] = x[a], y[a], energy[a], True
            n += 1
    return n


@numba.njit(cache=True)
def floor_wolves(
    x, y, energy, alive, n, order, sheep_alive, count, start, members,
    width, height, gain, p, seed,
):  # fmt: skip
    np.random.seed(seed)
    nx = np.empty(4, np.int64)
    ny = np.empty(4, np.int64)
    prey = np.empty(4, np.int64)
    for i in range(order.shape[0]):
        a = order[i]
        k = _around(x[a], y[a], width, height, nx, ny)
        n_prey = 0
        for d in range(k):
            if count[nx[d] * height + ny[d]] > 0:
                prey[n_prey] = d
                n_prey += 1
        if n_prey > 0:
            d = prey[np.random.randint(0, n_prey)]
        else:
            d = np.random.randint(0, k)
        x[a] = nx[d]
        y[a] = ny[d]
        c = x[a] * height + y[a]
        energy[a] -= 1.0
        if count[c] > 0:
            j = start[c] + np.random.randint(0, count[c])
            last = start[c] + count[c] - 1
            sheep_alive[members[j]] = False
            members[j] = members[last]
            count[c] -= 1
            energy[a] += gain
        if energy[a] < 0.0:
            alive[a] = False
        elif np.random.random() < p:
            energy[a] /= 2.0
            x[n], y[n], energy[n], alive[n] = x[a], y[a], energy[a], True
            n += 1
    return n


@numba.njit(cache=True)
def floor_compact(x, y, energy, alive, n):
    m = 0
    for a in range(n):
        if alive[a]:
            x[m], y[m], energy[m], alive[m] = x[a], y[a], energy[a], True
            m += 1
    alive[m:n] = False
    return m

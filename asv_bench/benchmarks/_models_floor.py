"""Bare numba versions of the models' rules: the floor for sparseset.models.

What a numba user writes by hand for Mesa's Boltzmann wealth and
Schelling models on plain arrays: integer cell coordinates, a doubly
linked list of agents per cell (Boltzmann) or an occupancy array
(Schelling, one agent a cell), the same one-at-a-time activation over a
shuffled order and the same rules. ``model / floor`` in the same run is
what the World, its grid and the model's bookkeeping add.

The names avoid asv's benchmark prefixes because asv imports every module.
"""

import numba
import numpy as np

_DX = np.array([-1, -1, -1, 0, 0, 1, 1, 1], np.int64)
_DY = np.array([-1, 0, 1, -1, 1, -1, 0, 1], np.int64)


class BoltzmannFloor:
    """Agents on a ``width x height`` grid, each cell a linked list."""

    def __init__(self, n, width, height, seed):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.width, self.height = width, height
        self.x = rng.integers(0, width, n)
        self.y = rng.integers(0, height, n)
        self.wealth = np.ones(n, np.int64)
        self.head = np.full(width * height, -1, np.int64)
        self.nxt = np.full(n, -1, np.int64)
        self.prv = np.full(n, -1, np.int64)
        floor_link(self.x, self.y, height, self.head, self.nxt, self.prv)

    def step(self):
        order = self.rng.permutation(self.x.shape[0])
        floor_boltzmann(
            self.x, self.y, self.wealth, self.head, self.nxt, self.prv, order,
            self.width, self.height, int(self.rng.integers(0, 2**31 - 1)),
        )  # fmt: skip


@numba.njit(cache=True)
def floor_link(x, y, height, head, nxt, prv):
    for a in range(x.shape[0]):
        c = x[a] * height + y[a]
        nxt[a] = head[c]
        prv[a] = -1
        if head[c] >= 0:
            prv[head[c]] = a
        head[c] = a


@numba.njit(cache=True)
def floor_boltzmann(x, y, wealth, head, nxt, prv, order, width, height, seed):
    np.random.seed(seed)
    for i in range(order.shape[0]):
        a = order[i]
        while True:
            k = np.random.randint(0, 8)
            nx = x[a] + _DX[k]
            ny = y[a] + _DY[k]
            if 0 <= nx < width and 0 <= ny < height:
                break
        c = x[a] * height + y[a]  # unlink
        if prv[a] >= 0:
            nxt[prv[a]] = nxt[a]
        else:
            head[c] = nxt[a]
        if nxt[a] >= 0:
            prv[nxt[a]] = prv[a]
        x[a], y[a] = nx, ny
        c = nx * height + ny  # link
        nxt[a] = head[c]
        prv[a] = -1
        if head[c] >= 0:
            prv[head[c]] = a
        head[c] = a
        if wealth[a] > 0:
            m = 0
            b = nxt[a]  # a is the head: the others follow it
            while b >= 0:
                m += 1
                b = nxt[b]
            if m > 0:
                j = np.random.randint(0, m)
                b = nxt[a]
                while j > 0:
                    b = nxt[b]
                    j -= 1
                wealth[b] += 1
                wealth[a] -= 1


class SchellingFloor:
    """Schelling on an occupancy array (one agent a cell)."""

    def __init__(self, height, width, density, minority_pc, homophily, radius, seed):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.width, self.height = width, height
        self.homophily, self.radius = homophily, radius
        held = np.flatnonzero(rng.random(width * height) < density)
        self.x = held // height
        self.y = held % height
        self.kind = (rng.random(held.shape[0]) < minority_pc).astype(np.int8)
        self.occ = np.full(width * height, -1, np.int64)
        self.occ[held] = np.arange(held.shape[0])
        self.happy = np.zeros(held.shape[0], np.bool_)
        self.count = floor_assess(
            self.x, self.y, self.kind, self.occ, self.happy, width, height,
            homophily, radius,
        )  # fmt: skip

    def step(self):
        order = self.rng.permutation(self.x.shape[0])
        floor_schelling_moves(
            self.x, self.y, self.occ, self.happy, order, self.width, self.height,
            int(self.rng.integers(0, 2**31 - 1)),
        )  # fmt: skip
        self.count = floor_assess(
            self.x, self.y, self.kind, self.occ, self.happy, self.width,
            self.height, self.homophily, self.radius,
        )  # fmt: skip


@numba.njit(cache=True)
def floor_schelling_moves(x, y, occ, happy, order, width, height, seed):
    np.random.seed(seed)
    for i in range(order.shape[0]):
        a = order[i]
        if happy[a]:
            continue
        while True:
            nx = np.random.randint(0, width)
            ny = np.random.randint(0, height)
            if occ[nx * height + ny] < 0:
                break
        occ[x[a] * height + y[a]] = -1
        occ[nx * height + ny] = a
        x[a], y[a] = nx, ny


@numba.njit(cache=True)
def floor_assess(x, y, kind, occ, happy, width, height, homophily, radius):
    count = 0
    for a in range(x.shape[0]):
        same = 0
        total = 0
        for u in range(max(0, x[a] - radius), min(width, x[a] + radius + 1)):
            for v in range(max(0, y[a] - radius), min(height, y[a] + radius + 1)):
                b = occ[u * height + v]
                if b >= 0 and b != a:
                    total += 1
                    same += kind[b] == kind[a]
        share = same / total if total > 0 else 0.0
        happy[a] = not share < homophily
        count += happy[a]
    return count

"""Bare numba versions of the models' rules: the floor for sparseset.models.

What a numba user writes by hand for Mesa's Boltzmann wealth and
Schelling models on plain arrays: integer cell coordinates, a short
line of rows per cell (Boltzmann) or an occupancy array
(Schelling, one agent a cell), the same one-at-a-time activation over a
shuffled order and the same rules. ``model / floor`` in the same run is
what the World, its grid and the model's bookkeeping add.

Every floor draws its activation order with the shuffle the models use
(:func:`floor_order`: Fisher-Yates on splitmix64), written out here:
numpy's ``Generator.permutation`` costs several times as much, and a
floor is the fastest hand-written loop, not a numpy call.

The names avoid asv's benchmark prefixes because asv imports every module.
"""

import numba
import numpy as np

from sparseset.kernels.prefetch import prefetch

_DX = np.array([-1, -1, -1, 0, 0, 1, 1, 1], np.int64)
_DY = np.array([-1, 0, 1, -1, 1, -1, 0, 1], np.int64)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOW = np.uint64(0xFFFFFFFF)


def floor_order(rng, n):
    """A shuffled order of ``n`` rows, seeded by one draw of ``rng``."""
    order = np.empty(n, np.int64)
    floor_shuffle(order, int(rng.integers(0, 2**63 - 1)))
    return order


@numba.njit(cache=True)
def floor_shuffle(order, seed, fill=True):
    """Fisher-Yates on splitmix64, Lemire's unbiased bounded draws; with
    ``fill=False`` it shuffles the permutation ``order`` holds."""
    n = order.shape[0]
    if fill:
        for i in range(n):
            order[i] = i
    z = np.uint64(seed)
    for i in range(n - 1, 0, -1):
        bound = np.uint64(i + 1)
        while True:
            z += _GOLDEN
            x = (z ^ (z >> np.uint64(30))) * _MIX1
            x = (x ^ (x >> np.uint64(27))) * _MIX2
            x ^= x >> np.uint64(31)
            m = (x >> np.uint64(32)) * bound
            low = m & _LOW
            if low >= bound or low >= (_LOW + np.uint64(1) - bound) % bound:
                break
        j = np.int64(m >> np.uint64(32))
        t = order[i]
        order[i] = order[j]
        order[j] = t


class BoltzmannFloor:
    """Agents on a ``width x height`` grid, each cell a line of rows.

    A cell's line holds its count, then its members (``stride`` int32s,
    lengthened when a cell fills it). A step draws its randomness first,
    in two tight loops (the shuffle, then one splitmix64 word per agent),
    then every agent's move (each moves once and reads only its own
    position, so the moves are known before the activation loop), then
    runs the activation loop on the lines: out of one line (the last
    member takes the mover's place), onto the end of another, the gift an
    index into it; both loops prefetch a few agents ahead.
    """

    def __init__(self, n, width, height, seed):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.width, self.height = width, height
        self.x = rng.integers(0, width, n)
        self.y = rng.integers(0, height, n)
        self.wealth = np.ones(n, np.int64)
        self.order = np.arange(n, dtype=np.int32)
        self.draws = np.empty(n, np.uint64)
        self.src = np.empty(n, np.int64)
        self.dst = np.empty(n, np.int64)
        self.stride = 8
        while True:
            self.line = np.zeros(width * height * self.stride, np.int32)
            if floor_link(self.x, self.y, height, self.line, self.stride):
                break
            self.stride *= 2

    def step(self):
        floor_draws(self.order, self.draws, int(self.rng.integers(0, 2**63 - 1)))
        floor_moves(
            self.x, self.y, self.order, self.draws, self.width, self.height,
            self.src, self.dst,
        )  # fmt: skip
        at = 0
        while True:
            at = floor_gifts(
                self.wealth, self.order, self.draws, self.src, self.dst,
                self.line, self.stride, at,
            )  # fmt: skip
            if at < 0:
                return
            while True:
                self.stride *= 2
                self.line = np.zeros(self.width * self.height * self.stride, np.int32)
                if floor_refile(
                    self.order, self.src, self.dst, at, self.line, self.stride
                ):
                    break


@numba.njit(cache=True)
def floor_link(x, y, height, line, stride):
    for a in range(x.shape[0]):
        o = (x[a] * height + y[a]) * stride
        k = line[o] + 1
        if k >= stride:
            return False
        line[o + k] = a
        line[o] = k
    return True


@numba.njit(cache=True)
def floor_refile(order, src, dst, start, line, stride):
    for i in range(order.shape[0]):
        o = (dst[i] if i < start else src[i]) * stride
        k = line[o] + 1
        if k >= stride:
            return False
        line[o + k] = order[i]
        line[o] = k
    return True


@numba.njit(inline="always")
def _splitmix(z):
    x = (z ^ (z >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def floor_draws(order, draws, seed):
    floor_shuffle(order, seed, False)
    z = np.uint64(seed) ^ np.uint64(0x8000000000000000)
    for i in range(draws.shape[0]):
        draws[i] = _splitmix(z + np.uint64(i + 1) * _GOLDEN)


@numba.njit(cache=True)
def floor_moves(x, y, order, draws, width, height, src, dst):
    n = order.shape[0]
    for i in range(n):
        if i + 16 < n:
            prefetch(x, order[i + 16])
            prefetch(y, order[i + 16])
        a = order[i]
        word = draws[i]
        bits = word >> np.uint64(32)
        left = 10
        while True:
            if left == 0:
                word = _splitmix(word)
                bits = word
                left = 21
            k = np.int64(bits & np.uint64(7))
            bits >>= np.uint64(3)
            left -= 1
            nx = x[a] + _DX[k]
            ny = y[a] + _DY[k]
            if 0 <= nx < width and 0 <= ny < height:
                break
        src[i] = x[a] * height + y[a]
        dst[i] = nx * height + ny
        x[a], y[a] = nx, ny


@numba.njit(cache=True)
def floor_gifts(wealth, order, draws, src, dst, line, stride, start):
    n = order.shape[0]
    for i in range(start, n):
        if i + 8 < n:
            prefetch(line, dst[i + 8] * stride)
            prefetch(line, src[i + 8] * stride)
            prefetch(wealth, order[i + 8])
        a = np.int64(order[i])
        o = src[i] * stride
        o2 = dst[i] * stride
        m2 = np.int64(line[o2])
        if m2 + 1 >= stride:
            return i
        cnt = np.int64(line[o])
        s = 1
        while line[o + s] != a:
            s += 1
        line[o + s] = line[o + cnt]
        line[o] = cnt - 1
        line[o2 + 1 + m2] = a
        line[o2] = m2 + 1
        bound = np.uint64(max(m2, 1))
        word = draws[i]
        m = (word & _LOW) * bound
        while (m & _LOW) < bound and (m & _LOW) < (_LOW + np.uint64(1) - bound) % bound:
            word = _splitmix(word)
            m = (word & _LOW) * bound
        b = np.int64(line[o2 + 1 + np.int64(m >> np.uint64(32))])
        give = np.int64((m2 > 0) & (wealth[a] > 0))
        wealth[b] += give
        wealth[a] -= give
    return -1


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
        order = floor_order(self.rng, self.x.shape[0])
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


class BoidsFloor:
    """Mesa's boids on a torus, cells of side ``vision`` as linked lists."""

    def __init__(self, n, width, height, vision, seed):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.width, self.height, self.vision = float(width), float(height), vision
        self.cw = max(1, int(width // vision))
        self.ch = max(1, int(height // vision))
        self.pos = rng.random((n, 2)) * np.array([width, height])
        self.heading = rng.uniform(-1, 1, (n, 2))
        self.head = np.full(self.cw * self.ch, -1, np.int64)
        self.nxt = np.full(n, -1, np.int64)
        self.prv = np.full(n, -1, np.int64)
        self.cell = np.empty(n, np.int64)
        floor_boids_link(
            self.pos, self.width, self.height, self.cw, self.ch, self.head,
            self.nxt, self.prv, self.cell,
        )  # fmt: skip

    def step(self):
        order = floor_order(self.rng, self.pos.shape[0])
        floor_boids(
            self.pos, self.heading, self.head, self.nxt, self.prv, self.cell,
            order, self.width, self.height, self.cw, self.ch, 1.0, self.vision,
            2.0, 0.03, 0.015, 0.05,
        )  # fmt: skip


@numba.njit(cache=True)
def _boid_cell(x, y, width, height, cw, ch):
    u = min(int(x / width * cw), cw - 1)
    v = min(int(y / height * ch), ch - 1)
    return u * ch + v


@numba.njit(cache=True)
def floor_boids_link(pos, width, height, cw, ch, head, nxt, prv, cell):
    for a in range(pos.shape[0]):
        c = _boid_cell(pos[a, 0], pos[a, 1], width, height, cw, ch)
        cell[a] = c
        nxt[a] = head[c]
        prv[a] = -1
        if head[c] >= 0:
            prv[head[c]] = a
        head[c] = a


@numba.njit(cache=True)
def _shortest(d, size):
    other = d - np.sign(d) * size
    return d if abs(d) < abs(other) else other


@numba.njit(cache=True)
def floor_boids(
    pos, heading, head, nxt, prv, cell, order, width, height, cw, ch, speed,
    vision, separation, cohere, separate, match,
):  # fmt: skip
    vv = vision * vision
    for i in range(order.shape[0]):
        a = order[i]
        x, y = pos[a, 0], pos[a, 1]
        u0 = cell[a] // ch
        v0 = cell[a] % ch
        k = 0
        cx = cy = sx = sy = mx = my = 0.0
        for du in range(-1, 2):
            if cw < 3 and du != 0:
                continue
            for dv in range(-1, 2):
                if ch < 3 and dv != 0:
                    continue
                b = head[((u0 + du) % cw) * ch + (v0 + dv) % ch]
                while b >= 0:
                    if b != a:
                        dx = _shortest(pos[b, 0] - x, width)
                        dy = _shortest(pos[b, 1] - y, height)
                        d2 = dx * dx + dy * dy
                        if d2 <= vv:
                            cx += dx
                            cy += dy
                            if np.sqrt(d2) < separation:
                                sx -= dx
                                sy -= dy
                            mx += heading[b, 0]
                            my += heading[b, 1]
                            k += 1
                    b = nxt[b]
        if k > 0:
            hx = heading[a, 0] + (cx * cohere + sx * separate + mx * match) / k
            hy = heading[a, 1] + (cy * cohere + sy * separate + my * match) / k
            norm = np.sqrt(hx * hx + hy * hy)
            heading[a, 0] = hx / norm
            heading[a, 1] = hy / norm
        nx = (x + heading[a, 0] * speed) % width
        ny = (y + heading[a, 1] * speed) % height
        pos[a, 0], pos[a, 1] = nx, ny
        c = _boid_cell(nx, ny, width, height, cw, ch)
        if c != cell[a]:
            old = cell[a]
            if prv[a] >= 0:
                nxt[prv[a]] = nxt[a]
            else:
                head[old] = nxt[a]
            if nxt[a] >= 0:
                prv[nxt[a]] = prv[a]
            cell[a] = c
            nxt[a] = head[c]
            prv[a] = -1
            if head[c] >= 0:
                prv[head[c]] = a
            head[c] = a

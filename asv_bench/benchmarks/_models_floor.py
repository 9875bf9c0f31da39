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
    """Fisher-Yates on splitmix64 (two 32-bit draws a word), Lemire's
    unbiased bounded draws; with ``fill=False`` it shuffles the
    permutation ``order`` holds."""
    n = order.shape[0]
    if fill:
        for i in range(n):
            order[i] = i
    z = np.uint64(seed)
    word = np.uint64(0)
    half = False
    for i in range(n - 1, 0, -1):
        bound = np.uint64(i + 1)
        while True:
            if half:
                r = word & _LOW
            else:
                z += _GOLDEN
                x = (z ^ (z >> np.uint64(30))) * _MIX1
                x = (x ^ (x >> np.uint64(27))) * _MIX2
                word = x ^ (x >> np.uint64(31))
                r = word >> np.uint64(32)
            half = not half
            m = r * bound
            low = m & _LOW
            if low >= bound or low >= (_LOW + np.uint64(1) - bound) % bound:
                break
        j = np.int64(m >> np.uint64(32))
        t = order[i]
        order[i] = order[j]
        order[j] = t


class BoltzmannFloor:
    """Agents on a ``width x height`` grid, each cell a line of rows.

    A cell's line holds its count, then its members (``stride`` entries of
    two bytes while the rows fit, else four;
    lengthened when a cell fills it). A step draws its randomness first,
    in two tight loops (the shuffle, then one splitmix64 word per agent),
    then every agent's move (each moves once and reads only its own
    position, so the moves are known before the activation loop), then
    runs the activation loop on the lines: out of one line (the last
    member takes the mover's place, which ``at`` keeps for each agent),
    onto the end of another, the gift an
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
        self.src = np.empty(n, np.int32)
        self.dst = np.empty(n, np.int32)
        self.at = np.empty(n, np.int32)
        self.kind = np.uint16 if n < 2**16 else np.int32
        self.stride = 8
        while True:
            self.line = np.zeros(width * height * self.stride, self.kind)
            if floor_link(self.x, self.y, height, self.line, self.stride, self.at):
                break
            self.stride *= 2

    def step(self):
        place = floor_step(
            self.x, self.y, self.wealth, self.order, self.draws, self.src,
            self.dst, self.width, self.height, self.line, self.stride, self.at,
            int(self.rng.integers(0, 2**63 - 1)),
        )  # fmt: skip
        while place >= 0:
            while True:
                self.stride *= 2
                self.line = np.zeros(self.width * self.height * self.stride, self.kind)
                if floor_refile(
                    self.order, self.src, self.dst, place, self.line,
                    self.stride, self.at,
                ):  # fmt: skip
                    break
            place = floor_gifts(
                self.wealth, self.order, self.draws, self.src, self.dst,
                self.line, self.stride, place, self.at,
            )  # fmt: skip


@numba.njit(cache=True)
def floor_step(
    x, y, wealth, order, draws, src, dst, width, height, line, stride, at, seed
):  # fmt: skip
    floor_draws(order, draws, seed)
    floor_moves(x, y, order, draws, width, height, src, dst)
    return floor_gifts(wealth, order, draws, src, dst, line, stride, 0, at)


@numba.njit(cache=True)
def floor_link(x, y, height, line, stride, at):
    for a in range(x.shape[0]):
        o = (x[a] * height + y[a]) * stride
        k = line[o] + 1
        if k >= stride:
            return False
        line[o + k] = a
        line[o] = k
        at[a] = k
    return True


@numba.njit(cache=True)
def floor_refile(order, src, dst, start, line, stride, at):
    for i in range(order.shape[0]):
        o = (dst[i] if i < start else src[i]) * stride
        k = line[o] + 1
        if k >= stride:
            return False
        line[o + k] = order[i]
        line[o] = k
        at[order[i]] = k
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
def floor_gifts(wealth, order, draws, src, dst, line, stride, start, at):
    n = order.shape[0]
    for i in range(start, n):
        if i + 12 < n:
            prefetch(line, dst[i + 12] * stride)
            prefetch(line, src[i + 12] * stride)
            prefetch(wealth, order[i + 12])
            prefetch(at, order[i + 12])
        a = np.int64(order[i])
        o = src[i] * stride
        o2 = dst[i] * stride
        m2 = np.int64(line[o2])
        if m2 + 1 >= stride:
            return i
        cnt = np.int64(line[o])
        s = at[a]
        last = line[o + cnt]
        line[o + s] = last
        at[last] = s
        line[o] = cnt - 1
        line[o2 + 1 + m2] = a
        at[a] = m2 + 1
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
    """Mesa's boids on a torus, sorted into cells each step.

    Each step counts the boids into cells at least ``vision`` plus the
    farthest a boid moves in a step wide, copies positions and headings
    into slots in cell order, runs the boids one at a time on the slots
    (a boid's neighbours: the slots of its cell's 3 x 3 block, scanned
    without a branch on the distance), and copies the slots back.
    """

    def __init__(self, n, width, height, vision, seed):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.width, self.height, self.vision = float(width), float(height), vision
        self.pos = rng.random((n, 2)) * np.array([width, height])
        self.heading = rng.uniform(-1, 1, (n, 2))
        self.home = np.empty(n, np.int64)
        self.slot_of = np.empty(n, np.int64)
        self.start = np.empty(2 * n + 18, np.int64)
        self.sx, self.sy, self.hx, self.hy = (np.empty(n) for _ in range(4))

    def step(self):
        order = floor_order(self.rng, self.pos.shape[0])
        floor_boids(
            self.pos, self.heading, order, self.width, self.height, 1.0,
            self.vision, 2.0, 0.03, 0.015, 0.05, self.home, self.start,
            self.slot_of, self.sx, self.sy, self.hx, self.hy,
        )  # fmt: skip


@numba.njit(inline="always")
def _shortest(d, size):
    other = d - size if d > 0.0 else d + size
    return d if abs(d) < abs(other) else other


@numba.njit(inline="always")
def _sight(sx, sy, hx, hy, lo, hi, me, x, y, width, height, vv, sep2):
    cx = cy = px = py = mx = my = k = 0.0
    for t in range(lo, hi):
        dx = _shortest(sx[t] - x, width)
        dy = _shortest(sy[t] - y, height)
        d2 = dx * dx + dy * dy
        w = 1.0 if (d2 <= vv and t != me) else 0.0
        c = w if d2 < sep2 else 0.0
        cx += w * dx
        cy += w * dy
        px += c * dx
        py += c * dy
        mx += w * hx[t]
        my += w * hy[t]
        k += w
    return cx, cy, px, py, mx, my, k


@numba.njit(cache=True)
def floor_boids(
    pos, heading, order, width, height, speed, vision, separation, cohere,
    separate, match, home, start, slot_of, sx, sy, hx, hy,
):  # fmt: skip
    n = pos.shape[0]
    most = 1.0
    for a in range(n):
        most = max(most, heading[a, 0] ** 2 + heading[a, 1] ** 2)
    reach = vision + np.sqrt(most) * speed * (1.0 + 1e-9) + 1e-9
    cw = max(1, int(width // reach))
    ch = max(1, int(height // reach))
    while cw > 1 and width / cw < reach:
        cw -= 1
    while ch > 1 and height / ch < reach:
        ch -= 1
    while cw * ch >= start.shape[0]:
        cw = max(1, cw // 2)
        ch = max(1, ch // 2)
    cells = cw * ch
    start[: cells + 1] = 0
    for a in range(n):
        u = min(int(pos[a, 0] / width * cw), cw - 1)
        v = min(int(pos[a, 1] / height * ch), ch - 1)
        home[a] = u * ch + v
        start[home[a] + 1] += 1
    for c in range(cells):
        start[c + 1] += start[c]
    for a in range(n):
        sl = start[home[a]]
        start[home[a]] = sl + 1
        slot_of[a] = sl
        sx[sl], sy[sl] = pos[a, 0], pos[a, 1]
        hx[sl], hy[sl] = heading[a, 0], heading[a, 1]
    for c in range(cells - 1, 0, -1):
        start[c] = start[c - 1]
    start[0] = 0
    vv = vision * vision
    sep2 = separation * separation
    for i in range(n):
        a = order[i]
        me = slot_of[a]
        x, y = sx[me], sy[me]
        u0 = home[a] // ch
        v0 = home[a] % ch
        cx = cy = px = py = mx = my = k = 0.0
        for du in range(-1, 2):
            if du != 0 and (cw == 1 or (cw == 2 and du == 1)):
                continue
            u = (u0 + du) % cw
            for dv in range(-1, 2):
                if dv != 0 and (ch == 1 or (ch == 2 and dv == 1)):
                    continue
                cc = u * ch + (v0 + dv) % ch
                r = _sight(
                    sx, sy, hx, hy, start[cc], start[cc + 1], me, x, y,
                    width, height, vv, sep2,
                )  # fmt: skip
                cx += r[0]
                cy += r[1]
                px += r[2]
                py += r[3]
                mx += r[4]
                my += r[5]
                k += r[6]
        if k > 0:
            nhx = hx[me] + (cx * cohere - px * separate + mx * match) / k
            nhy = hy[me] + (cy * cohere - py * separate + my * match) / k
            norm = np.sqrt(nhx * nhx + nhy * nhy)
            hx[me] = nhx / norm
            hy[me] = nhy / norm
        nx = (x + hx[me] * speed) % width
        ny = (y + hy[me] * speed) % height
        sx[me] = nx if nx < width else 0.0
        sy[me] = ny if ny < height else 0.0
    for a in range(n):
        sl = slot_of[a]
        pos[a, 0], pos[a, 1] = sx[sl], sy[sl]
        heading[a, 0], heading[a, 1] = hx[sl], hy[sl]

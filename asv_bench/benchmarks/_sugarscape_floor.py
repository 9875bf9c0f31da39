"""Bare numba Sugarscape IG: the floor for sparseset.models.SugarscapeIG.

What a numba user writes by hand for mesa-frames' Sugarscape IG rules
(all ants move at once; each claims the best free cell it sees along the
axes, a lottery settles each contested cell, the losers claim their next
cell in the next round; then eat, starve, grow back) on plain arrays:
integer coordinates, the cells' sugar in one flat array that also marks
the held cells, the ants visited in the order of their cells, and dead
ants swapped out of the arrays in the same kernel. ``model / floor`` in
the same run is what the World (its columns, its handles, destroying the
dead through deferred commands) adds.

The names avoid asv's benchmark prefixes because asv imports every module.
"""

import numba
import numpy as np

FREE = np.uint64(0xFFFFFFFFFFFFFFFF)
TOP = np.uint64(0xFFFFFFFF00000000)
NONE = np.int64(0x7FFFFFFFFFFFFFFF)


class SugarscapeFloor:
    """``agents`` ants on a ``width x height`` grid, mesa-frames' draws."""

    def __init__(self, agents, width, height, seed, max_sugar=4):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.width, self.height, self.smax = width, height, max_sugar
        self.fmax = rng.integers(
            0, max_sugar + 1, size=(width, height), dtype=np.int32
        ).reshape(-1)
        self.field = self.fmax.copy()
        self.sugar = rng.integers(6, 25, agents)
        self.metabolism = rng.integers(2, 5, agents)
        self.vision = rng.integers(1, 6, agents)
        self.cell = rng.choice(width * height, size=agents, replace=False)
        self.ids = np.arange(agents, dtype=np.int64)
        self.claims = np.full(width * height, FREE, np.uint64)
        self.work = np.empty((11, agents), np.int64)
        self.n = agents

    def step(self):
        seed = int(self.rng.integers(0, 2**63 - 1))
        self.n = floor_step(
            self.n, self.cell, self.sugar, self.metabolism, self.vision, self.ids,
            self.field, self.fmax, self.width, self.height, self.smax, seed,
            self.claims, *self.work,
        )  # fmt: skip


@numba.njit(cache=True)
def floor_ticket(seed, round_, ident):
    z = (
        np.uint64(seed)
        + np.uint64(ident) * np.uint64(0x9E3779B97F4A7C15)
        + np.uint64(round_) * np.uint64(0xD1B54A32D192ED03)
    )
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True)
def floor_look(c0, v, own, last, field, width, height, smax, unit):
    cells = width * height
    x = c0 // height
    y = c0 - x * height
    best = (smax - own) * unit + c0
    if best <= last:
        best = NONE
    for d in range(1, v + 1):
        if best < unit:
            break
        far = d * cells
        if x + d < width:
            c = c0 + d * height
            s = np.int64(field[c])
            k = (smax - s) * unit + far + c
            if s >= 0 and k > last:
                best = min(best, k)
        if x >= d:
            c = c0 - d * height
            s = np.int64(field[c])
            k = (smax - s) * unit + far + c
            if s >= 0 and k > last:
                best = min(best, k)
        if y + d < height:
            c = c0 + d
            s = np.int64(field[c])
            k = (smax - s) * unit + far + c
            if s >= 0 and k > last:
                best = min(best, k)
        if y >= d:
            c = c0 - d
            s = np.int64(field[c])
            k = (smax - s) * unit + far + c
            if s >= 0 and k > last:
                best = min(best, k)
    return best


@numba.njit(cache=True)
def floor_step(
    n, cell, sugar, metabolism, vision, ids, field, fmax, width, height, smax,
    seed, claims, slot_row, origin, own, gain, last, key, choice, pending, claimed,
    sight, ident,
):  # fmt: skip
    cells = width * height
    span = 1
    for a in range(n):
        span = max(span, vision[a] + 1)
        own[a] = field[cell[a]]  # by row for now
        field[cell[a]] = -1 - a
    unit = span * cells
    m = 0
    for c in range(cells):
        if field[c] < 0:
            slot_row[m] = -1 - field[c]
            m += 1
    for i in range(n):  # working state by slot (cell order)
        a = slot_row[i]
        claimed[i] = own[a]
    for i in range(n):
        a = slot_row[i]
        own[i] = claimed[i]
        gain[i] = claimed[i]
        sight[i] = vision[a]
        ident[i] = ids[a]
        origin[i] = cell[a]
        last[i] = -1
        pending[i] = i
    round_ = 0
    m = n
    while m > 0:
        k = 0
        for j in range(m):
            i = pending[j]
            best = floor_look(
                origin[i], sight[i], own[i], last[i], field, width, height, smax, unit
            )
            if best == NONE:
                key[i] = -1
                choice[i] = origin[i]
                continue
            key[i] = best
            c = best % cells
            choice[i] = c
            t = (floor_ticket(seed, round_, ident[i]) & TOP) | np.uint64(i)
            held = claims[c]
            if held == FREE:
                claimed[k] = c
                k += 1
            if t < held:
                claims[c] = t
        for j in range(k):
            c = claimed[j]
            i = np.int64(claims[c] & ~TOP)
            claims[c] = FREE
            key[i] = -1
            if c != origin[i]:
                gain[i] = field[c]
                field[c] = -1
                field[origin[i]] = own[i]  # vacated, free again
        left = 0
        for j in range(m):
            i = pending[j]
            if key[i] >= 0:
                last[i] = key[i]
                pending[left] = i
                left += 1
        m = left
        round_ += 1
    for i in range(n):
        if choice[i] != origin[i] and field[origin[i]] >= 0:
            field[origin[i]] = fmax[origin[i]]
    for i in range(n):
        a = slot_row[i]
        c = choice[i]
        cell[a] = c
        sugar[a] += gain[i] - metabolism[a]
        field[c] = 0 if sugar[a] > 0 else fmax[c]
    alive = n
    a = 0
    while a < alive:  # swap the dead out
        if sugar[a] > 0:
            a += 1
            continue
        alive -= 1
        cell[a], sugar[a] = cell[alive], sugar[alive]
        metabolism[a], vision[a], ids[a] = metabolism[alive], vision[alive], ids[alive]
    return alive

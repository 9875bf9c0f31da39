"""Bare numba Sugarscape IG: the floor for sparseset.models.SugarscapeIG.

What a numba user writes by hand for mesa-frames' Sugarscape IG rules
(all ants move at once; each claims the best free cell it sees along the
axes, a lottery settles each contested cell, the losers claim their next
cell in the next round; then eat, starve, grow back) on plain arrays:
integer coordinates, the cells' sugar in one flat array that also marks
the held cells, the ants visited by band of columns, vision, then
column (a radix sort), each vision's ants ranking in a loop of that
fixed length (which the compiler unrolls) with no branch on which cells
are held, the placed dropped from the next round with no branch, and
dead ants swapped out of the arrays in the same kernel. ``model / floor`` in
the same run is what the World (its columns, its handles, destroying the
dead through deferred commands) adds.

The names avoid asv's benchmark prefixes because asv imports every module.
"""

import numba
import numpy as np

FREE = np.uint64(0xFFFFFFFFFFFFFFFF)
TOP = np.uint64(0xFFFFFFFF00000000)
BOTTOM = np.uint64(0x00000000FFFFFFFF)
RICH = np.uint64(0x7FFFFFFF)
SHIFT = np.uint64(33)
LOW = np.uint64((1 << 33) - 1)
DONE = np.uint64(0xFFFFFFFFFFFFFFFF)


class SugarscapeFloor:
    """``agents`` ants on a ``width x height`` grid, mesa-frames' draws."""

    def __init__(self, agents, width, height, seed, max_sugar=4):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.width, self.height = width, height
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
        self.tally = np.empty(7 * width + 1, np.int64)
        self.keys = np.empty((3, agents), np.uint64)
        self.work = np.empty((8, agents), np.int32)
        self.n = agents

    def step(self):
        seed = int(self.rng.integers(0, 2**63 - 1))
        self.n = floor_step(
            self.n, self.cell, self.sugar, self.metabolism, self.vision, self.ids,
            self.field, self.fmax, self.width, self.height, seed,
            self.claims, self.tally, *self.keys, *self.work,
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
def floor_key(s, low, after):
    s = np.int64(s)  # held cells (< 0): all ones
    k = ((RICH - np.uint64(s)) << SHIFT) | low | np.uint64(s >> 63)
    return k if k >= after else DONE


@numba.njit(cache=True, inline="always")
def floor_look(c0, x, v, own, after, field, width, height):
    # key: (RICH - sugar) << 33 | 4 d + axis, axes in (x, y) order
    y = c0 - x * height
    best = (RICH - np.uint64(own)) << SHIFT
    if best < after:
        best = DONE
    for d in range(1, v + 1):
        low = np.uint64(4 * d)
        if x >= d:
            k = floor_key(field[np.uint64(c0 - d * height)], low, after)
            best = min(best, k)
        if y >= d:
            k = floor_key(field[np.uint64(c0 - d)], low | np.uint64(1), after)
            best = min(best, k)
        if y + d < height:
            k = floor_key(field[np.uint64(c0 + d)], low | np.uint64(2), after)
            best = min(best, k)
        if x + d < width:
            k = floor_key(field[np.uint64(c0 + d * height)], low | np.uint64(3), after)
            best = min(best, k)
    return best


@numba.njit(cache=True)
def floor_move(key, height):
    low = np.int64(key & LOW)
    d = low >> 2
    axis = low & 3
    along_y = ((axis + 1) >> 1) & 1
    d = ((axis >> 1) * 2 - 1) * d
    return (d - d * along_y) * height + d * along_y


@numba.njit(cache=True, inline="always")
def floor_rank(pending, j, m, end, first, ants, width, height, lim):
    key, after, origin, column, sight, own, field = ants
    while j < m:
        i = pending[j]
        if i >= end:
            break
        j += 1
        if first:
            start = np.uint64(0)
        else:
            start = key[i] + np.uint64(1)
            after[i] = start
        v = lim if lim > 0 else np.int64(sight[i])
        c0, x = np.int64(origin[i]), np.int64(column[i])
        key[i] = floor_look(c0, x, v, own[i], start, field, width, height)
    return j


@numba.njit(cache=True)
def floor_propose(
    pending,
    m,
    first,
    ends,
    groups,
    key,
    after,
    origin,
    column,
    sight,
    own,
    field,
    width,
    height,
):
    if not first:  # drop the placed (no branch)
        left = 0
        for j in range(m):
            i = pending[j]
            pending[left] = i
            left += key[i] != DONE
        m = left
    ants = (key, after, origin, column, sight, own, field)
    # slots grouped by band of columns, then vision 0..5, more: a loop of
    # a fixed length per group
    j = 0
    for group in range(groups):
        end = ends[group]
        g = group % 7
        if first and g == 1:
            j = floor_rank(pending, j, m, end, True, ants, width, height, 1)
        elif first and g == 2:
            j = floor_rank(pending, j, m, end, True, ants, width, height, 2)
        elif first and g == 3:
            j = floor_rank(pending, j, m, end, True, ants, width, height, 3)
        elif first and g == 4:
            j = floor_rank(pending, j, m, end, True, ants, width, height, 4)
        elif first and g == 5:
            j = floor_rank(pending, j, m, end, True, ants, width, height, 5)
        elif not first and g == 1:
            j = floor_rank(pending, j, m, end, False, ants, width, height, 1)
        elif not first and g == 2:
            j = floor_rank(pending, j, m, end, False, ants, width, height, 2)
        elif not first and g == 3:
            j = floor_rank(pending, j, m, end, False, ants, width, height, 3)
        elif not first and g == 4:
            j = floor_rank(pending, j, m, end, False, ants, width, height, 4)
        elif not first and g == 5:
            j = floor_rank(pending, j, m, end, False, ants, width, height, 5)
        elif first:
            j = floor_rank(pending, j, m, end, True, ants, width, height, 0)
        else:
            j = floor_rank(pending, j, m, end, False, ants, width, height, 0)
    return m


@numba.njit(cache=True)
def floor_claim(pending, m, key, after, origin, ident, own, gain, seed, round_,
                claims, claimed, height):  # fmt: skip
    k = 0
    for j in range(m):
        i = pending[j]
        best = key[i]
        if best == DONE:
            after[i] = 0
            gain[i] = own[i]
            continue
        c0 = np.int64(origin[i])
        c = np.uint64(c0 + floor_move(best, height))
        t = (floor_ticket(seed, round_, ident[i]) & TOP) | np.uint64(c0)
        held = claims[c]
        claims[c] = min(t, held)
        claimed[k] = c
        k += held == FREE
    return k


@numba.njit(cache=True)
def floor_settle(claimed, k, claims, field, key, after, own, gain):
    for j in range(k):
        c = np.uint64(claimed[j])
        o = claims[c] & BOTTOM  # the winner's own cell names it
        claims[c] = FREE
        i = np.uint64(-1 - np.int64(field[o]))
        after[i] = key[i]
        key[i] = DONE
        stays = c == o
        gain[i] = own[i] if stays else field[c]
        field[c] = -1
        field[o] = -1 if stays else own[i]


@numba.njit(cache=True)
def floor_step(
    n, cell, sugar, metabolism, vision, ids, field, fmax, width, height, seed,
    claims, tally, ident, after, key, slot_row, origin, column, sight, own, gain,
    pending, claimed,
):  # fmt: skip
    # ants by band of columns (about 65k cells: their sugar and claims fit
    # in cache), then vision group, then column (a radix sort): neighbours
    # read the same cells, each group looks as far as it sees in a loop
    # of a fixed length
    band = max(1, (1 << 16) // height)
    groups = (width + band - 1) // band * 7
    tally[: width + 1] = 0
    for a in range(n):
        x = cell[a] // height
        claimed[a] = x
        tally[x + 1] += 1
    for x in range(width):
        tally[x + 1] += tally[x]
    for a in range(n):
        x = claimed[a]
        pending[tally[x]] = a
        tally[x] += 1
    tally[:groups] = 0
    base = 0  # the band's first group, walking the ants by column
    past = band
    for j in range(n):
        a = pending[j]
        while claimed[a] >= past:
            base += 7
            past += band
        g = base + min(max(vision[a], 0), 6)
        gain[j] = g
        tally[g] += 1
    start = 0
    for g in range(groups):
        start += tally[g]
        tally[g] = start - tally[g]
    for j in range(n):
        g = gain[j]
        slot_row[tally[g]] = pending[j]
        tally[g] += 1
    for i in range(n):
        a = slot_row[i]
        c = cell[a]
        own[i] = field[c]
        field[c] = -1 - i
        origin[i] = c
        column[i] = claimed[a]
        sight[i] = vision[a]
        ident[i] = ids[a]
        after[i] = 0
        pending[i] = i
    round_ = 0
    m = n
    while m > 0:
        m = floor_propose(
            pending,
            m,
            round_ == 0,
            tally,
            groups,
            key,
            after,
            origin,
            column,
            sight,
            own,
            field,
            width,
            height,
        )
        k = floor_claim(pending, m, key, after, origin, ident, own, gain, seed,
                        round_, claims, claimed, height)  # fmt: skip
        floor_settle(claimed, k, claims, field, key, after, own, gain)
        round_ += 1
    for i in range(n):
        if after[i] & LOW and field[origin[i]] >= 0:
            field[origin[i]] = fmax[origin[i]]
    for i in range(n):
        a = slot_row[i]
        c = origin[i] + floor_move(after[i], height)
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

"""mesa-frames' Sugarscape IG (instant growback) on a World.

mesa-frames' ``examples/sugarscape_ig`` (its parallel ``AntsParallel``
variant, the one its benchmarks time): ants with ``sugar``,
``metabolism`` and ``vision`` on a ``width x height`` grid (not a
torus, one ant a cell) whose cells hold sugar up to their own maximum.
Each step every ant ranks the cells it sees (its own and those up to
``vision`` away along the four axes) by sugar (most first), then
distance, then coordinates; all ants claim at once, each cell goes to a
random claimant, the losers claim their next-ranked free cell in the
next round, and so on until every ant has a cell. Then each ant eats its
cell's sugar and burns its metabolism, ants with no sugar left die, and
every empty cell grows back to its maximum at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..recording import Recorder
from ..schedule import Schedule
from ..world import World
from ..world.commands import Commands
from .boltzmann import gini_of
from .parameters import positive_ints

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_ROUND = np.uint64(0xD1B54A32D192ED03)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_MASK = (1 << 64) - 1

#: mesa-frames' trait draws: integers in [low, high).
SUGAR = (6, 25)
METABOLISM = (2, 5)
VISION = (1, 6)


@njit(cache=True)
def lottery(seed: Any, round_: Any, handle: Any) -> Any:
    """An ant's lottery ticket in one round of one step: splitmix64 of the
    step's seed, the round and the ant's handle (the lowest ticket wins).

    A function of the three alone, so the draw does not depend on the
    order the ants are visited in; :func:`lottery_py` is the same in
    Python.
    """
    z = np.uint64(seed) + np.uint64(handle) * _GOLDEN + np.uint64(round_) * _ROUND
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def lottery_py(seed: int, round_: int, handle: int) -> int:
    """:func:`lottery` in plain Python integers.

    Examples
    --------
    >>> lottery_py(1, 2, 3) == int(lottery(1, 2, 3))
    True
    """
    z = (seed + handle * 0x9E3779B97F4A7C15 + round_ * 0xD1B54A32D192ED03) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


#: The groups of ants in a band of columns: vision 0, 1, ..., 5, more.
_GROUPS = 7
#: About how many cells a band of columns holds: their sugar and claims
#: (12 bytes a cell) and those of the columns either side fit in cache.
_BAND = 1 << 16

#: A rank key: ``(_RICH - sugar) << _SHIFT | (4 * distance + axis)`` with
#: axis 0..3 for ``x - d``, ``y - d``, ``y + d``, ``x + d`` (the cells'
#: order by ``x`` then ``y`` among those ``d`` away), so the least key is
#: the most sugar, then the nearest, then the least ``x`` and ``y``. A
#: cell holds at most ``_RICH`` sugar (``int32``) and a distance is below
#: 2**31, so a key fits 64 bits unsigned whatever the grid.
_RICH = np.uint64(0x7FFFFFFF)
_SHIFT = np.uint64(33)
_LOW = np.uint64((1 << 33) - 1)
_DONE = np.uint64(0xFFFFFFFFFFFFFFFF)  # no key: placed, or nowhere to go


@njit(cache=True)
def _key(s: Any, low: Any, after: Any) -> Any:
    """The key of a seen cell holding ``s`` at ``low`` (distance and
    axis); ``_DONE`` if the cell is held (``s`` < 0) or the key below
    ``after``. Arithmetic and selects, no branches: which cells are held
    is random, a branch on it mispredicts."""
    s = np.int64(s)
    k = ((_RICH - np.uint64(s)) << _SHIFT) | low | np.uint64(s >> 63)
    return k if k >= after else _DONE


@njit(cache=True, inline="always")
def _first(
    c0: Any,
    x: Any,
    v: Any,
    own: Any,
    after: Any,
    field: Any,
    height: Any,
    width: Any,
) -> Any:
    """The least key of the cells an ant on cell ``c0`` (column ``x``) with
    vision ``v`` sees that is at least ``after`` and free (``field`` >= 0;
    its own cell, holding ``own``, is free to it); ``_DONE`` if none."""
    y = c0 - x * height
    best = (_RICH - np.uint64(own)) << _SHIFT
    if best < after:
        best = _DONE
    for d in range(1, v + 1):
        low = np.uint64(4 * d)
        if x >= d:
            k = _key(field[np.uint64(c0 - d * height)], low, after)
            best = min(best, k)
        if y >= d:
            k = _key(field[np.uint64(c0 - d)], low | np.uint64(1), after)
            best = min(best, k)
        if y + d < height:
            k = _key(field[np.uint64(c0 + d)], low | np.uint64(2), after)
            best = min(best, k)
        if x + d < width:
            k = _key(field[np.uint64(c0 + d * height)], low | np.uint64(3), after)
            best = min(best, k)
    return best


@njit(cache=True)
def _move(key: Any, height: Any) -> Any:
    """``(dx, offset)``: how far along ``x`` the cell a key names lies and
    its offset in the flat cells (arithmetic, not branches on the axis,
    which the ranks would mispredict)."""
    low = np.int64(key & _LOW)
    d = low >> 2
    axis = low & 3
    along_y = ((axis + 1) >> 1) & 1  # axes 1 and 2
    d = ((axis >> 1) * 2 - 1) * d  # axes 0 and 1 go down
    dx = d - d * along_y
    return dx, dx * height + d * along_y


@njit(cache=True, inline="always")
def _rank(
    pending: Any,
    j: Any,
    m: Any,
    end: Any,
    first: Any,
    ants: Any,
    height: Any,
    width: Any,
    lim: Any,
) -> Any:
    """:func:`_propose`'s loop over ``pending[j:m]`` while the slots are
    below ``end``: each ant looks ``lim`` cells along each axis (its
    vision), or as far as it sees if ``lim`` is 0. ``ants`` holds the
    working arrays ``key``, ``after``, ``origin``, ``column``, ``sight``,
    ``own`` and ``field``. Returns the new ``j``."""
    key, after, origin, column, sight, own, field = ants
    while j < m:
        i = pending[j]
        if i >= end:
            break
        j += 1
        if first:
            start = np.uint64(0)  # a constant: the compiler drops the test
        else:
            start = key[i] + np.uint64(1)  # lost: on to the next
            after[i] = start
        v = lim if lim > 0 else np.int64(sight[i])
        c0 = np.int64(origin[i])
        x = np.int64(column[i])
        key[i] = _first(c0, x, v, own[i], start, field, height, width)
    return j


@njit(cache=True)
def _propose(
    pending: Any,
    m: Any,
    first: Any,
    ends: Any,
    groups: Any,
    key: Any,
    after: Any,
    origin: Any,
    column: Any,
    sight: Any,
    own: Any,
    field: Any,
    height: Any,
    width: Any,
) -> Any:
    """Rank for the ``m`` ants in ``pending`` (in slot order), dropping
    those placed (key ``_DONE``) unless this is the ``first`` round and
    moving the others' ``after`` past the key they lost; returns how many
    are left.

    The slots come in ``groups`` groups, group ``g`` from ``ends[g - 1]``
    (0 for ``g`` 0) to ``ends[g]``, of the ants of vision ``g % 7`` (0 to
    5, and 6 for more): each group looks as far as it sees in a loop of
    that fixed length, which the compiler unrolls (a loop of a length
    that changes from ant to ant mispredicts its end)."""
    if not first:  # drop the placed, with no branch on which they are
        left = 0
        for j in range(m):
            i = pending[j]
            pending[left] = i
            left += key[i] != _DONE
        m = left
    ants = (key, after, origin, column, sight, own, field)
    j = 0
    for group in range(groups):
        end = ends[group]
        g = group % _GROUPS
        if first and g == 1:
            j = _rank(pending, j, m, end, True, ants, height, width, 1)
        elif first and g == 2:
            j = _rank(pending, j, m, end, True, ants, height, width, 2)
        elif first and g == 3:
            j = _rank(pending, j, m, end, True, ants, height, width, 3)
        elif first and g == 4:
            j = _rank(pending, j, m, end, True, ants, height, width, 4)
        elif first and g == 5:
            j = _rank(pending, j, m, end, True, ants, height, width, 5)
        elif not first and g == 1:
            j = _rank(pending, j, m, end, False, ants, height, width, 1)
        elif not first and g == 2:
            j = _rank(pending, j, m, end, False, ants, height, width, 2)
        elif not first and g == 3:
            j = _rank(pending, j, m, end, False, ants, height, width, 3)
        elif not first and g == 4:
            j = _rank(pending, j, m, end, False, ants, height, width, 4)
        elif not first and g == 5:
            j = _rank(pending, j, m, end, False, ants, height, width, 5)
        elif first:  # no vision, or more than 5: as far as each sees
            j = _rank(pending, j, m, end, True, ants, height, width, 0)
        else:
            j = _rank(pending, j, m, end, False, ants, height, width, 0)
    return m


@njit(cache=True)
def _claim(
    pending: Any,
    m: Any,
    key: Any,
    after: Any,
    origin: Any,
    hand: Any,
    own: Any,
    gain: Any,
    seed: Any,
    round_: Any,
    claims: Any,
    claimed: Any,
    height: Any,
) -> Any:
    """Each of the ``m`` ants in ``pending`` claims the cell its key names
    with its ticket; lists the cells claimed in ``claimed``, returns how
    many. An ant with no key stays (mesa-frames' fallback, ``after`` 0)."""
    k = 0
    for j in range(m):
        i = pending[j]
        best = key[i]
        if best == _DONE:  # nothing left: stays, placed
            after[i] = 0
            gain[i] = own[i]
            continue
        c0 = np.int64(origin[i])
        cell = c0 + _move(best, height)[1]
        t = (lottery(seed, round_, hand[i]) & _TOP) | np.uint64(c0)
        held = claims[np.uint64(cell)]
        claims[np.uint64(cell)] = min(t, held)
        claimed[k] = cell
        k += held == _FREE  # the first claim lists the cell
    return k


@njit(cache=True)
def _settle(
    claimed: Any,
    k: Any,
    claims: Any,
    field: Any,
    key: Any,
    after: Any,
    own: Any,
    gain: Any,
) -> None:
    """Each of the ``k`` cells in ``claimed`` goes to its least ticket: the
    winner takes it (its ``after`` now its key, ``key`` ``_DONE``),
    vacating its own."""
    for j in range(k):
        cell = np.uint64(claimed[j])
        c = claims[cell] & _BOTTOM
        claims[cell] = _FREE
        b = np.uint64(-1 - np.int64(field[c]))  # an unplaced ant holds its own
        after[b] = key[b]
        key[b] = _DONE
        stays = cell == c
        gain[b] = own[b] if stays else field[cell]
        field[cell] = -1
        field[c] = -1 if stays else own[b]


#: An unclaimed cell in the claims table; a claim is the top half of the
#: ant's ticket over its cell, so the least claim holds the least ticket.
_FREE = np.uint64(0xFFFFFFFFFFFFFFFF)
_TOP = np.uint64(0xFFFFFFFF00000000)
_BOTTOM = np.uint64(0x00000000FFFFFFFF)


@njit(cache=True)
def sugarscape_step(
    pos: Any,
    sugar: Any,
    metabolism: Any,
    vision: Any,
    handles: Any,
    field: Any,
    field_max: Any,
    width: Any,
    height: Any,
    seed: Any,
    claims: Any,
    tally: Any,
    hand: Any,
    after: Any,
    key: Any,
    row: Any,
    origin: Any,
    sight: Any,
    own: Any,
    column: Any,
    gain: Any,
    pending: Any,
    claimed: Any,
    dead: Any,
) -> Any:
    """One step of Sugarscape IG for the ants in rows ``0..n-1`` (fewer than
    2**31 ants and cells):
    move (rounds of claims and lotteries), eat, starve, grow back.

    ``field`` (the cells' sugar), ``field_max`` and ``claims`` (all
    ``_FREE`` on entry and on exit) are flat over the cells ``x * height
    + y``; while the ants move, a cell held by an ant holds a negative
    number in ``field``. ``tally`` holds ``7 * width + 1`` entries; the
    other arrays hold one entry per ant at least: the ants' working state,
    in the order the step visits them (slots).
    Writes the rows of the ants that starved into ``dead`` and their
    cells at the start into ``pending``, and returns how many; changing
    nothing, -1 if two ants share a cell, -2 if one stands outside the
    grid.
    """
    n = pos.shape[0]
    reach = max(width, height)
    for a in range(n):
        x = pos[a, 0]
        y = pos[a, 1]
        if not (0 <= x < width and 0 <= y < height):
            return -2
    # The ants in bands of columns (about _BAND cells each), within a band
    # by vision (0, 1, ..., 5, more), then by column (slots), by a radix
    # sort, O(n + width): neighbours look at the same cells one after the
    # other, from cache (a band and its edges fit in it), their working
    # state is read in order, and each group ranks in a loop of a fixed
    # length. Nothing else depends on the order: a cell goes to the least
    # ticket, a ticket ties (1 in 2**32) to the ant on the lower cell, and
    # the dead are destroyed in the order of their cells.
    band = max(1, _BAND // height)
    groups = (width + band - 1) // band * _GROUPS
    tally[: width + 1] = 0
    for a in range(n):
        x = np.int64(pos[a, 0])
        pending[a] = x
        tally[x + 1] += 1
    for x in range(width):
        tally[x + 1] += tally[x]
    for a in range(n):
        x = pending[a]
        claimed[tally[x]] = a
        tally[x] += 1
    tally[:groups] = 0
    base = 0  # the first group of the band of the columns ``x`` is in
    past = band  # the column past that band
    for j in range(n):  # by column: the bands go up one at a time
        a = claimed[j]
        x = pending[a]
        while x >= past:
            base += _GROUPS
            past += band
        g = base + min(max(vision[a], 0), _GROUPS - 1)
        gain[j] = g
        tally[g] += 1
    start = 0
    for g in range(groups):
        start += tally[g]
        tally[g] = start - tally[g]
    for j in range(n):
        g = gain[j]
        row[tally[g]] = claimed[j]
        tally[g] += 1  # now the end of group g
    for i in range(n):
        a = row[i]
        c = np.int64(pos[a, 0]) * height + np.int64(pos[a, 1])
        s = field[c]
        if s < 0:  # two ants on one cell: put the field back, refuse
            for j in range(i - 1, -1, -1):
                field[origin[j]] = own[j]
            return -1
        own[i] = s
        field[c] = -1 - i  # held, and by whom
        origin[i] = c
        column[i] = pos[a, 0]
        sight[i] = max(min(vision[a], reach), 0)
        hand[i] = np.uint64(handles[a])
        after[i] = 0
        pending[i] = i
    m = n
    round_ = 0
    while m > 0:
        m = _propose(
            pending, m, round_ == 0, tally, groups, key, after, origin, column,
            sight, own, field, height, width,
        )  # fmt: skip
        k = _claim(
            pending, m, key, after, origin, hand, own, gain, seed, round_,
            claims, claimed, height,
        )  # fmt: skip
        _settle(claimed, k, claims, field, key, after, own, gain)
        round_ += 1
    for i in range(n):  # cells left empty grow back
        c = origin[i]
        if after[i] & _LOW and field[c] >= 0:  # it moved, none came
            field[c] = field_max[c]
    gone = 0
    for i in range(n):
        a = row[i]
        dx, step = _move(after[i], height)
        cell = np.int64(origin[i]) + step
        x = np.int64(column[i]) + dx
        pos[a, 0] = x
        pos[a, 1] = cell - x * height
        sugar[a] += gain[i] - metabolism[a]
        if sugar[a] <= 0:
            dead[gone] = a
            pending[gone] = origin[i]
            gone += 1
            field[cell] = field_max[cell]
        else:
            field[cell] = 0
    return gone


def _safe_corr(x: np.ndarray, y: np.ndarray) -> float:
    """mesa-frames' ``_safe_corr``: Pearson's r, NaN for fewer than two
    values or a constant one."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    if x.size < 2 or np.allclose(x, x[0]) or np.allclose(y, y[0]):
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


class SugarscapeIG:
    """mesa-frames' Sugarscape IG: ants move at once to the best cell they
    see, eat, and starve; empty cells grow back at once.

    ``agents`` ants on a ``width x height`` grid (not a torus, at most
    one ant a cell). Each cell's maximum sugar is uniform in ``[0,
    max_sugar]`` and the cell starts full; each ant starts with sugar
    uniform in [6, 24], metabolism in [2, 4] and vision in [1, 5], on a
    distinct uniformly random cell. A step:

    1. *Move*, all ants at once. Each ant ranks the cells it sees, its
       own and those at most ``vision`` away along the four axes (the von
       Neumann rays mesa-frames' ``get_neighborhood`` gives), by sugar
       (most first), distance (least first), then ``x`` and ``y``. A
       cell is free if no ant stood on it at the start of the step, or
       its ant has moved away in an earlier round; an ant's own cell is
       free to it. In each round every ant still unplaced claims its
       best-ranked free cell ranked after the cell it lost last round;
       each claimed cell goes to one claimant by lottery; the losers go
       on to the next round.
    2. *Eat*: each ant adds its cell's sugar and takes away its
       metabolism; the cell is left with none.
    3. *Starve*: ants with no sugar left (``<= 0``) are destroyed.
    4. *Grow back*: every empty cell holds its maximum again.

    The ants are entities of ``world`` with components ``sugar``,
    ``metabolism``, ``vision`` (``i8``) and ``pos`` (``f8``, two per row,
    integer cell coordinates), an owning group of the four (one order,
    no lookups); ``grid`` is ``world.grid("pos")``. The
    cells' sugar is ``sugar`` and their maximum ``max_sugar_grid``
    (``int32`` arrays of shape ``(width, height)``). A step runs
    ``schedule``, a :class:`~sparseset.Schedule` of one system,
    ``"ants"``: the compiled pass, then the starved ants destroyed by the
    system's deferred commands as its batch ends.

    Differences from mesa-frames': the lottery draws come from a hash of
    the step's seed, the round and the ant's handle (mesa-frames draws
    uniform floats in the order of its frame), and the initial draws
    from numpy's generator seeded by ``seed``: the same seed gives the
    same run (on any number of threads), not mesa-frames' run; the
    agreement is statistical and tested so. An ant with no free cell
    left stays where it is, as mesa-frames' fallback says (its own cell
    is always free to it, so this does not happen). Mesa's sequential
    variant (``backend_mesa``: one ant at a time, in a shuffled order) is
    a different model and not this one. Recording is off unless
    ``record=True``, which makes ``recorder`` a
    :class:`~sparseset.Recorder` of mesa-frames' reporters per step
    (``mean_sugar``, ``total_sugar``, ``agents_alive``, ``gini``,
    ``corr_sugar_metabolism``, ``corr_sugar_vision``) and each ant's
    ``sugar``, ``metabolism`` and ``vision``.

    Parameters
    ----------
    agents : int
        The number of ants, at most ``width * height``.
    width, height : int
        The grid's size.
    seed : int, optional
        Seeds every draw; None draws fresh entropy.
    max_sugar : int
        The largest maximum sugar of a cell (mesa-frames' ``max_sugar``).
    record : bool
        Record at the start and after every step.

    Raises
    ------
    ValueError
        If a size is below 1 (``max_sugar`` below 0), or there are more
        ants than cells.
    TypeError
        If a size is not an int.

    Examples
    --------
    >>> m = SugarscapeIG(agents=400, width=40, height=40, seed=1)
    >>> m.run(20)
    >>> 0 < m.alive < 400, m.mean_sugar() > 0
    (True, True)
    """

    def __init__(
        self,
        agents: int = 400,
        width: int = 40,
        height: int = 40,
        seed: int | None = None,
        *,
        max_sugar: int = 4,
        record: bool = False,
    ) -> None:
        positive_ints(agents=agents, width=width, height=height)
        if isinstance(max_sugar, bool) or not isinstance(max_sugar, (int, np.integer)):
            raise TypeError(f"max_sugar must be an int, got {max_sugar!r}")
        if max_sugar < 0:
            raise ValueError(f"max_sugar must be at least 0, got {max_sugar}")
        cells = int(width) * int(height)
        if cells >= 2**31:
            raise ValueError(
                f"a {width} x {height} grid has {cells} cells: at most 2**31 - 1"
            )
        if agents > cells:
            raise ValueError(
                f"agents={agents} do not fit on {width} x {height} = {cells} "
                "cells of one ant each"
            )
        if max_sugar >= 2**31 - 1:
            raise ValueError(
                f"max_sugar={max_sugar} is too large for int32 cells: at most "
                f"{2**31 - 2}"
            )
        self.num_agents = int(agents)
        self.width = int(width)
        self.height = int(height)
        self.max_sugar = int(max_sugar)
        self.rng = np.random.default_rng(seed)
        rng = self.rng
        # mesa-frames' order of draws: the field, the traits, the places.
        self.max_sugar_grid = rng.integers(
            0, self.max_sugar + 1, size=(self.width, self.height), dtype=np.int32
        )
        self.sugar = self.max_sugar_grid.copy()
        n = self.num_agents
        sugar = rng.integers(*SUGAR, size=n, dtype=np.int64)
        metabolism = rng.integers(*METABOLISM, size=n, dtype=np.int64)
        vision = rng.integers(*VISION, size=n, dtype=np.int64)
        where = rng.choice(cells, size=n, replace=False)
        xy = np.column_stack((where // self.height, where % self.height))
        w = World()
        w.register("sugar", "i8")
        w.register("metabolism", "i8")
        w.register("vision", "i8")
        w.register("pos", "f8", shape=(2,))
        ants = w.create(n)
        w.add("sugar", ants, sugar=sugar)
        w.add("metabolism", ants, metabolism=metabolism)
        w.add("vision", ants, vision=vision)
        w.add("pos", ants, pos=xy.astype(np.float64))
        self.world = w
        self.agents = ants
        self.grid = w.grid("pos", cell=1.0)
        # One order for the four components, kept through every destroy:
        # a step reads four aligned blocks, with no lookups.
        self._ants = w.group("sugar", "metabolism", "vision", "pos")
        self.steps = 0
        #: The step: one system, the ants' move, meal, starving and the
        #: grass's growth in one compiled pass; the starved ants are
        #: destroyed by its deferred commands as its batch ends.
        self.schedule = Schedule()
        self.schedule.add(
            self._ants_system,
            reads=("metabolism", "vision"),
            writes=("sugar", "pos"),
            name="ants",
        )
        self._claims = np.full(cells, _FREE, np.uint64)
        self._tally = np.empty(_GROUPS * self.width + 1, np.int64)
        self._wide = np.empty((3, n), np.uint64)  # handles, keys
        self._narrow = np.empty((9, n), np.int32)  # rows, cells, sugar
        self.recorder: Recorder | None = None
        if record:
            self.recorder = Recorder(
                self,
                model={
                    "mean_sugar": "mean_sugar",
                    "total_sugar": "total_sugar",
                    "agents_alive": "alive",
                    "gini": "gini",
                    "corr_sugar_metabolism": "corr_sugar_metabolism",
                    "corr_sugar_vision": "corr_sugar_vision",
                },
                agents={
                    "sugar": "sugar",
                    "metabolism": "metabolism",
                    "vision": "vision",
                },
            )
            self.recorder.collect(step=0)

    @property
    def alive(self) -> int:
        """The number of living ants (mesa-frames' ``agents_alive``). O(1)."""
        return len(self.world["pos"])

    @property
    def running(self) -> bool:
        """Whether any ant is alive (mesa-frames stops when none is). O(1)."""
        return self.alive > 0

    def _columns(self) -> tuple[np.ndarray, ...]:
        w = self.world
        g = self._ants
        n = len(g)
        for name in g.components:
            if len(w[name]) != n:
                raise RuntimeError(
                    f"the {name} component holds {len(w[name])} ants, "
                    f"not the {n} holding all of sugar, metabolism, vision and pos"
                )
        return g["pos"], g["sugar"], g["metabolism"], g["vision"], g.ids

    def step(self) -> None:
        """Move every ant at once, then eat, starve and grow back: a run of
        :attr:`schedule`, whose one system, ``"ants"``, records the
        starved ants' destruction in its deferred commands.

        Nothing happens once every ant has died (mesa-frames' model stops).

        O(n v + width) for n ants of vision up to v, plus O(l v) a
        further round for the l ants that lost a lottery in the one
        before.

        Raises
        ------
        RuntimeError
            If the world's ``sugar``, ``metabolism``, ``vision`` and
            ``pos`` no longer hold the same ants in the same order (ants
            added or removed by hand).
        ValueError
            If two ants share a cell or one stands off the grid (placed by
            hand), or ``sugar`` or ``max_sugar_grid`` was replaced by an
            array of another shape, dtype or layout; nothing changes.
        """
        if len(self._ants) == 0:
            self._columns()  # raises if the components hold other ants
            return
        self.schedule.run(self.world)
        self.steps += 1
        if self.recorder is not None:
            self.recorder.collect(step=self.steps)

    def _ants_system(self, world: World, commands: Commands) -> None:
        """The step's one system: the kernel, then the starved ants'
        destruction recorded in ``commands`` (see :meth:`step`)."""
        pos, sugar, metabolism, vision, handles = self._columns()
        n = handles.shape[0]
        shape = (self.width, self.height)
        for name in ("sugar", "max_sugar_grid"):
            cells = getattr(self, name)
            if not (
                isinstance(cells, np.ndarray)
                and cells.shape == shape
                and cells.dtype == np.int32
                and cells.flags.c_contiguous
                and cells.flags.writeable
            ):
                raise ValueError(
                    f"{name} must be a writable C-contiguous int32 array of "
                    f"shape {shape}, got {type(cells).__name__} "
                    f"{getattr(cells, 'dtype', '')} {getattr(cells, 'shape', '')}"
                )
        if self._wide.shape[1] < n:
            self._wide = np.empty((3, n), np.uint64)
            self._narrow = np.empty((9, n), np.int32)
        rows = (*self._wide, *self._narrow)
        seed = int(self.rng.integers(0, 2**63 - 1))
        gone = sugarscape_step(
            pos, sugar, metabolism, vision, handles,
            self.sugar.reshape(-1), self.max_sugar_grid.reshape(-1),
            self.width, self.height, seed,
            self._claims, self._tally, *rows,
        )  # fmt: skip
        if gone == -1:
            raise ValueError("two ants share a cell: each cell holds one ant at most")
        if gone == -2:
            out = (pos[:, 0] < 0) | (pos[:, 0] >= self.width)
            out |= (pos[:, 1] < 0) | (pos[:, 1] >= self.height)
            a = int(np.argmax(out))
            raise ValueError(
                f"ant {int(handles[a])} (row {a}) stands outside the "
                f"{self.width} x {self.height} grid, at {pos[a].tolist()}"
            )
        if gone:
            # In the order of their cells at the start of the step, whatever
            # order the kernel took them in: the World's rows after the
            # destroy follow from it.
            dead = rows[-1][:gone][np.argsort(rows[-3][:gone])]
            commands.destroy(handles[dead])

    def run(self, steps: int) -> None:
        """Run ``steps`` steps, fewer if every ant dies first. O(steps n v)."""
        for _ in range(int(steps)):
            if not self.running:
                break
            self.step()

    def mean_sugar(self) -> float:
        """The living ants' mean sugar, 0.0 with none (mesa-frames'
        ``mean_sugar``). O(n)."""
        s = self.world["sugar"]["sugar"]
        return float(s.mean()) if s.shape[0] else 0.0

    def total_sugar(self) -> float:
        """The sugar the living ants hold (mesa-frames' ``total_sugar``). O(n)."""
        return float(self.world["sugar"]["sugar"].sum())

    def gini(self) -> float:
        """The Gini coefficient of the ants' sugar, NaN with no ant
        (mesa-frames' ``gini``). O(n log n)."""
        s = self.world["sugar"]["sugar"]
        if s.shape[0] == 0:
            return float("nan")
        return gini_of(s) if s.sum() > 0 else 0.0

    def corr_sugar_metabolism(self) -> float:
        """Pearson's r of sugar and metabolism over the ants, NaN when
        undefined (mesa-frames' reporter). O(n)."""
        w = self.world
        return _safe_corr(w["sugar"]["sugar"], w["metabolism"]["metabolism"])

    def corr_sugar_vision(self) -> float:
        """Pearson's r of sugar and vision over the ants, NaN when
        undefined (mesa-frames' reporter). O(n)."""
        w = self.world
        return _safe_corr(w["sugar"]["sugar"], w["vision"]["vision"])

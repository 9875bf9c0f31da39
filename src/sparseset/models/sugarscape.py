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
from ..world import World
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


_NONE = np.int64(0x7FFFFFFFFFFFFFFF)


@njit(cache=True)
def _best(
    c0: Any,
    v: Any,
    own_sugar: Any,
    last: Any,
    field: Any,
    height: Any,
    width: Any,
    smax: Any,
    span: Any,
) -> Any:
    """The first-ranked cell an ant on cell ``c0`` with vision ``v`` sees
    that ranks after ``last`` and is free (``field`` >= 0; its own cell,
    holding ``own_sugar``, is free to it), as ``(key, cell)``; ``(-1,
    -1)`` if none. A key orders (most sugar, least distance, cell) as one
    int64: ``((smax - sugar) * span + distance) * cells + cell``."""
    cells = width * height
    unit = span * cells  # one unit of sugar in a key
    x = c0 // height
    y = c0 - x * height
    best = (smax - own_sugar) * unit + c0
    if best <= last:
        best = _NONE
    for d in range(1, v + 1):
        if best < unit:  # the most sugar there is, nearer than d
            break
        far = d * cells
        # Written out per axis, without branches on the keys: the
        # comparisons become selects, which the ranks do not mispredict.
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
    if best == _NONE:
        return np.int64(-1), np.int64(-1)
    return best, best % cells


#: An unclaimed cell in the claims table; a claim is the top half of the
#: ant's ticket over its row, so the least claim holds the least ticket.
_FREE = np.uint64(0xFFFFFFFFFFFFFFFF)
_TOP = np.uint64(0xFFFFFFFF00000000)


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
    hand: Any,
    last: Any,
    key: Any,
    row: Any,
    origin: Any,
    sight: Any,
    own_sugar: Any,
    choice: Any,
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
    number in ``field``. The other arrays hold one entry per ant at
    least: the ants' working state, in the order of their cells (slots).
    Writes the rows of the ants that starved into ``dead`` and returns
    how many; changing nothing, -1 if two ants share a cell, -2 if one
    stands outside the grid, -3 if a cell holds too much sugar to rank by.
    """
    n = pos.shape[0]
    cells = width * height
    reach = max(width, height)
    span = 1  # distances run from 0 to the largest vision (in reach)
    for a in range(n):
        span = max(span, min(int(vision[a]), reach) + 1)
        x = pos[a, 0]
        y = pos[a, 1]
        if not (0 <= x < width and 0 <= y < height):
            return -2
    for a in range(n):
        c = np.int64(pos[a, 0]) * height + np.int64(pos[a, 1])
        claimed[a] = field[c]  # its cell's sugar, by row for now
        field[c] = -1 - a  # held, and by whom
    # The ants in the order of their cells (slots): neighbours look at the
    # same cells one after the other, from cache, and their working state
    # is read in order. Nothing else depends on the order: a cell goes to
    # the least ticket, and a ticket ties (1 in 2**32) to the lower slot.
    m = 0
    smax = np.int64(0)  # the most sugar a cell holds: it bounds the keys
    for c in range(width * height):
        s = np.int64(field[c])
        if s < 0:
            r = -1 - s
            row[m] = r
            hand[m] = handles[r]
            origin[m] = c
            sight[m] = min(np.int64(vision[r]), reach)
            own_sugar[m] = claimed[r]
            smax = max(smax, claimed[r])
            last[m] = -1
            pending[m] = m
            m += 1
        else:
            smax = max(smax, s)
    fault = 0
    if m != n:  # two ants on one cell
        fault = -1
    elif smax + 1 >= (1 << 62) // (span * cells):  # keys would overflow
        fault = -3
    if fault:  # put the field back, refuse
        for a in range(n - 1, -1, -1):
            field[np.int64(pos[a, 0]) * height + np.int64(pos[a, 1])] = claimed[a]
        return fault
    round_ = 0
    while m > 0:
        k = 0  # cells claimed this round
        for j in range(m):
            i = pending[j]
            ki, cell = _best(
                origin[i], sight[i], own_sugar[i], last[i],
                field, height, width, smax, span,
            )  # fmt: skip
            key[i] = ki
            if ki < 0:  # nothing left: stays (mesa-frames' fallback)
                choice[i] = origin[i]
                gain[i] = own_sugar[i]
                continue
            choice[i] = cell
            t = (lottery(seed, round_, hand[i]) & _TOP) | np.uint64(i)
            held = claims[cell]
            if held == _FREE:
                claimed[k] = cell
                k += 1
            if t < held:
                claims[cell] = t
        for j in range(k):  # winners take their cells, vacating their own
            cell = claimed[j]
            b = np.int64(claims[cell] & ~_TOP)
            claims[cell] = _FREE
            key[b] = -1
            c = origin[b]
            if cell == c:
                gain[b] = own_sugar[b]
            else:
                gain[b] = field[cell]
                field[cell] = -1
                field[c] = own_sugar[b]
        left = 0
        for j in range(m):
            i = pending[j]
            if key[i] >= 0:  # lost: on to the next-ranked cell
                last[i] = key[i]
                pending[left] = i
                left += 1
        m = left
        round_ += 1
    for i in range(n):  # cells left empty grow back
        c = origin[i]
        if choice[i] != c and field[c] >= 0:
            field[c] = field_max[c]
    gone = 0
    for i in range(n):
        a = row[i]
        cell = choice[i]
        pos[a, 0] = cell // height
        pos[a, 1] = cell % height
        sugar[a] += gain[i] - metabolism[a]
        if sugar[a] <= 0:
            dead[gone] = a
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
    (``int32`` arrays of shape ``(width, height)``).

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
        span = max(int(width), int(height)) + 1  # distances ranked: 0 .. reach
        if max_sugar >= 2**31 - 1 or (int(max_sugar) + 1) * span * cells >= 2**62:
            raise ValueError(
                f"max_sugar={max_sugar} on {width} x {height} cells is too large "
                "to rank the cells by"
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
        self._claims = np.full(cells, _FREE, np.uint64)
        self._wide = np.empty((3, n), np.int64)
        self._narrow = np.empty((9, n), np.int32)  # rows, slots, cells, sugar
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
        """Move every ant at once, then eat, starve and grow back.

        Nothing happens once every ant has died (mesa-frames' model stops).

        O(n v) for n ants of vision up to v, plus O(l v) a further round
        for the l ants that lost a lottery in the one before.

        Raises
        ------
        RuntimeError
            If the world's ``sugar``, ``metabolism``, ``vision`` and
            ``pos`` no longer hold the same ants in the same order (ants
            added or removed by hand).
        ValueError
            If two ants share a cell or one stands off the grid (placed by
            hand), a cell holds too much sugar to rank the cells by, or
            ``sugar`` or ``max_sugar_grid`` was replaced by an
            array of another shape, dtype or layout; nothing changes.
        """
        pos, sugar, metabolism, vision, handles = self._columns()
        n = handles.shape[0]
        if n == 0:
            return
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
            self._wide = np.empty((3, n), np.int64)
            self._narrow = np.empty((9, n), np.int32)
        rows = (*self._wide, *self._narrow)
        seed = int(self.rng.integers(0, 2**63 - 1))
        gone = sugarscape_step(
            pos, sugar, metabolism, vision, handles,
            self.sugar.reshape(-1), self.max_sugar_grid.reshape(-1),
            self.width, self.height, seed,
            self._claims, *rows,
        )  # fmt: skip
        if gone == -1:
            raise ValueError("two ants share a cell: each cell holds one ant at most")
        if gone == -3:
            raise ValueError(
                f"a cell holds {int(self.sugar.max())} sugar: too much to rank "
                f"the cells of a {self.width} x {self.height} grid by"
            )
        if gone == -2:
            out = (pos[:, 0] < 0) | (pos[:, 0] >= self.width)
            out |= (pos[:, 1] < 0) | (pos[:, 1] >= self.height)
            a = int(np.argmax(out))
            raise ValueError(
                f"ant {int(handles[a])} (row {a}) stands outside the "
                f"{self.width} x {self.height} grid, at {pos[a].tolist()}"
            )
        if gone:
            with self.world.deferred() as cmd:
                cmd.destroy(handles[rows[-1][:gone]])
        self.steps += 1
        if self.recorder is not None:
            self.recorder.collect(step=self.steps)

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

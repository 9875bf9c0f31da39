"""Mesa's boid flockers on a World and a Grid.

Mesa's ``mesa.examples.basic.boid_flockers``: boids in a ``width x
height`` continuous space that wraps (a torus), each with a position and
a heading. Each step activates them one at a time in a shuffled order;
a boid looks for the others within ``vision``, steers by cohesion,
separation (from those closer than ``separation``) and alignment, and
moves ``speed`` along its new unit heading. Each boid sees the moves and
headings of those before it.

The step sorts the boids into cells first (cells at least ``vision``
plus a step's move wide), copies their positions and headings into
slots in cell order, runs the boids one at a time on the slots (a boid
keeps its slot all step: it never moves farther from its cell than the
cells' margin), and copies the slots back. It declares ``pos`` written:
the grid (``world.grid("pos")``) catches up when next asked, in one sort,
instead of re-bucketing each boid as it moves.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..kernels.array_types import typed_njit
from ..kernels.options import NO_NRT
from ..recording import Recorder
from ..world import World
from .parameters import activation_order, positive_ints


@typed_njit(inline="always", **NO_NRT)
def _nearest(d: Any, size: Any) -> Any:
    """The shorter of ``d`` and its image across a ring of ``size`` (the
    image on a tie, as Mesa's), for ``|d| < size``."""
    other = d - size if d > 0.0 else d + size
    return d if abs(d) < abs(other) else other


@typed_njit(inline="always", **NO_NRT)
def _sight(
    sx: Any,
    sy: Any,
    hx: Any,
    hy: Any,
    lo: Any,
    hi: Any,
    me: Any,
    x: Any,
    y: Any,
    width: Any,
    height: Any,
    vv: Any,
    sep2: Any,
) -> Any:
    """What the boids of slots ``lo..hi`` (but ``me``) within ``sqrt(vv)``
    of ``(x, y)`` add to a boid's steering: the sums of their shortest
    vectors, of those closer than ``sqrt(sep2)``, of their headings, and
    their count (squared distances compared with squared bounds).
    Without a branch on the distances (a weight of 0 or 1): about a third
    of those scanned are in sight, which a branch would mispredict; a
    cell holds too few boids for vector lanes to pay."""
    cx = 0.0
    cy = 0.0
    px = 0.0
    py = 0.0
    mx = 0.0
    my = 0.0
    k = 0.0
    for t in range(lo, hi):
        dx = _nearest(sx[t] - x, width)
        dy = _nearest(sy[t] - y, height)
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


@typed_njit(**NO_NRT)
def boids_cells(
    pos: Any, width: Any, height: Any, reach: Any, home: Any, start: Any
) -> Any:
    """Count the boids by cell: ``cw x ch`` cells tiling the torus, each at
    least ``reach`` wide (fewer, wider ones if more than ``start`` has
    room for, less one); ``home[a]``, the cell of row ``a`` (``u * ch +
    v``); ``start[c + 1]``, the boids of cells ``0..c``. Returns ``(cw,
    ch)``."""
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
    for c in range(cells + 1):
        start[c] = 0
    for a in range(pos.shape[0]):
        u = min(int(pos[a, 0] / width * cw), cw - 1)
        v = min(int(pos[a, 1] / height * ch), ch - 1)
        c = u * ch + v
        home[a] = c
        start[c + 1] += 1
    for c in range(cells):
        start[c + 1] += start[c]
    return cw, ch


@typed_njit(**NO_NRT)
def boids_step(
    pos: Any,
    heading: Any,
    order: Any,
    width: Any,
    height: Any,
    speed: Any,
    vision: Any,
    separation: Any,
    cohere: Any,
    separate: Any,
    match: Any,
    home: Any,
    start: Any,
    slot_of: Any,
    sx: Any,
    sy: Any,
    hx: Any,
    hy: Any,
) -> None:
    """One step of Mesa's boids, boid by boid in ``order`` (rows of
    ``pos``/``heading``).

    The boids are copied into slots in cell order (:func:`boids_cells`,
    cells at least ``vision`` plus the farthest a boid moves in a step;
    ``start`` has room for the cells' table, ``home``, ``slot_of`` and
    the slots for every boid):
    positions ``sx``/``sy`` and headings ``hx``/``hy``, a cell's boids side
    by side. A boid's turn reads the slots of its cell and the eight
    around it (fewer on a ring of fewer than three cells, each cell once),
    and writes its own slot: a boid stays in its slot, and so in the cell
    it had when the step began, never farther from it than a step's move,
    which the cells' width allows for. The slots are copied back at the
    end."""
    n = pos.shape[0]
    # The farthest a boid moves: speed times the longest heading, 1 once
    # it steered (a unit heading), its own until then.
    most = 1.0
    for a in range(n):
        most = max(most, heading[a, 0] * heading[a, 0] + heading[a, 1] * heading[a, 1])
    reach = vision + math.sqrt(most) * abs(speed) * (1.0 + 1e-9) + 1e-9
    cw, ch = boids_cells(pos, width, height, reach, home, start)
    cells = cw * ch
    for a in range(n):
        c = home[a]
        sl = start[c]
        start[c] = sl + 1
        slot_of[a] = sl
        sx[sl] = pos[a, 0]
        sy[sl] = pos[a, 1]
        hx[sl] = heading[a, 0]
        hy[sl] = heading[a, 1]
    for c in range(cells - 1, 0, -1):  # the firsts again
        start[c] = start[c - 1]
    start[0] = 0
    vv = vision * vision
    sep2 = separation * separation
    for i in range(n):
        a = order[i]
        me = slot_of[a]
        x = sx[me]
        y = sy[me]
        c = home[a]
        u0 = c // ch
        v0 = c - u0 * ch
        cx = 0.0
        cy = 0.0
        px = 0.0
        py = 0.0
        mx = 0.0
        my = 0.0
        k = 0.0
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
            norm = math.sqrt(nhx * nhx + nhy * nhy)
            hx[me] = nhx / norm
            hy[me] = nhy / norm
        nx = x + hx[me] * speed
        ny = y + hy[me] * speed
        if not (0.0 <= nx <= width):
            nx = nx % width
        if not (0.0 <= ny <= height):
            ny = ny % height
        # The far edge is the near one on a torus; the grid says so too,
        # and the world's positions stay the grid's.
        if nx >= width:
            nx = 0.0
        if ny >= height:
            ny = 0.0
        sx[me] = nx
        sy[me] = ny
    for a in range(n):
        sl = slot_of[a]
        pos[a, 0] = sx[sl]
        pos[a, 1] = sy[sl]
        heading[a, 0] = hx[sl]
        heading[a, 1] = hy[sl]


def _tiling(side: float, vision: float) -> float:
    """A cell at least ``vision`` wide (and close to it) that tiles a ring
    of ``side`` exactly, in floating point too (``side / cell`` a whole
    number): a query then reads 3 cells an axis, where a ring whose last
    cell is narrower (or seems so by one rounding) makes the grid read 5."""
    k = max(1, math.floor(side / vision))
    for n in range(k, max(0, k - 64), -1):  # most counts divide exactly
        cell = side / n
        if side / cell == n:
            return cell
    return float(side / 2 ** math.floor(math.log2(k)))  # a power of two always does


class BoidFlockers:
    """Mesa's boid flockers: cohesion, separation and alignment.

    ``population_size`` boids in a ``width x height`` space that wraps
    (Mesa's ``ContinuousSpace(torus=True)``), at uniform positions with
    headings drawn uniformly from ``[-1, 1]**2`` (not unit vectors until a
    boid first steers, as in Mesa). A step activates every boid once, one
    at a time in a shuffled order: it finds the others within ``vision``
    (Euclidean, across the wrap), and if there are ``k > 0`` of them adds
    to its heading ``(cohere * sum(d) - separate * sum(d of those closer
    than separation) + match * sum(their headings)) / k``, where ``d`` is
    the shortest vector to each; it then normalises the heading and moves
    ``speed`` along it. Each boid sees the boids before it in their new
    places and headings.

    The boids are entities of ``world`` with components ``pos`` (tracked:
    a change made by hand between steps is declared, as for any reader)
    and ``heading`` (``f8``, two per row); ``grid`` is
    ``world.grid("pos", cell=c, torus=(width, height))``, ``c`` the
    smallest cell at least ``vision`` wide that tiles the wider ring,
    which catches up with a step's moves when next asked.
    :meth:`order` is the alignment, the length of the mean heading (1 when
    all fly alike); :attr:`average_heading` is Mesa's.

    Differences from Mesa's: a boid landing exactly on the far edge
    (``x == width``) is placed on the near one (0), the same point of the
    torus, where Mesa keeps ``width``; distances are compared squared
    (``d**2 <= vision**2``, Mesa's ``d <= vision``: the same but for a
    rounding at the bound); the random draws come from a numpy generator
    seeded by ``seed`` (the same seed gives the same run, not Mesa's
    run); Mesa's per-agent ``angle`` and ``neighbors`` are not kept;
    recording is off unless ``record=True``, which makes ``recorder``
    a :class:`~sparseset.Recorder` of ``order`` per step.

    Parameters
    ----------
    population_size : int
        The number of boids.
    width, height : float
        The space's size.
    speed, vision, separation : float
        The distance a step, the sight's reach, the distance kept.
    cohere, separate, match : float
        The weights of cohesion, separation and alignment.
    seed : int, optional
        Seeds every draw; None draws fresh entropy.
    record : bool
        Record ``order`` at the start and after every step.

    Examples
    --------
    >>> m = BoidFlockers(population_size=200, width=50, height=50, seed=0)
    >>> before = m.order()
    >>> m.run(30)
    >>> m.order() > before
    True
    """

    def __init__(
        self,
        population_size: int = 100,
        width: float = 100,
        height: float = 100,
        speed: float = 1,
        vision: float = 10,
        separation: float = 2,
        cohere: float = 0.03,
        separate: float = 0.015,
        match: float = 0.05,
        seed: int | None = None,
        *,
        record: bool = False,
    ) -> None:
        (n,) = positive_ints(population_size=population_size)
        for name, value in (("width", width), ("height", height), ("vision", vision)):
            if not math.isfinite(float(value)) or float(value) <= 0:
                raise ValueError(f"{name} must be positive and finite, got {value}")
        self.population_size = int(n)
        self.width = float(width)
        self.height = float(height)
        self.speed = float(speed)
        self.vision = float(vision)
        self.separation = float(separation)
        self.cohere = float(cohere)
        self.separate = float(separate)
        self.match = float(match)
        self.rng = np.random.default_rng(seed)
        size = np.array([self.width, self.height])
        w = World()
        # Tracked: the grid catches up with what changed outside the
        # steps (declared writes), not by comparing every position.
        w.register("pos", "f8", shape=(2,), track=True)
        w.register("heading", "f8", shape=(2,))
        agents = w.create(self.population_size)
        w.add("pos", agents, pos=self.rng.random((self.population_size, 2)) * size)
        w.add(
            "heading",
            agents,
            heading=self.rng.uniform(-1, 1, (self.population_size, 2)),
        )
        self.world = w
        self.agents = agents
        cell = max(_tiling(side, self.vision) for side in (self.width, self.height))
        self.grid = w.grid("pos", cell=cell, torus=(self.width, self.height))
        self.steps = 0
        self._members: tuple[object, ...] = ()
        self._tables(self.population_size)
        self.recorder: Recorder | None = None
        if record:
            self.recorder = Recorder(self, model={"order": "order"})
            self.recorder.collect(step=0)

    def step(self) -> None:
        """Activate every boid once, one at a time, in a shuffled order.

        O(n k) for n boids with k others in sight on average.

        Raises
        ------
        RuntimeError
            If the world's ``pos`` and ``heading`` no longer hold the same
            boids in the same order (boids added or removed by hand).
        """
        w = self.world
        pos_store = w["pos"]
        heading_store = w["heading"]
        members = (pos_store.state_key(), heading_store.state_key())
        if members != self._members:
            if not np.array_equal(heading_store.ids, pos_store.ids):
                raise RuntimeError(
                    "the pos and heading components hold different boids"
                )
            self._members = members
        pos = pos_store["pos"]
        n = pos.shape[0]
        if self._home.shape[0] != n:
            self._tables(n)
        order = activation_order(self.rng, n)
        boids_step(
            pos, heading_store["heading"], order,
            self.width, self.height, self.speed, self.vision, self.separation,
            self.cohere, self.separate, self.match, self._home, self._start,
            self._slot_of, self._sx, self._sy, self._hx, self._hy,
        )  # fmt: skip
        # Every boid moved: the grid catches up when next asked, in one
        # sort of every position (its path when most moved).
        pos_store.touch_rows(slice(0, n))
        self.steps += 1
        if self.recorder is not None:
            self.recorder.collect(step=self.steps)

    def _tables(self, n: int) -> None:
        """The step's tables for ``n`` boids: each one's cell and slot, the
        cells' first slots (at most about two cells a boid: wider cells
        past that), the slots' positions and headings."""
        self._home = np.empty(n, np.int64)
        self._slot_of = np.empty(n, np.int64)
        self._start = np.empty(2 * n + 18, np.int64)
        self._sx, self._sy, self._hx, self._hy = (np.empty(n) for _ in range(4))

    def run(self, steps: int) -> None:
        """Run ``steps`` steps. O(steps n k)."""
        for _ in range(int(steps)):
            self.step()

    @property
    def average_heading(self) -> float:
        """Mesa's ``average_heading``: the angle of the mean heading, in
        radians. O(n)."""
        mean = self.world["heading"]["heading"].mean(axis=0)
        return float(np.arctan2(mean[1], mean[0]))

    def order(self) -> float:
        """The alignment: the length of the mean unit heading, 0 (every
        way) to 1 (all alike). O(n)."""
        h = self.world["heading"]["heading"]
        unit = h / np.linalg.norm(h, axis=1, keepdims=True)
        return float(np.linalg.norm(unit.mean(axis=0)))

"""Mesa's boid flockers on a World and a Grid.

Mesa's ``mesa.examples.basic.boid_flockers``: boids in a ``width x
height`` continuous space that wraps (a torus), each with a position and
a heading. Each step activates them one at a time in a shuffled order;
a boid looks for the others within ``vision``, steers by cohesion,
separation (from those closer than ``separation``) and alignment, and
moves ``speed`` along its new unit heading. Each boid sees the moves and
headings of those before it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..jit.grid import EUCLIDEAN, grid_move_slot, grid_within_slots
from ..kernels.array_types import typed_njit
from ..kernels.options import NO_NRT
from ..recording import Recorder
from ..world import World
from .parameters import StepState, activation_order, positive_ints


@typed_njit(inline="always", **NO_NRT)
def _nearest(d: Any, size: Any) -> Any:
    """The shorter of ``d`` and its image across a ring of ``size``."""
    other = d - math.copysign(size, d) if d != 0.0 else d
    return d if abs(d) < abs(other) else other


@typed_njit(**NO_NRT)
def boids_step(
    tw: Any,
    pos: Any,
    heading: Any,
    slot_of: Any,
    row_at: Any,
    order: Any,
    width: Any,
    height: Any,
    speed: Any,
    vision: Any,
    separation: Any,
    cohere: Any,
    separate: Any,
    match: Any,
    out: Any,
) -> None:
    """One step of Mesa's boids, boid by boid in ``order`` (rows of
    ``pos``/``heading``); ``slot_of[a]`` is row ``a``'s slot in the grid
    ``tw``, ``row_at[s]`` the row in slot ``s``; ``out`` holds every
    boid. The others' positions are read from the grid's slots (the same
    as the world's), their headings from their rows."""
    for i in range(order.shape[0]):
        a = order[i]
        x = pos[a, 0]
        y = pos[a, 1]
        me = slot_of[a]
        m = grid_within_slots(tw, x, y, 0.0, vision, EUCLIDEAN, out)
        k = 0
        cx = 0.0
        cy = 0.0
        sx = 0.0
        sy = 0.0
        mx = 0.0
        my = 0.0
        for t in range(m):
            q = out[t]
            if q == me:
                continue
            b = row_at[q]
            dx = _nearest(tw.pos[q, 0] - x, width)
            dy = _nearest(tw.pos[q, 1] - y, height)
            cx += dx
            cy += dy
            if math.sqrt(dx * dx + dy * dy) < separation:
                sx -= dx
                sy -= dy
            mx += heading[b, 0]
            my += heading[b, 1]
            k += 1
        if k > 0:
            hx = heading[a, 0] + (cx * cohere + sx * separate + mx * match) / k
            hy = heading[a, 1] + (cy * cohere + sy * separate + my * match) / k
            norm = math.sqrt(hx * hx + hy * hy)
            heading[a, 0] = hx / norm
            heading[a, 1] = hy / norm
        nx = x + heading[a, 0] * speed
        ny = y + heading[a, 1] * speed
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
        pos[a, 0] = nx
        pos[a, 1] = ny
        grid_move_slot(tw, me, nx, ny)


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
    smallest cell at least ``vision`` wide that tiles the wider ring.
    :meth:`order` is the alignment, the length of the mean heading (1 when
    all fly alike); :attr:`average_heading` is Mesa's.

    Differences from Mesa's: a boid landing exactly on the far edge
    (``x == width``) is placed on the near one (0), the same point of the
    torus, where Mesa keeps ``width``; the random draws come from a numpy generator
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
        self._state = StepState(self.grid)
        self.steps = 0
        self._out = np.empty(self.population_size, np.int64)
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
        handles = w["pos"].ids
        if not np.array_equal(w["heading"].ids, handles):
            raise RuntimeError("the pos and heading components hold different boids")
        state = self._state
        # A fresh twin: the cell table rebuilt when many boids changed
        # cells, so that a neighbourhood's boids sit close in memory.
        tw = state.twin(handles, build=True)
        order = activation_order(self.rng, handles.shape[0])
        boids_step(
            tw, w["pos"]["pos"], w["heading"]["heading"], state.slot_of,
            state.row_at, order,
            self.width, self.height, self.speed, self.vision, self.separation,
            self.cohere, self.separate, self.match, self._out,
        )  # fmt: skip
        self.steps += 1
        if self.recorder is not None:
            self.recorder.collect(step=self.steps)

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

"""Mesa's Schelling segregation model on a World and a Grid.

Mesa's ``mesa.examples.basic.schelling``: each cell of a ``width x
height`` grid (not a torus, one agent a cell) holds an agent with
probability ``density``, of type 1 with probability ``minority_pc``. An
agent is happy when at least a share ``homophily`` of its neighbours
(Moore, within ``radius``) are of its type. Each step, the unhappy ones,
one at a time in a shuffled order, move to a random empty cell; then
every agent's happiness is assessed again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..jit.grid import grid_cell, grid_move
from ..recording import Recorder
from ..world import World
from .parameters import positive_ints, rows_by_handle


@njit(cache=True)
def schelling_moves(
    tw: Any,
    pos: Any,
    happy: Any,
    handles: Any,
    order: Any,
    width: Any,
    height: Any,
    seed: Any,
    out: Any,
) -> None:
    """The unhappy agents of ``order``, one at a time, move to a uniformly
    random empty cell (there must be one). Draws from numba's generator,
    seeded with ``seed``."""
    np.random.seed(seed)
    for i in range(order.shape[0]):
        a = order[i]
        if happy[a]:
            continue
        while True:  # Mesa's own way: random cells until an empty one
            x = float(np.random.randint(0, width))
            y = float(np.random.randint(0, height))
            if grid_cell(tw, int(x), int(y), 0, out) == 0:
                break
        pos[a, 0] = x
        pos[a, 1] = y
        grid_move(tw, handles[a], x, y)


@njit(cache=True)
def schelling_assess(
    offsets: Any,
    found: Any,
    kind: Any,
    happy: Any,
    row_of: Any,
    homophily: Any,
    similar: Any,
) -> Any:
    """Every agent's happiness (written into ``happy``) and its share of
    similar neighbours (into ``similar``, NaN without neighbours), from
    the CSR of each agent's neighbourhood (``offsets``, ``found``: handles,
    the agent itself among them); returns how many are happy."""
    count = 0
    for a in range(kind.shape[0]):
        same = 0
        neighbours = 0
        for t in range(offsets[a], offsets[a + 1]):
            b = row_of[found[t]]
            if b != a:
                neighbours += 1
                if kind[b] == kind[a]:
                    same += 1
        share = same / neighbours if neighbours > 0 else 0.0
        similar[a] = share if neighbours > 0 else np.nan
        happy[a] = not share < homophily
        count += happy[a]
    return count


class Schelling:
    """Mesa's Schelling segregation model.

    Each cell of a ``width x height`` grid (not a torus, at most one
    agent a cell) holds an agent with probability ``density``, of type 1
    (the minority) with probability ``minority_pc``, else 0. An agent is
    happy when at least a share ``homophily`` of its neighbours (the
    agents within Chebyshev distance ``radius``) share its type; with no
    neighbours it is unhappy. A step moves the unhappy agents, one at a
    time in a shuffled order, each to a random empty cell (seeing the
    moves before it), then assesses every agent again: ``happy`` is
    the number of happy agents, as Mesa's ``happy``.

    The agents are entities of ``world`` with components ``type``
    (``i1``), ``happy`` (``?``) and ``pos`` (``f8``, two per row, integer
    cell coordinates); ``grid`` is ``world.grid("pos")``.

    Differences from Mesa's: the random draws come from numpy and numba
    generators seeded by ``seed`` (the same seed gives the same run, not
    Mesa's run); the model does not stop by itself (Mesa's ``running``
    is :attr:`running`, for the caller to read); :meth:`segregation` is an
    extra (Mesa reports ``happy`` and ``pct_happy``); recording is off
    unless ``record=True``, which makes ``recorder`` a
    :class:`~sparseset.Recorder` of ``happy`` and ``pct_happy`` per step
    and each agent's ``type``.

    Parameters
    ----------
    height, width : int
        The grid's size.
    density : float
        The chance that a cell holds an agent, in [0, 1].
    minority_pc : float
        The chance that an agent is of the minority type 1, in [0, 1].
    homophily : float
        The least share of similar neighbours a happy agent has.
    radius : int
        The neighbourhood's reach (Moore, in cells).
    seed : int, optional
        Seeds every draw; None draws fresh entropy.
    record : bool
        Record at the start and after every step.

    Examples
    --------
    >>> m = Schelling(seed=1)
    >>> before = m.happy
    >>> m.run(5)
    >>> m.happy > before, 0.0 <= m.pct_happy() <= 100.0
    (True, True)
    """

    def __init__(
        self,
        height: int = 20,
        width: int = 20,
        density: float = 0.8,
        minority_pc: float = 0.5,
        homophily: float = 0.4,
        radius: int = 1,
        seed: int | None = None,
        *,
        record: bool = False,
    ) -> None:
        positive_ints(height=height, width=width, radius=radius)
        for name, share in (("density", density), ("minority_pc", minority_pc)):
            if not 0.0 <= float(share) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {share}")
        self.height = int(height)
        self.width = int(width)
        self.density = float(density)
        self.minority_pc = float(minority_pc)
        self.homophily = float(homophily)
        self.radius = int(radius)
        self.rng = np.random.default_rng(seed)
        cells = np.indices((self.width, self.height), np.float64).reshape(2, -1).T
        held = self.rng.random(cells.shape[0]) < self.density
        n = int(held.sum())
        kind = (self.rng.random(n) < self.minority_pc).astype(np.int8)
        w = World()
        w.register("type", "i1")
        w.register("happy", "?")
        w.register("pos", "f8", shape=(2,))
        agents = w.create(n)
        w.add("type", agents, type=kind)
        w.add("happy", agents, happy=False)
        w.add("pos", agents, pos=cells[held])
        self.world = w
        self.agents = agents
        self.grid = w.grid("pos", cell=1.0)
        self.steps = 0
        self.happy = 0
        self._similar = np.empty(n)
        self._out = np.empty(1, np.int64)  # an empty cell's members: none
        self._assess()
        self.recorder: Recorder | None = None
        if record:
            self.recorder = Recorder(
                self,
                model={"happy": "happy", "pct_happy": "pct_happy"},
                agents={"type": "type"},
            )
            self.recorder.collect(step=0)

    def _arrays(self) -> tuple[Any, Any, np.ndarray, np.ndarray]:
        w = self.world
        handles = w["pos"].ids
        for name in ("type", "happy"):
            if not np.array_equal(w[name].ids, handles):
                raise RuntimeError(
                    f"the {name} and pos components hold different agents"
                )
        row_of = rows_by_handle(handles)
        return self.grid.grid.jit, w["pos"]["pos"], handles, row_of

    def _assess(self) -> None:
        # Mesa assesses every agent after the moves, reading only: one
        # batch query answers all the neighbourhoods at once.
        _, pos, _, row_of = self._arrays()
        w = self.world
        offsets, found = self.grid.within(pos, self.radius, metric="chebyshev")
        self.happy = int(
            schelling_assess(
                offsets, found, w["type"]["type"], w["happy"]["happy"], row_of,
                self.homophily, self._similar,
            )
        )  # fmt: skip

    @property
    def running(self) -> bool:
        """Whether someone is unhappy (Mesa stops when no one is). O(1)."""
        return self.happy < len(self.agents)

    def step(self) -> None:
        """Move the unhappy agents one at a time, in a shuffled order, then
        assess everyone.

        O(n) for n agents, plus the draws of random cells until an empty
        one (1 / (1 - density) a move on average).

        Raises
        ------
        RuntimeError
            If the world's ``type``, ``happy`` and ``pos`` no longer hold
            the same agents in the same order (agents added or removed by
            hand).
        """
        tw, pos, handles, _ = self._arrays()
        n = handles.shape[0]
        if n < self.width * self.height:  # Mesa's would wait forever on a full grid
            order = self.rng.permutation(n)
            seed = int(self.rng.integers(0, 2**31 - 1))
            schelling_moves(
                tw, pos, self.world["happy"]["happy"], handles, order,
                self.width, self.height, seed, self._out,
            )  # fmt: skip
        self._assess()
        self.steps += 1
        if self.recorder is not None:
            self.recorder.collect(step=self.steps)

    def run(self, steps: int) -> None:
        """Run ``steps`` steps. O(steps n)."""
        for _ in range(int(steps)):
            self.step()

    def pct_happy(self) -> float:
        """The percentage of happy agents, Mesa's ``pct_happy``. O(1)."""
        n = len(self.agents)
        return 100.0 * self.happy / n if n else 0.0

    def segregation(self) -> float:
        """The mean share of similar neighbours, over the agents that have
        neighbours (after the last step). O(n)."""
        s = self._similar[~np.isnan(self._similar)]
        return float(s.mean()) if s.shape[0] else 0.0

"""Mesa's Boltzmann wealth model on a World and a Grid.

Mesa's ``mesa.examples.basic.boltzmann_wealth_model``: ``n`` agents with
one unit of wealth each stand on a ``width x height`` grid (not a torus).
Each step activates them one at a time in a shuffled order; an agent
moves to a random Moore neighbour of its cell, then, if it has wealth,
gives one unit to a random other agent of its new cell. The activation
loop is compiled: each agent sees the moves and gifts of those before it.

The step moves the agents in lists of one cell each that it links from
the positions (as a hand-written model does; again only when a position
changed since the last step, or an agent came or went), writing each move
into the ``pos`` column at once, and declares the column written: every
agent moves every step, so the grid (``world.grid("pos")``) catches up
when next asked, in one sort of every position, instead of re-bucketing
each agent as it moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels.array_types import typed_njit
from ..kernels.options import NO_NRT
from ..recording import Recorder
from ..world import World
from .parameters import activation_order, off_grid, positive_ints

#: The eight Moore offsets, in Mesa's order of no importance.
_DX = np.array([-1, -1, -1, 0, 0, 1, 1, 1], np.int64)
_DY = np.array([-1, 0, 1, -1, 1, -1, 0, 1], np.int64)


@typed_njit(**NO_NRT)
def boltzmann_cells(
    pos: Any, width: Any, height: Any, head: Any, nxt: Any, prv: Any
) -> Any:
    """Link the agents (rows of ``pos``) into one doubly linked list a cell
    (``head[x * height + y]``, ``nxt``/``prv`` by row, -1 ends); the
    first row whose position is not a cell of the grid, -1 if none. Every
    position is checked before a list changes: a refusal leaves the lists
    as they were."""
    for a in range(pos.shape[0]):
        x = pos[a, 0]
        y = pos[a, 1]
        if off_grid(x, y, width, height):
            return a
    for c in range(head.shape[0]):
        head[c] = -1
    for a in range(pos.shape[0]):
        c = np.int64(pos[a, 0]) * height + np.int64(pos[a, 1])
        nxt[a] = head[c]
        prv[a] = -1
        if head[c] >= 0:
            prv[head[c]] = a
        head[c] = a
    return -1


@typed_njit(**NO_NRT)
def boltzmann_step(
    pos: Any,
    wealth: Any,
    order: Any,
    width: Any,
    height: Any,
    seed: Any,
    head: Any,
    nxt: Any,
    prv: Any,
) -> None:
    """One step of the Boltzmann wealth model, agent by agent.

    ``order`` lists rows of ``pos``/``wealth`` in activation order; the
    agents stand in the cell lists of :func:`boltzmann_cells`, which the
    moves keep, and each move writes ``pos`` at once. Draws come from
    numba's generator, seeded here with ``seed``.
    """
    np.random.seed(seed)
    for i in range(order.shape[0]):
        a = order[i]
        x = np.int64(pos[a, 0])
        y = np.int64(pos[a, 1])
        while True:  # a uniform neighbour among those inside the grid
            k = np.random.randint(0, 8)
            nx = x + _DX[k]
            ny = y + _DY[k]
            if 0 <= nx < width and 0 <= ny < height:
                break
        c = x * height + y  # out of the old cell's list
        if prv[a] >= 0:
            nxt[prv[a]] = nxt[a]
        else:
            head[c] = nxt[a]
        if nxt[a] >= 0:
            prv[nxt[a]] = prv[a]
        c = nx * height + ny  # at the head of the new one's
        nxt[a] = head[c]
        prv[a] = -1
        if head[c] >= 0:
            prv[head[c]] = a
        head[c] = a
        pos[a, 0] = nx
        pos[a, 1] = ny
        if wealth[a] > 0:
            m = 0  # the others of the cell follow a
            b = nxt[a]
            while b >= 0:
                m += 1
                b = nxt[b]
            if m > 0:  # someone else is here: a random one of them
                j = np.random.randint(0, m)
                b = nxt[a]
                while j > 0:
                    b = nxt[b]
                    j -= 1
                wealth[b] += 1
                wealth[a] -= 1


def gini_of(wealth: np.ndarray) -> float:
    """The Gini coefficient as Mesa's example computes it. O(n log n).

    Examples
    --------
    >>> gini_of(np.array([1, 1, 1, 1]))
    0.0
    >>> round(gini_of(np.array([0, 0, 0, 4])), 2)
    0.75
    """
    x = np.sort(np.asarray(wealth, np.int64))
    n = x.shape[0]
    b = float(np.sum(x * (n - np.arange(n)))) / (n * float(x.sum()))
    return float(1.0 + 1.0 / n - 2.0 * b)


class BoltzmannWealth:
    """Mesa's Boltzmann wealth model: agents move and give away coins.

    ``n`` agents, each with one unit of wealth, on a ``width x height``
    grid that is not a torus (Mesa's ``OrthogonalMooreGrid`` default).
    A step activates every agent once, one at a time, in a shuffled
    order (Mesa's ``shuffle_do``): it moves to a random Moore neighbour
    of its cell, then, if it has wealth, gives one unit to a random other
    agent of its new cell. Each agent sees what those before it did.

    The agents are entities of ``world`` with components ``wealth``
    (``i8``) and ``pos`` (``f8``, two per row, integer cell coordinates,
    tracked: a change made by hand between steps is declared, as for
    any reader), and ``grid`` is ``world.grid("pos")``, which catches up
    with a step's moves when next asked (one sort: all moved).

    Differences from Mesa's: the random draws come from numpy and numba
    generators seeded by ``seed`` (the same seed gives the same run, not
    Mesa's run); recording is off unless ``record=True``, which makes
    ``recorder`` a :class:`~sparseset.Recorder` of ``gini`` per step
    and each agent's ``wealth`` (Mesa's ``Gini`` and ``Wealth``).

    Parameters
    ----------
    n, width, height : int
        Mesa's: the number of agents and the grid's size.
    seed : int, optional
        Seeds every draw; None draws fresh entropy.
    record : bool
        Record ``gini`` and ``wealth`` at the start and after every step.

    Raises
    ------
    ValueError
        If a size is below 1, or the grid is a single cell (no neighbour
        to move to; Mesa's model fails at its first step).
    TypeError
        If a size is not an int.

    Examples
    --------
    >>> m = BoltzmannWealth(n=100, width=10, height=10, seed=1)
    >>> m.run(20)
    >>> int(m.world["wealth"]["wealth"].sum()), 0.0 < m.gini() < 1.0
    (100, True)
    """

    def __init__(
        self,
        n: int = 100,
        width: int = 10,
        height: int = 10,
        seed: int | None = None,
        *,
        record: bool = False,
    ) -> None:
        positive_ints(n=n, width=width, height=height)
        if width == 1 and height == 1:
            raise ValueError(
                "a 1 x 1 grid has no neighbouring cell to move to: "
                f"width={width}, height={height}"
            )
        self.num_agents = int(n)
        self.width = int(width)
        self.height = int(height)
        self.rng = np.random.default_rng(seed)
        w = World()
        w.register("wealth", "i8")
        # Tracked: the grid catches up with what changed outside the
        # steps (declared writes), not by comparing every position; the
        # steps' own moves reach it through its twin.
        w.register("pos", "f8", shape=(2,), track=True)
        agents = w.create(self.num_agents)
        xy = np.column_stack(
            (
                self.rng.integers(0, self.width, self.num_agents),
                self.rng.integers(0, self.height, self.num_agents),
            )
        ).astype(np.float64)
        w.add("wealth", agents, wealth=1)
        w.add("pos", agents, pos=xy)
        self.world = w
        self.agents = agents
        self.grid = w.grid("pos", cell=1.0)
        self.steps = 0
        self._head = np.empty(self.width * self.height, np.int64)
        self._nxt = np.empty(self.num_agents, np.int64)
        self._prv = np.empty(self.num_agents, np.int64)
        #: The positions the cell lists were linked for (none yet).
        self._linked = np.empty((0, 2), np.float64)
        self.recorder: Recorder | None = None
        if record:
            self.recorder = Recorder(
                self, model={"gini": "gini"}, agents={"wealth": "wealth"}
            )
            self.recorder.collect(step=0)

    def step(self) -> None:
        """Activate every agent once, one at a time, in a shuffled order.

        O(n) for n agents (a cell's members are few on average).

        Raises
        ------
        RuntimeError
            If the world's ``wealth`` and ``pos`` no longer hold the same
            agents in the same order (agents added or removed by hand).
        ValueError
            If an agent's ``pos`` (written by hand) is not a cell of the
            grid (integer coordinates in ``[0, width) x [0, height)``);
            nothing changes.
        """
        w = self.world
        wealth_store = w["wealth"]
        pos_store = w["pos"]
        if not np.array_equal(wealth_store.ids, pos_store.ids):
            raise RuntimeError("the wealth and pos components hold different agents")
        pos = pos_store["pos"]
        n = pos.shape[0]
        if self._nxt.shape[0] < n:
            self._nxt = np.empty(n, np.int64)
            self._prv = np.empty(n, np.int64)
        linked = self._linked
        # The lists are a function of the positions by row: the last step
        # left them linked, and they stand unless a position changed since.
        if linked.shape != pos.shape or not np.array_equal(linked, pos):
            bad = boltzmann_cells(
                pos, self.width, self.height, self._head, self._nxt, self._prv
            )
            if bad >= 0:
                raise ValueError(
                    f"the agent at row {bad} stands at {pos[bad].tolist()}, not "
                    f"a cell of the {self.width} x {self.height} grid"
                )
            if linked.shape != pos.shape:
                linked = self._linked = np.empty_like(pos)
        order = activation_order(self.rng, n)
        seed = int(self.rng.integers(0, 2**31 - 1))
        boltzmann_step(
            pos, wealth_store["wealth"], order, self.width, self.height, seed,
            self._head, self._nxt, self._prv,
        )  # fmt: skip
        np.copyto(linked, pos)
        # Every agent moved: the grid catches up when next asked, in one
        # sort of every position (its path when most moved).
        pos_store.touch_rows(slice(0, n))
        self.steps += 1
        if self.recorder is not None:
            self.recorder.collect(step=self.steps)

    def run(self, steps: int) -> None:
        """Run ``steps`` steps. O(steps n)."""
        for _ in range(int(steps)):
            self.step()

    def gini(self) -> float:
        """The Gini coefficient of the agents' wealth, as Mesa's
        ``compute_gini``. O(n log n)."""
        return gini_of(self.world["wealth"]["wealth"])

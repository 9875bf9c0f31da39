"""Mesa's Boltzmann wealth model on a World and a Grid.

Mesa's ``mesa.examples.basic.boltzmann_wealth_model``: ``n`` agents with
one unit of wealth each stand on a ``width x height`` grid (not a torus).
Each step activates them one at a time in a shuffled order; an agent
moves to a random Moore neighbour of its cell, then, if it has wealth,
gives one unit to a random other agent of its new cell. The activation
loop is compiled: each agent sees the moves and gifts of those before it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..jit.grid import grid_cell_slots, grid_move_slot
from ..kernels.array_types import typed_njit
from ..kernels.options import NO_NRT
from ..recording import Recorder
from ..world import World
from .parameters import StepState, positive_ints

#: The eight Moore offsets, in Mesa's order of no importance.
_DX = np.array([-1, -1, -1, 0, 0, 1, 1, 1], np.int64)
_DY = np.array([-1, 0, 1, -1, 1, -1, 0, 1], np.int64)


@typed_njit(**NO_NRT)
def boltzmann_step(
    tw: Any,
    pos: Any,
    wealth: Any,
    slot_of: Any,
    row_at: Any,
    order: Any,
    width: Any,
    height: Any,
    seed: Any,
    out: Any,
) -> None:
    """One step of the Boltzmann wealth model, agent by agent.

    ``order`` lists grid slots (agents) in activation order; ``row_at[s]``
    is the row of ``pos``/``wealth`` of the agent in slot ``s`` of the
    grid ``tw``, ``slot_of[a]`` the slot of row ``a``; ``out`` holds at
    least every agent (a cell's members). Draws come from numba's
    generator, seeded here with ``seed``. The agents read their cells
    from the grid, and ``pos`` is written once all have moved.
    """
    np.random.seed(seed)
    for i in range(order.shape[0]):
        s = order[i]
        a = row_at[s]
        x = np.int64(tw.pos[s, 0])
        y = np.int64(tw.pos[s, 1])
        while True:  # a uniform neighbour among those inside the grid
            k = np.random.randint(0, 8)
            nx = x + _DX[k]
            ny = y + _DY[k]
            if 0 <= nx < width and 0 <= ny < height:
                break
        grid_move_slot(tw, s, float(nx), float(ny))
        if wealth[a] > 0:
            m = grid_cell_slots(tw, nx, ny, 0, out)
            if m > 1:  # someone else is here: a random one of the others
                j = np.random.randint(0, m - 1)
                for t in range(m):
                    if out[t] == s:
                        continue
                    if j == 0:
                        wealth[row_at[out[t]]] += 1
                        wealth[a] -= 1
                        break
                    j -= 1
    for a in range(pos.shape[0]):
        s = slot_of[a]
        pos[a, 0] = tw.pos[s, 0]
        pos[a, 1] = tw.pos[s, 1]


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
    any reader), and ``grid`` is ``world.grid("pos")``.

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
        self._state = StepState(self.grid)
        self.steps = 0
        self._out = np.empty(self.num_agents, np.int64)
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
        """
        w = self.world
        wealth_store = w["wealth"]
        pos_store = w["pos"]
        handles = pos_store.ids
        if not np.array_equal(wealth_store.ids, handles):
            raise RuntimeError("the wealth and pos components hold different agents")
        state = self._state
        tw = state.twin(handles)
        order = self.rng.permutation(handles.shape[0])
        seed = int(self.rng.integers(0, 2**31 - 1))
        boltzmann_step(
            tw, pos_store["pos"], wealth_store["wealth"], state.slot_of,
            state.row_at, order, self.width, self.height, seed, self._out,
        )  # fmt: skip
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

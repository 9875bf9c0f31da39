"""Mesa's Schelling segregation model on a World and a Grid.

Mesa's ``mesa.examples.basic.schelling``: each cell of a ``width x
height`` grid (not a torus, one agent a cell) holds an agent with
probability ``density``, of type 1 with probability ``minority_pc``. An
agent is happy when at least a share ``homophily`` of its neighbours
(Moore, within ``radius``) are of its type. Each step, the unhappy ones,
one at a time in a shuffled order, move to a random empty cell; then
every agent's happiness is assessed again.

The steps read the cells' occupants from a map of one slot a cell,
filled from the grid's positions at the start of each step and kept as
the agents move (one agent a cell, as Mesa's grid): the draws of random
cells until an empty one and the neighbourhoods read it, in cell order,
as a hand-written lattice does, while the moves reach the grid through
its twin, so that the grid answers queries between steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..jit.grid import grid_move_slot
from ..kernels.array_types import typed_njit
from ..kernels.options import NO_NRT
from ..recording import Recorder
from ..world import World
from .parameters import StepState, activation_order, off_grid, positive_ints


@typed_njit(**NO_NRT)
def schelling_map(tw: Any, width: Any, height: Any, occupant: Any) -> Any:
    """``occupant[x * height + y]``: the slot in the grid ``tw`` of the
    agent on cell ``(x, y)``, -1 if none. Returns the first slot whose
    position is not a cell of the grid or is the cell of another agent,
    -1 if none."""
    for c in range(occupant.shape[0]):
        occupant[c] = -1
    for s in range(tw.meta[2]):
        x = tw.pos[s, 0]
        y = tw.pos[s, 1]
        if off_grid(x, y, width, height):
            return s
        c = np.int64(x) * height + np.int64(y)
        if occupant[c] >= 0:
            return s
        occupant[c] = s
    return -1


@typed_njit(**NO_NRT)
def schelling_moves(
    tw: Any,
    pos: Any,
    happy: Any,
    slot_of: Any,
    order: Any,
    width: Any,
    height: Any,
    seed: Any,
    occupant: Any,
) -> None:
    """The unhappy agents of ``order`` (rows), one at a time, move to a
    uniformly random empty cell (there must be one); ``slot_of[a]`` is row
    ``a``'s slot in the grid ``tw``, ``occupant`` the cells' slots
    (:func:`schelling_map`), kept as they move, as is the grid. Draws
    from numba's generator, seeded with ``seed``."""
    np.random.seed(seed)
    for i in range(order.shape[0]):
        a = order[i]
        if happy[a]:
            continue
        while True:  # Mesa's own way: random cells until an empty one
            x = np.random.randint(0, width)
            y = np.random.randint(0, height)
            if occupant[x * height + y] < 0:
                break
        s = slot_of[a]
        occupant[np.int64(tw.pos[s, 0]) * height + np.int64(tw.pos[s, 1])] = -1
        occupant[x * height + y] = s
        pos[a, 0] = x
        pos[a, 1] = y
        grid_move_slot(tw, s, float(x), float(y))


@typed_njit(**NO_NRT)
def schelling_assess(
    tw: Any,
    kind: Any,
    happy: Any,
    row_at: Any,
    radius: Any,
    homophily: Any,
    similar: Any,
    occupant: Any,
    kind_at: Any,
    width: Any,
    height: Any,
) -> Any:
    """Every agent's happiness (written into ``happy``) and its share of
    similar neighbours (into ``similar``, NaN without neighbours): those
    within Chebyshev ``radius`` (the cells of its Moore neighbourhood, on
    the grid); returns how many are happy. ``row_at[s]`` is the row of
    the agent in slot ``s`` of the grid ``tw``, ``occupant`` the cells'
    slots (:func:`schelling_map`), ``kind_at`` a type a slot.

    The agents are taken in cell order: the neighbourhoods of one after
    the other overlap, read from the map in order. Each type is read once
    into ``kind_at``, by slot: the neighbours' types are then read from
    one small array, not from rows scattered by the moves."""
    n = tw.meta[2]
    for s in range(n):
        kind_at[s] = kind[row_at[s]]
    count = 0
    for x in range(width):
        for y in range(height):
            s = occupant[x * height + y]
            if s < 0:
                continue
            same = 0
            neighbours = 0
            mine = kind_at[s]
            for u in range(max(x - radius, 0), min(x + radius + 1, width)):
                for v in range(max(y - radius, 0), min(y + radius + 1, height)):
                    q = occupant[u * height + v]
                    if q >= 0 and q != s:
                        neighbours += 1
                        if kind_at[q] == mine:
                            same += 1
            share = same / neighbours if neighbours > 0 else 0.0
            a = row_at[s]
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
    cell coordinates, tracked: a change made by hand between steps is
    declared, as for any reader); ``grid`` is ``world.grid("pos")``.

    Differences from Mesa's: the random draws come from numpy and numba
    generators seeded by ``seed`` (the same seed gives the same run, not
    Mesa's run); the model does not stop by itself (Mesa's ``running`` is
    :attr:`running`, for the caller to read); :meth:`segregation` is an
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
        # Tracked: the grid catches up with what changed outside the
        # steps (declared writes), not by comparing every position.
        w.register("pos", "f8", shape=(2,), track=True)
        agents = w.create(n)
        w.add("type", agents, type=kind)
        w.add("happy", agents, happy=False)
        w.add("pos", agents, pos=cells[held])
        self.world = w
        self.agents = agents
        self.grid = w.grid("pos", cell=1.0)
        self._state = StepState(self.grid)
        self.steps = 0
        self.happy = 0
        self._similar = np.empty(n)
        self._kind_at = np.empty(n, np.int8)
        self._occupant = np.empty(self.width * self.height, np.int64)
        self._assess(self._arrays()[0])
        self.recorder: Recorder | None = None
        if record:
            self.recorder = Recorder(
                self,
                model={"happy": "happy", "pct_happy": "pct_happy"},
                agents={"type": "type"},
            )
            self.recorder.collect(step=0)

    def _arrays(self) -> tuple[Any, np.ndarray]:
        """The grid's twin, the cells' occupants filled from it, and the
        positions."""
        w = self.world
        handles = w["pos"].ids
        for name in ("type", "happy"):
            if not np.array_equal(w[name].ids, handles):
                raise RuntimeError(
                    f"the {name} and pos components hold different agents"
                )
        # The twin stays live across steps (its moves keep the grid
        # current) and is never rebuilt for the model: its strays cost the
        # grid's neighbour scans, which the step does not make.
        tw = self._state.twin(handles)
        bad = schelling_map(tw, self.width, self.height, self._occupant)
        pos = w["pos"]["pos"]
        if bad >= 0:
            row = int(self._state.row_at[bad])
            at = pos[row]
            rows = np.flatnonzero((pos == at).all(axis=1))
            if rows.shape[0] > 1:
                raise ValueError(
                    f"the agents at rows {rows.tolist()} share the cell "
                    f"{at.tolist()}: one agent a cell"
                )
            raise ValueError(
                f"the agent at row {row} stands at {at.tolist()}, not a cell "
                f"of the {self.width} x {self.height} grid"
            )
        return tw, pos

    def _assess(self, tw: Any) -> None:
        w = self.world
        self.happy = int(
            schelling_assess(
                tw, w["type"]["type"], w["happy"]["happy"], self._state.row_at,
                self.radius, self.homophily, self._similar, self._occupant,
                self._kind_at, self.width, self.height,
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
        ValueError
            If an agent's ``pos`` (written by hand) is not a cell of the
            grid (integer coordinates in ``[0, width) x [0, height)``) or
            is another agent's cell; nothing changes.
        """
        tw, pos = self._arrays()
        n = pos.shape[0]
        if n < self.width * self.height:  # Mesa's would wait forever on a full grid
            order = activation_order(self.rng, n)
            seed = int(self.rng.integers(0, 2**31 - 1))
            schelling_moves(
                tw, pos, self.world["happy"]["happy"], self._state.slot_of,
                order, self.width, self.height, seed, self._occupant,
            )  # fmt: skip
        self._assess(tw)
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

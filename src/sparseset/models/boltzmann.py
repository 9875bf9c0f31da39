"""Mesa's Boltzmann wealth model on a World and a Grid.

Mesa's ``mesa.examples.basic.boltzmann_wealth_model``: ``n`` agents with
one unit of wealth each stand on a ``width x height`` grid (not a torus).
Each step activates them one at a time in a shuffled order; an agent
moves to a random Moore neighbour of its cell, then, if it has wealth,
gives one unit to a random other agent of its new cell. The activation
loop is compiled: each agent sees the moves and gifts of those before it.

The step files the agents by cell, a short line of rows per cell that it
fills from the positions (again only when a position changed since the
last step, or an agent came or went): a move is a swap out of one line
and an append to another, the gift a draw in the new line. It draws its
randomness first (the activation order, a word per agent), then every
agent's move (an agent's move reads and writes its own position only,
and each moves once), writing ``pos``, then runs the activation loop on
the lines, and declares the column written: every agent moves every step, so the grid
(``world.grid("pos")``) catches up when next asked, in one sort of every
position, instead of re-bucketing each agent as it moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels.array_types import typed_njit
from ..kernels.options import NO_NRT
from ..kernels.prefetch import prefetch
from ..recording import Recorder
from ..world import World
from .parameters import (
    GOLDEN,
    LOW,
    off_grid,
    positive_ints,
    shuffle_order,
    splitmix,
)

#: The eight Moore offsets, in Mesa's order of no importance.
_DX = np.array([-1, -1, -1, 0, 0, 1, 1, 1], np.int64)
_DY = np.array([-1, 0, 1, -1, 1, -1, 0, 1], np.int64)


@typed_njit(**NO_NRT)
def boltzmann_cells(
    pos: Any, width: Any, height: Any, line: Any, stride: Any, at: Any
) -> Any:
    """File the agents (rows of ``pos``) by cell: the cell ``c = x * height
    + y`` owns ``line[c * stride : (c + 1) * stride]``, its count first,
    then its members' rows; ``at[a]``, the place of row ``a`` in its line.
    The first row whose position is not a cell of the grid, -1 if none,
    -2 if a cell holds ``stride`` agents or more (the lines are then too
    short). Every position is checked before ``line`` or ``at`` changes:
    a refusal leaves them as they were."""
    for a in range(pos.shape[0]):
        if off_grid(pos[a, 0], pos[a, 1], width, height):
            return a
    line[:] = 0
    for a in range(pos.shape[0]):
        o = (np.int64(pos[a, 0]) * height + np.int64(pos[a, 1])) * stride
        k = line[o] + 1
        if k >= stride:
            return -2
        line[o + k] = a
        line[o] = k
        at[a] = k
    return -1


@typed_njit(**NO_NRT)
def boltzmann_draws(order: Any, draws: Any, seed: Any) -> None:
    """A step's randomness, drawn before it in two tight loops: ``order``
    (any permutation of the rows: the last step's serves) shuffled by
    :func:`shuffle_order` from ``seed``, and ``draws[i]``, the splitmix64
    word of the agent of place ``i``, on the counter ``seed ^ 2**63`` (2**63
    draws away from the shuffle's: their streams never meet)."""
    shuffle_order(order, seed, False)
    z = np.uint64(seed) ^ np.uint64(0x8000000000000000)
    for i in range(draws.shape[0]):
        draws[i] = splitmix(z + np.uint64(i + 1) * GOLDEN)


@typed_njit(**NO_NRT)
def boltzmann_moves(
    pos: Any, order: Any, draws: Any, width: Any, height: Any, src: Any, dst: Any
) -> None:
    """Every agent's move, in ``order``: to a uniform Moore neighbour inside
    the grid, drawn three bits at a time from the high 32 bits of its word
    (ten tries, then from the word mixed again), written into ``pos``;
    ``src[i]``/``dst[i]``, the cells the agent of place ``i`` leaves and
    enters (``x * height + y``).

    A move reads and writes its own agent's position only, and each agent
    moves once a step: the moves are those of the activation loop, drawn
    ahead of it in a loop of independent iterations (which the processor
    overlaps), leaving the loop of the gifts the cells' lines only: that
    loop waits on its loads, and each instruction it holds shrinks the
    number of agents the processor overlaps (a draw inside it cost about
    as much as the rest)."""
    n = order.shape[0]
    for i in range(n):
        if i + 16 < n:
            prefetch(pos, 2 * np.int64(order[i + 16]))
        a = np.int64(order[i])
        word = draws[i]
        bits = word >> np.uint64(32)
        left = 10
        x = np.int64(pos[a, 0])
        y = np.int64(pos[a, 1])
        while True:
            if left == 0:
                word = splitmix(word)
                bits = word
                left = 21
            k = np.int64(bits & np.uint64(7))
            bits >>= np.uint64(3)
            left -= 1
            nx = x + _DX[k]
            ny = y + _DY[k]
            if 0 <= nx < width and 0 <= ny < height:
                break
        src[i] = x * height + y
        dst[i] = nx * height + ny
        pos[a, 0] = nx
        pos[a, 1] = ny


@typed_njit(**NO_NRT)
def boltzmann_gifts(
    wealth: Any,
    order: Any,
    draws: Any,
    src: Any,
    dst: Any,
    line: Any,
    stride: Any,
    start: Any,
    at: Any,
) -> Any:
    """The activation loop from place ``start``, the moves drawn
    (:func:`boltzmann_moves`): the agent of place ``i`` leaves the line of
    cell ``src[i]`` (the last member takes its place, ``at`` says where:
    a search of the line would mispredict its end) for the end of
    ``dst[i]``'s, then gives a unit of wealth, if it has one, to a uniform
    other member there (Lemire's index on the low 32 bits of its word of
    :func:`boltzmann_draws`; a rejected draw mixes the word again).

    Returns -1 when every agent acted, else the place of the agent whose
    new cell's line was full (``stride - 1`` members): it has not acted,
    and the loop resumes there once the lines are longer."""
    n = order.shape[0]
    for i in range(start, n):
        if i + 12 < n:  # the lines and the wealth a few agents ahead
            prefetch(line, np.int64(dst[i + 12]) * stride)
            prefetch(line, np.int64(src[i + 12]) * stride)
            prefetch(wealth, np.int64(order[i + 12]))
            prefetch(at, np.int64(order[i + 12]))
        a = np.int64(order[i])
        o = np.int64(src[i]) * stride
        o2 = np.int64(dst[i]) * stride
        m2 = np.int64(line[o2])
        if m2 + 1 >= stride:
            return i
        cnt = np.int64(line[o])  # out of the old cell
        s = np.int64(at[a])
        last = line[o + cnt]
        line[o + s] = last
        at[last] = s
        line[o] = cnt - 1
        line[o2 + 1 + m2] = a  # into the new one, after the m2 there
        at[a] = m2 + 1
        line[o2] = m2 + 1
        # The gift, without a branch on the coin's fall: a uniform j < m2,
        # a unit from a to the j-th other when both conditions hold (when
        # m2 == 0, j == 0 names a itself and nothing moves).
        bound = np.uint64(m2 if m2 > 1 else 1)
        word = draws[i]
        m = (word & LOW) * bound
        while (m & LOW) < bound and (m & LOW) < (LOW + np.uint64(1) - bound) % bound:
            word = splitmix(word)
            m = (word & LOW) * bound
        b = np.int64(line[o2 + 1 + np.int64(m >> np.uint64(32))])
        give = np.int64((m2 > 0) & (wealth[a] > 0))
        wealth[b] += give
        wealth[a] -= give
    return -1


@typed_njit(**NO_NRT)
def boltzmann_step(
    pos: Any,
    linked: Any,
    wealth: Any,
    order: Any,
    draws: Any,
    src: Any,
    dst: Any,
    width: Any,
    height: Any,
    line: Any,
    stride: Any,
    at: Any,
    seed: Any,
) -> Any:
    """One step, in one call: -2, changing nothing, if ``pos`` is not
    ``linked`` (the positions the lines were filed for: file them again);
    else :func:`boltzmann_draws` from ``seed``, :func:`boltzmann_moves`,
    :func:`boltzmann_gifts`, and ``linked`` made ``pos`` again. Returns -1
    when every agent acted, else the place :func:`boltzmann_gifts` stopped
    at (a full line: ``linked`` is then left to the caller)."""
    flat = pos.reshape(pos.size)
    was = linked.reshape(linked.size)
    moved = False
    for k in range(flat.shape[0]):  # no early exit: a loop in vector lanes
        moved |= flat[k] != was[k]
    if moved:
        return -2
    boltzmann_draws(order, draws, seed)
    boltzmann_moves(pos, order, draws, width, height, src, dst)
    place = boltzmann_gifts(wealth, order, draws, src, dst, line, stride, 0, at)
    if place < 0:
        for k in range(flat.shape[0]):
            was[k] = flat[k]
    return place


@typed_njit(**NO_NRT)
def boltzmann_refile(
    order: Any, src: Any, dst: Any, start: Any, line: Any, stride: Any, at: Any
) -> Any:
    """File the agents again, mid-step, in lines of ``stride`` (and their
    places in ``at``): those of places before ``start`` in their new
    cells, the others in their old. False if a cell holds ``stride``
    agents or more."""
    line[:] = 0
    for i in range(order.shape[0]):
        o = np.int64(dst[i] if i < start else src[i]) * stride
        k = line[o] + 1
        if k >= stride:
            return False
        line[o + k] = order[i]
        line[o] = k
        at[order[i]] = k
    return True


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

    Differences from Mesa's: the random draws come from splitmix64
    seeded by a numpy generator seeded by ``seed`` (the same seed gives
    the same run, not Mesa's run); recording is off unless ``record=True``, which makes
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
        #: Each cell's line: its count, then its members' rows (see
        #: boltzmann_cells), ``stride`` entries; lengthened when a cell
        #: fills its line.
        self._stride = 8
        self._line = np.empty(0, np.int32)
        #: The positions the lines were filed for (none yet).
        self._linked = np.empty((0, 2), np.float64)
        #: The last step's activation order (a step shuffles it again).
        self._order = np.empty(0, np.int32)
        #: A step's words of randomness, one per agent (boltzmann_draws),
        #: the cells each agent leaves and enters (boltzmann_moves), and
        #: each agent's place in its cell's line.
        self._draws = np.empty(0, np.uint64)
        self._src = np.empty(0, np.int64)
        self._dst = np.empty(0, np.int64)
        self._at = np.empty(0, np.int32)
        #: The seed of the step under way (drawn, not yet used up).
        self._seed: int | None = None
        #: The components' state keys when they last held the same agents.
        self._members: tuple[object, ...] = ()
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
        members = (wealth_store.state_key(), pos_store.state_key())
        if members != self._members:
            if not np.array_equal(wealth_store.ids, pos_store.ids):
                raise RuntimeError(
                    "the wealth and pos components hold different agents"
                )
            self._members = members
        pos = pos_store["pos"]
        n = pos.shape[0]
        if self._order.shape[0] != n:
            self._order = np.arange(n, dtype=np.int32)
            self._draws = np.empty(n, np.uint64)
            cell = np.int32 if self.width * self.height < 2**31 else np.int64
            self._src = np.empty(n, cell)
            self._dst = np.empty(n, cell)
            self._at = np.empty(n, np.int32)
            self._linked = np.empty((0, 2), np.float64)
        # The lines are a function of the positions by row: the last step
        # left them filed, and they stand unless a position changed since.
        if self._linked.shape != pos.shape:
            self._file(pos)
            self._linked = pos.copy()
        order, draws, src, dst = self._order, self._draws, self._src, self._dst
        wealth = wealth_store["wealth"]
        # Drawn once for this step, kept if the step is refused: the step
        # that goes ahead draws from it, so a refusal leaves the run as it
        # was.
        if self._seed is None:
            self._seed = int(self.rng.integers(0, 2**63 - 1))
        seed = self._seed
        args = (order, draws, src, dst, self.width, self.height)
        place = boltzmann_step(
            pos, self._linked, wealth, *args, self._line, self._stride, self._at, seed
        )
        if place == -2:  # a position changed since the last step
            self._file(pos)
            np.copyto(self._linked, pos)
            place = boltzmann_step(
                pos, self._linked, wealth, *args, self._line, self._stride,
                self._at, seed,
            )  # fmt: skip
        if place < 0:
            self._touch(pos_store, n)
            return
        while place >= 0:
            # A cell filled its line: longer lines, and go on from there.
            cells = self.width * self.height
            while True:
                self._stride *= 2
                self._line = np.empty(cells * self._stride, self._row_type(n))
                if boltzmann_refile(
                    order, src, dst, place, self._line, self._stride, self._at
                ):
                    break
            place = boltzmann_gifts(
                wealth, order, draws, src, dst, self._line, self._stride, place,
                self._at,
            )  # fmt: skip
        np.copyto(self._linked, pos)
        self._touch(pos_store, n)

    def _touch(self, pos_store: Any, n: int) -> None:
        """End a step: declare the positions written, count it, record."""
        self._seed = None
        # Every agent moved: the grid catches up when next asked, in one
        # sort of every position (its path when most moved).
        pos_store.touch_rows(slice(0, n))
        self.steps += 1
        if self.recorder is not None:
            self.recorder.collect(step=self.steps)

    @staticmethod
    def _row_type(n: int) -> type[np.integer[Any]]:
        """The lines' type for ``n`` agents: two bytes a row while they fit
        (a line of 16 in half a cache line), else four."""
        return np.uint16 if n < 2**16 else np.int32

    def _file(self, pos: np.ndarray) -> None:
        """File the agents by cell (:func:`boltzmann_cells`), the lines long
        enough for the most crowded cell.

        Raises
        ------
        ValueError
            If a position is not a cell of the grid; nothing changes.
        """
        cells = self.width * self.height
        while True:
            kind = self._row_type(pos.shape[0])
            if self._line.shape[0] != cells * self._stride or self._line.dtype != kind:
                line = np.empty(cells * self._stride, kind)
            else:
                line = self._line
            bad = boltzmann_cells(
                pos, self.width, self.height, line, self._stride, self._at
            )
            if bad >= 0:
                raise ValueError(
                    f"the agent at row {bad} stands at {pos[bad].tolist()}, not "
                    f"a cell of the {self.width} x {self.height} grid"
                )
            self._line = line
            if bad == -1:
                return
            self._stride *= 2

    def run(self, steps: int) -> None:
        """Run ``steps`` steps. O(steps n)."""
        for _ in range(int(steps)):
            self.step()

    def gini(self) -> float:
        """The Gini coefficient of the agents' wealth, as Mesa's
        ``compute_gini``. O(n log n)."""
        return gini_of(self.world["wealth"]["wealth"])

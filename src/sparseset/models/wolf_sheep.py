"""Mesa's wolf-sheep predation model on a World and two Grids.

Mesa's ``mesa.examples.advanced.wolf_sheep`` (after Wilensky's NetLogo
model): sheep and wolves on a ``width x height`` grid that wraps (a
torus, von Neumann neighbourhoods), each with an energy, and a patch of
grass on every cell. Each step activates the sheep one at a time in a
shuffled order, then the wolves one at a time in a shuffled order. An
animal moves to a neighbouring cell (a sheep to one without a wolf,
preferring grown grass, and stays when every neighbour holds a wolf; a
wolf to one with a sheep when it can), loses one unit of energy, eats
(a sheep the grass of its cell, a wolf a random sheep of its cell), dies
if its energy is below zero and otherwise gives birth with its
probability, halving its energy with the newborn. Eaten grass is grown
again ``grass_regrowth_time`` steps later.

A step is a :class:`~sparseset.Schedule` of two systems, the sheep's turn
and then the wolves'; births and deaths are their deferred commands,
applied as each turn's batch ends (so the wolves see the newborn lambs,
as in Mesa). Each turn is one compiled loop over the world's columns.
What an animal reads is what those before it left: the sheep read a
count of wolves per cell (wolves stay put during the sheep's turn) and
the grass, which they eat in place; the wolves read a count of sheep
per cell and take their prey from the sheep's grid (its twin), whose
eaten members the loop removes at once, so that no wolf eats a sheep
another wolf has eaten. Sheep do not look at sheep, nor wolves at
wolves: the sheep's grid catches up with the sheep's moves, births and
deaths in one batch before the wolves' turn, and the wolves' grid only
when asked.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ..jit.grid import grid_cell, grid_remove
from ..kernels.array_types import typed_njit
from ..kernels.options import NO_NRT
from ..recording import Recorder
from ..schedule import Schedule
from ..world import World
from ..world.commands import Commands
from .parameters import activation_order, off_grid, positive_ints

#: The von Neumann offsets (Mesa's ``OrthogonalVonNeumannGrid``).
_DX = np.array([-1, 0, 0, 1], np.int64)
_DY = np.array([0, -1, 1, 0], np.int64)


@njit(cache=True)
def _neighbours(x: Any, y: Any, width: Any, height: Any, nx: Any, ny: Any) -> Any:
    """The distinct von Neumann neighbours of ``(x, y)`` on the torus, into
    ``nx``/``ny``; how many (fewer than 4 on a ring of 1 or 2 cells, where
    Mesa's neighbourhood, a set of cells, has fewer too; on a ring of one
    the cell itself is its own neighbour, as in Mesa)."""
    k = 0
    for d in range(4):
        cx = (x + _DX[d]) % width
        cy = (y + _DY[d]) % height
        seen = False
        for e in range(k):
            if nx[e] == cx and ny[e] == cy:
                seen = True
        if not seen:
            nx[k] = cx
            ny[k] = cy
            k += 1
    return k


@typed_njit(**NO_NRT)
def census(pos: Any, width: Any, height: Any, count: Any) -> Any:
    """``count[x * height + y]``: the animals (rows of ``pos``) on cell
    ``(x, y)``; the first row whose position is not a cell of the grid
    (integer coordinates in range), -1 if none."""
    for c in range(count.shape[0]):
        count[c] = 0
    for a in range(pos.shape[0]):
        x = pos[a, 0]
        y = pos[a, 1]
        if off_grid(x, y, width, height):
            return a
        count[np.int64(x) * height + np.int64(y)] += 1
    return -1


@typed_njit(**NO_NRT)
def sheep_turn(
    wolves_at: Any,
    pos: Any,
    energy: Any,
    order: Any,
    regrow: Any,
    now: Any,
    width: Any,
    height: Any,
    grass: Any,
    regrowth_time: Any,
    gain: Any,
    p_reproduce: Any,
    seed: Any,
    dead: Any,
    born: Any,
    nx: Any,
    ny: Any,
    safe: Any,
    grassy: Any,
) -> None:
    """The sheep's turn, sheep by sheep in ``order`` (rows of ``pos`` and
    ``energy``); ``wolves_at[x * height + y]`` counts the wolves of each
    cell (they stay put during the sheep's turn, and sheep do not look
    at sheep: the sheep's grid catches up after the turn, in one batch).

    ``regrow[x * height + y]`` is the step at whose end the cell's grass
    is grown again (grown when at most ``now``, the steps done before this
    one). Writes ``dead[a]`` (starved) and ``born[a]`` (gave birth: a
    lamb with the parent's energy and cell).
    Draws from numba's generator, seeded with ``seed``. ``nx``, ``ny``,
    ``safe`` and ``grassy`` are scratch room for four cells: compiled
    without NRT, the turn allocates nothing.
    """
    np.random.seed(seed)
    for i in range(order.shape[0]):
        a = order[i]
        x = np.int64(pos[a, 0])
        y = np.int64(pos[a, 1])
        k = _neighbours(x, y, width, height, nx, ny)
        ns = 0
        ng = 0
        for d in range(k):
            if wolves_at[nx[d] * height + ny[d]] == 0:
                safe[ns] = d
                ns += 1
                if grass and regrow[nx[d] * height + ny[d]] <= now:
                    grassy[ng] = d
                    ng += 1
        if ns > 0:  # with a wolf on every side, a sheep stays put
            if ng > 0:
                d = grassy[np.random.randint(0, ng)]
            else:
                d = safe[np.random.randint(0, ns)]
            x = nx[d]
            y = ny[d]
            pos[a, 0] = x
            pos[a, 1] = y
        if grass:  # without grass sheep neither tire nor eat (NetLogo's rule)
            energy[a] -= 1.0
            c = x * height + y
            if regrow[c] <= now:
                energy[a] += gain
                regrow[c] = now + 1 + regrowth_time
        if energy[a] < 0.0:
            dead[a] = True
        elif np.random.random() < p_reproduce:
            energy[a] /= 2.0
            born[a] = True


@typed_njit(**NO_NRT)
def wolf_turn(
    sheep_at: Any,
    sheep_tw: Any,
    pos: Any,
    energy: Any,
    order: Any,
    width: Any,
    height: Any,
    gain: Any,
    p_reproduce: Any,
    seed: Any,
    dead: Any,
    born: Any,
    eaten: Any,
    out: Any,
    nx: Any,
    ny: Any,
    prey: Any,
) -> Any:
    """The wolves' turn, wolf by wolf in ``order`` (rows of ``pos`` and
    ``energy``); returns the number of sheep eaten, whose entity keys
    (the ids of the World grid's twin) it writes into ``eaten`` (and
    removes at once from the sheep's grid,
    ``sheep_tw``, and from ``sheep_at``, the count of sheep of each
    cell). ``out`` holds at least every sheep. Writes ``dead`` and
    ``born`` as :func:`sheep_turn` (wolves do not look at wolves: the
    wolves' grid catches up when asked). ``nx``, ``ny`` and ``prey``:
    scratch room for four cells. Compiled without NRT, the turn reads the
    twin's fields with no reference counting."""
    np.random.seed(seed)
    meals = 0
    for i in range(order.shape[0]):
        a = order[i]
        k = _neighbours(np.int64(pos[a, 0]), np.int64(pos[a, 1]), width, height, nx, ny)
        n_prey = 0
        for d in range(k):
            if sheep_at[nx[d] * height + ny[d]] > 0:
                prey[n_prey] = d
                n_prey += 1
        if n_prey > 0:
            d = prey[np.random.randint(0, n_prey)]
        else:
            d = np.random.randint(0, k)
        x = nx[d]
        y = ny[d]
        pos[a, 0] = x
        pos[a, 1] = y
        energy[a] -= 1.0
        c = x * height + y
        if sheep_at[c] > 0:
            m = grid_cell(sheep_tw, x, y, 0, out)
            h = out[np.random.randint(0, m)]
            grid_remove(sheep_tw, h)
            sheep_at[c] -= 1
            eaten[meals] = h
            meals += 1
            energy[a] += gain
        if energy[a] < 0.0:
            dead[a] = True
        elif np.random.random() < p_reproduce:
            energy[a] /= 2.0
            born[a] = True
    return meals


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be at least 0, got {value}")
    return int(value)


def _real(name: str, value: object, low: float, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not (low <= number <= high) or math.isnan(number) or math.isinf(number):
        span = f"[{low}, {high}]" if high < math.inf else f"at least {low} and finite"
        raise ValueError(f"{name} must be {span}, got {value}")
    return number


class WolfSheep:
    """Mesa's wolf-sheep predation model: sheep eat grass, wolves eat sheep.

    ``initial_sheep`` sheep and ``initial_wolves`` wolves stand on random
    cells of a ``width x height`` grid that wraps (Mesa's
    ``OrthogonalVonNeumannGrid(torus=True)``), with energies uniform in
    ``[0, 2 gain)``. Each cell has a patch of grass, fully grown with
    probability 1/2, otherwise grown after a uniform ``[0,
    grass_regrowth_time)`` steps (0 meaning grown). A step activates the
    sheep one at a time in a shuffled order, then the wolves one at a
    time in a shuffled order (Mesa's two ``shuffle_do``); each sees what
    those before it did. An animal:

    - moves to a neighbouring cell (von Neumann, the distinct cells of the
      torus), chosen uniformly among: for a sheep, the cells without a wolf
      that have grown grass, else those without a wolf (with a wolf on
      every side it stays); for a wolf, the cells with a sheep, else all;
    - loses 1 energy and eats: a sheep the grass of its cell if grown
      (gaining ``sheep_gain_from_food``; the grass is grown again at the
      end of the ``grass_regrowth_time``-th step after), a wolf a random
      sheep of its cell (gaining ``wolf_gain_from_food``; the sheep dies);
    - dies if its energy is below 0, otherwise gives birth with
      probability ``sheep_reproduce`` / ``wolf_reproduce``: it halves its
      energy and a newborn with that energy joins its cell; the newborn
      first acts next step.

    The animals are entities of ``world`` with components ``sheep`` and
    ``wolf`` (columns ``energy``, ``f8``, and ``pos``, ``f8``, two per
    row, integer cell coordinates); ``sheep_grid`` and ``wolf_grid`` are
    ``world.grid("sheep", column="pos", torus=(width, height))`` and the
    wolves' one (the wolves find their prey through the sheep's; the
    wolves' is kept for the caller's queries and catches up when asked).
    A step runs ``schedule``, a :class:`~sparseset.Schedule` of two
    systems, ``"sheep"`` and then ``"wolves"`` (the sheep's turn and the
    wolves'); births and deaths are their deferred commands, applied as
    each turn's batch ends. :meth:`counts` is Mesa's reporters ``(Wolves, Sheep,
    Grass)``, grass counting the fully grown patches.

    Differences from Mesa's: the random draws come from numpy and numba
    generators seeded by ``seed`` (the same seed gives the same run, not
    Mesa's run); the grass is an array of the model, not agents
    (:attr:`regrow_at`, read through :meth:`grass_countdown` and
    :meth:`fully_grown`); the model steps by itself (Mesa's needs its
    ``ABMSimulator``, which schedules the regrowth: a patch eaten at
    step ``t`` is grown again at the end of step ``t +
    grass_regrowth_time`` there and here); with
    ``grass=False`` sheep neither lose energy nor eat (NetLogo's rule and
    Mesa 2's; Mesa 3.3's sheep fail looking for a grass patch) and the
    grass count is 0; recording is off unless ``record=True``, which
    makes ``recorder`` a :class:`~sparseset.Recorder` of ``wolves``,
    ``sheep`` and ``grass`` per step (Mesa's ``Wolves``, ``Sheep``,
    ``Grass``).

    Parameters
    ----------
    width, height : int
        The grid's size.
    initial_sheep, initial_wolves : int
        The animals at the start (0 or more).
    sheep_reproduce, wolf_reproduce : float
        The chance of a birth a step, in [0, 1].
    wolf_gain_from_food : float
        The energy a wolf gains from a sheep (0 or more).
    grass : bool
        Whether sheep eat (and need) grass.
    grass_regrowth_time : int
        The steps eaten grass takes to grow again (at least 1 with grass).
    sheep_gain_from_food : float
        The energy a sheep gains from grass (0 or more).
    seed : int, optional
        Seeds every draw; None draws fresh entropy.
    record : bool
        Record the counts at the start and after every step.

    Raises
    ------
    TypeError
        If a count or size is not an int, a rate or gain not a number, or
        ``grass`` not a bool, naming the parameter.
    ValueError
        If a size is below 1, a count below 0, a chance outside [0, 1], a
        gain negative or not finite, or ``grass_regrowth_time`` below 1
        (with grass), naming the parameter and its value.

    Examples
    --------
    >>> m = WolfSheep(seed=1)
    >>> m.counts()[:2]
    (50, 100)
    >>> m.run(10)
    >>> wolves, sheep, grass = m.counts()
    >>> wolves > 0 and sheep > 0 and 0 < grass <= 400
    True
    """

    def __init__(
        self,
        width: int = 20,
        height: int = 20,
        initial_sheep: int = 100,
        initial_wolves: int = 50,
        sheep_reproduce: float = 0.04,
        wolf_reproduce: float = 0.05,
        wolf_gain_from_food: float = 20,
        grass: bool = True,
        grass_regrowth_time: int = 30,
        sheep_gain_from_food: float = 4,
        seed: int | None = None,
        *,
        record: bool = False,
    ) -> None:
        positive_ints(width=width, height=height)
        n_sheep = _count("initial_sheep", initial_sheep)
        n_wolves = _count("initial_wolves", initial_wolves)
        self.sheep_reproduce = _real("sheep_reproduce", sheep_reproduce, 0.0, 1.0)
        self.wolf_reproduce = _real("wolf_reproduce", wolf_reproduce, 0.0, 1.0)
        self.wolf_gain_from_food = _real("wolf_gain_from_food", wolf_gain_from_food, 0)
        self.sheep_gain_from_food = _real(
            "sheep_gain_from_food", sheep_gain_from_food, 0
        )
        if not isinstance(grass, (bool, np.bool_)):
            raise TypeError(f"grass must be a bool, got {grass!r}")
        self.grass = bool(grass)
        regrowth = _count("grass_regrowth_time", grass_regrowth_time)
        if self.grass and regrowth < 1:
            raise ValueError(
                f"grass_regrowth_time must be at least 1 with grass, got {regrowth}"
            )
        self.grass_regrowth_time = regrowth
        self.width = int(width)
        self.height = int(height)
        self.initial_sheep = n_sheep
        self.initial_wolves = n_wolves
        self.rng = np.random.default_rng(seed)
        rng = self.rng
        w = World()
        for kind, n, gain in (
            ("sheep", n_sheep, self.sheep_gain_from_food),
            ("wolf", n_wolves, self.wolf_gain_from_food),
        ):
            w.register(kind, {"energy": "f8", "pos": ("f8", (2,))})
            e = w.create(n)
            at = rng.integers(0, self.width * self.height, n)
            w.add(
                kind,
                e,
                energy=rng.random(n) * 2 * gain,
                pos=np.column_stack(divmod(at, self.height)).astype(np.float64),
            )
        self.world = w
        torus = (self.width, self.height)
        self.sheep_grid = w.grid("sheep", cell=1.0, torus=torus, column="pos")
        self.wolf_grid = w.grid("wolf", cell=1.0, torus=torus, column="pos")
        cells = self.width * self.height
        self._regrow = np.zeros(cells, np.int64)
        if self.grass:
            grown = rng.random(cells) < 0.5
            later = rng.integers(0, self.grass_regrowth_time, cells)
            self._regrow[~grown] = later[~grown]
        #: The step at whose end each cell's grass is grown again (grown
        #: when at most ``steps``), a ``(width, height)`` view the
        #: steps read and write: set it to stage a meadow.
        self.regrow_at = self._regrow.reshape(self.width, self.height)
        self.steps = 0
        self._scratch = tuple(np.empty(4, np.int64) for _ in range(4))
        #: The step's two systems: the sheep's turn, then the wolves' (who
        #: eat sheep: they read the sheep's grid and destroy its members).
        self.schedule = Schedule()
        self.schedule.add(
            self._sheep_system, reads=("wolf",), writes=("sheep",), name="sheep"
        )
        self.schedule.add(
            self._wolf_system, reads=("sheep",), writes=("wolf",), after=("sheep",),
            name="wolves",
        )  # fmt: skip
        self.recorder: Recorder | None = None
        if record:
            self.recorder = Recorder(
                self,
                model={
                    "wolves": lambda m: m.counts()[0],
                    "sheep": lambda m: m.counts()[1],
                    "grass": lambda m: m.counts()[2],
                },
            )
            self.recorder.collect(step=0)

    def _births_and_deaths(
        self,
        commands: Commands,
        kind: str,
        handles: Any,
        dead: Any,
        born: Any,
        eaten: Any = None,
    ) -> None:
        """Record a turn's deaths and births in its system's ``commands``
        (applied when the turn's batch of the schedule ends)."""
        store = self.world[kind]
        energy = store["energy"][born]
        pos = store["pos"][born]
        if eaten is not None and eaten.shape[0]:
            commands.destroy(eaten)
        if dead.any():
            commands.destroy(handles[dead])
        if energy.shape[0]:
            new = commands.create(energy.shape[0])
            commands.add(kind, new, energy=energy, pos=pos)

    def _census(self, kind: str) -> np.ndarray:
        """The number of ``kind`` animals of each cell, by ``x * height +
        y``: where a neighbour's query needs only whether a cell is empty,
        a table lookup answers it (a query of the grid scans the cell).
        Checks that every position is a cell of the grid first (the
        compiled turns index by them). O(n + cells).

        Raises
        ------
        ValueError
            If an animal's position is not a cell of the grid, naming its
            row.
        """
        pos = self.world[kind]["pos"]
        count = np.empty(self.width * self.height, np.int64)
        row = census(pos, self.width, self.height, count)
        if row >= 0:
            raise ValueError(
                f"the {kind} at row {row} stands at {pos[row].tolist()}, not a "
                f"cell of the {self.width} x {self.height} grid"
            )
        return count

    def step(self) -> None:
        """The sheep's turn, then the wolves', each one at a time in a
        shuffled order; births and deaths applied after each turn
        (:attr:`schedule`'s two systems).

        O(n) for n animals (a cell's animals are few on average).

        Raises
        ------
        ValueError
            If an animal's ``pos`` (written by hand) is not a cell of the
            grid (integer coordinates in ``[0, width) x [0, height)``);
            nothing changes.
        """
        self.schedule.run(self.world)
        self.steps += 1
        if self.recorder is not None:
            self.recorder.collect(step=self.steps)

    def _sheep_system(self, world: World, commands: Commands) -> None:
        """The schedule's first system: every sheep acts once, in a
        shuffled order; its births and deaths go to ``commands``.

        Raises
        ------
        ValueError
            If an animal's position is not a cell of the grid (checked for
            the sheep and the wolves before anything changes).
        """
        self._census("sheep")  # checked before anything changes
        wolves_at = self._census("wolf")
        sheep = world["sheep"]
        handles = sheep.ids
        n = handles.shape[0]
        dead = np.zeros(n, np.bool_)
        born = np.zeros(n, np.bool_)
        sheep_turn(
            wolves_at, sheep["pos"], sheep["energy"],
            activation_order(self.rng, n), self._regrow, self.steps, self.width,
            self.height, self.grass, self.grass_regrowth_time,
            self.sheep_gain_from_food, self.sheep_reproduce,
            int(self.rng.integers(0, 2**31 - 1)), dead, born, *self._scratch,
        )  # fmt: skip
        self._births_and_deaths(commands, "sheep", handles, dead, born)

    def _wolf_system(self, world: World, commands: Commands) -> None:
        """The schedule's second system, after the sheep's births and
        deaths: every wolf acts once, in a shuffled order; the sheep it
        eats, its births and its deaths go to ``commands``."""
        wolves = world["wolf"]
        handles = wolves.ids
        n = handles.shape[0]
        dead = np.zeros(n, np.bool_)
        born = np.zeros(n, np.bool_)
        sheep_tw = self.sheep_grid.grid.jit  # caught up: moves, lambs, deaths
        eaten = np.empty(min(n, len(world["sheep"])), np.int64)
        meals = wolf_turn(
            self._census("sheep"), sheep_tw, wolves["pos"], wolves["energy"],
            activation_order(self.rng, n), self.width, self.height,
            self.wolf_gain_from_food, self.wolf_reproduce,
            int(self.rng.integers(0, 2**31 - 1)), dead, born, eaten,
            np.empty(len(world["sheep"]), np.int64), *self._scratch[:3],
        )  # fmt: skip
        # The twin found the sheep by entity key: the world takes handles.
        eaten = self.sheep_grid.handles(eaten[:meals])
        self._births_and_deaths(commands, "wolf", handles, dead, born, eaten)

    def run(self, steps: int) -> None:
        """Run ``steps`` steps. O(steps n)."""
        for _ in range(int(steps)):
            self.step()

    @property
    def sheep(self) -> np.ndarray:
        """The live sheep's handles. O(n)."""
        return self.world["sheep"].ids

    @property
    def wolves(self) -> np.ndarray:
        """The live wolves' handles. O(n)."""
        return self.world["wolf"].ids

    def fully_grown(self) -> np.ndarray:
        """Whether each cell's grass is fully grown, a ``(width, height)``
        bool array (all False without grass). O(cells)."""
        if not self.grass:
            return np.zeros((self.width, self.height), np.bool_)
        return (self._regrow <= self.steps).reshape(self.width, self.height)

    def grass_countdown(self) -> np.ndarray:
        """The steps each cell's grass needs to be fully grown (0 when it
        is), a ``(width, height)`` int array. O(cells)."""
        left = np.maximum(self._regrow - self.steps, 0)
        return left.reshape(self.width, self.height)

    def counts(self) -> tuple[int, int, int]:
        """``(wolves, sheep, grass)``: Mesa's reporters, grass counting the
        fully grown patches (0 without grass). O(cells)."""
        grass = int(np.count_nonzero(self._regrow <= self.steps)) if self.grass else 0
        return len(self.world["wolf"]), len(self.world["sheep"]), grass

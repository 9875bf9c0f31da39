"""A particle simulation on a :class:`~sparseset.World`: ``python -m sparseset demo``.

Particles have a position and a velocity; some also feel drag, some have a
lifetime. Each step is one run of a :class:`~sparseset.Schedule` of five
systems, in two batches whose systems run in parallel:

1. ``integrate`` moves every particle through an owning group (two
   contiguous blocks, no lookups, a write scope that declares the moves)
   while ``age`` shortens the lifetimes;
2. ``drag`` slows the particles of a view (a join of ``vel`` and ``drag``),
   ``reap`` despawns the expired from ``@njit`` code through a command
   buffer's twin and spawns as many replacements through deferred
   commands (both applied when the batch ends), and ``regrid`` keeps the
   world's spatial grid (:meth:`~sparseset.World.grid` of ``pos``, cells of
   side :data:`CELL`) in step: it catches up with the moves, births and
   deaths through change tracking (every particle moved and nothing asked
   the grid since, so it copies every position, and the next query sorts
   them by cell).

Destroyed indexes come back with new generations. The summary ends with
two checks: the books balance (live particles = spawned - despawned) and
the grid holds exactly the particles, each in the cell of its position.

Run it from the command line (``--help`` lists the options)::

    python -m sparseset demo --entities 1_000_000 --steps 200 --threads 2

or from Python, where :class:`ParticleWorld` is the world and its systems
and :func:`run_demo` the timed run:

>>> import io
>>> run_demo(entities=200, steps=2, out=io.StringIO()).balanced
True

The ``--plot`` option needs matplotlib and a progress bar needs tqdm
(``pip install sparseset[demo]``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
from numba import njit

from ..io.console import Stopwatch, progress, pyplot
from ..schedule.schedule import Schedule, in_spans, used_threads
from ..world.commands import Commands
from ..world.world import World

#: Seconds of simulated time per step.
DT = 1.0 / 60.0
#: Shares of particles that carry a lifetime, and drag.
MORTAL_SHARE = 0.5
DRAG_SHARE = 0.3
#: Particles live in the box [-BOX, BOX]^2 and bounce off its walls.
BOX = 1.0
GRAVITY = -0.5
#: The spatial grid has GRID x GRID cells over the box, of side CELL:
#: cell ``c`` of an axis holds ``c * CELL <= x < (c + 1) * CELL``, so the
#: box's cells run from ``-GRID // 2`` to ``GRID // 2`` (the last holds
#: the particles on the walls at ``x = BOX``).
GRID = 32
CELL = 2.0 * BOX / GRID
#: The box's cells, ``(x, y)`` rows, row-major from ``(-GRID // 2, -GRID // 2)``.
BOX_CELLS = np.stack(
    np.meshgrid(
        np.arange(-GRID // 2, GRID // 2 + 1), np.arange(-GRID // 2, GRID // 2 + 1)
    ),
    -1,
).reshape(-1, 2)


@njit(cache=True, nogil=True)
def integrate(
    pos: np.ndarray, vel: np.ndarray, dt: float, gravity: float, box: float
) -> None:
    """Move every particle of the group and bounce it off the box's walls.

    ``pos`` and ``vel`` are ``(n, 2)`` float arrays, updated in place: the
    velocity falls by ``gravity * dt``, the position moves by ``vel * dt``,
    and a particle that crosses a wall of ``[-box, box]^2`` is put back on
    it with that velocity component reversed.

    Notes
    -----
    O(n) for the n particles, in one compiled pass.

    Examples
    --------
    >>> pos = np.array([[0.0, 0.0], [0.95, 0.0]])
    >>> vel = np.array([[1.0, 0.0], [6.0, 0.0]])
    >>> integrate(pos, vel, 0.1, 0.0, 1.0)
    >>> pos.tolist(), vel[:, 0].tolist()
    ([[0.1, 0.0], [1.0, 0.0]], [1.0, -6.0])
    """
    for k in range(pos.shape[0]):
        vel[k, 1] += gravity * dt
        for axis in range(2):
            x = pos[k, axis] + vel[k, axis] * dt
            if x > box or x < -box:
                vel[k, axis] = -vel[k, axis]
                x = min(max(x, -box), box)
            pos[k, axis] = x


@njit(cache=True, nogil=True)
def apply_drag(
    vel: np.ndarray,
    drag: np.ndarray,
    vel_rows: np.ndarray,
    drag_rows: np.ndarray,
    dt: float,
) -> None:
    """Slow each matched particle by its own drag coefficient.

    For every ``k``, the velocity row ``vel_rows[k]`` is scaled by
    ``1 - drag[drag_rows[k]] * dt``: the rows a view of ``vel`` and
    ``drag`` hands out, so only the particles that have both are touched.

    Notes
    -----
    O(m) for the m matched particles, in one compiled pass.

    Examples
    --------
    >>> vel = np.array([[1.0, 2.0], [1.0, 1.0]])
    >>> apply_drag(vel, np.array([0.5]), np.array([1]), np.array([0]), 1.0)
    >>> vel.tolist()
    [[1.0, 2.0], [0.5, 0.5]]
    """
    for k in range(vel_rows.shape[0]):
        factor = 1.0 - drag[drag_rows[k]] * dt
        row = vel_rows[k]
        vel[row, 0] *= factor
        vel[row, 1] *= factor


@njit(cache=True, nogil=True)
def despawn_expired(lives: Any, commands: Any) -> int:
    """Record the despawn of every particle whose lifetime ran out into
    ``commands``, a deferred-command buffer's twin; returns how many.

    ``lives`` is the twin of the ``life`` component's store
    (``world["life"].jit``): its ``life`` column, row by row, and the
    handle of each expired row (``lives.handle(k)``), so no handle is made
    for the particles that live on.

    Notes
    -----
    O(n) for the n particles with a lifetime, plus O(1) amortised per
    despawn recorded.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("life", "f4"); e = w.create(3)
    >>> w.add("life", e, life=[0.5, 0.0, -1.0])
    3
    >>> with w.deferred() as cmd:
    ...     despawn_expired(w["life"].jit, cmd.jit)
    2
    >>> len(w)
    1
    """
    life = lives.life
    count = 0
    for k in range(lives.size):
        if life[k] <= 0.0:
            commands.destroy(lives.handle(k))
            count += 1
    return count


@dataclass
class DemoSummary:
    """What a demo run did, and how fast.

    Examples
    --------
    >>> summary = DemoSummary(entities=10, steps=2, seconds=0.5, spawned=14,
    ...                       despawned=4, live=10, updates=20)
    >>> summary.balanced, summary.steps_per_second
    (True, 4.0)
    """

    entities: int
    steps: int
    seconds: float
    spawned: int
    despawned: int
    live: int
    updates: int
    live_per_step: list[int] = field(default_factory=list)
    despawned_per_step: list[int] = field(default_factory=list)
    threads: int = 1
    grid_ok: bool = True

    @property
    def balanced(self) -> bool:
        """Live particles equal spawned minus despawned.

        O(1).
        """
        return self.live == self.spawned - self.despawned

    @property
    def steps_per_second(self) -> float:
        """Simulation steps per wall-clock second.

        O(1).
        """
        return self.steps / self.seconds

    def lines(self) -> list[str]:
        """The summary as printed, one fact per line.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> DemoSummary(10, 2, 0.5, 14, 4, 10, 20).lines()[-1]
        'books balance: live 10 = spawned 14 - despawned 4 (ok)'
        """
        rate = 1.0 / self.seconds
        verdict = "ok" if self.balanced else "MISMATCH"
        relation = "=" if self.balanced else "!="
        return [
            f"entities:         {self.entities:,} at the start, "
            f"{self.live:,} at the end",
            f"steps:            {self.steps:,} in {self.seconds:.2f} s "
            f"({self.steps_per_second:,.1f} steps/s, {self.threads} threads)",
            f"entity updates:   {self.updates * rate:,.0f} /s",
            f"spawns:           {self.spawned - self.entities:,} "
            f"({(self.spawned - self.entities) * rate:,.0f} /s)",
            f"despawns:         {self.despawned:,} ({self.despawned * rate:,.0f} /s)",
            f"grid:             holds every particle, in the cell of its "
            f"position ({'ok' if self.grid_ok else 'MISMATCH'})",
            f"books balance: live {self.live:,} {relation} spawned {self.spawned:,} "
            f"- despawned {self.despawned:,} ({verdict})",
        ]


class ParticleWorld:
    """The demo's world and its systems, on a :class:`~sparseset.Schedule`.

    Examples
    --------
    >>> sim = ParticleWorld(seed=1)
    >>> sim.spawn(100), sim.step(), len(sim.world)
    (100, 100, 100)
    >>> sim.schedule.batches
    [['integrate', 'age'], ['drag', 'reap', 'regrid']]
    """

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.world = w = World()
        w.register("pos", "f8", shape=(2,), track=True)
        w.register("vel", "f8", shape=(2,))
        w.register("drag", "f4")
        w.register("life", "f4")
        self.motion = w.group("pos", "vel")
        self.dragged = w.view("vel", "drag")
        #: The world's grid of the particles, kept in step by ``regrid``.
        self.space = w.grid("pos", cell=CELL)
        self.spawned = 0
        self.despawned = 0
        self.schedule = sch = Schedule()
        sch.add(self.integrate, writes=("pos", "vel"), name="integrate")
        sch.add(self.age, writes=("life",), name="age")
        sch.add(self.drag, reads=("drag",), writes=("vel",), name="drag")
        sch.add(self.reap, reads=("life",), name="reap")
        sch.add(self.regrid, reads=("pos",), name="regrid")

    def spawn(self, count: int, into: World | Commands | None = None) -> int:
        """Spawn ``count`` particles from a fountain at the bottom; returns count.

        Each gets a position and a velocity; about ``MORTAL_SHARE`` of them
        a lifetime and ``DRAG_SHARE`` a drag coefficient. ``into`` is the
        world (the default) or a deferred-command buffer.

        Notes
        -----
        O(count) (the random draws, then four batch adds).

        Examples
        --------
        >>> sim = ParticleWorld(seed=2)
        >>> sim.spawn(50), len(sim.world), sim.spawned
        (50, 50, 50)
        """
        target = self.world if into is None else into
        rng = self.rng
        handles = target.create(count)
        target.add("pos", handles, pos=rng.uniform(-0.05, 0.05, (count, 2)) - [0, 0.9])
        speed = rng.uniform(0.5, 1.5, count)
        angle = rng.uniform(0.25 * np.pi, 0.75 * np.pi, count)
        target.add(
            "vel",
            handles,
            vel=np.stack([np.cos(angle), np.sin(angle)], 1) * speed[:, None],
        )
        mortal = handles[rng.random(count) < MORTAL_SHARE]
        target.add("life", mortal, life=rng.uniform(0.5, 3.0, mortal.shape[0]))
        dragged = handles[rng.random(count) < DRAG_SHARE]
        target.add("drag", dragged, drag=rng.uniform(0.1, 1.0, dragged.shape[0]))
        self.spawned += count
        return count

    # -- the systems ----------------------------------------------------------

    def integrate(self, world: World, dt: float) -> None:
        """Move every particle (the write scope declares the moves), in
        spans over the threads the schedule gives the batch's kernels.

        Notes
        -----
        O(n) for the n particles of the group.
        """
        with self.motion.write("pos") as pos:
            vel = self.motion["vel"]
            in_spans(
                pos.shape[0],
                lambda start, stop: integrate(
                    pos[start:stop], vel[start:stop], dt, GRAVITY, BOX
                ),
            )

    def age(self, world: World, dt: float) -> None:
        """Shorten every lifetime.

        Notes
        -----
        O(n) for the n particles with a lifetime.
        """
        life = world["life"]["life"]
        life -= dt

    def drag(self, world: World, dt: float) -> None:
        """Slow the particles that have a drag coefficient (in spans, as
        :meth:`integrate`).

        Notes
        -----
        O(m) for the m particles with drag, plus the view's join after a
        change.
        """
        view = self.dragged
        vel, drag = world["vel"]["vel"], world["drag"]["drag"]
        vel_rows, drag_rows = view.rows("vel"), view.rows("drag")
        in_spans(
            vel_rows.shape[0],
            lambda start, stop: apply_drag(
                vel, drag, vel_rows[start:stop], drag_rows[start:stop], dt
            ),
        )

    def reap(self, world: World, commands: Commands) -> None:
        """Despawn the expired (from compiled code, through the command
        buffer's twin) and spawn as many, when the batch ends.

        Notes
        -----
        O(n) for the n particles with a lifetime, plus the respawns,
        O(count) (:meth:`spawn`).
        """
        expired = despawn_expired(world["life"].jit, commands.jit)
        self.despawned += expired
        self.spawn(expired, into=commands)

    def regrid(self, world: World) -> None:
        """Bring the world's grid in step with the moves, births and deaths.

        Notes
        -----
        O(m) for the m particles moved, spawned or despawned since the last
        run (the grid's catch-up through change tracking); when most moved,
        as here, a copy of every entity key and position, O(n), sorted by cell
        when the grid is next asked (:attr:`counts`, :meth:`grid_matches`).
        """
        self.space.sync()

    @property
    def counts(self) -> np.ndarray:
        """Particles per cell of the box (``BOX_CELLS`` order), as the grid
        answers them now.

        Notes
        -----
        O(n + c) for the n particles and c cells of the box (the grid's
        catch-up first, if the particles changed since).

        Examples
        --------
        >>> sim = ParticleWorld(seed=3); sim.spawn(40); sim.step()
        40
        40
        >>> int(sim.counts.sum()), sim.counts.shape == (BOX_CELLS.shape[0],)
        (40, True)
        """
        offsets, _ = self.space.at(BOX_CELLS)
        return np.diff(offsets)

    def grid_matches(self) -> bool:
        """Whether the world's grid holds exactly the particles with a
        position, each in the cell of its position.

        Checked against a brute-force bucketing of every position: the
        members of each cell of the box, as the grid answers them, are the
        particles whose position floors to that cell.

        Notes
        -----
        O(n log n) for the n particles (two sorts).

        Examples
        --------
        >>> sim = ParticleWorld(seed=3); sim.spawn(40); sim.step(); sim.step()
        40
        40
        40
        >>> sim.grid_matches(), int(sim.counts.sum()) == len(sim.world["pos"])
        (True, True)
        """
        store = self.world["pos"]
        handles, pos = store.ids, store["pos"]
        if (
            len(self.space) != handles.shape[0]
            or not self.space.contains(handles).all()
        ):
            return False
        # Brute force: each particle's cell, as its row in BOX_CELLS.
        cell = np.floor(pos / CELL).astype(np.int64) + GRID // 2
        if cell.min(initial=0) < 0 or cell.max(initial=0) > GRID:
            return False
        want_cell = cell[:, 1] * (GRID + 1) + cell[:, 0]
        offsets, found = self.space.at(BOX_CELLS)
        got_cell = np.repeat(np.arange(BOX_CELLS.shape[0]), np.diff(offsets))
        want = np.lexsort((handles, want_cell))
        got = np.lexsort((found, got_cell))
        return bool(
            np.array_equal(handles[want], found[got])
            and np.array_equal(want_cell[want], got_cell[got])
        )

    def step(self, threads: int | None = None) -> int:
        """Advance one step (one run of the schedule); returns how many
        particles were updated.

        Notes
        -----
        O(n) for the n particles: the systems' costs, each above.

        Examples
        --------
        >>> sim = ParticleWorld(seed=2); sim.spawn(50)
        50
        >>> sim.step(), len(sim.world) == sim.spawned - sim.despawned
        (50, True)
        """
        updated = len(self.motion)
        self.schedule.run(self.world, threads=threads, dt=DT)
        return updated


def run_demo(
    entities: int = 1_000_000,
    steps: int = 200,
    seed: int = 0,
    save_path: str | None = None,
    plot_path: str | None = None,
    out: IO[str] = sys.stdout,
    threads: int | None = None,
) -> DemoSummary:
    """Run the particle demo and print its summary to ``out``.

    Parameters
    ----------
    entities : int, optional
        Particles alive at any time.
    steps : int, optional
        Simulation steps.
    seed : int, optional
        Seed of every random draw: the same seed gives the same run.
    save_path : str, optional
        Where to write the final world with :meth:`~sparseset.World.save`
        (``.npz``).
    plot_path : str, optional
        Where to write a PNG of the final positions and the live count per
        step (needs matplotlib).
    out : text stream, optional
        Where the summary goes; progress goes to stderr.
    threads : int, optional
        Threads each batch of systems runs on (default: the cores this
        process may use); 1 runs the systems one after another.

    Returns
    -------
    DemoSummary
        What the run did and how fast; ``balanced`` is the books' check.

    Examples
    --------
    >>> import io
    >>> summary = run_demo(entities=500, steps=3, out=io.StringIO())
    >>> summary.balanced, summary.live
    (True, 500)
    """
    # Compile (or load from numba's cache) every kernel on a tiny world
    # first, so the timing below is the simulation's alone.
    warm = ParticleWorld(seed)
    warm.spawn(64)
    warm.step(threads=1)

    sim = ParticleWorld(seed)
    sim.spawn(entities)
    live_per_step = []
    despawned_per_step = []
    updates = 0
    watch = Stopwatch()
    for _ in progress(range(steps), steps, "simulating"):
        despawned = sim.despawned
        updates += sim.step(threads)
        live_per_step.append(len(sim.world))
        despawned_per_step.append(sim.despawned - despawned)
    seconds = watch.seconds()

    summary = DemoSummary(
        entities=entities,
        steps=steps,
        seconds=seconds,
        spawned=sim.spawned,
        despawned=sim.despawned,
        live=len(sim.world),
        updates=updates,
        live_per_step=live_per_step,
        despawned_per_step=despawned_per_step,
        threads=used_threads(threads),
        grid_ok=sim.grid_matches(),
    )
    print("\n".join(summary.lines()), file=out)
    if save_path is not None:
        sim.world.save(save_path)
        print(f"saved the final world to {save_path}", file=out)
    if plot_path is not None:
        plot(sim.world, summary, plot_path)
        print(f"plotted the final positions to {plot_path}", file=out)
    return summary


def plot(world: World, summary: DemoSummary, path: str) -> None:
    """Write a PNG: the final positions, and the live and despawned per step.

    Needs matplotlib (``pip install sparseset[demo]``).

    Notes
    -----
    O(n + s) for n particles (at most 100,000 drawn) and s steps, plus
    matplotlib's rendering.

    Examples
    --------
    >>> import os, tempfile
    >>> sim = ParticleWorld(seed=1); sim.spawn(100)
    100
    >>> summary = DemoSummary(100, 1, 0.1, 100, 0, 100, 100, [100], [0])
    >>> path = os.path.join(tempfile.mkdtemp(), "demo.png")
    >>> plot(sim.world, summary, path)
    >>> os.path.getsize(path) > 0
    True
    """
    plt = pyplot()
    positions = world["pos"]["pos"]
    shown = positions[:: max(1, positions.shape[0] // 100_000)]
    figure, (scatter, curve) = plt.subplots(1, 2, figsize=(11, 5))
    scatter.scatter(shown[:, 0], shown[:, 1], s=0.2, alpha=0.4, linewidths=0)
    scatter.set(xlim=(-BOX, BOX), ylim=(-BOX, BOX), aspect="equal")
    scatter.set_title(f"final positions ({shown.shape[0]:,} of {positions.shape[0]:,})")
    steps = range(1, summary.steps + 1)
    (live,) = curve.plot(steps, summary.live_per_step, label="live")
    curve.set(xlabel="step", ylabel="live particles", title="particles per step")
    curve.set_ylim(0, max(summary.live_per_step) * 1.1)
    churn = curve.twinx()
    (despawned,) = churn.plot(
        steps,
        summary.despawned_per_step,
        color="tab:orange",
        label="despawned (and respawned)",
    )
    churn.set_ylabel("despawned in the step")
    curve.legend(handles=[live, despawned], loc="center right")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)

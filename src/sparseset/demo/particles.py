"""A particle simulation on a :class:`~sparseset.World`: ``python -m sparseset demo``.

Particles have a position and a velocity; some also feel drag, some have a
lifetime. Every step integrates all of them through an owning group (two
contiguous blocks, no lookups), applies drag through a view (a join of
``vel`` and ``drag``), ages the mortal ones, despawns the expired in one
batch and spawns as many replacements in another, so destroyed indexes
come back with new generations. The summary ends with a check that the
books balance: live particles = spawned - despawned.

Run it from the command line (``--help`` lists the options)::

    python -m sparseset demo --entities 1_000_000 --steps 200 --plot demo.png

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
from typing import IO

import numpy as np
from numba import njit

from ..io.console import Stopwatch, progress, pyplot
from ..world.world import World

#: Seconds of simulated time per step.
DT = 1.0 / 60.0
#: Shares of particles that carry a lifetime, and drag.
MORTAL_SHARE = 0.5
DRAG_SHARE = 0.3
#: Particles live in the box [-BOX, BOX]^2 and bounce off its walls.
BOX = 1.0
GRAVITY = -0.5


@njit(cache=True)
def integrate(
    pos: np.ndarray, vel: np.ndarray, dt: float, gravity: float, box: float
) -> None:
    """Move every particle of the group and bounce it off the box's walls.

    ``pos`` and ``vel`` are ``(n, 2)`` float arrays, updated in place: the
    velocity falls by ``gravity * dt``, the position moves by ``vel * dt``,
    and a particle that crosses a wall of ``[-box, box]^2`` is put back on
    it with that velocity component reversed.

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


@njit(cache=True)
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

    @property
    def balanced(self) -> bool:
        """Live particles equal spawned minus despawned."""
        return self.live == self.spawned - self.despawned

    @property
    def steps_per_second(self) -> float:
        """Simulation steps per wall-clock second."""
        return self.steps / self.seconds

    def lines(self) -> list[str]:
        """The summary as printed, one fact per line.

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
            f"({self.steps_per_second:,.1f} steps/s)",
            f"entity updates:   {self.updates * rate:,.0f} /s",
            f"spawns:           {self.spawned - self.entities:,} "
            f"({(self.spawned - self.entities) * rate:,.0f} /s)",
            f"despawns:         {self.despawned:,} ({self.despawned * rate:,.0f} /s)",
            f"books balance: live {self.live:,} {relation} spawned {self.spawned:,} "
            f"- despawned {self.despawned:,} ({verdict})",
        ]


class ParticleWorld:
    """The demo's world and its systems.

    Examples
    --------
    >>> sim = ParticleWorld(seed=1)
    >>> sim.spawn(100), sim.step(), len(sim.world)
    (100, 100, 100)
    """

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.world = World()
        self.world.register("pos", "f8", shape=(2,))
        self.world.register("vel", "f8", shape=(2,))
        self.world.register("drag", "f4")
        self.world.register("life", "f4")
        self.motion = self.world.group("pos", "vel")
        self.dragged = self.world.view("vel", "drag")
        self.spawned = 0
        self.despawned = 0

    def spawn(self, count: int) -> int:
        """Spawn ``count`` particles from a fountain at the bottom; returns count.

        Each gets a position and a velocity; about ``MORTAL_SHARE`` of them
        a lifetime and ``DRAG_SHARE`` a drag coefficient.

        Examples
        --------
        >>> sim = ParticleWorld(seed=2)
        >>> sim.spawn(50), len(sim.world), sim.spawned
        (50, 50, 50)
        """
        w, rng = self.world, self.rng
        handles = w.create(count)
        w.add("pos", handles, pos=rng.uniform(-0.05, 0.05, (count, 2)) - [0, 0.9])
        speed = rng.uniform(0.5, 1.5, count)
        angle = rng.uniform(0.25 * np.pi, 0.75 * np.pi, count)
        w.add(
            "vel",
            handles,
            vel=np.stack([np.cos(angle), np.sin(angle)], 1) * speed[:, None],
        )
        mortal = handles[rng.random(count) < MORTAL_SHARE]
        w.add("life", mortal, life=rng.uniform(0.5, 3.0, mortal.shape[0]))
        dragged = handles[rng.random(count) < DRAG_SHARE]
        w.add("drag", dragged, drag=rng.uniform(0.1, 1.0, dragged.shape[0]))
        self.spawned += count
        return count

    def step(self) -> int:
        """Advance one step; returns how many particles were updated.

        Moves every particle, applies drag, ages the mortal ones and
        replaces the expired with as many new particles.

        Examples
        --------
        >>> sim = ParticleWorld(seed=2); sim.spawn(50)
        50
        >>> sim.step(), len(sim.world) == sim.spawned - sim.despawned
        (50, True)
        """
        w = self.world
        updated = len(self.motion)
        integrate(self.motion["pos"], self.motion["vel"], DT, GRAVITY, BOX)
        apply_drag(
            w["vel"]["vel"],
            w["drag"]["drag"],
            self.dragged.rows("vel"),
            self.dragged.rows("drag"),
            DT,
        )
        life = w["life"]["life"]
        life -= DT
        expired = w["life"].ids[life <= 0.0]
        self.despawned += w.destroy(expired)
        self.spawn(expired.shape[0])
        return updated


def run_demo(
    entities: int = 1_000_000,
    steps: int = 200,
    seed: int = 0,
    save_path: str | None = None,
    plot_path: str | None = None,
    out: IO[str] = sys.stdout,
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
        Where to write the final world with :meth:`World.save` (``.npz``).
    plot_path : str, optional
        Where to write a PNG of the final positions and the live count per
        step (needs matplotlib).
    out : text stream, optional
        Where the summary goes; progress goes to stderr.

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
    warm.step()

    sim = ParticleWorld(seed)
    sim.spawn(entities)
    live_per_step = []
    despawned_per_step = []
    updates = 0
    watch = Stopwatch()
    for _ in progress(range(steps), steps, "simulating"):
        despawned = sim.despawned
        updates += sim.step()
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

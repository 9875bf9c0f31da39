"""
Particles on a World
====================

The particle demo of ``python -m sparseset demo``, small: particles leave a
fountain at the bottom of a box, fall under gravity, bounce off the walls,
feel drag if they carry a drag coefficient, and die when their lifetime
runs out, to be respawned at the fountain. Each step is one run of a
:class:`~sparseset.Schedule`: integrate through an owning group, drag
through a view, despawn and respawn through deferred commands, and keep
the world's spatial grid (``w.grid("pos", cell=CELL)``) in step through
the change tracker, counting the particles per cell.

First the trajectories of a few particles, then how many steps per second
the schedule runs on one thread and on two.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from sparseset.demo import BOX, ParticleWorld

sim = ParticleWorld(seed=3)
sim.spawn(2_000)
followed = sim.world.entities[:12].copy()  # handles: they die, they are not reused
paths = {int(h): [] for h in followed}
for _ in range(150):
    sim.step()
    alive = followed[sim.world.alive(followed)]
    positions = sim.world.get("pos", alive)["pos"]
    for h, p in zip(alive, positions, strict=True):
        paths[int(h)].append(p.copy())

figure, ax = plt.subplots(figsize=(6, 6))
for path in paths.values():
    if path:
        xy = np.array(path)
        ax.plot(xy[:, 0], xy[:, 1], lw=1)
        ax.plot(*xy[-1], "o", ms=3, color=ax.lines[-1].get_color())
ax.set(xlim=(-BOX, BOX), ylim=(-BOX, BOX), aspect="equal")
ax.set_title("twelve particles over 150 steps (a path ends where one died)")
print(f"{len(sim.world):,} particles; the grid matches: {sim.grid_matches()}")
# The grid answers handles: here the particles in the fountain's cell.
offsets, found = sim.space.at([[0, -15]])
print(f"{offsets[-1]} particles in cell (0, -15), {sim.counts.max()} in the fullest")

# %%
# Steps per second against threads
# --------------------------------
#
# ``Schedule.run(world, threads=N)`` runs each batch's systems on ``N``
# threads. Measured here, small and once, on whatever machine built this
# page: an illustration of how to measure it, not a benchmark (the
# :doc:`performance page <../performance>` has the demo's real figures).


def steps_per_second(threads: int, steps: int = 20) -> float:
    sim = ParticleWorld(seed=1)
    sim.spawn(20_000)
    sim.step(threads)  # the first step loads every kernel
    start = time.perf_counter()
    for _ in range(steps):
        sim.step(threads)
    return steps / (time.perf_counter() - start)


threads = [1, 2]
rates = [steps_per_second(n) for n in threads]
figure, ax = plt.subplots(figsize=(5, 3.5))
ax.bar([str(n) for n in threads], rates, color="tab:blue")
ax.set(xlabel="threads per batch of systems", ylabel="steps per second")
ax.set_title("20,000 particles, measured at build time")
for n, rate in zip(threads, rates, strict=True):
    print(f"{n} thread(s): {rate:.0f} steps/s")

"""The particle demo's step (``python -m sparseset demo``) beside its floor.

``DemoStep.time_step`` is one :meth:`ParticleWorld.step
<sparseset.demo.particles.ParticleWorld.step>` of ``N = 1_000_000``
particles in steady state (after the first lifetimes ran out), with ``threads`` threads:
1, 2, or ``None``, the demo's default (the cores this process may use);
``time_floor`` is the same step by hand on plain arrays and ``@njit``
loops (see ``_demo_floor``), in the same process. Read the ratios:

- ``time_step(1) / time_floor``: what the World, its stores, views,
  change tracking, its grid, deferred commands and the schedule add to the work
  (the issue's bound: at most 1.5);
- ``time_step(2) / time_step(1)``: what the schedule's choice of threads
  gains (the issue's bound: at most 0.8 on 2 free cores, and never above
  1.0, busy cores or one core);
- ``time_step(None)`` equals the better of the two: the default is the
  fastest setting.

Each ``setup`` builds its own world, so every parameter starts from the
same particles; the schedule learns how each batch runs best over the
first runs of its batches (``Schedule.modes``), which the warm-up covers.
"""

from sparseset.demo.particles import ParticleWorld

from ._demo_floor import FloorParticles
from ._size import sized

N = sized(1_000_000)
#: Steps before timing: the demo's steady state (every kernel compiled,
#: the first despawns and respawns done: the shortest lifetime is 30
#: steps; each batch's ways of using the threads tried).
WARM_STEPS = 40


class DemoStep:
    params = (1, 2, None)
    param_names = ("threads",)
    number = 1
    repeat = (10, 30, 40.0)
    timeout = 300

    def setup(self, threads):
        self.sim = ParticleWorld(seed=0)
        self.sim.spawn(N)
        for _ in range(WARM_STEPS):
            self.sim.step(threads)
        self.floor = FloorParticles(N, seed=0)
        for _ in range(WARM_STEPS):
            self.floor.step()

    def time_step(self, threads):
        self.sim.step(threads)

    def time_floor(self, threads):
        self.floor.step()

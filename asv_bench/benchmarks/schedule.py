"""Schedules: parallel batches against calling the systems directly.

- ``ParallelSystems``: two independent ``@njit(nogil=True)`` systems of
  equal cost, each over its own 1,000,000 entities' components (springs on
  ``pos``/``vel`` and on ``swing``/``spin``), in one batch. ``time_run``
  is ``sch.run`` with ``threads`` threads; ``time_direct`` calls the two
  systems one after another, the sequential floor. On 2 cores,
  ``time_run`` at 2 threads should be at most 0.65x ``time_direct``.
- ``Overhead``: eight systems that do nothing, no declared access (one
  batch): ``time_run`` against ``time_direct`` (calling the eight) is what
  a schedule adds per run.
"""

from numba import njit

from sparseset import Schedule, World

from ._size import sized

N = sized(1_000_000)


@njit(cache=True, nogil=True)
def spring(pos, vel, dt):
    for k in range(pos.shape[0]):
        for axis in range(pos.shape[1]):
            v = vel[k, axis] - (pos[k, axis] + 0.1 * vel[k, axis]) * dt
            vel[k, axis] = v
            pos[k, axis] += v * dt


def _spring_system(world, dt):
    g = world.group("pos", "vel")
    spring(g["pos"], g["vel"], dt)


def _swing_system(world, dt):
    g = world.group("swing", "spin")
    spring(g["swing"], g["spin"], dt)


class ParallelSystems:
    params = (1, 2)
    param_names = ("threads",)
    number = 1
    repeat = (5, 30, 30.0)

    def setup(self, threads):
        w = World(capacity=2 * N)
        w.register("pos", "f8", shape=(3,))
        w.register("vel", "f8", shape=(3,))
        w.register("swing", "f8", shape=(3,))
        w.register("spin", "f8", shape=(3,))
        bodies, pendulums = w.create(N), w.create(N)
        w.add("pos", bodies, pos=1.0)
        w.add("vel", bodies, vel=0.5)
        w.add("swing", pendulums, swing=1.0)
        w.add("spin", pendulums, spin=0.5)
        sch = Schedule()
        sch.add(_spring_system, writes=("pos", "vel"))
        sch.add(_swing_system, writes=("swing", "spin"))
        assert sch.batches == [["_spring_system", "_swing_system"]]
        self.w, self.sch = w, sch
        sch.run(w, threads=threads, dt=1e-3)  # compile, and time each system once

    def time_run(self, threads):
        self.sch.run(self.w, threads=threads, dt=1e-3)

    def time_direct(self, threads):
        _spring_system(self.w, dt=1e-3)
        _swing_system(self.w, dt=1e-3)


def _idle(world):
    pass


class Overhead:
    number = 200
    repeat = (5, 20, 20.0)

    def setup(self):
        self.w = World()
        self.sch = Schedule()
        self.systems = [_idle] * 8
        for k in range(8):
            self.sch.add(_idle, name=f"idle{k}")
        self.sch.run(self.w)

    def time_run(self):
        self.sch.run(self.w)

    def time_direct(self):
        w = self.w
        for system in self.systems:
            system(w)

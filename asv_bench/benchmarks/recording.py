"""Recording at 1,000,000 agents: what ``Recorder.collect`` adds to a step.

A world of 1M entities with a float64 ``wealth`` (and a float64 ``mass``
on every entity, for the two-component case), in memory:

- ``time_collect``: one recorded step of ``agents={"wealth": "wealth"}``
  while the agents stay the same (a copy of the column; the previous
  handles are reused);
- ``time_collect_model``: the same plus two model reporters (a sum and
  the entity count);
- ``time_collect_two_components``: ``agents={"wealth": ..., "mass":
  ...}``, whose agents are a view: two gathers;
- ``time_floor``: the floor, a plain ``np.copy`` of the column and of
  the handles appended to a list, as a hand-written recorder would.

The issue's target: recording one column of 1M agents every step adds at
most 20% to a Boltzmann step (in memory).
"""

import numpy as np

from sparseset import Recorder, World

from ._size import sized

N = sized(1_000_000)


class Recording:
    number = 1
    repeat = (5, 20, 20.0)

    def setup(self):
        w = World(capacity=N)
        w.register("wealth", "f8")
        w.register("mass", "f8")
        e = w.create(N)
        w.add("wealth", e, wealth=np.random.default_rng(49).random(N))
        w.add("mass", e, mass=1.0)
        self.w = w
        self.one = Recorder(w, agents={"wealth": "wealth"})
        self.model = Recorder(
            w,
            model={"total": lambda w: w["wealth"]["wealth"].sum(), "n": len},
            agents={"wealth": "wealth"},
        )
        self.two = Recorder(w, agents={"wealth": "wealth", "mass": "mass"})
        for recorder in (self.one, self.model, self.two):
            recorder.collect()  # the first record builds the handles
        self.column = w["wealth"]["wealth"]
        self.handles = w["wealth"].ids
        self.kept = []

    def time_collect(self):
        self.one.collect()

    def time_collect_model(self):
        self.model.collect()

    def time_collect_two_components(self):
        self.two.collect()

    def time_floor(self):
        self.kept.append((np.copy(self.column), np.copy(self.handles)))

"""Mesa's models on the engine next to hand-written numba floors (issue 49).

Each benchmark times one step of a model at ``agents`` = 10k, 100k and
1M (a hundredth at the CI size), against ``_models_floor``'s plain-array
version of the same rules (``time_floor``):

- ``Boltzmann``: ``BoltzmannWealth(n, side, side)`` at one agent a cell
  on average (Mesa's 100 on 10 x 10; 10k on 100 x 100);
- ``Schelling``: Mesa's density 0.8 on a square of ``agents / 0.8``
  cells; the model is stepped during the repeats, as the floor is, so
  both are timed on a grid settling towards happiness;
- ``Boids``: Mesa's density (100 boids on 100 x 100, vision 10) on a
  square of side ``10 sqrt(agents)``, the floor the boids sorted into
  cells of side ``vision`` and a step's move each step, as the model;
  both flock during the repeats.

Mesa's own steps are timed by ``peers.py`` (``asv_bench/peers/mesa_models.py``);
read ``model / floor`` from one run. Kernels are compiled (or loaded from
numba's cache) in ``setup``.
"""

import math

from sparseset.models import BoidFlockers, BoltzmannWealth, Schelling

from . import _models_floor
from ._size import sized

AGENTS = [sized(10_000), sized(100_000), sized(1_000_000)]
PARAM_NAMES = ["agents"]


class Boltzmann:
    params = AGENTS
    param_names = PARAM_NAMES
    number = 1
    repeat = 5
    timeout = 600

    def setup(self, agents):
        side = max(1, round(math.sqrt(agents)))
        self.model = BoltzmannWealth(n=agents, width=side, height=side, seed=0)
        self.floor = _models_floor.BoltzmannFloor(agents, side, side, 0)
        self.model.step()
        self.floor.step()

    def time_step(self, agents):
        self.model.step()

    def time_floor(self, agents):
        self.floor.step()


class SchellingStep:
    params = AGENTS
    param_names = PARAM_NAMES
    number = 1
    repeat = 5
    timeout = 600

    def setup(self, agents):
        side = max(2, round(math.sqrt(agents / 0.8)))
        self.model = Schelling(height=side, width=side, seed=0)
        self.floor = _models_floor.SchellingFloor(side, side, 0.8, 0.5, 0.4, 1, 0)
        self.model.step()
        self.floor.step()

    def time_step(self, agents):
        self.model.step()

    def time_floor(self, agents):
        self.floor.step()


class Boids:
    params = AGENTS
    param_names = PARAM_NAMES
    number = 1
    repeat = 5
    timeout = 600

    def setup(self, agents):
        side = 10 * math.sqrt(agents)
        self.model = BoidFlockers(
            population_size=agents, width=side, height=side, seed=0
        )
        self.floor = _models_floor.BoidsFloor(agents, side, side, 10.0, 0)
        self.model.step()
        self.floor.step()

    def time_step(self, agents):
        self.model.step()

    def time_floor(self, agents):
        self.floor.step()

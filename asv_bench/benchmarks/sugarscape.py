"""SugarscapeIG next to a hand-written numba floor of the same rules (issue 49).

mesa-frames' benchmark sizes: ``agents`` ants on a square of side
``max(20, 2 ceil(sqrt(agents)))`` (a quarter of the cells held). Each
sample starts from a fresh model (``number = 1``: asv runs ``setup``
before every sample), warmed by two steps where it times one:

- ``Step``: one step at 50k and 1M ants (a hundredth at the CI size),
  ``time_step`` the model, ``time_floor`` ``_sugarscape_floor``'s
  plain-array version; read ``model / floor`` from one run;
- ``Run100``: 100 steps of 50,000 ants from the start, mesa-frames'
  own measure (its ``sugarscape_ig_performance.md``: Mesa 24.4 s,
  mesa-frames 19.75 to 31 s, a hand-written numpy/numba engine 0.090 s).

The floor gives the very run the model gives (the same draws, ticket for
ticket). Kernels are compiled (or loaded from numba's cache) in
``setup``.
"""

import math

from sparseset.models import SugarscapeIG

from ._size import sized
from ._sugarscape_floor import SugarscapeFloor

STEP_AGENTS = [sized(50_000), sized(1_000_000)]
RUN_AGENTS = [sized(50_000)]
PARAM_NAMES = ["agents"]


def side_for(agents):
    """mesa-frames' benchmark grid: a square of twice the root."""
    return max(20, math.ceil(math.sqrt(agents)) * 2)


class Step:
    params = STEP_AGENTS
    param_names = PARAM_NAMES
    number = 1
    repeat = 5
    timeout = 600

    def setup(self, agents):
        side = side_for(agents)
        self.model = SugarscapeIG(agents, side, side, seed=0)
        self.floor = SugarscapeFloor(agents, side, side, 0)
        for _ in range(2):
            self.model.step()
            self.floor.step()

    def time_step(self, agents):
        self.model.step()

    def time_floor(self, agents):
        self.floor.step()


class Run100:
    params = RUN_AGENTS
    param_names = PARAM_NAMES
    number = 1
    repeat = 5
    timeout = 600

    def setup(self, agents):
        side = side_for(agents)
        warm = SugarscapeIG(100, 20, 20, seed=1)
        warm.run(10)  # past the first deaths: destroying loads its kernels
        SugarscapeFloor(100, 20, 20, 1).step()
        self.model = SugarscapeIG(agents, side, side, seed=0)
        self.floor = SugarscapeFloor(agents, side, side, 0)

    def time_run(self, agents):
        self.model.run(100)

    def time_floor(self, agents):
        for _ in range(100):
            self.floor.step()

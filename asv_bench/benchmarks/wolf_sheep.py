"""Mesa's wolf-sheep predation on the engine next to a hand-written numba floor.

``WolfSheepStep`` times one step of ``WolfSheep`` at ``agents`` = 10k,
100k and 1M animals (a hundredth at the CI size) at Mesa's default
proportions and density: 100 sheep and 50 wolves on 20 x 20, so two
thirds of the animals are sheep on a square of side ``20 sqrt(agents /
150)``, with Mesa's rates, gains and regrowth time. ``time_floor`` steps
``_wolf_sheep_floor``'s plain-array version of the same rules from the
same start. Both are stepped during the repeats (the sheep decline, as
in Mesa's model at these parameters), the same number of times, so
read ``model / floor`` from one run.

Mesa's own step is timed by ``asv_bench/peers/mesa_models.py``
(``--models WolfSheep``), with the same sizes and proportions. Kernels
are compiled (or loaded from numba's cache) in ``setup``.
"""

import math

from sparseset.models import WolfSheep

from . import _wolf_sheep_floor
from ._size import sized

AGENTS = [sized(10_000), sized(100_000), sized(1_000_000)]
PARAM_NAMES = ["agents"]


def proportions(agents):
    """Mesa's default proportions scaled to ``agents`` animals:
    ``(side, sheep, wolves)``."""
    side = max(1, round(20 * math.sqrt(agents / 150)))
    sheep = round(agents * 2 / 3)
    return side, sheep, agents - sheep


class WolfSheepStep:
    params = AGENTS
    param_names = PARAM_NAMES
    number = 1
    repeat = 5
    timeout = 600

    def setup(self, agents):
        side, sheep, wolves = proportions(agents)
        self.model = WolfSheep(
            width=side, height=side, initial_sheep=sheep, initial_wolves=wolves,
            seed=0,
        )  # fmt: skip
        self.floor = _wolf_sheep_floor.WolfSheepFloor(sheep, wolves, side, side, 0)
        self.model.step()
        self.floor.step()

    def time_step(self, agents):
        self.model.step()

    def time_floor(self, agents):
        self.floor.step()

"""Agent-based models from Mesa's example library, on the World and a Grid.

Each model takes Mesa's parameters and defaults, holds its agents as
entities of a :class:`~sparseset.World` (``.world``), and steps them
as Mesa's do (``.step()``, ``.run(steps)``), one at a time in a shuffled
order where Mesa's model does so, in a compiled loop:

- :class:`BoltzmannWealth` (:mod:`.boltzmann`), reporting ``gini()``;
- :class:`Schelling` (:mod:`.schelling`), reporting ``happy``;
- :class:`BoidFlockers` (:mod:`.boids`), reporting ``order()``;
- :class:`WolfSheep` (:mod:`.wolf_sheep`), reporting ``counts()``;
- :class:`SugarscapeIG` (:mod:`.sugarscape`, mesa-frames' example, all
  ants moving at once), reporting ``alive`` and ``mean_sugar()``.
"""

from .boids import BoidFlockers
from .boltzmann import BoltzmannWealth, gini_of
from .schelling import Schelling
from .sugarscape import SugarscapeIG
from .wolf_sheep import WolfSheep

__all__ = [
    "BoidFlockers",
    "BoltzmannWealth",
    "Schelling",
    "SugarscapeIG",
    "WolfSheep",
    "gini_of",
]

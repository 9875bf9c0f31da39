"""
Boid flockers: Mesa's flock, one boid at a time
===============================================

Mesa's :class:`~sparseset.models.BoidFlockers`: each boid in turn looks
at the others within its vision (across the wrapping edges), steers
towards them (cohesion), away from those too close (separation) and
along their headings (alignment), then flies one unit on. Random
headings line up into flocks: the alignment (the length of the mean unit
heading, 1 when all fly alike) climbs from near 0. Each arrow is a
boid, coloured by its heading.
"""

import matplotlib.pyplot as plt
import numpy as np

from sparseset.models import BoidFlockers

m = BoidFlockers(population_size=400, width=100, height=100, seed=4)
alignment = [m.order()]
for _ in range(150):
    m.step()
    alignment.append(m.order())
print(f"alignment {alignment[0]:.2f} -> {alignment[-1]:.2f}")

pos = m.world["pos"]["pos"]
heading = m.world["heading"]["heading"]
unit = heading / np.linalg.norm(heading, axis=1, keepdims=True)
fig, (left, right) = plt.subplots(
    1, 2, figsize=(10, 5), gridspec_kw={"width_ratios": [1, 1]}
)
left.quiver(pos[:, 0], pos[:, 1], unit[:, 0], unit[:, 1],
            np.arctan2(unit[:, 1], unit[:, 0]), cmap="hsv", scale=40,
            width=0.004)  # fmt: skip
left.set_xlim(0, m.width)
left.set_ylim(0, m.height)
left.set_aspect("equal")
left.set_title(f"{m.population_size} boids after 150 steps")
right.plot(alignment)
right.set_xlabel("step")
right.set_ylabel("alignment")
right.set_ylim(0, 1)
right.set_title("headings line up")
fig.tight_layout()
plt.show()

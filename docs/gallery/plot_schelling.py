"""
Schelling: mild preferences, a segregated grid
==============================================

Mesa's :class:`~sparseset.models.Schelling` model: two kinds of agents
fill 80% of a grid at random. An agent is content when at least 40% of
its neighbours are of its kind (a mild preference: a mixed neighbourhood
satisfies it), and the discontent move, one at a time, to random empty
cells. A few steps sort the grid into large single-kind regions. The
mean share of similar neighbours climbs from about one half to well
above the 40% anyone asked for.
"""

import matplotlib.pyplot as plt
import numpy as np

from sparseset.models import Schelling


def picture(m: Schelling) -> np.ndarray:
    """The grid as an image: -1 empty, else the agent's type."""
    image = np.full((m.width, m.height), -1.0)
    pos = m.world["pos"]["pos"].astype(np.int64)
    image[pos[:, 0], pos[:, 1]] = m.world["type"]["type"]
    return image.T


m = Schelling(height=80, width=80, density=0.8, homophily=0.4, seed=2)
before, start = picture(m), m.segregation()
steps = 0
while m.running and steps < 40:
    m.step()
    steps += 1
print(f"{len(m.agents)} agents; {m.pct_happy():.0f}% happy after {steps} steps")

fig, axes = plt.subplots(1, 2, figsize=(10, 5))
cmap = plt.matplotlib.colors.ListedColormap(["white", "tab:blue", "tab:orange"])
for ax, image, title in (
    (axes[0], before, f"start: similar neighbours {start:.0%}"),
    (axes[1], picture(m), f"step {steps}: similar neighbours {m.segregation():.0%}"),
):
    ax.imshow(image, cmap=cmap, vmin=-1, vmax=1, origin="lower")
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()
plt.show()

"""
A flock on a torus: who is near whom
====================================

Boids-style agents on a 40 x 40 torus, stepped with a
:class:`~sparseset.Grid`: every step, each bird turns towards the mean
heading of the birds within its vision (:meth:`~sparseset.Grid.within`,
periodic across the edges), then flies on and is placed again (a move
of every member leaves the cell table to be rebuilt once, by the next
query). Scattered headings line up into a few flocks. The colours are
each bird's neighbour count at the end, from
:meth:`~sparseset.Grid.pairs`: every pair within the vision once.
"""

import matplotlib.pyplot as plt
import numpy as np

from sparseset import Grid

rng = np.random.default_rng(3)
n, size, vision, speed = 1_500, 40.0, 2.0, 0.4
ids = np.arange(n)
pos = rng.uniform(0, size, (n, 2))
heading = rng.uniform(0, 2 * np.pi, n)
grid = Grid(cell=vision, dims=2, torus=(size, size))


def order(heading: np.ndarray) -> float:
    """How aligned the headings are: 1 when all are the same."""
    return float(np.hypot(np.cos(heading).mean(), np.sin(heading).mean()))


start = order(heading)
for _ in range(60):
    grid.place(ids, pos)
    offsets, found = grid.within(pos, vision)
    # The mean heading of each bird's neighbours (itself included), as a
    # vector sum per CSR segment.
    who = np.repeat(ids, np.diff(offsets))
    sx = np.bincount(who, np.cos(heading[found]), n)
    sy = np.bincount(who, np.sin(heading[found]), n)
    heading = np.arctan2(sy, sx) + rng.normal(0, 0.1, n)
    pos = (pos + speed * np.column_stack([np.cos(heading), np.sin(heading)])) % size

grid.place(ids, pos)
a, b = grid.pairs(vision)
neighbours = np.bincount(np.concatenate([a, b]), minlength=n)
print(
    f"alignment {start:.2f} -> {order(heading):.2f}; {len(a):,} pairs within {vision}"
)

fig, ax = plt.subplots(figsize=(6, 6))
arrows = ax.quiver(
    pos[:, 0], pos[:, 1], np.cos(heading), np.sin(heading), neighbours,
    cmap="viridis", scale=60, width=0.004,
)  # fmt: skip
fig.colorbar(arrows, ax=ax, shrink=0.8, label="neighbours within vision")
ax.set_xlim(0, size)
ax.set_ylim(0, size)
ax.set_aspect("equal")
ax.set_title(f"{n} birds after 60 steps: alignment {start:.2f} -> {order(heading):.2f}")
plt.show()

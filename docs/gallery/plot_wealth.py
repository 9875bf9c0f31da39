"""
Boltzmann wealth: coins given away one at a time
================================================

Mesa's first tutorial model, :class:`~sparseset.models.BoltzmannWealth`:
agents with one coin each wander a grid and give a coin to a random
cellmate. Everyone starts equal; after a few hundred steps of fair,
random gifts most agents hold little and a few hold much (a Gini near
0.65, as in Mesa's model). Left: the wealth distribution at the end,
against the exponential (Boltzmann-Gibbs) distribution of the same mean.
Right: the Gini coefficient step by step, from the model's
:class:`~sparseset.Recorder`.
"""

import matplotlib.pyplot as plt
import numpy as np

from sparseset.models import BoltzmannWealth

m = BoltzmannWealth(n=2_000, width=40, height=40, seed=7, record=True)
m.run(300)
wealth = m.world["wealth"]["wealth"]
gini = m.recorder.model_frame()
print(f"{len(wealth)} agents, {wealth.sum()} coins; Gini {m.gini():.2f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
counts = np.bincount(wealth)
left.bar(np.arange(counts.size), counts / counts.sum(), color="tab:blue",
         label="agents")  # fmt: skip
k = np.arange(counts.size)
mean = wealth.mean()
left.plot(k, np.exp(-k / mean) * (1 - np.exp(-1 / mean)), "k--",
          label="exponential, same mean")  # fmt: skip
left.set_xlabel("coins")
left.set_ylabel("share of agents")
left.legend()
left.set_title("wealth after 300 steps")
right.plot(gini.step, gini.gini)
right.set_xlabel("step")
right.set_ylabel("Gini coefficient")
right.set_ylim(0, 1)
right.set_title("inequality grows, then settles")
fig.tight_layout()
plt.show()

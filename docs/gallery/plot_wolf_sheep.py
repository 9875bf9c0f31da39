"""
Wolves, sheep and grass
=======================

Mesa's wolf-sheep predation model (:class:`sparseset.models.WolfSheep`)
on a 50 x 50 torus with Mesa's other defaults: 100 sheep and 50 wolves,
grass that regrows 30 steps after it is eaten. Each step the sheep, one
at a time in a shuffled order, move (away from wolves, towards grass),
eat and breed; then the wolves hunt them the same way. Births and deaths
are the world's deferred commands. ``record=True`` makes the model's
:class:`~sparseset.Recorder` collect Mesa's reporters (wolves, sheep,
fully grown grass) after every step; the curves below are its frame.
The sheep thrive while the grass lasts, the wolves follow the sheep and
the grass comes back when the sheep are few: noisy predator-prey cycles,
as in Wilensky's NetLogo model that Mesa's replicates.
"""

import matplotlib.pyplot as plt

from sparseset.models import WolfSheep

m = WolfSheep(
    width=50, height=50, initial_sheep=100, initial_wolves=50, seed=0, record=True
)
m.run(300)
frame = m.recorder.model_frame()
wolves, sheep, grass = m.counts()
print(f"after {m.steps} steps: {wolves} wolves, {sheep} sheep, {grass} grown patches")

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(frame.step, frame.sheep, label="sheep", color="tab:blue")
ax.plot(frame.step, frame.wolves, label="wolves", color="tab:red")
ax.plot(frame.step, frame.grass / 4, label="grown grass / 4", color="tab:green")
ax.set_xlabel("step")
ax.set_ylabel("count")
ax.legend(loc="upper right")
ax.set_title("WolfSheep on 50 x 50: populations per step")
fig.tight_layout()
plt.show()

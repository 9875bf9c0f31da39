"""
Sugarscape: ants on a field that grows back at once
===================================================

:class:`~sparseset.models.SugarscapeIG`, mesa-frames' Sugarscape with
instant growback: 2,500 ants on a 100 x 100 field, each moving every
step to the richest cell it sees along the axes (all at once, a lottery
for contested cells), eating it bare and burning its metabolism. The
left panel is the field after 40 steps with the living ants on it
(coloured by vision); the right one the survivors and their mean sugar
over the steps, read from the model's recorder.
"""

import matplotlib.pyplot as plt

from sparseset.models import SugarscapeIG

m = SugarscapeIG(agents=2_500, width=100, height=100, seed=7, record=True)
m.run(40)
frame = m.recorder.model_frame()
print(
    f"{m.alive:,} of 2,500 ants alive after {m.steps} steps, "
    f"mean sugar {m.mean_sugar():.1f}"
)

xy = m.world["pos"]["pos"]
vision = m.world["vision"]["vision"]
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 5))
left.imshow(m.sugar.T, origin="lower", cmap="YlOrBr", vmin=0, vmax=4)
dots = left.scatter(xy[:, 0], xy[:, 1], c=vision, s=4, cmap="viridis")
fig.colorbar(dots, ax=left, shrink=0.8, label="vision")
left.set_title("the field after 40 steps (eaten cells are pale)")
right.plot(frame.step, frame.agents_alive, color="tab:blue")
right.set_xlabel("step")
right.set_ylabel("ants alive", color="tab:blue")
twin = right.twinx()
twin.plot(frame.step, frame.mean_sugar, color="tab:orange")
twin.set_ylabel("mean sugar", color="tab:orange")
right.set_title("the starving thin out, the rest grow rich")
fig.tight_layout()
plt.show()

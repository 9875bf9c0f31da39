"""A program's first calls: a 1M-id set, a store and a small World.

Run as a script (``python first_program.py``); the benchmark module
``cold_start`` times it as a whole process, from an empty numba cache
and from one that ``python -m sparseset warm`` filled.
"""

import numpy as np

from sparseset import ComponentStore, SparseSet, World

rng = np.random.default_rng(0)
ids = rng.integers(0, 4_000_000, 1_000_000)
s = SparseSet()
s.add(ids)
s.contains(rng.integers(0, 4_000_000, 1_000))
s.discard(ids[:1_000])
both = s & SparseSet.from_ids(ids[::2])
store = ComponentStore({"pos": ("f8", 3), "mass": "f4"})
store.add(ids[:10_000], pos=0.0, mass=1.0)
store.get(ids[:3])
w = World()
w.register("pos", "f8", shape=(3,))
w.register("vel", "f8", shape=(3,))
e = w.create(10_000)
w.add("pos", e, pos=0.0)
w.add("vel", e[::2], vel=1.0)
w.view("pos", "vel").rows("pos")
w.destroy(e[:5])

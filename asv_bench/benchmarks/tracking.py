"""Change tracking at 1,000,000 entities: what a tracked component costs.

``pos`` (3 float64) on every entity, tracked or not (``tracked``), with a
reader that commits before every timed call, as a frame's system would:

- ``TrackingAdd.time_add`` / ``TrackingDiscard.time_discard``: 1M
  entities get ``pos`` (in random order) / 500k lose it; the tracked call
  beside the untracked one, neither store owned by a group;
- ``time_group_touch``: ``g.touch("pos")`` over a 1M-entity group;
- ``time_touch_10k``: ``w.touch("pos", handles)`` of 10,000 handles;
- ``time_changed_1pct``: ``r.changed()`` with 1% of the rows touched.

The last three only exist for ``tracked=True``.
"""

import functools

import numpy as np
from asv_runner.benchmarks.mark import skip_for_params

from sparseset import World

from ._size import sized

N = sized(1_000_000)
PARAMS = [False, True]
UNTRACKED = [(False,)]
PARAM_NAMES = ["tracked"]


@functools.cache
def _order():
    return np.random.default_rng(26).permutation(N).astype(np.int64)


class Tracking:
    params = PARAMS
    param_names = PARAM_NAMES
    number = 1
    repeat = (5, 20, 30.0)

    def setup(self, tracked):
        w = World(capacity=N)
        w.register("pos", "f8", shape=(3,), track=tracked)
        w.register("vel", "f8", shape=(3,))
        self.e = w.create(N)  # handles 0..N-1: the permutation is handles
        self.order = _order()
        w.add("pos", self.e, pos=0.0)
        self.reader = w.reader("pos") if tracked else None
        self.w = w
        self.touched = self.order[: N // 100]
        self.ten_k = self.order[:10_000]
        if tracked:
            w.add("vel", self.e, vel=1.0)
            self.group = w.group("pos", "vel")
            self.reader.commit()
            w.touch("pos", self.touched)

    @skip_for_params(UNTRACKED)
    def time_group_touch(self, tracked):
        self.group.touch("pos")

    @skip_for_params(UNTRACKED)
    def time_touch_10k(self, tracked):
        self.w.touch("pos", self.ten_k)

    @skip_for_params(UNTRACKED)
    def time_changed_1pct(self, tracked):
        self.reader.changed()


class TrackingAdd:
    """``time_add``: 1M entities get ``pos``, in random order, into a
    component that holds none yet (the reader committed just before)."""

    params = PARAMS
    param_names = PARAM_NAMES
    number = 1
    repeat = (5, 20, 30.0)

    def setup(self, tracked):
        self.w = World(capacity=N)
        self.w.register("pos", "f8", shape=(3,), track=tracked)
        self.w.create(N)
        self.order = _order()
        self.w["pos"].reserve(N)
        self.reader = self.w.reader("pos") if tracked else None

    def time_add(self, tracked):
        self.w.add("pos", self.order, pos=1.0)


class TrackingDiscard:
    """``time_discard``: 500k of 1M entities, in random order, lose ``pos``
    (no group owns it, tracked or not, so the two differ only in tracking)."""

    params = PARAMS
    param_names = PARAM_NAMES
    number = 1
    repeat = (5, 20, 30.0)

    def setup(self, tracked):
        self.w = World(capacity=N)
        self.w.register("pos", "f8", shape=(3,), track=tracked)
        self.order = _order()
        self.w.add("pos", self.w.create(N), pos=0.0)
        self.reader = self.w.reader("pos") if tracked else None

    def time_discard(self, tracked):
        self.w.discard("pos", self.order[: N // 2])

"""Counting events per key: ``SparseMap.add_at`` beside pandas and numpy.

``EVENTS`` event keys (user ids up to 2**40, so the keys need the hash
index; a zipf-like draw over ``KEYS`` distinct ids, so some repeat often)
are counted into a new counter per call:

- ``time_sparsemap_add_at``: ``SparseMap("i8", index="hash").add_at(keys, 1)``;
- ``time_pandas_value_counts``: ``pd.Series(keys).value_counts()``;
- ``time_numpy_unique``: ``np.unique(keys, return_counts=True)``;
- ``time_sparsemap_add_at_existing``: ``add_at`` into a counter that holds
  every key already (the second batch of a stream).

One thread each (``NUMBA_NUM_THREADS`` unset: ``add_at`` writes, so it runs
on the caller anyway). ``Events.track_distinct`` checks every method
counted the same keys.
"""

import functools

import numpy as np
import pandas as pd

from sparseset import SparseMap

#: Events per call, and distinct keys among them.
EVENTS = 5_000_000
KEYS = 1_000_000
SEED = 28


@functools.cache
def _keys():
    rng = np.random.default_rng(SEED)
    ids = rng.choice(2**40, KEYS, replace=False).astype(np.int64)
    # Zipf-like popularity: key i drawn about 1 / (i + 10) of the time.
    weights = 1.0 / (np.arange(KEYS) + 10.0)
    return ids[rng.choice(KEYS, EVENTS, p=weights / weights.sum())]


class Events:
    """Count ``EVENTS`` keys; see the module docstring."""

    number = 1
    repeat = (3, 10, 60.0)
    timeout = 300

    def setup(self):
        self.keys = _keys()
        self.full = SparseMap("i8", index="hash")
        self.full.add_at(self.keys, 1)

    def time_sparsemap_add_at(self):
        SparseMap("i8", index="hash").add_at(self.keys, 1)

    def time_sparsemap_add_at_existing(self):
        self.full.add_at(self.keys, 1)

    def time_pandas_value_counts(self):
        pd.Series(self.keys).value_counts()

    def time_numpy_unique(self):
        np.unique(self.keys, return_counts=True)

    def track_distinct(self):
        counts = SparseMap("i8", index="hash")
        counts.add_at(self.keys, 1)
        pandas = pd.Series(self.keys).value_counts()
        assert len(counts) == len(pandas)
        assert int(counts.data.sum()) == EVENTS == int(pandas.sum())
        return len(counts)

    track_distinct.unit = "keys"

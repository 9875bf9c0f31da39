"""Counting events per key: ``SparseMap.add_at`` beside pandas and numpy.

``EVENTS`` event keys (user ids up to 2**40, so the keys need the hash
index) drawn over ``keys`` distinct ids, ``draw`` either ``"zipf"`` (key
i drawn about 1 / (i + 10) of the time, so some repeat often) or
``"uniform"``, are counted per call:

- ``time_sparsemap_add_at``: ``SparseMap("i8", index="hash").add_at(keys, 1)``
  into a new counter (every key new: the first batch of a stream);
- ``time_sparsemap_add_at_existing``: ``add_at`` into a counter that holds
  every key already (the second batch of a stream);
- ``time_pandas_value_counts``: ``pd.Series(keys).value_counts()``, the
  baseline issue 28 asks ``add_at`` to beat five times over;
- ``time_numpy_unique``: ``np.unique(keys, return_counts=True)``.

One thread each (``add_at`` writes, so it runs on the caller anyway; run
asv with ``NUMBA_NUM_THREADS=1`` for the same of every kernel).
``Events.track_distinct`` checks every method counted the same keys.

Run as a script, it times the counters and pandas in paired, alternating
rounds and prints each case's median ratio (pandas time over ``add_at``
time), the figure issue 28 closes on::

    NUMBA_NUM_THREADS=1 python asv_bench/benchmarks/counters.py --rounds 7

The script also takes two draws asv does not time: ``"zipf1.3"`` (numpy's
Zipf draw with exponent 1.3, modulo ``keys``: a few keys take most
events) and ``"scattered"`` (every event an id drawn from [0, 2**40),
``keys`` ignored: nearly every key distinct, as in the event log of
issue 28)::

    python asv_bench/benchmarks/counters.py --keys 1000000 --draw zipf1.3 scattered
"""

import argparse
import functools
import gc
import statistics
import time

import numpy as np
import pandas as pd

from sparseset import SparseMap

if __package__:
    from ._size import sized
else:  # run as a script: python asv_bench/benchmarks/counters.py
    from _size import sized

#: Events per call.
EVENTS = sized(5_000_000)
#: Distinct keys: few (a hash table in cache) and many (one far past it).
KEYS = [sized(1_000, 100), sized(1_000_000)]
DRAWS = ["zipf", "uniform"]
PARAM_NAMES = ["keys", "draw"]
SEED = 28


@functools.cache
def _keys(keys=1_000_000, draw="zipf", events=EVENTS):
    rng = np.random.default_rng(SEED)
    if draw == "scattered":
        return rng.integers(0, 2**40, events, dtype=np.int64)
    ids = rng.choice(2**40, keys, replace=False).astype(np.int64)
    if draw == "uniform":
        return ids[rng.integers(0, keys, events)]
    if draw == "zipf1.3":
        return ids[rng.zipf(1.3, events) % keys]
    if draw != "zipf":
        raise ValueError(f"draw = {draw!r}: not zipf, uniform, zipf1.3 or scattered")
    weights = 1.0 / (np.arange(keys) + 10.0)
    return ids[rng.choice(keys, events, p=weights / weights.sum())]


def _counter(keys):
    counts = SparseMap("i8", index="hash")
    counts.add_at(keys, 1)
    return counts


class Events:
    """Count ``EVENTS`` keys; see the module docstring."""

    params = (KEYS, DRAWS)
    param_names = PARAM_NAMES
    number = 1
    repeat = (3, 10, 60.0)
    timeout = 300

    def setup(self, keys, draw):
        self.keys = _keys(keys, draw)
        self.full = _counter(self.keys)

    def time_sparsemap_add_at(self, keys, draw):
        SparseMap("i8", index="hash").add_at(self.keys, 1)

    def time_sparsemap_add_at_existing(self, keys, draw):
        self.full.add_at(self.keys, 1)

    def time_pandas_value_counts(self, keys, draw):
        pd.Series(self.keys).value_counts()

    def time_numpy_unique(self, keys, draw):
        np.unique(self.keys, return_counts=True)

    def track_distinct(self, keys, draw):
        counts = _counter(self.keys)
        pandas = pd.Series(self.keys).value_counts()
        assert len(counts) == len(pandas)
        assert int(counts.data.sum()) == EVENTS == int(pandas.sum())
        assert (counts[pandas.index.to_numpy()] == pandas.to_numpy()).all()
        return len(counts)

    track_distinct.unit = "keys"


def _seconds(call):
    gc.collect()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def paired_ratios(keys, draw, rounds, events=EVENTS):
    """Per round, pandas' time over a new counter's and over a full one's,
    the three timed back to back in an order that alternates by round."""
    ids = _keys(keys, draw, events)
    full = _counter(ids)
    calls = {
        "pandas": lambda: pd.Series(ids).value_counts(),
        "fresh": lambda: SparseMap("i8", index="hash").add_at(ids, 1),
        "warm": lambda: full.add_at(ids, 1),
    }
    times = {name: [] for name in calls}
    for r in range(rounds):
        order = list(calls) if r % 2 == 0 else list(reversed(calls))
        for name in order:
            times[name].append(_seconds(calls[name]))
    return {
        name: (
            statistics.median(times[name]),
            statistics.median(
                p / t for p, t in zip(times["pandas"], times[name], strict=True)
            ),
        )
        for name in calls
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--events", type=int, default=EVENTS)
    parser.add_argument("--keys", type=int, nargs="*", default=KEYS)
    parser.add_argument(
        "--draw", nargs="*", default=DRAWS, choices=[*DRAWS, "zipf1.3", "scattered"]
    )
    args = parser.parse_args()
    import numba

    numba.set_num_threads(1)
    _counter(_keys(1_000, "uniform", 10_000))  # compile or load the kernels
    print(f"{args.events} events, one thread, median of {args.rounds} rounds")
    for keys in args.keys:
        for draw in args.draw:
            result = paired_ratios(keys, draw, args.rounds, args.events)
            cells = [f"pandas value_counts {1e3 * result['pandas'][0]:.1f} ms"]
            for name in ("fresh", "warm"):
                ms, ratio = result[name]
                cells.append(f"add_at {name} {1e3 * ms:.1f} ms ({ratio:.2f}x)")
            print(f"{keys:>9} keys {draw:>7}: " + ", ".join(cells), flush=True)


if __name__ == "__main__":
    main()

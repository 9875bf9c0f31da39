"""Threaded lookups: what the ``prange`` kernels save, and from which batch size.

``SparseSet.contains`` and ``index`` look a batch of at least
``sparseset.sets.sparse_set.PARALLEL_THRESHOLD`` ids up on all numba threads
(the ``*_parallel`` kernels), and a smaller one in a plain loop. Two
classes keep the record behind that choice, on the flat set of the
``sparse_set`` suite (``N = 1_000_000`` members drawn from a
``4_000_000``-id space, queries half members and half non-members):

- ``ThreadedLookup``: the public ``s.contains`` and ``s.index`` of N
  queries with numba set to 1 and to 2 threads; at 1 the set takes the
  serial kernel itself. ``threads=1 / threads=2`` is the speedup.
- ``LookupKernels``: the serial kernel ``sparseset.kernels.find_all``
  against its threaded twin ``find_all_parallel`` (2 threads), both looking
  up the same ``2**20`` queries in consecutive batches of ``batch`` ids,
  from ``2**10`` (1024 calls) to ``2**20`` (one call). Every row does the
  same lookups, so ns per id = time / ``2**20`` and time / (``2**20`` /
  ``batch``) is one call; ``serial / parallel`` crosses 1 where threading
  starts to pay, and the threshold belongs a little past that point. The
  calls follow each other back to back, with their arguments (and the
  ``out`` slices) made in ``setup``: each call pays its dispatch and, for
  the threaded kernel, its launch, but the OpenMP workers may still be
  spinning from the previous call. A lone call, after other work, pays
  more to wake them, so read the crossover as a lower bound.

The threads compete with everything else the machine runs: with one other
busy process on a 2-core VM, numba's OpenMP workers (which spin between
parallel regions) made every threaded call cost 8-16 ms, whatever its
size. Only runs on an otherwise idle machine say anything about threading.

A thread count the machine lacks is skipped (``NotImplementedError``);
``teardown`` gives numba back all of its threads. Ratios in the same run
are what to read, not the absolute times. ``setup`` reruns, untimed,
before every timed call (``number = 1``); it only sets the threads and
hands out the data, built once per benchmark process by the cached
``_...`` functions below.
"""

import functools

import numba
import numpy as np

from sparseset import kernels

from .sparse_set import (
    N,
    _contains_queries,
    _member_set,
    _members,
    _rng,
    _space_permutation,
)

THREADS = [1, 2]
THREAD_PARAM_NAMES = ["threads"]
#: Query batch sizes for the kernels, around PARALLEL_THRESHOLD (2**15).
BATCHES = [2**10, 2**12, 2**14, 2**15, 2**16, 2**18, 2**20]
#: Queries each kernel row looks up, in batches: the largest batch.
TOTAL = BATCHES[-1]
BATCH_PARAM_NAMES = ["batch"]
#: Threads the threaded kernel runs on in ``LookupKernels``.
KERNEL_THREADS = 2

# asv skips module attributes starting with "_", so the data builders below
# are never mistaken for benchmarks.


def _use_threads(threads):
    """Set numba to ``threads`` threads, or skip if the machine has fewer."""
    available = numba.config.NUMBA_NUM_THREADS
    if threads > available:
        raise NotImplementedError(f"{threads} threads: numba has {available}")
    numba.set_num_threads(threads)


def _all_threads():
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@functools.cache
def _batch_queries():
    """``2**20`` queries, half members and half non-members, shuffled.

    Drawn like ``sparse_set``'s queries, which stop at N, short of
    ``2**20``; every batch of them is about half members as well.
    """
    rng = _rng(40)
    hits = rng.choice(_members(), TOTAL // 2, replace=False)
    misses = rng.choice(_space_permutation()[N:], TOTAL - TOTAL // 2, replace=False)
    return rng.permutation(np.concatenate([hits, misses]))


@functools.cache
def _warm_up():
    """Compile (or load from numba's cache) the four lookup kernels.

    On the benchmarks' own set and int64 queries, so the same
    specialisations are hit.
    """
    a = _member_set()._arrays
    q = _contains_queries()[:4]
    found = np.empty(4, np.bool_)
    where = np.empty(4, np.int64)
    kernels.find_all(a.sparse, a.dense, a.n, q, found, *kernels.LOOKUP_TUNING)
    kernels.find_all_parallel(a.sparse, a.dense, a.n, q, found, *kernels.LOOKUP_TUNING)
    kernels.find_all(a.sparse, a.dense, a.n, q, where, *kernels.LOOKUP_TUNING)
    kernels.find_all_parallel(a.sparse, a.dense, a.n, q, where, *kernels.LOOKUP_TUNING)


class ThreadedLookup:
    """``s.contains`` and ``s.index`` of N queries on 1 and on 2 threads.

    The answers are new arrays (bool for ``contains``, int64 positions for
    ``index``), as the public methods make them.
    """

    params = THREADS
    param_names = THREAD_PARAM_NAMES
    number = 1

    def setup(self, threads):
        _use_threads(threads)
        _warm_up()
        self.s = _member_set()
        self.q = _contains_queries()

    def teardown(self, threads):
        _all_threads()

    def time_contains(self, threads):
        return self.s.contains(self.q)

    def time_index(self, threads):
        return self.s.index(self.q)


class LookupKernels:
    """The serial and the threaded ``contains`` kernel, ``batch`` ids a call.

    Each timed call looks up all ``2**20`` queries against the 1M-member
    flat set, in ``2**20 / batch`` kernel calls; the threaded kernel runs on
    2 threads. Each kernel call writes into its own slice of one ``out``.
    """

    params = BATCHES
    param_names = BATCH_PARAM_NAMES
    number = 1

    def setup(self, batch):
        _use_threads(KERNEL_THREADS)
        _warm_up()
        a = _member_set()._arrays
        q = _batch_queries()
        out = np.empty(TOTAL, np.bool_)
        self.calls = [
            (a.sparse, a.dense, a.n, q[k : k + batch], out[k : k + batch])
            for k in range(0, TOTAL, batch)
        ]

    def teardown(self, batch):
        _all_threads()

    def time_serial(self, batch):
        contains = kernels.find_all
        for args in self.calls:
            contains(*args)

    def time_parallel(self, batch):
        contains = kernels.find_all_parallel
        for args in self.calls:
            contains(*args)

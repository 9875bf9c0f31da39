"""Threaded lookups: what sharing a batch over threads saves, busy or not.

``SparseSet.contains`` and ``index`` share a batch of at least
``sparseset.config.PARALLEL_THRESHOLD`` ids out over numba's thread count:
the caller and the library's own pool (``sparseset.sets.pool``) claim
spans of it, each on the serial kernel ``find_all``, which releases the
GIL. Three classes keep the record, on the flat set of the ``sparse_set``
suite (``N = 1_000_000`` members drawn from a ``4_000_000``-id space,
queries half members and half non-members):

- ``ThreadedLookup``: the public ``s.contains`` and ``s.index`` of N
  queries with numba set to 1 and to 2 threads; at 1 the set runs the
  kernel on its caller. ``threads=1 / threads=2`` is the speedup.
- ``SharedLookup``: the serial kernel against the same kernel shared out
  over 2 threads (``pool.share_out``), both looking up the same ``2**20``
  queries in consecutive batches of ``batch`` ids, from ``2**10`` (1024
  calls) to ``2**20`` (one call). ``serial / shared`` crosses 1 where
  sharing starts to pay; the threshold belongs a little past that point.
- ``Contention``: the reads of ``python -m sparseset bench --contention``
  (``contains``, ``index``, a view's ``rows`` and ``ids`` after a small
  change) at 1k, 32k and 1M, on 1 and 2 threads, while a second process
  runs the same read nonstop (``sparseset.bench.contention``): threads
  must never lose to one thread there. The second process starts in
  ``setup`` (once per read and size) and stops when the benchmark process
  ends. Each sample times many calls (``sample_time``), not one.

A thread count the machine lacks is skipped (``NotImplementedError``);
``teardown`` gives numba back all of its threads. Ratios in the same run
are what to read, not the absolute times. ``setup`` reruns, untimed,
before every timed call (``number = 1``, except in ``Contention``); it
only sets the threads and hands out the data, built once per benchmark
process by the cached ``_...`` functions below.
"""

import atexit
import ctypes
import functools
import signal
import subprocess
import sys
import time

import numba
import numpy as np

from sparseset import kernels
from sparseset.bench import contention
from sparseset.sets import pool

from ._size import sized
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
#: Query batch sizes for the kernels, around PARALLEL_THRESHOLD (2**17).
BATCHES = [2**10, 2**12, 2**14, 2**15, 2**16, 2**18, 2**20]
#: Queries each kernel row looks up, in batches: the largest batch.
TOTAL = sized(BATCHES[-1], 2**12)
#: ``Contention``'s sizes: at the small size, the smallest alone (each
#: combination starts a second process and gives it seconds to warm up).
CONTENTION_SIZES = sized(list(contention.SIZES), [contention.SIZES[0]])
BATCH_PARAM_NAMES = ["batch"]
CONTENTION_PARAM_NAMES = ["read", "size", "threads"]
#: Threads a shared batch runs on in ``SharedLookup``.
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
    """Compile (or load from numba's cache) the lookup kernel, for the
    benchmarks' own set and int64 queries, bool and int64 answers."""
    a = _member_set()._engine.state
    q = _contains_queries()[:4]
    for out in (np.empty(4, np.bool_), np.empty(4, np.int64)):
        kernels.find_all(a.sparse, a.dense, a.n, q, out, *kernels.LOOKUP_TUNING)


#: Linux's prctl option: a signal for the process when its parent ends.
PR_SET_PDEATHSIG = 1

#: The second processes of ``Contention``, by (read, size).
_LOADS = {}


def _stop_loads(keep=None):
    for key in list(_LOADS):
        if key != keep:
            process = _LOADS.pop(key)
            process.terminate()
            process.wait()


atexit.register(_stop_loads)


def _dies_with_its_parent():
    """In the load process, before it runs: on Linux, ask for SIGTERM when
    the benchmark's process ends. asv's forkserver ends each benchmark's
    process without running its atexit handlers, which would leave the load
    running (and loading the cores) for the rest of the suite."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: atexit stops the loads
        pass


def _load(read, size):
    """A second process running ``read`` at ``size`` nonstop (started once,
    given time to warm up); any other is stopped."""
    _stop_loads(keep=(read, size))
    if (read, size) not in _LOADS:
        _LOADS[read, size] = subprocess.Popen(
            [sys.executable, "-m", contention.__name__, read, str(size), "1"],
            stdout=subprocess.DEVNULL,
            preexec_fn=_dies_with_its_parent,
        )
        time.sleep(contention.LOAD_START_SECONDS)


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


class SharedLookup:
    """The serial kernel and the same shared out over 2 threads, ``batch``
    ids a call.

    Each timed call looks up all ``2**20`` queries against the 1M-member
    flat set, in ``2**20 / batch`` batches. Each batch writes into its own
    slice of one ``out``.
    """

    params = BATCHES
    param_names = BATCH_PARAM_NAMES
    number = 1

    def setup(self, batch):
        _use_threads(KERNEL_THREADS)
        _warm_up()
        a = _member_set()._engine.state
        q = _batch_queries()
        out = np.empty(TOTAL, np.bool_)
        self.calls = [
            (a.sparse, a.dense, a.n, q[k : k + batch], out[k : k + batch])
            for k in range(0, TOTAL, batch)
        ]

    def teardown(self, batch):
        _all_threads()

    def time_serial(self, batch):
        contains, tuning = kernels.find_all, kernels.LOOKUP_TUNING
        for args in self.calls:
            contains(*args, *tuning)

    def time_shared(self, batch):
        contains, tuning = kernels.find_all, kernels.LOOKUP_TUNING
        for args in self.calls:
            pool.share_out(
                args[3].shape[0],
                lambda a, b, args=args: contains(
                    *args[:3], args[3][a:b], args[4][a:b], *tuning
                ),
            )


class Contention:
    """Each threaded read on 1 and 2 threads while a second process runs
    the same read nonstop (see the module notes)."""

    params = (list(contention.READS), CONTENTION_SIZES, THREADS)
    param_names = CONTENTION_PARAM_NAMES
    # Many calls per sample (asv picks how many): one call's time on a busy
    # machine is mostly the wait for a core.
    sample_time = 0.05
    repeat = (5, 20, 20.0)
    timeout = 300

    def setup(self, read, size, threads):
        _use_threads(threads)
        self.call = _workload(read, size)
        self.call()
        _load(read, size)

    def teardown(self, read, size, threads):
        _all_threads()

    def time_read(self, read, size, threads):
        self.call()


@functools.cache
def _workload(read, size):
    return contention.workload(read, size, 0)

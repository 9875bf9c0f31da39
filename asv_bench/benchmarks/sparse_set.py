"""SparseSet batch operations next to their baselines, at cache-leaving size.

Every workload uses ``N = 1_000_000`` distinct ids drawn from a
``4_000_000``-id space in random order, so the random gathers miss the
caches as they would in a real program. Each class times the library and its
baselines on the same data in the same run, so that their ratios (not the
absolute times, which depend on the machine) are what to read:

- ``time_sparseset``: the public ``SparseSet`` API.
- ``time_numba_floor``: a bare ``@njit`` loop on plain arrays of the same
  layout (see ``_floor``); ``sparseset / floor`` is the library's overhead.
- ``time_python_set``: the builtin ``set``, one Python operation per id.
- ``time_np_isin`` / ``time_np_intersect1d``: the vectorised numpy answer.

The data is the bench's: ``sparseset.bench.data.WorkloadData`` at
``n = N`` with the bench's default seed, so these classes time the same ids,
queries, victims and sets as ``python -m sparseset bench`` at n = 1,000,000
(whose table compares the same calls with the same baselines, less the
floor). It is built once per benchmark process by the cached ``_...``
functions below; ``setup`` only hands out fresh mutable state. With a
``setup`` present asv reruns it, untimed, before every timed call
(``number = 1``), so a mutating workload always starts from the same state.
"""

import functools

import numpy as np

from sparseset import SparseSet
from sparseset.bench import data

from . import _floor
from ._size import sized

N = sized(1_000_000)
#: The id space: ``WorkloadData``'s ``4 * n``.
SPACE = 4 * N
#: The bench's default seed: every input here is one the bench draws too.
SEED = data.SEED

# asv skips module attributes starting with "_", so the data builders below
# are never mistaken for benchmarks.


@functools.cache
def _data():
    """The bench's inputs at N ids, each drawn on first use."""
    return data.WorkloadData(N, SEED)


@functools.cache
def _rng(stream):
    """The generator of one further input the bench does not draw.

    Other modules' own data (their victims, query batches, id draws) comes
    from here: streams of the same seed, one per purpose, apart from the
    bench's own (``sparseset.bench.data.STREAMS``).
    """
    return data.rng(SEED, stream)


def _space_permutation():
    """The whole id space in random order: the first N are the members."""
    return _data().space_order


def _members():
    return _data().ids


def _members_list():
    return _data().ids_list


@functools.cache
def _member_set():
    return _data().member_set()


@functools.cache
def _member_pyset():
    # A set of its own: some benchmarks change it (and restore it).
    return set(_members_list())


def _contains_queries():
    """N queries, half members and half non-members, shuffled together."""
    return _data().queries


@functools.cache
def _contains_queries_list():
    return _contains_queries().tolist()


def _discard_victims():
    """A random half of the members, in random order."""
    return _data().victims


@functools.cache
def _discard_victims_list():
    return _discard_victims().tolist()


def _other_ids():
    """A second 1M-id set: the last N/2 members plus N/2 non-members."""
    return _data().other


@functools.cache
def _other_set():
    return _data().other_set()


@functools.cache
def _other_pyset():
    return set(_other_ids().tolist())


@functools.cache
def _floor_arrays(which):
    """``(sparse, dense, n)`` holding the members (or the other ids)."""
    ids = _members() if which == "members" else _other_ids()
    sparse, dense = _floor.empty_arrays(SPACE)
    n = int(_floor.floor_add(sparse, dense, 0, ids))
    return sparse, dense, n


@functools.cache
def _warm_up():
    """Compile (or load from numba's cache) every kernel before timing.

    Uses int64 ids like the workloads, so the same specialisations are hit.
    """
    _floor.warm_up()
    small = np.arange(4, dtype=np.int64)
    s = SparseSet(capacity=8)
    s.add(small)
    s.contains(small)
    t = s.copy()
    s.discard(small[:2])
    _ = s & t


class Add:
    """Add N new ids, in random order, into an empty set reserved for 4M ids.

    Every timed call starts from its own empty container made in ``setup``.
    The sparse sets are filled once and cleared there, which is what a hot
    loop that reuses a reserved set sees: their memory is already mapped.
    Otherwise the timed call would include first-touch page faults on 20 MB,
    whose cost depends on the allocator's reuse and transparent huge pages,
    not on the library (single samples swung from 7 to 50 ms). ``clear()``
    only resets the size, so the add still does all of its work. ``set``
    has no reserve: it starts fresh and pays for its table's growth.
    """

    number = 1

    def setup(self):
        _warm_up()
        self.ids = _members()
        self.ids_list = _members_list()
        self.s = SparseSet(capacity=SPACE)
        self.s.add(self.ids)
        self.s.clear()
        self.sparse, self.dense = _floor.empty_arrays(SPACE)
        _floor.floor_add(self.sparse, self.dense, 0, self.ids)
        self.pyset = set()

    def time_sparseset(self):
        return self.s.add(self.ids)

    def time_numba_floor(self):
        return _floor.floor_add(self.sparse, self.dense, 0, self.ids)

    def time_python_set(self):
        pyset = self.pyset
        for x in self.ids_list:
            pyset.add(x)


class Contains:
    """Query N ids against a 1M-member set; half of the queries are members.

    The answer is a new bool array (a list for ``set``). ``np.isin`` runs
    with its default ``kind``, which numpy chooses for this id range itself.
    """

    number = 1

    def setup(self):
        _warm_up()
        self.q = _contains_queries()
        self.q_list = _contains_queries_list()
        self.members = _members()
        self.s = _member_set()
        self.sparse, self.dense, self.n = _floor_arrays("members")
        self.pyset = _member_pyset()

    def time_sparseset(self):
        return self.s.contains(self.q)

    def time_numba_floor(self):
        return _floor.floor_contains(self.sparse, self.dense, self.n, self.q)

    def time_np_isin(self):
        return np.isin(self.q, self.members)

    def time_python_set(self):
        pyset = self.pyset
        return [x in pyset for x in self.q_list]


class Discard:
    """Discard N/2 members, in random order, from a 1M-member set.

    Each timed call gets its own full copy of the set, made untimed in
    ``setup``: discard mutates, and a half-emptied set would time less work.
    """

    number = 1

    def setup(self):
        _warm_up()
        self.victims = _discard_victims()
        self.victims_list = _discard_victims_list()
        self.s = _member_set().copy()
        sparse, dense, self.n = _floor_arrays("members")
        self.sparse, self.dense = sparse.copy(), dense.copy()
        self.pyset = _member_pyset().copy()

    def time_sparseset(self):
        return self.s.discard(self.victims)

    def time_numba_floor(self):
        return _floor.floor_discard(self.sparse, self.dense, self.n, self.victims)

    def time_python_set(self):
        pyset = self.pyset
        for x in self.victims_list:
            pyset.discard(x)


class Intersection:
    """Intersect two 1M-member sets that share N/2 members into a new set.

    The floor walks one set and probes the other, writing the members into
    freshly allocated arrays (a 4M ``sparse`` and a ``dense``): the work
    ``a & b`` has to do. ``np.intersect1d`` sorts instead of probing and
    returns a sorted array rather than a set.
    """

    number = 1

    def setup(self):
        _warm_up()
        self.a_ids = _members()
        self.b_ids = _other_ids()
        self.a = _member_set()
        self.b = _other_set()
        self.floor_a = _floor_arrays("members")
        self.floor_b = _floor_arrays("other")
        self.set_a = _member_pyset()
        self.set_b = _other_pyset()

    def time_sparseset(self):
        return self.a & self.b

    def time_numba_floor(self):
        return _floor.floor_intersection(*self.floor_a, *self.floor_b)

    def time_np_intersect1d(self):
        return np.intersect1d(self.a_ids, self.b_ids, assume_unique=True)

    def time_python_set(self):
        return self.set_a & self.set_b

"""sparseset beside what its users would pick instead (issue 25's table).

The data of ``../shared/perf/peers/sets_peers.py``: two sets of 1,000,000
ids in a space of 4,000,000, half of each in the other (seed 12345).

- ``Algebra``: ``a & b``, ``a | b``, ``a - b``, ``a ^ b`` as each library's
  own type (``time_sparseset`` against ``time_pyroaring``), and read as a
  numpy array (``time_sparseset_array`` against ``time_pyroaring_array``,
  ``BitMap.to_array()``).
- ``Membership``: 1,000,000 queries, half members, single thread, against
  a numpy bool mask over the id space (``mask[q]``).
- ``Graph``: connected components of a 1M-node / 5M-edge random graph,
  ``examples.components`` (a set twin) against scipy's
  ``connected_components`` with its CSR matrix prebuilt (the numba
  bool-array floor is in ``solver.Components``).
- ``TwinColumn``: reading a store twin's column inside an ``@njit`` loop
  against the same column passed as an array (the hoisted floor).
"""

import array

import numba
import numpy as np
import pyroaring
from numba import njit
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from sparseset import ComponentStore, SparseSet
from sparseset.examples import components, random_graph

N = 1_000_000
SPACE = 4 * N
SEED = 12345


def _id_sets():
    rng = np.random.default_rng(SEED)
    ids = rng.choice(SPACE, N + N // 2, replace=False)
    return ids[:N], ids[N // 2 :]


def _bitmap(ids):
    return pyroaring.BitMap(array.array("I", ids.astype(np.uint32).tobytes()))


OPS = {
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "sub": lambda a, b: a - b,
    "xor": lambda a, b: a ^ b,
}


class Algebra:
    params = tuple(OPS)
    param_names = ("op",)
    number = 5
    repeat = (5, 20, 20.0)

    def setup(self, op):
        a_ids, b_ids = _id_sets()
        self.a, self.b = SparseSet.from_ids(a_ids), SparseSet.from_ids(b_ids)
        self.ra, self.rb = _bitmap(a_ids), _bitmap(b_ids)
        self.op = OPS[op]
        self.op(self.a, self.b)  # compile; each set keeps its bitmap

    def time_sparseset(self, op):
        self.op(self.a, self.b)

    def time_pyroaring(self, op):
        self.op(self.ra, self.rb)

    def time_sparseset_array(self, op):
        np.asarray(self.op(self.a, self.b))

    def time_pyroaring_array(self, op):
        np.frombuffer(self.op(self.ra, self.rb).to_array(), np.uint32)


class Membership:
    number = 3
    repeat = (5, 20, 20.0)

    def setup(self):
        a_ids, _ = _id_sets()
        rng = np.random.default_rng(SEED + 1)
        queries = np.concatenate([a_ids[: N // 2], rng.integers(0, SPACE, N // 2)])
        rng.shuffle(queries)
        self.q = queries
        self.s = SparseSet.from_ids(a_ids)
        self.mask = np.zeros(SPACE, np.bool_)
        self.mask[a_ids] = True
        self.threads = numba.get_num_threads()
        numba.set_num_threads(1)
        self.s.contains(self.q)

    def teardown(self):
        numba.set_num_threads(self.threads)

    def time_sparseset(self):
        self.s.contains(self.q)

    def time_bool_mask(self):
        self.mask[self.q]


class Graph:
    number = 1
    repeat = (3, 10, 60.0)
    timeout = 300

    def setup(self):
        self.indptr, self.indices = random_graph(N, 5 * N, seed=1)
        data = np.ones(self.indices.shape[0], np.int8)
        self.matrix = csr_matrix((data, self.indices, self.indptr), shape=(N, N))
        components(*random_graph(100, 300))  # compile

    def time_sparseset_twin(self):
        components(self.indptr, self.indices)

    def time_scipy(self):
        connected_components(self.matrix, directed=False)


@njit(cache=True)
def _sum_through_twin(twin, rows):
    total = 0.0
    for k in range(rows.shape[0]):
        total += twin.life[rows[k]]
    return total


@njit(cache=True)
def _sum_hoisted(life, rows):
    total = 0.0
    for k in range(rows.shape[0]):
        total += life[rows[k]]
    return total


class TwinColumn:
    number = 5
    repeat = (5, 20, 20.0)

    def setup(self):
        store = ComponentStore({"life": "f8"})
        store.add(np.arange(N), life=1.0)
        self.twin = store.jit
        self.life = store["life"]
        self.rows = np.random.default_rng(SEED).integers(0, N, N)
        _sum_through_twin(self.twin, self.rows[:10])
        _sum_hoisted(self.life, self.rows[:10])

    def time_twin_column_in_loop(self):
        _sum_through_twin(self.twin, self.rows)

    def time_hoisted_column(self):
        _sum_hoisted(self.life, self.rows)

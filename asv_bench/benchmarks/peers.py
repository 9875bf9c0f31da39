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
- ``TwinMethods``: ``contains``, ``index``, and ``add`` then ``remove``
  called through a twin inside an ``@njit`` loop (``time_*_twin``), each
  against the same kernels on the twin's own arrays passed as arrays
  (``time_*_plain``, the floor): a set's twin, a store's (whose floor
  zeroes and moves the column's rows as the twin does), a World store's
  (handles: ``live_index`` then ``find``) and a SetArray's.
"""

import array

import numba
import numpy as np
import pyroaring
from numba import njit
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from sparseset import ComponentStore, SetArray, SparseSet, World
from sparseset.examples import components, random_graph
from sparseset.jit.types import all_fields
from sparseset.kernels import claim, find, live_index, swap_remove
from sparseset.kernels.set_rows import row_contains

from ._size import sized

N = sized(1_000_000)
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


@njit(cache=True)
def _contains_twin(twin, queries):
    found = 0
    for k in range(queries.shape[0]):
        found += twin.contains(queries[k])
    return found


@njit(cache=True)
def _contains_plain(sparse, dense, n, queries):
    found = 0
    for k in range(queries.shape[0]):
        found += find(sparse, dense, n, queries[k]) >= 0
    return found


@njit(cache=True)
def _index_twin(twin, queries):
    total = 0
    for k in range(queries.shape[0]):
        total += twin.index(queries[k])
    return total


@njit(cache=True)
def _index_plain(sparse, dense, n, queries):
    total = 0
    for k in range(queries.shape[0]):
        total += find(sparse, dense, n, queries[k])
    return total


@njit(cache=True)
def _add_remove_twin(twin, ids):
    changed = 0
    for k in range(ids.shape[0]):
        changed += twin.add(ids[k])
    for k in range(ids.shape[0]):
        changed += twin.remove(ids[k])
    return changed


@njit(cache=True)
def _add_remove_plain(sparse, dense, n, life, ids):
    """The twin's add and remove on the arrays, with room made beforehand;
    ``life`` (a store's column, or None) has its rows zeroed and moved."""
    changed = 0
    for k in range(ids.shape[0]):
        if claim(sparse, dense, n, ids[k]) == n:
            if life is not None:
                life[n] = 0.0
            n += 1
            changed += 1
    for k in range(ids.shape[0]):
        p = find(sparse, dense, n, ids[k])
        if p >= 0:
            if life is not None:
                life[p] = life[n - 1]
            n = swap_remove(sparse, dense, n, p)
            changed += 1
    return changed


@njit(cache=True)
def _handles_plain(generations, sparse, dense, n, handles):
    found = 0
    for k in range(handles.shape[0]):
        key = live_index(generations, generations.shape[0], handles[k])
        found += find(sparse, dense, n, key) >= 0
    return found


@njit(cache=True)
def _set_array_twin(state, sets, values):
    found = 0
    for k in range(sets.shape[0]):
        found += state.contains(sets[k], values[k])
    return found


@njit(cache=True)
def _set_array_plain(sparse, dense, sizes, sets, values):
    found = 0
    for k in range(sets.shape[0]):
        found += row_contains(sparse, dense, sizes, sets[k], values[k])
    return found


def _arrays(twin, *names):
    fields = all_fields(twin)
    order = [name for name, _ in twin._type._fields]
    return tuple(fields[order.index(name)] for name in names)


class TwinMethods:
    """Per-element methods through a twin against the plain-array floor.

    1M members in a space of 4M; 1M queries (about a quarter members);
    250k fresh ids added, then removed (the state comes back each run).
    """

    number = 3
    repeat = (5, 20, 20.0)

    def setup(self):
        rng = np.random.default_rng(SEED)
        pool = rng.choice(SPACE, N + N // 4, replace=False)
        members, self.fresh = pool[:N], pool[N:]
        self.queries = rng.integers(0, SPACE, N)
        self.set = SparseSet.from_ids(members).jit
        store = ComponentStore({"life": "f8"})
        store.add(members, life=1.0)
        self.store = store.jit
        world = World()
        world.register("hp", "f8")
        entities = world.create(N)
        world["hp"].add(entities[::2])
        self.world = world["hp"].jit
        self.handles = rng.permutation(entities)
        self.set_array = SetArray(1000, 1000).jit
        self.sets = rng.integers(0, 1000, N)
        self.values = rng.integers(0, 1000, N)
        # Compile, and let the twins grow once: the floors add in place.
        for twin in (self.set, self.store):
            _add_remove_twin(twin, self.fresh)
        for run in dir(self):
            if run.startswith("time_"):
                getattr(self, run)()

    def _plain(self, twin):
        return _arrays(twin, "sparse", "dense", "n")

    def time_contains_twin(self):
        _contains_twin(self.set, self.queries)

    def time_contains_plain(self):
        _contains_plain(*self._plain(self.set), self.queries)

    def time_index_twin(self):
        _index_twin(self.set, self.queries)

    def time_index_plain(self):
        _index_plain(*self._plain(self.set), self.queries)

    def time_add_remove_twin(self):
        _add_remove_twin(self.set, self.fresh)

    def time_add_remove_plain(self):
        _add_remove_plain(*self._plain(self.set), None, self.fresh)

    def time_store_add_remove_twin(self):
        _add_remove_twin(self.store, self.fresh)

    def time_store_add_remove_plain(self):
        (life,) = _arrays(self.store, "_col_life")
        _add_remove_plain(*self._plain(self.store), life, self.fresh)

    def time_world_contains_twin(self):
        _contains_twin(self.world, self.handles)

    def time_world_contains_plain(self):
        (generations,) = _arrays(self.world, "generations")
        _handles_plain(generations, *self._plain(self.world), self.handles)

    def time_set_array_contains_twin(self):
        _set_array_twin(self.set_array, self.sets, self.values)

    def time_set_array_contains_plain(self):
        sparse, dense, sizes = _arrays(self.set_array, "sparse", "dense", "sizes")
        _set_array_plain(sparse, dense, sizes, self.sets, self.values)

"""ComponentStore next to its baselines: add, discard and a vectorized system.

The store has two float64 3-vector columns, ``pos`` and ``vel``; its ids and
rows are the first ``entities`` of the bench's data at 1,000,000 ids
(``sparseset.bench.data.WorkloadData``, as in ``sparse_set``):
distinct ids drawn from a 4,000,000-id space, in random order. At 1,000,000,
``StoreAdd.time_componentstore`` is the bench's store add, and the bench's
Python baselines run on the first 100,000 of the same rows. Every class is
parametrized by ``entities``:

- ``1_000_000``, the cache-leaving size of the ``sparse_set`` suite, for the
  library and its numba floor only;
- ``100_000`` for every method, the two pure-Python baselines included
  (they would take seconds per call at 1M).

Compare methods at the same ``entities`` (ns per entity = time /
entities); each class times them on the same data in the same run:

- ``time_componentstore`` (and ``time_numpy_views``, ``time_njit_columns``,
  ``time_njit_twin`` for the system): the public ``ComponentStore`` API;
- ``time_numba_floor``: a bare ``@njit`` loop on plain arrays of the
  library's layout (see ``_store_floor``); ``library / floor`` is the
  library's overhead;
- ``time_python_dict``: a dict of rows, ``{id: {"pos": [x, y, z], "vel":
  [x, y, z]}}``, one Python operation per entity;
- ``time_esper``: esper 3 (pure-Python ECS; slotted dataclass components
  ``_Pos`` and ``_Vel``), whose entity ids are its own counter, not ours.

All data is deterministic (the bench's seed) and built once per benchmark
process by the cached ``_...`` functions below; ``setup`` (rerun untimed
before every timed call, ``number = 1``) only hands out fresh mutable state.
asv times through ``timeit``, with the garbage collector off, so the Python
baselines pay no collector pauses.
"""

import functools

import numpy as np
from asv_runner.benchmarks.mark import skip_benchmark_if, skip_for_params
from numba import njit

from sparseset import ComponentStore
from sparseset.bench.data import SCHEMA
from sparseset.bench.workloads import DT
from sparseset.bench.workloads import EsperPos as _Pos
from sparseset.bench.workloads import EsperVel as _Vel

from . import _store_floor
from ._size import sized
from .sparse_set import SPACE, _data, _members, _rng

try:
    import esper
except ImportError:  # the `bench` extra installs it; without it, no esper rows
    esper = None

SIZES = [sized(100_000), sized(1_000_000)]
PARAM_NAMES = ["entities"]
#: The pure-Python baselines run at the small size only.
PYTHON_SKIP = [(SIZES[1],)]

# asv skips module attributes starting with "_", so the data builders,
# components (the bench's esper components) and kernels below are never
# mistaken for benchmarks.


@njit(cache=True)
def _integrate_columns(pos, vel, dt):
    """A user's cached system over the column arrays: ``pos += vel * dt``."""
    for k in range(pos.shape[0]):
        for j in range(3):
            pos[k, j] += vel[k, j] * dt


@njit
def _integrate_twin(js, dt):
    """The same system over the jit twin (not cacheable: it takes a jitclass)."""
    pos = js.pos
    vel = js.vel
    for k in range(js.size):
        for j in range(3):
            pos[k, j] += vel[k, j] * dt


@functools.cache
def _ids(n):
    return np.ascontiguousarray(_members()[:n])


@functools.cache
def _values(n):
    """``(pos, vel)``: float64 ``(n, 3)`` rows for the first n ids."""
    data = _data()
    return np.ascontiguousarray(data.pos[:n]), np.ascontiguousarray(data.vel[:n])


@functools.cache
def _rows(n):
    """The ids and rows as Python lists of ints and of ``(x, y, z)`` tuples."""
    pos, vel = _values(n)
    return (
        _ids(n).tolist(),
        [tuple(row) for row in pos.tolist()],
        [tuple(row) for row in vel.tolist()],
    )


@functools.cache
def _victims(n):
    """Positions (into the first n ids) of a random half, in random order."""
    return _rng(12).choice(n, n // 2, replace=False)


@functools.cache
def _victim_ids(n):
    return _ids(n)[_victims(n)]


def _new_store(n):
    """A store holding the first n ids and their rows, reserved for SPACE."""
    return _data().store(n)


@functools.cache
def _floor_store(n):
    """``(sparse, dense, n, pos, vel)`` of the floor, holding the first n ids."""
    sparse, dense, pos, vel = _store_floor.empty_arrays(SPACE, n)
    new_pos, new_vel = _values(n)
    m = _store_floor.store_add(sparse, dense, 0, _ids(n), pos, vel, new_pos, new_vel)
    return sparse, dense, int(m), pos, vel


def _new_dict(n):
    ids, pos, vel = _rows(n)
    return {
        x: {"pos": list(p), "vel": list(v)}
        for x, p, v in zip(ids, pos, vel, strict=True)
    }


def _new_esper_world(name, n):
    """Switch to esper's world ``name``, empty it and create n entities.

    esper keeps its worlds in module globals; each class uses its own.
    Returns the entity ids, in the order of the first n ids' rows.
    """
    esper.switch_world(name)
    esper.clear_database()
    _, pos, vel = _rows(n)
    return [
        esper.create_entity(_Pos(*p), _Vel(*v)) for p, v in zip(pos, vel, strict=True)
    ]


def _python_baseline(func):
    """A pure-Python baseline: timed at 100k entities only (skipped at 1M).

    It keeps asv's default sampling (``repeat = 0``: at most 10 samples),
    where its class asks for more samples of the fast methods.
    """
    func = skip_for_params(PYTHON_SKIP)(func)
    func.repeat = 0
    return func


def _esper_baseline(func):
    """An esper baseline: as ``_python_baseline``, and absent without esper."""
    return skip_benchmark_if(esper is None)(_python_baseline(func))


@functools.cache
def _warm_up():
    """Compile (or load from numba's cache) every cached kernel before timing.

    Uses the benchmarks' argument types (int64 ids, C-contiguous float64
    ``(n, 3)`` columns, Python float ``dt``). The jit twin and its system are
    compiled in ``SystemUpdate.setup``, on the twin they time.
    """
    _store_floor.warm_up()
    ids = np.arange(4, dtype=np.int64)
    store = ComponentStore(SCHEMA, capacity=8)
    store.add(ids, pos=np.ones((4, 3)), vel=np.ones((4, 3)))
    store["pos"] += store["vel"] * DT
    _integrate_columns(store["pos"], store["vel"], DT)
    store.discard(ids[:2])


class StoreAdd:
    """Add ``entities`` new ids with a ``pos`` and a ``vel`` row each.

    ``store.add(ids, pos=P, vel=V)`` with ``P``, ``V`` prebuilt float64
    ``(entities, 3)`` arrays, into an empty store reserved for the 4M space.
    As in ``sparse_set.Add``, the store (and the floor's arrays) are filled
    once and cleared in ``setup``, so the timed call does not pay first-touch
    page faults. The dict starts empty; esper starts from
    ``clear_database()`` and builds one ``_Pos`` and one ``_Vel`` per entity
    (the dict builds two lists), from the same prebuilt tuples.
    """

    params = SIZES
    param_names = PARAM_NAMES
    number = 1
    # The 100k calls take a few ms: more samples than asv's default 10.
    repeat = (10, 30, 20.0)

    def setup(self, n):
        _warm_up()
        self.ids = _ids(n)
        self.pos, self.vel = _values(n)
        self.store = ComponentStore(SCHEMA, capacity=SPACE)
        self.store.add(self.ids, pos=self.pos, vel=self.vel)
        self.store.clear()
        self.floor = _store_floor.empty_arrays(SPACE, n)
        sparse, dense, pos, vel = self.floor
        _store_floor.store_add(sparse, dense, 0, self.ids, pos, vel, self.pos, self.vel)
        if (n,) not in PYTHON_SKIP:
            self.rows = _rows(n)
            self.dict = {}
            if esper is not None:
                esper.switch_world("sparseset-add")
                esper.clear_database()

    def time_componentstore(self, n):
        return self.store.add(self.ids, pos=self.pos, vel=self.vel)

    def time_numba_floor(self, n):
        sparse, dense, pos, vel = self.floor
        return _store_floor.store_add(
            sparse, dense, 0, self.ids, pos, vel, self.pos, self.vel
        )

    @_python_baseline
    def time_python_dict(self, n):
        rows = self.dict
        ids, pos, vel = self.rows
        for x, p, v in zip(ids, pos, vel, strict=True):
            rows[x] = {"pos": list(p), "vel": list(v)}

    @_esper_baseline
    def time_esper(self, n):
        create = esper.create_entity
        _, pos, vel = self.rows
        for p, v in zip(pos, vel, strict=True):
            create(_Pos(*p), _Vel(*v))


# The full containers of the Python baselines, rebuilt only after a timed
# call has emptied them: building 100k rows takes longer than deleting them.
_DISCARD_DICTS = {}
_ESPER_VICTIMS = {}


def _full_dict(n):
    """The dict of n rows, rebuilt (fresh rows) if a timed call deleted some.

    Its rows are referenced from nowhere else, so ``del`` frees them, as in
    a real program.
    """
    rows = _DISCARD_DICTS.get(n)
    if rows is None or len(rows) != n:
        rows = _DISCARD_DICTS[n] = _new_dict(n)
    return rows


def _esper_victims(n):
    """The victims' entity ids in esper's full discard world of n entities.

    The world is built on first use and again whenever a timed call has
    deleted its victims (seen by the first victim being gone).
    """
    esper.switch_world("sparseset-discard")
    victims = _ESPER_VICTIMS.get(n)
    if victims is None or not esper.entity_exists(victims[0]):
        entities = _new_esper_world("sparseset-discard", n)
        victims = _ESPER_VICTIMS[n] = [entities[k] for k in _victims(n).tolist()]
    return victims


class StoreDiscard:
    """Discard a random half of ``entities`` members, in random order.

    Each removal moves the last row of both columns into the hole. Every
    timed call gets its own full container, rebuilt untimed in ``setup``:
    discard mutates, and a half-emptied store would time less work. The dict
    ``del``s and esper ``delete_entity(e, immediate=True)``s the same
    positions of the same random half; both are rebuilt in ``setup`` only
    after a timed call has emptied them.
    """

    params = SIZES
    param_names = PARAM_NAMES
    number = 1
    repeat = (10, 30, 20.0)

    def setup(self, n):
        _warm_up()
        self.victims = _victim_ids(n)
        self.store = _new_store(n)
        sparse, dense, self.n, pos, vel = _floor_store(n)
        self.floor = sparse.copy(), dense.copy(), pos.copy(), vel.copy()
        if (n,) not in PYTHON_SKIP:
            self.victims_list = self.victims.tolist()
            self.dict = _full_dict(n)
            if esper is not None:
                self.entities = _esper_victims(n)

    def time_componentstore(self, n):
        return self.store.discard(self.victims)

    def time_numba_floor(self, n):
        sparse, dense, pos, vel = self.floor
        return _store_floor.store_discard(sparse, dense, self.n, self.victims, pos, vel)

    @_python_baseline
    def time_python_dict(self, n):
        rows = self.dict
        for x in self.victims_list:
            del rows[x]

    @_esper_baseline
    def time_esper(self, n):
        delete = esper.delete_entity
        for e in self.entities:
            delete(e, immediate=True)


@functools.cache
def _system_store(n):
    return _new_store(n)


@functools.cache
def _system_twin(n):
    """The jit twin of a second store (its state then lives in the jitclass).

    Compiles the twin class and ``_integrate_twin`` for it, once per process.
    """
    twin = _new_store(n).jit
    _integrate_twin(twin, DT)
    return twin


@functools.cache
def _system_dict(n):
    return _new_dict(n)


@functools.cache
def _system_esper_world(n):
    _new_esper_world("sparseset-system", n)


@functools.cache
def _system_floor(n):
    _, _, _, pos, vel = _floor_store(n)
    return pos.copy(), vel.copy()


class SystemUpdate:
    """One step of the system ``pos += vel * dt`` over every entity.

    Three ways through the public API, on a store of ``entities`` rows:

    - ``time_numpy_views``: ``store["pos"] += store["vel"] * dt`` (numpy on
      the column views, with one temporary for ``vel * dt``);
    - ``time_njit_columns``: a user's ``@njit(cache=True)`` kernel called on
      ``store["pos"], store["vel"], dt``;
    - ``time_njit_twin``: a user's ``@njit`` system walking ``store.jit``
      (a second store, so the others keep a plain state). The twin class and
      the system compile in ``setup`` (about a second, untimed): numba cannot
      cache them.

    The dict loop updates its ``pos`` lists in place; esper iterates
    ``get_components(_Pos, _Vel)`` and updates the dataclasses' fields. Its
    query cache is warmed in ``setup``, as in a frame without creations or
    deletions; rebuilding it (after any) costs several times the loop. The
    work does not shrink from call to call, so the state is built once per
    process; the positions drift by ``vel * dt`` each call.
    """

    params = SIZES
    param_names = PARAM_NAMES
    number = 1
    # Calls of 0.1-2 ms with a setup that only fetches cached state: take
    # more samples than asv's default (at most 10) for a steadier median.
    repeat = (10, 40, 10.0)

    def setup(self, n):
        _warm_up()
        self.store = _system_store(n)
        self.twin = _system_twin(n)
        self.floor = _system_floor(n)
        if (n,) not in PYTHON_SKIP:
            self.dict = _system_dict(n)
            if esper is not None:
                _system_esper_world(n)
                esper.switch_world("sparseset-system")
                esper.get_components(_Pos, _Vel)

    def time_numpy_views(self, n):
        store = self.store
        store["pos"] += store["vel"] * DT

    def time_njit_columns(self, n):
        store = self.store
        _integrate_columns(store["pos"], store["vel"], DT)

    def time_njit_twin(self, n):
        _integrate_twin(self.twin, DT)

    def time_numba_floor(self, n):
        pos, vel = self.floor
        _store_floor.integrate(pos, vel, DT)

    @_python_baseline
    def time_python_dict(self, n):
        dt = DT
        for row in self.dict.values():
            p = row["pos"]
            v = row["vel"]
            p[0] += v[0] * dt
            p[1] += v[1] * dt
            p[2] += v[2] * dt

    @_esper_baseline
    def time_esper(self, n):
        dt = DT
        for _, (p, v) in esper.get_components(_Pos, _Vel):
            p.x += v.x * dt
            p.y += v.y * dt
            p.z += v.z * dt

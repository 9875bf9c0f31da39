"""World next to its baselines: create, destroy, a view's join, an owning group.

Every world holds ``N = 1_000_000`` entities, made by ``World.create(N)`` in
a fresh world (indexes ``0 .. N - 1``, generation 0), with two float64
3-vector components, ``pos`` and ``vel``. Components are added in random
order, so the join's lookups miss the caches as they would in a program
whose entities came and went:

- ``pos`` is on every entity, added in a random permutation;
- ``vel`` is on a random half of them (``N / 2`` entities), added in
  random order; the ``Destroy`` world has ``vel`` on every entity instead.

asv reports seconds per call. What one call covers, so that ns per entity
is ``time / count``:

- ``Create``: ``N`` entities created;
- ``Destroy``: ``N / 10`` entities destroyed (each in both stores);
- ``ViewJoin``: ``N / 2`` matched entities (the ``vel`` half; the view
  walks ``vel``, the smaller store, and finds every one in ``pos``);
- ``GroupUpdate``: ``N / 2`` group members (the same half).

Each class times the library and its floor on the same data in the same
run; read the ratios, not the absolute times:

- ``time_world`` (and ``time_view_*``, ``time_njit_*``, ``time_numpy_*``):
  the public ``World`` API, with a user's ``@njit(cache=True)`` system where
  the workload is a system;
- ``time_numba_floor``: a bare ``@njit`` loop over plain numpy arrays with
  the same data (see ``_world_floor``); ``library / floor`` is everything
  the library adds.

The worlds are the bench's (``WorkloadData.world`` of
``sparseset.bench.data``, at n = N with the bench's seed): the same
entities, orders and rows as ``python -m sparseset bench`` at n = 1,000,000.
``ViewJoin``'s world is its view join's, and ``time_view_njit`` times the
same calls; ``Destroy``'s world (``vel`` on all) is its group update's.
``GroupUpdate`` groups ``ViewJoin``'s world (``N / 2`` members) where the
bench groups all N entities.

All data is deterministic (the bench's seed) and built once per benchmark
process by the cached ``_...`` functions below; ``setup`` (rerun untimed
before every timed call, ``number = 1``) only hands out fresh mutable state.
Every kernel, the library's and the floor's, is compiled (or loaded from
numba's cache) in ``setup``, never in a timed call.
"""

import functools

import numpy as np

from sparseset import World
from sparseset.bench.workloads import DT
from sparseset.bench.workloads import integrate_rows as _integrate_rows

from . import _world_floor
from .sparse_set import N, _data, _rng
from .store import _integrate_columns

#: Entities in a view or group: those with ``vel``.
HALF = N // 2
#: Entities destroyed by ``Destroy``.
VICTIMS = N // 10
ORDERS = ["random", "sort_as"]
PARAM_NAMES = ["vel_order"]

# asv skips module attributes starting with "_", so the data builders,
# systems and kernels below are never mistaken for benchmarks. The view's
# system, ``_integrate_rows``, is the bench's: a user's cached ``@njit``
# system over a view's rows.


def _pos_order():
    """The order ``pos`` is added in: every entity index, shuffled."""
    return _data().pos_order


def _vel_members():
    """The entities with ``vel``: a random half of the indexes, in random order."""
    return _data().vel_members


def _vel_order_all():
    """The order ``vel`` is added in by ``Destroy``'s world: every index, shuffled."""
    return _data().vel_order


@functools.cache
def _victims():
    """``Destroy``'s victims: a random tenth of the handles, in random order.

    A fresh world's handles are the indexes (generation 0).
    """
    return _rng(23).choice(N, VICTIMS, replace=False).astype(np.int64)


def _values():
    """``(pos, vel)``: float64 ``(N, 3)`` rows, indexed by entity index."""
    return _data().pos, _data().vel


def _vel_order(order):
    """The order of ``vel``'s rows: as added, or as ``sort_as(pos)`` leaves it."""
    if order == "random":
        return _vel_members()
    has_vel = np.zeros(N, dtype=np.bool_)
    has_vel[_vel_members()] = True
    pos_order = _pos_order()
    return pos_order[has_vel[pos_order]]


def _new_world(vel_order):
    """A fresh world of N entities: ``pos`` on all, ``vel`` on ``vel_order``."""
    return _data().world(vel_order)


@functools.cache
def _join_world(order):
    """The world of ``ViewJoin`` (``vel`` on half), ``vel`` sorted as ``order``."""
    world = _new_world(_vel_members())
    if order == "sort_as":
        world["vel"].sort_as(world["pos"])
    return world


@functools.cache
def _join_floor(order):
    """The floor's ``(pos_sparse, pos_dense, n_pos, pos, vel_dense, n_vel, vel)``.

    The same stores as ``_join_world(order)``: same members, same order.
    """
    pos, vel = _values()
    pos_sparse, pos_dense, n_pos, pos_column = _world_floor.store_arrays(
        N, _pos_order(), pos
    )
    _, vel_dense, n_vel, vel_column = _world_floor.store_arrays(
        N, _vel_order(order), vel
    )
    return pos_sparse, pos_dense, n_pos, pos_column, vel_dense, n_vel, vel_column


@functools.cache
def _group_world():
    """A world like ``ViewJoin``'s, with the owning group of ``pos`` and ``vel``."""
    world = _new_world(_vel_members())
    world.group("pos", "vel")
    return world


@functools.cache
def _group_floor():
    """Two contiguous float64 ``(N / 2, 3)`` arrays: the group members' rows."""
    pos, vel = _values()
    members = _vel_members()
    return np.ascontiguousarray(pos[members]), np.ascontiguousarray(vel[members])


@functools.cache
def _destroy_floor():
    """The floor's state for ``Destroy``, to be copied before every timed call.

    ``(generations, alive, free, pos_store, vel_store)``, each store a
    ``(sparse, dense, n, column)`` tuple holding every entity.
    """
    generations, alive, free = _world_floor.empty_entities(N)
    alive[:] = True
    pos, vel = _values()
    return (
        generations,
        alive,
        free,
        _world_floor.store_arrays(N, _pos_order(), pos),
        _world_floor.store_arrays(N, _vel_order_all(), vel),
    )


@functools.cache
def _warm_up():
    """Compile (or load from numba's cache) every kernel before timing.

    Runs every timed operation once on a small world with the benchmarks'
    schema, so the same specialisations are hit (int64 handles, C-contiguous
    float64 ``(rows, 3)`` columns, a view's read-only int64 row arrays, a
    Python float ``dt``).
    """
    _world_floor.warm_up()
    world = World(capacity=8)
    world.register("pos", "f8", shape=(3,))
    world.register("vel", "f8", shape=(3,))
    entities = world.create(8)
    world.add("pos", entities, pos=np.ones((8, 3)))
    world.add("vel", entities[::-2], vel=np.ones((4, 3)))
    for _ in range(2):
        view = world.view("pos", "vel")
        pos, vel = world["pos"]["pos"], world["vel"]["vel"]
        pos_rows, vel_rows = view.rows("pos"), view.rows("vel")
        _integrate_rows(pos, vel, pos_rows, vel_rows, DT)
        pos[pos_rows] += vel[vel_rows] * DT
        world["vel"].sort_as(world["pos"])
    world.destroy(entities[:2])
    group = world.group("pos", "vel")
    group["pos"] += group["vel"] * DT
    _integrate_columns(group["pos"], group["vel"], DT)
    world.destroy(entities[2:4])


class Create:
    """Create N entities in a fresh world: ``World.create(N)``, N per call.

    Every timed call gets a new ``World(capacity=N)`` with ``pos`` and
    ``vel`` registered (no entity has them: creating adds no component).
    The floor fills fresh zeroed ``generations`` and ``alive`` arrays of
    the same size and returns a new handle array, as ``create`` does; both
    pay the first touch of those pages.
    """

    number = 1
    repeat = (10, 30, 20.0)

    def setup(self):
        _warm_up()
        self.world = World(capacity=N)
        self.world.register("pos", "f8", shape=(3,))
        self.world.register("vel", "f8", shape=(3,))
        self.floor = _world_floor.empty_entities(N)

    def time_world(self):
        return self.world.create(N)

    def time_numba_floor(self):
        generations, alive, _ = self.floor
        return _world_floor.create(generations, alive, 0, N)


class Destroy:
    """Destroy a random N/10 of N entities that all have ``pos`` and ``vel``.

    ``world.destroy(handles)`` with ``N / 10`` live handles in random order,
    each removed from both stores (swap-and-pop, moving the last row in),
    killed and its index freed: N/10 entities per call. Every timed call
    gets its own fresh world, rebuilt untimed in ``setup`` (0.1-0.3 s):
    destroy mutates, and a destroyed handle cannot be destroyed again. The
    floor does the same removals, generation bumps and free-list pushes in
    one ``@njit`` call over copies of plain arrays holding the same stores.
    """

    number = 1
    repeat = (10, 20, 20.0)

    def setup(self):
        _warm_up()
        self.victims = _victims()
        self.world = _new_world(_vel_order_all())
        generations, alive, free, pos_store, vel_store = _destroy_floor()
        self.entities = generations.copy(), alive.copy(), free.copy()
        self.pos_store = tuple(
            a.copy() if isinstance(a, np.ndarray) else a for a in pos_store
        )
        self.vel_store = tuple(
            a.copy() if isinstance(a, np.ndarray) else a for a in vel_store
        )

    def time_world(self):
        return self.world.destroy(self.victims)

    def time_numba_floor(self):
        generations, alive, free = self.entities
        return _world_floor.destroy(
            generations, alive, free, 0, self.victims, *self.pos_store, *self.vel_store
        )


class ViewJoin:
    """The system ``pos += vel * dt`` over the view of ``pos`` and ``vel``.

    ``pos`` is on all N entities, ``vel`` on a random half: one call covers
    the ``N / 2`` matched entities. ``vel_order`` is how ``vel``'s rows lie:

    - ``random``: as added, in random order;
    - ``sort_as``: after ``w["vel"].sort_as(w["pos"])`` (done once, untimed),
      so the join reads ``pos`` rows in ascending order.

    Ways through the public API:

    - ``time_view_build``: ``v = w.view("pos", "vel")``, then ``v.ids``,
      ``v.rows("pos")``, ``v.rows("vel")`` (a new view each call, so the
      join is computed every time: what a frame after changes pays);
    - ``time_view_njit``: the build, then a user's cached ``@njit`` system
      called on ``w["pos"]["pos"], w["vel"]["vel"]`` and the two row arrays;
    - ``time_view_numpy``: the build, then
      ``pos[rows_pos] += vel[rows_vel] * dt`` (numpy fancy indexing);
    - ``time_njit_rows``: the ``@njit`` system alone, on the rows of a view
      built in ``setup`` (a frame with no changes since: the join is cached).

    The floor walks ``vel``'s dense array, finds each entity in ``pos``
    through a plain ``sparse`` array and updates its row (one ``@njit`` call,
    two passes: lookups, then updates), over plain arrays laid out like the
    world's stores, in the same order. The work
    does not shrink from call to call, so the state is built once per
    process; the positions drift by ``vel * dt`` each call.
    """

    params = ORDERS
    param_names = PARAM_NAMES
    number = 1
    repeat = (10, 40, 10.0)

    def setup(self, order):
        _warm_up()
        self.world = _join_world(order)
        self.floor = _join_floor(order)
        view = self.world.view("pos", "vel")
        self.rows = view.rows("pos"), view.rows("vel")

    def time_view_build(self, order):
        view = self.world.view("pos", "vel")
        return view.ids, view.rows("pos"), view.rows("vel")

    def time_view_njit(self, order):
        world = self.world
        view = world.view("pos", "vel")
        _integrate_rows(
            world["pos"]["pos"],
            world["vel"]["vel"],
            view.rows("pos"),
            view.rows("vel"),
            DT,
        )

    def time_view_numpy(self, order):
        world = self.world
        view = world.view("pos", "vel")
        pos = world["pos"]["pos"]
        pos[view.rows("pos")] += world["vel"]["vel"][view.rows("vel")] * DT

    def time_njit_rows(self, order):
        world = self.world
        pos_rows, vel_rows = self.rows
        pos, vel = world["pos"]["pos"], world["vel"]["vel"]
        _integrate_rows(pos, vel, pos_rows, vel_rows, DT)

    def time_numba_floor(self, order):
        return _world_floor.join_update(*self.floor, DT)


class GroupUpdate:
    """The system ``pos += vel * dt`` over the owning group of ``pos`` and ``vel``.

    The world is ``ViewJoin``'s (``vel`` on a random half), with
    ``g = w.group("pos", "vel")`` made once in ``setup``: one call covers
    the ``N / 2`` group members, whose rows ``g["pos"]`` and ``g["vel"]``
    are contiguous and aligned.

    - ``time_numpy_views``: ``g["pos"] += g["vel"] * dt`` (numpy, with one
      temporary for ``vel * dt``);
    - ``time_njit_columns``: a user's ``@njit(cache=True)`` kernel called on
      ``g["pos"], g["vel"], dt``;
    - ``time_numba_floor``: the same loop over two plain contiguous float64
      ``(N / 2, 3)`` arrays.

    The state is built once per process; positions drift each call.
    """

    number = 1
    repeat = (10, 40, 10.0)

    def setup(self):
        _warm_up()
        self.group = _group_world().group("pos", "vel")
        self.floor = _group_floor()

    def time_numpy_views(self):
        group = self.group
        group["pos"] += group["vel"] * DT

    def time_njit_columns(self):
        group = self.group
        _integrate_columns(group["pos"], group["vel"], DT)

    def time_numba_floor(self):
        pos, vel = self.floor
        _world_floor.integrate(pos, vel, DT)

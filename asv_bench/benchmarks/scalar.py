"""Scalar fast paths (issue 12): one id per call, next to the Python builtins.

Every timed call makes ``CALLS = 1000`` scalar calls, one per prepared
Python int, in a plain ``for`` loop, so **asv's time in µs is the time of
one call in ns**. A loop this long keeps the timer's and asv's own per-call
overhead (tens of ns) out of sub-microsecond figures; the loop's own step
(about 5 ns) is in every method, library and baseline alike.

The data is ``sparse_set``'s: ``N = 1_000_000`` members drawn from a
``4_000_000``-id space, in random order, so each lookup misses the caches
as in a real program. The ids looked up are random members (*hits*) or
random non-members of the same space (*misses*), 1000 of each, in random
order. The library's classes are parametrized by index ``kind`` (``flat``,
``paged``, ``hash``); the Python baselines do not depend on it and run at
``flat`` only (skipped for the others), where they sit next to the library:

- ``Contains``: ``x in s`` vs ``x in set``, hits and misses;
- ``Add``: ``s.add(x)`` of a new id (a miss) and of a member (a no-op) vs
  ``set.add``;
- ``Discard``: ``s.discard(x)`` and ``s.remove(x)`` of a member vs
  ``set.discard`` and ``set.remove``;
- ``StoreGet``: ``store.get(x)`` of a member of a ``ComponentStore({"pos":
  ("f8", 3), "mass": "f4"})`` vs ``rows[x]`` on a dict of row dicts. The
  store copies the row into a new dict of a ``(3,)`` array and a float32
  scalar; the dict hands out the row it holds;
- ``WorldGet``: ``w.get("pos", h)`` of a live handle of a ``World`` of N
  entities vs esper 3's ``component_for_entity(e, _Pos)`` and ``rows[h]``
  on a dict, each holding N entities; also with the ``np.int64`` handles
  ``create`` returns (``time_world_numpy_handles``);
- ``OneHandle``: ``w.has("pos", h)``, ``h in w["pos"]`` and
  ``w["pos"].set(h, pos=...)`` with ``np.int64`` handles, vs ``h in rows``
  and ``rows[h]["pos"] = ...`` on the dict;
- ``StoreSet``: ``store.set(x, mass=1.0)`` of a member vs
  ``rows[x]["mass"] = 1.0``.

The issue's targets: ``x in s`` <= 0.4 µs, scalar add and discard <= 1 µs,
``w.get(name, handle)`` <= 2 µs per call.

Mutating calls never drift the state between samples: asv reruns ``setup``,
untimed, before every timed call (``number = 1``), and it puts back what the
last call changed (it discards the added ids, re-adds the discarded ones, in
one batch call each). The hash index shifts entries back on deletion (no
tombstones), so this churn leaves no trace in its table either.
"""

import functools

import numpy as np
from asv_runner.benchmarks.mark import skip_benchmark_if, skip_for_params

from sparseset import ComponentStore, SparseSet, World

from .sparse_set import SPACE, N, _member_pyset, _members, _rng, _space_permutation
from .store import _Pos, esper

CALLS = 1_000
KINDS = ["flat", "paged", "hash"]
PARAM_NAMES = ["kind"]
#: The Python baselines run next to ``flat`` only.
NOT_FLAT = [(kind,) for kind in KINDS if kind != "flat"]
STORE_SCHEMA = {"pos": ("f8", 3), "mass": "f4"}
ESPER_WORLD = "sparseset-scalar"

# asv skips module attributes starting with "_", so the data builders below
# are never mistaken for benchmarks. (No module attribute may be named
# ``setup`` in any case: asv would run it before every benchmark here.)


@functools.cache
def _hits():
    """CALLS random members, in random order, as Python ints."""
    return _rng(40).choice(_members(), CALLS, replace=False).tolist()


@functools.cache
def _misses():
    """CALLS random non-members of the 4M space, as Python ints."""
    return _rng(41).choice(_space_permutation()[N:], CALLS, replace=False).tolist()


@functools.cache
def _member_set(kind):
    """The N members in a set of index ``kind``, reserved for the 4M space.

    Its ``dense`` has room for every id of the space, so a scalar ``add``
    never takes the growing path.
    """
    return SparseSet.from_ids(_members(), capacity=SPACE, index=kind)


@functools.cache
def _store_values():
    """``(pos, mass)``: float64 ``(N, 3)`` and float32 ``(N,)``, per member."""
    pos = _rng(42).uniform(-100.0, 100.0, (N, 3))
    mass = _rng(43).uniform(1.0, 10.0, N).astype(np.float32)
    return pos, mass


@functools.cache
def _store(kind):
    store = ComponentStore(STORE_SCHEMA, capacity=SPACE, index=kind)
    pos, mass = _store_values()
    store.add(_members(), pos=pos, mass=mass)
    return store


@functools.cache
def _store_rows():
    """The store's rows as a dict ``{id: {"pos": [x, y, z], "mass": m}}``."""
    pos, mass = _store_values()
    return {
        x: {"pos": p, "mass": m}
        for x, p, m in zip(
            _members().tolist(), pos.tolist(), mass.tolist(), strict=True
        )
    }


@functools.cache
def _entity_order():
    """The order the world's entities get ``pos`` in: every index, shuffled."""
    return _rng(44).permutation(N)


@functools.cache
def _entity_pos():
    """float64 ``(N, 3)`` positions, indexed by entity index."""
    return _rng(45).uniform(-100.0, 100.0, (N, 3))


@functools.cache
def _world(kind):
    """A fresh world of N entities with ``pos`` on each, added in random order.

    A fresh world's handles are the indexes (generation 0).
    """
    world = World(capacity=N, index=kind)
    world.register("pos", "f8", shape=(3,))
    entities = world.create(N)
    order = _entity_order()
    world.add("pos", entities[order], pos=_entity_pos()[order])
    return world


@functools.cache
def _entities():
    """CALLS random entity indexes (= handles), in random order."""
    return _rng(46).choice(N, CALLS, replace=False).tolist()


@functools.cache
def _world_rows():
    """The world's ``pos`` as a dict ``{handle: {"pos": [x, y, z]}}``."""
    return {h: {"pos": p} for h, p in enumerate(_entity_pos().tolist())}


@functools.cache
def _esper_entities():
    """esper's world of N entities, each with a ``_Pos`` (made in the same
    random order as the world's); returns the entities of ``_entities()``."""
    esper.switch_world(ESPER_WORLD)
    esper.clear_database()
    pos = _entity_pos()
    order = _entity_order().tolist()
    create = esper.create_entity
    entity_of = [0] * N
    for k, p in zip(order, pos[order].tolist(), strict=True):
        entity_of[k] = create(_Pos(*p))
    return [entity_of[k] for k in _entities()]


def _python_baseline(prepare):
    """A Python baseline: timed next to ``kind = "flat"`` only.

    ``prepare()`` builds its data (or puts it back), untimed, in the
    baseline's own ``setup``: asv runs a benchmark function's ``setup``
    attribute after its class's, with the same parameters, before every
    timed call, so the library's benchmarks never pay for the baselines'
    data. The timed function fetches it from its builder's cache: one call
    per CALLS operations.
    """

    def mark(func):
        def setup(kind):
            prepare()

        func = skip_for_params(NOT_FLAT)(func)
        func.setup = setup
        return func

    return mark


def _pyset_without_new():
    """The members' ``set``, without the ids ``Add`` adds."""
    _member_pyset().difference_update(_misses())


def _pyset_with_victims():
    """The members' ``set``, with the ids ``Discard`` removes."""
    _member_pyset().update(_hits())


class Contains:
    """``x in s`` for CALLS members (hits) or CALLS non-members (misses)."""

    params = KINDS
    param_names = PARAM_NAMES
    number = 1
    # Calls of 0.03-0.5 ms and a setup that only fetches cached data:
    # many samples for a steady median.
    repeat = (20, 200, 4.0)

    def setup(self, kind):
        self.s = _member_set(kind)
        self.hits = _hits()
        self.misses = _misses()

    def time_in_hit(self, kind):
        s = self.s
        for x in self.hits:
            x in s  # noqa: B015

    def time_in_miss(self, kind):
        s = self.s
        for x in self.misses:
            x in s  # noqa: B015

    @_python_baseline(_member_pyset)
    def time_python_set_hit(self, kind):
        pyset = _member_pyset()
        for x in self.hits:
            x in pyset  # noqa: B015

    @_python_baseline(_member_pyset)
    def time_python_set_miss(self, kind):
        pyset = _member_pyset()
        for x in self.misses:
            x in pyset  # noqa: B015


class Add:
    """``s.add(x)``, one id per call: CALLS new ids, or CALLS members.

    ``setup`` discards the new ids (one batch call) before every timed call,
    so each ``time_add_new`` adds all of them to the same N members.
    """

    params = KINDS
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, kind):
        self.s = _member_set(kind)
        self.new = _misses()
        self.members = _hits()
        self.s.discard(self.new)

    def time_add_new(self, kind):
        add = self.s.add
        for x in self.new:
            add(x)

    def time_add_member(self, kind):
        add = self.s.add
        for x in self.members:
            add(x)

    @_python_baseline(_pyset_without_new)
    def time_python_set_add_new(self, kind):
        add = _member_pyset().add
        for x in self.new:
            add(x)

    @_python_baseline(_member_pyset)
    def time_python_set_add_member(self, kind):
        add = _member_pyset().add
        for x in self.members:
            add(x)


class Discard:
    """``s.discard(x)`` and ``s.remove(x)`` of CALLS members, one per call.

    ``setup`` re-adds them (one batch call) before every timed call, so
    each timed call removes CALLS ids from the same N members.
    """

    params = KINDS
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, kind):
        self.s = _member_set(kind)
        self.victims = _hits()
        self.s.add(self.victims)

    def time_discard(self, kind):
        discard = self.s.discard
        for x in self.victims:
            discard(x)

    def time_remove(self, kind):
        remove = self.s.remove
        for x in self.victims:
            remove(x)

    @_python_baseline(_pyset_with_victims)
    def time_python_set_discard(self, kind):
        discard = _member_pyset().discard
        for x in self.victims:
            discard(x)

    @_python_baseline(_pyset_with_victims)
    def time_python_set_remove(self, kind):
        remove = _member_pyset().remove
        for x in self.victims:
            remove(x)


class StoreGet:
    """``store.get(x)`` of CALLS members, one per call, vs ``rows[x]``.

    The store holds the N members with a ``pos`` (float64, 3) and a
    ``mass`` (float32) each; ``get`` returns a new dict of copies of the
    member's row. The dict ``{id: {"pos": [x, y, z], "mass": m}}`` holds
    the same rows; ``rows[x]`` returns the row dict it holds.
    """

    params = KINDS
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, kind):
        self.store = _store(kind)
        self.ids = _hits()

    def time_componentstore(self, kind):
        get = self.store.get
        for x in self.ids:
            get(x)

    @_python_baseline(_store_rows)
    def time_python_dict(self, kind):
        rows = _store_rows()
        for x in self.ids:
            rows[x]


class WorldGet:
    """``w.get("pos", h)`` of CALLS live handles, one per call.

    The world has N entities (created at once: handle = index), each with a
    ``pos`` (float64, 3) added in random order; ``get`` checks the handle's
    generation and returns a new dict holding a copy of its row. esper 3
    holds the same N entities with a slotted dataclass ``_Pos`` each and
    returns the component object it holds; so does the dict ``{handle:
    {"pos": [x, y, z]}}``. esper's world takes a few seconds to build, once
    per process, in ``time_esper``'s setup only.
    """

    params = KINDS
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, kind):
        self.world = _world(kind)
        self.handles = _entities()

    def time_world(self, kind):
        get = self.world.get
        for h in self.handles:
            get("pos", h)

    def time_world_numpy_handles(self, kind):
        get = self.world.get
        for h in _numpy_entities():
            get("pos", h)

    @skip_benchmark_if(esper is None)
    @_python_baseline(_esper_entities)
    def time_esper(self, kind):
        component_for_entity = esper.component_for_entity
        for e in _esper_entities():
            component_for_entity(e, _Pos)

    @_python_baseline(_world_rows)
    def time_python_dict(self, kind):
        rows = _world_rows()
        for h in self.handles:
            rows[h]


@functools.cache
def _numpy_entities():
    """``_entities()`` as the ``np.int64`` scalars a handle array holds."""
    return list(np.array(_entities(), np.int64))


class OneHandle:
    """One ``np.int64`` handle per call: ``w.has``, ``in`` and ``set`` on the
    world's ``pos`` store, CALLS handles."""

    params = KINDS
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, kind):
        self.world = _world(kind)
        self.handles = _numpy_entities()

    def time_has(self, kind):
        has = self.world.has
        for h in self.handles:
            has("pos", h)

    def time_in(self, kind):
        store = self.world["pos"]
        for h in self.handles:
            h in store  # noqa: B015

    def time_set(self, kind):
        store = self.world["pos"]
        for h in self.handles:
            store.set(h, pos=(1.0, 2.0, 3.0))

    @_python_baseline(_world_rows)
    def time_python_dict_in(self, kind):
        rows = _world_rows()
        for h in _entities():
            h in rows  # noqa: B015

    @_python_baseline(_world_rows)
    def time_python_dict_set(self, kind):
        rows = _world_rows()
        for h in _entities():
            rows[h]["pos"] = [1.0, 2.0, 3.0]


class StoreSet:
    """``store.set(x, mass=1.0)`` of CALLS members, one per call."""

    params = KINDS
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, kind):
        self.store = _store(kind)
        self.ids = _hits()

    def time_componentstore(self, kind):
        set_row = self.store.set
        for x in self.ids:
            set_row(x, mass=1.0)

    @_python_baseline(_store_rows)
    def time_python_dict(self, kind):
        rows = _store_rows()
        for x in _hits():
            rows[x]["mass"] = 1.0

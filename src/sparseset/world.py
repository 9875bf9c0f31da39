"""World: generational entity handles, components keyed by entity, views, groups.

An entity is an int64 handle, ``index | generation << 32``. Indexes of
destroyed entities are recycled with the next generation, so a handle kept
past ``destroy`` is dead forever: it no longer resolves, and no operation
that takes it can reach the row of the entity that reuses its index.

Each component is an :class:`EntityStore`: a :class:`~sparseset.ComponentStore`
keyed by entity index, that takes and returns handles. Stores hold live
entities only (``destroy`` removes the entity from every store), so an
index found in a store always belongs to the current generation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from . import io, kernels
from ._ids import as_ids, one_id, reject_negative
from .group import Group
from .index_kinds import KINDS, kind_named
from .io import FormatError
from .sparse_set import FLAT_LIMIT, _Arrays
from .store import ComponentStore, _parse_schema
from .view import View

#: A handle's generation lives in bits 32..62, so handles stay positive int64.
LAST_GENERATION = 2**31 - 1
#: Entity indexes live in [0, INDEX_LIMIT): every store's flat index covers them.
INDEX_LIMIT = FLAT_LIMIT
#: ``World.save`` files: what their header says, and the layout version.
FILE_KIND = "sparseset.World"
FILE_VERSION = 1
#: The most capacity a loaded world reserves beyond the entities it holds.
_RESTORED_CAPACITY = 1 << 20


class DeadHandleError(KeyError, ValueError):
    """A handle that is not alive: destroyed, or never created.

    Raised by calls that would change the world, which then change nothing.
    It is a ``ValueError`` (a bad argument) and a ``KeyError`` (no such
    entity), so code written for either catches it.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnknownComponentError(KeyError):
    """A component name that was never registered."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _where(k: int, scalar: bool) -> str:
    return "handle" if scalar else f"handles[{k}]"


class EntityStore(ComponentStore):
    """A component's store: a :class:`~sparseset.ComponentStore` keyed by entity.

    It takes handles wherever a store takes ids, and its :attr:`ids` are
    handles. Changes (``add``, ``set``, ``discard``, ``remove``) require live
    handles and raise :class:`DeadHandleError` otherwise; queries
    (``contains``, ``index``) answer "absent" for a dead handle. Get one
    from ``world[name]``.

    Examples
    --------
    >>> w = World(); w.register("hp", "i4"); e = w.create(2)
    >>> store = w["hp"]; store.add(e, hp=[5, 7])
    2
    >>> w.destroy(e[0])
    1
    >>> store.contains(e).tolist(), store.ids.tolist() == [e[1]]
    ([False, True], True)
    """

    def __init__(
        self, world: World, name: str, schema: Any, capacity: int, index: str
    ) -> None:
        super().__init__(schema, capacity, index)
        self._world = world
        self._name = name
        self._group: Group | None = None
        self._version = 0

    @property
    def name(self) -> str:
        """The component's name in its world.

        Examples
        --------
        >>> w = World(); w.register("tag"); w["tag"].name
        'tag'
        """
        return self._name

    @property
    def group(self) -> Group | None:
        """The owning group that keeps this store packed, if any.

        Examples
        --------
        >>> w = World(); w.register("a"); w["a"].group is None
        True
        """
        return self._group

    def _state_key(self) -> tuple[Any, ...]:
        """Changes whenever this store's members or their order change."""
        a = self._keys._arrays
        return (id(self), self._version, a.n, a.epoch, id(a))

    def _live(self, ids: Any, consequence: str) -> tuple[np.ndarray, bool]:
        return self._world._resolve(ids, consequence)

    def _keys_of(self, ids: Any) -> tuple[np.ndarray, bool]:
        return self._live(ids, "nothing was read or changed")

    # -- changes ----------------------------------------------------------

    def add(self, ids: Any, /, **columns: Any) -> int:
        """Add entities with their rows, or replace the rows of members.

        As :meth:`ComponentStore.add`, for live handles only.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2)
        >>> w["hp"].add(e, hp=3), w["hp"]["hp"].tolist()
        (2, [3, 3])
        """
        keys, _ = self._live(ids, "nothing was added")
        added = super().add(keys, **columns)
        self._version += 1
        if self._group is not None:
            self._group._admit(keys)
        return added

    def _key_of(self, handle: int) -> int:
        key = self._world._index_of(handle)
        if key < 0:
            self._keys_of(handle)  # raises DeadHandleError, saying why
        return key

    def _lacking(self, ids: Any, k: int, scalar: bool) -> str:
        handle = int(as_ids(ids)[0][k])
        return (
            f"{_where(k, scalar)} = {handle} has no {self._name!r} component; "
            f"add it first with world.add({self._name!r}, handles, ...)"
        )

    def discard(self, ids: Any) -> int:
        """Remove the component from the entities that have it; returns how many.

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(2); w["tag"].add(e[0])
        1
        >>> w["tag"].discard(e)
        1
        """
        keys, _ = self._live(ids, "nothing was removed")
        return self._discard_keys(keys)

    def remove(self, ids: Any) -> int:
        """Remove the component from entities that must all have it.

        Raises ``KeyError`` naming the first entity without it, removing
        nothing.

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(2); w["tag"].add(e)
        2
        >>> w["tag"].remove(e[1]), len(w["tag"])
        (1, 1)
        """
        keys, scalar = self._live(ids, "nothing was removed")
        a = self._keys._arrays
        k = kernels.first_mismatch(a.sparse, a.dense, a.n, keys, True)
        if k >= 0:
            raise KeyError(self._lacking(ids, k, scalar) + "; nothing was removed")
        return self._discard_keys(keys)

    def _discard_keys(self, keys: np.ndarray) -> int:
        """Remove entity indexes (alive, validated), keeping the group packed."""
        if self._group is not None:
            self._group._expel(keys)
        self._version += 1
        return self._discard_rows(keys)

    def clear(self) -> None:
        """Remove the component from every entity.

        Examples
        --------
        >>> w = World(); w.register("tag"); w["tag"].add(w.create(3)); w["tag"].clear()
        3
        >>> len(w["tag"])
        0
        """
        if self._group is not None:
            self._group._length = 0
            for store in self._group._stores:
                store._version += 1
        self._version += 1
        super().clear()

    def _refuse_if_owned(self, what: str) -> None:
        if self._group is not None:
            raise ValueError(
                f"{what} would unpack {self._group!r}, which owns {self._name!r}; "
                f"an owned store keeps the order its group needs"
            )

    def sort(self, key: Any = None) -> None:
        """Reorder the entities (by handle, by default) and their rows.

        As :meth:`ComponentStore.sort`; a store owned by a group cannot be
        sorted (``ValueError``), since the group fixes its order.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(3)
        >>> w.add("hp", e[::-1], hp=[3, 2, 1]); w["hp"].sort(); w["hp"]["hp"].tolist()
        3
        [1, 2, 3]
        """
        self._refuse_if_owned("sorting")
        super().sort(self.ids if key is None else key)
        self._version += 1

    def sort_as(self, other: Any) -> None:
        """Put the entities shared with ``other`` first, in ``other``'s order.

        ``other`` is a store of the same world, a view, a group or an array
        of handles (dead ones are skipped).

        Examples
        --------
        >>> w = World(); w.register("a"); w.register("b"); e = w.create(3)
        >>> w.add("a", e); w.add("b", e[::-1])
        3
        3
        >>> w["b"].sort_as(w["a"]); w["b"].ids.tolist() == e.tolist()
        True
        """
        self._refuse_if_owned("sort_as")
        super().sort_as(other)
        self._version += 1

    def _order_of(self, other: Any) -> np.ndarray:
        if isinstance(other, EntityStore):
            if other._world is not self._world:
                raise ValueError(
                    f"{other.name!r} belongs to another world; pass its handles"
                )
            return other._keys._members()
        if isinstance(other, ComponentStore):
            raise TypeError(
                "sort_as takes a store of the same world or an array of handles, "
                "not a ComponentStore keyed by plain ids"
            )
        handles = other.ids if isinstance(other, View | Group) else other
        return self._resolved(handles)[0]

    @property
    def jit(self) -> Any:
        """The jit twin of this store, for @njit systems; it takes handles.

        As :attr:`ComponentStore.jit`, with entity handles where a store's
        twin takes ids, checked against the world's generations inside
        ``@njit`` code: ``contains(h)`` is False and ``index(h)`` -1 for a
        dead handle, ``remove(h)`` returns False, and ``add(h)`` raises
        ``ValueError``; none of them touches a row. ``ids`` gives the
        handles (a new array each time: take it once, outside a loop) and
        ``handle(k)`` the handle of row ``k``. A store owned by a group has
        no twin (``ValueError``): per-element changes would unpack the
        group.

        Examples
        --------
        >>> from numba import njit
        >>> w = World(); w.register("hp", "i4"); e = w.create(3)
        >>> w.add("hp", e, hp=[4, 0, 5])
        3
        >>> @njit
        ... def reap(js):
        ...     k = 0
        ...     while k < js.size:
        ...         if js.hp[k] <= 0:
        ...             js.remove(js.handle(k))  # the last row moved here
        ...         else:
        ...             k += 1
        >>> reap(w["hp"].jit); w["hp"].ids.tolist() == [e[0], e[2]]
        True
        >>> w.destroy(e[0]); w["hp"].jit.contains(e[0])
        1
        False
        """
        self._refuse_if_owned("a jit twin")
        return super().jit

    def _twin_entities(self) -> tuple[np.ndarray, np.ndarray]:
        return self._world._generations, self._world._alive

    def _follow_entities(self) -> None:
        """Hand a jit twin the world's entity arrays after they grew."""
        state = self._keys._arrays
        if not isinstance(state, _Arrays):
            state.generations, state.alive = self._twin_entities()

    # -- queries ----------------------------------------------------------

    def _resolved(self, ids: Any) -> tuple[np.ndarray, bool]:
        # Dead handles become an id outside the flat range: absent everywhere.
        keys, scalar, _, _ = self._world._lookup(ids, INDEX_LIMIT)
        return keys, scalar

    def contains(self, ids: Any) -> Any:
        """Whether each entity has this component (False for a dead handle).

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[0])
        1
        >>> w["tag"].contains(e).tolist()
        [True, False]
        """
        keys, scalar = self._resolved(ids)
        found = self._keys.contains(keys)
        return bool(found[0]) if scalar else found

    def index(self, ids: Any) -> Any:
        """Each entity's row in this store, -1 where absent or dead.

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[1])
        1
        >>> w["tag"].index(e).tolist()
        [-1, 0]
        """
        keys, scalar = self._resolved(ids)
        rows = self._keys.index(keys)
        return int(rows[0]) if scalar else rows

    @property
    def ids(self) -> np.ndarray:
        """The handles of the entities, aligned with the rows (a read-only copy).

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[::-1])
        2
        >>> w["tag"].ids.tolist() == e[::-1].tolist()
        True
        """
        ids = self._world._handles(self._keys._members())
        ids.flags.writeable = False
        return ids

    def __contains__(self, x: object) -> bool:
        # As set's `in`: any hashable x gets an answer; only a live handle
        # can have the component.
        handle = one_id(x, "handle")
        if handle is None or handle >= 2**63:
            return False
        key = self._world._index_of(handle)
        return key >= 0 and key in self._keys

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids.tolist())

    def __repr__(self) -> str:
        body = super().__repr__().split("(", 1)[1]
        return f"{type(self).__name__}({self._name!r}, {body}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_component_of, (self._world, self._name))


def _component_of(world: World, name: str) -> EntityStore:
    """Find a store again after unpickling its world."""
    return world[name]


class World:
    """Entities with generational handles, their components, views and groups.

    Parameters
    ----------
    capacity : int, optional
        Entities the world and each component store hold before growing
        (a hint, not a limit).
    index : {"flat", "paged", "hash"}, optional
        The index kind of every component store (see
        :class:`~sparseset.SparseSet`). Entity indexes stay below 2**31, so
        all kinds fit; ``"paged"`` keeps stores of few, clustered entities
        small in a big world.

    Examples
    --------
    >>> import numpy as np
    >>> w = World()
    >>> w.register("pos", "f8", shape=(2,)); w.register("vel", "f8", shape=(2,))
    >>> e = w.create(3)
    >>> w.add("pos", e, pos=0.0); w.add("vel", e[:2], vel=[[1, 0], [0, 1]])
    3
    2
    >>> g = w.group("pos", "vel")
    >>> g["pos"] += g["vel"] * 0.5
    >>> w.destroy(e[0]); len(w), w.alive(e).tolist()
    1
    (2, [False, True, True])
    >>> w.get("pos", e[1:])["pos"].tolist()
    [[0.0, 0.5], [0.0, 0.0]]
    """

    def __init__(self, capacity: int = 0, index: str = "flat") -> None:
        self._index = kind_named(index).name
        capacity = KINDS["flat"].check_capacity(capacity)
        self._capacity = capacity
        self._generations = np.zeros(capacity, np.uint32)
        self._alive = np.zeros(capacity, np.bool_)
        self._free = np.empty(capacity, np.int32)
        self._n_free = 0
        self._count = 0
        self._live = 0
        self._stores: dict[str, EntityStore] = {}
        self._groups: list[Group] = []

    # -- entities ---------------------------------------------------------

    def _reserve_entities(self, needed: int) -> None:
        current = self._generations.shape[0]
        if needed <= current:
            return
        length = kernels.grown_length(current, needed, INDEX_LIMIT)
        for name in ("_generations", "_alive", "_free"):
            old = getattr(self, name)
            grown = np.zeros(length, old.dtype)
            grown[:current] = old
            setattr(self, name, grown)
        for store in self._stores.values():
            store._follow_entities()

    def create(self, n: int) -> np.ndarray:
        """Create ``n`` entities; returns their handles (int64).

        Destroyed indexes are reused first, each with its next generation.

        Examples
        --------
        >>> w = World(); e = w.create(2); e.tolist()
        [0, 1]
        >>> w.destroy(e[0]); w.create(1).tolist()  # index 0, generation 1
        1
        [4294967296]
        """
        if isinstance(n, bool) or not isinstance(n, int | np.integer):
            raise TypeError(f"create(n) takes an integer count, not {n!r}")
        n = int(n)
        if n < 0:
            raise ValueError(f"create(n) takes a count >= 0, got {n}")
        fresh = max(0, n - self._n_free)
        if self._count + fresh > INDEX_LIMIT:
            raise ValueError(
                f"cannot create {n} entities: {self._count + fresh} indexes "
                f"would pass the limit of 2**31"
            )
        self._reserve_entities(self._count + fresh)
        handles = np.empty(n, np.int64)
        self._n_free, self._count = kernels.create_entities(
            self._generations,
            self._alive,
            self._free,
            self._n_free,
            self._count,
            handles,
        )
        self._live += n
        return handles

    def _lookup(
        self, handles: Any, dead: int
    ) -> tuple[np.ndarray, bool, int, np.ndarray]:
        """The index of each handle (``dead`` where it is dead), whether it was
        one handle, the position of the first dead one (-1: none), and the
        handles as an array."""
        arr, scalar = as_ids(handles)
        reject_negative(arr, scalar)
        keys = np.empty(arr.shape[0], np.int64)
        first_dead = kernels.resolve(
            self._generations, self._alive, self._count, arr, keys, dead
        )
        return keys, scalar, first_dead, arr

    def _index_of(self, handle: int) -> int:
        """The index of ``handle``, a non-negative Python int, if it is
        alive; else -1. For one handle, where a kernel call costs more."""
        index = handle & kernels.INDEX_MASK
        if (
            index < self._count
            and self._alive.item(index)
            and self._generations.item(index) == handle >> kernels.INDEX_BITS
        ):
            return index
        return -1

    def _resolve(self, handles: Any, consequence: str) -> tuple[np.ndarray, bool]:
        """Indexes of handles that must all be alive, else ``DeadHandleError``."""
        keys, scalar, k, arr = self._lookup(handles, -1)
        if k >= 0:
            raise DeadHandleError(
                f"{_where(k, scalar)} = {self._describe(int(arr[k]))}; "
                f"{consequence} (world.alive(handles) tells which are alive)"
            )
        return keys, scalar

    def _describe(self, handle: int) -> str:
        """Why ``handle`` is dead, for messages."""
        index, generation = handle & kernels.INDEX_MASK, handle >> kernels.INDEX_BITS
        if handle >= 2**63 or index >= self._count:
            return f"{handle} was never created"
        current = int(self._generations[index])
        if generation > current:
            return (
                f"{handle} (index {index}, generation {generation}) was never created"
            )
        return (
            f"{handle} (index {index}, generation {generation}) is dead: that "
            "entity was destroyed"
        )

    def destroy(self, handles: Any) -> int:
        """Destroy entities: remove them from every store and kill their handles.

        All must be alive (a repeat counts once); otherwise
        :class:`DeadHandleError` (a ``ValueError``) is raised and nothing is
        destroyed. Returns how many were destroyed.

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(3); w.add("tag", e)
        3
        >>> w.destroy(e[:2]), len(w), len(w["tag"])
        (2, 1, 1)
        >>> w.destroy(e[0])
        Traceback (most recent call last):
        ...
        sparseset.world.DeadHandleError: handle = 0 (index 0, generation 0) is dead: ...
        """
        keys, _ = self._resolve(handles, "nothing was destroyed")
        for store in self._stores.values():
            store._discard_keys(keys)
        self._n_free, killed = kernels.destroy_entities(
            self._generations,
            self._alive,
            self._free,
            self._n_free,
            keys,
            LAST_GENERATION,
        )
        self._live -= killed
        return int(killed)

    def alive(self, handles: Any) -> Any:
        """Whether each handle is a live entity: a bool, or a bool array.

        Examples
        --------
        >>> w = World(); e = w.create(2); w.destroy(e[1])
        1
        >>> w.alive(e).tolist(), w.alive(e[0]), w.alive(2**40)
        ([True, False], True, False)
        """
        keys, scalar, _, _ = self._lookup(handles, -1)
        found = keys >= 0
        return bool(found[0]) if scalar else found

    def _handles(self, keys: np.ndarray) -> np.ndarray:
        """The current handles of live entity indexes."""
        out = np.empty(keys.shape[0], np.int64)
        kernels.handles_of(self._generations, keys, out)
        return out

    @property
    def entities(self) -> np.ndarray:
        """The handles of every live entity, by index.

        Examples
        --------
        >>> w = World(); e = w.create(3); w.destroy(e[1]); w.entities.tolist()
        1
        [0, 2]
        """
        return self._handles(np.flatnonzero(self._alive[: self._count]))

    def __len__(self) -> int:
        return self._live

    @property
    def kind(self) -> str:
        """The index kind of the component stores.

        Examples
        --------
        >>> World(index="paged").kind
        'paged'
        """
        return self._index

    @property
    def nbytes(self) -> int:
        """Bytes held by the entity arrays and every component store.

        Examples
        --------
        >>> w = World(capacity=100); w.register("hp", "f8"); w.nbytes
        2500
        """
        entities = self._generations.nbytes + self._alive.nbytes + self._free.nbytes
        return entities + sum(store.nbytes for store in self._stores.values())

    # -- components -------------------------------------------------------

    def register(self, name: str, dtype: Any = None, shape: Any = ()) -> None:
        """Register a component; ``world[name]`` is then its store.

        Parameters
        ----------
        name : str
            The component's name (``w[name]``).
        dtype : dtype, dict or structured dtype, optional
            A dtype makes one column named like the component, with rows of
            ``shape``. A schema dict or a structured dtype makes one column
            per entry, as :class:`~sparseset.ComponentStore` takes. ``None``
            makes a tag: membership only, no columns.
        shape : int or tuple, optional
            Row shape of a one-column component.

        Examples
        --------
        >>> w = World()
        >>> w.register("pos", "f8", shape=3); w["pos"].schema
        {'pos': (dtype('float64'), (3,))}
        >>> w.register("body", {"mass": "f4", "radius": "f4"}); w["body"].columns
        ('mass', 'radius')
        >>> w.register("frozen"); w["frozen"].columns
        ()
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"a component name is a non-empty str, not {name!r}")
        if name in self._stores:
            raise ValueError(f"component {name!r} is already registered")
        if dtype is None:
            if shape != ():
                raise ValueError(
                    f"component {name!r}: a shape needs a dtype; a tag has no rows"
                )
            schema: Any = {}
        elif isinstance(dtype, Mapping) or np.dtype(dtype).names is not None:
            if shape != ():
                raise ValueError(
                    f"component {name!r}: give row shapes inside the schema"
                )
            schema = dtype
        else:
            schema = {name: (dtype, shape)}
        self._stores[name] = EntityStore(
            self, name, schema, self._capacity, self._index
        )

    @property
    def components(self) -> tuple[str, ...]:
        """The registered component names, in registration order.

        Examples
        --------
        >>> w = World(); w.register("a"); w.register("b"); w.components
        ('a', 'b')
        """
        return tuple(self._stores)

    def __getitem__(self, name: str) -> EntityStore:
        try:
            return self._stores[name]
        except (KeyError, TypeError):
            raise UnknownComponentError(
                f"no component {name!r} in this world; register it first with "
                f"world.register({name!r}, dtype); registered: "
                f"{', '.join(self._stores) or '(none)'}"
            ) from None

    def add(self, name: str, handles: Any, /, **columns: Any) -> int:
        """Give entities component ``name``, or replace its values.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2)
        >>> w.add("hp", e, hp=[10, 20])
        2
        """
        return self[name].add(handles, **columns)

    def remove(self, name: str, handles: Any) -> int:
        """Take component ``name`` from entities that must all have it.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2); w.add("hp", e)
        2
        >>> w.remove("hp", e[0]), w.has("hp", e).tolist()
        (1, [False, True])
        """
        return self[name].remove(handles)

    def discard(self, name: str, handles: Any) -> int:
        """Take component ``name`` from the entities that have it.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2); w.add("hp", e[0])
        1
        >>> w.discard("hp", e)
        1
        """
        return self[name].discard(handles)

    def get(self, name: str, handles: Any) -> dict[str, Any]:
        """The values of component ``name`` for entities that must have it.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2)
        >>> w.add("hp", e, hp=[10, 20]); w.get("hp", e[1])["hp"]
        2
        np.int32(20)
        """
        return self[name].get(handles)

    def has(self, name: str, handles: Any) -> Any:
        """Whether each entity has component ``name`` (False for dead handles).

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[1])
        1
        >>> w.has("tag", e).tolist(), w.has("tag", e[1])
        ([False, True], True)
        """
        return self[name].contains(handles)

    # -- joins ------------------------------------------------------------

    def _names(self, names: Any, what: str) -> tuple[str, ...]:
        names = tuple(names)
        for name in names:
            self[name]
        if len(set(names)) != len(names):
            raise ValueError(f"{what} names a component twice: {names!r}")
        return names

    def view(self, *names: str, exclude: Any = ()) -> View:
        """The entities with every component of ``names`` and none of ``exclude``.

        Examples
        --------
        >>> w = World(); w.register("a"); w.register("b"); e = w.create(3)
        >>> w.add("a", e); w.add("b", e[1])
        3
        1
        >>> len(w.view("a")), len(w.view("a", "b")), len(w.view("a", exclude=("b",)))
        (3, 1, 2)
        """
        if not names:
            raise ValueError("a view needs at least one component")
        include = self._names(names, "view")
        if isinstance(exclude, str):
            exclude = (exclude,)
        excluded = self._names(exclude, "exclude")
        both = set(include) & set(excluded)
        if both:
            raise ValueError(
                f"{sorted(both)} both included and excluded: the view is always empty"
            )
        return View(self, include, excluded)

    def group(self, *names: str) -> Group:
        """The owning group of ``names``: their stores packed in one order.

        Asking again with the same components (in any order) returns the
        same group. A component can be owned by one group only.

        Examples
        --------
        >>> w = World(); w.register("a"); w.register("b"); w.register("c")
        >>> w.group("a", "b") is w.group("b", "a")
        True
        >>> w.group("b", "c")
        Traceback (most recent call last):
        ...
        ValueError: component 'b' is already owned by Group('a', 'b', size=0)...
        """
        if not names:
            raise ValueError("a group needs at least one component")
        names = self._names(names, "group")
        for group in self._groups:
            if set(group.components) == set(names):
                return group
        for name in names:
            owner = self._stores[name]._group
            if owner is not None:
                raise ValueError(
                    f"component {name!r} is already owned by {owner!r}; a store "
                    f"can be owned by one group only (use a view for other joins)"
                )
        group = Group(self, names)
        self._groups.append(group)
        return group

    @property
    def groups(self) -> tuple[Group, ...]:
        """The owning groups, in the order they were made.

        Examples
        --------
        >>> w = World(); w.register("a"); w.group("a"); w.groups
        Group('a', size=0)
        (Group('a', size=0),)
        """
        return tuple(self._groups)

    def __repr__(self) -> str:
        return (
            f"World({len(self)} entities, components: "
            f"{', '.join(self._stores) or '(none)'})"
        )

    # -- persistence ------------------------------------------------------

    def _to_state(self) -> dict[str, Any]:
        """Everything that defines the world, as named arrays."""
        meta = {
            "components": [
                [name, list(store._schema)] for name, store in self._stores.items()
            ],
            "groups": [list(group.components) for group in self._groups],
            "group_lengths": [len(group) for group in self._groups],
            "capacity": self._capacity,
            "index": self._index,
        }
        state: dict[str, Any] = {
            "meta": np.array(json.dumps(meta)),
            "generations": self._generations[: self._count],
            "alive": self._alive[: self._count],
            "free": self._free[: self._n_free],
        }
        for i, store in enumerate(self._stores.values()):
            state[f"component{i}.ids"] = store._keys._members()
            for j, column in enumerate(store._schema):
                state[f"component{i}.column{j}"] = store[column]
        return state

    def save(self, path: str | os.PathLike[str], format: str = "npz") -> None:
        """Write the whole world to ``path``, atomically.

        Handles, generations, the free list, every store (rows in their
        order) and every group are kept exactly; :meth:`load` reads either
        format back. A crash never leaves half a save behind.

        Parameters
        ----------
        path : str or path-like
            Where to write.
        format : {"npz", "parquet"}, optional
            ``"npz"``: one ``.npz`` file, written next to ``path`` and
            renamed over it. ``"parquet"``: a directory at ``path`` holding
            ``manifest.json`` (format version, the world's description,
            the size and CRC-32 of each file), ``entities.parquet``
            (generation and liveness per entity index), ``free.parquet``
            (the free list) and ``component<i>.parquet`` per component
            (entity index, then its columns), readable by any Parquet
            tool. It is built in a temporary directory and then takes the
            place of an older world directory at ``path`` (anything else
            there raises ``FileExistsError``). Needs pyarrow.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "world.npz"
        >>> w = World(); w.register("hp", "i4"); e = w.create(2); w.add("hp", e, hp=7)
        2
        >>> w.save(path); World.load(path).get("hp", e)["hp"].tolist()
        [7, 7]
        >>> w.save(path.with_suffix(".parquet"), format="parquet")
        >>> World.load(path.with_suffix(".parquet")).get("hp", e)["hp"].tolist()
        [7, 7]
        """
        if format == "npz":
            io.save(path, FILE_KIND, FILE_VERSION, self._to_state())
        elif format == "parquet":
            from .parquet_io import save_world

            save_world(self, path)
        else:
            raise ValueError(f"format must be 'npz' or 'parquet', not {format!r}")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> World:
        """Read a world written by :meth:`save`, in either format.

        A directory is read as the Parquet format, a file as ``.npz``.
        Raises ``FileNotFoundError`` for a missing path and
        :class:`~sparseset.FormatError` for a truncated, corrupted,
        inconsistent or wrong-version save, checked alike in both
        formats; a world is returned only once all of it has been read
        and checked.

        Examples
        --------
        >>> World.load("/nonexistent/world.npz")
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/world.npz'
        """
        if os.path.isdir(path):
            from .parquet_io import load_world

            return load_world(cls, path)
        world = cls.__new__(cls)
        world._restore(io.load(path, FILE_KIND, FILE_VERSION), os.fspath(path))
        return world

    def to_arrow(self, *components: str, exclude: Any = ()) -> Any:
        """The entities of ``view(*components, exclude=exclude)`` as a table.

        A ``pyarrow.Table`` whose first column ``handle`` holds the
        matches' handles, followed by the columns of each component in
        ``components``, row for row (a join, so these are copies). A
        column is named like its component when it is the component's
        only column and has its name (``register("pos", "f8", 3)``), and
        ``component.column`` otherwise; tags add no column. With no
        components, the table lists every live entity not in ``exclude``.
        Needs pyarrow.

        Examples
        --------
        >>> w = World()
        >>> w.register("pos", "f8", shape=2); w.register("body", {"mass": "f4"})
        >>> w.register("frozen")
        >>> e = w.create(3)
        >>> w.add("pos", e, pos=[[0, 0], [1, 1], [2, 2]]); w.add("body", e, mass=1.5)
        3
        3
        >>> w.add("frozen", e[0])
        1
        >>> table = w.to_arrow("pos", "body", exclude=("frozen",))
        >>> table.column_names, table.column("pos").to_pylist()
        (['handle', 'pos', 'body.mass'], [[1.0, 1.0], [2.0, 2.0]])
        """
        from .tabular import world_to_arrow

        return world_to_arrow(self, components, exclude)

    def __getstate__(self) -> dict[str, Any]:
        return {key: np.array(value) for key, value in self._to_state().items()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._restore(state, "pickled world")

    def _restore(self, state: Mapping[str, Any], source: str) -> None:
        """Check ``state`` whole, then become the world it describes."""
        checked = _check_state(state, source)
        count = checked.generations.shape[0]
        # The capacity is a hint; a file must not make a tiny world allocate
        # gigabytes by claiming a huge one.
        World.__init__(
            self,
            min(checked.capacity, max(count, _RESTORED_CAPACITY)),
            checked.index,
        )
        self._reserve_entities(count)
        self._generations[:count] = checked.generations
        self._alive[:count] = checked.alive
        self._free[: checked.free.shape[0]] = checked.free
        self._count, self._n_free = count, checked.free.shape[0]
        self._live = int(checked.alive.sum())
        for name, (keys, columns) in checked.components.items():
            schema = {
                column: (rows.dtype, rows.shape[1:]) for column, rows in columns.items()
            }
            self.register(name, schema)
            ComponentStore.add(self._stores[name], keys, **columns)
        for names, length in checked.groups:
            # The saved order already packs the group: adopt it, move nothing.
            group = Group.__new__(Group)
            group._world, group._names, group._length = self, names, length
            group._stores = tuple(self._stores[name] for name in names)
            for store in group._stores:
                store._group = group
            self._groups.append(group)


class _CheckedState:
    """A saved world's arrays, checked for consistency."""

    def __init__(self) -> None:
        self.capacity = 0
        self.index = "flat"
        self.generations = np.empty(0, np.uint32)
        self.alive = np.empty(0, np.bool_)
        self.free = np.empty(0, np.int32)
        self.components: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]] = {}
        self.groups: list[tuple[tuple[str, ...], int]] = []


def _repeats(indexes: np.ndarray, count: int) -> bool:
    """Whether ``indexes`` (all in ``[0, count)``) holds one twice.

    By marking, not ``np.unique``: a million indexes take a millisecond
    instead of a sort or hash of them all.
    """
    seen = np.zeros(count, np.bool_)
    seen[indexes] = True
    return int(np.count_nonzero(seen)) != indexes.shape[0]


def _check_state(state: Mapping[str, Any], source: str) -> _CheckedState:
    """Validate every array of a saved world; ``FormatError`` on the first flaw."""

    def fail(problem: str) -> FormatError:
        return FormatError(f"{source}: {problem}; the world was not loaded")

    def array(key: str, kind: str, ndim: int) -> np.ndarray:
        if key not in state:
            raise fail(f"array {key!r} is missing")
        value = np.asarray(state[key])
        if value.dtype.kind not in kind or value.ndim != ndim:
            raise fail(
                f"array {key!r} has dtype {value.dtype} and {value.ndim} dimensions"
            )
        return value

    checked = _CheckedState()
    try:
        meta = json.loads(str(array("meta", "U", 0)))
        components = [
            (str(name), [str(c) for c in columns])
            for name, columns in meta["components"]
        ]
        groups = [tuple(str(name) for name in names) for names in meta["groups"]]
        lengths = [int(length) for length in meta["group_lengths"]]
        checked.capacity = int(meta["capacity"])
        checked.index = str(meta.get("index", "flat"))
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        if isinstance(error, FormatError):
            raise
        raise fail(f"its description is unreadable ({error})") from error
    if (
        not 0 <= checked.capacity <= INDEX_LIMIT
        or len(groups) != len(lengths)
        or checked.index not in KINDS
    ):
        raise fail("its description is inconsistent")

    generations = array("generations", "u", 1).astype(np.uint32)
    alive = array("alive", "b", 1)
    free = array("free", "iu", 1).astype(np.int64)
    count = generations.shape[0]
    if alive.shape[0] != count or count > INDEX_LIMIT:
        raise fail("its entity arrays disagree in length")
    if (generations > LAST_GENERATION).any():
        raise fail("a generation is past the last one")
    if free.size and (free.min() < 0 or free.max() >= count):
        raise fail("its free list names indexes that were never used")
    if _repeats(free, count) or alive[free].any():
        raise fail("its free list repeats an index or names a live one")
    recycled = np.zeros(count, np.bool_)
    recycled[free] = True
    # A dead index is either free for reuse or retired at the last generation.
    if (~alive & ~recycled & (generations != LAST_GENERATION)).any():
        raise fail("a dead index is neither free nor retired")
    checked.generations, checked.alive, checked.free = (
        generations,
        alive,
        free.astype(np.int32),
    )

    for i, (name, columns) in enumerate(components):
        keys = array(f"component{i}.ids", "iu", 1).astype(np.int64)
        if keys.size and (
            keys.min() < 0 or keys.max() >= count or not alive[keys].all()
        ):
            raise fail(f"component {name!r} holds an entity that is not alive")
        if _repeats(keys, count):
            raise fail(f"component {name!r} holds an entity twice")
        rows = {}
        for j, column in enumerate(columns):
            values = np.asarray(state.get(f"component{i}.column{j}"))
            if (
                values.ndim < 1
                or values.shape[0] != keys.shape[0]
                or values.dtype.hasobject
            ):
                raise fail(f"column {column!r} of {name!r} does not match its entities")
            rows[column] = values
        if not name:
            raise fail("a component has an empty name")
        try:
            _parse_schema({c: (v.dtype, v.shape[1:]) for c, v in rows.items()})
        except (TypeError, ValueError) as error:
            raise fail(f"component {name!r} has a bad column: {error}") from error
        checked.components[name] = (keys, rows)
    if len(checked.components) != len(components):
        raise fail("a component is listed twice")

    owned: set[str] = set()
    for names, length in zip(groups, lengths, strict=True):
        if not names or any(name not in checked.components for name in names):
            raise fail(f"group {names!r} names an unknown component")
        if owned & set(names) or len(set(names)) != len(names):
            raise fail(f"group {names!r} shares a component with another group")
        owned |= set(names)
        members = [checked.components[name][0] for name in names]
        if not 0 <= length <= min(len(keys) for keys in members):
            raise fail(f"group {names!r} has an impossible length")
        front = members[0][:length]
        if any(not np.array_equal(keys[:length], front) for keys in members):
            raise fail(f"group {names!r} is not packed alike in its stores")
        everywhere = members[0]
        for keys in members[1:]:
            everywhere = np.intersect1d(everywhere, keys, assume_unique=True)
        if everywhere.shape[0] != length:
            raise fail(f"group {names!r} does not hold every entity it should")
        checked.groups.append((names, length))
    return checked


__all__ = [
    "LAST_GENERATION",
    "DeadHandleError",
    "EntityStore",
    "UnknownComponentError",
    "World",
]

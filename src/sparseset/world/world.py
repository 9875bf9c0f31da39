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

import itertools
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import config
from ..sets.index_kinds import KINDS, kind_named
from ..sets.locking import Guarded, atomic, share_guard
from . import persistence
from .commands import Commands
from .entities import (
    INDEX_LIMIT,
    LAST_GENERATION,
    DeadHandleError,
    Entities,
    EntityTable,
)
from .entity_store import EntityStore
from .grid import WorldGrid
from .group import Group
from .hooks import Reactor, Subscription
from .persistence import WorldState
from .tracking import Reader, Tracker
from .view import View


class UnknownComponentError(KeyError):
    """A component name that was never registered."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@atomic(unlocked=("__getitem__", "__len__", "get", "has"))
class World(Guarded):
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
        self._entities = Entities(capacity)
        self._stores: dict[str, EntityStore] = {}
        self._groups: list[Group] = []
        self._reactor = Reactor(self._new_commands)
        self._tracker = Tracker()
        # Per thread: the buffer of the scheduled system running there.
        self._running = threading.local()

    # -- entities ---------------------------------------------------------

    def _reserve_entities(self, needed: int) -> None:
        if self._entities.reserve(needed):
            for store in self._stores.values():
                store.follow_entities()

    def create(self, n: int) -> np.ndarray:
        """Create ``n`` entities; returns their handles (int64).

        Destroyed indexes are reused first, each with its next generation.

        Raises
        ------
        TypeError
            If ``n`` is not an integer.
        ValueError
            If ``n`` is negative, or the world would pass 2**31 entity indexes.

        Notes
        -----
        O(n), amortised: reused indexes first, growth doubles the entity table.

        Examples
        --------
        >>> w = World(); e = w.create(2); e.tolist()
        [0, 1]
        >>> w.destroy(e[0]); w.create(1).tolist()  # index 0, generation 1
        1
        [4294967296]
        """
        if self._reactor.deferring:
            return self._reactor.defer().create(n)
        return self._entities.create(self._room_for(n))

    def _room_for(self, n: Any) -> int:
        """``n`` checked as a count of new entities, with room made for them."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer):
            raise TypeError(f"create(n) takes an integer count, not {n!r}")
        count = int(n)
        if count < 0:
            raise ValueError(f"create(n) takes a count >= 0, got {count}")
        needed = self._entities.count + self._entities.fresh_needed(count)
        if needed > INDEX_LIMIT:
            raise ValueError(
                f"cannot create {count} entities: {needed} indexes "
                f"would pass the limit of 2**31"
            )
        self._reserve_entities(needed)
        return count

    def _hold(self, n: int) -> np.ndarray:
        return self._entities.hold(self._room_for(n))

    def deferred(self) -> Commands:
        """A buffer of structural changes, applied in order, as batches, at
        the end of a ``with`` block (or by its ``apply()``).

        ``cmd.create(n)`` returns handles at once, alive once applied;
        ``cmd.destroy(h)``, ``cmd.add(name, h, **columns)``,
        ``cmd.remove(name, h)``, ``cmd.discard(name, h)`` and
        ``cmd.clear(name)`` act as the world's calls do, when applied. A
        run of the same command on the same component is one batch call.
        A block that raises applies nothing (its created entities die
        unused). Inside a system a :class:`~sparseset.Schedule` runs, the
        block records into the system's buffer instead, applied when the
        system's batch ends. See :class:`~sparseset.world.commands.Commands`.

        Notes
        -----
        O(1) to open; the block's end applies its commands (see
        :meth:`~sparseset.world.commands.Commands.apply`).

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(4)
        >>> w.add("hp", e, hp=[5, 0, 7, 0])
        4
        >>> dead = e[w.get("hp", e)["hp"] == 0]
        >>> with w.deferred() as cmd:  # despawn while walking
        ...     for h in w["hp"].ids:
        ...         if w.get("hp", h)["hp"] == 0:
        ...             cmd.destroy(h)
        >>> len(w), bool(w.alive(dead).any())
        (2, False)
        """
        buffer: Commands | None = getattr(self._running, "buffer", None)
        if buffer is not None:
            return buffer
        return self._new_commands()

    def _new_commands(self) -> Commands:
        entities = self._entities
        return Commands(self, self.lock, self._hold, entities.admit, entities.release)

    @contextmanager
    def deferring_into(self, buffer: Commands) -> Iterator[Commands]:
        """While the block runs, ``deferred()`` on this thread returns
        ``buffer`` (marked :meth:`~sparseset.world.commands.Commands.owned`:
        its ``with`` blocks apply nothing): how a :class:`~sparseset.Schedule`
        applies a system's deferred commands when its batch ends.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> w = World(); batch = w.deferred()
        >>> with w.deferring_into(batch):
        ...     with w.deferred() as cmd:
        ...         e = cmd.create(1)
        >>> len(w), len(batch)
        (0, 1)
        >>> batch.apply(); len(w)
        1
        """
        running = self._running
        outer = getattr(running, "buffer", None)
        running.buffer = buffer.owned()
        try:
            yield buffer
        finally:
            running.buffer = outer

    def reader(self, name: str, *, include_present: bool = False) -> Reader:
        """A reader of a tracked component's changes, from now on.

        ``r.added()``, ``r.changed()`` and ``r.removed()`` answer the
        entities (int64 handles) that got, were written (declared writes:
        adds, ``set``, ``add_at``, ``touch``) or lost the component since
        the reader was made or last committed; ``r.commit()`` moves it on.
        With ``include_present=True`` its first answers also hold every
        entity that has the component now, as added and changed (as a
        system's first run sees the world). Raises ``ValueError`` for an
        untracked component. See :class:`~sparseset.world.tracking.Reader`.

        Raises
        ------
        UnknownComponentError
            If no component is called ``name``.
        ValueError
            If the component is not tracked.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> w = World(); w.register("pos", "f8", track=True)
        >>> moved = w.reader("pos"); e = w.create(2); w.add("pos", e, pos=1.0)
        2
        >>> moved.commit(); w.touch("pos", e[0]); moved.changed().tolist()
        [0]
        """
        store = self[name]
        if not store.tracked:
            raise ValueError(
                f"component {name!r} is not tracked: register it with "
                f"track=True to read its changes"
            )
        return Reader(self._tracker, store, self.lock, include_present)

    def touch(self, name: str, handles: Any) -> None:
        """Declare the rows of ``handles`` in component ``name`` written,
        for the component's readers (``world[name].touch``; nothing on an
        untracked component).

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        KeyError
            If an entity does not have the component.

        Notes
        -----
        O(k) for k handles.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4", track=True); e = w.create(1)
        >>> w.add("hp", e); r = w.reader("hp"); w.touch("hp", e)
        1
        >>> r.changed().tolist()
        [0]
        """
        self[name].touch(handles)

    def set(self, name: str, handles: Any, /, **columns: Any) -> None:
        """Replace the values of component ``name`` for entities that must
        have it (``world[name].set``).

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        DeadHandleError
            If a handle is not alive (a ``ValueError`` and a ``KeyError``); nothing
            changes.
        KeyError
            If an entity does not have the component; nothing changes.

        Notes
        -----
        O(k) for k handles, times the row width.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2); w.add("hp", e)
        2
        >>> w.set("hp", e[1], hp=7); w.get("hp", e)["hp"].tolist()
        [0, 7]
        """
        self[name].set(handles, **columns)

    def on_add(self, name: str, hook: Any) -> Subscription:
        """Call ``hook(handles)`` once after each call that gives entities
        component ``name`` (new members; replacing rows is no addition).

        ``handles`` is a read-only int64 array, never empty. Structural
        changes the hook makes are applied after the call completes; a
        hook that raises propagates, the addition kept (see
        :mod:`sparseset.world.hooks`). Returns a
        :class:`~sparseset.world.hooks.Subscription`: ``close()`` it to stop.

        Notes
        -----
        O(1); the hook then runs once per call that adds, with the handles it added.

        Examples
        --------
        >>> w = World(); w.register("pos", "f8"); w.register("cell", "i4")
        >>> def place(handles):  # give every new body a cell
        ...     w.add("cell", handles, cell=0)
        >>> hook = w.on_add("pos", place)
        >>> w.add("pos", w.create(3), pos=1.0), len(w["cell"])
        (3, 3)
        """
        self[name]  # an unknown component raises here
        return self._reactor.subscribe("add", name, hook)

    def on_remove(self, name: str, hook: Any) -> Subscription:
        """Call ``hook(handles)`` once before each call that takes component
        ``name`` from entities (``remove``, ``discard``, ``destroy``,
        ``clear``), while ``w.get`` still reads their rows.

        A hook that raises stops the call with the world unchanged.
        Otherwise as :meth:`on_add`.

        Notes
        -----
        O(1); the hook then runs once per call that removes, with the handles it
        removes.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2)
        >>> w.add("hp", e, hp=[3, 4])
        2
        >>> lost = []
        >>> hook = w.on_remove("hp", lambda h: lost.extend(w.get("hp", h)["hp"]))
        >>> w.destroy(e); [int(v) for v in lost]
        2
        [3, 4]
        """
        self[name]
        return self._reactor.subscribe("remove", name, hook)

    def destroy(self, handles: Any) -> int:
        """Destroy entities: remove them from every store and kill their handles.

        All must be alive (a repeat counts once); otherwise
        :class:`DeadHandleError` (a ``ValueError``) is raised and nothing is
        destroyed. Returns how many were destroyed.

        Raises
        ------
        TypeError
            If a handle is not an integer.
        DeadHandleError
            If a handle is not alive (a ``ValueError`` and a ``KeyError``); nothing
            changes.

        Notes
        -----
        O(k x c) for k handles and the c components registered (each store is asked);
        hooks run once per store, not per entity.

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(3); w.add("tag", e)
        3
        >>> w.destroy(e[:2]), len(w), len(w["tag"])
        (2, 1, 1)
        >>> w.destroy(e[0])
        Traceback (most recent call last):
        ...
        sparseset.DeadHandleError: handle = 0 (index 0, generation 0) is ...
        """
        reactor = self._reactor
        if reactor.deferring:
            reactor.defer().destroy(handles)
            return 0
        keys, _ = self._entities.resolve(handles, "nothing was destroyed")
        stores = self._stores.values()
        watched = [s for s in stores if reactor.watching("remove", s.name)]
        if not watched:
            return self._destroy_keys(keys, handles)
        with reactor.dispatch() as fire:
            # Every store's hooks first, while every row is still there: a
            # hook that raises leaves the world unchanged.
            for store in watched:
                present = store.present_keys(keys)
                fire("remove", store.name, self._entities.handles(present))
            return self._destroy_keys(keys, handles)

    def _destroy_keys(self, keys: np.ndarray, handles: Any) -> int:
        for store in self._stores.values():
            store.discard_keys(keys, handles)
        return self._entities.kill(keys)

    def alive(self, handles: Any) -> Any:
        """Whether each handle is a live entity: a bool, or a bool array.

        Raises
        ------
        TypeError
            If a handle is not an integer.

        Notes
        -----
        O(k) for k handles.

        Examples
        --------
        >>> w = World(); e = w.create(2); w.destroy(e[1])
        1
        >>> w.alive(e).tolist(), w.alive(e[0]), w.alive(2**40)
        ([True, False], True, False)
        """
        return self._entities.alive(handles)

    @property
    def entities(self) -> np.ndarray:
        """The handles of every live entity, by index.

        O(E) for E entity indexes ever used: a scan for the live ones, and a
        new array of their handles.

        Examples
        --------
        >>> w = World(); e = w.create(3); w.destroy(e[1]); w.entities.tolist()
        1
        [0, 2]
        """
        return self._entities.handles(self._entities.live_keys())

    def __len__(self) -> int:
        return self._entities.live

    @property
    def kind(self) -> str:
        """The index kind of the component stores.

        O(1).

        Examples
        --------
        >>> World(index="paged").kind
        'paged'
        """
        return self._index

    @property
    def nbytes(self) -> int:
        """Bytes held by the entity arrays and every component store.

        O(c) for c components and their columns: sizes, not contents.

        Examples
        --------
        >>> w = World(capacity=100); w.register("hp", "f8"); w.nbytes
        2400
        """
        stores = sum(store.nbytes for store in self._stores.values())
        return self._entities.nbytes + stores

    # -- components -------------------------------------------------------

    def register(
        self, name: str, dtype: Any = None, shape: Any = (), track: bool = False
    ) -> None:
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
        track : bool, optional
            Record which entities get, change and lose the component, for
            :meth:`reader` (4 bytes per row, plus the removals no reader
            has read yet). Untracked components cost nothing.

        Raises
        ------
        ValueError
            If ``name`` is already registered or the dtype or shape is not one a column
            takes.
        TypeError
            If ``name`` is not a string.

        Notes
        -----
        O(1), plus the store's first allocation.

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
        store = EntityStore(
            self,
            self._entities,
            name,
            schema,
            self._capacity,
            self._index,
            self._reactor,
        )
        if not isinstance(track, bool):
            raise TypeError(f"track must be True or False, not {track!r}")
        share_guard(store, self)
        if track:
            store.track(self._tracker)
        self._stores[name] = store

    @property
    def components(self) -> tuple[str, ...]:
        """The registered component names, in registration order.

        O(c) for c components.

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

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        DeadHandleError
            If a handle is not alive (a ``ValueError`` and a ``KeyError``); nothing
            changes.
        UnknownColumnError
            If a keyword names a column the component does not have.
        ValueError
            If a value does not broadcast to its rows; nothing changes.

        Notes
        -----
        O(k) for k handles, times the row width, amortised as ``ComponentStore.add``.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2)
        >>> w.add("hp", e, hp=[10, 20])
        2
        """
        return self[name].add(handles, **columns)

    def remove(self, name: str, handles: Any) -> int:
        """Take component ``name`` from entities that must all have it.

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        DeadHandleError
            If a handle is not alive (a ``ValueError`` and a ``KeyError``); nothing
            changes.
        KeyError
            If an entity does not have the component; nothing changes.

        Notes
        -----
        O(k) for k handles, times the row width.

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

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative.

        Notes
        -----
        O(k) for k handles, times the row width.

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

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        KeyError
            If an entity does not have the component (a dead handle included).

        Notes
        -----
        O(k) for k handles, times the row width (the rows are copied out).

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); e = w.create(2)
        >>> w.add("hp", e, hp=[10, 20]); w.get("hp", e[1])["hp"]
        2
        np.int32(20)
        """
        # The stores' dict, not self[name]: one frame less on a one-handle
        # call; self[name] raises for a name that is not there.
        try:
            store = self._stores[name]
        except (KeyError, TypeError):
            store = self[name]
        return store.get(handles)

    def has(self, name: str, handles: Any) -> Any:
        """Whether each entity has component ``name`` (False for dead handles).

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.

        Notes
        -----
        O(k) for k handles.

        Examples
        --------
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[1])
        1
        >>> w.has("tag", e).tolist(), w.has("tag", e[1])
        ([False, True], True)
        """
        # One store call, atomic by itself: no lock of the world's here.
        # The stores' dict first, as in get.
        try:
            store = self._stores[name]
        except (KeyError, TypeError):
            store = self[name]
        return store.contains(handles)

    # -- joins ------------------------------------------------------------

    def _names(self, names: Any, what: str) -> tuple[str, ...]:
        checked: tuple[str, ...] = tuple(names)
        for name in checked:
            self[name]
        if len(set(checked)) != len(checked):
            raise ValueError(f"{what} names a component twice: {checked!r}")
        return checked

    def view(self, *names: str, exclude: Any = (), optional: Any = ()) -> View:
        """The entities with every component of ``names`` and none of ``exclude``.

        Components in ``optional`` do not select: ``v.rows(name)`` holds
        :data:`~sparseset.NO_ROW` for a match that lacks one, and
        ``v.has(name)`` is the mask of the matches that have it.

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        ValueError
            If no component is named, a name repeats, or a component is both
            required and excluded or optional.

        Notes
        -----
        O(1) to make; each question it answers walks the smallest required store and
        probes the others: O(m x r) for m members of that store and r other components.

        Examples
        --------
        >>> w = World(); w.register("a"); w.register("b"); e = w.create(3)
        >>> w.add("a", e); w.add("b", e[1])
        3
        1
        >>> len(w.view("a")), len(w.view("a", "b")), len(w.view("a", exclude=("b",)))
        (3, 1, 2)
        >>> w.view("a", optional=("b",)).has("b").tolist()
        [False, True, False]
        """
        if not names:
            raise ValueError("a view needs at least one component")
        include = self._names(names, "view")
        if isinstance(exclude, str):
            exclude = (exclude,)
        if isinstance(optional, str):
            optional = (optional,)
        excluded = self._names(exclude, "exclude")
        optionals = self._names(optional, "optional")
        roles = (("included", include), ("excluded", excluded), ("optional", optionals))
        for (role, named), (other, also) in itertools.combinations(roles, 2):
            both = set(named) & set(also)
            if both:
                raise ValueError(
                    f"{sorted(both)} both {role} and {other}: a component has "
                    "one role in a view (names, exclude or optional)"
                )
        view = View(
            self,
            self._entities,
            tuple(self._stores[name] for name in include),
            tuple(self._stores[name] for name in excluded),
            tuple(self._stores[name] for name in optionals),
        )
        share_guard(view, self)
        return view

    def components_of(self, handle: Any) -> tuple[str, ...]:
        """The components one live entity has, in registration order.

        Raises :class:`~sparseset.DeadHandleError` for a dead handle and
        ``ValueError`` for a batch (this asks about one entity).

        Notes
        -----
        O(c) for the c registered components (each store is asked).

        Examples
        --------
        >>> w = World(); w.register("a"); w.register("b", "f8"); e = w.create(2)
        >>> w.add("b", e[0], b=1.5)
        1
        >>> w.components_of(e[0]), w.components_of(e[1])
        (('b',), ())
        """
        key = self._entity_key(handle, "nothing was read")
        return tuple(
            name for name, store in self._stores.items() if store.contain_keys(key)[0]
        )

    def get_all(self, handle: Any) -> dict[str, dict[str, Any]]:
        """Every component of one live entity: ``{name: w.get(name, handle)}``,
        in registration order (a tag component's values are ``{}``).

        Raises :class:`~sparseset.DeadHandleError` for a dead handle and
        ``ValueError`` for a batch.

        Notes
        -----
        O(c) for the c registered components, plus the rows copied out.

        Examples
        --------
        >>> w = World(); w.register("hp", "i4"); w.register("boss"); e = w.create(1)
        >>> w.add("hp", e, hp=30); w.add("boss", e)
        1
        1
        >>> w.get_all(e[0])
        {'hp': {'hp': np.int32(30)}, 'boss': {}}
        """
        key = self._entity_key(handle, "nothing was read")
        return {
            name: store.get(handle)
            for name, store in self._stores.items()
            if store.contain_keys(key)[0]
        }

    def _entity_key(self, handle: Any, consequence: str) -> np.ndarray:
        """One live handle's index, as a one-key array."""
        if np.ndim(handle) != 0:
            raise ValueError(
                f"expected one handle, got an array of shape {np.shape(handle)}: "
                "this asks about one entity"
            )
        keys, _ = self._entities.resolve(handle, consequence)
        return keys

    def grid(
        self,
        name: str,
        cell: float = 1.0,
        torus: Any = None,
        column: str | None = None,
    ) -> WorldGrid:
        """A :class:`~sparseset.Grid` of the entities holding ``name``, kept in
        step with the world (see :class:`~sparseset.world.grid.WorldGrid`).

        ``column`` names the column of positions (``shape=(dims,)``, 1 to 3
        numbers a row); the component's only column if None. Tracked
        components are followed through a reader, others by checking every
        position before each answer.

        Raises
        ------
        UnknownComponentError
            If no component is called ``name``.
        ValueError
            If the column is not one of positions, or ``cell`` or ``torus``
            is not valid.

        Notes
        -----
        O(n) for n entities holding the component (the first placing).

        Examples
        --------
        >>> w = World(); w.register("pos", "f8", shape=(2,), track=True)
        >>> e = w.create(2); w.add("pos", e, pos=[[0, 0], [3, 3]])
        2
        >>> g = w.grid("pos", cell=1.0); w.set("pos", e[1], pos=[0.5, 0])
        >>> len(g.pairs(1.0)[0])
        1
        """
        return WorldGrid(self, self._entities, name, cell, torus, column)

    def group(self, *names: str) -> Group:
        """The owning group of ``names``: their stores packed in one order.

        Asking again with the same components (in any order) returns the
        same group. A component can be owned by one group only.

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        ValueError
            If no component is named, a name repeats, or a component is already
            owned by another group.

        Notes
        -----
        O(n) the first time, for the n members of the components' stores (they are
        packed); O(1) when the group exists.

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
            owner = self._stores[name].group
            if owner is not None:
                raise ValueError(
                    f"component {name!r} is already owned by {owner!r}; a store "
                    f"can be owned by one group only (use a view for other joins)"
                )
        group = Group(self, self._entities, tuple(self._stores[n] for n in names))
        share_guard(group, self)
        self._groups.append(group)
        return group

    @property
    def groups(self) -> tuple[Group, ...]:
        """The owning groups, in the order they were made.

        O(g) for g groups.

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

    def _state(self) -> WorldState:
        """Everything that defines the world, as arrays (no copies)."""
        table = self._entities.snapshot()
        return WorldState(
            capacity=self._capacity,
            index=self._index,
            generations=table.generations,
            alive=table.alive,
            free=table.free,
            components={
                name: (store.members(), {c: store[c] for c in store.columns})
                for name, store in self._stores.items()
            },
            groups=[(group.components, len(group)) for group in self._groups],
            tracked=[name for name, store in self._stores.items() if store.tracked],
        )

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

        Raises
        ------
        ValueError
            If ``format`` is neither ``"npz"`` nor ``"parquet"``.
        FileExistsError
            For ``"parquet"``, if something other than a saved world is at
            ``path``.
        OSError
            If the file system refuses the write.

        Notes
        -----
        O(n) for the world's entities and rows, written once.

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
        if format not in persistence.FORMATS:
            raise ValueError(f"format must be 'npz' or 'parquet', not {format!r}")
        persistence.save(self._state(), path, format)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> World:
        """Read a world written by :meth:`save`, in either format.

        A directory is read as the Parquet format, a file as ``.npz``.
        Raises ``FileNotFoundError`` for a missing path and
        :class:`~sparseset.FormatError` for a truncated, corrupted,
        inconsistent or wrong-version save, checked alike in both
        formats; a world is returned only once all of it has been read
        and checked.

        Notes
        -----
        O(n) for the saved entities and rows, read and checked once.

        Examples
        --------
        >>> World.load("/nonexistent/world.npz")
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/world.npz'
        """
        world = cls.__new__(cls)
        world._become(persistence.load(path))
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

        Raises
        ------
        ImportError
            If pyarrow is not installed.
        UnknownComponentError
            If ``name`` was never registered.

        Notes
        -----
        O(m) per column for the m matches of the view (a join: the rows are copied).

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
        from ..io.tabular import world_to_arrow

        if isinstance(exclude, str):
            exclude = (exclude,)
        # A view checks its own names; with no components, check them here.
        excluded = tuple(exclude) if components else self._names(exclude, "exclude")
        return world_to_arrow(self, components, excluded)

    def __getstate__(self) -> dict[str, Any]:
        arrays = persistence.to_arrays(self._state())
        return {key: np.array(value) for key, value in arrays.items()}

    def __setstate__(self, arrays: dict[str, Any]) -> None:
        self._become(persistence.from_arrays(arrays, "pickled world"))

    def _become(self, state: WorldState) -> None:
        """Become the (checked) world ``state`` describes."""
        count = state.generations.shape[0]
        # The capacity is a hint; a file must not make a tiny world allocate
        # gigabytes by claiming a huge one.
        World.__init__(
            self, min(state.capacity, max(count, config.RESTORED_CAPACITY)), state.index
        )
        self._entities.restore(EntityTable(state.generations, state.alive, state.free))
        for name, (keys, columns) in state.components.items():
            schema = {
                column: (rows.dtype, rows.shape[1:]) for column, rows in columns.items()
            }
            self.register(name, schema, track=name in state.tracked)
            self._stores[name].adopt(keys, columns)
        for names, length in state.groups:
            # The saved order already packs the group: adopt it, move nothing.
            stores = tuple(self._stores[name] for name in names)
            group = Group(self, self._entities, stores, length)
            share_guard(group, self)
            self._groups.append(group)


__all__ = [
    "LAST_GENERATION",
    "DeadHandleError",
    "EntityStore",
    "UnknownComponentError",
    "World",
]

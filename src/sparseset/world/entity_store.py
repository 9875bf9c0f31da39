"""A world's component store: a :class:`~sparseset.ComponentStore` keyed by entity.

An :class:`EntityStore` takes and returns handles. Inside, its keys are
entity indexes, resolved through the world's :class:`~.entities.Entities`
table: every change requires live handles, and a query answers "absent" for
a dead one, so no handle ever reaches the row of an entity that reuses its
index.

The World interface
-------------------
A store talks to the objects around it through these methods and nothing
else (docs/architecture.md, "Who may ask what"):

- its world calls :meth:`EntityStore.present_keys` and
  :meth:`EntityStore.discard_keys` (``destroy``: the hooks, then the rows),
  :meth:`EntityStore.follow_entities` (the entity arrays grew) and
  :meth:`EntityStore.adopt` (a loaded world's rows);
- views and groups read :meth:`EntityStore.members` (entity indexes in row
  order), :meth:`EntityStore.state_key` (changes whenever the members or
  their order do) and look keys up with :meth:`EntityStore.contain_keys`,
  :meth:`EntityStore.index_keys` and :meth:`EntityStore.join_keys`,
  which take the same (shared-out) path as
  :meth:`~sparseset.SparseSet.contains` where the containers would;
- the owning group attaches with :meth:`EntityStore.own`, moves rows with
  :meth:`EntityStore.pack`, reports its moves with
  :meth:`EntityStore.note_moved` and casts assigned values with
  :meth:`EntityStore.cast`; the store calls back the :class:`Owner`
  methods ``_admit``, ``_expel`` and ``_reset`` as its members change (a
  store no group owns has :data:`NO_GROUP`, whose calls do nothing).

Ids reach the store's index through :class:`HandleKeys`, its key map.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from .. import kernels
from ..kernels.options import ROW
from ..sets.ids import as_ids, kernel_ids, one_id
from ..sets.index_kinds import KINDS
from ..sets.locking import atomic, exclusive, holds_lock_free
from ..sets.pool import share_out, shared
from ..stores.component_store import ComponentStore
from .entities import INDEX_LIMIT, Entities, where
from .hooks import Reactor
from .tracking import Tracker

if TYPE_CHECKING:
    from ..sets.engine import SetState


class Owner(Protocol):
    """What a store expects of the group that owns it."""

    def _admit(self, keys: np.ndarray) -> None:
        """Pack the entities among ``keys`` that now have every component."""

    def _expel(self, keys: np.ndarray) -> None:
        """Unpack the group's entities among ``keys`` before they lose one."""

    def _reset(self) -> None:
        """Forget every member: an owned store was cleared."""


class _NoGroup:
    """The owner of a store no group owns: every call does nothing."""

    def _admit(self, keys: np.ndarray) -> None:
        pass

    def _expel(self, keys: np.ndarray) -> None:
        pass

    def _reset(self) -> None:
        pass

    def __repr__(self) -> str:
        return "NO_GROUP"


#: The owner of every store that no group owns.
NO_GROUP: Owner = _NoGroup()


class HandleKeys:
    """The key map of a World store: handles in, entity indexes as keys.

    Changes need live handles (else :class:`~sparseset.DeadHandleError`,
    saying what did not happen); a missing entity is named with the
    component it lacks.
    """

    __slots__ = ("_entities", "_name", "index_of")

    def __init__(self, entities: Entities, name: str) -> None:
        self._entities = entities
        self._name = name
        #: The entity index of one handle, -1 if it is dead (see KeyMap).
        self.index_of = entities.index_of

    def keys_of(self, ids: Any, consequence: str) -> tuple[np.ndarray, bool]:
        """The entity indexes of live handles (else DeadHandleError)."""
        return self._entities.resolve(ids, consequence)

    def rows_of(self, ids: Any, state: SetState) -> tuple[np.ndarray, bool] | None:
        """The rows of live handles that all have one, in one pass (see
        :meth:`.Entities.rows_in`); None if some handle does not."""
        arr, scalar = as_ids(ids)
        rows = self._entities.rows_in(arr, state.sparse, state.dense, state.n)
        return None if rows is None else (rows, scalar)

    def key_of(self, x: int) -> int:
        """The entity index of one live handle (else DeadHandleError)."""
        key = self._entities.index_of(x)
        if key < 0:
            self.keys_of(x, "nothing was read or changed")  # raises, saying why
        return key

    def lacking(self, ids: Any, k: int, scalar: bool) -> str:
        """``handle = ... has no 'name' component; add it first ...``."""
        handle = int(as_ids(ids)[0][k])
        return (
            f"{where(k, scalar)} = {handle} has no {self._name!r} component; "
            f"add it first with world.add({self._name!r}, handles, ...)"
        )

    def ids_of(self, keys: np.ndarray) -> np.ndarray:
        """The handles of entity indexes."""
        return self._entities.handles(keys)

    def twin_entities(self) -> tuple[np.ndarray, ...]:
        """The world's generations (with liveness), which a twin checks."""
        return (self._entities.generations,)

    def table_kind(self, ids: np.ndarray, kind: str) -> str:
        """The first kind whose range takes every handle of the table (a
        handle is ``index | generation << 32``, not a key)."""
        top = int(ids.max()) if ids.size else -1
        return next(name for name, k in KINDS.items() if top < k.limit)


class Components(Protocol):
    """The world as its stores see it: components found by name."""

    def __getitem__(self, name: str) -> EntityStore: ...


@runtime_checkable
class Joined(Protocol):
    """A view or a group: components and the handles of their matches."""

    @property
    def components(self) -> tuple[str, ...]: ...

    @property
    def ids(self) -> np.ndarray: ...


#: A row-moving kernel: ``(sparse, dense, n, length, keys, rows) -> length``.
PackKernel = Callable[..., int]


@atomic(unlocked=("__contains__", "__len__", "contains", "get", "set"))
class EntityStore(ComponentStore):
    """A component's store: a :class:`~sparseset.ComponentStore` keyed by entity.

    It takes handles wherever a store takes ids, and its :attr:`ids` are
    handles. Changes (``add``, ``set``, ``discard``, ``remove``) require live
    handles and raise :class:`~sparseset.DeadHandleError` otherwise; queries
    (``contains``, ``index``) answer "absent" for a dead handle. Get one
    from ``world[name]``.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("hp", "i4"); e = w.create(2)
    >>> store = w["hp"]; store.add(e, hp=[5, 7])
    2
    >>> w.destroy(e[0])
    1
    >>> store.contains(e).tolist(), store.ids.tolist() == [e[1]]
    ([False, True], True)
    """

    def __init__(
        self,
        world: Components,
        entities: Entities,
        name: str,
        schema: Any,
        capacity: int,
        index: str,
        reactor: Reactor | None = None,
    ) -> None:
        super().__init__(schema, capacity, index)
        self._world = world
        self._entities = entities
        self._name = name
        #: The world's hooks and the buffer its hooks' changes wait in.
        self._reactor = Reactor() if reactor is None else reactor
        #: The world's tracker, if this component is tracked.
        self._tracker: Tracker | None = None
        self._group: Owner = NO_GROUP
        self._version = 0
        self._handles = HandleKeys(entities, name)
        self._key_map = self._handles

    @property
    def name(self) -> str:
        """The component's name in its world.

        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); w["tag"].name
        'tag'
        """
        return self._name

    @property
    def group(self) -> Owner | None:
        """The owning group that keeps this store packed, if any.

        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); w["a"].group is None
        True
        """
        return None if self._group is NO_GROUP else self._group

    # -- change tracking ----------------------------------------------------

    def track(self, tracker: Tracker) -> None:
        """Stamp this component's rows and log its removals for ``tracker``
        from now on (see :mod:`sparseset.world.tracking`). Part of the World interface:
        ``register(..., track=True)`` calls it before any row exists.

        Notes
        -----
        O(1) (the store is empty when it is called).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4", track=True); w["hp"].tracked
        True
        """
        self._tracker = tracker
        self._track_changes(lambda: tracker.tick)
        tracker.track(self._name, self)

    @property
    def nbytes(self) -> int:
        """Bytes held by the index, the ids, every column and, for a tracked
        component, its change stamps and the removals not yet read.

        O(c) for c columns: their sizes, not their contents.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4", track=True); w.add("hp", w.create(4))
        4
        >>> w["hp"].nbytes - w["hp"].capacity * (4 + 4 + 4 + 4)  # 4: stamps
        0
        """
        held = super().nbytes
        if self._tracker is not None:
            held += self._tracker.log(self._name).nbytes
        return held

    @property
    def tracked(self) -> bool:
        """Whether the component records its changes for readers.

        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); w["hp"].tracked
        False
        """
        return self._tracker is not None

    def rows_after(self, since: int, changed: bool) -> np.ndarray:
        """Positions of the members added (``changed=False``) or written
        (``changed=True``) after clock ``since``: what a reader answers.
        Part of the tracking interface.

        Notes
        -----
        O(n) for the n members: one pass over the stamps.

        Examples
        --------
        The clock moves on when a reader commits:

        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4", track=True); r = w.reader("hp")
        >>> w.add("hp", w.create(3)); r.commit()
        3
        >>> w["hp"].touch_rows(slice(1, 3)); w["hp"].rows_after(r.since, True).tolist()
        [1, 2]
        >>> w["hp"].rows_after(r.since, False).tolist()
        []
        """
        return self._rows_stamped_after(since, int(changed))

    def written_at_least(self, since: int) -> int:
        """A lower bound of how many members were written after clock
        ``since``, known without a scan: the block of rows a write scope
        (a group's ``write`` or ``touch``, :meth:`touch_rows` of a slice)
        declared since, until :meth:`settle` stamps them. Part of the
        tracking interface: a catch-up that would redo everything past
        some share of the members decides before it scans the stamps.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4", track=True); r = w.reader("hp")
        >>> w.add("hp", w.create(3)); r.commit()
        3
        >>> w["hp"].touch_rows(slice(0, 3))  # as a group's write scope does
        >>> w["hp"].written_at_least(r.since), w["hp"].rows_after(r.since, True).size
        (3, 3)
        """
        return self._rows_noted_written_after(since)

    def handles_at(self, rows: np.ndarray) -> np.ndarray:
        """The handles of the members at ``rows``. Part of the tracking
        interface.

        Notes
        -----
        O(k) for k rows.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(3); w.add("hp", e[::-1])
        3
        >>> w["hp"].handles_at(np.array([0, 2])).tolist()
        [2, 0]
        """
        return self._entities.handles(self.members(), at=rows)

    def settle(self) -> None:
        """Stamp what ``@njit`` code did through the twin since the last
        settle: rows it added or touched (stamped 0, "not yet stamped") get
        the clock now, and the handles its ``remove`` logged join the
        removal records. A reader settles before it answers or commits.
        Part of the tracking interface.

        Notes
        -----
        O(n) for the n members (a pass over the stamps) when a twin exists and
        the store is tracked, plus O(r) for r removals the twin logged; O(1)
        otherwise.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4", track=True); e = w.create(1)
        >>> r = w.reader("hp"); twin = w["hp"].jit; twin.add(e[0])
        True
        >>> r.added().tolist()  # the reader settles first
        [0]
        """
        self._settle_written()
        twin = self._engine.twin
        if twin is None or self._tracker is None:
            return
        n = len(self)
        tick = self._tracker.tick
        stamps = self._array("_stamps")[:n]
        stamps[stamps == 0] = tick
        count = int(twin.removed_count)
        if count:
            handles = twin.removed_handles[:count].copy()
            twin.removed_count = 0
            self._tracker.removed(self._name, handles)

    def restamp(self, squeeze: Callable[[np.ndarray], np.ndarray]) -> None:
        """Replace every stamp ``t`` by ``squeeze(t)`` (the clock's rebase).
        Part of the tracking interface.

        Notes
        -----
        O(n) for the n members.
        """
        self._settle_written()
        stamps = self._array("_stamps")[: len(self)]
        stamps[...] = squeeze(stamps.astype(np.int64))

    def touch(self, ids: Any) -> None:
        """Declare the rows of entities written: a tracked component's
        readers see them in ``changed()``. Does nothing on an untracked
        component. Every entity must have the component (``KeyError``,
        nothing marked) and be alive (:class:`DeadHandleError`).

        Raises
        ------
        TypeError
            If a handle is not an integer.
        DeadHandleError
            If a handle is not alive (a ``ValueError`` and a ``KeyError``); nothing
            changes.
        KeyError
            If an entity does not have the component; nothing changes.

        Notes
        -----
        O(k) for k handles (O(1) on an untracked component).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("pos", "f8", track=True); e = w.create(2)
        >>> w.add("pos", e, pos=0.0); r = w.reader("pos")
        2
        >>> w["pos"]["pos"][1] = 5.0   # a plain write: not seen
        >>> w["pos"].touch(e[1]); r.changed().tolist()
        [1]
        """
        if self._tracker is None:
            return
        positions, _ = self._positions(ids)
        self._stamp(positions, 0, 0)

    def touch_rows(self, rows: Any) -> None:
        """Declare rows written, by position (an array or a slice): what a
        group's or a view's ``touch`` and a write scope mark. Part of the
        World interface; nothing on an untracked component.

        Notes
        -----
        O(k) for k rows (a slice is stamped as one block).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4", track=True); e = w.create(3)
        >>> w.add("hp", e); r = w.reader("hp"); w["hp"].touch_rows(slice(1, 3))
        3
        >>> sorted(r.changed().tolist())
        [1, 2]
        """
        self._stamp(rows, 0, 0)

    # -- changes ----------------------------------------------------------

    def add(self, ids: Any, /, **columns: Any) -> int:
        """Add entities with their rows, or replace the rows of members.

        As :meth:`ComponentStore.add`, for live handles only.

        Raises
        ------
        TypeError
            If a handle is not an integer.
        DeadHandleError
            If a handle is not alive (a ``ValueError`` and a ``KeyError``); nothing
            changes.
        UnknownColumnError
            If a keyword names a column the component does not have.
        ValueError
            If a value cannot be cast to its column or broadcast to its rows; nothing
            changes.

        Notes
        -----
        O(k) for k handles, times the row width, amortised; a group that owns the store
        packs the new members, and the component's hooks run once.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(2)
        >>> w["hp"].add(e, hp=3), w["hp"]["hp"].tolist()
        (2, [3, 3])
        """
        return self._adding("add", self._add_keys, ids, columns)

    def _adding(
        self,
        command: str,
        apply: Callable[[np.ndarray, dict[str, Any]], int],
        ids: Any,
        columns: dict[str, Any],
    ) -> int:
        """An adding call (``add``, ``add_at``) on live handles: deferred
        inside a hook, else ``apply(keys, columns)`` with the ``on_add``
        hooks told of the new members."""
        reactor = self._reactor
        if reactor.deferring:
            getattr(reactor.defer(), command)(self._name, ids, **columns)
            return 0
        keys, _ = self._entities.resolve(ids, "nothing was added")
        if not reactor.watching("add", self._name):
            return apply(keys, columns)
        new = self._new_keys(keys)
        with reactor.dispatch() as fire:
            added = apply(keys, columns)
            fire("add", self._name, self._entities.handles(new))
        return added

    def add_at(self, ids: Any, /, **columns: Any) -> int:
        """Add each occurrence's values to its entity's row (a counter), as
        :meth:`ComponentStore.add_at`, for live handles only.

        Raises
        ------
        TypeError
            If a handle is not an integer.
        DeadHandleError
            If a handle is not alive (a ``ValueError`` and a ``KeyError``); nothing
            changes.
        UnknownColumnError
            If a keyword names a column the component does not have.
        ValueError
            If a value cannot be cast to its column, or an integer sum would not fit it;
            nothing changes.

        Notes
        -----
        O(k) for k occurrences, times the row width, amortised as ``add``.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hits", "i4"); e = w.create(2)
        >>> w["hits"].add_at(e[[0, 1, 0]], hits=1), w.get("hits", e)["hits"].tolist()
        (2, [2, 1])
        """
        return self._adding("add_at", self._add_at_keys, ids, columns)

    def _add_at_keys(self, keys: np.ndarray, columns: dict[str, Any]) -> int:
        added = super().add_at(keys, **columns)
        self.note_moved()
        self._group._admit(keys)
        return added

    def _add_keys(self, keys: np.ndarray, columns: dict[str, Any]) -> int:
        added = super().add(keys, **columns)
        self.note_moved()
        self._group._admit(keys)
        return added

    def _new_keys(self, keys: np.ndarray) -> np.ndarray:
        """The distinct keys among ``keys`` that are not members, in order."""
        fresh: np.ndarray = keys[~self.contain_keys(keys)]
        _, first = np.unique(fresh, return_index=True)
        return fresh[np.sort(first)]

    def present_keys(self, keys: np.ndarray) -> np.ndarray:
        """The distinct members among ``keys`` (valid entity indexes), in
        order: whom a removal of ``keys`` takes the component from.

        Part of the World interface: ``World.destroy`` hands them to the
        ``on_remove`` hooks.

        Notes
        -----
        O(k log k) for k keys (the distinct ones are found by sorting).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(3); w.add("hp", e[1:])
        2
        >>> w["hp"].present_keys(np.array([2, 0, 2, 1])).tolist()
        [2, 1]
        """
        present: np.ndarray = keys[self.contain_keys(keys)]
        _, first = np.unique(present, return_index=True)
        return present[np.sort(first)]

    def watched_removal(self, keys: np.ndarray, handles: Any = None) -> int:
        """Remove entity indexes (alive, validated), the ``on_remove`` hooks
        first, while the rows are still there. ``handles``, if given, are
        the handles ``keys`` were resolved from (see :meth:`discard_keys`).

        Notes
        -----
        O(k) for k keys, plus O(k log k) and the hooks' own cost when an
        ``on_remove`` hook watches the component.
        """
        reactor = self._reactor
        if not reactor.watching("remove", self._name):
            return self.discard_keys(keys, handles)
        with reactor.dispatch() as fire:
            fire("remove", self._name, self._entities.handles(self.present_keys(keys)))
            return self.discard_keys(keys, handles)

    def discard(self, ids: Any) -> int:
        """Remove the component from the entities that have it; returns how many.

        Raises
        ------
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.

        Notes
        -----
        O(k) for k handles, times the row width.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); e = w.create(2); w["tag"].add(e[0])
        1
        >>> w["tag"].discard(e)
        1
        """
        reactor = self._reactor
        if reactor.deferring:
            reactor.defer().discard(self._name, ids)
            return 0
        keys, _ = self._entities.resolve(ids, "nothing was removed")
        return self.watched_removal(keys, ids)

    def remove(self, ids: Any) -> int:
        """Remove the component from entities that must all have it.

        Raises ``KeyError`` naming the first entity without it, removing
        nothing.

        Raises
        ------
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.
        KeyError
            If an entity does not have the component; nothing changes.

        Notes
        -----
        O(k) for k handles, times the row width.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); e = w.create(2); w["tag"].add(e)
        2
        >>> w["tag"].remove(e[1]), len(w["tag"])
        (1, 1)
        """
        reactor = self._reactor
        if reactor.deferring:
            reactor.defer().remove(self._name, ids)
            return 0
        keys, scalar = self._entities.resolve(ids, "nothing was removed")
        k = self._first_absent(keys)
        if k >= 0:
            lacking = self._key_map.lacking(ids, k, scalar)
            raise KeyError(lacking + "; nothing was removed")
        return self.watched_removal(keys, ids)

    def discard_keys(self, keys: np.ndarray, handles: Any = None) -> int:
        """Remove entity indexes (alive, validated), keeping the group packed.

        Part of the World interface: ``World.destroy`` calls it on every
        store before the indexes die. ``handles``, if given, are the live
        handles (an integer or a 1-D array) ``keys`` were resolved from: a
        tracked store that removes a row for every one of them records them
        as they are, instead of reading each removed entity's generation.

        Notes
        -----
        O(k) for k keys, plus the group's share when the store is owned.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(3); w.add("hp", e)
        3
        >>> w["hp"].discard_keys(np.array([0, 2])), len(w["hp"])
        (2, 1)
        """
        self._group._expel(keys)
        self.note_moved()
        removed = self._discard_rows(keys)
        if self._tracker is not None and removed:
            self._tracker.removed(self._name, self._removed_handles(removed, handles))
        return removed

    def _removed_handles(self, removed: int, handles: Any) -> np.ndarray:
        """The handles of the ``removed`` entities the last removal took,
        from the ``handles`` it was given where they are exactly those."""
        if handles is not None:
            given, _ = as_ids(handles)
            if given.shape[0] == removed:
                # A row went for every handle, so no handle repeats and
                # each was a member: the batch is the removed entities.
                return given.astype(np.int64, copy=False)
        # Swap-and-pop left the removed keys just past the members.
        n = len(self)
        return self._entities.handles(self._state().dense[n : n + removed])

    def clear(self) -> None:
        """Remove the component from every entity.

        Notes
        -----
        O(n) for the n members when hooks watch the component or it is tracked
        (the removed handles are passed on or recorded); else O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); w["tag"].add(w.create(3)); w["tag"].clear()
        3
        >>> len(w["tag"])
        0
        """
        reactor = self._reactor
        if reactor.deferring:
            reactor.defer().clear(self._name)
            return
        if not reactor.watching("remove", self._name):
            self._clear()
            return
        with reactor.dispatch() as fire:
            fire("remove", self._name, self._entities.handles(self.members().copy()))
            self._clear()

    def _clear(self) -> None:
        if self._tracker is not None:
            self._tracker.removed(self._name, self._entities.handles(self.members()))
        self._group._reset()
        self.note_moved()
        super().clear()

    def _refuse_if_owned(self, what: str) -> None:
        if self._group is not NO_GROUP:
            raise ValueError(
                f"{what} would unpack {self._group!r}, which owns {self._name!r}; "
                f"an owned store keeps the order its group needs"
            )

    def sort(self, key: Any = None) -> None:
        """Reorder the entities (by handle, by default) and their rows.

        As :meth:`ComponentStore.sort`; a store owned by a group cannot be
        sorted (``ValueError``), since the group fixes its order.

        Raises
        ------
        ValueError
            If a group owns the store (sorting would unpack it).

        Notes
        -----
        O(n log n) for n members, plus O(n) per column to move the rows.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(3)
        >>> w.add("hp", e[::-1], hp=[3, 2, 1]); w["hp"].sort(); w["hp"]["hp"].tolist()
        3
        [1, 2, 3]
        """
        self._refuse_if_owned("sorting")
        super().sort(self.ids if key is None else key)
        self.note_moved()

    def sort_as(self, other: Any) -> None:
        """Put the entities shared with ``other`` first, in ``other``'s order.

        ``other`` is a store of the same world, a view, a group or an array
        of handles (dead ones are skipped).

        Raises
        ------
        ValueError
            If a group owns the store (sorting would unpack it).
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.

        Notes
        -----
        O(n + m) for n members and m handles of ``other``, plus O(n) per column.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); w.register("b"); e = w.create(3)
        >>> w.add("a", e); w.add("b", e[::-1])
        3
        3
        >>> w["b"].sort_as(w["a"]); w["b"].ids.tolist() == e.tolist()
        True
        """
        self._refuse_if_owned("sort_as")
        super().sort_as(other)
        self.note_moved()

    def _order_of(self, other: Any) -> np.ndarray:
        if isinstance(other, EntityStore):
            if other._entities is not self._entities:
                raise ValueError(
                    f"{other.name!r} belongs to another world; pass its handles"
                )
            return other.members()
        if isinstance(other, ComponentStore):
            raise TypeError(
                "sort_as takes a store of the same world or an array of handles, "
                "not a ComponentStore keyed by plain ids"
            )
        handles = other.ids if isinstance(other, Joined) else other
        return self._resolved(handles)[0]

    @property
    def jit(self) -> Any:
        """The jit twin of this store, for @njit systems; it takes handles.

        O(1) after the first use, as :attr:`ComponentStore.jit`.

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
        >>> from sparseset import World
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

    def adopt(self, keys: np.ndarray, columns: dict[str, np.ndarray]) -> None:
        """Take the rows of a loaded world: entity indexes already checked
        alive by the loader, so they skip resolving as handles.

        Part of the World interface: ``World.load`` calls it.

        Notes
        -----
        O(k) for k keys, as :meth:`add`.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(2)
        >>> w["hp"].adopt(np.array([1]), {"hp": np.array([7], np.int32)})
        >>> w.get("hp", e[1])["hp"].item()
        7
        """
        super().add(keys, **columns)
        self.note_moved()

    def follow_entities(self) -> None:
        """Hand a jit twin the world's entity arrays after they grew.

        The world calls it when its entity table replaced its arrays.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(capacity=1); w.register("hp", "i4"); twin = w["hp"].jit
        >>> e = w.create(100)  # the entity arrays grow; the twin follows them
        >>> w["hp"].follow_entities(); twin.generations.shape[0] >= 100
        True
        """
        twin = self._engine.twin
        if twin is not None:
            (twin.generations,) = self._handles.twin_entities()

    # -- the World interface: what views and groups ask -------------------

    def members(self) -> np.ndarray:
        """The entity indexes of the members, in row order (a view).

        Notes
        -----
        O(1): a view, no copy.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp"); e = w.create(3); w.add("hp", e[::-1])
        3
        >>> w["hp"].members().tolist()
        [2, 1, 0]
        """
        return self._members()

    def state_key(self) -> tuple[Any, ...]:
        """Changes whenever this store's members or their order change.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp"); e = w.create(2); key = w["hp"].state_key()
        >>> w.add("hp", e[0]); w["hp"].state_key() == key
        1
        False
        """
        a = self._state()
        return (id(self), self._version, a.n, a.epoch, id(a))

    def contain_keys(self, keys: np.ndarray) -> np.ndarray:
        """Whether each entity index (int64, valid) is a member.

        Notes
        -----
        O(k) for k keys.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp"); e = w.create(3); w.add("hp", e[1])
        1
        >>> w["hp"].contain_keys(np.arange(3)).tolist()
        [False, True, False]
        """
        return self._engine.contains_ids(keys)

    def index_keys(self, keys: np.ndarray) -> np.ndarray:
        """Each entity index's row (int64), -1 where absent.

        Notes
        -----
        O(k) for k keys.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp"); e = w.create(3); w.add("hp", e[2])
        1
        >>> w["hp"].index_keys(np.arange(3)).tolist()
        [-1, -1, 0]
        """
        return self._engine.index_ids(keys)

    def join_keys(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the members among ``keys`` (valid entity indexes) are: their
        positions in ``keys``, in order, and their rows here (both
        :data:`~sparseset.kernels.options.ROW`).

        One pass of the join kernel, which does not re-read the batch to
        filter it; a batch big enough to share out over threads is joined
        in spans on several (:mod:`sparseset.sets.pool`).

        Notes
        -----
        O(k) for k keys.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp"); e = w.create(3); w.add("hp", e[[2, 0]])
        2
        >>> [a.tolist() for a in w["hp"].join_keys(np.arange(3))]
        [[0, 2], [1, 0]]
        """
        count = keys.shape[0]
        at = np.empty(count, ROW)
        rows = np.empty(count, ROW)
        a = self._state()
        sparse, dense, n, ids = a.sparse, a.dense, a.n, kernel_ids(keys)
        tuning = kernels.JOIN_TUNING
        if not shared(count):
            m = kernels.batch.join_rows(ids, sparse, dense, n, at, rows, *tuning)
            return at[:m], rows[:m]
        matched: list[tuple[int, int]] = []

        def join_span(start: int, stop: int) -> bool:
            m = kernels.batch.join_rows(
                ids[start:stop],
                sparse,
                dense,
                n,
                at[start:stop],
                rows[start:stop],
                *tuning,
            )
            at[start : start + m] += start  # positions in the span -> in keys
            matched.append((start, m))
            return False

        share_out(count, join_span)
        # Close the gaps the spans' misses left, in place and in order: no
        # copy at all where every key matched, as in a view of stores that
        # hold the same entities.
        end = 0
        for start, m in sorted(matched):
            if start != end:
                at[end : end + m] = at[start : start + m]
                rows[end : end + m] = rows[start : start + m]
            end += m
        return at[:end], rows[:end]

    def own(self, group: Owner) -> None:
        """Be kept packed by ``group`` from now on.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); w.register("b"); g = w.group("a", "b")
        >>> w["a"].group is g  # the group called own() on its stores
        True
        """
        self._group = group

    def pack(self, pack: PackKernel, length: int, keys: np.ndarray) -> int:
        """Run a group's row-moving kernel over this store; the new length.

        ``pack`` is :func:`~sparseset.kernels.pack_front` or
        :func:`~sparseset.kernels.pack_back`: it moves ``keys`` across row
        ``length`` with their rows in every column.

        Notes
        -----
        O(k) for k keys, plus the rows they move (each column's row moves once).

        Examples
        --------
        >>> from sparseset import World, kernels
        >>> w = World(); w.register("hp"); e = w.create(3); w.add("hp", e)
        3
        >>> w["hp"].pack(kernels.pack_front, 0, np.array([2]))
        1
        >>> w["hp"].members().tolist()
        [2, 1, 0]
        """
        a = self._state()
        self.note_moved()
        return int(pack(a.sparse, a.dense, a.n, length, keys, self._rows()))

    def note_moved(self) -> None:
        """Note that the members or their order changed: the one place the
        version behind :meth:`state_key` moves (this store's own changes,
        and its owning group's when the group's length moved).

        Notes
        -----
        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp"); key = w["hp"].state_key()
        >>> w["hp"].note_moved(); w["hp"].state_key() == key
        False
        """
        self._version += 1

    def cast(self, count: int, name: str, value: Any) -> np.ndarray:
        """``value`` as ``count`` rows of column ``name``, as ``add`` casts it.

        Notes
        -----
        O(count) for the rows made.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4")
        >>> w["hp"].cast(2, "hp", 5).tolist()
        [5, 5]
        """
        return self._prepare(count, {name: value})[name]

    # -- queries ----------------------------------------------------------

    def _resolved(self, ids: Any) -> tuple[np.ndarray, bool]:
        # Dead handles become an id outside the flat range: absent everywhere.
        keys, scalar, _, _ = self._entities.lookup(ids, INDEX_LIMIT)
        return keys, scalar

    def contains(self, ids: Any) -> Any:
        """Whether each entity has this component (False for a dead handle).

        Raises
        ------
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.

        Notes
        -----
        O(k) for k handles; dead handles answer False.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[0])
        1
        >>> w["tag"].contains(e).tolist()
        [True, False]
        """
        found = self._holds_lock_free(ids)
        return self._contains(ids) if found is None else found

    @exclusive
    def _contains(self, ids: Any) -> Any:
        keys, scalar = self._resolved(ids)
        found = self._engine.contains_ids(keys, scalar)
        return bool(found[0]) if scalar else found

    def index(self, ids: Any) -> Any:
        """Each entity's row in this store, -1 where absent or dead.

        Raises
        ------
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.

        Notes
        -----
        O(k) for k handles; dead handles answer -1.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[1])
        1
        >>> w["tag"].index(e).tolist()
        [-1, 0]
        """
        a = self._state()
        rows, scalar = self._entities.index_in(ids, a.sparse, a.dense, a.n)
        return int(rows[0]) if scalar else rows

    @property
    def ids(self) -> np.ndarray:
        """The handles of the entities, aligned with the rows (a read-only copy).

        O(n) for the n members: it builds the handles, a copy.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[::-1])
        2
        >>> w["tag"].ids.tolist() == e[::-1].tolist()
        True
        """
        ids = self._entities.handles(self.members())
        ids.flags.writeable = False
        return ids

    def __contains__(self, x: object) -> bool:
        # As set's `in`: any hashable x gets an answer; only a live handle
        # can have the component.
        found = self._holds_lock_free(x)
        return self._holds(x) if found is None else found

    def _holds_lock_free(self, x: object) -> bool | None:
        """Whether one live handle has the component, read with no lock;
        None where it must be read under the lock (see
        :func:`sparseset.sets.locking.holds_lock_free`)."""
        return holds_lock_free(self._guard, self._engine, x, self._entities.index_of)

    @exclusive
    def _holds(self, x: object) -> bool:
        handle = one_id(x, "handle")
        if handle is None or handle >= 2**63:
            return False
        key = self._entities.index_of(handle)
        return key >= 0 and self._engine.holds(key)

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids.tolist())

    def __repr__(self) -> str:
        body = super().__repr__().split("(", 1)[1]
        return f"{type(self).__name__}({self._name!r}, {body}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_component_of, (self._world, self._name))


def _component_of(world: Components, name: str) -> EntityStore:
    """Find a store again after unpickling its world."""
    return world[name]


__all__ = ["Components", "EntityStore", "Joined", "Owner"]

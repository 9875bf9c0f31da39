"""WorldGrid: a Grid of the entities holding a component, kept in step.

A world's grid follows its component: before any answer it catches up
with what changed since the last one. Through a reader when the component
is tracked (the entities that lost it leave, those that gained it or were
written are placed again: O(changes)); by re-sorting every position
otherwise (O(n): a copy and a counting sort, which keeps the grid as it
was when nothing moved). A ``place`` of a few movers re-buckets them in
the grid's cell table, so a step in which 1% of the entities moved costs
a small part of a rebuild; when more than ``STRAY_SHARE`` of them changed,
the grid is re-sorted from the component's rows
(:meth:`~sparseset.Grid.assign`), with no handle looked up: at once if a
query came since the last catch-up, else by the next query (the catch-up
copies the rows).

The grid inside holds entity keys (a handle's low 32 bits, its entity
index), as the component's stores do, under a flat index: the catch-up
hands it the store's keys as they are (no handle is built), and its
bookkeeping is that of a plain grid of dense ids. Handles cross the
boundary only in the public methods: those given are resolved through
the entity table (a dead or stale handle is no member), and the grid's
queries write the members' current handles as they find them, through
the world's generation table (``generations=``: their entities are
alive, so each index's generation now is the right one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels.entities import INDEX_MASK, LIVE
from ..sets.ids import as_ids, describe, one_id, reject_negative
from ..sets.locking import Guarded, atomic, share_guard
from ..spaces import Grid
from ..spaces.grid import STRAY_SHARE
from .entities import INDEX_LIMIT, Entities


def _position_column(store: Any, name: str, column: str | None) -> tuple[str, int]:
    """The column holding positions, and its number of axes."""
    schema = store.schema
    if column is None:
        if len(schema) != 1:
            raise ValueError(
                f"component {name!r} has columns {tuple(schema)}: say which one "
                f"holds the positions (column=...)"
            )
        column = next(iter(schema))
    if column not in schema:
        raise ValueError(f"component {name!r} has no column {column!r}")
    dtype, shape = schema[column]
    if len(shape) != 1 or shape[0] not in (1, 2, 3) or dtype.kind not in "iuf":
        raise ValueError(
            f"column {column!r} of {name!r} must hold 1 to 3 numbers a row "
            f"(a position), not {dtype} of shape {shape}"
        )
    return column, int(shape[0])


@atomic()
class WorldGrid(Guarded):
    """A :class:`~sparseset.Grid` of the entities (handles) holding a
    component, kept in step with the world; made by :meth:`~sparseset.World.grid`.

    Queries answer handles, and take them (a dead handle, or one of an
    index's older generation, is not a member). Before each, the grid
    catches up: entities that gained the component are placed, those that
    lost it or died leave, and those whose positions changed are
    re-bucketed (through a reader when the component is tracked, so
    in-place writes must be declared as for any reader; by checking every
    position otherwise).

    The :class:`~sparseset.Grid` inside (:attr:`grid`) and its twin
    (``grid.jit``) are keyed by entity key, a handle's low 32 bits, not by
    handle: ``dense`` and the ids of ``sparseset.jit.grid``'s functions are
    keys there. :meth:`handles` turns keys of members into their handles.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("pos", "f8", shape=(2,))
    >>> e = w.create(3); w.add("pos", e, pos=[[0, 0], [0.5, 0], [5, 5]])
    3
    >>> g = w.grid("pos", cell=1.0)
    >>> a, b = g.pairs(1.0); (a.tolist(), b.tolist()) == ([e[0]], [e[1]])
    True
    >>> w["pos"]["pos"][2] = [0.2, 0.2]  # untracked: every position is checked
    >>> len(g.pairs(1.0)[0])
    3
    """

    __slots__ = (
        "_bulk",
        "_column",
        "_entities",
        "_grid",
        "_name",
        "_reader",
        "_store",
    )

    def __init__(
        self,
        world: Any,
        entities: Entities,
        name: str,
        cell: float = 1.0,
        torus: Any = None,
        column: str | None = None,
    ) -> None:
        store = world[name]
        self._column, dims = _position_column(store, name, column)
        # Entity keys, as the stores hold them: dense indexes below
        # INDEX_LIMIT, which a flat index covers (a plain grid's memory).
        self._grid = Grid(cell=cell, dims=dims, torus=torus, index="flat")
        self._entities = entities
        self._name = name
        self._store = store
        #: Whether the last catch-up re-sorted the component (the grid's
        #: id index is made again when next looked up).
        self._bulk = False
        self._reader = (
            world.reader(name, include_present=True) if store.tracked else None
        )
        share_guard(self, world)
        if self._reader is None:
            self.sync()

    def sync(self) -> None:
        """Catch up with the component now (every query does it first).

        Notes
        -----
        Tracked: O(c) for c entities changed since the last sync (plus the
        reader's scan of the stamps), or O(n) for n entities when more than
        ``STRAY_SHARE`` of them changed (and at the sync after such a one);
        untracked: O(n).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("pos", "f8", shape=(2,), track=True)
        >>> g = w.grid("pos"); e = w.create(1); w.add("pos", e, pos=[[1, 2]])
        1
        >>> g.sync(); len(g)
        1
        """
        grid = self._grid
        store = self._store
        reader = self._reader
        if reader is None:
            # Nothing says who moved: re-sort every position (a copy and
            # a counting sort), which leaves the grid as it was if none did.
            grid.assign(store.members(), store[self._column], unique=True)
            return
        share = STRAY_SHARE * len(store)
        # A write scope over most members (a group's whole-column write)
        # decides the bulk path before the stamps are scanned.
        declared = len(grid) > 0 and store.written_at_least(reader.since) > share
        store.settle()  # what a twin wrote is stamped, as a reader's answers are
        # Adds are declared writes too.
        rows = None if declared else store.rows_after(reader.since, True)
        if rows is None or (len(grid) and (self._bulk or rows.shape[0] > share)):
            # Most moved: one counting sort of the component, no id looked
            # up (the id index follows when an id is next looked up; a first
            # fill places everyone, so that the few moves of the next steps
            # find an index ready). Right after such a sort, a few changes
            # go the same way: placing them would look ids up, which makes
            # the whole index again.
            grid.assign(store.members(), store[self._column], unique=True)
            self._bulk = rows is None or rows.shape[0] > share
        else:
            # Handles that lost the component: their keys leave (a key
            # reused since by a new entity that has it is among ``rows``,
            # placed again below).
            gone = reader.removed()
            if gone.shape[0]:
                grid.discard(gone & INDEX_MASK)
            if rows.shape[0]:
                grid.place(store.members()[rows], store[self._column][rows])
        reader.commit()

    @property
    def grid(self) -> Grid:
        """The grid itself, in step (read it; changing it is the world's job).

        It is keyed by entity key (a handle's low 32 bits), not by handle:
        its ids, and its twin's (``grid.jit``: ``dense``, and the ids the
        functions of ``sparseset.jit.grid`` take and find), are keys;
        :meth:`handles` turns them into handles.

        O(1) after the catch-up.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("pos", "f8", shape=(2,))
        >>> e = w.create(2); w.destroy(e[0]); e = w.create(2)  # index 0 reused
        1
        >>> w.add("pos", e, pos=[[0, 0], [1, 1]])
        2
        >>> g = w.grid("pos"); sorted(g.grid.ids.tolist()), e.tolist()
        ([0, 2], [4294967296, 2])
        """
        self.sync()
        return self._grid

    def handles(self, keys: Any) -> np.ndarray:
        """The handles of entity keys (as :attr:`grid` and its twin hold
        them) of live entities.

        Raises
        ------
        TypeError
            If a key is not an integer.
        ValueError
            If a key is negative or is not a live entity's, naming it.

        Notes
        -----
        O(k) for k keys. No catch-up: keys a twin found are turned into
        handles as they are.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("pos", "f8", shape=(2,))
        >>> e = w.create(1); w.destroy(e); e = w.create(1)
        1
        >>> w.add("pos", e, pos=[[0, 0]]); g = w.grid("pos")
        1
        >>> g.handles(g.grid.ids).tolist() == e.tolist()
        True
        """
        arr, scalar = as_ids(keys)
        reject_negative(arr, scalar)
        entities = self._entities
        keys64 = arr.astype(np.int64)
        inside = arr < entities.count
        live = np.zeros(arr.shape[0], np.bool_)
        live[inside] = (entities.generations[keys64[inside]] & np.uint32(LIVE)) != 0
        if not live.all():
            k = int(np.argmin(live))
            raise ValueError(
                f"{describe(arr, k, scalar, keys)} is not the key of a live entity"
            )
        return entities.handles(keys64, out=keys64)

    @property
    def component(self) -> str:
        """The component followed. O(1)."""
        return self._name

    def __len__(self) -> int:
        self.sync()
        return len(self._grid)

    @property
    def ids(self) -> np.ndarray:
        """The handles in the grid. O(n), after the catch-up."""
        self.sync()
        return self._entities.handles(self._grid.ids)

    def _keys(self, handles: Any) -> tuple[np.ndarray, bool, np.ndarray]:
        """The entity keys of ``handles`` (INDEX_LIMIT, which no grid of
        keys holds, for a dead or stale one), whether it was one handle,
        and the handles as an array. Bad input raises as every batch call."""
        keys, scalar, _, arr = self._entities.lookup(handles, INDEX_LIMIT)
        return keys, scalar, arr

    def contains(self, handles: Any) -> Any:
        """Whether each handle is in the grid. O(k) for k handles, after the
        catch-up.

        Raises
        ------
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative.
        """
        self.sync()
        keys, scalar, _ = self._keys(handles)
        found = self._grid.contains(keys)
        return bool(found[0]) if scalar else found

    def __contains__(self, x: object) -> bool:
        self.sync()
        handle = one_id(x, "handle")
        if handle is None or handle >= 2**63:
            return False
        key = self._entities.index_of(handle)
        return key >= 0 and key in self._grid

    @property
    def nbytes(self) -> int:
        """Bytes held by the grid (:attr:`grid`'s :attr:`~sparseset.Grid.nbytes`:
        a grid of entity keys under a flat index). O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("pos", "f8", shape=(2,))
        >>> g = w.grid("pos"); g.nbytes == g.grid.nbytes
        True
        """
        return self._grid.nbytes

    def positions(self, handles: Any) -> np.ndarray:
        """The positions the grid holds for ``handles``, after the catch-up.

        Raises
        ------
        KeyError
            Naming the first handle not in the grid.

        Notes
        -----
        O(k) for k handles.
        """
        self.sync()
        keys, scalar, arr = self._keys(handles)
        try:
            return self._grid.positions(keys)
        except KeyError:
            k = int(np.argmin(self._grid.contains(keys)))
            raise KeyError(
                f"{describe(arr, k, scalar, handles)} is not a member"
            ) from None

    def within(
        self, points: Any, r: float, metric: str = "euclidean"
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`~sparseset.Grid.within`, in handles, after the catch-up.

        Raises
        ------
        ValueError
            As :meth:`~sparseset.Grid.within`.

        Notes
        -----
        As :meth:`~sparseset.Grid.within`, plus the catch-up.
        """
        self.sync()
        return self._grid.within(
            points, r, metric, generations=self._entities.generations
        )

    def pairs(
        self, r: float, metric: str = "euclidean"
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`~sparseset.Grid.pairs`, in handles, after the catch-up.

        Raises
        ------
        ValueError
            As :meth:`~sparseset.Grid.pairs`.

        Notes
        -----
        As :meth:`~sparseset.Grid.pairs`, plus the catch-up.
        """
        self.sync()
        return self._grid.pairs(r, metric, generations=self._entities.generations)

    def at(self, cells: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`~sparseset.Grid.at`, in handles, after the catch-up.

        Raises
        ------
        ValueError, TypeError
            As :meth:`~sparseset.Grid.at`.

        Notes
        -----
        As :meth:`~sparseset.Grid.at`, plus the catch-up.
        """
        self.sync()
        return self._grid.at(cells, generations=self._entities.generations)

    def __repr__(self) -> str:
        return f"WorldGrid({self._name!r}, {self._grid!r})"


__all__ = ["WorldGrid"]

"""Owning groups: stores kept packed so that a join is a contiguous slice.

A group owns some stores. The entities that have every owned component sit
in rows ``[0, len(group))`` of each owned store, in the same order, so a
system over the group reads equal-length column slices with no gather at
all (EnTT's owning groups). The stores keep this up as they change:
an entity that gains its last missing component is swapped into row
``len``, and one about to lose a component is swapped out to row
``len - 1`` first, in every owned store, inside one kernel pass per store.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np

from .. import kernels
from ..sets.locking import Guarded, atomic
from ..stores.component_store import UnknownColumnError, is_same_view
from .entities import Entities
from .entity_store import EntityStore, PackKernel


class Groups(Protocol):
    """The world as a group sees it: where to find a group again by name."""

    def group(self, *names: str) -> Group: ...


@atomic(unlocked=("__len__",))
class Group(Guarded):
    """Entities with every owned component, packed at the front of each store.

    Build one with :meth:`sparseset.World.group`. ``g[column]`` is a
    writable, C-contiguous view of that column's rows for the group's
    entities; the views of all owned stores are aligned row for row.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World()
    >>> w.register("pos", "f8"); w.register("vel", "f8")
    >>> e = w.create(4)
    >>> w.add("pos", e, pos=0.0); w.add("vel", e[::2], vel=[1.0, 3.0])
    4
    2
    >>> g = w.group("pos", "vel")
    >>> g["pos"] += g["vel"] * 0.5
    >>> len(g), w.get("pos", e)["pos"].tolist()
    (2, [0.5, 0.0, 1.5, 0.0])
    """

    __slots__ = ("_entities", "_length", "_names", "_stores", "_world")

    def __init__(
        self,
        world: Groups,
        entities: Entities,
        stores: tuple[EntityStore, ...],
        length: int | None = None,
    ) -> None:
        """Own ``stores`` and pack them.

        With ``length``, the stores are already packed for this group (a
        loaded world, checked by its loader): the group adopts their order
        and moves nothing.
        """
        self._world = world
        self._entities = entities
        self._names = tuple(store.name for store in stores)
        self._stores = stores
        self._length = 0 if length is None else length
        for store in self._stores:
            store.own(self)
        if length is None:
            smallest = min(self._stores, key=len)
            self._admit(smallest.members().copy())

    @property
    def components(self) -> tuple[str, ...]:
        """The owned components, in the order the group was made with.

        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); w.register("b")
        >>> w.group("b", "a").components
        ('b', 'a')
        """
        return self._names

    def __len__(self) -> int:
        return self._length

    @property
    def ids(self) -> np.ndarray:
        """The group's handles, in row order (a read-only copy).

        O(m) for the m members of the group: it builds the handles, a copy.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); e = w.create(2); w.add("a", e[1])
        1
        >>> w.group("a").ids.tolist() == [e[1]]
        True
        """
        ids = self._entities.handles(self._stores[0].members()[: self._length])
        ids.flags.writeable = False
        return ids

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids.tolist())

    def _column_of(self, column: str) -> tuple[EntityStore, str]:
        """The owned store holding ``column``, and the column's name there."""
        store = self._store_of(column)
        return store, column if column in store.schema else store.columns[0]

    def _store_of(self, column: str) -> EntityStore:
        holders = [store for store in self._stores if column in store.schema]
        if len(holders) == 1:
            return holders[0]
        if len(holders) > 1:
            raise KeyError(
                f"column {column!r} is in several owned components "
                f"({', '.join(store.name for store in holders)}); take it from "
                f"one of them: w[component][{column!r}][:len(group)]"
            )
        if column in self._names:
            store = self._stores[self._names.index(column)]
            if len(store.columns) == 1:
                return store
        columns = [name for store in self._stores for name in store.columns]
        raise UnknownColumnError(
            f"{column!r} is not a column of this group's components "
            f"({', '.join(self._names)}); columns: {', '.join(columns) or '(none)'}"
        )

    def __getitem__(self, column: str) -> np.ndarray:
        """The rows of ``column`` for the group's entities: a contiguous view.

        ``column`` is a column of one owned store, or the name of an owned
        component that has exactly one column.
        """
        store, name = self._column_of(column)
        return store[name][: self._length]

    def __setitem__(self, column: str, value: Any) -> None:
        """Assign the group's rows of ``column`` (``g["pos"] += ...`` lands here)."""
        store, name = self._column_of(column)
        rows = store[name][: self._length]
        if not is_same_view(value, rows):
            rows[...] = store.cast(self._length, name, value)

    def touch(self, name: str) -> None:
        """Declare every row of the group written in component ``name``: its
        readers see the group's entities in ``changed()`` (nothing for an
        untracked component).

        Raises
        ------
        KeyError
            If ``name`` is not one of the group's components.

        Notes
        -----
        O(m) for the group's m entities (a tracked component stamps each row; O(1)
        otherwise).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("pos", "f8", track=True); w.register("vel", "f8")
        >>> e = w.create(3); w.add("pos", e, pos=0.0); w.add("vel", e[:2], vel=1.0)
        3
        2
        >>> g = w.group("pos", "vel"); r = w.reader("pos")
        >>> g["pos"] += g["vel"]; g.touch("pos"); sorted(r.changed().tolist())
        [0, 1]
        """
        if name not in self._names:
            raise KeyError(
                f"{name!r} is not one of this group's components "
                f"({', '.join(self._names)})"
            )
        self._stores[self._names.index(name)].touch_rows(slice(0, self._length))

    @contextmanager
    def write(self, *columns: str) -> Iterator[Any]:
        """A write scope: the group's rows of ``columns`` to write in place
        (one name gives its array, several a tuple), declared written at
        the end of the block (as :meth:`touch` does for each component
        they belong to), even if the block raises.

        The arrays are views of rows ``[0, len(g))``: an add, removal or
        destroy inside the block moves the group's rows under them, so
        then the block ends with ``RuntimeError`` and marks nothing (a
        write may have reached another entity's row).

        Raises
        ------
        TypeError
            If no column is named.
        UnknownColumnError
            If a name is not a column of the group's components.
        KeyError
            If a name is a column of several of the group's components.
        RuntimeError
            At the end of the block, if the group's rows moved inside it (nothing is
            marked written).

        Notes
        -----
        O(1) to enter; O(m) at the end for the group's m entities, to mark them written.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("pos", "f8", track=True); w.register("vel", "f8")
        >>> e = w.create(2); w.add("pos", e, pos=0.0); w.add("vel", e, vel=2.0)
        2
        2
        >>> g = w.group("pos", "vel"); moved = w.reader("pos")
        >>> with g.write("pos", "vel") as (pos, vel):
        ...     pos += vel * 0.5
        >>> sorted(moved.changed().tolist()), g["pos"].tolist()
        ([0, 1], [1.0, 1.0])
        """
        if not columns:
            raise TypeError("write() takes at least one column name")
        held = [self._column_of(column) for column in columns]
        stores = list({id(store): store for store, _ in held}.values())
        keys = [store.state_key() for store in stores]
        length = self._length
        arrays = tuple(store[name][:length] for store, name in held)
        try:
            yield arrays[0] if len(arrays) == 1 else arrays
        finally:
            if [store.state_key() for store in stores] != keys:
                names = ", ".join(map(repr, columns))
                raise RuntimeError(
                    f"the group's rows moved inside write({names}) (an add, "
                    "removal or destroy of an owned component): "
                    "the arrays no longer matched their entities, so nothing "
                    "was marked written; take new arrays after such changes"
                )
            for store in stores:
                store.touch_rows(slice(0, length))

    def __repr__(self) -> str:
        return f"Group({', '.join(map(repr, self._names))}, size={len(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_group_of, (self._world, self._names))

    # -- upkeep: the Owner interface its stores call ----------------------

    def _admit(self, keys: np.ndarray) -> None:
        """Pack the entities among ``keys`` that now have every component."""
        if keys.shape[0] == 0:
            return
        everywhere = np.ones(keys.shape[0], np.bool_)
        for store in self._stores:
            everywhere &= store.contain_keys(keys)
        # Only entities in every store may move, or the stores would disagree.
        candidates = keys if everywhere.all() else keys[everywhere]
        if candidates.shape[0]:
            self._repack(kernels.pack_front, candidates)

    def _expel(self, keys: np.ndarray) -> None:
        """Unpack the group's entities among ``keys`` before they lose a component."""
        if keys.shape[0] and self._length:
            self._repack(kernels.pack_back, keys)

    def _reset(self) -> None:
        """Hold no entity: one of the owned stores was cleared."""
        self._length = 0
        for store in self._stores:
            store.note_moved()

    def _repack(self, pack: PackKernel, keys: np.ndarray) -> None:
        """Run ``pack`` (``pack_front`` or ``pack_back``) on every owned store.

        Each store moves the same entities across the same boundary, so all
        of them return the same new length; when the first moves none (the
        keys were already on their side: every store but the first sees a
        destroyed entity after the first expelled it), neither do the others.
        """
        first, *others = self._stores
        length = first.pack(pack, self._length, keys)
        if length != self._length:
            for store in others:
                store.pack(pack, self._length, keys)
        self._length = length


def _group_of(world: Groups, names: tuple[str, ...]) -> Group:
    """Find a group again after unpickling its world."""
    return world.group(*names)


__all__ = ["Group"]

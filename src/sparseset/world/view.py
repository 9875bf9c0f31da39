"""Views: the entities that have every one of some components and none of others.

A view is a join over stores keyed by entity. It walks the smallest of the
included stores and probes the others, as EnTT and Shipyard do, so its cost
follows the rarest component. The result is the matching handles plus, per
included component, the dense row of each match in that store: an
``@njit`` system gathers and scatters rows through those arrays without a
Python loop. An optional component is probed for the matches only: its
rows hold :data:`NO_ROW` where a match lacks it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np

from .. import kernels
from ..kernels.options import NOWHERE, ROW
from ..sets.locking import Guarded, atomic
from .entities import Entities
from .entity_store import EntityStore

#: The row an optional component's ``View.rows`` holds for a match that
#: lacks it: the largest uint32, never a row (a set holds fewer members).
NO_ROW = NOWHERE


class Views(Protocol):
    """The world as a view sees it: where to find a view again by name."""

    def view(self, *names: str, exclude: Any = (), optional: Any = ()) -> View: ...


@atomic()
class View(Guarded):
    """Entities with all of ``include`` and none of ``exclude``, and their rows.

    Build one with :meth:`sparseset.World.view`. The join is computed when
    first asked for and again whenever one of its stores has changed since,
    so a view kept across frames always answers for the current world.
    Components in ``optional`` do not select: the matches' rows in them are
    :data:`NO_ROW` where a match lacks the component, and :meth:`has` is
    the mask of those that have it.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World()
    >>> w.register("pos", "f8"); w.register("vel", "f8"); w.register("frozen")
    >>> e = w.create(3)
    >>> w.add("pos", e, pos=[0.0, 10.0, 20.0]); w.add("vel", e[1:], vel=1.0)
    3
    2
    >>> w.add("frozen", e[2])
    1
    >>> v = w.view("pos", "vel", exclude=("frozen",))
    >>> v.ids.tolist() == [e[1]], w["pos"]["pos"][v.rows("pos")].tolist()
    (True, [10.0])
    >>> v = w.view("pos", optional=("vel",)); v.has("vel").tolist()
    [False, True, True]
    """

    __slots__ = (
        "_entities",
        "_exclude",
        "_excluded",
        "_ids",
        "_include",
        "_included",
        "_key",
        "_members",
        "_optional",
        "_optionals",
        "_order",
        "_rows",
        "_world",
    )

    def __init__(
        self,
        world: Views,
        entities: Entities,
        include: tuple[EntityStore, ...],
        exclude: tuple[EntityStore, ...],
        optional: tuple[EntityStore, ...] = (),
    ) -> None:
        self._world = world
        self._entities = entities
        self._included = include
        self._excluded = exclude
        self._optionals = optional
        self._include = tuple(store.name for store in include)
        self._exclude = tuple(store.name for store in exclude)
        self._optional = tuple(store.name for store in optional)
        self._key: tuple[Any, ...] | None = None
        self._members = np.empty(0, np.int64)
        self._order = np.empty(0, ROW)
        self._ids: np.ndarray | None = None
        self._rows: dict[str, np.ndarray] = {}

    @property
    def components(self) -> tuple[str, ...]:
        """The components every match has.

        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); w.register("b")
        >>> w.view("a", exclude=("b",)).components
        ('a',)
        """
        return self._include

    @property
    def exclude(self) -> tuple[str, ...]:
        """The components no match has.

        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); w.register("b")
        >>> w.view("a", exclude=("b",)).exclude
        ('b',)
        """
        return self._exclude

    @property
    def optional(self) -> tuple[str, ...]:
        """The components a match may have: rows where it does, :data:`NO_ROW`
        where it does not.

        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); w.register("b")
        >>> w.view("a", optional=("b",)).optional
        ('b',)
        """
        return self._optional

    def _join(self) -> None:
        """Recompute the matches if any store changed since the last time."""
        include, exclude = self._included, self._excluded
        optional = self._optionals
        key = tuple(store.state_key() for store in include + exclude + optional)
        if key == self._key:
            return
        smallest = min(include, key=len)
        members = smallest.members()
        rows: dict[str, np.ndarray] = {}
        # Probe store by store, keeping only the survivors: each probe is
        # over fewer candidates than the last. The survivors' keys are
        # gathered only for a further probe: a two-store view never needs
        # them unless its handles are asked for.
        for store in include:
            if store is smallest:
                continue
            keys = _take(members, rows[smallest.name]) if rows else members
            at, found = store.join_keys(keys)
            rows = {name: _take(row, at) for name, row in rows.items()}
            rows.setdefault(smallest.name, at)
            rows[store.name] = found
        if smallest.name not in rows:  # no other store probed: rows in order
            rows[smallest.name] = np.arange(members.shape[0], dtype=ROW)
        if exclude:
            keys = _take(members, rows[smallest.name])
            for store in exclude:
                inside = store.contain_keys(keys)
                if inside.any():
                    keep = ~inside
                    keys = keys[keep]
                    rows = {name: row[keep] for name, row in rows.items()}
        if optional:
            keys = _take(members, rows[smallest.name])
            for store in optional:
                # -1 (absent) becomes NO_ROW, the largest uint32, in the cast.
                rows[store.name] = store.index_keys(keys).astype(ROW)
        for row in rows.values():
            row.flags.writeable = False
        # Handles are made when asked for: a system that only needs rows
        # skips the gather of keys and a random one over the generations.
        self._members, self._order = members, rows[smallest.name]
        self._rows, self._ids, self._key = rows, None, key

    @property
    def ids(self) -> np.ndarray:
        """The matching handles, in the order of the smallest store (read-only).

        The first read after a change joins the stores, O(s * c) for the s
        members of the smallest store and c components, and builds the
        handles, a copy; later reads return the same array, O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("a"); e = w.create(2); w.add("a", e[1])
        1
        >>> w.view("a").ids.tolist() == [e[1]]
        True
        """
        self._join()
        if self._ids is None:
            self._ids = self._entities.handles(self._members, self._order)
            self._ids.flags.writeable = False
        return self._ids

    def rows(self, name: str) -> np.ndarray:
        """The dense row of each match in component ``name``'s store.

        Aligned with :attr:`ids`: ``w[name][column][v.rows(name)]`` are the
        matches' values, in the view's order. Rows are ``uint32``, the
        dtype of a position in a set (which holds fewer than ``2**32``
        members): half the bytes of ``intp`` for a system to read, and
        numba indexes with them without a negative-index check. For an
        optional component, a match that lacks it has :data:`NO_ROW`.

        Raises
        ------
        KeyError
            If ``name`` is not one of the view's included or optional components.

        Notes
        -----
        O(1) when the view has answered since the world last changed; else the join is
        rebuilt first (see :meth:`sparseset.World.view`).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(3)
        >>> w.add("hp", e[::-1], hp=[30, 20, 10])
        3
        >>> v = w.view("hp"); rows = v.rows("hp")
        >>> rows.tolist(), w["hp"]["hp"][rows].tolist()
        ([0, 1, 2], [30, 20, 10])
        """
        if name not in self._include and name not in self._optional:
            raise KeyError(
                f"{name!r} is not one of this view's components "
                f"({', '.join(self._include + self._optional)}); "
                "excluded components have no rows"
            )
        self._join()
        return self._rows[name]

    def has(self, name: str) -> np.ndarray:
        """Whether each match has component ``name``, aligned with :attr:`ids`.

        All True for a component the view includes, all False for one it
        excludes; for an optional one, where :meth:`rows` is not
        :data:`NO_ROW`.

        Raises
        ------
        KeyError
            If ``name`` is none of the view's components.

        Notes
        -----
        O(m) for the view's m matches.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("pos", "f8"); w.register("vel", "f8")
        >>> e = w.create(3); w.add("pos", e); w.add("vel", e[1], vel=2.0)
        3
        1
        >>> v = w.view("pos", optional=("vel",)); v.has("vel").tolist()
        [False, True, False]
        >>> w["vel"]["vel"][v.rows("vel")[v.has("vel")]].tolist()
        [2.0]
        """
        if name in self._optional:
            mask: np.ndarray = self.rows(name) != NO_ROW
            return mask
        if name in self._include or name in self._exclude:
            return np.full(len(self), name in self._include)
        raise KeyError(
            f"{name!r} is not one of this view's components "
            f"({', '.join(self._include + self._optional + self._exclude)})"
        )

    def touch(self, name: str) -> None:
        """Declare the matches' rows written in component ``name``: its
        readers see the view's entities in ``changed()`` (nothing for an
        untracked component).

        Raises
        ------
        KeyError
            If ``name`` is not one of the view's included or optional components.

        Notes
        -----
        O(m) for the view's m matches (O(1) past the join on an untracked component).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4", track=True); w.register("burning")
        >>> e = w.create(3); w.add("hp", e, hp=9); w.add("burning", e[1])
        3
        1
        >>> v = w.view("hp", "burning"); r = w.reader("hp")
        >>> w["hp"]["hp"][v.rows("hp")] -= 1; v.touch("hp"); r.changed().tolist()
        [1]
        """
        rows = self.rows(name)  # an unknown or excluded name raises here
        if name in self._optional:
            store = self._optionals[self._optional.index(name)]
            store.touch_rows(rows[rows != NO_ROW])
        else:
            self._included[self._include.index(name)].touch_rows(rows)

    def __len__(self) -> int:
        self._join()
        return int(self._order.shape[0])

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids.tolist())

    def __repr__(self) -> str:
        exclude = f", exclude={self._exclude!r}" if self._exclude else ""
        optional = f", optional={self._optional!r}" if self._optional else ""
        names = ", ".join(map(repr, self._include))
        return f"View({names}{exclude}{optional}, size={len(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_view_of, (self._world, self._include, self._exclude, self._optional))


def _take(values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``values[at]`` for uint32 positions ``at``, without numpy's cast."""
    out = np.empty(at.shape[0], values.dtype)
    kernels.take(values, at, out)
    return out


def _view_of(
    world: Views,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    optional: tuple[str, ...] = (),
) -> View:
    """Rebuild a view after unpickling its world."""
    return world.view(*include, exclude=exclude, optional=optional)


__all__ = ["NO_ROW", "View"]

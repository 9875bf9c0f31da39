"""Grid: ids at positions, bucketed into cubic cells, and who is near whom.

A grid is a set engine (ids -> slots, as every set) with a position row
per slot and a cell table (see :mod:`sparseset.kernels.spaces` for the
layout). The table is rebuilt lazily: ``place`` of new ids and removals
mark it stale, and the next query counting-sorts the members by cell. A
``place`` that only moves a few members re-buckets them at once instead
(each a *stray* of its new bucket until the next rebuild), so a grid
whose members move a little each step never pays for a full rebuild.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernels
from ..jit.grid import GridTwin
from ..kernels import spaces as sk
from ..sets.engine import SetEngine
from ..sets.ids import as_ids, describe, kernel_ids, reject_negative
from ..sets.index_kinds import kind_named
from ..sets.locking import Guarded, atomic
from ..sets.pool import share_out, shared

#: The metrics by name.
METRICS = {
    "euclidean": sk.EUCLIDEAN,
    "chebyshev": sk.CHEBYSHEV,
    "manhattan": sk.MANHATTAN,
}
#: A dense cell table may have this many cells per member (plus SLACK)
#: before the grid hashes its cells instead.
CELLS_PER_MEMBER = 4
SLACK = 4096
#: Empty cells a dense window keeps on every side of its members: queries
#: reaching that many cells find their buckets at fixed offsets.
PAD = 1
#: Answers of ids as they are (see :func:`~sparseset.kernels.spaces.answer`).
_NO_GENERATIONS = np.zeros(0, np.uint32)
#: Strays (members moved to another bucket since the build) past this
#: share of the members make the next query rebuild the table.
STRAY_SHARE = 0.125


def _positive(value: Any, what: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, got {value!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{what} must be a positive finite number, got {value!r}")
    return x


def _radius(r: Any) -> float:
    try:
        x = float(r)
    except (TypeError, ValueError):
        raise TypeError(f"r must be a number, got {r!r}") from None
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"r must be a finite number >= 0, got {r!r}")
    return x


def _metric(metric: Any) -> int:
    if metric not in METRICS:
        raise ValueError(
            f"metric must be one of {', '.join(map(repr, METRICS))}, got {metric!r}"
        )
    return METRICS[metric]


@atomic()
class Grid(Guarded):
    """Ids at positions in 1-, 2- or 3-D space, bucketed into cubic cells.

    Parameters
    ----------
    cell : float
        The side of a cell: a member at ``x`` is in cell ``floor(x / cell)``
        on each axis. Queries are fastest with ``r`` near ``cell``.
    dims : int
        1, 2 or 3.
    torus : sequence of float or float, optional
        The sizes of a periodic space, one per axis (a number: the same on
        every axis): positions are wrapped into ``[0, size)`` and distances
        are periodic. None: unbounded.
    index : str
        The index kind of the ids (``"flat"``, ``"paged"``, ``"hash"``).

    Notes
    -----
    Memory: the ids' set (``dense`` and the index), ``8 * dims`` bytes of
    position a slot and, once a member has strayed from its cell's range
    (a move re-bucketed at once) or a twin was taken, a 4-byte link a
    slot, plus the cell table (12 bytes a bucket); :attr:`nbytes` counts
    it all (spare slots from growth included). Unbounded space: the table
    covers the cells of the members' bounding box when that is at most
    ``4 * n + 4096`` cells
    (members that later move outside it are kept in its edge cells, which
    keeps answers exact), else cells are hashed into a power-of-two table.

    Examples
    --------
    >>> g = Grid(cell=1.0, dims=2)
    >>> g.place([1, 2, 3], [[0.0, 0.0], [0.5, 0.0], [3.0, 3.0]])
    3
    >>> a, b = g.pairs(1.0); a.tolist(), b.tolist()
    ([1], [2])
    >>> offsets, found = g.within([[2.5, 2.5]], 1.0)
    >>> offsets.tolist(), found.tolist()
    ([0, 1], [3])
    """

    __slots__ = (
        "_assigns",
        "_built",
        "_cell",
        "_dims",
        "_engine",
        "_geo",
        "_guess",
        "_head",
        "_lazy",
        "_lazy_pays",
        "_meta",
        "_nxt",
        "_order",
        "_ordered",
        "_pos",
        "_start",
        "_torus",
        "_unindexed",
        "_win",
    )

    def __init__(
        self,
        cell: float = 1.0,
        dims: int = 2,
        torus: Any = None,
        index: str = "flat",
    ) -> None:
        self._cell = _positive(cell, "cell")
        if isinstance(dims, bool) or not isinstance(dims, int | np.integer):
            raise TypeError(f"dims must be 1, 2 or 3, got {dims!r}")
        if dims not in (1, 2, 3):
            raise ValueError(f"dims must be 1, 2 or 3, got {dims!r}")
        self._dims = int(dims)
        if torus is None:
            self._torus: tuple[float, ...] | None = None
        else:
            sizes = (
                [torus] * self._dims
                if isinstance(torus, int | float | np.integer | np.floating)
                else list(torus)
            )
            if len(sizes) != self._dims:
                raise ValueError(
                    f"torus must give {self._dims} sizes (one per axis), got {torus!r}"
                )
            self._torus = tuple(
                _positive(s, f"torus[{d}]") for d, s in enumerate(sizes)
            )
        self._geo = np.zeros(4, np.float64)
        self._geo[0] = self._cell
        self._win = np.zeros(sk.WIN_LENGTH, np.int64)
        if self._torus is not None:
            for d, size in enumerate(self._torus):
                self._geo[1 + d] = size
                self._win[sk.W_TORUS + d] = max(1, math.ceil(size / self._cell))
        self._engine = SetEngine.new(kind_named(index), 0)
        self._pos = np.zeros((0, self._dims), np.float64)
        #: The slots' links (see :mod:`sparseset.kernels.spaces`): empty
        #: until a member strays or a twin is handed out (:meth:`_links`),
        #: then a row per slot.
        self._nxt = np.zeros(0, np.uint32)
        self._start = np.zeros(1, np.int64)
        self._head = np.zeros(0, np.uint32)
        #: ``[strays, version, n]``, shared with twins: the members moved
        #: to another bucket since the build (and range slots emptied), a
        #: count of changes that make twins stale, and the number of
        #: members (a twin's places and removals change it).
        self._meta = np.zeros(3, np.int64)
        #: Where the sources of the last sort went (source ``s`` to slot
        #: ``_order[s]``, while ``_ordered``: a removal moves members), so
        #: that an unchanged :meth:`assign` is seen with no sort. Held only
        #: while assigns outnumber queries (``_lazy_pays``): only unasked
        #: assigns ask, and without it they are checked by a counting
        #: sort's walk (:func:`~sparseset.kernels.spaces.same_sorted`).
        self._order = np.zeros(0, np.uint32)
        self._ordered = False
        #: Whether the slots hold the last assign's sources in their own
        #: order, unsorted (see :meth:`assign`); the assigns since the last
        #: query (None: no assign yet); and whether the last query came
        #: after more than one, so that the next assign leaves the sort to
        #: the next query even after a query.
        self._lazy = False
        self._assigns: int | None = None
        self._lazy_pays = False
        #: Room for the pairs of the next :meth:`pairs` (the last count, and some).
        self._guess = 0
        self._built = False  # the cell table needs a build
        #: Whether the id index lags ``dense`` since an :meth:`assign`.
        #: Queries never read the index, so a grid whose members are all
        #: replaced between queries never pays for one: it is made again
        #: when an id is next looked up (:meth:`_index`).
        self._unindexed = False

    # -- properties ---------------------------------------------------------

    @property
    def cell(self) -> float:
        """The side of a cell. O(1)."""
        return self._cell

    @property
    def dims(self) -> int:
        """The number of axes. O(1)."""
        return self._dims

    @property
    def torus(self) -> tuple[float, ...] | None:
        """The periodic sizes, or None for unbounded space. O(1)."""
        return self._torus

    @property
    def kind(self) -> str:
        """The index kind of the ids. O(1)."""
        return self._engine.kind.name

    def __len__(self) -> int:
        self._pull()
        return len(self._engine)

    @property
    def ids(self) -> np.ndarray:
        """The members (a copy), in the grid's order (unspecified).

        O(n) for n members.

        Examples
        --------
        >>> g = Grid(); g.place(4, [0.0, 0.0]); g.ids.tolist()
        1
        [4]
        """
        self._pull()
        return self._engine.members().copy()

    @property
    def nbytes(self) -> int:
        """Bytes held, spare room included: the ids' set (``dense`` and
        its index), the positions (``8 * dims`` bytes a slot), a 4-byte
        link a slot once a member has strayed or a twin was taken, and
        the cell table (:attr:`table_nbytes`).

        With a flat index of ids ``[0, n)``, that is 8 bytes a member of
        bookkeeping (12 with links) beside the positions and the table.
        An :meth:`assign` keeps an eighth more slots than members, and
        drops the id index until an id is next looked up.

        O(1).

        Examples
        --------
        >>> Grid().nbytes >= 0
        True
        """
        self._pull()
        return int(
            self._engine.nbytes
            + self._pos.nbytes
            + self._nxt.nbytes
            + self._order.nbytes
            + self._start.nbytes
            + self._head.nbytes
        )

    @property
    def table_nbytes(self) -> int:
        """Bytes of the cell table (part of :attr:`nbytes`): 12 a bucket.

        O(1).

        Examples
        --------
        >>> g = Grid(); g.place([1, 2], [[0, 0], [3, 3]]); g.pairs(1.0)[0].size
        2
        0
        >>> g.table_nbytes == 12 * (4 + 2) ** 2 + 8  # a 4 x 4 window, padded
        True
        """
        return int(self._start.nbytes + self._head.nbytes)

    def __repr__(self) -> str:
        return (
            f"Grid(cell={self._cell!r}, dims={self._dims}, torus={self._torus!r}, "
            f"index={self.kind!r}) with {len(self)} members"
        )

    # -- input ----------------------------------------------------------------

    def _points(self, values: Any, count: int | None, what: str) -> np.ndarray:
        """``values`` as a C-ordered ``(count, dims)`` float64 array, finite,
        wrapped on a torus (then a copy; else the caller's own array if it
        is one already: it is only read); raises naming the first bad row."""
        try:
            arr = np.array(
                values,
                dtype=np.float64,
                order="C",
                copy=None if self._torus is None else True,
            )
        except (TypeError, ValueError):
            raise TypeError(f"{what} must be numbers, got {values!r:.80}") from None
        d = self._dims
        if count is None:
            if arr.ndim == 1 and arr.shape[0] == d:
                arr = arr.reshape(1, d)
            if arr.ndim != 2 or arr.shape[1] != d:
                raise ValueError(
                    f"{what} must have shape (n, {d}), got shape {arr.shape}"
                )
        elif arr.shape != (count, d):
            if count == 1 and arr.shape == (d,):
                arr = arr.reshape(1, d)
            else:
                raise ValueError(
                    f"{what} must have shape ({count}, {d}) for {count} ids, "
                    f"got shape {arr.shape}"
                )
        if _any_non_finite(arr):
            i, j = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(
                f"{what} must be finite: {what}[{i}, {j}] = {float(arr[i, j])!r}"
            )
        if self._torus is not None and arr.shape[0]:
            sk.wrap(arr, self._geo, d)
        return arr

    def _valid_ids(self, ids: Any) -> tuple[np.ndarray, bool]:
        arr, scalar = as_ids(ids)
        self._engine.validate_add(arr, scalar, ids)
        return arr, scalar

    # -- changes --------------------------------------------------------------

    def place(self, ids: Any, pos: Any) -> int:
        """Put each id at its position: add it, or move it if a member.

        A batch of new ids or many moves leaves the cell table to be rebuilt
        by the next query; a few moves (up to an eighth of the members
        between rebuilds) re-bucket the movers at once.

        Parameters
        ----------
        ids : int or array_like of int
            Non-negative ids in the index kind's range; a repeated id takes
            its last position.
        pos : array_like of float
            ``(len(ids), dims)`` finite coordinates (``(dims,)`` for one id);
            on a torus they are wrapped into the space.

        Returns
        -------
        int
            How many ids were new.

        Raises
        ------
        TypeError
            If an id is not an integer or a coordinate not a number.
        ValueError
            If an id is negative or out of range, a coordinate is NaN or
            infinite, or the shape is wrong; nothing changes.

        Notes
        -----
        O(k) for k ids, plus the index's growth.

        Examples
        --------
        >>> g = Grid(torus=(10, 10))
        >>> g.place([7, 8], [[1.0, 2.0], [-1.0, 12.5]])
        2
        >>> g.positions([8]).tolist()
        [[9.0, 2.5]]
        """
        self._pull()
        self._index()
        arr, scalar = self._valid_ids(ids)
        values = self._points(pos, arr.shape[0], "pos")
        engine = self._engine
        state = engine.state
        n = state.n
        if n and arr.shape[0]:
            slots = engine.index_ids(arr, scalar)
            if slots.min() >= 0:  # only moves: the set and its arrays stay
                self._move(slots, values, n)
                return 0
        slots = np.empty(arr.shape[0], np.int64)
        new_n = engine.insert(arr, scalar, ids, slots)
        self._fit(engine.state.dense.shape[0], n)
        state = engine.state
        state.n = new_n
        if new_n != n:
            state.epoch += 1
            self._stale()
        self._move(slots, values, new_n)
        return int(new_n - n)

    def assign(self, ids: Any, pos: Any, *, unique: bool = False) -> bool:
        """Make the members exactly ``ids``, at ``pos``: whatever the grid
        held before, in one counting sort by cell (or a copy, sorted by
        the next query).

        What a :meth:`place` of everything after a :meth:`clear` answers,
        at the cost of a rebuild of the cell table alone: no id is looked
        up (the id index follows when one is next looked up). For a grid
        whose members (nearly) all move between queries. When nothing
        changed (the same ids at the same positions, in the same order as
        last time) the grid keeps its table, and its twins stay valid.

        An assign that follows another with no query in between (a grid
        kept in step more often than asked) only copies the ids and
        positions, and leaves the sort to the next query; so do the
        assigns after a query that came after more than one. Assigns that
        no query reads cost a copy each, and a grid queried after each
        assign sorts in the assign.

        Parameters
        ----------
        ids : array_like of int
            Distinct non-negative ids in the index kind's range.
        pos : array_like of float
            ``(len(ids), dims)`` finite coordinates; on a torus they are
            wrapped into the space.
        unique : bool
            The caller promises the ids distinct (as the ids of a set or a
            component are): the check, a sort, is skipped. A repeated id
            then leaves the grid inconsistent.

        Returns
        -------
        bool
            Whether the members or their positions changed.

        Raises
        ------
        TypeError
            If an id is not an integer or a coordinate not a number.
        ValueError
            If an id is negative, out of range or repeated, a coordinate is
            NaN or infinite, or the shape is wrong; nothing changes.

        Notes
        -----
        O(n + c) for n ids and c cells of the table (a copy of the n
        rows when no query came since the last assign: the next query
        sorts them).

        Examples
        --------
        >>> g = Grid(); g.place([1, 2], [[0, 0], [5, 5]])
        2
        >>> g.assign([2, 3], [[0.5, 0], [0, 0.5]])
        True
        >>> g.assign([2, 3], [[0.6, 0], [0, 0.4]])  # unasked: copied, sorted later
        True
        >>> sorted(g.ids.tolist()), g.pairs(1.0)[0].size
        ([2, 3], 1)
        """
        self._pull()
        arr, scalar = as_ids(ids)
        if scalar:
            arr = arr.reshape(1)
        engine = self._engine
        engine.validate_add(arr, scalar, ids)
        values = self._points(pos, arr.shape[0], "pos")
        n = arr.shape[0]
        if not unique and n > 1:
            ordered = np.sort(arr)
            repeated = ordered[1:] == ordered[:-1]
            if repeated.any():
                raise ValueError(
                    f"ids must be distinct: {int(ordered[1:][repeated][0])} is repeated"
                )
        dims = self._dims
        state = engine.state
        kids = np.asarray(arr, engine.kind.id_dtype)
        if self._assigns is not None:
            self._assigns += 1
            if (self._assigns > 1 or self._lazy_pays) and (
                state.dense.shape[0] >= n <= self._pos.shape[0]
            ):
                return self._copy(kids, values, n)
        else:
            self._assigns = 1
        # Unchanged so far if the table is built from exactly these slots.
        settled = bool(self._built and not self._meta[0])  # every slot home
        same = settled and state.n == n
        home_from = min(state.n, n) if settled else 0
        if state.dense.shape[0] < n or self._pos.shape[0] < n:
            rows = n + (n >> 3) + 16
            state.dense = np.empty(rows, engine.kind.id_dtype)
            self._pos = np.empty((rows, dims), np.float64)
            self._nxt = np.zeros(0, np.uint32)  # made again at the next stray
            same = False
            home_from = 0
        win = self._win
        before = win.copy()
        start, head = self._layout(values, n, win, self._start, self._head)
        same = same and start is self._start and np.array_equal(before, win)
        self._start, self._head = start, head
        order = self._orders(self._lazy_pays, n)
        kept = sk.sort_cells(
            kids, values, n, state.dense, self._pos, self._nxt, start, head,
            np.empty(n, np.uint32), dims, self._geo, win, same, home_from,
            order,
        )  # fmt: skip
        self._ordered = self._lazy_pays
        self._lazy = False
        if same and kept:
            return False  # the same slots, the same table: twins stay valid
        state.n = n
        state.epoch += 1
        self._unindexed = True
        self._meta[0] = 0
        self._meta[1] += 1
        self._push()
        self._built = True
        return True

    def _copy(self, ids: np.ndarray, values: np.ndarray, n: int) -> bool:
        """:meth:`assign` that no query has asked for since the last: the
        rows copied into the slots in the sources' order, unsorted (the
        table stale: the next query sorts it), unless they are there
        already (as copied, or as sorted into a table with no stray)."""
        state = self._engine.state
        if state.n == n and self._holds(ids, values, n):
            return False
        dense, pos = state.dense, self._pos

        def copy(start: int, stop: int) -> bool:
            dense[start:stop] = ids[start:stop]
            pos[start:stop] = values[start:stop]
            return False

        # numpy's copies release the GIL: big ones go in spans on threads.
        if shared(n):
            share_out(n, copy)
        else:
            copy(0, n)
        state.n = n
        state.epoch += 1
        self._unindexed = True
        self._lazy = True
        self._ordered = False
        self._meta[0] = 0
        self._stale()
        return True

    def _holds(self, ids: np.ndarray, values: np.ndarray, n: int) -> bool:
        """Whether the ``n`` slots hold ``ids`` at ``values`` as an
        unasked :meth:`assign` copied them, or as a sort of them put them
        (through ``_order`` when held; else, in a table with no stray
        since, by walking a counting sort of them)."""
        dense, pos, dims = self._engine.state.dense, self._pos, self._dims
        if self._lazy or (self._ordered and self._order.shape[0] >= n):
            order = self._order[: n * (not self._lazy)]
            return bool(sk.same_rows(dense, pos, ids, values, n, dims, order))
        if not self._built or self._meta[0]:
            return False
        # Unasked assigns come: the walk leaves where each source is.
        order = self._orders(True, n)
        found = sk.same_sorted(
            ids, values, n, dense, pos, self._start, self._head,
            np.empty(n, np.uint32), dims, self._geo, self._win, order,
        )  # fmt: skip
        self._ordered = same = bool(found)
        return same

    def _orders(self, keep: bool, n: int) -> np.ndarray:
        """Room for where a sort of ``n`` sources puts each, if ``keep``
        (else an empty array, and the grid holds none)."""
        if not keep:
            self._order = np.zeros(0, np.uint32)
            self._ordered = False
        elif self._order.shape[0] < n:
            self._order = np.resize(self._order, self._pos.shape[0])
        return self._order[: n * keep]

    def _move(self, slots: np.ndarray, values: np.ndarray, n: int) -> None:
        """Put slots at positions: re-bucketed at once if the table is
        current and the strays stay few, else left for the next build."""
        if (
            self._built
            and slots.shape[0]
            and self._meta[0] + slots.shape[0] <= STRAY_SHARE * n
        ):
            self._links()
            self._meta[0] += int(
                sk.move(
                    self._pos,
                    self._nxt,
                    self._start,
                    self._head,
                    slots,
                    values,
                    np.empty(slots.shape[0], np.uint32),
                    self._dims,
                    self._geo,
                    self._win,
                )
            )
        else:
            sk.scatter(self._pos, slots, values, self._dims)
            self._stale()

    def _pull(self) -> None:
        """Take the number of members from the twins' ``meta`` (they add
        and remove members), and keep it there."""
        state = self._engine.state
        n = int(self._meta[2])
        if n != state.n:
            state.n = n
            state.epoch += 1

    def _push(self) -> None:
        """Publish the number of members to the twins' ``meta``."""
        self._meta[2] = self._engine.state.n

    def _stale(self) -> None:
        """The cell table needs a build; twins handed out are stale."""
        self._built = False
        self._meta[1] += 1
        self._push()

    def _fit(self, rows: int, n: int) -> None:
        """Give the slot rows at least ``rows`` rows, keeping the first ``n``."""
        if self._pos.shape[0] >= rows:
            return
        pos = np.empty((rows, self._dims), np.float64)
        pos[:n] = self._pos[:n]
        if self._nxt.shape[0]:
            nxt = np.empty(rows, np.uint32)
            nxt[:n] = self._nxt[:n]
            self._nxt = nxt
        self._pos = pos
        self._meta[1] += 1

    def _links(self) -> None:
        """Give the slots their links, every member at home, if they have
        none (none has strayed since they were dropped): before the first
        stray, or for a twin, whose moves make strays."""
        if not self._nxt.shape[0]:
            self._nxt = np.full(self._pos.shape[0], sk.HOME, np.uint32)

    def discard(self, ids: Any) -> int:
        """Remove the ids that are members; how many were.

        Raises
        ------
        TypeError
            If an id is not an integer.
        ValueError
            If an id is negative or the ids are not one-dimensional.

        Notes
        -----
        O(k) for k ids; the next query rebuilds the cell table.

        Examples
        --------
        >>> g = Grid(); g.place([1, 2], [[0, 0], [1, 1]])
        2
        >>> g.discard([2, 5]), g.ids.tolist()
        (1, [1])
        """
        self._pull()
        self._index()
        arr, _ = self._engine.removal_batch(ids)
        return self._remove(arr)

    def remove(self, ids: Any) -> int:
        """Remove ids that must all be members; ``KeyError`` and no change
        if one is not.

        Raises
        ------
        TypeError
            If an id is not an integer.
        ValueError
            If an id is negative or the ids are not one-dimensional.
        KeyError
            If an id is not a member; nothing changes.

        Notes
        -----
        O(k) for k ids; the next query rebuilds the cell table.

        Examples
        --------
        >>> g = Grid(); g.place([1, 2], [[0, 0], [1, 1]])
        2
        >>> g.remove([1]), g.ids.tolist()
        (1, [2])
        """
        self._pull()
        self._index()
        arr, scalar = self._engine.removal_batch(ids)
        self._engine.require_members(arr, scalar, ids)
        return self._remove(arr)

    def _remove(self, arr: np.ndarray) -> int:
        state = self._engine.state
        n = state.n
        if not arr.shape[0] or not n:
            return 0
        state.n = kernels.discard_rows(
            state.sparse,
            state.dense,
            n,
            kernel_ids(arr),
            (self._pos.view(np.uint64),),
            *kernels.DISCARD_TUNING,
        )
        removed = int(n - state.n)
        if removed:
            self._lazy = self._ordered = False  # members moved slots
            self._stale()
        return removed

    def clear(self) -> None:
        """Remove every member. O(1).

        Examples
        --------
        >>> g = Grid(); g.place(1, [0, 0]); g.clear(); len(g)
        1
        0
        """
        self._pull()
        self._engine.clear()
        self._unindexed = False  # no member to find
        self._lazy = self._ordered = False
        self._stale()

    # -- membership -----------------------------------------------------------

    def contains(self, ids: Any) -> Any:
        """Membership of each id: a bool for one id, a bool array for a batch.

        Raises
        ------
        TypeError
            If an id is not an integer.
        ValueError
            If an id is negative.

        Notes
        -----
        O(k) for k ids.

        Examples
        --------
        >>> g = Grid(); g.place(3, [0, 0]); g.contains([3, 4]).tolist()
        1
        [True, False]
        """
        self._pull()
        self._index()
        return self._engine.contains(ids)

    def __contains__(self, x: object) -> bool:
        self._pull()
        self._index()
        return self._engine.holds(x)

    def positions(self, ids: Any) -> np.ndarray:
        """The ``(len(ids), dims)`` positions of member ids (a copy).

        Raises
        ------
        TypeError
            If an id is not an integer.
        ValueError
            If an id is negative.
        KeyError
            Naming the first id that is not a member.

        Notes
        -----
        O(k) for k ids.

        Examples
        --------
        >>> g = Grid(); g.place([3, 4], [[0, 1], [2, 3]])
        2
        >>> g.positions([4, 3]).tolist()
        [[2.0, 3.0], [0.0, 1.0]]
        """
        self._pull()
        self._index()
        arr, scalar = as_ids(ids)
        slots = self._engine.index_ids(arr, scalar)
        if slots.shape[0] and slots.min() < 0:
            k = int(np.argmax(slots < 0))
            raise KeyError(f"{describe(arr, k, scalar, ids)} is not a member")
        out: np.ndarray = self._pos[slots]
        return out

    def differs(self, ids: Any, pos: Any) -> np.ndarray:
        """For each id, 0 if it is a member at ``pos`` (wrapped on a torus),
        1 if it is a member elsewhere, 2 if it is absent: what a ``place``
        of them would change (an int8 array).

        Raises
        ------
        TypeError
            If an id is not an integer or a coordinate not a number.
        ValueError
            If an id is negative, a coordinate NaN or infinite, or the shape
            is wrong.

        Notes
        -----
        O(k) for k ids.

        Examples
        --------
        >>> g = Grid(); g.place([1, 2], [[0, 0], [1, 1]])
        2
        >>> g.differs([1, 2, 3], [[0, 0], [1, 2], [0, 0]]).tolist()
        [0, 1, 2]
        """
        self._pull()
        self._index()
        arr, scalar = as_ids(ids)
        reject_negative(arr, scalar)
        values = self._points(pos, arr.shape[0], "pos")
        state = self._engine.state
        out = np.empty(arr.shape[0], np.int8)
        sk.differs(
            state.sparse, state.dense, state.n, self._pos, kernel_ids(arr),
            values, self._dims, out,
        )  # fmt: skip
        return out

    @property
    def jit(self) -> GridTwin:
        """The grid's twin for ``@njit`` code: its own arrays (no copy), on
        which :func:`~sparseset.jit.grid.grid_within`,
        :func:`~sparseset.jit.grid.grid_cell`,
        :func:`~sparseset.jit.grid.grid_move`,
        :func:`~sparseset.jit.grid.grid_place`,
        :func:`~sparseset.jit.grid.grid_remove` and
        :func:`~sparseset.jit.grid.grid_position` run without allocating.
        Changes made through it are seen at once, by the twin and the grid.
        A Python-side change (adding or removing members, many moves, a
        query that rebuilds the cell table) makes a twin stale: take a new
        one.

        O(n) if the cell table is stale (its build), else O(1).

        Examples
        --------
        >>> import numpy as np
        >>> from numba import njit
        >>> from sparseset.jit.grid import grid_move, grid_within
        >>> @njit
        ... def crowd(tw, ids, out):  # each agent steps right if it has company
        ...     for x in ids:
        ...         if grid_within(tw, 0.0, 0.0, 0.0, 1.0, 0, out) > 1:
        ...             grid_move(tw, x, 5.0 + x, 0.0)
        >>> g = Grid(); g.place([1, 2], [[0, 0], [0.5, 0]])
        2
        >>> crowd(g.jit, np.array([1, 2]), np.empty(4, np.int64))
        >>> g.positions([1, 2]).tolist()  # 2 saw 1 leave, and stayed
        [[6.0, 0.0], [0.5, 0.0]]
        """
        self._pull()
        self._table()
        self._index()
        self._links()
        state = self._engine.state
        return GridTwin(
            state.sparse, state.dense, self._pos, self._nxt,
            self._start, self._head, self._geo, self._win, self._meta,
            int(self._meta[1]),
        )  # fmt: skip

    # -- queries --------------------------------------------------------------

    def _table(self) -> None:
        """Rebuild the cell table if it is stale or has too many strays."""
        self._pull()
        if self._assigns:  # the first query since an assign
            self._lazy_pays = self._assigns > 1
            self._assigns = 0
        n = len(self._engine)
        if self._built and self._meta[0] <= STRAY_SHARE * n:
            return
        win = self._win
        start, head = self._layout(self._pos, n, win, self._start, self._head)
        self._start, self._head = start, head
        state = self._engine.state
        # While assigns outnumber queries, the last assign's sources follow
        # their members to the new slots (from their own order, if it left
        # them unsorted).
        follow = self._lazy_pays and (self._lazy or self._ordered)
        order = self._orders(follow, n)
        moved = order if self._lazy else np.empty(n * follow, np.uint32)
        sk.sort_cells(
            state.dense[:n].copy(), self._pos[:n].copy(), n, state.dense,
            self._pos, self._nxt, start, head, np.empty(n, np.uint32),
            self._dims, self._geo, win, False, 0, moved,
        )  # fmt: skip
        if follow and not self._lazy and n:
            order[:] = np.take(moved, order, mode="clip")
        self._ordered = follow
        self._lazy = False
        if not self._unindexed:  # the index follows the members' new slots
            kernels.reindex(state.sparse, state.dense, 0, n)
        state.epoch += 1
        self._meta[0] = 0
        self._meta[1] += 1
        self._built = True

    def _layout(
        self,
        pos: np.ndarray,
        n: int,
        win: np.ndarray,
        start: np.ndarray,
        head: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lay out a cell table for the members at ``pos[:n]`` into ``win``;
        the ``start`` and ``head`` arrays it needs (these, if they fit)."""
        dims = self._dims
        cells = 1
        if self._torus is not None:
            win[sk.W_PAD] = 0
            for d in range(dims):
                win[sk.W_LO + d] = 0
                win[sk.W_N + d] = win[sk.W_TORUS + d]
                cells *= int(win[sk.W_N + d])
        else:
            lo = np.zeros(3, np.int64)
            hi = np.zeros(3, np.int64)
            if n:
                sk.bounds(pos, n, dims, self._geo, win, lo, hi)
            win[sk.W_PAD] = PAD
            for d in range(dims):
                win[sk.W_LO + d] = lo[d] - PAD
                win[sk.W_N + d] = hi[d] - lo[d] + 1 + 2 * PAD
                cells *= int(win[sk.W_N + d])
        for d in range(dims, 3):
            win[sk.W_LO + d] = 0
            win[sk.W_N + d] = 1
        if cells <= CELLS_PER_MEMBER * n + SLACK:
            win[sk.W_MODE] = 0
            buckets = cells
        else:
            win[sk.W_MODE] = 1
            win[sk.W_PAD] = 0
            buckets = 1 << max(4, (2 * n - 1).bit_length())
            win[sk.W_MASK] = buckets - 1
        if start.shape[0] != buckets + 1:
            start = np.empty(buckets + 1, np.int64)
            head = np.empty(buckets, np.uint32)
        return start, head

    def _index(self) -> None:
        """Give the ids an index again after :meth:`assign`: a new one, as
        the old one's entries are of other members."""
        if not self._unindexed:
            return
        engine = self._engine
        state = engine.state
        fresh = SetEngine.new(engine.kind, 0)
        fresh.fill(state.dense[: state.n].copy())
        fresh.state.epoch = state.epoch + 1
        self._engine = fresh
        self._meta[1] += 1  # twins hold the old dense
        self._unindexed = False

    def _reach(self, r: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per axis, how many cells a radius reaches; scratch room for the
        buckets of a neighbourhood; and the bucket offsets of a
        neighbourhood where the window's padding covers it (else empty)."""
        win = self._win
        reach = np.zeros(3, np.int64)
        room = 1
        for d in range(self._dims):
            k = math.ceil(r / self._cell)
            tn = int(win[sk.W_TORUS + d])
            if tn and not float(self._geo[1 + d] / self._cell).is_integer():
                k += 1  # the last cell of the ring is narrower than the rest
            k = min(k, 2**40)
            reach[d] = k
            extent = 2 * k + 1
            if tn:
                extent = min(extent, tn)
            elif win[sk.W_MODE] == 0:
                extent = min(extent, int(win[sk.W_N + d]))
            room *= extent
        if win[sk.W_MODE] == 1:
            room = min(room, int(win[sk.W_MASK]) + 1)
        steps = np.empty(0, np.int64)
        if win[sk.W_MODE] == 0 and self._torus is None and reach.max() <= win[sk.W_PAD]:
            axes = [np.arange(-reach[d], reach[d] + 1) for d in range(self._dims)]
            axes += [np.zeros(1, np.int64)] * (3 - self._dims)
            t0, t1, t2 = np.meshgrid(*axes, indexing="ij")
            n1, n2 = int(win[sk.W_N + 1]), int(win[sk.W_N + 2])
            steps = (t0 * (n1 * n2) + t1 * n2 + t2).ravel().astype(np.int64)
        return reach, np.empty(room, np.int64), steps

    @staticmethod
    def _generations(generations: np.ndarray | None) -> np.ndarray:
        """The table answers are made through (empty: ids as they are)."""
        if generations is None:
            return _NO_GENERATIONS
        if (
            not isinstance(generations, np.ndarray)
            or generations.dtype != np.uint32
            or generations.ndim != 1
        ):
            raise TypeError(
                f"generations must be a 1-D uint32 array (a World's generation "
                f"table), got {generations!r:.80}"
            )
        return generations

    def _strayed(self) -> bool:
        return bool(self._meta[0] > 0)

    def pairs(
        self,
        r: float,
        metric: str = "euclidean",
        *,
        generations: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every unordered pair of members within ``r`` of each other, once.

        Parameters
        ----------
        r : float
            The distance (``<= r``).
        metric : str
            ``"euclidean"``, ``"chebyshev"`` or ``"manhattan"``.
        generations : ndarray of uint32, optional
            For a grid whose ids are a World's entity keys (a
            :meth:`~sparseset.World.grid`'s inner grid): that world's
            generation table, by which the pairs are answered in handles
            (``key | generation << 32``), each found as it is written (an
            id past the table is answered as it is).

        Returns
        -------
        a, b : ndarray of int64
            The pairs ``(a[i], b[i])``, ``a[i] < b[i]``, in no set order.

        Raises
        ------
        ValueError
            If ``r`` is negative or not finite, or the metric unknown.
        TypeError
            If ``generations`` is not a 1-D uint32 array.

        Notes
        -----
        O(n + p) for n members and p pairs when ``r`` is near the cell
        (each member meets the members of the cells within ``r``), plus a
        rebuild of the cell table, O(n), if it is stale.

        Examples
        --------
        >>> g = Grid(cell=1.0)
        >>> g.place([5, 1, 9], [[0, 0], [0, 1], [5, 5]])
        3
        >>> g.pairs(1.0)
        (array([1]), array([5]))
        """
        self._pull()
        rr = _radius(r)
        code = _metric(metric)
        gens = self._generations(generations)
        self._table()
        reach, scratch, steps = self._reach(rr)
        if steps.shape[0]:  # 0, then the offsets numbered above a bucket's own
            steps = np.concatenate(([0], steps[steps > 0]))
        if code == sk.EUCLIDEAN:
            rr = rr * rr
        state = self._engine.state
        none = np.empty(0, np.int64)
        args = (
            state.dense, gens, self._pos, self._nxt, self._start, self._head,
            self._strayed(), self._dims, self._geo, self._win, reach, code, rr,
            scratch, steps,
        )  # fmt: skip
        if self._plain(steps, code):
            return self._pairs_plain(steps, rr, gens)
        m = sk.pairs(*args, none, none, False)
        a = np.empty(m, np.int64)
        b = np.empty(m, np.int64)
        sk.pairs(*args, a, b, True)
        return a, b

    def _pairs_plain(
        self, steps: np.ndarray, rr: float, gens: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`pairs` in one pass of :func:`~sparseset.kernels.spaces.pairs_plain`,
        into buffers that grow (and resume) if the guess was short. Pages
        of a buffer never written cost nothing but address space."""
        state = self._engine.state
        n = len(self)
        room = max(1024, self._guess, 8 * n)
        a = np.empty(room, np.int64)
        b = np.empty(room, np.int64)
        m, first = 0, 0
        while True:
            got, first = sk.pairs_plain(
                state.dense, gens, self._pos, self._start, steps, self._dims, rr,
                a[m:], b[m:], first,
            )  # fmt: skip
            m += int(got)
            if first < 0:
                break
            room *= 2
            a2 = np.empty(room, np.int64)
            b2 = np.empty(room, np.int64)
            a2[:m] = a[:m]
            b2[:m] = b[:m]
            a, b = a2, b2
        self._guess = max(self._guess, m + m // 4)
        return a[:m], b[:m]

    def within(
        self,
        points: Any,
        r: float,
        metric: str = "euclidean",
        *,
        generations: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The members within ``r`` of each point, as CSR.

        ``generations``: as :meth:`pairs` (answers in handles).

        Returns
        -------
        offsets : ndarray of int64
            ``len(points) + 1`` offsets.
        found : ndarray of int64
            Point i's members at ``found[offsets[i]:offsets[i + 1]]``, in no
            set order; a point that is a member finds itself.

        Raises
        ------
        ValueError
            If a coordinate is NaN or infinite, the points' shape is wrong,
            ``r`` is negative or not finite, or the metric unknown.
        TypeError
            If ``generations`` is not a 1-D uint32 array.

        Notes
        -----
        O(m + f) for m points and f members found when ``r`` is near the
        cell, plus a rebuild of the cell table, O(n), if it is stale.

        Examples
        --------
        >>> g = Grid(cell=1.0, dims=2)
        >>> g.place([1, 2], [[0, 0], [3, 0]])
        2
        >>> offsets, found = g.within([[0.5, 0], [9, 9]], 1.0)
        >>> offsets.tolist(), found.tolist()
        ([0, 1, 1], [1])
        """
        self._pull()
        rr = _radius(r)
        code = _metric(metric)
        pts = self._points(points, None, "points")
        gens = self._generations(generations)
        self._table()
        reach, scratch, steps = self._reach(rr)
        if code == sk.EUCLIDEAN:
            rr = rr * rr
        state = self._engine.state
        offsets = np.zeros(pts.shape[0] + 1, np.int64)
        args: tuple[Any, ...] = (
            state.dense, gens, self._pos, self._nxt, self._start, self._head,
            self._strayed(), self._dims, self._geo, self._win, reach, code, rr,
            scratch, steps, pts, offsets,
        )  # fmt: skip
        kernel = sk.within
        if self._plain(steps, code):
            kernel = sk.within_plain
            args = (
                state.dense, gens, self._pos, self._start, steps, self._dims,
                self._geo,
                self._win, rr, pts, offsets,
            )  # fmt: skip
        kernel(*args, offsets[:0], False)
        np.cumsum(offsets, out=offsets)
        found = np.empty(int(offsets[-1]), np.int64)
        kernel(*args, found, True)
        return offsets, found

    def _plain(self, steps: np.ndarray, code: int) -> bool:
        """Whether the tight kernels apply: a dense table without strays
        whose padding covers the reach, euclidean distances, 2 or 3 axes."""
        return bool(
            steps.shape[0]
            and code == sk.EUCLIDEAN
            and not self._strayed()
            and self._dims > 1
        )

    def at(
        self, cells: Any, *, generations: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The members whose cell is each of ``cells``, as CSR.

        ``cells`` is ``(m, dims)`` integer cell coordinates (cell ``c`` holds
        ``c * cell <= x < (c + 1) * cell``); on a torus they wrap.
        ``generations``: as :meth:`pairs` (answers in handles).

        Raises
        ------
        ValueError
            If ``cells`` is not ``(m, dims)``.
        TypeError
            If the cells are not integers.

        Notes
        -----
        O(m + f) for m cells and f members found, plus a rebuild of the cell
        table, O(n), if it is stale.

        Examples
        --------
        >>> g = Grid(cell=2.0)
        >>> g.place([1, 2, 3], [[0.5, 0.5], [1.5, 1.9], [2.0, 0.0]])
        3
        >>> offsets, found = g.at([[0, 0], [1, 0]])
        >>> offsets.tolist(), sorted(found[:2].tolist()), found[2:].tolist()
        ([0, 2, 3], [1, 2], [3])
        """
        self._pull()
        arr = np.asarray(cells)
        d = self._dims
        if arr.ndim == 1 and arr.shape[0] == d:
            arr = arr.reshape(1, d)
        if arr.ndim != 2 or arr.shape[1] != d:
            raise ValueError(f"cells must have shape (m, {d}), got shape {arr.shape}")
        if arr.size and arr.dtype.kind not in "iu":
            raise TypeError(f"cells must be integers, got dtype {arr.dtype}")
        arr = np.ascontiguousarray(arr, dtype=np.int64)
        gens = self._generations(generations)
        self._table()
        state = self._engine.state
        offsets = np.zeros(arr.shape[0] + 1, np.int64)
        args = (
            state.dense, gens, self._pos, self._nxt, self._start, self._head,
            self._strayed(), d, self._geo, self._win, arr, np.zeros(3, np.int64),
            offsets,
        )  # fmt: skip
        sk.at(*args, offsets[:0], False)
        np.cumsum(offsets, out=offsets)
        found = np.empty(int(offsets[-1]), np.int64)
        sk.at(*args, found, True)
        return offsets, found


def _any_non_finite(values: np.ndarray) -> bool:
    """Whether a C-ordered ``(n, dims)`` float array holds a NaN or an
    infinity: one compiled pass, in spans on threads when big."""
    bits = values.reshape(-1).view(np.uint64)
    count = bits.shape[0]

    def check(start: int, stop: int) -> bool:
        return bool(kernels.any_non_finite(bits[start:stop]))

    return share_out(count, check) if shared(count) else check(0, count)


__all__ = ["METRICS", "Grid"]

"""Component storage: ids with named struct-of-arrays columns.

A :class:`ComponentStore` is a :class:`~sparseset.SparseSet` of ids plus one
numpy array per column, whose row ``p`` belongs to the id at ``dense[p]``.
Swap-and-pop removal moves the rows of every column inside the same kernel
pass that moves the id, so the columns stay packed and aligned: a system
iterates ``store["pos"]`` as one contiguous array.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np

from .. import config, kernels
from ..io.schema import parse_schema
from ..sets.engine import INT64_END, SetEngine
from ..sets.ids import (
    as_ids,
    describe,
    is_one_key,
    kernel_ids,
    one_id,
    reject_negative,
    scalar_id,
)
from ..sets.index_kinds import choose_kind, index_nbytes
from ..sets.interrupts import critical
from ..sets.locking import Guarded, atomic, exclusive, holds_lock_free
from ..sets.sparse_set import SparseSet
from .keys import IdKeys, KeyMap

#: A stamp's type (see _track_changes): two per row, 4 bytes a row, so a
#: reader's scan of one stamp per row reads half of what uint32 would; the
#: world's clock renumbers every stamp before it passes the type's range.
STAMP_DTYPE = np.dtype(np.uint16)

_WORDS = {8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}
# discard_rows needs at least one column to unroll over (see kernels.discard).
_NO_ROWS = (np.empty((0, 0), np.uint8),)
# upsert_accumulate likewise, for an add_at that names no column.
_NO_SUMS = ((np.empty((0, 0), np.uint8), np.empty((1, 0), np.uint8)),)
# The members a small counter first grows for in a long batch, before it
# estimates the batch's distinct ids: a hash table for them fits the L1
# cache, so one that suffices (a batch of few distinct ids) costs far less
# than the estimate's pass over every id, and one that does not is rehashed
# once, cheaply.
_FIRST_ROOM = 1 << 12
# A counter's batch counts in its index's slots (see upsert_accumulate)
# where it holds at least this many occurrences per distinct id to come:
# then the pass over the slots costs less than the row misses it saves.
_REPEATS = 2
# The most occurrences a slot's count holds: a batch that long adds by rows.
_MOST_TALLIED = 1 << 32
# An index of at most this many bytes is counted into with no lookahead.
_IN_CACHE = 1 << 19
# A flat slot's "no position" (kernels.options.NOWHERE), filled in where
# add_at may then trust the index (see ComponentStore._grow).
_NO_SLOT = int(kernels.options.NOWHERE)
# About how many rows a scan for a column's extremes reads in the time a
# lookup of one id takes: add_at bounds a batch's sums by the rows it
# touches where the batch is that many times shorter than the store.
_LOOKUP_ROWS = 32
# A long batch's first ids, sketched before the whole: whether it is worth
# estimating at once (with its validation, in one pass), and how skewed it is.
_PROBE = 1 << 13
# A batch whose probe repeats its ids this often (occurrences per distinct
# id, in quarters) is skewed: most of its steps hit the cache, so a miss's
# latency spans more of them, and its slots are prefetched _SKEWED_AHEAD
# times as far on.
_SKEWED_QUARTERS = 5
_SKEWED_AHEAD = 3


def _with_margin(estimate: int) -> int:
    """A distinct-id estimate with a margin of four of its standard errors: a
    wider one would double a hash table whose right size it only just
    fills (a million keys, say)."""
    return int(estimate) * 33 // 32


class _Survey(NamedTuple):
    """What a counter's long batch showed before counting began."""

    #: The distinct ids of the whole batch, margin included; None where
    #: only its first ids were sketched (the first room may hold them all).
    distinct: int | None
    #: The batch's smallest and largest id where that pass found them.
    bounds: tuple[int, int] | None
    #: Whether its first ids repeat as a skewed batch's do.
    skewed: bool


class UnknownColumnError(KeyError, TypeError):
    """A column name the store does not have.

    It is a ``KeyError`` (``store["nope"]``) and a ``TypeError`` (like an
    unexpected keyword argument in ``store.add(ids, nope=...)``).
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def is_same_view(value: Any, rows: np.ndarray) -> bool:
    """Whether ``value`` is a view of exactly ``rows``.

    ``rows += x`` on a view taken by ``obj[name]`` ends in
    ``obj[name] = rows``, after the update already happened in place; this
    spots that case so the assignment can cost nothing.
    """
    return (
        isinstance(value, np.ndarray)
        and value.base is rows.base
        and value.__array_interface__ == rows.__array_interface__
    )


def _words(column: np.ndarray) -> np.ndarray:
    """``column`` as a 2-D array of the widest unsigned word its rows allow.

    Row kernels move words, not typed values, so one compiled loop serves
    every dtype.
    """
    rows = _elements(column)
    row_bytes = rows.shape[1] * column.dtype.itemsize
    word = next(size for size in _WORDS if row_bytes % size == 0)
    return rows.view(np.uint8).view(_WORDS[word])


def _elements(column: np.ndarray) -> np.ndarray:
    """``column`` as 2-D: a row per row, its elements in the row's order."""
    # math.prod: np.prod of a shape tuple costs microseconds a call.
    return column.reshape(column.shape[0], math.prod(column.shape[1:]))


def _nested(value: Any) -> bool:
    """Whether ``value`` is a (nested) list or tuple, not an array."""
    return isinstance(value, list | tuple)


def _is_integer(value: Any) -> bool:
    """Whether ``value`` is an integer (a bool is not)."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _all_integers(array: np.ndarray) -> bool:
    """Whether ``array`` holds integers only (Python ints in an object array
    included: numpy keeps those past 2**64 as objects)."""
    if array.dtype.kind in "iu":
        return True
    return array.dtype.kind == "O" and all(_is_integer(v) for v in array.flat)


_INT64 = np.dtype(np.int64)
#: The type of a handle array's elements (``e[0]`` of ``World.create``'s).
_I64 = np.int64
_FLOAT = frozenset({float})


@functools.cache
@functools.cache
def _int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _plain_spec(
    dtype: np.dtype[Any], shape: tuple[int, ...]
) -> tuple[bool, str, int, int, int, tuple[np.dtype[Any], tuple[int, ...]]]:
    """What :meth:`ComponentStore.set` asks of a column's value for its
    one-id path:
    ``(one, kind, low, high, row_length, exact)``. ``one``: a column of one
    value a row, whose dtype ``kind`` takes Python ints in ``[low, high]``
    (none if ``low > high``); ``row_length``: the length of a tuple or list
    of floats that is a row of a float column (-1: none is); ``exact``: the
    ``(dtype, shape)`` of an array that is a row.

    Examples
    --------
    >>> _plain_spec(np.dtype("f8"), (3,))[4], _plain_spec(np.dtype("u1"), ())[2:4]
    (3, (0, 255))
    """
    kind = dtype.kind
    low, high = 1, 0
    if kind in "fiu":
        low, high = _int_range(dtype if kind in "iu" else _INT64)
    row_length = shape[0] if kind == "f" and len(shape) == 1 else -1
    return not shape, kind, low, high, row_length, (dtype, shape)


def _check_text_fits(
    values: np.ndarray, dtype: np.dtype[Any], row_dims: int, label: str
) -> None:
    """Raise ``ValueError`` naming the first string or bytes value longer
    than a text column of ``dtype`` holds (numpy would cut it silently),
    and its row where ``values`` has one per row."""
    most = dtype.itemsize // (4 if dtype.kind == "U" else 1)
    width = values.dtype.itemsize // (4 if values.dtype.kind == "U" else 1)
    if width <= most:
        return
    lengths = np.char.str_len(values)
    if not (lengths > most).any():
        return
    at = np.unravel_index(int(np.argmax(lengths > most)), values.shape)
    row = f" in row {at[0]}" if values.ndim > row_dims else ""
    raise ValueError(
        f"{label}: {values[at].item()!r}{row} is {int(lengths[at])} characters "
        f"long; the column holds {most} ({dtype})"
    )


def _check_fits(values: np.ndarray, dtype: np.dtype, label: str) -> None:
    """Raise ``ValueError`` naming the first value outside ``dtype``'s range
    and its row (the position along the first axis)."""
    info = np.iinfo(dtype)
    if values.dtype.kind in "iu":
        if not values.size or (
            np.can_cast(values.dtype, dtype, casting="safe")
            or (int(values.min()) >= info.min and int(values.max()) <= info.max)
        ):
            return
        outside = (values < info.min) | (values > info.max)
    else:
        outside = np.frompyfunc(lambda v: not info.min <= v <= info.max, 1, 1)(
            values
        ).astype(bool)
        if not outside.any():
            return
    where = np.unravel_index(int(np.argmax(outside)), values.shape)
    raise ValueError(
        f"{label}: value {values[where]} in row {where[0]} is outside the range "
        f"of {dtype} [{info.min}, {info.max}]; nothing was changed"
    )


@atomic(unlocked=("__contains__", "__len__", "contains", "get", "set"))
class ComponentStore(Guarded):
    """Ids with named struct-of-arrays columns, aligned row for row.

    Parameters
    ----------
    schema : dict or numpy structured dtype
        Column name -> dtype, or ``(dtype, row_shape)``:
        ``{"pos": ("f8", 3), "vel": ("f8", 3), "mass": "f4"}``. An empty
        dict makes a tag store (membership only).
    capacity : int, optional
        Ids that fit before the store grows (a hint).
    index : {"auto", "flat", "paged", "hash"}, optional
        The id index, as for :class:`~sparseset.SparseSet`: by default one
        that adapts to the ids it holds (``"auto"``); a fixed kind for ids
        known in advance (``docs/guide/index-kinds.md``).

    Notes
    -----
    ``store["pos"]`` is a writable view of the rows of the current members.
    Growth (adding past the allocated rows, or ``reserve``) reallocates the
    columns: a view taken before then still holds the old rows, so take a
    fresh view after adding. Removals and ``clear`` keep the arrays but
    shrink the member count, so a view taken before them is longer than the
    store. No data is ever lost by growing.

    A store is a table, not an array: ``np.asarray(store)`` raises
    ``TypeError`` (use ``store.ids``, ``store[name]`` or ``store.get(ids)``),
    so ``np.allclose(store, x)`` cannot compare ids by mistake.

    Integer values of any dtype (Python ints included) go into any integer
    column when they fit; one that does not raises ``ValueError`` naming the
    column, the value and its row, and nothing changes.

    Every call is atomic, as ``dict``'s are: threads may share a store (see
    :mod:`sparseset.sets.locking`; its twin is the exception).

    Examples
    --------
    >>> import numpy as np
    >>> store = ComponentStore({"pos": ("f8", 2), "vel": ("f8", 2)})
    >>> store.add([7, 3], pos=[[0, 0], [1, 1]], vel=[[1, 1], [0.5, 0.5]])
    2
    >>> store["pos"] += store["vel"] * 2.0
    >>> store.get(3)["pos"].tolist()
    [2.0, 2.0]
    """

    def __init__(self, schema: Any, capacity: int = 0, index: str = "auto") -> None:
        self._schema = parse_schema(schema)
        #: Column name -> the state's attribute holding its full array.
        self._attributes = {name: f"_col_{name}" for name in self._schema}
        #: Column name -> what set asks of a value, worked out once.
        self._plain_specs = {
            name: _plain_spec(dtype, shape)
            for name, (dtype, shape) in self._schema.items()
        }
        #: Every column the rows carry: the schema's, then the store's own
        #: (a tracked World store's change stamps; names start with "_").
        #: Row moves, growth, sorting and twins take all of them.
        self._stored = dict(self._schema)
        #: The clock of a store that stamps its rows (see _track_changes).
        self._clock: Callable[[], int] | None = None
        #: ``(start, stop, tick)``: rows ``[start, stop)`` declared written
        #: at ``tick`` and not yet in their stamps (see _stamp), or None.
        self._written_range: tuple[int, int, int] | None = None
        self._engine = SetEngine.named(index, capacity)
        self._key_map: KeyMap = IdKeys()
        state = self._engine.state
        for name, (dtype, shape) in self._schema.items():
            setattr(
                state,
                f"_col_{name}",
                kernels.allocation.zeros((state.dense.shape[0], *shape), dtype),
            )

    # -- schema and storage -----------------------------------------------

    @property
    def schema(self) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
        """Column name -> ``(dtype, row_shape)``.

        O(c) for c columns: a new dict each time.

        Examples
        --------
        >>> ComponentStore({"mass": "f4"}).schema
        {'mass': (dtype('float32'), ())}
        """
        return dict(self._schema)

    @property
    def columns(self) -> tuple[str, ...]:
        """The column names, in schema order.

        O(c) for c columns.

        Examples
        --------
        >>> ComponentStore({"pos": ("f8", 3), "mass": "f4"}).columns
        ('pos', 'mass')
        """
        return tuple(self._schema)

    def _column(self, name: str) -> np.ndarray:
        try:
            attribute = self._attributes[name]
        except KeyError:
            raise UnknownColumnError(
                f"{name!r} is not a column of this store; columns: "
                f"{', '.join(self._schema) or '(none)'}"
            ) from None
        array: np.ndarray = getattr(self._engine.state, attribute)
        return array

    def _state(self) -> Any:
        """The key set's state (``sparse``, ``dense``, ``n``, ``epoch``) with
        the columns as ``_col_<name>``: a ``SetState`` or the jit twin."""
        return self._engine.state

    def _members(self) -> np.ndarray:
        """The keys, aligned with the rows (a view of ``dense[:n]``)."""
        return self._engine.members()

    def _first_absent(self, keys: np.ndarray) -> int:
        """Position of the first of ``keys`` (valid keys) that is not a
        member; -1 if all are."""
        return self._engine.first_absent(keys)

    def _array(self, name: str) -> np.ndarray:
        """The full array of stored column ``name`` (the schema's or the
        store's own), all of its rows."""
        array: np.ndarray = getattr(self._engine.state, f"_col_{name}")
        return array

    def _carry(self, name: str, dtype: Any, shape: tuple[int, ...] = ()) -> None:
        """Add a column of the store's own (``name`` starts with ``_``, so no
        schema column has it), zero-filled, that moves with the rows but is
        no column of the schema. Before any twin exists."""
        state = self._state()
        self._stored[name] = (np.dtype(dtype), shape)
        rows = state.dense.shape[0]
        column = kernels.allocation.zeros((rows, *shape), dtype)
        setattr(state, f"_col_{name}", column)

    def _track_changes(self, clock: Callable[[], int]) -> None:
        """Stamp rows from now on, from ``clock()``: ``_stamps[:, 0]`` with
        when the row's id came, ``_stamps[:, 1]`` with when the row was last
        written by a declared write (:meth:`add`, :meth:`set`,
        :meth:`add_at`). Before any row exists."""
        # Both stamps in one row of one column: a row move (swap-and-pop, a
        # group's packing) then touches one more cache line, not two.
        self._carry("_stamps", STAMP_DTYPE, (2,))
        self._clock = clock

    def _stamp(self, written: Any, first_new: int, end: int) -> None:
        """Stamp rows ``written`` (positions, or a slice) changed and
        ``[first_new, end)`` added, now; nothing for a store that does not
        stamp.

        A slice of existing rows only (a group's ``touch``, a write scope)
        is noted as one range, in O(1), while no twin could move rows
        unseen: its stamps are written when rows next move or are
        renumbered (:meth:`_settle_written`), and :meth:`_rows_stamped_after`
        answers from the range meanwhile.
        """
        if self._clock is None:
            return
        tick = self._clock()
        if isinstance(written, np.ndarray) and written.shape[0] == end - first_new:
            # A batch of new ids only: the rows written are the new ones,
            # one block (a fill, not a scatter).
            written = slice(first_new, end)
        if isinstance(written, slice) and first_new == end:
            start, stop, step = written.indices(len(self))
            if step == 1 and self._engine.twin is None:
                self._note_written(start, stop, tick)
                return
        stamps = self._array("_stamps")
        if isinstance(written, np.ndarray):
            ahead = config.ADD_PREFETCH_AHEAD
            kernels.stamp_rows(stamps, 1, written, tick, ahead)
        else:
            stamps[written, 1] = tick
        stamps[first_new:end, 0] = tick

    def _note_written(self, start: int, stop: int, tick: int) -> None:
        """Note rows ``[start, stop)`` written at ``tick`` as the range."""
        if stop <= start:
            return
        held = self._written_range
        if held is not None and not (start <= held[0] and held[1] <= stop):
            # Only a range that covers the held one replaces it: newer
            # stamps over every row the older one named lose nothing.
            self._settle_written()
        self._written_range = (start, stop, tick)

    def _settle_written(self) -> None:
        """Write the noted range's tick into its rows' changed stamps.

        Before rows move, are renumbered or go to a twin: the range names
        positions. A row stamped since the range was noted keeps its newer
        stamp (ticks only grow).
        """
        held, self._written_range = self._written_range, None
        if held is not None:
            start, stop, tick = held
            changed = self._array("_stamps")[start : min(stop, len(self)), 1]
            np.maximum(changed, STAMP_DTYPE.type(tick), out=changed)

    def _rows_noted_written_after(self, since: int) -> int:
        """How many rows the noted range says were written after ``since``
        (0 if none is held or it is older): a lower bound of what
        :meth:`_rows_stamped_after` would count, in O(1)."""
        held = self._written_range
        if held is None or held[2] <= since:
            return 0
        return max(0, min(held[1], len(self)) - held[0])

    def _rows_stamped_after(self, since: int, which: int) -> np.ndarray:
        """Positions of the members whose stamp ``which`` (0: added, 1:
        changed) is past ``since``, the noted range included."""
        n = len(self)
        held = self._written_range
        start = stop = 0
        if which == 1 and held is not None and held[2] > since:
            start, stop = held[0], held[1]
        rows = np.empty(n, np.int64)  # pages never written are never touched
        stamps = self._array("_stamps")[:n]
        count = kernels.rows_stamped_after(stamps, which, since, start, stop, rows)
        return rows[:count]

    def _rows(self) -> tuple[np.ndarray, ...]:
        """Every stored column as words, for the row-moving kernels."""
        self._settle_written()
        return tuple(_words(self._array(name)) for name in self._stored) or _NO_ROWS

    def _fit_columns(self, in_use: int | None = None) -> None:
        """Give every stored column as many rows as ``dense`` has slots,
        keeping the first ``in_use`` rows (the members' unless given: a
        batch under way keeps the rows it has appended too)."""
        state = self._state()
        rows = state.dense.shape[0]
        n = state.n if in_use is None else in_use
        for name, (dtype, shape) in self._stored.items():
            old = getattr(state, f"_col_{name}")
            if old.shape[0] < rows:
                column = kernels.allocation.empty((rows, *shape), dtype)
                column[:n] = old[:n]
                setattr(state, f"_col_{name}", column)

    def reserve(self, capacity: int) -> None:
        """Grow storage so ids below ``capacity`` fit without regrowth.

        Raises
        ------
        TypeError
            If ``capacity`` is not an integer.
        ValueError
            If ``capacity`` is negative or past the index kind's limit.

        Notes
        -----
        O(capacity) when it grows (index and every column reallocated, rows copied);
        O(1) when the room is there.

        Examples
        --------
        >>> store = ComponentStore({"mass": "f4"}); store.reserve(100)
        >>> store.capacity
        100
        """
        self._engine.reserve(capacity)
        self._fit_columns()

    @property
    def capacity(self) -> int:
        """What fits without growing, as for :attr:`SparseSet.capacity`.

        O(1).

        Examples
        --------
        >>> ComponentStore({}, capacity=10).capacity
        10
        """
        return self._engine.capacity

    @property
    def kind(self) -> str:
        """The index kind of the ids: ``"flat"``, ``"paged"`` or ``"hash"``.

        O(1).

        Examples
        --------
        >>> ComponentStore({"mass": "f4"}, index="paged").kind
        'paged'
        """
        return self._engine.kind.name

    @property
    def nbytes(self) -> int:
        """Bytes held by the index, the ids and every column.

        O(c) for c columns: their sizes, not their contents.

        Examples
        --------
        >>> ComponentStore({"mass": "f8"}, capacity=10).nbytes
        160
        """
        return self._engine.nbytes + sum(
            self._array(name).nbytes for name in self._stored
        )

    # -- values in, values out --------------------------------------------

    def _column_label(self, name: str) -> str:
        """How error messages call column ``name``."""
        return f"column {name!r}"

    def _prepare(self, count: int, columns: dict[str, Any]) -> dict[str, np.ndarray]:
        """Cast and broadcast column values to ``(count, *row_shape)``.

        Raises before anything is changed: ``UnknownColumnError`` for a name
        the store lacks, ``TypeError`` for values that cannot be cast with
        ``casting="same_kind"``, ``ValueError`` for a shape that does not
        broadcast or an integer that does not fit an integer column.
        """
        prepared = {}
        for name, value in columns.items():
            self._column(name)
            dtype, shape = self._schema[name]
            label = self._column_label(name)
            array = np.asarray(value)
            if dtype.kind in "iu" and array.dtype.kind == "f" and _nested(value):
                # numpy makes floats of Python ints past int64 mixed with
                # others ([3, 2**63]): keep them exact, as objects, if they
                # are all integers (real floats are refused as floats).
                exact = np.array(value, dtype=object)
                if _all_integers(exact):
                    array = exact
            integers = dtype.kind in "iu" and _all_integers(array)
            # An empty list is float64 to numpy, yet has nothing to cast.
            if (
                array.size
                and not integers
                and not np.can_cast(array.dtype, dtype, casting="same_kind")
            ):
                what = f"{array.dtype} values"
                if dtype.kind in "iu" and array.dtype.kind == "O":
                    # Objects say nothing: name the first one that is no integer.
                    odd = next(v for v in array.flat if not _is_integer(v))
                    what = f"{odd!r} ({type(odd).__name__})"
                raise TypeError(
                    f"{label}: cannot cast {what} to {dtype} (casting='same_kind')"
                )
            if dtype.kind in "US" and array.dtype.kind in "US":
                _check_text_fits(array, dtype, len(shape), label)
            if count == 0 and array.size == 0:
                prepared[name] = np.empty((0, *shape), dtype)
                continue
            try:
                array = np.broadcast_to(array, (count, *shape))
            except ValueError:
                raise ValueError(
                    f"{label}: values of shape {array.shape} do not "
                    f"broadcast to {(count, *shape)} ({count} ids, rows of "
                    f"shape {shape})"
                ) from None
            if integers:
                # Any integer that fits goes in, whatever its dtype; one
                # that does not would wrap around silently in a cast.
                _check_fits(array, dtype, label)
            prepared[name] = np.ascontiguousarray(array, dtype=dtype)
        return prepared

    def _scatter(self, positions: np.ndarray, values: dict[str, np.ndarray]) -> None:
        for name, array in values.items():
            column = self._column(name)
            if np.may_share_memory(array, column):
                # Rows are written one by one; values read from the column
                # itself (store.add(ids, hp=store["hp"])) must not change
                # under the loop.
                array = array.copy()
            kernels.scatter_rows(_words(column), positions, _words(array))

    def add(self, ids: Any, /, **columns: Any) -> int:
        """Add ids with their rows, or replace the rows of members.

        Like ``dict.update``: a repeated id takes its last value. On new
        rows, columns not given are zero-filled; on replaced rows they are
        left as they were. Returns how many ids were new. The whole batch
        is validated before anything changes.

        Raises
        ------
        TypeError
            If an id is not an integer, or a value cannot be cast to its column with
            ``casting='same_kind'``.
        ValueError
            If an id is negative or outside the index kind's range, or a value does not
            broadcast to its rows; nothing changes.
        UnknownColumnError
            If a keyword names a column the store does not have (a ``KeyError`` and a
            ``TypeError``).

        Notes
        -----
        O(k) for k ids, times the row width, amortised: growth doubles the index and the
        columns.

        Examples
        --------
        >>> store = ComponentStore({"hp": "i4", "armor": "i4"})
        >>> store.add([1, 2, 1], hp=[10, 20, 30])
        2
        >>> store.add(2, armor=5)
        0
        >>> store.get([1, 2])
        {'hp': array([30, 20], dtype=int32), 'armor': array([0, 5], dtype=int32)}
        """
        arr, scalar = as_ids(ids)
        values = self._prepare(arr.shape[0], columns)
        n, new_n, positions = self._insert_rows(arr, scalar, ids, values.keys())
        self._scatter(positions, values)
        self._stamp(positions, n, new_n)
        return int(new_n - n)

    def _insert_rows(
        self, arr: np.ndarray, scalar: bool, source: Any, given: Iterable[str]
    ) -> tuple[int, int, np.ndarray]:
        """Insert the ids of ``arr`` that are not members, with rows zeroed
        in every stored column but the ``given`` ones (the caller fills
        those); ``(n before, n after, each id's row)``."""
        state = self._state()
        n = state.n
        positions = np.empty(arr.shape[0], np.int64)
        new_n = self._engine.insert(arr, scalar, source, positions)
        self._fit_columns()
        self._admit(n, new_n, given)
        return n, new_n, positions

    def _admit(self, n: int, new_n: int, given: Iterable[str]) -> None:
        """Make ``dense[n:new_n]``, appended by a batch, members: their rows
        zeroed in every stored column but the ``given`` ones."""
        state = self._state()
        state.n = new_n
        if new_n != n:
            state.epoch += 1
        for name, (dtype, _) in self._stored.items():
            if name not in given:
                # A zero of the dtype: blank strings and records, not "0".
                self._array(name)[n:new_n] = np.zeros((), dtype)

    def add_at(self, ids: Any, /, **columns: Any) -> int:
        """Add each occurrence's values to its id's row: a counter.

        Ids not yet members are added first, their rows zero-filled; then
        every occurrence accumulates, a repeated id once per occurrence
        (as ``np.add.at``, which ``store[name][rows] += values`` is not).
        Columns must hold numbers. Values are cast and checked as
        :meth:`add`'s are, and an integer sum that would not fit its
        column raises ``ValueError`` naming the id, where ``np.add.at``
        would wrap around; nothing changes then. Returns how many ids were
        new.

        Raises
        ------
        TypeError
            If an id is not an integer, or a value cannot be cast to its column with
            ``casting='same_kind'``.
        ValueError
            If an id is negative or outside the index kind's range, or a value does not
            broadcast to its rows; nothing changes.
        UnknownColumnError
            If a keyword names a column the store does not have (a ``KeyError`` and a
            ``TypeError``).

        Notes
        -----
        O(k) for k occurrences, times the row width, amortised as ``add``.

        Examples
        --------
        >>> store = ComponentStore({"n": "i8", "total": "f8"})
        >>> store.add_at([7, 3, 7, 7], n=1, total=[0.5, 1.0, 0.25, 0.25])
        2
        >>> store.get([7, 3])
        {'n': array([3, 1]), 'total': array([1., 1.])}
        >>> ComponentStore({"n": "u1"}).add_at([1] * 300, n=1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: column 'n': the sum for ids[0] = 1 would be 300, outside ...
        """
        arr, scalar = as_ids(ids)
        values = {}
        for name, value in columns.items():
            self._column(name)  # an unknown name raises first
            dtype, shape = self._schema[name]
            if dtype.kind not in "iuf":
                raise TypeError(
                    f"{self._column_label(name)}: add_at adds numbers; "
                    f"a {dtype} column cannot hold a sum"
                )
            # One row for every occurrence (a count's 1) stays one row: the
            # kernel reads it for each, with no array of n copies.
            one = np.shape(value) == shape
            count = 1 if one else arr.shape[0]
            values[name] = self._prepare(count, {name: value})[name]
        if not arr.shape[0]:
            return 0
        batch = kernel_ids(arr)
        survey = self._survey(batch)
        top = self._engine.validate_add(arr, scalar, ids, survey.bounds)
        self._engine.count_blocks(batch, survey.distinct or arr.shape[0])
        self._check_sums(arr, scalar, ids, values)
        n = len(self)
        new_n, positions = self._accumulate(batch, top, values, survey)
        self._engine.batch_done()
        # The kernel zeroed the new rows of the accumulated columns.
        self._admit(n, new_n, values.keys())
        self._stamp(positions, n, new_n)
        return int(new_n - n)

    def _survey(self, arr: np.ndarray) -> _Survey:
        """For a new counter's long batch, a sketch of its first ``_PROBE``
        ids: how skewed it is, and, where they already overfill the first
        room, the whole batch's distinct ids and bounds, in the one pass
        that validating it would take anyway. (The ids are not yet
        validated: the sketch reads them as numbers and changes nothing.)"""
        count = arr.shape[0]
        if len(self) or count <= _PROBE:
            return _Survey(None, None, False)
        sample, _, _ = kernels.distinct_estimate(arr, 0, _PROBE)
        skewed = _SKEWED_QUARTERS * sample <= 4 * _PROBE
        if sample <= _FIRST_ROOM:
            return _Survey(None, None, skewed)
        distinct, low, high = kernels.distinct_estimate(arr, 0, count)
        return _Survey(_with_margin(distinct), (int(low), int(high)), skewed)

    def _accumulate(
        self, arr: np.ndarray, top: int, values: dict[str, np.ndarray], survey: _Survey
    ) -> tuple[int, np.ndarray]:
        """Append the ids of ``arr`` (validated, ids up to ``top``) that are
        not members and add each occurrence's ``values`` to its row, in one
        kernel pass; ``(n after, each id's row)`` (no rows unless the store
        stamps them). ``n`` itself is left for the caller to set.

        The kernel stops where ``dense`` or the index is full. The first
        time, the distinct ids still to come are estimated and everything
        grows once for them: a counter's batch repeats its ids, so growing
        for every id left (as :meth:`SetEngine.insert` does for a set's)
        would make tables many times too large, and doubling would rehash
        every member again. Past that estimate, doubling. A counter of
        fewer than ``_FIRST_ROOM`` members first grows to that many
        without estimating (a long batch of few distinct ids then never
        pays for the estimate); if the batch needs more, the estimate then
        counts the whole batch, whose distinct ids, with the members it
        started with, bound what the counter will hold. A new counter
        whose ``survey`` estimated the whole batch grows for it at once.
        """
        state = self._state()
        stamps = self._clock is not None
        positions = np.empty(arr.shape[0] if stamps else 0, np.int64)
        (ahead,) = kernels.ACCUMULATE_TUNING
        candidates = kernels.candidates_for(ahead * _SKEWED_AHEAD)
        start = m = state.n
        stop = members = 0
        exact = guessed = tallies = False
        flats = {}
        for name, rows in values.items():
            flat = _elements(rows)
            # The kernel reads the values while it writes the column.
            alias = np.may_share_memory(flat, self._column(name))
            flats[name] = flat.copy() if alias else flat
        # Counting in the index's slots gives exact sums only where one row
        # of integers is added n times, and pays a pass over the slots: it
        # is for batches whose ids repeat (decided once they are estimated).
        countable = (
            not stamps
            and arr.shape[0] < _MOST_TALLIED
            and all(f.shape[0] == 1 and f.dtype.kind in "iu" for f in flats.values())
        )
        kind = self._engine.kind.module
        if survey.distinct is not None:
            members = start + survey.distinct + 1
            tallies = countable and arr.shape[0] >= _REPEATS * survey.distinct
            exact = self._grow(m, members, top, arr.shape[0], exact)
        elif kind.KEYED and arr.shape[0] >= int(kind.slot_count(state.sparse)):
            # A batch at least as long as the index has slots counts in them
            # from the start: the sweep that settles them costs less than
            # the steps that add to rows.
            tallies = countable
        while True:
            self._fit_columns(m)
            sums = tuple(
                (_elements(self._column(name)), flat) for name, flat in flats.items()
            )
            # Counting into an index the cache holds has no misses to
            # overlap: looking ahead would only cost its hashing. (The
            # other loops keep their lookahead: they read each id's
            # lookup back from a ring ahead / 2 steps later.)
            if tallies and kind.KEYED and index_nbytes(state.sparse) <= _IN_CACHE:
                distance = 0
            else:
                distance = ahead * _SKEWED_AHEAD if survey.skewed else ahead
            done, stopped = kernels.upsert_accumulate(
                state.sparse,
                state.dense,
                m,
                arr,
                sums or _NO_SUMS,
                positions,
                stop,
                exact,
                tallies,
                candidates,
                distance,
            )
            m, stop = int(done), int(stopped)
            if stop < 0:
                return m, positions
            if not members and m < _FIRST_ROOM < arr.shape[0] - stop:
                guessed = True
                members = _FIRST_ROOM
                tallies = countable
            elif not members and arr.shape[0] - stop <= _FIRST_ROOM:
                # A short batch: room for every id it has left costs less
                # than estimating how many are distinct.
                members = m + arr.shape[0] - stop
            elif not members or (guessed and m >= members):
                members_before_room, guessed = guessed, False
                # The whole batch past a first room: its distinct ids and
                # the members before it bound the counter, where m plus the
                # ids to come would count the room's ids twice.
                base, first = (start, 0) if members else (m, stop)
                estimate, _, _ = kernels.distinct_estimate(arr, first, arr.shape[0])
                estimate = _with_margin(estimate)
                members = max(m + 1, base + estimate + 1)
                if members_before_room and not start:
                    # A new counter starts the batch again in tables sized
                    # for it, where every id it meets is new: the first
                    # room's ids would otherwise add to rows in a pass
                    # whose other ids count in slots. The index's entries
                    # for those ids are stale from here.
                    m = stop = 0
                    exact = False
                tallies = countable and arr.shape[0] - stop >= _REPEATS * estimate
            elif m >= members:
                members = 2 * m
            exact = self._grow(m, members, top, arr.shape[0], exact)

    def _grow(self, m: int, members: int, top: int, count: int, exact: bool) -> bool:
        """Grow for ``members`` (``m`` in now, ids up to ``top``, a batch of
        ``count`` ids); whether the index answers every id exactly from
        here (``exact`` of :func:`~sparseset.kernels.upsert_accumulate`),
        as it did before (``exact``) if it was not made anew.

        A keyed index made anew holds ``dense[:m]`` alone. A flat one holds
        garbage past them (and stale positions where a batch started
        again): it is filled with NOWHERE and given their positions again
        where it has no more slots than the batch has ids (the fill then
        costs less than the reads of ``dense`` it spares).
        """
        engine = self._engine
        state = self._state()
        before = state.sparse
        engine.make_room(m, members, top)
        keyed = engine.kind.module.KEYED
        if keyed and engine.capacity < members:
            # make_room grew a full dense alone: the index too, so that the
            # next pass trusts it from its first id.
            engine.make_room(m, members, top)
        sparse = state.sparse
        if exact and sparse is before:
            return True
        if keyed:
            return sparse is not before
        if isinstance(sparse, np.ndarray) and sparse.shape[0] <= count:
            sparse.fill(_NO_SLOT)
            sparse[state.dense[:m]] = np.arange(m, dtype=sparse.dtype)
            return True
        return False

    def _check_sums(
        self, arr: np.ndarray, scalar: bool, source: Any, values: dict[str, np.ndarray]
    ) -> None:
        """Raise if an integer column's sum for some id would not fit it.

        A bound first (the column's extremes plus every positive, or every
        negative, value): in a counter's life it settles the question; only
        where it cannot does an exact pass group the occurrences by id.
        """
        count = arr.shape[0]
        n = len(self)
        # Each id's row (-1 for ids not yet members), looked up once: for a
        # batch much shorter than the store, the rows it touches bound its
        # sums at a fraction of a pass over the whole column.
        positions = None
        for name, rows in values.items():
            if rows.dtype.kind not in "iu":
                continue
            column = _elements(self._column(name)[:n])
            if count * _LOOKUP_ROWS < n:
                if positions is None:
                    positions = self._engine.index(arr)
                column = column[positions[positions >= 0]]
            low, high = _int_range(column.dtype)
            top = int(column.max()) if column.size else 0
            bottom = int(column.min()) if column.size else 0
            flat = _elements(rows)
            times = count if flat.shape[0] == 1 else 1
            if flat.size == 1:
                # One value for every occurrence (a count): no numpy calls.
                one = int(flat[0, 0])
                up, down = max(one, 0) * times, min(one, 0) * times
            else:
                up = int(flat.clip(min=0).sum(dtype=np.float64)) * times
                down = int(flat.clip(max=0).sum(dtype=np.float64)) * times
            # Float sums are inexact: a margin of one part in 2**20 covers
            # the rounding of up to 2**30 additions.
            slack = (abs(up) + abs(down)) // 2**20 + 1
            fits_up = max(top, 0) + up + slack <= high
            if fits_up and min(bottom, 0) + down - slack >= low:
                continue
            if positions is None:
                positions = self._engine.index(arr)
            every = np.broadcast_to(flat, (count, flat.shape[1]))
            self._check_sums_exactly(arr, scalar, source, name, every, positions)

    def _check_sums_exactly(
        self,
        arr: np.ndarray,
        scalar: bool,
        source: Any,
        name: str,
        flat: np.ndarray,
        positions: np.ndarray,
    ) -> None:
        column = self._column(name)
        low, high = _int_range(column.dtype)
        keys, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
        sums = np.zeros((keys.shape[0], flat.shape[1]), dtype=object)
        np.add.at(sums, inverse, flat.astype(object))
        rows = _elements(column)
        for u, k in enumerate(first):
            p = positions[k]
            start = rows[p].astype(object) if p >= 0 else 0
            total = start + sums[u]
            bad = (total < low) | (total > high)
            if bad.any():
                value = total[int(np.argmax(bad))]
                where = describe(arr, int(k), scalar, source)
                raise ValueError(
                    f"{self._column_label(name)}: the sum for {where} would be "
                    f"{value}, outside the range of {column.dtype} [{low}, {high}]; "
                    "nothing was changed"
                )

    def _positions(self, ids: Any) -> tuple[np.ndarray, bool]:
        """Dense positions of ids that must all be members (else KeyError)."""
        found = self._key_map.rows_of(ids, self._engine.state)
        if found is not None:
            return found
        keys, scalar = self._key_map.keys_of(ids, "nothing was read or changed")
        positions = self._engine.index_ids(keys, scalar)
        if positions.shape[0] and positions.min() < 0:
            k = int(np.argmax(positions < 0))
            raise KeyError(self._key_map.lacking(ids, k, scalar))
        return positions, scalar

    @critical  # unlocked: Ctrl-C waits by this mark, not exclusive's
    def set(self, ids: Any, /, **columns: Any) -> None:
        """Replace column values of ids that must all be members.

        Raises ``KeyError`` naming the first absent id, changing nothing.

        Raises
        ------
        TypeError
            If an id is not an integer, or a value cannot be cast to its column with
            ``casting='same_kind'``.
        ValueError
            If an id is negative or the ids are not one-dimensional.
        UnknownColumnError
            If a keyword names a column the store does not have (a ``KeyError`` and a
            ``TypeError``).
        KeyError
            If an id is not a member; nothing changes.

        Notes
        -----
        O(k) for k ids, times the row width.

        Examples
        --------
        >>> store = ComponentStore({"hp": "i4"}); store.add([4, 5])
        2
        >>> store.set(5, hp=9); store["hp"].tolist()
        [0, 9]
        """
        x = (
            ids
            if type(ids) is int
            else int(ids)
            if type(ids) is _I64
            else scalar_id(ids)
        )
        if 0 <= x < INT64_END:
            # One id and plain values, where every value is one numpy would
            # store exactly as _prepare does, with nothing to convert first
            # (and no container among them, whose lock exclusive() would
            # take too): the row is written in place under this store's
            # guard, as exclusive() holds it, without its look through the
            # arguments. Plain values: a Python float or an int64-range int
            # for a float column, an int that fits an integer column, a
            # bool for a bool column; a tuple or list of floats the length
            # of a float column's row; an array of the column's dtype and
            # row shape (see _plain_spec). The test is inline: a method's
            # frame would cost a twentieth of the call.
            specs = self._plain_specs
            plain = True
            for name, value in columns.items():
                spec = specs.get(name)
                if spec is None:
                    plain = False
                    break
                one, kind, low, high, row_length, exact = spec
                of = type(value)
                if one:
                    if of is float:
                        plain = kind == "f"
                    elif of is int:
                        plain = low <= value <= high
                    else:
                        plain = of is bool and kind == "b"
                elif of is tuple or of is list:
                    plain = len(value) == row_length and _FLOAT.issuperset(
                        map(type, value)
                    )
                else:
                    plain = of is np.ndarray and (value.dtype, value.shape) == exact
                if not plain:
                    break
            if plain:
                row = columns
                guard = self._guard
                guard.acquire()  # the guard is its own lock
                guard.writing += 1
                try:
                    # _set_one's work, inline: its frame and key_of's cost
                    # a tenth of the call. A miss goes to _set_one to raise.
                    index_of = self._key_map.index_of
                    key = x if index_of is None else index_of(x)
                    state = self._engine.state
                    sparse = state.flat_sparse
                    if sparse is None:
                        p = state.index_key(key) if key >= 0 else -1
                    else:  # SetState.index_key on a flat index, inline
                        p = -1
                        if 0 <= key < len(sparse):
                            q = sparse[key]
                            if q < state.n and state.flat_dense[q] == key:
                                p = q
                    if p < 0:
                        self._set_one(x, ids, columns, row)
                    attributes = self._attributes
                    for name, value in row.items():
                        getattr(state, attributes[name])[p] = value
                    if self._clock is not None:
                        self._stamp(p, 0, 0)
                finally:
                    guard.version += 1
                    guard.writing -= 1
                    guard.release()
                return
        self._set(ids, **columns)

    @exclusive
    def _set(self, ids: Any, /, **columns: Any) -> None:
        x = scalar_id(ids)
        if 0 <= x < INT64_END:
            self._set_one(x, ids, columns, None)
            return
        positions, _ = self._positions(ids)
        self._scatter(positions, self._prepare(positions.shape[0], columns))
        self._stamp(positions, 0, 0)

    def _set_one(
        self, x: int, ids: Any, columns: dict[str, Any], row: dict[str, Any] | None
    ) -> None:
        """Write the row of one id ``x`` (a non-negative int; ``ids`` is what
        the caller passed, for the message) in place: ``row``, plain values
        (see :meth:`set`), or else ``columns``, validated as a
        batch's are, after the id is found. The caller holds the guard."""
        state = self._engine.state
        p = state.index_key(self._key_map.key_of(x))
        if p < 0:
            raise KeyError(self._key_map.lacking(ids, 0, True))
        if row is None:
            row = {name: r[0] for name, r in self._prepare(1, columns).items()}
            state = self._engine.state
        attributes = self._attributes
        for name, value in row.items():
            getattr(state, attributes[name])[p] = value
        if self._clock is not None:
            self._stamp(p, 0, 0)

    def get(self, ids: Any) -> dict[str, Any]:
        """The rows of ids that must all be members, column by column.

        A batch gives arrays with a leading axis in the order of ``ids``;
        one id gives single rows. Raises ``KeyError`` naming the first
        absent id. One key that cannot be an id (a negative, a float, a
        string, ``None``) is absent too, as ``dict`` answers; in a batch it
        raises ``ValueError`` or ``TypeError`` (see ``docs/contract.md``).

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.
        KeyError
            If an id is not a member; nothing changes.

        Notes
        -----
        O(k) for k ids, times the row width of every column (the rows are copied out).

        Examples
        --------
        >>> store = ComponentStore({"pos": ("f8", 2)})
        >>> store.add([4, 5], pos=[[1, 2], [3, 4]])
        2
        >>> store.get([5])["pos"].tolist(), store.get(4)["pos"].tolist()
        ([[3.0, 4.0]], [1.0, 2.0])
        """
        guard = self._guard
        version = guard.version
        # One id, a Python int or a numpy one (``e[0]`` of a handle array),
        # is read on the scalar kernel with no lock, and the answer kept if
        # no writer overlapped it (see .locking).
        x = (
            ids
            if type(ids) is int
            else int(ids)
            if type(ids) is _I64
            else scalar_id(ids)
        )
        if 0 <= x < INT64_END and not guard.writing:
            # _get_one and _row, inline: their frames were a fifth of the call.
            try:
                index_of = self._key_map.index_of
                key = x if index_of is None else index_of(x)
                if key < 0:
                    key = self._key_map.key_of(x)  # raises, saying why
                state = self._engine.state
                sparse = state.flat_sparse
                if sparse is None:
                    p = state.index_key(key)
                else:  # SetState.index_key on a flat index, inline
                    p = -1
                    if key < len(sparse):
                        q = sparse[key]
                        if q < state.n and state.flat_dense[q] == key:
                            p = q
                if p >= 0:
                    row = {}
                    for name, column in self._attributes.items():
                        row[name] = getattr(state, column)[p].copy()
            except Exception:
                if guard.version == version and not guard.writing:
                    raise
            else:
                if guard.version == version and not guard.writing:
                    if p < 0:
                        raise KeyError(self._key_map.lacking(ids, 0, True))
                    return row
        return self._get(ids)

    @exclusive
    def _get(self, ids: Any) -> dict[str, Any]:
        x = scalar_id(ids)
        if 0 <= x < INT64_END:
            return self._get_one(self._key_map.key_of(x), ids)
        if is_one_key(ids) and one_id(ids) is None:
            # As dict answers a key it cannot hold: absent (a batch raises).
            raise KeyError(f"{ids!r} cannot be an id, so it is not in the store")
        positions, scalar = self._positions(ids)
        if scalar:
            return self._row(int(positions[0]))
        return {name: self._column(name)[positions] for name in self._schema}

    def _get_one(self, key: int, source: Any) -> dict[str, Any]:
        """The row of one key (an int64 id of the index), on the scalar
        kernel; ``source`` is what the caller passed, for the message."""
        p = self._engine.index_one(key)
        if p < 0:
            raise KeyError(self._key_map.lacking(source, 0, True))
        return self._row(p)

    def _row(self, p: int) -> dict[str, Any]:
        """Copies of row ``p`` of every column."""
        state = self._state()
        row = {}
        # A plain loop: a comprehension's frame costs a third of the call.
        for name, column in self._attributes.items():
            row[name] = getattr(state, column)[p].copy()
        return row

    @property
    def jit(self) -> Any:
        """A twin sharing this store's arrays, for ``@njit`` systems.

        O(c) for c columns the first time (the twin is built over the arrays,
        no copy); O(1) afterwards.

        It has ``contains(i)``, ``index(i)``, ``add(i)`` (zeroed rows; True
        if new; grows), ``remove(i)`` (False if absent), ``size``, ``ids``
        and one attribute per column (``js.pos``: the rows of the members).
        Its type is cacheable, so a ``@njit(cache=True)`` function taking it
        compiles once per machine (see :mod:`sparseset.jit`). From the first
        use on, the store and the twin share one state: what either changes,
        the other sees. Asking again returns the same twin.

        Examples
        --------
        >>> from numba import njit
        >>> store = ComponentStore({"hp": "i4"}); store.add([1, 2], hp=[5, 0])
        2
        >>> @njit
        ... def reap(js):
        ...     k = 0
        ...     while k < js.size:
        ...         if js.hp[k] <= 0:
        ...             js.remove(js.ids[k])  # the last row moved here: stay
        ...         else:
        ...             k += 1
        >>> reap(store.jit); store.ids.tolist()
        [1]
        """
        entities = self._key_map.twin_entities()
        # A store that stamps its rows (a tracked World store) gets a twin
        # that logs its removals for the readers.
        logs = self._clock is not None and entities is not None
        self._settle_written()
        return self._engine.hand_out_twin(self._stored, entities, logs)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # A store is a table, not an id array: were np.asarray(store) the
        # ids, np.allclose(store, x) would compare ids without a word.
        raise TypeError(
            f"a {type(self).__name__} is not an array: use .ids for the ids, "
            "store[name] for a column, or .get(ids) for rows"
        )

    def __getitem__(self, name: str) -> np.ndarray:
        """A writable view of column ``name`` over the current members."""
        return self._column(name)[: len(self)]

    def __setitem__(self, name: str, value: Any) -> None:
        """Assign a whole column (broadcast and cast like ``add``'s values).

        ``store["pos"] += v`` lands here with the view it already updated in
        place, so that case costs nothing.
        """
        column = self._column(name)[: len(self)]
        if not is_same_view(value, column):
            column[...] = self._prepare(len(self), {name: value})[name]

    # -- removal ----------------------------------------------------------

    def discard(self, ids: Any) -> int:
        """Remove the ids that are members with their rows; returns how many.

        Each removal moves the last row of every column into the hole
        (swap-and-pop), inside one kernel pass.

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.

        Notes
        -----
        O(k) for k ids, times the row width (each removal moves the last row of every
        column).

        Examples
        --------
        >>> store = ComponentStore({"hp": "i4"})
        >>> store.add([1, 2, 3], hp=[10, 20, 30])
        3
        >>> store.discard([1, 9]), store.ids.tolist(), store["hp"].tolist()
        (1, [3, 2], [30, 20])
        """
        arr, _ = self._engine.removal_batch(ids)
        return self._discard_rows(arr)

    def _discard_rows(self, arr: np.ndarray) -> int:
        state = self._state()
        n = state.n
        state.n = kernels.discard_rows(
            state.sparse,
            state.dense,
            n,
            kernel_ids(arr),
            self._rows(),
            *kernels.DISCARD_TUNING,
        )
        return int(n - state.n)

    def remove(self, ids: Any) -> int:
        """Remove ids that must all be members; ``KeyError`` and no change if not.

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.
        KeyError
            If an id is not a member; nothing changes.

        Notes
        -----
        O(k) for k ids, times the row width.

        Examples
        --------
        >>> store = ComponentStore({"hp": "i4"}); store.add([1, 2])
        2
        >>> store.remove([2]), store.ids.tolist()
        (1, [1])
        """
        arr, scalar = self._engine.removal_batch(ids)
        self._engine.require_members(arr, scalar, ids)
        return self._discard_rows(arr)

    def clear(self) -> None:
        """Remove every id in O(1); the arrays are kept for reuse.

        Examples
        --------
        >>> store = ComponentStore({"hp": "i4"}); store.add([1]); store.clear()
        1
        >>> len(store)
        0
        """
        self._written_range = None
        self._engine.clear()

    # -- order ------------------------------------------------------------

    def sort(self, key: Any = None) -> None:
        """Reorder the members and every column's rows together.

        Parameters
        ----------
        key : None, str or array, optional
            ``None`` sorts by id, ascending. A column name sorts by that
            column (rows must be single values). An array gives one sort
            key per member, aligned with :attr:`ids`. The sort is stable.

        Raises
        ------
        ValueError
            If ``key`` is an array not aligned with the members, or names a column whose
            rows are not single values.
        UnknownColumnError
            If ``key`` names a column the store does not have.

        Notes
        -----
        O(n log n) for n members, plus O(n) per column to move the rows.

        Examples
        --------
        >>> store = ComponentStore({"hp": "i4"})
        >>> store.add([5, 1, 3], hp=[7, 9, 8])
        3
        >>> store.sort(); store.ids.tolist(), store["hp"].tolist()
        ([1, 3, 5], [9, 8, 7])
        >>> store.sort(key="hp"); store.ids.tolist()
        [5, 3, 1]
        >>> store.sort(key=-store["hp"]); store.ids.tolist()
        [1, 3, 5]
        """
        if key is None:
            self._permute(np.argsort(self._members(), kind="stable"))
            return
        if isinstance(key, str):
            column = self[key]
            if column.ndim != 1:
                raise ValueError(
                    f"column {key!r} has rows of shape {column.shape[1:]}, not "
                    f"single values; pass key=an array of one value per member, "
                    f"such as store[{key!r}][:, 0]"
                )
            values = column
        else:
            values = np.asarray(key)
            if values.shape != (len(self),):
                raise ValueError(
                    f"key must hold one value per member: expected shape "
                    f"{(len(self),)}, got {values.shape}"
                )
        self._permute(np.argsort(values, kind="stable"))

    def _permute(self, order: np.ndarray) -> None:
        """Put member ``order[k]`` (and its rows) at position k."""
        self._settle_written()
        state = self._state()
        n = state.n
        members = state.dense[:n]
        members[...] = members[order]
        kernels.reindex(state.sparse, state.dense, 0, n)
        for name in self._stored:
            rows = self._array(name)[:n]
            rows[...] = rows[order]
        state.epoch += 1

    def sort_as(self, other: Any) -> None:
        """Put the members shared with ``other`` first, in ``other``'s order.

        ``other`` is a :class:`~sparseset.SparseSet`, a store, or an array
        of ids. Members not in ``other`` follow, in no promised order. A
        join of two stores sorted alike reads both in the same direction,
        which keeps the memory access sequential.

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.

        Notes
        -----
        O(n + m) for n members and m ids of ``other``, plus O(n) per column to move the
        rows.

        Examples
        --------
        >>> a = ComponentStore({"hp": "i4"}); a.add([1, 2, 3, 4], hp=[1, 2, 3, 4])
        4
        >>> b = ComponentStore({}); b.add([3, 9, 1])
        3
        >>> a.sort_as(b); a.ids[:2].tolist(), a["hp"][:2].tolist()
        ([3, 1], [3, 1])
        """
        ids = self._order_of(other)
        state = self._state()
        if np.may_share_memory(ids, state.dense):
            ids = ids.copy()
        kernels.pack_front(
            state.sparse, state.dense, state.n, 0, kernel_ids(ids), self._rows()
        )
        state.epoch += 1

    def _order_of(self, other: Any) -> np.ndarray:
        """The ids of ``other`` in its order, as keys of this store."""
        if isinstance(other, ComponentStore | SparseSet):
            return np.asarray(other.ids)
        arr, scalar = as_ids(other)
        reject_negative(arr, scalar)
        return arr

    # -- membership -------------------------------------------------------

    def contains(self, ids: Any) -> Any:
        """Membership of each id (see :meth:`SparseSet.contains`).

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.

        Notes
        -----
        O(k) for k ids; large batches are shared out over the library's threads.

        Examples
        --------
        >>> store = ComponentStore({}); store.add([4])
        1
        >>> store.contains([4, 5]).tolist()
        [True, False]
        """
        found = holds_lock_free(self._guard, self._engine, ids)
        return self._contains(ids) if found is None else found

    @exclusive
    def _contains(self, ids: Any) -> Any:
        return self._engine.contains(ids)

    def index(self, ids: Any) -> Any:
        """Row of each id, -1 where absent (see :meth:`SparseSet.index`).

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.

        Notes
        -----
        O(k) for k ids.

        Examples
        --------
        >>> store = ComponentStore({}); store.add([4, 6])
        2
        >>> store.index(6)
        1
        """
        return self._engine.index(ids)

    @property
    def ids(self) -> np.ndarray:
        """The member ids, aligned with the rows of every column (read-only).

        O(1): a view, no copy.

        Examples
        --------
        >>> store = ComponentStore({}); store.add([4, 6])
        2
        >>> store.ids.tolist()
        [4, 6]
        """
        view = self._engine.members()
        view.flags.writeable = False
        return view

    # -- tables: Arrow, pandas, Parquet -----------------------------------

    def to_arrow(self, id: str = "id") -> Any:
        """The store as a ``pyarrow.Table``: the ids, then one column per field.

        Zero-copy: the id column and every column except bools are views
        of the store's buffers, so the table costs microseconds at any
        size, and it reflects later in-place updates to the rows it
        covers (copy it, or write it out, before changing the store if it
        must not). A row shape ``(k,)`` becomes a ``FixedSizeList<k>``
        column (nested for more dimensions); a dtype without an Arrow type
        (complex, fixed-width strings, records; timestamps in seconds,
        which Parquet cannot hold) is fixed-size binary with the numpy
        dtype in the field's metadata, which :meth:`from_arrow` reads back.
        The table's metadata names the store's index, which the readers
        take back: ``"auto"`` for a store whose index adapts (the
        default), so that it adapts again once read, else its kind.
        Needs pyarrow (``pip install "sparseset[arrow]"``).

        Parameters
        ----------
        id : str, optional
            Name of the id column (``ValueError`` if a field has it).

        Raises
        ------
        ImportError
            If pyarrow is not installed.

        Notes
        -----
        O(c) for c columns: the table shares the store's buffers.

        Examples
        --------
        >>> store = ComponentStore({"pos": ("f8", 2), "hp": "i4"})
        >>> store.add([7, 3], pos=[[0, 1], [2, 3]], hp=[70, 30])
        2
        >>> table = store.to_arrow()
        >>> table.schema
        id: int32 not null
        pos: fixed_size_list<item: double>[2] not null
          child 0, item: double
        hp: int32 not null
        -- schema metadata --
        sparseset: '{"index": "auto"}'
        >>> table.column("pos").to_pylist()
        [[0.0, 1.0], [2.0, 3.0]]
        """
        from ..io.tabular import store_to_arrow

        index = self._key_map.table_kind(self.ids, self._engine.index_name)
        return store_to_arrow(self, id, index)

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        id: str = "id",
        schema: Any = None,
        index: str | None = None,
    ) -> ComponentStore:
        """A new store holding the rows of an Arrow table.

        ``table`` is a ``pyarrow.Table`` or ``RecordBatch``, or anything
        ``pyarrow.table()`` takes (a polars or pandas DataFrame, any
        object exporting ``__arrow_c_stream__``). Its rows are added as
        :meth:`add` adds them: a repeated id takes its last row, a
        negative or null id raises, and a failure builds nothing.

        Parameters
        ----------
        table : table-like
            The rows.
        id : str, optional
            The id column.
        schema : dict or structured dtype, optional
            The fields to read, as the constructor takes them; values are
            cast as :meth:`add` casts them. Without it, every other column
            is a field, its dtype and row shape inferred from its Arrow
            type (a ``FixedSizeList<k>`` is rows of ``(k,)``).
        index : {"flat", "paged", "hash"}, optional
            The index kind; by default the one the table was written with
            (:meth:`to_arrow` records it), else the one
            :func:`~sparseset.sets.index_kinds.choose_kind` picks from the
            ids' range and density: ``"flat"`` if the largest id is below
            ``2**16`` or below 8 times the number of rows, else
            ``"paged"`` if the ids are below ``2**48`` and span at most 8
            times their number, else ``"hash"`` (so a few ids near
            ``2**30`` take a page of index, not gigabytes).

        Raises
        ------
        KeyError
            The id column, or a field of ``schema``, is not in the table.
        ValueError
            A null anywhere (naming column and row), a row shape unlike
            the schema's, or ids :meth:`add` refuses.
        TypeError
            A column of a type no store holds (strings, variable-length
            lists, dictionaries), or ids that are not integers.

        Notes
        -----
        O(n) per column for n rows (the rows are added as ``add`` adds them).

        Examples
        --------
        >>> import pyarrow as pa
        >>> table = pa.table({"id": [4, 2, 4], "hp": [1, 2, 3]})
        >>> store = ComponentStore.from_arrow(table)
        >>> store.ids.tolist(), store["hp"].tolist()
        ([4, 2], [3, 2])
        """
        from ..io.tabular import store_from_arrow

        return store_from_arrow(cls, table, id, schema, index, choose=choose_kind)

    def to_pandas(self, id: str = "id") -> Any:
        """The store as a ``pandas.DataFrame`` indexed by id (a copy).

        A field with rows of shape ``(k,)`` becomes the ``k`` columns
        ``name_0 .. name_{k-1}``, and one of shape ``(a, b)`` the columns
        ``name_0_0 .. name_{a-1}_{b-1}`` (C order); :meth:`from_pandas`
        joins them back. Record fields have no pandas column type
        (``TypeError``: use :meth:`to_arrow`). Needs pandas
        (``pip install "sparseset[pandas]"``).

        Raises
        ------
        ImportError
            If pandas is not installed.

        Notes
        -----
        O(n) per column for n members (a DataFrame copies the rows).

        Examples
        --------
        >>> store = ComponentStore({"pos": ("f8", 2), "hp": "i4"})
        >>> store.add([7, 3], pos=[[0, 1], [2, 3]], hp=[70, 30])
        2
        >>> frame = store.to_pandas()
        >>> frame.columns.tolist(), frame.index.tolist(), frame.loc[3].tolist()
        (['pos_0', 'pos_1', 'hp'], [7, 3], [2.0, 3.0, 30.0])
        """
        from ..io.tabular import store_to_pandas

        return store_to_pandas(self, id)

    @classmethod
    def from_pandas(
        cls,
        frame: Any,
        id: str | None = None,
        schema: Any = None,
        index: str | None = None,
    ) -> ComponentStore:
        """A new store holding the rows of a ``pandas.DataFrame``.

        The ids are the frame's index (``id=None``) or the column ``id``.
        Without a ``schema``, each other column is a field, except that
        columns ``name_0 .. name_{k-1}`` (all of them, and no column
        ``name``) are one field ``name`` of rows ``(k,)``, as
        :meth:`to_pandas` writes them; pass ``schema`` to read a frame
        otherwise. Nullable pandas dtypes pass when they hold no null; a
        null raises ``ValueError`` naming column and row. Rows are added
        as :meth:`add` adds them (a repeated id takes its last row).
        Without ``index``, the kind is the one
        :func:`~sparseset.sets.index_kinds.choose_kind` picks from the ids'
        range and density (see :meth:`from_arrow`).

        Notes
        -----
        O(n) per column for n rows.

        Examples
        --------
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"v_0": [1.0, 2.0], "v_1": [3.0, 4.0]}, index=[8, 9])
        >>> store = ComponentStore.from_pandas(frame)
        >>> store.schema, store.get(9)["v"].tolist()
        ({'v': (dtype('float64'), (2,))}, [2.0, 4.0])
        """
        from ..io.tabular import store_from_pandas

        return store_from_pandas(cls, frame, id, schema, index, choose=choose_kind)

    def to_parquet(self, path: str | os.PathLike[str], id: str = "id") -> None:
        """Write the store to one Parquet file, atomically.

        The file holds the :meth:`to_arrow` table, with page checksums;
        it is written next to ``path`` and renamed over it, so a crash
        never leaves half a file. Needs pyarrow.

        Raises
        ------
        ImportError
            If pyarrow is not installed.
        OSError
            If the file cannot be written.

        Notes
        -----
        O(n) per column for n members.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "hp.parquet"
        >>> store = ComponentStore({"hp": "i4"}); store.add([5, 1], hp=[50, 10])
        2
        >>> store.to_parquet(path)
        >>> ComponentStore.read_parquet(path)["hp"].tolist()
        [50, 10]
        """
        from ..io.parquet import write_table

        write_table(self.to_arrow(id), path)

    @classmethod
    def read_parquet(
        cls,
        path: str | os.PathLike[str],
        id: str = "id",
        schema: Any = None,
        index: str | None = None,
    ) -> ComponentStore:
        """A new store from a Parquet file (any writer's, not only ours).

        Arguments as for :meth:`from_arrow`, the index kind included: by
        default the one the file was written with, else the one
        :func:`~sparseset.sets.index_kinds.choose_kind` picks from the
        ids (a file pandas wrote with ids up to ``2**40`` loads without
        ``index=``). Raises ``FileNotFoundError``
        for a missing file and :class:`~sparseset.FormatError` for one
        that is truncated or corrupted (page checksums are verified) or
        does not hold a store (the message says what :meth:`from_arrow`
        found wrong: no id column, a null, a column of strings, ...).

        Notes
        -----
        O(n) per column for n rows, read and then added.

        Examples
        --------
        >>> ComponentStore.read_parquet("/nonexistent/a.parquet")
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/a.parquet'
        """
        from ..io.parquet import read_store

        return read_store(cls, path, id, schema, index, choose=choose_kind)

    def __contains__(self, x: object) -> bool:
        found = holds_lock_free(self._guard, self._engine, x)
        return self._holds(x) if found is None else found

    @exclusive
    def _holds(self, x: object) -> bool:
        return self._engine.holds(x)

    def __len__(self) -> int:
        return len(self._engine)

    def __iter__(self) -> Iterator[int]:
        return iter(self._engine.members().tolist())

    def __repr__(self) -> str:
        columns = ", ".join(
            f"{name}: {dtype.str.lstrip('<>|=')}{list(shape) if shape else ''}"
            for name, (dtype, shape) in self._schema.items()
        )
        return f"{type(self).__name__}({{{columns}}}, size={len(self)})"

    def __getstate__(self) -> dict[str, Any]:
        n = len(self)
        return {
            # dtype objects, not their .str: a record column's fields survive.
            "schema": dict(self._schema),
            "capacity": self.capacity,
            "index": self._engine.index_name,
            "ids": self.ids.copy(),
            "columns": {name: self._column(name)[:n].copy() for name in self._schema},
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        ComponentStore.__init__(
            self, state["schema"], state["capacity"], state.get("index", "flat")
        )
        self.add(state["ids"], **state["columns"])


__all__ = ["ComponentStore", "UnknownColumnError"]

"""SparseMap: a mapping from integer id to one value, on a one-column store.

Mirrors ``dict`` for single ids and takes whole id arrays wherever a key
goes; its storage is a :class:`~sparseset.ComponentStore` with one column.
"""

from __future__ import annotations

import copy
from collections.abc import ItemsView, Iterator, Mapping, MutableMapping, ValuesView
from typing import Any

import numpy as np

from ..sets.ids import is_one_key, one_id, scalar_id
from ..sets.index_kinds import choose_kind
from ..sets.locking import Guarded, atomic, guard_of, share_guard
from .component_store import ComponentStore


class _MapStore(ComponentStore):
    """A SparseMap's store: its one column is the map's values to a user."""

    def _column_label(self, name: str) -> str:
        return "SparseMap values"


def _same_value(held: Any, value: Any) -> bool:
    """Whether a stored value (a numpy scalar or row) equals ``value``, as
    ``dict``'s views compare values: identity, else equality (of every
    element, for a row)."""
    if held is value:
        return True
    try:
        return bool(np.array_equal(held, value))
    except (TypeError, ValueError):
        return False


class _Items(ItemsView[int, Any]):
    """``m.items()``: iterates the pairs held at its start that the map
    still holds (see :meth:`SparseMap._pairs`)."""

    _mapping: SparseMap

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        return self._mapping._pairs()

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        key, value = item
        try:
            held = self._mapping[key]
        except KeyError:
            return False
        return _same_value(held, value)


class _Values(ValuesView[Any]):
    """``m.values()``: the values of :class:`_Items`' pairs."""

    _mapping: SparseMap

    def __iter__(self) -> Iterator[Any]:
        return (value for _, value in self._mapping._pairs())

    def __contains__(self, value: object) -> bool:
        return any(_same_value(held, value) for held in self)


@atomic(unlocked=("__contains__", "__getitem__", "__len__"))
class SparseMap(MutableMapping[int, Any], Guarded):
    """A mapping from integer id to one value, on a one-column store.

    Mirrors ``dict`` for single ids (``m[5] = 1.0``, ``m[5]``, ``del m[5]``)
    and takes whole id arrays in ``m[ids]``, ``m[ids] = values``, ``add``,
    ``discard``, ``remove`` and ``contains``.

    Parameters
    ----------
    dtype : numpy dtype
        Dtype of the values.
    shape : int or tuple, optional
        Shape of one value (a row); scalar values by default.
    capacity, index
        As for :class:`ComponentStore`.

    Examples
    --------
    >>> m = SparseMap("f8")
    >>> m[5] = 1.5
    >>> m[[7, 9]] = [2.0, 3.0]
    >>> float(m[5]), m[[9, 7]].tolist(), len(m)
    (1.5, [3.0, 2.0], 3)
    >>> del m[7]; sorted(m)
    [5, 9]
    """

    def __init__(
        self, dtype: Any, shape: Any = (), capacity: int = 0, index: str = "auto"
    ) -> None:
        self._store = _MapStore({"value": (dtype, shape)}, capacity, index)
        # The map's calls and its store's are atomic together.
        share_guard(self, self._store)

    @property
    def store(self) -> ComponentStore:
        """The underlying one-column store (column ``"value"``).

        O(1).
        """
        return self._store

    @property
    def kind(self) -> str:
        """The index kind of the keys: ``"flat"``, ``"paged"`` or ``"hash"``.

        O(1).

        Examples
        --------
        >>> SparseMap("f8", index="hash").kind
        'hash'
        """
        return self._store.kind

    @property
    def nbytes(self) -> int:
        """Bytes held by the index, the keys and the values.

        O(1).

        Examples
        --------
        >>> SparseMap("f8", capacity=10).nbytes
        160
        """
        return self._store.nbytes

    @property
    def ids(self) -> np.ndarray:
        """The keys as a read-only array, aligned with :attr:`data`.

        O(1): a view, no copy.

        Examples
        --------
        >>> m = SparseMap("i4"); m[3] = 1; m.ids.tolist()
        [3]
        """
        return self._store.ids

    @property
    def data(self) -> np.ndarray:
        """The values as a writable array view, aligned with :attr:`ids`.

        O(1): a view, no copy.

        Examples
        --------
        >>> m = SparseMap("i4"); m[[3, 4]] = [1, 2]; m.data *= 10; m[4]
        np.int32(20)
        """
        return self._store["value"]

    @data.setter
    def data(self, values: Any) -> None:
        self._store["value"] = values

    @property
    def jit(self) -> Any:
        """The jit twin of the underlying store (column ``value``).

        O(1) after the first use, as :attr:`ComponentStore.jit`.

        Examples
        --------
        >>> m = SparseMap("f8"); m.jit.add(3)
        True
        >>> 3 in m
        True
        """
        return self._store.jit

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # Without this numpy would read a map as a sequence, m[0], m[1], ...
        raise TypeError(
            "a SparseMap is not an array: use .ids for the keys and .data "
            "for the values"
        )

    def __getitem__(self, key: Any) -> Any:
        return self._store.get(key)["value"]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._store.add(key, value=value)

    def __delitem__(self, key: Any) -> None:
        if scalar_id(key) < 0 and is_one_key(key) and one_id(key) is None:
            raise KeyError(key)  # no id: absent, as dict answers
        self._store.remove(key)

    def __iter__(self) -> Iterator[int]:
        return (key for key, _ in self._pairs())

    def _pairs(self) -> Iterator[tuple[int, Any]]:
        """The pairs held when the iteration starts, each yielded only while
        the map still holds its key, with the value it holds then.

        Walks a snapshot; while no call that takes the lock has run since
        (the loop only reads, as most loops do), the snapshot is the map
        and its pairs are yielded as they are; once one has (here or on
        another thread), each pair is read again, live, and a key deleted
        meanwhile is skipped. So a loop may add and delete keys: it never
        yields a pair the map no longer holds, nor raises as ``dict`` does.
        """
        guard = guard_of(self)
        with guard.lock:
            ids, values = self.snapshot()
            version = guard.version  # stable while the lock is held
        for key, value in zip(ids, values, strict=True):
            if guard.version != version or guard.writing:
                try:
                    value = self[key]
                except KeyError:
                    continue
            yield key, value

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def __eq__(self, other: object) -> bool:
        # Mapping's __eq__ compares dicts of the values, which for rows
        # (arrays) has no single truth value: compare them whole here.
        if not isinstance(other, Mapping):
            return NotImplemented
        if len(self) != len(other):
            return False
        if isinstance(other, SparseMap):
            ids = self.ids
            return bool(other.contains(ids).all()) and bool(
                np.array_equal(self.data, other[ids])
            )
        for key, value in other.items():
            try:
                held = self[key]
            except KeyError:
                return False
            if not _same_value(held, value):
                return False
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable, like dict

    def items(self) -> ItemsView[int, Any]:
        """The ``(key, value)`` pairs; each iteration walks the pairs held
        at its start, skipping keys deleted meanwhile, so other threads (or
        the loop itself) may change the map while it runs.

        Notes
        -----
        O(1) to make the view; iterating it is O(n) for n keys.

        Examples
        --------
        >>> m = SparseMap("i4"); m[[3, 4]] = [1, 2]
        >>> for k, v in m.items():
        ...     del m[k]
        >>> len(m)
        0
        """
        return _Items(self)

    def values(self) -> ValuesView[Any]:
        """The values; each iteration walks them as :meth:`items` does.

        Notes
        -----
        O(1) to make the view; iterating it is O(n) for n keys.

        Examples
        --------
        >>> m = SparseMap("i4"); m[[3, 4]] = [1, 2]; [int(v) for v in m.values()]
        [1, 2]
        """
        return _Values(self)

    def snapshot(self) -> tuple[list[int], np.ndarray]:
        """The keys (a list) and a copy of the values, taken at one moment.

        Notes
        -----
        O(n) for n keys (the keys and values are copied).

        Examples
        --------
        >>> m = SparseMap("i4"); m[[3, 4]] = [1, 2]; m.snapshot()
        ([3, 4], array([1, 2], dtype=int32))
        """
        return self.ids.tolist(), self.data.copy()

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{k}: {v!r}"
            for k, v in zip(self.ids[:6].tolist(), self.data[:6].tolist(), strict=True)
        )
        more = ", ..." if len(self) > 6 else ""
        return f"{type(self).__name__}({{{shown}{more}}}, size={len(self)})"

    def add(self, ids: Any, values: Any = None) -> int:
        """Set the values of ids, adding the new ones; returns how many were new.

        Without ``values``, new keys get zeros and existing keys keep theirs.

        Raises
        ------
        TypeError
            If an id is not an integer, or a value cannot be cast to the map's dtype
            with ``casting='same_kind'``.
        ValueError
            If an id is negative or outside the index kind's range, or the values do not
            broadcast to the ids; nothing changes.

        Notes
        -----
        O(k) for k ids, amortised: growth doubles the index and the values.

        Examples
        --------
        >>> m = SparseMap("f4"); m.add([1, 2], [0.5, 1.5])
        2
        """
        if values is None:
            return self._store.add(ids)
        return self._store.add(ids, value=values)

    def add_at(self, ids: Any, values: Any) -> int:
        """Add each occurrence's value to its key's value: a counter.

        Missing keys start at zero; a repeated key adds once per occurrence
        (as ``np.add.at``; ``m[ids] += 1`` counts a repeat once). An integer
        sum that would not fit the dtype raises ``ValueError`` and changes
        nothing. Returns how many keys were new (see
        :meth:`ComponentStore.add_at`).

        Raises
        ------
        TypeError
            If an id is not an integer, or a value cannot be cast to the map's dtype
            with ``casting='same_kind'``.
        ValueError
            If an id is negative or outside the index kind's range, or the values do not
            broadcast to the ids; nothing changes.

        Notes
        -----
        O(k) for k occurrences, amortised as ``add``.

        Examples
        --------
        >>> counts = SparseMap("i8"); counts.add_at([1, 1, 2], 1)
        2
        >>> dict(counts.items())
        {1: np.int64(2), 2: np.int64(1)}
        """
        return self._store.add_at(ids, value=values)

    def discard(self, ids: Any) -> int:
        """Remove the ids that are keys; returns how many.

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
        >>> m = SparseMap("f4"); m[1] = 1.0; m.discard([1, 2])
        1
        """
        return self._store.discard(ids)

    def remove(self, ids: Any) -> int:
        """Remove ids that must all be keys (``KeyError`` and no change if not).

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
        O(k) for k ids.

        Examples
        --------
        >>> m = SparseMap("f4"); m[1] = 1.0; m.remove(1)
        1
        """
        return self._store.remove(ids)

    def contains(self, ids: Any) -> Any:
        """Whether each id is a key.

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
        >>> m = SparseMap("f4"); m[1] = 1.0; m.contains([1, 2]).tolist()
        [True, False]
        """
        return self._store.contains(ids)

    def index(self, ids: Any) -> Any:
        """Position of each id in :attr:`ids`, -1 where absent.

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
        >>> m = SparseMap("f4"); m[[5, 6]] = 0.0; m.index(6)
        1
        """
        return self._store.index(ids)

    def clear(self) -> None:
        """Remove every key in O(1).

        Notes
        -----
        O(1).

        Examples
        --------
        >>> m = SparseMap("f4"); m[1] = 1.0; m.clear(); len(m)
        0
        """
        self._store.clear()

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Set many keys at once, from what ``dict.update`` takes: a mapping
        or any object with ``keys()`` (read through ``keys()`` and
        ``__getitem__``), else an iterable of ``(key, value)`` pairs, where
        a later pair for a key wins. All or nothing: a bad key or value
        raises and changes nothing.

        Raises
        ------
        TypeError
            If keyword arguments are given (keys are integers), or ``other`` is
            neither a mapping nor an iterable of pairs.
        ValueError
            If an item of ``other`` is not a pair, or a key or value is refused
            as by ``m[key] = value``.

        Notes
        -----
        O(k) for k keys given, amortised as ``add``.

        Examples
        --------
        >>> m = SparseMap("i8"); m.update({1: 10, 2: 20}); m.update([(2, 5), (2, 6)])
        >>> dict(m.items())
        {1: np.int64(10), 2: np.int64(6)}
        """
        if kwargs:
            raise TypeError("SparseMap keys are integers; keyword updates don't apply")
        if isinstance(other, SparseMap):
            self.add(other.ids, other.data)
            return
        if isinstance(other, dict):
            staged = other
        elif hasattr(other, "keys"):
            staged = {key: other[key] for key in other.keys()}  # noqa: SIM118
        else:
            staged = dict(other)  # dict's own rules and errors for the pairs
        if staged:
            self.add(list(staged), list(staged.values()))

    def copy(self) -> SparseMap:
        """An independent copy (as ``dict.copy``; ``copy.copy`` gives one too).

        Notes
        -----
        O(n) for n keys, plus the index's size.

        Examples
        --------
        >>> m = SparseMap("i4"); m[1] = 1; c = m.copy(); c[2] = 2
        >>> sorted(m), sorted(c)
        ([1], [1, 2])
        """
        out = type(self).__new__(type(self))
        out._store = copy.copy(self._store)
        share_guard(out, out._store)
        return out

    __copy__ = copy

    def to_arrow(self, id: str = "id") -> Any:
        """The map as a ``pyarrow.Table`` of columns ``id`` and ``value``.

        Zero-copy, as :meth:`ComponentStore.to_arrow`.

        Raises
        ------
        ImportError
            If pyarrow is not installed.

        Notes
        -----
        O(1): the table shares the map's buffers.

        Examples
        --------
        >>> m = SparseMap("f8"); m[[4, 2]] = [0.5, 1.5]
        >>> m.to_arrow().to_pydict()
        {'id': [4, 2], 'value': [0.5, 1.5]}
        """
        return self._store.to_arrow(id)

    def to_pandas(self, id: str = "id") -> Any:
        """The map as a ``pandas.DataFrame`` indexed by id, column ``value``
        (``value_0 .. value_{k-1}`` for rows of shape ``(k,)``).

        Raises
        ------
        ImportError
            If pandas is not installed.

        Notes
        -----
        O(n) for n keys.

        Examples
        --------
        >>> m = SparseMap("i4", shape=2); m[3] = [1, 2]
        >>> m.to_pandas().to_dict(orient="index")
        {3: {'value_0': 1, 'value_1': 2}}
        """
        return self._store.to_pandas(id)

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        id: str = "id",
        value: str | None = None,
        dtype: Any = None,
        shape: Any = None,
        index: str | None = None,
    ) -> SparseMap:
        """A new map from an Arrow table's id column and one value column.

        ``value`` names the value column; by default the table's only
        other column. ``dtype`` and ``shape`` give the values' type
        (inferred from the column's Arrow type by default). The rules and
        errors are those of :meth:`ComponentStore.from_arrow`, the index
        kind's too: without ``index``, the one the table was written
        with, else the one :func:`~sparseset.sets.index_kinds.choose_kind`
        picks from the keys' range and density.

        Raises
        ------
        ImportError
            If pyarrow is not installed.
        KeyError
            If the id or the value column is not in the table.
        ValueError
            If a column holds a null, or the ids are ones ``add`` refuses.
        TypeError
            If a column is of a type no map holds, or the ids are not integers.

        Notes
        -----
        O(n) for n rows.

        Examples
        --------
        >>> import pyarrow as pa
        >>> m = SparseMap.from_arrow(pa.table({"id": [7, 9], "score": [0.5, 2.0]}))
        >>> float(m[9]), m.data.dtype
        (2.0, dtype('float64'))
        """
        from ..io.tabular import map_from_arrow

        return map_from_arrow(
            cls, table, id, value, dtype, shape, index, choose=choose_kind
        )

    @classmethod
    def from_pandas(
        cls,
        frame: Any,
        id: str | None = None,
        value: str | None = None,
        dtype: Any = None,
        shape: Any = None,
        index: str | None = None,
    ) -> SparseMap:
        """A new map from a ``pandas.DataFrame``: keys from its index (or
        column ``id``), values from one field (columns ``v_0 .. v_{k-1}``
        are one field ``v``, as in :meth:`ComponentStore.from_pandas`).
        Without ``index``, the kind is the one
        :func:`~sparseset.sets.index_kinds.choose_kind` picks from the
        keys' range and density.

        Raises
        ------
        ImportError
            If pandas is not installed.
        KeyError
            If ``id`` or ``value`` names a column the frame does not have.
        ValueError
            If the frame has more than one field and ``value`` is not given, or
            the keys hold nulls or ids ``add`` refuses.

        Notes
        -----
        O(n) for n rows.

        Examples
        --------
        >>> import pandas as pd
        >>> m = SparseMap.from_pandas(pd.DataFrame({"score": [1.5, 2.5]}, index=[3, 1]))
        >>> float(m[1])
        2.5
        """
        from ..io.tabular import map_from_pandas

        return map_from_pandas(
            cls,
            ComponentStore,
            frame,
            id,
            value,
            dtype,
            shape,
            index,
            choose=choose_kind,
        )

    def __getstate__(self) -> dict[str, Any]:
        return {"store": self._store}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._store = state["store"]
        share_guard(self, self._store)


__all__ = ["SparseMap"]

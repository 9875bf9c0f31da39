"""SparseSet: a set of non-negative integer ids on batch numba kernels.

The set owns three things (Briggs & Torczon 1993): ``sparse`` (id -> position
in dense; garbage where not a member), ``dense`` (the members, packed) and
``n``. This module validates input, grows storage and calls the kernels in
:mod:`sparseset.kernels`; it never loops over ids itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, MutableSet
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import kernels
from ._ids import as_ids, describe, reject_negative, reject_out_of_range

#: dtype of ``dense`` for the flat index: its ids live in [0, 2**31).
ID_DTYPE = np.dtype(np.int32)
#: dtype of ``sparse``: a position in dense, compared unsigned.
POSITION_DTYPE = np.dtype(np.uint32)
#: The index kinds a set can be built on.
INDEX_KINDS = ("flat",)
#: The flat index covers ids in [0, FLAT_LIMIT).
FLAT_LIMIT = 2**31
_set_serial = itertools.count()


class _Arrays:
    """The mutable state a set's kernels work on.

    Kept apart from the set so that its jit twin can stand in for it: the
    twin has the same attributes, so once it exists the set and the twin
    share one state. ``epoch`` counts the changes that invalidate
    checkpoints (adds, clears, sorts, growth), wherever they happen.
    """

    __slots__ = ("dense", "epoch", "n", "sparse")

    def __init__(self, sparse: np.ndarray, dense: np.ndarray, n: int) -> None:
        self.sparse = sparse
        self.dense = dense
        self.n = n
        self.epoch = 0


@dataclass(frozen=True)
class Checkpoint:
    """A token from :meth:`SparseSet.checkpoint`; pass it to ``rollback``."""

    owner: int
    serial: int
    size: int
    epoch: int


class SparseSet(MutableSet):
    """A set of non-negative integer ids with batch operations at C speed.

    Mirrors Python's :class:`set`, batch-first: ``add``, ``discard``,
    ``remove``, ``contains`` and ``index`` take one id or a whole array of
    them. Members are kept packed in insertion order until a removal, which
    moves the last member into the hole (swap-and-pop).

    Parameters
    ----------
    capacity : int, optional
        Ids the set can hold before it grows: a hint, not a limit. Ids of
        the default flat index live in ``[0, 2**31)``.
    index : {"flat"}, optional
        How ids map to positions. ``"flat"`` (the default) is one uint32
        slot per id of the space ``[0, capacity)``.

    Examples
    --------
    >>> import numpy as np
    >>> s = SparseSet(capacity=100)
    >>> s.add(np.array([7, 3, 9, 3]))
    3
    >>> s.discard([3])
    1
    >>> s.ids.tolist(), 9 in s, s.contains([7, 8]).tolist()
    ([7, 9], True, [True, False])
    """

    __slots__ = ("_arrays", "_checkpoints", "_serial")
    __hash__ = None  # type: ignore[assignment]  # mutable, like set

    def __init__(self, capacity: int = 0, index: str = "flat") -> None:
        if index not in INDEX_KINDS:
            raise ValueError(
                f"index = {index!r} is not an index kind; choose one of "
                f"{', '.join(map(repr, INDEX_KINDS))}"
            )
        capacity = _check_capacity(capacity)
        self._arrays = _Arrays(
            np.empty(capacity, POSITION_DTYPE), np.empty(capacity, ID_DTYPE), 0
        )
        self._serial = next(_set_serial)
        self._checkpoints: list[Checkpoint] = []

    # -- construction -----------------------------------------------------

    @classmethod
    def from_ids(cls, ids: Any, capacity: int | None = None) -> SparseSet:
        """Build a set from ids, keeping the first occurrence of each.

        Examples
        --------
        >>> SparseSet.from_ids([5, 1, 5]).ids.tolist()
        [5, 1]
        """
        s = cls(0 if capacity is None else capacity)
        s.add(ids)
        return s

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> SparseSet:
        # collections.abc.Set's mixins build results through this hook.
        return cls.from_ids(it if isinstance(it, np.ndarray) else list(it))

    def copy(self) -> SparseSet:
        """A new set with the same members in the same order.

        Examples
        --------
        >>> s = SparseSet.from_ids([4, 2]); t = s.copy(); t.add(9)
        1
        >>> s.ids.tolist(), t.ids.tolist()
        ([4, 2], [4, 2, 9])
        """
        out = self._empty(self.capacity, len(self))
        a = out._arrays
        a.n, _ = kernels.add(a.sparse, a.dense, 0, self._members())
        return out

    __copy__ = copy

    def _empty(self, capacity: int, members: int) -> SparseSet:
        """An empty set of the same class with room for ``members`` members."""
        out = type(self).__new__(type(self))
        out._arrays = _Arrays(
            np.empty(capacity, POSITION_DTYPE),
            np.empty(min(members, capacity), ID_DTYPE),
            0,
        )
        out._serial = next(_set_serial)
        out._checkpoints = []
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "ids": self._members().copy()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        SparseSet.__init__(self, state["capacity"])
        self.add(state["ids"])

    # -- size and storage -------------------------------------------------

    def __len__(self) -> int:
        return self._arrays.n

    @property
    def capacity(self) -> int:
        """Ids in ``[0, capacity)`` fit without growing.

        Examples
        --------
        >>> SparseSet(capacity=10).capacity
        10
        """
        return self._arrays.sparse.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes held by the set's arrays.

        Examples
        --------
        >>> SparseSet(capacity=1000).nbytes
        8000
        """
        a = self._arrays
        return a.sparse.nbytes + a.dense.nbytes

    def reserve(self, capacity: int) -> None:
        """Grow storage so ids below ``capacity`` fit without regrowth.

        Members and their order are kept. Growing invalidates checkpoints.

        Examples
        --------
        >>> s = SparseSet(); s.reserve(1_000); s.capacity
        1000
        """
        capacity = _check_capacity(capacity)
        if capacity > self.capacity:
            self._grow_sparse(capacity)
        self._grow_dense(capacity)

    def _grow_sparse(self, needed: int) -> None:
        a = self._arrays
        old = a.sparse
        capacity = kernels.grown_length(old.shape[0], needed, FLAT_LIMIT)
        sparse = np.empty(capacity, POSITION_DTYPE)
        sparse[: old.shape[0]] = old
        a.sparse = sparse
        a.epoch += 1

    def _grow_dense(self, needed: int) -> None:
        a = self._arrays
        old = a.dense
        needed = min(needed, a.sparse.shape[0])
        if needed <= old.shape[0]:
            return
        length = kernels.grown_length(old.shape[0], needed, a.sparse.shape[0])
        dense = np.empty(length, ID_DTYPE)
        # Copy past n too: ids removed since a checkpoint live there.
        dense[: old.shape[0]] = old
        a.dense = dense

    def _members(self) -> np.ndarray:
        a = self._arrays
        return a.dense[: a.n]

    @property
    def ids(self) -> np.ndarray:
        """The members in dense order, as a read-only view (no copy).

        Examples
        --------
        >>> SparseSet.from_ids([3, 1]).ids
        array([3, 1], dtype=int32)
        """
        view = self._members()
        view.flags.writeable = False
        return view

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self.ids
        if dtype is not None and np.dtype(dtype) != out.dtype:
            return out.astype(dtype)
        return out.copy() if copy else out

    def __iter__(self) -> Iterator[int]:
        # A snapshot: mutating the set while iterating cannot derail the loop.
        return iter(self._members().tolist())

    def __repr__(self) -> str:
        shown = self._members()[:8].tolist()
        more = ", ..." if len(self) > 8 else ""
        body = ", ".join(map(str, shown))
        return f"{type(self).__name__}([{body}{more}], size={len(self)})"

    @property
    def jit(self) -> Any:
        """A jitclass twin sharing this set's arrays, for @njit code.

        It has ``contains(i)``, ``index(i)``, ``add(i)`` (True if new; grows
        inside njit), ``remove(i)`` (False if absent), ``size`` and ``ids``.
        Built on first use, about a second per process (numba cannot cache
        jitclasses); afterwards the set and the twin share one state, so
        what either changes, the other sees. Removals through the twin are
        covered by checkpoints; adds invalidate them.

        Examples
        --------
        >>> from numba import njit
        >>> @njit
        ... def add_evens(js, stop):
        ...     for i in range(0, stop, 2):
        ...         js.add(i)
        ...     return js.size
        >>> s = SparseSet(); add_evens(s.jit, 10)
        5
        >>> s.ids.tolist()
        [0, 2, 4, 6, 8]
        """
        a = self._arrays
        if type(a) is _Arrays:
            from .jit import make_twin

            a = self._arrays = make_twin(a, {}, FLAT_LIMIT)
        return a

    # -- batch mutation ---------------------------------------------------

    def add(self, ids: Any) -> int:  # type: ignore[override]  # counts, by design
        """Add the ids that are not members yet, in batch order.

        Returns how many were new. Ids past capacity grow the set; an id
        that is negative, not an integer or outside the index's range
        raises and adds nothing. Invalidates checkpoints.

        Examples
        --------
        >>> s = SparseSet()
        >>> s.add([5, 2, 5]), s.add(2), s.ids.tolist()
        (2, 0, [5, 2])
        """
        arr, scalar = as_ids(ids)
        a = self._arrays
        n = a.n
        if self._checkpoints and self._checkpoints[-1].epoch == a.epoch:
            # The kernel's in-loop check undoes a failed batch by restoring n,
            # which would clobber the removed ids a checkpoint still needs.
            self._make_room(arr, scalar, ids)
        dense = a.dense
        self._grow_dense(n + arr.shape[0])
        new_n, fail = kernels.add(a.sparse, a.dense, n, arr)
        if fail >= 0:
            try:
                self._make_room(arr, scalar, ids)
            except (TypeError, ValueError):
                a.dense = dense
                raise
            self._grow_dense(n + arr.shape[0])
            new_n, fail = kernels.add(a.sparse, a.dense, n, arr)
        a.n = new_n
        a.epoch += 1
        return new_n - n

    def _make_room(self, arr: np.ndarray, scalar: bool, source: Any = None) -> None:
        """Validate a batch for ``add`` and grow capacity to hold it."""
        reject_negative(arr, scalar)
        reject_out_of_range(arr, FLAT_LIMIT, "flat", scalar, source)
        if arr.size:
            top = int(arr.max())
            if top >= self.capacity:
                self._grow_sparse(top + 1)

    def _removal_batch(self, ids: Any) -> tuple[np.ndarray, bool]:
        """Validate ids for a removal; copy them if they alias ``dense``.

        ``s.discard(s.ids)`` would otherwise read ids that its own swaps
        are moving.
        """
        arr, scalar = as_ids(ids)
        reject_negative(arr, scalar)
        if np.may_share_memory(arr, self._arrays.dense):
            arr = arr.copy()
        return arr, scalar

    def discard(self, ids: Any) -> int:  # type: ignore[override]  # counts, by design
        """Remove the ids that are members, ignore the rest.

        Removal is swap-and-pop in batch order. Returns how many left.

        Examples
        --------
        >>> s = SparseSet.from_ids([0, 2, 3])
        >>> s.discard([0, 42]), s.ids.tolist()
        (1, [3, 2])
        """
        arr, _ = self._removal_batch(ids)
        a = self._arrays
        n = a.n
        a.n = kernels.discard(a.sparse, a.dense, n, arr)
        return n - a.n

    def remove(self, ids: Any) -> int:  # type: ignore[override]  # counts, by design
        """Remove ids that must all be members; returns how many left.

        Raises ``KeyError`` naming the first absent id and removes nothing
        if any is absent. A repeated id counts once.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3])
        >>> s.remove([3, 1, 3]), s.ids.tolist()
        (2, [2])
        >>> s.remove(7)
        Traceback (most recent call last):
        ...
        KeyError: 'id = 7 is not a member; nothing was removed'
        """
        arr, scalar = self._removal_batch(ids)
        self._require_members(arr, scalar, ids)
        a = self._arrays
        n = a.n
        a.n = kernels.discard(a.sparse, a.dense, n, arr)
        return n - a.n

    def _require_members(self, arr: np.ndarray, scalar: bool, source: Any) -> None:
        """Raise ``KeyError`` naming the first id of ``arr`` that is absent."""
        a = self._arrays
        k = kernels.first_mismatch(a.sparse, a.dense, a.n, arr, True)
        if k >= 0:
            raise KeyError(
                f"{describe(arr, k, scalar, source)} is not a member; "
                "nothing was removed"
            )

    def keep_only(self, ids: Any) -> int:
        """Remove every member that is not in ``ids``; returns how many left.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3, 4])
        >>> s.keep_only([4, 2, 9]), sorted(s)
        (2, [2, 4])
        """
        arr, _ = self._removal_batch(ids)
        a = self._arrays
        n = a.n
        a.n = kernels.keep_only(a.sparse, a.dense, n, arr)
        return n - a.n

    def clear(self) -> None:
        """Remove every member in O(1). Invalidates checkpoints.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2]); s.clear(); len(s)
        0
        """
        self._arrays.n = 0
        self._arrays.epoch += 1

    def pop(self) -> int:
        """Remove and return the last member in dense order.

        Examples
        --------
        >>> SparseSet.from_ids([1, 2]).pop()
        2
        """
        a = self._arrays
        if a.n == 0:
            raise KeyError("pop from an empty SparseSet")
        a.n -= 1
        return int(a.dense[a.n])

    def sort(self) -> None:
        """Put the members in ascending order. Invalidates checkpoints.

        Examples
        --------
        >>> s = SparseSet.from_ids([5, 1, 3]); s.sort(); s.ids.tolist()
        [1, 3, 5]
        """
        a = self._arrays
        kernels.sort(a.sparse, a.dense, a.n)
        a.epoch += 1

    # -- backtracking -----------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        """Mark the current members so that later removals can be undone.

        Tokens nest like a stack. Any add, clear, sort or growth
        invalidates them.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3])
        >>> token = s.checkpoint(); s.discard([1, 3])
        2
        >>> s.rollback(token); sorted(s)
        [1, 2, 3]
        """
        a = self._arrays
        stack = self._checkpoints
        if stack and stack[-1].epoch != a.epoch:
            stack.clear()  # all stale: the epoch only moves forward
        token = Checkpoint(self._serial, len(stack), a.n, a.epoch)
        stack.append(token)
        return token

    def rollback(self, token: Checkpoint) -> None:
        """Restore every member removed since ``token`` was taken, in O(removed).

        Newer tokens are dropped; ``token`` itself stays valid. The restored
        members' order is not promised. Raises ``ValueError`` if the token
        is not valid for this set.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2])
        >>> t = s.checkpoint(); s.remove(1); s.rollback(t); len(s)
        1
        2
        """
        stack = self._checkpoints
        if (
            not isinstance(token, Checkpoint)
            or token.owner != self._serial
            or token.serial >= len(stack)
            or stack[token.serial] is not token
            or token.epoch != self._arrays.epoch
        ):
            raise ValueError(
                f"{token!r} is not a live checkpoint of this set: an add, clear, "
                "sort or growth since it was taken, or a rollback to an older "
                "checkpoint, invalidated it"
            )
        # Removals only swap ids past n, so restoring n restores them.
        self._arrays.n = token.size
        del stack[token.serial + 1 :]

    # -- queries ----------------------------------------------------------

    def contains(self, ids: Any) -> Any:
        """Membership of each id: a bool for one id, a bool array for a batch.

        Non-negative ids outside the index's range are simply absent.

        Examples
        --------
        >>> s = SparseSet.from_ids([2, 4])
        >>> s.contains(4), s.contains([1, 2, 2**40]).tolist()
        (True, [False, True, False])
        """
        arr, scalar = as_ids(ids)
        a = self._arrays
        out = np.empty(arr.shape[0], np.bool_)
        if kernels.contains(a.sparse, a.dense, a.n, arr, out):
            reject_negative(arr, scalar)
        return bool(out[0]) if scalar else out

    def __contains__(self, x: object) -> bool:
        if (isinstance(x, np.ndarray) and x.ndim > 0) or isinstance(x, list | tuple):
            raise TypeError("`in` takes one id; use contains(ids) for a batch")
        return self.contains(x)  # type: ignore[no-any-return]

    def index(self, ids: Any) -> Any:
        """Position of each id in dense order, -1 where absent.

        Examples
        --------
        >>> s = SparseSet.from_ids([2, 4])
        >>> s.index(4), s.index([4, 3]).tolist()
        (1, [1, -1])
        """
        arr, scalar = as_ids(ids)
        out = self._index(arr, scalar)
        return int(out[0]) if scalar else out

    def _index(self, arr: np.ndarray, scalar: bool) -> np.ndarray:
        """Positions of an id array (validated here for negatives)."""
        a = self._arrays
        out = np.empty(arr.shape[0], np.int64)
        if kernels.index(a.sparse, a.dense, a.n, arr, out):
            reject_negative(arr, scalar)
        return out

    # -- set algebra ------------------------------------------------------

    def _operand(self, other: Any) -> SparseSet:
        if isinstance(other, SparseSet):
            return other
        return type(self).from_ids(other)

    def _filtered(
        self, source: SparseSet, probe: SparseSet, keep: bool, out: SparseSet
    ) -> SparseSet:
        """Append to ``out`` the members of ``source`` whose membership in
        ``probe`` is ``keep``."""
        o, p = out._arrays, probe._arrays
        o.n = kernels.filter_into(
            source._members(), p.sparse, p.dense, p.n, keep, o.sparse, o.dense, o.n
        )
        return out

    def _and(self, other: SparseSet) -> SparseSet:
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        out = self._empty(min(self.capacity, other.capacity), len(small))
        return self._filtered(small, large, True, out)

    def _or(self, other: SparseSet) -> SparseSet:
        out = self._empty(max(self.capacity, other.capacity), len(self) + len(other))
        o = out._arrays
        o.n, _ = kernels.add(o.sparse, o.dense, 0, self._members())
        return self._filtered(other, self, False, out)

    def _sub(self, other: SparseSet) -> SparseSet:
        return self._filtered(self, other, False, self._empty(self.capacity, len(self)))

    def _xor(self, other: SparseSet) -> SparseSet:
        out = self._empty(max(self.capacity, other.capacity), len(self) + len(other))
        self._filtered(self, other, False, out)
        return self._filtered(other, self, False, out)

    def _le(self, other: SparseSet) -> bool:
        if len(self) > len(other):
            return False
        o = other._arrays
        return kernels.first_mismatch(o.sparse, o.dense, o.n, self._members(), True) < 0

    def _binary(self, other: Any, on_sparse: Any, on_ids: Any) -> Any:
        """Dispatch an operator: kernels for a SparseSet, the named method
        (which takes any ids) for another kind of set, NotImplemented else."""
        if isinstance(other, SparseSet):
            return on_sparse(self, other)
        if isinstance(other, AbstractSet):
            return on_ids(self, list(other))
        return NotImplemented

    def __and__(self, other: Any) -> Any:
        return self._binary(other, SparseSet._and, SparseSet.intersection)

    def __or__(self, other: Any) -> Any:
        return self._binary(other, SparseSet._or, SparseSet.union)

    def __sub__(self, other: Any) -> Any:
        return self._binary(other, SparseSet._sub, SparseSet.difference)

    def __xor__(self, other: Any) -> Any:
        return self._binary(other, SparseSet._xor, SparseSet.symmetric_difference)

    # Reached only when the left operand is another kind of set.
    __rand__ = __and__
    __ror__ = __or__
    __rxor__ = __xor__

    def __rsub__(self, other: Any) -> Any:
        return self._binary(
            other, SparseSet._sub, lambda s, ids: s.from_ids(ids)._sub(s)
        )

    def __le__(self, other: Any) -> Any:
        return self._binary(other, SparseSet._le, SparseSet.issubset)

    def __lt__(self, other: Any) -> Any:
        return self._binary(
            other,
            lambda a, b: len(a) < len(b) and a._le(b),
            lambda a, ids: len(a) < len(ids) and a.issubset(ids),
        )

    def __ge__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: b._le(a), SparseSet.issuperset)

    def __gt__(self, other: Any) -> Any:
        return self._binary(
            other,
            lambda a, b: len(a) > len(b) and b._le(a),
            lambda a, ids: len(a) > len(ids) and a.issuperset(ids),
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SparseSet):
            return len(self) == len(other) and self._le(other)
        if isinstance(other, AbstractSet):
            try:
                return len(self) == len(other) and self.issubset(list(other))
            except (TypeError, ValueError):
                return False  # it holds something that cannot be an id
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def isdisjoint(self, other: Any) -> bool:
        """True if no id of ``other`` is a member.

        Examples
        --------
        >>> SparseSet.from_ids([1, 2]).isdisjoint([3, 4])
        True
        """
        if isinstance(other, SparseSet):
            small, large = (self, other) if len(self) <= len(other) else (other, self)
            probe, ids = large._arrays, small._members()
        else:
            ids, scalar = as_ids(other)
            reject_negative(ids, scalar)
            probe = self._arrays
        return (
            kernels.first_mismatch(probe.sparse, probe.dense, probe.n, ids, False) < 0
        )

    # -- named set methods: any ids are accepted, as set's methods do -----

    def union(self, *others: Any) -> SparseSet:
        """Members of the set or of any of ``others``.

        Examples
        --------
        >>> sorted(SparseSet.from_ids([1]).union([2], SparseSet.from_ids([3])))
        [1, 2, 3]
        """
        out = self.copy()
        out.update(*others)
        return out

    def intersection(self, *others: Any) -> SparseSet:
        """Members of the set that are in every one of ``others``.

        Examples
        --------
        >>> sorted(SparseSet.from_ids([1, 2, 3]).intersection([3, 2, 7]))
        [2, 3]
        """
        out = self
        for other in others:
            out = out._and(other) if isinstance(other, SparseSet) else out._keep(other)
        return out.copy() if out is self else out

    def _keep(self, other: Any) -> SparseSet:
        out = self.copy()
        out.keep_only(other)
        return out

    def difference(self, *others: Any) -> SparseSet:
        """Members of the set that are in none of ``others``.

        Examples
        --------
        >>> SparseSet.from_ids([1, 2, 3]).difference([2]).ids.tolist()
        [1, 3]
        """
        out = self.copy()
        out.difference_update(*others)
        return out

    def symmetric_difference(self, other: Any) -> SparseSet:
        """Ids in exactly one of the set and ``other``.

        Examples
        --------
        >>> sorted(SparseSet.from_ids([1, 2]).symmetric_difference([2, 3]))
        [1, 3]
        """
        return self._xor(self._operand(other))

    def issubset(self, other: Any) -> bool:
        """True if every member is in ``other``.

        Examples
        --------
        >>> SparseSet.from_ids([1, 2]).issubset([2, 1, 5])
        True
        """
        if isinstance(other, SparseSet):
            return self._le(other)
        arr, scalar = as_ids(other)
        reject_negative(arr, scalar)
        found = arr[self.contains(arr)]
        return np.unique(found).shape[0] == len(self)

    def issuperset(self, other: Any) -> bool:
        """True if every id of ``other`` is a member.

        Examples
        --------
        >>> SparseSet.from_ids([1, 2]).issuperset([2, 2])
        True
        """
        if isinstance(other, SparseSet):
            return other._le(self)
        arr, scalar = as_ids(other)
        a = self._arrays
        reject_negative(arr, scalar)
        return kernels.first_mismatch(a.sparse, a.dense, a.n, arr, True) < 0

    def update(self, *others: Any) -> None:
        """Add the ids of every one of ``others``.

        Examples
        --------
        >>> s = SparseSet(); s.update([1, 2], [2, 3]); s.ids.tolist()
        [1, 2, 3]
        """
        for other in others:
            self.add(other._members() if isinstance(other, SparseSet) else other)

    def intersection_update(self, *others: Any) -> None:
        """Keep only the members found in every one of ``others``.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3]); s.intersection_update([3, 1])
        >>> sorted(s)
        [1, 3]
        """
        for other in others:
            self.keep_only(other._members() if isinstance(other, SparseSet) else other)

    def difference_update(self, *others: Any) -> None:
        """Remove the ids of every one of ``others``.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3]); s.difference_update([2])
        >>> s.ids.tolist()
        [1, 3]
        """
        for other in others:
            self.discard(other._members() if isinstance(other, SparseSet) else other)

    def symmetric_difference_update(self, other: Any) -> None:
        """Remove the ids of ``other`` that are members, add the rest.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2]); s.symmetric_difference_update([2, 3])
        >>> sorted(s)
        [1, 3]
        """
        toggled = self._operand(other)._members()
        present = self.contains(toggled)
        # Validate and size the additions first so a failure changes nothing.
        self._make_room(toggled[~present], False)
        self.discard(toggled[present])
        self.add(toggled[~present])

    def _inplace(self, other: Any, method: Any) -> Any:
        if not isinstance(other, AbstractSet):
            return NotImplemented
        method(self, other if isinstance(other, SparseSet) else list(other))
        return self

    def __ior__(self, other: Any) -> Any:
        return self._inplace(other, SparseSet.update)

    def __iand__(self, other: Any) -> Any:
        return self._inplace(other, SparseSet.intersection_update)

    def __isub__(self, other: Any) -> Any:
        return self._inplace(other, SparseSet.difference_update)

    def __ixor__(self, other: Any) -> Any:
        return self._inplace(other, SparseSet.symmetric_difference_update)


def _check_capacity(capacity: Any) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, int | np.integer):
        raise TypeError(f"capacity must be an integer, not {capacity!r}")
    capacity = int(capacity)
    if not 0 <= capacity <= FLAT_LIMIT:
        raise ValueError(
            f"capacity = {capacity} is outside [0, 2**31], the flat index's range"
        )
    return capacity

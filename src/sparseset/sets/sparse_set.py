"""SparseSet: a set of non-negative integer ids on batch numba kernels.

The set owns three things (Briggs & Torczon 1993): ``sparse`` (the index:
id -> position in dense, garbage where not a member; see
:mod:`sparseset.sets.index_kinds`), ``dense`` (the members, packed) and ``n``.
This module validates input, grows storage and calls the kernels in
:mod:`sparseset.kernels`; it never loops over ids itself.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Iterable, Iterator, MutableSet
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from .. import config, kernels
from ..config import SMALL_ALGEBRA
from ..kernels.algebra import AND, OR, SUB, XOR, combine
from ..kernels.direct import entry_point
from .checkpoints import Checkpoint
from .engine import INT64_END, PendingIndex, SetEngine, SetState
from .ids import ids_among, kernel_ids, scalar_id
from .index_kinds import KINDS, index_spec
from .interrupts import critical
from .locking import (
    BORN_WRITING,
    Guard,
    Guarded,
    atomic,
    exclusive,
    holds_lock_free,
)

#: The index kinds a set can be built on.
INDEX_KINDS = tuple(KINDS)
#: The flat index covers ids in [0, FLAT_LIMIT).
FLAT_LIMIT = KINDS["flat"].limit

#: A flat set's member dtype.
FLAT_IDS = KINDS["flat"].id_dtype

_new = object.__new__
_new_lock = _thread.RLock.__new__
#: :func:`~sparseset.kernels.algebra.combine`'s entry point for two flat
#: sets, looked up on the first call (see :mod:`sparseset.kernels.direct`):
#: a flat state's arrays always have the same types (a ``uint32`` index and
#: ``int32`` members, 1-D, C-contiguous, writeable, made by numpy or a
#: kernel), so one entry point takes every pair of them.
_flat_combine: Callable[..., int] | None = None


def _operator(method: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A binary operator that is ``method`` for sets, ``NotImplemented``
    for anything else (as ``set``'s operators are)."""

    def operator(self: Any, other: Any) -> Any:
        return method(self, other) if isinstance(other, AbstractSet) else NotImplemented

    return operator


def _looked_up_combine(args: tuple[Any, ...]) -> Callable[..., int]:
    """:data:`_flat_combine`, looked up for ``args`` (two flat states')."""
    global _flat_combine
    _flat_combine = entry_point(combine, args)
    return _flat_combine


def _combining(op: int, named: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A binary operator of set algebra (``op`` of
    :mod:`sparseset.kernels.algebra`): for two SparseSets, holding both
    sets' locks, one kernel call for two flat sets of at most
    :data:`~sparseset.config.SMALL_ALGEBRA` members held in Python (not
    twins), or member bitmaps for two large flat ones
    (:meth:`SetEngine.bitwise`); else the ``named`` method (which takes the
    locks itself), for other sets too, and ``NotImplemented`` for anything
    else. Commutative operations serve as their reflected forms as they are.

    A one-call result's index is built when first needed
    (:class:`~sparseset.sets.engine.PendingIndex`) and spans the left
    operand's ids, and for ``|`` and ``^`` the right one's too, as the
    general path's does.
    """

    def operator(self: Any, other: Any) -> Any:
        if type(other) is type(self) or isinstance(other, SparseSet):
            # One function, no helper's frame, and every object of the
            # result made without its __init__'s: for two small sets the
            # operator is all overhead.
            first, second = self._guard, other._guard
            first.acquire()
            if not second.acquire(False):
                # Taken: wait for it only in one global order (no deadlock).
                first.release()
                if id(first) > id(second):
                    first, second = second, first
                first.acquire()
                second.acquire()
            try:
                a_engine, b_engine = self._engine, other._engine
                a, b = a_engine.state, b_engine.state
                if type(a) is not SetState or type(b) is not SetState:
                    # A pending index (another small result) is built
                    # here: the kernel probes both operands' indexes.
                    if type(a) is PendingIndex:
                        a.build()
                    if type(b) is PendingIndex:
                        b.build()
                a_n, b_n = a.n, b.n
                if (
                    type(a) is not SetState
                    or type(b) is not SetState
                    or a.flat_sparse is None
                    or b.flat_sparse is None
                    or a_n > SMALL_ALGEBRA
                    or b_n > SMALL_ALGEBRA
                ):
                    engine = a_engine.bitwise(b_engine, op)
                else:
                    # A flat index's parts are the index array itself; the
                    # slots, not the sparse and dense properties.
                    a_sparse, a_dense = a.parts, a.dense_array
                    b_sparse, b_dense = b.parts, b.dense_array
                    capacity = len(a_sparse)
                    if op == AND:
                        members = a_n if a_n < b_n else b_n
                    elif op == SUB:
                        members = a_n
                    else:
                        # The result spans the ids of both, as a union's must.
                        b_capacity = len(b_sparse)
                        if b_capacity > capacity:
                            capacity = b_capacity
                        members = a_n + b_n
                    # Allocated here, not in the kernel: numba's boxing of
                    # an array it made costs more than numpy's allocation.
                    dense = np.empty(members, FLAT_IDS)
                    call = _flat_combine
                    if call is None:
                        call = _looked_up_combine(
                            (op, a_sparse, a_dense, a_n, b_sparse, b_dense, b_n, dense)
                        )
                    n = call(op, a_sparse, a_dense, a_n, b_sparse, b_dense, b_n, dense)
                    # PendingIndex(capacity, dense, n): its __init__'s slots.
                    state = _new(PendingIndex)
                    state.dense_array = dense
                    state.n = n
                    state.epoch = 0
                    state.pending = capacity
                    # SetEngine(kind, state): its __init__'s slots.
                    engine = _new(SetEngine)
                    engine.kind = a_engine.kind
                    engine.adaptive = a_engine.adaptive
                    engine.low = INT64_END
                    engine.high = -1
                    engine.blocks = 0
                    engine.runs = 0
                    engine.state = state
                    engine.twin = None
                    engine.bits = None
            finally:
                second.release()
                first.release()
            if engine is None:
                return named(self, other)
            # Guard() and Guarded.__new__: their slots.
            guard = _new_lock(Guard)
            guard.writing = BORN_WRITING
            guard.version = 0
            out = _new(type(self))
            out._guard = guard
            out._engine = engine
            return out
        return named(self, other) if isinstance(other, AbstractSet) else NotImplemented

    return operator


#: What a comparison asks of the sizes of its operands before it counts
#: (see :func:`_relation`): ``len(a) <= len(b)``, ``<``, ``==``, nothing.
SIZES_LE, SIZES_LT, SIZES_EQ, SIZES_ANY = 0, 1, 2, 3
#: Where a comparison's kernel call writes the members it counts. Only the
#: count is read, never the members, so every call (from any thread) may
#: write here: with the GIL the kernel runs alone, and without it two
#: writers only race on values nobody reads. It holds every member of a
#: set small enough for the one-call path.
_SCRATCH = np.empty(max(SMALL_ALGEBRA, 1), FLAT_IDS)


def _relation(
    op: int, sizes: int, swap: bool, negate: bool, general: Callable[[Any, Any], Any]
) -> Callable[[Any, Any], Any]:
    """A comparison of two sets: with ``a, b`` the operands (``b, a`` if
    ``swap``), for two flat SparseSets of at most
    :data:`~sparseset.config.SMALL_ALGEBRA` members held in Python, holding
    both locks as :func:`_combining` does, the ``sizes`` test and one
    kernel call that counts ``a op b`` (``SUB``: none left means a subset;
    ``AND``: none shared means disjoint), the answer negated if
    ``negate``; else ``general`` (which takes the locks itself, and
    answers ``NotImplemented`` where the comparison does).
    """

    def relation(self: Any, other: Any) -> Any:
        if type(other) is not type(self) and not isinstance(other, SparseSet):
            answer = general(self, other)
            if negate and answer is not NotImplemented:
                return not answer
            return answer
        # As _combining's operator: one frame, the locks taken in the same way.
        first, second = self._guard, other._guard
        first.acquire()
        if not second.acquire(False):
            first.release()
            if id(first) > id(second):
                first, second = second, first
            first.acquire()
            second.acquire()
        try:
            a, b = self._engine.state, other._engine.state
            if swap:
                a, b = b, a
            if type(a) is not SetState or type(b) is not SetState:
                if type(a) is PendingIndex:
                    a.build()
                if type(b) is PendingIndex:
                    b.build()
            a_n, b_n = a.n, b.n
            if (
                type(a) is not SetState
                or type(b) is not SetState
                or a.flat_sparse is None
                or b.flat_sparse is None
                or a_n > SMALL_ALGEBRA
                or b_n > SMALL_ALGEBRA
            ):
                answer = None
            elif (
                a_n > b_n
                if sizes == SIZES_LE
                else a_n >= b_n
                if sizes == SIZES_LT
                else a_n != b_n
                if sizes == SIZES_EQ
                else False
            ):
                answer = False
            else:
                # As _combining's operator reads them.
                a_sparse, a_dense = a.parts, a.dense_array
                b_sparse, b_dense = b.parts, b.dense_array
                out = _SCRATCH
                call = _flat_combine
                if call is None:
                    call = _looked_up_combine(
                        (op, a_sparse, a_dense, a_n, b_sparse, b_dense, b_n, out)
                    )
                count = call(op, a_sparse, a_dense, a_n, b_sparse, b_dense, b_n, out)
                answer = count == 0
        finally:
            second.release()
            first.release()
        if answer is None:
            answer = general(self, other)
            if answer is NotImplemented:
                return answer
        return not answer if negate else answer

    return relation


def _in_place(method: Callable[[Any, Any], None]) -> Callable[[Any, Any], Any]:
    """An in-place operator: ``method`` on a set, then the set itself."""

    def operator(self: Any, other: Any) -> Any:
        if not isinstance(other, AbstractSet):
            return NotImplemented
        method(self, other)
        return self

    return operator


@atomic(
    unlocked=(
        # The one-id calls, and the operators of set algebra, which lock
        # both operands themselves or call a locked named method.
        *("__contains__", "__len__", "add", "contains", "discard", "remove"),
        *("__and__", "__rand__", "__or__", "__ror__", "__sub__"),
        *("__xor__", "__rxor__"),
        # The comparisons, which do the same (see _relation).
        *("__eq__", "__ne__", "__le__", "__lt__", "__ge__", "__gt__"),
        "isdisjoint",
    )
)
class SparseSet(MutableSet[int], Guarded):
    """A set of non-negative integer ids with batch operations at C speed.

    Mirrors Python's :class:`set`, batch-first: ``add``, ``discard``,
    ``remove``, ``contains`` and ``index`` take one id or a whole array of
    them. Members are kept packed in insertion order until a removal, which
    moves the last member into the hole (swap-and-pop).

    Parameters
    ----------
    capacity : int, optional
        Ids the set can hold before it grows: a hint, not a limit (for the
        flat index, ids in ``[0, capacity)``; else members).
    index : {"auto", "flat", "paged", "hash"}, optional
        How ids map to positions. ``"auto"`` (the default) adapts to the
        ids the set holds, for any ids in ``[0, 2**63)``: it is one of the
        three kinds below at any time (:attr:`kind` names which), flat
        while its ids are small or dense, and takes another kind when it
        grows to hold ids a flat index would spend more than about 32
        bytes each on (see ``docs/guide/index-kinds.md``). A fixed kind
        never changes: ``"flat"`` (fastest for dense ids) is one
        uint32 slot per id of ``[0, capacity)``, for ids in ``[0, 2**31)``;
        ``"paged"`` is a radix tree whose leaves grow with their ids into
        pages of 4096 slots, for clustered ids in ``[0, 2**48)`` (ids
        scattered uniformly cost it hundreds of bytes each and slow its
        adds: use hash for those); ``"hash"`` is an
        open-addressing table whose memory follows the members, for any
        ids in ``[0, 2**63)``. Same API and results for all three; see
        :mod:`sparseset.sets.index_kinds` for their memory.

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
    >>> h = SparseSet(index="hash"); h.add([2**62, 5])
    2
    >>> 2**62 in h, h.ids.dtype
    (True, dtype('int64'))

    Notes
    -----
    A set is the ``set`` API over one :class:`~sparseset.sets.engine.SetEngine`,
    which owns its state and every operation on it; a
    :class:`~sparseset.ComponentStore` holds an engine of its own.

    Every call is atomic, as ``set``'s are: threads may share a set (see
    :mod:`sparseset.sets.locking`; its twin is the exception).
    """

    __slots__ = ("__weakref__", "_engine")
    __hash__ = None  # type: ignore[assignment]  # mutable, like set

    def __init__(self, capacity: int = 0, index: str = "auto") -> None:
        self._engine = SetEngine.named(index, capacity)

    # -- construction -----------------------------------------------------

    @classmethod
    def from_ids(
        cls, ids: Any, capacity: int | None = None, index: str = "auto"
    ) -> SparseSet:
        """Build a set from ids, keeping the first occurrence of each.

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative, outside the index kind's range, or the ids are not
            one-dimensional; nothing is added.
        TypeError
            If ``capacity`` is not an integer.
        ValueError
            If ``capacity`` is negative or past the index kind's limit.

        Notes
        -----
        O(k) for k ids, plus the index's first allocation (flat: proportional to the
        largest id).

        Examples
        --------
        >>> SparseSet.from_ids([5, 1, 5]).ids.tolist()
        [5, 1]
        >>> SparseSet.from_ids([2**40], index="paged").kind
        'paged'
        """
        s = cls.__new__(cls)
        kind, adaptive = index_spec(index)
        s._engine = SetEngine.holding(
            kind, ids, 0 if capacity is None else capacity, adaptive
        )
        return s

    @classmethod
    def _from_iterable(  # type: ignore[override]  # ids only, not any _S
        cls, it: Iterable[Any]
    ) -> SparseSet:
        # collections.abc.Set's mixins build results through this hook.
        return cls.from_ids(it if isinstance(it, np.ndarray) else list(it))

    def copy(self) -> SparseSet:
        """A new set with the same members in the same order.

        Notes
        -----
        O(n) for n members, plus the index's size (flat: the id space).

        Examples
        --------
        >>> s = SparseSet.from_ids([4, 2]); t = s.copy(); t.add(9)
        1
        >>> s.ids.tolist(), t.ids.tolist()
        ([4, 2], [4, 2, 9])
        """
        out = type(self).__new__(type(self))
        out._engine = self._engine.copied()
        return out

    __copy__ = copy

    def _empty(self, capacity: int, members: int) -> SparseSet:
        """An empty set of the same class and kind, with room for
        ``members`` members (and, for flat, ids below ``capacity``)."""
        out = type(self).__new__(type(self))
        engine = self._engine
        out._engine = SetEngine.sized(engine.kind, capacity, members, engine.adaptive)
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity,
            "index": self._engine.index_name,
            "ids": self._members().copy(),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        SparseSet.__init__(self, state["capacity"], state.get("index", "flat"))
        self.add(state["ids"])

    # -- size and storage -------------------------------------------------

    def __len__(self) -> int:
        return len(self._engine)

    @property
    def kind(self) -> str:
        """The index kind: ``"flat"``, ``"paged"`` or ``"hash"``; for a set
        that adapts (the default, ``index="auto"``), the kind it uses now.

        O(1).

        Examples
        --------
        >>> SparseSet(index="hash").kind
        'hash'
        >>> s = SparseSet(); s.add([3, 2**40]); s.kind
        2
        'hash'
        """
        return self._engine.kind.name

    @property
    def capacity(self) -> int:
        """What fits without growing: for the flat index, ids in
        ``[0, capacity)``; for paged and hash, that many members.

        O(1).

        Examples
        --------
        >>> SparseSet(capacity=10).capacity, SparseSet(100, index="hash").capacity
        (10, 100)
        """
        return self._engine.capacity

    @property
    def nbytes(self) -> int:
        """Bytes held by the set's arrays: its index and ``dense``.

        O(1): the arrays' sizes, not their contents.

        Per member, at 1M members: flat 4 bytes per id of the whole space
        plus 4 per member; paged 4 bytes per id of each filled 4096-id block
        (sparser blocks less) plus 8 per member; hash about 32 bytes plus 8 (see
        :mod:`sparseset.sets.index_kinds`).

        Examples
        --------
        >>> SparseSet(capacity=1000).nbytes
        8000
        """
        return self._engine.nbytes

    def reserve(self, capacity: int) -> None:
        """Grow storage so that ``capacity`` fits without regrowth.

        For the flat index, ids below ``capacity``; for paged and hash, that
        many members (paged: pages for that many clustered ids). Members
        and their order are kept. Growing invalidates checkpoints.

        Raises
        ------
        TypeError
            If ``capacity`` is not an integer.
        ValueError
            If ``capacity`` is negative or past the index kind's limit.

        Notes
        -----
        O(capacity) when it grows (a new index and dense array, members copied); O(1)
        when the room is already there.

        Examples
        --------
        >>> s = SparseSet(); s.reserve(1_000); s.capacity
        1000
        >>> h = SparseSet(index="hash"); h.reserve(10_000); h.capacity
        10000
        """
        self._engine.reserve(capacity)

    def _members(self) -> np.ndarray:
        return self._engine.members()

    @property
    def ids(self) -> np.ndarray:
        """The members in dense order, as a read-only view (no copy).

        O(1): a view, no copy.

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

    def to_arrow(self) -> Any:
        """The members in dense order as a ``pyarrow.Array``, zero-copy.

        The array is a view of the set's buffer: copy it before changing
        the set if it must not change. Needs pyarrow
        (``pip install "sparseset[arrow]"``).

        Raises
        ------
        ImportError
            If pyarrow is not installed.

        Notes
        -----
        O(1): the array shares the set's memory.

        Examples
        --------
        >>> SparseSet.from_ids([4, 2]).to_arrow().to_pylist()
        [4, 2]
        """
        from ..io.tabular import to_arrow_array

        return to_arrow_array(self.ids)

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
        """A twin sharing this set's arrays, for ``@njit`` code.

        O(1): the first use builds the twin over the set's arrays (a compiled
        type, cached by numba), later uses return it.

        It has ``contains(i)``, ``index(i)``, ``add(i)`` (True if new; grows
        inside njit), ``remove(i)`` (False if absent), ``size`` and ``ids``,
        and for backtracking ``checkpoint()``, ``rollback(token)``,
        ``keep_only(ids)``, ``discard(ids)`` and ``pop()``, with the Python
        methods' semantics (tokens from either side work on the other). Its
        type is cacheable, so a ``@njit(cache=True)`` function taking it
        compiles once per machine (see :mod:`sparseset.jit`). From the first
        use on, the set and the twin share one state: what either changes,
        the other sees. Asking again returns the same twin.

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
        return self._engine.hand_out_twin({}, None)

    # -- batch mutation ---------------------------------------------------

    @critical  # unlocked: Ctrl-C waits by this mark, not exclusive's
    def add(self, ids: Any) -> int:  # type: ignore[override]  # counts, by design
        """Add the ids that are not members yet, in batch order.

        Returns how many were new. Ids past capacity grow the set; an id
        that is negative, not an integer or outside the index's range
        raises and adds nothing. An add that adds a member invalidates
        checkpoints; one that adds nothing changes nothing.

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative, outside the index kind's range, or the ids are not
            one-dimensional; nothing is added.

        Notes
        -----
        O(k) for k ids, amortised: growing the index (doubling) is paid once per
        doubling.

        Examples
        --------
        >>> s = SparseSet()
        >>> s.add([5, 2, 5]), s.add(2), s.ids.tolist()
        (2, 0, [5, 2])
        """
        # One id, a Python int or a numpy one: the plain int's test first.
        x = ids if type(ids) is int else scalar_id(ids)
        if x >= 0:
            # One step on the state, then n: the lock alone keeps it atomic
            # (see .locking).
            lock = self._guard
            lock.acquire()
            try:
                state = self._engine.state
                sparse = state.flat_sparse
                if sparse is not None:
                    # SetState.add on a flat index, inline (its frame is a
                    # fifth of the call), in its order: dense, the index,
                    # then n. IndexError, not a length check, past the
                    # index or dense's end: the growth it leads to (below,
                    # after the lock) costs far more than the raise.
                    try:
                        p = sparse[x]
                    except IndexError:
                        pass
                    else:
                        dense = state.flat_dense
                        n = state.n
                        if p < n and dense[p] == x:
                            return 0
                        try:
                            dense[n] = x
                        except IndexError:
                            pass
                        else:
                            sparse[x] = n
                            state.n = n + 1
                            state.epoch += 1
                            return 1
                elif x < self._engine.kind.limit:
                    added = state.add(x)
                    if added >= 0:
                        return 1 if added else 0  # a twin answers a bool
            finally:
                lock.release()
        return self._add(ids)

    @exclusive
    def _add(self, ids: Any) -> int:
        return self._engine.add(ids)

    @critical
    def discard(self, ids: Any) -> int:  # type: ignore[override]  # counts, by design
        """Remove the ids that are members, ignore the rest.

        Removal is swap-and-pop in batch order. Returns how many left.

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
        >>> s = SparseSet.from_ids([0, 2, 3])
        >>> s.discard([0, 42]), s.ids.tolist()
        (1, [3, 2])
        """
        x = ids if type(ids) is int else scalar_id(ids)
        if x >= 0:
            lock = self._guard
            lock.acquire()
            try:
                state = self._engine.state
                sparse = state.flat_sparse
                if sparse is not None:
                    # SetState.remove on a flat index, inline (its frame is
                    # a fifth of the call), in its order: swap, then n.
                    # IndexError, not a length check, past the index's end
                    # (an id past it, however large, is simply absent).
                    try:
                        p = sparse[x]
                    except IndexError:
                        return 0
                    dense = state.flat_dense
                    n = state.n
                    if p >= n or dense[p] != x:
                        return 0
                    last = n - 1
                    moved = dense[last]
                    dense[p] = moved
                    sparse[moved] = p
                    if state.depth:  # a checkpoint may restore x
                        dense[last] = x
                        sparse[x] = last
                    state.n = last
                    return 1
                if x < INT64_END:
                    return 1 if state.remove(x) else 0
            finally:
                lock.release()
        return self._discard(ids)

    @exclusive
    def _discard(self, ids: Any) -> int:
        engine = self._engine
        return engine.discard(engine.removal_batch(ids)[0])

    @critical
    def remove(self, ids: Any) -> int:  # type: ignore[override]  # counts, by design
        """Remove ids that must all be members; returns how many left.

        Raises ``KeyError`` naming the first absent id and removes nothing
        if any is absent. A repeated id counts once.

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.
        KeyError
            If an id is not a member; nothing is removed.

        Notes
        -----
        O(k) for k ids.

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
        x = ids if type(ids) is int else scalar_id(ids)
        if 0 <= x < INT64_END:
            lock = self._guard
            lock.acquire()
            try:
                removed = self._engine.state.remove(x)
            finally:
                lock.release()
            if not removed:
                raise KeyError(f"id = {ids} is not a member; nothing was removed")
            return 1
        return self._remove(ids)

    @exclusive
    def _remove(self, ids: Any) -> int:
        engine = self._engine
        arr, scalar = engine.removal_batch(ids)
        engine.require_members(arr, scalar, ids)
        return engine.discard(arr)

    def keep_only(self, ids: Any) -> int:
        """Remove every member that is not in ``ids``; returns how many left.

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.

        Notes
        -----
        O(n + k) for n members and k ids.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3, 4])
        >>> s.keep_only([4, 2, 9]), sorted(s)
        (2, [2, 4])
        """
        return self._engine.keep_only(self._engine.removal_batch(ids)[0])

    def clear(self) -> None:
        """Remove every member in O(1). Invalidates checkpoints.

        Notes
        -----
        O(1), or O(capacity / 64) on a flat set whose twin keeps a member
        bitmap (zeroed here, and current again: see :attr:`jit`).

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2]); s.clear(); len(s)
        0
        """
        self._engine.clear()

    def pop(self) -> int:
        """Remove and return the last member in dense order.

        Raises
        ------
        KeyError
            If the set is empty.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> SparseSet.from_ids([1, 2]).pop()
        2
        """
        return self._engine.pop()

    def sort(self) -> None:
        """Put the members in ascending order. Invalidates checkpoints.

        Notes
        -----
        O(n log n) for n members.

        Examples
        --------
        >>> s = SparseSet.from_ids([5, 1, 3]); s.sort(); s.ids.tolist()
        [1, 3, 5]
        """
        self._engine.sort()

    # -- backtracking -----------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        """Mark the current members so that later removals can be undone.

        Tokens nest like a stack. Any add, clear, sort or growth
        invalidates them.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3])
        >>> token = s.checkpoint(); s.discard([1, 3])
        2
        >>> s.rollback(token); sorted(s)
        [1, 2, 3]
        """
        return self._engine.checkpoint()

    def rollback(self, token: Checkpoint) -> None:
        """Restore every member removed since ``token`` was taken, in O(removed).

        Newer tokens are dropped; ``token`` itself stays valid. The restored
        members' order is not promised. Raises ``ValueError`` if the token
        is not valid for this set.

        Raises
        ------
        ValueError
            If ``token`` is not a live checkpoint of this set.

        Notes
        -----
        O(r) for the r members removed since ``token``.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2])
        >>> t = s.checkpoint(); s.remove(1); s.rollback(t); len(s)
        1
        2
        """
        self._engine.rollback(token)

    # -- queries ----------------------------------------------------------

    def contains(self, ids: Any) -> Any:
        """Membership of each id: a bool for one id, a bool array for a batch.

        Non-negative ids outside the index's range are simply absent;
        negative ids raise ``ValueError`` (use ``x in s`` for ``set``'s
        never-raising answer).

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If an id is negative or the ids are not one-dimensional.

        Notes
        -----
        O(k) for k ids; batches of at least ``config.PARALLEL_THRESHOLD`` ids are shared
        out over the library's threads.

        Examples
        --------
        >>> s = SparseSet.from_ids([2, 4])
        >>> s.contains(4), s.contains([1, 2, 2**40]).tolist()
        (True, [False, True, False])
        """
        found = holds_lock_free(self._guard, self._engine, ids)
        return self._contains(ids) if found is None else found

    @exclusive
    def _contains(self, ids: Any) -> Any:
        return self._engine.contains(ids)

    def __contains__(self, x: object) -> bool:
        # As for set: any hashable x gets an answer, and only an id can be
        # a member. Read with no lock, the answer kept if no writer
        # overlapped (see .locking): a plain int here, on a flat index
        # inline (holds_lock_free's and contains_key's frames are half the
        # call), anything else through holds_lock_free.
        guard = self._guard
        if type(x) is int and x >= 0:
            version = guard.version
            if not guard.writing:
                state = self._engine.state
                sparse = state.flat_sparse  # None for other kinds and twins
                found: bool
                if sparse is not None:
                    # The length bounds x (a flat index spans its ids).
                    found = (
                        x < len(sparse)
                        and (p := sparse[x]) < state.n
                        and state.flat_dense[p] == x
                    )
                else:
                    # No id reaches INT64_END: past it, simply absent.
                    found = x < INT64_END and state.contains_key(x)
                if guard.version == version and not guard.writing:
                    return found
            return self._holds(x)
        answer = holds_lock_free(guard, self._engine, x)
        return self._holds(x) if answer is None else answer

    @exclusive
    def _holds(self, x: object) -> bool:
        return self._engine.holds(x)

    def index(self, ids: Any) -> Any:
        """Position of each id in dense order, -1 where absent.

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
        >>> s = SparseSet.from_ids([2, 4])
        >>> s.index(4), s.index([4, 3]).tolist()
        (1, [1, -1])
        """
        return self._engine.index(ids)

    # -- set algebra ------------------------------------------------------
    #
    # As for ``set``: operators take sets only, named methods any iterable.
    # Where the answer needs no new member (``&``, ``-``, comparisons and
    # their named and in-place forms), an element of the other operand that
    # cannot be an id is simply not a member; where it would have to become
    # one (``|``, ``^``, ``union``, ``update``), it raises. A result takes
    # the left operand's index kind, and raises if a member does not fit it.

    def _like(self, ids: Any) -> SparseSet:
        """A set of this kind holding ``ids`` (raises for a non-id)."""
        return type(self).from_ids(ids, index=self._engine.index_name)

    def _operand(self, other: Any) -> SparseSet:
        return other if isinstance(other, SparseSet) else self._like(other)

    def _filtered(
        self, source: SparseSet, probe: SparseSet, keep: bool, out: SparseSet
    ) -> SparseSet:
        """Append to ``out`` the members of ``source`` whose membership in
        ``probe`` is ``keep``."""
        o, p = out._engine.state, probe._engine.state
        ids = kernel_ids(source._members())
        bits = probe._member_bits(ids.shape[0])
        start = 0
        while True:
            if bits is None:
                o.n, stop = kernels.filter_into(
                    ids, p.sparse, p.dense, p.n, keep, o.sparse, o.dense, o.n, start
                )
            else:
                o.n, stop = kernels.algebra.filter_marked(
                    ids, bits, keep, o.sparse, o.dense, o.n, start
                )
            if stop < 0:
                return out
            # The out index cannot take ids[stop] yet: raise if no set of
            # its kind could (an id from a set of a wider kind), else grow.
            # Later ids past its range may yet be filtered out (``&``).
            rest = ids[stop:]
            kind = out._engine.kind
            x = int(ids[stop])
            if out._engine.adaptive:
                # An adapting result takes any id: its bounds grow with it.
                low, high = kernels.id_bounds(rest)
                engine = out._engine
                engine.low, engine.high = int(low), int(high)
                engine.blocks = int(rest.shape[0])
                engine.grow_index(o.n + rest.shape[0], int(high))
                out._engine.grow_dense(o.n + rest.shape[0])
                start = stop
                continue
            if x >= kind.limit:
                raise ValueError(
                    f"{x}, a member of the right operand, is outside the "
                    f"{kind.name} index's range {kind.range_text}, and the result "
                    f"takes the left operand's kind{kind.hint(x)}"
                )
            top = int(rest[rest < kind.limit].max())
            out._engine.grow_index(o.n + rest.shape[0], top)
            out._engine.grow_dense(o.n + rest.shape[0])
            start = stop

    def _member_bits(self, probes: int) -> np.ndarray | None:
        """A bitmap of the members (bit ``x`` of word ``x // 64``) to answer
        ``probes`` membership probes from, or None where the index does
        better: not flat, or the bitmap costs more to clear and fill than
        the probes save (one cache hit each where the index takes two
        misses; see ``asv_bench/benchmarks/sparse_set.py``)."""
        a = self._engine.state
        # Only an index spanning the id space bounds the bitmap's length.
        if (
            not self._engine.kind.counts_ids
            or a.n > config.BITMAP_MEMBERS_PER_PROBE * probes
        ):
            return None
        words = -(-a.sparse.shape[0] // 64)
        if 8 * words > config.BITMAP_BYTES_PER_ID * (probes + a.n):
            return None
        bits = np.zeros(words, np.uint64)
        kernels.algebra.mark_members(bits, a.dense, a.n)
        return bits

    def _empty_for(self, other: SparseSet, members: int) -> SparseSet:
        """An empty result of this set's kind, room for ``members`` members
        and, for flat, the ids of both operands that a flat index spans."""
        capacity = self.capacity
        if other._engine.kind is self._engine.kind:
            capacity = max(capacity, other.capacity)
        return self._empty(capacity, members)

    def _and(self, other: SparseSet) -> SparseSet:
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        return self._filtered(
            small, large, True, self._empty(self.capacity, len(small))
        )

    def _or(self, other: SparseSet) -> SparseSet:
        out = self._empty_for(other, len(self) + len(other))
        out._engine.fill(self._members())
        return self._filtered(other, self, False, out)

    def _sub(self, other: SparseSet) -> SparseSet:
        return self._filtered(self, other, False, self._empty(self.capacity, len(self)))

    def _xor(self, other: SparseSet) -> SparseSet:
        out = self._empty_for(other, len(self) + len(other))
        self._filtered(self, other, False, out)
        return self._filtered(other, self, False, out)

    def _le(self, other: SparseSet) -> bool:
        if len(self) > len(other):
            return False
        bits = self._kept_bits(other)
        if bits is not None:
            return bool(kernels.algebra.marked_within(*bits))
        return other._engine.all_members(self._members())

    def _kept_bits(self, other: SparseSet) -> tuple[np.ndarray, np.ndarray] | None:
        """Both sets' member bitmaps, if both keep one (a comparison then
        reads 64 ids per word); else None."""
        mine = self._engine.member_bits(build=False)
        theirs = other._engine.member_bits(build=False)
        return None if mine is None or theirs is None else (mine, theirs)

    # The operators are the named methods, for sets only (as ``set``'s
    # are): ``NotImplemented`` for anything else lets Python try the other
    # operand. Reflected forms are reached only when the left operand is
    # another kind of set.
    __and__ = __rand__ = _combining(AND, lambda s, o: s.intersection(o))
    __or__ = __ror__ = _combining(OR, lambda s, o: s.union(o))
    __sub__ = _combining(SUB, lambda s, o: s.difference(o))
    __rsub__ = _operator(lambda s, o: s._like(o).difference(s))
    __xor__ = __rxor__ = _combining(XOR, lambda s, o: s.symmetric_difference(o))

    # The comparisons: for two small flat SparseSets one kernel call under
    # both locks (_relation); else the general test, holding the locks
    # (exclusive) and going straight to _le for two SparseSets.
    _le_general = exclusive(_operator(lambda s, o: s._subset_of(o)))
    _ge_general = exclusive(_operator(lambda s, o: s._superset_of(o)))
    __le__ = _relation(SUB, SIZES_LE, False, False, _le_general)
    __ge__ = _relation(SUB, SIZES_LE, True, False, _ge_general)
    __lt__ = _relation(
        SUB,
        SIZES_LT,
        False,
        False,
        exclusive(_operator(lambda s, o: len(s) < len(o) and s._subset_of(o))),
    )
    __gt__ = _relation(
        SUB,
        SIZES_LT,
        True,
        False,
        exclusive(_operator(lambda s, o: len(s) > len(o) and s._superset_of(o))),
    )

    def _subset_of(self, other: AbstractSet[Any]) -> bool:
        return self._le(other) if isinstance(other, SparseSet) else self.issubset(other)

    def _superset_of(self, other: AbstractSet[Any]) -> bool:
        if isinstance(other, SparseSet):
            return other._le(self)
        return bool(self.issuperset(other))

    @exclusive
    def _equal(self, other: object) -> Any:
        if not isinstance(other, AbstractSet):
            return NotImplemented
        return len(self) == len(other) and self._subset_of(other)

    __eq__ = _relation(SUB, SIZES_EQ, False, False, _equal)
    __ne__ = _relation(SUB, SIZES_EQ, False, True, _equal)

    @exclusive
    def _disjoint(self, other: Any) -> bool:
        if isinstance(other, SparseSet):
            bits = self._kept_bits(other)
            if bits is not None:
                return bool(kernels.algebra.marked_apart(*bits))
            small, large = (self, other) if len(self) <= len(other) else (other, self)
            return not large._engine.any_member(small._members())
        return not self._engine.any_member(ids_among(other)[0])

    isdisjoint = _relation(AND, SIZES_ANY, False, False, _disjoint)
    isdisjoint.__doc__ = """True if no element of ``other`` is a member.

    Notes
    -----
    O(min(n, m)) for two sets of n and m members (probing the larger with the
    smaller); O(m) for an iterable of m elements.

    Examples
    --------
    >>> SparseSet.from_ids([1, 2]).isdisjoint([3, 4, -1])
    True
    """

    # -- named set methods: any iterable is accepted, as set's methods do --

    def union(self, *others: Any) -> SparseSet:
        """Members of the set or of any of ``others``.

        Raises
        ------
        TypeError
            If an element of ``others`` is not an integer.
        ValueError
            If a member of the result does not fit this set's index kind (``|``'s rule),
            or an element of ``others`` cannot be an id.

        Notes
        -----
        O(n + m) for n members and m elements of ``others`` in all; large flat sets
        combine as member bitmaps, one word per 64 ids.

        Examples
        --------
        >>> sorted(SparseSet.from_ids([1]).union([2], SparseSet.from_ids([3])))
        [1, 2, 3]
        """
        return self._fold(others, SparseSet._or, SparseSet.add)

    def intersection(self, *others: Any) -> SparseSet:
        """Members of the set that are in every one of ``others``.

        Notes
        -----
        O(n + m) for n members and m elements of ``others``; large flat sets combine as
        member bitmaps, one word per 64 ids.

        Examples
        --------
        >>> sorted(SparseSet.from_ids([1, 2, 3]).intersection([3, 2, 7, "x"]))
        [2, 3]
        """
        return self._fold(
            others,
            SparseSet._and,
            lambda out, o: out._engine.keep_only(ids_among(o)[0]),
        )

    def difference(self, *others: Any) -> SparseSet:
        """Members of the set that are in none of ``others``.

        Notes
        -----
        O(n + m) for n members and m elements of ``others``; large flat sets combine as
        member bitmaps.

        Examples
        --------
        >>> SparseSet.from_ids([1, 2, 3]).difference([2, -5]).ids.tolist()
        [1, 3]
        """
        return self._fold(
            others, SparseSet._sub, lambda out, o: out._engine.discard(ids_among(o)[0])
        )

    def _fold(
        self,
        others: tuple[Any, ...],
        with_set: Callable[[SparseSet, SparseSet], SparseSet],
        with_ids: Callable[[SparseSet, Any], object],
    ) -> SparseSet:
        """A new set: this one with each of ``others`` applied in turn.

        A SparseSet goes through ``with_set``, which returns a new set from
        the kernels; anything else through ``with_ids``, which changes a
        copy in place (reading the iterable as ``set``'s methods do).
        """
        out = self
        for other in others:
            if isinstance(other, SparseSet):
                out = with_set(out, other)
            else:
                out = out.copy() if out is self else out
                with_ids(out, other)
        return out.copy() if out is self else out

    def symmetric_difference(self, other: Any) -> SparseSet:
        """Ids in exactly one of the set and ``other``.

        Raises
        ------
        TypeError
            If an element of ``others`` is not an integer.
        ValueError
            If a member of the result does not fit this set's index kind (``|``'s rule),
            or an element of ``others`` cannot be an id.

        Notes
        -----
        O(n + m) for n members and m elements of ``other``.

        Examples
        --------
        >>> sorted(SparseSet.from_ids([1, 2]).symmetric_difference([2, 3]))
        [1, 3]
        """
        return self._xor(self._operand(other))

    def issubset(self, other: Any) -> bool:
        """True if every member is in ``other``.

        Notes
        -----
        O(n) probes of ``other`` for n members.

        Examples
        --------
        >>> SparseSet.from_ids([1, 2]).issubset([2, 1, 5, "x"])
        True
        """
        if isinstance(other, SparseSet):
            return self._le(other)
        arr, _ = ids_among(other)
        found = arr[self.contains(arr)]
        return bool(np.unique(found).shape[0] == len(self))

    def issuperset(self, other: Any) -> bool:
        """True if every element of ``other`` is a member.

        Notes
        -----
        O(m) probes for m elements of ``other``.

        Examples
        --------
        >>> SparseSet.from_ids([1, 2]).issuperset([2, 2]), SparseSet().issuperset([-1])
        (True, False)
        """
        if isinstance(other, SparseSet):
            return other._le(self)
        arr, others = ids_among(other)
        return not others and self._engine.all_members(arr)

    def update(self, *others: Any) -> None:
        """Add the ids of every one of ``others``.

        Raises
        ------
        TypeError
            If an element of ``others`` is not an integer.
        ValueError
            If a member of the result does not fit this set's index kind (``|``'s rule),
            or an element of ``others`` cannot be an id.

        Notes
        -----
        O(m) for m elements of ``others``, amortised as ``add``.

        Examples
        --------
        >>> s = SparseSet(); s.update([1, 2], {2: "b", 3: "c"}); s.ids.tolist()
        [1, 2, 3]
        """
        for other in others:
            self.add(other._members() if isinstance(other, SparseSet) else other)

    def intersection_update(self, *others: Any) -> None:
        """Keep only the members found in every one of ``others``.

        Notes
        -----
        O(n + m) for n members and m elements of ``others``.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3]); s.intersection_update([3, 1, None])
        >>> sorted(s)
        [1, 3]
        """
        for other in others:
            if isinstance(other, SparseSet):
                self._engine.keep_only(other._members())
            else:
                self._engine.keep_only(ids_among(other)[0])

    def difference_update(self, *others: Any) -> None:
        """Remove the ids of every one of ``others``.

        Notes
        -----
        O(m) for m elements of ``others``.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2, 3]); s.difference_update([2, -1])
        >>> s.ids.tolist()
        [1, 3]
        """
        for other in others:
            if isinstance(other, SparseSet):
                self._engine.discard(other._members())
            else:
                self._engine.discard(ids_among(other)[0])

    def symmetric_difference_update(self, other: Any) -> None:
        """Remove the ids of ``other`` that are members, add the rest.

        Raises
        ------
        TypeError
            If an element of ``others`` is not an integer.
        ValueError
            If a member of the result does not fit this set's index kind (``|``'s rule),
            or an element of ``others`` cannot be an id.

        Notes
        -----
        O(n + m) for n members and m elements of ``other``.

        Examples
        --------
        >>> s = SparseSet.from_ids([1, 2]); s.symmetric_difference_update([2, 3])
        >>> sorted(s)
        [1, 3]
        """
        toggled = self._operand(other)._members()
        present = self.contains(toggled)
        # Validate the additions first so a failure changes nothing.
        self._engine.validate_add(toggled[~present], False, None)
        self._engine.discard(toggled[present])
        self.add(toggled[~present])

    __ior__ = _in_place(lambda s, o: s.update(o))
    __iand__ = _in_place(lambda s, o: s.intersection_update(o))
    __isub__ = _in_place(lambda s, o: s.difference_update(o))
    __ixor__ = _in_place(lambda s, o: s.symmetric_difference_update(o))

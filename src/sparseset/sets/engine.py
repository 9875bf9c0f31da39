"""The engine under every set and store: one set's state and the logic on it.

A :class:`SetEngine` owns the state of one sparse set (``sparse``, ``dense``,
``n`` and the checkpoint stack: a :class:`SetState`, or the jit twin once
one is handed out) and everything done to it: inserting a batch (growing
the index and ``dense``, validating once, undoing a bad batch), removing,
looking up, checkpoints and rollback. :class:`~sparseset.SparseSet` is the
``set`` API over one engine; :class:`~sparseset.ComponentStore` holds one
engine for its ids and keeps its columns in the same state object.

The engine's methods are its interface: the containers call them and
nothing else of it. Input that is not yet an id array goes through
:mod:`.ids` in the engine too, so a set and a store answer the same input
with the same errors.

Scalar calls (one plain ``int``) take the state's own ``contains_key``,
``index_key``, ``add`` and ``remove``: a :class:`SetState` answers them
from the scalar kernels, a twin from its compiled methods, so neither the
engine nor a container asks which one it holds. The containers call
``add`` and ``remove`` themselves, under their lock (see :mod:`.locking`).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from .. import config, kernels
from ..kernels.algebra import (
    AND,
    SUB,
    combine_words,
    mark_members,
    marked_ids,
    unmark_members,
)
from ..kernels.marks import NO_MARKS
from .checkpoints import Checkpoint, is_token, next_owner
from .ids import (
    as_ids,
    describe,
    kernel_ids,
    one_id,
    reject_negative,
    reject_out_of_range,
)
from .index_kinds import (
    ADAPTIVE_BYTES_PER_MEMBER,
    ADAPTIVE_HASH_LOAD,
    ADAPTIVE_SPAN_PER_ID,
    AUTO,
    FLAT_ALWAYS,
    KINDS,
    PAGE_BITS,
    IndexKind,
    adapted_kind,
    index_nbytes,
    index_spec,
)
from .pool import share_out, shared

#: Python ints below this are numba int64s: the scalar kernels take them.
INT64_END = 2**63
#: A batch longer than this that must grow a set's index (paged, hash or
#: adapting) is first estimated for how many distinct ids it holds (one
#: pass, which validates it too): the index is sized once for them, where
#: sizing for every id would build a table as large as the batch.
ESTIMATED_BATCH = 1 << 15
#: No columns, for :func:`~sparseset.kernels.upsert_accumulate` called to
#: insert ids alone (one row of no elements).
_NO_SUMS = ((np.empty((0, 0), np.uint8), np.empty((1, 0), np.uint8)),)


class SetState:
    """The mutable state a set's kernels work on.

    ``epoch`` counts the changes that invalidate checkpoints (adds of new
    members, clears, sorts, growth), wherever they happen; ``marks`` and
    ``depth`` are the checkpoint stack, ``stamp`` the next checkpoint's
    stamp and ``owner`` the set's number, which its tokens carry (see
    :mod:`sparseset.kernels.marks`). ``parts`` is the index as the scalar
    kernels take it, kept in step with ``sparse`` (a flat index's is the
    index array itself), and ``dense_array`` the ``dense`` array, kept by
    its setter; ``flat_sparse`` and ``flat_dense`` are memoryviews of a
    flat index and of ``dense``. Read these slots freely; assign ``sparse``
    and ``dense``, which keep them in step. A store adds its columns as
    ``_col_<name>`` attributes.

    Its scalar methods answer as a jit twin's do, so either can hold a
    set's state: ``contains_key(k)`` and ``index_key(k)`` look one key
    (a non-negative int64) up; ``add(i)`` and ``remove(i)`` take one id
    within the index kind's range (a World store's twin takes handles in
    these two, and its container never calls them).

    Examples
    --------
    >>> from sparseset.sets.index_kinds import KINDS
    >>> state = SetState(KINDS["flat"].new(8), np.empty(8, np.int32), 0)
    >>> state.add(5), state.add(5), state.contains_key(5), state.index_key(5)
    (1, 0, True, 0)
    """

    __slots__ = (
        "__dict__",
        "_sparse",
        "dense_array",
        "depth",
        "epoch",
        "flat_dense",
        "flat_sparse",
        "marks",
        "n",
        "owner",
        "parts",
        "pending",
        "stamp",
    )

    parts: Any
    flat_sparse: memoryview | None

    def __init__(self, sparse: Any, dense: np.ndarray, n: int) -> None:
        # The setters' work, inline: a small set's algebra makes one of
        # these per result.
        self._sparse = sparse
        if type(sparse) is np.ndarray:
            self.parts = sparse
            self.flat_sparse = sparse.data
        else:
            self.parts = kernels.kinds.parts_of(sparse)
            self.flat_sparse = None
        self.dense_array = dense
        self.flat_dense = dense.data
        self.n = n
        self.epoch = 0
        self.marks = NO_MARKS
        self.depth = 0
        self.stamp = 0
        self.owner = next_owner()

    @property
    def sparse(self) -> Any:
        """The index (id -> candidate position)."""
        return self._sparse

    @sparse.setter
    def sparse(self, index: Any) -> None:
        self._sparse = index
        self.parts = kernels.kinds.parts_of(index)
        # A flat index is one uint32 array: Python reads and writes it
        # through a memoryview for one id faster than a kernel call starts.
        self.flat_sparse = index.data if type(index) is np.ndarray else None

    @property
    def dense(self) -> np.ndarray:
        """The members, packed, in ``dense[:n]``."""
        return self.dense_array

    @dense.setter
    def dense(self, dense: np.ndarray) -> None:
        self.dense_array = dense
        self.flat_dense = dense.data

    def contains_key(self, key: int) -> bool:
        """Whether ``key`` is a member."""
        sparse = self.flat_sparse
        if sparse is None:
            return bool(
                kernels.find_one(self.parts, self.dense_array, self.n, key) >= 0
            )
        # A length check, not IndexError: raising costs far more than the
        # check, and ids past a small set's index are common queries.
        if key >= len(sparse):
            return False
        p = sparse[key]
        return p < self.n and self.flat_dense[p] == key

    def index_key(self, key: int) -> int:
        """The position of ``key``, -1 if it is not a member."""
        sparse = self.flat_sparse
        if sparse is None:
            return int(kernels.find_one(self.parts, self.dense_array, self.n, key))
        if key >= len(sparse):
            return -1
        p: int = sparse[key]
        return p if p < self.n and self.flat_dense[p] == key else -1

    def add(self, i: int) -> int:
        """Add id ``i``: 1 if new, 0 if a member already, -1 where the index
        or ``dense`` has no room for it (the engine's batch path grows them;
        a twin's ``add`` grows by itself and never answers -1)."""
        n = self.n
        sparse = self.flat_sparse
        if sparse is not None:
            # kernels.element.claim on a flat index, in Python.
            dense = self.flat_dense
            try:
                p = sparse[i]
            except IndexError:  # past the index's capacity: grow first
                return -1
            if p < n and dense[p] == i:
                return 0
            if n == len(dense):
                return -1
            dense[n] = i
            sparse[i] = n
            self.n = n + 1
            self.epoch += 1
            return 1
        if n < self.dense_array.shape[0]:
            p = kernels.add_one(self.parts, self.dense_array, n, i)
            if p == n:
                self.n = n + 1
                self.epoch += 1
                return 1
            return 0 if p >= 0 else -1
        return 0 if self.contains_key(i) else -1

    def remove(self, i: int) -> bool:
        """Remove id ``i`` (swap-and-pop); whether it was a member. While a
        checkpoint may be live, the removed id lands at ``dense[n - 1]``,
        past the new ``n``, where a rollback finds it (as
        :func:`sparseset.kernels.element.swap_remove`); with none, past
        ``n`` is left as it was."""
        n = self.n
        sparse = self.flat_sparse
        if sparse is None:
            self.n = kernels.discard_one(self.parts, self.dense_array, n, i)
            return bool(self.n != n)
        dense = self.flat_dense
        try:
            p = sparse[i]
        except IndexError:
            return False
        if p >= n or dense[p] != i:
            return False
        last = n - 1
        moved = dense[last]
        dense[p] = moved
        sparse[moved] = p
        if self.depth:  # a checkpoint may restore i
            dense[last] = i
            sparse[i] = last
        self.n = last
        return True


_BUILDING = threading.Lock()
#: SetState's slot descriptors, which a pending state's build writes
#: through (its own class shadows them with properties).
_SLOTS = {name: SetState.__dict__[name] for name in SetState.__slots__}


def _built_first(name: str, build: str) -> Any:
    """A property of a pending state: ``self.<build>()`` (which turns the
    state into a class whose ``name`` is a plain slot or property), then
    the read or write of ``name`` that was asked for."""

    def read(self: Any) -> Any:
        getattr(self, build)()
        return getattr(self, name)

    def write(self: Any, value: Any) -> None:
        getattr(self, build)()
        setattr(self, name, value)

    return property(read, write, doc=f"``{name}``, after ``{build}()``.")


class PendingIndex(SetState):
    """A flat set's state whose index is built when first needed.

    Set algebra on member bitmaps yields the result's members without an
    index; the index (a ``uint32`` slot per id of its capacity, most of the
    cost of making a set) is often never needed: ``np.asarray(a & b)``,
    ``len``, iteration and more algebra read the members or the bitmap. The
    first read of the index (any lookup, change, growth or twin) builds it
    in one kernel call and turns this object into a plain
    :class:`SetState`.

    Examples
    --------
    >>> state = PendingIndex(16, np.array([3, 9], np.int32), 2)
    >>> type(state).__name__, state.contains_key(9), type(state).__name__
    ('PendingIndex', True, 'SetState')
    """

    __slots__ = ()

    def __init__(self, capacity: int, dense: np.ndarray | None, n: int) -> None:
        # The members, their count, the epoch (a kept bitmap's validity) and
        # the index's capacity; the other slots are set by build(), read
        # before it through properties that build first. A small set's
        # algebra makes one of these per result: each slot set costs.
        if dense is not None:
            self.dense_array = dense
        self.n = n
        self.epoch = 0
        # A slot, not the instance dict: the dict would be one more object.
        self.pending = capacity

    @property
    def pending_capacity(self) -> int:
        """The capacity the index will have."""
        capacity: int = self.pending
        return capacity

    def build(self) -> None:
        """Build the index and become a :class:`SetState`."""
        with _BUILDING:  # lock-free readers may get here together
            if type(self) is PendingIndex:
                dense = self.dense_array
                index = kernels.flat.empty(self.pending)
                kernels.reindex(index, dense, 0, self.n)
                # Every slot SetState.__init__ sets and __init__ above did
                # not, through SetState's own descriptors (this class's
                # properties would build again), then the class, in one
                # step: a lock-free reader sees a pending state or a whole
                # SetState, never one with a slot unset.
                for name, value in (
                    ("_sparse", index),
                    ("parts", kernels.kinds.parts_of(index)),
                    ("flat_sparse", index.data),
                    ("flat_dense", dense.data),
                    ("marks", NO_MARKS),
                    ("depth", 0),
                    ("stamp", 0),
                    ("owner", next_owner()),
                ):
                    _SLOTS[name].__set__(self, value)
                self.__class__ = SetState  # type: ignore[assignment]

    # The index's slots, read or written: the index is built first; so are
    # the checkpoint stack's, read by checkpoints and inserts only.
    sparse = _built_first("sparse", "build")
    _sparse = _built_first("_sparse", "build")
    parts = _built_first("parts", "build")
    flat_sparse = _built_first("flat_sparse", "build")
    flat_dense = _built_first("flat_dense", "build")
    marks = _built_first("marks", "build")
    depth = _built_first("depth", "build")
    stamp = _built_first("stamp", "build")
    owner = _built_first("owner", "build")


class PendingMembers(PendingIndex):
    """A flat set's state that is a member bitmap until its members are
    read: :class:`PendingIndex` with ``dense`` made when first needed too
    (the members, ascending, from the bitmap, in one kernel call).

    Examples
    --------
    >>> bits = np.array([0b1010], np.uint64)
    >>> state = PendingMembers(16, bits, 2)
    >>> state.dense[:state.n].tolist(), type(state).__name__
    ([1, 3], 'PendingIndex')
    """

    __slots__ = ()

    def __init__(self, capacity: int, bits: np.ndarray, n: int) -> None:
        super().__init__(capacity, None, n)
        self.__dict__["pending_bits"] = bits

    def build(self) -> None:
        """Make ``dense``, then the index (see :meth:`PendingIndex.build`)."""
        self.build_members()
        self.build()

    def build_members(self) -> None:
        """Make ``dense`` from the bitmap and become a :class:`PendingIndex`."""
        with _BUILDING:
            if type(self) is PendingMembers:
                bits = self.__dict__.pop("pending_bits")
                dense = np.empty(self.n + 3, np.int32)  # marked_ids's slack
                marked_ids(bits, dense)
                # The slot first, then the class (see PendingIndex.build).
                _SLOTS["dense_array"].__set__(self, dense)
                self.__class__ = PendingIndex  # type: ignore[assignment]

    # The members' slots, read or written: the members are made first.
    dense_array = _built_first("dense_array", "build_members")
    dense = _built_first("dense", "build_members")


def checked_top(
    kind: IndexKind,
    arr: np.ndarray,
    scalar: bool,
    source: Any,
    bounds: tuple[int, int] | None = None,
) -> int:
    """The largest of ``arr``'s ids (-1 if none), after raising for any that
    a set of ``kind`` cannot take (negative, past its range); ``scalar``
    and ``source`` shape the message (see :mod:`.ids`). ``bounds``, the
    smallest and the largest id where a pass over the batch already found
    them, saves that pass.

    Examples
    --------
    >>> from sparseset.sets.index_kinds import KINDS
    >>> checked_top(KINDS["flat"], np.array([4, 9, 2]), False, None)
    9
    >>> checked_top(KINDS["flat"], np.array([2**40]), True, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: id = 1099511627776 is outside the flat index's range [0, 2**31); ...
    """
    if not arr.size:
        return -1
    low, top = kernels.id_bounds(arr) if bounds is None else bounds
    if low < 0:
        reject_negative(arr, scalar)
    top = int(top)
    if top >= kind.limit:
        hint = kind.hint(top)
        reject_out_of_range(arr, kind.limit, kind.name, scalar, source, hint)
    return top


class SetEngine:
    """One set's state and every operation on it.

    Parameters
    ----------
    kind : IndexKind
        The index kind (:data:`~sparseset.sets.index_kinds.KINDS`).
    state : SetState
        The state to own; see :meth:`new` for an empty one.
    adaptive : bool
        Whether the engine changes kind as it grows (``index="auto"``): see
        :meth:`grow_index`.

    Examples
    --------
    >>> from sparseset.sets.index_kinds import KINDS
    >>> engine = SetEngine.new(KINDS["flat"], 10)
    >>> engine.add([4, 2, 4]), engine.members().tolist()
    (2, [4, 2])
    """

    __slots__ = (
        "adaptive",
        "bits",
        "blocks",
        "high",
        "kind",
        "low",
        "runs",
        "state",
        "twin",
    )

    def __init__(
        self, kind: IndexKind, state: SetState, adaptive: bool = False
    ) -> None:
        self.kind = kind
        #: Whether the index changes kind as it grows (``index="auto"``).
        self.adaptive = adaptive
        #: An adapting engine's last validated batch: its smallest and
        #: largest ids, and at least how many 4096-id blocks it fills (its
        #: length, or an estimate); a growth adds the members' own.
        self.low = INT64_END
        self.high = -1
        self.blocks = 0
        #: The blocks of 4096 ids that the batch under way fills, as its
        #: sample tells (see :meth:`count_blocks`), else 0.
        self.runs = 0
        #: A SetState, or the jit twin once one is handed out: the same
        #: fields and scalar methods.
        self.state: Any = state
        #: The jit twin holding the state, once handed out.
        self.twin: Any = None
        #: ``(state, n, epoch, bitmap)``: the members as a bitmap, valid
        #: while the state, ``n`` and ``epoch`` are these (see member_bits).
        self.bits: tuple[Any, int, int, np.ndarray] | None = None

    @classmethod
    def new(cls, kind: IndexKind, capacity: int, adaptive: bool = False) -> SetEngine:
        """An empty set's engine with room for ``capacity``."""
        capacity = cls.checked_capacity(kind, capacity, adaptive)
        if adaptive and capacity > kind.max_capacity:
            kind = KINDS["hash"]  # room for that many members
        dense = kernels.allocation.empty(capacity, kind.id_dtype)
        return cls(kind, SetState(kind.new(capacity), dense, 0), adaptive)

    @classmethod
    def named(cls, index: Any, capacity: Any) -> SetEngine:
        """An empty engine of the kind called ``index`` (``"auto"`` or one of
        :data:`~sparseset.sets.index_kinds.KINDS`) with room for ``capacity``.

        Examples
        --------
        >>> engine = SetEngine.named("auto", 8)
        >>> engine.kind.name, engine.adaptive, engine.index_name
        ('flat', True, 'auto')
        """
        kind, adaptive = index_spec(index)
        return cls.new(kind, capacity, adaptive)

    @staticmethod
    def checked_capacity(kind: IndexKind, capacity: Any, adaptive: bool) -> int:
        """``capacity`` checked for ``kind``; an adapting engine takes any
        capacity a hash index takes too (as members, where flat cannot)."""
        if adaptive:
            try:
                return kind.check_capacity(capacity)
            except ValueError:
                return KINDS["hash"].check_capacity(capacity)
        return kind.check_capacity(capacity)

    @property
    def index_name(self) -> str:
        """What ``index=`` names this engine's kind: ``"auto"`` if it adapts."""
        return AUTO if self.adaptive else self.kind.name

    @classmethod
    def sized(
        cls, kind: IndexKind, capacity: int, members: int, adaptive: bool = False
    ) -> SetEngine:
        """An empty engine with room for ``members`` members and, for flat,
        ids below ``capacity``."""
        if adaptive and kind.name == "hash":
            index = kernels.hashed.empty(members, load=ADAPTIVE_HASH_LOAD)
            rows = min(members, kernels.hashed.table_room(index))
        elif adaptive and kind.name == "paged":
            # Pools doubled as pages fill, as a paged set's own growth
            # does: sized for the members, they would assume leaves.
            index = kind.new(0)
            rows = members
        else:
            index = kind.sized(capacity, members)
            rows = min(members, kind.row_limit(index))
        dense = kernels.allocation.empty(rows, kind.id_dtype)
        return cls(kind, SetState(index, dense, 0), adaptive)

    @classmethod
    def holding(
        cls, kind: IndexKind, ids: Any, capacity: int = 0, adaptive: bool = False
    ) -> SetEngine:
        """A new engine holding ``ids`` (any accepted input; first
        occurrences, in order), sized for them before the one insertion
        pass: a set built from ids never regrows on the way.

        Examples
        --------
        >>> from sparseset.sets.index_kinds import KINDS
        >>> SetEngine.holding(KINDS["flat"], [7, 3, 7]).members().tolist()
        [7, 3]
        """
        capacity = cls.checked_capacity(kind, capacity, adaptive)
        arr, scalar = as_ids(ids)
        arr = kernel_ids(arr)
        count = arr.shape[0]
        if adaptive:
            # The kind for these ids, from their bounds and how many are
            # distinct (one pass), then as for a fixed kind.
            engine = cls(kind, SetState(kind.new(0), np.empty(0, kind.id_dtype), 0))
            engine.adaptive = True
            low, top, members = engine.survey(arr, scalar, ids)
            blocks = engine.blocks
            kind = adapted_kind(low, top, max(members, capacity), blocks)
            if capacity > kind.max_capacity:
                kind = KINDS["hash"]
        else:
            top = checked_top(kind, arr, scalar, ids)
            members = count
        room = top + 1 if kind.counts_ids else members
        engine = cls.sized(kind, max(capacity, room), members, adaptive)
        if adaptive:
            engine.low, engine.high, engine.blocks = low, top, blocks
        engine.state.n = engine.insert(arr, scalar, ids, None)
        return engine

    def survey(
        self, arr: np.ndarray, scalar: bool, source: Any
    ) -> tuple[int, int, int]:
        """Validate a batch for an adapting engine's add (raising as
        :meth:`validate_add`) in the one pass that estimates how many
        distinct ids it holds: ``(smallest, largest, members)``, where
        ``members`` is about how many distinct ids, with a margin (every id
        of a short batch). An empty batch: ``(INT64_END, -1, 0)``."""
        count = arr.shape[0]
        if not count:
            return INT64_END, -1, 0
        if count <= ESTIMATED_BATCH:
            low, high = kernels.id_bounds(arr)
            members = count
        else:
            estimate, low, high = kernels.distinct_estimate(arr, 0, count)
            members = min(count, int(estimate) * 33 // 32 + 1)
        top = self.validate_add(arr, scalar, source, (int(low), int(high)))
        self.count_blocks(arr, members)
        return int(low), top, members

    def count_blocks(self, arr: np.ndarray, members: int) -> None:
        """After :meth:`validate_add` of a long batch ``arr`` of about
        ``members`` distinct ids: for an adapting engine whose ids spread
        too wide for a paged index to span, the blocks they fill, where
        :meth:`validate_add` took each id for a block (runs filling pages
        want paged, scattered ids hash); and for a paged index, present or
        maybe to come, the blocks the batch fills (:attr:`runs`, see
        :meth:`runs_of`), whose pages it takes at once."""
        if arr.shape[0] <= ESTIMATED_BATCH or not (
            self.adaptive or self.kind.name == "paged"
        ):
            return
        self.runs = self.runs_of(arr)
        if (
            self.adaptive
            and self.high < KINDS["paged"].limit
            and self.high - self.low >= ADAPTIVE_SPAN_PER_ID * members
        ):
            self.blocks = self.blocks_of(arr)

    @staticmethod
    def runs_of(arr: np.ndarray) -> int:
        """How many 4096-id blocks the ids ``arr`` fill, as far as a sample
        of 8192 of them tells: the blocks it hits three times or more. A
        block of runs in a long batch is hit tens of times; scattered ids
        almost never meet in a block, so they count for none (and a block
        with a few ids among many may go uncounted: its leaf starts small).

        Examples
        --------
        >>> runs = np.arange(40 * 4096) + 2**40  # 40 full blocks
        >>> SetEngine.runs_of(runs), SetEngine.runs_of(np.arange(0, 2**40, 2**24))
        (40, 0)
        """
        sample = arr[:: max(1, arr.shape[0] // 8192)]
        _, hits = np.unique(sample >> PAGE_BITS, return_counts=True)
        return int(np.count_nonzero(hits >= 3))

    @staticmethod
    def blocks_of(arr: np.ndarray) -> int:
        """About how many distinct 4096-id blocks the valid ids ``arr``
        fill, from a sample of 8192 of them: their count where the sample
        shows no two in a block (ids scattered), else the number of
        blocks that would leave as many in the sample.

        Examples
        --------
        >>> runs = np.arange(40 * 4096) + 2**40  # 40 full blocks
        >>> 38 <= SetEngine.blocks_of(runs) <= 42
        True
        >>> SetEngine.blocks_of(np.arange(0, 2**40, 2**24))
        65536
        """
        count = arr.shape[0]
        sample = arr[:: max(1, count // 8192)]
        drawn = sample.shape[0]
        sampled = np.unique(sample >> PAGE_BITS).shape[0]
        if 2 * sampled > drawn:
            return int(count)
        # Ids spread evenly over B blocks leave about B (1 - e**(-drawn / B))
        # blocks in the sample: the B that leaves the blocks seen (within
        # a few percent: it only picks a kind).
        low, high = float(sampled), float(count)
        while high - low > 0.01 * low:
            middle = (low + high) / 2
            if middle * -math.expm1(-drawn / middle) < sampled:
                low = middle
            else:
                high = middle
        return min(int(count), int(high) + 1)

    def hand_out_twin(
        self, schema: Any, entities: Any, removal_log: bool = False
    ) -> Any:
        """The jit twin of this state, made on first use; from then on the
        twin holds the state (see :mod:`sparseset.jit`). ``removal_log``:
        its ``remove`` logs handles (a tracked World store's).

        A plain set's twin over a flat index gets the members as a bitmap
        too, kept in step (see :data:`~sparseset.jit.types.BITS_FIELDS`):
        O(n + capacity / 64) for n members, once.
        """
        if self.twin is None:
            from ..jit import make_twin

            bits = None
            if self.kind.counts_ids and not schema and entities is None:
                bits = self._bits_for_twin()
            twin = make_twin(self.state, schema, entities, removal_log, bits)
            self.twin = self.state = twin
        return self.twin

    def _bits_for_twin(self) -> tuple[np.ndarray, int, int]:
        """A member bitmap over the whole index for a new twin, with the
        ``n`` and ``epoch`` it is current at."""
        a = self.state
        words = -(-a.sparse.shape[0] // 64)  # a flat index: a slot per id
        kept = self.member_bits(build=False)
        if kept is not None and kept.shape[0] == words:
            bits = kept.copy()
        else:
            bits = np.zeros(words, np.uint64)
            mark_members(bits, a.dense, a.n)
        return bits, int(a.n), int(a.epoch)

    # -- size and storage -------------------------------------------------

    def __len__(self) -> int:
        n: int = self.state.n
        return n

    def members(self) -> np.ndarray:
        """The members in dense order: a view of ``dense[:n]``."""
        a = self.state
        members: np.ndarray = a.dense[: a.n]
        return members

    @property
    def capacity(self) -> int:
        """What fits without growing (see :attr:`SparseSet.capacity`)."""
        a = self.state
        if isinstance(a, PendingIndex):  # known without building the index
            return a.pending_capacity
        return self.kind.capacity(a.sparse, a.dense)

    @property
    def nbytes(self) -> int:
        """Bytes held by the index, ``dense`` and a kept member bitmap."""
        a = self.state
        kept = 0 if self.bits is None else int(self.bits[3].nbytes)
        twin_bits = getattr(self.twin, "member_bits", None)
        if twin_bits is not None:
            kept += int(twin_bits.nbytes)
        if type(a) is PendingMembers:  # the kept bitmap is its members
            return kept
        if type(a) is PendingIndex:
            return int(a.dense.nbytes) + kept
        return int(index_nbytes(a.sparse) + a.dense.nbytes) + kept

    def reserve(self, capacity: int) -> None:
        """Grow so that ``capacity`` fits without regrowth (an adapting
        engine asked for more than a flat index takes: room for that many
        members of any kind, as hash)."""
        adapting = self.adaptive and self.twin is None
        capacity = self.checked_capacity(self.kind, capacity, adapting)
        a = self.state
        if capacity > self.kind.max_capacity:  # adapting, past flat's room
            self.switch(KINDS["hash"], a.n, capacity, 0)
        reserved = self.kind.reserve(a.sparse, a.dense, a.n, capacity)
        if reserved is not a.sparse:
            bits = self.twin_bits()
            a.sparse = reserved
            a.epoch += 1
            if bits is not None:  # the same members, more room
                self._mark_in_twin_bits(bits, a.n)
        self.grow_dense(capacity)

    def grow_index(self, members: int, top: int, n: int | None = None) -> None:
        """Regrow the index for ``members`` members and ids up to ``top``.

        ``n`` counts the ids in dense whose positions the index must keep:
        the members, unless a batch has appended more (``n`` not yet set).
        """
        a = self.state
        n = a.n if n is None else n
        if self.adaptive and self.twin is None:
            kind, high = self.kind_for(n, members, top)
            if kind is not self.kind:
                self.switch(kind, n, members, high)
                return
        # The pages a batch of runs fills, taken at once (paged).
        self.kind.expect_pages(a.sparse, self.runs, members - n)
        a.sparse = kernels.grown_index(a.sparse, a.dense, n, members, top)
        a.epoch += 1

    def kind_for(self, n: int, members: int, top: int) -> tuple[IndexKind, int]:
        """The kind for ``members`` members: ``dense[:n]`` and the last
        validated batch's ids (up to ``top``); and the largest id of them.
        One pass over the members for their bounds, one more over a
        sample (two where they fill blocks) where paged is in question."""
        low, high, blocks = self.low, max(self.high, top), self.blocks
        dense = self.state.dense
        if n:
            bounds = kernels.id_bounds(dense[:n])
            low, high = min(low, int(bounds[0])), max(high, int(bounds[1]))
        low = min(low, high)
        kind = adapted_kind(low, high, members)
        if kind.name == "hash" and high < KINDS["paged"].limit:
            if n:
                # A paged index counts its blocks; else a sample tells.
                held = self.kind.leaves(self.state.sparse)
                if held is None:
                    held = self.blocks_of(kernel_ids(dense[:n]))
                blocks += held
            kind = adapted_kind(low, high, members, blocks)
        return kind, high

    def switch(self, kind: IndexKind, n: int, members: int, top: int) -> None:
        """Change an adapting engine's index to ``kind``, with room for
        ``members`` members and ids up to ``top``, keeping the positions of
        ``dense[:n]`` (a store's rows stay where they are). As growth
        does, it invalidates checkpoints; ``dense`` past ``n`` is not kept.

        Examples
        --------
        >>> e = SetEngine.named("auto", 0); e.add([3, 1])
        2
        >>> e.switch(KINDS["hash"], 2, 2, 3); e.kind.name, e.members().tolist()
        ('hash', [3, 1])
        """
        a = self.state
        members = max(members, n)
        fresh = SetEngine.sized(kind, top + 1, members, adaptive=True)
        fresh.adaptive = False  # the members fit: no change of kind inside
        if n:
            # Distinct ids a kind that takes them all: one pass, no growth.
            fresh.state.n = fresh.insert(a.dense[:n], False, None, None)
        grown = fresh.state
        dense = grown.dense
        if dense.shape[0] < a.dense.shape[0]:
            # As many rows as before: a caller that sized dense for a batch
            # under way (set algebra pushing ids) writes them unchecked.
            dense = kernels.allocation.empty(a.dense.shape[0], kind.id_dtype)
            dense[:n] = grown.dense[:n]
        self.kind = kind
        self.bits = None
        a.sparse = grown.sparse
        a.dense = dense
        a.epoch += 1

    def settle(self, n: int) -> None:
        """After an adapting engine's add of ``n`` members in all: where
        its index holds more than
        :data:`~sparseset.sets.index_kinds.ADAPTIVE_BYTES_PER_MEMBER` bytes
        a member (it grew for more members than the batch had distinct
        ids), the kind for the members it has."""
        if not self.adaptive or self.twin is not None or self.kind.name == "hash":
            return
        a = self.state
        held = index_nbytes(a.sparse)
        if held > max(ADAPTIVE_BYTES_PER_MEMBER * n, 4 * FLAT_ALWAYS):
            # The members alone decide (the batch is among them).
            self.low, self.high, self.blocks = INT64_END, -1, 0
            kind, high = self.kind_for(n, n, -1)
            if kind is not self.kind or kind.name == "flat":
                # A flat index again where it still pays: sized to the
                # members' ids, not to a doubling's.
                self.switch(kind, n, n, high)

    def grow_dense(self, needed: int) -> None:
        """Give ``dense`` at least ``needed`` slots (amortised doubling)."""
        a = self.state
        old = a.dense
        limit = self.kind.row_limit(a.sparse)
        needed = min(needed, limit)
        if needed <= old.shape[0]:
            return
        length = kernels.grown_length(old.shape[0], needed, limit)
        dense = kernels.allocation.empty(length, self.kind.id_dtype)
        # Copy past n too: ids removed since a checkpoint live there.
        dense[: old.shape[0]] = old
        a.dense = dense

    # -- adding -----------------------------------------------------------

    def add(self, ids: Any) -> int:
        """Add the non-members of ``ids`` (any accepted input) in batch
        order; how many were new."""
        a = self.state
        n = a.n
        arr, scalar = as_ids(ids)
        bits = self.twin_bits()
        a.n = self.insert(arr, scalar, ids, None)
        if a.n != n:
            a.epoch += 1
            if bits is not None:
                self._mark_in_twin_bits(bits, n)
        if (
            self.adaptive
            and self.twin is None
            and a.dense.shape[0] > 2 * a.n + 64
            and not kernels.marks.is_live(a.marks, a.depth, a.epoch)
        ):
            # Rows for a batch of repeated ids: for the members instead
            # (no live checkpoint waits for the ids past n).
            trimmed = kernels.allocation.empty(a.n + (a.n >> 2) + 16, a.dense.dtype)
            trimmed[: a.n] = a.dense[: a.n]
            a.dense = trimmed
        return int(a.n - n)

    def fill(self, members: np.ndarray) -> None:
        """Add ``members`` (distinct ids of another set) to this empty set."""
        self.grow_dense(members.shape[0])
        self.state.n = self.insert(members, False, None, None)

    def insert(
        self, arr: np.ndarray, scalar: bool, source: Any, positions: np.ndarray | None
    ) -> int:
        """Append the non-members of ``arr`` past n; return the new n.

        ``n`` itself is left for the caller to set (a store first fits its
        columns to the grown ``dense``). With ``positions``, records every
        id's dense position. The kernel stops at an id its index cannot take
        or has no room for; then the whole batch is validated once (a bad
        batch is undone and raises, the set exactly as before) and the
        index grows until the rest fits.
        """
        a = self.state
        n = a.n
        arr = kernel_ids(arr)
        count = arr.shape[0]
        record = np.empty(0, np.int64) if positions is None else positions
        validated = False
        top = -1
        estimate = -1
        grew = False
        if kernels.marks.is_live(a.marks, a.depth, a.epoch):
            # Appends overwrite dense past n, where the ids removed since a
            # live checkpoint wait: a batch that may fail must fail first.
            top = self.validate_add(arr, scalar, source)
            validated = True
        index, dense = a.sparse, a.dense
        self.grow_dense(self.rows_for(n + count))
        m, stop = kernels.upsert(
            a.sparse, a.dense, n, arr, record, 0, *kernels.UPSERT_TUNING
        )
        while stop >= 0:
            members = m + count - stop
            if not validated:
                try:
                    if count > ESTIMATED_BATCH and (
                        self.adaptive or not self.kind.counts_ids
                    ):
                        _, top, estimate = self.survey(arr, scalar, source)
                    else:
                        top = self.validate_add(arr, scalar, source)
                except (TypeError, ValueError):
                    kernels.unindex(a.sparse, a.dense, n, m)
                    a.sparse, a.dense = index, dense
                    raise
                validated = True
                if estimate >= 0:
                    members = min(members, max(m + 1, n + estimate))
            self.grow_index(members, top, m)
            self.grow_dense(self.rows_for(n + count))
            grew = True
            if isinstance(a.sparse, kernels.HashIndex):
                # Rebuilt from dense[:m] by the growth: every slot holds a
                # member's position or none, so a slot's answer needs no
                # read of dense to confirm it (the counters' exact pass).
                (ahead,) = kernels.ACCUMULATE_TUNING
                done, stopped = kernels.upsert_accumulate(
                    a.sparse,
                    a.dense,
                    m,
                    arr,
                    _NO_SUMS,
                    record,
                    stop,
                    True,
                    False,
                    kernels.candidates_for(ahead),
                    ahead,
                )
                m, stop = int(done), int(stopped)
            else:
                m, stop = kernels.upsert(
                    a.sparse, a.dense, m, arr, record, stop, *kernels.UPSERT_TUNING
                )
        if grew:
            self.batch_done()
        if grew and self.adaptive:
            self.settle(m)
        return int(m)

    def batch_done(self) -> None:
        """After a batch that grew the index: its pages are in, so later
        leaves of a paged index start small again, and the next batch
        counts its own runs."""
        self.kind.expect_pages(self.state.sparse, 0, 0)
        self.runs = 0

    def rows_for(self, rows: int) -> int:
        """The rows of ``dense`` that a batch taking it to ``rows`` members
        at most can fill before its index must grow: a hash index stops
        claiming rows at its table's load limit, so ``dense`` holds no
        more (a batch of repeated ids would otherwise size it for every
        id); the other kinds claim rows while the index takes ids.

        Examples
        --------
        >>> SetEngine.named("hash", 100).rows_for(10**6)
        128
        """
        index = self.state.sparse
        if isinstance(index, kernels.hashed.HashIndex):
            return min(rows, kernels.hashed.table_room(index))
        return rows

    def make_room(self, m: int, members: int, top: int) -> None:
        """Room for more ids past the ``m`` that ``dense`` holds, in a batch
        under way (``n`` not yet set; see :meth:`insert`): ``dense`` grown
        towards ``members`` slots if it is full, else (or where it is at
        its limit) the index regrown, keeping the positions of
        ``dense[:m]``, for ``members`` members and ids up to ``top``.
        """
        a = self.state
        rows = a.dense.shape[0]
        if m == rows:
            self.grow_dense(members)
        if a.dense.shape[0] == rows:
            self.grow_index(max(members, m + 1), top, m)
            self.grow_dense(members)

    def validate_add(
        self,
        arr: np.ndarray,
        scalar: bool,
        source: Any,
        bounds: tuple[int, int] | None = None,
    ) -> int:
        """Raise for ids ``add`` cannot take; return the largest id (-1 if
        none). ``bounds`` as :func:`checked_top`'s. An adapting engine
        takes any id a hash index takes (while no twin holds its state),
        and keeps its bounds."""
        self.runs = 0  # a long batch's survey counts them next
        if not self.adaptive:
            return checked_top(self.kind, arr, scalar, source, bounds)
        if self.twin is not None:
            try:
                return checked_top(self.kind, arr, scalar, source, bounds)
            except ValueError as error:
                raise ValueError(
                    f"{error} (a set that adapts keeps the kind it has once its "
                    "jit twin is handed out)"
                ) from None
        if not arr.size:
            return -1
        if bounds is None:
            bounds = kernels.id_bounds(arr)
        top = checked_top(KINDS["hash"], arr, scalar, source, bounds)
        self.low, self.high = int(bounds[0]), top
        self.blocks = int(arr.shape[0])  # at most a block each
        return top

    # -- removing ---------------------------------------------------------

    def removal_batch(self, ids: Any) -> tuple[np.ndarray, bool]:
        """Validate ids for a removal (no negative ids), not aliasing dense."""
        arr, scalar = as_ids(ids)
        reject_negative(arr, scalar)
        return self.not_aliasing(arr), scalar

    def not_aliasing(self, arr: np.ndarray) -> np.ndarray:
        """``arr``, copied if it shares memory with ``dense``: ``s.discard(s.ids)``
        would otherwise read ids that its own swaps are moving."""
        return arr.copy() if np.may_share_memory(arr, self.state.dense) else arr

    def discard(self, arr: np.ndarray) -> int:
        """Discard validated ids (non-negative, any integer dtype)."""
        return self.removing(kernels.discard, arr, *kernels.DISCARD_TUNING)

    def keep_only(self, arr: np.ndarray) -> int:
        """Remove every member not among validated ids."""
        return self.removing(kernels.keep_only, arr)

    def removing(self, kernel: Any, arr: np.ndarray, *tuning: int) -> int:
        """Run a removal kernel (``discard`` or ``keep_only``) on validated
        ids, with its tuning arguments; how many members it removed. Every
        batch removal ends here."""
        a = self.state
        n = a.n
        ids = kernel_ids(self.not_aliasing(arr))
        bits = self.twin_bits()
        a.n = kernel(a.sparse, a.dense, n, ids, *tuning)
        removed: int = n - a.n
        if bits is not None and removed:
            # The removed ids wait in dense[a.n:n] (swap-and-pop).
            unmark_members(bits, a.dense[a.n : n], removed)
            self.twin.tag_bits()
        return removed

    def require_members(self, arr: np.ndarray, scalar: bool, source: Any) -> None:
        """Raise ``KeyError`` naming the first id of ``arr`` that is absent."""
        k = self.first_absent(arr)
        if k >= 0:
            raise KeyError(
                f"{describe(arr, k, scalar, source)} is not a member; "
                "nothing was removed"
            )

    def member_bits(self, build: bool = True) -> np.ndarray | None:
        """The members as a bitmap (bit ``x`` of word ``x // 64``), kept
        until the set changes; None for an index kind that does not span
        its ids (not flat), a twin's state, or when ``build`` is False and
        none is kept.

        Every add of a new member bumps ``epoch`` and every removal lowers
        ``n``; between rollbacks no ``(n, epoch)`` comes back, so a kept
        bitmap is valid exactly while the state, ``n`` and ``epoch`` are
        unchanged, and adds and removals pay nothing for it. A rollback
        that restores members drops it: after it, removals can reach an
        ``(n, epoch)`` the set had before with other members.

        Examples
        --------
        >>> from sparseset.sets.index_kinds import KINDS
        >>> e = SetEngine.new(KINDS["flat"], 130); e.add([3, 129])
        2
        >>> e.member_bits().tolist(), e.member_bits() is e.member_bits()
        ([8, 0, 2], True)
        """
        a = self.state
        kept = self.bits
        if kept is not None and kept[0] is a and kept[1] == a.n and kept[2] == a.epoch:
            return kept[3]
        if not build or not self.kind.counts_ids or not isinstance(a, SetState):
            return None
        bits = np.zeros(-(-self.capacity // 64), np.uint64)
        mark_members(bits, a.dense, a.n)
        self.bits = (a, a.n, a.epoch, bits)
        return bits

    def bits_pay(self, probes: int) -> bool:
        """Whether building a member bitmap to answer ``probes`` lookups pays
        (a flat set, at most :data:`~sparseset.config.BITMAP_MEMBERS_PER_PROBE`
        members per probe, a bitmap of at most
        :data:`~sparseset.config.BITMAP_BYTES_PER_ID` bytes per probe and
        member); once built it is kept, and every later batch uses it.

        Examples
        --------
        >>> from sparseset.sets.index_kinds import KINDS
        >>> e = SetEngine.new(KINDS["flat"], 1 << 20); e.add([1, 2])
        2
        >>> e.bits_pay(1_000_000), e.bits_pay(10)
        (True, False)
        """
        n: int = self.state.n
        if not self.kind.counts_ids or n > config.BITMAP_MEMBERS_PER_PROBE * probes:
            return False
        return self.capacity <= 8 * config.BITMAP_BYTES_PER_ID * (probes + n)

    def bitwise(self, other: SetEngine, op: int) -> SetEngine | None:
        """``self op other`` through both sets' member bitmaps (built or
        kept, see :meth:`member_bits`), as a new engine whose members are
        ascending and whose index is built when first needed
        (:class:`PendingIndex`); or None where the bitmaps do not pay: a
        kind that is not flat, or bitmaps larger than
        :data:`~sparseset.config.BITMAP_BYTES_PER_ID` bytes per member.
        The caller holds both sets' locks.

        Examples
        --------
        >>> from sparseset.sets.index_kinds import KINDS
        >>> a, b = SetEngine.new(KINDS["flat"], 8), SetEngine.new(KINDS["flat"], 8)
        >>> a.add([5, 1, 2]), b.add([2, 7])
        (3, 2)
        >>> a.bitwise(b, 1).members().tolist()
        [1, 2, 5, 7]
        """
        a, b = self.state, other.state
        if not (
            self.kind.counts_ids
            and other.kind.counts_ids
            and isinstance(a, SetState)
            and isinstance(b, SetState)
        ):
            return None
        a_cap, b_cap = self.capacity, other.capacity
        if 8 * (a_cap + b_cap) > 64 * config.BITMAP_BYTES_PER_ID * (a.n + b.n):
            return None
        a_bits, b_bits = self.member_bits(), other.member_bits()
        assert a_bits is not None and b_bits is not None
        if op == AND:
            capacity, words = a_cap, min(len(a_bits), len(b_bits))
        elif op == SUB:
            capacity, words = a_cap, len(a_bits)
        else:
            capacity, words = max(a_cap, b_cap), max(len(a_bits), len(b_bits))
        out_bits = np.empty(words, np.uint64)
        n = combine_words(op, a_bits, b_bits, out_bits)
        out = SetEngine(self.kind, PendingMembers(capacity, out_bits, n), self.adaptive)
        out.bits = (out.state, n, 0, out_bits)
        return out

    def copied(self) -> SetEngine:
        """A new engine of this kind with the same members in the same
        order and the same capacity, its index built for them alone.

        Examples
        --------
        >>> from sparseset.sets.index_kinds import KINDS
        >>> a = SetEngine.new(KINDS["flat"], 8); a.add([5, 1])
        2
        >>> b = a.copied(); b.add([2]), a.members().tolist(), b.members().tolist()
        (1, [5, 1], [5, 1, 2])
        """
        a = self.state
        members = self.members()
        if type(a) is SetState and a.flat_sparse is not None:
            # A flat index takes any id below its length, so one kernel
            # call points a fresh one at the copied members.
            n = a.n
            index = kernels.flat.empty(len(a._sparse))
            dense = members.copy()
            kernels.reindex(index, dense, 0, n)
            out = SetEngine(self.kind, SetState(index, dense, n), self.adaptive)
        else:
            out = SetEngine.sized(
                self.kind, self.capacity, members.shape[0], self.adaptive
            )
            out.adaptive = False  # the members fit this kind: a copy keeps it
            out.fill(members)
            out.adaptive = self.adaptive
        return out

    def first_absent(self, arr: np.ndarray) -> int:
        """Position of the first of ``arr`` (valid ids) that is not a member;
        -1 if all are."""
        a = self.state
        return int(
            kernels.first_mismatch(a.sparse, a.dense, a.n, kernel_ids(arr), True)
        )

    def clear(self) -> None:
        """Remove every member in O(1) (O(capacity / 64) where a twin keeps
        a member bitmap, which is zeroed and current again); invalidates
        checkpoints."""
        self.state.n = 0
        self.state.epoch += 1
        if self.twin is not None:
            self.twin.clear_bits()

    # -- a twin's member bitmap, kept in step by the batches that pay for it --
    #
    # The twin's own methods keep its bitmap (see sparseset.jit.methods);
    # of the batches from Python, adds, removals, reserve, sort, clear and
    # rollback keep it too, each tagging it with the n and epoch it leaves.
    # Any other change leaves it stale, and so does a rollback of a stale
    # one: removals from there could reach its tags with other members.
    # Only a rollback brings an n and epoch back, so a stale bitmap stays
    # stale until a clear makes it current again.

    def twin_bits(self) -> np.ndarray | None:
        """The twin's member bitmap if it has one and it is current.

        Examples
        --------
        >>> from sparseset import SparseSet
        >>> s = SparseSet.from_ids([2, 5]); bits = s._engine.twin_bits()
        >>> bits is None, s.jit is not None, s._engine.twin_bits().tolist()
        (True, True, [36])
        """
        return None if self.twin is None else self.twin.current_bits()

    def _mark_in_twin_bits(self, bits: np.ndarray, first: int) -> None:
        """Mark ``dense[first:n]``, just added, in the twin's bitmap (current
        before they were), grown to the index first, and tag it."""
        twin = self.twin
        words = -(-twin.sparse.shape[0] // 64)
        if bits.shape[0] < words:
            grown = np.zeros(words, np.uint64)
            grown[: bits.shape[0]] = bits
            twin.member_bits = bits = grown
        n = twin.n
        mark_members(bits, twin.dense[first:n], n - first)
        twin.tag_bits()

    def pop(self) -> int:
        """Remove and return the last member in dense order."""
        a = self.state
        if a.n == 0:
            raise KeyError("pop from an empty SparseSet")
        bits = self.twin_bits()
        a.n -= 1
        kernels.unindex(a.sparse, a.dense, a.n, a.n + 1)
        if bits is not None:
            unmark_members(bits, a.dense[a.n : a.n + 1], 1)
            self.twin.tag_bits()
        return int(a.dense[a.n])

    def sort(self) -> None:
        """Put the members in ascending order; invalidates checkpoints."""
        a = self.state
        bits = self.twin_bits()
        kernels.sort(a.sparse, a.dense, a.n)
        a.epoch += 1
        if bits is not None:  # the same members
            self.twin.tag_bits()

    # -- queries ----------------------------------------------------------

    def contains(self, ids: Any) -> Any:
        """Membership of each id: a bool for one id, a bool array for a batch."""
        a = self.state
        if type(ids) is int and 0 <= ids < INT64_END:
            return bool(a.contains_key(ids))
        arr, scalar = as_ids(ids)
        found = self.contains_ids(arr, scalar)
        return bool(found[0]) if scalar else found

    def contains_ids(self, arr: np.ndarray, scalar: bool = False) -> np.ndarray:
        """Membership of an id array (negative ids raise)."""
        return self.find_ids(arr, scalar, np.empty(arr.shape[0], np.bool_))

    def holds(self, x: object) -> bool:
        """``x in s`` as for ``set``: any hashable ``x`` gets an answer, and
        only an id can be a member."""
        if type(x) is int and 0 <= x < INT64_END:
            return bool(self.state.contains_key(x))
        x = one_id(x)
        return x is not None and bool(self.contains(x))

    def index(self, ids: Any) -> Any:
        """Position of each id, -1 where absent: an int or an int64 array."""
        arr, scalar = as_ids(ids)
        out = self.index_ids(arr, scalar)
        return int(out[0]) if scalar else out

    def index_ids(self, arr: np.ndarray, scalar: bool = False) -> np.ndarray:
        """Positions of an id array (negative ids raise), -1 where absent."""
        return self.find_ids(arr, scalar, np.empty(arr.shape[0], np.int64))

    def find_ids(self, arr: np.ndarray, scalar: bool, out: np.ndarray) -> np.ndarray:
        """``out`` filled with each id's membership (bool ``out``) or
        position (int64 ``out``), shared out over threads where
        :func:`.pool.shared` says so; negative ids raise, and only then are
        they looked for."""
        a = self.state
        ids = kernel_ids(arr)
        count = ids.shape[0]
        bits = None
        if out.dtype == np.bool_:
            bits = self.member_bits(build=self.bits_pay(count))
        if bits is not None:
            # One L2-sized bitmap: a probe is a cache hit, and a thread
            # of its own would cost more to start and wait for than it saves.
            negative = kernels.algebra.marked_contains(bits, ids, out)
            if negative:
                reject_negative(arr, scalar)
            return out
        sparse, dense, n = a.sparse, a.dense, a.n
        tuning = kernels.LOOKUP_TUNING
        if shared(ids.shape[0]):
            negative = share_out(
                ids.shape[0],
                lambda start, stop: kernels.find_all(
                    sparse, dense, n, ids[start:stop], out[start:stop], *tuning
                ),
            )
        else:
            negative = kernels.find_all(sparse, dense, n, ids, out, *tuning)
        if negative:
            reject_negative(arr, scalar)
        return out

    def index_one(self, x: int) -> int:
        """The position of one valid id (a non-negative int64), -1 if absent."""
        return int(self.state.index_key(x))

    def all_members(self, arr: np.ndarray) -> bool:
        """Whether every id of ``arr`` (valid ids) is a member."""
        return self.first_absent(arr) < 0

    def any_member(self, arr: np.ndarray) -> bool:
        """Whether some id of ``arr`` (valid ids) is a member."""
        a = self.state
        ids = kernel_ids(arr)
        return bool(kernels.first_mismatch(a.sparse, a.dense, a.n, ids, False) >= 0)

    # -- backtracking -----------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        """Mark the current members so that later removals can be undone."""
        a = self.state
        marks, depth = kernels.marks.push_mark(a.marks, a.depth, a.n, a.epoch, a.stamp)
        a.marks, a.depth = marks, depth
        token = Checkpoint(a.owner, depth - 1, a.stamp)
        a.stamp += 1
        return token

    def rollback(self, token: Checkpoint) -> None:
        """Restore every member removed since ``token`` was taken."""
        a = self.state
        count = -1
        if is_token(token) and token[0] == a.owner:
            count = kernels.marks.marked_count(
                a.marks, a.depth, a.epoch, token[1], token[2]
            )
        if count < 0:
            raise ValueError(
                f"{token!r} is not a live checkpoint of this set: an add, clear, "
                "sort or growth since it was taken, or a rollback to an older "
                "checkpoint, invalidated it"
            )
        # Removals only swap ids past n, so restoring n restores them; a hash
        # index erased them, and gets them back.
        kernels.reindex(a.sparse, a.dense, a.n, count)
        n = a.n
        if count != n:
            # The members come back with the n and epoch they had, which
            # other removals could reach from here with other members
            # (a kept bitmap names its members by state, n and epoch).
            self.bits = None
            twin_bits = self.twin_bits()
            a.n = int(count)
            if twin_bits is not None:
                mark_members(twin_bits, a.dense[n:count], count - n)
            if self.twin is not None:
                self.twin.tag_bits(current=twin_bits is not None)
        a.depth = int(token[1]) + 1


__all__ = ["INT64_END", "SetEngine", "SetState"]

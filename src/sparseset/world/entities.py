"""The entity table: generational handles, their liveness and the free list.

An entity is an int64 handle, ``index | generation << 32``. Indexes of
destroyed entities are recycled with the next generation, so a handle kept
past ``destroy`` is dead forever: it no longer resolves, and nothing that
resolves handles through this table can reach the row of the entity that
reuses its index. An index whose generation would pass
:data:`LAST_GENERATION` is retired, never reused.

:class:`Entities` is the table a :class:`~sparseset.World` owns and hands to
its stores, views and groups, which turn handles into indexes (and back)
through its methods only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import config, kernels
from ..kernels.entities import GENERATION_MASK, INDEX_BITS, INDEX_MASK, LIVE
from ..sets.ids import as_ids, kernel_ids, reject_negative
from ..sets.pool import share_out, shared
from ..sets.sparse_set import FLAT_LIMIT

#: A handle's generation lives in bits 32..62, so handles stay positive int64.
LAST_GENERATION = 2**31 - 1
#: Entity indexes live in [0, INDEX_LIMIT): every store's flat index covers them.
INDEX_LIMIT = FLAT_LIMIT


class DeadHandleError(KeyError, ValueError):
    """A handle that is not alive: destroyed, or never created.

    Raised by calls that would change the world, which then change nothing.
    It is a ``ValueError`` (a bad argument) and a ``KeyError`` (no such
    entity), so code written for either catches it.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def where(k: int, scalar: bool) -> str:
    """How a message names the ``k``-th handle of a call's argument.

    Examples
    --------
    >>> where(0, True), where(3, False)
    ('handle', 'handles[3]')
    """
    return "handle" if scalar else f"handles[{k}]"


class Entities:
    """Generations, liveness and free indexes of a world's entities.

    Parameters
    ----------
    capacity : int
        Entity indexes to allocate before growing.

    Examples
    --------
    >>> table = Entities(4)
    >>> e = table.create(2); table.kill(table.resolve(e[:1], "")[0])
    1
    >>> table.alive(e).tolist(), table.create(1).tolist()  # index 0 again
    ([False, True], [4294967296])
    """

    __slots__ = (
        "count",
        "free",
        "generations",
        "held",
        "live",
        "n_free",
    )

    def __init__(self, capacity: int) -> None:
        #: Per index, its generation, with ``kernels.LIVE`` set while it
        #: holds a live entity (see :mod:`sparseset.kernels.entities`); 0
        #: past the indexes ever used.
        self.generations = kernels.allocation.zeros(capacity, np.uint32)
        #: Indexes free for reuse, in ``free[:n_free]``.
        self.free = kernels.allocation.empty(capacity, np.int32)
        self.n_free = 0
        #: Indexes ever used: ``[0, count)``.
        self.count = 0
        #: Live entities.
        self.live = 0
        #: Indexes held for deferred creation: neither alive nor free.
        self.held: set[int] = set()

    @property
    def nbytes(self) -> int:
        """Bytes held by the table's arrays.

        Examples
        --------
        >>> Entities(10).nbytes
        80
        """
        return self.generations.nbytes + self.free.nbytes

    def reserve(self, needed: int) -> bool:
        """Make room for ``needed`` indexes; whether the arrays were replaced.

        Examples
        --------
        >>> table = Entities(0); table.reserve(3), table.generations.shape
        (True, (16,))
        """
        current = self.generations.shape[0]
        if needed <= current:
            return False
        length = kernels.grown_length(current, needed, INDEX_LIMIT)
        for name in ("generations", "free"):
            old = getattr(self, name)
            grown = kernels.allocation.zeros(length, old.dtype)
            grown[:current] = old
            setattr(self, name, grown)
        return True

    def create(self, n: int) -> np.ndarray:
        """Make ``n`` live entities, reusing free indexes first; their handles.

        ``n`` is checked by the caller; the table must have room
        (:meth:`fresh_needed`, :meth:`reserve`).

        Examples
        --------
        >>> table = Entities(2); table.create(2).tolist()
        [0, 1]
        """
        handles = np.empty(n, np.int64)
        self.n_free, self.count = kernels.create_entities(
            self.generations,
            self.free,
            self.n_free,
            self.count,
            handles,
        )
        self.live += n
        return handles

    def hold(self, n: int) -> np.ndarray:
        """Take ``n`` indexes as :meth:`create` would, but leave them dead
        until :meth:`admit` (or :meth:`release`); their handles. The caller
        checks ``n`` and makes room, as for :meth:`create`.

        Examples
        --------
        >>> table = Entities(2); e = table.hold(1)
        >>> table.alive(e).tolist(), table.live, table.create(1).tolist()
        ([False], 0, [1])
        >>> table.admit(e); table.alive(e).tolist(), table.live
        ([True], 2)
        """
        handles = self.create(n)
        keys = handles & np.int64(kernels.INDEX_MASK)
        self.generations[keys] &= np.uint32(kernels.GENERATION_MASK)
        self.live -= n
        self.held.update(keys.tolist())
        return handles

    def admit(self, handles: np.ndarray) -> None:
        """Bring held handles to life (:meth:`hold`).

        Examples
        --------
        >>> table = Entities(1); e = table.hold(1); table.admit(e); table.live
        1
        """
        keys = handles & np.int64(kernels.INDEX_MASK)
        self.held.difference_update(keys.tolist())
        self.generations[keys] |= np.uint32(kernels.LIVE)
        self.live += keys.shape[0]

    def release(self, handles: np.ndarray) -> None:
        """Let held handles die unused: their indexes move to their next
        generation and back to the free list, as if created and destroyed.

        Examples
        --------
        >>> table = Entities(1); e = table.hold(1); table.release(e)
        >>> table.alive(e).tolist(), table.create(1).tolist()  # index 0, gen 1
        ([False], [4294967296])
        """
        self.admit(handles)
        self.kill(handles & np.int64(kernels.INDEX_MASK))

    def fresh_needed(self, n: int) -> int:
        """How many indexes ``create(n)`` takes beyond the free ones.

        Examples
        --------
        >>> Entities(0).fresh_needed(3)
        3
        """
        return max(0, n - self.n_free)

    def kill(self, keys: np.ndarray) -> int:
        """Kill the live entity indexes ``keys`` (a repeat counts once).

        Each index's generation moves on and the index goes to the free
        list, or is retired at :data:`LAST_GENERATION`. Returns how many
        died. The caller has emptied their rows in every store first.

        Examples
        --------
        >>> table = Entities(2); e = table.create(2)
        >>> table.kill(np.array([1, 1])), table.live
        (1, 1)
        """
        self.n_free, killed = kernels.destroy_entities(
            self.generations,
            self.free,
            self.n_free,
            keys,
            LAST_GENERATION,
        )
        self.live -= killed
        return int(killed)

    def lookup(
        self, handles: Any, dead: int
    ) -> tuple[np.ndarray, bool, int, np.ndarray]:
        """Resolve handles without raising for dead ones.

        Returns the index of each handle (``dead`` where it is dead),
        whether the argument was one handle, the position of the first
        dead one (-1: none), and the handles as an array. Bad input
        (negative, non-integer) raises as every batch call does. A batch
        big enough to share out over threads is resolved in spans on
        several (:mod:`sparseset.sets.pool`).

        Examples
        --------
        >>> table = Entities(2); e = table.create(1)
        >>> keys, scalar, first_dead, _ = table.lookup([e[0], 7], dead=-1)
        >>> keys.tolist(), scalar, first_dead
        ([0, -1], False, 1)
        """
        arr, scalar = as_ids(handles)
        reject_negative(arr, scalar)
        ids = kernel_ids(arr)
        count = ids.shape[0]
        keys = np.empty(count, np.int64)
        generations, used = self.generations, self.count
        ahead = config.ADD_PREFETCH_AHEAD
        if not shared(count):
            first_dead = kernels.resolve(generations, used, ids, keys, dead, ahead)
            return keys, scalar, first_dead, arr
        # A big batch in spans on several threads (the kernel releases the
        # GIL): the first dead handle is the least any span found.
        firsts: list[int] = []

        def find(start: int, stop: int) -> bool:
            first = kernels.resolve(
                generations, used, ids[start:stop], keys[start:stop], dead, ahead
            )
            if first >= 0:
                firsts.append(start + first)
            return False

        share_out(count, find)
        first_dead = min(firsts, default=-1)
        return keys, scalar, first_dead, arr

    def resolve(self, handles: Any, consequence: str) -> tuple[np.ndarray, bool]:
        """Indexes of handles that must all be alive, else :class:`DeadHandleError`.

        ``consequence`` ends the message (what the failed call left alone).

        Examples
        --------
        >>> table = Entities(1); table.resolve(5, "nothing changed")
        Traceback (most recent call last):
        ...
        sparseset.DeadHandleError: handle = 5 was never created; ...
        """
        keys, scalar, k, arr = self.lookup(handles, -1)
        if k >= 0:
            raise DeadHandleError(
                f"{where(k, scalar)} = {self.describe(int(arr[k]))}; "
                f"{consequence} (world.alive(handles) tells which are alive)"
            )
        return keys, scalar

    def rows_in(
        self, handles: np.ndarray, sparse: Any, dense: np.ndarray, n: int
    ) -> np.ndarray | None:
        """The rows of ``handles`` (an integer array) in a store keyed by
        entity index (its index ``sparse``, ``dense`` and ``n``) if every
        one is alive and has a row there; else None, and the caller's
        slower path says which is not. One pass
        (:func:`~sparseset.kernels.entities.rows_of_handles`), in spans on
        several threads for a big batch (:mod:`sparseset.sets.pool`).

        Examples
        --------
        >>> table = Entities(3); e = table.create(3)
        >>> sparse = np.array([1, 0, 0], np.uint32); dense = np.array([1, 0], np.int32)
        >>> table.rows_in(e[[0, 1]], sparse, dense, 2).tolist()
        [1, 0]
        >>> table.rows_in(e[[0, 2]], sparse, dense, 2) is None
        True
        """
        ids = kernel_ids(handles)
        count = ids.shape[0]
        out = np.empty(count, np.int64)
        generations, used = self.generations, self.count
        ahead = config.ADD_PREFETCH_AHEAD

        def find(start: int, stop: int) -> bool:
            stopped = kernels.rows_of_handles(
                generations,
                used,
                sparse,
                dense,
                n,
                ids[start:stop],
                out[start:stop],
                ahead,
            )
            return bool(stopped >= 0)

        failed = share_out(count, find) if shared(count) else find(0, count)
        return None if failed else out

    def index_in(
        self, handles: Any, sparse: Any, dense: np.ndarray, n: int
    ) -> tuple[np.ndarray, bool]:
        """The row of each handle in a store keyed by entity index (its
        index ``sparse``, ``dense`` and ``n``), -1 where the handle is dead
        or has no row there, and whether the argument was one handle. One
        pass (:func:`~sparseset.kernels.entities.index_handles`), in spans on
        several threads for a big batch (:mod:`sparseset.sets.pool`). Bad
        input (negative, non-integer) raises as every batch call does.

        Examples
        --------
        >>> table = Entities(3); e = table.create(3); table.kill(e[2:] & 0xFFFFFFFF)
        1
        >>> sparse = np.array([1, 0, 0], np.uint32); dense = np.array([1, 0], np.int32)
        >>> rows, scalar = table.index_in(e, sparse, dense, 2)
        >>> rows.tolist(), scalar
        ([1, 0, -1], False)
        """
        arr, scalar = as_ids(handles)
        reject_negative(arr, scalar)
        ids = kernel_ids(arr)
        count = ids.shape[0]
        out = np.empty(count, np.int64)
        generations, used = self.generations, self.count
        ahead = config.ADD_PREFETCH_AHEAD

        def find(start: int, stop: int) -> bool:
            kernels.index_handles(
                generations,
                used,
                sparse,
                dense,
                n,
                ids[start:stop],
                out[start:stop],
                ahead,
            )
            return False

        if shared(count):
            share_out(count, find)
        else:
            find(0, count)
        return out, scalar

    def index_of(self, handle: int) -> int:
        """The index of ``handle`` (a non-negative Python int) if it is alive,
        else -1: for one handle, where a kernel call costs more.

        Examples
        --------
        >>> table = Entities(1); e = table.create(1)
        >>> table.index_of(int(e[0])), table.index_of(2**32)
        (0, -1)
        """
        index, generation = handle & INDEX_MASK, handle >> INDEX_BITS
        if (
            index < self.count
            and generation < LIVE
            and self.generations.item(index) == generation | LIVE
        ):
            return index
        return -1

    def describe(self, handle: int) -> str:
        """Why ``handle`` is dead, for messages.

        Examples
        --------
        >>> Entities(0).describe(3)
        '3 was never created'
        >>> table = Entities(1); table.describe(int(table.hold(1)[0]))[:45]
        '0 (index 0, generation 0) is not created yet:'
        """
        index, generation = handle & kernels.INDEX_MASK, handle >> kernels.INDEX_BITS
        if handle >= 2**63 or index >= self.count:
            return f"{handle} was never created"
        current = int(self.generations[index]) & GENERATION_MASK
        if generation > current:
            return (
                f"{handle} (index {index}, generation {generation}) was never created"
            )
        if generation == current and index in self.held:
            return (
                f"{handle} (index {index}, generation {generation}) is not created "
                "yet: a deferred create (cmd.create) handed it out and its buffer "
                "is not applied; record this on the same buffer (cmd.add, "
                "cmd.destroy, ...) or call it after the with block ends"
            )
        return (
            f"{handle} (index {index}, generation {generation}) is dead: that "
            "entity was destroyed"
        )

    def alive(self, handles: Any) -> Any:
        """Whether each handle is a live entity: a bool, or a bool array.

        Examples
        --------
        >>> table = Entities(1); e = table.create(1)
        >>> table.alive(e[0]), table.alive([e[0], 2**40]).tolist()
        (True, [True, False])
        """
        keys, scalar, _, _ = self.lookup(handles, -1)
        found = keys >= 0
        return bool(found[0]) if scalar else found

    def handles(
        self,
        keys: np.ndarray,
        at: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """The current handles of live entity indexes ``keys``, or of
        ``keys[at]`` for positions ``at`` (without building that array);
        into ``out`` (int64, of their length; ``keys`` itself, if int64,
        for handles in place) when given.

        A batch big enough to share out over threads is made in spans on
        several (:mod:`sparseset.sets.pool`).

        Examples
        --------
        >>> table = Entities(2); e = table.create(2); table.kill(np.array([0]))
        1
        >>> table.create(1); table.handles(np.array([0, 1])).tolist()
        array([4294967296])
        [4294967296, 1]
        >>> table.handles(np.array([1, 0]), at=np.array([1], np.uint32)).tolist()
        [4294967296]
        """
        count = keys.shape[0] if at is None else at.shape[0]
        if out is None:
            out = np.empty(count, np.int64)
        generations = self.generations

        def make(start: int, stop: int) -> bool:
            if at is None:
                kernels.handles_of(generations, keys[start:stop], out[start:stop])
            else:
                kernels.handles_at(
                    generations,
                    keys,
                    at[start:stop],
                    out[start:stop],
                    config.ADD_PREFETCH_AHEAD,
                )
            return False

        if shared(count):
            share_out(count, make)
        else:
            make(0, count)
        return out

    def live_keys(self) -> np.ndarray:
        """Every live entity's index, ascending.

        Examples
        --------
        >>> table = Entities(3); e = table.create(3); table.kill(np.array([1]))
        1
        >>> table.live_keys().tolist()
        [0, 2]
        """
        return np.flatnonzero(self.generations[: self.count] & np.uint32(LIVE))

    def snapshot(self) -> EntityTable:
        """The table as arrays: what a saved world keeps (each index's
        generation and liveness apart, copies; the free list a view).

        Examples
        --------
        >>> table = Entities(4); e = table.create(3); table.kill(np.array([1]))
        1
        >>> [a.tolist() for a in table.snapshot()]
        [[0, 1, 0], [True, False, True], [1]]
        """
        free = self.free[: self.n_free]
        if self.held:  # indexes of an unapplied buffer: free in a saved world
            free = np.concatenate([free, np.array(sorted(self.held), np.int32)])
        words = self.generations[: self.count]
        return EntityTable(
            words & np.uint32(GENERATION_MASK), (words & np.uint32(LIVE)) != 0, free
        )

    def restore(self, table: EntityTable) -> bool:
        """Become the (checked) ``table`` of a :meth:`snapshot`; whether the
        arrays were replaced (see :meth:`reserve`).

        Examples
        --------
        >>> source = Entities(4); e = source.create(3); source.kill(np.array([1]))
        1
        >>> copy = Entities(0); copy.restore(source.snapshot()); copy.live
        True
        2
        """
        count = table.generations.shape[0]
        replaced = self.reserve(count)
        self.generations[:count] = table.generations | np.where(
            table.alive, np.uint32(LIVE), np.uint32(0)
        )
        self.free[: table.free.shape[0]] = table.free
        self.count, self.n_free = count, table.free.shape[0]
        self.live = int(table.alive.sum())
        self.held = set()
        return replaced


class EntityTable(NamedTuple):
    """An entity table as arrays: each index's generation and liveness, and
    the free list."""

    generations: np.ndarray
    alive: np.ndarray
    free: np.ndarray


__all__ = [
    "INDEX_LIMIT",
    "LAST_GENERATION",
    "DeadHandleError",
    "Entities",
    "EntityTable",
    "where",
]

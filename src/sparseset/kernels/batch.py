"""Batch kernels: one compiled loop over a whole id array per operation.

Each loop is built from the single-id operations in :mod:`.element`, so the
set logic exists once. No kernel raises for bad user input: where a bad id
matters the kernel reports its position and the Python layer raises.

The kernels that chunk a batch or prefetch ahead take those distances as
trailing arguments, which callers pass from :mod:`sparseset.config`
(:data:`UPSERT_TUNING`, :data:`LOOKUP_TUNING`, :data:`JOIN_TUNING`). They
are run-time values, not constants frozen into the compiled code: a kernel
loaded from numba's cache follows the ``SPARSESET_*`` settings of the
process that runs it. (Defaults would not do: numba's dispatcher takes
its slow path, tens of microseconds, for every call that omits one.)
"""

import numpy as np
from numba import njit
from numba.core import types as numba_types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload, register_jitable

from .. import config
from .columns import move_row, prefetch_rows
from .element import claim, confirm, find, swap_members, swap_remove
from .index.kinds import (
    erase,
    insert,
    kind_of_type,
    looks_ahead,
    lookup,
    lookup_many,
    move,
    prefetch_slot,
    prefetches_slots,
    room,
)
from .options import NO_NRT, OVERLOAD_NO_NRT
from .prefetch import prefetch

#: The tuning arguments callers pass to :func:`upsert`
#: (:data:`~sparseset.config.LOOKUP_CHUNK`,
#: :data:`~sparseset.config.ADD_PREFETCH_AHEAD`,
#: :data:`~sparseset.config.HASH_PREFETCH_AHEAD`).
UPSERT_TUNING = (
    config.LOOKUP_CHUNK,
    config.ADD_PREFETCH_AHEAD,
    config.HASH_PREFETCH_AHEAD,
)
#: The tuning arguments callers pass to :func:`find_all`
#: (:data:`~sparseset.config.LOOKUP_CHUNK`,
#: :data:`~sparseset.config.DENSE_PREFETCH_AHEAD`,
#: :data:`~sparseset.config.HASH_PREFETCH_AHEAD`).
LOOKUP_TUNING = (
    config.LOOKUP_CHUNK,
    config.DENSE_PREFETCH_AHEAD,
    config.HASH_PREFETCH_AHEAD,
)
#: The tuning argument callers pass to :func:`join_rows`
#: (:data:`~sparseset.config.ADD_PREFETCH_AHEAD`).
JOIN_TUNING = (config.ADD_PREFETCH_AHEAD,)


@njit(cache=True)
def upsert(
    sparse,
    dense,
    n,
    ids,
    positions,
    start,
    chunk,
    add_ahead,
    hash_ahead,
):
    """Append the non-members of ``ids[start:]`` once each, in batch order.

    The caller guarantees ``len(dense) >= min(row limit, n + len(ids))``.
    Unless ``positions`` is empty, ``positions[k]`` receives the dense
    position of ``ids[k]``, new or not (a store writes its rows there).
    Returns ``(new_n, stop)``: ``stop`` is -1 when the batch is done, else
    the position of an id the index could not take (negative, out of its
    range or, for flat, past capacity) or had no room for (paged pools,
    hash load). Everything before ``stop`` is in; the caller validates,
    grows and calls again from ``stop``, or undoes the batch (``unindex``
    and restoring ``n``). Checking inside the loop costs one predictable
    compare, where a validation pass would re-read the whole batch.

    ``chunk``, ``add_ahead`` and ``hash_ahead`` are the tuning arguments
    (see the module; :data:`~sparseset.config.LOOKUP_CHUNK`,
    :data:`~sparseset.config.ADD_PREFETCH_AHEAD`,
    :data:`~sparseset.config.HASH_PREFETCH_AHEAD`).

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> positions = np.empty(3, np.int64)
    >>> batch = np.array([3, 1, 3])
    >>> upsert(sparse, dense, 0, batch, positions, 0, *UPSERT_TUNING), positions
    ((2, -1), array([0, 1, 0]))
    >>> batch = np.array([4, 9])
    >>> upsert(sparse, dense, 2, batch, NO_POSITIONS, 0, *UPSERT_TUNING)  # 9: no room
    (3, 1)
    """
    return upsert_loop(
        sparse, dense, n, ids, positions, start, chunk, add_ahead, hash_ahead
    )


def upsert_loop(sparse, dense, n, ids, positions, start, chunk, add_ahead, hash_ahead):
    """:func:`upsert_ahead` where the index :func:`~.kinds.prefetches_slots`,
    else :func:`upsert_warmed`.

    Compiled code takes the overload below, which picks the loop from the
    index's type, so only that loop is typed and compiled (a branch would
    compile both).
    """
    if prefetches_slots(sparse):
        return upsert_ahead(sparse, dense, n, ids, positions, start, add_ahead)
    return upsert_warmed(sparse, dense, n, ids, positions, start, chunk, hash_ahead)


@overload(upsert_loop)
def _upsert_loop(sparse, dense, n, ids, positions, start, chunk, add_ahead, hash_ahead):
    kind = kind_of_type(sparse)
    if kind is None:
        return None
    if kind.PREFETCHES_SLOTS:

        def ahead(
            sparse, dense, n, ids, positions, start, chunk, add_ahead, hash_ahead
        ):
            return upsert_ahead(sparse, dense, n, ids, positions, start, add_ahead)

        return ahead

    def warmed(sparse, dense, n, ids, positions, start, chunk, add_ahead, hash_ahead):
        return upsert_warmed(sparse, dense, n, ids, positions, start, chunk, hash_ahead)

    return warmed


#: ``positions`` for an :func:`upsert` that records none: a set's ``add``.
NO_POSITIONS = np.empty(0, np.int64)


@register_jitable
def upsert_ahead(sparse, dense, n, ids, positions, start, ahead):
    """:func:`upsert` in one pass, for an index whose slots
    :func:`~.kinds.prefetches_slots` says a loop can prefetch: each step
    prefetches the slot of the id ``ahead`` on and, where the kind
    :func:`~.kinds.looks_ahead`, the dense entry of the candidate half as
    far on, so the cache misses of many ids are in flight at once while
    each id is claimed in order, with no second pass over the batch as in
    :func:`upsert_warmed`.
    """
    record = positions.shape[0] != 0
    m = n
    if start >= ids.shape[0]:
        return m, -1
    last = np.uint64(ids.shape[0] - 1)
    for k in range(start, ids.shape[0]):
        u = np.uint64(k)
        prefetch_slot(sparse, ids[min(u + np.uint64(ahead), last)])
        if looks_ahead(sparse):
            c = lookup(sparse, ids[min(u + np.uint64(ahead // 2), last)])
            prefetch(dense, c if c < np.uint64(m) else np.uint64(0))
        p = claim(sparse, dense, m, ids[u])
        if p < 0:
            return m, k
        if p == m:
            m += 1
        if record:
            positions[u] = p
    return m, -1


@register_jitable
def upsert_warmed(sparse, dense, n, ids, positions, start, chunk, ahead):
    """:func:`upsert` ``chunk`` ids at a time, each chunk's index slots and
    dense entries read in a first pass (:func:`~.kinds.lookup_many`,
    prefetching ``ahead``): short and independent loads, whose cache misses
    overlap; the sequential pass then finds them in cache. For the kinds
    where a slot's address takes a lookup (paged, hash).
    """
    record = positions.shape[0] != 0
    m = n
    warm = np.empty(chunk, np.uint64)
    for first in range(start, ids.shape[0], chunk):
        last = min(first + chunk, ids.shape[0])
        # Stored so that the loads are not optimised out.
        lookup_many(sparse, ids, first, last, warm, ahead)
        for k in range(first, last):
            i = np.uint64(k - first)
            p = warm[i]
            warm[i] = np.uint64(dense[p]) if p < np.uint64(m) else p
        for k in range(first, last):
            # Unsigned: k starts at a runtime value, so numba would otherwise
            # guard every access against negative indexes.
            u = np.uint64(k)
            p = claim(sparse, dense, m, ids[u])
            if p < 0:
                return m, k
            if p == m:
                m += 1
            if record:
                positions[u] = p
    return m, -1


def grown_index(sparse, dense, n, members, top):
    """A grown copy of the index with the positions of ``dense[:n]``.

    :func:`.kinds.grow` for the containers: room for ``members`` members
    (hash), ids up to ``top`` (flat), doubled pools (paged). The arrays are
    allocated here, by numpy (huge pages: fewer first-touch faults, see
    :func:`.kinds.room`), and filled by the compiled :func:`move_index`;
    a flat index, whose move is a plain copy, by numpy, which spares a
    process the compilation.

    Examples
    --------
    >>> import numpy as np
    >>> grown_index(np.empty(4, np.uint32), np.empty(0, np.int32), 0, 0, 99).shape
    (100,)
    """
    grown = room(sparse, n, members, top)
    if isinstance(sparse, np.ndarray) and isinstance(grown, np.ndarray):
        grown[: sparse.shape[0]] = sparse
    else:
        move_index(sparse, grown, dense, n)
    return grown


@njit(**NO_NRT)
def move_index(sparse, grown, dense, n):
    """Fill ``grown``, an index from :func:`.kinds.room`, with the positions
    of ``dense[:n]`` that ``sparse`` holds (:func:`.kinds.move`).

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels import kinds
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> upsert(sparse, dense, 0, np.array([3, 5]), NO_POSITIONS, 0, *UPSERT_TUNING)
    (2, -1)
    >>> grown = kinds.room(sparse, 2, 2, 20); move_index(sparse, grown, dense, 2)
    >>> grown.shape, grown[[3, 5]].tolist()
    ((21,), [0, 1])
    """
    move(sparse, grown, dense, n)


@njit(cache=True)
def unindex(sparse, dense, start, stop):
    """Erase the ids ``dense[start:stop]`` from the index (an undone batch).

    Only a hash index reclaims anything; for flat and paged this is a no-op.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels import hashed, kinds
    >>> ix = hashed.empty(seed=0); dense = np.empty(4, np.int64)
    >>> upsert(ix, dense, 0, np.array([5, 6]), NO_POSITIONS, 0, *UPSERT_TUNING)
    (2, -1)
    >>> unindex(ix, dense, 0, 2); bool(kinds.lookup(ix, 5) == kinds.NOWHERE)
    True
    """
    for k in range(start, stop):
        erase(sparse, dense[np.uint64(k)])


@njit(cache=True)
def reindex(sparse, dense, start, stop):
    """Point the index at ``dense[k]`` for every k in ``[start, stop)``.

    For ids the index already holds (never needs to grow): after moving
    members around in ``dense`` (a sort, a permutation), or to restore the
    ids a rollback brings back, which a hash index had erased.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> upsert(sparse, dense, 0, np.array([3, 5]), NO_POSITIONS, 0, *UPSERT_TUNING)
    (2, -1)
    >>> dense[:2] = [5, 3]; reindex(sparse, dense, 0, 2); sparse[[3, 5]].tolist()
    [1, 0]
    """
    for k in range(start, stop):
        insert(sparse, dense[np.uint64(k)], k)


#: The tuning argument callers pass to :func:`discard_rows` and
#: :func:`discard` (:data:`~sparseset.config.ADD_PREFETCH_AHEAD`).
DISCARD_TUNING = (config.ADD_PREFETCH_AHEAD,)


@njit(**NO_NRT)
def discard_rows(sparse, dense, n, ids, rows, ahead):
    """Swap-and-pop every member of ``ids`` in batch order, moving its rows.

    ``rows`` is a tuple of 2-D arrays (a store's columns, viewed as words),
    whose row ``p`` belongs to ``dense[p]``; each removal copies the last
    member's row of every column into the hole. Non-members, including ids
    past capacity, are ignored; the caller has rejected negative ids.
    Returns the new n.

    Where the index :func:`~.kinds.prefetches_slots`, each step prefetches
    the slot of the id ``ahead`` on and, where the kind
    :func:`~.kinds.looks_ahead`, the dense entry and every column's row of
    the candidate half as far on, and the slot of the member that will be
    last by then: the misses of many removals are in flight at once, so
    each column a store carries adds little to a removal's wait.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([0, 2, 3])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> mass = np.array([[10], [12], [13]], np.int64)
    >>> n = discard_rows(sparse, dense, n, np.array([0, 7]), (mass,), *DISCARD_TUNING)
    >>> dense[:n].tolist(), mass[:n, 0].tolist()
    ([3, 2], [13, 12])
    """
    if ids.shape[0] == 0:
        return n
    final = np.uint64(ids.shape[0] - 1)
    half = np.uint64(ahead // 2)
    for k in range(ids.shape[0]):
        u = np.uint64(k)
        prefetch_slot(sparse, ids[min(u + np.uint64(ahead), final)])
        if looks_ahead(sparse) and n > 0:
            c = lookup(sparse, ids[min(u + half, final)])
            if c < np.uint64(n):
                prefetch(dense, c)
                prefetch_rows(rows, np.uint64(c))
            # If the removals ahead all hit, this member is the last one then.
            t = np.uint64(n - 1) - min(half, np.uint64(n - 1))
            prefetch_slot(sparse, dense[t])
        p = find(sparse, dense, n, ids[u])
        if p >= 0:
            n = swap_remove(sparse, dense, n, p)
            # Written into this loop by numba's inliner, in an NRT-free
            # kernel: an out-of-line call per removal, or the reference
            # counts of the columns, would each dominate the loop (the
            # counts are locked, which serialises the cache misses).
            move_row(rows, np.uint64(n), np.uint64(p))
    return n


@njit(cache=True)
def discard(sparse, dense, n, ids, ahead):
    """:func:`discard_rows` for a set without columns; returns the new n.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([0, 2, 3])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> n = discard(sparse, dense, n, np.array([0, 7]), *DISCARD_TUNING)
    >>> dense[:n].tolist()
    [3, 2]
    """
    # One zero-width column: numba cannot iterate an empty tuple.
    return discard_rows(sparse, dense, n, ids, (np.empty((0, 0), np.uint8),), ahead)


def answer(out, k, p):
    """Record the lookup of ``ids[k]``, at dense position ``p`` (-1 if
    absent), in ``out[k]``: membership for a bool ``out``, else ``p``."""
    out[k] = p >= 0 if out.dtype == np.bool_ else p


@overload(answer, jit_options=OVERLOAD_NO_NRT)
def _answer(out, k, p):
    # Chosen by out's type when compiling: no flag is tested in the loop.
    if out.dtype == numba_types.boolean:

        def membership(out, k, p):
            out[k] = p >= 0

        return membership

    def position(out, k, p):
        out[k] = p

    return position


@register_jitable
def lookup_chunk(sparse, dense, n, ids, start, stop, out, dense_ahead, hash_ahead):
    """Look up ``ids[start:stop]`` into ``out`` (see :func:`answer`).
    Returns the OR of the ids (sign bit set if some id may be negative).

    Two passes: index lookups (:func:`~.kinds.lookup_many`, prefetching
    ``hash_ahead``), then dense checks. Each loop body stays short, so the
    CPU keeps more independent cache misses in flight, above all on the
    paged and hash indexes. The check pass prefetches the dense entry of
    the candidate ``dense_ahead`` places on, so its misses overlap too.
    """
    candidates = np.empty(stop - start, np.uint64)
    lookup_many(sparse, ids, start, stop, candidates, hash_ahead)
    bits = np.int64(0)
    last = stop - start - 1
    for k in range(start, stop):
        i = k - start
        coming = candidates[np.uint64(min(i + dense_ahead, last))]
        prefetch(dense, coming if coming < np.uint64(n) else np.uint64(0))
        u = np.uint64(k)
        x = ids[u]
        bits |= np.int64(x)
        answer(out, u, confirm(dense, n, candidates[np.uint64(i)], x))
    return bits


@njit(cache=True, nogil=True)
def find_all(
    sparse,
    dense,
    n,
    ids,
    out,
    chunk,
    dense_ahead,
    hash_ahead,
):
    """Fill ``out[k]`` with the answer for ``ids[k]``: its membership if
    ``out`` is bool (``contains``), else its dense position, -1 if absent
    (``index``); numba compiles one variant per ``out`` type.

    Returns True if some id may be negative: the sign bits of all ids are
    OR-ed together, which costs no branch, so the caller looks for the
    culprit only when this says so (a uint64 id past 2**63 also sets it).
    The batch is looked up ``chunk`` ids at a time, each chunk with its
    own prefetch pipeline. The kernel releases the GIL: a big batch is
    shared out over threads in spans (:mod:`sparseset.sets.pool`). The last
    three arguments are the tuning arguments (see the module).

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([3, 5])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> member = np.empty(3, np.bool_); position = np.empty(3, np.int64)
    >>> queries = np.array([5, 4, 99])
    >>> find_all(sparse, dense, n, queries, member, *LOOKUP_TUNING), member.tolist()
    (False, [True, False, False])
    >>> queries = np.array([5, 4, 3])
    >>> find_all(sparse, dense, n, queries, position, *LOOKUP_TUNING), position.tolist()
    (False, [1, -1, 0])
    """
    negative = False
    for start in range(0, ids.shape[0], chunk):
        stop = min(start + chunk, ids.shape[0])
        bits = lookup_chunk(
            sparse, dense, n, ids, start, stop, out, dense_ahead, hash_ahead
        )
        negative |= bits < 0
    return negative


@njit(**NO_NRT, nogil=True)
def join_rows(keys, sparse, dense, n, rows, found, ahead):
    """Where the members among ``keys`` are, in ``keys`` and in the set.

    For each k in order whose ``keys[k]`` is in ``(sparse, dense, n)``,
    appends k to ``rows`` and its dense position to ``found`` (each as long
    as ``keys``); returns how many matched. One pass for a view's join of
    two stores, where a lookup, a mask and compactions each re-read the
    batch; the matched keys themselves are ``keys[rows]``, gathered only by
    a caller that needs them. On a flat index it prefetches ``ahead`` (a
    tuning argument, see the module) as :func:`upsert_ahead` does. It
    releases the GIL: a big batch is joined in spans on several threads
    (:mod:`sparseset.sets.pool`).

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([5, 2, 7])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> keys = np.array([7, 3, 5])
    >>> rows = np.empty(3, np.uint32); found = np.empty(3, np.uint32)
    >>> m = join_rows(keys, sparse, dense, n, rows, found, *JOIN_TUNING)
    >>> rows[:m].tolist(), found[:m].tolist()
    ([0, 2], [2, 0])
    """
    m = 0
    if keys.shape[0] == 0:
        return m
    last = np.uint64(keys.shape[0] - 1)
    for k in range(keys.shape[0]):
        u = np.uint64(k)
        prefetch_slot(sparse, keys[min(u + np.uint64(ahead), last)])
        if looks_ahead(sparse):
            c = lookup(sparse, keys[min(u + np.uint64(ahead // 2), last)])
            prefetch(dense, c if c < np.uint64(n) else np.uint64(0))
        p = find(sparse, dense, n, keys[u])
        if p >= 0:
            j = np.uint64(m)
            rows[j] = k
            found[j] = p
            m += 1
    return m


@njit(cache=True)
def first_mismatch(sparse, dense, n, ids, want_member):
    """First position k where membership of ``ids[k]`` differs from the wish.

    With ``want_member=True`` this finds the first absent id (``remove``'s
    all-present check, subset tests); with False the first present one
    (disjointness). Returns -1 when every id matches.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([3, 5])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> first_mismatch(sparse, dense, n, np.array([5, 3, 4]), True)
    2
    """
    for k in range(ids.shape[0]):
        if (find(sparse, dense, n, ids[k]) >= 0) != want_member:
            return k
    return -1


@njit(cache=True)
def id_bounds(ids):
    """The smallest and the largest of ``ids`` (at least one id), in one
    pass: what validating a batch needs, at a fraction of two numpy
    reductions' cost on a small batch.

    Examples
    --------
    >>> import numpy as np
    >>> id_bounds(np.array([4, -2, 9]))
    (-2, 9)
    """
    low = high = ids[0]
    for k in range(1, ids.shape[0]):
        # min and max, not an if/elif: branch-free, so the loop vectorises.
        x = ids[k]
        low = min(low, x)
        high = max(high, x)
    return low, high


#: The exponent bits of a float64: all set in a NaN or an infinity alone.
FLOAT64_EXPONENT = np.uint64(0x7FF0000000000000)


@njit(cache=True, nogil=True)
def any_non_finite(bits):
    """Whether the float64 values whose bits ``bits`` holds (``x.view(np.uint64)``
    of a contiguous array) include a NaN or an infinity.

    It only reads, so it releases the GIL: a big batch is checked in spans
    on several threads (:mod:`sparseset.sets.pool`). An integer max of the
    exponent bits, which compiles to vector code: numpy's
    ``isfinite(...).any()`` writes a mask first, and a float compare per
    value with an early exit does not vectorise.

    Examples
    --------
    >>> import numpy as np
    >>> any_non_finite(np.array([0.0, -2.5, np.inf]).view(np.uint64))
    True
    >>> any_non_finite(np.array([0.0, -2.5, 1e308]).view(np.uint64))
    False
    """
    top = np.uint64(0)
    for k in range(bits.shape[0]):
        top = max(top, bits[k] & FLOAT64_EXPONENT)
    return top == FLOAT64_EXPONENT


#: :func:`distinct_estimate`'s registers: ``2**ESTIMATE_BITS``, each a byte.
ESTIMATE_BITS = 14


@register_jitable
def mixed(x):
    """``x`` hashed to 64 bits in which every input bit moves every output
    bit (murmur3's finalizer), for estimates that need random-looking bits
    of any ids, sequential and strided ones included.

    Examples
    --------
    >>> with np.errstate(over="ignore"):  # uncompiled, numpy warns of the wrap
    ...     int(mixed(np.uint64(1))) != int(mixed(np.uint64(2)))
    True
    """
    h = np.uint64(x)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@njit(cache=True)
def distinct_estimate(ids, start, stop):
    """About how many distinct ids ``ids[start:stop]`` holds (at least
    one), with the smallest and the largest of them: ``(estimate, low,
    high)``, in one pass and 16 KiB. The estimate is a HyperLogLog sketch of
    ``2**ESTIMATE_BITS`` registers (a standard error of about 0.8%, 1.04 /
    sqrt(registers)), linear counting for small counts. The registers stay
    in the L1 cache, so four times the 4 KiB sketch's costs no more per id
    and halves its error.

    What a batch's distinct ids will need is unknown until they are
    counted; this sizes a table for them in one pass over the ids, where
    growing by doubling would rehash every member a second time. The
    bounds ride along in the vectorised loop (a min and a max), so that a
    batch estimated before it is validated is read once for both (see
    ``ComponentStore.add_at``).

    Examples
    --------
    >>> ids = np.arange(100_000) % 30_000
    >>> estimate, low, high = distinct_estimate(ids, 0, 100_000)
    >>> 0.95 < estimate / 30_000 < 1.05, low, high
    (True, 0, 29999)
    >>> distinct_estimate(ids, 99_990, 100_000)
    (10, 9990, 9999)
    """
    registers = np.zeros(1 << ESTIMATE_BITS, np.uint8)
    low = np.uint64(64 - ESTIMATE_BITS)
    # A stop bit, so a hash whose low bits are all zero still has a rank.
    ranked = np.uint64(1) << low
    # Hashed a chunk at a time first: that loop vectorises, the register
    # updates cannot.
    hashes = np.empty(1024, np.uint64)
    smallest = largest = ids[start]
    # Unsigned throughout: numba would otherwise guard every access
    # against negative indexes.
    total_ids = np.uint64(stop)
    chunk = np.uint64(hashes.shape[0])
    for first in range(np.uint64(start), total_ids, chunk):
        count = min(chunk, total_ids - first)
        for i in range(count):
            x = ids[first + i]
            smallest = min(smallest, x)
            largest = max(largest, x)
            hashes[i] = mixed(x)
        for i in range(count):
            h = hashes[i]
            r = h >> low
            rank = np.uint8(trailing_zeros(h | ranked) + 1)  # type: ignore[call-arg]
            # A branch, not a max: rarely taken once the registers have
            # filled, so most steps store nothing.
            if rank > registers[r]:
                registers[r] = rank
    size = float(registers.shape[0])
    # How many registers hold each rank, then one power per rank: a power
    # per register would cost more than sketching a short batch.
    # (Ranks run to 64 - ESTIMATE_BITS + 1, the stop bit's.)
    ranks = np.zeros(64, np.int64)
    for r in range(registers.shape[0]):
        ranks[registers[r]] += 1
    total = 0.0
    for value in range(ranks.shape[0]):
        total += ranks[value] * 2.0**-value
    empty = ranks[0]
    estimate = 0.7213 / (1.0 + 1.079 / size) * size * size / total
    if estimate <= 2.5 * size and empty > 0:
        estimate = size * np.log(size / empty)
    return round(estimate), smallest, largest


@njit(cache=True)
def keep_only(sparse, dense, n, ids):
    """Remove every member not in ``ids``; return the new n.

    Members found in ``ids`` are swapped to the front in batch order, so the
    removed ones end up past the new n, exactly as swap-and-pop leaves them
    (rollback restores them). The caller has rejected negative ids.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([1, 2, 3, 4])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> n = keep_only(sparse, dense, n, np.array([4, 2, 6]))
    >>> dense[:n].tolist()
    [4, 2]
    """
    kept = 0
    for k in range(ids.shape[0]):
        p = find(sparse, dense, n, ids[k])
        if p >= kept:
            # Swap ids[k] into slot `kept`; positions below it are settled.
            swap_members(sparse, dense, p, kept)
            kept += 1
    for k in range(kept, n):
        erase(sparse, dense[k])
    return kept


@njit(cache=True)
def sort(sparse, dense, n):
    """Sort ``dense[:n]`` ascending and point ``sparse`` at the new positions.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([5, 1, 3])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> sort(sparse, dense, n); dense[:n].tolist()
    [1, 3, 5]
    """
    dense[:n].sort()
    reindex(sparse, dense, 0, n)

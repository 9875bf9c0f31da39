"""The hash index: open addressing from id to position, for ids in [0, 2**63).

The table holds a key and a position word per slot, 16 bytes, in buckets
of 4 slots: one 64-byte cache line, the bucket's 4 keys first, then their
4 positions (``table[bucket, way]`` and ``table[bucket, WAYS + way]``). A
probe reads the keys alone, so a count just stored in a position word
(:func:`tally`) does not hold up the next probe of its bucket, as a load
spanning a store still in flight would. A key is stored complemented
(``~id``, negative), so 0 marks a free slot and a new table is plain
zeroed memory: pages the OS hands out already zeroed, with no fill pass.

Linear probing from a home bucket, a seeded Fibonacci hash of the id (the
top bits of ``(id ^ seed) * 2**64/phi``), which spreads ids colliding
modulo the table size, strided and sequential ids evenly, in one multiply.
A probe compares the 4 keys of a bucket in vector compares and takes
the first slot holding the id or free, with no branch on the data; it
goes on to the next bucket only past a full home bucket (rare below the
load limit), so a lookup mostly reads one cache line and mispredicts
nothing, where probing slot by slot from a home slot branches on every
key. The price: the slot found depends on the keys loaded, so a lone
insert that misses the cache cannot issue its store before the line
arrives; inserts one at a time into a table far larger than the cache,
with no lookup ahead, are slower than slot by slot would be (a batch add
looks its chunk up first, prefetching, and then finds its lines in cache).

Deletion shifts later entries of the probe run back (no tombstones), so
churn never degrades lookups. Memory follows the members: 16 bytes a
slot, the table at most ``meta[LOAD]`` percent full
(:data:`sparseset.config.HASH_MAX_LOAD_PERCENT` when it was made; a grown
table keeps its index's limit). The limit travels in the index, not in
compiled code, so Python and every kernel size and fill a table alike.

As for the other kinds, a found position is only a candidate: the set
checks ``dense`` before trusting it, so entries left behind by ``clear``
or an undone batch are harmless garbage until the next rebuild drops them.

These are the hash versions of the operations :mod:`.kinds` dispatches on;
call them through it.
"""

import os
from typing import Any, NamedTuple

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable

from ... import config
from .. import allocation
from ..options import MAX_MEMBERS, NOWHERE, OVERLOAD_NO_NRT
from ..prefetch import prefetch

#: An id's home bucket follows from its hash alone, so an add loop can
#: prefetch the buckets of ids ahead (see ``prefetch_slot``).
PREFETCHES_SLOTS = True
#: A lookup is a probe: looking ahead for the dense entries of coming ids
#: costs more than the misses it hides.
LOOKS_AHEAD = False
#: A slot holds its id: a lookup answers a position only for an id stored
#: in the table. Stale entries come only from ``clear`` and undone batches,
#: so a table rebuilt from ``dense`` (:func:`move`) and written since by
#: claims alone answers exactly the members' positions.
KEYED = True

#: The kind's name, as ``SparseSet(index=...)`` takes it.
NAME = "hash"
#: Ids the hash index can take: [0, LIMIT).
LIMIT = 2**63
#: ``dense``'s dtype: the narrowest that holds every id in range.
ID_DTYPE = np.dtype(np.int64)
#: A capacity counts members: the table follows them, not the id space.
CAPACITY_COUNTS_IDS = False
#: The largest capacity a hash set takes (see :mod:`.options`).
MAX_CAPACITY = MAX_MEMBERS
#: A key word holding this is a free slot (keys are stored as ``~id < 0``).
EMPTY = 0
#: The fewest slots a table has: one bucket is 4, so a few buckets.
MIN_SLOTS = 16
#: Slots per bucket: one 64-byte cache line.
WAYS = 4
#: Byte alignment of a table this module allocates: a bucket per line.
ALIGN = 64
#: A position word above this holds a tally (see :func:`tally`).
_POSITIONS = 0xFFFFFFFF
#: How many members ahead a rehash (:func:`move`) prefetches home buckets:
#: enough misses in flight to cover a line's latency, few enough that the
#: lines stay in L1 until their inserts.
MOVE_AHEAD = 16


class HashIndex(NamedTuple):
    """The arrays of a hash index (see the module docstring)."""

    table: np.ndarray  # int64 (buckets, 2 * WAYS): keys ~id (EMPTY if free), positions
    meta: np.ndarray  # int64 [slots in use, seed, shift, load]; see USED..LOAD


#: ``meta``: slots in use.
USED = 0
#: ``meta``: the seed of the hash.
SEED = 1
#: ``meta``: ``64 - log2(buckets)``, the shift taking a hash to its bucket.
SHIFT = 2
#: ``meta``: the most slots in use, in percent of the slots, before growing.
LOAD = 3
META_LENGTH = 4


@register_jitable
def over_load(used: int, slots: int, load: int) -> bool:
    """Whether ``used`` slots in use are more than ``load`` percent of ``slots``.

    Examples
    --------
    >>> over_load(8, 16, 50), over_load(9, 16, 50), over_load(9, 16, 60)
    (False, True, False)
    """
    return used * 100 > slots * load


@register_jitable
def slots_for(members: int, load: int) -> int:
    """The smallest power-of-two table that holds ``members`` within ``load``
    percent.

    Examples
    --------
    >>> slots_for(0, 50), slots_for(8, 50), slots_for(9, 50), slots_for(9, 60)
    (16, 16, 32, 16)
    """
    slots = MIN_SLOTS
    while over_load(members, slots, load):
        slots *= 2
    return slots


@register_jitable
def slots_of(table: np.ndarray) -> int:
    """How many slots ``table`` has: ``WAYS`` a bucket (row).

    Examples
    --------
    >>> slots_of(zeroed_table(64))
    64
    """
    return int(table.shape[0]) * WAYS


@register_jitable
def key_at(table: np.ndarray, slot: Any) -> Any:
    """The key word of ``slot``: ``~id``, or EMPTY.

    Examples
    --------
    >>> t = zeroed_table(16); t[1, 2] = ~9; int(key_at(t, 6))
    -10
    """
    u = np.uint64(slot)
    return table[u // np.uint64(WAYS), u % np.uint64(WAYS)]


@register_jitable
def word_at(table: np.ndarray, slot: Any) -> Any:
    """The position word of ``slot``.

    Examples
    --------
    >>> t = zeroed_table(16); t[1, WAYS + 2] = 5; int(word_at(t, 6))
    5
    """
    u = np.uint64(slot)
    return table[u // np.uint64(WAYS), np.uint64(WAYS) + u % np.uint64(WAYS)]


@register_jitable
def put_key(table: np.ndarray, slot: Any, key: Any) -> None:
    """Write the key word of ``slot``."""
    u = np.uint64(slot)
    table[u // np.uint64(WAYS), u % np.uint64(WAYS)] = key


@register_jitable
def put_word(table: np.ndarray, slot: Any, word: Any) -> None:
    """Write the position word of ``slot``."""
    u = np.uint64(slot)
    table[u // np.uint64(WAYS), np.uint64(WAYS) + u % np.uint64(WAYS)] = word


def zeroed_table(slots: int) -> np.ndarray:
    """A free table of ``slots`` slots, its buckets aligned to cache lines.

    From Python, numpy takes zeroed pages from the OS (``calloc``), laid
    out for huge pages (:mod:`..allocation`); compiled code gets NRT
    memory, zeroed by a ``memset``. One write per 4 KiB page then maps
    every page: a probe would otherwise first read an untouched page,
    which maps the shared zero page, and the write after it would copy it
    again (with huge pages, one fault per 4 KiB).

    Examples
    --------
    >>> t = zeroed_table(16); t.shape, t.ctypes.data % ALIGN, bool(t.any())
    ((4, 8), 0, False)
    """
    table = allocation.zeros((slots // WAYS, 2 * WAYS), np.int64, ALIGN)
    table.reshape(-1)[::512] = 0
    return table


@overload(zeroed_table)
def _zeroed_table_compiled(slots: Any) -> Any:
    def impl(slots: Any) -> Any:
        words = 2 * slots
        spare = ALIGN // 8
        buffer = np.zeros(words + spare, np.int64)
        skip = (ALIGN - buffer.ctypes.data % ALIGN) % ALIGN // 8
        buffer[::512] = 0
        return buffer[skip : skip + words].reshape((slots // WAYS, 2 * WAYS))

    return impl


def _shift_for(slots: int) -> int:
    """``64 - log2(buckets)``: the shift taking a hash to its home bucket."""
    return 65 - (slots // WAYS).bit_length()


def empty(
    members: int = 0, seed: int | None = None, load: int | None = None
) -> HashIndex:
    """A hash index with room for ``members`` ids before it grows, at most
    ``load`` percent full (by default
    :data:`~sparseset.config.HASH_MAX_LOAD_PERCENT`).

    The seed is random unless given, so no fixed key set collides in every
    process.

    Examples
    --------
    >>> ix = empty(100, seed=7, load=50); slots_of(ix.table), ix.meta.tolist()
    (256, [0, 7, 58, 50])
    >>> slots_of(empty(100, seed=7, load=80).table)
    128
    """
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little") >> 1
    if load is None:
        load = config.HASH_MAX_LOAD_PERCENT
    count = slots_for(members, load)
    table = zeroed_table(count)
    return HashIndex(table, np.array([0, seed, _shift_for(count), load], np.int64))


_M64 = (1 << 64) - 1
#: 2**64 / golden ratio, odd: Fibonacci hashing's multiplier.
GOLDEN = 0x9E3779B97F4A7C15


def capacity(index: HashIndex, dense: np.ndarray) -> int:
    """What fits without growing: members ``dense`` has rows for and the
    table has room for at its load limit.

    Examples
    --------
    >>> capacity(empty(100), np.empty(100, np.int64))
    100
    """
    room = slots_of(index.table) * int(index.meta[LOAD]) // 100
    return min(int(dense.shape[0]), room)


def table_room(index: HashIndex) -> int:
    """How many members the table takes at its load limit: a batch that
    adds ids claims no row of ``dense`` past them (:func:`store` refuses
    the next key first).

    Examples
    --------
    >>> table_room(empty(100, load=50))
    128
    """
    return slots_of(index.table) * int(index.meta[LOAD]) // 100


def reserve(
    index: HashIndex, dense: np.ndarray, n: int, members: int, regrow: Any
) -> HashIndex:
    """``index`` with room for ``members``: rehashed into a larger table
    (keeping the positions of ``dense[:n]``) by ``regrow``, the batch kernel
    ``grown_index``, if it has less; else itself.

    Examples
    --------
    >>> ix = empty(100); reserve(ix, np.empty(100, np.int64), 0, 50, None) is ix
    True
    """
    if members <= capacity(index, dense):
        return index
    grown: HashIndex = regrow(index, dense, n, members, 0)
    return grown


def home(key: Any, seed: Any, shift: Any) -> np.uint64:
    """The bucket where ``key``'s probe starts: ``((key ^ seed) * GOLDEN) >> shift``.

    Plain Python here (exact integers, no overflow warnings); compiled code
    gets the wrapping uint64 version below.

    Examples
    --------
    >>> [int(home(k, 0, 60)) for k in range(6)]
    [0, 9, 3, 13, 7, 1]
    """
    return np.uint64((((int(key) ^ int(seed)) & _M64) * GOLDEN & _M64) >> int(shift))


@overload(home, jit_options=OVERLOAD_NO_NRT)
def _home(key, seed, shift):
    def impl(key, seed, shift):
        product = (np.uint64(key) ^ np.uint64(seed)) * np.uint64(GOLDEN)
        return product >> np.uint64(shift)

    return impl


def first_stop(table: np.ndarray, base: Any, want: Any) -> np.uint64:
    """The first way of the bucket starting at slot ``base`` whose key is
    ``want`` or free, WAYS if none is.

    Plain Python here; compiled code compares the bucket's 4 keys (half
    its cache line) in one vector compare, with no branch.

    Examples
    --------
    >>> table = np.array([[-5, -9, 0, 0, 1, 2, 0, 0]], np.int64)
    >>> int(first_stop(table, 0, -9)), int(first_stop(table, 0, -7))
    (1, 2)
    """
    for way in range(WAYS):
        key = table[int(base) // WAYS, way]
        if key in (want, EMPTY):
            return np.uint64(way)
    return np.uint64(WAYS)


@intrinsic
def _first_stop(typingctx, table, base, want):
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        i64, i32 = ir.IntType(64), ir.IntType(32)
        keys = ir.VectorType(i64, WAYS)
        # The bucket's row starts 2 * WAYS words a bucket in: at 2 * base.
        word = builder.mul(args[1], i64(2))
        wanted = builder.shuffle_vector(
            builder.insert_element(ir.Constant(keys, ir.Undefined), args[2], i32(0)),
            ir.Constant(keys, ir.Undefined),
            ir.Constant(ir.VectorType(i32, WAYS), [0] * WAYS),
        )
        address = builder.bitcast(builder.gep(data, [word]), keys.as_pointer())
        # Aligned as an int64 only: a table from elsewhere (a copy) may not
        # be line-aligned, and that must stay correct.
        loaded = builder.load(address, align=8)
        stops = builder.or_(
            builder.icmp_unsigned("==", loaded, wanted),
            builder.icmp_unsigned("==", loaded, ir.Constant(keys, [EMPTY] * WAYS)),
        )
        bits = builder.zext(builder.bitcast(stops, ir.IntType(WAYS)), i64)
        # A bit past the ways: a bucket with no stop answers WAYS.
        bits = builder.or_(bits, i64(1 << WAYS))
        cttz = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), "llvm.cttz.i64"
        )
        return builder.call(cttz, [bits, ir.IntType(1)(1)])

    return types.uint64(table, types.uint64, types.int64), codegen


@overload(first_stop, jit_options=OVERLOAD_NO_NRT)
def _first_stop_overload(table, base, want):
    if not (isinstance(table, types.Array) and table.layout == "C"):
        return None

    def impl(table, base, want):
        return _first_stop(table, np.uint64(base), np.int64(want))  # type: ignore[call-arg]  # numba passes the typing context

    return impl


@register_jitable
def _probe(index, key):
    """The slot holding ``key``, or the free slot ending its probe run."""
    table = index.table
    last = np.uint64(table.shape[0] - 1)
    want = ~key
    bucket = home(key, index.meta[SEED], index.meta[SHIFT])
    while True:
        base = bucket * np.uint64(WAYS)
        way = first_stop(table, base, want)
        if way < np.uint64(WAYS):
            return base + way
        bucket = (bucket + np.uint64(1)) & last


@register_jitable
def lookup(index, x):
    """The position stored for ``x`` (maybe stale), or NOWHERE."""
    key = np.int64(x)
    if key < 0:
        return NOWHERE
    return held(index, _probe(index, key), key)


@register_jitable
def lookup_many(index, ids, start, stop, out, ahead):
    """``out[k - start] = lookup(index, ids[k])`` for k in ``[start, stop)``.

    Each step first prefetches the home bucket of the id ``ahead`` places
    on (:data:`~sparseset.config.HASH_PREFETCH_AHEAD`), so that many table
    misses are in flight while the probes run.
    """
    last = stop - 1
    for k in range(start, stop):
        prefetch_slot(index, ids[np.uint64(min(k + ahead, last))])
        out[np.uint64(k - start)] = lookup(index, ids[np.uint64(k)])


@register_jitable
def prefetch_slot(index, x):
    """Start loading the home bucket of ``x``: the line its probe reads first
    (and, but for the few members whose home bucket is full, last).

    The bucket's address takes only the hash, no load, so an add loop can
    prefetch the slots of the ids a few places on and claim each id in
    order, in one pass, instead of looking each chunk up first as
    :func:`lookup_many` does.

    Examples
    --------
    >>> prefetch_slot(empty(seed=1), 2**62)  # a hint: nothing to see
    """
    table = index.table
    bucket = home(np.int64(x), index.meta[SEED], index.meta[SHIFT])
    prefetch(table, bucket * np.uint64(2 * WAYS))


@register_jitable
def accepts(index, x):
    """Whether ``x`` is in [0, 2**63) (a uint64 past it reads as negative)."""
    return np.int64(x) >= 0


@register_jitable
def in_range(index, x):
    """Whether ``x`` is in the hash range [0, 2**63)."""
    return accepts(index, x)


@register_jitable
def locate(index, x):
    """Where ``x``'s slot is: the one holding ``x``, or the free slot that
    ends its probe run (valid until the table changes)."""
    return _probe(index, np.int64(x))


@register_jitable
def held(index, slot, x):
    """The position in ``slot`` (from :func:`locate`) if it holds ``x``,
    else NOWHERE."""
    table = index.table
    p = np.uint32(word_at(table, slot))
    # A select: whether the slot holds x is a coin flip for mixed queries.
    return p if key_at(table, slot) == ~np.int64(x) else NOWHERE


@register_jitable
def store(index, slot, x, p):
    """Put ``x`` and position ``p`` in ``slot`` (from :func:`locate`);
    False if a new key would overfill the table (call again after ``grow``)."""
    table = index.table
    if key_at(table, slot) == EMPTY:
        if over_load(index.meta[USED] + 1, slots_of(table), index.meta[LOAD]):
            return False
        put_key(table, slot, ~np.int64(x))
        index.meta[USED] += 1
    put_word(table, slot, p)
    return True


@register_jitable
def tally(index, slot, x, p):
    """Count an occurrence of ``x`` in its slot (from :func:`locate`).

    A free slot takes ``x`` with position ``p`` and a tally of one (2; -1
    if that would overfill the table, or ``p`` is NOWHERE: nothing
    stored); a slot tallying already counts one more (1); a slot holding a
    plain position is left alone (0: the caller adds to the row, or opens a
    count there with :func:`tally_from`). Until
    :func:`settle`, a tallying slot's word is ``(p + 1) << 32 | count``,
    which :func:`held` does not read as a position.
    """
    table = index.table
    if key_at(table, slot) == EMPTY:
        if p == NOWHERE or over_load(
            index.meta[USED] + 1, slots_of(table), index.meta[LOAD]
        ):
            return -1
        put_key(table, slot, ~np.int64(x))
        tally_from(index, slot, p)
        index.meta[USED] += 1
        return 2
    word = word_at(table, slot)
    if np.uint64(word) > np.uint64(_POSITIONS):
        put_word(table, slot, word + 1)
        return 1
    return 0


@register_jitable
def tally_from(index, slot, p):
    """Make ``slot`` (from :func:`locate`), which holds its id with a plain
    position, count from one occurrence, for the id at position ``p`` (the
    caller has proven it the slot's member, or appended the id there)."""
    put_word(
        index.table,
        slot,
        np.int64(((np.uint64(p) + np.uint64(1)) << np.uint64(32)) | np.uint64(1)),
    )


@register_jitable
def settle(index, slot):
    """``(p, count)`` of a tallying ``slot`` (any slot of the table), which
    holds plain position ``p`` again; ``(0, 0)`` for any other slot."""
    table = index.table
    word = np.uint64(word_at(table, slot))
    if word <= np.uint64(_POSITIONS):
        return np.uint64(0), np.uint64(0)
    p = (word >> np.uint64(32)) - np.uint64(1)
    put_word(table, slot, np.int64(p))
    return p, word & np.uint64(_POSITIONS)


@register_jitable
def slot_count(index):
    """How many slots :func:`settle` may be asked about: the table's."""
    return np.uint64(slots_of(index.table))


@register_jitable
def vacant(index, slot):
    """Whether ``slot`` (from :func:`locate`) holds no key."""
    return key_at(index.table, slot) == EMPTY


@register_jitable
def erase(index, x):
    """Remove ``x``'s entry, shifting the rest of its probe run back."""
    key = np.int64(x)
    table = index.table
    slots = np.uint64(slots_of(table))
    mask = slots - np.uint64(1)
    hole = _probe(index, key)
    if key_at(table, hole) != ~key:
        return
    j = hole
    while True:
        j = (j + np.uint64(1)) & mask
        k = key_at(table, j)
        if k == EMPTY:
            break
        start = home(~k, index.meta[SEED], index.meta[SHIFT]) * np.uint64(WAYS)
        # The entry at j may move back to the hole unless its home lies
        # cyclically after the hole: then the hole is not on its probe path.
        # (Distances from j + slots: unsigned, never below zero.)
        if ((j + slots - start) & mask) >= ((j + slots - hole) & mask):
            put_key(table, hole, k)
            put_word(table, hole, word_at(table, j))
            hole = j
    put_key(table, hole, EMPTY)
    index.meta[USED] -= 1


@register_jitable
def room(index, n, members, top):
    """A new, empty table for ``max(members, n + 1)`` ids, same seed and load."""
    count = slots_for(max(members, n + 1), index.meta[LOAD])
    grown = HashIndex(zeroed_table(count), index.meta.copy())
    grown.meta[USED] = 0
    shift = 64
    buckets = count // WAYS
    while buckets > 1:
        buckets >>= 1
        shift -= 1
    grown.meta[SHIFT] = shift
    return grown


@register_jitable
def move(index, grown, dense, n):
    """Fill ``grown`` (from :func:`room`) with the positions of ``dense[:n]``.

    Rebuilding from ``dense`` drops stale entries, so a table full of
    garbage can come back the same size. Each step prefetches the home
    bucket of the member :data:`MOVE_AHEAD` places on: the members' buckets
    are scattered over the new table, and one at a time each insert would
    wait for its line.
    """
    if n <= 0:
        return
    last = np.uint64(n - 1)
    for k in range(n):
        u = np.uint64(k)
        prefetch_slot(grown, dense[min(u + np.uint64(MOVE_AHEAD), last)])
        x = dense[u]
        store(grown, locate(grown, x), x, k)


@register_jitable
def row_limit(index):
    """Most members a set can hold (see :mod:`.options`)."""
    return MAX_MEMBERS


def entries(index: HashIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The slots in use: their numbers, ids and positions, in slot order.

    Slot ``s`` is way ``s % WAYS`` of bucket ``s // WAYS``; an id's probe
    starts at slot ``WAYS * home(id, seed, shift)``. For tests and
    inspection: the kernels never build these arrays.

    Examples
    --------
    >>> ix = empty(seed=1); store(ix, locate(ix, 42), 42, 7)
    True
    >>> [a.tolist() for a in entries(ix)][1:]
    [[42], [7]]
    """
    keys = index.table[:, :WAYS].reshape(-1)
    used = np.flatnonzero(keys != EMPTY)
    return used, ~keys[used], index.table[:, WAYS:].reshape(-1)[used]

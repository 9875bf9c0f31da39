"""The hash index: open addressing from id to position, for ids in [0, 2**63).

One table of ``(key, position)`` pairs, so a probe reads one cache line;
linear probing from a seeded Fibonacci hash of the id (the top bits of
``(id ^ seed) * 2**64/phi``), which spreads ids colliding modulo the table
size, strided and sequential ids evenly, in one multiply: a murmur3
finaliser measured 2x slower per lookup here. Deletion shifts later entries
of the probe run back (no tombstones), so churn never degrades lookups.
Memory follows the members: 16 bytes a slot, at most half full.

As for the other kinds, a found position is only a candidate: the set
checks ``dense`` before trusting it, so entries left behind by ``clear``
or an undone batch are harmless garbage until the next rebuild drops them.

These are the hash versions of the operations :mod:`.kinds` dispatches on;
call them through it.
"""

import os
from typing import Any, NamedTuple

import numpy as np
from numba.extending import overload, register_jitable

from .prefetch import prefetch

#: Ids the hash index can take: [0, LIMIT).
LIMIT = 2**63
#: A key slot holding this is free (ids are never negative).
EMPTY = -1
#: The table grows past this fill: used * LOAD_DEN > slots * LOAD_NUM.
LOAD_NUM = 1
LOAD_DEN = 2
MIN_SLOTS = 16


class HashIndex(NamedTuple):
    """The arrays of a hash index (see the module docstring)."""

    table: np.ndarray  # int64 (slots, 2): key (EMPTY if free), position
    meta: np.ndarray  # int64 [slots in use, seed, 64 - log2(slots)]


@register_jitable
def slots_for(members: int) -> int:
    """The smallest power-of-two table that holds ``members`` within the load.

    Examples
    --------
    >>> slots_for(0), slots_for(8), slots_for(9), slots_for(1_000_000)
    (16, 16, 32, 2097152)
    """
    slots = MIN_SLOTS
    while members * LOAD_DEN > slots * LOAD_NUM:
        slots *= 2
    return slots


def empty(members: int = 0, seed: int | None = None) -> HashIndex:
    """A hash index with room for ``members`` ids before it grows.

    The seed is random unless given, so no fixed key set collides in every
    process.

    Examples
    --------
    >>> ix = empty(100, seed=7); ix.table.shape, ix.meta.tolist()
    ((256, 2), [0, 7, 56])
    """
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little") >> 1
    slots = slots_for(members)
    table = np.full((slots, 2), EMPTY, np.int64)
    return HashIndex(table, np.array([0, seed, 65 - slots.bit_length()], np.int64))


_M64 = (1 << 64) - 1
#: 2**64 / golden ratio, odd: Fibonacci hashing's multiplier.
GOLDEN = 0x9E3779B97F4A7C15


def home(key: Any, seed: Any, shift: Any) -> np.uint64:
    """The slot where ``key``'s probe starts: ``((key ^ seed) * GOLDEN) >> shift``.

    Plain Python here (exact integers, no overflow warnings); compiled code
    gets the wrapping uint64 version below.

    Examples
    --------
    >>> [int(home(k, 0, 60)) for k in range(6)]
    [0, 9, 3, 13, 7, 1]
    """
    return np.uint64((((int(key) ^ int(seed)) & _M64) * GOLDEN & _M64) >> int(shift))


@overload(home, jit_options={"_nrt": False})
def _home(key, seed, shift):  # type: ignore[no-untyped-def]
    def impl(key, seed, shift):  # type: ignore[no-untyped-def]
        product = (np.uint64(key) ^ np.uint64(seed)) * np.uint64(GOLDEN)
        return product >> np.uint64(shift)

    return impl


@register_jitable
def _slot_of(index, key):
    """The slot holding ``key``, or the free slot ending its probe run."""
    table = index.table
    mask = np.uint64(table.shape[0] - 1)
    h = home(key, index.meta[1], index.meta[2])
    while True:
        k = table[h, 0]
        if k == key or k == EMPTY:  # noqa: SIM109  (two compares, no tuple)
            return h
        h = (h + np.uint64(1)) & mask


@register_jitable
def lookup(index, x):
    """The position stored for ``x`` (maybe stale), or NOWHERE."""
    key = np.int64(x)
    if key < 0:
        return np.uint32(0xFFFFFFFF)
    return held(index, locate(index, key), key)


#: How many ids ahead ``lookup_many`` prefetches its home slot (measured
#: best of 4-64 on 1M lookups: 16, 1.4x faster than no prefetch).
AHEAD = 16


@register_jitable
def lookup_many(index, ids, start, stop, out):
    """``out[k - start] = lookup(index, ids[k])`` for k in ``[start, stop)``.

    Each step first prefetches the home slot of the id ``AHEAD`` places on,
    so that many table misses are in flight while the probes run.
    """
    table = index.table
    seed = index.meta[1]
    shift = index.meta[2]
    last = stop - 1
    for k in range(start, stop):
        ahead = ids[np.uint64(min(k + AHEAD, last))]
        prefetch(table, home(ahead, seed, shift) << np.uint64(1))
        out[np.uint64(k - start)] = lookup(index, ids[np.uint64(k)])


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
    return _slot_of(index, np.int64(x))


@register_jitable
def held(index, slot, x):
    """The position in ``slot`` (from :func:`locate`) if it holds ``x``,
    else NOWHERE."""
    table = index.table
    if table[slot, 0] == np.int64(x):
        return np.uint32(table[slot, 1])
    return np.uint32(0xFFFFFFFF)


@register_jitable
def store(index, slot, x, p):
    """Put ``x`` and position ``p`` in ``slot`` (from :func:`locate`);
    False if a new key would overfill the table (call again after ``grow``)."""
    table = index.table
    if table[slot, 0] == EMPTY:
        if (index.meta[0] + 1) * LOAD_DEN > table.shape[0] * LOAD_NUM:
            return False
        table[slot, 0] = np.int64(x)
        index.meta[0] += 1
    table[slot, 1] = p
    return True


@register_jitable
def erase(index, x):
    """Remove ``x``'s entry, shifting the rest of its probe run back."""
    key = np.int64(x)
    table = index.table
    mask = np.uint64(table.shape[0] - 1)
    hole = _slot_of(index, key)
    if table[hole, 0] == EMPTY:
        return
    j = hole
    while True:
        j = (j + np.uint64(1)) & mask
        k = table[j, 0]
        if k == EMPTY:
            break
        start = home(k, index.meta[1], index.meta[2])
        # The entry at j may move back to the hole unless its home lies
        # cyclically after the hole: then the hole is not on its probe path.
        if ((j - start) & mask) >= ((j - hole) & mask):
            table[hole, 0] = k
            table[hole, 1] = table[j, 1]
            hole = j
    table[hole, 0] = EMPTY
    index.meta[0] -= 1


@register_jitable
def room(index, n, members, top):
    """A new, empty table for ``max(members, n + 1)`` ids, same seed."""
    slots = slots_for(max(members, n + 1))
    grown = HashIndex(np.full((slots, 2), EMPTY, np.int64), index.meta.copy())
    grown.meta[0] = 0
    shift = 64
    while slots > 1:
        slots >>= 1
        shift -= 1
    grown.meta[2] = shift
    return grown


@register_jitable
def move(index, grown, dense, n):
    """Fill ``grown`` (from :func:`room`) with the positions of ``dense[:n]``.

    Rebuilding from ``dense`` drops stale entries, so a table full of
    garbage can come back the same size.
    """
    for k in range(n):
        x = dense[k]
        store(grown, locate(grown, x), x, k)


@register_jitable
def row_limit(index):
    """Most members a set can hold: positions are uint32, 0xFFFFFFFF is NOWHERE."""
    return 0xFFFFFFFF

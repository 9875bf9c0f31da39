"""The flat index: one uint32 slot per id of ``[0, capacity)``.

``sparse[x]`` is the dense position of member ``x`` and garbage elsewhere
(membership is proven by ``dense``), so the array can start as ``np.empty``.
Fastest of the three kinds, and the default; it costs 4 bytes per id of the
whole space, members or not, so it suits ids below a few hundred million.

These are the flat versions of the operations :mod:`.kinds` dispatches on;
call them through it.
"""

from typing import Any

import numpy as np
from numba.extending import register_jitable

from .. import allocation
from ..options import NOWHERE
from ..prefetch import prefetch

# The kind's answers where a slot would need to know its id.
from .unkeyed import settle as settle
from .unkeyed import slot_count as slot_count
from .unkeyed import tally as tally
from .unkeyed import tally_from as tally_from
from .unkeyed import vacant as vacant

#: The kind's name, as ``SparseSet(index=...)`` takes it.
NAME = "flat"
#: Ids the flat index can take: [0, LIMIT).
LIMIT = 2**31
#: ``dense``'s dtype: the narrowest that holds every id in range.
ID_DTYPE = np.dtype(np.int32)
#: A capacity counts ids of the space (``[0, capacity)``), not members.
CAPACITY_COUNTS_IDS = True
#: The largest capacity a flat set takes: the whole range.
MAX_CAPACITY = LIMIT
#: A slot's address follows from the id alone (it is the offset), so an
#: add loop can prefetch the slots of ids ahead (see ``prefetch_slot``).
PREFETCHES_SLOTS = True
#: A lookup is one load: cheap enough for an add loop to run ahead of
#: itself to prefetch the dense entries of the coming ids too.
LOOKS_AHEAD = True
#: A slot holds a position only: garbage for an id never added, so only
#: ``dense`` proves a member.
KEYED = False


@register_jitable
def lookup(index, x):
    """The position slot of ``x`` (garbage for a non-member), or NOWHERE."""
    u = np.uint64(np.int64(x))
    return index[u] if u < np.uint64(index.shape[0]) else NOWHERE


@register_jitable
def lookup_many(index, ids, start, stop, out, ahead):
    """``out[k - start] = lookup(index, ids[k])`` for k in ``[start, stop)``
    (each one load: nothing to prefetch ``ahead``)."""
    for k in range(start, stop):
        out[np.uint64(k - start)] = lookup(index, ids[np.uint64(k)])


def empty(capacity: int = 0) -> np.ndarray:
    """A flat index for ids in ``[0, capacity)``: garbage until written.

    Examples
    --------
    >>> empty(10).shape
    (10,)
    """
    return allocation.empty(capacity, np.uint32)


def capacity(index: np.ndarray, dense: np.ndarray) -> int:
    """What fits without growing: the ids below the index's length.

    Examples
    --------
    >>> capacity(empty(10), np.empty(4, np.int32))
    10
    """
    return int(index.shape[0])


def reserve(
    index: np.ndarray, dense: np.ndarray, n: int, capacity: int, regrow: Any
) -> np.ndarray:
    """``index`` covering ids below ``capacity``: regrown (keeping the
    positions of ``dense[:n]``) by ``regrow``, the batch kernel
    ``grown_index``, if it is shorter; else itself.

    Examples
    --------
    >>> ix = empty(4); reserve(ix, np.empty(4, np.int32), 0, 3, None) is ix
    True
    """
    if capacity <= index.shape[0]:
        return index
    grown: np.ndarray = regrow(index, dense, n, capacity, capacity - 1)
    return grown


@register_jitable
def prefetch_slot(index, x):
    """Start loading the slot of ``x`` (any id: a prefetch never faults)."""
    prefetch(index, np.uint64(np.int64(x)))


@register_jitable
def accepts(index, x):
    """Whether ``x`` fits below capacity, so ``insert`` may store it."""
    return np.uint64(np.int64(x)) < np.uint64(index.shape[0])


@register_jitable
def in_range(index, x):
    """Whether ``x`` is in the flat range [0, 2**31), whatever the capacity."""
    return np.uint64(np.int64(x)) < np.uint64(LIMIT)


@register_jitable
def locate(index, x):
    """Where an accepted ``x``'s slot is: its index in the array."""
    return np.uint64(np.int64(x))


@register_jitable
def held(index, slot, x):
    """The position in ``slot`` (from :func:`locate`), maybe garbage."""
    return index[slot]


@register_jitable
def store(index, slot, x, p):
    """Put position ``p`` in ``x``'s slot (from :func:`locate`); always room."""
    index[slot] = np.uint32(p)
    return True


@register_jitable
def erase(index, x):
    """Nothing to do: a stale slot is garbage, and garbage is allowed."""


@register_jitable
def room(index, n, members, top):
    """A new, unfilled index with room for ids up to ``top`` (members need
    no room here)."""
    length = min(max(top + 1, 2 * index.shape[0], 16), LIMIT)
    return allocation.empty(max(length, index.shape[0]), index.dtype)


@register_jitable
def move(index, grown, dense, n):
    """Fill ``grown`` (from :func:`room`) with the slots of ``index``."""
    # A loop, not ``grown[:m] = index``: numba compiles its array-to-array
    # slice assignment with a broadcast check and formatted messages, a
    # large share of a cold process's first grow.
    for k in range(index.shape[0]):
        u = np.uint64(k)
        grown[u] = index[u]


@register_jitable
def row_limit(index):
    """Most members the set can hold: one per id of the space."""
    return index.shape[0]

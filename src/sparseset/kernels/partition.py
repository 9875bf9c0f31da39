"""Partitioning ids over shards: which shard an id belongs to, and a batch
split into per-shard runs in one counting pass.

Two layouts. ``hash``: shard = ``mix(id) % shards``, with ``mix`` the
splitmix64 finaliser (Steele, Lea & Flood 2014), so strided and sequential
ids spread evenly; it is deliberately not the hash index's Fibonacci hash,
so the ids one shard holds do not all land in a fraction of its own hash
table. ``range``: shard = ``id // width``, the last shard also taking
every id past the end, so a shard holds one contiguous block of ids; the
runs carry ``id - shard * width`` (the id local to its block), so a flat
or paged index in the shard spans ``width`` ids, not the whole space.

A split is a stable counting sort by shard: the first pass validates,
tags and counts, the second scatters each id to its shard's run. The tags
(one uint16 per id) keep every id's original position: :func:`merge_runs`
walks them to put per-run answers back in the batch's order. Kernels here
validate nothing they are not asked to, and never raise: a bad id's
position is returned.
"""

from typing import Any

import numpy as np
from numba import njit
from numba.extending import register_jitable
from numpy.typing import NDArray

from .array_types import Int, IntArray

#: Shards a layout may have: tags are uint16.
MAX_SHARDS = 1 << 16
#: ``width`` of a hash layout (a range layout's is at least 1).
HASH = 0


@register_jitable
def mix(x: Int) -> np.uint64:
    """The splitmix64 finaliser of ``x`` (any integer), as a uint64.

    Examples
    --------
    >>> from numba import njit
    >>> int(njit(lambda x: mix(x))(1))
    6238072747940578789
    """
    z = np.uint64(x)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@register_jitable
def shard_of_one(x: Int, shards: Int, width: Int) -> np.uint64:
    """The shard of id ``x`` (non-negative) in a layout of ``shards`` shards.

    ``width`` is :data:`HASH` (0) for the hash layout, else the ids per
    shard of the range layout.
    """
    u = np.uint64(x)
    last = np.uint64(shards - 1)
    if width == HASH:
        return mix(u) % np.uint64(shards)
    return min(u // np.uint64(width), last)


@njit(cache=True, nogil=True)
def shard_of(ids: IntArray, shards: Int, width: Int, out: NDArray[np.uint16]) -> int:
    """``out[k]`` = the shard of ``ids[k]``; returns the first negative id's
    position, or -1.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(5, np.uint16)
    >>> shard_of(np.array([0, 9, 10, 25, 99]), 3, 10, out), out.tolist()
    (-1, [0, 0, 1, 2, 2])
    >>> shard_of(np.array([3, -1]), 3, 0, out)
    1
    """
    for k in range(ids.shape[0]):
        x = ids[np.uint64(k)]
        if x < 0:
            return k
        out[np.uint64(k)] = shard_of_one(x, shards, width)
    return -1


@njit(cache=True, nogil=True)
def split_runs(
    ids: IntArray,
    shards: Int,
    width: Int,
    limit: Int,
    runs: IntArray,
    starts: NDArray[np.int64],
    tags: NDArray[np.uint16],
) -> int:
    """Split ``ids`` into per-shard runs, stably, in one counting pass.

    On return ``runs[starts[s]:starts[s + 1]]`` holds the ids of shard
    ``s`` in batch order (local ids ``id - s * width`` for a range
    layout), and ``tags[k]`` is the shard of ``ids[k]``. ``runs`` has the
    length and dtype of ``ids``; ``starts`` is int64 of length
    ``shards + 1``; ``tags`` uint16 of the length of ``ids``.

    Returns -1, or the position of the first id that is negative or, when
    ``limit`` is not 0, at or past ``limit``; the outputs are then
    unspecified.

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([12, 3, 25, 7, 14])
    >>> runs = np.empty_like(ids); starts = np.empty(4, np.int64)
    >>> tags = np.empty(5, np.uint16)
    >>> split_runs(ids, 3, 10, 0, runs, starts, tags)
    -1
    >>> runs.tolist(), starts.tolist(), tags.tolist()
    ([3, 7, 2, 4, 5], [0, 2, 4, 5], [1, 0, 2, 0, 1])
    >>> split_runs(ids, 3, 10, 20, runs, starts, tags)
    2
    """
    n = ids.shape[0]
    counts = np.zeros(shards + 1, np.int64)
    top = np.uint64(limit)
    for k in range(n):
        u = np.uint64(k)
        x = ids[u]
        if x < 0 or (top != 0 and np.uint64(x) >= top):
            return k
        s = shard_of_one(x, shards, width)
        tags[u] = s
        counts[s + np.uint64(1)] += 1
    # counts[s + 1] -> starts: an exclusive prefix sum; the cursor of each
    # shard then walks its run.
    for shard in range(shards):
        counts[shard + 1] += counts[shard]
    starts[:] = counts
    cursor = counts[:shards].copy()
    for k in range(n):
        u = np.uint64(k)
        s = np.uint64(tags[u])
        p = np.uint64(cursor[s])
        cursor[s] += 1
        x = ids[u]
        if width == HASH:
            runs[p] = x
        else:
            runs[p] = np.uint64(x) - s * np.uint64(width)
    return -1


@njit(cache=True, nogil=True)
def merge_runs(
    tags: NDArray[np.uint16], starts: IntArray, values: NDArray[Any], out: NDArray[Any]
) -> None:
    """Put per-run answers back in batch order: the inverse of the scatter.

    ``values`` holds the answers to the runs of :func:`split_runs`,
    concatenated in shard order (``values[starts[s]:starts[s + 1]]``
    answers shard ``s``'s run); ``out[k]`` receives the answer for the
    batch's ``k``-th id.

    Examples
    --------
    >>> import numpy as np
    >>> tags = np.array([1, 0, 2, 0, 1], np.uint16)
    >>> starts = np.array([0, 2, 4, 5]); values = np.array([30, 70, 120, 140, 250])
    >>> out = np.empty(5, np.int64); merge_runs(tags, starts, values, out)
    >>> out.tolist()
    [120, 30, 250, 70, 140]
    """
    cursor = starts[:-1].copy()
    for k in range(tags.shape[0]):
        u = np.uint64(k)
        s = np.uint64(tags[u])
        out[u] = values[np.uint64(cursor[s])]
        cursor[s] += 1


@njit(cache=True, nogil=True)
def first_positions(positions: IntArray, before: int, out: NDArray[np.bool_]) -> int:
    """Mark the first occurrence of each new member in an added batch.

    ``positions[k]`` is the dense position of the batch's ``k``-th id after
    the batch was added to a set that held ``before`` members. New members
    took positions ``before, before + 1, ...`` in the order of their first
    occurrences, so ``out[k]`` is True exactly where the next of those
    appears. Returns how many are marked.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(6, np.bool_)
    >>> first_positions(np.array([0, 2, 3, 2, 4, 3]), 2, out), out.tolist()
    (3, [False, True, True, False, True, False])
    """
    expected = before
    for k in range(positions.shape[0]):
        u = np.uint64(k)
        new = positions[u] == expected
        out[u] = new
        if new:
            expected += 1
    return expected - before

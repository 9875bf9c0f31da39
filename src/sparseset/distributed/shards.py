"""What the tasks of a sharded set run: plain functions on numpy arrays and
:class:`~sparseset.SparseSet` shards.

Each shard is a ``SparseSet`` of ids local to the shard (``id - start``;
``start`` is 0 for a hash layout). Tasks never mutate their inputs: an
``add`` copies the shard first, so a task that dask reruns after losing
a worker computes the same answer from the same inputs. Nothing here
imports dask.

Dask's threads are the parallelism: a task's kernels run on the task's own
thread (:func:`one_thread`), never on numba's thread pool as well, which
on a machine whose cores all run workers would oversubscribe them
(numba's threads spin while they wait, taking the workers' cores).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..io import npz as io
from ..sets.index_kinds import AUTO, kind_or_auto
from ..sets.interrupts import numba_threads, set_numba_threads
from ..sets.sparse_set import SparseSet
from ..stores.component_store import ComponentStore
from .layout import Layout, Split, merge

#: The format names and version of a saved sharded set's files.
SHARD_FORMAT = "sparseset.ShardedSet.shard"
MANIFEST_FORMAT = "sparseset.ShardedSet"
VERSION = 1


def position(offset: int | None, block: int, k: int) -> str:
    """``ids[i]`` for the batch's i-th id, or the block's own position when
    the block's place in the batch is unknown (a dask Series' partitions)."""
    if offset is None:
        return f"ids[{k}] of block {block}"
    return f"ids[{offset + k}]"


def split_block(
    block: Any, layout: Layout, kind: str, limit: int, offset: int | None, number: int
) -> Split:
    """Split one block of ids by shard, raising for a bad id as
    :class:`~sparseset.SparseSet` would: negative ids always, ids at or
    past ``limit`` (the ``kind`` index's range) when ``limit`` is not 0.

    Examples
    --------
    >>> layout = Layout.range(2, space=10)
    >>> split_block(np.array([7, 1]), layout, "flat", 0, 0, 0).run(1).tolist()
    [2]
    >>> split_block(np.array([7, -1]), layout, "flat", 0, 100, 3)
    Traceback (most recent call last):
    ...
    ValueError: ids must be non-negative: ids[101] = -1
    """
    arr = np.asarray(block)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError(
            f"block {number} of ids is not a 1-D integer array "
            f"(dtype {arr.dtype}, shape {arr.shape})"
        )
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    split, bad = layout.split(arr, limit)
    if bad < 0:
        return split
    where = position(offset, number, bad)
    value = int(arr[bad])
    if value < 0:
        raise ValueError(f"ids must be non-negative: {where} = {value}")
    index = kind_or_auto(kind)
    raise ValueError(
        f"{where} = {value} is outside the {kind} index's range "
        f"{index.range_text}{index.hint(value)}"
    )


def run_of(split: Split, shard: int) -> np.ndarray:
    """Shard ``shard``'s run of a split, as its own array (what travels)."""
    return split.run(shard)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the kernels called inside on this thread only (numba's thread
    count is per calling thread), restoring the count after.

    Examples
    --------
    >>> with one_thread():
    ...     numba_threads()
    1
    """
    threads = numba_threads()
    set_numba_threads(1)
    try:
        yield
    finally:
        set_numba_threads(threads)


def build(kind: str, capacity: int | None, runs: list[np.ndarray]) -> SparseSet:
    """A new shard holding the ids of ``runs``, added in order; room for
    ``capacity`` (None: as many members as the runs hold ids).

    Examples
    --------
    >>> build("flat", 10, [np.array([3, 1]), np.array([1, 4])]).ids.tolist()
    [3, 1, 4]
    """
    if capacity is None:
        capacity = _room(kind, runs)
    shard = SparseSet(capacity, index=kind)
    for run in runs:
        shard.add(run)
    return shard


def _room(kind: str, runs: list[np.ndarray]) -> int:
    """Room for as many members as ``runs`` hold ids (a hint: a set grows)."""
    if kind == AUTO:
        return 0  # an adapting shard sizes itself from the runs it sees
    ids: int = sum(run.shape[0] for run in runs)
    return min(ids, kind_or_auto(kind).max_capacity)


def add_runs(shard: SparseSet, runs: list[np.ndarray]) -> SparseSet:
    """A copy of ``shard`` with the ids of ``runs`` added in order.

    Examples
    --------
    >>> old = SparseSet.from_ids([1]); new = add_runs(old, [np.array([2])])
    >>> old.ids.tolist(), new.ids.tolist()
    ([1], [1, 2])
    """
    out = shard.copy()
    for run in runs:
        out.add(run)
    return out


def discard_runs(shard: SparseSet, runs: list[np.ndarray]) -> SparseSet:
    """A copy of ``shard`` without the ids of ``runs``.

    Examples
    --------
    >>> discard_runs(SparseSet.from_ids([1, 2]), [np.array([1, 9])]).ids.tolist()
    [2]
    """
    out = shard.copy()
    for run in runs:
        out.discard(run)
    return out


def contains_run(shard: SparseSet | ComponentStore, run: np.ndarray) -> np.ndarray:
    """Membership of each id of ``run`` in ``shard``.

    Examples
    --------
    >>> contains_run(SparseSet.from_ids([4]), np.array([4, 5])).tolist()
    [True, False]
    """
    with one_thread():
        return shard.contains(run)  # type: ignore[no-any-return]


def index_run(shard: SparseSet, run: np.ndarray, first: int) -> np.ndarray:
    """Position of each id of ``run`` among the set's members, -1 where
    absent: its position in ``shard`` plus ``first``, the members of the
    shards before this one.

    Examples
    --------
    >>> index_run(SparseSet.from_ids([4, 6]), np.array([6, 5]), 10).tolist()
    [11, -1]
    """
    with one_thread():
        out = shard.index(run)
    out[out >= 0] += first
    return out  # type: ignore[no-any-return]


def merge_block(split: Split, dtype: str, *answers: np.ndarray) -> np.ndarray:
    """One block's answers, from each shard's, back in the block's order."""
    return merge(split, list(answers), np.dtype(dtype))


def length(shard: SparseSet | ComponentStore) -> np.ndarray:
    """``len(shard)`` as a one-element array (a block of the lengths)."""
    return np.array([len(shard)], np.int64)


def nbytes(shard: SparseSet | ComponentStore) -> np.ndarray:
    """``shard.nbytes`` as a one-element array."""
    return np.array([shard.nbytes], np.int64)


def firsts(*lengths: np.ndarray) -> np.ndarray:
    """For each shard, how many members the shards before it hold.

    Examples
    --------
    >>> firsts(np.array([3]), np.array([0]), np.array([2])).tolist()
    [0, 3, 3]
    """
    counts = np.concatenate(lengths) if lengths else np.empty(0, np.int64)
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def pick(values: np.ndarray, k: int) -> int:
    """``int(values[k])``."""
    return int(values[k])


def members(shard: SparseSet | ComponentStore, start: int) -> np.ndarray:
    """The shard's members as global ids (int64), in the shard's order.

    Examples
    --------
    >>> members(SparseSet.from_ids([2, 0]), 100).tolist()
    [102, 100]
    """
    return shard.ids.astype(np.int64) + np.int64(start)


def remove_runs(shard: SparseSet, runs: list[np.ndarray], start: int) -> SparseSet:
    """A copy of ``shard`` without the ids of ``runs``, which must all be
    members: ``KeyError`` naming the first absent one (its global id) if
    not.

    Examples
    --------
    >>> remove_runs(SparseSet.from_ids([1, 2]), [np.array([1, 1])], 0).ids.tolist()
    [2]
    >>> remove_runs(SparseSet.from_ids([1]), [np.array([1, 3])], 100)
    Traceback (most recent call last):
    ...
    KeyError: '103 is not a member of the set; remove removed nothing'
    """
    for run in runs:
        with one_thread():
            found = shard.contains(run)
        if not found.all():
            absent = int(run[int(np.argmin(found))]) + start
            raise KeyError(
                f"{absent} is not a member of the set; remove removed nothing"
            )
    return discard_runs(shard, runs)


def union(a: SparseSet, b: SparseSet) -> SparseSet:
    """``a | b``, of the left operand's kind."""
    return a | b  # type: ignore[no-any-return]


def intersection(a: SparseSet, b: SparseSet) -> SparseSet:
    """``a & b``, of the left operand's kind."""
    return a & b  # type: ignore[no-any-return]


def difference(a: SparseSet, b: SparseSet) -> SparseSet:
    """``a - b``, of the left operand's kind."""
    return a - b  # type: ignore[no-any-return]


def symmetric_difference(a: SparseSet, b: SparseSet) -> SparseSet:
    """``a ^ b``, of the left operand's kind."""
    return a ^ b  # type: ignore[no-any-return]


def equal(a: SparseSet, b: SparseSet) -> np.ndarray:
    """``a == b`` as a one-element bool array (a block of the answers)."""
    return np.array([a == b], np.bool_)


def subset(a: SparseSet, b: SparseSet) -> np.ndarray:
    """``a <= b`` as a one-element bool array."""
    return np.array([a <= b], np.bool_)


def disjoint(a: SparseSet, b: SparseSet) -> np.ndarray:
    """``a.isdisjoint(b)`` as a one-element bool array."""
    return np.array([a.isdisjoint(b)], np.bool_)


def whole(shards: list[SparseSet], layout: Layout, kind: str) -> SparseSet:
    """One :class:`~sparseset.SparseSet` of every shard's members (global ids).

    Examples
    --------
    >>> parts = [SparseSet.from_ids([1]), SparseSet.from_ids([0, 3])]
    >>> whole(parts, Layout.range(2, space=10), "flat").ids.tolist()
    [1, 5, 8]
    """
    ids = [members(shard, layout.start(k)) for k, shard in enumerate(shards)]
    return SparseSet.from_ids(
        np.concatenate(ids) if ids else np.empty(0, np.int64), index=kind
    )


def first_seen(kind: str, runs: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """For each run in order, True where an id occurs for the first time in
    this run or any run before it.

    Examples
    --------
    >>> runs = [np.array([5, 5, 2]), np.array([2, 7])]
    >>> [mask.tolist() for mask in first_seen("hash", runs)]
    [[True, False, True], [False, True]]
    """
    from ..kernels.partition import first_positions

    seen = SparseSet(_room(kind, runs), index=kind)
    masks = []
    for run in runs:
        before = len(seen)
        seen.add(run)
        mask = np.empty(run.shape[0], np.bool_)
        with one_thread():
            first_positions(seen.index(run), before, mask)
        masks.append(mask)
    return tuple(masks)


def mask_of(masks: tuple[np.ndarray, ...], k: int) -> np.ndarray:
    """The ``k``-th run's mask."""
    return masks[k]


def distinct(kind: str, start: int, runs: list[np.ndarray]) -> np.ndarray:
    """The distinct ids of ``runs`` (global, int64), in first-seen order.

    Examples
    --------
    >>> distinct("hash", 10, [np.array([5, 5, 2]), np.array([2, 7])]).tolist()
    [15, 12, 17]
    """
    seen = build(kind, None, runs)
    return members(seen, start)


# -- files -------------------------------------------------------------------


def save_shard(
    shard: SparseSet, path: str, k: int, layout: Layout, kind: str
) -> np.ndarray:
    """Write shard ``k`` (its global ids) to ``path``, atomically; returns its
    length as a one-element array."""
    io.save(
        path,
        SHARD_FORMAT,
        VERSION,
        {"ids": members(shard, layout.start(k)), "shard": np.int64(k)},
    )
    return np.array([len(shard)], np.int64)


def load_shard(
    path: str, k: int, layout: Layout, kind: str, expected: int
) -> SparseSet:
    """Read shard ``k`` back from ``path``, checking it against the manifest
    (see :func:`checked_ids`); :class:`~sparseset.FormatError` if wrong."""
    arrays = read_shard(path, k, SHARD_FORMAT, "sharded set")
    local = checked_ids(path, arrays, k, layout, kind, expected)
    shard = SparseSet.from_ids(local, index=kind)
    if len(shard) != expected:
        raise io.FormatError(f"{path!r} holds repeated ids")
    return shard


def read_shard(path: str, k: int, format: str, what: str) -> dict[str, Any]:
    """The arrays of shard file ``path`` (shard ``k`` of a saved ``what``)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path!r}, shard {k} of a saved {what}, is missing")
    return io.load(path, format, VERSION)


def checked_ids(
    path: str,
    arrays: dict[str, Any],
    k: int,
    layout: Layout,
    kind: str,
    expected: int,
) -> np.ndarray:
    """A shard file's ids (global), checked against its manifest: shard
    number ``k``, ``expected`` ids, in the kind's range and in shard ``k``
    under ``layout``; :class:`~sparseset.FormatError` if not. Returns the
    ids local to the shard (``id - start``)."""
    ids, number = arrays.get("ids"), arrays.get("shard")
    if ids is None or number is None or number.shape != () or int(number) != k:
        raise io.FormatError(f"{path!r} is not shard {k} of this sharded collection")
    if ids.ndim != 1 or ids.dtype.kind not in "iu" or ids.shape[0] != expected:
        raise io.FormatError(
            f"{path!r} should hold {expected} ids of shard {k}, "
            f"holds an array of dtype {ids.dtype} and shape {ids.shape}"
        )
    index = kind_or_auto(kind)
    if ids.size and (ids.min() < 0 or int(ids.max()) >= index.limit):
        raise io.FormatError(f"{path!r} holds ids outside the {kind} index's range")
    wrong = np.flatnonzero(layout.shard_of(ids) != k)
    if wrong.size:
        raise io.FormatError(
            f"{path!r} holds id {int(ids[wrong[0]])}, which belongs to shard "
            f"{int(layout.shard_of(ids[wrong[:1]])[0])}, not {k}"
        )
    local: np.ndarray = ids - np.asarray(layout.start(k), ids.dtype)
    return local

"""Shard layouts: how ids map to shards, and a batch split into per-shard runs.

A :class:`Layout` is the one thing two sharded sets must share to be
combined shard by shard: the same layout sends every id to the same shard
in both. The work is done by the compiled kernels of
:mod:`sparseset.kernels.partition`; this module holds the Python side.
Nothing here imports dask: these are the plain functions that tasks call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..kernels import partition

#: The ways ids can be spread over shards.
LAYOUTS = ("hash", "range")


class Split(NamedTuple):
    """A batch split by shard: shard ``s``'s run is
    ``runs[starts[s]:starts[s + 1]]``; ``tags[k]`` is the shard of the
    batch's ``k``-th id, which puts answers back in batch order."""

    runs: np.ndarray
    starts: np.ndarray
    tags: np.ndarray

    def run(self, shard: int) -> np.ndarray:
        """The ids (local to the shard) that go to ``shard``, in batch order."""
        return self.runs[self.starts[shard] : self.starts[shard + 1]]


@dataclass(frozen=True)
class Layout:
    """Which shard each id belongs to.

    ``by="hash"``: a 64-bit mix of the id, modulo ``shards``, so any ids
    spread evenly. ``by="range"``: shard ``s`` holds the ids of
    ``[s * width, (s + 1) * width)`` (the last shard also every id past
    the end), so a shard's ids are one dense block; a shard stores them
    as offsets into its block.

    Examples
    --------
    >>> layout = Layout.range(4, space=100)
    >>> layout, layout.shard_of([0, 24, 25, 99, 10**6]).tolist()
    (Layout(by='range', shards=4, width=25), [0, 0, 1, 3, 3])
    >>> Layout.hash(4).shard_of([1, 2, 3]).tolist()
    [1, 2, 0]
    """

    by: str
    shards: int
    width: int = 0

    def __post_init__(self) -> None:
        if self.by not in LAYOUTS:
            raise ValueError(
                f"by = {self.by!r} is not a layout; choose 'hash' or 'range'"
            )
        # Frozen: normalised through object.__setattr__ (numpy ints to int).
        object.__setattr__(self, "shards", check_shards(self.shards))
        if isinstance(self.width, bool) or not isinstance(self.width, int | np.integer):
            raise TypeError(f"width must be an integer, not {self.width!r}")
        object.__setattr__(self, "width", int(self.width))
        if self.by == "hash" and self.width != 0:
            raise ValueError(f"a hash layout has no width (got width = {self.width})")
        if self.by == "range" and not 1 <= self.width < 2**63:
            raise ValueError(f"width = {self.width} is outside [1, 2**63)")

    @classmethod
    def hash(cls, shards: int) -> Layout:
        """Ids spread by a hash over ``shards`` shards.

        Raises
        ------
        TypeError
            If ``shards`` is not an integer.
        ValueError
            If ``shards`` is outside ``[1, 65536]``.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> Layout.hash(8)
        Layout(by='hash', shards=8, width=0)
        """
        return cls("hash", check_shards(shards))

    @classmethod
    def range(cls, shards: int, space: int) -> Layout:
        """``shards`` contiguous blocks covering the ids of ``[0, space)``.

        Raises
        ------
        TypeError
            If ``shards`` or ``space`` is not an integer.
        ValueError
            If ``shards`` is outside ``[1, 65536]`` or ``space`` outside
            ``[0, 2**64]``.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> Layout.range(3, space=10).width
        4
        """
        shards = check_shards(shards)
        if isinstance(space, bool) or not isinstance(space, int | np.integer):
            raise TypeError(f"space must be an integer, not {space!r}")
        if not 0 <= space <= 2**64:
            raise ValueError(f"space = {space} is outside [0, 2**64]")
        width = max(1, -(-int(space) // shards))
        return cls("range", shards, min(width, 2**63 - 1))

    def start(self, shard: int) -> int:
        """The first id of ``shard``'s block (0 for a hash layout): a shard
        stores ``id - start``.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> Layout.range(4, space=100).start(2), Layout.hash(4).start(2)
        (50, 0)
        """
        return shard * self.width

    def shard_of(self, ids: Any) -> np.ndarray:
        """The shard of each id (non-negative integers), as uint16.

        Raises
        ------
        ValueError
            If an id is negative.

        Notes
        -----
        O(k) for k ids, in one compiled pass.

        Examples
        --------
        >>> Layout.range(2, space=10).shard_of(np.arange(0, 10, 3)).tolist()
        [0, 0, 1, 1]
        """
        arr = np.asarray(ids)
        out = np.empty(arr.shape[0], np.uint16)
        bad = partition.shard_of(arr, self.shards, self.width, out)
        if bad >= 0:
            raise ValueError(f"ids must be non-negative: ids[{bad}] = {arr[bad]}")
        return out

    def split(self, ids: np.ndarray, limit: int = 0) -> tuple[Split, int]:
        """Split ``ids`` into per-shard runs; returns the split and -1, or the
        position of the first id that is negative or at or past ``limit``
        (unless ``limit`` is 0), with the split then unspecified.

        Notes
        -----
        O(k + s) for k ids and s shards, in one compiled pass.

        Examples
        --------
        >>> split, bad = Layout.range(2, space=10).split(np.array([7, 1, 9]))
        >>> bad, split.run(0).tolist(), split.run(1).tolist()
        (-1, [1], [2, 4])
        """
        runs = np.empty(ids.shape[0], ids.dtype)
        starts = np.empty(self.shards + 1, np.int64)
        tags = np.empty(ids.shape[0], np.uint16)
        bad = partition.split_runs(
            ids, self.shards, self.width, np.uint64(limit), runs, starts, tags
        )
        return Split(runs, starts, tags), int(bad)


def merge(split: Split, answers: list[np.ndarray], dtype: Any) -> np.ndarray:
    """Answers to each shard's run (in shard order) put back in batch order.

    Examples
    --------
    >>> split, _ = Layout.range(2, space=10).split(np.array([7, 1, 9]))
    >>> merge(split, [np.array([10]), np.array([70, 90])], np.int64).tolist()
    [70, 10, 90]
    """
    values = np.concatenate(answers) if answers else np.empty(0, dtype)
    out = np.empty(split.tags.shape[0], dtype)
    partition.merge_runs(
        split.tags, split.starts, values.astype(dtype, copy=False), out
    )
    return out


def check_shards(shards: Any) -> int:
    """``shards`` as an int in ``[1, 2**16]``, or the error saying why not.

    Examples
    --------
    >>> check_shards(0)
    Traceback (most recent call last):
    ...
    ValueError: shards = 0 is outside [1, 65536]
    """
    if isinstance(shards, bool) or not isinstance(shards, int | np.integer):
        raise TypeError(f"shards must be an integer, not {shards!r}")
    if not 1 <= shards <= partition.MAX_SHARDS:
        raise ValueError(f"shards = {shards} is outside [1, {partition.MAX_SHARDS}]")
    return int(shards)

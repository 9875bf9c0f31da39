"""What every sharded collection shares: the dask protocol, its shards, lookups.

A sharded collection (:class:`~sparseset.distributed.ShardedSet`,
:class:`~sparseset.distributed.ShardedStore`) is one task result per
shard, ``(name, shard)``, laid out by a :class:`Layout`. This module holds
the parts that do not depend on what a shard is: the dask collection
protocol, the shards' lengths, a query answered shard by shard and merged
back in the batch's order, and the tasks that split a batch by shard.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Self

import dask
import dask.array as da
import numpy as np
from dask.base import DaskMethodsMixin, tokenize
from dask.core import flatten
from dask.highlevelgraph import HighLevelGraph

from ..sets.index_kinds import IndexKind
from . import shards as tasks
from .inputs import Ids, graph_of
from .layout import Layout


class ShardedCollection(DaskMethodsMixin, ABC):
    """The dask collection of ``layout.shards`` task results, one per shard.

    Subclasses say what a shard is: :meth:`_like` makes a collection of
    the same kind over another graph, and ``__dask_postcompute__`` gathers
    the shards into one container.
    """

    __slots__ = ("_graph", "_kind", "_lengths", "_name", "layout")

    def _setup(
        self, graph: HighLevelGraph, name: str, layout: Layout, kind: IndexKind
    ) -> None:
        self._graph = graph
        self._name = name
        self.layout = layout
        self._kind = kind
        self._lengths: np.ndarray | None = None

    @classmethod
    def _over(cls, graph: Any, name: str, layout: Layout, kind: IndexKind) -> Self:
        """A new collection whose shards are the tasks ``(name, k)`` of
        ``graph`` (a HighLevelGraph, or a dict of tasks)."""
        out = cls.__new__(cls)
        if not isinstance(graph, HighLevelGraph):
            graph = graph_of(name, graph, ())
        out._setup(graph, name, layout, kind)
        return out

    @abstractmethod
    def _like(self, graph: Any, name: str) -> Self:
        """A collection like this one (layout, kind, what a shard holds)
        whose shards are the tasks ``(name, k)`` of ``graph``."""

    # -- the dask collection protocol ----------------------------------------

    def __dask_graph__(self) -> HighLevelGraph:
        return self._graph

    def __dask_keys__(self) -> list[tuple[str, int]]:
        return [(self._name, k) for k in range(self.layout.shards)]

    def __dask_layers__(self) -> tuple[str, ...]:
        return (self._name,)

    def __dask_tokenize__(self) -> str:
        return self._name

    __dask_scheduler__ = staticmethod(dask.threaded.get)

    @staticmethod
    def __dask_optimize__(dsk: Any, keys: Any, **kwargs: Any) -> Any:
        # Only the tasks the shards need: a collection built on another
        # keeps the other's graph, not its queries'.
        if isinstance(dsk, HighLevelGraph):
            return dsk.cull(set(flatten(keys)))
        return dsk

    def __dask_postpersist__(self) -> Any:
        return self._rebuild, ()

    def _rebuild(self, dsk: Any, *, rename: Any = None) -> Self:
        name = rename.get(self._name, self._name) if rename else self._name
        return self._like(dsk, name)

    def persist(self, **kwargs: Any) -> Self:
        """This collection with its shards built and kept in the cluster's
        memory: dask's ``persist``, typed (dask's own is unannotated).

        Notes
        -----
        O(1) here: it submits the graph; the cluster then does the work the
        collection's graph holds (O(k) for k ids for one built from ids).

        Examples
        --------
        >>> from sparseset.distributed import ShardedSet
        >>> s = ShardedSet([4, 2, 4], shards=2).persist(); len(s)
        2
        """
        persisted: Self = super().persist(**kwargs)  # type: ignore[no-untyped-call]
        return persisted

    # -- what it is --------------------------------------------------------

    @property
    def kind(self) -> str:
        """Each shard's index kind.

        O(1).
        """
        return self._kind.name

    @property
    def shards(self) -> int:
        """How many shards.

        O(1).
        """
        return self.layout.shards

    @property
    def name(self) -> str:
        """The dask name of the shards' tasks: keys are ``(name, shard)``.

        O(1).
        """
        return self._name

    def _per_shard(self, function: Any, prefix: str) -> da.Array:
        """A dask array with one element per shard: ``function(shard)``."""
        name = f"sparseset-{prefix}-{self._name}"
        layer = {(name, k): (function, (self._name, k)) for k in range(self.shards)}
        graph = graph_of(name, layer, [self])
        return da.Array(graph, name, ((1,) * self.shards,), np.int64)

    def shard_lengths(self) -> np.ndarray:
        """How many members each shard holds (computed once, then kept).

        Notes
        -----
        The first call computes: one O(1) task per shard, plus building the
        shards if they are not persisted. Later calls copy the kept lengths,
        O(s) for s shards.

        Examples
        --------
        >>> from sparseset.distributed import ShardedSet
        >>> ShardedSet([0, 1, 2, 3], shards=2, by="range").shard_lengths().tolist()
        [2, 2]
        """
        if self._lengths is None:
            self._lengths = np.asarray(self._per_shard(tasks.length, "len").compute())
        return self._lengths.copy()

    def shard_nbytes(self) -> np.ndarray:
        """Bytes each shard's arrays hold (its index, ids and any columns).

        Notes
        -----
        Computes now: one O(c) task per shard for c columns, plus building the
        shards if they are not persisted.

        Examples
        --------
        >>> from sparseset.distributed import ShardedSet
        >>> ShardedSet(range(1000), shards=2, by="range", index="flat").shard_nbytes()
        array([4000, 4000])
        """
        return np.asarray(self._per_shard(tasks.nbytes, "nbytes").compute())

    def __len__(self) -> int:
        return int(self.shard_lengths().sum())

    def ids(self) -> da.Array:
        """The members as a dask array of int64, one block per shard.

        Blocks follow the shards; within a shard, members are in its
        insertion order (until a removal swaps one in). Computes the
        shards' lengths, so that the blocks' sizes are known.

        Notes
        -----
        Lazy: O(n) work for the n members when computed, one task per shard;
        building the graph calls :meth:`shard_lengths` (computed once).

        Examples
        --------
        >>> from sparseset.distributed import ShardedSet
        >>> s = ShardedSet([9, 2, 4], shards=2, by="range")
        >>> s.ids().compute().tolist(), s.ids().chunks
        ([2, 4, 9], ((2, 1),))
        """
        lengths = self.shard_lengths()
        name = f"sparseset-ids-{self._name}"
        layer = {
            (name, k): (tasks.members, (self._name, k), self.layout.start(k))
            for k in range(self.shards)
        }
        graph = graph_of(name, layer, [self])
        return da.Array(graph, name, (tuple(int(n) for n in lengths),), np.int64)

    def _same_layout(self, other: ShardedCollection, what: str) -> None:
        """Raise ``ValueError`` naming both layouts unless ``other`` has this
        collection's layout."""
        if other.layout != self.layout:
            noun = type(self).__name__
            raise ValueError(
                f"cannot take the {what} of {noun}s with different shard layouts: "
                f"{self.layout} and {other.layout}; build one with the other's "
                f"layout ({noun}(..., layout=other.layout))"
            )

    def _lookup(self, source: Ids, what: str, function: Any, dtype: Any) -> da.Array:
        """``function(shard, run, *extra)`` on each shard's run of each block
        of ``source``, merged back in the block's order: a dask array in
        the ids' order and blocks (0-d for one id)."""
        token = tokenize(self._name, source.array.name, what)
        layer, splits, runs, blocks = route(source, self.layout, self._kind, 0, token)
        look = f"sparseset-look-{token}"
        out = f"sparseset-{what}-{token}"
        extra: list[Any] = [()] * self.shards
        if what == "index":
            # Each shard's positions start after the members of the shards
            # before it: one tiny task per shard, and one to add them up.
            lengths, firsts = f"sparseset-len-{token}", f"sparseset-firsts-{token}"
            for k in range(self.shards):
                layer[(lengths, k)] = (tasks.length, (self._name, k))
            layer[(firsts, 0)] = (
                tasks.firsts,
                *[(lengths, k) for k in range(self.shards)],
            )
            for k in range(self.shards):
                layer[(firsts, 1, k)] = (tasks.pick, (firsts, 0), k)
            extra = [((firsts, 1, k),) for k in range(self.shards)]
        for c in range(blocks):
            for k in range(self.shards):
                layer[(look, c, k)] = (
                    function,
                    (self._name, k),
                    (runs, c, k),
                    *extra[k],
                )
            layer[(out, c)] = (
                tasks.merge_block,
                (splits, c),
                np.dtype(dtype).str,
                *[(look, c, k) for k in range(self.shards)],
            )
        graph = graph_of(out, layer, [source.array, self])
        result = da.Array(graph, out, source.array.chunks, dtype)
        return result[0] if source.scalar else result


def route(
    source: Ids, layout: Layout, kind: IndexKind, limit: int, token: str
) -> tuple[dict[Any, Any], str, str, int]:
    """Tasks that split each block of ``source`` by shard, where it lies.

    Returns the layer, the name of the splits (``(splits, block)``), the
    name of the runs (``(runs, block, shard)``: one task per pair, so that
    each shard receives only its own run) and the number of blocks.
    """
    array = source.array
    splits, runs = f"sparseset-split-{token}", f"sparseset-run-{token}"
    layer: dict[Any, Any] = {}
    for c, offset in enumerate(source.offsets()):
        layer[(splits, c)] = (
            tasks.split_block,
            (array.name, c),
            layout,
            kind.name,
            limit,
            offset,
            c,
        )
        for k in range(layout.shards):
            layer[(runs, c, k)] = (tasks.run_of, (splits, c), k)
    return layer, splits, runs, len(source.array.chunks[0])

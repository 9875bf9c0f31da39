"""Deduplicating streams of ids on a cluster: :func:`unique` and :func:`first_seen`.

Both route the ids through shards as a :class:`ShardedSet` does: each
block is split by shard where it lies, and each shard sees its runs in
the stream's order, so "first" means first in the input's order. Both are
lazy; nothing is kept after the answer is computed.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np
from dask.base import tokenize

from ..sets.index_kinds import kind_or_auto
from . import shards as tasks
from .collection import route
from .inputs import as_dask_ids, graph_of
from .layout import Layout, check_shards
from .sharded_set import default_shards, id_space


def _layout(source: Any, shards: int | None, by: str) -> Layout:
    count = default_shards() if shards is None else check_shards(shards)
    if by == "hash":
        return Layout.hash(count)
    if by == "range":
        return Layout.range(count, id_space(source))
    raise ValueError(f"by = {by!r} is not a layout; choose 'hash' or 'range'")


def unique(
    ids: Any, shards: int | None = None, by: str = "hash", index: str = "hash"
) -> da.Array:
    """The distinct ids of a stream, as a lazy int64 dask array.

    One block per shard, of sizes unknown until computed; within a block,
    the shard's ids in the order of their first occurrence; across blocks,
    no order: this is not the stream's first-seen order. For that, take
    ``ids[first_seen(ids)]`` (as ``pandas.unique`` answers). ``ids`` is a dask array, a
    dask Series or in-memory ids; ``shards``, ``by`` and ``index`` are as
    for :class:`~sparseset.distributed.ShardedSet` (``index`` must take
    every id: ``"hash"`` takes all of ``[0, 2**63)``).

    Notes
    -----
    Lazy: O(k) work for k ids when computed, one split pass per block and
    one task per shard, with no shuffle.

    Examples
    --------
    >>> import numpy as np
    >>> sorted(unique(np.array([4, 1, 4, 4, 9]), shards=2).compute().tolist())
    [1, 4, 9]
    """
    kind = kind_or_auto(index)
    source = as_dask_ids(ids, add_to=kind)
    layout = _layout(source, shards, by)
    token = tokenize("sparseset-unique", source.array.name, layout, kind.name)
    layer, _, runs, blocks = route(source, layout, kind, kind.limit, token)
    name = f"sparseset-unique-{token}"
    for k in range(layout.shards):
        layer[(name, k)] = (
            tasks.distinct,
            kind.name,
            layout.start(k),
            [(runs, c, k) for c in range(blocks)],
        )
    graph = graph_of(name, layer, [source.array])
    return da.Array(graph, name, ((np.nan,) * layout.shards,), np.int64)


def first_seen(
    ids: Any, shards: int | None = None, by: str = "hash", index: str = "hash"
) -> da.Array:
    """True at each id's first occurrence in the stream, as a lazy bool dask
    array in the input's order and blocks (``ids[mask]`` drops repeats).

    Notes
    -----
    Lazy: O(k) work for k ids when computed, one split pass per block, one
    task per shard and one merge per block, with no shuffle.

    Examples
    --------
    >>> import numpy as np
    >>> first_seen(np.array([4, 1, 4, 9, 1]), shards=2).compute().tolist()
    [True, True, False, True, False]
    """
    kind = kind_or_auto(index)
    source = as_dask_ids(ids, add_to=kind)
    layout = _layout(source, shards, by)
    token = tokenize("sparseset-first-seen", source.array.name, layout, kind.name)
    layer, splits, runs, blocks = route(source, layout, kind, kind.limit, token)
    seen, masks = f"sparseset-seen-{token}", f"sparseset-mask-{token}"
    name = f"sparseset-first-seen-{token}"
    for k in range(layout.shards):
        # One task per shard walks its runs in the stream's order; its
        # masks then go back to the blocks, one small task per run.
        layer[(seen, k)] = (
            tasks.first_seen,
            kind.name,
            [(runs, c, k) for c in range(blocks)],
        )
        for c in range(blocks):
            layer[(masks, c, k)] = (tasks.mask_of, (seen, k), c)
    for c in range(blocks):
        layer[(name, c)] = (
            tasks.merge_block,
            (splits, c),
            np.dtype(np.bool_).str,
            *[(masks, c, k) for k in range(layout.shards)],
        )
    graph = graph_of(name, layer, [source.array])
    result = da.Array(graph, name, source.array.chunks, np.bool_)
    return result[0] if source.scalar else result

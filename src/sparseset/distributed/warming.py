"""Workers that load the compiled kernels before the first task needs them.

A new worker process has compiled nothing: the first task to call each
kernel loads it from numba's on-disk cache (or compiles it, seconds, where
the cache is cold), so the first query on a fresh cluster pays for every
kernel it touches, on every worker. :func:`warm` registers
:class:`WarmKernels`, a worker plugin that calls every kernel the sharded
collections use once, on tiny inputs, on each worker now and on each
worker that joins later (one restarted after a crash included).
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from distributed import WorkerPlugin

from ..io.schema import Schema
from ..sets.index_kinds import kind_or_auto
from . import shards as tasks
from . import store_shards as store_tasks
from .layout import Layout
from .sharded_set import shard_capacity

#: (layout, index kind) pairs whose kernels are loaded.
CASES = (
    ("hash", "auto"),
    ("hash", "hash"),
    ("range", "flat"),
    ("range", "paged"),
    ("hash", "flat"),
)
#: The columns of the stores warmed: an integer counter and a float total.
SCHEMA: Schema = {"n": (np.dtype(np.int64), ()), "x": (np.dtype(np.float64), ())}


def warm_here() -> int:
    """Call every kernel of the sharded collections' tasks once, here, on
    tiny int64 inputs; returns how many task functions ran.

    Examples
    --------
    >>> warm_here() > 0
    True
    """
    calls = 0
    ids = np.arange(0, 128, 2, dtype=np.int64)
    for by, kind in CASES:
        layout = Layout.hash(2) if by == "hash" else Layout.range(2, space=128)
        split = tasks.split_block(ids, layout, kind, kind_or_auto(kind).limit, 0, 0)
        runs = [tasks.run_of(split, k) for k in range(2)]
        capacity = shard_capacity(kind_or_auto(kind), layout)
        shards = [tasks.build(kind, capacity, [run]) for run in runs]
        a, b = shards[0], tasks.add_runs(shards[0], [runs[0][:4] + 1])
        found = [
            tasks.contains_run(shard, run)
            for shard, run in zip(shards, runs, strict=True)
        ]
        tasks.merge_block(split, np.dtype(np.bool_).str, *found)
        tasks.index_run(a, runs[0], 0)
        tasks.discard_runs(a, [runs[0][:2]])
        tasks.remove_runs(a, [runs[0][:2]], 0)
        for combine in (
            tasks.union,
            tasks.intersection,
            tasks.difference,
            tasks.symmetric_difference,
            tasks.equal,
            tasks.subset,
            tasks.disjoint,
        ):
            combine(a, b)
        tasks.whole(shards, layout, kind)
        tasks.first_seen(kind, runs)
        tasks.distinct(kind, 0, runs)
        rows = store_tasks.split_rows(
            split, 0, 0, SCHEMA, np.ones(ids.shape[0], np.int64), np.ones(ids.shape[0])
        )
        stores = [
            store_tasks.build(SCHEMA, kind, capacity, [run], [part], {})
            for run, part in zip(runs, rows, strict=True)
        ]
        counted = store_tasks.add_at(stores[0], [runs[0]], [None], {"n": 1}, 0, 0)
        store_tasks.add_at(counted, [runs[0]], [rows[0]], {}, 0, 0)
        store_tasks.update(stores[0], [runs[0]], [rows[0]], {}, 0, 0)
        answers = [
            store_tasks.get_run(store, run, 0)
            for store, run in zip(stores, runs, strict=True)
        ]
        store_tasks.merge_rows(split, 0, *answers)
        store_tasks.whole(stores, layout, kind, SCHEMA)
        calls += 1
    return calls


class WarmKernels(WorkerPlugin):
    """A worker plugin: each worker runs ``warm_here()`` when it starts
    (or when the plugin is registered), before it takes a task.

    Examples
    --------
    >>> WarmKernels().name
    'sparseset-warm-kernels'
    """

    name = "sparseset-warm-kernels"

    async def setup(self, worker: Any) -> None:
        # Off the worker's event loop: loading kernels takes a while, and
        # the loop must keep answering the scheduler meanwhile.
        """Loads the kernels on a worker as it joins: O(1) in the data, a few
        seconds from the kernel cache.
        """
        await asyncio.get_running_loop().run_in_executor(None, warm_here)


def warm(client: Any = None) -> dict[str, Any]:
    """Have every worker of ``client``'s cluster (default: the current
    client) load sparseset's kernels now, and every worker that joins
    later as it starts; returns each worker's answer.

    Call it once after connecting: the first query then runs at full
    speed. The kernels load from numba's on-disk cache where the workers
    can read it (``NUMBA_CACHE_DIR``, or next to the installed package),
    else they compile once per worker.

    Notes
    -----
    O(w) for w workers, each loading the kernels once (from the cache, or
    compiling them cold); O(1) in the data.

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> with LocalCluster(n_workers=1, processes=False,
    ...                   dashboard_address=None) as cluster, Client(cluster) as client:
    ...     sorted(set(r["status"] for r in warm(client).values()))
    ['OK']
    """
    if client is None:
        from distributed import default_client

        client = default_client()
    answers: dict[str, Any] = client.register_plugin(WarmKernels())
    return answers

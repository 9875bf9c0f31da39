"""Counting events per key on a dask cluster: ``ShardedStore.add_at`` next to dask.

The benchmarks of ``sparseset.distributed.ShardedStore`` and of a fresh
cluster's first query.

- ``Count``: E events over K distinct keys (ids up to 2**40, so the hash
  index; each key drawn uniformly) counted into a new
  ``ShardedStore({"n": "i8"})`` with ``add_at(events, n=1)``, persisted;
  next to dask DataFrame ``groupby(key).size()`` and ``value_counts()``
  on the same events on the same cluster, and a single-process
  ``SparseMap.add_at`` (one thread, as a worker's kernels run).
  ``track_counts_agree`` checks that every method counted the same.
- ``FirstQuery``: a fresh ``LocalCluster``, then the first ``len()`` of a
  persisted ``ShardedSet`` of ``IDS`` ids already on the workers, with
  and without ``sparseset.distributed.warm(client)`` run first (``Warm``
  times that call). The kernel cache on disk is warm (setup runs the
  same once in another cluster), as a user's is after the first run.

Inputs are dask arrays of ``BLOCK`` ids a block, scattered to the workers
and persisted before timing. asv runs them at small sizes; the closing
figures (50M events over 10M keys, 2 workers) come from running this file
as a script::

    python asv_bench/benchmarks/distributed_store.py --events 50_000_000 \\
        --keys 10_000_000 --workers 2
"""

import argparse
import functools
import gc
import statistics
import time

import numpy as np

if __package__:
    from ._size import CLUSTER_PROCESSES, sized
else:  # run as a script: python asv_bench/benchmarks/distributed_store.py
    from _size import CLUSTER_PROCESSES, sized

EVENTS = sized(2_000_000)
KEYS = sized(400_000)
WORKERS = [1, 2]
BLOCK = 1 << 20
#: Ids of the set a fresh cluster builds for its first query.
IDS = sized(1_000_000)
SEED = 2_028
COUNT_PARAMS = ["events", "keys", "workers"]
FIRST_PARAMS = ["workers", "warmed"]
WARM_PARAMS = ["workers"]


@functools.cache
def _events(events, keys):
    """``events`` int64 ids drawn uniformly from ``keys`` distinct ids below 2**40."""
    rng = np.random.default_rng(SEED)
    ids = rng.choice(2**40, keys, replace=False).astype(np.int64)
    return ids[rng.integers(0, keys, events)]


def _cluster(workers):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=CLUSTER_PROCESSES,
        dashboard_address=None,
        memory_limit=0,  # no spilling to disk in the middle of a timing
    )
    return cluster, Client(cluster)


def _scattered(client, values):
    """``values`` as a dask array of ``BLOCK``-id blocks held by the workers."""
    import dask.array as da

    blocks = [values[i : i + BLOCK] for i in range(0, len(values), BLOCK)]
    futures = client.scatter(blocks)
    joined = da.concatenate(
        [
            da.from_delayed(f, shape=b.shape, dtype=b.dtype)
            for f, b in zip(futures, blocks, strict=True)
        ]
    )
    return client.persist(joined)


class Count:
    """Count ``events`` over ``keys``; see the module docstring."""

    params = ([EVENTS], [KEYS], WORKERS)
    param_names = COUNT_PARAMS
    number = 1
    repeat = (1, 3, 60.0)
    timeout = 900

    def setup(self, events, keys, workers):
        import numba

        from sparseset.distributed import ShardedStore, warm

        self.threads = numba.get_num_threads()
        numba.set_num_threads(1)  # the single-process baseline, as a worker
        self.cluster, self.client = _cluster(workers)
        warm(self.client)
        self.events_np = _events(events, keys)
        self.events = _scattered(self.client, self.events_np)
        self.shards = workers
        # Untimed: the first add_at of this process's graph code paths.
        small = self.events[:BLOCK]
        ShardedStore({"n": "i8"}, shards=workers).add_at(small, n=1).persist()

    def teardown(self, events, keys, workers):
        import numba

        numba.set_num_threads(self.threads)
        self.client.close()
        self.cluster.close()

    def _run(self, collection):
        from distributed import wait

        done = self.client.persist(collection)
        wait(done)
        del done

    def _counter(self):
        from sparseset.distributed import ShardedStore

        store = ShardedStore({"n": "i8"}, shards=self.shards)
        return store.add_at(self.events, n=1)

    def _frame(self):
        import dask.dataframe as dd

        return dd.from_dask_array(self.events, columns="key").to_frame()

    def time_sparseset_add_at(self, events, keys, workers):
        self._run(self._counter())

    def time_dask_groupby_size(self, events, keys, workers):
        self._run(self._frame().groupby("key").size())

    def time_dask_value_counts(self, events, keys, workers):
        self._run(self._frame()["key"].value_counts())

    def time_single_process_sparsemap_add_at(self, events, keys, workers):
        from sparseset import SparseMap

        SparseMap("i8", index="hash").add_at(self.events_np, 1)

    def track_counts_agree(self, events, keys, workers):
        """1 if the store, dask and numpy counted the same, else 0."""
        counted = self._counter().compute()
        order = np.argsort(counted.ids)
        keys_np, expected = np.unique(self.events_np, return_counts=True)
        by_dask = self._frame().groupby("key").size().compute().sort_index()
        same = (
            np.array_equal(counted.ids[order], keys_np)
            and np.array_equal(counted["n"][order], expected)
            and np.array_equal(by_dask.to_numpy(), expected)
        )
        return int(same)


class FirstQuery:
    """A fresh cluster's first ``len()`` of a persisted ``ShardedSet`` of
    ``IDS`` ids, with ``warm(client)`` run first (in setup) or not."""

    params = (WORKERS, [False, True])
    param_names = FIRST_PARAMS
    number = 1
    repeat = 1  # each timing needs a fresh cluster, made by setup
    timeout = 300

    def setup(self, workers, warmed):
        from sparseset.distributed import ShardedSet, warm

        # The on-disk kernel cache warm, as after a user's first run: the
        # same build and len once, in a cluster of its own.
        cluster, client = _cluster(workers)
        len(ShardedSet(np.arange(1 << 16), shards=workers).persist())
        client.close()
        cluster.close()
        self.cluster, self.client = _cluster(workers)
        self.ids = _scattered(self.client, _events(IDS, IDS // 2))
        self.workers = workers
        if warmed:
            warm(self.client)

    def teardown(self, workers, warmed):
        self.client.close()
        self.cluster.close()

    def time_first_len(self, workers, warmed):
        from sparseset.distributed import ShardedSet

        len(ShardedSet(self.ids, shards=self.workers).persist())


class Warm:
    """``warm(client)`` on a fresh cluster (the kernel cache on disk warm)."""

    params = WORKERS
    param_names = WARM_PARAMS
    number = 1
    repeat = 1
    timeout = 300

    def setup(self, workers):
        FirstQuery.setup(self, workers, False)

    def teardown(self, workers):
        self.client.close()
        self.cluster.close()

    def time_warm(self, workers):
        from sparseset.distributed import warm

        warm(self.client)


# -- the script: the closing figures ----------------------------------------


def _timed(function):
    gc.collect()
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main(argv=None):
    def count(text):
        return int(text.replace("_", ""))

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=count, default=EVENTS)
    parser.add_argument("--keys", type=count, default=KEYS)
    parser.add_argument("--workers", type=int, nargs="+", default=WORKERS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip", nargs="*", default=[], help="benchmarks to leave out")
    args = parser.parse_args(argv)
    print(f"{args.events:,} events over {args.keys:,} keys, blocks of {BLOCK:,}")
    for workers in args.workers:
        _count(args, workers)
        for warmed in (False, True):
            fresh = FirstQuery()
            fresh.setup(workers, warmed)
            try:
                seconds = _timed(
                    functools.partial(fresh.time_first_len, workers, warmed)
                )
                what = "first len(), fresh cluster" + (", warmed" if warmed else "")
                print(f"{what:<40} {seconds:8.3f} s", flush=True)
            finally:
                fresh.teardown(workers, warmed)
        warming = Warm()
        warming.setup(workers)
        try:
            seconds = _timed(functools.partial(warming.time_warm, workers))
            print(f"{'warm(client), fresh cluster':<40} {seconds:8.3f} s", flush=True)
        finally:
            warming.teardown(workers)


def _count(args, workers):
    """Print each ``Count`` timing (dask's once, ours the median of
    ``args.repeats``) and whether the counts agree."""
    bench = Count()
    bench.setup(args.events, args.keys, workers)
    print(f"\n== Count, {workers} worker(s)")
    try:
        for name in sorted(dir(bench)):
            if not name.startswith("time_") or name[5:] in args.skip:
                continue
            call = functools.partial(
                getattr(bench, name), args.events, args.keys, workers
            )
            repeats = 1 if "dask" in name else args.repeats
            seconds = statistics.median(_timed(call) for _ in range(repeats))
            print(f"{name[5:]:<40} {seconds:8.3f} s", flush=True)
        agree = bench.track_counts_agree(args.events, args.keys, workers)
        print(f"{'counts agree':<40} {bool(agree)}")
    finally:
        bench.teardown(args.events, args.keys, workers)


if __name__ == "__main__":
    main()

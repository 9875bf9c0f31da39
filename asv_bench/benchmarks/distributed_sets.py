"""Sharded sets on a dask cluster next to dask's own answers.

The benchmarks of ``sparseset.distributed``.

Three workloads on a ``distributed.LocalCluster`` of 1 and 2 worker
processes (one thread each), on the same data in the same run:

- ``Build``: a ``ShardedSet`` of N distinct ids (drawn from a 4N-id space,
  random order), persisted; range layout with flat shards, and hash layout
  with hash shards.
- ``Contains``: N queries (half members) against it, the answer persisted
  in the cluster; next to ``dask.array.isin``.
- ``Unique``: the distinct ids of N ids with 50% repeats (N/2 ids, each
  twice, shuffled), by ``unique`` and ``first_seen``; next to
  ``dask.array.unique`` and ``dask.dataframe`` ``drop_duplicates``.

Each also times a single-process ``SparseSet`` on the same ids, on one
thread as each worker's kernels run (``time_single_process_*``): the
per-id cost the shards' kernels should match. Inputs are dask arrays of
``BLOCK`` ids a block, persisted on the workers before timing, so nothing
is read from the client while timed.

asv runs them at a small N (``asv run --quick`` stays fast); the closing
figures at 50M come from running this file as a script::

    python asv_bench/benchmarks/distributed_sets.py --n 50_000_000 --workers 1 2

which prints each time, and for sparseset's operations the time the
workers spent in each kind of task (split, per-shard work, merge), from
dask's task stream: where the cluster path's time goes.
"""

import argparse
import functools
import gc
import statistics
import time

import numpy as np

if __package__:
    from ._size import CLUSTER_PROCESSES, sized
else:  # run as a script: python asv_bench/benchmarks/distributed_sets.py
    from _size import CLUSTER_PROCESSES, sized

N = sized(200_000)
WORKERS = [1, 2]
#: Ids per block of the dask inputs (the script's default too).
BLOCK = 1 << 20
SEED = 20_261_124
PARAM_NAMES = ["n", "workers"]


@functools.cache
def _data(n):
    """members (n distinct of a 4n space), queries (half members) and a
    stream (n/2 ids, each twice), all int64 in random order."""
    rng = np.random.default_rng(SEED)
    space = rng.permutation(4 * n)
    members = space[:n].copy()
    hits = rng.choice(members, n // 2, replace=False)
    misses = rng.choice(space[n:], n - n // 2, replace=False)
    queries = rng.permutation(np.concatenate([hits, misses]))
    half = space[: n // 2].copy()
    stream = rng.permutation(np.concatenate([half, half]))
    return members, queries, stream


class _OnCluster:
    """A LocalCluster with the data persisted on it; one per setup."""

    params = ([N], WORKERS)
    param_names = PARAM_NAMES
    number = 1
    repeat = (1, 3, 60.0)
    timeout = 600
    #: Whether setup builds the two sets the queries run against.
    prebuilt = False

    def setup(self, n, workers):
        import numba
        from distributed import Client, LocalCluster, wait

        from sparseset.distributed import ShardedSet, first_seen, unique

        # The single-process baselines on one thread, as a worker's kernels.
        self.threads = numba.get_num_threads()
        numba.set_num_threads(1)

        self.cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=CLUSTER_PROCESSES,
            dashboard_address=None,
            memory_limit=0,  # no spilling to disk in the middle of a timing
        )
        self.client = Client(self.cluster)
        members, queries, stream = _data(n)
        self.members_np, self.queries_np, self.stream_np = members, queries, stream
        # Scattered block by block: the workers hold the inputs before
        # anything is timed, and no graph carries the data.
        self.members, self.queries, self.stream = (
            self._scattered(a) for a in (members, queries, stream)
        )
        self.shards = workers
        # Compile or load every kernel on every worker, untimed, at a size
        # that takes the threaded lookups too.
        warm = np.arange(1 << 16)
        for by, index in (("range", "flat"), ("hash", "hash")):
            tiny = ShardedSet(warm, shards=workers, by=by, index=index)
            tiny.contains(warm).compute()
        unique(warm, shards=workers).compute()
        first_seen(warm, shards=workers).compute()
        if self.prebuilt:
            self.sets = {
                "range": ShardedSet(
                    self.members, shards=workers, by="range", index="flat", space=4 * n
                ).persist(),
                "hash": ShardedSet(self.members, shards=workers).persist(),
            }
            wait(list(self.sets.values()))

    def _scattered(self, values):
        import dask.array as da

        blocks = [values[i : i + BLOCK] for i in range(0, len(values), BLOCK)]
        futures = self.client.scatter(blocks)
        joined = da.concatenate(
            [
                da.from_delayed(f, shape=b.shape, dtype=b.dtype)
                for f, b in zip(futures, blocks, strict=True)
            ]
        )
        # Persisted: its blocks are then plain keys every timed graph
        # shares (no copies made by one graph's optimisation and not
        # another's).
        return self.client.persist(joined)

    def teardown(self, n, workers):
        import numba

        numba.set_num_threads(self.threads)
        self.client.close()
        self.cluster.close()

    def _run(self, collection):
        from distributed import wait

        done = self.client.persist(collection)
        wait(done)
        del done


class Build(_OnCluster):
    def time_sparseset_range_flat(self, n, workers):
        from sparseset.distributed import ShardedSet

        self._run(
            ShardedSet(
                self.members, shards=self.shards, by="range", index="flat", space=4 * n
            )
        )

    def time_sparseset_hash_hash(self, n, workers):
        from sparseset.distributed import ShardedSet

        self._run(ShardedSet(self.members, shards=self.shards))

    def time_single_process_flat(self, n, workers):
        from sparseset import SparseSet

        SparseSet.from_ids(self.members_np, capacity=4 * n)

    def time_single_process_hash(self, n, workers):
        from sparseset import SparseSet

        SparseSet.from_ids(self.members_np, index="hash")


class Contains(_OnCluster):
    prebuilt = True

    def time_sparseset_range_flat(self, n, workers):
        self._run(self.sets["range"].contains(self.queries))

    def time_sparseset_hash_hash(self, n, workers):
        self._run(self.sets["hash"].contains(self.queries))

    def time_dask_isin(self, n, workers):
        import dask.array as da

        self._run(da.isin(self.queries, self.members))

    def time_single_process_flat(self, n, workers):
        self.single["flat"].contains(self.queries_np)

    def time_single_process_hash(self, n, workers):
        self.single["hash"].contains(self.queries_np)

    def setup(self, n, workers):
        from sparseset import SparseSet

        super().setup(n, workers)
        self.single = {
            "flat": SparseSet.from_ids(self.members_np, capacity=4 * n),
            "hash": SparseSet.from_ids(self.members_np, index="hash"),
        }


class Unique(_OnCluster):
    def time_sparseset_unique(self, n, workers):
        from sparseset.distributed import unique

        self._run(unique(self.stream, shards=self.shards))

    def time_sparseset_first_seen(self, n, workers):
        from sparseset.distributed import first_seen

        self._run(first_seen(self.stream, shards=self.shards))

    def time_dask_unique(self, n, workers):
        import dask.array as da

        self._run(da.unique(self.stream))

    def time_dask_dataframe_drop_duplicates(self, n, workers):
        import dask.dataframe as dd

        self._run(dd.from_dask_array(self.stream).drop_duplicates())

    def time_single_process_hash(self, n, workers):
        from sparseset import SparseSet

        SparseSet.from_ids(self.stream_np, index="hash")


# -- the script: the closing figures at 50M ---------------------------------


def _timed(function, repeats):
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _task_seconds(client, run):
    """Run ``run()`` while recording dask's task stream; the seconds workers
    spent per kind of task (the key's name up to its token), and fetching
    inputs from other workers (``transfer``)."""
    from distributed import get_task_stream

    with get_task_stream(client) as stream:
        run()
    spent = {}
    for task in stream.data:
        prefix = task["key"][0] if isinstance(task["key"], tuple) else task["key"]
        prefix = "-".join(
            part for part in str(prefix).split("-") if not _is_token(part)
        )
        for span in task["startstops"]:
            # Compute time by kind of task; time fetching inputs from other
            # workers (serialising, sending, deserialising) on its own.
            what = prefix if span["action"] == "compute" else span["action"]
            spent[what] = spent.get(what, 0.0) + span["stop"] - span["start"]
    return spent


def _is_token(part):
    return len(part) >= 16 and all(c in "0123456789abcdef" for c in part)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=lambda t: int(t.replace("_", "")), default=N)
    parser.add_argument("--workers", type=int, nargs="+", default=WORKERS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        help="benchmarks to leave out, e.g. dask_isin (slow at 50M)",
    )
    parser.add_argument(
        "--only", nargs="*", default=None, help="run only these benchmarks"
    )
    args = parser.parse_args(argv)
    n = args.n
    print(f"n = {n:,} ids, blocks of {BLOCK:,}; median of {args.repeats}")
    for workers in args.workers:
        for kind in (Build, Contains, Unique):
            bench = kind()
            t0 = time.perf_counter()
            bench.setup(n, workers)
            print(
                f"\n== {kind.__name__}, {workers} worker(s) "
                f"(setup {time.perf_counter() - t0:.1f} s)"
            )
            try:
                for name in sorted(dir(bench)):
                    if not name.startswith("time_") or name[5:] in args.skip:
                        continue
                    if args.only is not None and name[5:] not in args.only:
                        continue
                    method = getattr(bench, name)

                    def call(method=method, workers=workers):
                        method(n, workers)

                    # dask's baselines run once: at 50M they take minutes.
                    repeats = 1 if "dask" in name else args.repeats
                    seconds = _timed(call, repeats)
                    per_id = seconds / n * 1e9
                    line = f"{name[5:]:<36} {seconds:8.3f} s {per_id:6.1f} ns/id"
                    if "sparseset" in name:
                        spent = _task_seconds(bench.client, call)
                        busy = sum(spent.values())
                        parts = ", ".join(
                            f"{k.replace('sparseset-', '')} {v / n * 1e9:.1f}"
                            for k, v in sorted(spent.items(), key=lambda kv: -kv[1])
                            if v / busy > 0.01
                        )
                        line += f"  [worker ns/id: {parts}]"
                    print(line, flush=True)
            finally:
                bench.teardown(n, workers)


if __name__ == "__main__":
    main()

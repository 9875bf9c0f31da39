"""asv benchmarks for sparseset (run them from ``asv_bench/``, see asv.conf.json)."""

import os

if os.environ.get("SPARSESET_BENCH_PRELOAD") == "1":
    # CI's run of every benchmark once (.ci/run sets it, with a numba
    # cache the tests filled): each benchmark runs in a process forked
    # from the one that imported this package (asv's forkserver), so the
    # kernels loaded here once are loaded in every benchmark's process.
    # Timed runs load them in their own processes, as a program does.
    from sparseset.cli.warming import warm

    warm()

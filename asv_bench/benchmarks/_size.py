"""The suite's size switch: full size for timing, a small size for CI.

``SPARSESET_BENCH_SIZE=small`` makes every benchmark's data about a
hundredth of its full size, so that CI can run each setup and each timed
method once (``asv run --quick --dry-run``) in minutes and a broken
benchmark turns it red. The figures of a small run mean nothing; asv's
results are recorded at full size (the variable unset, or ``full``).
"""

import os

#: What ``SPARSESET_BENCH_SIZE`` may say.
SIZES = ("full", "small")
SIZE = os.environ.get("SPARSESET_BENCH_SIZE", "full") or "full"
if SIZE not in SIZES:
    raise ValueError(f"SPARSESET_BENCH_SIZE={SIZE!r}: expected one of {SIZES}")
SMALL = SIZE == "small"


def sized(full, small=None):
    """``full``, or at the small size ``small`` (by default ``full // 100``)."""
    if not SMALL:
        return full
    return max(full // 100, 1) if small is None else small


#: Whether a dask ``LocalCluster`` runs its workers as processes. At the
#: small size they are threads of the benchmark's process: the same graphs
#: and shard code run, without starting and importing into new
#: interpreters for every benchmark.
CLUSTER_PROCESSES = not SMALL

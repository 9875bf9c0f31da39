"""Threaded reads on a quiet machine and next to a second busy process.

``python -m sparseset bench --contention`` times each read that may use
several threads (``contains``, ``index``, a view's ``rows`` and its
``ids`` after a small change) at several batch sizes, with one numba
thread and with all of them, first alone and then while a second process
runs the same workload nonstop: what two dask workers, two pytest-xdist
workers or two user programs on one machine do. Threads pay only if the
"all" column beats the "1" column when alone, and must never lose to it
when the machine is busy.

The second process is this module run as a program (``python -m
sparseset.bench.contention WORKLOAD SIZE SEED``), which repeats the
workload until it is stopped.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..sets.interrupts import numba_threads, set_numba_threads
from ..sets.sparse_set import SparseSet
from ..world.world import World

#: The reads timed, in order.
READS = ("contains", "index", "view rows", "view ids")
#: Batch sizes (ids looked up, or entities in the view).
SIZES = (1_000, 32_768, 1_000_000)
#: Members of the set the lookups probe, drawn from a space 4x as large.
MEMBERS = 1_000_000
#: Seconds the second process gets to start and warm up before timing.
LOAD_START_SECONDS = 3.0


@dataclass(frozen=True)
class Timing:
    """One read at one size: seconds per call, median over the repeats."""

    read: str
    size: int
    alone_one: float
    alone_all: float
    busy_one: float
    busy_all: float


def workload(read: str, size: int, seed: int) -> Callable[[], object]:
    """A call that does ``read`` once at ``size``, on data built here.

    Examples
    --------
    >>> call = workload("contains", 1000, 0)
    >>> call().shape
    (1000,)
    """
    rng = np.random.default_rng(seed)
    if read in ("contains", "index"):
        s = SparseSet.from_ids(rng.permutation(4 * MEMBERS)[:MEMBERS])
        queries = rng.integers(0, 4 * MEMBERS, size)
        return (
            (lambda: s.contains(queries))
            if read == "contains"
            else (lambda: s.index(queries))
        )
    if read in ("view rows", "view ids"):
        w = World()
        w.register("pos", "f8")
        w.register("vel", "f8")
        handles = w.create(size)
        w.add("pos", rng.permutation(handles))
        w.add("vel", rng.permutation(handles))
        view = w.view("pos", "vel")
        toggled = handles[:1]

        def changed_then_read() -> object:
            # A small change: one entity leaves "vel" or comes back, so the
            # view joins its stores again on the read.
            if w.has("vel", toggled[0]):
                w.discard("vel", toggled)
            else:
                w.add("vel", toggled)
            return view.rows("vel") if read == "view rows" else view.ids

        return changed_then_read
    raise ValueError(f"no read {read!r}; reads: {', '.join(READS)}")


def seconds_per_call(call: Callable[[], object], repeats: int) -> float:
    """Median over ``repeats`` runs of enough calls to fill ~20 ms."""
    call()
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-7)
    calls = max(1, int(0.02 / once))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def with_threads(threads: int, call: Callable[[], object], repeats: int) -> float:
    """:func:`seconds_per_call` with numba (and the library) on ``threads``."""
    previous = numba_threads()
    set_numba_threads(threads)
    try:
        return seconds_per_call(call, repeats)
    finally:
        set_numba_threads(previous)


def run_contention(
    repeats: int = 5,
    seed: int = 0,
    sizes: Sequence[int] = SIZES,
    reads: Sequence[str] = READS,
) -> list[Timing]:
    """Time every read at every size alone and next to a busy process."""
    threads = numba_threads()
    timings = []
    for read in reads:
        for size in sizes:
            call = workload(read, size, seed)
            alone = [with_threads(t, call, repeats) for t in (1, threads)]
            load = subprocess.Popen(
                [sys.executable, "-m", __name__, read, str(size), str(seed + 1)],
                stdout=subprocess.DEVNULL,
            )
            try:
                time.sleep(LOAD_START_SECONDS)
                busy = [with_threads(t, call, repeats) for t in (1, threads)]
            finally:
                load.terminate()
                load.wait()
            timings.append(Timing(read, size, *alone, *busy))
    return timings


def format_contention(timings: Sequence[Timing]) -> str:
    """The timings as a table: ms per call with one thread and with all of
    them, alone and busy, and all / one (below 1: the threads pay).

    Examples
    --------
    >>> print(format_contention([Timing("contains", 1000, 1e-3, 5e-4, 2e-3, 2e-3)]))
    read              ids   alone: 1       all  all/1    busy: 1       all  all/1
    contains        1,000   1.000 ms  0.500 ms   0.50   2.000 ms  2.000 ms   1.00
    """
    header = ("read", "ids", "alone: 1", "all", "all/1", "busy: 1", "all", "all/1")
    widths = (10, 11, 11, 10, 7, 11, 10, 7)
    lines = [
        "".join(
            f"{h:<{w}}" if i == 0 else f"{h:>{w}}"
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    ]
    for t in timings:
        cells = (
            t.read,
            f"{t.size:,}",
            f"{t.alone_one * 1e3:.3f} ms",
            f"{t.alone_all * 1e3:.3f} ms",
            f"{t.alone_all / t.alone_one:.2f}",
            f"{t.busy_one * 1e3:.3f} ms",
            f"{t.busy_all * 1e3:.3f} ms",
            f"{t.busy_all / t.busy_one:.2f}",
        )
        lines.append(
            "".join(
                f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
        )
    return "\n".join(lines)


def load(read: str, size: int, seed: int) -> None:
    """Run ``read`` at ``size`` nonstop (the second process)."""
    call = workload(read, size, seed)
    while True:
        call()


if __name__ == "__main__":
    load(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))


__all__ = [
    "READS",
    "SIZES",
    "Timing",
    "format_contention",
    "load",
    "run_contention",
    "seconds_per_call",
    "with_threads",
    "workload",
]

"""Running test workers on threads that switch as often as CPython allows.

``sys.setswitchinterval(1e-6)`` makes the interpreter hand the GIL to
another thread every microsecond, so a call whose state spans several
Python steps is interrupted between them thousands of times per test: the
stress tests below would lose members, duplicate handles and misalign rows
within a second if a call were not atomic.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

#: Stress runs per test; ``SPARSESET_STRESS_RUNS=20`` repeats each 20 times.
RUNS = int(os.environ.get("SPARSESET_STRESS_RUNS", "1"))
#: Seconds a worker may take before the test calls it a deadlock.
DEADLOCK_SECONDS = 120.0


def run_threads(workers: Sequence[Callable[[], Any]]) -> list[Any]:
    """Run each worker on its own thread, all started together; return
    their results in order, re-raising the first worker's exception."""
    results: list[Any] = [None] * len(workers)
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def run(i: int) -> None:
        try:
            start.wait()
            results[i] = workers[i]()
        except BaseException as error:  # re-raised below
            errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(workers))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(DEADLOCK_SECONDS)
        stuck = [thread for thread in threads if thread.is_alive()]
    finally:
        sys.setswitchinterval(interval)
    if stuck:
        raise AssertionError(f"{len(stuck)} worker threads never finished: deadlock")
    if errors:
        raise errors[0]
    return results

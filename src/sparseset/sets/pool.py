"""Batch lookups shared out over the library's own threads.

A lookup batch of at least :data:`~sparseset.config.PARALLEL_THRESHOLD` ids
is cut into spans that the calling thread and the pool's threads claim one
at a time, each running the serial kernel (which releases the GIL) on its
span. numba's own ``prange`` threads were fast on a quiet machine and
collapsed when another process shared the cores: its workers wait for each
other at the end of a region, spinning on cores they do not have. Here no
thread waits for another's share: a thread the OS does not run claims
nothing, the others (the caller at least) take its spans, so a threaded
lookup is never much slower than the serial one, busy machine or not.

One thing still stalls a shared batch: a thread the OS takes off its core
in the middle of a span, which the caller must wait for (a span cannot be
taken back from a running kernel). When a batch's caller waits for others
for more than :data:`STALL_SHARE` of the call, the cores are taken: the
next batches run on the caller alone for :data:`BACKOFF_SECONDS`, then
sharing is tried again.

How many threads share a batch is ``numba_threads()``: the
``NUMBA_NUM_THREADS`` environment variable, or ``numba.set_num_threads``
(per calling thread), as for numba's own threaded code.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .. import config
from .interrupts import numba_threads

#: A batch is cut into about this many spans per thread: enough that the
#: threads finish close together, few enough that claiming costs nothing
#: next to a span's lookups.
SPANS_PER_THREAD = 8
#: A caller that waits for other threads' spans longer than this share of
#: its whole call, and longer than :data:`STALL_SECONDS`, takes it that the
#: cores are busy elsewhere (a thread waking late is not a stall).
STALL_SHARE = 0.3
STALL_SECONDS = 0.0005
#: How long batches then run on their caller alone before sharing again.
BACKOFF_SECONDS = 0.5

_serial_until = 0.0

_pool: ThreadPoolExecutor | None = None
_pool_threads = 0
_pool_lock = threading.Lock()


def lookup_threads() -> int:
    """How many threads share a lookup batch (``numba_threads()``).

    Examples
    --------
    >>> lookup_threads() >= 1
    True
    """
    threads: int = numba_threads()
    return threads


def shared(count: int) -> bool:
    """Whether a batch of ``count`` ids is shared out over threads.

    Examples
    --------
    >>> shared(10)
    False
    """
    return (
        count >= config.PARALLEL_THRESHOLD
        and lookup_threads() > 1
        and time.monotonic() >= _serial_until
    )


def helpers(threads: int) -> ThreadPoolExecutor:
    """The pool of helper threads, made (or widened) on first need."""
    global _pool, _pool_threads
    with _pool_lock:
        if _pool is None or _pool_threads < threads:
            old = _pool
            _pool = ThreadPoolExecutor(threads, thread_name_prefix="sparseset")
            _pool_threads = threads
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def note_stall() -> None:
    """Run the next batches on their callers alone for a while (the cores
    are busy elsewhere)."""
    global _serial_until
    _serial_until = time.monotonic() + BACKOFF_SECONDS


def share_out(count: int, work: Callable[[int, int], bool]) -> bool:
    """Run ``work(start, stop)`` over spans covering ``range(count)``, on
    the calling thread and the pool's; return whether any span's ``work``
    returned True. ``work`` must release the GIL to gain from the threads
    (a kernel compiled with ``nogil=True``) and must not raise.

    Examples
    --------
    >>> seen = []
    >>> share_out(10, lambda start, stop: seen.append((start, stop)) or start == 0)
    True
    >>> spans = sorted(seen); spans[0][0], spans[-1][1], sum(b - a for a, b in spans)
    (0, 10, 10)
    """
    threads = lookup_threads()
    span = max(1, -(-count // (threads * SPANS_PER_THREAD)))
    spans = -(-count // span)
    if threads <= 1 or spans <= 1:
        return work(0, count)
    claim = threading.Lock()
    done = threading.Event()
    claimed = finished = 0
    answer = False
    errors: list[BaseException] = []

    def run() -> None:
        nonlocal claimed, finished, answer
        while True:
            with claim:
                s = claimed
                claimed += 1
            if s >= spans:
                return
            start = s * span
            try:
                result = work(start, min(start + span, count))
            except BaseException as error:  # re-raised by the caller below
                errors.append(error)
                result = False
            with claim:
                answer = answer or result
                finished += 1
                if finished == spans:
                    done.set()

    began = time.perf_counter()
    pool = helpers(threads - 1)
    for _ in range(min(threads, spans) - 1):
        pool.submit(run)
    run()
    idle = time.perf_counter()
    done.wait()
    ended = time.perf_counter()
    waited = ended - idle
    if waited > STALL_SECONDS and waited > STALL_SHARE * (ended - began):
        note_stall()
    if errors:
        raise errors[0]
    return answer


__all__ = [
    "BACKOFF_SECONDS",
    "SPANS_PER_THREAD",
    "STALL_SECONDS",
    "STALL_SHARE",
    "helpers",
    "lookup_threads",
    "note_stall",
    "share_out",
    "shared",
]

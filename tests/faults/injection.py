"""Injecting faults: Ctrl-C at a chosen step of a call, snapshots to compare.

A real Ctrl-C reaches Python as SIGINT: the C handler sets a flag and the
main thread's interpreter calls the Python-level handler at its next check
between two bytecodes. :func:`interrupt_at` does the same at a chosen
point: a trace function counts the events (calls, lines, returns) of the
call under test and, at the k-th, calls ``_thread.interrupt_main()``,
which sets that very flag. So the interrupt goes through whatever SIGINT
handler is installed, exactly as Ctrl-C would, between two bytecodes of
the call; running every k from 1 to the call's event count interrupts it
at every line it runs.
"""

from __future__ import annotations

import _thread
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from sparseset import ComponentStore, SparseSet, World

#: Seconds to wait for an interrupt that a critical call deferred.
DELIVERY_SECONDS = 10.0


def events_of(call: Callable[[], Any]) -> int:
    """How many trace events ``call()`` runs (its injection points)."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return tracer

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def interrupt_at(call: Callable[[], Any], k: int) -> None:
    """Run ``call()`` with Ctrl-C arriving at its ``k``-th trace event, and
    wait for the ``KeyboardInterrupt``: raise AssertionError if none came
    (an interrupt lost) or if ``call`` raised something else."""
    seen = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal seen
        seen += 1
        if seen == k:
            sys.settrace(None)
            _thread.interrupt_main()
            return None
        return tracer

    try:
        sys.settrace(tracer)
        call()
        sys.settrace(None)
        if seen < k:
            # This run of the call had fewer events than the one counted
            # (a save's threads vary a little): no Ctrl-C was sent.
            return
        waited = time.monotonic()
        while time.monotonic() - waited < DELIVERY_SECONDS:
            time.sleep(0.0005)
    except KeyboardInterrupt:
        return
    finally:
        sys.settrace(None)
    raise AssertionError(f"Ctrl-C at event {k} of {seen} never raised")


def points(total: int, most: int) -> list[int]:
    """Up to ``most`` injection points spread over ``1..total``, the first
    and last included."""
    if total <= most:
        return list(range(1, total + 1))
    step = (total - 1) / (most - 1)
    return sorted({1 + round(i * step) for i in range(most)})


def lock_is_free(lock: Any) -> bool:
    """Whether another thread can take ``lock`` at once (no call left it
    held)."""
    free: list[bool] = []

    def probe() -> None:
        took = lock.acquire(timeout=1.0)
        free.append(bool(took))
        if took:
            lock.release()

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return free == [True]


# -- states to compare, each checking its container's invariants ----------


def check_set(s: SparseSet) -> None:
    ids = s.ids
    assert ids.shape[0] == len(s) == len(set(ids.tolist()))
    assert bool(s.contains(ids).all())
    assert s.index(ids).tolist() == list(range(len(s)))


def set_state(s: SparseSet) -> Any:
    check_set(s)
    return sorted(s.ids.tolist())


def check_store(store: ComponentStore) -> Any:
    ids = store.ids
    assert ids.shape[0] == len(store) == len(set(ids.tolist()))
    assert bool(store.contains(ids).all())
    return {
        "ids": ids.tolist(),
        **{name: store[name].tolist() for name in store.columns},
    }


def world_state(w: World) -> Any:
    alive = w.entities
    assert bool(w.alive(alive).all())
    state: dict[str, Any] = {"alive": sorted(alive.tolist())}
    for name in w.components:
        store = w[name]
        handles = store.ids
        assert handles.shape[0] == len(set(handles.tolist()))
        assert bool(w.alive(handles).all())
        assert bool(w.has(name, handles).all())
        order = np.argsort(handles)
        state[name] = {
            "ids": handles[order].tolist(),
            **{col: store[col][order].tolist() for col in store.columns},
        }
    return state

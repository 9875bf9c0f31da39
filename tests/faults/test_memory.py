"""A batch whose allocation fails raises MemoryError and changes nothing.

The process's address space is capped (``RLIMIT_AS``) at 20 margins from
64 MiB to 1 GiB above what it maps already, under calls that need more
than that: a flat index grown to 2**31 ids (8 GiB), room reserved for
2**31 members, 4096 rows of a 512 KiB column in a store and in a world,
an entity table for 2**28 entities. Each time the call raises
``MemoryError`` wherever its first allocation too big for the cap is,
the container holds what it held before, every invariant holds, its lock
is free, and the next call succeeds: the process goes on.
"""

from __future__ import annotations

import contextlib
import ctypes
import resource
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from injection import check_store, lock_is_free, set_state, world_state

from sparseset import ComponentStore, SparseSet, World
from sparseset.sets.locking import BORN_WRITING, guard_of

MIB = 1 << 20
#: Margins above what the process maps: 20, from 64 MiB to 1 GiB.
MARGINS = np.linspace(64 * MIB, 1024 * MIB, 20).astype(int).tolist()
LIBC = ctypes.CDLL(None)


def mapped_bytes() -> int:
    """What this process maps, once freed memory has gone back."""
    LIBC.malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


@contextlib.contextmanager
def address_space(margin: int) -> Iterator[None]:
    """Cap this process's address space ``margin`` bytes above what it maps."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (mapped_bytes() + margin, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def run_case(
    make: Callable[[], tuple[Any, Callable[[], Any], Callable[[], Any]]],
    state_of: Callable[[Any], Any],
) -> int:
    """Under each cap, the call ``make()`` returns raises MemoryError and
    changes nothing; then its small call runs. Returns the injections."""
    subject, _, small = make()
    small()  # compiled first: compiling maps memory of its own
    for margin in MARGINS:
        subject, call, small = make()
        before = state_of(subject)
        with pytest.raises(MemoryError), address_space(margin):
            call()
        assert state_of(subject) == before, f"margin {margin}"
        assert guard_of(subject).writing == BORN_WRITING
        assert lock_is_free(subject.lock)
        small()
        assert state_of(subject) != before
    return len(MARGINS)


@pytest.fixture(autouse=True)
def _room_to_start():
    if resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY:
        pytest.fail("these tests set RLIMIT_AS themselves: start without one")


@pytest.mark.parametrize("index", ["flat", "paged", "hash"])
def test_set_batches(index):
    def make():
        s = SparseSet(index=index)
        s.add(range(10))
        if index != "flat":  # room for 2**31 members: 16 GiB of dense
            return s, lambda: s.reserve(2**31), lambda: s.add([11, 12])
        return s, lambda: s.add([20, 2**31 - 1]), lambda: s.add([11, 12])

    run_case(make, set_state)


def test_store_batches():
    def make():
        store = ComponentStore({"hp": "i4", "wide": ("f8", (2**16,))})
        store.add([1, 2, 3], hp=[1, 2, 3], wide=0.5)
        # 4096 rows of 512 KiB: the keys grow, then the column cannot.
        many = np.arange(4096) + 10
        return (
            store,
            lambda: store.add(many, hp=1, wide=2.0),
            lambda: store.add([5], hp=5, wide=1.0),
        )

    run_case(make, check_store)


def test_world_calls():
    def new_world():
        w = World()
        w.register("pos", ("f8", (2,)))
        w.register("wide", ("f8", (2**16,)))
        e = w.create(10)
        w.add("pos", e, pos=1.0)
        return w

    def create():
        w = new_world()
        return w, lambda: w.create(2**28), lambda: w.create(3)

    def add():
        w = new_world()
        e = w.create(4096)
        return (
            w,
            lambda: w.add("wide", e, wide=3.0),
            lambda: w.add("pos", e[:3], pos=2.0),
        )

    run_case(create, world_state)
    run_case(add, world_state)

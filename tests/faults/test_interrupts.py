"""Ctrl-C at every step of a call: the call happened whole or not at all.

Each case builds a fresh container, then interrupts one call at each of
its trace events in turn (:mod:`injection`), the way SIGINT arrives:
through the installed handler, between two bytecodes of the main thread.
Afterwards the ``KeyboardInterrupt`` has come (none is lost), the
container's state is the one before the call or the one after it, every
invariant holds, and its lock is free for other threads.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from injection import (
    check_store,
    events_of,
    interrupt_at,
    lock_is_free,
    points,
    set_state,
    world_state,
)

from sparseset import ComponentStore, Schedule, SparseMap, SparseSet, World
from sparseset.sets import interrupts
from sparseset.sets.locking import BORN_WRITING, guard_of

#: Injection points per case at most (every point when a call has fewer).
MOST = 60


def run_case(
    make: Callable[[], tuple[Any, Callable[[], Any]]],
    state_of: Callable[[Any], Any],
    most: int = MOST,
) -> int:
    """Interrupt the call ``make()`` returns at each of its points; return
    how many injections ran."""
    make()[1]()  # compiled and cached first: the points are the warm call's
    subject, call = make()
    before = state_of(subject)
    total = events_of(call)
    after = state_of(subject)
    assert before != after, "the call under test must change something"
    seen = {"before": 0, "after": 0}
    chosen = points(total, most)
    for k in chosen:
        subject, call = make()
        interrupt_at(call, k)
        state = state_of(subject)
        assert state in (before, after), f"Ctrl-C at event {k} of {total}: {state}"
        seen["before" if state == before else "after"] += 1
        assert guard_of(subject).writing == BORN_WRITING
        assert lock_is_free(subject.lock)
        # and the container goes on working
        state_of(subject)
    assert not interrupts.PENDING[0]
    return len(chosen)


@pytest.fixture(autouse=True)
def _handler_installed():
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        # Started ignoring SIGINT (nohup, a shell's background job): the
        # import rightly kept that, so these tests put the handler in place.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        assert interrupts.install()
    else:
        assert previous is interrupts.on_sigint
    yield
    signal.signal(signal.SIGINT, previous)
    assert not interrupts.PENDING[0]


@pytest.mark.parametrize("index", ["flat", "paged", "hash"])
def test_set_batches(index):
    def grow():
        s = SparseSet(index=index)
        s.add(range(10))
        return s, lambda: s.add([100, 3, 200, 300, 5000])

    def shrink():
        s = SparseSet(index=index)
        s.add(range(40))
        return s, lambda: s.discard([3, 39, 7, 1000, 20])

    def keep():
        s = SparseSet(index=index)
        s.add(range(40))
        return s, lambda: s.keep_only(range(0, 40, 3))

    def one():
        s = SparseSet(index=index)
        s.add(range(8))
        return s, lambda: s.add(9000)

    def one_out():
        s = SparseSet(index=index)
        s.add(range(8))
        return s, lambda: s.remove(2)

    for make in (grow, shrink, keep, one, one_out):
        run_case(make, set_state)


def test_store_batches():
    def add():
        store = ComponentStore({"hp": "i4", "pos": ("f8", (2,))})
        store.add([1, 2, 3], hp=[1, 2, 3], pos=0.5)
        return store, lambda: store.add([7, 2, 900], hp=[7, 8, 9], pos=[[1, 2]] * 3)

    def remove():
        store = ComponentStore({"hp": "i4"})
        store.add(range(20), hp=range(20))
        return store, lambda: store.remove([4, 19, 0])

    def put():
        store = ComponentStore({"hp": "i4"})
        store.add(range(20), hp=range(20))
        return store, lambda: store.set([4, 19, 0], hp=-1)

    for make in (add, remove, put):
        run_case(make, check_store)


def test_maps_and_rollbacks():
    def put():
        m = SparseMap("f8")
        m[[1, 2, 3]] = [1.0, 2.0, 3.0]
        return m, lambda: m.__setitem__([2, 7, 900], [5.0, 6.0, 7.0])

    def roll():
        s = SparseSet()
        s.add(range(30))
        token = s.checkpoint()
        s.discard([3, 4, 5, 29])
        return s, lambda: s.rollback(token)

    run_case(put, lambda m: check_store(m.store))
    run_case(roll, set_state)


def new_world() -> tuple[World, list[Any]]:
    w = World()
    w.register("pos", "i8")
    w.register("tag")
    seen: list[Any] = []
    w.on_remove("pos", lambda handles: seen.append(handles.tolist()))
    w.on_add("tag", lambda handles: seen.append(handles.tolist()))
    e = w.create(20)
    w.add("pos", e, pos=np.arange(20))
    w.add("tag", e[::2])
    return w, seen


def test_world_calls():
    def create():
        w, _ = new_world()
        return w, lambda: w.create(30)

    def destroy():
        w, _ = new_world()
        doomed = w.entities[3:9]
        return w, lambda: w.destroy(doomed)

    def add():
        w, _ = new_world()
        some = w.entities[1::3]
        return w, lambda: w.add("tag", some)

    def remove():
        w, _ = new_world()
        some = w.entities[::4]
        return w, lambda: w.remove("pos", some)

    def group():
        w, _ = new_world()
        w.group("pos", "tag")
        some = w.entities[1:6]
        return w, lambda: w.add("tag", some)

    for make in (create, destroy, add, remove, group):
        run_case(make, world_state)


def test_deferred_commands_apply():
    def apply():
        w, _ = new_world()
        cmd = w.deferred().owned()
        made = cmd.create(5)
        cmd.add("pos", made, pos=7)
        cmd.destroy(w.entities[:4])
        cmd.discard("tag", w.entities[4:10])
        return w, cmd.apply

    run_case(apply, world_state)


def test_schedule_runs():
    def run():
        w, _ = new_world()
        sch = Schedule()

        @sch.system(writes=("pos",))
        def move(world):
            world["pos"]["pos"][:] += 1

        @sch.system(reads=("pos",), after=("move",))
        def reap(world, commands):
            store = world["pos"]
            commands.destroy(store.ids[store["pos"] % 5 == 0])
            commands.add("tag", commands.create(2))

        return w, lambda: sch.run(w, threads=1)

    # A system's own writes are its business: Ctrl-C inside ``move`` may
    # land between its statements. What the schedule promises is that the
    # batch's deferred commands are applied whole or dropped: here, the
    # entities alive are those before or after.
    def alive(w):
        world_state(w)
        return sorted(w.entities.tolist())

    run_case(run, alive)


@pytest.mark.parametrize("fmt", ["npz", "parquet"])
def test_world_saves(tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    target = tmp_path / "world"
    old, _ = new_world()
    old.save(target, format=fmt)
    new, _ = new_world()
    new.destroy(new.entities[:5])

    def save():
        old.save(target, format=fmt)
        return new, lambda: new.save(target, format=fmt)

    def on_disk(_):
        assert sorted(os.listdir(tmp_path)) == ["world"]  # no temporary left
        return world_state(World.load(target))

    # Parquet saves fsync several files: fewer points, as each costs more.
    assert run_case(save, on_disk, MOST if fmt == "npz" else 25) > 0


def test_ctrl_c_inside_a_system_raises_there():
    """A system is user code (it runs through ``call_outside``): Ctrl-C
    there raises at once, not after the batch, and the batch's deferred
    commands are dropped (the entities they held are not created)."""
    w, _ = new_world()
    before = world_state(w)
    sch = Schedule()
    spins = []

    @sch.system(writes=("pos",))
    def spin(world, commands):
        commands.create(5)
        while len(spins) < 100_000:  # until Ctrl-C (a bound, were it deferred)
            spins.append(1)
            if len(spins) == 10:
                _thread.interrupt_main()

    with pytest.raises(KeyboardInterrupt) as caught:
        sch.run(w, threads=1)
    assert "in system 'spin' of the schedule" in caught.value.__notes__
    assert 10 <= len(spins) < 10_000
    assert world_state(w) == before
    assert not interrupts.PENDING[0]


def test_a_handler_of_the_program_is_kept():
    def mine(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, mine)
    try:
        assert interrupts.install() is False
        assert signal.getsignal(signal.SIGINT) is mine
        interrupts.uninstall()  # not ours: left alone
        assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, previous)
    assert interrupts.install() is True


def test_an_interrupt_outside_any_call_raises_at_once():
    frame = sys._getframe()
    assert not interrupts.must_wait(frame)
    with pytest.raises(KeyboardInterrupt):
        interrupts.on_sigint(signal.SIGINT, frame)
    assert not interrupts.PENDING[0]


def test_an_interrupt_never_keeps_numbas_thread_lock():
    """Ctrl-C at every step of a thread-count change (a Schedule's
    ``kernel_threads``): numba takes a process-wide lock to read or set its
    thread count, and an interrupt raised as that lock's ``__exit__``
    began kept it for ever, so every other thread's next call (a
    Schedule's systems, a dask worker's warm-up) waited on it."""
    import numba.np.ufunc.parallel as numba_threads

    from sparseset.schedule.schedule import kernel_threads

    def change() -> None:
        with kernel_threads(1):
            pass

    change()  # numba's thread layer and its lock exist from here on
    for k in points(events_of(change), 200):
        interrupt_at(change, k)
        assert lock_is_free(numba_threads._backend_init_process_lock), k

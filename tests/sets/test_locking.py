"""Atomic calls on sets: the guard machinery, and threads that hammer a set.

Each stress test runs threads that switch every microsecond
(:mod:`stress`) and compares the end state with a serial run of the
same work: threads on disjoint ids must end exactly as the serial run;
threads on overlapping ids must keep every invariant.
"""

import inspect
import threading

import numpy as np
import pytest

from sparseset import ComponentStore, SetArray, SparseMap, SparseSet, World
from sparseset.sets import locking
from sparseset.sets.locking import Guarded, atomic, guard_of, is_exclusive
from sparseset.world.group import Group
from sparseset.world.view import View
from stress import RUNS, run_threads

pytestmark = pytest.mark.boundscheck

KINDS = ["flat", "paged", "hash", "auto"]

#: The scalar hot paths each container guards by hand (see sets.locking).
HAND_GUARDED = {
    SparseSet: {
        *("__contains__", "__len__", "add", "contains", "discard", "remove"),
        # Set algebra: both locks in one step, or a locked named method.
        *("__and__", "__rand__", "__or__", "__ror__", "__sub__", "__xor__"),
        "__rxor__",
        # Comparisons: the same, or a locked general test.
        *("__eq__", "__ne__", "__le__", "__lt__", "__ge__", "__gt__", "isdisjoint"),
    },
    ComponentStore: {"__contains__", "__len__", "contains", "get", "set"},
    SparseMap: {"__contains__", "__getitem__", "__len__"},
    World: {"__getitem__", "__len__", "get", "has"},
    SetArray: {"__len__"},
    View: set(),
    Group: {"__len__"},
}


def check_set(s):
    """A set's invariants: members distinct, each at its position."""
    ids = s.ids
    assert ids.shape[0] == len(s) == len(set(ids.tolist()))
    assert s.index(ids).tolist() == list(range(len(s)))
    assert bool(s.contains(ids).all())


# -- the machinery --------------------------------------------------------


@pytest.mark.parametrize("cls", list(HAND_GUARDED), ids=lambda c: c.__name__)
def test_every_public_method_is_exclusive_or_hand_guarded(cls):
    """Every public method, property and operator of a container (inherited
    mixins too) runs under its guard, except the hand-guarded hot paths."""
    assert issubclass(cls, Guarded)
    for name in dir(cls):
        if not locking.wrappable(cls, name):
            continue
        value = inspect.getattr_static(cls, name)
        functions = [value.fget, value.fset] if isinstance(value, property) else [value]
        for function in filter(None, functions):
            assert is_exclusive(function) != (name in HAND_GUARDED[cls]), name


def test_wrapped_methods_keep_their_docs_and_signatures():
    assert "Examples" in SparseSet.update.__doc__
    assert list(inspect.signature(SparseSet.update).parameters) == ["self", "others"]
    assert "Examples" in SparseSet.capacity.__doc__


def test_every_way_of_making_an_object_gives_it_a_guard():
    import copy
    import pickle

    s = SparseSet.from_ids([1, 2])
    copies = (s.copy(), copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s)))
    for made in copies:
        assert guard_of(made) is not guard_of(s)
        made.add(3)
        assert 3 in made and 3 not in s


def test_a_world_shares_one_guard_with_its_parts():
    w = World()
    w.register("a")
    w.register("b")
    parts = [w["a"], w["b"], w.view("a", "b"), w.group("a")]
    assert all(guard_of(part) is guard_of(w) for part in parts)
    m = SparseMap("f8")
    assert guard_of(m) is guard_of(m.store)


def test_exclusive_counts_writers_and_bumps_the_version():
    @atomic()
    class Box(Guarded):
        def put(self):
            return guard_of(self).writing

        def fail(self):
            raise ValueError("no")

    box = Box()
    guard = guard_of(box)
    assert box.put() == 1
    assert (guard.writing, guard.version) == (0, 1)
    with pytest.raises(ValueError):
        box.fail()
    assert (guard.writing, guard.version) == (0, 2)


def test_an_optimistic_read_overlapped_by_a_writer_is_read_again():
    """A scalar read that a writer overlapped (simulated: the version moves
    under it) discards its answer and reads again under the lock; one that
    nothing overlapped answers from its single read."""
    s = SparseSet.from_ids([5])
    guard = guard_of(s)
    state = s._engine.state
    reads = []

    class Overlapped:
        flat_sparse = None  # not a flat SetState: read through contains_key

        def contains_key(self, key):
            reads.append(key)
            if len(reads) == 1:
                guard.version += 1  # a writer finished meanwhile
                return False  # a torn answer: 5 is a member
            return state.contains_key(key)

    s._engine.state = Overlapped()
    try:
        assert 5 in s
        assert reads == [5, 5]
        reads.append(0)  # from now on, no overlap
        reads.clear()
        reads.append(None)
        assert 5 in s and reads == [None, 5]
    finally:
        s._engine.state = state


def test_an_inline_flat_read_overlapped_by_a_writer_is_read_again():
    """``x in s`` reads a flat index inline; a writer overlapping that read
    (simulated: the version moves while the index is read, and the slot
    read is garbage) makes it read again under the lock."""
    s = SparseSet.from_ids([5, 9])
    guard = guard_of(s)
    state = s._engine.state
    index = state.flat_sparse
    reads = []

    class Overlapped:
        def __len__(self):
            return len(index)

        def __getitem__(self, x):
            reads.append(x)
            if len(reads) == 1:
                guard.version += 1  # a writer finished meanwhile
                return 10**6  # a torn slot: 5 would look absent
            return index[x]

    state.flat_sparse = Overlapped()
    try:
        assert 5 in s
        assert reads == [5, 5]
    finally:
        state.flat_sparse = index
    assert 5 in s and 7 not in s


def test_without_a_gil_every_read_takes_the_lock(monkeypatch):
    """On a free-threaded interpreter the optimistic reads are off: a guard
    is born with a writer that never leaves."""
    monkeypatch.setattr(locking, "BORN_WRITING", 1)
    s = SparseSet.from_ids([5])
    guard = guard_of(s)
    state = s._engine.state
    held = []

    class Spy:
        flat_sparse = None  # not a flat SetState: read through contains_key

        def contains_key(self, key):
            held.append(guard.lock._is_owned())
            return state.contains_key(key)

    s._engine.state = Spy()
    try:
        assert 5 in s
    finally:
        s._engine.state = state
    assert held == [True]
    s.add([6, 7])
    assert guard.writing == 1


def test_a_reader_sees_a_writer_in_progress_and_waits_for_it():
    s = SparseSet.from_ids([5])
    guard = guard_of(s)
    answers = []
    with guard.lock:
        guard.writing += 1
        reader = threading.Thread(target=lambda: answers.append(5 in s))
        reader.start()
        reader.join(0.2)
        assert reader.is_alive()  # blocked on the lock, not answering
        s.discard(5)
        guard.version += 1
        guard.writing -= 1
    reader.join()
    assert answers == [False]


def test_guards_of_arguments_are_taken_in_one_order():
    """``a.update(b)`` and ``b.update(a)`` on two threads cannot deadlock."""
    a = SparseSet.from_ids(range(0, 200, 2))
    b = SparseSet.from_ids(range(1, 200, 2))

    def forward():
        for _ in range(300):
            a.update(b)
            a.symmetric_difference_update(b)

    def backward():
        for _ in range(300):
            b.__ior__(a)
            b.__isub__(a)
            b.update(range(1, 200, 2))

    run_threads([forward, backward])
    check_set(a)
    check_set(b)


# -- stress ----------------------------------------------------------------


def own_batches(worker, workers, count, size, span, seed):
    """``count`` batches of ``size`` ids of ``worker``'s own residue class."""
    rng = np.random.default_rng(seed + worker)
    return [rng.integers(0, span, size) * workers + worker for _ in range(count)]


def serial_members(batches_by_worker):
    """Members after each worker adds batch i then discards batch i // 2's
    first half, worker by worker (its ids are its own, so order between
    workers does not matter)."""
    members = set()
    for batches in batches_by_worker:
        for i, batch in enumerate(batches):
            members.update(batch.tolist())
            members.difference_update(batches[i // 2][:25].tolist())
    return members


@pytest.mark.parametrize("kind", KINDS)
def test_batch_adds_and_discards_on_disjoint_ids_match_the_serial_run(kind):
    workers, count = 4, 2000
    for run in range(RUNS):
        batches = [
            own_batches(w, workers, count, 50, 50_000, run) for w in range(workers)
        ]
        s = SparseSet(index=kind)

        def work(s, mine):
            def body():
                for i, batch in enumerate(mine):
                    s.add(batch)
                    s.discard(mine[i // 2][:25])

            return body

        run_threads([work(s, mine) for mine in batches])
        check_set(s)
        assert set(s.ids.tolist()) == serial_members(batches)


@pytest.mark.parametrize("kind", KINDS)
def test_scalar_adds_discards_and_reads_never_lose_or_lie(kind):
    """Writers add and discard one id at a time (the lock-only fast path)
    while readers ask about ids whose membership never changes."""
    workers, per_worker = 3, 1500
    for run in range(RUNS):
        s = SparseSet(index=kind)
        fixed_in = list(range(10**6, 10**6 + 50))
        s.add(fixed_in)
        rng = np.random.default_rng(run)
        plans = [
            (rng.integers(0, 20_000, per_worker) * workers + w).tolist()
            for w in range(workers)
        ]
        wrong = []

        def writer(s, mine):
            def body():
                kept = set()
                for i, x in enumerate(mine):
                    s.add(x)
                    kept.add(x)
                    if i % 3 == 2:
                        s.discard(mine[i - 1])
                        kept.discard(mine[i - 1])
                return kept

            return body

        def reader(s, fixed_in, wrong):
            def body():
                for _ in range(20):
                    for x in fixed_in:
                        if x not in s:
                            wrong.append(x)
                    if 2 * 10**6 in s or -1 in s:
                        wrong.append("absent")

            return body

        kept = run_threads(
            [writer(s, mine) for mine in plans] + [reader(s, fixed_in, wrong)]
        )
        assert wrong == []
        check_set(s)
        assert set(s.ids.tolist()) == set(fixed_in).union(*kept[:workers])


def toggling(s, moves, done):
    """A worker that moves each of ``moves`` in or out of ``s`` one at a
    time, over and over, until ``done`` is set."""

    def body():
        while not done.is_set():
            for x in moves:
                if x in s:
                    s.discard(x)
                else:
                    s.add(x)

    return body


def combining(a, b, rounds, done):
    """A worker that checks ``rounds`` rounds of ``&``, ``|``, ``-`` and
    ``^`` of ``a`` and ``b`` (ids below 40), then sets ``done``."""

    def body():
        try:
            for _ in range(rounds):
                for result in (a & b, b | a, a - b, b ^ a):
                    check_set(result)
                    assert set(result.ids.tolist()) <= set(range(40))
        finally:
            done.set()

    return body


def test_small_set_algebra_never_reads_a_set_mid_change():
    """``a & b``, ``a | b``, ``a - b`` and ``a ^ b`` of small sets (one
    kernel call, both locks) while other threads move ids in and out of
    both one at a time: every result is a set whose members were members
    of the operands (a torn read would duplicate a swapped member)."""
    for run in range(RUNS):
        a = SparseSet.from_ids(range(0, 40, 2))
        b = SparseSet.from_ids(range(0, 40, 3))
        moves = np.random.default_rng(run).integers(0, 40, 1000).tolist()
        done = threading.Event()
        writers = [toggling(a, moves, done), toggling(b, moves, done)]
        run_threads([*writers, combining(a, b, 3000, done)])
        check_set(a)
        check_set(b)


def comparing(a, b, c, rounds, done):
    """A worker that checks ``rounds`` rounds of the comparisons of ``a``
    (ids below 39), ``b`` (every id below 40) and ``c`` (ids 40 to 59),
    whose answers are the same in every state ``a`` passes through, taking
    the locks in both orders, then sets ``done``."""

    def body():
        try:
            for _ in range(rounds):
                assert a <= b and a < b and b >= a and b > a
                assert a != b and (a == b) is False and not b <= a
                assert a.isdisjoint(c) and c.isdisjoint(a) and not b.isdisjoint(b)
        finally:
            done.set()

    return body


def test_small_set_comparisons_hold_both_locks_without_deadlock():
    """The comparisons of small sets (one kernel call, both locks, taken
    as the operators take them) from two threads in opposite orders while
    a third moves ids in and out of ``a``: every answer is the one every
    state of ``a`` gives, and no thread waits forever."""
    for run in range(RUNS):
        a = SparseSet.from_ids(range(0, 39, 2))
        b = SparseSet.from_ids(range(40))
        c = SparseSet.from_ids(range(40, 60))
        moves = np.random.default_rng(run).integers(0, 39, 1000).tolist()
        done = threading.Event()
        run_threads(
            [
                toggling(a, moves, done),
                comparing(a, b, c, 2000, done),
                comparing(a, b, c, 2000, threading.Event()),
            ]
        )
        check_set(a)


def last_ops(plans):
    """For each id, the kinds of the last operation each thread did on it
    ("add" or "discard"): an end state some serial order gives has each id
    as one of its threads' last operations left it."""
    last = {}
    for plan in plans:
        mine = {}
        for op, batch in plan:
            for x in batch.tolist():
                mine[x] = op
        for x, op in mine.items():
            last.setdefault(x, set()).add(op)
    return last


@pytest.mark.parametrize("kind", KINDS)
def test_overlapping_writers_end_in_a_state_some_serial_order_gives(kind):
    """Threads add and discard batches of the same ids, batch and one-id
    calls mixed: every invariant holds, and each id ends as the last
    operation of one of the threads that touched it left it."""
    for run in range(RUNS):
        s = SparseSet(index=kind)
        rng = np.random.default_rng(run)
        plans = [
            [
                ("discard" if i % 3 == 1 else "add", rng.integers(0, 3000, 30))
                for i in range(200)
            ]
            for _ in range(4)
        ]

        def work(s, plan):
            def body():
                for op, batch in plan:
                    if batch[0] % 2:
                        for x in batch.tolist():
                            getattr(s, op)(x)
                    else:
                        getattr(s, op)(batch)

            return body

        run_threads([work(s, plan) for plan in plans])
        check_set(s)
        members = set(s.ids.tolist())
        for x, ops in last_ops(plans).items():
            assert ("add" if x in members else "discard") in ops, x
        assert members <= set(last_ops(plans))


def test_iterating_while_another_thread_mutates_gives_a_snapshot():
    s = SparseSet.from_ids(range(1000))
    seen = []

    def mutate():
        for k in range(300):
            s.discard(range(k, 1000, 7))
            s.add(range(1000))

    def iterate():
        for _ in range(100):
            members = list(s)
            assert len(members) == len(set(members))
            seen.append(len(members))

    run_threads([mutate, iterate])
    assert seen and all(0 < n <= 1000 for n in seen)


def test_set_array_removals_on_disjoint_sets_match_the_serial_run():
    for run in range(RUNS):
        sa = SetArray(8, 500)
        rng = np.random.default_rng(run)
        plans = [(w, rng.integers(0, 500, (100, 10))) for w in range(4)]

        def work(target, worker, plan):
            def body():
                for batch in plan:
                    sets = np.full(batch.shape[0], 2 * worker + batch[0] % 2)
                    target.remove(sets, batch)

            return body

        run_threads([work(sa, w, plan) for w, plan in plans])
        serial = SetArray(8, 500)
        for w, plan in plans:
            work(serial, w, plan)()
        assert sa.sizes.tolist() == serial.sizes.tolist()
        for k in range(8):
            assert sorted(sa.members(k).tolist()) == sorted(serial.members(k).tolist())


#: The kernels that may release the GIL (``nogil=True``): those that only
#: read a container's arrays (run under its lock), and those that never
#: touch one (the sharded sets' partitioning, on arrays of their own).
MAY_RELEASE_THE_GIL = {
    # Handle resolution and a change reader's scan: they read the entity
    # index, a store's index or its stamps, and write their own ``out``.
    "index_handles",
    "resolve",
    "rows_stamped_after",
    "contains_many",
    "find_all",
    "handles_at",
    "handles_of",
    "rows_of_handles",
    "marked_contains",
    "find_one",
    "first_mismatch",
    "join_rows",
    "lookup_chunk",
    "first_positions",
    "merge_runs",
    "shard_of",
    "split_runs",
    # Reads a batch of positions a grid is given, writes nothing.
    "any_non_finite",
}


def all_dispatchers():
    """Every compiled kernel of :mod:`sparseset.kernels`, by name."""
    import importlib
    import pkgutil

    from numba.core.dispatcher import Dispatcher

    import sparseset.kernels as package

    found = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, Dispatcher):
                found[name] = value
    return found


def test_no_kernel_that_writes_a_container_releases_the_gil():
    """The lock-free one-id reads rest on it: a kernel that writes a
    container's arrays holds the GIL, so a reader never runs beside one."""
    dispatchers = all_dispatchers()
    assert len(dispatchers) > 20
    released = {
        name
        for name, kernel in dispatchers.items()
        if kernel.targetoptions.get("nogil")
    }
    assert released <= MAY_RELEASE_THE_GIL, released - MAY_RELEASE_THE_GIL

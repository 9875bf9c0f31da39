"""The default index kind, ``"auto"``: a set that changes kind as it grows.

An adapting set is one of the fixed kinds at any time (``s.kind``); these
tests check which kind it takes for each shape of ids, that a change of
kind keeps every member where it was (a store's rows with them), that it
invalidates checkpoints as growth does, that a jit twin pins the kind, and
that the memory stays bounded per member. The state machines of
``test_sparse_set_state.py`` and ``tests/stores/test_store_state.py`` run
on it too, with steps that force changes of kind.
"""

import pickle

import numpy as np
import pytest

from sparseset import ComponentStore, SparseMap, SparseSet
from sparseset.sets.index_kinds import (
    ADAPTIVE_BYTES_PER_MEMBER,
    adapted_kind,
    index_spec,
    kind_named,
)

RNG = np.random.default_rng(51)


def shape(name, members=20_000):
    """Ids of one of the benchmark's shapes (``asv_bench``'s index_kinds)."""
    if name == "dense":
        return RNG.choice(4 * members, members, replace=False)
    if name == "clustered":
        # Runs of 4096 (a page each) spread over [2**40, 2**40 + 2**36).
        starts = RNG.choice(2**24, -(-members // 4096), replace=False) * 4096
        return (starts[:, None] + np.arange(4096)).ravel()[:members] + 2**40
    top = {"scattered31": 2**31, "scattered40": 2**40, "scattered63": 2**63 - 1}
    return RNG.integers(0, top[name], members, dtype=np.int64)


WANT = {
    "dense": "flat",
    "clustered": "paged",
    "scattered31": "hash",
    "scattered40": "hash",
    "scattered63": "hash",
}


@pytest.mark.parametrize("name", list(WANT))
@pytest.mark.parametrize("build", ["add", "from_ids", "batches", "add_at"])
def test_each_shape_gets_its_kind_and_bounded_memory(name, build):
    # Long enough for a batch to be estimated (and the runs to fill pages).
    ids = shape(name, 100_000)
    if build == "from_ids":
        s = SparseSet.from_ids(ids)
    elif build == "add_at":
        s = SparseMap("i8")
        s.add_at(ids, 1)
    else:
        s = SparseSet()
        for part in np.array_split(ids, 1 if build == "add" else 7):
            s.add(part)
    distinct = np.unique(ids)
    assert len(s) == distinct.shape[0]
    if build != "batches" or name != "clustered":
        # Runs spread wide, added in batches too short to be estimated,
        # are taken as scattered.
        assert s.kind == WANT[name]
    # A map's values add 8 bytes each (16 with spare room).
    assert s.nbytes <= (64 if build != "add_at" else 80) * len(s)
    if build != "add_at":
        assert s.contains(distinct).all()
        assert not s.contains(distinct + 1).all()
        assert s.discard(distinct[::2]) == distinct[::2].shape[0]
        assert set(s.ids.tolist()) == set(distinct[1::2].tolist())


def test_it_starts_flat_and_changes_kind_as_ids_arrive():
    s = SparseSet()
    assert s.kind == "flat" and s._engine.index_name == "auto"
    assert s.add([5, 1, 5]) == 2 and s.kind == "flat"
    assert s.add(2**40) == 1 and s.kind == "hash"  # one scalar id
    assert s.ids.tolist() == [5, 1, 2**40]
    assert s.add(np.uint64(2**63 - 1)) == 1
    assert s.index([1, 2**63 - 1]).tolist() == [1, 3]
    assert 2**40 in s and 2**41 not in s and 2**64 not in s
    with pytest.raises(ValueError, match="2\\*\\*63"):
        s.add(2**63)
    with pytest.raises(ValueError, match=r"negative|-1"):
        s.add([3, -1])
    assert len(s) == 4


def test_a_change_of_kind_invalidates_checkpoints_as_growth_does():
    s = SparseSet.from_ids([1, 2, 3])
    token = s.checkpoint()
    s.discard(2)
    s.add(2**50)  # a new member: the token dies whatever the kind
    with pytest.raises(ValueError, match="not a live checkpoint"):
        s.rollback(token)
    token = s.checkpoint()
    s.discard([1, 2**50])
    s.rollback(token)
    assert sorted(s.ids.tolist()) == [1, 3, 2**50]


def test_a_failed_batch_changes_nothing_and_keeps_the_kind():
    s = SparseSet.from_ids(range(10))
    with pytest.raises(ValueError, match=r"negative|-4"):
        s.add([2**40, 7, -4])
    assert s.kind == "flat" and s.ids.tolist() == list(range(10))
    with pytest.raises(TypeError):
        s.add([2**40, 2.5])
    assert s.kind == "flat" and len(s) == 10


def test_a_jit_twin_pins_the_kind():
    s = SparseSet.from_ids([3, 4])
    twin = s.jit
    with pytest.raises(ValueError, match="jit twin"):
        s.add(2**40)
    assert s.add([9]) == 1 and twin.contains(9)
    h = SparseSet()
    h.add([2**45, 7])
    assert h.kind == "hash" and h.jit.contains(2**45)
    assert h.add(2**62) == 1 and h.jit.contains(2**62)
    # A copy has no twin: it adapts again.
    c = s.copy()
    c.add(2**40)
    assert c.kind == "hash" and sorted(c.ids.tolist()) == [3, 4, 9, 2**40]


def test_results_copies_and_pickles_adapt_too():
    a = SparseSet.from_ids([1, 2, 3])
    b = SparseSet.from_ids([3, 2**40])
    for result in (a | b, a.union([2**40]), a.copy(), pickle.loads(pickle.dumps(a))):
        assert result._engine.index_name == "auto"
    assert (a | b).kind == "hash" and sorted((a | b).ids.tolist()) == [1, 2, 3, 2**40]
    c = a.copy()
    c |= b
    assert c.kind == "hash" and len(c) == 4
    restored = pickle.loads(pickle.dumps(b))
    assert restored.kind == "hash" and restored.ids.tolist() == [3, 2**40]


def test_a_store_keeps_its_rows_through_a_change_of_kind():
    store = ComponentStore({"hp": "i4", "pos": ("f8", 2)})
    store.add([4, 2], hp=[40, 20], pos=[[4.0, 4.5], [2.0, 2.5]])
    assert store.kind == "flat"
    store.add([2**40, 4], hp=[7, 41])
    assert store.kind == "hash"
    assert store.get(4)["hp"] == 41 and store.get(2)["pos"].tolist() == [2.0, 2.5]
    assert store.get(2**40)["hp"] == 7
    restored = pickle.loads(pickle.dumps(store))
    assert restored.kind == "hash" and restored.get(2**40)["hp"] == 7
    assert restored._engine.index_name == "auto"


def test_a_counter_of_repeated_ids_sizes_for_the_distinct_ones():
    keys = RNG.integers(0, 2**31, 10_000)
    events = keys[RNG.integers(0, keys.shape[0], 200_000)]
    counts = SparseMap("i8")
    counts.add_at(events, 1)
    s = SparseSet()
    s.add(events)
    distinct = np.unique(events).shape[0]
    assert len(s) == len(counts) == distinct
    assert s.kind == counts.kind == "hash"
    assert s.nbytes <= 64 * distinct
    assert counts[int(events[0])] == int((events == events[0]).sum())


def test_repeats_below_flat_range_do_not_keep_a_large_flat_index():
    # 100k occurrences of 10 ids near 10**6: flat's estimate of members
    # from the batch's length would be far too high; the add ends smaller.
    events = np.repeat(np.arange(10**6, 10**6 + 10), 10_000)
    s = SparseSet()
    s.add(events)
    assert len(s) == 10 and s.nbytes <= 300_000


def test_adapted_kind_and_the_names():
    assert adapted_kind(0, 100, 1).name == "flat"
    assert adapted_kind(0, 12 * 1000 - 1, 1000).name == "flat"
    assert adapted_kind(2**40, 2**40 + 11_000, 1000).name == "paged"
    assert adapted_kind(0, 2**40, 1000).name == "hash"
    assert adapted_kind(2**48, 2**48 + 5, 1000).name == "hash"
    assert index_spec("auto")[1] and not index_spec("flat")[1]
    with pytest.raises(ValueError, match="'auto', 'flat', 'paged', 'hash'"):
        SparseSet(index="tree")
    with pytest.raises(ValueError, match=r"one of 'flat', 'paged', 'hash'$"):
        kind_named("auto")  # where a fixed kind is needed (a World's)
    assert ADAPTIVE_BYTES_PER_MEMBER <= 48


def test_threads_see_every_member_through_changes_of_kind():
    import threading

    s = SparseSet()
    fixed = np.arange(100)
    s.add(fixed)
    done = threading.Event()
    wrong = []

    def reader():
        while not done.is_set():
            if not (0 in s and 99 in s and s.contains(fixed).all()):
                wrong.append(s.kind)

    def writer(seed):
        rng = np.random.default_rng(seed)
        for k in range(24):  # wider and wider: flat, then paged or hash
            s.add(rng.integers(100, 2 ** (16 + k), 300))

    readers = [threading.Thread(target=reader) for _ in range(2)]
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    for t in readers:
        t.join()
    assert not wrong and s.kind == "hash"
    ids = s.ids
    assert np.unique(ids).shape[0] == ids.shape[0] == len(s)
    assert s.index(ids).tolist() == list(range(len(s)))


def test_algebra_between_sets_that_adapt_differently():
    # A paged or flat left operand meeting ids its kind must change for:
    # the result changes kind mid-operation, with rows for every member.
    rng = np.random.default_rng(7)
    for trial in range(240):
        base = [0, 2**40, 2**31 - 100][trial % 3]
        offsets = rng.integers(0, 200, rng.integers(1, 60))
        s = SparseSet()
        s.add(base + offsets)
        model = set((base + offsets).tolist())
        if trial % 2:
            s.checkpoint()
        gone = s.ids[:: rng.integers(1, 4)].copy()
        s.discard(gone)
        model -= set(gone.tolist())
        values = rng.integers(0, 220, rng.integers(0, 12)).tolist()
        b = SparseSet.from_ids(values)
        other = set(values)
        assert set((s | b).ids.tolist()) == model | other
        assert set((s & b).ids.tolist()) == model & other
        assert set((s - b).ids.tolist()) == model - other
        assert set((s ^ b).ids.tolist()) == model ^ other
        assert set((b | s).ids.tolist()) == model | other
        copy = s.copy()
        assert copy.kind == s.kind and set(copy.ids.tolist()) == model

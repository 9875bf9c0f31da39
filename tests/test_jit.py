"""jit twins: per-element access from @njit code, sharing the container's state.

Each test drives a twin from compiled code and checks the Python container
sees the result (and the other way round), including growth, removals while
iterating, adds while iterating, and checkpoints.
"""

import numpy as np
import pytest
from numba import njit

from sparseset import ComponentStore, SparseMap, SparseSet


@njit
def add_all(js, ids):
    new = 0
    for i in ids:
        new += js.add(i)
    return new


@njit
def remove_all(js, ids):
    gone = 0
    for i in ids:
        gone += js.remove(i)
    return gone


@njit
def query(js, ids):
    found = np.empty(ids.shape[0], np.bool_)
    where = np.empty(ids.shape[0], np.int64)
    for k in range(ids.shape[0]):
        found[k] = js.contains(ids[k])
        where[k] = js.index(ids[k])
    return found, where


@njit
def reap_expired(js):
    """The buff loop: remove expired rows while walking, without skipping."""
    k = 0
    while k < js.size:
        if js.ttl[k] <= 0:
            js.remove(js.ids[k])  # the last row now sits at k: look again
        else:
            js.ttl[k] -= 1
            k += 1


@njit
def work_queue(js, limit):
    """Walk the members while adding: new members are visited too."""
    visited = 0
    k = 0
    while k < js.size:
        i = js.ids[k]
        visited += 1
        if 2 * i + 1 < limit:
            js.add(2 * i + 1)
        if 2 * i + 2 < limit:
            js.add(2 * i + 2)
        k += 1
    return visited


@njit
def integrate(js, dt):
    pos, vel = js.pos, js.vel
    for k in range(js.size):
        pos[k] += vel[k] * dt


def test_set_twin_shares_state_both_ways():
    s = SparseSet.from_ids([5, 1, 9])
    js = s.jit
    assert js.size == 3 and js.ids.tolist() == [5, 1, 9]
    assert add_all(js, np.array([1, 2, 3])) == 2
    assert s.ids.tolist() == [5, 1, 9, 2, 3]
    assert remove_all(js, np.array([5, 7])) == 1
    assert s.ids.tolist() == [3, 1, 9, 2]  # swap-and-pop
    s.add([40])
    s.discard(1)
    found, where = query(js, np.array([40, 1, 2]))
    assert found.tolist() == [True, False, True]
    assert where.tolist() == [s.index(40), -1, s.index(2)]
    assert s.jit is js


def test_twin_add_grows_inside_njit_and_python_sees_it():
    s = SparseSet(capacity=4)
    js = s.jit
    ids = np.arange(0, 50_000, 7)
    assert add_all(js, ids) == ids.size
    assert s.capacity > 4 and len(s) == ids.size
    assert np.array_equal(s.ids, ids)
    assert s.contains(ids).all()


def test_twin_add_rejects_ids_outside_the_range():
    js = SparseSet().jit
    with pytest.raises(ValueError):
        add_all(js, np.array([-1]))
    with pytest.raises(ValueError):
        add_all(js, np.array([2**31]))


def test_store_twin_columns_are_the_store_rows():
    store = ComponentStore({"pos": ("f8", 2), "vel": ("f8", 2)})
    store.add([3, 4], pos=[[0, 0], [1, 1]], vel=[[1, 2], [3, 4]])
    js = store.jit
    integrate(js, 0.5)
    assert store["pos"].tolist() == [[0.5, 1.0], [2.5, 3.0]]
    assert np.shares_memory(js.pos, store["pos"])
    store["vel"] *= 0
    integrate(js, 1.0)
    assert store["pos"].tolist() == [[0.5, 1.0], [2.5, 3.0]]


def test_store_twin_add_zero_fills_and_grows_every_column():
    store = ComponentStore({"pos": ("f8", 3), "hp": "i4"}, capacity=2)
    store.add([1], pos=7.0, hp=5)
    js = store.jit
    assert add_all(js, np.arange(2, 300)) == 298
    assert len(store) == 299 and store.capacity >= 300
    assert store.get(1)["hp"] == 5 and store.get(1)["pos"].tolist() == [7.0] * 3
    rows = store.get(np.arange(2, 300))
    assert not rows["pos"].any() and not rows["hp"].any()


def test_removal_loop_through_the_twin_moves_rows():
    store = ComponentStore({"ttl": "i4", "tag": "i8"})
    ids = np.arange(20)
    store.add(ids, ttl=ids % 3, tag=ids * 10)
    reap_expired(store.jit)
    survivors = store.ids
    assert sorted(survivors.tolist()) == [i for i in range(20) if i % 3]
    assert np.array_equal(store["tag"], survivors * 10)  # rows followed ids
    assert np.array_equal(store["ttl"], survivors % 3 - 1)


def test_adding_while_walking_visits_new_members():
    s = SparseSet()
    s.add(0)
    visited = work_queue(s.jit, 100)
    assert visited == 100 and sorted(s) == list(range(100))


def test_twin_removals_roll_back_and_twin_adds_invalidate():
    s = SparseSet.from_ids(range(10))
    js = s.jit
    token = s.checkpoint()
    assert remove_all(js, np.array([3, 4, 5])) == 3
    s.rollback(token)
    assert sorted(s) == list(range(10))
    token = s.checkpoint()
    add_all(js, np.array([99]))
    with pytest.raises(ValueError):
        s.rollback(token)


def test_sparse_map_twin():
    m = SparseMap("f8")
    m[[1, 2]] = [0.5, 1.5]
    js = m.jit
    assert add_all(js, np.array([3])) == 1
    assert m[3] == 0.0 and len(m) == 3
    js.value[0] = 9.0
    assert m[1] == 9.0


def test_batch_methods_work_after_the_twin_exists():
    s = SparseSet.from_ids([1, 2, 3])
    s.jit  # noqa: B018 - building the twin moves the state into it
    assert s.add([4, 1]) == 1
    assert s.discard([2]) == 1
    assert sorted(s & SparseSet.from_ids([1, 4, 8])) == [1, 4]
    s.sort()
    assert s.ids.tolist() == [1, 3, 4]
    s.clear()
    assert len(s) == 0 and s.jit.size == 0

"""jit twins: per-element access from @njit code, sharing the container's state.

Each test drives a twin from compiled code and checks the Python container
sees the result (and the other way round), including growth, removals while
iterating, adds while iterating, and checkpoints.
"""

import os
import re
import subprocess
import sys

import numba
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from numba import njit
from numba.core.errors import TypingError

from sparseset import ComponentStore, SetArray, SparseMap, SparseSet, World
from sparseset.jit import SetArrayState, Twin, TwinType


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
    with pytest.raises(ValueError, match="outside the index's range"):
        add_all(js, np.array([-1]))
    with pytest.raises(ValueError, match="outside the index's range"):
        add_all(js, np.array([2**31]))
    assert js.size == 0


@njit
def add_each_catching(js, ids):
    """Add each id, counting the ones add refuses."""
    refused = 0
    for i in ids:
        try:
            js.add(i)
        except Exception:
            refused += 1
    return refused


def test_twin_add_errors_are_caught_inside_compiled_code():
    # add's rare path reports its error as a raise in the caller: a
    # try block there catches it, and the loop goes on.
    s = SparseSet(capacity=4)
    assert add_each_catching(s.jit, np.array([7, -1, 2**40, 9, 7])) == 2
    assert s.ids.tolist() == [7, 9]
    w = World()
    w.register("hp", "i4")
    handles = w.create(3)
    w.destroy(handles[:1])
    assert add_each_catching(w["hp"].jit, handles) == 1
    assert len(w["hp"]) == 2


def _loop_over_a_twin(js, ids):
    total = 0
    for k in range(ids.shape[0]):
        i = ids[k]
        total += js.add(i) + js.contains(i) + js.index(i) + js.remove(i)
        total += js.add(i) + js.size
    return total


def _loop_over_views(js, ids):
    total = 0.0
    for k in range(ids.shape[0]):
        total += js.ids[k] + js.hp[k] + js["hp"][k]
    return total


def _reference_counts(function, *args):
    """The NRT increments and decrements in ``function``'s compiled body."""
    # Uncached (numba shows no IR of cached code); a recursive function
    # comes compiled, as it calls itself by its global name.
    compiled = function if hasattr(function, "py_func") else njit(function)
    compiled(*args)
    llvm = compiled.inspect_llvm(compiled.signatures[0])
    name = getattr(function, "py_func", function).__name__
    body = next(
        block
        for block in llvm.split("\ndefine ")[1:]
        if re.search(rf"@_ZN\w*{name}", block.split("\n")[0])
    )
    body = body[: body.index("\n}\n")]
    return body.count("@NRT_incref("), body.count("@NRT_decref(")


@pytest.mark.skipif(
    numba.config.BOUNDSCHECK,
    reason="bounds checks put raise paths everywhere, which keep reference counts",
)
def test_twin_loops_count_references_only_around_the_loop():
    """In a loop of per-element methods and views, a twin costs what plain
    arrays do: at most the arguments' references, once (two here), none
    per iteration (numba pairs and removes the rest)."""
    store = ComponentStore({"hp": "f8", "pos": ("f8", 2)}, capacity=64)
    store.add(np.arange(50), hp=1.0)
    w = World()
    w.register("hp", "i4")
    w.register("mp", "i4", track=True)
    handles = w.create(20)
    ids = np.arange(40, 60)
    twins = [
        (SparseSet().jit, ids),
        (store.jit, ids),
        (w["hp"].jit, handles),
        (w["mp"].jit, handles),
    ]
    for twin, keys in twins:
        increfs, decrefs = _reference_counts(_loop_over_a_twin, twin, keys)
        assert increfs == decrefs <= 2
    increfs, decrefs = _reference_counts(_loop_over_views, store.jit, ids[:10])
    assert increfs == decrefs <= 2
    sets = SetArray(4, 100).jit
    increfs, decrefs = _reference_counts(_loop_over_a_set_array, sets, ids)
    assert increfs == decrefs <= 2


@njit
def _search_a_set_array(sets, n, row):
    """A backtracking search's shape (the queens example's): per node a
    checkpoint and a view of one set, per branch removals, a recursive
    call and a rollback."""
    if row == n:
        return 1
    total = 0
    free = sets.values(row)
    token = sets.checkpoint()
    for j in range(free.shape[0]):
        for r in range(row + 1, n):
            sets.remove(r, free[j])
        if sets.size(n - 1) > 0:
            total += _search_a_set_array(sets, n, row + 1)
        sets.rollback(token)
    return total


@pytest.mark.skipif(
    numba.config.BOUNDSCHECK,
    reason="bounds checks put raise paths everywhere, which keep reference counts",
)
def test_set_array_search_counts_references_only_per_node():
    """checkpoint and rollback are inlined without reference counting, as
    remove is: a recursive search takes the state's reference and the
    view's once per node, none per branch: three increments and four
    decrements written in the code, all outside the loop of branches.
    Calls to checkpoint and rollback would keep a pair around each (six
    and seven)."""
    increfs, decrefs = _reference_counts(_search_a_set_array, SetArray(3, 3).jit, 3, 0)
    assert increfs <= 3 and decrefs <= 4


def _loop_of_set_batch_methods(js, ids, batch):
    """discard, keep_only, pop and rollback on a set twin, per iteration
    (the set holds ``batch``, so pop has a member to take)."""
    total = 0
    for k in range(ids.shape[0]):
        token = js.checkpoint()
        total += js.discard(ids[k : k + 1]) + js.keep_only(batch) + js.pop()
        js.rollback(token)
    return total


def _loop_over_world_rows(js, handles):
    """handle and touch of every row of a World store's twin."""
    total = 0
    for k in range(handles.shape[0]):
        h = js.handle(k)
        total += h + js.touch(h) + js.touch(handles[k])
    return total


@pytest.mark.skipif(
    numba.config.BOUNDSCHECK,
    reason="bounds checks put raise paths everywhere, which keep reference counts",
)
def test_set_batch_methods_count_references_only_around_the_loop():
    """pop, discard, keep_only and a set's rollback are inlined without
    reference counting, as add is: at most the arguments' references,
    once, in the caller (calls would keep a pair around each on every
    iteration)."""
    for kind in ("flat", "paged", "hash"):
        s = SparseSet.from_ids(range(10, 30), index=kind)
        batch = np.arange(10, 30)
        increfs, decrefs = _reference_counts(
            _loop_of_set_batch_methods, s.jit, np.arange(5, 15), batch
        )
        assert increfs == decrefs <= 3
        assert sorted(s) == batch.tolist()  # every iteration rolled back


@pytest.mark.skipif(
    numba.config.BOUNDSCHECK,
    reason="bounds checks put raise paths everywhere, which keep reference counts",
)
def test_world_rows_count_references_only_around_the_loop():
    """A World store twin's handle and touch (tracked or not) are inlined
    without reference counting: the arguments' references once, none
    per row."""
    w = World()
    w.register("hp", "i4")
    w.register("mp", "i4", track=True)
    handles = w.create(20)
    w.add("hp", handles)
    w.add("mp", handles)
    for name in ("hp", "mp"):
        twin = w[name].jit
        increfs, decrefs = _reference_counts(_loop_over_world_rows, twin, handles)
        assert increfs == decrefs <= 2


@pytest.mark.skipif(
    not numba.config.BOUNDSCHECK, reason="the reference-count tests ran in this process"
)
def test_reference_counts_hold_in_code_compiled_without_bounds_checks(tmp_path):
    """Under ``NUMBA_BOUNDSCHECK=1``, as CI runs the suite, the
    reference-count tests above skip (every access there has a raise
    path). They run here instead, in a fresh process compiled without
    bounds checks, so that every run of the suite proves them once."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_BOUNDSCHECK"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    # The four tests by name ("references"), none of the suite's options.
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-o", "addopts=", "-k", "references", __file__]
    run = subprocess.run(
        command,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert re.search(r"\b4 passed\b", run.stdout), run.stdout[-2000:]


@njit
def _catching(js, op, ids):
    """One of pop (0), discard (1), keep_only (2), a dead rollback (3),
    its error caught inside compiled code: -1 if it raised."""
    token = js.checkpoint()
    js.add(10**6)  # a new member: the token dies
    js.remove(10**6)
    try:
        if op == 0:
            return js.pop()
        if op == 1:
            return js.discard(ids)
        if op == 2:
            return js.keep_only(ids)
        js.rollback(token)
        return 0
    except Exception:
        return -1


@pytest.mark.parametrize("kind", ["flat", "paged", "hash", "auto"])
def test_set_twin_batch_methods_refuse_bad_input_and_change_nothing(kind):
    s = SparseSet.from_ids([4, 7, 9], index=kind)
    js = s.jit
    bad = np.array([7, -1])
    with pytest.raises(ValueError, match="non-negative"):
        twin_discard(js, bad)
    with pytest.raises(ValueError, match="non-negative"):
        twin_keep_only(js, bad)
    token = twin_checkpoint(js)
    add_all(js, np.array([5]))
    remove_all(js, np.array([5]))
    with pytest.raises(ValueError, match="not a live checkpoint"):
        twin_rollback(js, token)
    assert s.ids.tolist() == [4, 7, 9]
    for op in (1, 2, 3):
        assert _catching(js, op, bad) == -1
    assert s.ids.tolist() == [4, 7, 9]
    # pop answers the last member, of the set's own dtype.
    assert twin_pop(js) == 9 and s.ids.tolist() == [4, 7]
    # The signature for this twin's type (the default's twin shares flat's).
    (signature,) = [
        sig for sig in twin_pop.nopython_signatures if sig.args[0] == numba.typeof(js)
    ]
    assert signature.return_type == numba.from_dtype(js.ids.dtype)
    assert twin_pop(js) == 7 and twin_pop(js) == 4
    with pytest.raises(KeyError, match="empty"):
        twin_pop(js)
    assert _catching(js, 0, bad) == -1 and len(s) == 0
    # Good input through the same catching code.
    s.add([1, 2, 3])
    assert _catching(js, 1, np.array([2, 8])) == 1 and sorted(s) == [1, 3]
    assert _catching(js, 2, np.array([3])) == 1 and s.ids.tolist() == [3]
    assert _catching(js, 0, bad) == 3 and len(s) == 0


def _loop_over_a_set_array(sets, values):
    total = 0
    for k in range(values.shape[0]):
        v = values[k]
        total += sets.contains(1, v) + sets.remove(2, v) + sets.size(3)
    return total


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


@njit
def read_views(js, rounds):
    """Every view a twin hands out, taken again and again."""
    total = 0.0
    for _ in range(rounds):
        total += js.ids.shape[0] + js.hp[0] + js["hp"][0]
    return total


@njit
def views_of(js):
    return js.ids, js.hp, js["hp"]


def test_twin_views_neither_leak_nor_dangle():
    import gc
    import weakref

    from sparseset.jit.types import all_fields

    def store_and_arrays():
        store = ComponentStore({"hp": "f8"})
        store.add([4, 8, 15], hp=[1.0, 2.0, 3.0])
        fields = all_fields(store.jit)
        dense, hp = fields[1], fields[-1]
        return store, weakref.ref(dense), weakref.ref(hp)

    # Read many times in a loop, the views release what they took: once
    # the store is gone, its arrays are freed.
    store, dense, hp = store_and_arrays()
    assert read_views(store.jit, 1000) == 1000 * (3 + 2.0)
    del store
    gc.collect()
    assert dense() is None and hp() is None

    # Returned to Python, they own their memory: it outlives the store,
    # and the store's growth (which replaces its arrays) changes nothing.
    store, dense, hp = store_and_arrays()
    ids, column, by_name = views_of(store.jit)
    add_all(store.jit, np.arange(100, 5000))
    del store
    gc.collect()
    assert dense() is not None and hp() is not None
    assert ids.tolist() == [4, 8, 15]
    assert column.tolist() == by_name.tolist() == [1.0, 2.0, 3.0]
    del ids, column, by_name
    gc.collect()
    assert dense() is None and hp() is None


@njit
def set_count(js, n):
    js.n = n


def test_twin_views_stay_within_their_arrays():
    # n is a field compiled code can assign: the views clamp it to the
    # arrays' rows rather than reach past them.
    store = ComponentStore({"hp": "f8"}, capacity=4)
    store.add([1, 2], hp=[5.0, 6.0])
    js = store.jit
    from sparseset.jit.types import all_fields

    rows = len(all_fields(js)[-1])
    set_count(js, rows + 10)
    assert views_of(js)[1].shape == (rows,)
    set_count(js, -3)
    assert [view.shape for view in views_of(js)] == [(0,)] * 3
    set_count(js, 2)
    assert views_of(js)[1].tolist() == [5.0, 6.0]


ODD_COLUMNS = {
    "name": "U6",
    "code": ("S3", 2),
    "born": "datetime64[ns]",
    "ttl": "timedelta64[s]",
    "flag": "?",
    "part": np.dtype([("a", "f8"), ("b", "i2", (2,))]),
}


def test_twin_add_zero_fills_text_datetime_and_record_columns():
    # numba assigns no 0 to such rows: the twin zeroes their bytes, and the
    # rows it adds (growing on the way) equal the rows the store adds.
    store = ComponentStore(ODD_COLUMNS, capacity=2)
    first = {
        "name": "ab",
        "code": [b"x", b"yz"],
        "born": np.datetime64("2026-01-02"),
        "ttl": np.timedelta64(5, "s"),
        "flag": True,
        "part": np.array((1.5, [2, 3]), ODD_COLUMNS["part"]),
    }
    store.add([1], **first)
    assert add_all(store.jit, np.arange(2, 40)) == 38
    reference = ComponentStore(ODD_COLUMNS)
    reference.add(np.arange(2, 40))
    assert store.capacity >= 40
    twin_rows, store_rows = store.get(np.arange(2, 40)), reference.get(np.arange(2, 40))
    for name in ODD_COLUMNS:
        assert twin_rows[name].tobytes() == store_rows[name].tobytes(), name
        dtype = store[name].dtype
        kept, given = store.get(1)[name], first[name]
        assert np.asarray(kept, dtype).tobytes() == np.asarray(given, dtype).tobytes()
    # Rows freed by removals keep their old bytes until a new member zeroes them.
    store.set(np.arange(2, 40), **first)
    store.discard(np.arange(2, 40))
    assert add_all(store.jit, np.arange(2, 40)) == 38
    twin_rows = store.get(np.arange(2, 40))
    for name in ODD_COLUMNS:
        assert twin_rows[name].tobytes() == store_rows[name].tobytes(), name


@pytest.mark.parametrize("order", [[3, 0, 7, 9, 4], [9, 8, 1]])
def test_twin_removals_move_text_datetime_record_and_vector_rows(order):
    # Rows numba copies only through a temporary array move as bytes: the
    # twin's removals leave the rows the store's own removals leave.
    schema = {**ODD_COLUMNS, "pos": ("f8", 3)}
    rng = np.random.default_rng(len(order))

    def filled():
        store = ComponentStore(schema)
        store.add(np.arange(10))
        for name in schema:
            column = store[name]
            raw = rng.integers(0, 256, column.nbytes, dtype=np.uint8)
            if column.dtype.kind in "U":  # text: valid code points only
                raw = rng.integers(97, 123, column.nbytes // 4, dtype=np.uint32)
                raw = raw.view(np.uint8)
            if column.dtype.kind == "b":  # bools: 0 or 1 only
                raw %= 2
            column.view(np.uint8).reshape(-1)[:] = raw
        return store

    twin_store = filled()
    reference = ComponentStore(schema)
    reference.add(np.arange(10))
    for name in schema:
        reference[name][...] = twin_store[name]
    assert remove_all(twin_store.jit, np.array(order)) == len(order)
    for i in order:
        reference.remove([i])
    assert twin_store.ids.tolist() == reference.ids.tolist()
    for name in schema:
        assert twin_store[name].tobytes() == reference[name].tobytes(), name


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


# -- backtracking inside @njit, against a model, on every index kind ---------


@njit
def twin_checkpoint(js):
    return js.checkpoint()


@njit
def twin_rollback(js, token):
    js.rollback(token)


@njit
def twin_discard(js, ids):
    return js.discard(ids)


@njit
def twin_keep_only(js, ids):
    return js.keep_only(ids)


@njit
def twin_pop(js):
    return js.pop()


class TwinMachine(RuleBasedStateMachine):
    """A set driven from Python and from @njit code in turn, checkpoints taken
    and rolled back on either side, against a model of members and tokens.

    Tokens are live until an add of a new member, a clear, or a rollback to
    an older token; rolling back to a live one must restore its members,
    to a dead one must raise ValueError, on whichever side.
    """

    kind = "flat"

    def __init__(self):
        super().__init__()
        self.s = SparseSet(capacity=8, index=self.kind)
        self.js = self.s.jit
        self.model: set[int] = set()
        self.tokens: list[tuple[object, set[int], bool]] = []  # token, members, live

    ids = st.lists(st.integers(0, 60), max_size=8)

    def _kill_tokens(self, keep_upto=None):
        self.tokens = [
            (t, m, live and keep_upto is not None and k <= keep_upto)
            for k, (t, m, live) in enumerate(self.tokens)
        ]

    @rule(values=ids, compiled=st.booleans())
    def add(self, values, compiled):
        new = set(values) - self.model
        if compiled:
            added = add_all(self.js, np.array(values, np.int64))
        else:
            added = self.s.add(values)
        assert added == len(new)
        self.model |= new
        if new:
            self._kill_tokens()

    @rule(value=st.integers(0, 60))
    def add_one(self, value):
        """A plain int from Python: the set calls its twin's compiled add."""
        new = value not in self.model
        assert self.s.add(value) == int(new)
        self.model.add(value)
        if new:
            self._kill_tokens()

    @rule(value=st.integers(0, 60), strict=st.booleans())
    def discard_one(self, value, strict):
        if strict and value not in self.model:
            with pytest.raises(KeyError, match=f"id = {value} is not a member"):
                self.s.remove(value)
            return
        gone = self.s.remove(value) if strict else self.s.discard(value)
        assert gone == int(value in self.model)
        self.model.discard(value)

    @rule(values=ids, compiled=st.booleans())
    def discard(self, values, compiled):
        arr = np.array(values, np.int64)
        gone = twin_discard(self.js, arr) if compiled else self.s.discard(arr)
        assert gone == len(self.model & set(values))
        self.model -= set(values)

    @rule(values=ids, compiled=st.booleans())
    def keep_only(self, values, compiled):
        arr = np.array(values, np.int64)
        gone = twin_keep_only(self.js, arr) if compiled else self.s.keep_only(arr)
        assert gone == len(self.model - set(values))
        self.model &= set(values)

    @precondition(lambda self: self.model)
    @rule(compiled=st.booleans())
    def pop(self, compiled):
        x = twin_pop(self.js) if compiled else self.s.pop()
        assert x in self.model
        self.model.remove(x)

    @rule(compiled=st.booleans())
    def checkpoint(self, compiled):
        token = twin_checkpoint(self.js) if compiled else self.s.checkpoint()
        self.tokens.append((token, set(self.model), True))

    @precondition(lambda self: self.tokens)
    @rule(data=st.data(), compiled=st.booleans())
    def rollback(self, data, compiled):
        k = data.draw(st.integers(0, len(self.tokens) - 1))
        token, members, live = self.tokens[k]
        roll = twin_rollback if compiled else type(self.s).rollback
        if live:
            roll(self.js if compiled else self.s, token)
            self.model = set(members)
            self._kill_tokens(keep_upto=k)
        else:
            with pytest.raises(ValueError):
                roll(self.js if compiled else self.s, token)

    @rule()
    def clear(self):
        self.s.clear()
        self.model.clear()
        self._kill_tokens()

    @rule()
    def sort(self):
        self.s.sort()
        self._kill_tokens()

    @rule(capacity=st.sampled_from([0, 8, 61, 200]))
    def new_twin(self, capacity):
        """The members in a new set and twin: on a flat index, a member
        bitmap valid again, which only the twin's adds keep in step."""
        order = self.s.ids.tolist()
        self.s = SparseSet(capacity=capacity, index=self.kind)
        self.s.add(order)
        self.js = self.s.jit
        self._kill_tokens()
        if self.kind == "flat":
            assert (self.js.bits_n, self.js.bits_epoch) == (self.js.n, self.js.epoch)

    @invariant()
    def matches_the_model(self):
        ids = self.s.ids
        assert len(self.s) == self.js.size == len(self.model)
        assert set(ids.tolist()) == self.model
        assert np.array_equal(self.js.ids, ids)
        if len(ids):
            assert np.array_equal(self.s.index(ids), np.arange(len(ids)))
        found, _ = query(self.js, np.arange(62))
        assert found.tolist() == [i in self.model for i in range(62)]
        assert [i in self.s for i in range(62)] == found.tolist()
        assert [self.s.contains(i) for i in (0, 30, 61)] == found[[0, 30, 61]].tolist()


@pytest.mark.parametrize("kind", ["flat", "paged", "hash", "auto"])
def test_twin_state_machine(kind):
    machine = type(f"TwinMachine_{kind}", (TwinMachine,), {"kind": kind})
    run_state_machine_as_test(machine)


def test_a_flat_set_twin_keeps_its_member_bitmap_in_step_with_its_adds():
    s = SparseSet(capacity=100)
    s.add([3, 5])
    before = s.nbytes
    js = s.jit
    assert s.nbytes == before + js.member_bits.nbytes == before + 2 * 8

    def current():
        return (js.bits_n, js.bits_epoch) == (js.n, js.epoch)

    def bitmap_members():
        bits = np.unpackbits(js.member_bits.view(np.uint8), bitorder="little")
        return set(np.flatnonzero(bits).tolist())

    assert current() and bitmap_members() == {3, 5}
    assert add_all(js, np.array([7, 3, 150, 7])) == 2  # 150 grows the index
    assert current() and bitmap_members() == {3, 5, 7, 150} == set(s)
    assert js.member_bits.shape[0] * 64 >= s.capacity > 150
    found, _ = query(js, np.arange(160))
    assert set(np.flatnonzero(found).tolist()) == {3, 5, 7, 150}
    assert s.add(np.array([9, 3, 300])) == 2  # a batch from Python keeps it
    s.sort()  # and so does a sort
    assert current() and bitmap_members() == {3, 5, 7, 9, 150, 300} == set(s)
    s.discard(np.array([7, 8]))  # removals keep it, from Python
    assert remove_all(js, np.array([9, 10])) == 1  # and from the twin
    assert current() and bitmap_members() == {3, 5, 150, 300} == set(s)
    token = s.checkpoint()
    assert twin_discard(js, np.array([3, 150])) == 2
    twin_rollback(js, token)  # a rollback keeps it
    assert current() and bitmap_members() == {3, 5, 150, 300} == set(s)
    s.discard(3)
    s.rollback(token)  # from Python too
    assert current() and bitmap_members() == {3, 5, 150, 300} == set(s)
    assert s.pop() in {5, 150, 300, 3}  # pop keeps it too
    assert current() and bitmap_members() == set(s)
    js.epoch = js.epoch + 1  # a change it does not see leaves it stale
    assert not current()
    token = s.checkpoint()
    s.discard(5)
    s.rollback(token)  # and a rollback of a stale one, for good
    assert (js.bits_n, js.bits_epoch) == (-1, js.epoch)
    found, _ = query(js, np.arange(310))
    assert set(np.flatnonzero(found).tolist()) == set(s)
    assert add_all(js, np.array([7, 8])) == 2 and not current()
    s.clear()  # until a clear, which makes it current again, empty
    assert current() and bitmap_members() == set()
    assert add_all(js, np.array([4, 4, 6])) == 2
    assert current() and bitmap_members() == {4, 6} == set(s)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_rollback_to_a_checkpoint_older_than_the_twin_restores_its_bitmap(compiled):
    s = SparseSet.from_ids([1, 2, 3])
    token = s.checkpoint()
    s.discard(1)
    js = s.jit
    assert js.current_bits() is not None
    if compiled:
        twin_rollback(js, token)
    else:
        s.rollback(token)
    s.discard(2)  # the n and epoch the bitmap had at hand-out, other members
    assert js.current_bits().tolist() == [2 | 8]
    found, _ = query(js, np.array([1, 2, 3]))
    assert found.tolist() == [True, False, True]
    assert not hasattr(SparseSet(index="hash").jit, "member_bits")


@pytest.mark.parametrize("compiled", [False, True])
def test_a_rollback_of_a_stale_bitmap_leaves_it_stale_until_a_clear(compiled):
    s = SparseSet(capacity=16)
    s.add([1, 2, 3, 4])
    js = s.jit
    token = s.checkpoint()
    assert remove_all(js, np.array([4])) == 1  # kept: tagged at n = 3
    # A removal it does not see (n lowered by hand, as a pop does): stale.
    js.n = js.n - 1
    assert js.current_bits() is None
    if compiled:
        twin_rollback(js, token)
    else:
        s.rollback(token)
    assert remove_all(js, np.array([1])) == 1  # n = 3 again, other members
    found, _ = query(js, np.arange(6))
    assert found.tolist() == [False, False, True, True, True, False]
    assert js.current_bits() is None
    s.clear()
    assert js.current_bits().tolist() == [0]


def test_every_shared_state_is_of_the_one_type():
    w = World()
    w.register("hp", "i4")
    states = [
        SparseSet().jit,
        ComponentStore({"pos": ("f8", 3)}).jit,
        w["hp"].jit,
        SetArray(2, 3).jit,
    ]
    assert {type(numba.typeof(state)) for state in states} == {TwinType}
    assert [type(state) for state in states] == [Twin] * 3 + [SetArrayState]


@njit
def contains_pair(js):
    return js.contains(1, 2)


@njit
def contains_one(sa):
    return sa.contains(1)


def test_a_shared_method_name_takes_its_kinds_arguments_only():
    with pytest.raises(TypingError):
        contains_pair(SparseSet().jit)
    with pytest.raises(TypingError):
        contains_one(SetArray(2, 3).jit)


@pytest.mark.fresh_process
def test_a_twin_type_is_cached_across_processes(tmp_path):
    """A user's cached @njit function taking twins and a SetArray's state
    loads from the cache in a new process (jitclass twins recompiled it
    every time)."""
    script = tmp_path / "uses_twins.py"
    script.write_text(
        "import numpy as np\n"
        "from numba import njit\n"
        "from sparseset import ComponentStore, SetArray, SparseSet\n"
        "@njit(cache=True)\n"
        "def system(js, jst, sa):\n"
        "    js.add(3)\n"
        "    jst.add(4)\n"
        "    jst.pos[0, 0] += 1.0\n"
        "    sa.remove(0, 1)\n"
        "    return js.size + jst.size + sa.size(0)\n"
        "s = SparseSet()\n"
        "store = ComponentStore({'pos': ('f8', 3), 'hp': 'i4'})\n"
        "sa = SetArray(1, 3).jit\n"
        "print(system(s.jit, store.jit, sa), len(system.stats.cache_hits))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == ["4", "0"]  # compiled and saved
    assert runs[1] == ["4", "1"]  # loaded: one cache hit, nothing compiled


def test_every_twin_method_is_listed_so_no_column_hides_it():
    """A column named like a twin's method is reached as twin["name"]; the
    attribute stays the method only if METHOD_NAMES lists it."""
    import inspect
    import re

    from sparseset.jit import methods
    from sparseset.jit.types import METHOD_NAMES

    source = inspect.getsource(methods)
    overloaded = set(re.findall(r'@overload_method\(TwinType, "(\w+)"\)', source))
    assert overloaded and overloaded <= METHOD_NAMES

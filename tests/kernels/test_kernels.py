"""Kernels against the naive references in ``tests/reference.py``.

Every test builds a valid set ``(sparse, dense, n)`` with garbage where the
data structure allows it (``np.empty``, zeros, random, or adversarial
garbage that points lookups of non-members at real members), runs the kernel
and the reference on copies of the same input, and compares what the kernel
promises: return values, ``dense[:n]``, the ``sparse`` back-pointers of every
member (and of removed ids just past n), and membership over the whole
``[0, capacity)`` range. Each kernel also gets guard zones after its output
arrays, to catch writes past the lengths it was promised.
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import reference
from sparseset import kernels
from sparseset.kernels.index import kinds
from sparseset.sets.ids import KERNEL_DTYPES
from sparseset.sets.index_kinds import KINDS

# The id arrays the containers hand the kernels (sets.ids.kernel_ids): int64,
# int32 or uint64, C-contiguous, writeable or not. Every other dtype and
# layout is converted before a kernel sees it, and tested where it is, in
# the containers' tests; each one here would compile every kernel again.
INT_DTYPES = [dtype.type for dtype in KERNEL_DTYPES]
DTYPE_IDS = [dtype.name for dtype in KERNEL_DTYPES]
LAYOUTS = ["contiguous", "readonly"]
GARBAGE = ["empty", "zeros", "random", "adversarial"]
HUGE = [2**31 - 1, 2**31, 2**32, 2**40, 2**63 - 1, 2**63, 2**64 - 1]
GUARD = 8
SPARSE_SENTINEL = np.uint32(0xDEADBEEF)
DENSE_SENTINEL = np.int32(-0x21524111)


# --------------------------------------------------------------------------
# building inputs
# --------------------------------------------------------------------------


@dataclass
class State:
    sparse: np.ndarray
    dense: np.ndarray
    n: int
    removed: int  # ids just past n with sparse pointing at them

    @property
    def capacity(self):
        return self.sparse.shape[0]

    def members(self):
        return self.dense[: self.n].tolist()

    def copy(self):
        return State(self.sparse.copy(), self.dense.copy(), self.n, self.removed)


@st.composite
def states(draw, min_capacity=0, max_capacity=48):
    capacity = draw(st.integers(min_capacity, max_capacity))
    order = draw(st.permutations(range(capacity)))
    n = draw(st.integers(0, capacity))
    removed = draw(st.integers(0, capacity - n))
    garbage = draw(st.sampled_from(GARBAGE))
    seed = draw(st.integers(0, 2**32 - 1))
    sparse, dense, n = reference.build(
        order[:n], order[n : n + removed], capacity, garbage, seed
    )
    return State(sparse, dense, n, removed)


def fitting_dtype(values, dtype):
    for candidate in (dtype, np.int64, np.uint64):
        info = np.iinfo(candidate)
        if all(info.min <= v <= info.max for v in values):
            return candidate
    raise AssertionError(values)


def make_array(values, dtype, layout):
    """A 1-D integer array holding ``values`` with the requested layout."""
    if any(v < 0 for v in values):
        values = [v for v in values if v < 2**63]
    dtype = fitting_dtype(values, dtype)
    if layout == "strided":
        base = np.zeros(2 * len(values), dtype=dtype)
        base[::2] = values
        return base[::2]
    if layout == "reversed":
        return np.array(values[::-1], dtype=dtype)[::-1]
    arr = np.array(values, dtype=dtype)
    if layout == "readonly":
        arr.flags.writeable = False
    return arr


def id_arrays(
    capacity, negatives=True, huge=True, max_size=24, dtypes=INT_DTYPES, layouts=LAYOUTS
):
    parts = [st.integers(0, capacity + 3)] * 4
    if negatives:
        parts.append(st.integers(-5, -1))
        parts.append(st.just(-(2**63)))
    if huge:
        parts.append(st.sampled_from(HUGE))
    return st.builds(
        make_array,
        st.lists(st.one_of(parts), max_size=max_size),
        st.sampled_from(dtypes),
        st.sampled_from(layouts),
    )


def distinct_ids(capacity, max_size=24):
    """Distinct ids below ``capacity`` in random order, as an int array."""
    return st.builds(
        make_array,
        st.lists(st.integers(0, max(capacity - 1, 0)), unique=True, max_size=max_size)
        if capacity
        else st.just([]),
        st.sampled_from(INT_DTYPES),
        st.sampled_from(LAYOUTS),
    )


def guarded(arr, length=None):
    """A copy of ``arr[:length]`` followed by a sentinel zone; returns both."""
    length = arr.shape[0] if length is None else length
    sentinel = SPARSE_SENTINEL if arr.dtype == np.uint32 else DENSE_SENTINEL
    big = np.full(length + GUARD, sentinel, dtype=arr.dtype)
    big[:length] = arr[:length]
    return big[:length], big


def assert_guard_intact(big, length):
    tail = big[length:]
    assert (tail == tail[0]).all() and tail.shape[0] == GUARD, "wrote past the end"
    assert tail[0] in (SPARSE_SENTINEL, DENSE_SENTINEL)


def assert_back_pointers(sparse, dense, upto):
    """``sparse[dense[k]] == k`` for every k < upto; no id twice."""
    ids = dense[:upto].astype(np.int64)
    assert len(set(ids.tolist())) == upto, "duplicate ids in dense"
    if upto:
        assert (ids >= 0).all() and (ids < sparse.shape[0]).all()
        np.testing.assert_array_equal(sparse[ids], np.arange(upto))


def ids_snapshot(ids):
    return ids.copy()


# --------------------------------------------------------------------------
# the reference builder itself
# --------------------------------------------------------------------------


@given(states())
def test_builder_makes_valid_states(state):
    assert_back_pointers(state.sparse, state.dense, state.n + state.removed)
    got = reference.membership(state.sparse, state.dense, state.n)
    want = np.zeros(state.capacity, dtype=bool)
    want[state.dense[: state.n].astype(np.int64)] = True
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------
# single-id kernels
# --------------------------------------------------------------------------


@given(states(), st.data())
def test_find(state, data):
    candidates = [*range(-3, state.capacity + 3), -(2**63), *HUGE]
    for k, x in enumerate(state.members()):
        assert kernels.find(state.sparse, state.dense, state.n, x) == k
    xs = data.draw(st.lists(st.sampled_from(candidates), max_size=10))
    for x in xs:
        want = reference.find(state.sparse, state.dense, state.n, x)
        if x < 2**63:  # numba cannot unbox a Python int past int64 as an argument
            assert kernels.find(state.sparse, state.dense, state.n, x) == want, x
        dtype = data.draw(st.sampled_from(INT_DTYPES))
        dtype = fitting_dtype([x], dtype)
        got = kernels.find(state.sparse, state.dense, state.n, dtype(x))
        assert got == want, (x, dtype)


@given(states(min_capacity=1), st.data())
def test_push(state, data):
    assume(state.n < state.capacity)
    non_members = sorted(set(range(state.capacity)) - set(state.members()))
    x = data.draw(st.sampled_from(non_members))
    k = state.copy()
    r = state.copy()
    assert kernels.push(k.sparse, k.dense, k.n, x) == reference.push(
        r.sparse, r.dense, r.n, x
    )
    np.testing.assert_array_equal(k.dense[: state.n + 1], r.dense[: state.n + 1])
    assert_back_pointers(k.sparse, k.dense, state.n + 1)


@given(states(min_capacity=1), st.data())
def test_swap_remove(state, data):
    assume(state.n > 0)
    p = data.draw(st.integers(0, state.n - 1))
    k = state.copy()
    r = state.copy()
    got = kernels.swap_remove(k.sparse, k.dense, k.n, p)
    assert got == reference.swap_remove(r.sparse, r.dense, r.n, p) == state.n - 1
    np.testing.assert_array_equal(k.dense[: state.n], r.dense[: state.n])
    assert_back_pointers(k.sparse, k.dense, state.n)


# --------------------------------------------------------------------------
# batch kernels
# --------------------------------------------------------------------------


@given(states(), st.data())
def test_add(state, data):
    ids = data.draw(id_arrays(state.capacity))
    before = ids_snapshot(ids)
    minimal = data.draw(st.booleans())
    length = min(state.capacity, state.n + ids.shape[0]) if minimal else state.capacity
    length = max(length, state.n)
    sparse, sparse_big = guarded(state.sparse)
    dense, dense_big = guarded(state.dense, length)
    r = state.copy()

    start = data.draw(st.integers(0, ids.shape[0]))
    new_n, stop = kernels.upsert(
        sparse, dense, state.n, ids, kernels.NO_POSITIONS, start, *kernels.UPSERT_TUNING
    )
    want_n, want_stop = reference.add(r.sparse, r.dense, r.n, ids, start)

    assert (int(new_n), int(stop)) == (want_n, want_stop)
    assert_guard_intact(sparse_big, state.capacity)
    assert_guard_intact(dense_big, length)
    np.testing.assert_array_equal(ids, before)
    # the members before the batch are untouched, even when it stopped
    np.testing.assert_array_equal(dense[: state.n], state.dense[: state.n])
    np.testing.assert_array_equal(dense[:new_n], r.dense[:want_n])
    assert_back_pointers(sparse, dense, new_n)
    np.testing.assert_array_equal(
        reference.membership(sparse, dense, new_n),
        reference.membership(r.sparse, r.dense, want_n),
    )


@given(states(), st.data())
def test_discard(state, data):
    ids = data.draw(id_arrays(state.capacity, negatives=False))
    before = ids_snapshot(ids)
    sparse, sparse_big = guarded(state.sparse)
    dense, dense_big = guarded(state.dense)
    r = state.copy()

    new_n = kernels.discard(sparse, dense, state.n, ids, *kernels.DISCARD_TUNING)
    want_n = reference.discard(r.sparse, r.dense, r.n, ids)

    assert int(new_n) == want_n
    assert_guard_intact(sparse_big, state.capacity)
    assert_guard_intact(dense_big, state.capacity)
    np.testing.assert_array_equal(ids, before)
    # survivors and removed ids, each where sequential swap-and-pop puts it
    np.testing.assert_array_equal(dense[: state.n], r.dense[: state.n])
    # removed ids keep their back-pointers: restoring n undoes the removal
    assert_back_pointers(sparse, dense, state.n)
    np.testing.assert_array_equal(
        reference.membership(sparse, dense, new_n),
        reference.membership(r.sparse, r.dense, want_n),
    )


@given(states(), st.data())
def test_upsert_records_positions(state, data):
    ids = data.draw(id_arrays(state.capacity, negatives=False, huge=False))
    k = state.copy()
    r = state.copy()
    positions = np.full(ids.shape[0], -7, np.int64)
    want_positions = np.full(ids.shape[0], -7, np.int64)
    got = kernels.upsert(
        k.sparse, k.dense, k.n, ids, positions, 0, *kernels.UPSERT_TUNING
    )
    want = reference.upsert(r.sparse, r.dense, r.n, ids, want_positions)
    assert (int(got[0]), int(got[1])) == want
    np.testing.assert_array_equal(positions, want_positions)
    np.testing.assert_array_equal(k.dense[: want[0]], r.dense[: want[0]])
    assert_back_pointers(k.sparse, k.dense, want[0])
    # without positions to record it is a plain add
    k2 = state.copy()
    got2 = kernels.upsert(
        k2.sparse, k2.dense, k2.n, ids, np.empty(0, np.int64), 0, *kernels.UPSERT_TUNING
    )
    assert (int(got2[0]), int(got2[1])) == want


@given(states(), st.data())
def test_discard_rows_moves_rows_with_their_ids(state, data):
    # two id types only: each (ids, rows) type combination compiles anew
    ids = data.draw(
        id_arrays(
            state.capacity,
            negatives=False,
            dtypes=[np.int64, np.uint32],
            layouts=["contiguous"],
        )
    )
    length = state.capacity
    # row p of every column belongs to dense[p]; rows past n are junk
    words = np.zeros((length, 3), np.uint64)
    tags = np.full((length, 1), 255, np.uint8)
    for p, x in enumerate(state.members()):
        words[p] = [x, 1_000 + x, 2**40 + x]
        tags[p] = x % 200
    k = state.copy()
    r = state.copy()
    k_rows = (words.copy(), tags.copy())
    r_rows = (words.copy(), tags.copy())
    ahead = data.draw(st.sampled_from([0, 1, 4, 32]))  # any distance: only timing
    new_n = kernels.discard_rows(k.sparse, k.dense, k.n, ids, k_rows, ahead)
    want_n = reference.discard_rows(r.sparse, r.dense, r.n, ids, r_rows)
    assert int(new_n) == want_n
    np.testing.assert_array_equal(k.dense[: state.n], r.dense[: state.n])
    assert_back_pointers(k.sparse, k.dense, state.n)
    for got, want in zip(k_rows, r_rows, strict=True):
        np.testing.assert_array_equal(got[:want_n], want[:want_n])
    survivors = k.dense[:want_n].astype(np.uint64)
    np.testing.assert_array_equal(k_rows[0][:want_n, 0], survivors)
    np.testing.assert_array_equal(k_rows[0][:want_n, 2], survivors + np.uint64(2**40))
    np.testing.assert_array_equal(k_rows[1][:want_n, 0], survivors % 200)


@pytest.mark.parametrize("kernel", ["contains", "index"])
@given(state=states(), data=st.data())
def test_queries(kernel, state, data):
    ids = data.draw(id_arrays(state.capacity))
    before = ids_snapshot(ids)
    sparse0, dense0 = state.sparse.copy(), state.dense.copy()
    dtype = np.bool_ if kernel == "contains" else np.int64
    out = np.empty(ids.shape[0], dtype)
    want = np.empty(ids.shape[0], dtype)

    # One kernel answers both: the dtype of ``out`` picks the question.
    flag = kernels.find_all(
        state.sparse, state.dense, state.n, ids, out, *kernels.LOOKUP_TUNING
    )
    want_flag = getattr(reference, kernel)(
        state.sparse, state.dense, state.n, ids, want
    )

    assert bool(flag) is bool(want_flag)
    np.testing.assert_array_equal(out, want)
    # queries write nothing but ``out``
    np.testing.assert_array_equal(state.sparse, sparse0)
    np.testing.assert_array_equal(state.dense, dense0)
    np.testing.assert_array_equal(ids, before)


@given(states(), st.data())
def test_join_rows(state, data):
    keys = data.draw(id_arrays(state.capacity, negatives=False))
    sparse0, dense0 = state.sparse.copy(), state.dense.copy()
    rows, found = np.empty(len(keys), np.uint32), np.empty(len(keys), np.uint32)
    m = kernels.batch.join_rows(
        keys, state.sparse, state.dense, state.n, rows, found, *kernels.JOIN_TUNING
    )
    want_rows, want_found = np.empty_like(rows), np.empty_like(found)
    want = reference.join_rows(
        keys, state.sparse, state.dense, state.n, want_rows, want_found
    )
    assert int(m) == want
    np.testing.assert_array_equal(rows[:m], want_rows[:want])
    np.testing.assert_array_equal(found[:m], want_found[:want])
    np.testing.assert_array_equal(state.sparse, sparse0)
    np.testing.assert_array_equal(state.dense, dense0)


@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=40),
    st.integers(0, 1),
    st.integers(0, 9),
    st.integers(-3, 44),
    st.integers(-3, 44),
)
def test_rows_stamped_after_is_a_mask_of_the_stamps_or_the_range(
    rows, which, since, start, stop
):
    # Blocks past and short of the scan's width, a range inside, across,
    # before or past the rows: the rows stamped after since or in range.
    stamps = np.array(rows, np.uint16).reshape(len(rows), 2)
    out = np.full(len(rows), -1, np.int64)
    count = kernels.rows_stamped_after(stamps, which, since, start, stop, out)
    positions = np.arange(len(rows))
    want = (stamps[:, which] > since) | ((start <= positions) & (positions < stop))
    np.testing.assert_array_equal(out[:count], np.flatnonzero(want))


@given(st.data())
def test_take_gathers_like_fancy_indexing(data):
    values = data.draw(
        st.builds(
            make_array,
            st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=24),
            st.sampled_from(INT_DTYPES),
            st.sampled_from(LAYOUTS),
        )
    )
    at = make_array(
        data.draw(st.lists(st.integers(0, len(values) - 1), max_size=24)),
        data.draw(st.sampled_from([np.uint32, np.int64])),
        data.draw(st.sampled_from(LAYOUTS)),
    )
    before = values.copy()
    out = np.empty(len(at), values.dtype)
    kernels.take(values, at, out)
    np.testing.assert_array_equal(out, values[at.astype(np.intp)])
    np.testing.assert_array_equal(values, before)


@given(states(), st.data(), st.booleans())
def test_first_mismatch(state, data, want_member):
    if want_member and state.members() and data.draw(st.booleans()):
        # mostly members, so that the mismatch (if any) comes late
        ids = make_array(
            data.draw(st.lists(st.sampled_from(state.members()), max_size=20))
            + data.draw(st.lists(st.integers(0, state.capacity + 3), max_size=2)),
            data.draw(st.sampled_from(INT_DTYPES)),
            data.draw(st.sampled_from(LAYOUTS)),
        )
    else:
        ids = data.draw(id_arrays(state.capacity, negatives=False))
    sparse0, dense0 = state.sparse.copy(), state.dense.copy()
    got = kernels.first_mismatch(state.sparse, state.dense, state.n, ids, want_member)
    want = reference.first_mismatch(
        state.sparse, state.dense, state.n, ids, want_member
    )
    assert int(got) == want
    np.testing.assert_array_equal(state.sparse, sparse0)
    np.testing.assert_array_equal(state.dense, dense0)


@given(states(), st.data())
def test_keep_only(state, data):
    if state.members() and data.draw(st.booleans()):
        ids = make_array(
            data.draw(st.lists(st.sampled_from(state.members()), max_size=20))
            + data.draw(st.lists(st.integers(0, state.capacity + 3), max_size=3)),
            data.draw(st.sampled_from(INT_DTYPES)),
            data.draw(st.sampled_from(LAYOUTS)),
        )
    else:
        ids = data.draw(id_arrays(state.capacity, negatives=False))
    before = ids_snapshot(ids)
    sparse, sparse_big = guarded(state.sparse)
    dense, dense_big = guarded(state.dense)
    r = state.copy()

    new_n = int(kernels.keep_only(sparse, dense, state.n, ids))
    want_n = reference.keep_only(r.sparse, r.dense, r.n, ids)

    assert new_n == want_n
    assert_guard_intact(sparse_big, state.capacity)
    assert_guard_intact(dense_big, state.capacity)
    np.testing.assert_array_equal(ids, before)
    # kept members come first, in batch order (the kernel's docstring)
    np.testing.assert_array_equal(dense[:new_n], r.dense[:want_n])
    # the removed ones sit just past new_n with back-pointers (rollback)
    assert sorted(dense[new_n : state.n].tolist()) == sorted(
        r.dense[want_n : state.n].tolist()
    )
    assert_back_pointers(sparse, dense, state.n)


@given(states())
def test_sort(state):
    sparse, sparse_big = guarded(state.sparse)
    dense, dense_big = guarded(state.dense)
    r = state.copy()
    assert kernels.sort(sparse, dense, state.n) is None
    reference.sort(r.sparse, r.dense, r.n)
    assert_guard_intact(sparse_big, state.capacity)
    assert_guard_intact(dense_big, state.capacity)
    np.testing.assert_array_equal(dense[: state.n], r.dense[: state.n])
    assert_back_pointers(sparse, dense, state.n)
    np.testing.assert_array_equal(
        reference.membership(sparse, dense, state.n),
        reference.membership(state.sparse, state.dense, state.n),
    )


@given(
    probe=states(),
    extra_capacity=st.integers(0, 16),
    keep_members=st.booleans(),
    data=st.data(),
)
def test_filter_into(probe, extra_capacity, keep_members, data):
    out_capacity = probe.capacity + extra_capacity
    ids = data.draw(distinct_ids(out_capacity))
    id_list = ids.tolist()
    # the out set starts with members disjoint from ids (the kernel's contract)
    free = [x for x in range(out_capacity) if x not in set(id_list)]
    out_members = data.draw(st.permutations(free)) if free else []
    out_members = out_members[: data.draw(st.integers(0, len(out_members)))]
    out_sparse0, out_dense0, out_n = reference.build(
        out_members,
        [],
        out_capacity,
        data.draw(st.sampled_from(GARBAGE)),
        data.draw(st.integers(0, 2**32 - 1)),
    )
    length = min(out_capacity, out_n + len(id_list))
    out_sparse, out_sparse_big = guarded(out_sparse0)
    out_dense, out_dense_big = guarded(out_dense0, length)
    r_sparse, r_dense = out_sparse0.copy(), out_dense0.copy()
    probe0 = probe.copy()

    got = kernels.filter_into(
        ids,
        probe.sparse,
        probe.dense,
        probe.n,
        keep_members,
        out_sparse,
        out_dense,
        out_n,
        0,
    )
    want, _ = reference.filter_into(
        ids, probe.sparse, probe.dense, probe.n, keep_members, r_sparse, r_dense, out_n
    )

    got, stop = got
    assert (int(got), int(stop)) == (want, -1)
    assert_guard_intact(out_sparse_big, out_capacity)
    assert_guard_intact(out_dense_big, length)
    np.testing.assert_array_equal(out_dense[:got], r_dense[:want])
    assert_back_pointers(out_sparse, out_dense, int(got))
    # the probed set is read only
    np.testing.assert_array_equal(probe.sparse, probe0.sparse)
    np.testing.assert_array_equal(probe.dense, probe0.dense)


# --------------------------------------------------------------------------
# every dtype and layout, deterministically
# --------------------------------------------------------------------------


def _fixed_state(garbage):
    # members [9, 2, 14, 0, 5], then 7 and 3 removed just past n
    return State(*reference.build([9, 2, 14, 0, 5], [7, 3], 20, garbage, 1), 2)


@pytest.mark.parametrize("garbage", GARBAGE)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
def test_every_kernel_every_dtype(dtype, layout, garbage):
    values = [3, 9, 7, 19, 0, 25, 9, 100, 14]
    ids = make_array(values, dtype, layout)
    assert ids.dtype == dtype
    state = _fixed_state(garbage)

    out = np.empty(len(values), np.bool_)
    assert not kernels.find_all(
        state.sparse, state.dense, state.n, ids, out, *kernels.LOOKUP_TUNING
    )
    np.testing.assert_array_equal(out, [x in {9, 2, 14, 0, 5} for x in values])

    pos = np.empty(len(values), np.int64)
    assert not kernels.find_all(
        state.sparse, state.dense, state.n, ids, pos, *kernels.LOOKUP_TUNING
    )
    np.testing.assert_array_equal(pos, [-1, 0, -1, -1, 3, -1, 0, -1, 2])

    assert kernels.first_mismatch(state.sparse, state.dense, state.n, ids, True) == 0
    assert kernels.first_mismatch(state.sparse, state.dense, state.n, ids, False) == 1

    k = state.copy()
    # new n: 3 removed
    assert kernels.discard(k.sparse, k.dense, k.n, ids, *kernels.DISCARD_TUNING) == 2
    r = state.copy()
    reference.discard(r.sparse, r.dense, r.n, ids)
    np.testing.assert_array_equal(k.dense[:5], r.dense[:5])

    k = state.copy()
    assert kernels.keep_only(k.sparse, k.dense, k.n, ids) == 3
    assert k.dense[:3].tolist() == [9, 0, 14]

    k = state.copy()
    new_n, stop = kernels.upsert(
        k.sparse, k.dense, k.n, ids, kernels.NO_POSITIONS, 0, *kernels.UPSERT_TUNING
    )
    # 25 is past capacity 20: the batch stops there, the new ids before it in
    assert (int(new_n), int(stop)) == (8, 5)
    assert k.dense[:8].tolist() == [9, 2, 14, 0, 5, 3, 7, 19]
    assert set(np.flatnonzero(reference.membership(k.sparse, k.dense, 8))) == {
        9,
        2,
        14,
        0,
        5,
        3,
        7,
        19,
    }
    fits = make_array([3, 9, 7, 19, 7], dtype, layout)
    new_n, stop = kernels.upsert(
        k.sparse, k.dense, 8, fits, kernels.NO_POSITIONS, 0, *kernels.UPSERT_TUNING
    )
    assert (int(new_n), int(stop)) == (8, -1)
    new_n, stop = kernels.upsert(
        k.sparse, k.dense, 8, ids, kernels.NO_POSITIONS, 6, *kernels.UPSERT_TUNING
    )  # resume past 25
    assert (int(new_n), int(stop)) == (8, 7)  # 100 is past capacity too
    assert_back_pointers(k.sparse, k.dense, 8)

    out_sparse = np.empty(20, np.uint32)
    out_dense = np.empty(20, np.int32)
    distinct = make_array([3, 9, 7, 19, 0], dtype, layout)
    got, stop = kernels.filter_into(
        distinct, state.sparse, state.dense, state.n, True, out_sparse, out_dense, 0, 0
    )
    assert (out_dense[:got].tolist(), stop) == ([9, 0], -1)
    got, stop = kernels.filter_into(
        distinct,
        state.sparse,
        state.dense,
        state.n,
        False,
        out_sparse,
        out_dense,
        got,
        0,
    )
    assert (out_dense[:got].tolist(), stop) == ([9, 0, 3, 7, 19], -1)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_queries_flag_negative_ids(dtype):
    state = _fixed_state("random")
    ids = np.array([9, -1, 2], dtype=dtype)
    out = np.empty(3, np.bool_)
    assert kernels.find_all(
        state.sparse, state.dense, state.n, ids, out, *kernels.LOOKUP_TUNING
    )
    # a negative id is never a member
    np.testing.assert_array_equal(out, [True, False, True])
    pos = np.empty(3, np.int64)
    assert kernels.find_all(
        state.sparse, state.dense, state.n, ids, pos, *kernels.LOOKUP_TUNING
    )
    np.testing.assert_array_equal(pos, [0, -1, 1])
    assert kernels.find(state.sparse, state.dense, state.n, dtype(-1)) == -1


def test_uint64_ids_past_sign_bit_are_absent():
    state = _fixed_state("adversarial")
    ids = np.array([2**63, 2**64 - 1, 2**63 + 9, 9], dtype=np.uint64)
    out = np.empty(4, np.bool_)
    kernels.find_all(
        state.sparse, state.dense, state.n, ids, out, *kernels.LOOKUP_TUNING
    )
    np.testing.assert_array_equal(out, [False, False, False, True])
    k = state.copy()
    assert kernels.discard(k.sparse, k.dense, k.n, ids, *kernels.DISCARD_TUNING) == 4
    assert kernels.first_mismatch(state.sparse, state.dense, state.n, ids, False) == 3
    new_n, stop = kernels.upsert(
        k.sparse, k.dense, 4, ids, kernels.NO_POSITIONS, 0, *kernels.UPSERT_TUNING
    )
    assert (int(new_n), int(stop)) == (4, 0)


def test_membership_is_proven_by_dense_not_sparse():
    # every sparse entry points at a valid position, none of them is right
    capacity = 32
    sparse = np.zeros(capacity, np.uint32)
    dense = np.empty(capacity, np.int32)
    n, fail = kernels.upsert(
        sparse,
        dense,
        0,
        np.array([5, 6, 7]),
        kernels.NO_POSITIONS,
        0,
        *kernels.UPSERT_TUNING,
    )
    assert (n, fail) == (3, -1)
    sparse[:] = np.arange(capacity) % 3  # garbage into positions < n
    sparse[[5, 6, 7]] = [0, 1, 2]
    out = np.empty(capacity, np.bool_)
    kernels.find_all(sparse, dense, n, np.arange(capacity), out, *kernels.LOOKUP_TUNING)
    assert np.flatnonzero(out).tolist() == [5, 6, 7]
    # n = 0: nothing is a member whatever the arrays hold
    kernels.find_all(sparse, dense, 0, np.arange(capacity), out, *kernels.LOOKUP_TUNING)
    assert not out.any()


# --------------------------------------------------------------------------
# swapping and packing members with their rows
# --------------------------------------------------------------------------

#: Word columns as a store hands them to row kernels:
#: one of every word width, with rows of several words.
ROW_WORDS = ((np.uint64, 3), (np.uint32, 1), (np.uint16, 2), (np.uint8, 3))


def row_of(x, dtype, width):
    """The words of id ``x``'s row in a column of ``dtype`` (never the guard value)."""
    top = int(np.iinfo(dtype).max)
    base = 2**40 if dtype == np.uint64 else 0
    return [base + (3 * int(x) + 50 * j + 1) % top for j in range(width)]


def tagged_rows(members):
    """Columns of every word width, one row per member, then guard rows.

    Returns the columns (exactly ``len(members)`` rows each, so a write past
    n lands in the guard) and the arrays holding them.
    """
    n = len(members)
    columns, bigs = [], []
    for dtype, width in ROW_WORDS:
        big = np.full((n + GUARD, width), np.iinfo(dtype).max, dtype)
        for p, x in enumerate(members):
            big[p] = row_of(x, dtype, width)
        columns.append(big[:n])
        bigs.append(big)
    return tuple(columns), bigs


def assert_rows_follow_ids(columns, bigs, ids):
    """Row p of every column belongs to ``ids[p]``; the guard rows are intact."""
    n = len(ids)
    for column, big, (dtype, width) in zip(columns, bigs, ROW_WORDS, strict=True):
        want = [row_of(x, dtype, width) for x in ids]
        np.testing.assert_array_equal(column, np.array(want, dtype).reshape(n, width))
        assert (big[n:] == np.iinfo(dtype).max).all(), f"{dtype} row past n written"


def ids_among(state, data, dtypes=INT_DTYPES, layouts=LAYOUTS):
    """Ids that are mostly members (so that things move), with repeats and strays."""
    members = state.members()
    picks = (
        data.draw(st.lists(st.sampled_from(members), max_size=16)) if members else []
    )
    if not members or data.draw(st.booleans()):
        picks += data.draw(
            st.lists(
                st.one_of(st.integers(-3, state.capacity + 3), st.sampled_from(HUGE)),
                max_size=6,
            )
        )
    picks = data.draw(st.permutations(picks))
    return make_array(
        picks, data.draw(st.sampled_from(dtypes)), data.draw(st.sampled_from(layouts))
    )


@given(states(min_capacity=1), st.data())
def test_swap_members(state, data):
    upto = state.n + state.removed
    assume(upto > 0)
    p = data.draw(st.integers(0, upto - 1))
    q = data.draw(st.integers(0, upto - 1))
    sparse, sparse_big = guarded(state.sparse)
    dense, dense_big = guarded(state.dense)
    r = state.copy()

    assert kernels.swap_members(sparse, dense, p, q) is None
    reference.swap_members(r.sparse, r.dense, p, q)

    assert_guard_intact(sparse_big, state.capacity)
    assert_guard_intact(dense_big, state.capacity)
    np.testing.assert_array_equal(dense[:upto], r.dense[:upto])
    assert_back_pointers(sparse, dense, upto)
    # only the two positions changed
    want = state.dense[:upto].tolist()
    want[p], want[q] = want[q], want[p]
    assert dense[:upto].tolist() == want
    if p < state.n and q < state.n:
        np.testing.assert_array_equal(
            reference.membership(sparse, dense, state.n),
            reference.membership(state.sparse, state.dense, state.n),
        )


@pytest.mark.parametrize("kernel", ["pack_front", "pack_back"])
@given(state=states(), data=st.data())
def test_pack_moves_rows_with_their_ids(kernel, state, data):
    # two id types only: each (ids, rows) type combination compiles anew;
    # test_pack_every_dtype covers the rest
    ids = ids_among(state, data, dtypes=[np.int64, np.uint32], layouts=["contiguous"])
    before = ids_snapshot(ids)
    bound = data.draw(st.integers(0, state.n))  # start, or end
    members = state.members()
    sparse, sparse_big = guarded(state.sparse)
    dense, dense_big = guarded(state.dense)
    rows, bigs = tagged_rows(members)
    r = state.copy()
    r_rows, _ = tagged_rows(members)

    got = getattr(kernels, kernel)(sparse, dense, state.n, bound, ids, rows)
    want = getattr(reference, kernel)(r.sparse, r.dense, r.n, bound, ids, r_rows)

    assert int(got) == want
    assert_guard_intact(sparse_big, state.capacity)
    assert_guard_intact(dense_big, state.capacity)
    np.testing.assert_array_equal(ids, before)
    np.testing.assert_array_equal(dense[: state.n], r.dense[: state.n])
    for column, r_column in zip(rows, r_rows, strict=True):
        np.testing.assert_array_equal(column, r_column)
    # the invariants, and rows that still belong to their ids
    assert_back_pointers(sparse, dense, state.n + state.removed)
    assert sorted(dense[: state.n].tolist()) == sorted(members)
    np.testing.assert_array_equal(
        reference.membership(sparse, dense, state.n),
        reference.membership(state.sparse, state.dense, state.n),
    )
    assert_rows_follow_ids(rows, bigs, dense[: state.n].tolist())
    # what moved, said without the swaps
    now = dense[: state.n].tolist()
    batch = list(dict.fromkeys(reference.as_ints(ids)))
    if kernel == "pack_front":
        moved = [x for x in batch if x in members[bound:]]
        assert got == bound + len(moved)
        assert now[:bound] == members[:bound]
        assert now[bound:got] == moved
    else:
        moved = [x for x in batch if x in members[:bound]]
        assert got == bound - len(moved)
        assert now[bound:] == members[bound:]
        assert now[got:bound] == moved[::-1]


def test_pack_front_orders_like_ids_and_pack_back_undoes_it():
    sparse, dense, n = reference.build([1, 2, 3, 4, 5, 6], [], 10, "random", 3)
    rows, bigs = tagged_rows([1, 2, 3, 4, 5, 6])
    ids = np.array([6, 9, 2, 6, 5, 2**40, 6], np.int64)
    assert kernels.pack_front(sparse, dense, n, 0, ids, rows) == 3
    assert dense[:3].tolist() == [6, 2, 5]
    assert_rows_follow_ids(rows, bigs, dense[:n].tolist())
    # a second pass from the new start skips what is already packed
    assert kernels.pack_front(sparse, dense, n, 3, ids, rows) == 3
    assert kernels.pack_front(sparse, dense, n, 3, np.array([1, 2]), rows) == 4
    assert dense[:4].tolist() == [6, 2, 5, 1]
    # expel two of the packed four: the first expelled lands at the old end - 1
    assert kernels.pack_back(sparse, dense, n, 4, np.array([2, 3, 6, 2]), rows) == 2
    assert dense[2:4].tolist() == [6, 2]
    assert sorted(dense[:2].tolist()) == [1, 5]
    assert_rows_follow_ids(rows, bigs, dense[:n].tolist())
    assert_back_pointers(sparse, dense, n)
    # an empty batch, and an empty set, move nothing
    assert kernels.pack_back(sparse, dense, n, 2, np.empty(0, np.int64), rows) == 2
    assert kernels.pack_front(sparse, dense, 0, 0, np.array([1, 2]), rows) == 0
    assert_rows_follow_ids(rows, bigs, dense[:n].tolist())


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
def test_pack_every_dtype(dtype, layout):
    state = _fixed_state("adversarial")  # [9, 2, 14, 0, 5], 7 and 3 removed
    values = [5, 3, 25, 0, 7, 5, 14, 100]
    if np.dtype(dtype).kind == "i":
        values.insert(2, -1)
    elif dtype == np.uint64:
        values.insert(2, 2**63 + 9)
    ids = make_array(values, dtype, layout)
    assert ids.dtype == dtype

    k = state.copy()
    rows, bigs = tagged_rows(k.members())
    assert kernels.pack_front(k.sparse, k.dense, k.n, 0, ids, rows) == 3
    assert k.members()[:3] == [5, 0, 14]
    assert sorted(k.members()) == [0, 2, 5, 9, 14]
    assert_rows_follow_ids(rows, bigs, k.members())
    assert_back_pointers(k.sparse, k.dense, k.n + k.removed)

    k = state.copy()
    rows, bigs = tagged_rows(k.members())
    assert kernels.pack_back(k.sparse, k.dense, k.n, 4, ids, rows) == 2
    assert k.members()[2:] == [14, 0, 5]  # 5 sits at 4 = end: left alone
    assert sorted(k.members()[:2]) == [2, 9]
    assert_rows_follow_ids(rows, bigs, k.members())
    assert_back_pointers(k.sparse, k.dense, k.n + k.removed)


# --------------------------------------------------------------------------
# entity handles
# --------------------------------------------------------------------------

#: The world's last generation (``sparseset.world.LAST_GENERATION``); the
#: kernels take it as an argument, and the tests also use a small one so
#: that retirement happens often.
LAST_GENERATION = 2**31 - 1
WORD_GUARD = 0xDEADBEEF


@dataclass
class Entities:
    """A world's entity arrays: ``length`` slots, ``count`` indexes ever used.

    Past ``count`` (and past ``n_free`` in ``free``) they hold garbage, and
    each array is followed by a guard zone.
    """

    generations: np.ndarray
    alive: np.ndarray
    free: np.ndarray
    n_free: int
    count: int
    last: int

    @property
    def length(self):
        return self.generations.shape[0]

    def copy(self):
        return Entities(
            self.generations.copy(),
            self.alive.copy(),
            self.free.copy(),
            self.n_free,
            self.count,
            self.last,
        )

    def live(self):
        return [i for i in range(self.count) if self.alive[i]]

    def words(self):
        """The kernels' form: one word per index, its generation with
        ``kernels.LIVE`` while alive; the garbage past ``count`` as it is."""
        words = self.generations.copy()
        live = np.where(self.alive[: self.count], np.uint32(kernels.LIVE), 0)
        words[: self.count] |= live.astype(np.uint32)
        return words


def with_guard(arr, fill):
    """A copy of ``arr`` followed by ``GUARD`` slots of ``fill``; returns both."""
    big = np.full(arr.shape[0] + GUARD, fill, arr.dtype)
    big[: arr.shape[0]] = arr
    return big[: arr.shape[0]], big


def assert_guard(big, length, fill):
    assert (big[length:] == fill).all(), "wrote past the end"


@st.composite
def entity_states(draw, max_count=32, max_extra=12):
    """A valid world state: every dead index is either free or retired."""
    last = draw(st.sampled_from([3, LAST_GENERATION]))
    count = draw(st.integers(0, max_count))
    length = count + draw(st.integers(0, max_extra))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    generations = rng.integers(0, 2**32, length, dtype=np.uint64).astype(np.uint32)
    alive = rng.integers(0, 2, length).astype(np.bool_)  # garbage past count
    free = rng.integers(-(2**31), 2**31, length, dtype=np.int64).astype(np.int32)
    low = st.integers(0, min(3, last))
    high = st.integers(last - 2, last)
    for i in range(count):
        generations[i] = draw(st.one_of(low, high))
        alive[i] = draw(st.booleans())
    dead = [i for i in range(count) if not alive[i] and generations[i] < last]
    stack = draw(st.permutations(dead))
    free[: len(stack)] = stack
    return Entities(generations, alive, free, len(stack), count, last)


@given(entity_states(), st.data())
def test_create_entities(state, data):
    room = state.n_free + state.length - state.count
    wanted = data.draw(st.integers(0, room))
    words0 = state.words()
    words, words_big = with_guard(words0, WORD_GUARD)
    free0 = state.free.copy()
    out, out_big = with_guard(np.full(wanted, -7, np.int64), WORD_GUARD)
    r = state.copy()
    want_out = np.full(wanted, -7, np.int64)

    got = kernels.create_entities(words, state.free, state.n_free, state.count, out)
    want = reference.create_entities(
        r.generations, r.alive, r.free, r.n_free, r.count, want_out
    )

    assert (int(got[0]), int(got[1])) == want
    np.testing.assert_array_equal(out, want_out)
    new_count = want[1]
    r.count = new_count
    np.testing.assert_array_equal(words[:new_count], r.words()[:new_count])
    # garbage past the new count, the free array and the guards stay as they were
    np.testing.assert_array_equal(words[new_count:], words0[new_count:])
    np.testing.assert_array_equal(state.free, free0)
    assert_guard(words_big, state.length, WORD_GUARD)
    assert_guard(out_big, wanted, WORD_GUARD)
    # the new handles are alive, distinct, and the free stack went first, LIFO
    assert len(set(out.tolist())) == wanted
    indexes = (out & reference.INDEX_MASK).tolist()
    recycled = min(wanted, state.n_free)
    assert indexes[:recycled] == state.free[: state.n_free][::-1][:recycled].tolist()
    assert indexes[recycled:] == list(range(state.count, new_count))
    assert all(reference.is_alive(r.generations, r.alive, new_count, h) for h in out)
    keys = np.empty(wanted, np.int64)
    assert kernels.resolve(words, new_count, out, keys, -1, 8) == -1


@given(entity_states(), st.data())
def test_destroy_entities(state, data):
    if state.count:
        indexes = data.draw(st.lists(st.integers(0, state.count - 1), max_size=16))
    else:
        indexes = []
    live_before = state.live()
    handles_before = [
        reference.handle(i, state.generations[i]) for i in range(state.count)
    ]
    indexes = make_array(
        indexes,
        data.draw(st.sampled_from(INT_DTYPES)),
        data.draw(st.sampled_from(LAYOUTS)),
    )
    before = ids_snapshot(indexes)
    words, words_big = with_guard(state.words(), WORD_GUARD)
    free, free_big = with_guard(state.free, -0x21524111)
    r = state.copy()

    got = kernels.destroy_entities(words, free, state.n_free, indexes, state.last)
    want = reference.destroy_entities(
        r.generations, r.alive, r.free, r.n_free, indexes, state.last
    )

    assert (int(got[0]), int(got[1])) == want
    n_free, killed = want
    np.testing.assert_array_equal(words, r.words())
    np.testing.assert_array_equal(free[:n_free], r.free[:n_free])
    np.testing.assert_array_equal(indexes, before)
    assert_guard(words_big, state.length, WORD_GUARD)
    assert_guard(free_big, state.length, -0x21524111)
    # the free stack only grew on top; retired indexes were not pushed
    np.testing.assert_array_equal(free[: state.n_free], state.free[: state.n_free])
    victims = [i for i in dict.fromkeys(indexes.tolist()) if i in live_before]
    assert killed == len(victims)
    assert free[state.n_free : n_free].tolist() == [
        i for i in victims if state.generations[i] < state.last
    ]
    for i in victims:
        assert not words[i] & kernels.LIVE
        assert not reference.is_alive(
            r.generations, r.alive, state.count, handles_before[i]
        )
        if state.generations[i] == state.last:
            assert words[i] == state.last  # retired, never to come back


def handle_candidates(state):
    """Live, stale, never-created, negative and huge handles for ``state``."""
    out = [*HUGE, -1, -(2**63), 2**63 - 1, reference.INDEX_MASK]
    for i in range(state.length):
        g = int(state.generations[i])
        out += [reference.handle(i, g), reference.handle(i, g + 1), i]
        if g:
            out.append(reference.handle(i, g - 1))
    out = [h for h in out if h < 2**64]
    return out or [0]


def draw_handles(state, data, max_size):
    """Up to ``max_size`` of :func:`handle_candidates`, in any id dtype and layout."""
    handles = data.draw(
        st.lists(st.sampled_from(handle_candidates(state)), max_size=max_size)
    )
    return make_array(
        handles,
        data.draw(st.sampled_from(INT_DTYPES)),
        data.draw(st.sampled_from(LAYOUTS)),
    )


@given(entity_states(), st.data())
def test_resolve(state, data):
    handles = draw_handles(state, data, 20)
    before = ids_snapshot(handles)
    dead = data.draw(st.sampled_from([-1, 2**31]))
    ahead = data.draw(st.sampled_from([0, 1, 8, 64]))  # any distance: only timing
    out, out_big = with_guard(np.full(handles.shape[0], -7, np.int64), WORD_GUARD)
    want_out = np.full(handles.shape[0], -7, np.int64)
    words = state.words()
    words0 = words.copy()

    got = kernels.resolve(words, state.count, handles, out, dead, ahead)
    want = reference.resolve(
        state.generations, state.alive, state.count, handles, want_out, dead
    )

    assert int(got) == want
    np.testing.assert_array_equal(out, want_out)
    assert_guard(out_big, handles.shape[0], WORD_GUARD)
    # resolve writes nothing but ``out``
    np.testing.assert_array_equal(handles, before)
    np.testing.assert_array_equal(words, words0)


@given(entity_states(), st.data())
def test_handles_of(state, data):
    if state.count:
        indexes = data.draw(st.lists(st.integers(0, state.count - 1), max_size=16))
    else:
        indexes = []
    indexes = make_array(
        indexes,
        data.draw(st.sampled_from(INT_DTYPES)),
        data.draw(st.sampled_from(LAYOUTS)),
    )
    out, out_big = with_guard(np.full(indexes.shape[0], -7, np.int64), WORD_GUARD)
    want = np.full(indexes.shape[0], -7, np.int64)
    words = state.words()
    assert kernels.handles_of(words, indexes, out) is None
    reference.handles_of(state.generations, indexes, want)
    np.testing.assert_array_equal(out, want)
    assert_guard(out_big, indexes.shape[0], WORD_GUARD)
    assert (out >= 0).all()
    # a live index's handle resolves to it
    keys = np.empty(indexes.shape[0], np.int64)
    kernels.resolve(words, state.count, out, keys, -1, 8)
    for k, i in enumerate(indexes.tolist()):
        assert keys[k] == (i if state.alive[i] else -1)


@given(entity_states(), st.data())
def test_handles_at(state, data):
    indexes = np.array(
        data.draw(st.lists(st.integers(0, max(state.count - 1, 0)), max_size=12))
        if state.count
        else [],
        np.int32,
    )
    at = np.array(
        data.draw(st.lists(st.integers(0, max(indexes.shape[0] - 1, 0)), max_size=12))
        if indexes.shape[0]
        else [],
        np.uint32,
    )
    ahead = data.draw(st.sampled_from([0, 1, 8]))
    out, out_big = with_guard(np.full(at.shape[0], -7, np.int64), WORD_GUARD)
    want = np.full(at.shape[0], -7, np.int64)
    kernels.handles_at(state.words(), indexes, at, out, ahead)
    reference.handles_of(state.generations, indexes[at.astype(np.int64)], want)
    np.testing.assert_array_equal(out, want)
    assert_guard(out_big, at.shape[0], WORD_GUARD)


@given(entity_states(), st.data())
def test_rows_of_handles(state, data):
    # A store holding some of the live indexes (in any order), and handles
    # of every kind; the kernel answers rows only where all are live members.
    live = state.live()
    members = data.draw(st.permutations(live))[: data.draw(st.integers(0, len(live)))]
    sparse = np.full(max(state.length, 1), 7, np.uint32)  # garbage
    dense = np.full(len(members) + 2, -3, np.int32)
    n = 0
    for i in members:
        n = reference.push(sparse, dense, n, i)
    handles = draw_handles(state, data, 12)
    ahead = data.draw(st.sampled_from([0, 1, 8, 64]))
    words = state.words()
    out, out_big = with_guard(np.full(handles.shape[0], -7, np.int64), WORD_GUARD)

    got = kernels.rows_of_handles(
        words, state.count, sparse, dense, n, handles, out, ahead
    )

    keys = np.full(handles.shape[0], -1, np.int64)
    reference.resolve(state.generations, state.alive, state.count, handles, keys, -1)
    rows = [reference.find(sparse, dense, n, i) if i >= 0 else -1 for i in keys]
    failing = [k for k, row in enumerate(rows) if row < 0]
    assert got == (failing[0] if failing else -1)
    stop = failing[0] if failing else handles.shape[0]
    assert out[:stop].tolist() == rows[:stop]
    assert_guard(out_big, handles.shape[0], WORD_GUARD)


def test_entity_lifecycle():
    length = 8
    live = kernels.LIVE
    words = np.full(length, 99 | live, np.uint32)  # garbage: count is 0
    free = np.full(length, -1, np.int32)
    out = np.empty(4, np.int64)
    assert kernels.create_entities(words, free, 0, 0, out) == (0, 4)
    assert out.tolist() == [0, 1, 2, 3]  # fresh indexes start at generation 0
    assert words[:4].tolist() == [live] * 4
    first = out.copy()

    # destroy 2, 0 and 2 again: two killed, pushed in batch order
    batch = np.array([2, 0, 2])
    assert kernels.destroy_entities(words, free, 0, batch, 5) == (2, 2)
    assert free[:2].tolist() == [2, 0]
    assert words[:4].tolist() == [1, live, 1, live]

    # recycling is LIFO: 0 comes back first, then 2, then a fresh index
    out = np.empty(3, np.int64)
    assert kernels.create_entities(words, free, 2, 4, out) == (0, 5)
    assert out.tolist() == [2**32 | 0, 2**32 | 2, 4]

    # the first handles of 0 and 2 are stale: dead, with the dead value
    keys = np.empty(4, np.int64)
    assert kernels.resolve(words, 5, first, keys, -9, 8) == 0
    assert keys.tolist() == [-9, 1, -9, 3]
    assert kernels.resolve(words, 5, out, keys[:3], -9, 8) == -1
    assert keys[:3].tolist() == [0, 2, 4]
    handles = np.empty(3, np.int64)
    kernels.handles_of(words, np.array([0, 2, 4]), handles)
    assert handles.tolist() == out.tolist()


def test_destroy_retires_the_last_generation():
    # Room for index 4 too: create_entities below hands it out fresh (its
    # caller guarantees len(generations) >= count + len(out)).
    live = kernels.LIVE
    words = np.array([4 | live, 5 | live, 5 | live, 0, 0], np.uint32)
    free = np.full(5, -1, np.int32)
    free[0] = 3
    batch = np.array([1, 0, 2], np.int64)
    assert kernels.destroy_entities(words, free, 1, batch, 5) == (2, 3)
    # 0 moves to its last generation and is freed; 1 and 2 are retired; none
    # is alive
    assert words.tolist() == [5, 5, 5, 0, 0]
    assert free[:2].tolist() == [3, 0]
    # no handle of a retired index resolves, at any generation
    handles = np.array([(g << 32) | i for i in (1, 2) for g in (4, 5, 6)], np.int64)
    keys = np.empty(handles.shape[0], np.int64)
    assert kernels.resolve(words, 4, handles, keys, -1, 8) == 0
    assert (keys == -1).all()
    # recycling hands out 0 (then 3), never 1 or 2
    out = np.empty(3, np.int64)
    assert kernels.create_entities(words, free, 2, 4, out) == (0, 5)
    assert out.tolist() == [(5 << 32) | 0, 3, 4]
    # 0, now at the last generation, is retired when destroyed again
    assert kernels.destroy_entities(words, free, 0, np.array([0]), 5) == (0, 1)
    assert words[0] == 5


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
def test_resolve_every_dtype(dtype, layout):
    # indexes 0..4; 1 is dead, 2 is at generation 1, 4 is past count (3)
    live = kernels.LIVE
    words = np.array([live, 0, 1 | live, live, live], np.uint32)
    count = 4
    values = [3, 0, 1, 100, 4, 2]
    want = [3, 0, -1, -1, -1, -1]  # 2's handle at generation 0 is stale
    if np.dtype(dtype).itemsize == 8:
        values += [2**32 | 2, 2**33 | 3]
        want += [2, -1]
    if np.dtype(dtype).kind == "i":
        values.append(-1)
        want.append(-1)
    if dtype == np.uint64:
        values += [2**63, 2**64 - 1, 2**63 | 3]  # negative as int64: dead
        want += [-1, -1, -1]
    handles = make_array(values, dtype, layout)
    assert handles.dtype == dtype
    out = np.empty(len(values), np.int64)
    assert kernels.resolve(words, count, handles, out, -1, 3) == 2
    assert out.tolist() == want
    out2 = np.empty(len(values), np.int64)
    kernels.resolve(words, count, handles, out2, 2**31, 0)
    assert out2.tolist() == [2**31 if w == -1 else w for w in want]

    indexes = make_array([3, 2, 0, 2], dtype, layout)
    got = np.empty(4, np.int64)
    kernels.handles_of(words, indexes, got)
    assert got.tolist() == [3, 2**32 | 2, 0, 2**32 | 2]

    free = np.full(5, -1, np.int32)
    assert kernels.destroy_entities(words, free, 0, indexes, 5) == (3, 3)
    assert free[:3].tolist() == [3, 2, 0]
    assert words.tolist() == [1, 0, 2, 1, live]


# --------------------------------------------------------------------------
# tuning arguments (sparseset.config): any value, the same answers
# --------------------------------------------------------------------------


def filled(kind, ids, tuning=kernels.UPSERT_TUNING):
    """A set of index ``kind`` holding ``ids``, added by ``upsert`` with the
    given tuning arguments and grown as the containers grow it."""
    index = KINDS[kind].new(0)
    dense = np.empty(len(ids), KINDS[kind].id_dtype)
    n, stop = 0, 0
    while True:
        none = kernels.NO_POSITIONS
        n, stop = kernels.upsert(index, dense, n, ids, none, stop, *tuning)
        if stop < 0:
            return index, dense, int(n)
        index = kernels.grown_index(index, dense, n, len(ids), int(ids.max()))


TUNINGS = [
    {"chunk": 1, "add_ahead": 0, "hash_ahead": 0},
    {"chunk": 3, "add_ahead": 1, "hash_ahead": 5},
    {"chunk": 64, "add_ahead": 7, "hash_ahead": 1},
]


@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
@pytest.mark.parametrize("tuning", TUNINGS, ids=lambda t: str(t["chunk"]))
def test_tuning_arguments_change_no_answer(kind, tuning):
    rng = np.random.default_rng(5)
    ids = rng.integers(0, 500, 300)  # duplicates too
    want_index, want_dense, want_n = filled(kind, ids)
    index, dense, n = filled(
        kind, ids, (tuning["chunk"], tuning["add_ahead"], tuning["hash_ahead"])
    )
    assert n == want_n
    assert dense[:n].tolist() == want_dense[:n].tolist()

    queries = np.concatenate([ids, rng.integers(0, 1_000, 200)])
    for dtype in (np.bool_, np.int64):
        want = np.empty(len(queries), dtype)
        got = np.empty(len(queries), dtype)
        kernels.find_all(
            want_index, want_dense, n, queries, want, *kernels.LOOKUP_TUNING
        )
        kernels.find_all(
            index,
            dense,
            n,
            queries,
            got,
            tuning["chunk"],
            tuning["add_ahead"],
            tuning["hash_ahead"],
        )
        assert got.tolist() == want.tolist()

    rows = np.empty(len(queries), np.uint32)
    found = np.empty(len(queries), np.uint32)
    join = kernels.batch.join_rows
    m = join(queries, index, dense, n, rows, found, tuning["add_ahead"])
    member = want.tolist()
    assert rows[:m].tolist() == [k for k, p in enumerate(member) if p >= 0]
    assert found[:m].tolist() == [p for p in member if p >= 0]


@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
@given(
    ids=st.lists(st.integers(0, 60), max_size=80),
    room=st.integers(0, 8),
    ahead=st.sampled_from([0, 1, 2, 7, 32]),
    one_value=st.booleans(),
    exact=st.booleans(),
)
def test_upsert_accumulate_stops_when_full_and_resumes(
    kind, ids, room, ahead, one_value, exact
):
    """Against a dict: every occurrence adds its values to its id's row,
    new ids appended in first-seen order with zeroed rows; where ``dense``
    is full the kernel stops at the first id it cannot take, with
    everything before it counted, and a call from there finishes the job.
    Columns and ``dense`` are exactly as long as needed (bounds-checked).
    With ``exact`` the kernel takes the index's answers as they are: a new
    hash index holds no stale entry, a flat one is filled with NOWHERE
    first as the promise asks, and a paged one is never trusted."""
    arr = np.array(ids, np.int64)
    index = KINDS[kind].sized(61, 61)
    if exact and kind == "flat":
        index.fill(kernels.options.NOWHERE)
    dense = np.empty(room, KINDS[kind].id_dtype)
    count = np.full((room, 1), -9, np.int64)  # garbage until a row is claimed
    weight = np.full((room, 2), -9.0)
    ones = np.ones((1, 1), np.int64)
    w = np.stack([arr * 0.5, -arr * 0.25], axis=1).reshape(-1, 2)
    positions = np.full(arr.shape[0], -1, np.int64)
    candidates = kernels.candidates_for(ahead)
    m, stop = 0, 0
    while True:
        m, stop = kernels.upsert_accumulate(
            index,
            dense,
            m,
            arr,
            ((count, ones), (weight, w if not one_value else w[:1])),
            positions,
            stop,
            exact,
            False,
            candidates,
            ahead,
        )
        if stop < 0:
            break
        assert m == dense.shape[0]  # the only reason to stop here
        assert dense[:m].tolist() == list(dict.fromkeys(ids[:stop]))
        dense = np.r_[dense, np.empty(3, dense.dtype)]
        count = np.r_[count, np.full((3, 1), -9, np.int64)]
        weight = np.r_[weight, np.full((3, 2), -9.0)]
    order = list(dict.fromkeys(ids))
    assert dense[:m].tolist() == order
    want = Counter(ids)
    assert count[:m, 0].tolist() == [want[x] for x in order]
    model = {x: [0.0, 0.0] for x in order}
    for k, x in enumerate(ids):
        row = w[0 if one_value else k]
        model[x][0] += row[0]
        model[x][1] += row[1]
    assert weight[:m].tolist() == [model[x] for x in order]
    assert positions.tolist() == [order.index(x) for x in ids]


@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
@given(
    before=st.lists(st.integers(0, 60), max_size=10),
    ids=st.lists(st.integers(0, 60), max_size=80),
    room=st.integers(0, 8),
    spare=st.sampled_from([0, 4, 128]),
    ahead=st.sampled_from([0, 1, 7, 32]),
    exact=st.booleans(),
    stale=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 20)), max_size=6),
)
def test_upsert_accumulate_tallying_in_slots_sums_as_adding_does(
    kind, before, ids, room, spare, ahead, exact, stale
):
    """With ``tallies``, against a dict: members from before the pass and
    new ids count in their slots and get their rows when the pass
    settles, whether it finishes or stops for lack of room (in ``dense``,
    or a hash table at its load limit); the index then answers every
    member's position. Unless ``exact``, the index also holds ids that are
    no members, at positions past the members or of other members (as a
    ``clear`` leaves them): they count as new. Integer columns, one row of
    values."""
    arr = np.array(ids, np.int64)
    old = list(dict.fromkeys(before))
    index = KINDS[kind].sized(61, len(old) + spare + len(stale))
    if exact and kind == "flat":
        index.fill(kernels.options.NOWHERE)  # what exact promises of a flat index
    dense = np.empty(len(old) + room, KINDS[kind].id_dtype)
    count = np.full((dense.shape[0], 1), -9, np.int64)
    pair = np.full((dense.shape[0], 2), -9, np.int16)
    if not exact:
        for x, p in stale:
            if x not in old:
                assert kinds.insert(index, x, p)
    for p, x in enumerate(old):
        assert kinds.insert(index, x, p)
        dense[p] = x
        count[p], pair[p] = 100, (1, 1)
    values = ((count, np.ones((1, 1), np.int64)), (pair, np.array([[3, -2]], np.int16)))
    candidates = kernels.candidates_for(ahead)
    m, stop = len(old), 0
    while True:
        m, stop = kernels.upsert_accumulate(
            index,
            dense,
            m,
            arr,
            values,
            kernels.NO_POSITIONS,
            stop,
            exact,
            True,
            candidates,
            ahead,
        )
        if stop < 0:
            break
        assert dense[:m].tolist() == list(dict.fromkeys(old + ids[:stop]))
        index = kinds.grow(index, dense, m, m + 4, 61)
        dense = np.r_[dense, np.empty(3, dense.dtype)]
        count = np.r_[count, np.full((3, 1), -9, np.int64)]
        pair = np.r_[pair, np.full((3, 2), -9, np.int16)]
        values = ((count, values[0][1]), (pair, values[1][1]))
    order = list(dict.fromkeys(old + ids))
    assert dense[:m].tolist() == order
    times = Counter(ids)
    start = {x: 100 if x in old else 0 for x in order}
    assert count[:m, 0].tolist() == [start[x] + times[x] for x in order]
    first = {x: (1, 1) if x in old else (0, 0) for x in order}
    want = [[first[x][0] + 3 * times[x], first[x][1] - 2 * times[x]] for x in order]
    assert pair[:m].tolist() == want
    found = [int(kinds.lookup(index, x)) for x in order]
    assert found == list(range(m))


@pytest.mark.boundscheck
def test_upsert_accumulate_tallying_counts_ids_left_stale_in_the_index_as_new():
    """A hash index a ``clear`` left full of keys, not ``exact``: an id whose
    slot holds a position past the members, or another member's, is new;
    the members count in their slots and add to their rows."""
    index = KINDS["hash"].sized(0, 64)
    dense = np.empty(16, np.int64)
    count = np.full((16, 1), -9, np.int64)
    for x, p in ((70, 9), (71, 0), (72, 1)):  # stale: 9 is past n, 0 and 1 are members'
        assert kinds.insert(index, x, p)
    for p, x in enumerate([5, 6]):
        assert kinds.insert(index, x, p)
        dense[p], count[p] = x, 100
    ids = np.array([70, 5, 71, 71, 6, 72, 5, 70, 8, 72, 72], np.int64)
    values = ((count, np.ones((1, 1), np.int64)),)
    m, stop = kernels.upsert_accumulate(
        index,
        dense,
        2,
        ids,
        values,
        kernels.NO_POSITIONS,
        0,
        False,
        True,
        kernels.candidates_for(4),
        4,
    )
    order = [5, 6, 70, 71, 72, 8]
    assert (m, stop) == (len(order), -1)
    assert dense[:m].tolist() == order
    times = Counter(ids.tolist())
    assert count[:m, 0].tolist() == [100 * (x in (5, 6)) + times[x] for x in order]
    assert [int(kinds.lookup(index, x)) for x in order] == list(range(6))


def test_upsert_accumulate_refuses_a_ring_too_short_for_its_lookahead():
    """A lookup ring shorter than ``ahead // 2`` would hand an id another's
    candidate (which an exact flat index would trust): refused, at once."""
    sparse = np.full(8, kernels.options.NOWHERE, np.uint32)
    dense = np.empty(8, np.int32)
    count = np.zeros((8, 1), np.int64)
    with pytest.raises(ValueError, match="candidates holds 16 lookups, ahead = 96"):
        kernels.upsert_accumulate(
            sparse,
            dense,
            0,
            np.array([1, 2]),
            ((count, np.ones((1, 1), np.int64)),),
            kernels.NO_POSITIONS,
            0,
            True,
            False,
            kernels.candidates_for(31),
            96,
        )
    assert not count.any()


@pytest.mark.parametrize("distinct", [1, 7, 100, 5_000, 200_000])
def test_distinct_estimate_is_close_and_bounds_its_range(distinct):
    rng = np.random.default_rng(distinct)
    for keys in (np.arange(distinct) * 4_096, rng.choice(2**62, distinct)):
        ids = rng.permutation(np.r_[keys, keys[: distinct // 2]]).astype(np.int64)
        # Ids outside the range, below and above every key, count for nothing.
        outside = np.int64(-1), np.int64(2**62 + 1)
        batch = np.r_[outside[0], ids, outside[1]]
        got, low, high = kernels.distinct_estimate(batch, 1, batch.shape[0] - 1)
        assert abs(got - distinct) <= max(2, 0.05 * distinct)
        assert (low, high) == (ids.min(), ids.max())

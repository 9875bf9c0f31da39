"""Unit tests for ``SparseSet``: the public contract, docs/contract.md.

Covers docs/contract.md#sparseset-api, docs/contract.md#semantics-every-container-keeps
and the fine print (docs/contract.md#ids, docs/contract.md#the-set-protocol) for the
default ``flat`` index, method by method, then a catalogue of bad inputs
that must raise *and* leave the set exactly as it was.

Order is checked only where docs/contract.md#order promises it (insertion order until a
removal; removal is sequential swap-and-pop); set algebra, ``copy``,
``from_ids``, ``keep_only`` and ``rollback`` results are compared as sets.
"""

import collections.abc
import copy
import pickle
import re
import warnings
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import DTYPE_IDS, FLAT_LIMIT, INT_DTYPES
from sparseset import SparseSet
from sparseset.sets import sparse_set

# The seeds' worked example.
A = [1, 5, 10, 15, 20]
B = [3, 5, 12, 15, 18]
A_OR_B = {1, 3, 5, 10, 12, 15, 18, 20}
A_AND_B = {5, 15}
A_MINUS_B = {1, 10, 20}
B_MINUS_A = {3, 12, 18}
A_XOR_B = {1, 3, 10, 12, 18, 20}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def members(s):
    """The members of ``s`` as a Python set of ints."""
    return set(s.ids.tolist())


def order(s):
    """The dense order of ``s`` as a list of ints."""
    return s.ids.tolist()


def make(ids, capacity=64, index="auto"):
    s = SparseSet(capacity=capacity, index=index)
    s.add(ids)
    return s


def assert_consistent(s):
    """The invariants (docs/architecture.md#the-sparse-set), seen through the API."""
    ids = np.asarray(s.ids)
    assert ids.ndim == 1
    assert len(s) == ids.shape[0]
    assert len(np.unique(ids)) == ids.shape[0], "duplicate members in s.ids"
    if len(s):
        assert (ids >= 0).all()
        np.testing.assert_array_equal(s.index(ids), np.arange(len(s)))
        assert s.contains(ids).all()
    assert sorted(list(s)) == sorted(ids.tolist())


def snapshot(s):
    return np.array(s.ids, copy=True), len(s)


def assert_unchanged(s, snap):
    ids, n = snap
    assert len(s) == n
    np.testing.assert_array_equal(np.asarray(s.ids), ids)
    assert_consistent(s)


def is_int_like(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_bool_like(x):
    return isinstance(x, (bool, np.bool_))


def strided(values, dtype=np.int64):
    """A non-contiguous 1-D view holding ``values`` (every other element)."""
    base = np.zeros(2 * len(values), dtype=dtype)
    base[::2] = values
    view = base[::2]
    assert not view.flags.c_contiguous or len(values) <= 1
    return view


def reversed_view(values, dtype=np.int64):
    """A negative-stride 1-D view holding ``values`` in order."""
    view = np.array(values[::-1], dtype=dtype)[::-1]
    assert len(values) <= 1 or view.strides[0] < 0
    return view


def readonly(values, dtype=np.int64):
    arr = np.array(values, dtype=dtype)
    arr.flags.writeable = False
    return arr


# --------------------------------------------------------------------------
# construction, ABC, dunder basics
# --------------------------------------------------------------------------


class TestConstruction:
    def test_default_constructor_is_empty(self):
        s = SparseSet()
        assert len(s) == 0
        assert not s
        assert list(s) == []
        assert s.ids.shape == (0,)
        assert_consistent(s)

    def test_capacity_keyword(self):
        s = SparseSet(capacity=1_000)
        assert len(s) == 0
        assert s.add([0, 999]) == 2
        assert order(s) == [0, 999]

    def test_capacity_positional(self):
        s = SparseSet(100)
        assert s.add(99) == 1
        assert 99 in s

    @pytest.mark.parametrize("capacity", [0, 1, 3])
    def test_tiny_capacity_is_only_a_hint(self, capacity):
        s = SparseSet(capacity=capacity)
        assert s.add([7, 0, 1_000, 7]) == 3
        assert order(s) == [7, 0, 1_000]
        assert_consistent(s)

    def test_flat_index_keyword(self):
        s = SparseSet(capacity=10, index="flat")
        s.add([1, 2])
        assert members(s) == {1, 2}

    def test_is_a_mutable_set(self):
        s = SparseSet()
        assert isinstance(s, collections.abc.MutableSet)
        assert isinstance(s, collections.abc.Set)
        assert isinstance(s, collections.abc.Sized)
        assert isinstance(s, collections.abc.Iterable)
        assert isinstance(s, collections.abc.Container)
        assert issubclass(SparseSet, collections.abc.MutableSet)

    def test_unhashable_like_set(self):
        with pytest.raises(TypeError):
            hash(SparseSet())

    @pytest.mark.parametrize(
        ("capacity", "exc"), [(-1, ValueError), (2.5, TypeError), ("8", TypeError)]
    )
    def test_bad_capacity(self, capacity, exc):
        with pytest.raises(exc):
            SparseSet(capacity=capacity)
        s = SparseSet()
        with pytest.raises(exc):
            s.reserve(capacity)


class TestFromIds:
    @pytest.mark.parametrize(
        "ids",
        [
            [3, 1, 3, 2],
            (3, 1, 3, 2),
            np.array([3, 1, 3, 2]),
            np.array([3, 1, 3, 2], dtype=np.uint8),
            strided([3, 1, 3, 2]),
            reversed_view([3, 1, 3, 2]),
            readonly([3, 1, 3, 2]),
        ],
        ids=["list", "tuple", "int64", "uint8", "strided", "reversed", "readonly"],
    )
    def test_from_ids(self, ids):
        s = SparseSet.from_ids(ids)
        assert isinstance(s, SparseSet)
        assert members(s) == {1, 2, 3}
        assert len(s) == 3
        assert_consistent(s)

    def test_from_ids_capacity_keyword(self):
        s = SparseSet.from_ids([5, 2_000], capacity=10)
        assert members(s) == {5, 2_000}
        s.add(3_000)
        assert members(s) == {5, 2_000, 3_000}

    @pytest.mark.parametrize(
        "ids", [[], (), np.array([], dtype=np.int64), np.array([], dtype=np.uint32)]
    )
    def test_from_ids_empty(self, ids):
        s = SparseSet.from_ids(ids)
        assert len(s) == 0
        assert_consistent(s)

    def test_from_ids_scalar_is_one_id(self):
        assert members(SparseSet.from_ids(5)) == {5}
        assert members(SparseSet.from_ids(np.uint16(5))) == {5}

    def test_from_ids_of_another_sets_ids(self):
        s = make([9, 4, 7])
        t = SparseSet.from_ids(s.ids)
        assert t == s
        t.add(1)
        assert 1 not in s

    @pytest.mark.parametrize(
        ("ids", "exc"),
        [
            ([1, -2], ValueError),
            ([1, FLAT_LIMIT], ValueError),
            ([1.5], TypeError),
            (np.array([True]), TypeError),
            (np.array([[1, 2]]), ValueError),
        ],
    )
    def test_from_ids_bad(self, ids, exc):
        with pytest.raises(exc):
            SparseSet.from_ids(ids, index="flat")


# --------------------------------------------------------------------------
# add
# --------------------------------------------------------------------------


class TestAdd:
    def test_returns_number_new_and_keeps_insertion_order(self):
        s = SparseSet(capacity=16)
        assert s.add([5, 3, 9]) == 3
        assert order(s) == [5, 3, 9]
        assert s.add([1, 3, 7]) == 2
        assert order(s) == [5, 3, 9, 1, 7]
        assert s.add([9, 5]) == 0
        assert order(s) == [5, 3, 9, 1, 7]
        assert_consistent(s)

    def test_return_is_int(self):
        s = SparseSet()
        r = s.add([1, 2])
        assert is_int_like(r)
        assert r == 2
        r = s.add(3)
        assert is_int_like(r)
        assert r == 1

    def test_duplicates_in_a_batch_count_once(self):
        s = SparseSet(capacity=16)
        assert s.add([4, 4, 2, 4, 2, 8]) == 3
        assert order(s) == [4, 2, 8]
        assert_consistent(s)

    def test_scalar_forms_are_one_id(self):
        s = SparseSet(capacity=16)
        assert s.add(3) == 1
        assert s.add(3) == 0
        assert s.add(np.int64(4)) == 1
        assert s.add(np.array(5)) == 1
        assert s.add(np.array(5, dtype=np.uint8)) == 0
        assert order(s) == [3, 4, 5]

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    def test_every_int_dtype(self, dtype):
        s = SparseSet(capacity=8)
        assert s.add(np.array([1, 100, 7, 1], dtype=dtype)) == 3
        assert s.add(dtype(9)) == 1
        assert s.add(np.array(9, dtype=dtype)) == 0
        assert s.add(np.array(120, dtype=dtype)) == 1
        assert order(s) == [1, 100, 7, 9, 120]
        assert_consistent(s)

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    @pytest.mark.parametrize("layout", [strided, reversed_view, readonly])
    def test_non_contiguous_and_readonly_inputs(self, dtype, layout):
        s = SparseSet(capacity=8)
        values = [3, 90, 3, 11, 0, 90]
        assert s.add(layout(values, dtype)) == 4
        assert order(s) == [3, 90, 11, 0]
        assert_consistent(s)

    def test_column_of_2d_array(self):
        table = np.array([[4, 100], [2, 101], [4, 102], [9, 103]], dtype=np.int32)
        s = SparseSet()
        assert s.add(table[:, 0]) == 3
        assert order(s) == [4, 2, 9]

    def test_non_native_byte_order(self):
        swapped = np.array([6, 2, 6, 40], dtype=np.dtype(">i4"))
        s = SparseSet()
        assert s.add(swapped) == 3
        assert order(s) == [6, 2, 40]
        np.testing.assert_array_equal(s.contains(swapped), [True] * 4)

    @pytest.mark.parametrize(
        "empty",
        [[], (), np.array([], dtype=np.int64), np.array([], dtype=np.uint8)],
        ids=["list", "tuple", "int64", "uint8"],
    )
    def test_empty_batch(self, empty):
        s = make([1, 2])
        assert s.add(empty) == 0
        assert order(s) == [1, 2]

    def test_tuple_and_list_batches(self):
        s = SparseSet()
        assert s.add((2, 1)) == 2
        assert s.add([1, 0]) == 1
        assert order(s) == [2, 1, 0]

    def test_list_needing_uint64_inference(self):
        # numpy infers uint64 for this list; it is still a batch of ids.
        s = SparseSet()
        with pytest.raises(ValueError, match="9223372036854775808"):
            s.add([1, 2**63])
        assert len(s) == 0

    def test_growth_keeps_members_and_order(self):
        s = SparseSet(capacity=8)
        s.add([5, 1, 7, 3])
        s.discard(1)  # -> [5, 3, 7]
        assert order(s) == [5, 3, 7]
        assert s.add([100_000, 2, 9, 100_000]) == 3
        assert order(s) == [5, 3, 7, 100_000, 2, 9]
        big = np.arange(2**21 - 10, 2**21, dtype=np.int64)
        assert s.add(big) == 10
        assert order(s) == [5, 3, 7, 100_000, 2, 9, *big.tolist()]
        assert_consistent(s)

    def test_many_small_growths(self):
        s = SparseSet(capacity=1)
        for x in range(0, 3_000, 7):
            assert s.add(x) == 1
        assert order(s) == list(range(0, 3_000, 7))
        assert_consistent(s)

    def test_large_random_batch_matches_first_occurrence_order(self):
        rng = np.random.default_rng(1234)
        ids = rng.integers(0, 400_000, size=200_000)
        s = SparseSet(capacity=1_000)
        uniq, first = np.unique(ids, return_index=True)
        assert s.add(ids) == len(uniq)
        np.testing.assert_array_equal(s.ids, ids[np.sort(first)])
        more = rng.integers(0, 800_000, size=50_000)
        before = s.ids.copy()
        present = set(before.tolist())
        new = []
        seen = set()
        for x in more.tolist():
            if x not in present and x not in seen:
                seen.add(x)
                new.append(x)
        assert s.add(more) == len(new)
        np.testing.assert_array_equal(s.ids, np.concatenate([before, new]))
        assert_consistent(s)

    @pytest.mark.parametrize(
        "bad",
        [FLAT_LIMIT, 2**40, 2**47, np.uint64(2**63), 2**63 - 1, 2**64, 2**100],
        ids=lambda v: f"id={int(v)}",
    )
    def test_out_of_range_add_names_id(self, bad):
        s = make([1, 2], index="flat")
        snap = snapshot(s)
        with pytest.raises(ValueError) as info:
            s.add(bad)
        assert str(int(bad)) in str(info.value)
        assert_unchanged(s, snap)

    @pytest.mark.parametrize("bad", [FLAT_LIMIT, 2**47, 2**50])
    def test_out_of_range_add_names_the_index_range(self, bad):
        # A flat set's message names the flat range it broke.
        s = SparseSet(index="flat")
        with pytest.raises(ValueError) as info:
            s.add([0, bad])
        msg = str(info.value)
        assert str(bad) in msg
        assert "flat" in msg and "2**31" in msg
        assert len(s) == 0


# --------------------------------------------------------------------------
# discard / remove
# --------------------------------------------------------------------------


class TestDiscard:
    def test_swap_and_pop_shipyard_example(self):
        s = make([0, 2, 3])
        assert s.discard(0) == 1
        assert order(s) == [3, 2]

    def test_discard_last_keeps_order(self):
        s = make([0, 1, 2])
        assert s.discard(2) == 1
        assert order(s) == [0, 1]

    @pytest.mark.parametrize(
        ("batch", "expected"),
        [
            ([0, 1], [4, 3, 2]),  # 0 -> [4,1,2,3]; 1 -> [4,3,2]
            ([1, 0], [3, 4, 2]),  # 1 -> [0,4,2,3]; 0 -> [3,4,2]
            ([4, 0], [3, 1, 2]),  # 4 -> [0,1,2,3]; 0 -> [3,1,2]
            ([2, 9, 2, 3], [0, 1, 4]),  # 2 -> [0,1,4,3]; 3 -> [0,1,4]
            ([0, 1, 2, 3, 4], []),
        ],
    )
    def test_batch_is_sequential_swap_and_pop(self, batch, expected):
        s = make([0, 1, 2, 3, 4])
        removed = len(set(batch) & {0, 1, 2, 3, 4})
        assert s.discard(batch) == removed
        assert order(s) == expected
        assert_consistent(s)

    def test_returns_number_removed_ignoring_non_members_and_duplicates(self):
        s = make([10, 20, 30])
        r = s.discard([20, 20, 99, 7, 20])
        assert is_int_like(r)
        assert r == 1
        assert order(s) == [10, 30]
        assert s.discard(99) == 0
        assert s.discard([]) == 0
        assert order(s) == [10, 30]

    def test_discard_on_empty(self):
        s = SparseSet()
        assert s.discard([1, 2, 3]) == 0
        assert s.discard(5) == 0
        assert len(s) == 0

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    def test_every_int_dtype(self, dtype):
        s = make([1, 2, 3, 4, 120])
        assert s.discard(np.array([2, 2, 99], dtype=dtype)) == 1
        assert s.discard(dtype(120)) == 1
        assert s.discard(np.array(1, dtype=dtype)) == 1
        assert members(s) == {3, 4}
        assert_consistent(s)

    @pytest.mark.parametrize("layout", [strided, reversed_view, readonly])
    def test_non_contiguous(self, layout):
        s = make([0, 1, 2, 3, 4])
        assert s.discard(layout([0, 1], np.uint16)) == 2
        assert order(s) == [4, 3, 2]

    @pytest.mark.parametrize(
        "query",
        [
            FLAT_LIMIT,
            2**40,
            2**63 - 1,
            np.uint64(2**63 + 1),
            np.uint64(2**64 - 1),
            2**64,
            2**100,
            np.array([2**63, 2**64 - 1], dtype=np.uint64),
            [FLAT_LIMIT, 2**64],
        ],
        ids=[
            "2**31",
            "2**40",
            "2**63-1",
            "u64-2**63+1",
            "u64-max",
            "2**64",
            "2**100",
            "u64-array",
            "list-2**64",
        ],
    )
    def test_out_of_range_non_negative_is_absent(self, query):
        s = make([1, 2])
        assert s.discard(query) == 0
        assert order(s) == [1, 2]

    def test_out_of_range_mixed_with_members(self):
        s = make([1, 2, 3])
        assert s.discard([2**64, 2, 2**40]) == 1
        assert s.discard(np.array([2**63, 3], dtype=np.uint64)) == 1
        assert order(s) == [1]

    def test_discarding_ids_that_sit_past_n(self):
        # After a removal the removed id stays in dense just past n; it must not
        # be mistaken for a member by a later discard.
        s = make([1, 2, 3])
        assert s.discard(3) == 1
        assert s.discard(3) == 0
        assert s.discard([3, 3]) == 0
        assert order(s) == [1, 2]


class TestRemove:
    def test_remove_returns_number_removed(self):
        s = make([0, 1, 2, 3, 4])
        r = s.remove([0, 1])
        assert is_int_like(r)
        assert r == 2
        assert order(s) == [4, 3, 2]
        assert s.remove(4) == 1
        assert order(s) == [2, 3]

    def test_duplicates_count_once(self):
        s = make([5, 6, 7])
        assert s.remove([6, 6, 6]) == 1
        assert order(s) == [5, 7]

    def test_empty_batch(self):
        s = make([5, 6])
        assert s.remove([]) == 0
        assert order(s) == [5, 6]

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    def test_every_int_dtype(self, dtype):
        s = make([1, 2, 3, 120])
        assert s.remove(np.array([2, 120], dtype=dtype)) == 2
        assert s.remove(dtype(1)) == 1
        assert order(s) == [3]

    def test_absent_raises_key_error_naming_first_absent(self):
        s = make([10, 20, 30])
        snap = snapshot(s)
        with pytest.raises(KeyError) as info:
            s.remove([10, 20, 77, 88])
        assert "77" in str(info.value)
        assert_unchanged(s, snap)

    def test_absent_duplicated(self):
        s = make([10])
        with pytest.raises(KeyError, match="7"):
            s.remove([7, 7])
        assert order(s) == [10]

    def test_remove_from_empty(self):
        s = SparseSet()
        with pytest.raises(KeyError):
            s.remove(1)

    def test_remove_previously_removed(self):
        s = make([1, 2, 3])
        s.remove(3)
        with pytest.raises(KeyError, match="3"):
            s.remove(3)
        assert order(s) == [1, 2]

    @pytest.mark.parametrize("bad", [FLAT_LIMIT, 2**40, 2**64])
    def test_remove_out_of_range_non_negative_is_key_error(self, bad):
        s = make([1])
        with pytest.raises(KeyError) as info:
            s.remove([1, bad])
        assert str(bad) in str(info.value)
        assert order(s) == [1]


# --------------------------------------------------------------------------
# contains / index / in
# --------------------------------------------------------------------------


class TestContainsIndex:
    def test_scalar_contains_returns_bool(self):
        s = make([3, 8])
        for q, want in [
            (3, True),
            (4, False),
            (np.int16(8), True),
            (np.array(8), True),
        ]:
            r = s.contains(q)
            assert is_bool_like(r), type(r)
            assert bool(r) is want

    def test_scalar_index_returns_int(self):
        s = make([3, 8])
        for q, want in [(3, 0), (8, 1), (4, -1), (np.uint8(8), 1), (np.array(3), 0)]:
            r = s.index(q)
            assert is_int_like(r), type(r)
            assert r == want

    def test_batch_contains_returns_bool_array(self):
        s = make([3, 8])
        r = s.contains([8, 1, 3, 3])
        assert isinstance(r, np.ndarray)
        assert r.dtype == np.bool_
        np.testing.assert_array_equal(r, [True, False, True, True])
        r = s.contains((8,))
        assert isinstance(r, np.ndarray)
        assert r.shape == (1,)

    def test_batch_index_returns_int_array(self):
        s = make([3, 8])
        r = s.index(np.array([8, 1, 3]))
        assert isinstance(r, np.ndarray)
        assert np.issubdtype(r.dtype, np.signedinteger)
        np.testing.assert_array_equal(r, [1, -1, 0])

    @pytest.mark.parametrize(
        "empty", [[], (), np.array([], dtype=np.int64), np.array([], dtype=np.uint16)]
    )
    def test_empty_batch(self, empty):
        s = make([3, 8])
        c = s.contains(empty)
        assert isinstance(c, np.ndarray)
        assert c.shape == (0,)
        assert c.dtype == np.bool_
        i = s.index(empty)
        assert isinstance(i, np.ndarray)
        assert i.shape == (0,)

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    def test_every_int_dtype(self, dtype):
        s = make([1, 100, 7])
        q = np.array([7, 2, 100, 1, 127], dtype=dtype)
        np.testing.assert_array_equal(s.contains(q), [True, False, True, True, False])
        np.testing.assert_array_equal(s.index(q), [2, -1, 1, 0, -1])
        assert s.contains(dtype(7))
        assert s.index(dtype(100)) == 1
        assert s.index(np.array(100, dtype=dtype)) == 1
        assert dtype(7) in s
        assert dtype(8) not in s

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    @pytest.mark.parametrize("layout", [strided, reversed_view, readonly])
    def test_non_contiguous(self, dtype, layout):
        s = make([1, 100, 7])
        q = layout([7, 2, 100, 1], dtype)
        np.testing.assert_array_equal(s.contains(q), [True, False, True, True])
        np.testing.assert_array_equal(s.index(q), [2, -1, 1, 0])

    def test_out_of_range_queries_are_absent(self):
        s = make([1, 2])
        for q in [
            FLAT_LIMIT - 1,
            FLAT_LIMIT,
            2**40,
            2**48,
            2**63 - 1,
            np.int64(2**62),
            np.uint64(2**63),
            np.uint64(2**64 - 1),
            2**64,
            2**100,
        ]:
            assert not s.contains(q), q
            assert s.index(q) == -1, q
            assert (q in s) is False, q

    def test_out_of_range_batch_queries(self):
        s = make([1, 2])
        q64 = np.array([1, FLAT_LIMIT, 2**40, 2], dtype=np.int64)
        np.testing.assert_array_equal(s.contains(q64), [True, False, False, True])
        np.testing.assert_array_equal(s.index(q64), [0, -1, -1, 1])
        qu = np.array([2**63, 2, 2**64 - 1, 1], dtype=np.uint64)
        np.testing.assert_array_equal(s.contains(qu), [False, True, False, True])
        np.testing.assert_array_equal(s.index(qu), [-1, 1, -1, 0])
        # numpy would infer uint64 for the first list and object for the second.
        np.testing.assert_array_equal(s.contains([2, 2**63]), [True, False])
        np.testing.assert_array_equal(s.contains([1, 2**64]), [True, False])
        np.testing.assert_array_equal(s.index([2**100, 2]), [-1, 1])

    def test_in_operator(self):
        s = make([3, 8])
        assert (3 in s) is True
        assert (4 in s) is False
        assert np.int32(8) in s
        assert np.uint64(3) in s

    @pytest.mark.parametrize("neg", [-1, np.int8(-1), np.int64(-(2**63)), -(2**70)])
    def test_negative_in_is_false(self, neg):
        # docs/contract.md#the-set-protocol: `x in s` never raises for a hashable x.
        s = make([3, 8])
        assert (neg in s) is False

    @pytest.mark.parametrize("neg", [-1, np.int8(-1), -(2**70)])
    def test_negative_contains_raises(self, neg):
        # A negative id in a batch method is a bug upstream, queries included.
        s = make([3, 8])
        with pytest.raises(ValueError, match="non-negative"):
            s.contains(neg)

    def test_after_removal_tail_is_not_member(self):
        s = make([1, 2, 3, 4])
        s.discard([2, 4])
        np.testing.assert_array_equal(s.contains([1, 2, 3, 4]), [1, 0, 1, 0])
        np.testing.assert_array_equal(s.index([1, 2, 3, 4]), [0, -1, 1, -1])


# --------------------------------------------------------------------------
# keep_only
# --------------------------------------------------------------------------


class TestKeepOnly:
    def test_returns_number_removed(self):
        s = make([1, 2, 3, 4, 5, 6])
        r = s.keep_only([2, 4, 4, 99, 6])
        assert is_int_like(r)
        assert r == 3
        assert members(s) == {2, 4, 6}
        assert_consistent(s)

    def test_empty_keeps_nothing(self):
        s = make([1, 2, 3])
        assert s.keep_only([]) == 3
        assert len(s) == 0

    def test_all(self):
        s = make([1, 2, 3])
        assert s.keep_only([3, 2, 1, 0]) == 0
        assert members(s) == {1, 2, 3}

    def test_out_of_range_non_members_ignored(self):
        s = make([1, 2, 3])
        assert s.keep_only([2, FLAT_LIMIT, 2**64]) == 2
        assert members(s) == {2}
        assert s.keep_only(np.array([2, 2**63], dtype=np.uint64)) == 0
        assert members(s) == {2}

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    @pytest.mark.parametrize("layout", [np.array, strided, reversed_view])
    def test_dtypes_and_layouts(self, dtype, layout):
        s = make([1, 2, 3, 120])
        assert s.keep_only(layout([120, 3, 50], dtype=dtype)) == 2
        assert members(s) == {3, 120}
        assert_consistent(s)

    def test_scalar(self):
        s = make([1, 2, 3])
        assert s.keep_only(2) == 2
        assert members(s) == {2}


# --------------------------------------------------------------------------
# checkpoint / rollback
# --------------------------------------------------------------------------


class TestCheckpointRollback:
    def test_remove_then_backtrack(self):
        s = make([1, 5, 10, 15, 20])
        token = s.checkpoint()
        s.remove([5, 20])
        s.discard(1)
        assert members(s) == {10, 15}
        s.rollback(token)
        assert members(s) == {1, 5, 10, 15, 20}
        assert_consistent(s)

    def test_keep_only_is_covered(self):
        s = make(list(range(10)))
        token = s.checkpoint()
        s.keep_only([3, 7])
        assert members(s) == {3, 7}
        s.rollback(token)
        assert members(s) == set(range(10))
        assert_consistent(s)

    def test_rollback_without_removals_is_a_no_op(self):
        s = make([4, 2])
        token = s.checkpoint()
        s.rollback(token)
        assert members(s) == {4, 2}

    def test_checkpoint_of_empty_set(self):
        s = SparseSet()
        token = s.checkpoint()
        s.rollback(token)
        assert len(s) == 0

    def test_nested_tokens(self):
        s = make(list(range(8)))
        t1 = s.checkpoint()
        s.discard([0, 1])
        t2 = s.checkpoint()
        s.remove([5, 6])
        s.keep_only([2, 3, 4])
        assert members(s) == {2, 3, 4}
        s.rollback(t2)
        assert members(s) == {2, 3, 4, 5, 6, 7}
        s.discard(7)
        s.rollback(t1)
        assert members(s) == set(range(8))
        assert_consistent(s)

    def test_rollback_to_older_drops_newer(self):
        s = make(list(range(6)))
        t1 = s.checkpoint()
        s.discard(0)
        t2 = s.checkpoint()
        s.discard(1)
        s.rollback(t1)
        assert members(s) == set(range(6))
        snap = snapshot(s)
        with pytest.raises(ValueError):
            s.rollback(t2)
        assert_unchanged(s, snap)

    def test_dropped_token_stays_dropped_after_new_checkpoint(self):
        s = make(list(range(6)))
        t1 = s.checkpoint()
        s.discard(0)
        t2 = s.checkpoint()
        s.discard(1)
        s.rollback(t1)  # drops t2
        s.discard(0)  # same size as when t2 was taken
        t3 = s.checkpoint()
        s.discard(2)
        with pytest.raises(ValueError):
            s.rollback(t2)
        s.rollback(t3)
        assert members(s) == {1, 2, 3, 4, 5}

    def test_set_is_usable_after_rollback(self):
        s = make([1, 2, 3, 4])
        token = s.checkpoint()
        s.discard([1, 2])
        s.rollback(token)
        assert s.add([2, 9]) == 1
        assert s.discard(1) == 1
        assert members(s) == {2, 3, 4, 9}
        assert_consistent(s)

    def test_add_of_new_id_invalidates(self):
        s = make([1, 2, 3])
        token = s.checkpoint()
        s.discard(1)
        s.add(50)
        snap = snapshot(s)
        with pytest.raises(ValueError):
            s.rollback(token)
        assert_unchanged(s, snap)

    def test_add_that_grows_invalidates(self):
        s = make([1, 2, 3], capacity=8)
        token = s.checkpoint()
        s.discard(2)
        s.add(100_000)
        with pytest.raises(ValueError):
            s.rollback(token)
        assert members(s) == {1, 3, 100_000}

    def test_invalid_token_stays_invalid_after_new_checkpoint(self):
        s = make([1, 2, 3])
        old = s.checkpoint()
        s.discard(1)
        s.add(40)
        new = s.checkpoint()
        s.discard(2)
        with pytest.raises(ValueError):
            s.rollback(old)
        s.rollback(new)
        assert members(s) == {2, 3, 40}

    def test_clear_invalidates(self):
        s = make([1, 2, 3])
        token = s.checkpoint()
        s.discard(2)
        s.clear()
        with pytest.raises(ValueError):
            s.rollback(token)
        assert len(s) == 0

    def test_sort_invalidates(self):
        s = make([9, 3, 7, 1])
        token = s.checkpoint()
        s.discard(7)
        s.sort()
        with pytest.raises(ValueError):
            s.rollback(token)
        assert order(s) == [1, 3, 9]

    def test_growing_reserve_invalidates(self):
        s = make([1, 2, 3], capacity=8)
        token = s.checkpoint()
        s.discard(3)
        s.reserve(1_000_000)
        with pytest.raises(ValueError):
            s.rollback(token)
        assert members(s) == {1, 2}

    def test_non_growing_reserve_keeps_token(self):
        s = make([1, 2, 3], capacity=64)
        token = s.checkpoint()
        s.discard(3)
        s.reserve(4)
        s.rollback(token)
        assert members(s) == {1, 2, 3}

    def test_reserve_within_capacity_keeps_token(self):
        # capacity 1000 already covers 500: nothing grows, nothing is invalid
        s = SparseSet.from_ids([1, 2, 3], capacity=1_000).copy()
        token = s.checkpoint()
        s.discard(2)
        s.reserve(500)
        s.rollback(token)
        assert members(s) == {1, 2, 3}

    def test_token_of_another_set(self):
        s = make([1, 2, 3])
        t = make([1, 2, 3])
        token = s.checkpoint()
        t.discard(1)
        snap = snapshot(t)
        with pytest.raises(ValueError):
            t.rollback(token)
        assert_unchanged(t, snap)

    def test_token_of_the_original_on_a_copy(self):
        s = make([1, 2, 3])
        token = s.checkpoint()
        c = s.copy()
        c.discard(1)
        with pytest.raises(ValueError):
            c.rollback(token)
        assert members(c) == {2, 3}
        s.discard(2)
        s.rollback(token)
        assert members(s) == {1, 2, 3}

    def test_garbage_token(self):
        s = make([1, 2, 3])
        with pytest.raises((TypeError, ValueError)):
            s.rollback(object())
        assert members(s) == {1, 2, 3}

    @pytest.mark.parametrize(
        ("bad", "exc"),
        [
            ([60, 61, -1], ValueError),
            ([60, 100_000, FLAT_LIMIT], ValueError),
            ([60, 61, 2.5], TypeError),
            (np.array([60.0, 61.0]), TypeError),
            (np.array([[60, 61]]), ValueError),
            (-5, ValueError),
        ],
        ids=["negative", "too-large-after-growth-id", "float", "floats", "2d", "neg"],
    )
    def test_failed_add_keeps_checkpoint_valid(self, bad, exc):
        s = make([1, 2, 3, 4], capacity=64, index="flat")
        token = s.checkpoint()
        s.discard([2, 4])
        snap = snapshot(s)
        with pytest.raises(exc):
            s.add(bad)
        assert_unchanged(s, snap)
        s.rollback(token)
        assert members(s) == {1, 2, 3, 4}
        assert_consistent(s)

    def test_failed_remove_keeps_checkpoint_valid(self):
        s = make([1, 2, 3, 4])
        token = s.checkpoint()
        s.discard(1)
        with pytest.raises(KeyError):
            s.remove([2, 3, 99])
        s.rollback(token)
        assert members(s) == {1, 2, 3, 4}


# --------------------------------------------------------------------------
# clear / sort / copy / reserve / nbytes
# --------------------------------------------------------------------------


class TestClear:
    def test_clear(self):
        s = make([5, 1, 9])
        assert s.clear() is None
        assert len(s) == 0
        assert not s
        assert s.ids.shape == (0,)
        np.testing.assert_array_equal(s.contains([5, 1, 9]), [False] * 3)
        np.testing.assert_array_equal(s.index([5, 1, 9]), [-1] * 3)
        assert_consistent(s)

    def test_add_after_clear_ignores_stale_sparse(self):
        s = make(list(range(100)))
        s.clear()
        assert s.add([50, 7]) == 2
        assert order(s) == [50, 7]
        want = np.zeros(100, dtype=bool)
        want[[50, 7]] = True
        np.testing.assert_array_equal(s.contains(np.arange(100)), want)
        assert_consistent(s)

    def test_clear_empty(self):
        s = SparseSet()
        assert s.clear() is None
        assert len(s) == 0


class TestSort:
    def test_sort(self):
        s = make([9, 3, 7, 1, 120])
        s.discard(7)
        assert s.sort() is None
        assert order(s) == [1, 3, 9, 120]
        assert_consistent(s)
        s.add(0)
        assert order(s) == [1, 3, 9, 120, 0]

    def test_sort_empty_and_single(self):
        s = SparseSet()
        assert s.sort() is None
        s.add(4)
        s.sort()
        assert order(s) == [4]

    def test_sort_large(self):
        rng = np.random.default_rng(7)
        ids = rng.permutation(50_000)[:20_000]
        s = SparseSet.from_ids(ids)
        s.sort()
        np.testing.assert_array_equal(s.ids, np.sort(ids))
        assert_consistent(s)


class TestCopy:
    def test_copy_is_equal_and_independent(self):
        s = make([4, 8, 15, 16, 23, 42])
        s.discard(15)
        c = s.copy()
        assert isinstance(c, SparseSet)
        assert c is not s
        assert c == s
        assert members(c) == {4, 8, 16, 23, 42}
        c.add([1, 100_000])
        c.discard([4, 8])
        assert members(s) == {4, 8, 16, 23, 42}
        s.discard(42)
        s.add(7)
        assert members(c) == {1, 16, 23, 42, 100_000}
        assert_consistent(s)
        assert_consistent(c)

    @pytest.mark.parametrize("fn", [copy.copy, copy.deepcopy])
    def test_copy_module(self, fn):
        s = make([3, 1, 2])
        c = fn(s)
        assert c == s
        c.discard([3, 1])
        c.add(9)
        assert members(s) == {1, 2, 3}
        assert_consistent(s)


class TestReserve:
    def test_reserve_keeps_members_and_order(self):
        s = make([5, 1, 7, 3], capacity=8)
        s.discard(1)
        s.reserve(1_000_000)
        assert order(s) == [5, 3, 7]
        s.add(999_999)
        assert order(s) == [5, 3, 7, 999_999]
        assert_consistent(s)

    def test_reserve_smaller_is_harmless(self):
        s = make([5, 100], capacity=128)
        s.reserve(0)
        s.reserve(3)
        assert order(s) == [5, 100]
        assert_consistent(s)

    def test_nbytes(self):
        s = SparseSet(capacity=16)
        s.add([1, 2, 3])
        small = s.nbytes
        assert isinstance(small, (int, np.integer))
        assert small >= s.ids.nbytes
        assert small > 0
        s.reserve(1_000_000)
        big = s.nbytes
        assert big >= small
        # flat index: sparse alone is one uint32 per id of the reserved range
        assert big >= 4 * 1_000_000


# --------------------------------------------------------------------------
# ids, __array__, len, iter, repr, pickle
# --------------------------------------------------------------------------


class TestViews:
    def test_ids_is_read_only(self):
        s = make([1, 2, 3])
        ids = s.ids
        assert isinstance(ids, np.ndarray)
        assert ids.ndim == 1
        assert np.issubdtype(ids.dtype, np.integer)
        assert not ids.flags.writeable
        with pytest.raises(ValueError):
            ids[0] = 7
        assert order(s) == [1, 2, 3]

    def test_ids_read_only_after_growth_and_removal(self):
        s = make([1, 2, 3], capacity=4)
        s.add(10_000)
        s.discard(2)
        assert not s.ids.flags.writeable
        assert len(s.ids) == len(s) == 3

    def test_array_protocol(self):
        s = make([7, 3, 5])
        a = np.asarray(s)
        np.testing.assert_array_equal(a, [7, 3, 5])
        b = np.array(s, dtype=np.int64)
        assert b.dtype == np.int64
        np.testing.assert_array_equal(b, [7, 3, 5])
        c = np.array(s)
        c[0] = 99
        assert 99 not in s
        assert order(s) == [7, 3, 5]

    def test_array_protocol_without_numpy2_deprecation(self):
        s = make([7, 3, 5])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.asarray(s)
            np.array(s)
            np.array(s, copy=True)
            np.asarray(s, dtype=np.int64)

    def test_len(self):
        s = SparseSet()
        assert len(s) == 0
        s.add([1, 2, 2, 3])
        assert len(s) == 3
        s.discard(2)
        assert len(s) == 2
        assert isinstance(len(s), int)

    def test_iter_yields_members_in_dense_order(self):
        s = make([5, 1, 9, 4])
        s.discard(1)
        got = list(s)
        assert got == [5, 4, 9]
        assert all(is_int_like(x) for x in got)
        assert set(s) == {4, 5, 9}

    def test_iter_empty(self):
        assert list(SparseSet()) == []

    def test_repr(self):
        assert "SparseSet" in repr(SparseSet())
        s = make([1, 2, 3])
        r = repr(s)
        assert isinstance(r, str)
        assert "SparseSet" in r
        assert isinstance(str(s), str)

    @pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
    def test_pickle_roundtrip(self, protocol):
        s = make([10, 3, 7, 1_000])
        s.discard(3)
        t = pickle.loads(pickle.dumps(s, protocol=protocol))
        assert isinstance(t, SparseSet)
        assert t == s
        assert members(t) == {10, 7, 1_000}
        assert_consistent(t)
        t.add([3, 50_000])
        t.discard(10)
        assert members(s) == {10, 7, 1_000}
        assert members(t) == {3, 7, 1_000, 50_000}
        assert_consistent(t)

    def test_pickle_empty(self):
        t = pickle.loads(pickle.dumps(SparseSet()))
        assert len(t) == 0
        t.add(5)
        assert members(t) == {5}


# --------------------------------------------------------------------------
# set algebra
# --------------------------------------------------------------------------

OPERAND_KINDS = {
    "sparseset": SparseSet.from_ids,
    "set": set,
    "frozenset": frozenset,
}
IDS_KINDS = {
    **OPERAND_KINDS,
    "list": list,
    "tuple": tuple,
    "int64": lambda v: np.array(v, dtype=np.int64),
    "uint8": lambda v: np.array(v, dtype=np.uint8),
    "int16-strided": lambda v: strided(v, np.int16),
    "uint64-reversed": lambda v: reversed_view(v, np.uint64),
    "readonly-ids-view": lambda v: SparseSet.from_ids(v).ids,
    "list-with-duplicates": lambda v: list(v) + list(v)[::-1],
    "array-with-duplicates": lambda v: np.array(list(v) * 3, dtype=np.int32),
}


@pytest.fixture
def a():
    return SparseSet.from_ids(A)


class TestOperators:
    @pytest.mark.parametrize("kind", OPERAND_KINDS)
    def test_binary_operators(self, a, kind):
        b = OPERAND_KINDS[kind](B)
        for result, want in [
            (a | b, A_OR_B),
            (a & b, A_AND_B),
            (a - b, A_MINUS_B),
            (a ^ b, A_XOR_B),
        ]:
            assert isinstance(result, SparseSet)
            assert members(result) == want
            assert_consistent(result)
        assert members(a) == set(A)
        assert set(b) == set(B)

    @pytest.mark.parametrize("kind", ["set", "frozenset"])
    def test_reflected_operators_with_python_sets(self, a, kind):
        b = OPERAND_KINDS[kind](B)
        assert set(b | a) == A_OR_B
        assert set(b & a) == A_AND_B
        assert set(b - a) == B_MINUS_A
        assert set(b ^ a) == A_XOR_B
        assert members(a) == set(A)

    def test_b_minus_a(self, a):
        b = SparseSet.from_ids(B)
        assert members(b - a) == B_MINUS_A

    @pytest.mark.parametrize("kind", OPERAND_KINDS)
    def test_comparisons(self, a, kind):
        same = OPERAND_KINDS[kind](A[::-1])
        sup = OPERAND_KINDS[kind](sorted(A_OR_B))
        other = OPERAND_KINDS[kind](B)
        assert a == same
        assert same == a
        assert (a != same) is False
        assert a != other
        assert a <= same
        assert a <= sup
        assert a < sup
        assert not (a < same)
        assert sup >= a
        assert sup > a
        assert not (a <= other)
        assert not (a >= other)
        assert a >= same

    def test_equality_ignores_order_and_capacity(self):
        s = SparseSet(capacity=4)
        s.add([3, 2, 1])
        t = SparseSet(capacity=100_000)
        t.add([1, 2, 3, 99_999])
        t.discard(99_999)
        assert s == t
        assert t == s
        assert SparseSet() == SparseSet(capacity=10)
        assert SparseSet() == set()

    @pytest.mark.parametrize("kind", IDS_KINDS)
    def test_isdisjoint(self, a, kind):
        assert not a.isdisjoint(IDS_KINDS[kind](B))
        assert a.isdisjoint(IDS_KINDS[kind]([2, 4, 100]))
        assert a.isdisjoint(IDS_KINDS[kind]([]))

    @pytest.mark.parametrize("kind", OPERAND_KINDS)
    def test_in_place_operators(self, kind):
        for op, want in [
            ("|=", A_OR_B),
            ("&=", A_AND_B),
            ("-=", A_MINUS_B),
            ("^=", A_XOR_B),
        ]:
            s = SparseSet.from_ids(A)
            before = s
            b = OPERAND_KINDS[kind](B)
            if op == "|=":
                s |= b
            elif op == "&=":
                s &= b
            elif op == "-=":
                s -= b
            else:
                s ^= b
            assert s is before, op
            assert members(s) == want, op
            assert_consistent(s)

    def test_algebra_with_empty(self, a):
        e = SparseSet()
        assert members(a | e) == set(A)
        assert len(a & e) == 0
        assert members(a - e) == set(A)
        assert members(e - a) == set()
        assert members(a ^ e) == set(A)
        assert e <= a
        assert a.isdisjoint(e)

    def test_python_set_operand_with_out_of_range_ids(self, a):
        # ids past the flat range can never be members, so queries answer
        # "absent" for them; only results that would have to hold them raise
        a = SparseSet.from_ids(A, index="flat")
        big = 2**40
        other = {5, 15, big}
        assert members(a & other) == {5, 15}
        assert set(other & a) == {5, 15}
        assert members(a - other) == {1, 10, 20}
        assert a <= set(A) | {big}
        assert a < set(A) | {big}
        assert not (a >= set(A) | {big})
        assert a != set(A) | {big}
        assert not a.isdisjoint(other)
        with pytest.raises(ValueError, match=str(big)):
            _ = a | other
        with pytest.raises(ValueError, match=str(big)):
            _ = a ^ other
        s = SparseSet.from_ids(A)
        s &= other
        assert members(s) == {5, 15}
        s = SparseSet.from_ids(A)
        s -= other
        assert members(s) == {1, 10, 20}

    def test_algebra_across_capacities(self):
        s = SparseSet.from_ids([1, 2, 3], capacity=4)
        t = SparseSet.from_ids([3, 500_000], capacity=1_000_000)
        assert members(s | t) == {1, 2, 3, 500_000}
        assert members(t | s) == {1, 2, 3, 500_000}
        assert members(s & t) == {3}
        assert members(t & s) == {3}
        assert members(t - s) == {500_000}
        assert members(s ^ t) == {1, 2, 500_000}
        r = s | t
        r.add(7)
        assert 7 not in s
        assert 7 not in t

    def test_results_are_new_objects(self, a):
        b = SparseSet.from_ids(B)
        for r in (a | b, a & b, a - b, a ^ b, a | a, a & a):
            assert r is not a
            assert r is not b
        r = a | b
        r.discard(1)
        assert 1 in a


class TestNamedMethods:
    @pytest.mark.parametrize("kind", IDS_KINDS)
    def test_pure_methods(self, a, kind):
        b = IDS_KINDS[kind](B)
        for name, want in [
            ("union", A_OR_B),
            ("intersection", A_AND_B),
            ("difference", A_MINUS_B),
            ("symmetric_difference", A_XOR_B),
        ]:
            r = getattr(a, name)(b)
            assert isinstance(r, SparseSet), name
            assert members(r) == want, name
            assert_consistent(r)
        assert members(a) == set(A)

    @pytest.mark.parametrize("kind", IDS_KINDS)
    def test_subset_superset(self, a, kind):
        conv = IDS_KINDS[kind]
        assert a.issubset(conv(sorted(A_OR_B)))
        assert a.issubset(conv(A))
        assert not a.issubset(conv(B))
        assert a.issuperset(conv([5, 10]))
        assert a.issuperset(conv([]))
        assert not a.issuperset(conv([5, 6]))
        assert SparseSet().issubset(conv([]))

    @pytest.mark.parametrize("kind", IDS_KINDS)
    def test_update_methods(self, kind):
        for name, want in [
            ("update", A_OR_B),
            ("intersection_update", A_AND_B),
            ("difference_update", A_MINUS_B),
            ("symmetric_difference_update", A_XOR_B),
        ]:
            s = SparseSet.from_ids(A)
            getattr(s, name)(IDS_KINDS[kind](B))
            assert members(s) == want, name
            assert_consistent(s)

    def test_methods_with_large_and_empty_operands(self, a):
        assert members(a.union([1_000_000])) == set(A) | {1_000_000}
        assert members(a.intersection([2**40, 5])) == {5}
        assert members(a.difference(np.array([2**63, 1], dtype=np.uint64))) == {
            5,
            10,
            15,
            20,
        }
        assert members(a.union([])) == set(A)
        assert len(a.intersection([])) == 0
        s = SparseSet.from_ids(A)
        s.symmetric_difference_update([])
        assert members(s) == set(A)
        s.update([70_000, 1])
        assert members(s) == set(A) | {70_000}

    @pytest.mark.parametrize(
        "name",
        ["union", "symmetric_difference", "update", "symmetric_difference_update"],
    )
    def test_negative_operand_raises_where_it_would_be_added(self, name):
        s = SparseSet.from_ids(A)
        snap = snapshot(s)
        with pytest.raises(ValueError, match="-2"):
            getattr(s, name)([30, -2])
        assert_unchanged(s, snap)

    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("intersection", {10}),
            ("difference", set(A) - {10}),
            ("issubset", False),
            ("issuperset", False),
            ("isdisjoint", False),
        ],
    )
    @pytest.mark.parametrize("odd", [-2, 1.5, "x", None])
    def test_non_id_operand_is_a_non_member(self, name, expected, odd):
        # docs/contract.md#the-set-protocol: where the answer needs no new
        # member, an element that cannot be an id is simply not a member, as
        # for `set`.
        s = SparseSet.from_ids(A)
        snap = snapshot(s)
        result = getattr(s, name)([10, odd])
        assert result == getattr(set(A), name)([10, odd]) == expected
        assert_unchanged(s, snap)

    @pytest.mark.parametrize("name", ["intersection_update", "difference_update"])
    def test_non_id_operand_in_place(self, name):
        s = SparseSet.from_ids(A)
        model = set(A)
        getattr(s, name)([30, -2, 1.5, "x"])
        getattr(model, name)([30, -2, 1.5, "x"])
        assert members(s) == model
        assert_consistent(s)

    @pytest.mark.parametrize("name", ["update", "symmetric_difference_update", "union"])
    def test_too_large_operand_for_adding_methods(self, name):
        s = SparseSet.from_ids(A, index="flat")
        snap = snapshot(s)
        with pytest.raises(ValueError, match=str(FLAT_LIMIT)):
            getattr(s, name)([30, 31, FLAT_LIMIT])
        assert_unchanged(s, snap)


class TestPop:
    def test_pop_returns_a_member(self):
        s = make([4, 8, 15])
        seen = set()
        for k in range(3):
            x = s.pop()
            assert is_int_like(x)
            assert x in {4, 8, 15}
            assert x not in s
            assert len(s) == 2 - k
            seen.add(int(x))
            assert_consistent(s)
        assert seen == {4, 8, 15}

    def test_pop_empty(self):
        s = SparseSet()
        with pytest.raises(KeyError):
            s.pop()
        s.add(1)
        s.discard(1)
        with pytest.raises(KeyError):
            s.pop()


class TestAliasing:
    """Passing a set's own ``ids`` view (or the set itself) back to it."""

    def test_discard_own_ids(self):
        s = make([0, 1, 2, 3, 4, 5])
        assert s.discard(s.ids) == 6
        assert len(s) == 0

    def test_remove_own_ids_slice(self):
        s = make([0, 1, 2, 3, 4, 5])
        victims = s.ids[::2]
        assert s.remove(victims) == 3
        assert members(s) == {1, 3, 5}
        assert_consistent(s)

    def test_keep_only_own_ids_slice(self):
        s = make([0, 1, 2, 3, 4, 5])
        assert s.keep_only(s.ids[:2]) == 4
        assert members(s) == {0, 1}

    def test_keep_only_own_ids_reversed(self):
        s = make([0, 1, 2, 3])
        assert s.keep_only(s.ids[::-1]) == 0
        assert members(s) == {0, 1, 2, 3}
        view = s.ids[:0:-2]
        want = set(view.tolist())
        assert len(want) == 2
        assert s.keep_only(view) == 2
        assert members(s) == want
        assert_consistent(s)

    def test_add_own_ids(self):
        s = make([0, 1, 2])
        assert s.add(s.ids) == 0
        assert s.contains(s.ids).all()

    def test_difference_update_own_ids(self):
        s = make([0, 1, 2, 3])
        s.difference_update(s.ids)
        assert len(s) == 0

    def test_in_place_with_itself(self):
        for op, want in [("|=", {1, 2}), ("&=", {1, 2}), ("-=", set()), ("^=", set())]:
            s = make([1, 2])
            if op == "|=":
                s |= s
            elif op == "&=":
                s &= s
            elif op == "-=":
                s -= s
            else:
                s ^= s
            assert members(s) == want, op
            assert_consistent(s)

    def test_named_with_itself(self):
        s = make([1, 2, 3])
        s.symmetric_difference_update(s)
        assert len(s) == 0
        s = make([1, 2, 3])
        s.intersection_update(s)
        assert members(s) == {1, 2, 3}
        s.difference_update(s)
        assert len(s) == 0


# --------------------------------------------------------------------------
# hypothesis: algebra and order against Python models
# --------------------------------------------------------------------------

small_ids = st.lists(st.integers(0, 60), max_size=25)


@pytest.mark.parametrize("one_call_up_to", [0, 64], ids=["general", "one-call"])
@given(xs=small_ids, ys=small_ids)
def test_algebra_matches_python_sets(one_call_up_to, xs, ys):
    """Both paths of the operators and comparisons: one kernel call for
    small flat sets (the operator's own path), the general one (bitmap or
    index probes)."""
    s, t = SparseSet.from_ids(xs), SparseSet.from_ids(ys)
    px, py = set(xs), set(ys)
    with mock.patch.object(sparse_set, "SMALL_ALGEBRA", one_call_up_to):
        results = {"|": s | t, "&": s & t, "-": s - t, "^": s ^ t}
        relations = [
            (s <= t, px <= py),
            (s < t, px < py),
            (s >= t, px >= py),
            (s > t, px > py),
            (s == t, px == py),
            (s != t, px != py),
            (s.isdisjoint(t), px.isdisjoint(py)),
            (t.isdisjoint(s), py.isdisjoint(px)),
            # A pending result (the one-call path's) as an operand.
            (results["&"] <= s, True),
            (results["-"].isdisjoint(t), True),
            (results["|"] == t, px | py == py),
        ]
    for answer, expected in relations:
        assert answer is expected
    assert members(results["|"]) == px | py
    assert members(results["&"]) == px & py
    assert members(results["-"]) == px - py
    assert members(results["^"]) == px ^ py
    for result in results.values():
        assert_consistent(result)
        assert result.kind == "flat"
    # Room for the left operand's ids, and both operands' for | and ^.
    assert results["&"].capacity == results["-"].capacity == s.capacity
    assert results["|"].capacity == results["^"].capacity == max(s.capacity, t.capacity)
    arr = np.array(ys, dtype=np.int64)
    assert members(s.union(arr)) == px | py
    assert members(s.intersection(arr)) == px & py
    assert members(s.difference(arr)) == px - py
    assert members(s.symmetric_difference(arr)) == px ^ py
    assert s.issubset(arr) == (px <= py)
    assert s.issuperset(arr) == (px >= py)
    u = s.copy()
    u.symmetric_difference_update(ys)
    assert members(u) == px ^ py
    assert_consistent(u)
    assert members(s) == px
    assert members(t) == py


@given(st.lists(st.lists(st.integers(0, 3_000), max_size=15), max_size=8))
def test_add_order_is_first_occurrence(batches):
    s = SparseSet(capacity=16)
    model = []
    for batch in batches:
        new = [x for x in dict.fromkeys(batch) if x not in model]
        assert s.add(batch) == len(new)
        model.extend(new)
        assert order(s) == model


def _swap_and_pop(model, batch):
    removed = 0
    for x in batch:
        if x in model:
            p = model.index(x)
            model[p] = model[-1]
            model.pop()
            removed += 1
    return removed


@given(
    st.lists(st.integers(0, 80), max_size=40),
    st.lists(st.lists(st.integers(0, 90), max_size=10), max_size=6),
)
def test_discard_order_is_sequential_swap_and_pop(initial, batches):
    s = SparseSet.from_ids([])
    s.add(initial)
    model = list(dict.fromkeys(initial))
    assert order(s) == model
    for batch in batches:
        removed = _swap_and_pop(model, batch)
        assert s.discard(np.array(batch, dtype=np.int64)) == removed
        assert order(s) == model


# --------------------------------------------------------------------------
# the bad-input catalogue
# --------------------------------------------------------------------------

DIM_WORDS = ("2-d", "2d", "ndim", "dimension", "1-d", "1d", "shape")


def _case(method, bad, exc, values, position=None, name=None):
    """One row: ``values`` is a tuple of acceptable spellings of the bad value."""
    return pytest.param(method, bad, exc, values, position, id=f"{method}-{name}")


# Inputs every id-taking method must reject the same way.
GENERIC_BAD = [
    # (input, exception, accepted spellings of the bad value, position, id)
    (True, TypeError, ("True", "bool"), None, "True"),
    (np.bool_(True), TypeError, ("True", "bool"), None, "np.bool_"),
    (np.array([True, False]), TypeError, ("True", "bool"), None, "bool-array"),
    ([10, 11, True], TypeError, ("True", "bool"), 2, "bool-in-list"),
    (1.5, TypeError, ("1.5",), None, "float"),
    (np.float64(2.0), TypeError, ("2.0", "float"), None, "np.float64-integral"),
    (np.array([1.0, 2.5]), TypeError, ("1.0", "float"), None, "float-array"),
    (np.array([2.0, 3.0]), TypeError, ("2.0", "float"), None, "float-array-integral"),
    ([10, 11, 12, 2.5], TypeError, ("2.5",), 3, "float-in-list"),
    (np.array([10, "ab"], dtype=object), TypeError, ("ab",), 1, "object-str"),
    (np.array([10, None], dtype=object), TypeError, ("None",), 1, "object-None"),
    (np.array([10, 11, 1.5], dtype=object), TypeError, ("1.5",), 2, "object-float"),
    ("abc", TypeError, ("abc",), None, "str"),
    (["abc"], TypeError, ("abc",), None, "str-in-list"),
    (
        np.array(["x7", "y8"]),
        TypeError,
        ("x7", "str", "<U", "unicode"),
        None,
        "str-arr",
    ),
    (None, TypeError, ("None",), None, "None"),
    ([10, None], TypeError, ("None",), 1, "None-in-list"),
    (-1, ValueError, ("-1",), None, "neg"),
    (np.int64(-5), ValueError, ("-5",), None, "np-neg"),
    (np.array(-6, dtype=np.int8), ValueError, ("-6",), None, "0d-neg"),
    (-(2**70), ValueError, (str(-(2**70)),), None, "huge-neg"),
    ([10, 20, -3, 30], ValueError, ("-3",), 2, "neg-in-list"),
    (np.array([10, 11, 12, 13, -9, 14], dtype=np.int8), ValueError, ("-9",), 4, "i8"),
    (strided([10, -7, 12], np.int32), ValueError, ("-7",), 1, "neg-strided"),
    (reversed_view([10, 11, -8], np.int16), ValueError, ("-8",), 2, "neg-reversed"),
    ([1, -1, 2**63], ValueError, ("-1",), 1, "neg-in-float-inferred-list"),
    (np.array([[1, 2], [3, 4]]), ValueError, DIM_WORDS, None, "2d-array"),
    ([[1, 2]], ValueError, DIM_WORDS, None, "2d-list"),
]

ID_METHODS = ["add", "discard", "remove", "contains", "index", "keep_only"]

ADD_BAD = [
    (FLAT_LIMIT, ValueError, (str(FLAT_LIMIT),), None, "2**31"),
    (np.uint64(2**63), ValueError, (str(2**63),), None, "u64-2**63"),
    (2**64, ValueError, (str(2**64),), None, "2**64"),
    ([10, FLAT_LIMIT], ValueError, (str(FLAT_LIMIT),), 1, "too-large-in-list"),
    (
        np.array([5, 6, 2**40], dtype=np.uint64),
        ValueError,
        (str(2**40),),
        2,
        "too-large-u64-array",
    ),
    ([1, 2**64], ValueError, (str(2**64),), 1, "2**64-in-list"),
    # several valid new ids, then the bad one
    ([60, 61, 62, 63, -4], ValueError, ("-4",), 4, "new-then-neg"),
    ([60, 61, 1_000, FLAT_LIMIT], ValueError, (str(FLAT_LIMIT),), 3, "new-then-big"),
    ([60, 61, 5_000, 7.5], TypeError, ("7.5",), 3, "new-then-float"),
    (
        strided([60, 61, 62, -2], np.int64),
        ValueError,
        ("-2",),
        3,
        "new-then-neg-array",
    ),
]

REMOVE_BAD = [
    (99, KeyError, ("99",), None, "absent"),
    ([10, 50, 99, 98], KeyError, ("99",), None, "present-then-absent"),
    ([10, 50, 30, 40, 77], KeyError, ("77",), None, "all-present-then-absent"),
    ([10, 20], KeyError, ("20",), None, "removed-id-past-n"),
    (np.array([40, 30, 10, 1_000], dtype=np.uint16), KeyError, ("1000",), None, "u16"),
]

# The in-place methods that may add members; intersection_update and
# difference_update treat non-ids as non-members (test_non_id_operand_*).
UPDATE_METHODS = ["update", "symmetric_difference_update"]
UPDATE_BAD = [
    ([60, 61, -2], ValueError, ("-2",), None, "neg"),
    ([60, 61, 1.5], TypeError, ("1.5",), None, "float"),
    (np.array([60.0]), TypeError, ("60", "float"), None, "float-array"),
]

CATALOGUE = (
    [_case(m, *row[:4], name=row[4]) for m in ID_METHODS for row in GENERIC_BAD]
    + [_case("add", *row[:4], name=row[4]) for row in ADD_BAD]
    + [_case("remove", *row[:4], name=row[4]) for row in REMOVE_BAD]
    + [_case(m, *row[:4], name=row[4]) for m in UPDATE_METHODS for row in UPDATE_BAD]
    + [
        _case("in", [1], TypeError, ("unhashable",), name="list"),
        _case("in", np.array([1, 2]), TypeError, ("unhashable",), name="array"),
        _case("update", [60, FLAT_LIMIT], ValueError, (str(FLAT_LIMIT),), name="big"),
        _case(
            "symmetric_difference_update",
            [60, FLAT_LIMIT],
            ValueError,
            (str(FLAT_LIMIT),),
            name="big",
        ),
    ]
)


@pytest.fixture
def victim():
    """A set with a non-trivial order and a removed id sitting past n."""
    s = SparseSet(capacity=64, index="flat")
    s.add([10, 20, 30, 40, 50])
    s.discard(20)
    assert order(s) == [10, 50, 30, 40]
    return s


@pytest.mark.parametrize(("method", "bad", "exc", "values", "position"), CATALOGUE)
def test_bad_input(victim, method, bad, exc, values, position):
    snap = snapshot(victim)
    with pytest.raises(exc) as info:
        if method == "in":
            _ = bad in victim
        else:
            getattr(victim, method)(bad)
    # a bad id is not an absent id
    if exc is not KeyError:
        assert not isinstance(info.value, KeyError)
    msg = str(info.value)
    assert any(v.lower() in msg.lower() for v in values), (values, msg)
    if position is not None:
        assert re.search(rf"\b{position}\b", msg), (position, msg)
    assert_unchanged(victim, snap)
    # the removed id 20 is still outside, the set still works
    assert 20 not in victim
    assert victim.add(20) == 1
    assert_consistent(victim)


# --------------------------------------------------------------------------
# one plain int: the scalar paths give the batch paths' answers
# --------------------------------------------------------------------------

KINDS = ["flat", "paged", "hash"]
#: Ids around each kind's edges: past capacity (growth), past the flat and
#: paged ranges, at the top of the hash range.
EDGE_IDS = [0, 1, 63, 64, 1_000, 2**31 - 1, 2**31, 2**48 - 1, 2**48, 2**63 - 1]


@pytest.mark.parametrize("kind", KINDS)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["add", "discard", "remove", "in", "contains", "index"]),
            st.one_of(st.integers(0, 80), st.sampled_from(EDGE_IDS)),
        ),
        max_size=40,
    )
)
def test_scalar_calls_match_batch_calls(kind, steps):
    one = SparseSet(capacity=16, index=kind)
    batch = SparseSet(capacity=16, index=kind)
    for name, x in steps:

        def call(s, arg, name=name):
            if name == "in":
                return arg in s
            return getattr(s, name)(arg)

        outcomes = []
        for s, arg in ((one, x), (batch, np.array([x], np.uint64))):
            try:
                result = call(s, arg if name != "in" else x)
            except (KeyError, ValueError) as error:
                result = type(error)
            if isinstance(result, np.ndarray):
                result = result.tolist()[0]
            outcomes.append(result)
        assert outcomes[0] == outcomes[1], (name, x)
        assert order(one) == order(batch)
    assert_consistent(one)


@pytest.mark.parametrize("kind", KINDS)
def test_scalar_add_grows_and_rejects_like_the_batch(kind):
    s = SparseSet(index=kind)
    assert s.add(5_000) == 1 and s.add(5_000) == 0
    with pytest.raises(ValueError, match="non-negative"):
        s.add(-1)
    with pytest.raises(ValueError, match=str(2**63)):
        s.add(2**63)
    assert order(s) == [5_000]
    assert s.discard(2**70) == 0 and s.discard(5) == 0
    with pytest.raises(KeyError, match="7 is not a member"):
        s.remove(7)
    assert s.remove(5_000) == 1 and len(s) == 0


# --------------------------------------------------------------------------
# mixed index kinds (docs/contract.md#mixed-index-kinds): the left operand's kind
# --------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["|", "^", "&", "-"])
@pytest.mark.parametrize("right", KINDS)
@pytest.mark.parametrize("left", KINDS)
def test_mixed_kinds_combine_into_the_left_kind(left, right, op):
    a_ids, b_ids = [1, 5, 70_000, 9], [100, 5, 2**20, 3]
    a = SparseSet.from_ids(a_ids, index=left)
    b = SparseSet.from_ids(b_ids, index=right)
    result = {"|": a | b, "^": a ^ b, "&": a & b, "-": a - b}[op]
    expected = {
        "|": set(a_ids) | set(b_ids),
        "^": set(a_ids) ^ set(b_ids),
        "&": set(a_ids) & set(b_ids),
        "-": set(a_ids) - set(b_ids),
    }[op]
    assert result.kind == left
    assert members(result) == expected
    for x in expected:
        assert x in result
    assert_consistent(result)


@pytest.mark.parametrize(
    ("left", "right", "big"),
    [("flat", "hash", 2**40), ("flat", "paged", 2**40), ("paged", "hash", 2**50)],
)
@pytest.mark.parametrize("op", ["|", "^", "|=", "^=", "union", "update"])
def test_a_member_the_left_kind_cannot_hold_raises_and_changes_nothing(
    left, right, big, op
):
    a = SparseSet.from_ids([1, 2], index=left)
    b = SparseSet.from_ids([100, big], index=right)
    with pytest.raises(ValueError, match=str(big)):
        if op == "|":
            a | b
        elif op == "^":
            a ^ b
        elif op == "|=":
            a |= b
        elif op == "^=":
            a ^= b
        else:
            getattr(a, op)(b)
    assert order(a) == [1, 2]
    # the same members that do fit combine fine, and the intersection needs none
    assert members(a & b) == set()
    assert members(a - b) == {1, 2}


def test_the_reported_crash_flat_or_hash():
    # Issue 12, finding 1: the result listed 100 while `100 in r` was False,
    # then the process aborted.
    r = SparseSet.from_ids([1]) | SparseSet.from_ids([100], index="hash")
    assert sorted(r) == [1, 100] and 100 in r and r.kind == "flat"
    assert_consistent(r)


# --------------------------------------------------------------------------
# an add that adds nothing changes nothing, checkpoints included
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "noop",
    [
        lambda s: s.add(2),
        lambda s: s.add([2, 3, 2]),
        lambda s: s.add([]),
        lambda s: s.add(np.empty(0, np.uint8)),
        lambda s: s.update([3], []),
        lambda s: s.__ior__(SparseSet()),
        lambda s: s.__ior__({2}),
    ],
    ids=["one", "batch", "empty-list", "empty-array", "update", "ior-empty", "ior"],
)
def test_an_add_that_adds_nothing_keeps_checkpoints(kind, noop):
    s = SparseSet.from_ids([1, 2, 3], index=kind)
    token = s.checkpoint()
    s.discard(1)
    noop(s)
    s.rollback(token)
    assert members(s) == {1, 2, 3}
    s.discard(1)
    s.add(1)  # adds a member: now the token is gone
    with pytest.raises(ValueError, match="not a live checkpoint"):
        s.rollback(token)


def test_sets_are_weakly_referenceable_and_unhashable():
    import weakref

    s = SparseSet.from_ids([1])
    ref = weakref.ref(s)
    assert ref() is s
    with pytest.raises(TypeError):
        hash(s)

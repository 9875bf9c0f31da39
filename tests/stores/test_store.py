"""Unit tests for ``ComponentStore`` and ``SparseMap``: docs/contract.md.

Covers docs/contract.md#componentstore, docs/contract.md#sparsemap, the store lines
of docs/contract.md#semantics-every-container-keeps and the fine print
(docs/contract.md#store-inputs, docs/contract.md#input-shapes,
docs/contract.md#id-ranges, docs/contract.md#return-values), then a catalogue of bad
inputs that must raise *and* leave the store exactly as it was. Order is
checked only where docs/contract.md#order promises it:
insertion order until a removal, and sequential swap-and-pop.
"""

import collections.abc
import pickle

import numpy as np
import pytest

from reference import DTYPE_IDS, FLAT_LIMIT, INT_DTYPES
from sparseset import ComponentStore, SparseMap, SparseSet, UnknownColumnError

SCHEMA = {"pos": ("f8", 2), "vel": ("f8", 2), "hp": "i4"}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def order(store):
    """The dense order of ``store`` as a list of ints."""
    return store.ids.tolist()


def rows_of(i):
    """Distinct, exactly representable rows for id ``i``."""
    return {"pos": [i + 0.5, -i], "vel": [2.0 * i, 0.25], "hp": 10 * i + 1}


def make_store(ids=(4, 9, 1, 7), discard=(9,), index="auto"):
    """A SCHEMA store holding ``ids`` (rows from ``rows_of``), minus ``discard``.

    The default gives dense order [4, 7, 1]: a swap already happened.
    """
    store = ComponentStore(SCHEMA, index=index)
    ids = list(ids)
    store.add(
        ids,
        pos=[rows_of(i)["pos"] for i in ids],
        vel=[rows_of(i)["vel"] for i in ids],
        hp=[rows_of(i)["hp"] for i in ids],
    )
    store.discard(list(discard))
    return store


def snapshot(store):
    n = len(store)
    return (
        order(store),
        n,
        {name: store[name][:n].copy() for name in store.columns},
    )


def assert_unchanged(store, snap):
    ids, n, columns = snap
    assert order(store) == ids
    assert len(store) == n
    for name, before in columns.items():
        now = store[name]
        assert now.shape == before.shape, name
        np.testing.assert_array_equal(now, before, err_msg=name)


def assert_rows_match(store, expected):
    """Every member's rows equal ``expected[id]`` (a dict of column values)."""
    ids = order(store)
    assert set(ids) == set(expected)
    for name in store.columns:
        column = store[name]
        assert column.shape[0] == len(store)
        for k, i in enumerate(ids):
            np.testing.assert_array_equal(
                column[k], expected[i][name], err_msg=f"{name} of id {i}"
            )


# --------------------------------------------------------------------------
# schema
# --------------------------------------------------------------------------


class TestSchema:
    def test_dict_of_dtypes_and_shapes(self):
        store = ComponentStore(
            {
                "a": "f4",
                "b": np.int16,
                "c": np.dtype("u1"),
                "d": ("f8", 3),
                "e": ("i4", (2, 3)),
                "f": ("f8", np.int64(2)),
                "g": ("i8", (4,)),
            }
        )
        assert store.columns == ("a", "b", "c", "d", "e", "f", "g")
        expected = {
            "a": (np.float32, ()),
            "b": (np.int16, ()),
            "c": (np.uint8, ()),
            "d": (np.float64, (3,)),
            "e": (np.int32, (2, 3)),
            "f": (np.float64, (2,)),
            "g": (np.int64, (4,)),
        }
        schema = store.schema
        for name, (dtype, shape) in expected.items():
            assert schema[name][0] == np.dtype(dtype)
            assert tuple(schema[name][1]) == shape
            view = store[name]
            assert view.dtype == np.dtype(dtype)
            assert view.shape == (0, *shape)

    def test_rows_of_every_shape_round_trip(self):
        store = ComponentStore({"e": ("i4", (2, 3)), "d": ("f8", 3), "m": "f4"})
        e = np.arange(12, dtype=np.int32).reshape(2, 2, 3)
        assert store.add([3, 8], e=e, d=[[1, 2, 3], [4, 5, 6]], m=[0.5, 1.5]) == 2
        np.testing.assert_array_equal(store["e"], e)
        got = store.get(8)
        np.testing.assert_array_equal(got["e"], e[1])
        assert got["e"].shape == (2, 3)
        np.testing.assert_array_equal(got["d"], [4, 5, 6])
        assert got["m"] == np.float32(1.5)

    def test_structured_dtype_one_column_per_field(self):
        dtype = np.dtype([("pos", "f8", (3,)), ("mass", "f4"), ("cell", "i2", (2, 2))])
        store = ComponentStore(dtype)
        assert store.columns == ("pos", "mass", "cell")
        assert store["pos"].shape == (0, 3)
        assert store["pos"].dtype == np.float64
        assert store["mass"].shape == (0,)
        assert store["mass"].dtype == np.float32
        assert store["cell"].shape == (0, 2, 2)
        assert store["cell"].dtype == np.int16
        store.add([5, 2], pos=[[1, 2, 3], [4, 5, 6]], mass=[1.0, 2.0])
        np.testing.assert_array_equal(store.get(2)["pos"], [4, 5, 6])
        np.testing.assert_array_equal(store.get(5)["cell"], np.zeros((2, 2)))

    def test_sub_array_dtype_gives_row_shape(self):
        store = ComponentStore({"v": "3f8"})
        assert store["v"].shape == (0, 3)
        assert store["v"].dtype == np.float64

    def test_empty_schema_is_a_tag_store(self):
        store = ComponentStore({})
        assert store.columns == ()
        assert store.add([3, 1, 3]) == 2
        assert order(store) == [3, 1]
        assert store.get([1, 3]) == {}
        assert store.get(1) == {}
        assert store.contains(3) is True
        assert store.discard([3, 5]) == 1
        assert order(store) == [1]
        with pytest.raises(KeyError):
            store.get([9])
        with pytest.raises(KeyError):
            store["pos"]
        with pytest.raises(TypeError):
            store.add([2], pos=1.0)
        assert order(store) == [1]
        clone = pickle.loads(pickle.dumps(store))
        assert order(clone) == [1]

    def test_empty_structured_dtype_is_a_tag_store(self):
        store = ComponentStore(np.dtype([]))
        assert store.columns == ()
        assert store.add([1]) == 1

    @pytest.mark.parametrize(
        "name",
        ["_ids", "_", "1x", "", "a-b", "a b", "class", "pos.x", 3, None],
    )
    def test_bad_column_names_raise(self, name):
        with pytest.raises((ValueError, TypeError)):
            ComponentStore({name: "f8"})

    @pytest.mark.parametrize(
        "schema",
        [{"touch": "f8"}, {"x": "f8", "touch": ("i4", 2)}, np.dtype([("touch", "f8")])],
        ids=["alone", "second", "structured"],
    )
    def test_touch_is_a_reserved_column_name(self, schema):
        with pytest.raises(ValueError, match="'touch' is reserved"):
            ComponentStore(schema)

    @pytest.mark.parametrize("name", ["_ids", "__size", "_col_n"])
    def test_underscore_name_in_structured_dtype_raises(self, name):
        with pytest.raises((ValueError, TypeError)):
            ComponentStore(np.dtype([("ok", "f8"), (name, "f8")]))

    @pytest.mark.parametrize(
        "spec",
        [object, "O", ("O", 2), np.dtype([("x", "f8"), ("y", "O")])],
        ids=["object", "O", "O-rows", "struct-with-object"],
    )
    def test_object_dtype_raises(self, spec):
        with pytest.raises((TypeError, ValueError)):
            ComponentStore({"x": spec})

    def test_object_field_in_structured_schema_raises(self):
        with pytest.raises((TypeError, ValueError)):
            ComponentStore(np.dtype([("a", "f8"), ("b", "O")]))

    @pytest.mark.parametrize(
        "spec",
        [("f8", 0), ("f8", (2, 0)), ("i4", (0, 3)), ("f8", -1)],
        ids=["0", "2x0", "0x3", "negative"],
    )
    def test_zero_size_rows_raise(self, spec):
        with pytest.raises((ValueError, TypeError)):
            ComponentStore({"x": spec})

    @pytest.mark.parametrize(
        "spec", ["U", "S", "V0", np.dtype([])], ids=["U0", "S0", "V0", "empty-struct"]
    )
    def test_zero_itemsize_dtype_raises(self, spec):
        # Such rows hold no data, like a zero-length row shape.
        with pytest.raises((ValueError, TypeError)):
            ComponentStore({"x": spec})

    @pytest.mark.parametrize("schema", [np.dtype("f8"), "f8", 3])
    def test_non_schema_raises(self, schema):
        with pytest.raises((TypeError, ValueError)):
            ComponentStore(schema)

    def test_unknown_dtype_raises(self):
        with pytest.raises(TypeError):
            ComponentStore({"x": "not-a-dtype"})


# --------------------------------------------------------------------------
# add
# --------------------------------------------------------------------------


class TestAdd:
    def test_returns_number_new_in_insertion_order(self):
        store = ComponentStore(SCHEMA)
        assert store.add([5, 2, 9]) == 3
        assert store.add([2, 11, 5, 0]) == 2
        assert order(store) == [5, 2, 9, 11, 0]
        assert isinstance(store.add([1]), int)

    def test_duplicate_ids_last_value_wins_for_every_column(self):
        store = ComponentStore(SCHEMA)
        ids = [3, 8, 3, 5, 8, 3]
        pos = [[k, -k] for k in range(6)]
        vel = [[10 * k, 1] for k in range(6)]
        hp = [100 + k for k in range(6)]
        assert store.add(ids, pos=pos, vel=vel, hp=hp) == 3
        assert order(store) == [3, 8, 5]
        got = store.get([3, 8, 5])
        np.testing.assert_array_equal(got["pos"], [[5, -5], [4, -4], [3, -3]])
        np.testing.assert_array_equal(got["vel"], [[50, 1], [40, 1], [30, 1]])
        np.testing.assert_array_equal(got["hp"], [105, 104, 103])

    def test_duplicates_of_existing_members_last_value_wins(self):
        store = make_store()
        assert store.add([7, 2, 7, 2, 4], hp=[1, 2, 3, 4, 5]) == 1
        assert order(store) == [4, 7, 1, 2]
        np.testing.assert_array_equal(store["hp"], [5, 3, rows_of(1)["hp"], 4])

    def test_missing_columns_zero_filled_on_new_rows_unchanged_on_replaced(self):
        store = make_store()  # [4, 7, 1]
        assert store.add([7, 20, 4, 21], hp=[70, 200, 40, 210]) == 2
        assert order(store) == [4, 7, 1, 20, 21]
        expected = {i: rows_of(i) for i in (4, 7, 1)}
        expected[4] = {**expected[4], "hp": 40}
        expected[7] = {**expected[7], "hp": 70}
        zero = {"pos": [0.0, 0.0], "vel": [0.0, 0.0]}
        expected[20] = {**zero, "hp": 200}
        expected[21] = {**zero, "hp": 210}
        assert_rows_match(store, expected)

    def test_add_without_columns_keeps_members_and_zeroes_new(self):
        store = make_store()
        assert store.add([1, 30]) == 1
        expected = {i: rows_of(i) for i in (4, 7, 1)}
        expected[30] = {"pos": [0, 0], "vel": [0, 0], "hp": 0}
        assert_rows_match(store, expected)

    def test_new_row_is_zeroed_not_a_stale_removed_row(self):
        store = ComponentStore(SCHEMA)
        store.add([1, 2], pos=[[1, 1], [2, 2]], hp=[10, 20])
        store.discard(2)
        assert store.add(5) == 1
        got = store.get(5)
        np.testing.assert_array_equal(got["pos"], [0, 0])
        assert got["hp"] == 0
        store.clear()
        assert store.add(1, hp=3) == 1
        np.testing.assert_array_equal(store.get(1)["pos"], [0, 0])
        np.testing.assert_array_equal(store.get(1)["vel"], [0, 0])

    def test_broadcast_scalar_one_row_and_full(self):
        store = ComponentStore(SCHEMA)
        store.add([1, 2, 3], pos=1.5, vel=[0.5, -0.5], hp=7)
        np.testing.assert_array_equal(store["pos"], np.full((3, 2), 1.5))
        np.testing.assert_array_equal(store["vel"], [[0.5, -0.5]] * 3)
        np.testing.assert_array_equal(store["hp"], [7, 7, 7])
        store.add([3, 1], pos=[[9, 8], [7, 6]], hp=np.array([30, 10], np.int32))
        np.testing.assert_array_equal(store["pos"], [[7, 6], [1.5, 1.5], [9, 8]])
        np.testing.assert_array_equal(store["hp"], [10, 7, 30])

    def test_broadcast_per_id_column_vector(self):
        store = ComponentStore(SCHEMA)
        store.add([1, 2, 3], pos=[[1.0], [2.0], [3.0]])
        np.testing.assert_array_equal(store["pos"], [[1, 1], [2, 2], [3, 3]])

    def test_broadcast_to_multi_dim_rows(self):
        store = ComponentStore({"m": ("f4", (2, 3))})
        store.add([4, 5], m=[1, 2, 3])
        np.testing.assert_array_equal(store["m"], np.tile([1, 2, 3], (2, 2, 1)))

    @pytest.mark.parametrize(
        ("column", "value", "expected"),
        [
            ("pos", 3, [3.0, 3.0]),
            ("pos", np.array([1, 2], np.int64), [1.0, 2.0]),
            ("pos", np.array([1, 2], np.uint8), [1.0, 2.0]),
            ("pos", np.array([0.5, 1.5], np.float32), [0.5, 1.5]),
            ("hp", np.int64(5), 5),
            ("hp", np.array(5, np.uint8), 5),
            ("hp", True, 1),
        ],
        ids=["int->f8", "i8->f8", "u1->f8", "f4->f8", "i8->i4", "u1->i4", "bool->i4"],
    )
    def test_same_kind_casts_accepted(self, column, value, expected):
        store = ComponentStore(SCHEMA)
        assert store.add([2], **{column: value}) == 1
        np.testing.assert_array_equal(store.get(2)[column], expected)
        assert store[column].dtype == np.dtype(SCHEMA[column][0])

    @pytest.mark.parametrize(
        ("column", "value"),
        [
            ("pos", "abc"),
            ("pos", ["1.0", "2.0"]),
            ("pos", np.array([b"1", b"2"])),
            ("pos", np.array([1 + 2j, 3j])),
            ("hp", 1.5),
            ("hp", 2.0),
            ("hp", np.array([1.0], np.float32)),
            ("hp", "7"),
        ],
        ids=["str", "str-list", "bytes", "complex", "float", "whole-float", "f4", "s"],
    )
    def test_uncastable_values_raise_type_error_and_change_nothing(self, column, value):
        store = make_store()
        snap = snapshot(store)
        with pytest.raises(TypeError) as info:
            store.add([4, 50], **{column: value})
        assert column in str(info.value)
        assert_unchanged(store, snap)
        assert 50 not in store

    @pytest.mark.parametrize(
        "ident",
        [7, np.int64(7), np.uint8(7), np.int32(7), np.array(7), np.array(7, np.uint16)],
        ids=["int", "i8", "u1", "i4", "0d", "0d-u2"],
    )
    def test_scalar_id(self, ident):
        store = ComponentStore(SCHEMA)
        assert store.add(ident, pos=[1, 2], hp=3) == 1
        assert store.add(ident, hp=4) == 0
        assert order(store) == [7]
        np.testing.assert_array_equal(store.get(7)["pos"], [1, 2])
        assert store.get(7)["hp"] == 4

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    def test_every_int_dtype_for_ids(self, dtype):
        store = ComponentStore(SCHEMA)
        ids = np.array([5, 3, 5, 120], dtype=dtype)
        assert store.add(ids, hp=np.arange(4)) == 3
        assert order(store) == [5, 3, 120]
        np.testing.assert_array_equal(store["hp"], [2, 1, 3])
        got = store.get(np.array([120, 3], dtype=dtype))
        np.testing.assert_array_equal(got["hp"], [3, 1])
        assert store.get(dtype(5))["hp"] == 2
        assert store.contains(dtype(3)) is True
        assert store.index(np.array([3, 4], dtype=dtype)).tolist() == [1, -1]
        store.set(np.array([3], dtype=dtype), hp=9)
        assert store.get(3)["hp"] == 9
        assert store.discard(np.array([5], dtype=dtype)) == 1
        assert store.remove(np.array([3], dtype=dtype)) == 1
        assert order(store) == [120]

    def test_strided_and_non_native_ids(self):
        store = ComponentStore(SCHEMA)
        base = np.array([6, -1, 2, -1, 6, -1], np.int64)
        assert store.add(base[::2], hp=[1, 2, 3]) == 2
        assert order(store) == [6, 2]
        big_endian = np.array([9, 2], dtype=">i4")
        assert store.add(big_endian, hp=[90, 20]) == 1
        assert order(store) == [6, 2, 9]
        np.testing.assert_array_equal(store["hp"], [3, 20, 90])

    def test_list_tuple_range_inputs(self):
        store = ComponentStore(SCHEMA)
        assert store.add((1, 2), hp=(10, 20)) == 2
        assert store.add(range(2, 5), hp=[0, 30, 40]) == 2
        assert store.add([]) == 0
        assert order(store) == [1, 2, 3, 4]
        np.testing.assert_array_equal(store["hp"], [10, 0, 30, 40])

    def test_empty_batch_with_empty_values(self):
        store = make_store()
        snap = snapshot(store)
        assert store.add([], pos=np.empty((0, 2)), hp=np.empty(0, np.int32)) == 0
        assert store.add(np.empty(0, np.int64), pos=1.0) == 0
        assert_unchanged(store, snap)

    def test_empty_value_list_for_an_empty_batch(self):
        # An empty list is an empty batch, whatever dtype numpy infers for it
        # (float64), as ``np.zeros(3, "i4")[[]] = []`` works in numpy.
        store = make_store()
        snap = snapshot(store)
        assert store.add([], hp=[], pos=[]) == 0
        store.set([], hp=[])
        assert_unchanged(store, snap)
        m = SparseMap("i8")
        m[[]] = []
        assert m.add([], []) == 0
        assert len(m) == 0

    def test_empty_batch_with_values_on_a_fresh_store(self):
        store = ComponentStore(SCHEMA)
        assert store.add([], pos=np.empty((0, 2))) == 0
        assert len(store) == 0

    def test_growth_past_capacity_keeps_rows_aligned(self):
        rng = np.random.default_rng(1)
        store = ComponentStore(
            {"pos": ("f8", 3), "tag": ("u1", 3), "hp": "i2"}, capacity=4
        )
        universe = rng.permutation(6_000)
        expected = {}
        for start in range(0, universe.size, 750):
            chunk = universe[start : start + 750]
            pos = np.stack([chunk * 1.0, -chunk * 1.0, chunk + 0.5], axis=1)
            tag = np.stack([chunk % 256, chunk % 7, chunk % 3], axis=1)
            store.add(chunk, pos=pos, tag=tag.astype(np.uint8), hp=chunk % 1000)
            for k, i in enumerate(chunk.tolist()):
                expected[i] = (pos[k], tag[k], i % 1000)
            gone = chunk[::5]
            assert store.discard(gone) == gone.size
            for i in gone.tolist():
                del expected[i]
        ids = store.ids
        assert len(store) == len(expected)
        assert set(ids.tolist()) == set(expected)
        np.testing.assert_array_equal(store["pos"][:, 0], ids)
        np.testing.assert_array_equal(store["pos"][:, 1], -ids.astype(np.float64))
        np.testing.assert_array_equal(store["pos"][:, 2], ids + 0.5)
        np.testing.assert_array_equal(store["tag"][:, 0], ids % 256)
        np.testing.assert_array_equal(store["tag"][:, 1], ids % 7)
        np.testing.assert_array_equal(store["hp"], ids % 1000)
        np.testing.assert_array_equal(store.index(ids), np.arange(len(store)))

    def test_growth_from_a_large_id_keeps_rows(self):
        store = make_store()
        snap = snapshot(store)
        assert store.add(1_000_000, hp=5) == 1
        ids, n, columns = snap
        assert order(store) == [*ids, 1_000_000]
        for name, before in columns.items():
            np.testing.assert_array_equal(store[name][:n], before)
        assert store.get(1_000_000)["hp"] == 5

    def test_values_aliasing_a_column(self):
        # Like numpy's a[idx] = a: the values are read as they were.
        store = ComponentStore(SCHEMA)
        store.add([1, 2, 3], pos=[[1, 1], [2, 2], [3, 3]], hp=[10, 20, 30])
        store.add([3, 2, 1], pos=store["pos"], hp=store["hp"])
        assert order(store) == [1, 2, 3]
        np.testing.assert_array_equal(store["hp"], [30, 20, 10])
        np.testing.assert_array_equal(store["pos"], [[3, 3], [2, 2], [1, 1]])


# --------------------------------------------------------------------------
# get / set
# --------------------------------------------------------------------------


class TestGet:
    def test_rows_in_the_order_of_ids(self):
        store = make_store()  # [4, 7, 1]
        got = store.get([1, 4, 1, 7])
        assert set(got) == {"pos", "vel", "hp"}
        for name in ("pos", "vel", "hp"):
            expected = [rows_of(i)[name] for i in (1, 4, 1, 7)]
            np.testing.assert_array_equal(got[name], expected)
        assert got["pos"].shape == (4, 2)
        assert got["hp"].shape == (4,)
        assert got["hp"].dtype == np.int32

    @pytest.mark.parametrize(
        "ident", [7, np.int64(7), np.uint16(7), np.array(7)], ids=str
    )
    def test_scalar_gives_single_rows(self, ident):
        store = make_store()
        got = store.get(ident)
        assert np.shape(got["pos"]) == (2,)
        assert np.shape(got["hp"]) == ()
        np.testing.assert_array_equal(got["pos"], rows_of(7)["pos"])
        assert got["hp"] == rows_of(7)["hp"]

    def test_one_element_batch_keeps_leading_axis(self):
        store = make_store()
        got = store.get([7])
        assert got["pos"].shape == (1, 2)
        assert got["hp"].shape == (1,)
        got = store.get(np.array([7]))
        assert got["pos"].shape == (1, 2)

    def test_empty_batch(self):
        store = make_store()
        got = store.get([])
        assert got["pos"].shape == (0, 2)
        assert got["hp"].shape == (0,)

    def test_result_is_not_a_view_of_the_store(self):
        store = make_store()
        snap = snapshot(store)
        got = store.get([4, 7])
        got["pos"][:] = -100
        got["hp"][:] = -100
        single = store.get(1)
        single["pos"][:] = -100
        assert_unchanged(store, snap)

    @pytest.mark.parametrize(
        ("ids", "first_absent"),
        [([4, 123, 98], 123), ([555], 555), (666, 666), ([7, 1, 2**40], 2**40)],
    )
    def test_absent_raises_key_error_naming_first_absent(self, ids, first_absent):
        store = make_store()
        with pytest.raises(KeyError) as info:
            store.get(ids)
        assert str(first_absent) in str(info.value)

    def test_after_removal_rows_follow_ids(self):
        store = make_store()
        store.discard(4)
        assert order(store) == [1, 7]
        got = store.get([1, 7])
        np.testing.assert_array_equal(
            got["vel"], [rows_of(1)["vel"], rows_of(7)["vel"]]
        )


class TestSet:
    def test_updates_members_only_given_columns(self):
        store = make_store()  # [4, 7, 1]
        assert store.set([1, 4], hp=[11, 44], pos=[[1, 1], [4, 4]]) is None
        assert order(store) == [4, 7, 1]
        expected = {i: rows_of(i) for i in (4, 7, 1)}
        expected[1] = {**expected[1], "hp": 11, "pos": [1, 1]}
        expected[4] = {**expected[4], "hp": 44, "pos": [4, 4]}
        assert_rows_match(store, expected)

    def test_scalar_id_and_broadcast(self):
        store = make_store()
        store.set(7, vel=0.0, hp=np.int16(3))
        np.testing.assert_array_equal(store.get(7)["vel"], [0, 0])
        assert store.get(7)["hp"] == 3
        store.set([4, 1], pos=[9, 8])
        np.testing.assert_array_equal(store.get([4, 1])["pos"], [[9, 8], [9, 8]])

    def test_duplicates_last_value_wins(self):
        store = make_store()
        store.set([7, 4, 7], hp=[1, 2, 3])
        assert store.get(7)["hp"] == 3
        assert store.get(4)["hp"] == 2

    def test_no_columns_and_empty_batch(self):
        store = make_store()
        snap = snapshot(store)
        store.set([4, 7])
        store.set([], hp=np.empty(0, np.int32))
        assert_unchanged(store, snap)

    @pytest.mark.parametrize(
        ("ids", "first_absent"),
        [([4, 123, 7], 123), (321, 321), ([7, 2**40], 2**40), ([9], 9)],
    )
    def test_absent_raises_key_error_and_changes_nothing(self, ids, first_absent):
        store = make_store()  # 9 was discarded
        snap = snapshot(store)
        with pytest.raises(KeyError) as info:
            store.set(ids, hp=5)
        assert str(first_absent) in str(info.value)
        assert_unchanged(store, snap)
        assert first_absent not in store

    def test_values_aliasing_the_column(self):
        # Like numpy's a[idx] = a[other]: the values are read as they were.
        store = ComponentStore({"hp": "i4"})
        store.add([1, 2, 3], hp=[10, 20, 30])
        store.set(store.ids[::-1], hp=store["hp"])
        np.testing.assert_array_equal(store["hp"], [30, 20, 10])
        store.set([2, 3], hp=store["hp"][:2])
        np.testing.assert_array_equal(store["hp"], [30, 30, 20])


# --------------------------------------------------------------------------
# column views
# --------------------------------------------------------------------------


class TestColumnViews:
    def test_view_is_writable_and_shares_memory(self):
        store = make_store()
        view = store["pos"]
        assert isinstance(view, np.ndarray)
        assert view.shape == (3, 2)
        assert view.flags.writeable
        assert np.shares_memory(view, store["pos"])
        view[1] = [-3, -4]  # id 7
        np.testing.assert_array_equal(store.get(7)["pos"], [-3, -4])
        store["hp"][2] = 99  # id 1
        assert store.get(1)["hp"] == 99

    def test_view_length_follows_len(self):
        store = make_store()
        assert store["hp"].shape == (len(store),)
        store.discard(4)
        assert store["hp"].shape == (2,)
        store.clear()
        assert store["hp"].shape == (0,)
        assert store["pos"].shape == (0, 2)

    def test_view_aligned_with_ids(self):
        store = make_store()
        for k, i in enumerate(order(store)):
            np.testing.assert_array_equal(store["pos"][k], rows_of(i)["pos"])
            assert store["hp"][k] == rows_of(i)["hp"]

    def test_in_place_system_update(self):
        store = make_store()
        dt = 0.5
        before_pos = store["pos"].copy()
        vel = store["vel"].copy()
        view = store["pos"]
        store["pos"] += store["vel"] * dt
        np.testing.assert_array_equal(store["pos"], before_pos + vel * dt)
        np.testing.assert_array_equal(view, before_pos + vel * dt)
        assert np.shares_memory(view, store["pos"])
        assert store["pos"].shape == (len(store), 2)
        np.testing.assert_array_equal(store["vel"], vel)
        for i in order(store):
            expected = np.add(rows_of(i)["pos"], np.multiply(rows_of(i)["vel"], dt))
            np.testing.assert_array_equal(store.get(i)["pos"], expected)

    def test_in_place_update_after_removal_touches_only_members(self):
        store = make_store(ids=range(10), discard=(2, 5, 7))
        store["hp"] -= 1
        store["hp"] *= 2
        for i in order(store):
            assert store.get(i)["hp"] == 2 * (rows_of(i)["hp"] - 1)
        # Re-adding a removed id starts from zero, not from a stale row.
        store.add(5)
        assert store.get(5)["hp"] == 0
        np.testing.assert_array_equal(store.get(5)["pos"], [0, 0])

    def test_assign_whole_column_broadcasts(self):
        store = make_store()
        store["hp"] = 5
        np.testing.assert_array_equal(store["hp"], [5, 5, 5])
        store["pos"] = [1, 2]
        np.testing.assert_array_equal(store["pos"], [[1, 2]] * 3)
        store["pos"] = [[1.0], [2.0], [3.0]]
        np.testing.assert_array_equal(store["pos"], [[1, 1], [2, 2], [3, 3]])
        store["vel"] = np.arange(6).reshape(3, 2)
        np.testing.assert_array_equal(store["vel"], np.arange(6).reshape(3, 2))
        store["pos"] = store["vel"]
        np.testing.assert_array_equal(store["pos"], store["vel"])
        assert not np.shares_memory(store["pos"], store["vel"])
        store["hp"] = store["hp"][::-1]
        np.testing.assert_array_equal(store["hp"], [5, 5, 5])
        assert order(store) == [4, 7, 1]

    def test_assign_reversed_column(self):
        store = ComponentStore({"hp": "i4"})
        store.add([1, 2, 3], hp=[10, 20, 30])
        store["hp"] = store["hp"][::-1]
        np.testing.assert_array_equal(store["hp"], [30, 20, 10])

    @pytest.mark.parametrize(
        ("name", "value", "exc"),
        [
            ("pos", "abc", TypeError),
            ("hp", 1.5, TypeError),
            ("pos", [1, 2, 3], ValueError),
            ("hp", [1, 2], ValueError),
            ("nope", 1, KeyError),
        ],
    )
    def test_bad_assignment_raises_and_changes_nothing(self, name, value, exc):
        store = make_store()
        snap = snapshot(store)
        with pytest.raises(exc) as info:
            store[name] = value
        assert name in str(info.value)
        assert_unchanged(store, snap)

    def test_unknown_column_is_key_error_and_type_error(self):
        store = make_store()
        assert issubclass(UnknownColumnError, KeyError)
        assert issubclass(UnknownColumnError, TypeError)
        with pytest.raises(KeyError) as info:
            store["nope"]
        assert isinstance(info.value, UnknownColumnError)
        assert "nope" in str(info.value)
        with pytest.raises(TypeError):
            store["nope"]
        with pytest.raises(TypeError) as info:
            store.add([1], nope=1)
        assert isinstance(info.value, KeyError)

    def test_empty_store_views(self):
        store = ComponentStore(SCHEMA)
        assert store["pos"].shape == (0, 2)
        store["pos"] += 1.0
        store["hp"] = 3
        assert len(store) == 0


# --------------------------------------------------------------------------
# discard / remove
# --------------------------------------------------------------------------


class TestRemoval:
    def test_swap_and_pop_moves_every_column(self):
        store = ComponentStore({"hp": "i4", "pos": ("f8", 2)})
        store.add([1, 2, 3], hp=[10, 20, 30], pos=[[1, 1], [2, 2], [3, 3]])
        assert store.discard(1) == 1
        assert order(store) == [3, 2]
        np.testing.assert_array_equal(store["hp"], [30, 20])
        np.testing.assert_array_equal(store["pos"], [[3, 3], [2, 2]])

    def test_sequential_swap_and_pop_in_batch_order(self):
        store = make_store(ids=range(6), discard=())
        # [0..5] - 0 -> [5,1,2,3,4] - 5 -> [4,1,2,3] - 2 -> [4,1,3]
        assert store.discard([0, 5, 42, 2]) == 3
        assert order(store) == [4, 1, 3]
        assert_rows_match(store, {i: rows_of(i) for i in (4, 1, 3)})

    def test_discard_last_keeps_order(self):
        store = make_store(ids=[0, 1, 2], discard=())
        assert store.discard(2) == 1
        assert order(store) == [0, 1]
        assert_rows_match(store, {0: rows_of(0), 1: rows_of(1)})

    def test_discard_counts_and_ignores_absent(self):
        store = make_store()  # [4, 7, 1]
        assert store.discard([100, 2**40, 9]) == 0
        assert store.discard([7, 7, 7]) == 1
        assert store.discard(np.array([], np.int64)) == 0
        assert isinstance(store.discard([4]), int)
        assert order(store) == [1]
        assert_rows_match(store, {1: rows_of(1)})

    def test_discard_all_through_ids(self):
        store = make_store()
        assert store.discard(store.ids) == 3
        assert len(store) == 0
        assert store["pos"].shape == (0, 2)

    @pytest.mark.parametrize("capacity", [0, 10])
    def test_removal_on_an_empty_store(self, capacity):
        store = ComponentStore(SCHEMA, capacity=capacity)
        assert store.discard([1, 2]) == 0
        assert store.discard([]) == 0
        assert store.remove([]) == 0
        with pytest.raises(KeyError):
            store.remove(1)
        assert len(store) == 0

    def test_remove_duplicates_count_once(self):
        store = make_store()
        assert store.remove([7, 4, 7]) == 2
        assert order(store) == [1]
        assert_rows_match(store, {1: rows_of(1)})

    @pytest.mark.parametrize(
        ("ids", "first_absent"),
        [([4, 123, 124], 123), ([7, 7, 9], 9), (555, 555), ([1, 2**40], 2**40)],
    )
    def test_remove_absent_raises_and_removes_nothing(self, ids, first_absent):
        store = make_store()
        snap = snapshot(store)
        with pytest.raises(KeyError) as info:
            store.remove(ids)
        assert str(first_absent) in str(info.value)
        assert_unchanged(store, snap)

    def test_remove_through_ids(self):
        store = make_store()
        assert store.remove(store.ids[:2]) == 2
        assert order(store) == [1]


# --------------------------------------------------------------------------
# queries, size, storage, pickling
# --------------------------------------------------------------------------


class TestQueries:
    def test_contains(self):
        store = make_store()
        assert store.contains(4) is True
        assert store.contains(9) is False
        assert store.contains(np.uint8(7)) is True
        assert store.contains(2**40) is False
        got = store.contains([4, 9, 1, 2**40])
        assert isinstance(got, np.ndarray)
        assert got.dtype == np.bool_
        assert got.tolist() == [True, False, True, False]
        assert store.contains([]).shape == (0,)

    def test_in(self):
        store = make_store()
        assert 4 in store
        assert np.int64(1) in store
        assert 9 not in store
        assert 2**40 not in store

    def test_index(self):
        store = make_store()  # [4, 7, 1]
        assert store.index(1) == 2
        assert store.index(9) == -1
        assert isinstance(store.index(4), int)
        got = store.index([1, 9, 4, 2**40])
        assert got.tolist() == [2, -1, 0, -1]

    def test_ids_is_read_only_and_aligned(self):
        store = make_store()
        ids = store.ids
        assert ids.tolist() == [4, 7, 1]
        assert not ids.flags.writeable
        with pytest.raises(ValueError):
            ids[0] = 5
        assert order(store) == [4, 7, 1]

    def test_len_and_iter(self):
        store = make_store()
        assert len(store) == 3
        items = list(store)
        assert items == [4, 7, 1]
        assert all(isinstance(i, int | np.integer) for i in items)

    def test_clear(self):
        store = make_store()
        assert store.clear() is None
        assert len(store) == 0
        assert order(store) == []
        assert 4 not in store
        assert store.add([7, 4]) == 2
        assert order(store) == [7, 4]
        np.testing.assert_array_equal(store["hp"], [0, 0])

    def test_reserve_keeps_members_and_rows(self):
        store = make_store()
        snap = snapshot(store)
        assert store.reserve(50_000) is None
        assert store.capacity >= 50_000
        assert_unchanged(store, snap)
        store.reserve(10)  # never shrinks
        assert store.capacity >= 50_000
        assert_unchanged(store, snap)
        assert store.add(49_999, hp=1) == 1
        assert store.get(49_999)["hp"] == 1

    def test_capacity_hint(self):
        store = ComponentStore(SCHEMA, capacity=100)
        assert store.capacity >= 100
        store.add(500)
        assert store.capacity > 500

    def test_nbytes(self):
        store = ComponentStore({"pos": ("f8", 3), "mass": "f4"}, capacity=100)
        small = store.nbytes
        assert isinstance(small, int)
        assert small >= 100 * (3 * 8 + 4)
        store.reserve(10_000)
        assert store.nbytes >= 10_000 * (3 * 8 + 4)
        assert store.nbytes > small

    def test_repr(self):
        store = make_store()
        text = repr(store)
        assert "ComponentStore" in text
        assert "pos" in text
        assert "hp" in text

    def test_pickle_round_trip(self):
        store = make_store(ids=[5, 3, 8, 1, 12], discard=(3,))
        clone = pickle.loads(pickle.dumps(store))
        assert order(clone) == order(store) == [5, 12, 8, 1]
        assert clone.columns == store.columns
        for name in store.columns:
            np.testing.assert_array_equal(clone[name], store[name])
            assert clone[name].dtype == store[name].dtype
        clone.add(99, hp=1)
        clone["hp"] += 1
        assert 99 not in store
        assert_rows_match(store, {i: rows_of(i) for i in (5, 12, 8, 1)})

    def test_pickle_of_empty_store(self):
        clone = pickle.loads(pickle.dumps(ComponentStore(SCHEMA)))
        assert len(clone) == 0
        assert clone["pos"].shape == (0, 2)

    def test_pickle_keeps_the_fields_of_a_record_column(self):
        record = np.dtype([("a", "i4"), ("b", "f8")])
        store = ComponentStore({"r": record})
        store.add([3, 1], r=np.array([(1, 2.0), (3, 4.0)], record))
        clone = pickle.loads(pickle.dumps(store))
        assert clone.schema == store.schema
        assert clone.get(1)["r"].tolist() == (3, 4.0)


# --------------------------------------------------------------------------
# bad input: raise, name the bad thing, change nothing
# --------------------------------------------------------------------------

BAD_INPUTS = [
    # add: columns
    ("add-unknown-column", lambda s: s.add([2], nope=1), UnknownColumnError, "nope"),
    ("add-row-shape", lambda s: s.add([2, 3], pos=[1.0, 2, 3]), ValueError, "pos"),
    ("add-row-shape-2d", lambda s: s.add([2], pos=[[1, 2, 3]]), ValueError, "pos"),
    ("add-length", lambda s: s.add([2, 3, 5], hp=[1, 2]), ValueError, "hp"),
    (
        "add-length-rows",
        lambda s: s.add([2, 3, 5], pos=np.ones((2, 2))),
        ValueError,
        "pos",
    ),
    ("add-str-into-float", lambda s: s.add([2], pos="abc"), TypeError, "pos"),
    (
        "add-str-array-into-float",
        lambda s: s.add([2, 3], pos=np.array([["1", "2"], ["3", "4"]])),
        TypeError,
        "pos",
    ),
    ("add-float-into-int", lambda s: s.add([2, 4], hp=[1.5, 2]), TypeError, "hp"),
    (
        "add-float-list-into-int-names-floats",
        lambda s: s.add([2], hp=[1.5]),
        TypeError,
        "cannot cast float64 values to int32",
    ),
    (
        "add-float-and-huge-int-into-int",
        lambda s: s.add([2, 4], hp=[1.5, 2**70]),
        TypeError,
        "cannot cast 1.5 (float) to int32",
    ),
    # add: ids
    ("add-float-ids", lambda s: s.add([2, 3.5]), TypeError, "3.5"),
    ("add-float-id-array", lambda s: s.add(np.array([2.5, 3.0])), TypeError, "2.5"),
    ("add-float-scalar", lambda s: s.add(2.5, hp=1), TypeError, "2.5"),
    ("add-bool-ids", lambda s: s.add([2, True]), TypeError, "bool"),
    ("add-bool-array", lambda s: s.add(np.array([True, False])), TypeError, "bool"),
    ("add-bool-scalar", lambda s: s.add(True), TypeError, "bool"),
    ("add-str-ids", lambda s: s.add(["a"]), TypeError, "str"),
    ("add-negative", lambda s: s.add([2, -3], hp=[1, 2]), ValueError, "-3"),
    ("add-negative-i1", lambda s: s.add(np.array([2, -3], np.int8)), ValueError, "-3"),
    ("add-negative-scalar", lambda s: s.add(-1), ValueError, "-1"),
    ("add-2d", lambda s: s.add(np.array([[2, 3]]), hp=1), ValueError, "2-D"),
    ("add-too-large", lambda s: s.add([2, FLAT_LIMIT]), ValueError, str(FLAT_LIMIT)),
    (
        "add-too-large-with-rows",
        lambda s: s.add([2, 2**40], hp=[1, 2]),
        ValueError,
        str(2**40),
    ),
    ("add-too-large-scalar", lambda s: s.add(2**63, hp=1), ValueError, str(2**63)),
    # set
    ("set-unknown-column", lambda s: s.set([4], nope=1), UnknownColumnError, "nope"),
    ("set-row-shape", lambda s: s.set([4, 7], pos=[1.0, 2, 3]), ValueError, "pos"),
    ("set-length", lambda s: s.set([4, 7, 1], hp=[1, 2]), ValueError, "hp"),
    ("set-str-into-float", lambda s: s.set(4, pos="x"), TypeError, "pos"),
    ("set-float-into-int", lambda s: s.set(4, hp=0.5), TypeError, "hp"),
    ("set-absent", lambda s: s.set([4, 7, 123], hp=1), KeyError, "123"),
    ("set-negative", lambda s: s.set([4, -2], hp=1), ValueError, "-2"),
    ("set-float-ids", lambda s: s.set([4.0], hp=1), TypeError, "4.0"),
    # get / queries / removal
    ("get-negative", lambda s: s.get([4, -2]), ValueError, "-2"),
    ("get-absent", lambda s: s.get([4, 123]), KeyError, "123"),
    ("get-2d", lambda s: s.get(np.array([[4]])), ValueError, "2-D"),
    ("contains-negative", lambda s: s.contains([1, -5]), ValueError, "-5"),
    ("contains-float", lambda s: s.contains([1.5]), TypeError, "1.5"),
    ("index-negative", lambda s: s.index(-5), ValueError, "-5"),
    ("in-list", lambda s: [4] in s, TypeError, "unhashable"),
    ("discard-negative", lambda s: s.discard([4, -5]), ValueError, "-5"),
    ("discard-float", lambda s: s.discard([4, 1.5]), TypeError, "1.5"),
    ("discard-2d", lambda s: s.discard(np.array([[4, 7]])), ValueError, "2-D"),
    ("remove-negative", lambda s: s.remove([4, -5]), ValueError, "-5"),
    ("remove-absent", lambda s: s.remove([4, 7, 321]), KeyError, "321"),
    ("remove-bool", lambda s: s.remove(np.array([True])), TypeError, "bool"),
    # column views
    ("view-unknown", lambda s: s["nope"], KeyError, "nope"),
    ("assign-unknown", lambda s: s.__setitem__("nope", 1), KeyError, "nope"),
    ("assign-str", lambda s: s.__setitem__("pos", "x"), TypeError, "pos"),
    ("assign-shape", lambda s: s.__setitem__("pos", [1, 2, 3]), ValueError, "pos"),
]


@pytest.mark.parametrize(
    ("op", "exc", "needle"),
    [case[1:] for case in BAD_INPUTS],
    ids=[case[0] for case in BAD_INPUTS],
)
def test_bad_input_raises_names_it_and_changes_nothing(op, exc, needle):
    # Flat, whose range ends at 2**31: the catalogue's "too large" ids.
    store = make_store(index="flat")
    snap = snapshot(store)
    with pytest.raises(exc) as info:
        op(store)
    assert needle in str(info.value), str(info.value)
    assert_unchanged(store, snap)


@pytest.mark.parametrize("bad", [2**31, 2**47, 2**50])
def test_out_of_range_add_names_the_index_range(bad):
    # A flat store's message names the flat range the id broke.
    store = make_store(index="flat")
    snap = snapshot(store)
    with pytest.raises(ValueError) as info:
        store.add([0, bad], hp=[1, 2])
    assert str(bad) in str(info.value)
    assert "flat" in str(info.value) and "2**31" in str(info.value)
    assert_unchanged(store, snap)


def test_failed_add_leaves_a_working_store():
    store = make_store(index="flat")
    with pytest.raises(ValueError):
        store.add([50, 2**40])
    with pytest.raises(TypeError):
        store.add([51], hp="x")
    assert store.add([50, 51], hp=[5, 6]) == 2
    assert order(store) == [4, 7, 1, 50, 51]
    np.testing.assert_array_equal(store.get([50, 51])["pos"], [[0, 0], [0, 0]])


# --------------------------------------------------------------------------
# SparseMap
# --------------------------------------------------------------------------


def make_map(items=((5, 1.5), (2, 2.5), (9, -1.0)), index="auto"):
    m = SparseMap("f8", index=index)
    for k, v in items:
        m[k] = v
    return m


class TestSparseMap:
    def test_is_a_mutable_mapping(self):
        m = SparseMap("f8")
        assert isinstance(m, collections.abc.MutableMapping)
        assert isinstance(m, collections.abc.Mapping)
        assert issubclass(SparseMap, collections.abc.MutableMapping)

    def test_set_get_del(self):
        m = SparseMap("f8")
        m[5] = 1.0
        assert m[5] == 1.0
        assert len(m) == 1
        assert 5 in m
        m[5] = 2.0
        assert m[5] == 2.0
        assert len(m) == 1
        del m[5]
        assert 5 not in m
        assert len(m) == 0
        with pytest.raises(KeyError):
            del m[5]
        with pytest.raises(KeyError):
            m[5]
        with pytest.raises(KeyError):
            m[2**40]

    def test_len_iter_in(self):
        m = make_map()
        assert len(m) == 3
        assert list(m) == [5, 2, 9]
        assert 2 in m
        assert 3 not in m
        assert 2**40 not in m

    def test_views_match_a_dict(self):
        m = make_map()
        d = {5: 1.5, 2: 2.5, 9: -1.0}
        assert list(m.keys()) == list(d.keys())
        assert list(m.values()) == list(d.values())
        assert list(m.items()) == list(d.items())
        assert m.keys() == d.keys()
        assert dict(m) == d
        del m[5]
        del d[5]
        assert set(m.keys()) == set(d.keys())
        assert dict(m.items()) == d

    def test_get_pop_setdefault_popitem(self):
        m = make_map()
        assert m.get(2) == 2.5
        assert m.get(3) is None
        assert m.get(3, "default") == "default"
        assert m.get(2**40, 0) == 0
        assert m.pop(2) == 2.5
        assert 2 not in m
        with pytest.raises(KeyError):
            m.pop(2)
        assert m.pop(2, "gone") == "gone"
        assert m.setdefault(9, 7.0) == -1.0
        assert m[9] == -1.0
        assert m.setdefault(4, 7.0) == 7.0
        assert m[4] == 7.0
        k, v = m.popitem()
        assert k not in m
        assert {k: v}.items() <= {5: 1.5, 9: -1.0, 4: 7.0}.items()
        assert len(m) == 2

    def test_update(self):
        m = make_map()
        d = dict(m)
        m.update({2: 20.0, 11: 11.0})
        d.update({2: 20.0, 11: 11.0})
        assert dict(m) == d
        m.update([(3, 3.0), (2, 21.0), (3, 4.0)])
        d.update([(3, 3.0), (2, 21.0), (3, 4.0)])
        assert dict(m) == d
        other = SparseMap("f8")
        other[[11, 40]] = [110.0, 400.0]
        m.update(other)
        d.update({11: 110.0, 40: 400.0})
        assert dict(m) == d
        m.update({})
        m.update([])
        assert dict(m) == d
        m.update(m)
        assert dict(m) == d

    def test_clear(self):
        m = make_map()
        assert m.clear() is None
        assert len(m) == 0
        assert dict(m) == {}
        m[1] = 1.0
        assert dict(m) == {1: 1.0}

    def test_batch_get_and_set(self):
        m = make_map()
        got = m[[9, 5, 9]]
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got, [-1.0, 1.5, -1.0])
        m[[1, 2, 1]] = [10.0, 20.0, 30.0]
        assert dict(m) == {5: 1.5, 2: 20.0, 9: -1.0, 1: 30.0}
        m[np.array([5, 9], np.uint8)] = 0.0
        assert m[5] == 0.0
        assert m[9] == 0.0
        with pytest.raises(KeyError) as info:
            m[[5, 123]]
        assert "123" in str(info.value)

    def test_add_with_and_without_values(self):
        m = make_map()
        assert m.add([2, 7, 7], [20.0, 70.0, 71.0]) == 1
        assert m[2] == 20.0
        assert m[7] == 71.0
        assert m.add([2, 8, 5]) == 1
        assert m[2] == 20.0
        assert m[8] == 0.0
        assert m[5] == 1.5
        assert m.add([]) == 0
        assert m.add([], []) == 0

    def test_discard_remove_contains_index(self):
        m = make_map()  # [5, 2, 9]
        assert m.contains(2) is True
        assert m.contains([2, 3]).tolist() == [True, False]
        assert m.index(9) == 2
        assert m.index([9, 3]).tolist() == [2, -1]
        assert m.discard([5, 100]) == 1
        assert list(m) == [9, 2]
        assert dict(m) == {9: -1.0, 2: 2.5}
        with pytest.raises(KeyError):
            m.remove([9, 100])
        assert dict(m) == {9: -1.0, 2: 2.5}
        assert m.remove([9, 9]) == 1
        assert dict(m) == {2: 2.5}

    def test_removal_on_an_empty_map(self):
        m = SparseMap("f8")
        assert m.discard(1) == 0
        assert m.pop(1, None) is None
        with pytest.raises(KeyError):
            del m[1]

    def test_ids_and_data_aligned(self):
        m = make_map()
        del m[5]
        assert m.ids.tolist() == [9, 2]
        assert not m.ids.flags.writeable
        np.testing.assert_array_equal(m.data, [-1.0, 2.5])
        assert dict(zip(m.ids.tolist(), m.data.tolist(), strict=True)) == dict(m)
        assert m.data.flags.writeable
        m.data[0] = 4.0
        assert m[9] == 4.0
        m.data *= 2
        assert dict(m) == {9: 8.0, 2: 5.0}
        m.data = 1.0
        assert dict(m) == {9: 1.0, 2: 1.0}
        m.data = [3.0, 4.0]
        assert dict(m) == {9: 3.0, 2: 4.0}

    def test_values_aliasing_data(self):
        m = SparseMap("i8")
        m[[1, 2, 3]] = [10, 20, 30]
        m[m.ids[::-1]] = m.data
        assert dict(m) == {1: 30, 2: 20, 3: 10}

    def test_shaped_values(self):
        m = SparseMap("f8", shape=3)
        m[1] = [1, 2, 3]
        m[[2, 4]] = [[4, 5, 6], [7, 8, 9]]
        m[5] = 0.5
        assert m[1].shape == (3,)
        np.testing.assert_array_equal(m[1], [1, 2, 3])
        np.testing.assert_array_equal(m[[4, 2]], [[7, 8, 9], [4, 5, 6]])
        np.testing.assert_array_equal(m[5], [0.5, 0.5, 0.5])
        assert m.data.shape == (4, 3)
        assert m.ids.tolist() == [1, 2, 4, 5]
        m.add(6)
        np.testing.assert_array_equal(m[6], [0, 0, 0])
        with pytest.raises(ValueError):
            m[1] = [1, 2]
        np.testing.assert_array_equal(m[1], [1, 2, 3])
        grid = SparseMap("i4", shape=(2, 2))
        grid[3] = [[1, 2], [3, 4]]
        assert grid[3].shape == (2, 2)
        assert grid.data.shape == (1, 2, 2)

    def test_equality_with_a_dict(self):
        m = make_map()
        assert m == {5: 1.5, 2: 2.5, 9: -1.0}
        assert m == {9: -1.0, 2: 2.5, 5: 1.5}
        assert m != {5: 1.5, 2: 2.5}
        assert m != {5: 1.5, 2: 2.5, 9: -2.0}
        assert m != {5: 1.5, 2: 2.5, 8: -1.0}
        assert m == make_map(((9, -1.0), (5, 1.5), (2, 2.5)))
        assert SparseMap("i4") == {}
        assert m != [5, 2, 9]

    def test_integer_dtypes_and_casting(self):
        m = SparseMap("i8")
        m[1] = 3
        m[2] = np.int8(-4)
        assert dict(m) == {1: 3, 2: -4}
        with pytest.raises(TypeError):
            m[3] = 1.5
        with pytest.raises(TypeError):
            m[3] = "7"
        assert dict(m) == {1: 3, 2: -4}

    @pytest.mark.parametrize(
        ("op", "exc", "needle"),
        [
            (lambda m: m.__setitem__(-1, 1.0), ValueError, "-1"),
            (lambda m: m.__setitem__(1.5, 1.0), TypeError, "1.5"),
            (lambda m: m.__setitem__(True, 1.0), TypeError, "bool"),
            (lambda m: m.__setitem__(2**40, 1.0), ValueError, str(2**40)),
            (lambda m: m.__setitem__(7, "x"), TypeError, "cast"),
            (lambda m: m.__setitem__([7, 8], [1.0, 2.0, 3.0]), ValueError, "3"),
            # One key that cannot be an id is absent, as for dict (issue 30).
            (lambda m: m.__getitem__(-1), KeyError, "-1"),
            (lambda m: m.__delitem__(-1), KeyError, "-1"),
            (lambda m: m.__delitem__(123), KeyError, "123"),
            (lambda m: m.remove([5, 123]), KeyError, "123"),
            (lambda m: m.add([7, -2], [1.0, 2.0]), ValueError, "-2"),
            (lambda m: m.update({7: 1.0, -2: 2.0}), ValueError, "-2"),
        ],
        ids=[
            "negative",
            "float-key",
            "bool-key",
            "too-large",
            "str-value",
            "length",
            "get-negative",
            "del-negative",
            "del-absent",
            "remove-absent",
            "add-negative",
            "update-negative",
        ],
    )
    def test_bad_input_changes_nothing(self, op, exc, needle):
        m = make_map(index="flat")  # the flat range: "too-large"
        before = (m.ids.tolist(), m.data.tolist())
        with pytest.raises(exc) as info:
            op(m)
        assert needle in str(info.value)
        assert (m.ids.tolist(), m.data.tolist()) == before

    def test_pickle(self):
        m = make_map()
        del m[5]
        m[7] = 7.0
        clone = pickle.loads(pickle.dumps(m))
        assert isinstance(clone, SparseMap)
        assert clone == m
        assert clone.ids.tolist() == m.ids.tolist() == [9, 2, 7]
        assert clone.data.dtype == np.float64
        clone[100] = 1.0
        assert 100 not in m

    def test_pickle_shaped(self):
        m = SparseMap("i2", shape=(2,))
        m[[3, 1]] = [[1, 2], [3, 4]]
        clone = pickle.loads(pickle.dumps(m))
        assert clone.ids.tolist() == [3, 1]
        np.testing.assert_array_equal(clone.data, [[1, 2], [3, 4]])
        assert clone.data.dtype == np.int16

    def test_repr(self):
        m = make_map()
        assert "SparseMap" in repr(m)


# --------------------------------------------------------------------------
# sort, sort_as
# --------------------------------------------------------------------------

#: Rows of every word width the row kernels move (8, 4, 2 and 1-byte words).
WIDE = {"pos": ("f8", 2), "mass": "f4", "kind": "i2", "rgb": ("u1", 3)}


def wide_rows(i):
    """Distinct rows of ``WIDE`` for id ``i``."""
    return {
        "pos": [i + 0.5, -i],
        "mass": i / 4,
        "kind": 1000 - i,
        "rgb": [i % 256, (3 * i) % 256, 255 - i % 256],
    }


def make_wide(ids):
    store = ComponentStore(WIDE)
    ids = list(ids)
    store.add(
        ids,
        **{
            name: np.array([wide_rows(i)[name] for i in ids], dtype, ndmin=1)
            for name, (dtype, _) in store.schema.items()
        },
    )
    return store


def assert_rows_belong(store, rows=rows_of):
    """Every member's row in every column is still its own."""
    assert_rows_match(store, {i: rows(i) for i in order(store)})


def assert_index_consistent(store):
    """index() and contains() agree with the dense order (the invariants)."""
    ids = order(store)
    assert len(set(ids)) == len(ids)
    if ids:
        assert store.index(ids).tolist() == list(range(len(ids)))
        assert store.contains(ids).all()


def sorted_as(members, other):
    """The shared members in ``other``'s order (first occurrence), then the rest."""
    shared = [x for x in dict.fromkeys(other) if x in set(members)]
    return shared, [x for x in members if x not in set(shared)]


def assert_sorted_as(store, members, other):
    shared, rest = sorted_as(members, other)
    now = order(store)
    assert now[: len(shared)] == shared
    assert sorted(now[len(shared) :]) == sorted(rest)


class TestSort:
    def test_sort_by_id_moves_every_column(self):
        store = make_store(ids=[8, 3, 12, 0, 5], discard=(3,))
        assert order(store) == [8, 5, 12, 0]
        assert store.sort() is None
        assert order(store) == [0, 5, 8, 12]
        assert_rows_belong(store)
        assert_index_consistent(store)
        assert store.get(12)["hp"] == rows_of(12)["hp"]

    def test_sort_by_id_every_word_width(self):
        ids = [40, 7, 300, 2, 65, 1]
        store = make_wide(ids)
        store.sort()
        assert order(store) == sorted(ids)
        assert_rows_belong(store, wide_rows)

    def test_sort_is_in_place_for_column_views(self):
        store = make_store(ids=[8, 3, 12, 0, 5], discard=())
        hp = store["hp"]
        store.sort()
        np.testing.assert_array_equal(hp, store["hp"])
        hp[0] = -1  # still a view of the store's rows
        assert store.get(0)["hp"] == -1

    def test_stable_sort_by_a_column(self):
        store = make_store(ids=[5, 1, 9, 3, 7, 2], discard=())
        store["hp"] = [2, 1, 2, 1, 0, 2]
        expected = {
            i: rows_of(i) | {"hp": h}
            for i, h in zip(order(store), [2, 1, 2, 1, 0, 2], strict=True)
        }
        assert store.sort(key="hp") is None
        # ties keep their order: 1 before 3, and 5, 9, 2 as they were
        assert order(store) == [7, 1, 3, 5, 9, 2]
        assert store["hp"].tolist() == [0, 1, 1, 2, 2, 2]
        assert_rows_match(store, expected)
        assert_index_consistent(store)
        # sorting again by the same key changes nothing (stable)
        store.sort(key="hp")
        assert order(store) == [7, 1, 3, 5, 9, 2]

    @pytest.mark.parametrize("how", ["column", "array"])
    def test_sort_is_stable_on_many_ties(self, how):
        # numpy's default sort is stable only on short arrays
        rng = np.random.default_rng(7)
        ids = rng.permutation(1000)[:300].tolist()
        store = make_store(ids=ids, discard=())
        ties = rng.integers(0, 3, len(ids))
        store["hp"] = ties
        expected = {
            i: rows_of(i) | {"hp": t} for i, t in zip(ids, ties.tolist(), strict=True)
        }
        store.sort(key="hp" if how == "column" else ties.astype(np.float32))
        assert order(store) == sorted(ids, key=lambda i: expected[i]["hp"])
        assert_rows_match(store, expected)
        assert_index_consistent(store)

    def test_sort_by_a_float_column_every_word_width(self):
        store = make_wide([4, 9, 1, 7, 3])
        store.sort(key="mass")
        assert order(store) == [1, 3, 4, 7, 9]
        store.sort(key="kind")  # 1000 - i
        assert order(store) == [9, 7, 4, 3, 1]
        assert_rows_belong(store, wide_rows)

    @pytest.mark.parametrize(
        ("make_key", "expected"),
        [
            (lambda store: [30, 10, 20], [7, 1, 4]),
            (lambda store: np.array([0.5, -1.0, 0.0]), [7, 1, 4]),
            (lambda store: np.array([3, 1, 2], np.uint8), [7, 1, 4]),
            (lambda store: np.array(["c", "a", "b"]), [7, 1, 4]),
            (lambda store: -store["pos"][:, 1] - 1000, [1, 4, 7]),  # i - 1000
        ],
        ids=["list", "float", "uint8", "str", "view-expression"],
    )
    def test_sort_by_a_key_array(self, make_key, expected):
        store = make_store()  # [4, 7, 1]
        store.sort(key=make_key(store))
        assert order(store) == expected
        assert_rows_belong(store)
        assert_index_consistent(store)

    def test_sort_by_a_key_array_is_stable_and_aligned_with_ids(self):
        store = make_store(ids=[6, 2, 8, 4], discard=())
        store.sort(key=[1, 0, 1, 0])
        assert order(store) == [2, 4, 6, 8]
        store.sort(key=store.ids[::-1])  # a view of the ids themselves
        assert order(store) == [8, 6, 4, 2]
        assert_rows_belong(store)
        store.sort(key=store["hp"])  # a view of a column being moved
        assert order(store) == [2, 4, 6, 8]
        assert_rows_belong(store)

    @pytest.mark.parametrize(
        ("key", "exc"),
        [
            ([1, 2], ValueError),
            ([1, 2, 3, 4], ValueError),
            (np.zeros((3, 1)), ValueError),
            (np.zeros((1, 3)), ValueError),
            (5, ValueError),
            ([], ValueError),
            ([None, 1, 2], TypeError),
        ],
        ids=["short", "long", "column-2d", "row-2d", "scalar", "empty", "unorderable"],
    )
    def test_bad_key_changes_nothing(self, key, exc):
        store = make_store()
        snap = snapshot(store)
        with pytest.raises(exc) as info:
            store.sort(key=key)
        if exc is ValueError:
            assert "3" in str(info.value)  # the expected length
        assert_unchanged(store, snap)
        assert_index_consistent(store)

    def test_multi_dim_column_key_names_the_column(self):
        store = make_store()
        snap = snapshot(store)
        with pytest.raises(ValueError, match="pos"):
            store.sort(key="pos")
        assert_unchanged(store, snap)
        one = ComponentStore({"w": ("f4", 1)})
        one.add([3, 1], w=[[2], [1]])
        with pytest.raises(ValueError, match="'w'"):
            one.sort(key="w")
        assert order(one) == [3, 1]

    def test_unknown_column_key(self):
        store = make_store()
        snap = snapshot(store)
        with pytest.raises(UnknownColumnError, match="nope"):
            store.sort(key="nope")
        with pytest.raises(KeyError):
            store.sort(key="nope")
        assert_unchanged(store, snap)

    @pytest.mark.parametrize("capacity", [0, 10])
    def test_sort_an_empty_store(self, capacity):
        store = ComponentStore(SCHEMA, capacity=capacity)
        for key in (None, "hp", [], np.empty(0)):
            assert store.sort(key=key) is None
        assert store.sort_as([3, 1]) is None
        assert store.sort_as(SparseSet.from_ids([2])) is None
        assert store.sort_as(ComponentStore({})) is None
        assert len(store) == 0
        with pytest.raises(ValueError):
            store.sort(key=[1])
        store.add([2, 1], hp=[5, 6])
        store.sort()
        assert order(store) == [1, 2]
        assert store["hp"].tolist() == [6, 5]

    def test_sort_a_tag_store(self):
        store = ComponentStore({})
        store.add([5, 2, 9, 1])
        store.sort()
        assert order(store) == [1, 2, 5, 9]
        store.sort(key=[4, 3, 2, 1])
        assert order(store) == [9, 5, 2, 1]
        store.sort_as([2, 7, 1])
        assert order(store)[:2] == [2, 1]
        assert sorted(order(store)) == [1, 2, 5, 9]
        assert_index_consistent(store)

    def test_store_keeps_working_after_sort(self):
        store = make_store(ids=[8, 3, 12, 0, 5], discard=())
        store.sort()
        assert store.add([4, 12], hp=[41, 121]) == 1
        assert order(store) == [0, 3, 5, 8, 12, 4]
        assert store.get([12, 4])["hp"].tolist() == [121, 41]
        assert store.discard([0]) == 1  # swap-and-pop from the sorted order
        assert order(store) == [4, 3, 5, 8, 12]
        store.sort_as([12, 5])
        assert store.remove([12, 3]) == 2
        assert sorted(order(store)) == [4, 5, 8]
        assert_index_consistent(store)
        assert store.get(8)["pos"].tolist() == rows_of(8)["pos"]

    # -- sort_as ------------------------------------------------------------

    def test_sort_as_a_sparse_set(self):
        store = make_wide([1, 2, 3, 4, 5, 6])
        other = SparseSet.from_ids([9, 4, 2, 100, 6])
        other.discard(9)  # other's order is [6, 4, 2, 100]
        assert store.sort_as(other) is None
        assert order(store)[:3] == [6, 4, 2]
        assert_sorted_as(store, [1, 2, 3, 4, 5, 6], other.ids.tolist())
        assert_rows_belong(store, wide_rows)
        assert_index_consistent(store)
        assert other.ids.tolist() == [6, 4, 2, 100]  # other is read only

    def test_sort_as_another_store(self):
        store = make_store(ids=[10, 11, 12, 13, 14], discard=())
        other = ComponentStore({"flag": "u1"})
        other.add([13, 99, 10, 14])
        store.sort_as(other)
        assert order(store)[:3] == [13, 10, 14]
        assert sorted(order(store)[3:]) == [11, 12]
        assert_rows_belong(store)
        assert_index_consistent(store)
        # a join of the two now reads both in the same direction
        shared = [i for i in order(other) if i in store]
        assert order(store)[: len(shared)] == shared

    @pytest.mark.parametrize("dtype", INT_DTYPES, ids=DTYPE_IDS)
    def test_sort_as_an_id_array(self, dtype):
        store = make_store(ids=[0, 9, 4, 100, 7, 120], discard=(9,))
        members = order(store)
        ids = [7, 55, 0, 7, 126, 120, 0]  # non-members and repeats
        if np.iinfo(dtype).max >= 255:
            ids += [200, 255]  # past capacity, or maybe not
        if np.iinfo(dtype).max >= 2**32:
            ids += [2**31, 2**32 + 4, np.iinfo(dtype).max]
        store.sort_as(np.array(ids, dtype))
        assert order(store)[:3] == [7, 0, 120]
        assert_sorted_as(store, members, ids)
        assert_rows_belong(store)
        assert_index_consistent(store)

    @pytest.mark.parametrize(
        "ids",
        [
            [120, 2**40, 4, 2**63, 2**70, 4],
            (4, 120),
            range(120, 0, -1),
            np.array([4, 120])[::-1],
            np.array([120, 2**64 - 1, 4], np.uint64),
        ],
        ids=["list-huge", "tuple", "range", "strided", "uint64-past-sign-bit"],
    )
    def test_sort_as_any_sequence(self, ids):
        store = make_store(ids=[0, 4, 100, 7, 120], discard=())
        members = order(store)
        store.sort_as(ids)
        want = [int(x) for x in ids]
        assert_sorted_as(store, members, want)
        assert_rows_belong(store)
        assert_index_consistent(store)

    def test_sort_as_one_id(self):
        store = make_store()  # [4, 7, 1]
        store.sort_as(1)
        assert order(store)[0] == 1
        store.sort_as(np.uint16(7))
        assert order(store)[0] == 7
        store.sort_as(2**40)  # absent: nothing moves
        assert order(store)[0] == 7
        assert_rows_belong(store)

    def test_sort_as_itself_keeps_members_and_order(self):
        store = make_store(ids=[5, 3, 8, 1, 12], discard=(3,))
        before = order(store)
        store.sort_as(store)
        assert order(store) == before
        store.sort_as(store.ids)  # a read-only view of the very array it reorders
        assert order(store) == before
        assert_rows_belong(store)
        assert_index_consistent(store)

    def test_sort_as_a_view_of_its_own_ids(self):
        store = make_store(ids=[5, 3, 8, 1, 12, 6], discard=())
        before = order(store)
        store.sort_as(store.ids[::-1])
        assert order(store) == before[::-1]
        store.sort_as(store.ids[1::2])
        assert order(store)[:3] == before[::-1][1::2]
        # read back to front, the view passes positions the first moves wrote
        now = order(store)
        store.sort_as(store.ids[::-2])
        assert order(store)[:3] == now[::-2]
        now = order(store)
        store.sort_as(store.ids[2::-2])
        assert order(store)[:2] == [now[2], now[0]]
        assert sorted(order(store)) == sorted(before)
        assert_rows_belong(store)
        assert_index_consistent(store)

    @pytest.mark.parametrize(
        ("ids", "exc", "needle"),
        [
            ([4, -1], ValueError, "-1"),
            (np.array([7, -5], np.int8), ValueError, "-5"),
            (-3, ValueError, "-3"),
            ([4, 2**40, -(2**70)], ValueError, str(-(2**70))),
            ([4, 1.5], TypeError, "1.5"),
            ([4, True], TypeError, "bool"),
            (np.array([[4, 7]]), ValueError, "2-D"),
            ("abc", TypeError, "str"),
        ],
        ids=[
            "negative",
            "negative-i1",
            "negative-scalar",
            "negative-huge",
            "float",
            "bool",
            "2d",
            "str",
        ],
    )
    def test_sort_as_bad_ids_change_nothing(self, ids, exc, needle):
        store = make_store()
        snap = snapshot(store)
        with pytest.raises(exc) as info:
            store.sort_as(ids)
        assert needle in str(info.value), str(info.value)
        assert_unchanged(store, snap)

    def test_sort_as_is_in_place_for_column_views(self):
        store = make_store(ids=[5, 3, 8, 1], discard=())
        pos = store["pos"]
        store.sort_as([1, 8])
        np.testing.assert_array_equal(pos, store["pos"])
        assert order(store)[:2] == [1, 8]

    @pytest.mark.parametrize("seed", range(6))
    def test_sort_as_random(self, seed):
        rng = np.random.default_rng(seed)
        ids = rng.choice(200, size=rng.integers(0, 60), replace=False).tolist()
        store = make_wide(ids)
        store.discard(rng.choice(200, size=20).tolist())
        members = order(store)
        other = rng.integers(0, 220, size=rng.integers(0, 80))
        store.sort_as(other)
        assert_sorted_as(store, members, other.tolist())
        assert_rows_belong(store, wide_rows)
        assert_index_consistent(store)
        store.sort(key="kind")
        assert order(store) == sorted(members, reverse=True)
        assert_rows_belong(store, wide_rows)

    def test_sparse_map_after_its_store_is_sorted(self):
        m = make_map(((5, 1.5), (2, 2.5), (9, -1.0), (4, 0.0)))
        want = dict(m)
        m.store.sort()
        assert list(m) == [2, 4, 5, 9]
        assert dict(m) == want
        assert m[9] == -1.0
        assert m[[5, 2]].tolist() == [1.5, 2.5]
        m.store.sort(key="value")
        assert list(m) == [9, 4, 5, 2]
        assert m.data.tolist() == [-1.0, 0.0, 1.5, 2.5]
        m.store.sort_as([5, 7, 9])
        assert list(m)[:2] == [5, 9]
        assert dict(m) == want
        del m[5]
        del want[5]
        m[7] = 7.0
        want[7] = 7.0
        assert dict(m) == want
        assert m.index(7) == 3
        assert m.contains([9, 5]).tolist() == [True, False]


# --------------------------------------------------------------------------
# integer columns: any integer that fits goes in, one that does not raises
# (docs/contract.md#store-inputs)
# --------------------------------------------------------------------------

INTEGER_COLUMNS = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]


@pytest.mark.parametrize("column", INTEGER_COLUMNS)
@pytest.mark.parametrize("source", ["list", "int64", "uint64", "int8"])
def test_integers_that_fit_go_into_any_integer_column(column, source):
    info = np.iinfo(column)
    candidates = {
        "list": [info.min, -100, 0, 100, info.max],
        "int64": [max(info.min, -(2**63)), 0, min(info.max, 2**63 - 1)],
        "uint64": [0, 7, min(info.max, 2**64 - 1)],
        "int8": [-128, -3, 0, 100, 127],
    }[source]
    values = [v for v in candidates if info.min <= v <= info.max]
    ids = list(range(len(values)))
    given = values if source == "list" else np.array(values, dtype=source)
    store = ComponentStore({"x": column})
    assert store.add(ids, x=given) == len(ids)
    assert store["x"].tolist() == values
    store.set(ids[-1], x=values[0])  # one Python int, into any integer column
    assert store.get(ids[-1])["x"] == values[0]


@pytest.mark.parametrize(
    ("column", "bad"),
    [
        ("i2", 70_000),
        ("i2", -40_000),
        ("i4", 2**40),
        ("u1", 256),
        ("u1", -1),
        ("u8", -1),
        ("i8", 2**63),
        ("u8", 2**64),
        ("i1", 2**70),
    ],
)
def test_an_integer_that_does_not_fit_raises_naming_column_value_and_row(column, bad):
    store = ComponentStore({"x": column, "y": "f8"})
    store.add([1, 2], x=[1, 2], y=[0.5, 1.5])
    snap = snapshot(store)
    with pytest.raises(ValueError) as info:
        store.add([5, 1, 6], x=[3, bad, 4], y=1.0)
    message = str(info.value)
    assert "'x'" in message and str(bad) in message and "row 1" in message
    assert_unchanged(store, snap)
    with pytest.raises(ValueError, match=str(bad)):
        store.set(2, x=bad)
    with pytest.raises(ValueError, match=str(bad)):
        store["x"] = bad
    assert_unchanged(store, snap)


def test_an_out_of_range_value_in_a_row_vector_names_its_row():
    store = ComponentStore({"rgb": ("u1", 3)})
    with pytest.raises(ValueError, match=r"300 in row 2"):
        store.add([1, 2, 3], rgb=[[0, 0, 0], [1, 2, 3], [255, 300, 0]])
    assert len(store) == 0


def test_floats_and_strings_still_do_not_go_into_integer_columns():
    store = ComponentStore({"x": "i4"})
    with pytest.raises(TypeError, match="float64"):
        store.add([1], x=1.5)
    with pytest.raises(TypeError):
        store.add([1], x="7")
    assert len(store) == 0


def test_sparse_map_errors_speak_of_its_values_not_an_internal_column():
    m = SparseMap("u1")
    m[5] = 3  # a Python int into uint8: it fits
    assert m[5] == 3
    with pytest.raises(ValueError) as info:
        m[6] = 300
    assert "SparseMap values" in str(info.value) and "'value'" not in str(info.value)
    with pytest.raises(TypeError, match="SparseMap values"):
        m[7] = 1.5
    assert sorted(m) == [5]


# --------------------------------------------------------------------------
# a store is a table, not an id array
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "container",
    [
        lambda: make_store(),
        lambda: SparseMap("f8"),
    ],
    ids=["store", "map"],
)
def test_asarray_of_a_store_or_map_raises_and_says_what_to_use(container):
    c = container()
    with pytest.raises(TypeError, match=r"\.ids"):
        np.asarray(c)
    with pytest.raises(TypeError):
        np.allclose(c, 0.1)


# --------------------------------------------------------------------------
# one id: the scalar paths answer as the batch paths do
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
def test_get_of_one_id_matches_the_batch_get(kind):
    store = ComponentStore(SCHEMA, index=kind)
    ids = [4, 9, 1, 7]
    store.add(
        ids, pos=[rows_of(i)["pos"] for i in ids], hp=[rows_of(i)["hp"] for i in ids]
    )
    store.discard(9)
    for i in (4, 1, 7):
        one, batch = store.get(i), store.get([i])
        for name in SCHEMA:
            np.testing.assert_array_equal(one[name], batch[name][0])
        # a copy, not a view of the column
        one["pos"][...] = -1
        assert store.get(i)["pos"].tolist() == rows_of(i)["pos"]
    for absent in (9, 3, 2**40, 2**63 - 1):
        with pytest.raises(KeyError, match=str(absent)):
            store.get(absent)
    with pytest.raises(KeyError, match="-1"):
        store.get(-1)  # one key that cannot be an id: absent
    with pytest.raises(ValueError, match="non-negative"):
        store.get([-1])  # in a batch: a bug upstream
    store.jit  # noqa: B018 - the twin now holds the state: the slow path answers
    assert store.get(7)["hp"] == rows_of(7)["hp"]


def test_adding_only_existing_ids_keeps_a_store_checkpoint_valid():
    store = ComponentStore({"hp": "i4"})
    store.add([1, 2, 3], hp=[1, 2, 3])
    keys = store._engine
    token = keys.checkpoint()
    store.discard(1)
    assert store.add([2, 3], hp=[20, 30]) == 0  # replaced values, no new member
    keys.rollback(token)
    assert sorted(store) == [1, 2, 3]


def test_columns_left_out_of_add_are_blank_whatever_their_dtype():
    # A zero of each dtype: an empty string, not the text "0".
    schema = {
        "name": "U8",
        "raw": "S4",
        "when": "M8[s]",
        "pair": np.dtype([("a", "i4"), ("b", "U3")]),
        "hp": "f4",
    }
    store = ComponentStore(schema)
    store.add([3, 1])
    row = store.get(3)
    assert row["name"] == "" and row["raw"] == b""
    assert row["when"] == np.datetime64(0, "s")
    assert row["pair"]["a"] == 0 and row["pair"]["b"] == ""
    assert row["hp"] == 0.0


# -- one row at a time: the plain values' shortcut answers as a batch ------

ROW_SCHEMA = {
    "f8": "f8",
    "f4": "f4",
    "i4": "i4",
    "u1": "u1",
    "b": "?",
    "vec": ("f8", 3),
    "ivec": ("i2", 2),
    "text": "U5",
}
ROW_VALUES = [
    1.5, -2.0, 7, -1, 0, 255, 256, 2**31, 2**63, -(2**63) - 1, 2**70, True, False,
    np.float32(2.5), np.int64(3), np.uint64(2**64 - 1), "a", "hello world", None,
    (1.0, 2.0, 3.0), [1.0, 2.0, 3.0], (1, 2, 3), (1.0, 2.0), [1.5, "x", 2.0],
    (1, 2), (40000, 1), np.arange(3.0), np.arange(3), np.zeros(3, np.float32),
    np.arange(2, dtype=np.int16), [[1.0, 2.0, 3.0]], float("nan"), 1e300,
]  # fmt: skip


def _outcome(call):
    """What ``call`` did: ("ok", the store's rows) or (error type, message)."""
    try:
        store = call()
    except Exception as error:
        return type(error).__name__, str(error)
    return "ok", {name: store[name].tolist() for name in store.columns}


@pytest.mark.parametrize("column", list(ROW_SCHEMA))
@pytest.mark.parametrize("value", ROW_VALUES, ids=repr)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 1e300 into f4, as numpy
def test_setting_one_row_of_plain_values_answers_as_the_checked_path(column, value):
    """``store.set(x, c=v)`` writes plain values (a float, an int that
    fits, a tuple of floats) without the batch checks: it stores or
    refuses exactly what the checked path does."""

    def set_one(shortcut=True):
        store = ComponentStore(ROW_SCHEMA)
        store.add([3, 4])
        if not shortcut:
            store._plain_specs = {}  # no value is plain: the checked path
        store.set(np.int64(4), **{column: value})
        return store

    checked = _outcome(lambda: set_one(shortcut=False))
    assert repr(_outcome(set_one)) == repr(checked)  # repr: nan == nan

"""Interop: ids in from pandas, pyarrow and polars; tables out and back in.

Covers issue 13 outside Parquet (see ``test_parquet.py``):

- ids in: every id argument (sets, stores, maps, world handles) takes a
  pandas ``Series``/``Index``, a pyarrow ``Array``/``ChunkedArray`` and a
  polars ``Series`` and answers as for the same ids in a numpy array; an
  integer column is read in place (same buffer address), nulls raise
  ``ValueError`` naming the first one, nullable dtypes without nulls pass,
  floats, strings, bools and dictionary-encoded columns raise ``TypeError``
  as numpy input does, and a failed call changes nothing;
- out: ``SparseSet.to_arrow``, ``ComponentStore/SparseMap.to_arrow``
  (zero-copy, ``FixedSizeList`` rows), ``to_pandas`` (``name_0 ..``
  columns), ``World.to_arrow`` (a view's join);
- in: ``from_arrow`` / ``from_pandas`` for stores and maps, schema inferred
  or given, with ``add``'s rules and each bad table's error;
- round trips through Arrow and pandas for every dtype and row shape a
  store holds (hypothesis);
- ``import sparseset`` imports none of pandas, pyarrow, polars, and a
  missing one is one ``ImportError`` line naming the extra.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sparseset import ComponentStore, SparseMap, SparseSet, World
from sparseset.sets.ids import as_ids

INT_TYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]


# --------------------------------------------------------------------------
# columns of every library, from numpy ids
# --------------------------------------------------------------------------


def chunked(ids, parts=3):
    """A ChunkedArray of ``ids`` in ``parts`` chunks (the last may be empty)."""
    return pa.chunked_array(
        [pa.array(part) for part in np.array_split(ids, parts)],
        pa.from_numpy_dtype(ids.dtype),
    )


#: name -> how to turn a numpy id array into that library's column.
SOURCES = {
    "pyarrow Array": pa.array,
    "pyarrow Array, sliced": lambda ids: pa.array(
        np.concatenate([[7, 7], ids, [7]]).astype(ids.dtype)
    )[2:-1],
    "pyarrow ChunkedArray": chunked,
    "pyarrow ChunkedArray of one chunk": lambda ids: pa.chunked_array([pa.array(ids)]),
    "pandas Series": pd.Series,
    "pandas Index": pd.Index,
    "pandas Int64 Series": lambda ids: pd.Series(ids, dtype="Int64"),
    "pandas Int64 Index": lambda ids: pd.Index(ids, dtype="Int64"),
    "pandas int64[pyarrow] Series": lambda ids: pd.Series(ids, dtype="int64[pyarrow]"),
    "polars Series": pl.Series,
    "polars Series of two chunks": lambda ids: pl.concat(
        [pl.Series(ids[:2]), pl.Series(ids[2:])], rechunk=False
    ),
}


@pytest.fixture(params=SOURCES.values(), ids=SOURCES.keys())
def source(request):
    return request.param


IDS = np.array([12, 3, 40, 3, 7, 0, 25], np.int64)
OTHER = np.array([3, 99, 40, 5], np.int64)


# --------------------------------------------------------------------------
# ids in: the same answers as numpy, for every container
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
def test_set_methods_answer_as_for_numpy(source, kind):
    def run(convert):
        s = SparseSet(index=kind)
        out = [s.add(convert(IDS)), s.ids.tolist()]
        out.append(s.contains(convert(OTHER)).tolist())
        out.append(s.index(convert(OTHER)).tolist())
        out.append(s.discard(convert(OTHER)))
        out.append(s.remove(convert(np.array([12, 0]))))
        out.append(s.keep_only(convert(np.array([7, 25, 8]))))
        out.append(sorted(s))
        return out

    assert run(source) == run(lambda ids: ids)


def test_set_from_ids_and_algebra_take_columns(source):
    s = SparseSet.from_ids(source(IDS))
    assert sorted(s) == sorted(set(IDS.tolist()))
    t = SparseSet.from_ids(OTHER)
    assert sorted(s.intersection(source(OTHER))) == sorted(s & t)


def test_store_methods_answer_as_for_numpy(source):
    def run(convert):
        store = ComponentStore({"hp": "i4", "pos": ("f8", 2)})
        values = np.arange(IDS.shape[0])
        out = [store.add(convert(IDS), hp=values, pos=values[:, None] * 0.5)]
        out.append(store.get(convert(np.array([40, 3])))["hp"].tolist())
        store.set(convert(np.array([7])), hp=-1)
        out.append(store.contains(convert(OTHER)).tolist())
        out.append(store.discard(convert(OTHER)))
        out += [store.ids.tolist(), store["hp"].tolist(), store["pos"].tolist()]
        return out

    assert run(source) == run(lambda ids: ids)


def test_map_methods_answer_as_for_numpy(source):
    def run(convert):
        m = SparseMap("f8")
        m[convert(IDS)] = IDS * 1.5
        out = [
            m[convert(np.array([25, 12]))].tolist(),
            m.contains(convert(OTHER)).tolist(),
        ]
        del m[convert(np.array([0, 7]))]
        return [*out, m.ids.tolist(), m.data.tolist()]

    assert run(source) == run(lambda ids: ids)


def test_world_takes_handles_from_columns(source):
    def run(convert):
        w = World()
        w.register("hp", "i4")
        w.register("tag")
        e = w.create(6)
        w.destroy(convert(e[[1, 4]]))
        again = w.create(1)  # index 4 again, generation 1: a big handle
        live = np.concatenate([e[[0, 2, 3, 5]], again])
        out = [w.alive(convert(e)).tolist(), w.add("hp", convert(live), hp=live % 97)]
        w["tag"].add(convert(live[:2]))
        out.append(w.has("tag", convert(live)).tolist())
        out.append(w.get("hp", convert(live[::-1]))["hp"].tolist())
        out.append(w["hp"].index(convert(e)).tolist())
        w["hp"].discard(convert(live[1:2]))
        out.append(w["hp"].ids.tolist())
        return out

    assert run(source) == run(lambda ids: ids)


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_every_integer_type_is_read_as_itself(dtype):
    ids = np.array([5, 0, 100], dtype)
    for column in (pa.array(ids), chunked(ids, 2), pl.Series(ids), pd.Series(ids)):
        arr, scalar = as_ids(column)
        assert arr.dtype == np.dtype(dtype)
        assert arr.tolist() == [5, 0, 100]
        assert not scalar


def test_empty_columns_are_empty_batches():
    for column in (
        pa.array([], pa.int64()),
        pa.chunked_array([], pa.int32()),
        pl.Series([], dtype=pl.Int64),
        pd.Series([], dtype="int64"),
        pd.Index([], dtype="Int64"),
    ):
        s = SparseSet.from_ids([1])
        assert s.add(column) == 0
        assert s.contains(column).tolist() == []


def test_a_column_exporting_only_the_capsule_interface_is_read():
    class Column:
        """What nanoarrow or another producer hands over: the capsules only."""

        def __init__(self, array):
            self._array = array

        def __arrow_c_array__(self, requested_schema=None):
            return self._array.__arrow_c_array__(requested_schema)

    class Stream:
        def __init__(self, array):
            self._array = array

        def __arrow_c_stream__(self, requested_schema=None):
            return self._array.__arrow_c_stream__(requested_schema)

    s = SparseSet()
    assert s.add(Column(pa.array([4, 2]))) == 2
    assert s.add(Stream(chunked(np.array([2, 9, 1]), 2))) == 2
    assert s.ids.tolist() == [4, 2, 9, 1]
    with pytest.raises(TypeError, match="Arrow column of type float64"):
        s.add(Column(pa.array([1.5])))
    with pytest.raises(ValueError, match=r"ids\[1\] is null"):
        s.add(Stream(pa.chunked_array([[3], [None]], pa.int64())))
    assert s.ids.tolist() == [4, 2, 9, 1]


# --------------------------------------------------------------------------
# zero copy: the ids a kernel reads are the column's own buffer
# --------------------------------------------------------------------------


def _address(arr):
    return arr.__array_interface__["data"][0]


def test_pyarrow_ids_are_read_in_place():
    ids = np.arange(1000, dtype=np.int64) * 3
    array = pa.array(ids)
    data = array.buffers()[1].address
    assert _address(as_ids(array)[0]) == data
    assert _address(as_ids(array[10:])[0]) == data + 10 * 8
    assert _address(as_ids(pa.chunked_array([array]))[0]) == data
    uint = pa.array(ids.astype(np.uint32))
    assert _address(as_ids(uint)[0]) == uint.buffers()[1].address


def test_pandas_ids_are_read_in_place():
    ids = np.arange(1000, dtype=np.int64) * 3
    series = pd.Series(ids)
    assert _address(as_ids(series)[0]) == _address(series.to_numpy())
    index = pd.Index(ids)
    assert _address(as_ids(index)[0]) == _address(index.to_numpy())
    masked = pd.Series(ids, dtype="Int64")
    assert _address(as_ids(masked)[0]) == _address(masked.array._data)
    arrow = pd.Series(pa.array(ids), dtype="int64[pyarrow]")
    buffer = arrow.array._pa_array.chunk(0).buffers()[1]
    assert _address(as_ids(arrow)[0]) == buffer.address


def test_polars_ids_are_read_in_place():
    series = pl.Series(np.arange(1000, dtype=np.int64) * 3)
    assert _address(as_ids(series)[0]) == series.to_arrow().buffers()[1].address
    assert _address(as_ids(series)[0]) == _address(series.to_numpy())


def test_ids_read_in_place_are_read_only_and_outlive_their_column():
    import gc

    arr = as_ids(pa.array(np.arange(100, dtype=np.int64) * 7))[0]
    polars_arr = as_ids(pl.Series(np.arange(100, dtype=np.int64) * 7))[0]
    gc.collect()
    for ids in (arr, polars_arr):
        assert not ids.flags.writeable
        assert ids.tolist() == list(range(0, 700, 7))
        with pytest.raises(ValueError, match="read-only"):
            ids[0] = 1


def test_several_chunks_are_joined_into_one_array():
    arr = as_ids(chunked(np.arange(10), 3))[0]
    assert arr.tolist() == list(range(10))


# --------------------------------------------------------------------------
# ids in: bad columns raise and change nothing
# --------------------------------------------------------------------------


#: name -> (column, null position).
NULLS = {
    "pyarrow Array": (pa.array([4, 5, None, 6]), 2),
    "pyarrow Array, sliced": (pa.array([None, 4, None, 6])[1:], 1),
    "pyarrow ChunkedArray": (pa.chunked_array([[4, 5], [6, None]]), 3),
    "pyarrow null type": (pa.nulls(3), 0),
    "pandas Int64 Series": (pd.Series([4, None, 6], dtype="Int64"), 1),
    "pandas Int64 Index": (pd.Index([4, 5, None], dtype="Int64"), 2),
    "pandas int64[pyarrow] Series": (pd.Series([None, 4], dtype="int64[pyarrow]"), 0),
    "pandas UInt8 Series": (pd.Series([1, 2, None], dtype="UInt8"), 2),
    "polars Series": (pl.Series([4, 5, 6, None]), 3),
}

#: name -> (column, whether numpy reads it as it is: then it raises as
#: ``np.asarray(column)`` does; dictionary-encoded columns raise on their own).
NOT_INTEGERS = {
    "pyarrow floats": (pa.array([1.5, 2.0]), True),
    "pyarrow whole floats": (pa.array([1.0, 2.0]), True),
    "pyarrow strings": (pa.array(["a", "b"]), True),
    "pyarrow bools": (pa.array([True, False]), True),
    "pandas floats": (pd.Series([1.5, 2.0]), True),
    "pandas bools": (pd.Series([True, False]), True),
    "pandas strings": (pd.Series(["a", "b"]), True),
    "pandas Float64": (pd.Series([1.5, None], dtype="Float64"), True),
    "polars floats": (pl.Series([1.5, 2.0]), True),
    "polars bools": (pl.Series([True, False]), True),
    "polars strings": (pl.Series(["a", "b"]), True),
    "pyarrow dictionary": (pa.array([3, 4, 3]).dictionary_encode(), False),
    "pyarrow dictionary, chunked": (
        pa.chunked_array([pa.array([3, 4]).dictionary_encode()]),
        False,
    ),
    "pandas categorical": (pd.Series([3, 4, 3], dtype="category"), False),
    "pandas CategoricalIndex": (pd.CategoricalIndex([3, 4, 3]), False),
    "polars categorical": (pl.Series(["a", "b"], dtype=pl.Categorical), False),
}


def _containers():
    """One of each container, holding a few ids, and a snapshot function."""
    s = SparseSet.from_ids([4, 8])
    store = ComponentStore({"hp": "i4"})
    store.add([4, 8], hp=[40, 80])
    m = SparseMap("f8")
    m[[4, 8]] = [0.5, 1.5]
    w = World()
    w.register("hp", "i4")
    w.add("hp", w.create(3), hp=1)
    return s, store, m, w


def _snapshot(s, store, m, w):
    return (
        s.ids.tolist(),
        store.ids.tolist(),
        store["hp"].tolist(),
        m.ids.tolist(),
        m.data.tolist(),
        len(w),
        w["hp"].ids.tolist(),
        w["hp"]["hp"].tolist(),
    )


def _every_call(s, store, m, w, column):
    """Every kind of id argument, each taking ``column``."""
    return [
        lambda: s.add(column),
        lambda: s.discard(column),
        lambda: s.remove(column),
        lambda: s.keep_only(column),
        lambda: s.contains(column),
        lambda: s.index(column),
        lambda: store.add(column, hp=1),
        lambda: store.discard(column),
        lambda: store.get(column),
        lambda: m.add(column, 1.0),
        lambda: m.discard(column),
        lambda: w.add("hp", column, hp=1),
        lambda: w.destroy(column),
        lambda: w.alive(column),
        lambda: w["hp"].discard(column),
    ]


@pytest.mark.parametrize("case", NULLS.values(), ids=NULLS.keys())
def test_a_null_raises_naming_its_position_and_changes_nothing(case):
    column, k = case
    containers = _containers()
    before = _snapshot(*containers)
    for call in _every_call(*containers, column):
        with pytest.raises(
            ValueError, match=rf"^ids must not be null: ids\[{k}\] is null$"
        ):
            call()
        assert _snapshot(*containers) == before


@pytest.mark.parametrize("case", NOT_INTEGERS.values(), ids=NOT_INTEGERS.keys())
def test_columns_of_other_types_raise_as_numpy_does_and_change_nothing(case):
    column, as_numpy = case
    containers = _containers()
    before = _snapshot(*containers)
    expected = "categorical"
    if as_numpy:
        with pytest.raises(TypeError) as info:
            SparseSet().add(np.asarray(column))
        expected = str(info.value)
    for call in _every_call(*containers, column):
        with pytest.raises(TypeError) as info:
            call()
        assert expected in str(info.value)
        assert _snapshot(*containers) == before


@pytest.mark.parametrize(
    "column",
    [
        pa.array([1, None, 5]),
        pa.chunked_array([[1], [None, 5]]),
        pd.Series([1, None, 5], dtype="Int64"),
        pl.Series([1, None, 5]),
    ],
    ids=["pyarrow Array", "pyarrow ChunkedArray", "pandas Int64", "polars"],
)
def test_set_protocol_reads_a_column_with_nulls_as_set_reads_it(column):
    # A null is not an id, so not a member, as None is not one of a set of ids.
    s = SparseSet.from_ids([1, 5])
    expected = {1, None, 5}
    assert s.issubset(column) == ({1, 5} <= expected) is True
    assert s.isdisjoint(column) == {1, 5}.isdisjoint(expected) is False
    assert sorted(s.intersection(column)) == [1, 5]
    assert sorted(s.difference(column)) == []
    assert s.ids.tolist() == [1, 5]


def test_negative_and_out_of_range_ids_in_columns_raise_as_numpy_does():
    # A flat set's range ends at 2**31 (the default adapts: any id to 2**63).
    for values in ([3, -2, 5], [3, 2**40]):
        numpy_ids = np.array(values, np.int64)
        with pytest.raises(ValueError) as info:
            SparseSet(index="flat").add(numpy_ids)
        for column in (pa.array(numpy_ids), pd.Series(numpy_ids), pl.Series(numpy_ids)):
            s = SparseSet.from_ids([1], index="flat")
            with pytest.raises(ValueError) as got:
                s.add(column)
            assert str(got.value) == str(info.value)
            assert s.ids.tolist() == [1]


def test_nullable_columns_without_nulls_pass():
    for column in (
        pd.Series([3, 1], dtype="Int64"),
        pd.Series([3, 1], dtype="UInt16"),
        pd.Index([3, 1], dtype="Int32"),
        pd.Series([3, 1], dtype="int64[pyarrow]"),
        pa.array([3, 1], pa.int64()),  # nullable type, no null
        pl.Series([3, 1], dtype=pl.Int64),
    ):
        assert as_ids(column)[0].tolist() == [3, 1]


# --------------------------------------------------------------------------
# out: to_arrow, to_pandas
# --------------------------------------------------------------------------


def rich_store(kind="flat"):
    store = ComponentStore(
        {
            "pos": ("f8", 3),
            "mass": "f4",
            "flags": "u1",
            "grid": ("i2", (2, 3)),
            "on": "?",
        },
        index=kind,
    )
    rng = np.random.default_rng(1)
    ids = rng.choice(10_000, 50, replace=False)
    store.add(
        ids,
        pos=rng.normal(size=(50, 3)),
        mass=rng.random(50),
        flags=rng.integers(0, 256, 50),
        grid=rng.integers(-100, 100, (50, 2, 3)),
        on=rng.random(50) < 0.5,
    )
    store.discard(ids[::7])  # swaps: dense order is not insertion order
    return store


def test_set_to_arrow_is_the_members_in_dense_order_zero_copy():
    s = SparseSet.from_ids([9, 4, 7])
    s.discard(9)
    array = s.to_arrow()
    assert isinstance(array, pa.Array)
    assert array.to_pylist() == s.ids.tolist() == [7, 4]
    assert array.null_count == 0
    assert array.buffers()[1].address == _address(s.ids)


def test_store_to_arrow_is_ids_then_fields_zero_copy():
    store = rich_store()
    table = store.to_arrow()
    assert table.column_names == ["id", "pos", "mass", "flags", "grid", "on"]
    assert table.schema.field("pos").type == pa.list_(pa.float64(), 3)
    assert table.schema.field("grid").type == pa.list_(pa.list_(pa.int16(), 3), 2)
    assert table.schema.field("on").type == pa.bool_()
    assert table.column("id").to_pylist() == store.ids.tolist()
    for name in store.columns:
        got = np.array(table.column(name).to_pylist())
        np.testing.assert_array_equal(got, store[name])
    # Zero-copy: the ids and every numeric column are the store's buffers.
    assert table.column("id").chunk(0).buffers()[1].address == _address(store.ids)
    pos = table.column("pos").chunk(0)
    assert pos.values.buffers()[1].address == _address(store["pos"])
    grid = table.column("grid").chunk(0)
    assert grid.values.values.buffers()[1].address == _address(store["grid"])
    for name in ("mass", "flags"):
        column = table.column(name).chunk(0)
        assert column.buffers()[1].address == _address(store[name])


def test_store_to_arrow_shows_in_place_updates_of_its_rows():
    store = ComponentStore({"hp": "i4"})
    store.add([1, 2], hp=[10, 20])
    table = store.to_arrow()
    store["hp"] += 1
    assert table.column("hp").to_pylist() == [11, 21]


def test_to_arrow_id_name_and_its_clash_with_a_field():
    store = ComponentStore({"id": "i4"})
    store.add([3], id=7)
    with pytest.raises(ValueError, match="column named 'id'"):
        store.to_arrow()
    with pytest.raises(ValueError, match="column named 'id'"):
        store.to_pandas()
    table = store.to_arrow(id="key")
    assert table.to_pydict() == {"key": [3], "id": [7]}
    assert ComponentStore.from_arrow(table, id="key").get(3)["id"] == 7


def test_to_arrow_of_an_empty_and_of_a_tag_store():
    empty = ComponentStore({"pos": ("f8", 3)})
    table = empty.to_arrow()
    assert table.num_rows == 0
    assert table.schema.field("pos").type == pa.list_(pa.float64(), 3)
    tags = ComponentStore({})
    tags.add([5, 1])
    assert tags.to_arrow().to_pydict() == {"id": [5, 1]}
    back = ComponentStore.from_arrow(tags.to_arrow())
    assert back.columns == () and back.ids.tolist() == [5, 1]


def test_to_pandas_is_indexed_by_id_with_vector_fields_spread():
    store = rich_store()
    frame = store.to_pandas()
    assert frame.index.name == "id"
    assert frame.index.tolist() == store.ids.tolist()
    assert frame.columns.tolist() == [
        "pos_0", "pos_1", "pos_2", "mass", "flags",
        "grid_0_0", "grid_0_1", "grid_0_2", "grid_1_0", "grid_1_1", "grid_1_2",
        "on",
    ]  # fmt: skip
    np.testing.assert_array_equal(frame["pos_1"].to_numpy(), store["pos"][:, 1])
    np.testing.assert_array_equal(frame["grid_1_0"].to_numpy(), store["grid"][:, 1, 0])
    assert frame["mass"].dtype == np.float32
    assert frame["on"].dtype == np.bool_


def test_to_pandas_refuses_record_fields():
    store = ComponentStore({"rec": np.dtype([("a", "i4"), ("b", "f8")])})
    store.add([1])
    with pytest.raises(TypeError, match="'rec' holds records"):
        store.to_pandas()


def test_map_to_arrow_and_to_pandas():
    m = SparseMap("f4", shape=2)
    m[[3, 1]] = [[1, 2], [3, 4]]
    assert m.to_arrow().to_pydict() == {"id": [3, 1], "value": [[1.0, 2.0], [3.0, 4.0]]}
    frame = m.to_pandas()
    assert frame.columns.tolist() == ["value_0", "value_1"]
    assert frame.loc[1].tolist() == [3.0, 4.0]


# --------------------------------------------------------------------------
# World.to_arrow
# --------------------------------------------------------------------------


def small_world():
    w = World()
    w.register("pos", "f8", shape=2)
    w.register("body", {"mass": "f4", "radius": ("f8", 2)})
    w.register("hp", "i4")
    w.register("frozen")
    e = w.create(6)
    w.add("pos", e, pos=np.arange(12.0).reshape(6, 2))
    w.add("body", e[::-2], mass=[1, 2, 3], radius=[[1, 1], [2, 2], [3, 3]])
    w.add("hp", e[1:], hp=[10, 20, 30, 40, 50])
    w.add("frozen", e[[1, 5]])
    w.destroy(e[3])
    return w, e


def test_world_to_arrow_joins_a_views_matches():
    w, _ = small_world()
    table = w.to_arrow("pos", "body", "hp", exclude=("frozen",))
    view = w.view("pos", "body", "hp", exclude=("frozen",))
    assert table.column_names == ["handle", "pos", "body.mass", "body.radius", "hp"]
    assert table.column("handle").to_pylist() == view.ids.tolist()
    handles = view.ids
    assert table.column("pos").to_pylist() == w.get("pos", handles)["pos"].tolist()
    body = w.get("body", handles)
    assert table.column("body.mass").to_pylist() == body["mass"].tolist()
    assert table.column("body.radius").to_pylist() == body["radius"].tolist()
    assert table.column("hp").to_pylist() == w.get("hp", handles)["hp"].tolist()
    assert table.schema.field("body.radius").type == pa.list_(pa.float64(), 2)


def test_world_to_arrow_of_tags_and_of_no_component():
    w, _ = small_world()
    assert w.to_arrow("frozen").to_pydict() == {"handle": w["frozen"].ids.tolist()}
    assert w.to_arrow().column("handle").to_pylist() == w.entities.tolist()
    unfrozen = w.to_arrow(exclude="frozen").column("handle").to_pylist()
    assert unfrozen == [h for h in w.entities.tolist() if h not in w["frozen"]]


def test_world_to_arrow_errors():
    w, _ = small_world()
    w.register("handle", "i8")
    with pytest.raises(ValueError, match="two columns named 'handle'"):
        w.to_arrow("pos", "handle")
    with pytest.raises(KeyError, match="nope"):
        w.to_arrow("pos", "nope")
    with pytest.raises(ValueError, match="both included and excluded"):
        w.to_arrow("pos", exclude=("pos",))


# --------------------------------------------------------------------------
# in: from_arrow, from_pandas
# --------------------------------------------------------------------------


def assert_same_store(got, expected):
    assert got.schema == expected.schema
    assert got.ids.tolist() == expected.ids.tolist()
    for name in expected.columns:
        assert got[name].dtype == expected[name].dtype
        assert got[name].tobytes() == expected[name].tobytes(), name


@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
def test_from_arrow_round_trip_keeps_the_kind(kind):
    store = rich_store(kind)
    back = ComponentStore.from_arrow(store.to_arrow())
    assert_same_store(back, store)
    assert back.kind == kind
    assert ComponentStore.from_arrow(store.to_arrow(), index="hash").kind == "hash"


def test_from_arrow_takes_batches_and_other_libraries_frames():
    store = rich_store()
    table = store.to_arrow()
    for source in (table, table.to_batches()[0], pl.from_arrow(table)):
        assert_same_store(ComponentStore.from_arrow(source), store)
    frame = pd.DataFrame({"id": [5, 1], "hp": np.array([50, 10], np.int16)})
    assert ComponentStore.from_arrow(frame).get(1)["hp"] == 10


def test_from_arrow_with_a_schema_reads_and_casts_those_fields():
    table = pa.table(
        {
            "key": pa.array([3, 1], pa.uint32()),
            "hp": pa.array([30, 10], pa.int16()),
            "ignored": ["a", "b"],
        }
    )
    store = ComponentStore.from_arrow(table, id="key", schema={"hp": "f8"})
    assert store.schema == {"hp": (np.dtype("f8"), ())}
    assert store["hp"].tolist() == [30.0, 10.0]


def test_from_arrow_duplicates_take_their_last_row():
    table = pa.table({"id": [4, 2, 4, 4], "hp": [1, 2, 3, 5]})
    store = ComponentStore.from_arrow(table)
    assert store.ids.tolist() == [4, 2]
    assert store["hp"].tolist() == [5, 2]


def test_from_arrow_chunked_columns():
    table = pa.concat_tables(
        [pa.table({"id": [1, 2], "v": [1.0, 2.0]}), pa.table({"id": [3], "v": [3.0]})]
    )
    assert table.column("v").num_chunks == 2
    store = ComponentStore.from_arrow(table)
    assert store["v"].tolist() == [1.0, 2.0, 3.0]


FSL = pa.list_(pa.float64(), 2)

#: name -> (table, error type, a fragment of the message).
BAD_TABLES = {
    "no id column": (pa.table({"key": [1], "hp": [1]}), KeyError, "no id column 'id'"),
    "null id": (
        pa.table({"id": [1, None], "hp": [1, 2]}),
        ValueError,
        r"ids[1] is null",
    ),
    "negative id": (pa.table({"id": [1, -4], "hp": [1, 2]}), ValueError, "ids[1] = -4"),
    "float ids": (pa.table({"id": [1.0, 2.5], "hp": [1, 2]}), TypeError, "float64"),
    "string ids": (pa.table({"id": ["a"], "hp": [1]}), TypeError, "not str"),
    # An id past 2**31 picks a wider kind (test_index_choice.py); one
    # past 2**63 - 1 fits none.
    "id past every range": (
        pa.table({"id": pa.array([2**63], pa.uint64()), "hp": [1]}),
        ValueError,
        "no index kind takes ids past 2**63 - 1",
    ),
    "null value": (
        pa.table({"id": [1, 2, 3], "hp": [1, None, 3]}),
        ValueError,
        "column 'hp' holds a null in row 1",
    ),
    "null row in a list": (
        pa.table({"id": [1, 2], "pos": pa.array([[1.0, 2.0], None], FSL)}),
        ValueError,
        "column 'pos' holds a null in row 1",
    ),
    "null value in a list": (
        pa.table({"id": [1, 2], "pos": pa.array([[1.0, 2.0], [3.0, None]], FSL)}),
        ValueError,
        "column 'pos' holds a null in row 1",
    ),
    "string column": (
        pa.table({"id": [1], "name": ["x"]}),
        TypeError,
        "column 'name' has Arrow type string",
    ),
    "variable-length list column": (
        pa.table({"id": [1], "xs": [[1.0, 2.0]]}),
        TypeError,
        "column 'xs' has Arrow type list<item: double>",
    ),
    "dictionary column": (
        pa.table({"id": [1, 2], "c": pa.array([5, 5]).dictionary_encode()}),
        TypeError,
        "column 'c' has Arrow type dictionary",
    ),
    "column name not an identifier": (
        pa.table({"id": [1], "two words": [1]}),
        ValueError,
        "'two words' is not a Python identifier",
    ),
}


@pytest.mark.parametrize("case", BAD_TABLES.values(), ids=BAD_TABLES.keys())
def test_bad_tables_raise_their_error(case):
    table, error, fragment = case
    with pytest.raises(error) as info:
        ComponentStore.from_arrow(table)
    assert fragment in str(info.value)


def test_from_arrow_with_a_schema_the_table_does_not_fit():
    table = pa.table({"id": [1, 2], "pos": pa.array([[1.0, 2.0], [3.0, 4.0]], FSL)})
    with pytest.raises(KeyError, match="no column 'vel' for the schema's field 'vel'"):
        ComponentStore.from_arrow(table, schema={"pos": ("f8", 2), "vel": ("f8", 2)})
    with pytest.raises(
        ValueError, match=r"rows of shape \(2,\), the schema says \(3,\)"
    ):
        ComponentStore.from_arrow(table, schema={"pos": ("f8", 3)})
    with pytest.raises(ValueError, match=r"rows of shape \(2,\), the schema says \(\)"):
        ComponentStore.from_arrow(table, schema={"pos": "f8"})
    with pytest.raises(TypeError, match="cannot cast float64 values to int32"):
        ComponentStore.from_arrow(table, schema={"pos": ("i4", 2)})


def test_from_pandas_index_or_id_column():
    frame = pd.DataFrame({"hp": [1, 2], "pos_0": [0.5, 1.5], "pos_1": [2.5, 3.5]})
    frame.index = [8, 3]
    store = ComponentStore.from_pandas(frame)
    assert store.schema == {"hp": (np.dtype("i8"), ()), "pos": (np.dtype("f8"), (2,))}
    assert store.ids.tolist() == [8, 3]
    assert store.get(3)["pos"].tolist() == [1.5, 3.5]
    by_column = ComponentStore.from_pandas(frame.reset_index(names="key"), id="key")
    assert_same_store(by_column, store)
    with pytest.raises(KeyError, match="no id column 'nope'"):
        ComponentStore.from_pandas(frame, id="nope")


def test_from_pandas_infers_fields_from_names():
    frame = pd.DataFrame(
        {
            "g_0_0": [1], "g_0_1": [2], "g_1_0": [3], "g_1_1": [4],
            "a_0": [1.0], "a_2": [2.0],  # not every position: two fields
            "b": [1], "b_0": [2],  # "b" is a column: b_0 is a field of its own
            "c_1": [5],  # no c_0
        },
        index=[0],
    )  # fmt: skip
    store = ComponentStore.from_pandas(frame)
    assert {name: shape for name, (_, shape) in store.schema.items()} == {
        "g": (2, 2),
        "a_0": (),
        "a_2": (),
        "b": (),
        "b_0": (),
        "c_1": (),
    }
    assert store.get(0)["g"].tolist() == [[1, 2], [3, 4]]


def test_from_pandas_with_a_schema():
    frame = pd.DataFrame(
        {"v_0": [1, 2], "v_1": [3, 4], "other": ["x", "y"]}, index=[5, 6]
    )
    store = ComponentStore.from_pandas(frame, schema={"v": ("f4", 2)})
    assert store.schema == {"v": (np.dtype("f4"), (2,))}
    assert store["v"].tolist() == [[1.0, 3.0], [2.0, 4.0]]
    with pytest.raises(KeyError, match="no column 'w_0' for field 'w'"):
        ComponentStore.from_pandas(frame, schema={"w": ("f4", 2)})
    bytes_frame = pd.DataFrame({"tag": [b"ab", b"c"]}, index=[1, 2])
    assert ComponentStore.from_pandas(bytes_frame, schema={"tag": "S2"})[
        "tag"
    ].tolist() == [
        b"ab",
        b"c",
    ]


def test_from_pandas_nullable_columns_pass_without_nulls_and_raise_with_them():
    frame = pd.DataFrame(
        {
            "hp": pd.array([1, 2], dtype="Int32"),
            "f": pd.array([0.5, 1.5], dtype="Float64"),
        },
        index=pd.Index([3, 4], dtype="Int64"),
    )
    store = ComponentStore.from_pandas(frame)
    assert store.schema == {"hp": (np.dtype("i4"), ()), "f": (np.dtype("f8"), ())}
    frame.loc[4, "f"] = None
    with pytest.raises(ValueError, match="column 'f' holds a null in row 1"):
        ComponentStore.from_pandas(frame)
    frame.index = pd.Index([3, None], dtype="Int64")
    frame.loc[:, "f"] = 1.0
    with pytest.raises(ValueError, match=r"ids\[1\] is null"):
        ComponentStore.from_pandas(frame)


def test_from_pandas_bad_frames():
    with pytest.raises(TypeError, match="column 'name' holds Python objects"):
        ComponentStore.from_pandas(pd.DataFrame({"name": [object()]}))
    with pytest.raises(TypeError, match="column 'name' has pandas dtype"):
        ComponentStore.from_pandas(pd.DataFrame({"name": ["x"]}))
    with pytest.raises(TypeError, match="column 'c' has pandas dtype category"):
        ComponentStore.from_pandas(pd.DataFrame({"c": pd.Categorical([1])}))
    with pytest.raises(ValueError, match=r"ids\[1\] = -1"):
        ComponentStore.from_pandas(pd.DataFrame({"hp": [1, 2]}, index=[0, -1]))
    with pytest.raises(TypeError, match="float64"):
        ComponentStore.from_pandas(pd.DataFrame({"hp": [1, 2]}, index=[0.5, 1.0]))
    with pytest.raises(ValueError, match="repeated column names"):
        ComponentStore.from_pandas(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    with pytest.raises(TypeError, match="differ in dtype"):
        ComponentStore.from_pandas(pd.DataFrame({"v_0": [1], "v_1": [1.5]}))


def test_from_pandas_duplicates_take_their_last_row():
    frame = pd.DataFrame({"hp": [1, 2, 3]}, index=[7, 7, 1])
    store = ComponentStore.from_pandas(frame)
    assert store.ids.tolist() == [7, 1]
    assert store["hp"].tolist() == [2, 3]


def test_map_from_arrow_and_from_pandas():
    table = pa.table(
        {"id": [3, 1], "score": pa.array([[1, 2], [3, 4]], pa.list_(pa.int8(), 2))}
    )
    m = SparseMap.from_arrow(table)
    assert m.data.dtype == np.int8
    assert m[1].tolist() == [3, 4]
    m2 = SparseMap.from_arrow(table, dtype="f8")
    assert m2.data.dtype == np.float64
    assert m2[3].tolist() == [1.0, 2.0]
    back = SparseMap.from_arrow(m.to_arrow())
    assert back.ids.tolist() == [3, 1] and back.data.tolist() == m.data.tolist()
    with pytest.raises(ValueError, match="one value column"):
        SparseMap.from_arrow(pa.table({"id": [1], "a": [1], "b": [2]}))
    assert (
        SparseMap.from_arrow(pa.table({"id": [1], "a": [1], "b": [2]}), value="b")[1]
        == 2
    )
    with pytest.raises(KeyError, match="no value column 'c'"):
        SparseMap.from_arrow(pa.table({"id": [1], "a": [1]}), value="c")

    frame = m.to_pandas()
    back = SparseMap.from_pandas(frame)
    assert back.ids.tolist() == [3, 1] and back.data.tolist() == m.data.tolist()
    two = pd.DataFrame({"a": [1.5], "b": [2], "name": ["x"]}, index=[4])
    assert float(SparseMap.from_pandas(two, value="a")[4]) == 1.5
    m3 = SparseMap.from_pandas(two, value="b", dtype="u1")
    assert m3.data.dtype == np.uint8 and m3[4] == 2
    with pytest.raises(ValueError, match="one value field"):
        SparseMap.from_pandas(two)
    with pytest.raises(KeyError, match="no value field 'c'"):
        SparseMap.from_pandas(two, value="c")
    with pytest.raises(KeyError, match="no column 'c_0' for field 'c'"):
        SparseMap.from_pandas(two, value="c", dtype="f8", shape=2)
    keyed = SparseMap.from_pandas(two.reset_index(names="key"), id="key", value="a")
    assert keyed.ids.tolist() == [4]


def test_from_arrow_and_from_pandas_add_as_add_does_into_a_fresh_store():
    # from_* build a new store: a failure leaves nothing, and the caller's
    # table is not modified either.
    table = pa.table({"id": [1, 2, -3], "hp": [1, 2, 3]})
    before = table.to_pydict()
    with pytest.raises(ValueError, match=r"ids\[2\] = -3"):
        ComponentStore.from_arrow(table)
    assert table.to_pydict() == before


# --------------------------------------------------------------------------
# round trips for every dtype and row shape (hypothesis)
# --------------------------------------------------------------------------

RECORD = np.dtype([("a", "<i4"), ("b", "<f8", (2,))])
#: Every kind of dtype a store holds; pandas has no column type for records.
DTYPES = [
    "?", *INT_TYPES, "f2", "f4", "f8", "c8", "c16",
    "M8[ns]", "M8[s]", "m8[us]", "M8[D]", "S3", "U2", ">i4", ">f8", RECORD,
]  # fmt: skip
PANDAS_DTYPES = [d for d in DTYPES if d is not RECORD]
SHAPES = [(), (1,), (3,), (2, 3)]


def _values(dtype, shape, n, for_pandas=False):
    """Any bits of ``dtype``: NaN payloads, NaT, odd bytes in strings.

    ``for_pandas`` keeps to what a pandas column holds: Unicode text in
    ``U`` columns (no code units past U+10FFFF, no surrogates) and times
    that fit int64 seconds (pandas' coarsest unit).
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return hnp.arrays(np.bool_, (n, *shape))
    if for_pandas and dtype.kind == "U":
        return hnp.arrays(dtype, (n, *shape), elements=hnp.from_dtype(dtype))
    if for_pandas and dtype.kind in "mM":
        seconds = {"W": 604_800, "D": 86_400, "h": 3_600, "m": 60}
        bound = (2**63 - 1) // seconds.get(np.datetime_data(dtype)[0], 1)
        return hnp.arrays(
            np.int64, (n, *shape), elements=st.integers(1 - bound, bound - 1)
        ).map(lambda counts: counts.astype(dtype.newbyteorder("=")).astype(dtype))
    return hnp.arrays(np.uint8, (n, *shape, dtype.itemsize)).map(
        lambda raw: np.ascontiguousarray(raw).view(dtype)[..., 0]
    )


@st.composite
def stores(draw, dtypes=DTYPES, for_pandas=False):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(st.sampled_from(SHAPES))
    kind = draw(st.sampled_from(["flat", "paged", "hash"]))
    limit = {"flat": 2**31, "paged": 2**48, "hash": 2**63}[kind]
    ids = draw(st.lists(st.integers(0, limit - 1), max_size=20, unique=True))
    values = draw(_values(dtype, shape, len(ids), for_pandas))
    store = ComponentStore({"x": (dtype, shape), "k": "i8"}, index=kind)
    store.add(np.array(ids, np.int64), x=values, k=np.arange(len(ids)))
    removed = draw(st.lists(st.sampled_from(ids), max_size=3)) if ids else []
    store.discard(removed)  # swaps: dense order is not the order added
    return store


@given(stores())
def test_arrow_round_trip_is_exact(store):
    back = ComponentStore.from_arrow(store.to_arrow())
    assert_same_store(back, store)
    assert back.kind == store.kind


@given(stores(PANDAS_DTYPES, for_pandas=True))
def test_pandas_round_trip_is_exact(store):
    frame = store.to_pandas()
    back = ComponentStore.from_pandas(frame, schema=store.schema, index=store.kind)
    assert_same_store(back, store)


#: pandas holds these as themselves, so the schema can be inferred.
NATIVE = ["?", *INT_TYPES, "f2", "f4", "f8", "c8", "c16", "M8[ns]", "M8[s]", "m8[us]"]


@given(stores(NATIVE, for_pandas=True))
def test_pandas_round_trip_infers_the_schema(store):
    back = ComponentStore.from_pandas(store.to_pandas(), index=store.kind)
    assert_same_store(back, store)


@pytest.mark.parametrize(
    ("dtype", "raw", "message"),
    [
        ("U2", [0x61, 0x110000], "column 'x', row 1: not Unicode text"),
        ("U2", [0xD800, 0x61], "column 'x', row 1: not Unicode text"),
        ("M8[D]", 2**62, r"column 'x', row 1: .* outside the range of times"),
        ("m8[W]", -(2**61), r"column 'x', row 1: .* outside the range of times"),
    ],
)
def test_to_pandas_refuses_values_pandas_cannot_hold(dtype, raw, message):
    """numpy holds any code units and any count of days; pandas holds text
    and int64 seconds. Such a column raises instead of arriving changed."""
    dtype = np.dtype(dtype)
    good = np.zeros(1, dtype)
    if dtype.kind == "U":
        good = np.array(["ok"], dtype)
        bad = np.array(raw, np.uint32).view(dtype)
    else:
        bad = np.array([raw], np.int64).view(dtype)
    store = ComponentStore({"x": dtype})
    store.add([3, 8], x=np.concatenate([good, bad]))
    with pytest.raises(ValueError, match=message):
        store.to_pandas()
    assert store.to_arrow().num_rows == 2  # Arrow keeps them exactly


# --------------------------------------------------------------------------
# optional dependencies stay optional
# --------------------------------------------------------------------------


def _run(code):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_sparseset_imports_no_dataframe_library():
    out = _run(
        """
        import sys
        import numpy as np
        import sparseset
        s = sparseset.SparseSet.from_ids(np.arange(5))
        store = sparseset.ComponentStore({"hp": "i4"}); store.add([1, 2])
        w = sparseset.World(); w.register("hp", "i4"); w.add("hp", w.create(2))
        print(sorted(m for m in ("pandas", "pyarrow", "polars") if m in sys.modules))
        """
    )
    assert out == "[]"


def test_a_missing_optional_dependency_is_one_line_naming_the_extra():
    out = _run(
        """
        import sys
        sys.modules["pyarrow"] = None  # as if it were not installed
        sys.modules["pandas"] = None
        import sparseset
        store = sparseset.ComponentStore({"hp": "i4"}); store.add([1])
        w = sparseset.World()
        calls = [
            store.to_arrow,
            store.to_pandas,
            lambda: sparseset.ComponentStore.from_arrow(None),
            lambda: sparseset.ComponentStore.from_pandas(None),
            w.to_arrow,
            lambda: store.to_parquet("x.parquet"),
            lambda: sparseset.ComponentStore.read_parquet(__file__),
            lambda: w.save("w", format="parquet"),
            sparseset.SparseSet().to_arrow,
        ]
        for call in calls:
            try:
                call()
            except ImportError as error:
                print(f"{type(error).__name__}: {error}")
        """.replace("__file__", repr(__file__))
    )
    lines = out.splitlines()
    assert len(lines) == 9
    for line in lines:
        assert line.startswith("ImportError: ")
        assert line.endswith(
            ('pip install "sparseset[arrow]"', 'pip install "sparseset[pandas]"')
        )
    assert (
        lines[0]
        == 'ImportError: to_arrow needs pyarrow: pip install "sparseset[arrow]"'
    )
    assert (
        lines[1]
        == 'ImportError: to_pandas needs pandas: pip install "sparseset[pandas]"'
    )


def test_pandas_ids_read_without_pyarrow():
    # pandas exports Arrow only with pyarrow installed; without it, its
    # nullable columns still read, and their nulls still raise.
    out = _run(
        """
        import sys
        sys.modules["pyarrow"] = None
        import pandas as pd
        import sparseset
        s = sparseset.SparseSet()
        print(s.add(pd.Series([3, 1], dtype="Int64")))
        try:
            s.add(pd.Series([3, None], dtype="Int64"))
        except ValueError as error:
            print(error)
        try:
            s.add(pd.Series([3, 4], dtype="category"))
        except TypeError as error:
            print(type(error).__name__)
        print(s.ids.tolist())
        """
    )
    assert out.splitlines() == [
        "2",
        "ids must not be null: ids[1] is null",
        "TypeError",
        "[3, 1]",
    ]

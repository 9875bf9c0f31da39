"""Interop: ids in from pandas, pyarrow and polars; tables out and back in.

Covers issue 13 outside Parquet (see ``test_parquet.py``):

- ids in: every id argument (sets, stores, maps, world handles) takes a
  pandas ``Series``/``Index``, a pyarrow ``Array``/``ChunkedArray`` and a
  polars ``Series`` and answers as for the same ids in a numpy array; an
  integer column is read in place (same buffer address), nulls raise
  ``ValueError`` naming the first one, nullable dtypes without nulls pass,
  floats, strings, bools and dictionary-encoded columns raise ``TypeError``
  as numpy input does, and a failed call changes nothing;
- ``import sparseset`` imports none of pandas, pyarrow, polars.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from sparseset import ComponentStore, SparseMap, SparseSet, World
from sparseset._ids import as_ids

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


def test_negative_and_out_of_range_ids_in_columns_raise_as_numpy_does():
    for values in ([3, -2, 5], [3, 2**40]):
        numpy_ids = np.array(values, np.int64)
        with pytest.raises(ValueError) as info:
            SparseSet().add(numpy_ids)
        for column in (pa.array(numpy_ids), pd.Series(numpy_ids), pl.Series(numpy_ids)):
            s = SparseSet.from_ids([1])
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

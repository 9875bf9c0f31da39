"""Stores, maps, sets and worlds to and from pyarrow tables and pandas frames.

Arrow out is zero-copy: the id column and every numeric column of a
:meth:`~sparseset.ComponentStore.to_arrow` table are views of the store's
own buffers, and a row shape ``(k,)`` becomes a ``FixedSizeList<k>`` over
the column's values (a shape ``(a, b)`` a list of ``a`` lists of ``b``).
Numpy dtypes with no Arrow type of their own (complex, fixed-width
strings, records, byte-swapped, dates in days or other units) travel as
fixed-size binary with the numpy dtype in the field's metadata, so every
dtype a store holds comes back exact; so do timestamps in seconds, which
Parquet would coerce to milliseconds.

In is validated as :meth:`~sparseset.ComponentStore.add` validates: the
whole table first (nulls, types, shapes), then one ``add``, whose id and
value rules apply unchanged (a repeated id takes its last row).

pandas and pyarrow are imported here, inside the functions that need them,
so ``import sparseset`` imports neither; a missing one raises one
``ImportError`` naming the extra to install.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Protocol, TypeVar

import numpy as np

from .schema import Schema, parse_schema

#: Field metadata key holding the numpy dtype of a column Arrow has no type for.
DTYPE_KEY = b"sparseset.dtype"
#: Table metadata key holding what else a store needs (its index kind).
TABLE_KEY = b"sparseset"
_TIME_UNITS = ("s", "ms", "us", "ns")
#: The extra that installs each optional package.
_EXTRAS = {"pyarrow": "arrow", "pandas": "pandas"}
_VECTOR = re.compile(r"^(.+?)((?:_\d+)+)$")


class Table(Protocol):
    """A store as this module reads and fills it (a ComponentStore)."""

    @property
    def columns(self) -> tuple[str, ...]: ...

    @property
    def ids(self) -> np.ndarray: ...

    @property
    def schema(self) -> Schema: ...

    def __getitem__(self, name: str) -> np.ndarray: ...

    @property
    def kind(self) -> str: ...

    def add(self, ids: Any, /, **columns: Any) -> int: ...

    def contains(self, ids: Any) -> Any: ...


class Components(Protocol):
    """A world as :func:`world_to_arrow` reads it."""

    @property
    def entities(self) -> np.ndarray: ...

    def __getitem__(self, name: str) -> Table: ...

    def view(self, *names: str, exclude: Any = ()) -> Any: ...


class OneColumn(Protocol):
    """A SparseMap as the readers fill it: its one-column store."""

    @property
    def store(self) -> Table: ...


T = TypeVar("T", bound=Table)
M = TypeVar("M", bound=OneColumn)
#: How a reader makes the store it fills: ``(schema, capacity, index)``.
StoreMaker = Callable[[Schema, int, str], T]
#: How a reader given no ``index=`` picks one from the ids it read (the
#: containers pass :func:`sparseset.sets.index_kinds.choose_kind`; this
#: layer knows no index kinds).
Chooser = Callable[[Any], str]


def require(module: str, what: str) -> ModuleType:
    """Import an optional dependency, or raise a one-line ``ImportError``.

    Examples
    --------
    >>> require("pyarrow", "to_arrow").__name__
    'pyarrow'
    >>> require("pandas.nope", "to_pandas")
    Traceback (most recent call last):
    ...
    ImportError: to_pandas needs pandas.nope: pip install "sparseset[pandas]"
    """
    extra = _EXTRAS[module.split(".")[0]]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f'{what} needs {module}: pip install "sparseset[{extra}]"'
        ) from None


# -- numpy columns as Arrow arrays ------------------------------------------


def arrow_type(dtype: np.dtype) -> tuple[Any, dict[bytes, bytes] | None]:
    """The Arrow type of one value of ``dtype``, and the field metadata it needs.

    Examples
    --------
    >>> arrow_type(np.dtype("f4"))
    (DataType(float), None)
    >>> arrow_type(np.dtype("c16"))
    (FixedSizeBinaryType(fixed_size_binary[16]), {b'sparseset.dtype': b'"<c16"'})
    """
    pa = require("pyarrow", "Arrow conversion")
    if dtype.isnative and (
        dtype.kind in "biu" or (dtype.kind == "f" and dtype.itemsize <= 8)
    ):
        return pa.from_numpy_dtype(dtype), None
    if dtype.kind in "mM" and dtype.isnative:
        unit, count = np.datetime_data(dtype)
        # Parquet has no timestamps in seconds (it would coerce them to
        # milliseconds, overflowing some), so those go as bytes.
        units = _TIME_UNITS[1:] if dtype.kind == "M" else _TIME_UNITS
        if unit in units and count == 1:
            make = pa.timestamp if dtype.kind == "M" else pa.duration
            return make(unit), None
    descr = np.lib.format.dtype_to_descr(dtype)
    return pa.binary(dtype.itemsize), {DTYPE_KEY: json.dumps(descr).encode()}


def to_arrow_array(values: np.ndarray) -> Any:
    """``values`` (rows along the first axis) as an Arrow array, zero-copy.

    A row shape ``(k,)`` becomes ``FixedSizeList<k>``, nested for more
    dimensions; bools are bit-packed (the one copy).

    Examples
    --------
    >>> to_arrow_array(np.arange(6.0).reshape(3, 2)).to_pylist()
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    """
    pa = require("pyarrow", "Arrow conversion")
    values = np.ascontiguousarray(values)
    kind, _ = arrow_type(values.dtype)
    flat = values.reshape(-1)
    if values.dtype.kind == "b":
        array = pa.array(flat, pa.bool_())
    elif pa.types.is_fixed_size_binary(kind):
        array = pa.Array.from_buffers(
            kind, flat.shape[0], [None, pa.py_buffer(flat.view(np.uint8))]
        )
    else:
        # From the buffer, not pa.array: NaT stays a value, never a null.
        array = pa.Array.from_buffers(kind, flat.shape[0], [None, pa.py_buffer(flat)])
    for size in reversed(values.shape[1:]):
        array = pa.FixedSizeListArray.from_arrays(array, size)
    return array


def _field(name: str, values: np.ndarray) -> Any:
    pa = require("pyarrow", "Arrow conversion")
    array = to_arrow_array(values)
    _, metadata = arrow_type(values.dtype)
    return pa.field(name, array.type, nullable=False, metadata=metadata), array


def table_of(
    columns: list[tuple[str, np.ndarray]], metadata: dict[bytes, bytes] | None = None
) -> Any:
    """A ``pyarrow.Table`` of named numpy columns (rows along the first axis).

    Examples
    --------
    >>> table_of([("id", np.array([3, 4]))]).num_rows
    2
    """
    pa = require("pyarrow", "to_arrow")
    pairs = [_field(name, values) for name, values in columns]
    schema = pa.schema([field for field, _ in pairs], metadata=metadata)
    return pa.Table.from_arrays([array for _, array in pairs], schema=schema)


# -- Arrow columns as numpy ---------------------------------------------------


def infer_field(field: Any) -> tuple[np.dtype, tuple[int, ...]]:
    """The numpy dtype and row shape of an Arrow field, as a store column.

    Raises ``TypeError`` naming the field for a type a store cannot hold
    (strings, variable-length lists, dictionaries, structs, decimals).

    Examples
    --------
    >>> import pyarrow as pa
    >>> infer_field(pa.field("pos", pa.list_(pa.float32(), 3)))
    (dtype('float32'), (3,))
    >>> infer_field(pa.field("name", pa.string()))
    Traceback (most recent call last):
    ...
    TypeError: column 'name' has Arrow type string, which no store column holds...
    """
    pa = require("pyarrow", "Arrow conversion")
    kind, shape = field.type, []
    while pa.types.is_fixed_size_list(kind):
        shape.append(kind.list_size)
        kind = kind.value_type
    metadata = field.metadata or {}
    if DTYPE_KEY in metadata and pa.types.is_fixed_size_binary(kind):
        try:
            descr = _descr(json.loads(metadata[DTYPE_KEY]))
            dtype = np.lib.format.descr_to_dtype(descr)
        except (ValueError, TypeError) as error:
            raise ValueError(
                f"column {field.name!r} has an unreadable numpy dtype in its "
                f"metadata: {error}"
            ) from None
        if dtype.itemsize == kind.byte_width:
            return dtype, tuple(shape)
    if pa.types.is_fixed_size_binary(kind):
        return np.dtype(f"S{kind.byte_width}"), tuple(shape)
    if pa.types.is_timestamp(kind) or pa.types.is_duration(kind):
        letter = "M" if pa.types.is_timestamp(kind) else "m"
        return np.dtype(f"{letter}8[{kind.unit}]"), tuple(shape)
    if (
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_boolean(kind)
    ):
        return np.dtype(kind.to_pandas_dtype()), tuple(shape)
    raise TypeError(
        f"column {field.name!r} has Arrow type {field.type}, which no store "
        f"column holds (numbers, bools, times, fixed-size binary and "
        f"fixed-size lists of those); convert or drop it"
    )


def _descr(descr: Any) -> Any:
    """A dtype's descr read back from JSON, which made its tuples lists.

    A record's descr is a list of ``(name, format)`` or ``(name, format,
    shape)``; a name may be a ``(title, name)`` pair, a format a nested
    descr.
    """
    if isinstance(descr, str):
        return descr
    entries = []
    for name, fmt, *shape in descr:
        name = tuple(name) if isinstance(name, list) else name
        entries.append((name, _descr(fmt), *(tuple(s) for s in shape)))
    return entries


def from_arrow_array(column: Any, field: Any, label: str) -> np.ndarray:
    """An Arrow column (array or chunked) as a numpy array of rows.

    Raises ``ValueError`` naming ``label`` and the row of the first null.

    Examples
    --------
    >>> import pyarrow as pa
    >>> pos = pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float64(), 2))
    >>> from_arrow_array(pos, pa.field("pos", pos.type), "column 'pos'")
    array([[1., 2.],
           [3., 4.]])
    """
    pa = require("pyarrow", "Arrow conversion")
    dtype, shape = infer_field(field)
    if isinstance(column, pa.ChunkedArray):
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    rows = len(column)
    inner = 1
    for size in shape:
        _reject_null(column, inner, label)
        column = column.flatten()
        inner *= size
    _reject_null(column, inner, label)
    flat: np.ndarray
    if dtype.kind == "b":
        flat = column.to_numpy(zero_copy_only=False)
    elif pa.types.is_fixed_size_binary(column.type):
        width = column.type.byte_width
        raw = np.frombuffer(column.buffers()[1] or b"", np.uint8)
        start = column.offset * width
        flat = raw[start : start + len(column) * width].view(dtype)
    else:
        flat = column.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    return flat.reshape(rows, *shape)


def _reject_null(column: Any, inner: int, label: str) -> None:
    if column.null_count:
        k = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
        raise ValueError(f"{label} holds a null in row {k // inner}; nothing was read")


def _columns_from_arrow(
    table: Any, id: str, schema: Any
) -> tuple[Any, Schema, dict[str, np.ndarray]]:
    """The ids, the schema and the columns of ``table``, all checked."""
    pa = require("pyarrow", "from_arrow")
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    elif not isinstance(table, pa.Table):
        table = pa.table(table)
    names = table.column_names
    if id not in names:
        raise KeyError(
            f"the table has no id column {id!r} (pass id=...); columns: "
            f"{', '.join(names) or '(none)'}"
        )
    if schema is None:
        parsed = {
            name: infer_field(table.schema.field(name)) for name in names if name != id
        }
    else:
        parsed = parse_schema(schema)
        missing = [name for name in parsed if name not in names]
        if missing:
            raise KeyError(
                f"the table has no column {missing[0]!r} for the schema's field "
                f"{missing[0]!r}; columns: {', '.join(names)}"
            )
    parse_schema(parsed)  # names a store can hold, before reading anything
    values = {}
    for name, (_, shape) in parsed.items():
        field = table.schema.field(name)
        label = f"column {name!r}"
        array = from_arrow_array(table.column(name), field, label)
        if array.shape[1:] != shape:
            raise ValueError(
                f"{label} has rows of shape {array.shape[1:]}, the schema says {shape}"
            )
        values[name] = array
    return table.column(id), parsed, values


def _index_of(table: Any, index: str | None, ids: Any, choose: Chooser) -> str:
    """The index kind asked for, else the one the table was written with
    (:meth:`~sparseset.ComponentStore.to_arrow` records it), else the one
    ``choose`` picks for ``ids``."""
    if index is not None:
        return index
    metadata = getattr(getattr(table, "schema", None), "metadata", None) or {}
    try:
        return str(json.loads(metadata[TABLE_KEY])["index"])
    except (KeyError, TypeError, ValueError):
        return choose(ids)


# -- stores -----------------------------------------------------------------


def _store_columns(store: Table, id: str) -> list[tuple[str, np.ndarray]]:
    if id in store.columns:
        raise ValueError(
            f"the store has a column named {id!r}; name the id column otherwise "
            f"(to_arrow(id=...))"
        )
    return [(id, store.ids)] + [(name, store[name]) for name in store.columns]


def store_to_arrow(store: Table, id: str, index: str) -> Any:
    """A store as a ``pyarrow.Table``: ids first, then one column per field.

    ``index`` is the kind a store read back from the table should have,
    recorded in the table's metadata. See
    :meth:`sparseset.ComponentStore.to_arrow`.

    Examples
    --------
    >>> from sparseset import ComponentStore
    >>> store = ComponentStore({"hp": "i4"}); store.add([3, 1], hp=[30, 10])
    2
    >>> store_to_arrow(store, "id", "flat").to_pydict()
    {'id': [3, 1], 'hp': [30, 10]}
    """
    columns = _store_columns(store, id)
    metadata = {TABLE_KEY: json.dumps({"index": index}).encode()}
    return table_of(columns, metadata)


def store_from_arrow(
    cls: StoreMaker[T],
    table: Any,
    id: str = "id",
    schema: Any = None,
    index: str | None = None,
    *,
    choose: Chooser,
) -> T:
    """A new store holding the rows of ``table``.

    See :meth:`sparseset.ComponentStore.from_arrow`. Without ``index``,
    the kind the table records, else ``choose(ids)``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from sparseset import ComponentStore
    >>> from sparseset.sets.index_kinds import choose_kind
    >>> table = pa.table({"id": [4, 2], "hp": pa.array([1, 2], pa.int16())})
    >>> store_from_arrow(ComponentStore, table, choose=choose_kind)
    ComponentStore({hp: i2}, size=2)
    """
    ids, parsed, values = _columns_from_arrow(table, id, schema)
    store = cls(parsed, 0, _index_of(table, index, ids, choose))
    store.add(ids, **values)
    return store


def _pandas_names(name: str, shape: tuple[int, ...]) -> list[str]:
    """``name`` for single values, ``name_0 .. name_{k-1}`` for rows of ``(k,)``,
    ``name_i_j`` for more dimensions (C order)."""
    if not shape:
        return [name]
    return [name + "".join(f"_{i}" for i in where) for where in np.ndindex(*shape)]


def store_to_pandas(store: Table, id: str = "id") -> Any:
    """A store as a ``pandas.DataFrame`` indexed by id.

    See :meth:`sparseset.ComponentStore.to_pandas`.

    Examples
    --------
    >>> from sparseset import ComponentStore
    >>> store = ComponentStore({"pos": ("f8", 2)}); store.add([7], pos=[[1, 2]])
    1
    >>> store_to_pandas(store).to_dict(orient="index")
    {7: {'pos_0': 1.0, 'pos_1': 2.0}}
    """
    pd = require("pandas", "to_pandas")
    columns = _store_columns(store, id)
    data = {}
    for name, values in columns[1:]:
        if values.dtype.names is not None or values.dtype.kind == "V":
            raise TypeError(
                f"column {name!r} holds records ({values.dtype}), which pandas "
                f"has no column type for; use to_arrow()"
            )
        _check_pandas_can_hold(name, values)
        flat = values.reshape(values.shape[0], int(np.prod(values.shape[1:])))
        for k, label in enumerate(_pandas_names(name, values.shape[1:])):
            data[label] = flat[:, k]
    index = pd.Index(np.array(columns[0][1]), name=id)
    return pd.DataFrame(data, index=index, columns=list(data))


#: The datetime and timedelta units pandas keeps; others convert to seconds.
_PANDAS_TIME_UNITS = ("s", "ms", "us", "ns")


def _check_pandas_can_hold(name: str, values: np.ndarray) -> None:
    """Raise ``ValueError`` for values a pandas column cannot hold exactly:
    strings that are not Unicode text, times outside pandas' range.

    numpy keeps any 32-bit code units in a ``U`` column and any count of
    days or years in a ``M8[D]`` one; pandas holds text as ``str`` and
    times in seconds at the coarsest. ``to_arrow`` keeps both exactly.
    """
    kind = values.dtype.kind
    flat = values.reshape(-1)
    if kind == "U" and flat.size:
        units = flat.view(np.uint32)
        bad = (units > 0x10FFFF) | ((units >= 0xD800) & (units <= 0xDFFF))
        if bad.any():
            row = int(np.argmax(bad)) // (units.size // values.shape[0])
            raise ValueError(
                f"column {name!r}, row {row}: not Unicode text (a code unit past "
                f"U+10FFFF or a surrogate), which a pandas column cannot hold; "
                f"use to_arrow()"
            )
    if kind in "mM" and flat.size:
        unit, step = np.datetime_data(values.dtype)
        if unit not in _PANDAS_TIME_UNITS:
            native = flat.astype(flat.dtype.newbyteorder("="), copy=False)
            if unit in ("Y", "M"):
                # Months have no fixed length: a count that does not
                # survive the trip to seconds and back overflowed.
                back = native.astype(native.dtype.str[:3] + "[s]").astype(native.dtype)
                lost = back != native
            else:
                # numpy's stubs take a unit only as a literal, not one read
                # from a dtype.
                tick = np.timedelta64(step, unit)  # type: ignore[call-overload]
                per = int(tick // np.timedelta64(1, "s"))
                bound = (2**63 - 1) // per
                counts = native.view(np.int64)
                lost = (counts >= bound) | (counts <= -bound)
            lost &= ~np.isnat(native)
            if lost.any():
                row = int(np.argmax(lost)) // (flat.size // values.shape[0])
                raise ValueError(
                    f"column {name!r}, row {row}: {flat[np.argmax(lost)]} is "
                    f"outside the range of times pandas holds (int64 seconds); "
                    f"use to_arrow()"
                )


def _pandas_values(series: Any, label: str, dtype: np.dtype | None) -> np.ndarray:
    """A pandas column as numpy: nulls raise, other libraries' dtypes convert."""
    kind = series.dtype
    if not isinstance(kind, np.dtype):
        missing = np.asarray(series.isna())
        if missing.any():
            raise ValueError(
                f"{label} holds a null in row {int(np.argmax(missing))}; nothing "
                f"was read"
            )
        kind = getattr(kind, "numpy_dtype", None)
        if kind is None and dtype is None:
            raise TypeError(
                f"{label} has pandas dtype {series.dtype}, which no store column "
                f"holds; give a schema or convert it"
            )
    if isinstance(kind, np.dtype) and kind.kind != "O":
        values: np.ndarray = series.to_numpy(dtype=kind)
        return values
    if dtype is None:
        raise TypeError(
            f"{label} holds Python objects (dtype {series.dtype}); give a "
            f"schema to say what they are"
        )
    try:
        return np.array(series.to_list(), dtype=dtype)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{label}: cannot read its values as {dtype}: {error}"
        ) from None


def _infer_pandas(names: list[str]) -> dict[str, tuple[int, ...]]:
    """Fields and row shapes from column names: ``x_0 .. x_{k-1}`` is one
    field ``x`` of rows ``(k,)`` (``x_i_j`` of two dimensions), when every
    position is there and ``x`` is not itself a column."""
    taken = set(names)
    shapes: dict[str, tuple[int, ...]] = {}
    used: set[str] = set()
    for name in names:
        if name in used:
            continue
        shapes[name], field = (), name
        match = _VECTOR.match(name)
        if match:
            depth = match.group(2).count("_")
            # The grid this name would belong to, at each depth it could have.
            for d in range(depth, 0, -1):
                stem = name.rsplit("_", d)[0]
                if stem in taken or stem in shapes:
                    continue
                pattern = re.compile(
                    re.escape(stem) + rf"((?:_(?:0|[1-9]\d*)){{{d}}})$"
                )
                where = [
                    tuple(int(i) for i in m.group(1)[1:].split("_"))
                    for other in names
                    if (m := pattern.match(other))
                ]
                shape = tuple(max(w[k] for w in where) + 1 for k in range(d))
                if len(set(where)) == len(where) == int(np.prod(shape)):
                    del shapes[name]
                    shapes[stem], field = shape, stem
                    used |= set(_pandas_names(stem, shape))
                    break
        used.add(field)
    return shapes


def store_from_pandas(
    cls: StoreMaker[T],
    frame: Any,
    id: str | None = None,
    schema: Any = None,
    index: str | None = None,
    *,
    choose: Chooser,
) -> T:
    """A new store holding the rows of a ``pandas.DataFrame``.

    See :meth:`sparseset.ComponentStore.from_pandas`. Without ``index``,
    the kind ``choose(ids)`` picks.

    Examples
    --------
    >>> import pandas as pd
    >>> from sparseset import ComponentStore
    >>> from sparseset.sets.index_kinds import choose_kind
    >>> frame = pd.DataFrame({"v_0": [1.0], "v_1": [2.0]}, index=[9])
    >>> store = store_from_pandas(ComponentStore, frame, choose=choose_kind)
    >>> store.get(9)["v"].tolist(), store.kind
    ([1.0, 2.0], 'flat')
    """
    require("pandas", "from_pandas")
    names = [str(name) for name in frame.columns]
    if len(set(names)) != len(names):
        raise ValueError(f"the frame has repeated column names: {names}")
    if id is None:
        ids = frame.index
    elif id in names:
        ids = frame[id]
        names.remove(id)
    else:
        raise KeyError(
            f"the frame has no id column {id!r}; columns: {', '.join(names)} "
            f"(id=None takes the index)"
        )
    if schema is None:
        shapes = _infer_pandas(names)
        parsed = None
    else:
        parsed = parse_schema(schema)
        shapes = {name: shape for name, (_, shape) in parsed.items()}
    values, dtypes = {}, {}
    for name, shape in shapes.items():
        labels = _pandas_names(name, shape)
        missing = [label for label in labels if label not in frame.columns]
        if missing:
            raise KeyError(
                f"the frame has no column {missing[0]!r} for field {name!r}"
                f"{' of rows ' + str(shape) if shape else ''}; columns: "
                f"{', '.join(names)}"
            )
        dtype = parsed[name][0] if parsed else None
        parts = [
            _pandas_values(frame[label], f"column {label!r}", dtype) for label in labels
        ]
        if len({part.dtype for part in parts}) > 1:
            raise TypeError(
                f"the columns of field {name!r} differ in dtype: "
                f"{sorted({str(part.dtype) for part in parts})}"
            )
        array = np.stack(parts, axis=1) if shape else parts[0]
        values[name] = array.reshape(len(frame), *shape)
        dtypes[name] = (array.dtype, shape)
    kind = choose(ids) if index is None else index
    store = cls(parsed if parsed is not None else dtypes, 0, kind)
    store.add(ids, **values)
    return store


# -- maps, sets, worlds -----------------------------------------------------


def _map_field(table: Any, id: str, value: str | None) -> str:
    names: list[str] = [name for name in table.column_names if name != id]
    if value is not None:
        if value not in names:
            raise KeyError(
                f"the table has no value column {value!r}; columns: "
                f"{', '.join(table.column_names)}"
            )
        return value
    if len(names) != 1:
        raise ValueError(
            f"a SparseMap takes one value column besides {id!r}, the table has "
            f"{names}; pass value=the column to read"
        )
    return names[0]


def map_from_arrow(
    cls: Callable[[Any, tuple[int, ...], int, str | None], M],
    table: Any,
    id: str = "id",
    value: str | None = None,
    dtype: Any = None,
    shape: Any = None,
    index: str | None = None,
    *,
    choose: Chooser,
) -> M:
    """A new map from an id column and one value column of an Arrow table.

    See :meth:`sparseset.SparseMap.from_arrow`; the index kind as
    :func:`store_from_arrow` picks it.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from sparseset import SparseMap
    >>> from sparseset.sets.index_kinds import choose_kind
    >>> table = pa.table({"id": [5], "score": [0.5]})
    >>> m = map_from_arrow(SparseMap, table, choose=choose_kind)
    >>> float(m[5])
    0.5
    """
    pa = require("pyarrow", "from_arrow")
    if not isinstance(table, pa.Table):
        table = pa.table(table)
    name = _map_field(table, id, value)
    schema = None
    if dtype is not None:
        if shape is None:
            shape = infer_field(table.schema.field(name))[1]
        schema = {name: (dtype, shape)}
    ids, parsed, values = _columns_from_arrow(table.select([id, name]), id, schema)
    kind, row = parsed[name]
    out = cls(kind, row, 0, _index_of(table, index, ids, choose))
    out.store.add(ids, value=values[name])
    return out


def map_from_pandas(
    cls: Callable[[Any, tuple[int, ...], int, str | None], M],
    store_type: StoreMaker[Any],
    frame: Any,
    id: str | None = None,
    value: str | None = None,
    dtype: Any = None,
    shape: Any = None,
    index: str | None = None,
    *,
    choose: Chooser,
) -> M:
    """A new map from a frame's index (or an id column) and one value field.

    See :meth:`sparseset.SparseMap.from_pandas`; the index kind as
    :func:`store_from_pandas` picks it.

    Examples
    --------
    >>> import pandas as pd
    >>> from sparseset import ComponentStore, SparseMap
    >>> from sparseset.sets.index_kinds import choose_kind
    >>> frame = pd.DataFrame({"value": [1.5]}, index=[3])
    >>> m = map_from_pandas(SparseMap, ComponentStore, frame, choose=choose_kind)
    >>> float(m[3])
    1.5
    """
    fields = _infer_pandas([str(name) for name in frame.columns if str(name) != id])
    if value is None:
        if len(fields) != 1:
            raise ValueError(
                f"a SparseMap takes one value field, the frame has "
                f"{list(fields)}; pass value=the field to read"
            )
        value = next(iter(fields))
    if value not in fields and (shape is None or dtype is None):
        raise KeyError(
            f"the frame has no value field {value!r}; fields: {', '.join(fields)}"
        )
    schema = None
    row = fields.get(value, ())
    if dtype is not None:
        schema = parse_schema({value: (dtype, row if shape is None else shape)})
        row = schema[value][1]
    # Only the value's columns: other columns need not be readable at all.
    wanted = {*_pandas_names(value, row), id}
    store = store_from_pandas(
        store_type,
        frame[[name for name in frame.columns if str(name) in wanted]],
        id,
        schema,
        index,
        choose=choose,
    )
    kind, row = store.schema[value]
    out = cls(kind, row, 0, store.kind)
    out.store.add(store.ids, value=store[value])
    return out


def _world_columns(world: Components, name: str) -> list[tuple[str, str]]:
    """``(column, label)`` of one component's columns in a world's table."""
    columns = world[name].columns
    if columns == (name,):
        return [(name, name)]
    return [(column, f"{name}.{column}") for column in columns]


def world_to_arrow(
    world: Components, components: tuple[str, ...], exclude: Sequence[str]
) -> Any:
    """The matches of a view as a table: handles, then the components' columns.

    ``exclude`` names registered components. See
    :meth:`sparseset.World.to_arrow`.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("hp", "i4"); e = w.create(2); w.add("hp", e[1], hp=5)
    1
    >>> world_to_arrow(w, ("hp",), ()).to_pydict() == {"handle": [e[1]], "hp": [5]}
    True
    """
    require("pyarrow", "World.to_arrow")
    if components:
        view = world.view(*components, exclude=exclude)
        handles = view.ids
        rows = {name: view.rows(name) for name in components}
    else:
        handles = world.entities
        for name in exclude:
            handles = handles[~world[name].contains(handles)]
        rows = {}
    columns = [("handle", handles)]
    for name in components:
        store = world[name]
        for column, label in _world_columns(world, name):
            columns.append((label, store[column][rows[name]]))
    labels = [label for label, _ in columns]
    repeated = {label for label in labels if labels.count(label) > 1}
    if repeated:
        raise ValueError(
            f"the table would have two columns named {sorted(repeated)[0]!r}; "
            f"rename a component"
        )
    return table_of(columns, None)


__all__ = [
    "arrow_type",
    "from_arrow_array",
    "infer_field",
    "map_from_arrow",
    "map_from_pandas",
    "require",
    "store_from_arrow",
    "store_from_pandas",
    "store_to_arrow",
    "store_to_pandas",
    "table_of",
    "to_arrow_array",
    "world_to_arrow",
]

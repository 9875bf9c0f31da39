"""Integer columns read through the Arrow PyCapsule interface, without pyarrow.

Anything that exports ``__arrow_c_array__`` or ``__arrow_c_stream__`` (a
pyarrow ``Array`` or ``ChunkedArray``, a polars ``Series``, a pandas
``Series`` on pyarrow-backed or nullable dtypes, nanoarrow, DuckDB, ...)
hands over C structs that describe its buffers. This module reads those
structs with :mod:`ctypes`, so ids from such a column reach the kernels as
a numpy view of the producer's own data buffer: no copy and no import of
the producer's library. A column of one chunk is always a view; several
chunks are concatenated (the one copy that cannot be avoided).

The structs are those of the Arrow C data interface
(https://arrow.apache.org/docs/format/CDataInterface.html); the capsule
protocol is https://arrow.apache.org/docs/format/CDataInterface/PyCapsuleInterface.html.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

#: Arrow format strings of the integer types, and their numpy dtypes.
INTEGER_FORMATS: dict[bytes, np.dtype[Any]] = {
    b"c": np.dtype(np.int8),
    b"C": np.dtype(np.uint8),
    b"s": np.dtype(np.int16),
    b"S": np.dtype(np.uint16),
    b"i": np.dtype(np.int32),
    b"I": np.dtype(np.uint32),
    b"l": np.dtype(np.int64),
    b"L": np.dtype(np.uint64),
}
#: Names for the formats a message may have to show (the rest are shown raw).
_FORMAT_NAMES = {
    b"n": "null",
    b"b": "bool",
    b"e": "float16",
    b"f": "float32",
    b"g": "float64",
    b"u": "string",
    b"U": "large string",
    b"vu": "string view",
    b"z": "binary",
    b"Z": "large binary",
}


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_void_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))),
    ("private_data", ctypes.c_void_p),
]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))),
    ("private_data", ctypes.c_void_p),
]


class ArrowArrayStream(ctypes.Structure):
    pass


ArrowArrayStream._fields_ = [
    (
        "get_schema",
        ctypes.CFUNCTYPE(
            ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowSchema)
        ),
    ),
    (
        "get_next",
        ctypes.CFUNCTYPE(
            ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowArray)
        ),
    ),
    (
        "get_last_error",
        ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(ArrowArrayStream)),
    ),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))),
    ("private_data", ctypes.c_void_p),
]

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _struct(capsule: Any, name: bytes, kind: type[ctypes.Structure]) -> Any:
    """The struct a capsule points at (a view: the capsule owns it)."""
    return kind.from_address(_get_pointer(capsule, name))


class _Chunk:
    """Keeps one exported array alive for as long as a numpy view needs it.

    ``owner`` is a capsule (whose destructor releases the array) or a
    struct this module moved out of a stream, released here when the last
    view goes.
    """

    def __init__(self, owner: Any, array: ArrowArray, released_here: bool) -> None:
        self._owner = owner
        self._array = array
        self._released_here = released_here
        self.__array_interface__: dict[str, Any] = {}

    def __del__(self) -> None:
        if self._released_here and self._array.release:
            self._array.release(ctypes.byref(self._array))


def _format_name(fmt: bytes) -> str:
    if fmt in INTEGER_FORMATS:
        return str(INTEGER_FORMATS[fmt])
    return _FORMAT_NAMES.get(fmt, fmt.decode("utf-8", "replace"))


def _first_null(array: ArrowArray) -> int:
    """Position of the first null in ``array``, -1 if it has none."""
    length = array.length
    if array.null_count == 0 or not length:
        return -1
    if array.n_buffers == 0:  # the null type: every slot is null
        return 0
    bitmap = array.buffers[0]
    if not bitmap:
        return -1
    start = array.offset
    nbytes = (start + length + 7) // 8
    bits = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(bitmap), np.uint8)
    valid = np.unpackbits(bits, bitorder="little")[start : start + length]
    return -1 if valid.all() else int(np.argmin(valid))


def _view(chunk: _Chunk, dtype: np.dtype) -> np.ndarray:
    """The chunk's values as a read-only numpy view of its data buffer."""
    array = chunk._array
    if array.length == 0:
        return np.empty(0, dtype)
    address = array.buffers[1] + array.offset * dtype.itemsize
    # Arrow buffers are immutable: the view is read-only.
    chunk.__array_interface__ = {
        "version": 3,
        "shape": (array.length,),
        "typestr": dtype.str,
        "data": (address, True),
    }
    return np.asarray(chunk)


class NotIntegersError(Exception):
    """The column is not of integers; ``fmt`` names its Arrow type."""

    def __init__(self, fmt: bytes) -> None:
        super().__init__(fmt)
        self.name = _format_name(fmt)


def _check_type(schema: ArrowSchema) -> np.dtype:
    """The numpy dtype of an integer column; raise for any other column."""
    fmt = schema.format
    if schema.dictionary:
        values = _format_name(schema.dictionary.contents.format)
        raise TypeError(
            f"ids must be plain integers, not a dictionary-encoded (categorical) "
            f"column of {values} values; decode it first (pyarrow: "
            f"column.dictionary_decode(), pandas: series.astype(int))"
        )
    if fmt in INTEGER_FORMATS:
        return INTEGER_FORMATS[fmt]
    if fmt == b"n":
        return np.dtype(np.int64)
    raise NotIntegersError(fmt)


def _reject_nulls(array: ArrowArray, start: int) -> None:
    k = _first_null(array)
    if k >= 0:
        raise ValueError(f"ids must not be null: ids[{start + k}] is null")


def read_ids(column: Any) -> np.ndarray:
    """The integers of an Arrow-exporting column as a 1-D numpy array.

    A column of one chunk gives a read-only view of its data buffer.
    Raises ``ValueError`` naming the first null, ``TypeError`` for a
    dictionary-encoded column, and :class:`NotIntegersError` for a column of
    another type (the caller turns that into its usual message).

    Examples
    --------
    >>> import pyarrow as pa
    >>> read_ids(pa.array([3, 1, 2], pa.int16()))
    array([3, 1, 2], dtype=int16)
    >>> read_ids(pa.chunked_array([[3], [None]]))
    Traceback (most recent call last):
    ...
    ValueError: ids must not be null: ids[1] is null
    """
    if hasattr(column, "__arrow_c_array__"):
        schema_capsule, array_capsule = column.__arrow_c_array__()
        schema = _struct(schema_capsule, b"arrow_schema", ArrowSchema)
        dtype = _check_type(schema)
        array = _struct(array_capsule, b"arrow_array", ArrowArray)
        _reject_nulls(array, 0)
        return _view(_Chunk(array_capsule, array, False), dtype)
    return _read_stream(column.__arrow_c_stream__())


def _read_stream(capsule: Any) -> np.ndarray:
    stream = _struct(capsule, b"arrow_array_stream", ArrowArrayStream)
    schema = ArrowSchema()
    if stream.get_schema(ctypes.byref(stream), ctypes.byref(schema)):
        raise ValueError(f"the Arrow stream failed: {_stream_error(stream)}")
    try:
        dtype = _check_type(schema)
    finally:
        schema.release(ctypes.byref(schema))
    chunks: list[_Chunk] = []
    start = 0
    while True:
        array = ArrowArray()
        if stream.get_next(ctypes.byref(stream), ctypes.byref(array)):
            raise ValueError(f"the Arrow stream failed: {_stream_error(stream)}")
        if not array.release:  # the end of the stream
            break
        chunk = _Chunk(None, array, True)
        _reject_nulls(array, start)
        start += array.length
        if array.length:
            chunks.append(chunk)
    if len(chunks) == 1:
        return _view(chunks[0], dtype)
    if not chunks:
        return np.empty(0, dtype)
    return np.concatenate([_view(chunk, dtype) for chunk in chunks])


def _stream_error(stream: ArrowArrayStream) -> str:
    message = stream.get_last_error(ctypes.byref(stream))
    return message.decode("utf-8", "replace") if message else "no message"


__all__ = ["INTEGER_FORMATS", "NotIntegersError", "read_ids"]

"""Turning user input into id arrays, and the errors for input that isn't.

Every container funnels its id arguments through :func:`as_ids`, then
through the range checks here, before any kernel mutates anything, so a bad
batch is rejected whole and the messages read the same everywhere.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, MappingView
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from ..io.arrow_c import NotIntegersError, read_ids

#: Python ints at or past this can only be absent; they map to this sentinel.
_UINT64_MAX = 2**64 - 1


def _where(k: int, scalar: bool) -> str:
    return "id" if scalar else f"ids[{k}]"


def as_ids(ids: Any) -> tuple[np.ndarray, bool]:
    """Return ``ids`` as a 1-D integer array and whether it was one scalar id.

    A Python int, a numpy integer or a 0-d integer array is one id; a list,
    tuple, 1-D integer array or any other iterable (a set, a range, a
    generator, a dict's keys) is a batch (an empty list is an empty batch,
    and so is an empty float array: ``np.array([])`` is float64).
    Any integer dtype and any stride passes through without a copy. Bools,
    floats, strings and other objects raise ``TypeError``; arrays of two or
    more dimensions raise ``ValueError``.

    Columns of other libraries are batches too, read without importing
    those libraries (see :func:`_columnar`): a pandas ``Series`` or
    ``Index``, a pyarrow ``Array`` or ``ChunkedArray``, a polars
    ``Series``. An integer column is a view of its own buffer, not a copy;
    a null raises ``ValueError`` naming its position, a dictionary-encoded
    (categorical) column ``TypeError``.

    Examples
    --------
    >>> as_ids(7)
    (array([7]), True)
    >>> as_ids([3, 1])
    (array([3, 1]), False)
    >>> as_ids(np.array([]))
    (array([], dtype=int64), False)
    """
    if isinstance(ids, np.ndarray):
        arr = ids
    elif isinstance(ids, bool | np.bool_):
        raise TypeError(f"ids must be integers, not bool ({ids!r})")
    elif isinstance(ids, int | np.integer):
        if isinstance(ids, int) and not -(2**63) <= ids < 2**64:
            return _from_objects(np.array([ids], dtype=object), scalar=True), True
        return np.array([ids]), True
    elif isinstance(ids, list | tuple):
        if len(ids) == 0:
            return np.empty(0, np.int64), False
        kinds = set(map(type, ids))  # one C-level pass; numpy reads bools as 0/1
        if bool in kinds or np.bool_ in kinds:
            for k, value in enumerate(ids):
                if isinstance(value, bool | np.bool_):
                    raise TypeError(
                        f"ids must be integers, not bool: ids[{k}] = {value!r}"
                    )
        try:
            arr = np.asarray(ids)
        except (OverflowError, ValueError):
            arr = np.array(ids, dtype=object)
        if arr.ndim == 1 and arr.dtype.kind not in "iu":
            # numpy inferred float or object from a mix; judge each element.
            return _from_objects(np.array(ids, dtype=object), scalar=False), False
    elif _is_columnar(ids):
        arr = _columnar(ids)
    else:
        return as_ids(_elements(ids))

    scalar = arr.ndim == 0
    if scalar:
        arr = arr.reshape(1)
    elif arr.ndim != 1:
        raise ValueError(
            f"ids must be a scalar or a 1-D array, got a {arr.ndim}-D array "
            f"of shape {arr.shape}"
        )
    kind = arr.dtype.kind
    if kind in "iu":
        if not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        return arr, scalar
    if kind == "f" and arr.size == 0:
        # numpy's dtype for an empty array (np.array([]), np.empty(0)): it
        # holds no float, so it is the empty batch an empty list is.
        return np.empty(0, np.int64), scalar
    if kind == "O":
        return _from_objects(arr, scalar), scalar
    if kind == "b":
        raise TypeError(
            f"ids must be integers, not bool: {_where(0, scalar)} = {arr[0]!r}"
            if arr.size
            else "ids must be integers, not bool"
        )
    first = f": {_where(0, scalar)} = {arr[0]!r}" if arr.size else ""
    raise TypeError(f"ids must be integers, got dtype {arr.dtype}{first}")


#: The id dtypes kernels are compiled for; any other integer dtype is
#: widened to int64. int32 is a flat set's member dtype (``s.ids``), uint64
#: holds ids past 2**63.
KERNEL_DTYPES = (np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.uint64))
_I64, _I32, _U64 = KERNEL_DTYPES


def kernel_ids(arr: np.ndarray) -> np.ndarray:
    """``arr`` (1-D, integer) in a form the kernels are compiled for.

    An aligned, C-contiguous array of int64, int32 or uint64
    (:data:`KERNEL_DTYPES`), writeable or not. numba compiles a kernel once
    per argument type, so ids in this form cost a kernel at most six
    compilations (in practice one or two: int64 batches, and a flat set's
    own int32 members) where any dtype and layout would cost 8 dtypes x 4
    layouts. An array already in that form passes as itself; another
    integer dtype (widened to int64), a stride, a reversed or unaligned
    array, or a foreign byte order costs one copy. The containers call it
    where they hand ids to a kernel; :func:`as_ids` keeps the input as it
    is, for the messages and for readers that return it.

    Examples
    --------
    >>> kernel_ids(np.array([3, 1], np.uint8)).dtype
    dtype('int64')
    >>> b = np.arange(4); kernel_ids(b) is b, kernel_ids(b[::-1]).tolist()
    (True, [3, 2, 1, 0])
    """
    dtype = arr.dtype
    flags = arr.flags
    native = dtype is _I64 or dtype is _I32 or dtype is _U64
    if native and flags.c_contiguous and flags.aligned:
        return arr
    if dtype not in KERNEL_DTYPES or not dtype.isnative:
        wide = dtype.kind == "u" and dtype.itemsize == 8
        return np.ascontiguousarray(arr, _U64 if wide else _I64)
    if not flags.c_contiguous:
        return np.ascontiguousarray(arr)
    if not flags.aligned:  # a buffer at an odd offset
        return arr.copy()
    return arr  # a dtype equal to, not the same object as, one above


def _is_columnar(ids: Any) -> bool:
    return (
        hasattr(ids, "__array__")
        or hasattr(ids, "__arrow_c_array__")
        or hasattr(ids, "__arrow_c_stream__")
    )


def _columnar(column: Any) -> np.ndarray:
    """A column of another library (or any array-like) as a numpy array.

    The cheapest exact route first: a column held in numpy memory (a
    pandas ``Series`` or ``Index`` of a numpy dtype) through ``__array__``,
    a view; a column that exports Arrow (pyarrow, polars, pandas on
    nullable or pyarrow dtypes) through the PyCapsule interface, a view of
    its data buffer whose nulls are found in its validity bitmap. Other
    columns go through ``__array__``, and the caller judges the dtype as
    for any numpy array. Nothing here imports pandas, pyarrow or polars.

    Examples
    --------
    >>> import pandas as pd
    >>> _columnar(pd.Series([3, 1], dtype="Int64"))
    array([3, 1])
    >>> _columnar(pd.Index([3, None], dtype="Int64"))
    Traceback (most recent call last):
    ...
    ValueError: ids must not be null: ids[1] is null
    """
    dtype = getattr(column, "dtype", None)
    if isinstance(dtype, np.dtype):
        return np.asarray(column)
    if hasattr(column, "__arrow_c_array__") or hasattr(column, "__arrow_c_stream__"):
        try:
            return read_ids(column)
        except NotIntegersError as error:
            if not hasattr(column, "__array__"):
                raise TypeError(
                    f"ids must be integers, got an Arrow column of type {error.name}"
                ) from None
        except ImportError:
            # pandas exports Arrow only with pyarrow installed; its
            # __array__ below still reads the column.
            pass
    if hasattr(dtype, "categories"):  # a pandas Categorical exporting no Arrow
        raise TypeError(
            "ids must be plain integers, not a categorical column; decode it "
            "first (series.astype(int))"
        )
    arr = np.asarray(column)
    if arr.dtype.kind in "fO" and getattr(dtype, "kind", None) in ("i", "u"):
        # A nullable integer column (pandas Int64, int64[pyarrow]) hands
        # numpy NaN or NA where it holds nulls.
        k = _first_missing(arr)
        if k >= 0:
            raise ValueError(f"ids must not be null: ids[{k}] is null")
    return arr


def _first_missing(arr: np.ndarray) -> int:
    """Position of the first NaN, None or NA in a 1-D array, -1 if none."""
    if arr.ndim != 1:
        return -1
    if arr.dtype.kind == "f":
        missing = np.isnan(arr)
    else:
        missing = np.fromiter(
            (v is None or type(v).__name__ == "NAType" or v != v for v in arr),
            np.bool_,
            arr.shape[0],
        )
    return int(np.argmax(missing)) if missing.any() else -1


def _elements(ids: Any) -> list[Any]:
    """The elements of any iterable ``iter()`` accepts, as ``set()`` takes
    them: a dict gives its keys, an object with only ``__getitem__`` its
    items. Strings and bytes are not batches of ids."""
    if not isinstance(ids, str | bytes):
        try:
            return list(iter(ids))
        except TypeError:
            pass
    raise TypeError(
        f"ids must be an integer or a sequence of integers, "
        f"not {type(ids).__name__} ({ids!r:.60})"
    )


def ids_among(values: Any) -> tuple[np.ndarray, bool]:
    """The ids among ``values``, and whether anything else was among them.

    For the set protocol, where an element that cannot be an id (negative,
    a float, a string, ``None``) is simply not a member, as it is not one
    of a ``set`` of ids. Arrays of more than one dimension still raise.

    Examples
    --------
    >>> ids_among([3, -1, "x", 2**70, 4])
    (array([                   3, 18446744073709551615,                    4],
          dtype=uint64), True)
    >>> ids_among({5: "five"})
    (array([5]), False)
    >>> ids_among("ab")  # a string's characters: none of them an id
    (array([], dtype=int64), True)
    """
    if isinstance(values, str | Iterator):
        values = list(values)  # a string's characters; an iterator, read once
    elif isinstance(values, np.ndarray) and values.dtype == object and values.ndim == 1:
        values = values.tolist()
    try:
        arr, _ = as_ids(values)
    except (TypeError, ValueError):
        if isinstance(values, np.ndarray) and values.ndim > 1:
            raise
        if isinstance(values, np.ndarray):
            elements = values.tolist()
        elif callable(getattr(values, "to_pylist", None)):
            # A pyarrow column iterates as pyarrow scalars, never ints.
            elements = list(values.to_pylist())
        else:
            elements = values if isinstance(values, list) else _elements(values)
        kept = []
        for v in elements:
            hash(v)  # an element set could not hash raises, as for set
            if _is_id(v):
                kept.append(v)
        return as_ids(kept)[0], len(kept) < len(elements)
    if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
        return arr[arr >= 0], True
    return arr, False


def one_id(x: Any, what: str = "id") -> int | None:
    """``x`` as one id for ``x in s``, or None where it cannot be one.

    As ``set`` answers ``in``: any hashable ``x`` gets an answer (a
    negative, a float, a string or ``None`` is simply not a member), and
    an unhashable one raises ``TypeError``. ``what`` names an id in the
    message (a World store takes handles).

    Examples
    --------
    >>> one_id(np.uint8(7)), one_id(-1), one_id("x"), one_id(2.0)
    (7, None, None, None)
    >>> one_id([1])
    Traceback (most recent call last):
    ...
    TypeError: unhashable type: 'list'; `in` takes one id: use contains(ids) ...
    """
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu":
        x = x.item()
    elif isinstance(x, np.integer):
        x = int(x)
    elif isinstance(x, bool) or not isinstance(x, int):
        try:
            hash(x)
        except TypeError as error:
            raise TypeError(
                f"{error}; `in` takes one {what}: use contains({what}s) for a batch"
            ) from None
        return None
    return int(x) if x >= 0 else None


def scalar_id(x: Any) -> int:
    """``x`` as a Python int where it is one integer (a Python int or a
    numpy integer scalar, such as an element of the handle array
    ``create`` returns), else -1: the test of the one-id fast paths, which
    then check the range. A bool is not an id.

    Examples
    --------
    >>> scalar_id(7), scalar_id(np.int64(7)), scalar_id(True), scalar_id([7])
    (7, 7, -1, -1)
    """
    if type(x) is int:
        return x
    return int(x) if isinstance(x, np.integer) else -1


def is_one_key(key: Any) -> bool:
    """Whether ``key`` is one key, as a ``dict`` takes keys, rather than a
    batch: anything but a list, tuple, range, set, mapping view, iterator,
    array of one or more dimensions or column of another library.

    A one-key lookup of something that cannot be an id (a negative, a
    float, a string, ``None``) answers "absent" (``KeyError``), where a
    batch holding one raises (see :func:`one_id`).

    Examples
    --------
    >>> is_one_key(7), is_one_key(np.int64(7)), is_one_key("a"), is_one_key(None)
    (True, True, True, True)
    >>> is_one_key([7]), is_one_key(np.array([7])), is_one_key(range(3))
    (False, False, False)
    """
    if isinstance(key, np.ndarray):
        return key.ndim == 0
    if isinstance(key, np.generic):
        return True
    if isinstance(key, list | tuple | range | AbstractSet | MappingView | Iterator):
        return False
    return not _is_columnar(key)


def _is_id(value: Any) -> bool:
    return (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool | np.bool_)
        and int(value) >= 0
    )


def _from_objects(arr: np.ndarray, scalar: bool) -> np.ndarray:
    """Convert an object array of Python ints, rejecting anything else."""
    values = []
    for k, value in enumerate(arr):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(
                f"ids must be integers, not {type(value).__name__}: "
                f"{_where(k, scalar)} = {value!r}"
            )
        value = int(value)
        if value < 0:
            raise ValueError(f"ids must be non-negative: {_where(k, scalar)} = {value}")
        values.append(min(value, _UINT64_MAX))
    if not values:
        return np.empty(0, np.int64)
    dtype = np.int64 if max(values) < 2**63 else np.uint64
    return np.array(values, dtype=dtype)


def reject_negative(arr: np.ndarray, scalar: bool = False) -> None:
    """Raise ``ValueError`` naming the first negative id, if there is one.

    Examples
    --------
    >>> reject_negative(np.array([4, -2, -3]))
    Traceback (most recent call last):
    ...
    ValueError: ids must be non-negative: ids[1] = -2
    """
    if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
        k = int(np.argmax(arr < 0))
        raise ValueError(f"ids must be non-negative: {_where(k, scalar)} = {arr[k]}")


def reject_out_of_range(
    arr: np.ndarray,
    limit: int,
    kind: str,
    scalar: bool = False,
    source: Any = None,
    hint: str = "",
) -> None:
    """Raise ``ValueError`` for the first id at or past ``limit``.

    ``kind`` names the index whose range is ``[0, limit)``. ``source`` is
    the caller's original argument: Python ints past 2**64 were clipped in
    ``arr``, and the message should show the value the caller wrote.
    ``hint`` ends the message (which kind would take the id).

    Examples
    --------
    >>> reject_out_of_range(np.array([1, 2**40]), 2**31, "flat")
    Traceback (most recent call last):
    ...
    ValueError: ids[1] = 1099511627776 is outside the flat index's range [0, 2**31)
    """
    if not arr.size or int(arr.max()) < limit:
        return
    k = int(np.argmax(arr >= limit))
    raise ValueError(
        f"{describe(arr, k, scalar, source)} is outside the {kind} index's range "
        f"[0, 2**{limit.bit_length() - 1}){hint}"
    )


def describe(arr: np.ndarray, k: int, scalar: bool, source: Any = None) -> str:
    """``"ids[k] = value"`` (``"id = value"`` for a scalar), for messages.

    ``source`` is the caller's original argument: Python ints past 2**64
    were clipped in ``arr``, and a message should show what the caller wrote.

    Examples
    --------
    >>> describe(np.array([3, 2**64 - 1]), 1, False, [3, 2**70])
    'ids[1] = 1180591620717411303424'
    """
    value = arr[k]
    if isinstance(source, list | tuple):
        value = source[k]
    elif scalar and isinstance(source, int):
        value = source
    return f"{_where(k, scalar)} = {value}"

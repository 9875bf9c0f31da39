"""One row of every column of a tuple: the steps kernels take per id.

A store's kernels take its columns as a tuple, of arrays of several dtypes
and widths. numba's way to loop over such a tuple, ``literal_unroll``,
lowers each step (its ``typed_getitem``, ``getitem_typed`` in
``numba/cpython/tupleobj.py``) with a stack slot allocated where the step
runs, not in the function's entry block. LLVM's optimiser turns those
slots into registers; unoptimised (``NUMBA_OPT=0``) each execution takes
fresh stack, given back only when the function returns, so a loop over
the columns inside a kernel's loop over a batch's ids took stack per id
until it overflowed (a segfault after some tens of thousands of ids at
the default 8 MiB stack).

So no kernel uses ``literal_unroll``: :func:`unrolled` makes a function
that calls a step once per item of the tuple, each call with the item's
index fixed at compile time (``items[0]``, ``items[1]``, ...: a field of
the tuple, no switch, no stack slot, no error path), written into the
calling kernel by numba's inliner.
"""

import inspect
from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numpy.typing import NDArray

from .options import OVERLOAD_NO_NRT
from .prefetch import prefetch

#: A column as the row kernels see it: 2-D, row ``p`` belonging to ``dense[p]``.
Column: TypeAlias = NDArray[Any]
#: A column to accumulate into and the values to add: ``(column, values)``,
#: both 2-D and typed (rows by their elements), ``values`` with a row per
#: id or one row for every id.
Sum: TypeAlias = tuple[NDArray[Any], NDArray[Any]]


def unrolled(step: Callable[..., None], doc: str) -> Callable[..., None]:
    """``each(items, *args)``: ``step(item, *args)`` for every item of the
    tuple ``items``, in order, unrolled at compile time; ``doc`` is its
    docstring. ``step`` must be callable from compiled code
    (``register_jitable``) and from Python. O(len(items)) calls.

    Examples
    --------
    >>> @register_jitable
    ... def bump(column, row):
    ...     column[row] += 1
    >>> bump_all = unrolled(bump, "Add 1 at row of every column.")
    >>> a, b = np.zeros(3, np.int64), np.zeros(2)
    >>> bump_all((a, b), 1); a.tolist(), b.tolist()
    ([0, 1, 0], [0.0, 1.0])
    """

    # Written out for step's own parameters, the stub, its typing function
    # and the unrolled implementation alike: numba's inliner takes no *args
    # and an overload's signatures must match.
    params = ", ".join(list(inspect.signature(step).parameters)[1:])

    def unrolled_for(count: int) -> Callable[..., None]:
        calls = "".join(f"    step(items[{i}], {params})\n" for i in range(count))
        scope: dict[str, Any] = {"step": step}
        exec(f"def impl(items, {params}):\n{calls}    return None\n", scope)
        impl: Callable[..., None] = scope["impl"]
        return impl

    scope: dict[str, Any] = {"step": step, "types": types, "impl": unrolled_for}
    exec(
        f"def each(items, {params}):\n"
        "    for item in items:\n"
        f"        step(item, {params})\n"
        f"def typing(items, {params}):\n"
        "    if isinstance(items, types.BaseTuple):\n"
        "        return impl(len(items))\n"
        "    return None\n",
        scope,
    )
    each: Callable[..., None] = scope["each"]
    each.__doc__ = doc
    each.__name__ = each.__qualname__ = step.__name__.lstrip("_")
    each.__module__ = step.__module__
    overload(each, inline="always", jit_options=OVERLOAD_NO_NRT)(scope["typing"])
    return each


@register_jitable(inline="always")
def _prefetch_rows(column: Column, row: np.uint64) -> None:
    prefetch(column, row * np.uint64(column.shape[1]))


@register_jitable(inline="always")
def _move_row(column: Column, source: np.uint64, target: np.uint64) -> None:
    for j in range(column.shape[1]):
        column[target, j] = column[source, j]


@register_jitable(inline="always")
def _swap_rows(column: Column, p: np.uint64, q: np.uint64) -> None:
    for j in range(column.shape[1]):
        word = column[p, j]
        column[p, j] = column[q, j]
        column[q, j] = word


@register_jitable(inline="always")
def _prefetch_sum_rows(pair: Sum, row: np.uint64) -> None:
    prefetch(pair[0], row * np.uint64(pair[0].shape[1]))


@register_jitable(inline="always")
def _add_sum_row(pair: Sum, row: np.uint64, k: np.uint64, fresh: bool) -> None:
    column, values = pair
    at = k if values.shape[0] > 1 else np.uint64(0)
    zero = column.dtype.type(0)
    for w in range(np.uint64(column.shape[1])):
        # A fresh row starts at zero by a select, not by a zeroing loop
        # first: LLVM turns that loop into a call to memset, one per new id.
        column[row, w] = (zero if fresh else column[row, w]) + values[at, w]


@register_jitable(inline="always")
def _put_sum_times(pair: Sum, row: np.uint64, times: np.uint64) -> None:
    column, values = pair
    count = column.dtype.type(times)
    for w in range(np.uint64(column.shape[1])):
        column[row, w] = values[np.uint64(0), w] * count


@register_jitable(inline="always")
def _add_sum_times(pair: Sum, row: np.uint64, times: np.uint64) -> None:
    column, values = pair
    count = column.dtype.type(times)
    for w in range(np.uint64(column.shape[1])):
        column[row, w] += values[np.uint64(0), w] * count


prefetch_rows = unrolled(
    _prefetch_rows,
    """``prefetch_rows(columns, row)``: start loading row ``row`` of every
    column (2-D, C-contiguous) into cache. A hint: ``row`` may lie past
    the columns. O(columns).

    Examples
    --------
    >>> prefetch_rows((np.zeros((4, 2)), np.zeros((4, 1), np.int32)), np.uint64(3))
    """,
)
move_row = unrolled(
    _move_row,
    """``move_row(columns, source, target)``: ``column[target] =
    column[source]`` for every column. O(row width).

    Examples
    --------
    >>> hp = np.array([[1], [2], [3]], np.int64)
    >>> move_row((hp,), 2, 0); hp[:, 0].tolist()
    [3, 2, 3]
    """,
)
swap_rows = unrolled(
    _swap_rows,
    """``swap_rows(columns, p, q)``: exchange rows ``p`` and ``q`` of every
    column. O(row width).

    Examples
    --------
    >>> hp = np.array([[1], [2], [3]], np.int64)
    >>> swap_rows((hp,), 2, 0); hp[:, 0].tolist()
    [3, 2, 1]
    """,
)
prefetch_sum_rows = unrolled(
    _prefetch_sum_rows,
    """``prefetch_sum_rows(sums, row)``: :func:`prefetch_rows` for the
    columns of ``sums``, a tuple of :data:`Sum`. O(columns).

    Examples
    --------
    >>> prefetch_sum_rows(((np.zeros((4, 1)), np.ones((1, 1))),), np.uint64(3))
    """,
)
add_sum_row = unrolled(
    _add_sum_row,
    """``add_sum_row(sums, row, k, fresh)``: ``column[row] += values[k]``
    for every ``(column, values)`` of ``sums`` (``values[0]`` where
    ``values`` has one row), in the column's dtype; the row zeroed first
    if ``fresh``. O(row width).

    Examples
    --------
    >>> n = np.full((2, 1), 7, np.int64); w = np.zeros((2, 2))
    >>> sums = ((n, np.ones((1, 1), np.int64)), (w, np.array([[0.5, 1.0], [2.0, 3.0]])))
    >>> add_sum_row(sums, 1, 1, True); n[:, 0].tolist(), w[1].tolist()
    ([7, 1], [2.0, 3.0])
    """,
)
put_sum_times = unrolled(
    _put_sum_times,
    """``put_sum_times(sums, row, times)``: ``column[row] = values[0] *
    times`` for every ``(column, values)`` of the tuple, in the column's
    dtype: a fresh row's sum of ``times`` occurrences of one row of values,
    written once (no load of the row, which a pass over a table's slots
    meets in no order a prefetch could follow). For integer columns, where
    that product is the sum exactly. O(row width).

    Examples
    --------
    >>> n = np.zeros((3, 1), np.int64); w = np.zeros((3, 2), np.int32)
    >>> sums = ((n, np.ones((1, 1), np.int64)), (w, np.array([[2, -1]], np.int32)))
    >>> put_sum_times(sums, 1, 5); n[:, 0].tolist(), w[1].tolist()
    ([0, 5, 0], [10, -5])
    """,
)
add_sum_times = unrolled(
    _add_sum_times,
    """``add_sum_times(sums, row, times)``: :func:`put_sum_times` added to
    the row as it stands: a member's sum of ``times`` occurrences. For
    integer columns, whose arithmetic wraps alike added one at a time or
    at once. O(row width).

    Examples
    --------
    >>> n = np.full((3, 1), 7, np.int64)
    >>> add_sum_times(((n, np.array([[2]], np.int64)),), 1, 5); n[:, 0].tolist()
    [7, 17, 7]
    """,
)

"""Arrays laid out for huge pages: what the kernels' random accesses need.

A kernel that reads an index or a column at scattered positions pays a
TLB miss wherever its address falls on a 4 KiB page the TLB does not
hold; on a 2 MiB huge page, a few dozen TLB entries cover a whole index.
Linux backs memory with huge pages where the program asked for them
(``madvise``, which numpy does for every allocation of 4 MiB or more) and
only in 2 MiB regions that lie entirely inside the allocation. numpy's
allocations start wherever ``malloc`` puts them, so the first and last
partial regions of every large array stay on 4 KiB pages: up to 4 MiB of
a 16 MiB index, a fifth of its random accesses.

:func:`empty` and :func:`zeros` return arrays whose data starts on a
2 MiB boundary, inside a buffer that reaches the next boundary past their
end, so every region they touch can be a huge page. Below
:data:`HUGE_FROM` bytes they are plain ``np.empty`` and ``np.zeros``. The
slack is address space only: pages never written are never mapped (and
``zeros`` takes zeroed pages from the OS, as ``np.zeros`` does). The
arrays are views of that buffer (``base`` is it), C-contiguous and
writeable, and report their own ``nbytes``; an object dtype, which no
view of bytes can hold, gets numpy's plain array. Smaller arrays can ask
for their data on an ``align``-byte boundary instead (a hash table's
buckets on cache lines).

Compiled code may call both too (the index kinds' ``room`` runs on either
side): there they are numba's ``np.empty`` and ``np.zeros``, since memory
from numba's runtime is never offered for huge pages.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import overload

#: The huge page size the layout aims at (x86-64 and most arm64 kernels).
HUGE_PAGE = 1 << 21
#: Arrays from this many bytes are laid out for huge pages: a buffer with
#: the slack is then past numpy's own 4 MiB threshold for asking for them.
HUGE_FROM = HUGE_PAGE


def empty(shape: int | tuple[int, ...], dtype: Any, align: int = 1) -> np.ndarray:
    """``np.empty(shape, dtype)``, its data on a huge-page boundary when large,
    else on an ``align``-byte one (a power of two).

    Examples
    --------
    >>> a = empty(1 << 20, np.uint32)
    >>> a.shape, a.dtype, a.ctypes.data % HUGE_PAGE, a.flags.c_contiguous
    ((1048576,), dtype('uint32'), 0, True)
    >>> b = empty((3, 2), np.float64, align=64); b.shape, b.ctypes.data % 64
    ((3, 2), 0)
    """
    return _laid_out(np.empty, shape, dtype, align)


def zeros(shape: int | tuple[int, ...], dtype: Any, align: int = 1) -> np.ndarray:
    """``np.zeros(shape, dtype)``, its data on a huge-page boundary when large,
    else on an ``align``-byte one (a power of two).

    Examples
    --------
    >>> a = zeros((1 << 18, 3), np.float64)
    >>> a.shape, a.ctypes.data % HUGE_PAGE, bool(a.any())
    ((262144, 3), 0, False)
    """
    return _laid_out(np.zeros, shape, dtype, align)


def _laid_out(
    make: Any, shape: int | tuple[int, ...], dtype: Any, align: int
) -> np.ndarray:
    dtype = np.dtype(dtype)
    dims = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    # math.prod: np.prod of a shape tuple costs microseconds a call.
    nbytes = math.prod(int(d) for d in dims) * dtype.itemsize
    if dtype.hasobject:  # no view of bytes can hold objects
        array: np.ndarray = make(dims, dtype)
        return array
    if nbytes >= HUGE_FROM:
        # The end rounded up to a boundary, and a whole page to find the
        # first one: every region the array touches lies in the buffer.
        align = HUGE_PAGE
        span = -(-nbytes // HUGE_PAGE) * HUGE_PAGE
    elif align <= 1:
        array = make(dims, dtype)
        return array
    else:
        span = nbytes
    buffer: np.ndarray = make(span + align, np.uint8)
    skip = -buffer.__array_interface__["data"][0] % align
    laid_out: np.ndarray = buffer[skip : skip + nbytes].view(dtype).reshape(dims)
    return laid_out


@overload(empty)
def _empty_compiled(shape: Any, dtype: Any) -> Any:
    def impl(shape: Any, dtype: Any) -> Any:
        return np.empty(shape, dtype)

    return impl


@overload(zeros)
def _zeros_compiled(shape: Any, dtype: Any) -> Any:
    def impl(shape: Any, dtype: Any) -> Any:
        return np.zeros(shape, dtype)

    return impl

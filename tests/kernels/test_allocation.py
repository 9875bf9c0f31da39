"""Arrays laid out for huge pages (:mod:`sparseset.kernels.allocation`)."""

import numpy as np
import pytest
from numba import njit

from sparseset import ComponentStore, SparseSet, World
from sparseset.kernels import allocation
from sparseset.kernels.allocation import HUGE_FROM, HUGE_PAGE


def _buffer_reaches_past_last_boundary(array: np.ndarray) -> bool:
    """Whether the buffer under ``array`` covers every 2 MiB region the
    array touches, so that each can be a huge page."""
    base = array.base
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert isinstance(base, np.ndarray)
    end = array.ctypes.data + array.nbytes
    boundary = -(-end // HUGE_PAGE) * HUGE_PAGE
    return bool(base.ctypes.data + base.nbytes >= boundary)


@pytest.mark.parametrize("make", [allocation.empty, allocation.zeros])
@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        (HUGE_FROM // 4, np.uint32),
        (HUGE_FROM // 4 + 1, np.int32),
        ((HUGE_FROM // 24 + 7, 3), np.float64),
        (3_000_000, np.bool_),
    ],
)
def test_large_arrays_start_on_a_huge_page_and_own_their_last_one(make, shape, dtype):
    array = make(shape, dtype)
    dims = (shape,) if isinstance(shape, int) else shape
    assert array.shape == dims and array.dtype == dtype
    assert array.flags.c_contiguous and array.flags.writeable
    assert array.ctypes.data % HUGE_PAGE == 0
    assert array.nbytes == int(np.prod(dims)) * np.dtype(dtype).itemsize
    assert _buffer_reaches_past_last_boundary(array)
    array[...] = 1  # every byte is the array's own to write
    assert int(array.reshape(-1)[-1]) == 1


def test_zeros_are_zero_and_writes_stay_in_the_array():
    array = allocation.zeros((HUGE_FROM // 8 + 5,), np.int64)
    assert not array.any()
    array[-1] = 7
    array[0] = 3
    assert int(array.sum()) == 10


def test_small_arrays_are_plain_unless_an_alignment_is_asked():
    assert allocation.empty(10, np.int32).base is None
    assert not allocation.zeros((4, 2), np.float64).any()
    for n in (1, 3, 100, 1000):
        aligned = allocation.zeros((n, 2), np.int64, 64)
        assert aligned.shape == (n, 2)
        assert aligned.ctypes.data % 64 == 0
        assert not aligned.any()


def test_an_object_column_gets_numpy_s_own_array():
    array = allocation.zeros(HUGE_FROM, object)
    assert array.dtype == object and array.base is None
    assert array[0] == 0


def test_compiled_code_gets_numba_s_arrays():
    @njit
    def both(n):
        a = allocation.empty(n, np.uint32)
        a[:] = 5
        b = allocation.zeros(n, np.int64)
        return a.sum() + b.sum()

    assert both(10) == 50


def test_containers_lay_out_their_large_arrays():
    s = SparseSet(capacity=HUGE_FROM)
    state = s._engine.state
    assert state.sparse.ctypes.data % HUGE_PAGE == 0
    assert state.dense.ctypes.data % HUGE_PAGE == 0
    s.add(np.arange(0, HUGE_FROM, 3))
    assert len(s) == len(range(0, HUGE_FROM, 3))

    store = ComponentStore({"pos": ("f8", (3,))}, capacity=HUGE_FROM // 8)
    store.add(np.arange(HUGE_FROM // 8), pos=1.0)
    assert store["pos"].ctypes.data % HUGE_PAGE == 0
    assert float(store["pos"].sum()) == 3.0 * (HUGE_FROM // 8)

    w = World(capacity=HUGE_FROM)
    assert w._entities.generations.ctypes.data % HUGE_PAGE == 0

"""``np.array([])`` (numpy makes it float64) is an empty batch, as ``[]``
is, for every container: they share :func:`sparseset.sets.ids.as_ids`."""

import numpy as np
import pytest

from sparseset import ComponentStore, SetArray, SparseMap, SparseSet, World
from sparseset.sets.ids import as_ids

EMPTY = (np.array([]), np.empty(0, np.float32), [])


@pytest.mark.parametrize("empty", EMPTY, ids=["float64", "float32", "list"])
def test_every_containers_batch_methods_take_an_empty_float_array(empty):
    s = SparseSet()
    s.add([3, 5])
    assert s.add(empty) == 0 and s.discard(empty) == 0 and s.remove(empty) == 0
    assert s.contains(empty).shape == (0,) and sorted(s) == [3, 5]
    store = ComponentStore({"x": "f4"})
    store.add([1], x=2.0)
    assert store.add(empty, x=np.array([])) == 0 and store.discard(empty) == 0
    assert store.get(empty)["x"].shape == (0,) and len(store) == 1
    m = SparseMap("i8")
    assert m.add_at(empty, np.array([], np.int64)) == 0 and len(m) == 0
    w = World()
    w.register("x", "f4")
    e = w.create(2)
    assert w.add("x", empty) == 0 and w.destroy(empty) == 0
    assert w.alive(empty).shape == (0,) and len(w) == 2 and e.shape == (2,)
    arrays = SetArray(2, 4)
    arrays.fill()
    assert arrays.remove(empty, empty) == 0
    assert arrays.contains(empty, empty).shape == (0,)
    assert arrays.sizes.tolist() == [4, 4]


def test_a_non_empty_float_array_and_a_2d_empty_array_still_raise():
    with pytest.raises(TypeError, match="float64"):
        as_ids(np.array([1.0]))
    with pytest.raises(ValueError, match="2-D"):
        as_ids(np.empty((0, 2)))
    assert as_ids(np.array([]))[0].dtype == np.int64

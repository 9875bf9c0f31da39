"""A misspelt column in compiled code (``twin["lfe"]``) names the column
and the columns the twin has."""

import pytest
from numba import njit
from numba.core.errors import TypingError

from sparseset import ComponentStore, SparseSet, World


@njit
def misspelt(twin):
    return twin["lfe"].sum()


@njit
def spelt(twin):
    return twin["life"].sum()


def test_a_misspelt_column_names_it_and_the_columns():
    w = World()
    w.register("life", {"life": "f4", "age": "i4"})
    w.add("life", w.create(2), life=1.5)
    columns = r"no column 'lfe'; the columns are \['life', 'age'\]"
    with pytest.raises(TypingError, match=columns):
        misspelt(w["life"].jit)
    assert spelt(w["life"].jit) == 3.0
    store = ComponentStore({"x": "f8"})
    with pytest.raises(TypingError, match=r"no column 'lfe'; the columns are \['x'\]"):
        misspelt(store.jit)


def test_a_sets_twin_has_no_columns():
    with pytest.raises(TypingError, match="no column 'lfe'; it has no columns"):
        misspelt(SparseSet().jit)

"""jit twins: jitclass objects that share a container's arrays inside @njit code.

``s.jit`` (and ``store.jit``) hands out an instance of a jitclass holding the
very arrays the container owns, so a user's ``@njit`` system can look ids up,
add and remove them one by one, and walk a store's rows in place. From then
on the container keeps its state *in* the twin: whatever either side does,
including growth that reallocates the arrays, the other sees.

numba cannot cache jitclasses (their type enters the cache key; numba issues
#6522 and #9659), so a twin class is compiled in each process the first
time ``.jit`` is used on a container of its shape, which takes about a
second per distinct schema; the batch methods never need it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .kernels import find, grown_length, push, swap_remove
from .kernels.kinds import accepts, grow, in_range, row_limit

#: One compiled class per column layout, built on first use.
_CLASSES: dict[tuple[Any, ...], Any] = {}

_TEMPLATE = '''
class Twin:
    """Per-element access to a sparse set (and its columns) from @njit code."""

    def __init__(self, sparse, dense, n, epoch{column_args}):
        self.sparse = sparse
        self.dense = dense
        self.n = n
        self.epoch = epoch
{column_init}

    @property
    def size(self):
        """Number of members."""
        return self.n

    @property
    def ids(self):
        """The members in dense order (a view)."""
        return self.dense[: self.n]
{column_properties}

    def contains(self, i):
        """Whether id ``i`` is a member."""
        return find(self.sparse, self.dense, self.n, i) >= 0

    def index(self, i):
        """Position of id ``i`` in dense order (its row), -1 if absent."""
        return find(self.sparse, self.dense, self.n, i)

    def add(self, i):
        """Add id ``i`` with zeroed rows; True if it was new. Grows as needed."""
        if not in_range(self.sparse, i):
            raise ValueError("id is negative or outside the index's range")
        self.epoch += 1
        if find(self.sparse, self.dense, self.n, i) >= 0:
            return False
        while not accepts(self.sparse, i):
            self.sparse = grow(self.sparse, self.dense, self.n, self.n + 1, i)
        if self.n == self.dense.shape[0]:
            self._grow_rows()
        n = self.n
        self.n = push(self.sparse, self.dense, n, i)
        while self.n == n:
            self.sparse = grow(self.sparse, self.dense, n, n + 1, i)
            self.n = push(self.sparse, self.dense, n, i)
{column_zero}
        return True

    def remove(self, i):
        """Remove id ``i`` by swap-and-pop, moving its rows; False if absent."""
        p = find(self.sparse, self.dense, self.n, i)
        if p < 0:
            return False
        self.n = swap_remove(self.sparse, self.dense, self.n, p)
{column_move}
        return True

    def _grow_rows(self):
        rows = grown_length(self.dense.shape[0], self.n + 1, row_limit(self.sparse))
        old = self.dense
        self.dense = np.empty(rows, old.dtype)
        self.dense[: old.shape[0]] = old
{column_grow}
'''


def _source(columns: list[tuple[str, np.dtype, tuple[int, ...]]]) -> str:
    def lines(template: str) -> str:
        return "\n".join(
            template.format(name=name, shape=", ".join(map(str, shape)))
            for name, _, shape in columns
        )

    return _TEMPLATE.format(
        column_args="".join(f", _col_{name}" for name, _, _ in columns),
        column_init=lines("        self._col_{name} = _col_{name}"),
        column_properties=lines(
            "\n    @property\n    def {name}(self):\n"
            "        return self._col_{name}[: self.n]"
        ),
        column_zero=lines("        self._col_{name}[self.n - 1] = 0"),
        column_move=lines("        self._col_{name}[p] = self._col_{name}[self.n]"),
        column_grow=lines(
            "        old = self._col_{name}\n"
            "        self._col_{name} = np.zeros((rows, {shape}), old.dtype)\n"
            "        self._col_{name}[: old.shape[0]] = old"
        ).replace(", )", ")"),
    )


def twin_class(state: Any, columns: dict[str, Any]) -> Any:
    """The jitclass for a state of this layout, compiled the first time.

    ``columns`` maps column name to ``(dtype, row_shape)``; the state holds
    each column's full array as ``_col_<name>``.
    """
    import numba
    from numba.experimental import jitclass

    layout = [
        (name, np.dtype(dtype), tuple(shape))
        for name, (dtype, shape) in columns.items()
    ]
    key = (
        numba.typeof(state.sparse),
        numba.typeof(state.dense),
        tuple((name, dtype.str, shape) for name, dtype, shape in layout),
    )
    cls = _CLASSES.get(key)
    if cls is None:
        spec = [
            ("sparse", key[0]),
            ("dense", key[1]),
            ("n", numba.int64),
            ("epoch", numba.int64),
        ]
        spec += [
            (f"_col_{name}", numba.typeof(getattr(state, f"_col_{name}")))
            for name, _, _ in layout
        ]
        namespace = {
            "np": np,
            "accepts": accepts,
            "find": find,
            "grow": grow,
            "grown_length": grown_length,
            "in_range": in_range,
            "row_limit": row_limit,
            "push": push,
            "swap_remove": swap_remove,
        }
        exec(compile(_source(layout), "<sparseset.jit twin>", "exec"), namespace)
        cls = _CLASSES[key] = jitclass(spec)(namespace["Twin"])
    return cls


def make_twin(state: Any, columns: dict[str, Any]) -> Any:
    """A twin sharing ``state``'s arrays (no copy) and its ``n`` and ``epoch``."""
    cls = twin_class(state, columns)
    arrays = [getattr(state, f"_col_{name}") for name in columns]
    return cls(state.sparse, state.dense, state.n, state.epoch, *arrays)

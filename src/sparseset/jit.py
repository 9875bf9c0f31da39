"""jit twins: jitclass objects that share a container's arrays inside @njit code.

``s.jit`` (and ``store.jit``) hands out an instance of a jitclass holding the
very arrays the container owns, so a user's ``@njit`` system can look ids up,
add and remove them one by one, and walk a store's rows in place. From then
on the container keeps its state *in* the twin: whatever either side does,
including growth that reallocates the arrays, the other sees.

A World store's twin takes entity handles instead of ids: it holds the
world's generation and liveness arrays too, resolves each handle to its
entity index, and refuses dead handles before touching any row (``add``
raises ``ValueError``; ``contains`` is False, ``index`` -1, ``remove``
False). Its ``ids`` are handles, computed into a new array on each access.

numba cannot cache jitclasses (their type enters the cache key; numba issues
#6522 and #9659), so a twin class is compiled in each process the first
time ``.jit`` is used on a container of its shape, which takes about a
second per distinct schema; the batch methods never need it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .kernels import claim, find, grown_length, handles_of, live_index, swap_remove
from .kernels.kinds import accepts, grow, in_range, row_limit

#: One compiled class per column layout, built on first use.
_CLASSES: dict[tuple[Any, ...], Any] = {}

_TEMPLATE = '''
class Twin:
    """Per-element access to a sparse set (and its columns) from @njit code."""

    def __init__(self, sparse, dense, n, epoch{entity_args}{column_args}):
        self.sparse = sparse
        self.dense = dense
        self.n = n
        self.epoch = epoch
{entity_init}
{column_init}

    @property
    def size(self):
        """Number of members."""
        return self.n
{ids}
{column_properties}

    def _key(self, i):
        """The key of ``i`` in the index, -1 if it can have none."""
        return {key}

    def contains(self, i):
        """Whether ``i`` is a member."""
        k = self._key(i)
        return k >= 0 and find(self.sparse, self.dense, self.n, k) >= 0

    def index(self, i):
        """Position of ``i`` in dense order (its row), -1 if absent."""
        k = self._key(i)
        if k < 0:
            return -1
        return find(self.sparse, self.dense, self.n, k)

    def add(self, i):
        """Add ``i`` with zeroed rows; True if it was new. Grows as needed."""
        k = self._key(i)
        if k < 0 or not in_range(self.sparse, k):
            raise ValueError("{add_error}")
        if find(self.sparse, self.dense, self.n, k) >= 0:
            return False
        # The index first: a flat index's size caps the rows dense may have.
        while not accepts(self.sparse, k):
            self.sparse = grow(self.sparse, self.dense, self.n, self.n + 1, k)
        if self.n == self.dense.shape[0]:
            self._grow_rows()
        while claim(self.sparse, self.dense, self.n, k) < 0:
            self.sparse = grow(self.sparse, self.dense, self.n, self.n + 1, k)
        self.n += 1
        self.epoch += 1
{column_zero}
        return True

    def remove(self, i):
        """Remove ``i`` by swap-and-pop, moving its rows; False if absent."""
        k = self._key(i)
        if k < 0:
            return False
        p = find(self.sparse, self.dense, self.n, k)
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

_IDS = '''
    @property
    def ids(self):
        """The members in dense order (a view)."""
        return self.dense[: self.n]
'''

_HANDLE_IDS = '''
    @property
    def ids(self):
        """The members' handles in dense order (a new array each time)."""
        out = np.empty(self.n, np.int64)
        handles_of(self.generations, self.dense[: self.n], out)
        return out

    def handle(self, k):
        """The handle of the entity in row ``k``."""
        i = self.dense[k]
        return (np.int64(self.generations[i]) << 32) | np.int64(i)
'''


def _source(columns: list[tuple[str, np.dtype, tuple[int, ...]]], handles: bool) -> str:
    def lines(template: str) -> str:
        return "\n".join(
            template.format(name=name, shape=", ".join(map(str, shape)))
            for name, _, shape in columns
        )

    return _TEMPLATE.format(
        entity_args=", generations, alive" if handles else "",
        entity_init=(
            "        self.generations = generations\n        self.alive = alive"
            if handles
            else ""
        ),
        ids=_HANDLE_IDS if handles else _IDS,
        key=(
            "live_index(self.generations, self.alive, self.alive.shape[0], i)"
            if handles
            else "i"
        ),
        add_error=(
            "add takes live handles: this one is dead or was never created"
            if handles
            else "id is negative or outside the index's range"
        ),
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


def twin_class(
    state: Any, columns: dict[str, Any], entities: tuple[Any, Any] | None = None
) -> Any:
    """The jitclass for a state of this layout, compiled the first time.

    ``columns`` maps column name to ``(dtype, row_shape)``; the state holds
    each column's full array as ``_col_<name>``. ``entities`` is a world's
    ``(generations, alive)`` for a twin that takes handles.
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
        entities is not None,
    )
    cls = _CLASSES.get(key)
    if cls is None:
        spec = [
            ("sparse", key[0]),
            ("dense", key[1]),
            ("n", numba.int64),
            ("epoch", numba.int64),
        ]
        if entities is not None:
            spec += [
                ("generations", numba.typeof(entities[0])),
                ("alive", numba.typeof(entities[1])),
            ]
        spec += [
            (f"_col_{name}", numba.typeof(getattr(state, f"_col_{name}")))
            for name, _, _ in layout
        ]
        namespace = {
            "np": np,
            "accepts": accepts,
            "claim": claim,
            "find": find,
            "grow": grow,
            "grown_length": grown_length,
            "handles_of": handles_of,
            "in_range": in_range,
            "live_index": live_index,
            "row_limit": row_limit,
            "swap_remove": swap_remove,
        }
        source = _source(layout, entities is not None)
        exec(compile(source, "<sparseset.jit twin>", "exec"), namespace)
        cls = _CLASSES[key] = jitclass(spec)(namespace["Twin"])
    return cls


def make_twin(
    state: Any, columns: dict[str, Any], entities: tuple[Any, Any] | None = None
) -> Any:
    """A twin sharing ``state``'s arrays (no copy) and its ``n`` and ``epoch``;
    with ``entities`` (a world's generations and liveness), one that takes
    handles."""
    cls = twin_class(state, columns, entities)
    arrays = [getattr(state, f"_col_{name}") for name in columns]
    return cls(
        state.sparse, state.dense, state.n, state.epoch, *(entities or ()), *arrays
    )

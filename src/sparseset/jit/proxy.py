"""The shared states as Python sees them: proxies over one structref type.

Boxing a :class:`~.types.TwinType` value gives the proxy of its kind: a
:class:`Twin` for a set's, a store's or a World store's state, a
:class:`SetArrayState` for a SetArray's. A proxy holds a reference to the
struct, so the container and compiled code share it; its attributes read
and write the fields (each a cached ``@njit`` call), and its methods run
the compiled ones of :mod:`.methods`, so Python can call them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit
from numba.experimental import structref

from ..kernels import find
from ..kernels.array_types import Int
from ..kernels.index.kinds import Index
from . import methods  # noqa: F401  (registers what the calls below compile)
from .types import (
    BITS_FIELDS,
    COLUMN_PREFIX,
    Kind,
    TwinType,
    all_fields,
    kind_of,
    set_all_fields,
)


class StateProxy(structref.StructRefProxy):
    """A shared state as Python sees it; pass it to ``@njit`` functions.

    Its attributes are the struct's fields (``n``, ``dense``, ...): reading
    one reads the struct, writing one writes it, so a container that keeps
    its state here shares it with compiled code.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> twin = SparseSet.from_ids([3]).jit
    >>> isinstance(twin, StateProxy), twin.dense[: twin.n].tolist()
    (True, [3])
    """

    @classmethod
    def _numba_box_(cls, ty: TwinType, mi: Any) -> StateProxy:
        # numba boxes every TwinType value through here (see define_boxing
        # below): the fields tell which proxy a state gets.
        proxy = SetArrayState if kind_of(ty) is Kind.SET_ARRAY else Twin
        box = structref.StructRefProxy._numba_box_.__func__  # type: ignore[attr-defined]
        state: StateProxy = box(proxy, ty, mi)
        return state

    def _field_names(self) -> list[str]:
        return [field for field, _ in self._type._fields]

    def __getattr__(self, name: str) -> Any:
        fields = self._field_names()
        if name in fields:
            return all_fields(self)[fields.index(name)]
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("_type", "_meminfo"):
            super().__setattr__(name, value)
            return
        fields = self._field_names()
        if name not in fields:
            raise AttributeError(f"a {type(self).__name__} has no field {name!r}")
        values = list(all_fields(self))
        values[fields.index(name)] = value
        set_all_fields(self, tuple(values))


structref.define_boxing(TwinType, StateProxy)


class Twin(StateProxy):
    """A jit twin as Python sees it; pass it to ``@njit`` functions.

    Its attributes are the container's state (``n``, ``dense``, ...): the
    container reads and writes them through here once the twin exists.
    A column reads as the members' rows (``twin["pos"]``, or ``twin.pos``
    where no member of the twin is called ``pos``), its field as the whole
    array (``twin._col_pos``).

    Examples
    --------
    >>> from sparseset import ComponentStore
    >>> store = ComponentStore({"hp": "i4"}); store.add([4, 6], hp=[1, 2])
    2
    >>> twin = store.jit
    >>> twin.size, twin.hp.tolist(), bool(twin.contains(6)), twin.index(9)
    (2, [1, 2], True, -1)
    >>> twin["hp"].tolist()
    [1, 2]
    """

    #: A SetState's memoryview of a flat index, which the containers' one-id
    #: paths read in Python; a twin has none (they call its methods).
    flat_sparse = None

    def __getattr__(self, name: str) -> Any:
        fields = self._field_names()
        if COLUMN_PREFIX + name in fields:
            return self[name]
        return super().__getattr__(name)

    def __getitem__(self, name: str) -> np.ndarray:
        """The members' rows of column ``name``, whatever its name: a column
        called ``size`` or ``index`` is ``twin["size"]``, beside the twin's
        own ``size`` and ``index``."""
        fields = self._field_names()
        field = COLUMN_PREFIX + name if isinstance(name, str) else None
        if field not in fields:
            columns = [
                f[len(COLUMN_PREFIX) :] for f in fields if f.startswith(COLUMN_PREFIX)
            ]
            raise KeyError(f"{name!r} is not a column; columns: {columns}")
        values = all_fields(self)
        rows: np.ndarray = values[fields.index(field)][: values[2]]
        return rows

    def __setattr__(self, name: str, value: Any) -> None:
        # The counters are written on every batch: one compiled call each.
        if name == "n":
            _set_n(self, value)
        elif name == "epoch":
            _set_epoch(self, value)
        else:
            super().__setattr__(name, value)

    @property
    def size(self) -> int:
        """Number of members.

        O(1).
        """
        return _get_n(self)

    @property
    def n(self) -> int:
        """Number of members, the state's counter (as :attr:`size`); O(1)."""
        return _get_n(self)

    @property
    def epoch(self) -> int:
        """The state's epoch, bumped when its index is rebuilt; O(1)."""
        return _get_epoch(self)

    @property
    def sparse(self) -> Index:
        """The index (``id -> position``, of the index kind), shared, no copy;
        O(1).
        """
        return _get_sparse(self)

    @property
    def dense(self) -> np.ndarray:
        """The whole ``dense`` array, shared, no copy (members are its first
        :attr:`n`); O(1).
        """
        return _get_dense(self)

    @property
    def ids(self) -> np.ndarray:
        """The members in dense order (handles, for a World store's twin).

        O(n) for n members: from Python, a copy.
        """
        return _ids(self)

    # A flat set's twin's member bitmap (see .types.BITS_FIELDS), for the
    # set's batches that keep it in step.

    def current_bits(self) -> np.ndarray | None:
        """The member bitmap if this twin keeps one and it is current; O(1).

        Examples
        --------
        >>> from sparseset import SparseSet
        >>> SparseSet.from_ids([1, 3]).jit.current_bits().tolist()
        [10]
        """
        if BITS_FIELDS[0] not in self._field_names():
            return None
        current, bits = _current_bits(self)
        return bits if current else None

    def tag_bits(self, current: bool = True) -> None:
        """Tag the member bitmap current at the present ``n`` and ``epoch``
        (its caller has made it so), or stale for good (``current``
        False: until a clear); O(1)."""
        if BITS_FIELDS[0] in self._field_names():
            _tag_bits(self, current)

    def clear_bits(self) -> None:
        """Zero the member bitmap, if this twin keeps one, and tag it
        current (for a set just cleared); O(capacity / 64)."""
        if BITS_FIELDS[0] in self._field_names():
            _clear_bits(self)

    # The methods, callable from Python too (each a cached @njit call).

    def contains(self, i: int) -> bool:
        """Whether ``i`` is a member (for a World store's twin, a live handle
        with the component), O(1).
        """
        return _contains_call(self, i)

    def index(self, i: int) -> int:
        """The position of ``i`` in :attr:`ids`, -1 if absent, O(1)."""
        return _index_call(self, i)

    def add(self, i: int) -> bool:
        """Add ``i``: True if it was new (a store's row zeroed), O(1) amortised;
        it grows the arrays when needed.

        Raises
        ------
        ValueError
            If ``i`` is out of the index kind's range, or, for a World store's
            twin, a dead handle.
        """
        return _add_call(self, i)

    # Keys, whatever the twin takes: a World store's twin takes handles in
    # its own methods, while its container looks entity indexes up.

    def contains_key(self, key: int) -> bool:
        """Whether the container key ``key`` (an entity index for a World
        store's twin, else an id) is a member, O(1).
        """
        return bool(_index_key_call(self, key) >= 0)

    def index_key(self, key: int) -> int:
        """The position of the container key ``key`` in :attr:`ids`, -1 if
        absent, O(1).
        """
        return int(_index_key_call(self, key))

    def remove(self, i: int) -> bool:
        """Remove ``i``: False if it was absent, O(1) (swap-and-pop)."""
        return _remove_call(self, i)

    def touch(self, i: int) -> bool:
        """Declare the row of ``i`` written, for a tracked component's readers;
        whether ``i`` is a member. O(1).
        """
        return _touch_call(self, i)

    def checkpoint(self) -> tuple[int, int, int]:
        """A set twin's checkpoint token, as :meth:`SparseSet.checkpoint
        <sparseset.SparseSet.checkpoint>`, O(1).
        """
        return _checkpoint_call(self)

    def rollback(self, token: Sequence[int]) -> None:
        """Restore a set twin to checkpoint ``token``, as
        :meth:`SparseSet.rollback <sparseset.SparseSet.rollback>`: O(r) for the r
        members it restores.

        Raises
        ------
        ValueError
            If ``token`` is not a live checkpoint of this set.
        """
        _rollback_call(self, tuple(token))

    def keep_only(self, ids: np.ndarray) -> int:
        """Keep only the members among ``ids`` (a set twin); how many were
        removed. O(k + n) for k ids and n members.

        Raises
        ------
        ValueError
            If an id is negative.
        """
        return _keep_only_call(self, ids)

    def discard(self, ids: np.ndarray) -> int:
        """Remove the members among ``ids`` (a set twin); how many were removed.
        O(k) for k ids.

        Raises
        ------
        ValueError
            If an id is negative.
        """
        return _discard_call(self, ids)

    def pop(self) -> int:
        """Remove and return the last member of :attr:`ids` (a set twin), O(1).

        Raises
        ------
        KeyError
            If the set is empty.
        """
        return _pop_call(self)

    def handle(self, k: int) -> int:
        """The handle of the member at position ``k`` (a World store's twin),
        O(1).
        """
        return _handle_call(self, k)

    def __repr__(self) -> str:
        return f"<sparseset twin: {_get_n(self)} members>"


class SetArrayState(StateProxy):
    """A :class:`~sparseset.SetArray`'s state; ``sa.jit`` hands it to
    ``@njit`` code.

    Its methods are the compiled ones (``contains(k, v)``, ``remove(k, v)``,
    ``assign(k, v)``, ``size(k)``, ``values(k)``, ``checkpoint()``,
    ``rollback(token)``), callable from Python too; they never raise (a
    set number outside the array reads as an empty set, and ``rollback``
    returns whether the token was live). Its fields are ``dense``,
    ``sparse``, ``sizes``, ``trail``, ``trail_len``, ``marks``, ``depth``,
    ``stamp``, ``epoch`` and ``owner``.

    Examples
    --------
    >>> from sparseset import SetArray
    >>> state = SetArray(2, 3).jit
    >>> bool(state.remove(0, 1)), state.size(0), state.values(0).tolist()
    (True, 2, [0, 2])
    """

    dense: np.ndarray
    sparse: np.ndarray
    sizes: np.ndarray
    trail: np.ndarray
    trail_len: Int
    marks: np.ndarray
    depth: Int
    stamp: Int
    epoch: Int
    owner: Int

    def contains(self, k: int, v: int) -> bool:
        """Whether set ``k`` holds ``v``, O(1) (False for a set number outside
        the array).
        """
        return _set_array_contains(self, k, v)

    def remove(self, k: int, v: int) -> bool:
        """Remove ``v`` from set ``k``, trailed for a rollback: False if absent.
        O(1).
        """
        return _set_array_remove(self, k, v)

    def assign(self, k: int, v: int) -> int:
        """Keep only ``v`` in set ``k``; how many values were removed, each
        trailed. O(s) for the s values of set ``k``.
        """
        return _assign_call(self, k, v)

    def size(self, k: int) -> int:
        """How many values set ``k`` holds, O(1)."""
        return _size_call(self, k)

    def values(self, k: int) -> np.ndarray:
        """The values of set ``k``, a view of its row (no copy), O(1)."""
        return _values_call(self, k)

    def checkpoint(self) -> tuple[int, int, int]:
        """A checkpoint token, as :meth:`SetArray.checkpoint
        <sparseset.SetArray.checkpoint>`, O(1).
        """
        return _checkpoint_call(self)

    def rollback(self, token: Sequence[int]) -> bool:
        """Undo every removal since checkpoint ``token``: O(r) for the r values
        restored. False (nothing undone) if it is not a live checkpoint; it
        never raises.
        """
        return _set_array_rollback(self, tuple(token))

    def __repr__(self) -> str:
        return "<sparseset SetArray state>"


# The compiled calls behind the proxies. Cached: each compiles once per
# state type and machine, not per process. Compiled, the setters write the
# struct's field; in Python, a Twin's n and epoch are read-only properties
# (its writes go through __setattr__).


@njit(cache=True)
def _get_n(twin: Twin) -> int:
    return twin.n


@njit(cache=True)
def _set_n(twin: Twin, n: int) -> None:
    twin.n = n  # type: ignore[misc]


@njit(cache=True)
def _current_bits(twin: Twin) -> tuple[bool, np.ndarray]:
    current = twin.bits_n == twin.n and twin.bits_epoch == twin.epoch
    return current, twin.member_bits


@njit(cache=True)
def _tag_bits(twin: Twin, current: bool) -> None:
    twin.bits_n = twin.n if current else -1
    twin.bits_epoch = twin.epoch


@njit(cache=True)
def _clear_bits(twin: Twin) -> None:
    twin.member_bits[:] = 0
    _tag_bits(twin, True)


@njit(cache=True)
def _get_epoch(twin: Twin) -> int:
    return twin.epoch


@njit(cache=True)
def _set_epoch(twin: Twin, epoch: int) -> None:
    twin.epoch = epoch  # type: ignore[misc]


@njit(cache=True)
def _get_sparse(twin: Twin) -> Index:
    return twin.sparse


@njit(cache=True)
def _get_dense(twin: Twin) -> np.ndarray:
    return twin.dense


@njit(cache=True)
def _ids(twin: Twin) -> np.ndarray:
    return twin.ids.copy()


@njit(cache=True)
def _contains_call(twin: Twin, i: int) -> bool:
    return twin.contains(i)


@njit(cache=True)
def _index_call(twin: Twin, i: int) -> int:
    return twin.index(i)


@njit(cache=True)
def _index_key_call(twin: Twin, key: int) -> int:
    return find(twin.sparse, twin.dense, twin.n, key)


@njit(cache=True)
def _add_call(twin: Twin, i: int) -> bool:
    return twin.add(i)


@njit(cache=True)
def _remove_call(twin: Twin, i: int) -> bool:
    return twin.remove(i)


@njit(cache=True)
def _touch_call(twin: Twin, i: int) -> bool:
    return twin.touch(i)


@njit(cache=True)
def _checkpoint_call(state: Twin | SetArrayState) -> tuple[int, int, int]:
    return state.checkpoint()


@njit(cache=True)
def _rollback_call(twin: Twin, token: tuple[int, ...]) -> None:
    twin.rollback(token)


@njit(cache=True)
def _keep_only_call(twin: Twin, ids: np.ndarray) -> int:
    return twin.keep_only(ids)


@njit(cache=True)
def _discard_call(twin: Twin, ids: np.ndarray) -> int:
    return twin.discard(ids)


@njit(cache=True)
def _pop_call(twin: Twin) -> int:
    return twin.pop()


@njit(cache=True)
def _handle_call(twin: Twin, k: int) -> int:
    return twin.handle(k)


@njit(cache=True)
def _set_array_contains(state: SetArrayState, k: int, v: int) -> bool:
    return state.contains(k, v)


@njit(cache=True)
def _set_array_remove(state: SetArrayState, k: int, v: int) -> bool:
    return state.remove(k, v)


@njit(cache=True)
def _assign_call(state: SetArrayState, k: int, v: int) -> int:
    return state.assign(k, v)


@njit(cache=True)
def _size_call(state: SetArrayState, k: int) -> int:
    return state.size(k)


@njit(cache=True)
def _values_call(state: SetArrayState, k: int) -> np.ndarray:
    return state.values(k)


@njit(cache=True)
def _set_array_rollback(state: SetArrayState, token: tuple[int, ...]) -> bool:
    return state.rollback(token)


__all__ = ["SetArrayState", "StateProxy", "Twin"]

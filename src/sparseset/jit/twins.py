"""jit twins: structref objects that share a container's state inside @njit code.

``s.jit`` (and ``store.jit``, ``world[name].jit``) hands out a :class:`Twin`
holding the very arrays the container owns, so a user's ``@njit`` system can
look ids up, add and remove them one by one, walk a store's rows in place
and, on a set, checkpoint and roll back. From then on the container keeps
its state *in* the twin: whatever either side does, including growth that
reallocates the arrays, the other sees.

A twin is a numba ``structref`` whose type (:class:`TwinType`) is declared
here, at module level, and parametrised only by its fields' types. numba
can therefore pickle it into a cache index: a user's ``@njit(cache=True)``
function that takes a twin compiles once per machine, as one on plain
arrays does. (jitclass types carry a per-process id and cannot be cached:
numba issues #6522 and #9659; structref types made per call cannot either:
#9030, #10021.)

Fields mirror the containers' state (``sparse``, ``dense``, ``n``,
``epoch``, the checkpoint stack ``marks``/``depth``/``stamp``/``owner``,
each column as ``_col_<name>``, and a World store's ``generations`` and
``alive``). In ``@njit`` code a twin offers:

- ``size`` (the member count), ``ids`` (the members in dense order; for a
  World store, their handles in a new array), one attribute per column
  (``js.pos``: the members' rows);
- ``contains(i)``, ``index(i)``, ``add(i)`` (True if new; zeroed rows;
  grows), ``remove(i)`` (False if absent);
- on a set: ``checkpoint()``, ``rollback(token)``, ``keep_only(ids)``,
  ``discard(ids)`` and ``pop()``, with the Python methods' semantics;
- on a World store: handles instead of ids, checked against the world's
  generations (``contains`` False, ``index`` -1, ``remove`` False for a dead
  handle, ``add`` raises ``ValueError``), and ``handle(k)`` for row ``k``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.core import imputils
from numba.core.base import BaseContext
from numba.core.datamodel import models
from numba.core.datamodel.registry import default_manager
from numba.core.typing.templates import AttributeTemplate, Signature
from numba.experimental import structref
from numba.extending import (
    infer_getattr,
    lower_getattr_generic,
    lower_setattr_generic,
    overload_method,
    register_jitable,
)

from ..kernels import (
    claim,
    find,
    grown_length,
    handles_of,
    keep_only,
    live_index,
    reindex,
    swap_remove,
    unindex,
)
from ..kernels.array_types import IntArray
from ..kernels.index.kinds import Index, accepts, grow, in_range, row_limit
from ..kernels.marks import marked_count, push_mark
from .structs import all_fields, build, read_field, set_all_fields, write_field

#: Fields every twin has, in this order; columns and entities follow.
BASE_FIELDS = ("sparse", "dense", "n", "epoch", "marks", "depth", "stamp", "owner")
#: A World store's twin also holds the world's entity arrays.
ENTITY_FIELDS = ("generations", "alive")
COLUMN_PREFIX = "_col_"


class TwinType(types.StructRef):
    """The numba type of a twin: a struct of the container's state."""

    def preprocess_fields(self, fields: Any) -> tuple[tuple[str, Any], ...]:
        return tuple((name, types.unliteral(t)) for name, t in fields)


default_manager.register(TwinType, models.StructRefModel)


def _columns(twin: TwinType) -> list[str]:
    """The column names of a twin type, in schema order."""
    return [
        name[len(COLUMN_PREFIX) :]
        for name, _ in twin._fields
        if name.startswith(COLUMN_PREFIX)
    ]


def _zero_row(twin: TwinType, column: str) -> str:
    """The statement that zero-fills row ``k`` of ``column``.

    numba assigns ``0`` only to numeric rows; a text, datetime or record
    row is zeroed through its bytes, as the store zero-fills it.
    """
    field = f"self.{COLUMN_PREFIX}{column}"
    if isinstance(
        twin.field_dict[COLUMN_PREFIX + column].dtype, types.Number | types.Boolean
    ):
        return f"{field}[k] = 0"
    return f"{field}[k : k + 1].view(np.uint8)[...] = 0"


def _takes_handles(twin: TwinType) -> bool:
    return "generations" in twin.field_dict


def _view_type(context: Any, array: types.Array) -> Any:
    """The type of ``array[:n]``."""
    signature = context.resolve_function_type(
        operator.getitem, (array, types.slice2_type), {}
    )
    return signature.return_type


# -- attributes: fields, and size / ids / columns as views of the members --


@infer_getattr
class _TwinAttributes(AttributeTemplate):
    key = TwinType

    # numba's stubs declare this hook as a NotImplemented placeholder.
    def generic_resolve(self, twin: TwinType, attr: str) -> Any:  # type: ignore[override]
        fields = twin.field_dict
        if attr in fields:
            return fields[attr]
        if attr == "size":
            return types.int64
        if attr == "ids":
            if _takes_handles(twin):
                return types.Array(types.int64, 1, "C")
            return _view_type(self.context, fields["dense"])
        column = COLUMN_PREFIX + attr
        if column in fields:
            return _view_type(self.context, fields[column])
        return None


def _members_view(array: Any, n: Any) -> Any:
    return array[:n]


def _handles(generations: Any, dense: Any, n: Any) -> Any:
    out = np.empty(n, np.int64)
    handles_of(generations, dense[:n], out)
    return out


# The lowering decorators are unannotated in numba; what they register
# works on llvmlite values, untyped too.
@lower_getattr_generic(TwinType)  # type: ignore[untyped-decorator]
def _twin_getattr(
    context: BaseContext, builder: Any, twin: TwinType, value: Any, attr: str
) -> Any:
    data = structref._Utils(context, builder, twin).get_data_struct(value)
    fields = twin.field_dict
    if attr in fields:
        return imputils.impl_ret_borrowed(
            context, builder, fields[attr], read_field(data, attr)
        )
    n = read_field(data, "n")
    if attr == "size":
        return n
    if attr == "ids" and _takes_handles(twin):
        signature = types.Array(types.int64, 1, "C")(
            fields["generations"], fields["dense"], types.int64
        )
        args = (read_field(data, "generations"), read_field(data, "dense"), n)
        out = context.compile_internal(builder, _handles, signature, args)
        return imputils.impl_ret_new_ref(context, builder, signature.return_type, out)
    name = "dense" if attr == "ids" else COLUMN_PREFIX + attr
    array_type = fields[name]
    view_type = _view_type(context.typing_context, array_type)
    signature = view_type(array_type, types.int64)
    out = context.compile_internal(
        builder, _members_view, signature, (read_field(data, name), n)
    )
    return imputils.impl_ret_borrowed(context, builder, view_type, out)


@lower_setattr_generic(TwinType)  # type: ignore[untyped-decorator]
def _twin_setattr(
    context: BaseContext,
    builder: Any,
    signature: Signature,
    args: Sequence[Any],
    attr: str,
) -> None:
    twin, value_type = signature.args
    instance, value = args
    data = structref._Utils(context, builder, twin).get_data_struct(instance)
    field_type = twin.field_dict[attr]
    cast = context.cast(builder, value, value_type, field_type)
    old = read_field(data, attr)
    context.nrt.incref(builder, field_type, cast)
    context.nrt.decref(builder, field_type, old)
    write_field(data, attr, cast)


# -- the Python side: a proxy whose attributes read and write the fields --


class Twin(structref.StructRefProxy):
    """A jit twin as Python sees it; pass it to ``@njit`` functions.

    Its attributes are the container's state (``n``, ``dense``, ...): the
    container reads and writes them through here once the twin exists.
    """

    def __getattr__(self, name: str) -> Any:
        fields = [field for field, _ in self._type._fields]
        if name in fields:
            return all_fields(self)[fields.index(name)]
        if COLUMN_PREFIX + name in fields:
            values = all_fields(self)
            return values[fields.index(COLUMN_PREFIX + name)][: values[2]]
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("_type", "_meminfo"):
            super().__setattr__(name, value)
            return
        fields = [field for field, _ in self._type._fields]
        if name not in fields:
            raise AttributeError(f"a twin has no field {name!r}")
        if name == "n":
            _set_n(self, value)
        elif name == "epoch":
            _set_epoch(self, value)
        else:
            values = list(all_fields(self))
            values[fields.index(name)] = value
            set_all_fields(self, tuple(values))

    @property
    def size(self) -> int:
        """Number of members."""
        return _get_n(self)

    @property
    def n(self) -> int:
        return _get_n(self)

    @property
    def epoch(self) -> int:
        return _get_epoch(self)

    @property
    def sparse(self) -> Index:
        return _get_sparse(self)

    @property
    def dense(self) -> np.ndarray:
        return _get_dense(self)

    @property
    def ids(self) -> np.ndarray:
        """The members in dense order (handles, for a World store's twin)."""
        return _ids(self)

    # The methods, callable from Python too (each a cached @njit call).

    def contains(self, i: int) -> bool:
        return _contains_call(self, i)

    def index(self, i: int) -> int:
        return _index_call(self, i)

    def add(self, i: int) -> bool:
        return _add_call(self, i)

    # Keys, whatever the twin takes: a World store's twin takes handles in
    # its own methods, while its container looks entity indexes up.

    def contains_key(self, key: int) -> bool:
        return bool(_index_key_call(self, key) >= 0)

    def index_key(self, key: int) -> int:
        return int(_index_key_call(self, key))

    def remove(self, i: int) -> bool:
        return _remove_call(self, i)

    def checkpoint(self) -> tuple[int, int, int]:
        return _checkpoint_call(self)

    def rollback(self, token: Sequence[int]) -> None:
        _rollback_call(self, tuple(token))

    def keep_only(self, ids: np.ndarray) -> int:
        return _keep_only_call(self, ids)

    def discard(self, ids: np.ndarray) -> int:
        return _discard_call(self, ids)

    def pop(self) -> int:
        return _pop_call(self)

    def handle(self, k: int) -> int:
        return _handle_call(self, k)

    def __repr__(self) -> str:
        return f"<sparseset twin: {_get_n(self)} members>"


structref.define_boxing(TwinType, Twin)


# Cached: each compiles once per twin type and machine, not per process.
@njit(cache=True)
def _get_n(twin: Twin) -> int:
    return twin.n


# Compiled, these write the struct's field; in Python the proxy's n and
# epoch are read-only properties (its writes go through __setattr__).
@njit(cache=True)
def _set_n(twin: Twin, n: int) -> None:
    twin.n = n  # type: ignore[misc]


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
def _checkpoint_call(twin: Twin) -> tuple[int, int, int]:
    return twin.checkpoint()


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


def make_twin(
    state: Any, columns: dict[str, Any], entities: tuple[Any, Any] | None = None
) -> Twin:
    """A twin holding ``state``'s arrays (no copy), counters and checkpoint
    stack; with ``entities`` (a world's generations and liveness), one that
    takes handles.

    Examples
    --------
    >>> from sparseset.sets.engine import SetEngine
    >>> from sparseset.sets.index_kinds import KINDS
    >>> engine = SetEngine.new(KINDS["flat"], 8); engine.add([4, 2])
    2
    >>> twin = make_twin(engine.state, {})
    >>> twin.size, np.shares_memory(twin.dense, engine.state.dense)
    (2, True)
    """
    names = list(BASE_FIELDS)
    values = [
        state.sparse,
        state.dense,
        np.int64(state.n),
        np.int64(state.epoch),
        state.marks,
        np.int64(state.depth),
        np.int64(state.stamp),
        np.int64(state.owner),
    ]
    if entities is not None:
        names += ENTITY_FIELDS
        values += list(entities)
    for name in columns:
        names.append(COLUMN_PREFIX + name)
        values.append(getattr(state, COLUMN_PREFIX + name))
    fields = [(n, numba.typeof(v)) for n, v in zip(names, values, strict=True)]
    # numba's StructRef.__init__ is unannotated.
    twin_type = TwinType(fields)  # type: ignore[no-untyped-call]
    twin: Twin = build(twin_type, tuple(values))
    return twin


# -- methods ------------------------------------------------------------------


def _key_source(twin: TwinType) -> str:
    if _takes_handles(twin):
        return "live_index(self.generations, self.alive, self.alive.shape[0], i)"
    return "np.int64(i)"


def _compile(source: str, twin: TwinType) -> Any:
    """Compile a method's source (a function ``impl``) for a twin type.

    ``KEY`` becomes the expression that turns the argument ``i`` into a key
    of the index (a World store's twin resolves a handle); a line holding
    just ``ZERO_ROW``, ``MOVE_ROW`` or ``GROW_ROWS`` becomes that statement
    for every column, at that line's indentation.
    """
    columns = _columns(twin)
    blocks = {
        "ZERO_ROW": [_zero_row(twin, c) for c in columns],
        "MOVE_ROW": [f"self._col_{c}[hole] = self._col_{c}[last]" for c in columns],
        "GROW_ROWS": [
            line
            for c in columns
            for line in (
                f"old = self._col_{c}",
                "grown = np.zeros((rows,) + old.shape[1:], old.dtype)",
                "grown[: old.shape[0]] = old",
                f"self._col_{c} = grown",
            )
        ],
    }
    lines = []
    for line in source.replace("KEY", _key_source(twin)).splitlines():
        marker = line.strip()
        if marker in blocks:
            indent = line[: len(line) - len(line.lstrip())]
            lines += [indent + text for text in blocks[marker]] or [indent + "pass"]
        else:
            lines.append(line)
    namespace = dict(_NAMESPACE)
    exec(compile("\n".join(lines), f"<sparseset.jit {twin}>", "exec"), namespace)
    return namespace["impl"]


_NAMESPACE: dict[str, Any] = {
    "np": np,
    "accepts": accepts,
    "claim": claim,
    "find": find,
    "grow": grow,
    "grown_length": grown_length,
    "in_range": in_range,
    "keep_only": keep_only,
    "live_index": live_index,
    "marked_count": marked_count,
    "push_mark": push_mark,
    "reindex": reindex,
    "row_limit": row_limit,
    "swap_remove": swap_remove,
    "unindex": unindex,
}


# The per-element methods keep their common path free of raises and of
# allocations: numba prunes the reference counting of the twin's fields only
# in code without such paths, and otherwise pays atomic increments on every
# call (measured 27 ns for ``contains`` against 5 ns on plain arrays). A
# rare path (growth, a bad id) is a call to a method of its own.
#
# The overloads stay unannotated: numba requires an overload and its
# implementation to have equal signatures, annotations included, and the
# one takes numba types where the other takes values.


@overload_method(TwinType, "contains")
def _contains(self, i):  # type: ignore[no-untyped-def]
    # find answers absent for any id the index never holds, negative
    # included (and live_index gives -1 for a dead handle).
    return _compile(
        """
def impl(self, i):
    return find(self.sparse, self.dense, self.n, KEY) >= 0
""",
        self,
    )


@overload_method(TwinType, "index")
def _index(self, i):  # type: ignore[no-untyped-def]
    return _compile(
        """
def impl(self, i):
    return find(self.sparse, self.dense, self.n, KEY)
""",
        self,
    )


@overload_method(TwinType, "add")
def _add(self, i):  # type: ignore[no-untyped-def]
    return _compile(
        """
def impl(self, i):
    n = self.n
    p = np.int64(-1)
    if n < self.dense.shape[0]:
        # -1 for an id the index cannot take yet (or ever: bad ids).
        p = claim(self.sparse, self.dense, n, KEY)
    if p < 0:
        p = self.make_room(i)
    if p < n:
        return False
    k = n
    ZERO_ROW
    self.n = n + 1
    self.epoch += 1
    return True
""",
        self,
    )


@overload_method(TwinType, "make_room")
def _make_room(self, i):  # type: ignore[no-untyped-def]
    """``add``'s rare path: a bad id raises ``ValueError``; a member gives
    its position; otherwise the index and the rows grow as needed and the
    id is claimed at ``n`` (the caller finishes the add)."""
    message = (
        "add takes live handles: this one is dead or was never created"
        if _takes_handles(self)
        else "id is negative or outside the index's range"
    )
    return _compile(
        f"""
def impl(self, i):
    key = KEY
    if key < 0 or not in_range(self.sparse, key):
        raise ValueError("{message}")
    p = find(self.sparse, self.dense, self.n, key)
    if p >= 0:
        return p
    # The index first: a flat index's size caps the rows dense may have.
    while not accepts(self.sparse, key):
        self.sparse = grow(self.sparse, self.dense, self.n, self.n + 1, key)
    if self.n == self.dense.shape[0]:
        rows = grown_length(self.dense.shape[0], self.n + 1, row_limit(self.sparse))
        old = self.dense
        dense = np.empty(rows, old.dtype)
        dense[: old.shape[0]] = old
        self.dense = dense
        GROW_ROWS
    p = claim(self.sparse, self.dense, self.n, key)
    while p < 0:
        self.sparse = grow(self.sparse, self.dense, self.n, self.n + 1, key)
        p = claim(self.sparse, self.dense, self.n, key)
    return p
""",
        self,
    )


@overload_method(TwinType, "remove")
def _remove(self, i):  # type: ignore[no-untyped-def]
    return _compile(
        """
def impl(self, i):
    n = self.n
    p = find(self.sparse, self.dense, n, KEY)
    removed = p >= 0
    if removed:
        self.n = swap_remove(self.sparse, self.dense, n, p)
        hole = p
        last = n - 1
        MOVE_ROW
    return removed
""",
        self,
    )


@overload_method(TwinType, "handle")
def _handle(self, k):  # type: ignore[no-untyped-def]
    if not _takes_handles(self):
        return None

    def impl(self, k):  # type: ignore[no-untyped-def]
        i = self.dense[k]
        return (np.int64(self.generations[i]) << 32) | np.int64(i)

    return impl


def _set_only(twin: TwinType) -> bool:
    """Backtracking methods are a set's: a store's removed rows are gone."""
    return not _columns(twin) and not _takes_handles(twin)


@overload_method(TwinType, "checkpoint")
def _checkpoint(self):  # type: ignore[no-untyped-def]
    if not _set_only(self):
        return None

    def impl(self):  # type: ignore[no-untyped-def]
        self.marks, self.depth = push_mark(
            self.marks, self.depth, self.n, self.epoch, self.stamp
        )
        self.stamp += 1
        return (self.owner, self.depth - 1, self.stamp - 1)

    return impl


@overload_method(TwinType, "rollback")
def _rollback(self, token):  # type: ignore[no-untyped-def]
    if not _set_only(self):
        return None

    def impl(self, token):  # type: ignore[no-untyped-def]
        count = np.int64(-1)
        if token[0] == self.owner:
            count = marked_count(self.marks, self.depth, self.epoch, token[1], token[2])
        if count < 0:
            raise ValueError(
                "not a live checkpoint of this set: an add, clear, sort or growth "
                "since it was taken, or a rollback to an older one, invalidated it"
            )
        reindex(self.sparse, self.dense, self.n, count)
        self.n = count
        self.depth = token[1] + 1

    return impl


@register_jitable
def _reject_negative(ids: IntArray) -> None:
    for k in range(ids.shape[0]):
        if ids[k] < 0:
            raise ValueError("ids must be non-negative")


@overload_method(TwinType, "discard")
def _discard(self, ids):  # type: ignore[no-untyped-def]
    if not _set_only(self):
        return None

    def impl(self, ids):  # type: ignore[no-untyped-def]
        _reject_negative(ids)
        n = self.n
        for k in range(ids.shape[0]):
            p = find(self.sparse, self.dense, self.n, ids[k])
            if p >= 0:
                self.n = swap_remove(self.sparse, self.dense, self.n, p)
        return n - self.n

    return impl


@overload_method(TwinType, "keep_only")
def _keep_only(self, ids):  # type: ignore[no-untyped-def]
    if not _set_only(self):
        return None

    def impl(self, ids):  # type: ignore[no-untyped-def]
        _reject_negative(ids)
        n = self.n
        self.n = keep_only(self.sparse, self.dense, n, ids)
        return n - self.n

    return impl


@overload_method(TwinType, "pop")
def _pop(self):  # type: ignore[no-untyped-def]
    if not _set_only(self):
        return None

    def impl(self):  # type: ignore[no-untyped-def]
        if self.n == 0:
            raise KeyError("pop from an empty set")
        self.n -= 1
        unindex(self.sparse, self.dense, self.n, self.n + 1)
        return self.dense[self.n]

    return impl

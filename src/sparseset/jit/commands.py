"""The command buffer twin: structural changes recorded in ``@njit`` code.

A system compiled with numba cannot call the world, so it records what it
wants done in a :class:`CommandBuffer` and the world applies it after the
system returns, as :class:`~sparseset.world.commands.Commands` applies
what Python recorded (``cmd.jit`` is the buffer of a ``w.deferred()``
block). In ``@njit`` code:

- ``buf.destroy(h)``: destroy entity ``h``;
- ``buf.add("name", h)``: give ``h`` component ``name`` (a string
  literal), new rows zero-filled and existing ones left as they are;
- ``buf.add("name", h, v0, v1, ...)``: the same with one value per column
  of ``name``, in schema order (each stored as the column's dtype, as
  numba converts on assignment);
- ``buf.remove("name", h)``, ``buf.discard("name", h)``;
- ``len(buf)``: the commands recorded and not yet taken.

``h`` is one handle (any integer) or, except with values, a 1-D integer
array of handles. Handles are not checked here: a dead one raises when
the buffer is applied, with the error the world's call gives. An unknown
component, a wrong number of values or a value-less component given
values is a compile-time ``TypingError``.

Each command is one row of ``records`` (op, component slot, handle, value
row); values go to per-column arrays of their component. Everything
grows by doubling inside compiled code, off the common path: recording a
command writes one row and raises nothing.

The buffer is a value of :class:`CommandBufferType`, a structref type
declared here at module level and parametrised only by its fields (the
components' names and column types), so a user's ``@njit(cache=True)``
system that takes one compiles once per machine, like one taking a twin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.core import errors
from numba.core.base import BaseContext
from numba.core.typing.context import BaseContext as TypingContext
from numba.core.typing.templates import Signature
from numba.experimental import structref
from numba.extending import intrinsic, overload, overload_method, register_jitable

from .methods import grown_columns
from .types import all_fields, build, read_field, replace_field

#: Op codes of a record, and the command each stands for.
DESTROY, ADD, ADD_VALUES, REMOVE, DISCARD = range(5)
OP_NAMES = ("destroy", "add", "add", "remove", "discard")
#: Columns of a record: op, component slot (-1 for destroy), handle, and
#: the row of its values (-1 without).
RECORD_WIDTH = 4
#: Rows a buffer starts with, and the least a growing array gets.
START_ROWS = 16
#: The field naming component ``name`` (its value is the slot).
COMPONENT_PREFIX = "_component_"


class CommandBufferType(types.StructRef):
    """The numba type of a command buffer: parametrised by its fields alone.

    Examples
    --------
    >>> from numba import types
    >>> t = CommandBufferType([("count", types.int64)])
    >>> t == CommandBufferType([("count", types.int64)])
    True
    """

    def preprocess_fields(self, fields: Any) -> tuple[tuple[str, Any], ...]:
        """numba's hook for a structref type's fields: O(f) for f fields."""
        return tuple((name, types.unliteral(t)) for name, t in fields)


structref.register(CommandBufferType)


def _value_field(slot: int, k: int) -> str:
    """The field holding column ``k``'s values of component ``slot``."""
    return f"_values_{slot}_{k}"


def _components(buffer: CommandBufferType) -> list[str]:
    return [
        name[len(COMPONENT_PREFIX) :]
        for name, _ in buffer._fields
        if name.startswith(COMPONENT_PREFIX)
    ]


def _slot(buffer: CommandBufferType, name: Any) -> int:
    """The slot of the component a literal ``name`` names, or a
    ``TypingError`` listing the buffer's components."""
    components = _components(buffer)
    if not isinstance(name, types.StringLiteral):
        raise errors.TypingError(
            "a command buffer names its component by a string literal, as "
            f'buf.add("pos", h); got {name}'
        )
    if name.literal_value not in components:
        raise errors.TypingError(
            f"the command buffer has no component {name.literal_value!r}; "
            f"components: {components} (those registered when cmd.jit was "
            "first asked for)"
        )
    return components.index(name.literal_value)


def _value_fields(buffer: CommandBufferType, slot: int) -> list[str]:
    prefix = f"_values_{slot}_"
    return [name for name, _ in buffer._fields if name.startswith(prefix)]


# -- the value columns of one component, by its literal name -----------------


@intrinsic
def _value_columns(typingctx: TypingContext, buffer: Any, name: Any) -> Any:
    """In compiled code, the value arrays of component ``name`` (a string
    literal) as a tuple in schema order (each a new reference)."""
    if not isinstance(buffer, CommandBufferType):
        return None
    fields = _value_fields(buffer, _slot(buffer, name))
    out_type = types.Tuple([buffer.field_dict[field] for field in fields])

    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Sequence[Any]
    ) -> Any:
        data = structref._Utils(context, builder, buffer).get_data_struct(args[0])
        values = [read_field(data, field) for field in fields]
        for field, value in zip(fields, values, strict=True):
            context.nrt.incref(builder, buffer.field_dict[field], value)
        return context.make_tuple(builder, out_type, values)

    return out_type(buffer, name), codegen


@intrinsic
def _replace_value_columns(
    typingctx: TypingContext, buffer: Any, name: Any, arrays: Any
) -> Any:
    """In compiled code, make ``arrays`` (a tuple in schema order) the
    value arrays of component ``name`` (a string literal)."""
    if not isinstance(buffer, CommandBufferType):
        return None
    fields = _value_fields(buffer, _slot(buffer, name))

    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Sequence[Any]
    ) -> Any:
        data = structref._Utils(context, builder, buffer).get_data_struct(args[0])
        for k, field in enumerate(fields):
            value = builder.extract_value(args[2], k)
            replace_field(
                context,
                builder,
                data,
                field,
                buffer.field_dict[field],
                value,
                arrays[k],
            )
        return context.get_dummy_value()

    return types.none(buffer, name, arrays), codegen


def write_values(
    columns: tuple[np.ndarray, ...], row: int, values: tuple[Any, ...]
) -> None:
    """Row ``row`` of each column set from the value of the same position.

    Examples
    --------
    >>> columns = (np.zeros(2), np.zeros((2, 3)))
    >>> write_values(columns, 1, (5.0, 2.0))
    >>> columns[0].tolist(), columns[1][1].tolist()
    ([0.0, 5.0], [2.0, 2.0, 2.0])
    """
    for column, value in zip(columns, values, strict=True):
        column[row] = value


# Column by column, as methods.zero_rows: the columns differ in type.
@overload(write_values)
def _write_values_compiled(columns, row, values):  # type: ignore[no-untyped-def]
    if len(columns) == 0:
        return lambda columns, row, values: None

    def impl(columns, row, values):  # type: ignore[no-untyped-def]
        columns[0][row] = values[0]
        write_values(columns[1:], row, values[1:])

    return impl


# -- recording ----------------------------------------------------------------


@register_jitable
def _grow_records(buffer: Any) -> None:
    """Double the records' rows (the rare path of :func:`_push`)."""
    old = buffer.records
    grown = np.empty((max(START_ROWS, 2 * old.shape[0]), RECORD_WIDTH), np.int64)
    grown[: old.shape[0]] = old
    buffer.records = grown


@register_jitable(inline="always")
def _push(buffer: Any, op: int, slot: int, handle: Any, row: int) -> None:
    """Append one record; raise-free, growing through a call of its own."""
    k = buffer.count
    if k == buffer.records.shape[0]:
        _grow_records(buffer)
    records = buffer.records
    records[k, 0] = op
    records[k, 1] = slot
    records[k, 2] = np.int64(handle)
    records[k, 3] = row
    buffer.count = k + 1


def _check_handles(method: str, handles: Any, values: bool = False) -> bool:
    """Whether ``handles`` is an array (else one handle); a
    ``TypingError`` for anything but integers."""
    if isinstance(handles, types.Integer) and not isinstance(handles, types.Boolean):
        return False
    if (
        isinstance(handles, types.Array)
        and handles.ndim == 1
        and isinstance(handles.dtype, types.Integer)
        and not values
    ):
        return True
    takes = "one handle" if values else "a handle or a 1-D array of handles"
    raise errors.TypingError(
        f"a command buffer's {method} takes {takes} (integers); got {handles}"
    )


@register_jitable(inline="always")
def _push_each(buffer: Any, op: int, slot: int, handles: Any) -> None:
    """Append one record per handle of an array."""
    for k in range(handles.shape[0]):
        _push(buffer, op, slot, handles[k], -1)


@overload_method(CommandBufferType, "destroy")
def _destroy(self, handles):  # type: ignore[no-untyped-def]
    if _check_handles("destroy", handles):
        return lambda self, handles: _push_each(self, DESTROY, -1, handles)
    return lambda self, handles: _push(self, DESTROY, -1, handles, -1)


def _named(op: int, self: Any, name: Any, handles: Any) -> Any:
    """``(self, name, handles)`` recording ``op`` for each handle."""
    slot = _slot(self, name)
    if _check_handles(OP_NAMES[op], handles):
        return lambda self, name, handles: _push_each(self, op, slot, handles)
    return lambda self, name, handles: _push(self, op, slot, handles, -1)


@overload_method(CommandBufferType, "remove", prefer_literal=True)
def _remove(self, name, handles):  # type: ignore[no-untyped-def]
    return _named(REMOVE, self, name, handles)


@overload_method(CommandBufferType, "discard", prefer_literal=True)
def _discard(self, name, handles):  # type: ignore[no-untyped-def]
    return _named(DISCARD, self, name, handles)


@register_jitable
def _grow_values(buffer: Any, name: Any) -> None:
    """Double the value arrays of component ``name`` (the rare path of
    ``add`` with values)."""
    # The intrinsics' stubs take numba's typing context for an argument.
    columns: Any = _value_columns(buffer, name)  # type: ignore[call-arg]
    rows = max(START_ROWS, 2 * columns[0].shape[0])
    _replace_value_columns(buffer, name, grown_columns(columns, rows))


@overload_method(CommandBufferType, "add", prefer_literal=True)
def _add(self, name, handles, *values):  # type: ignore[no-untyped-def]
    slot = _slot(self, name)
    if len(values) == 1 and isinstance(values[0], types.StarArgTuple):
        values = values[0].types  # how numba passes them when it lowers
    if not values:
        if _check_handles("add", handles):
            return lambda self, name, handles, *values: _push_each(
                self, ADD, slot, handles
            )
        return lambda self, name, handles, *values: _push(self, ADD, slot, handles, -1)
    _check_handles("add with values", handles, values=True)
    fields = _value_fields(self, slot)
    if len(values) != len(fields):
        raise errors.TypingError(
            f"component {name.literal_value!r} has {len(fields)} column(s); "
            f"add takes one value per column, in schema order, got {len(values)}"
        )

    def impl(self, name, handles, *values):  # type: ignore[no-untyped-def]
        row = self.rows[slot]
        if row == _value_columns(self, name)[0].shape[0]:  # type: ignore[call-arg]
            _grow_values(self, name)
        write_values(_value_columns(self, name), row, values)
        self.rows[slot] = row + 1
        _push(self, ADD_VALUES, slot, handles, row)

    return impl


@overload(len)
def _len(buffer):  # type: ignore[no-untyped-def]
    if isinstance(buffer, CommandBufferType):
        return lambda buffer: buffer.count
    return None


# -- the Python side ------------------------------------------------------------


class CommandBuffer(structref.StructRefProxy):
    """A command buffer as Python sees it: pass it to ``@njit`` systems.

    Get one from a deferred block (``cmd.jit``); the block applies what
    it recorded. ``len(buf)`` is the commands recorded and not yet taken
    by the block.

    Examples
    --------
    >>> from numba import njit
    >>> from sparseset import World
    >>> w = World(); w.register("hp", "i4"); w.register("dead"); e = w.create(3)
    >>> w.add("hp", e, hp=[5, 0, 7])
    3
    >>> @njit
    ... def reap(hp, handles, buf):
    ...     for k in range(hp.shape[0]):
    ...         if hp[k] == 0:
    ...             buf.add("dead", handles[k])
    ...             buf.destroy(handles[k])
    >>> with w.deferred() as cmd:
    ...     reap(w["hp"]["hp"], w["hp"].ids, cmd.jit)
    ...     len(cmd.jit)
    2
    >>> len(w), w.alive(e).tolist()
    (2, [True, False, True])
    """

    @property
    def components(self) -> tuple[str, ...]:
        """The components the buffer knows, by slot.

        O(c) for c components, read off the buffer's numba type.
        """
        return tuple(_components(numba.typeof(self)))

    def __len__(self) -> int:
        return int(_count(self))

    def __repr__(self) -> str:
        return f"<sparseset CommandBuffer: {len(self)} recorded>"


structref.define_boxing(CommandBufferType, CommandBuffer)


@njit(cache=True)
def _count(buffer: Any) -> int:
    # In compiled code: the struct, whose fields are attributes.
    count: int = buffer.count
    return count


@njit(cache=True)
def _records(buffer: Any) -> tuple[np.ndarray, np.ndarray]:
    return buffer.records[: buffer.count].copy(), buffer.rows.copy()


@njit(cache=True)
def _reset(buffer: Any) -> None:
    buffer.count = 0
    buffer.rows[:] = 0


def make_command_buffer(
    components: Sequence[tuple[str, Sequence[tuple[np.dtype[Any], tuple[int, ...]]]]],
) -> CommandBuffer:
    """An empty buffer for ``components``: ``(name, [(dtype, row shape) of
    each column, in schema order])`` per component, each its slot.

    Notes
    -----
    O(c + w) for c components and w columns: empty arrays, no rows.

    Examples
    --------
    >>> buf = make_command_buffer([("hp", [(np.dtype("i4"), ())]), ("tag", [])])
    >>> buf.components, len(buf)
    (('hp', 'tag'), 0)
    """
    names = ["records", "count", "rows"]
    values: list[Any] = [
        np.empty((START_ROWS, RECORD_WIDTH), np.int64),
        np.int64(0),
        np.zeros(len(components), np.int64),
    ]
    for slot, (name, columns) in enumerate(components):
        names.append(COMPONENT_PREFIX + name)
        values.append(np.int64(slot))
        for k, (dtype, shape) in enumerate(columns):
            names.append(_value_field(slot, k))
            values.append(np.zeros((0, *shape), dtype))
    fields = [(n, numba.typeof(v)) for n, v in zip(names, values, strict=True)]
    buffer_type = CommandBufferType(fields)  # type: ignore[no-untyped-call]
    buffer: CommandBuffer = build(buffer_type, tuple(values))
    return buffer


def take_recorded(
    buffer: CommandBuffer,
) -> tuple[np.ndarray, list[tuple[np.ndarray, ...]]]:
    """What ``buffer`` recorded, as copies, and the buffer emptied: the
    records (rows of op, slot, handle, value row) and, per slot, the
    value arrays up to the rows used.

    Examples
    --------
    >>> buf = make_command_buffer([("tag", [])])
    >>> records, values = take_recorded(buf)
    >>> records.shape, values
    ((0, 4), [()])
    """
    records, rows = _records(buffer)
    buffer_type = numba.typeof(buffer)
    names = [name for name, _ in buffer_type._fields]
    fields = all_fields(buffer)
    values = []
    for slot in range(len(_components(buffer_type))):
        values.append(
            tuple(
                fields[names.index(name)][: rows[slot]].copy()
                for name in _value_fields(buffer_type, slot)
            )
        )
    _reset(buffer)
    return records, values


def discard_recorded(buffer: CommandBuffer) -> None:
    """Forget what ``buffer`` recorded.

    Examples
    --------
    >>> buf = make_command_buffer([]); discard_recorded(buf); len(buf)
    0
    """
    _reset(buffer)


__all__ = [
    "ADD",
    "ADD_VALUES",
    "DESTROY",
    "DISCARD",
    "OP_NAMES",
    "REMOVE",
    "CommandBuffer",
    "CommandBufferType",
    "discard_recorded",
    "make_command_buffer",
    "take_recorded",
    "write_values",
]

"""The one structref type of every container state that compiled code shares.

:class:`TwinType` is the numba type of a set's, a store's and a World
store's jit twin and of a :class:`~sparseset.SetArray`'s state: one type
class, declared here at module level and parametrised only by its fields'
names and types. numba can therefore pickle it into a cache index, and a
user's ``@njit(cache=True)`` function that takes any of them compiles once
per machine, as one on plain arrays does. (jitclass types carry a
per-process id and cannot be cached: numba issues #6522 and #9659;
structref types made per call cannot either: #9030, #10021.)

The fields say which kind of state a type is (:func:`kind_of`):

- a set's twin: :data:`TWIN_FIELDS` (``sparse``, ``dense``, ``n``,
  ``epoch`` and the checkpoint stack ``marks``, ``depth``, ``stamp``,
  ``owner``), then over a flat index :data:`BITS_FIELDS` (a member
  bitmap kept in step);
- a store's twin: those, then one ``_col_<name>`` field per column;
- a World store's twin: those, then :data:`ENTITY_FIELDS` (the world's
  ``generations``, whose words carry liveness too) before the columns;
- a SetArray's state: :data:`SET_ARRAY_FIELDS`.

This module is the type's compiled side below the methods: its data model,
attribute typing and lowering (fields; on a twin also ``size``, ``ids`` and
the columns as views of the members), and the plumbing that builds a
struct from a tuple of values, reads every field back and reaches the
columns as a tuple. :mod:`.methods` holds the compiled methods and
:mod:`.proxy` the Python side, as numba's typed dict splits
``dictobject`` from ``typeddict``.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np
from numba import njit, types
from numba.core import cgutils, errors, imputils
from numba.core.base import BaseContext
from numba.core.datamodel import models
from numba.core.datamodel.registry import default_manager
from numba.core.runtime.nrtdynmod import _meminfo_struct_type
from numba.core.typing.context import BaseContext as TypingContext
from numba.core.typing.templates import AttributeTemplate, Signature
from numba.experimental import structref
from numba.extending import (
    infer_getattr,
    intrinsic,
    lower_getattr_generic,
    lower_setattr_generic,
)
from numba.np.arrayobj import populate_array

from ..kernels import handles_of

#: Fields every twin has, in this order; entities and columns follow.
TWIN_FIELDS = ("sparse", "dense", "n", "epoch", "marks", "depth", "stamp", "owner")
#: A set's twin over a flat index also keeps its members as a bitmap (bit
#: ``x`` of word ``x // 64``), current while ``n`` and ``epoch`` equal
#: ``bits_n`` and ``bits_epoch``: kept in step by the twin's methods and
#: the set's batches, it lets ``contains`` and ``add`` of a member read one
#: bit (see :mod:`.methods`).
BITS_FIELDS = ("member_bits", "bits_n", "bits_epoch")
#: A World store's twin also holds the world's entity arrays.
ENTITY_FIELDS = ("generations",)
#: The twins' methods (:mod:`.methods`): a column of the same name is
#: reached as ``twin["name"]`` only, the attribute being the method.
METHOD_NAMES = frozenset(
    {"add", "assign", "checkpoint", "contains", "discard", "handle", "index"}
    | {"keep_only", "make_room", "pop", "remove", "rollback", "size", "touch"}
    | {"values"}
)
#: A tracked World store's twin also logs the handles its ``remove`` takes
#: the component from, for the world's readers to collect.
REMOVAL_FIELDS = ("removed_handles", "removed_count")
#: A store's column ``pos`` is the field ``_col_pos``.
COLUMN_PREFIX = "_col_"
#: Fields of a SetArray's state, in this order.
SET_ARRAY_FIELDS = (
    "dense",
    "sparse",
    "sizes",
    "trail",
    "trail_len",
    "marks",
    "depth",
    "stamp",
    "epoch",
    "owner",
)

#: What an intrinsic gives numba: the call's signature and the code
#: generator, which works on llvmlite values (untyped, hence Any).
_Intrinsic: TypeAlias = tuple[Signature, Callable[..., Any]]


class TwinType(types.StructRef):
    """The numba type of every shared state: twins and SetArray states.

    Parametrised by its fields alone (names and numba types), so equal
    layouts are one type, and the type pickles into numba's cache.

    Examples
    --------
    >>> from numba import types
    >>> twin_type = TwinType([("n", types.int64)])
    >>> twin_type.field_dict["n"], twin_type == TwinType([("n", types.int64)])
    (int64, True)
    """

    def preprocess_fields(self, fields: Any) -> tuple[tuple[str, Any], ...]:
        """numba's hook for a structref type's fields: O(f) for f fields."""
        return tuple((name, types.unliteral(t)) for name, t in fields)


default_manager.register(TwinType, models.StructRefModel)


class Kind(enum.Enum):
    """Which container a state belongs to, as its fields tell."""

    SET = "set"
    STORE = "store"
    WORLD_STORE = "world store"
    SET_ARRAY = "set array"


def kind_of(state: TwinType) -> Kind:
    """The kind of state a type holds, from its field names.

    Examples
    --------
    >>> from numba import types
    >>> kind_of(TwinType([(name, types.int64) for name in TWIN_FIELDS]))
    <Kind.SET: 'set'>
    """
    fields = state.field_dict
    if "trail" in fields:
        return Kind.SET_ARRAY
    if ENTITY_FIELDS[0] in fields:
        return Kind.WORLD_STORE
    if column_names(state):
        return Kind.STORE
    return Kind.SET


def keeps_bits(state: TwinType) -> bool:
    """Whether a twin type keeps a member bitmap (:data:`BITS_FIELDS`).

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> from numba import typeof
    >>> flat, hashed = SparseSet().jit, SparseSet(index="hash").jit
    >>> keeps_bits(typeof(flat)), keeps_bits(typeof(hashed))
    (True, False)
    """
    return BITS_FIELDS[0] in state.field_dict


def column_names(state: TwinType) -> list[str]:
    """The column names of a twin type, in schema order (none for a set).

    Examples
    --------
    >>> from numba import types
    >>> column_names(TwinType([("n", types.int64), ("_col_pos", types.float64[:])]))
    ['pos']
    """
    return [
        name[len(COLUMN_PREFIX) :]
        for name, _ in state._fields
        if name.startswith(COLUMN_PREFIX)
    ]


def unknown_column(state: Any, name: str) -> str:
    """The message for ``twin[name]`` of a column the twin does not have.

    Examples
    --------
    >>> from numba import types
    >>> twin = TwinType([("n", types.int64), ("_col_life", types.float32[:])])
    >>> unknown_column(twin, "lfe")
    "twin['lfe']: no column 'lfe'; the columns are ['life']"
    """
    columns = column_names(state)
    have = f"the columns are {columns}" if columns else "it has no columns"
    return f"twin[{name!r}]: no column {name!r}; {have}"


def payload(context: BaseContext, builder: Any, state: Any, value: Any) -> Any:
    """The fields of struct ``value`` of type ``state``, to read and write.

    What numba's ``structref._Utils.get_data_struct`` does, reading the
    meminfo's data pointer directly rather than through the runtime: code
    compiled without NRT (the methods' fast paths) reaches the fields too.
    """
    meminfo = cgutils.create_struct_proxy(state)(context, builder, value=value).meminfo
    header = builder.bitcast(meminfo, _meminfo_struct_type.as_pointer())
    data = builder.load(cgutils.gep(builder, header, 0, 3))
    data_type = state.get_data_type()
    alloc_type = context.data_model_manager[data_type].get_value_type()
    return cgutils.create_struct_proxy(data_type)(
        context, builder, ref=builder.bitcast(data, alloc_type.as_pointer())
    )


def read_field(data: Any, name: str) -> Any:
    """Field ``name`` of a struct's payload.

    By position: cgutils structures keep names with a leading underscore
    for their own attributes, and columns are ``_col_<name>``.
    """
    return data[data._datamodel.get_field_position(name)]


def write_field(data: Any, name: str, value: Any) -> None:
    """Set field ``name`` of a struct's payload (see :func:`read_field`)."""
    data[data._datamodel.get_field_position(name)] = value


def _view_type(context: Any, array: types.Array) -> Any:
    """The type of ``array[:n]``."""
    signature = context.resolve_function_type(
        operator.getitem, (array, types.slice2_type), {}
    )
    return signature.return_type


# -- attributes: fields; on a twin also size, ids and the columns as views --


@infer_getattr
class _StateAttributes(AttributeTemplate):
    key = TwinType

    # numba's stubs declare this hook as a NotImplemented placeholder.
    def generic_resolve(self, state: TwinType, attr: str) -> Any:  # type: ignore[override]
        fields = state.field_dict
        if attr in fields:
            return fields[attr]
        kind = kind_of(state)
        # A SetArray's size(k) and values(k) are methods (see .methods).
        if kind is Kind.SET_ARRAY:
            return None
        if attr == "size":
            return types.int64
        if attr == "ids":
            if kind is Kind.WORLD_STORE:
                return types.Array(types.int64, 1, "C")
            return _view_type(self.context, fields["dense"])
        column = COLUMN_PREFIX + attr
        if column in fields and attr not in METHOD_NAMES:
            return _view_type(self.context, fields[column])
        return None


def _handles(generations: Any, dense: Any, n: Any) -> Any:
    out = np.empty(n, np.int64)
    handles_of(generations, dense[:n], out)
    return out


# The lowering decorators are unannotated in numba; what they register
# works on llvmlite values, untyped too.
@lower_getattr_generic(TwinType)  # type: ignore[untyped-decorator]
def _state_getattr(
    context: BaseContext, builder: Any, state: TwinType, value: Any, attr: str
) -> Any:
    data = payload(context, builder, state, value)
    fields = state.field_dict
    if attr in fields:
        return imputils.impl_ret_borrowed(
            context, builder, fields[attr], read_field(data, attr)
        )
    n = read_field(data, "n")
    if attr == "size":
        return n
    if attr == "ids" and kind_of(state) is Kind.WORLD_STORE:
        signature = types.Array(types.int64, 1, "C")(
            fields["generations"], fields["dense"], types.int64
        )
        args = (read_field(data, "generations"), read_field(data, "dense"), n)
        out = context.compile_internal(builder, _handles, signature, args)
        return imputils.impl_ret_new_ref(context, builder, signature.return_type, out)
    return _rows_view(
        context,
        builder,
        state,
        data,
        "dense" if attr == "ids" else COLUMN_PREFIX + attr,
    )


def _rows_view(
    context: BaseContext, builder: Any, state: TwinType, data: Any, name: str
) -> Any:
    """``field[:n]`` of field ``name`` (``dense`` or a column's), a new
    reference.

    Built in place from the field's own data pointer, strides and meminfo,
    with ``n`` clamped to the field's rows: a few loads and a min/max,
    which LLVM hoists out of a user's loop. (Slicing through
    ``compile_internal`` put a call's worth of wraparound logic on every
    access.) The view shares the field's meminfo, so it keeps the array
    alive wherever it goes; its one reference is the caller's to release,
    and numba prunes that pair in a loop without a raise path.
    """
    array_type = state.field_dict[name]
    view_type = _view_type(context.typing_context, array_type)
    field = context.make_array(array_type)(
        context, builder, value=read_field(data, name)
    )
    shape = cgutils.unpack_tuple(builder, field.shape, array_type.ndim)
    strides = cgutils.unpack_tuple(builder, field.strides, array_type.ndim)
    # n is a field like any other (compiled code may assign it): never
    # more rows than the field has, never fewer than none.
    n = read_field(data, "n")
    zero = context.get_constant(types.intp, 0)
    rows = builder.select(builder.icmp_signed("<", n, zero), zero, n)
    rows = builder.select(builder.icmp_signed("<", shape[0], rows), shape[0], rows)
    view = context.make_array(view_type)(context, builder)
    populate_array(
        view,
        data=field.data,
        shape=[rows, *shape[1:]],
        strides=strides,
        itemsize=field.itemsize,
        meminfo=field.meminfo,
        parent=field.parent,
    )
    return imputils.impl_ret_borrowed(context, builder, view_type, view._getvalue())


@intrinsic
def column_rows(typingctx: TypingContext, state: Any, name: Any) -> Any:
    """``twin["name"]`` in compiled code: the members' rows of the column
    called by the string literal ``name``, whatever members the twin has
    (``twin["size"]`` is a column named ``size``; ``twin.size`` the count).

    Examples
    --------
    >>> from numba import njit
    >>> from sparseset import ComponentStore
    >>> store = ComponentStore({"size": "f4"}); store.add([5, 9], size=[1.5, 2.5])
    2
    >>> njit(lambda t: (t["size"].sum(), t.size))(store.jit)
    (4.0, 2)
    """
    if not isinstance(state, TwinType) or not isinstance(name, types.StringLiteral):
        return None
    field = COLUMN_PREFIX + name.literal_value
    if field not in state.field_dict:
        raise errors.TypingError(unknown_column(state, name.literal_value))
    view_type = _view_type(typingctx, state.field_dict[field])

    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Any
    ) -> Any:
        data = payload(context, builder, state, args[0])
        return _rows_view(context, builder, state, data, field)

    return view_type(state, name), codegen


@lower_setattr_generic(TwinType)  # type: ignore[untyped-decorator]
def _state_setattr(
    context: BaseContext,
    builder: Any,
    signature: Signature,
    args: Sequence[Any],
    attr: str,
) -> None:
    state, value_type = signature.args
    instance, value = args
    data = payload(context, builder, state, instance)
    field_type = state.field_dict[attr]
    replace_field(context, builder, data, attr, field_type, value, value_type)


def replace_field(
    context: BaseContext,
    builder: Any,
    data: Any,
    name: str,
    field_type: Any,
    value: Any,
    value_type: Any,
) -> None:
    """Store ``value`` in field ``name``, owning a reference to it and
    releasing the old value's."""
    cast = context.cast(builder, value, value_type, field_type)
    old = read_field(data, name)
    if context.enable_nrt:
        context.nrt.incref(builder, field_type, cast)
        context.nrt.decref(builder, field_type, old)
    elif context.data_model_manager[field_type].has_nrt_meminfo():
        # Code compiled without NRT (the methods' fast paths) counts no
        # references: replacing an array there would leak or free one.
        raise errors.NumbaTypeError(
            f"field {name!r} holds references: set it in code compiled with NRT"
        )
    write_field(data, name, cast)


# -- plumbing: a struct from a tuple of values, and back ----------------------
#
# numba's ``structref.new`` builds a struct field by field in compiled code;
# these build one from a tuple of all its field values in one call, read
# fields back as a tuple and replace them from one. numba passes an
# intrinsic its typing context itself and types the arguments; the stubs
# take the intrinsic's signature for the call's, hence the ignores on the
# calls below.


@intrinsic
def _from_fields(
    typingctx: TypingContext,
    state_ref: types.TypeRef[types.StructRef],
    values: types.BaseTuple,
) -> _Intrinsic:
    """A new struct of type ``state_ref`` whose fields are ``values``, in order."""
    state = state_ref.instance_type

    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Sequence[Any]
    ) -> Any:
        # What structref.new does, then every field set from the tuple.
        from numba.experimental.jitclass.base import imp_dtor

        model = context.data_model_manager[state.get_data_type()]
        alloc_type = model.get_value_type()
        meminfo = context.nrt.meminfo_alloc_dtor(
            builder,
            context.get_constant(types.uintp, context.get_abi_sizeof(alloc_type)),
            imp_dtor(context, builder.module, state),
        )
        pointer = builder.bitcast(
            context.nrt.meminfo_data(builder, meminfo), alloc_type.as_pointer()
        )
        builder.store(cgutils.get_null_value(alloc_type), pointer)
        struct = context.make_helper(builder, state)
        struct.meminfo = meminfo
        out = struct._getvalue()
        data = payload(context, builder, state, out)
        for k, (name, field_type) in enumerate(state._fields):
            value = builder.extract_value(args[1], k)
            context.nrt.incref(builder, field_type, value)
            write_field(data, name, value)
        return out

    return state(state_ref, values), codegen


def _fields_getter(names: Callable[[TwinType], list[str]]) -> Any:
    """An intrinsic giving the fields ``names(type)`` of a struct as a tuple
    (each a new reference)."""

    def fields_of(typingctx: TypingContext, state: TwinType) -> _Intrinsic:
        chosen = names(state)
        out_type = types.Tuple([state.field_dict[name] for name in chosen])

        def codegen(
            context: BaseContext,
            builder: Any,
            signature: Signature,
            args: Sequence[Any],
        ) -> Any:
            data = payload(context, builder, state, args[0])
            values = [read_field(data, name) for name in chosen]
            # New references, where references are counted at all (code
            # compiled without NRT, the methods' fast paths, borrows them).
            if context.enable_nrt:
                for name, value in zip(chosen, values, strict=True):
                    context.nrt.incref(builder, state.field_dict[name], value)
            return context.make_tuple(builder, out_type, values)

        return out_type(state), codegen

    return intrinsic(fields_of)


def _fields_setter(names: Callable[[TwinType], list[str]]) -> Any:
    """An intrinsic setting the fields ``names(type)`` of a struct from a
    tuple, in that order."""

    def store_fields(
        typingctx: TypingContext, state: TwinType, values: types.BaseTuple
    ) -> _Intrinsic:
        chosen = names(state)

        def codegen(
            context: BaseContext,
            builder: Any,
            signature: Signature,
            args: Sequence[Any],
        ) -> Any:
            data = payload(context, builder, state, args[0])
            for k, name in enumerate(chosen):
                # A tuple type indexes by position; the stubs know only slices.
                value_type = values[k]  # type: ignore[index]
                value = builder.extract_value(args[1], k)
                field_type = state.field_dict[name]
                replace_field(
                    context, builder, data, name, field_type, value, value_type
                )
            return context.get_dummy_value()

        return types.none(state, values), codegen

    return intrinsic(store_fields)


def _all_names(state: TwinType) -> list[str]:
    return [name for name, _ in state._fields]


def _column_fields(state: TwinType) -> list[str]:
    return [COLUMN_PREFIX + name for name in column_names(state)]


_field_values = _fields_getter(_all_names)
_store_fields = _fields_setter(_all_names)
#: In compiled code, ``column_arrays(twin)`` is the tuple of a twin's
#: column arrays in schema order (empty for a set's twin).
column_arrays = _fields_getter(_column_fields)
#: In compiled code, ``replace_columns(twin, arrays)`` makes ``arrays`` (a
#: tuple in schema order) the twin's columns.
replace_columns = _fields_setter(_column_fields)


@njit(cache=True)
def build(struct_ref: types.StructRef, values: tuple[Any, ...]) -> Any:
    """A new struct of type ``struct_ref`` whose fields are ``values``.

    Its Python class is the proxy of its kind (see :mod:`.proxy`), which
    the type does not say to mypy: callers annotate what they get.

    Examples
    --------
    >>> import numba, numpy as np
    >>> values = (np.arange(3), np.int64(2))
    >>> fields = [("dense", numba.typeof(values[0])), ("n", numba.int64)]
    >>> all_fields(build(TwinType(fields), values))[1]
    2
    """
    return _from_fields(struct_ref, values)  # type: ignore[call-arg, arg-type]


@njit(cache=True)
def all_fields(struct: structref.StructRefProxy) -> tuple[Any, ...]:
    """Every field of ``struct``, as a tuple in field order.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> all_fields(SparseSet.from_ids([7, 9]).jit)[TWIN_FIELDS.index("n")]
    2
    """
    return _field_values(struct)  # type: ignore[no-any-return]


@njit(cache=True)
def set_all_fields(struct: structref.StructRefProxy, values: tuple[Any, ...]) -> None:
    """Set every field of ``struct`` from a tuple in field order.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> twin = SparseSet.from_ids([7, 8]).jit
    >>> values = list(all_fields(twin)); values[2] = 1
    >>> set_all_fields(twin, tuple(values)); twin.size
    1
    """
    _store_fields(struct, values)


__all__ = [
    "BITS_FIELDS",
    "COLUMN_PREFIX",
    "ENTITY_FIELDS",
    "METHOD_NAMES",
    "REMOVAL_FIELDS",
    "SET_ARRAY_FIELDS",
    "TWIN_FIELDS",
    "Kind",
    "TwinType",
    "all_fields",
    "build",
    "column_arrays",
    "column_names",
    "column_rows",
    "keeps_bits",
    "kind_of",
    "read_field",
    "replace_columns",
    "replace_field",
    "set_all_fields",
    "unknown_column",
    "write_field",
]

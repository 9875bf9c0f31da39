"""structref plumbing the jit twins and SetArray share.

numba's ``structref`` builds a struct field by field in compiled code;
these build one from a tuple of all its field values in one call, read all
fields back as a tuple, and reach a field of the payload by position (the
helpers numba hands out reserve names with a leading underscore, which
the twins' column fields have).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from numba import njit, types
from numba.core import cgutils
from numba.core.base import BaseContext
from numba.core.typing.context import BaseContext as TypingContext
from numba.core.typing.templates import Signature
from numba.experimental import structref
from numba.extending import intrinsic

#: What an intrinsic gives numba: the call's signature and the code
#: generator, which works on llvmlite values (untyped, hence Any).
_Intrinsic: TypeAlias = tuple[Signature, Callable[..., Any]]

# numba passes an intrinsic its typing context itself, and types the
# arguments; the stubs take the intrinsic's signature for the call's, hence
# the ignores on the calls below.


def read_field(data: Any, name: str) -> Any:
    """Field ``name`` of a twin's payload (by position: cgutils structures
    take names with a leading underscore for their own attributes)."""
    return data[data._datamodel.get_field_position(name)]


def write_field(data: Any, name: str, value: Any) -> None:
    data[data._datamodel.get_field_position(name)] = value


@intrinsic
def _from_fields(
    typingctx: TypingContext,
    twin_ref: types.TypeRef[types.StructRef],
    values: types.BaseTuple,
) -> _Intrinsic:
    """A new struct of type ``twin_ref`` whose fields are ``values``, in order."""
    twin = twin_ref.instance_type

    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Sequence[Any]
    ) -> Any:
        # What structref.new does, then every field set from the tuple.
        from numba.experimental.jitclass.base import imp_dtor

        model = context.data_model_manager[twin.get_data_type()]
        alloc_type = model.get_value_type()
        meminfo = context.nrt.meminfo_alloc_dtor(
            builder,
            context.get_constant(types.uintp, context.get_abi_sizeof(alloc_type)),
            imp_dtor(context, builder.module, twin),
        )
        pointer = builder.bitcast(
            context.nrt.meminfo_data(builder, meminfo), alloc_type.as_pointer()
        )
        builder.store(cgutils.get_null_value(alloc_type), pointer)
        struct = context.make_helper(builder, twin)
        struct.meminfo = meminfo
        out = struct._getvalue()
        data = structref._Utils(context, builder, twin).get_data_struct(out)
        for k, (name, field_type) in enumerate(twin._fields):
            value = builder.extract_value(args[1], k)
            context.nrt.incref(builder, field_type, value)
            write_field(data, name, value)
        return out

    return twin(twin_ref, values), codegen


@intrinsic
def _field_values(typingctx: TypingContext, twin: types.StructRef) -> _Intrinsic:
    """All fields of a struct as a tuple, in order."""
    out_type = types.Tuple([t for _, t in twin._fields])

    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Sequence[Any]
    ) -> Any:
        data = structref._Utils(context, builder, twin).get_data_struct(args[0])
        values = [read_field(data, name) for name, _ in twin._fields]
        for (_, field_type), value in zip(twin._fields, values, strict=True):
            context.nrt.incref(builder, field_type, value)
        return context.make_tuple(builder, out_type, values)

    return out_type(twin), codegen


@intrinsic
def _store_fields(
    typingctx: TypingContext, twin: types.StructRef, values: types.BaseTuple
) -> _Intrinsic:
    """Set every field of a struct from a tuple, in order."""

    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Sequence[Any]
    ) -> Any:
        data = structref._Utils(context, builder, twin).get_data_struct(args[0])
        for k, (name, field_type) in enumerate(twin._fields):
            # A tuple type indexes by position; the stubs know only slices.
            value_type = values[k]  # type: ignore[index]
            value = context.cast(
                builder, builder.extract_value(args[1], k), value_type, field_type
            )
            old = read_field(data, name)
            context.nrt.incref(builder, field_type, value)
            context.nrt.decref(builder, field_type, old)
            write_field(data, name, value)
        return context.get_dummy_value()

    return types.none(twin, values), codegen


@njit(cache=True)
def build(struct_ref: types.StructRef, values: tuple[Any, ...]) -> Any:
    """A new struct of type ``struct_ref`` whose fields are ``values``.

    Its Python class is the proxy its type was boxed with, which the type
    does not say: callers annotate what they get.
    """
    return _from_fields(struct_ref, values)  # type: ignore[call-arg, arg-type]


@njit(cache=True)
def all_fields(struct: structref.StructRefProxy) -> tuple[Any, ...]:
    """Every field of ``struct``, as a tuple in field order."""
    return _field_values(struct)  # type: ignore[call-arg, arg-type]


@njit(cache=True)
def set_all_fields(struct: structref.StructRefProxy, values: tuple[Any, ...]) -> None:
    """Set every field of ``struct`` from a tuple in field order."""
    _store_fields(struct, values)  # type: ignore[call-arg, arg-type]

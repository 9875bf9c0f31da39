"""Software prefetch from compiled code: ask for a cache line ahead of use.

numba has no prefetch of its own (numba#3769), so this emits LLVM's
``llvm.prefetch`` intrinsic, which becomes one ``prefetcht0`` on x86 and
``prfm`` on ARM. A prefetch never faults and retires without waiting for
its line, so a loop can request the slots of lookups a few iterations
ahead and have many cache misses in flight, where a plain load would hold
its place in the CPU's reorder window until the data arrived.
"""

from collections.abc import Callable, Sequence
from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.base import BaseContext
from numba.core.typing.context import BaseContext as TypingContext
from numba.core.typing.templates import Signature
from numba.extending import intrinsic, overload
from numpy.typing import NDArray

from .array_types import Int
from .options import OVERLOAD_NO_NRT


def prefetch(array: NDArray[Any], offset: Int) -> None:
    """Start loading element ``offset`` of C-contiguous ``array`` into cache.

    ``offset`` counts elements of the flattened array (row-major), is not
    bounds-checked and may point anywhere: a prefetch of an address outside
    the array is harmless. A hint only: it changes nothing but timing, and
    from plain Python (``NUMBA_DISABLE_JIT=1``) it does nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from numba import njit
    >>> @njit
    ... def total(a, order):
    ...     s = 0
    ...     for k in range(order.shape[0]):
    ...         if k + 8 < order.shape[0]:
    ...             prefetch(a, order[k + 8])
    ...         s += a[order[k]]
    ...     return s
    >>> int(total(np.arange(100), np.arange(100)[::-1].copy()))
    4950
    """


@intrinsic
def _prefetch_element(
    typingctx: TypingContext, array: types.Array, offset: types.Integer
) -> tuple[Signature, Callable[..., Any]]:
    # llvmlite has no types: the builder and the values it makes are Any.
    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Sequence[Any]
    ) -> Any:
        array_type = signature.args[0]
        data = context.make_array(array_type)(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), cgutils.voidptr_t)
        i32 = ir.IntType(32)
        llvm_prefetch = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t, i32, i32, i32]),
            "llvm.prefetch.p0",
        )
        # A read, kept in every cache level (locality 3), of data.
        builder.call(llvm_prefetch, [address, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(array, offset), codegen


# Unannotated, as numba requires of an overload and its implementation
# (see :mod:`.kinds`).
@overload(prefetch, jit_options=OVERLOAD_NO_NRT)
def _prefetch(array, offset):
    if not (isinstance(array, types.Array) and array.layout == "C"):
        return None
    if not isinstance(offset, types.Integer):
        return None

    def impl(array, offset):
        # numba passes the typing context itself; the stubs count it in.
        _prefetch_element(array, offset)  # type: ignore[call-arg]

    return impl

"""Types for the kernels' signatures, and numba's decorators typed where its
stubs lose the function.

numba ignores annotations: it compiles a kernel once per combination of
argument types it meets, so one kernel takes ids of any integer dtype and
an index of any kind. The aliases here say that to a type checker.

A compiled kernel boxes its scalar results as Python ``int`` and ``bool``;
the same function run uncompiled (``NUMBA_DISABLE_JIT=1``, or a
``register_jitable`` helper called from Python) returns numpy scalars.
``Int`` and ``Bool`` cover both, so a caller that needs a Python ``int``
says ``int(...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher
from numpy.typing import NDArray

#: An integer scalar: a Python int or a numpy integer of any width.
Int: TypeAlias = int | np.integer[Any]
#: A truth value: a Python bool or a numpy bool.
Bool: TypeAlias = bool | np.bool_
#: Ids, positions or counts: an integer array of any dtype.
IntArray: TypeAlias = NDArray[np.integer[Any]]
#: The flat index (:mod:`.flat`): one uint32 position slot per id.
FlatIndex: TypeAlias = NDArray[np.uint32]

_Function = TypeVar("_Function", bound=Callable[..., object])


def typed_njit(**options: Any) -> Callable[[_Function], Dispatcher[_Function]]:
    """``numba.njit(**options)``, keeping the compiled function's signature.

    numba's stubs type ``njit`` only for the options they list; with
    ``_nrt`` among them (``options.NO_NRT``) the result is untyped, and so
    would be every call of the kernel. The dispatcher is the one
    ``njit(**options)`` makes: this changes nothing but what mypy sees.

    Examples
    --------
    >>> @typed_njit(cache=False)
    ... def double(x: int) -> int:
    ...     return 2 * x
    >>> double(21)
    42
    """

    def decorate(function: _Function) -> Dispatcher[_Function]:
        dispatcher: Dispatcher[_Function] = njit(**options)(function)
        return dispatcher

    return decorate

"""A kernel's compiled entry point, for calls whose argument types never vary.

A numba dispatcher types every argument of every call before it runs the
compiled function: for a kernel that does little (set algebra on two small
sets) that is a fifth of the call. Where the caller knows its arguments
always have one signature (a flat set's arrays are made in one way only:
``uint32`` index, ``int32`` members, 1-D, C-contiguous, writeable), it can
look the entry point up once, on the first call, and call it from then on.

The entry point checks nothing: given arrays of other types, it would read
them wrongly. Only a caller whose argument types are fixed by construction
may use it.
"""

from collections.abc import Callable
from typing import Any

from numba.core.dispatcher import Dispatcher


def entry_point(dispatcher: Dispatcher, args: tuple[Any, ...]) -> Callable[..., Any]:
    """The compiled function ``dispatcher`` runs for arguments of the types
    of ``args``: loaded from numba's cache or compiled (once), as the
    dispatcher's own first call would.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels.algebra import AND, combine
    >>> from sparseset.kernels.element import push
    >>> sp, de = np.empty(8, np.uint32), np.empty(2, np.int32)
    >>> n = push(sp, de, push(sp, de, 0, 3), 5)
    >>> out = np.empty(2, np.int32)
    >>> call = entry_point(combine, (AND, sp, de, n, sp, de, n, out))
    >>> m = call(AND, sp, de, n, sp, de, n, out)
    >>> out[:m].tolist()
    [3, 5]
    """
    signature = tuple(dispatcher.typeof_pyval(arg) for arg in args)
    function: Callable[..., Any] = dispatcher.compile(signature)
    return function


__all__ = ["entry_point"]

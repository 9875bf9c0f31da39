"""Set algebra between two sparse sets, as one filtering kernel.

Union, intersection, difference and symmetric difference all reduce to
"append to an output set each id of one set whose membership in the other
is (or is not) wanted", so the loop exists once.
"""

import numpy as np
from numba import njit

from .element import find, push


@njit(cache=True)
def filter_into(
    ids, sparse, dense, n, keep_members, out_sparse, out_dense, out_n, start
):
    """Append to the out set each id of ``ids[start:]`` whose membership matches.

    ``ids`` must hold distinct ids the out index accepts (the members of
    another set), and none of them may already be in the out set. An id
    is kept when its membership in ``(sparse, dense, n)`` equals
    ``keep_members``. Returns ``(out_n, stop)`` as ``upsert`` does: ``stop``
    is -1 when done, else where the out index needs to grow first.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels import add
    >>> sp = np.empty(32, np.uint32); de = np.empty(32, np.int32)
    >>> n, _ = add(sp, de, 0, np.array([3, 5, 12, 15, 18]), 0)
    >>> out_sp = np.empty(32, np.uint32); out_de = np.empty(5, np.int32)
    >>> a = np.array([1, 5, 10, 15, 20])
    >>> m, _ = filter_into(a, sp, de, n, True, out_sp, out_de, 0, 0)
    >>> out_de[:m].tolist()
    [5, 15]
    """
    for k in range(start, ids.shape[0]):
        x = ids[np.uint64(k)]
        if (find(sparse, dense, n, x) >= 0) == keep_members:
            pushed = push(out_sparse, out_dense, out_n, x)
            if pushed == out_n:
                return out_n, k
            out_n = pushed
    return out_n, -1

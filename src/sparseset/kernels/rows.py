"""Row kernels for stores: columns whose row ``p`` belongs to ``dense[p]``.

Columns reach these kernels as 2-D arrays of unsigned words (see
``sparseset.store``), so one compiled loop serves every column dtype,
structured dtypes included.
"""

from numba import njit


@njit(cache=True)
def scatter_rows(column, positions, values):
    """``column[positions[k]] = values[k]`` in batch order: the last wins.

    A repeated position keeps the value of its last occurrence, as
    ``dict.update`` does; numpy's fancy assignment does not promise that.

    Examples
    --------
    >>> import numpy as np
    >>> column = np.zeros((3, 2), np.uint64)
    >>> values = np.array([[1, 1], [2, 2], [3, 3]], np.uint64)
    >>> scatter_rows(column, np.array([2, 0, 2]), values)
    >>> column[:, 0].tolist()
    [2, 0, 3]
    """
    for k in range(positions.shape[0]):
        row = positions[k]
        for j in range(column.shape[1]):
            column[row, j] = values[k, j]

"""What the models share: their integer parameters' checks and the
table from an agent's handle to its row.

Examples
--------
>>> import numpy as np
>>> positive_ints(n=3, width=10)
(3, 10)
>>> rows_by_handle(np.array([5, 2])).tolist()
[-1, -1, 1, -1, -1, 0]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def positive_ints(**values: object) -> tuple[int, ...]:
    """Each value as an int, in the order given, if it is an integer of at
    least 1.

    Raises
    ------
    TypeError
        If a value is not an integer (a bool included), naming it.
    ValueError
        If a value is below 1, naming it.
    """
    checked = []
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
        checked.append(int(value))
    return tuple(checked)


def rows_by_handle(handles: NDArray[np.int64]) -> NDArray[np.int64]:
    """A table from each handle to its position in ``handles``, -1 for the
    handles not there; as long as the largest handle. O(h + max)."""
    rows = np.full(int(handles.max(initial=0)) + 1, -1, np.int64)
    rows[handles] = np.arange(handles.shape[0])
    return rows

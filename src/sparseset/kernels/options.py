"""What every kernel module shares: compile options and the position sentinel.

Positions in ``dense`` are uint32 (:data:`ROW`, also the dtype of a view's
rows), and :data:`NOWHERE` (their largest value) is the answer for "no
position", so a set holds at most :data:`MAX_MEMBERS` members whatever its
index kind.

The kernels that run inside tight loops are compiled without NRT
(:data:`NO_NRT`): they never allocate, and without reference counting
numba does not wrap every array access in an atomic increment and decrement
(see :mod:`.element`). Overloads and inlined helpers take the same setting
as ``jit_options`` (:data:`OVERLOAD_NO_NRT`, which cannot hold ``cache``).
Both are typed ``Any``: numba's stubs do not list ``_nrt``.

Examples
--------
>>> int(NOWHERE) == MAX_MEMBERS, ROW, NO_NRT
(True, dtype('uint32'), {'cache': True, '_nrt': False})
"""

from typing import Any

import numpy as np

#: A position in ``dense``: the dtype of a view's rows.
ROW = np.dtype(np.uint32)
#: ``lookup``'s answer for an id with no position: past every position.
NOWHERE = np.uint32(0xFFFFFFFF)
#: Most members a set can hold: every uint32 position but NOWHERE.
MAX_MEMBERS = int(NOWHERE)
#: ``njit`` options of a cached kernel that runs without NRT.
NO_NRT: Any = {"cache": True, "_nrt": False}
#: ``jit_options`` of an overload that runs inside NRT-free kernels.
OVERLOAD_NO_NRT: Any = {"_nrt": False}

__all__ = ["MAX_MEMBERS", "NOWHERE", "NO_NRT", "OVERLOAD_NO_NRT", "ROW"]

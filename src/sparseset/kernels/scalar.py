"""Single-id entry points for the Python layer's scalar calls.

``5 in s``, ``s.add(7)`` and ``store.get(3)`` on one id cannot afford a
batch kernel's fixed costs (an id array to build, an answer array to
allocate), so these take the id itself and the index as its arrays
(:func:`.kinds.parts_of`), which numba's dispatcher types in C, on its
fast path. Each is a thin shell over
the single-id operation of :mod:`.element`, so the logic stays there.
"""

from .array_types import Int, IntArray, typed_njit
from .element import claim, find, swap_remove
from .index.kinds import Parts, from_parts
from .options import NO_NRT


@typed_njit(**NO_NRT)
def find_one(parts: Parts, dense: IntArray, n: Int, x: Int) -> int:
    """Position of ``x`` in ``dense[:n]``, -1 if not a member.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels import NO_POSITIONS, UPSERT_TUNING, upsert
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> batch = np.array([3, 5])
    >>> n, _ = upsert(sparse, dense, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> int(find_one(sparse, dense, n, 5)), int(find_one(sparse, dense, n, 4))
    (1, -1)
    """
    return find(from_parts(parts), dense, n, x)


@typed_njit(**NO_NRT)
def add_one(parts: Parts, dense: IntArray, n: Int, x: Int) -> int:
    """Add ``x`` if new: :func:`.element.claim` on the index's arrays.

    Returns its position (``n`` if appended), or -1 if the index cannot
    take it yet (the caller grows it through the batch path).

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> int(add_one(sparse, dense, 0, 6)), int(add_one(sparse, dense, 1, 6))
    (0, 0)
    """
    return claim(from_parts(parts), dense, n, x)


@typed_njit(**NO_NRT)
def discard_one(parts: Parts, dense: IntArray, n: int, x: Int) -> int:
    """Remove ``x`` by swap-and-pop if it is a member; return the new n.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.empty(8, np.uint32); dense = np.empty(8, np.int32)
    >>> n = 0
    >>> for x in (4, 6, 7):
    ...     n = add_one(sparse, dense, n, x) + 1
    >>> n = discard_one(sparse, dense, n, 4); dense[:n].tolist()
    [7, 6]
    """
    index = from_parts(parts)
    p = find(index, dense, n, x)
    if p < 0:
        return n
    return swap_remove(index, dense, n, p)

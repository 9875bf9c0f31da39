"""N-queens by backtracking with forward checking, on a :class:`~sparseset.SetArray`.

Each row's free columns are a domain in a SetArray; placing a queen removes
the attacked columns from the later rows, and one rollback restores them
all (:func:`count_queens`). OEIS A000170 has the counts. The baselines the
asv suite times it against (the same search on a boolean matrix with a
hand-made trail, and on Python sets) live with the suite, in
``asv_bench/benchmarks/_solver_floor.py``.
"""

from __future__ import annotations

from numba import njit

from ..jit import SetArrayState
from ..sets.set_array import SetArray

# -- N-queens -----------------------------------------------------------------


@njit(cache=True)
def _queens(domains: SetArrayState, n: int, row: int) -> int:
    if row == n:
        return 1
    count = 0
    # One checkpoint for all the placements in this row: rolling back to a
    # token keeps it live.
    token = domains.checkpoint()
    # Only later rows lose values below, so this row's members stay put.
    # Its view is taken per placement: one held across the recursive call
    # would keep a reference counted around every call.
    for j in range(domains.size(row)):
        column = domains.values(row)[j]
        alive = True
        for r in range(row + 1, n):
            d = r - row
            domains.remove(r, column)
            if column + d < n:
                domains.remove(r, column + d)
            if column - d >= 0:
                domains.remove(r, column - d)
            if domains.size(r) == 0:
                alive = False
                break
        if alive:
            count += _queens(domains, n, row + 1)
        domains.rollback(token)
    return count


def count_queens(n: int) -> int:
    """Solutions of the n-queens puzzle, by forward checking on a SetArray.

    Notes
    -----
    Exponential in ``n``, as every exhaustive search of the puzzle: it
    visits each node of the forward-checking search tree once, in O(n) per
    node to prune the later rows (three O(1) removals per row) and
    O(removed) to undo them (:meth:`~sparseset.SetArray.rollback`).

    Examples
    --------
    >>> [count_queens(n) for n in range(1, 9)]
    [1, 0, 0, 2, 10, 4, 40, 92]
    """
    if n == 0:
        return 1
    return int(_queens(SetArray(n, n).jit, n, 0))

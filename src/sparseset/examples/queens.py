"""N-queens by backtracking with forward checking, on a :class:`~sparseset.SetArray`.

Each row's free columns are a domain in a SetArray; placing a queen removes
the attacked columns from the later rows, and one rollback restores them
all. :func:`count_queens` (SetArray), :func:`count_queens_bool` (the same
search on a boolean matrix and a hand-made trail), :func:`count_queens_python`
(Python sets). OEIS A000170 has the counts.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..sets.set_array import SetArray, SetArrayState

# -- N-queens -----------------------------------------------------------------


@njit(cache=True)
def _queens(domains: SetArrayState, n: int, row: int) -> int:
    if row == n:
        return 1
    count = 0
    # Only later rows lose values below, so this row's members stay put.
    free = domains.values(row)
    # One checkpoint for all the placements in this row: rolling back to a
    # token keeps it live.
    token = domains.checkpoint()
    for j in range(free.shape[0]):
        column = free[j]
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

    Examples
    --------
    >>> [count_queens(n) for n in range(1, 9)]
    [1, 0, 0, 2, 10, 4, 40, 92]
    """
    if n == 0:
        return 1
    return int(_queens(SetArray(n, n).jit, n, 0))


@njit(cache=True)
def _queens_bool(
    free: NDArray[np.bool_],
    sizes: NDArray[np.int64],
    trail: NDArray[np.int64],
    depth: int,
    n: int,
    row: int,
) -> int:
    if row == n:
        return 1
    count = 0
    for column in range(n):
        if not free[row, column]:
            continue
        mark = depth
        alive = True
        for r in range(row + 1, n):
            d = r - row
            for c in (column, column + d, column - d):
                if 0 <= c < n and free[r, c]:
                    free[r, c] = False
                    sizes[r] -= 1
                    trail[depth, 0] = r
                    trail[depth, 1] = c
                    depth += 1
            if sizes[r] == 0:
                alive = False
                break
        if alive:
            count += _queens_bool(free, sizes, trail, depth, n, row + 1)
        while depth > mark:
            depth -= 1
            free[trail[depth, 0], trail[depth, 1]] = True
            sizes[trail[depth, 0]] += 1
    return count


def count_queens_bool(n: int) -> int:
    """:func:`count_queens` on a boolean matrix and a hand-made trail: the
    baseline a numba programmer writes without sparse sets.

    Examples
    --------
    >>> count_queens_bool(6)
    4
    """
    if n == 0:
        return 1
    free = np.ones((n, n), np.bool_)
    sizes = np.full(n, n, np.int64)
    trail = np.empty((3 * n * n, 2), np.int64)
    return int(_queens_bool(free, sizes, trail, 0, n, 0))


def count_queens_python(n: int) -> int:
    """:func:`count_queens` on a list of Python sets: the plain-Python baseline.

    Examples
    --------
    >>> count_queens_python(6)
    4
    """
    domains = [set(range(n)) for _ in range(n)]
    trail: list[tuple[int, int]] = []

    def solve(row: int) -> int:
        if row == n:
            return 1
        count = 0
        for column in list(domains[row]):
            mark = len(trail)
            alive = True
            for r in range(row + 1, n):
                d = r - row
                for c in (column, column + d, column - d):
                    if c in domains[r]:
                        domains[r].remove(c)
                        trail.append((r, c))
                if not domains[r]:
                    alive = False
                    break
            if alive:
                count += solve(row + 1)
            while len(trail) > mark:
                r, c = trail.pop()
                domains[r].add(c)
        return count

    return solve(0)

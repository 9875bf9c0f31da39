"""The baselines the solver benchmarks time ``sparseset.examples`` against.

The same searches as the examples, written as a numba or Python programmer
writes them without sparse sets: what ``solver.py``'s ratios are taken to.
``tests/programs/test_examples.py`` checks that they answer as the
examples do (the slow, obvious references are in ``tests/naive.py``).

- :func:`count_queens_bool`: N-queens by the examples' forward checking, in
  ``@njit`` on a boolean ``(n, n)`` matrix with a hand-made trail;
- :func:`count_queens_python`: the same search on a list of Python sets;
- :func:`components_bool`: breadth-first search in ``@njit`` with a boolean
  visited array and a queue array;
- :func:`components_union_find`: union-find with path halving in ``@njit``.

The names avoid asv's benchmark prefixes (``time_``, ``track_``, ``mem_``,
``peakmem_``) because asv imports every module in the package.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# -- N-queens -----------------------------------------------------------------


@njit(cache=True)
def _queens_bool(free, sizes, trail, depth, n, row):
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


def count_queens_bool(n):
    """``count_queens`` on a boolean matrix and a hand-made trail."""
    if n == 0:
        return 1
    free = np.ones((n, n), np.bool_)
    sizes = np.full(n, n, np.int64)
    trail = np.empty((3 * n * n, 2), np.int64)
    return int(_queens_bool(free, sizes, trail, 0, n, 0))


def count_queens_python(n):
    """``count_queens`` on a list of Python sets, with a trail of removals."""
    domains = [set(range(n)) for _ in range(n)]
    trail = []

    def solve(row):
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


# -- connected components -------------------------------------------------------


@njit(cache=True)
def _components_bool(indptr, indices, labels):
    n = indptr.shape[0] - 1
    seen = np.zeros(n, np.bool_)
    queue = np.empty(n, np.int64)
    count = 0
    tail = 0
    head = 0
    for start in range(n):
        if seen[start]:
            continue
        seen[start] = True
        queue[tail] = start
        tail += 1
        while head < tail:
            u = queue[head]
            labels[u] = count
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if not seen[v]:
                    seen[v] = True
                    queue[tail] = v
                    tail += 1
            head += 1
        count += 1
    return count


def components_bool(indptr, indices):
    """``components`` on a boolean visited array and a queue array."""
    labels = np.empty(indptr.shape[0] - 1, np.int64)
    return int(_components_bool(indptr, indices, labels)), labels


@njit(cache=True)
def _find_root(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(cache=True)
def _components_union_find(indptr, indices, labels):
    n = indptr.shape[0] - 1
    parent = np.arange(n)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            a = _find_root(parent, u)
            b = _find_root(parent, indices[e])
            if a != b:
                parent[max(a, b)] = min(a, b)
    # Number the roots in order of their smallest node, as the searches do.
    number = np.full(n, -1, np.int64)
    count = 0
    for u in range(n):
        root = _find_root(parent, u)
        if number[root] < 0:
            number[root] = count
            count += 1
        labels[u] = number[root]
    return count


def components_union_find(indptr, indices):
    """Connected components by union-find, labels numbered as ``components``'."""
    labels = np.empty(indptr.shape[0] - 1, np.int64)
    return int(_components_union_find(indptr, indices, labels)), labels

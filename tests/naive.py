"""Slow, obvious references for the worked examples in ``sparseset.examples``.

Each answers what an example computes, written the plainest way in pure
Python and by another algorithm than the example's, so that a test
comparing the two checks the example rather than repeating it (as stumpy's
``tests/naive.py`` does for its kernels). The fast baselines the asv suite
times the examples against are in ``asv_bench/benchmarks/_solver_floor.py``.
"""

from __future__ import annotations

import itertools

import numpy as np


def count_queens(n: int) -> int:
    """Solutions of the n-queens puzzle: every placement of one queen per
    row and column (a permutation), kept if no two share a diagonal.

    >>> [count_queens(n) for n in range(7)]
    [1, 1, 0, 0, 2, 10, 4]
    """
    return sum(
        len({c + r for r, c in enumerate(p)}) == n
        and len({c - r for r, c in enumerate(p)}) == n
        for p in itertools.permutations(range(n))
    )


def components(indptr: np.ndarray, indices: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of a CSR graph by union-find on Python lists,
    labelled as ``sparseset.examples.components`` labels them: in order of
    each component's smallest node.

    >>> count, labels = components(np.array([0, 1, 2, 2]), np.array([1, 0]))
    >>> count, labels.tolist()
    (2, [0, 0, 1])
    """
    nodes = len(indptr) - 1
    parent = list(range(nodes))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]  # path halving: short trees
            x = parent[x]
        return x

    for u in range(nodes):
        for v in indices[indptr[u] : indptr[u + 1]].tolist():
            a, b = root(u), root(v)
            if a != b:
                parent[max(a, b)] = min(a, b)
    numbers: dict[int, int] = {}
    labels = [numbers.setdefault(root(u), len(numbers)) for u in range(nodes)]
    return len(numbers), np.array(labels, np.int64)

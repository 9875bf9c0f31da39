"""Connected components by breadth-first search over a CSR graph.

:func:`components` uses a :class:`~sparseset.SparseSet` twin as both the
visited set and the work queue (its dense order is the visiting order);
:func:`random_graph` makes graphs to run it on. The baselines the asv suite
times it against (a boolean visited array with a queue array, and a
union-find) live with the suite, in ``asv_bench/benchmarks/_solver_floor.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..jit import Twin
from ..kernels.array_types import IntArray
from ..sets.sparse_set import SparseSet

# -- connected components -------------------------------------------------------


@njit(cache=True)
def _components(
    indptr: IntArray, indices: IntArray, visited: Twin, labels: NDArray[np.int64]
) -> int:
    count = 0
    head = 0
    for start in range(indptr.shape[0] - 1):
        if visited.contains(start):
            continue
        visited.add(start)
        # The members in dense order are the queue: walk them as they grow.
        while head < visited.size:
            u = visited.dense[head]
            labels[u] = count
            for e in range(indptr[u], indptr[u + 1]):
                visited.add(indices[e])
            head += 1
        count += 1
    return count


def components(indptr: np.ndarray, indices: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of a graph in CSR form, by breadth-first search
    with a SparseSet twin as the visited set and the work queue.

    Returns the number of components and each node's component label
    (numbered in order of their smallest node).

    Notes
    -----
    O(V + E) for V nodes and E edges: each node is visited once and each
    edge looked at once, with O(1) set operations on the twin.

    Examples
    --------
    >>> indptr = np.array([0, 1, 2, 2, 3, 4]); indices = np.array([1, 0, 4, 3])
    >>> count, labels = components(indptr, indices)
    >>> count, labels.tolist()
    (3, [0, 0, 1, 2, 2])
    """
    n = indptr.shape[0] - 1
    visited = SparseSet(capacity=n)
    labels = np.empty(n, np.int64)
    count = _components(indptr, indices, visited.jit, labels)
    return int(count), labels


def random_graph(
    nodes: int, edges: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """An undirected random graph in CSR form (each edge in both directions).

    Notes
    -----
    O(V + E log E) for V nodes and E edges (the edges are sorted by tail).

    Examples
    --------
    >>> indptr, indices = random_graph(10, 5)
    >>> indptr.shape, indices.shape
    ((11,), (10,))
    """
    rng = np.random.default_rng(seed)
    a = rng.integers(0, nodes, edges)
    b = rng.integers(0, nodes, edges)
    tails = np.concatenate([a, b])
    heads = np.concatenate([b, a])
    order = np.argsort(tails, kind="stable")
    indptr = np.zeros(nodes + 1, np.int64)
    np.cumsum(np.bincount(tails, minlength=nodes), out=indptr[1:])
    return indptr, heads[order].astype(np.int64)

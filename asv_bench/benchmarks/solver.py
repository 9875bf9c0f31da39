"""Solvers on sparse sets inside ``@njit`` code, next to baselines.

The workloads are ``sparseset.examples``'; read them for the algorithms.
The baselines are in ``_solver_floor.py``.

- ``NQueens``: count the solutions of the N-queens puzzle for ``N = 10``
  (724 of them) by backtracking with forward checking. Each row's free
  columns are a domain; placing a queen removes the attacked columns from
  the later rows, and backtracking restores them.

  - ``time_setarray``: ``count_queens``, the domains in a ``SetArray``
    driven through its twin from a cached ``@njit`` search (one
    ``checkpoint``/``rollback`` per placement);
  - ``time_numba_bool``: ``count_queens_bool``, the same search in
    ``@njit`` on a boolean ``(N, N)`` matrix with a hand-made trail: what a
    numba programmer writes without sparse sets;
  - ``time_python_sets``: ``count_queens_python``, the same search on a list
    of Python sets (quick enough to run at the same N).

- ``Components``: the connected components of a random undirected graph of
  ``1_000_000`` nodes and ``5_000_000`` edges (CSR, each edge both ways;
  ``random_graph(NODES, EDGES)``, built once per run by ``setup_cache``).

  - ``time_sparseset_twin``: ``components``, breadth-first search with a
    ``SparseSet`` twin as the visited set *and* the queue (its dense order
    is the visiting order);
  - ``time_numba_bool``: ``components_bool``, a boolean visited array and a
    queue array in ``@njit``;
  - ``time_union_find``: ``components_union_find``, union-find with path
    halving in ``@njit``.

  Every call allocates its own state (the set, or the boolean array and the
  queue, or the parent array) and the ``(NODES,)`` label array it returns.

Read the ratios to the baselines measured in the same run. Every kernel is
compiled, or loaded from numba's cache, in ``setup``: timed calls never
compile.
"""

import functools

from sparseset.examples import components, count_queens, random_graph

from ._size import sized
from ._solver_floor import (
    components_bool,
    components_union_find,
    count_queens_bool,
    count_queens_python,
)

QUEENS = sized(10, 6)
NODES = sized(1_000_000)
EDGES = sized(5_000_000)

# asv skips module attributes starting with "_", so the helpers below are
# never mistaken for benchmarks.


@functools.cache
def _warm_up():
    """Compile (or load from numba's cache) every solver before timing.

    Small instances with the benchmarks' argument types (Python int ``n``;
    int64 CSR arrays), so the timed calls hit the same specializations.
    """
    count_queens(4)
    count_queens_bool(4)
    graph = random_graph(10, 5)
    components(*graph)
    components_bool(*graph)
    components_union_find(*graph)


class NQueens:
    """Count the solutions of ``QUEENS``-queens, one count per call."""

    number = 1
    repeat = (10, 40, 10.0)

    def setup(self):
        _warm_up()

    def time_setarray(self):
        return count_queens(QUEENS)

    def time_numba_bool(self):
        return count_queens_bool(QUEENS)

    def time_python_sets(self):
        return count_queens_python(QUEENS)


class Components:
    """Connected components of a random graph, labels for every node."""

    number = 1
    repeat = (5, 15, 20.0)

    def setup_cache(self):
        # Once per run (a few seconds), handed to every process by asv.
        return random_graph(NODES, EDGES)

    def setup(self, graph):
        _warm_up()

    def time_sparseset_twin(self, graph):
        return components(*graph)

    def time_numba_bool(self, graph):
        return components_bool(*graph)

    def time_union_find(self, graph):
        return components_union_find(*graph)

"""Worked examples of per-element access from ``@njit`` code.

Two problems the sparse set was made for, each solved on sparseset inside
compiled code:

- :mod:`.queens`: N-queens by backtracking with forward checking on a
  :class:`~sparseset.SetArray` (:func:`count_queens`);
- :mod:`.components`: connected components by breadth-first search with a
  :class:`~sparseset.SparseSet` twin as visited set and queue
  (:func:`components`, on graphs from :func:`random_graph`).

The baselines the asv suite times them against are in
``asv_bench/benchmarks/_solver_floor.py``.
"""

from .components import components, random_graph
from .queens import count_queens

__all__ = ["components", "count_queens", "random_graph"]

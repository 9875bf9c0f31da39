"""Worked examples of per-element access from ``@njit`` code, with baselines.

Two problems the sparse set was made for, each solved on sparseset inside
compiled code:

- :mod:`.queens`: N-queens by backtracking with forward checking on a
  :class:`~sparseset.SetArray` (:func:`count_queens`);
- :mod:`.components`: connected components by breadth-first search with a
  :class:`~sparseset.SparseSet` twin as visited set and queue
  (:func:`components`).
"""

from .components import components, components_bool, components_union_find, random_graph
from .queens import count_queens, count_queens_bool, count_queens_python

__all__ = [
    "components",
    "components_bool",
    "components_union_find",
    "count_queens",
    "count_queens_bool",
    "count_queens_python",
    "random_graph",
]

"""Spaces: containers of ids at positions, and who is near whom.

- :mod:`.grid` is :class:`Grid`, ids bucketed into cubic cells, with
  neighbour queries (:meth:`Grid.within`, :meth:`Grid.pairs`) and the
  members of a cell (:meth:`Grid.at`).
"""

from .grid import Grid

__all__ = ["Grid"]

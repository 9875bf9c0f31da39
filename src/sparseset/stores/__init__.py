"""Stores: ids with struct-of-arrays columns, and mappings from id to value.

- :mod:`.component_store` is :class:`ComponentStore`;
- :mod:`.sparse_map` is :class:`SparseMap`, a mapping over one column.
"""

from .component_store import ComponentStore, UnknownColumnError
from .sparse_map import SparseMap

__all__ = ["ComponentStore", "SparseMap", "UnknownColumnError"]

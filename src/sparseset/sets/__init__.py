"""Sets of integer ids: the SparseSet, many small sets, index kinds and id input.

- :mod:`.ids` turns user input (ints, lists, any numpy integer array,
  Arrow, pandas or polars columns) into id arrays, and names bad input;
- :mod:`.index_kinds` is the Python side of the index kinds (flat, paged,
  hash): their ranges, allocation and capacity;
- :mod:`.sparse_set` is :class:`SparseSet`;
- :mod:`.set_array` is :class:`SetArray`, many small sets with one trail.
"""

from .checkpoints import Checkpoint
from .set_array import SetArray
from .sparse_set import SparseSet

__all__ = ["Checkpoint", "SetArray", "SparseSet"]

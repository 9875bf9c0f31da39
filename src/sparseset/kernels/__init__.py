"""Compiled kernels on plain numpy arrays.

A set is three things: ``sparse`` (uint32, id -> position in dense, garbage
where not a member), ``dense`` (members packed in ``dense[:n]``) and ``n``.
Kernels hold no Python objects and validate nothing; they are compiled on
first call with ``cache=True`` and specialise on the id dtype through
numba's own typing, so each operation is written once.
"""

from .algebra import filter_into
from .batch import (
    add,
    contains,
    discard,
    discard_rows,
    first_mismatch,
    index,
    keep_only,
    sort,
    upsert,
)
from .element import find, grown_length, push, swap_remove
from .rows import scatter_rows

__all__ = [
    "add",
    "contains",
    "discard",
    "discard_rows",
    "filter_into",
    "find",
    "first_mismatch",
    "grown_length",
    "index",
    "keep_only",
    "push",
    "scatter_rows",
    "sort",
    "swap_remove",
    "upsert",
]

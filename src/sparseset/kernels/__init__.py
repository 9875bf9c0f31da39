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
from .element import find, grown_length, push, swap_members, swap_remove
from .entities import (
    INDEX_BITS,
    INDEX_MASK,
    create_entities,
    destroy_entities,
    handles_of,
    resolve,
)
from .rows import pack_back, pack_front, scatter_rows

__all__ = [
    "INDEX_BITS",
    "INDEX_MASK",
    "add",
    "contains",
    "create_entities",
    "destroy_entities",
    "discard",
    "discard_rows",
    "filter_into",
    "find",
    "first_mismatch",
    "grown_length",
    "handles_of",
    "index",
    "keep_only",
    "pack_back",
    "pack_front",
    "push",
    "resolve",
    "scatter_rows",
    "sort",
    "swap_members",
    "swap_remove",
    "upsert",
]

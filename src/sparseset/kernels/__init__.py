"""Compiled kernels on plain numpy arrays.

A set is three things: ``sparse`` (the index: id -> position in dense,
garbage where not a member), ``dense`` (members packed in ``dense[:n]``)
and ``n``. The index is a uint32 array (flat), a :class:`PagedIndex` or a
:class:`HashIndex`; kernels reach it only through :mod:`.kinds`. Kernels
hold no Python objects and validate nothing; they are compiled on first
call with ``cache=True`` and specialise on the id dtype and the index kind
through numba's own typing, so each operation is written once.
"""

# First, before any kernel is declared: importing caching gives every
# cached kernel of the package the checked cache.
from . import caching  # noqa: F401

# isort: split

from . import allocation, marks, partition
from .algebra import filter_into
from .batch import (
    DISCARD_TUNING,
    JOIN_TUNING,
    LOOKUP_TUNING,
    NO_POSITIONS,
    UPSERT_TUNING,
    any_non_finite,
    discard,
    discard_rows,
    distinct_estimate,
    find_all,
    first_mismatch,
    grown_index,
    id_bounds,
    keep_only,
    move_index,
    reindex,
    sort,
    unindex,
    upsert,
)
from .element import claim, find, grown_length, push, swap_members, swap_remove
from .entities import (
    GENERATION_MASK,
    INDEX_BITS,
    INDEX_MASK,
    LIVE,
    create_entities,
    destroy_entities,
    handles_at,
    handles_of,
    index_handles,
    live_index,
    resolve,
    rows_of_handles,
)
from .index import flat, hashed, kinds, paged
from .index.hashed import HashIndex
from .index.paged import PagedIndex
from .rows import (
    ACCUMULATE_TUNING,
    candidates_for,
    pack_back,
    pack_front,
    rows_stamped_after,
    scatter_rows,
    stamp_rows,
    take,
    upsert_accumulate,
)
from .scalar import add_one, discard_one, find_one

__all__ = [
    "ACCUMULATE_TUNING",
    "DISCARD_TUNING",
    "GENERATION_MASK",
    "INDEX_BITS",
    "INDEX_MASK",
    "JOIN_TUNING",
    "LIVE",
    "LOOKUP_TUNING",
    "NO_POSITIONS",
    "UPSERT_TUNING",
    "HashIndex",
    "PagedIndex",
    "add_one",
    "allocation",
    "any_non_finite",
    "candidates_for",
    "claim",
    "create_entities",
    "destroy_entities",
    "discard",
    "discard_one",
    "discard_rows",
    "distinct_estimate",
    "filter_into",
    "find",
    "find_all",
    "find_one",
    "first_mismatch",
    "flat",
    "grown_index",
    "grown_length",
    "handles_at",
    "handles_of",
    "hashed",
    "id_bounds",
    "index_handles",
    "keep_only",
    "kinds",
    "live_index",
    "marks",
    "move_index",
    "pack_back",
    "pack_front",
    "paged",
    "partition",
    "push",
    "reindex",
    "resolve",
    "rows_of_handles",
    "rows_stamped_after",
    "scatter_rows",
    "sort",
    "stamp_rows",
    "swap_members",
    "swap_remove",
    "take",
    "unindex",
    "upsert",
    "upsert_accumulate",
]

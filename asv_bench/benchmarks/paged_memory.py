"""Bytes per member of the paged index, beside the hash index's.

Two draws, the cases issue 15 sets the paged index's memory by:

- ``"100k uniform 2**40"``: 100,000 ids drawn uniformly from ``[0, 2**40)``,
  almost every one alone in its block of 4096 ids and in its region of 2**24.
  With a 16 KiB page per touched block, this took 3.6 GiB (37,000 bytes per
  member); the bound is 64 MiB (671 bytes per member);
- ``"1M clustered 2**40"``: the ``"clustered 2**40"`` draw of
  :mod:`.index_kinds`, 1M ids packed a quarter full into 977 blocks of 4096
  ids spread over ``[0, 2**40)``, where pages pay off.

``track_nbytes_per_member`` is ``s.nbytes / len(s)`` for a new set of the
kind that one ``add`` filled with the draw: its index with the pools' spare
room, and ``dense`` (8 bytes per member, sized by the batch). Hash is the
baseline: its memory follows the members whatever their spread.
"""

import functools

from sparseset import SparseSet

from ._size import sized
from .index_kinds import CLUSTERED, WIDE, _members_of
from .sparse_set import _rng

KINDS = ["paged", "hash"]
UNIFORM_100K = "100k uniform 2**40"
CLUSTERED_1M = "1M clustered 2**40"
PARAMS = (KINDS, [UNIFORM_100K, CLUSTERED_1M])
PARAM_NAMES = ["kind", "ids"]

# asv skips module attributes starting with "_", so the data builders below
# are never mistaken for benchmarks.


@functools.cache
def _ids(draw):
    if draw == UNIFORM_100K:
        return _rng(50).integers(0, WIDE, sized(100_000))
    return _members_of(CLUSTERED)


@functools.cache
def _set(kind, draw):
    return SparseSet.from_ids(_ids(draw), index=kind)


class Memory:
    """Bytes a set holds per member, index and ``dense`` together."""

    params = PARAMS
    param_names = PARAM_NAMES
    unit = "bytes per member"

    def setup(self, kind, ids):
        self.s = _set(kind, ids)

    def track_nbytes_per_member(self, kind, ids):
        return self.s.nbytes / len(self.s)

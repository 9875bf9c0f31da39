"""The three index kinds side by side: add, contains and bytes per member.

Every workload holds ``N = 1_000_000`` distinct ids, in random order, and is
parametrized by ``kind`` (``"flat"``, ``"paged"``, ``"hash"``) and by
``ids``, the draw of the ids:

- ``"uniform 4M"``: the members of the ``sparse_set`` suite, drawn from a
  ``4_000_000``-id space (a quarter of it), for all three kinds;
- ``"clustered 2**40"``: the same draw with each of its 977 pages of 4096
  ids moved to a random page-aligned block of ``[0, 2**40)``. The ids are
  as dense within their pages as in ``"uniform 4M"`` and touch as many
  pages, but they are spread over the wide space, which is what the paged
  index is for; hash runs on it too, so the two compare on equal data;
- ``"uniform 2**40"``: ids drawn uniformly from ``[0, 2**40)``, paged and
  hash. Almost every id lands alone in its page: the paged index's worst
  case, where its leaves stay small (see ``paged_memory``).

flat cannot hold ids past ``2**31``: ``setup`` skips those combinations
(``NotImplementedError``).

What to read (ratios of methods in the same run, not absolute times; ns
per id = time / N):

- ``Add.time_add``: a new empty set (no capacity hint) adds the N ids. The
  set sizes its storage from the batch, so the time includes allocating it
  and the first-touch page faults on it: what building a set from scratch
  costs. ``sparse_set.Add`` times the flat add into a reserved, already
  mapped set instead.
- ``Contains.time_contains_serial``: one batch ``contains`` of N queries
  (half members, half non-members of the same draw) through the serial
  kernel ``sparseset.kernels.find_all`` on the set's arrays: the kinds at
  equal threading. ``paged / flat`` and ``hash / flat`` at ``"uniform 4M"``
  are the price of the wider ranges.
- ``Contains.time_contains``: the public ``s.contains``, threaded on batches
  this size when numba has more than one thread (see ``parallel``).
- ``time_typed_dict`` (``kind = "hash"`` only): the baseline for hash, a
  ``numba.typed.Dict`` of int64 id -> int64 position filled with the same
  ids (``Add``) or queried with the same ids by a cached ``@njit`` loop
  (``Contains``); ``typed dict / time_contains_serial`` is hash's lookup
  speedup. The fill presizes the dict to N keys (``n_keys``), as the set
  sizes itself from the batch, so neither rehashes as it grows.
- ``Memory.track_nbytes_per_member``: ``s.nbytes / N`` for the set built
  as in ``time_add``, in bytes.

All data is deterministic (fixed seeds) and built once per benchmark process
by the cached ``_...`` functions below; ``setup`` only hands out fresh
mutable state. The one thing left to chance is the hash index's seed, which
every new hash set draws itself.
"""

import functools

import numpy as np
from asv_runner.benchmarks.mark import skip_for_params
from numba import njit, types
from numba.typed import Dict

from sparseset import SparseSet, kernels

from .sparse_set import SPACE, N, _contains_queries, _members, _rng

KINDS = ["flat", "paged", "hash"]
UNIFORM_4M = "uniform 4M"
CLUSTERED = "clustered 2**40"
UNIFORM_WIDE = "uniform 2**40"
DRAWS = [UNIFORM_4M, CLUSTERED, UNIFORM_WIDE]
PARAMS = (KINDS, DRAWS)
PARAM_NAMES = ["kind", "ids"]
#: The wide id space, and the paged index's page of ids.
WIDE = 2**40
PAGE = 4096
#: The combinations no set of that kind can hold, and why.
IMPOSSIBLE = {
    ("flat", CLUSTERED): "flat holds ids in [0, 2**31) only",
    ("flat", UNIFORM_WIDE): "flat holds ids in [0, 2**31) only",
}
#: The typed dict baseline runs next to hash only.
NOT_HASH = [(kind, ids) for kind in KINDS if kind != "hash" for ids in DRAWS]

# asv skips module attributes starting with "_", so the data builders and
# kernels below are never mistaken for benchmarks.


def _check_possible(kind, ids):
    reason = IMPOSSIBLE.get((kind, ids))
    if reason is not None:
        raise NotImplementedError(f"index={kind!r} on {ids!r}: {reason}")


@functools.cache
def _block_starts():
    """One random page-aligned block of ``[0, 2**40)`` per page of the 4M space."""
    pages = -(-SPACE // PAGE)
    return _rng(30).choice(WIDE // PAGE, pages, replace=False) * PAGE


def _clustered(ids):
    """Ids of the 4M space moved, page by page, to their blocks."""
    return _block_starts()[ids // PAGE] + ids % PAGE


@functools.cache
def _uniform_wide():
    """N members then N/2 non-members, distinct, uniform over ``[0, 2**40)``.

    A few spare draws cover the (about two) duplicates; they are removed by
    sorting, which is much faster here than ``np.unique``.
    """
    rng = _rng(31)
    ids = np.sort(rng.integers(0, WIDE, N + N // 2 + 1_000))
    distinct = ids[np.concatenate([[True], ids[1:] != ids[:-1]])]
    return rng.permutation(distinct)[: N + N // 2]


@functools.cache
def _members_of(ids):
    """The N member ids of a draw, in random order."""
    if ids == UNIFORM_4M:
        return _members()
    if ids == CLUSTERED:
        return _clustered(_members())
    return np.ascontiguousarray(_uniform_wide()[:N])


@functools.cache
def _queries_of(ids):
    """N queries of a draw, half members and half non-members, shuffled."""
    if ids == UNIFORM_4M:
        return _contains_queries()
    if ids == CLUSTERED:
        return _clustered(_contains_queries())
    rng = _rng(32)
    wide = _uniform_wide()
    hits = rng.choice(wide[:N], N // 2, replace=False)
    return rng.permutation(np.concatenate([hits, wide[N:]]))


@functools.cache
def _member_set(kind, ids):
    """The set ``time_add`` builds: a new set of the kind, then one add."""
    return SparseSet.from_ids(_members_of(ids), index=kind)


@njit(cache=True)
def _typed_dict_fill(ids):
    """A new typed dict mapping ``ids[k]`` -> ``k``, presized to the batch."""
    d = Dict.empty(types.int64, types.int64, n_keys=ids.shape[0])
    for k in range(ids.shape[0]):
        d[ids[k]] = k
    return d


@njit(cache=True)
def _typed_dict_contains(d, q, out):
    """``out[k] = q[k] in d``: the typed dict's batch membership."""
    for k in range(q.shape[0]):
        out[k] = q[k] in d


@functools.cache
def _member_dict(ids):
    return _typed_dict_fill(_members_of(ids))


def _state(s):
    """The set's arrays (``sparse``, ``dense``, ``n``), for the serial
    kernel's row: the library's own state, read as its engine does."""
    return s._engine.state


@functools.cache
def _warm_up():
    """Compile (or load from numba's cache) every kernel before timing.

    Uses int64 ids and queries like the workloads (wide ones too, for paged
    and hash), so the same specialisations are hit.
    """
    small = np.arange(4, dtype=np.int64)
    out = np.empty(4, np.bool_)
    for kind in KINDS:
        ids = small if kind == "flat" else small << 36
        s = SparseSet.from_ids(ids, index=kind)
        s.contains(ids)
        a = _state(s)
        kernels.find_all(a.sparse, a.dense, a.n, ids, out, *kernels.LOOKUP_TUNING)
    _typed_dict_contains(_typed_dict_fill(small), small, out)


class Add:
    """Add the N ids of a draw to a new, empty set of each kind.

    Each timed call builds its own set (or typed dict) and keeps it until
    the next ``setup``, which drops it, so freeing it is not timed.
    """

    params = PARAMS
    param_names = PARAM_NAMES
    number = 1

    def setup(self, kind, ids):
        _check_possible(kind, ids)
        _warm_up()
        self.ids = _members_of(ids)
        self.s = None
        self.d = None

    def time_add(self, kind, ids):
        self.s = SparseSet(index=kind)
        self.s.add(self.ids)

    @skip_for_params(NOT_HASH)
    def time_typed_dict(self, kind, ids):
        self.d = _typed_dict_fill(self.ids)


class Contains:
    """Query N ids (half members) against a set of the N ids of a draw.

    The answer is a new bool array in every method.
    """

    params = PARAMS
    param_names = PARAM_NAMES
    number = 1

    def setup(self, kind, ids):
        _check_possible(kind, ids)
        _warm_up()
        self.q = _queries_of(ids)
        self.s = _member_set(kind, ids)
        if kind == "hash":
            self.d = _member_dict(ids)

    def time_contains(self, kind, ids):
        return self.s.contains(self.q)

    def time_contains_serial(self, kind, ids):
        a = _state(self.s)
        out = np.empty(self.q.shape[0], np.bool_)
        kernels.find_all(a.sparse, a.dense, a.n, self.q, out, *kernels.LOOKUP_TUNING)
        return out

    @skip_for_params(NOT_HASH)
    def time_typed_dict(self, kind, ids):
        out = np.empty(self.q.shape[0], np.bool_)
        _typed_dict_contains(self.d, self.q, out)
        return out


class Memory:
    """Bytes a set of each kind holds per member, for the N ids of a draw.

    Its index and ``dense``, as ``s.nbytes`` counts them, for the set built
    as in ``Add.time_add`` (``dense`` exactly N long: the set sizes it from
    the batch).
    """

    params = PARAMS
    param_names = PARAM_NAMES
    unit = "bytes"

    def setup(self, kind, ids):
        _check_possible(kind, ids)
        self.s = _member_set(kind, ids)

    def track_nbytes_per_member(self, kind, ids):
        return self.s.nbytes / N

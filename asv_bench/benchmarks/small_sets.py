"""Small sets: 20 ids each, the set of a cell's occupants or a node's
neighbours, next to Python's ``set`` and pyroaring's ``BitMap``.

Each timed call runs the operation ``CALLS = 1000`` times on the same two
sets (ids in ``[0, 1000)``, half shared), so **asv's time in µs is the time
of one operation in ns**. The results are each library's own type. Rows:
``a & b``, ``a | b``, ``a - b``, ``a ^ b``, ``a <= b``, ``a == b``,
``a.isdisjoint(b)``; ``x in a`` / ``a.add(x)`` of a member, ``a.add(x)``
of a new id and ``a.discard(x)`` of a member; building a set from a list
and copying it.
pyroaring's rows are skipped where it is not installed (it is in the
``bench`` extra).
"""

import functools

import numpy as np

from sparseset import SparseSet

try:
    import pyroaring
except ImportError:
    pyroaring = None

CALLS = 1_000
SIZE = 20
LIBRARIES = ["sparseset", "set", "pyroaring"]
PARAM_NAMES = ["library"]


@functools.cache
def _ids():
    """Two lists of SIZE distinct ids below 1000, sharing SIZE // 2."""
    rng = np.random.default_rng(60)
    pool = rng.choice(1000, 2 * SIZE - SIZE // 2, replace=False).tolist()
    return pool[:SIZE], pool[SIZE - SIZE // 2 :]


def _constructor(library):
    """What builds a set of ``library`` from a list of ids."""
    if library == "sparseset":
        return SparseSet.from_ids
    if library == "set":
        return set
    if pyroaring is None:
        raise NotImplementedError("pyroaring is not installed")
    return pyroaring.BitMap


def _make(library, ids):
    return _constructor(library)(ids)


class Algebra:
    """``a & b``, ``a | b`` and ``a - b`` of two 20-id sets."""

    params = LIBRARIES
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, library):
        left, right = _ids()
        self.a, self.b = _make(library, left), _make(library, right)

    def time_and(self, library):
        a, b = self.a, self.b
        for _ in range(CALLS):
            a & b

    def time_or(self, library):
        a, b = self.a, self.b
        for _ in range(CALLS):
            a | b

    def time_sub(self, library):
        a, b = self.a, self.b
        for _ in range(CALLS):
            a - b

    def time_xor(self, library):
        a, b = self.a, self.b
        for _ in range(CALLS):
            a ^ b

    def time_le(self, library):
        a, b = self.a, self.b
        for _ in range(CALLS):
            a <= b  # noqa: B015

    def time_eq(self, library):
        a, b = self.a, self.b
        for _ in range(CALLS):
            a == b  # noqa: B015

    def time_isdisjoint(self, library):
        a, b = self.a, self.b
        for _ in range(CALLS):
            a.isdisjoint(b)


class OneId:
    """``x in a`` and ``a.add(x)`` of a member of a 20-id set; ``a.add(x)``
    of ``CALLS`` new ids (below 2000, so a flat index spans them once
    grown in setup) and ``a.discard(x)`` of them again."""

    params = LIBRARIES
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, library):
        left, _ = _ids()
        self.a = _make(library, left)
        self.x = left[3]
        # Room made once, outside the timed calls, as a set in use has it.
        self.fresh = [x for x in range(2 * CALLS) if x not in set(left)][:CALLS]
        self.grown = _make(library, left)
        for x in self.fresh:
            self.grown.add(x)
        for x in self.fresh:
            self.grown.discard(x)
        self.full = _make(library, left + self.fresh)

    def time_in(self, library):
        a, x = self.a, self.x
        for _ in range(CALLS):
            x in a  # noqa: B015

    def time_add_member(self, library):
        add, x = self.a.add, self.x
        for _ in range(CALLS):
            add(x)

    def time_add_new(self, library):
        add = self.grown.add
        for x in self.fresh:
            add(x)

    def time_discard_member(self, library):
        discard = self.full.discard
        for x in self.fresh:
            discard(x)


class Build:
    """A set from a list of 20 ids, and a copy of one."""

    params = LIBRARIES
    param_names = PARAM_NAMES
    number = 1
    repeat = (20, 200, 4.0)

    def setup(self, library):
        self.ids, _ = _ids()
        self.make = _constructor(library)
        self.a = self.make(self.ids)

    def time_from_list(self, library):
        make, ids = self.make, self.ids
        for _ in range(CALLS):
            make(ids)

    def time_copy(self, library):
        a = self.a
        for _ in range(CALLS):
            a.copy()

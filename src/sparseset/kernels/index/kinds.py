"""The index operations every kernel uses, dispatched on the index's type.

An index maps an id to its position in ``dense``. Three kinds exist, one
module each: :mod:`.flat` (a plain uint32 array), :mod:`.paged`
(:class:`~.paged.PagedIndex`) and :mod:`.hashed` (:class:`~.hashed.HashIndex`).
The functions here are numba overloads: a kernel calls ``lookup(index, x)``
and numba compiles that kernel once per index type with the right kind's
code inlined, so every set operation is written once for all kinds.

Called from plain Python (doctests, or with ``NUMBA_DISABLE_JIT=1``) they
dispatch on the Python type instead.

``lookup`` answers a *candidate* position (or NOWHERE): a slot may hold
garbage for a non-member, and only ``dense`` proves membership.
``lookup_many`` does a batch of lookups in the order of loads the kind
overlaps best. ``insert`` returns False when the index needs to ``grow``
(``room``, then ``move``) first; ``erase`` reclaims an id's slot where the
kind can (hash), and may do nothing (flat, paged).
"""

from collections.abc import Callable
from typing import Any, Protocol, TypeAlias

import numpy as np
from numba import types
from numba.extending import overload
from numpy.typing import NDArray

from .. import options
from ..array_types import Bool, FlatIndex, Int, IntArray
from ..options import OVERLOAD_NO_NRT
from . import flat, hashed, paged
from .hashed import HashIndex
from .paged import PagedIndex

#: An index of any kind.
Index: TypeAlias = FlatIndex | PagedIndex | HashIndex
#: An index as plain arrays, the form :func:`from_parts` takes.
Parts: TypeAlias = FlatIndex | tuple[NDArray[Any], ...]
#: Past every position: ``lookup``'s answer for an id with no slot.
NOWHERE = options.NOWHERE


class KindModule(Protocol):
    """What a kind module (:mod:`.flat`, :mod:`.paged`, :mod:`.hashed`)
    defines: the operations below dispatch to these.

    ``index`` is the module's own index type; :func:`kind_of` pairs each
    index with its module, which the types cannot say, hence ``Any``.
    """

    def lookup(self, index: Any, x: Int) -> np.uint32: ...
    def lookup_many(
        self,
        index: Any,
        ids: IntArray,
        start: Int,
        stop: Int,
        out: IntArray,
        ahead: Int,
    ) -> None: ...
    def accepts(self, index: Any, x: Int) -> Bool: ...
    def in_range(self, index: Any, x: Int) -> Bool: ...
    def locate(self, index: Any, x: Int) -> np.uint64: ...
    def held(self, index: Any, slot: np.uint64, x: Int) -> np.uint32: ...
    def store(self, index: Any, slot: np.uint64, x: Int, p: Int) -> Bool: ...
    def vacant(self, index: Any, slot: np.uint64) -> Bool: ...
    def tally(self, index: Any, slot: np.uint64, x: Int, p: Int) -> int: ...
    def tally_from(self, index: Any, slot: np.uint64, p: Int) -> None: ...
    def settle(self, index: Any, slot: Int) -> tuple[np.uint64, np.uint64]: ...
    def slot_count(self, index: Any) -> np.uint64: ...

    # A kind whose PREFETCHES_SLOTS is True also defines prefetch_slot(index,
    # x); the others have no slot address to prefetch, so no such function.
    PREFETCHES_SLOTS: bool
    LOOKS_AHEAD: bool
    KEYED: bool

    def erase(self, index: Any, x: Int) -> None: ...
    def room(self, index: Any, n: Int, members: Int, top: Int) -> Index: ...
    def move(self, index: Any, grown: Any, dense: IntArray, n: Int) -> None: ...
    def row_limit(self, index: Any) -> Int: ...


def kind_of(index: Index) -> KindModule:
    """The module implementing ``index``'s kind (Python-side dispatch).

    Examples
    --------
    >>> import numpy as np
    >>> kind_of(np.empty(4, np.uint32)).__name__
    'sparseset.kernels.index.flat'
    """
    if isinstance(index, PagedIndex):
        return paged
    if isinstance(index, HashIndex):
        return hashed
    if isinstance(index, np.ndarray):
        return flat
    raise TypeError(f"not a sparse index: {type(index).__name__}")


def kind_of_type(index: types.Type) -> KindModule | None:
    """The module implementing a numba type's kind, None if not an index."""
    if isinstance(index, types.Array):
        return flat
    cls = getattr(index, "instance_class", None)
    if cls is PagedIndex:
        return paged
    if cls is HashIndex:
        return hashed
    return None


#: What an overload below answers numba: the implementation for the
#: argument types it was given, or None if they are not its to handle.
_Implementation: TypeAlias = Callable[..., object] | None


def _implementation(index: types.Type, name: str) -> _Implementation:
    kind = kind_of_type(index)
    if kind is None:
        return None
    implementation: Callable[..., object] = getattr(kind, name)
    return implementation


def lookup(index: Index, x: Int) -> np.uint32:
    """Candidate position of ``x`` in dense, or NOWHERE.

    Examples
    --------
    >>> import numpy as np
    >>> sparse = np.zeros(4, np.uint32)
    >>> int(lookup(sparse, 2)), bool(lookup(sparse, 9) == NOWHERE)
    (0, True)
    """
    return kind_of(index).lookup(index, x)


def lookup_many(
    index: Index, ids: IntArray, start: Int, stop: Int, out: IntArray, ahead: Int
) -> None:
    """``out[k - start] = lookup(index, ids[k])`` for every k in ``[start, stop)``.

    ``out`` is a uint64 array (paged keeps slot addresses there between its
    passes). The same answers as a loop of :func:`lookup`, in the order of
    loads each kind overlaps best (paged: the directory first, hash:
    prefetching ``ahead`` ids on, see
    :data:`~sparseset.config.HASH_PREFETCH_AHEAD`).

    Examples
    --------
    >>> import numpy as np
    >>> ix = paged.empty(); insert(ix, 2**40, 0)
    True
    >>> out = np.empty(2, np.uint64)
    >>> lookup_many(ix, np.array([7, 2**40]), 0, 2, out, 32); int(out[1])
    0
    """
    kind_of(index).lookup_many(index, ids, start, stop, out, ahead)


def accepts(index: Index, x: Int) -> Bool:
    """Whether ``insert`` may store ``x`` (in range; for flat, below capacity).

    Examples
    --------
    >>> import numpy as np
    >>> bool(accepts(np.empty(4, np.uint32), 3)), bool(accepts(paged.empty(), 2**48))
    (True, False)
    """
    return kind_of(index).accepts(index, x)


def in_range(index: Index, x: Int) -> Bool:
    """Whether ``x`` is in the id range of ``index``'s kind (flat: 2**31).

    Examples
    --------
    >>> import numpy as np
    >>> bool(in_range(np.empty(4, np.uint32), 3_000))
    True
    >>> bool(in_range(hashed.empty(), -1))
    False
    """
    return kind_of(index).in_range(index, x)


def locate(index: Index, x: Int) -> np.uint64:
    """Where the slot of ``x``, an id the index accepts, is: a handle for
    :func:`held` and :func:`store`, valid until the index changes.

    Examples
    --------
    >>> import numpy as np
    >>> int(locate(np.empty(8, np.uint32), 5))
    5
    """
    return kind_of(index).locate(index, x)


def held(index: Index, slot: np.uint64, x: Int) -> np.uint32:
    """The candidate position of ``x`` in ``slot`` (from :func:`locate`).

    Examples
    --------
    >>> ix = hashed.empty(seed=1); insert(ix, 9, 4)
    True
    >>> int(held(ix, locate(ix, 9), 9))
    4
    """
    return kind_of(index).held(index, slot, x)


def store(index: Index, slot: np.uint64, x: Int, p: Int) -> Bool:
    """Put position ``p`` for ``x`` in ``slot`` (from :func:`locate`); False
    if the index must ``grow`` first (nothing changed).

    :func:`locate`, :func:`held` then :func:`store` find and claim a slot in
    one probe or walk, where :func:`lookup` then :func:`insert` take two.

    Examples
    --------
    >>> ix = paged.empty(); slot = locate(ix, 2**40)
    >>> store(ix, slot, 2**40, 3), int(lookup(ix, 2**40))
    (True, 3)
    """
    return kind_of(index).store(index, slot, x, p)


def vacant(index: Index, slot: np.uint64) -> Bool:
    """Whether ``slot`` (from :func:`locate`) is known to hold no id: a
    :func:`keyed` kind's free slot. The other kinds cannot tell garbage
    from a position and answer False.

    Examples
    --------
    >>> ix = hashed.empty(seed=1); slot = locate(ix, 9)
    >>> bool(vacant(ix, slot)), store(ix, slot, 9, 0), bool(vacant(ix, slot))
    (True, True, False)
    >>> bool(vacant(np.zeros(4, np.uint32), np.uint64(1)))
    False
    """
    return kind_of(index).vacant(index, slot)


def tally(index: Index, slot: np.uint64, x: Int, p: Int) -> int:
    """Count an occurrence of ``x`` in its ``slot`` (from :func:`locate`),
    where the kind keeps counts in its slots (hash; the others answer 0).

    Answers 2 where a free slot took ``x`` with position ``p`` and a count
    of one, 1 where the slot was counting already and counts one more, 0
    where it holds a plain position (the caller adds to the row, or opens
    a count there with :func:`tally_from`), and -1
    where a new ``x`` does not fit (or ``p`` is NOWHERE): nothing changed.
    A counting slot's position reads as garbage until :func:`settle`; so a
    counter's pass counts its new ids' occurrences in the one cache line
    it looks them up in, and writes their rows once, when it settles.

    Examples
    --------
    >>> ix = hashed.empty(seed=1); slot = locate(ix, 9)
    >>> tally(ix, slot, 9, 0), tally(ix, slot, 9, 0)
    (2, 1)
    >>> [int(a) for a in settle(ix, slot)], int(lookup(ix, 9))
    ([0, 2], 0)
    """
    return kind_of(index).tally(index, slot, x, p)


def tally_from(index: Index, slot: np.uint64, p: Int) -> None:
    """Make ``slot`` (from :func:`locate`), where :func:`tally` answered 0 (a
    plain position), count from one occurrence, for the id at position
    ``p``: the caller has proven it the slot's member by ``dense``, or
    appended the slot's id at ``p`` where the position it held was stale.
    So a counter's pass counts its members' occurrences in their slots
    too, and adds to their rows once, when it settles. Nothing where the
    kind keeps no counts (its :func:`tally` never answers so).

    Examples
    --------
    >>> ix = hashed.empty(seed=1); insert(ix, 9, 3)
    True
    >>> slot = locate(ix, 9); tally(ix, slot, 9, 5)
    0
    >>> tally_from(ix, slot, 3); tally(ix, slot, 9, 5)
    1
    >>> [int(a) for a in settle(ix, slot)], int(lookup(ix, 9))
    ([3, 2], 3)
    """
    kind_of(index).tally_from(index, slot, p)


def settle(index: Index, slot: Int) -> tuple[np.uint64, np.uint64]:
    """``(p, count)`` of a slot counting since :func:`tally` opened it,
    which then holds its plain position ``p`` again; ``(0, 0)`` for every
    other slot. Every slot below :func:`slot_count` may be asked.

    Examples
    --------
    >>> ix = hashed.empty(seed=1); insert(ix, 4, 0)
    True
    >>> [int(a) for a in settle(ix, locate(ix, 4))]
    [0, 0]
    """
    return kind_of(index).settle(index, slot)


def slot_count(index: Index) -> np.uint64:
    """How many slots :func:`settle` may be asked about (0 where the kind
    never counts in its slots).

    Examples
    --------
    >>> import numpy as np
    >>> int(slot_count(hashed.empty())), int(slot_count(np.empty(4, np.uint32)))
    (16, 0)
    """
    return kind_of(index).slot_count(index)


def insert(index: Index, x: Int, p: Int) -> Bool:
    """Store position ``p`` for an accepted ``x``; False if the index must
    ``grow`` first (nothing is lost: insert again after growing).

    Examples
    --------
    >>> ix = hashed.empty(seed=1)
    >>> insert(ix, 2**62, 0), int(lookup(ix, 2**62))
    (True, 0)
    """
    return store(index, locate(index, x), x, p)


def erase(index: Index, x: Int) -> None:
    """Forget ``x``'s slot where the kind can; other ids keep theirs.

    Examples
    --------
    >>> ix = hashed.empty(seed=1); insert(ix, 5, 0)
    True
    >>> erase(ix, 5); bool(lookup(ix, 5) == NOWHERE)
    True
    """
    kind_of(index).erase(index, x)


def room(index: Index, n: Int, members: Int, top: Int) -> Index:
    """A new index of ``index``'s kind, sized to hold the members ``dense[:n]``
    and ``members`` members in all (hash), ids up to ``top`` (flat), one more
    page (paged), but not yet filled: :func:`move` fills it.

    Allocating here and filling in :func:`move` lets the containers allocate
    from Python, where numpy backs large arrays with huge pages (each 4 KiB
    page an NRT allocation touches first costs a fault of its own).

    Examples
    --------
    >>> import numpy as np
    >>> room(np.empty(4, np.uint32), 0, 0, 99).shape
    (100,)
    """
    return kind_of(index).room(index, n, members, top)


def move(index: Index, grown: Index, dense: IntArray, n: Int) -> None:
    """Fill ``grown``, from :func:`room`, with the positions ``index`` holds
    for the members ``dense[:n]``.

    Examples
    --------
    >>> import numpy as np
    >>> ix = hashed.empty(seed=3); dense = np.array([40, 50])
    >>> insert(ix, 40, 0) and insert(ix, 50, 1)
    True
    >>> grown = room(ix, 2, 100, 0); move(ix, grown, dense, 2)
    >>> hashed.slots_of(grown.table), int(lookup(grown, 50))
    (256, 1)
    """
    kind_of(index).move(index, grown, dense, n)


def grow(index: Index, dense: IntArray, n: Int, members: Int, top: Int) -> Index:
    """A grown copy of the index, keeping the positions of ``dense[:n]``:
    :func:`room` then :func:`move`.

    ``members`` is how many ids it must hold (hash), ``top`` the largest
    id it must take (flat); paged doubles whichever pool is short. It
    allocates, so only NRT-enabled code calls it.

    Examples
    --------
    >>> import numpy as np
    >>> grow(np.empty(4, np.uint32), np.empty(0, np.int32), 0, 0, 99).shape
    (100,)
    """
    grown = room(index, n, members, top)
    move(index, grown, dense, n)
    return grown


def from_parts(parts: Parts) -> Index:
    """The index whose arrays are ``parts``: a flat index is its own array,
    a paged or hash index a plain tuple of its fields (see :func:`parts_of`).

    Scalar calls from Python pass a plain tuple because numba types it in
    its C fast path, where a named tuple takes its slow Python path.

    Examples
    --------
    >>> type(from_parts(tuple(hashed.empty(seed=1)))).__name__
    'HashIndex'
    """
    if isinstance(parts, np.ndarray):
        return parts
    return (paged.PagedIndex if len(parts) == _PAGED_PARTS else HashIndex)(*parts)


def parts_of(index: Index) -> Parts:
    """The arrays of ``index`` in the form :func:`from_parts` takes.

    Examples
    --------
    >>> len(parts_of(paged.empty())), parts_of(np.empty(3, np.uint32)).shape
    (3, (3,))
    """
    return index if isinstance(index, np.ndarray) else tuple(index)


_PAGED_PARTS = len(PagedIndex._fields)
# The kinds are told apart by their number of arrays.
assert len(HashIndex._fields) != _PAGED_PARTS


def row_limit(index: Index) -> Int:
    """The most members a set on this index can hold.

    Examples
    --------
    >>> import numpy as np
    >>> row_limit(np.empty(10, np.uint32))
    10
    """
    return kind_of(index).row_limit(index)


def prefetches_slots(index: Index) -> bool:
    """Whether an id's slot is at an address known without a load (the
    kind's ``PREFETCHES_SLOTS``), so a loop can prefetch it ahead.

    Examples
    --------
    >>> import numpy as np
    >>> prefetches_slots(np.empty(4, np.uint32)), prefetches_slots(paged.empty())
    (True, False)
    """
    return bool(kind_of(index).PREFETCHES_SLOTS)


def looks_ahead(index: Index) -> bool:
    """Whether a lookup is cheap enough for a loop to run one ahead of
    itself, to prefetch a coming id's dense entry (the kind's
    ``LOOKS_AHEAD``).

    Examples
    --------
    >>> import numpy as np
    >>> looks_ahead(np.empty(4, np.uint32)), looks_ahead(hashed.empty())
    (True, False)
    """
    return bool(kind_of(index).LOOKS_AHEAD)


def keyed(index: Index) -> bool:
    """Whether a slot holds its id (the kind's ``KEYED``): then an index
    rebuilt from ``dense`` and written since only by claims answers a
    member's position exactly, and a non-member's as NOWHERE, with no
    check against ``dense``.

    Examples
    --------
    >>> import numpy as np
    >>> keyed(np.empty(4, np.uint32)), keyed(hashed.empty())
    (False, True)
    """
    return bool(kind_of(index).KEYED)


def prefetch_slot(index: Index, x: Int) -> None:
    """Start loading the slot of ``x``, where :func:`prefetches_slots`
    (a no-op elsewhere). A hint: it changes nothing and never faults.

    Examples
    --------
    >>> import numpy as np
    >>> prefetch_slot(np.empty(4, np.uint32), 3)
    """
    kind = kind_of(index)
    if kind.PREFETCHES_SLOTS:
        getattr(kind, "prefetch_slot")(index, x)  # noqa: B009 (not every kind)


# The overloads and their implementations stay unannotated: numba requires
# the two signatures to be equal, annotations included, and the one takes
# numba types where the other takes values.


@overload(lookup, jit_options=OVERLOAD_NO_NRT)
def _lookup(index, x):
    return _implementation(index, "lookup")


@overload(lookup_many, jit_options=OVERLOAD_NO_NRT)
def _lookup_many(index, ids, start, stop, out, ahead):
    return _implementation(index, "lookup_many")


@overload(accepts, jit_options=OVERLOAD_NO_NRT)
def _accepts(index, x):
    return _implementation(index, "accepts")


@overload(in_range, jit_options=OVERLOAD_NO_NRT)
def _in_range(index, x):
    return _implementation(index, "in_range")


@overload(locate, jit_options=OVERLOAD_NO_NRT)
def _locate(index, x):
    return _implementation(index, "locate")


@overload(held, jit_options=OVERLOAD_NO_NRT)
def _held(index, slot, x):
    return _implementation(index, "held")


@overload(store, jit_options=OVERLOAD_NO_NRT)
def _store(index, slot, x, p):
    return _implementation(index, "store")


@overload(vacant, jit_options=OVERLOAD_NO_NRT)
def _vacant(index, slot):
    return _implementation(index, "vacant")


@overload(tally, jit_options=OVERLOAD_NO_NRT)
def _tally(index, slot, x, p):
    return _implementation(index, "tally")


@overload(tally_from, jit_options=OVERLOAD_NO_NRT)
def _tally_from(index, slot, p):
    return _implementation(index, "tally_from")


@overload(settle, jit_options=OVERLOAD_NO_NRT)
def _settle(index, slot):
    return _implementation(index, "settle")


@overload(slot_count, jit_options=OVERLOAD_NO_NRT)
def _slot_count(index):
    return _implementation(index, "slot_count")


@overload(insert, jit_options=OVERLOAD_NO_NRT)
def _insert(index, x, p):
    if kind_of_type(index) is None:
        return None

    def impl(index, x, p):
        return store(index, locate(index, x), x, p)

    return impl


@overload(erase, jit_options=OVERLOAD_NO_NRT)
def _erase(index, x):
    return _implementation(index, "erase")


@overload(room)
def _room(index, n, members, top):
    return _implementation(index, "room")


@overload(move)
def _move(index, grown, dense, n):
    return _implementation(index, "move")


@overload(grow)
def _grow(index, dense, n, members, top):
    if kind_of_type(index) is None:
        return None

    def impl(index, dense, n, members, top):
        grown = room(index, n, members, top)
        move(index, grown, dense, n)
        return grown

    return impl


@overload(row_limit, jit_options=OVERLOAD_NO_NRT)
def _row_limit(index):
    return _implementation(index, "row_limit")


def _flag(index: types.Type, name: str) -> _Implementation:
    """A kind's constant ``name``, compiled in as the answer for its type."""
    kind = kind_of_type(index)
    if kind is None:
        return None
    answer = bool(getattr(kind, name))
    return lambda index: answer


@overload(prefetches_slots, jit_options=OVERLOAD_NO_NRT)
def _prefetches_slots(index):
    return _flag(index, "PREFETCHES_SLOTS")


@overload(looks_ahead, jit_options=OVERLOAD_NO_NRT)
def _looks_ahead(index):
    return _flag(index, "LOOKS_AHEAD")


@overload(keyed, jit_options=OVERLOAD_NO_NRT)
def _keyed(index):
    return _flag(index, "KEYED")


@overload(prefetch_slot, jit_options=OVERLOAD_NO_NRT)
def _prefetch_slot(index, x):
    kind = kind_of_type(index)
    if kind is None:
        return None
    if kind.PREFETCHES_SLOTS:
        return getattr(kind, "prefetch_slot")  # noqa: B009 (not every kind)
    return lambda index, x: None


@overload(from_parts, jit_options=OVERLOAD_NO_NRT)
def _from_parts(parts):
    if isinstance(parts, types.Array):
        return lambda parts: parts
    if isinstance(parts, types.BaseTuple):
        cls = PagedIndex if len(parts) == _PAGED_PARTS else HashIndex
        return lambda parts: cls(*parts)
    return None

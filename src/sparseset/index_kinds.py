"""The three index kinds as the Python layer sees them.

A set's *index* maps an id to its position in ``dense``; the kernels reach
it through :mod:`sparseset.kernels.kinds`, and this module holds what the
containers need around it: each kind's id range, the dtype of its members,
how to allocate one, how much room it has and how many bytes it holds.

============  ==============  ====================================================
kind          ids             memory
============  ==============  ====================================================
``"flat"``    ``[0, 2**31)``  4 bytes per id of ``[0, capacity)``, members or not
``"paged"``   ``[0, 2**48)``  4 bytes per id of a 4096-id block once 64 or so
                              of its ids fill it (a page); fewer take a leaf of
                              8 bytes per slot, about m**2 / 2 slots for m ids,
                              and the directory's nodes grow alike. Measured
                              per member: 16 for 1M ids of 4M, about 20 for
                              them spread by block over 2**40; 146 for 100k
                              ids uniform over 2**40, 466 for 1M (hash: ~40)
``"hash"``    ``[0, 2**63)``  16 bytes per slot; the table is at most half full
============  ==============  ====================================================

``dense`` adds 4 bytes per member (flat, int32 ids) or 8 (paged and hash,
int64 ids), with up to 2x spare room from amortized growth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .kernels import flat, hashed, paged

#: Positions are uint32 and 0xFFFFFFFF means "nowhere".
MAX_MEMBERS = 2**32 - 1


@dataclass(frozen=True)
class IndexKind:
    """One index kind: its name, id range, member dtype and allocation.

    Examples
    --------
    >>> kind = KINDS["paged"]
    >>> kind.limit == 2**48, kind.id_dtype
    (True, dtype('int64'))
    """

    name: str
    #: Ids live in [0, limit).
    limit: int
    #: The dtype of ``dense``: the narrowest that holds every id in range.
    id_dtype: np.dtype
    #: Largest ``capacity`` a set of this kind accepts.
    max_capacity: int

    @property
    def range_text(self) -> str:
        """``[0, 2**k)``, for messages."""
        return f"[0, 2**{self.limit.bit_length() - 1})"

    def new(self, capacity: int) -> Any:
        """An empty index with room for ``capacity`` (see :meth:`capacity`).

        Examples
        --------
        >>> KINDS["flat"].new(10).shape
        (10,)
        """
        if self.name == "flat":
            return np.empty(capacity, np.uint32)
        if self.name == "paged":
            return paged.empty(capacity)
        return hashed.empty(capacity)

    def reserve(self, index: Any, members: int) -> Any:
        """``index`` with room for ``members`` members before it grows, for
        :meth:`SparseSet.reserve <sparseset.SparseSet.reserve>`: for paged,
        pages for that many clustered ids, which ids below ``members`` take
        at once (:func:`sparseset.kernels.paged.reserved`); itself if it has
        the room. Flat and hash indexes grow through
        :func:`sparseset.kernels.grown_index` and come back as they are.

        Examples
        --------
        >>> kind = KINDS["paged"]
        >>> small = kind.new(0); big = kind.reserve(small, 100_000)
        >>> big is small, kind.reserve(big, 100_000) is big
        (False, True)
        """
        if self.name == "paged":
            return paged.reserved(index, members)
        return index

    def capacity(self, index: Any, dense: np.ndarray) -> int:
        """What fits without growing: ids below it (flat), else members.

        Examples
        --------
        >>> kind = KINDS["hash"]
        >>> kind.capacity(kind.new(100), np.empty(100, np.int64))
        100
        """
        if self.name == "flat":
            return int(index.shape[0])
        if self.name == "paged":
            return int(dense.shape[0])
        room = index.table.shape[0] * hashed.LOAD_NUM // hashed.LOAD_DEN
        return min(int(dense.shape[0]), room)

    def row_limit(self, index: Any) -> int:
        """The most members a set on ``index`` can hold.

        Examples
        --------
        >>> KINDS["flat"].row_limit(np.empty(10, np.uint32))
        10
        """
        return int(index.shape[0]) if self.name == "flat" else MAX_MEMBERS

    def check_capacity(self, capacity: Any) -> int:
        """``capacity`` as an int, or ``TypeError``/``ValueError`` saying why not.

        Examples
        --------
        >>> KINDS["flat"].check_capacity(2**32)
        Traceback (most recent call last):
        ...
        ValueError: capacity = 4294967296 is outside [0, 2**31], the flat index's range
        """
        if isinstance(capacity, bool) or not isinstance(capacity, int | np.integer):
            raise TypeError(f"capacity must be an integer, not {capacity!r}")
        capacity = int(capacity)
        if not 0 <= capacity <= self.max_capacity:
            if self.name == "flat":
                raise ValueError(
                    f"capacity = {capacity} is outside [0, 2**31], the flat "
                    "index's range"
                )
            raise ValueError(
                f"capacity = {capacity} is outside [0, 2**32 - 1]: a {self.name} "
                "index holds at most 2**32 - 1 members"
            )
        return capacity

    def hint(self, top: int) -> str:
        """The sentence for an id past this kind's range: which kind takes it.

        Examples
        --------
        >>> KINDS["flat"].hint(2**40)
        "; index='paged' takes ids in [0, 2**48)"
        """
        for kind in KINDS.values():
            if kind.limit > self.limit and top < kind.limit:
                return f"; index={kind.name!r} takes ids in {kind.range_text}"
        return "; no index kind takes ids past 2**63 - 1"


#: The index kinds by name, narrowest range first.
KINDS = {
    "flat": IndexKind("flat", flat.LIMIT, np.dtype(np.int32), flat.LIMIT),
    "paged": IndexKind("paged", paged.LIMIT, np.dtype(np.int64), MAX_MEMBERS),
    "hash": IndexKind("hash", hashed.LIMIT, np.dtype(np.int64), MAX_MEMBERS),
}


def kind_named(name: Any) -> IndexKind:
    """The kind called ``name``, or ``ValueError`` listing the kinds.

    Examples
    --------
    >>> kind_named("hash").limit == 2**63
    True
    >>> kind_named("tree")
    Traceback (most recent call last):
    ...
    ValueError: index = 'tree' is not an index kind; choose one of 'flat', ...
    """
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise ValueError(
            f"index = {name!r} is not an index kind; choose one of "
            f"{', '.join(map(repr, KINDS))}"
        )
    return kind


def index_nbytes(index: Any) -> int:
    """Bytes held by an index of any kind (all its arrays).

    Examples
    --------
    >>> index_nbytes(np.empty(10, np.uint32)), index_nbytes(hashed.empty(8))
    (40, 280)
    """
    if isinstance(index, tuple):
        return sum(int(array.nbytes) for array in index)
    return int(index.nbytes)

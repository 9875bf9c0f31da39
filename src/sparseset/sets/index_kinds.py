"""The three index kinds as the Python layer sees them.

A set's *index* maps an id to its position in ``dense``. Each kind is one
module of :mod:`sparseset.kernels` (:mod:`~sparseset.kernels.index.flat`,
:mod:`~sparseset.kernels.index.paged`, :mod:`~sparseset.kernels.index.hashed`) that
says everything about it once: its name, id range and member dtype, what a
capacity counts, how to make, size and reserve one, and the compiled
operations :mod:`sparseset.kernels.index.kinds` dispatches on. This module builds
the registry the containers use from those modules: :class:`IndexKind`
reads a kind's facts from its module, and :data:`KINDS` lists them.

============  ==============  ====================================================
kind          ids             memory
============  ==============  ====================================================
``"flat"``    ``[0, 2**31)``  4 bytes per id of ``[0, capacity)``, members or not
``"paged"``   ``[0, 2**48)``  4 bytes per id of a 4096-id block once 64 or so
                              of its ids fill it (a page); fewer take a leaf of
                              8 bytes per slot, about m**2 / 2 slots for m ids,
                              and the directory's nodes grow alike: clustered
                              ids cost a few bytes each, ids scattered
                              uniformly over a huge space hundreds
                              (``docs/performance.md`` and
                              ``asv_bench/benchmarks/paged_memory.py``
                              give the figures)
``"hash"``    ``[0, 2**63)``  16 bytes per slot; the table is at most
                              ``config.HASH_MAX_LOAD_PERCENT`` full
============  ==============  ====================================================

``dense`` adds 4 bytes per member (flat, int32 ids) or 8 (paged and hash,
int64 ids), with up to 2x spare room from amortized growth.

The containers' default, ``index="auto"`` (:data:`AUTO`), is no fourth
kind: an adapting set is one of these at any time, and its engine picks
another with :func:`adapted_kind` when it grows (see
:class:`~sparseset.sets.engine.SetEngine`). :func:`index_spec` reads an
``index=`` argument.

Readers of tables (``from_arrow``, ``from_pandas``, ``read_parquet``)
given no ``index=`` ask :func:`choose_kind` which kind their ids want.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from ..kernels import grown_index
from ..kernels.index import flat, hashed, paged
from .ids import as_ids


@dataclass(frozen=True)
class IndexKind:
    """One index kind, as its module in :mod:`sparseset.kernels` describes it.

    Examples
    --------
    >>> kind = KINDS["paged"]
    >>> kind.limit == 2**48, kind.id_dtype, kind.counts_ids
    (True, dtype('int64'), False)
    """

    module: ModuleType
    # Fields, not properties: they are read on every call, the one-id
    # paths and a small set's construction included.
    #: Ids live in ``[0, limit)``.
    limit: int = field(init=False)
    #: What ``SparseSet(index=...)`` calls it.
    name: str = field(init=False)
    #: The dtype of ``dense``: the narrowest that holds every id in range.
    id_dtype: np.dtype[Any] = field(init=False)
    #: Largest ``capacity`` a set of this kind accepts.
    max_capacity: int = field(init=False)
    #: Whether a capacity counts ids of the space (flat: the index spans
    #: ``[0, capacity)``) rather than members: ``KINDS["flat"].counts_ids``.
    counts_ids: bool = field(init=False)

    def __post_init__(self) -> None:
        module = self.module
        object.__setattr__(self, "limit", int(module.LIMIT))
        object.__setattr__(self, "name", str(module.NAME))
        object.__setattr__(self, "id_dtype", np.dtype(module.ID_DTYPE))
        object.__setattr__(self, "max_capacity", int(module.MAX_CAPACITY))
        object.__setattr__(self, "counts_ids", bool(module.CAPACITY_COUNTS_IDS))

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
        return self.module.empty(capacity)

    def sized(self, capacity: int, members: int) -> Any:
        """An empty index for a set of ``capacity`` that will hold ``members``:
        sized by whichever of the two this kind's capacity counts.

        Examples
        --------
        >>> KINDS["flat"].sized(100, 3).shape
        (100,)
        """
        return self.new(capacity if self.counts_ids else members)

    def reserve(self, index: Any, dense: np.ndarray, n: int, capacity: int) -> Any:
        """``index`` with room for ``capacity``: a new index (keeping the
        positions of ``dense[:n]``), or itself if it has the room already.

        Examples
        --------
        >>> kind = KINDS["paged"]
        >>> small = kind.new(0); dense = np.empty(0, np.int64)
        >>> big = kind.reserve(small, dense, 0, 100_000)
        >>> big is small, kind.reserve(big, dense, 0, 100_000) is big
        (False, True)
        """
        return self.module.reserve(index, dense, n, capacity, grown_index)

    def capacity(self, index: Any, dense: np.ndarray) -> int:
        """What fits without growing: ids below it (flat), else members.

        Examples
        --------
        >>> kind = KINDS["hash"]
        >>> kind.capacity(kind.new(100), np.empty(100, np.int64))
        100
        """
        room: int = self.module.capacity(index, dense)
        return room

    def row_limit(self, index: Any) -> int:
        """The most members a set on ``index`` can hold.

        Examples
        --------
        >>> KINDS["flat"].row_limit(np.empty(10, np.uint32))
        10
        """
        return int(self.module.row_limit(index))

    def expect_pages(self, index: Any, blocks: int, ids: int) -> None:
        """Tell ``index`` that ``ids`` ids still to come touch about
        ``blocks`` blocks of 4096 ids, where its kind sizes for that
        (paged: see :func:`~sparseset.kernels.index.paged.expect_pages`);
        a no-op for the other kinds.

        Examples
        --------
        >>> ix = KINDS["flat"].new(8); KINDS["flat"].expect_pages(ix, 2, 8192)
        """
        expect = getattr(self.module, "expect_pages", None)
        if expect is not None:
            expect(index, blocks, ids)

    def leaves(self, index: Any) -> int | None:
        """How many 4096-id blocks ``index`` holds ids of, where it counts
        them (paged; an upper bound on its members' blocks), else None.

        Examples
        --------
        >>> KINDS["paged"].leaves(KINDS["paged"].new(0)), KINDS["hash"].leaves(None)
        (0, None)
        """
        count = getattr(self.module, "leaves", None)
        return None if count is None else int(count(index))

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
        value = int(capacity)
        if not 0 <= value <= self.max_capacity:
            if self.counts_ids:
                raise ValueError(
                    f"capacity = {value} is outside [0, 2**31], the {self.name} "
                    "index's range"
                )
            raise ValueError(
                f"capacity = {value} is outside [0, 2**32 - 1]: a {self.name} "
                "index holds at most 2**32 - 1 members"
            )
        return value

    def hint(self, top: int) -> str:
        """The sentence for an id past this kind's range: which kind takes it.

        Examples
        --------
        >>> KINDS["flat"].hint(2**40)
        "; index='paged' takes ids in [0, 2**48) (in clusters: for scattered ...)"
        >>> KINDS["paged"].hint(2**50)
        "; index='hash' takes ids in [0, 2**63)"
        """
        for kind in KINDS.values():
            if kind.limit > self.limit and top < kind.limit:
                hint = f"; index={kind.name!r} takes ids in {kind.range_text}"
                if kind.name == "paged":
                    # A paged index of scattered ids (user ids, hashes)
                    # takes a sparse leaf per id: tens of times the memory
                    # and time of a hash index.
                    hint += (
                        " (in clusters: for scattered ids, index='hash' takes any "
                        f"in {KINDS['hash'].range_text})"
                    )
                return hint
        return "; no index kind takes ids past 2**63 - 1"


#: The index kinds by name, narrowest range first.
KINDS: dict[str, IndexKind] = {
    module.NAME: IndexKind(module) for module in (flat, paged, hashed)
}


#: The name of the kind that adapts to its ids: what every container's
#: ``index=`` defaults to. A set of this kind is, at any time, one of
#: :data:`KINDS` (``s.kind`` names which); it changes kind when it grows
#: (see :func:`adapted_kind`), never between growths.
AUTO = "auto"
#: The names ``index=`` takes: :data:`AUTO` and the fixed kinds.
INDEX_NAMES = (AUTO, *KINDS)


def index_spec(name: Any) -> tuple[IndexKind, bool]:
    """The kind a container called ``index=name`` starts on, and whether it
    adapts (``"auto"``: it starts flat), or ``ValueError`` listing the names.

    Examples
    --------
    >>> kind, adaptive = index_spec("auto"); kind.name, adaptive
    ('flat', True)
    >>> index_spec("hash")[0].name, index_spec("hash")[1]
    ('hash', False)
    """
    if isinstance(name, str) and name == AUTO:
        return KINDS["flat"], True
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise ValueError(
            f"index = {name!r} is not an index kind; choose one of "
            f"{', '.join(map(repr, INDEX_NAMES))}"
        )
    return kind, False


def _auto_facts() -> ModuleType:
    """The facts :class:`IndexKind` reads from a kind's module, for
    ``"auto"``: hash's range and capacity, its name."""
    facts = ModuleType("sparseset.sets.index_kinds.auto")
    facts.NAME = AUTO  # type: ignore[attr-defined]
    facts.LIMIT = hashed.LIMIT  # type: ignore[attr-defined]
    facts.ID_DTYPE = hashed.ID_DTYPE  # type: ignore[attr-defined]
    facts.MAX_CAPACITY = hashed.MAX_CAPACITY  # type: ignore[attr-defined]
    facts.CAPACITY_COUNTS_IDS = False  # type: ignore[attr-defined]
    return facts


#: What code that only checks ids and names kinds (the distributed
#: shards, their files) knows of ``index="auto"``: its name, its range
#: (hash's, ``[0, 2**63)``) and that a capacity counts members. No index
#: is of this kind: a set that adapts is always one of :data:`KINDS`.
AUTO_KIND = IndexKind(_auto_facts())


def kind_or_auto(name: Any) -> IndexKind:
    """The kind called ``name``, :data:`AUTO_KIND` for ``"auto"``, or
    ``ValueError`` listing the names ``index=`` takes.

    Examples
    --------
    >>> kind_or_auto("auto").name, kind_or_auto("auto").range_text
    ('auto', '[0, 2**63)')
    >>> kind_or_auto("paged") is KINDS["paged"]
    True
    """
    if isinstance(name, str) and name == AUTO:
        return AUTO_KIND
    index_spec(name)  # raises, naming every choice, for anything else
    return KINDS[name]


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
    (40, 288)
    """
    if isinstance(index, tuple):
        return sum(int(array.nbytes) for array in index)
    return int(index.nbytes)


#: :func:`choose_kind` takes an index that spans the ids (flat from 0,
#: paged from the smallest) only if the ids fill at least one in
#: ``SPAN_PER_ID`` of that span: about 32 bytes of index per id at worst,
#: what a hash index costs anyway.
SPAN_PER_ID = 8
#: Ids below this stay flat however few they are: a flat index over
#: ``[0, FLAT_ALWAYS)`` is at most 256 KB.
FLAT_ALWAYS = 2**16


def choose_kind(ids: Any) -> str:
    """The index kind for a set of ``ids``, as table readers pick it.

    The rule: ``"flat"`` if the largest id is below ``2**16``
    (:data:`FLAT_ALWAYS`) or below 8 times the number of ids (and below
    ``2**31``); else ``"paged"`` if the ids are below ``2**48`` and
    ``max - min + 1`` is at most 8 times their number; else ``"hash"``.
    So an index that spans the ids (flat from 0, paged from the smallest)
    is taken only where it costs at most about 32 bytes per id, as a hash
    index does: the chosen index's memory grows with the number of ids,
    never with their values (a few ids near ``2**30`` take a page, not
    4 GB). Duplicates count as ids. Ids that no kind takes (negative,
    ``2**63`` or more) get the kind that says so when they are added.

    ``ids`` is anything a batch takes (see :func:`~sparseset.sets.ids.as_ids`).

    Examples
    --------
    >>> choose_kind(range(1000)), choose_kind([5, 60_000])
    ('flat', 'flat')
    >>> choose_kind([2**30, 2**30 + 3]), choose_kind([2**30, 2**30 + 10**6])
    ('paged', 'hash')
    >>> choose_kind([2**40 + k for k in range(100)]), choose_kind([2**50, 2**50 + 1])
    ('paged', 'hash')
    """
    arr, _ = as_ids(ids)
    if arr.size == 0:
        return "flat"
    low, high = int(arr.min()), int(arr.max())
    count = int(arr.size)
    if low < 0:
        return "flat"  # add refuses a negative id whatever the kind
    if high < KINDS["flat"].limit and (
        high < FLAT_ALWAYS or high < SPAN_PER_ID * count
    ):
        return "flat"
    if high < KINDS["paged"].limit and high - low < SPAN_PER_ID * count:
        return "paged"
    return "hash"


#: An adapting set's index spans ids (flat from 0, paged from the
#: smallest) while they fill at least one in ``ADAPTIVE_SPAN_PER_ID`` of
#: the span: 48 bytes of index a member at most, where a paged index of
#: ids that sparse costs as much and a hash index about 32.
ADAPTIVE_SPAN_PER_ID = 12
#: An adapting set's flat or paged index holds at most about this many
#: bytes a member after an add that grew it: where a growth's estimate of
#: the members was high (a batch's ids repeat) or doubled it, the add ends
#: by changing kind or compacting (see ``SetEngine.settle``).
ADAPTIVE_BYTES_PER_MEMBER = 4 * ADAPTIVE_SPAN_PER_ID


#: A paged index's page: the ids of one aligned block of ``2**PAGE_BITS``.
PAGE_BITS = 12
#: The load limit, in percent, of an adapting set's hash index: its table
#: is a power of two, so at this load it spans at most 2.5 slots (40
#: bytes) a member, where at ``HASH_MAX_LOAD_PERCENT``'s 50 a member count
#: just past a power of two would cost it 64 (its 8-way buckets keep
#: probes short this full).
ADAPTIVE_HASH_LOAD = 80


def adapted_kind(
    low: int, high: int, members: int, blocks: int | None = None
) -> IndexKind:
    """The kind an adapting set takes when it grows to hold ``members``
    members with ids in ``[low, high]`` in at most ``blocks`` distinct
    blocks of 4096 ids (``None``: unknown): :func:`choose_kind`'s rule, and
    paged where the blocks alone are that full.

    ``"flat"`` while its index over ``[0, high]`` is at most 48 bytes a
    member (:data:`ADAPTIVE_SPAN_PER_ID`; or 256 KB), ``"paged"`` while
    one over ``[low, high]`` would be, else ``"hash"``, whose memory grows
    with the members alone.

    Examples
    --------
    >>> adapted_kind(0, 4_000_000, 1_000_000).name
    'flat'
    >>> adapted_kind(2**40, 2**40 + 10**6, 1_000_000).name
    'paged'
    >>> adapted_kind(3, 2**31 - 5, 1_000_000).name
    'hash'
    >>> adapted_kind(0, 2**40, 1_000_000, blocks=250).name  # runs of 4096
    'paged'
    """
    members = max(members, 1)
    if high < KINDS["flat"].limit and (
        high < FLAT_ALWAYS or high < ADAPTIVE_SPAN_PER_ID * members
    ):
        return KINDS["flat"]
    if high < KINDS["paged"].limit and (
        high - low < ADAPTIVE_SPAN_PER_ID * members
        or (blocks is not None and blocks << PAGE_BITS < ADAPTIVE_SPAN_PER_ID * members)
    ):
        return KINDS["paged"]
    return KINDS["hash"]

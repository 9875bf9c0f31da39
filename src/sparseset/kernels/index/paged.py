"""The paged index: a radix tree whose nodes and leaves grow with their members.

An id's 48 bits are four 12-bit fields: the upper three choose a path through
directory nodes, the lowest a slot in a leaf of dense positions. Ids live in
``[0, 2**48)``. A full leaf, a *page*, holds the positions of all 4096 ids of
its block, as EnTT's and Shipyard's pages do; but a node or leaf starts small
and doubles only when two of its keys would share a slot, so memory follows
the members, not the blocks and regions they touch.

A node of ``2**k`` entries is indexed by the low ``k`` bits of its field and
keeps each child's field as a tag. Lookups read no tag: two members never
share a slot, and an id led into another id's slot reads that id's
position, which ``dense`` disproves like any stale slot. So a lookup is the
walk of loads of a radix tree of full nodes, a few instructions more per
level. Inserts check, cheaply on the common path: into a page, whose header
names its block (the id's bits 16 to 47; bits 12 to 15 need no check, since
the nodes just above the leaves have 16 entries or more, where ids differing
in them part ways). Anything else, such as a partial leaf or a slot to make,
walks checking every tag and doubles the node or leaf where two fields meet.

What ids cost. An id alone in its 4096-id block takes a one-slot leaf (8
bytes: its position and its tag), one alone in its 2**24-id region a node
of 16 entries besides (128 bytes). ``m`` ids with random low bits need about
``m**2 / 2`` slots before they differ in them, so a leaf that would hold
more than ``used[USED_FULL_AT]`` ids, or pass ``used[USED_PARTIAL_MAX]``
slots, becomes a page (16 KiB, no tags): 4 bytes an id in a block that
fills. The two limits are :mod:`sparseset.config`'s ``PAGED_FULL_AT`` and
``PAGED_PARTIAL_MAX`` when the index was made; they travel in ``used``,
read at run time, so compiled code never holds a stale copy.

The directory is as deep as the ids in it need: one level (the root node
points at leaves) while they stay below 2**24, two below 2**36, three up to
2**48; a larger id deepens it, the old root going under a new one. A lookup
in a small space walks one level, not three.

Layout. ``directory`` (uint64) holds the nodes; an entry is a child's
``base << 24 | tag << 12 | mask``: where the child starts (in ``directory``
for a node, in ``pages`` for a leaf), its field under this node, and its
size minus one. Entry 0 is the null node: one entry, itself, so that a
missing child (an entry of base 0) leads back to it and a lookup needs no
branch. Entry 1 points at the root. ``pages`` (uint32) holds the leaves: a
page's 4096 positions and its header, or a partial leaf's positions and
behind them their tags (an id's low field plus one; 0 is free); slot 0 is
the null leaf's, never written. ``used`` (int64; the ``USED_*`` names) counts
what each pool has handed out and what of it is live, the depth, the room an
insert last lacked and the leaves. The pools keep spare room; ``store``
reports when an allocation does not fit, so that the caller can ``grow``
them (kernels cannot allocate mid-loop without NRT). Growing copies only the
live nodes and leaves, breadth first, dropping those outgrown since.

These are the paged versions of the operations :mod:`.kinds` dispatches on;
call them through it.
"""

from typing import Any, NamedTuple

import numpy as np
from numba.extending import register_jitable

from ... import config
from .. import allocation
from ..options import MAX_MEMBERS

# The kind's answers where a slot would need to know its id.
from .unkeyed import settle as settle
from .unkeyed import slot_count as slot_count
from .unkeyed import tally as tally
from .unkeyed import tally_from as tally_from
from .unkeyed import vacant as vacant

#: The kind's name, as ``SparseSet(index=...)`` takes it.
NAME = "paged"
#: Ids the paged index can take: [0, LIMIT).
LIMIT = 2**48
#: ``dense``'s dtype: the narrowest that holds every id in range.
ID_DTYPE = np.dtype(np.int64)
#: A capacity counts members (clustered ids get pages for that many).
CAPACITY_COUNTS_IDS = False
#: The largest capacity a paged set takes (see :mod:`.options`).
MAX_CAPACITY = MAX_MEMBERS
#: A slot's address needs the directory walked (loads) first: add loops
#: neither prefetch slots ahead nor look ahead for dense entries.
PREFETCHES_SLOTS = False
LOOKS_AHEAD = False
#: A leaf's slots hold positions only (garbage for ids never added).
KEYED = False
#: Bits of an id per directory level, and per leaf.
PAGE_BITS = 12
#: Slots of a full leaf (a page), and entries of a full directory node.
PAGE_SIZE = 1 << PAGE_BITS
#: Directory entries ahead of the nodes: the null node and the root's entry.
FIRST_NODE = 2
#: Where the root's entry lives in ``directory``.
ROOT = 1
#: Pages slots ahead of the leaves: the null leaf's one slot.
FIRST_SLOT = 1
#: Slots behind a page's positions: its header, its ids' bits 16 to 47.
HEADER = 1
#: Entries an empty index starts with in each pool: room for any one id
#: (three nodes on its path, the lowest of 16 entries, and a leaf).
START_NODES = 32
START_SLOTS = 16

#: ``used``: directory entries handed out (live or outgrown), then pages'.
USED_NODES = 0
USED_SLOTS = 1
#: ``used``: directory levels, 1 to 3.
USED_DEPTH = 2
#: ``used``: directory entries and pages slots reachable from the root.
USED_LIVE_NODES = 3
USED_LIVE_SLOTS = 4
#: ``used``: the largest allocation that did not fit since the last growth.
USED_WANT_NODES = 5
USED_WANT_SLOTS = 6
#: ``used``: leaves in use.
USED_LEAVES = 7
#: ``used``: blocks (``id >> PAGE_BITS``) below this get a full page at once.
USED_FULL_BELOW = 8
#: ``used``: leaves that are full pages.
USED_PAGES = 9
#: ``used``: a partial leaf has at most this many slots; past it, it goes
#: full (:data:`~sparseset.config.PAGED_PARTIAL_MAX`).
USED_PARTIAL_MAX = 10
#: ``used``: a leaf that would hold more ids than this goes full, whatever
#: its slots (:data:`~sparseset.config.PAGED_FULL_AT`).
USED_FULL_AT = 11
#: ``used``: a growth takes the pages a batch spans at once if they cost at
#: most this many bytes per id still to come
#: (:data:`~sparseset.config.PAGED_PREFILL_BYTES_PER_ID`).
USED_PREFILL_BYTES = 12
#: ``used``: new leaves that start as full pages, whatever their block,
#: and that the next growth makes room for at once (a batch of ids that
#: fill the blocks they touch: see :func:`expect_pages`).
USED_PAGE_BUDGET = 13
#: ``used``: 1 while such a batch is under way: a growth then takes room
#: for what it lacks and an eighth more, not twice the live slots.
USED_PLANNED = 14
USED_LENGTH = 15

_FIELD = np.uint64(PAGE_SIZE - 1)
_TAG_SHIFT = np.uint64(PAGE_BITS)
_BASE_SHIFT = np.uint64(2 * PAGE_BITS)


class PagedIndex(NamedTuple):
    """The arrays of a paged index (see the module docstring)."""

    directory: np.ndarray  # uint64: node entries, base << 24 | tag << 12 | mask
    pages: np.ndarray  # uint32: leaves (positions, then a header or tags)
    used: np.ndarray  # int64 (USED_LENGTH,): counters, see USED_*


def empty(members: int = 0) -> PagedIndex:
    """A paged index with room for ``members`` clustered ids before it grows:
    whole pages for them, and ids below ``members`` get one at once (as
    dense as a flat index of that capacity); ids spread wide take less.

    Examples
    --------
    >>> ix = empty(); ix.directory.shape, ix.pages.shape, int(ix.used[USED_DEPTH])
    ((32,), (16,), 1)
    >>> rows(empty(5_000).pages)  # two pages
    2
    """
    blocks = -(-members // PAGE_SIZE)
    directory = allocation.empty(max(START_NODES, _dense_nodes(blocks)), np.uint64)
    directory[:FIRST_NODE] = 0
    slots = START_SLOTS
    if members > 0:
        slots = FIRST_SLOT + blocks * (PAGE_SIZE + HEADER)
    used = np.zeros(USED_LENGTH, np.int64)
    used[USED_NODES] = FIRST_NODE
    used[USED_SLOTS] = FIRST_SLOT
    used[USED_DEPTH] = 1
    # As a flat index of that capacity would: ids below it fill pages.
    used[USED_FULL_BELOW] = blocks
    used[USED_PARTIAL_MAX] = config.PAGED_PARTIAL_MAX
    used[USED_FULL_AT] = config.PAGED_FULL_AT
    used[USED_PREFILL_BYTES] = config.PAGED_PREFILL_BYTES_PER_ID
    return PagedIndex(directory, allocation.empty(slots, np.uint32), used)


def capacity(index: PagedIndex, dense: np.ndarray) -> int:
    """What fits without growing: the members ``dense`` has rows for (the
    pools grow on their own as ids touch new blocks).

    Examples
    --------
    >>> capacity(empty(), np.empty(7, np.int64))
    7
    """
    return int(dense.shape[0])


def reserve(
    index: PagedIndex, dense: np.ndarray, n: int, members: int, regrow: Any
) -> PagedIndex:
    """``index`` with pools for ``members`` clustered ids (:func:`reserved`);
    the members keep their slots, so ``dense``, ``n`` and ``regrow`` are not
    needed here.

    Examples
    --------
    >>> ix = empty(); reserve(ix, np.empty(0, np.int64), 0, 10_000, None) is ix
    False
    """
    return reserved(index, members)


def reserved(index: PagedIndex, members: int) -> PagedIndex:
    """``index`` with room for ``members`` clustered ids, as :func:`empty`
    would make it: a copy with larger pools if it needs them, else itself.
    Ids below ``members`` get a page at once from now on (in ``used``, which
    the copy shares).

    Examples
    --------
    >>> ix = empty(); big = reserved(ix, 10_000)
    >>> rows(big.pages), big.used is ix.used, reserved(big, 5_000) is big
    (3, True, True)
    """
    blocks = -(-members // PAGE_SIZE)
    used = index.used
    used[USED_FULL_BELOW] = max(used[USED_FULL_BELOW], blocks)
    directory, pages = index.directory, index.pages
    nodes = _dense_nodes(blocks)
    if nodes > directory.shape[0]:
        directory = allocation.empty(nodes, np.uint64)
        directory[: index.directory.shape[0]] = index.directory
    slots = FIRST_SLOT + blocks * (PAGE_SIZE + HEADER)
    if slots > pages.shape[0]:
        pages = allocation.empty(slots, np.uint32)
        pages[: index.pages.shape[0]] = index.pages
    if directory is index.directory and pages is index.pages:
        return index
    return PagedIndex(directory, pages, used)


def expect_pages(index: PagedIndex, blocks: int, ids: int) -> None:
    """Prepare ``index`` for ``ids`` ids still to come that touch about
    ``blocks`` blocks of 4096 ids: where they are many enough that every
    block's leaf would become a page anyway (more than ``PAGED_FULL_AT``
    ids a block), the next new leaves, as many as ``blocks`` less the
    leaves ``index`` has, start as pages, skipping
    the partial leaves they would outgrow, and the next growth takes room
    for them at once instead of doubling its pools a dozen times. Else,
    and with ``blocks = 0``, new leaves start small again.

    Examples
    --------
    >>> ix = empty(); expect_pages(ix, 245, 1_000_000)
    >>> int(ix.used[USED_PAGE_BUDGET])
    245
    >>> expect_pages(ix, 1000, 1000); int(ix.used[USED_PAGE_BUDGET])
    0
    """
    used = index.used
    runs = blocks > 0 and ids > used[USED_FULL_AT] * blocks
    # Blocks with a leaf already need no new one (the batch may touch
    # others than theirs: then some of its leaves start small).
    used[USED_PAGE_BUDGET] = max(blocks - used[USED_LEAVES], 0) if runs else 0
    used[USED_PLANNED] = 1 if runs else 0


def leaves(index: PagedIndex) -> int:
    """How many 4096-id blocks have a leaf: every block a member is in (and
    maybe some whose members left since).

    Examples
    --------
    >>> leaves(empty())
    0
    """
    return int(index.used[USED_LEAVES])


@register_jitable
def _dense_nodes(blocks):
    """Directory entries that the nodes over blocks ``[0, blocks)`` take,
    all of them in use, with what their growth leaves behind until a move
    (twice the entries, which are at most two per block)."""
    return FIRST_NODE + 4 * max(blocks, 16) if blocks > 0 else 0


@register_jitable
def rows(pool):
    """How many ``PAGE_SIZE``-entry rows a pool has room for."""
    return pool.shape[0] >> PAGE_BITS


@register_jitable
def _copy(to, at, source, base, size):
    """``to[at : at + size] = source[base : base + size]``, as a loop: numba
    compiles slice assignment with a broadcast check and formatted
    messages, which a cold process pays for on its first grow."""
    for k in range(size):
        to[at + k] = source[base + k]


@register_jitable
def _base(e):
    return e >> _BASE_SHIFT


@register_jitable
def _tag(e):
    return (e >> _TAG_SHIFT) & _FIELD


@register_jitable
def _mask(e):
    return e & _FIELD


@register_jitable
def _entry(base, tag, mask):
    return (
        (np.uint64(base) << _BASE_SHIFT)
        | (np.uint64(tag) << _TAG_SHIFT)
        | np.uint64(mask)
    )


@register_jitable
def _field(u, level):
    """Id ``u``'s field in a node ``level`` levels above the leaves."""
    return (u >> np.uint64(level * PAGE_BITS)) & _FIELD


@register_jitable
def _below(d, e, u, level):
    """The entry that node entry ``e`` leads id ``u`` to, one level down."""
    return d[_base(e) + (_field(u, level) & _mask(e))]


@register_jitable
def _leaf(d, root, depth, u):
    """The leaf entry a walk from the root entry leads ``u`` to: ``u``'s
    leaf if it is a member, else any leaf (nothing is checked)."""
    e = root
    # The same outcome for every id of a batch, so always predicted.
    if depth == 3:
        e = _below(d, e, u, 3)
    if depth >= 2:
        e = _below(d, e, u, 2)
    return _below(d, e, u, 1)


@register_jitable
def lookup(index, x):
    """The position slot of ``x``: garbage for a non-member.

    An id past what the directory's depth reaches (or the paged range)
    wraps onto the slot of a smaller id: garbage like any other, since
    ``dense`` never holds an id the directory does not reach. That spares a
    range check on every lookup.
    """
    d = index.directory
    u = np.uint64(np.int64(x))
    e = _leaf(d, d[ROOT], index.used[USED_DEPTH], u)
    return index.pages[_base(e) + (u & _mask(e))]


@register_jitable
def lookup_many(index, ids, start, stop, out, ahead):
    """``out[k - start] = lookup(index, ids[k])`` for k in ``[start, stop)``.

    In two passes over ``out`` (uint64): every id's slot address first (the
    directory's entries on the walks are few and stay in cache), then a
    plain gather of those slots, as short as the flat index's lookup, so the
    CPU overlaps as many of its cache misses as it would there, where
    walking and loading id by id, or re-deriving the slot in the gather,
    would hold each miss behind a walk. A slot's address takes loads, so
    nothing is prefetched ``ahead``.
    """
    d = index.directory
    root = d[ROOT]
    depth = index.used[USED_DEPTH]
    for k in range(start, stop):
        u = np.uint64(np.int64(ids[np.uint64(k)]))
        e = _leaf(d, root, depth, u)
        out[np.uint64(k - start)] = _base(e) + (u & _mask(e))
    pages = index.pages
    for i in range(stop - start):
        out[np.uint64(i)] = pages[out[np.uint64(i)]]


@register_jitable
def accepts(index, x):
    """Whether ``x`` is in the paged range, so ``insert`` may store it."""
    return np.uint64(np.int64(x)) < np.uint64(LIMIT)


@register_jitable
def in_range(index, x):
    """Whether ``x`` is in the paged range [0, 2**48)."""
    return accepts(index, x)


@register_jitable
def locate(index, x):
    """A handle on the slot the walk leads ``x`` to: the leaf's entry, its
    base advanced to the slot (so that it also tells the leaf's size).

    Unchecked, as for :func:`lookup`: a member's own slot, or for another
    id maybe someone else's, which :func:`store` finds out before writing.
    """
    d = index.directory
    u = np.uint64(np.int64(x))
    e = _leaf(d, d[ROOT], index.used[USED_DEPTH], u)
    return e + ((u & _mask(e)) << _BASE_SHIFT)


@register_jitable
def held(index, slot, x):
    """The position in ``slot`` (from :func:`locate`), maybe garbage."""
    return index.pages[_base(slot)]


@register_jitable
def _key(u):
    """What a page's header holds for the block of id ``u``: the id's bits
    16 to 47. Its bits 12 to 15 need no check: a walk reaches a page from a
    node of 16 entries or more, where ids differing in them part ways."""
    return np.uint32(u >> np.uint64(PAGE_BITS + 4))


@register_jitable
def store(index, slot, x, p):
    """Put position ``p`` in ``x``'s slot (from :func:`locate`); False if
    ``x`` needs a node or leaf and the pools are full (call again after
    ``grow``: what was made so far stays).

    Only a slot in a page whose header names ``x``'s block is ``x``'s
    without more ado; anything else (a partial leaf, another block's page
    that the walk strayed into through a node smaller than its field, a
    slot to make) is one call, so that this stays short enough for the
    kernels' loops to inline it: a call per id would dominate an add.
    """
    u = np.uint64(np.int64(x))
    at = _base(slot)
    pages = index.pages
    head = at + (np.uint64(PAGE_SIZE) - (u & _FIELD))
    if _mask(slot) != _FIELD or pages[head] != _key(u):
        at = _base(_make_slot(index, u))
        if at == 0:
            return False
    pages[at] = np.uint32(p)
    return True


@register_jitable
def erase(index, x):
    """Nothing to do: a stale slot is garbage. Its tag holds the slot until
    the id comes back (nodes and leaves never shrink; growth drops none)."""


@register_jitable
def _lowest_bit(v):
    return v & (~v + np.uint64(1))


@register_jitable
def _alloc_nodes(index, size):
    """``size`` zeroed directory entries; their start, or 0 if no room."""
    used = index.used
    d = index.directory
    at = used[USED_NODES]
    if at + size > d.shape[0]:
        used[USED_WANT_NODES] = max(used[USED_WANT_NODES], size)
        return np.uint64(0)
    used[USED_NODES] = at + size
    used[USED_LIVE_NODES] += size
    for j in range(at, at + size):
        d[j] = 0
    return np.uint64(at)


@register_jitable
def _alloc_slots(index, size):
    """``size`` pages slots (unfilled); their start, or 0 if no room."""
    used = index.used
    at = used[USED_SLOTS]
    if at + size > index.pages.shape[0]:
        used[USED_WANT_SLOTS] = max(used[USED_WANT_SLOTS], size)
        return np.uint64(0)
    used[USED_SLOTS] = at + size
    used[USED_LIVE_SLOTS] += size
    return np.uint64(at)


@register_jitable
def _footprint(mask):
    """Pages slots a leaf of ``mask + 1`` slots takes: a page's positions
    and header, a partial leaf's positions and tags."""
    size = np.int64(mask) + 1
    return size + HEADER if size == PAGE_SIZE else 2 * size


@register_jitable
def _node_size(level):
    """Entries a new node ``level`` levels above the leaves starts with: 16
    just above them (see :func:`_key`), else one."""
    return 16 if level == 1 else 1


@register_jitable
def _deepen_to(index, depth):
    """Add directory levels up to ``depth``, the old root going under the
    new one (all its ids have field 0 there); False if no room."""
    d = index.directory
    used = index.used
    while used[USED_DEPTH] < depth:
        root = d[ROOT]
        if _base(root) != 0:
            size = _node_size(used[USED_DEPTH] + 1)
            above = _alloc_nodes(index, size)
            if above == 0:
                return False
            d[above] = root
            d[ROOT] = _entry(above, 0, size - 1)
        used[USED_DEPTH] += 1
    return True


@register_jitable
def _depth_for(top, depth):
    """The directory depth that reaches id ``top`` (at least ``depth``)."""
    while depth < 3 and top >> ((depth + 1) * PAGE_BITS) != 0:
        depth += 1
    return depth


@register_jitable
def _grow_node(index, at, f):
    """Double the node that entry ``at`` points at until field ``f`` and the
    field in its slot differ in the node's bits; the new entry, 0 if no room."""
    d = index.directory
    e = d[at]
    base = _base(e)
    mask = _mask(e)
    other = _tag(d[base + (f & mask)])
    grown = (_lowest_bit(f ^ other) << np.uint64(1)) - np.uint64(1)
    new = _alloc_nodes(index, np.int64(grown) + 1)
    if new == 0:
        return np.uint64(0)
    for j in range(np.int64(mask) + 1):
        c = d[base + np.uint64(j)]
        if _base(c) != 0:
            d[new + (_tag(c) & grown)] = c
    index.used[USED_LIVE_NODES] -= np.int64(mask) + 1
    e = _entry(new, _tag(e), grown)
    d[at] = e
    return e


@register_jitable
def _head(index, at, u, mask):
    """Name the block of id ``u`` in the header of the leaf at ``at``, if it
    is a page (of ``mask + 1`` slots)."""
    if mask == _FIELD:
        index.pages[np.uint64(at) + np.uint64(PAGE_SIZE)] = _key(u)


@register_jitable
def _grow_leaf(index, at, u):
    """Regrow the partial leaf that entry ``at`` points at until id ``u``
    and the id in its slot differ in the leaf's bits: partial while small
    and sparse, else a page. The new entry, 0 if no room."""
    d = index.directory
    pages = index.pages
    e = d[at]
    base = _base(e)
    mask = _mask(e)
    size = mask + np.uint64(1)
    low = u & _FIELD
    other = np.uint64(pages[base + size + (low & mask)]) - np.uint64(1)
    grown = (_lowest_bit(low ^ other) << np.uint64(1)) - np.uint64(1)
    keys = 1
    for j in range(np.int64(size)):
        keys += pages[base + size + np.uint64(j)] != 0
    used = index.used
    if grown >= np.uint64(used[USED_PARTIAL_MAX]) or keys > used[USED_FULL_AT]:
        grown = _FIELD
    new = _alloc_slots(index, _footprint(grown))
    if new == 0:
        return np.uint64(0)
    new_size = grown + np.uint64(1)
    _head(index, new, u, grown)
    if grown == _FIELD:
        index.used[USED_PAGES] += 1
    else:
        for j in range(np.int64(new_size)):
            pages[new + new_size + np.uint64(j)] = 0
    for j in range(np.int64(size)):
        tag = np.uint64(pages[base + size + np.uint64(j)])
        if tag != 0:
            to = new + ((tag - np.uint64(1)) & grown)
            pages[to] = pages[base + np.uint64(j)]
            if grown != _FIELD:
                pages[to + new_size] = np.uint32(tag)
    index.used[USED_LIVE_SLOTS] -= _footprint(mask)
    e = _entry(new, _tag(e), grown)
    d[at] = e
    return e


@register_jitable
def _new_leaf(index, at, u):
    """A leaf for id ``u`` at entry ``at``: one slot, or a page where
    ``u``'s block is in a range being filled densely. Its entry, 0 if no room."""
    mask = np.uint64(0)
    used = index.used
    if np.int64(u >> np.uint64(PAGE_BITS)) < used[USED_FULL_BELOW]:
        mask = _FIELD
    elif used[USED_PAGE_BUDGET] > 0:
        used[USED_PAGE_BUDGET] -= 1
        mask = _FIELD
    new = _alloc_slots(index, _footprint(mask))
    if new == 0:
        return np.uint64(0)
    if mask == 0:
        index.pages[new + np.uint64(1)] = 0
    else:
        index.used[USED_PAGES] += 1
    _head(index, new, u, mask)
    index.used[USED_LEAVES] += 1
    d = index.directory
    e = _entry(new, _tag(d[at]), mask)
    d[at] = e
    return e


@register_jitable
def _make_slot(index, u):
    """Id ``u``'s own slot, as :func:`locate` hands it out, made with any
    nodes and leaves it lacks and claimed (its tag written, in a partial
    leaf); 0 if the pools have no room.

    The walk checks every entry's tag on the way: an entry of another field
    in ``u``'s slot of a node doubles the node until the two differ.
    """
    if not _deepen_to(index, _depth_for(np.int64(u), index.used[USED_DEPTH])):
        return np.uint64(0)
    d = index.directory
    at = np.uint64(ROOT)
    for level in range(index.used[USED_DEPTH], 0, -1):
        e = d[at]
        if _base(e) == 0:
            size = _node_size(level)
            new = _alloc_nodes(index, size)
            if new == 0:
                return np.uint64(0)
            e = _entry(new, _tag(e), size - 1)
            d[at] = e
        f = _field(u, level)
        slot = _base(e) + (f & _mask(e))
        c = d[slot]
        if _base(c) != 0 and _tag(c) != f:
            e = _grow_node(index, at, f)
            if e == 0:
                return np.uint64(0)
            slot = _base(e) + (f & _mask(e))
            c = d[slot]
        if _base(c) == 0:
            # Claim the slot for f; its node or leaf is made one step down.
            d[slot] = _entry(0, f, 0)
        at = slot
    e = d[at]
    if _base(e) == 0:
        e = _new_leaf(index, at, u)
        if e == 0:
            return np.uint64(0)
    mask = _mask(e)
    if mask != _FIELD:
        low = (u & _FIELD) + np.uint64(1)
        tag_at = _base(e) + (u & mask) + mask + np.uint64(1)
        tag = np.uint64(index.pages[tag_at])
        if tag != 0 and tag != low:
            e = _grow_leaf(index, at, u)
            if e == 0:
                return np.uint64(0)
            mask = _mask(e)
            tag_at = _base(e) + (u & mask) + mask + np.uint64(1)
        if mask != _FIELD:
            index.pages[tag_at] = np.uint32(low)
    return e + ((u & mask) << _BASE_SHIFT)


@register_jitable
def room(index, n, members, top):
    """A new index with room for what the last failed insert lacked,
    unfilled (:func:`move` fills it).

    The directory is always new (compacted by the move); the pages are new
    only if short, at least twice their live slots then, which amortizes
    the copies, else shared. Where ``members - n`` ids are still to come,
    all at most ``top``, and the pages spanning ``[0, top]`` cost at most
    ``used[USED_PREFILL_BYTES]`` bytes per coming id, those blocks get full
    pages from the start and the pool takes them at once: a batch over a
    small space grows once instead of a dozen times. Where a batch of
    runs is under way (:func:`expect_pages`), the pools take room for its
    pages still to come instead of doubling.

    Examples
    --------
    >>> ix = empty(); ix.used[USED_WANT_SLOTS] = PAGE_SIZE + HEADER  # a page lacked
    >>> room(ix, 0, 10, 2**40).pages.shape  # the null slot and the want
    (4098,)
    >>> rows(room(ix, 0, 10**6, 2**22 - 1).pages)  # the 1024 pages of [0, 2**22)
    1024
    >>> runs = empty(); expect_pages(runs, 300, 10**6)  # 300 pages to come
    >>> rows(room(runs, 0, 10**6, 2**40).pages)
    300
    """
    used = index.used.copy()
    live_nodes = used[USED_LIVE_NODES]
    nodes = max(
        index.directory.shape[0],
        FIRST_NODE + 2 * live_nodes,
        FIRST_NODE + live_nodes + used[USED_WANT_NODES],
    )
    pages = index.pages
    live = used[USED_LIVE_SLOTS]
    length = max(FIRST_SLOT + 2 * live, FIRST_SLOT + live + used[USED_WANT_SLOTS])
    short = used[USED_SLOTS] + used[USED_WANT_SLOTS] > pages.shape[0]
    budget = used[USED_PAGE_BUDGET]
    if used[USED_PLANNED] != 0:
        # A batch of runs under way: room for the pages still to come at
        # once, for the partial leaves so far to become pages too (as many
        # more at most, with what they outgrow on the way), and for the
        # nodes over them (16 entries a block, and what their parents'
        # doubling leaves), instead of doubling: the pools grow once for
        # the batch (a block the sample missed takes an eighth more).
        partial = min(used[USED_LEAVES] - used[USED_PAGES], budget)
        need = (budget + partial) * (PAGE_SIZE + HEADER)
        need += partial * 4 * used[USED_PARTIAL_MAX]
        short = short or used[USED_SLOTS] + need > pages.shape[0]
        length = FIRST_SLOT + live + need + max(used[USED_WANT_SLOTS], live >> 3)
        nodes = max(nodes, FIRST_NODE + 2 * live_nodes + 96 * budget)
    coming = members - n
    blocks = (top >> PAGE_BITS) + 1
    page_bytes = blocks * PAGE_SIZE * 4
    if coming > 0 and top >= 0 and page_bytes <= used[USED_PREFILL_BYTES] * coming:
        used[USED_FULL_BELOW] = max(used[USED_FULL_BELOW], blocks)
        # Every page the ids could fill, taking the leaves so far for some,
        # and what the partial ones among those take on their way to a page.
        pages_in_all = min(blocks, used[USED_LEAVES] + coming)
        partial = used[USED_LEAVES] - used[USED_PAGES]
        need = max(pages_in_all - used[USED_PAGES], 0) * (PAGE_SIZE + HEADER)
        need += partial * 4 * used[USED_PARTIAL_MAX]
        short = short or used[USED_SLOTS] + need > pages.shape[0]
        length = max(length, FIRST_SLOT + live + need)
        nodes = max(nodes, live_nodes + _dense_nodes(pages_in_all))
    if short:
        pages = allocation.empty(max(length, pages.shape[0]), np.uint32)
        used[USED_SLOTS] = 0
    grown_directory = allocation.empty(nodes, np.uint64)
    used[USED_NODES] = 0
    used[USED_WANT_NODES] = 0
    used[USED_WANT_SLOTS] = 0
    return PagedIndex(grown_directory, pages, used)


@register_jitable
def move(index, grown, dense, n):
    """Fill ``grown`` (from :func:`room`) with the live nodes of ``index``,
    and its live leaves if its pages are new, breadth first from the root.

    Nodes and leaves move; their entries, and so every id's slot, position
    and tag, stay the same.
    """
    d = index.directory
    pages = index.pages
    gd = grown.directory
    gp = grown.pages
    used = grown.used
    copy_leaves = used[USED_SLOTS] == 0
    nodes = np.uint64(FIRST_NODE)
    slots = np.uint64(FIRST_SLOT) if copy_leaves else np.uint64(used[USED_SLOTS])
    gd[0] = 0
    gd[ROOT] = d[ROOT]
    # Entries scanned in order: the root's, then each level's nodes as the
    # level above copied them, so a level ends where the copies stood when
    # it began.
    scan = np.uint64(ROOT)
    level_end = np.uint64(ROOT + 1)
    level = used[USED_DEPTH] + 1
    while scan < nodes:
        if scan == level_end:
            level_end = nodes
            level -= 1
            if level == 1 and not copy_leaves:
                # The leaves stay where they are, and their entries came
                # with their nodes: nothing is left to move.
                break
        c = gd[scan]
        base = _base(c)
        if base != 0:
            mask = _mask(c)
            if level > 1:
                size = mask + np.uint64(1)
                _copy(gd, nodes, d, base, size)
                gd[scan] = _entry(nodes, _tag(c), mask)
                nodes += size
            elif copy_leaves:
                size = np.uint64(_footprint(mask))
                _copy(gp, slots, pages, base, size)
                gd[scan] = _entry(slots, _tag(c), mask)
                slots += size
        scan += np.uint64(1)
    used[USED_NODES] = nodes
    used[USED_LIVE_NODES] = nodes - np.uint64(FIRST_NODE)
    if copy_leaves:
        used[USED_SLOTS] = slots
        used[USED_LIVE_SLOTS] = slots - np.uint64(FIRST_SLOT)


@register_jitable
def row_limit(index):
    """Most members a set can hold (see :mod:`.options`)."""
    return MAX_MEMBERS

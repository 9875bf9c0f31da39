"""The paged index's own layout: memory that follows the members, and the
invariants of its adaptive nodes and leaves.

``test_index_kinds.py`` checks the paged index against a dict and the other
kinds; the state machines check its sets' behaviour. This module checks what
the layout promises (see the docstring of ``sparseset.kernels.index.paged``): every
member reaches its own slot through tags that name its fields, pages name
their block, the counters add up, and ids built to collide (sharing low
bits at every level, differing only in their top bits) still part ways.
"""

import pickle

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseset import SparseSet, World, config, kernels
from sparseset.kernels.index import kinds, paged
from sparseset.sets.index_kinds import KINDS

FIELD = paged.PAGE_SIZE - 1


def parse(entry):
    """``(base, tag, mask)`` of a directory entry."""
    e = int(entry)
    return e >> 24, (e >> 12) & FIELD, e & FIELD


def own_slot(index, x):
    """The slot of ``x`` found by a walk that checks every tag, as a member's
    must pass: None if some tag on the way is another field's."""
    d, pages = index.directory, index.pages
    depth = int(index.used[paged.USED_DEPTH])
    if x >> (12 * (depth + 1)):
        return None
    base, _, mask = parse(d[paged.ROOT])
    for level in range(depth, 0, -1):
        field = (x >> (12 * level)) & FIELD
        base, tag, child_mask = parse(d[base + (field & mask)])
        if base == 0 or tag != field:
            return None
        mask = child_mask
    slot = base + (x & mask)
    if mask != FIELD and int(pages[slot + mask + 1]) != (x & FIELD) + 1:
        return None
    return slot


def check_layout(s):
    """Every invariant of a paged set's index; returns its live leaves' sizes."""
    a = s._engine.state
    index, dense, n = a.sparse, a.dense, a.n
    d, pages, used = index.directory, index.pages, index.used
    depth = int(used[paged.USED_DEPTH])
    assert 1 <= depth <= 3
    assert d[0] == 0  # the null node leads back to itself
    nodes = slots = 0
    leaves = []
    # (entry, level of what it points at (0: a leaf), the fields above it)
    todo = [(d[paged.ROOT], depth, 0)]
    while todo:
        entry, level, prefix = todo.pop()
        base, _, mask = parse(entry)
        if base == 0:
            continue
        size = mask + 1
        assert size & mask == 0  # a power of two
        if level == 0:
            leaves.append(size)
            if size == paged.PAGE_SIZE:
                slots += size + paged.HEADER
                # the header names the block: the id's bits 16 to 47
                assert int(pages[base + size]) == prefix >> 16
            else:
                slots += 2 * size
                tags = pages[base + size : base + 2 * size].astype(np.int64)
                for j in np.flatnonzero(tags):
                    assert (tags[j] - 1) & mask == j
            continue
        nodes += size
        if level == 1:
            assert size >= 16  # see paged._key
        for j in range(size):
            child_base, tag, _ = parse(d[base + j])
            if child_base:
                assert tag & mask == j  # each child in its field's slot
                todo.append((d[base + j], level - 1, prefix | tag << (12 * level)))
    assert nodes == used[paged.USED_LIVE_NODES]
    assert slots == used[paged.USED_LIVE_SLOTS]
    assert len(leaves) == used[paged.USED_LEAVES]
    assert paged.FIRST_NODE + nodes <= used[paged.USED_NODES] <= d.shape[0]
    assert paged.FIRST_SLOT + slots <= used[paged.USED_SLOTS] <= pages.shape[0]
    for k, x in enumerate(dense[:n].tolist()):
        slot = own_slot(index, x)
        assert slot is not None, x
        assert int(pages[slot]) == k
        assert int(kinds.lookup(index, x)) == k
    assert s.nbytes == sum(array.nbytes for array in (*index, dense))
    return leaves


# --------------------------------------------------------------------------
# memory follows the members
# --------------------------------------------------------------------------


def test_100k_ids_uniform_over_2_40_hold_under_64_mib():
    """A 16 KiB page per id held 3.6 GiB here; a leaf of one slot, and
    nodes that grow with their children, hold a few hundredths of that."""
    ids = np.random.default_rng(1).integers(0, 2**40, 100_000)
    s = SparseSet(index="paged")
    s.add(ids)
    index, dense = s._engine.state.sparse, s._engine.state.dense
    assert s.nbytes == sum(array.nbytes for array in (*index, dense))
    assert s.nbytes < 64 * 2**20
    assert s.contains(ids).all() and len(s) == np.unique(ids).shape[0]


def test_full_blocks_scattered_wide_cost_a_page_each():
    rng = np.random.default_rng(2)
    blocks = rng.choice(2**28, 40, replace=False) << 12
    ids = rng.permutation((blocks[:, None] + np.arange(paged.PAGE_SIZE)).ravel())
    s = SparseSet(index="paged")
    s.add(ids)
    leaves = check_layout(s)
    assert leaves == [paged.PAGE_SIZE] * 40
    # 4 bytes a slot, 8 a member in dense, and the pools' spare room
    assert s.nbytes / ids.shape[0] < 32


@pytest.mark.parametrize("index", ["paged", "auto"])
def test_runs_over_a_wide_space_take_their_pages_at_once(index, monkeypatch):
    """A long batch of runs filling the blocks they touch, spread over
    2**40: every leaf starts a page (no partial leaves outgrown on the
    way) and the pools grow once or twice, not a dozen times."""
    rng = np.random.default_rng(7)
    starts = rng.choice(2**28, 30, replace=False) << 12
    ids = rng.permutation((starts[:, None] + np.arange(paged.PAGE_SIZE)).ravel())
    growths = []
    real = kernels.grown_index

    def counted(*args):
        growths.append(args[3])
        return real(*args)

    monkeypatch.setattr(kernels, "grown_index", counted)
    s = SparseSet(index=index)
    s.add(ids)
    assert s.kind == "paged"
    leaves = check_layout(s)
    assert leaves == [paged.PAGE_SIZE] * 30
    assert len(growths) <= 2
    index_arrays = s._engine.state.sparse
    # No pages taken past the batch's: about 16 KiB a block, 4 B an id.
    assert index_arrays.pages.nbytes < 1.1 * 30 * (paged.PAGE_SIZE + 1) * 4
    # The batch is in: a later leaf starts small again.
    assert index_arrays.used[paged.USED_PAGE_BUDGET] == 0
    assert index_arrays.used[paged.USED_PLANNED] == 0
    s.add([2**39 + 5])
    assert sorted(check_layout(s))[0] == 1


def test_a_mixed_batch_takes_pages_for_its_runs_within_bounds():
    """Runs and scattered ids in one batch: the pages taken at once are
    at most the blocks the sample counted, so memory stays bounded."""
    rng = np.random.default_rng(8)
    starts = rng.choice(2**28, 20, replace=False) << 12
    runs = (starts[:, None] + np.arange(paged.PAGE_SIZE)).ravel()
    scattered = rng.integers(0, 2**40, 2_000)
    ids = rng.permutation(np.concatenate([runs, scattered]))
    s = SparseSet(index="paged")
    s.add(ids)
    check_layout(s)
    assert len(s) == np.unique(ids).shape[0]
    assert s.contains(ids).all()
    assert s.nbytes < 40 * len(s)


def test_expect_pages_needs_blocks_the_ids_fill():
    index = paged.empty()
    paged.expect_pages(index, 10, 10 * config.PAGED_FULL_AT)  # not more
    assert index.used[paged.USED_PAGE_BUDGET] == 0
    assert index.used[paged.USED_PLANNED] == 0
    paged.expect_pages(index, 10, 10 * config.PAGED_FULL_AT + 1)
    assert index.used[paged.USED_PAGE_BUDGET] == 10
    assert index.used[paged.USED_PLANNED] == 1
    index, _ = filled(index, np.array([5, 2**30], np.int64))
    assert index.used[paged.USED_LEAVES] == 2
    paged.expect_pages(index, 10, 10_000)  # blocks with leaves need none
    assert index.used[paged.USED_PAGE_BUDGET] == 8
    paged.expect_pages(index, 0, 0)
    assert index.used[paged.USED_PAGE_BUDGET] == 0
    assert index.used[paged.USED_PLANNED] == 0


def test_a_leaf_goes_full_only_when_its_block_fills():
    rng = np.random.default_rng(3)
    sparse_block = rng.choice(4096, 3, replace=False)
    busy_block = 4096 + rng.choice(4096, 200, replace=False)
    s = SparseSet(index="paged")
    s.add(np.concatenate([sparse_block, busy_block]))
    leaves = sorted(check_layout(s))
    assert leaves[-1] == paged.PAGE_SIZE
    assert leaves[0] <= config.PAGED_PARTIAL_MAX


def test_capacity_gives_ids_below_it_pages_at_once():
    s = SparseSet(10_000, index="paged")
    s.add([5, 9_000, 2**40])
    leaves = sorted(check_layout(s))
    # blocks 0 and 2 are below the capacity; the wide id takes one slot
    assert leaves == [1, paged.PAGE_SIZE, paged.PAGE_SIZE]


def test_reserve_keeps_the_members_and_makes_room():
    s = SparseSet.from_ids([3, 2**40 + 3], index="paged")
    index, dense = s._engine.state.sparse, s._engine.state.dense
    grown = KINDS["paged"].reserve(index, dense, 2, 50_000)
    assert paged.rows(grown.pages) >= -(-50_000 // paged.PAGE_SIZE)
    assert [int(kinds.lookup(grown, x)) for x in (3, 2**40 + 3)] == [0, 1]
    assert KINDS["paged"].reserve(grown, dense, 2, 50_000) is grown


# --------------------------------------------------------------------------
# ids built to collide
# --------------------------------------------------------------------------


def test_ids_differing_only_in_top_bits_part_ways():
    """At every depth, an id that agrees with the members of a full page on
    all the bits a walk reads (a small node reads a few bits of its field,
    a shallow directory none of the top fields) is a new member, not the
    page's: the case its header, and 16 entries above it, exist for."""
    for y in (5, 4096 + 5, 2**24 + 7, 2**36 + 9):
        block = (y & ~FIELD) + np.arange(paged.PAGE_SIZE)
        s = SparseSet.from_ids(block, index="paged")
        shifts = (12, 14, 24, 36, 40, 44, 47)
        twins = [y + (k << shift) for shift in shifts for k in (1, 3)]
        twins = [x for x in twins if x < 2**48]
        assert s.add(twins) == len(twins)
        assert s.index(twins).tolist() == list(range(len(block), len(s)))
        np.testing.assert_array_equal(s.index(block), np.arange(len(block)))
        assert sorted(check_layout(s))[-1] == paged.PAGE_SIZE


def test_fields_sharing_low_bits_grow_their_node():
    """Fields equal in their low 11 bits need a node of all 4096 entries."""
    base = 12_345 << 12
    ids = [base] + [base + (1 << shift) for shift in (12 + 11, 24 + 11, 36 + 11)]
    s = SparseSet.from_ids(ids, index="paged")
    assert s.index(ids).tolist() == [0, 1, 2, 3]
    check_layout(s)


def colliding_ids(seed, count):
    """Ids that share most of their bits: a few bases, each with variants
    that differ from it in one bit of one field."""
    rng = np.random.default_rng(seed)
    bases = rng.integers(0, 2**48, 4)
    bits = rng.integers(0, 48, count)
    return np.unique(bases[rng.integers(0, 4, count)] ^ (1 << bits))


@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 300))
def test_colliding_ids_keep_their_own_slots(seed, count):
    ids = colliding_ids(seed, count)
    s = SparseSet(index="paged")
    for batch in np.array_split(ids, 3):
        s.add(batch)
        check_layout(s)
    assert s.contains(ids).all() and len(s) == ids.shape[0]


# --------------------------------------------------------------------------
# a paged set against a Python set, the layout checked after every step
# --------------------------------------------------------------------------

ids_anywhere = st.one_of(
    st.integers(0, 5_000),
    st.integers(0, 2**48 - 1),
    st.integers(0, 3).map(lambda k: (k << 44) + 12_345),
    st.integers(0, 4_095).map(lambda low: (777 << 12) + low),
)
steps = st.lists(
    st.tuples(
        st.sampled_from(["add", "discard", "clear", "sort"]), st.lists(ids_anywhere)
    ),
    max_size=12,
)


@given(capacity=st.sampled_from([0, 5_000]), steps=steps)
def test_a_paged_set_matches_a_python_set(capacity, steps):
    s = SparseSet(capacity, index="paged")
    model = set()
    for op, batch in steps:
        if op == "add":
            assert s.add(batch) == len(set(batch) - model)
            model |= set(batch)
        elif op == "discard":
            assert s.discard(batch) == len(set(batch) & model)
            model -= set(batch)
        elif op == "clear":
            s.clear()
            model.clear()
        else:
            s.sort()  # moves every member: an insert of each, in place
        check_layout(s)
        assert set(s.ids.tolist()) == model


def test_rollback_restores_members_into_their_slots():
    ids = colliding_ids(7, 200)
    s = SparseSet.from_ids(ids, index="paged")
    token = s.checkpoint()
    s.discard(ids[::3])
    s.rollback(token)
    assert set(s.ids.tolist()) == set(ids.tolist())
    check_layout(s)


# --------------------------------------------------------------------------
# growth: inside njit, and what survives a round trip
# --------------------------------------------------------------------------


def test_twin_grows_a_paged_index_inside_njit():
    @numba.njit
    def fill(js, ids):
        added = 0
        for x in ids:
            added += js.add(x)
        return added

    ids = colliding_ids(11, 400)
    s = SparseSet(index="paged")
    assert fill(s.jit, ids) == ids.shape[0]
    check_layout(s)
    assert s.contains(ids).all()


def test_growth_drops_outgrown_nodes_and_leaves():
    """A growth copies the live nodes only: the directory it hands back
    holds none of the nodes outgrown before it, and every id keeps its slot."""
    rng = np.random.default_rng(5)
    s = SparseSet(index="paged")
    for _ in range(20):
        s.add(rng.integers(0, 2**30, 500))
    index = s._engine.state.sparse
    used = index.used
    grown = kernels.grown_index(index, s._engine.state.dense, len(s), len(s), 0)
    gused = grown.used
    assert gused[paged.USED_NODES] == paged.FIRST_NODE + used[paged.USED_LIVE_NODES]
    assert gused[paged.USED_LIVE_SLOTS] == used[paged.USED_LIVE_SLOTS]
    for x in s.ids[:50].tolist():
        assert int(kinds.lookup(grown, x)) == int(kinds.lookup(index, x))


def test_paged_sets_and_worlds_survive_a_round_trip(tmp_path):
    ids = colliding_ids(13, 300)
    s = SparseSet.from_ids(ids, index="paged")
    back = pickle.loads(pickle.dumps(s))
    assert back.kind == "paged" and back == s
    check_layout(back)
    w = World(index="paged")
    w.register("hp", "i4")
    handles = w.create(1_000)
    w.add("hp", handles[::7], hp=np.arange(len(handles[::7])))
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    np.testing.assert_array_equal(
        loaded["hp"].get(handles[::7])["hp"], w["hp"].get(handles[::7])["hp"]
    )


@pytest.mark.parametrize("x", [2**48, 2**63 - 1, -1])
def test_ids_past_the_range_are_refused(x):
    s = SparseSet.from_ids([1, 2**47], index="paged")
    with pytest.raises(ValueError):
        s.add(x)
    assert x not in s and len(s) == 2
    check_layout(s)


def filled(index, ids):
    """``index`` (grown as needed) and its dense, after adding ``ids``."""
    dense = np.empty(len(ids), np.int64)
    n, stop = 0, 0
    while True:
        n, stop = kernels.upsert(
            index, dense, n, ids, kernels.NO_POSITIONS, stop, *kernels.UPSERT_TUNING
        )
        if stop < 0:
            return index, dense
        index = kernels.grown_index(index, dense, n, len(ids), int(ids.max()))


def test_leaf_limits_travel_in_the_index():
    """The limits are read from ``used`` at run time, by compiled code too,
    and a grown index keeps them."""
    fresh = paged.empty()
    assert fresh.used[paged.USED_PARTIAL_MAX] == config.PAGED_PARTIAL_MAX
    assert fresh.used[paged.USED_FULL_AT] == config.PAGED_FULL_AT
    assert fresh.used[paged.USED_PREFILL_BYTES] == config.PAGED_PREFILL_BYTES_PER_ID
    ids = np.array([1, 2, 3], np.int64)  # three ids of one block
    default, _ = filled(paged.empty(), ids)
    assert default.used[paged.USED_PAGES] == 0  # a small partial leaf
    eager = paged.empty()
    eager.used[paged.USED_FULL_AT] = 1
    eager, _ = filled(eager, ids)
    assert eager.used[paged.USED_PAGES] == 1  # two ids already fill a page
    assert eager.used[paged.USED_FULL_AT] == 1
    assert [int(kinds.lookup(eager, x)) for x in ids] == [0, 1, 2]
    grown = paged.room(eager, 3, 10, 2**40)
    assert grown.used[paged.USED_FULL_AT] == 1

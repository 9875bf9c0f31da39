"""The three index kinds: each against a dict model, adversarial keys for the
hash, memory for paged ids spread wide, every batch kernel agreeing across
kinds, and the shared-out lookups (including numba's cache in a fresh process).

The containers' state machines (``test_*_state.py``) run on every kind too;
this module tests what is specific to a kind.
"""

import os
import pickle
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseset import ComponentStore, SparseMap, SparseSet, World, config, kernels
from sparseset.config import PARALLEL_THRESHOLD
from sparseset.kernels.index import hashed, kinds, paged
from sparseset.sets import pool
from sparseset.sets.index_kinds import KINDS, index_nbytes

NOWHERE = int(kinds.NOWHERE)


def empty_index(kind, room=0, seed=12345):
    if kind == "hash":
        return hashed.empty(room, seed=seed)
    return KINDS[kind].new(room)


def dense_for(kind, length):
    return np.empty(length, KINDS[kind].id_dtype)


def grow_until_inserted(index, dense, n, x, p):
    """``insert`` as the containers do it: grow when the index asks to."""
    while not (kinds.accepts(index, x) and kinds.insert(index, x, p)):
        index = kernels.grown_index(index, dense, n, n + 1, x)
    return index


# --------------------------------------------------------------------------
# lookup / insert / erase against a dict
# --------------------------------------------------------------------------

ID_SPACES = {
    "flat": st.integers(0, 5_000),
    "paged": st.one_of(
        st.integers(0, 5_000),
        st.integers(0, 2**48 - 1),
        st.integers(2**48 - 9_000, 2**48 - 1),
    ),
    "hash": st.one_of(
        st.integers(0, 5_000),
        st.integers(0, 2**63 - 1),
        st.integers(2**63 - 100, 2**63 - 1),
    ),
}


@pytest.mark.parametrize("kind", list(KINDS))
@given(data=st.data())
def test_index_operations_match_a_dict(kind, data):
    """Members placed at positions, moved, erased: lookup answers as a dict."""
    ids = data.draw(st.lists(ID_SPACES[kind], unique=True, max_size=60))
    dense = dense_for(kind, len(ids) + 1)
    index = empty_index(kind)
    model = {}
    for p, x in enumerate(ids):
        dense[p] = x
        index = grow_until_inserted(index, dense, p, x, p)
        model[x] = p
    # Move some to other positions (what a swap does), erase others.
    for x in data.draw(st.lists(st.sampled_from(ids), max_size=20)) if ids else []:
        if x in model:
            if data.draw(st.booleans()):
                model[x] = data.draw(st.integers(0, 2**32 - 2))
                assert kinds.insert(index, x, model[x])
            else:
                kinds.erase(index, x)
                del model[x]
    for x, p in model.items():
        assert int(kinds.lookup(index, x)) == p
    if kind == "hash":
        for x in set(ids) - set(model):
            assert int(kinds.lookup(index, x)) == NOWHERE
        assert int(index.meta[0]) == len(model)


@pytest.mark.parametrize("kind", list(KINDS))
@given(data=st.data())
def test_lookup_many_answers_as_a_loop_of_lookup(kind, data):
    """The batch lookup (pipelined per kind) agrees with one id at a time,
    on members, non-members and ids past the range, over any sub-range."""
    members = data.draw(st.lists(ID_SPACES[kind], unique=True, max_size=80))
    dense = dense_for(kind, len(members) + 1)
    index = empty_index(kind)
    for p, x in enumerate(members):
        dense[p] = x
        index = grow_until_inserted(index, dense, p, x, p)
    others = data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40))
    ids = np.array(members + others, np.int64)
    data.draw(st.randoms()).shuffle(ids)
    start = data.draw(st.integers(0, len(ids)))
    stop = data.draw(st.integers(start, len(ids)))
    expected = [int(kinds.lookup(index, x)) for x in ids[start:stop]]
    for lookup_many in (kinds.lookup_many, _compiled_lookup_many):
        out = np.full(stop - start + 1, 7, np.uint64)
        lookup_many(index, ids, start, stop, out, config.HASH_PREFETCH_AHEAD)
        assert out[: stop - start].tolist() == expected
        assert out[-1] == 7


@numba.njit
def _compiled_lookup_many(index, ids, start, stop, out, ahead):
    kinds.lookup_many(index, ids, start, stop, out, ahead)


@pytest.mark.parametrize("kind", list(KINDS))
def test_ids_past_the_range_are_never_accepted_nor_found(kind):
    index = empty_index(kind)
    dense = dense_for(kind, 2)
    # Member 0 at position 0: a paged lookup of an id past the range wraps
    # onto an in-range slot such as 0's, and only dense may disprove it.
    index = grow_until_inserted(index, dense, 0, 0, 0)
    dense[0] = 0
    limit = KINDS[kind].limit
    past = [np.int64(x) for x in (limit, limit + 1, 2**63 - 1) if limit <= x < 2**63]
    past += [np.uint64(2**63), np.uint64(2**64 - 1), np.int64(-1), np.int64(-(2**63))]
    for x in past:
        assert not kinds.in_range(index, x)
        assert not kinds.accepts(index, x)
        assert kernels.find(index, dense, 1, x) == -1
        if kind != "paged":
            assert int(kinds.lookup(index, x)) == NOWHERE
    assert kinds.in_range(index, np.int64(limit - 1))
    assert kernels.find(index, dense, 1, 0) == 0


# --------------------------------------------------------------------------
# hash: adversarial keys
# --------------------------------------------------------------------------


def probe_lengths(index):
    """How far each key sits from the first slot of its home bucket."""
    used, keys, _ = hashed.entries(index)
    homes = hashed.WAYS * np.array(
        [int(hashed.home(k, index.meta[1], index.meta[2])) for k in keys]
    )
    return (used - homes) % hashed.slots_of(index.table)


ADVERSARIAL = {
    # Multiples of every table size the set passes through: they collide
    # modulo the table size under an identity or modulo hash.
    "multiples of 2**21": np.arange(1, 20_001, dtype=np.int64) << 21,
    "multiples of 2**40": np.arange(1, 20_001, dtype=np.int64) << 40,
    "same low 32 bits": (np.arange(1, 20_001, dtype=np.int64) << 32) | 0xABCDEF,
    "near 2**63 - 1": 2**63 - 1 - np.arange(20_000, dtype=np.int64),
    "sequential": np.arange(20_000, dtype=np.int64),
    "stride 4096": np.arange(20_000, dtype=np.int64) * 4_096,
    "stride 2**31 - 1": np.arange(20_000, dtype=np.int64) * (2**31 - 1),
}


@pytest.mark.parametrize("pattern", ADVERSARIAL, ids=list(ADVERSARIAL))
def test_hash_spreads_adversarial_keys(pattern):
    ids = ADVERSARIAL[pattern]
    s = SparseSet(index="hash")
    assert s.add(ids) == ids.shape[0]
    assert s.contains(ids).all()
    np.testing.assert_array_equal(s.index(ids), np.arange(ids.shape[0]))
    absent = ids[:1000] ^ (1 << 61)  # none of the patterns has these
    assert not np.isin(absent, ids).any() and not s.contains(absent).any()
    lengths = probe_lengths(s._engine.state.sparse)
    # At most half full, a good hash leaves keys about one slot from home;
    # colliding patterns would pile up thousands deep.
    assert lengths.mean() < 2.0, lengths.mean()
    assert lengths.max() < 64, lengths.max()
    # Removing them all leaves an empty table, not tombstones.
    assert s.discard(ids[::-1]) == ids.shape[0]
    assert int(s._engine.state.sparse.meta[0]) == 0
    assert (s._engine.state.sparse.table[:, : hashed.WAYS] == hashed.EMPTY).all()


def colliding_keys(index, count):
    """``count`` keys whose home slot is 0 in ``index``'s table: the worst case."""
    keys, x = [], 0
    while len(keys) < count:
        if int(hashed.home(x, index.meta[1], index.meta[2])) == 0:
            keys.append(x)
        x += 1
    return keys


@pytest.mark.parametrize("order", ["forward", "backward", "middle first"])
def test_hash_erase_shifts_back_a_run_of_colliding_keys(order):
    index = hashed.empty(0, seed=99)  # 16 slots, up to 8 keys
    keys = colliding_keys(index, 8)
    dense = np.array(keys, np.int64)
    for p, x in enumerate(keys):
        assert kinds.insert(index, x, p)
    # One more new key would pass the load limit: insert asks to grow.
    assert not kinds.insert(index, 10**9, 8)
    assert [int(kinds.lookup(index, x)) for x in keys] == list(range(8))
    gone = {"forward": keys, "backward": keys[::-1]}.get(order, keys[3:] + keys[:3])
    for k, x in enumerate(gone):
        kinds.erase(index, x)
        kinds.erase(index, x)  # erasing an absent key changes nothing
        for y in gone[k + 1 :]:
            assert int(kinds.lookup(index, y)) == keys.index(y)
        assert int(kinds.lookup(index, x)) == NOWHERE
        assert int(index.meta[0]) == len(gone) - k - 1
    assert (index.table[:, : hashed.WAYS] == hashed.EMPTY).all()
    # A rebuilt table holds the same positions.
    rebuilt = kernels.grown_index(index, dense, 8, 100, 0)
    assert [int(kinds.lookup(rebuilt, x)) for x in keys] == list(range(8))


def test_hash_churn_never_grows_the_table():
    rng = np.random.default_rng(7)
    s = SparseSet(index="hash")
    s.add(rng.integers(0, 2**62, 5_000))
    slots = s._engine.state.sparse.table.shape[0]
    for _ in range(50):
        batch = rng.integers(0, 2**62, 1_000)
        s.add(batch)
        s.discard(batch)
    assert s._engine.state.sparse.table.shape[0] == slots
    assert int(s._engine.state.sparse.meta[0]) == len(s) == 5_000


def test_hash_seeds_differ_between_sets():
    a, b = SparseSet(index="hash"), SparseSet(index="hash")
    assert a._engine.state.sparse.meta[1] != b._engine.state.sparse.meta[1]


def test_hash_is_correct_when_every_key_collides():
    # Crafted against one table's seed: correct, only slower.
    s = SparseSet(index="hash")
    keys = colliding_keys(s._engine.state.sparse, 8)
    s.add(keys)
    assert s.contains(keys).all() and s.discard(keys[::2]) == 4
    assert s.contains(keys).tolist() == [False, True] * 4


# --------------------------------------------------------------------------
# paged: memory follows the members
# --------------------------------------------------------------------------


def test_paged_ids_spread_over_2_40_stay_small():
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 2**40, 1_000)
    s = SparseSet(index="paged")
    s.add(ids)
    assert s.contains(ids).all() and len(s) == np.unique(ids).shape[0]
    index = s._engine.state.sparse
    pages = np.unique(ids >> paged.PAGE_BITS).shape[0]
    assert int(index.used[paged.USED_LEAVES]) == pages
    # A one-slot leaf per id and nodes that grow with their children, pools
    # at most doubled: under a megabyte, where a 16 KiB page per id took 16
    # MiB and a flat index over the same space would need 4 TiB.
    assert s.nbytes < 2**20


def test_paged_clustered_ids_cost_a_few_bytes_each():
    rng = np.random.default_rng(4)
    bases = rng.choice(2**28, 25, replace=False) << 12
    ids = (bases[:, None] + np.arange(4_096)).ravel()
    s = SparseSet(index="paged")
    s.add(rng.permutation(ids))
    assert int(s._engine.state.sparse.used[paged.USED_LEAVES]) == 25
    # 4 per slot + 8 per id, small directory nodes per scattered block, and
    # pools up to doubled: under 32 bytes per member, not 4 TiB of flat index
    assert s.nbytes / ids.shape[0] < 32
    assert s.contains(ids).all() and not s.contains(ids + 4_096 * 2**20).any()


def test_paged_directory_edges():
    edges = [0, 4_095, 4_096, 2**24 - 1, 2**24, 2**36 - 1, 2**36, 2**48 - 1]
    s = SparseSet(index="paged")
    assert s.add(edges) == len(edges)
    np.testing.assert_array_equal(s.index(edges), np.arange(len(edges)))
    neighbours = [x + 1 for x in edges[:-1] if x + 1 not in edges]
    assert not s.contains(neighbours).any()
    assert not s.contains([2**48, 2**60]).any()


# --------------------------------------------------------------------------
# every batch kernel gives the same answers on every kind
# --------------------------------------------------------------------------


def built(kind, ids):
    """A set of ``kind`` holding ``ids`` (distinct), at the kernel level."""
    capacity = 4_096 if kind == "flat" else 0
    index, dense = empty_index(kind, capacity), dense_for(kind, max(len(ids), 1))
    n, stop = 0, 0
    arr = np.asarray(ids, np.int64)
    while True:
        n, stop = kernels.upsert(
            index, dense, n, arr, kernels.NO_POSITIONS, stop, *kernels.UPSERT_TUNING
        )
        if stop < 0:
            return index, dense, int(n)
        index = kernels.grown_index(index, dense, n, len(ids), int(arr.max()))


small_ids = st.lists(st.integers(0, 4_000), unique=True, max_size=40)


@given(members=small_ids, batch=st.lists(st.integers(0, 4_100), max_size=30))
def test_batch_kernels_agree_across_kinds(members, batch):
    q = np.array(batch, np.int64)
    results = {}
    for kind in KINDS:
        index, dense, n = built(kind, members)
        out_b = np.empty(q.shape[0], np.bool_)
        out_i = np.empty(q.shape[0], np.int64)
        kernels.find_all(index, dense, n, q, out_b, *kernels.LOOKUP_TUNING)
        kernels.find_all(index, dense, n, q, out_i, *kernels.LOOKUP_TUNING)
        first = kernels.first_mismatch(index, dense, n, q, True)
        d = dense.copy()
        ix = pickle.loads(pickle.dumps(index))
        after_discard = kernels.discard(ix, d, n, q, *kernels.DISCARD_TUNING)
        removed_order = d[:n].tolist()
        reindexed = [int(kernels.find(ix, d, after_discard, x)) for x in d[:n]]
        d2 = dense.copy()
        ix2 = pickle.loads(pickle.dumps(index))
        kept = kernels.keep_only(ix2, d2, n, q)
        kept_ok = [int(kernels.find(ix2, d2, kept, x)) for x in d2[:n]]
        d3 = dense.copy()
        ix3 = pickle.loads(pickle.dumps(index))
        kernels.sort(ix3, d3, n)
        sorted_ok = [int(kernels.find(ix3, d3, n, x)) for x in d3[:n]]
        rows = (np.arange(max(n, 1), dtype=np.uint64).reshape(-1, 1),)
        d4, ix4 = dense.copy(), pickle.loads(pickle.dumps(index))
        front = kernels.pack_front(ix4, d4, n, 0, q, rows)
        back = kernels.pack_back(ix4, d4, n, front, q[::-1], rows)
        results[kind] = (
            out_b.tolist(),
            out_i.tolist(),
            int(first),
            int(after_discard),
            removed_order,
            reindexed,
            int(kept),
            d2[:n].tolist(),
            kept_ok,
            d3[:n].tolist(),
            sorted_ok,
            int(front),
            int(back),
            d4[:n].tolist(),
            rows[0][:n, 0].tolist(),
        )
        # what a flat index promises: members found, removed ones not
        assert reindexed[:after_discard] == list(range(after_discard))
        assert all(p == -1 for p in reindexed[after_discard:])
        assert kept_ok == list(range(kept)) + [-1] * (n - kept)
        assert sorted_ok == list(range(n))
    assert results["paged"] == results["flat"] == results["hash"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_rollback_restores_members_on_every_kind(kind):
    s = SparseSet.from_ids(range(100), index=kind)
    token = s.checkpoint()
    s.discard(range(0, 100, 3))
    s.keep_only(range(50))
    s.remove([1, 2])
    s.pop()
    s.rollback(token)
    assert sorted(s) == list(range(100))
    np.testing.assert_array_equal(s.index(s.ids), np.arange(100))
    if kind == "hash":
        assert int(s._engine.state.sparse.meta[0]) == 100


@pytest.mark.parametrize("kind", ["paged", "hash"])
def test_a_failed_add_changes_nothing(kind):
    s = SparseSet(index=kind)
    s.add(np.arange(5_000) * 7)
    before = (s.ids.copy(), s.nbytes, s.capacity)
    bad = np.arange(10**6, 10**6 + 20_001, dtype=np.uint64)
    bad[-1] = KINDS[kind].limit
    with pytest.raises(ValueError, match=str(KINDS[kind].limit)):
        s.add(bad)
    np.testing.assert_array_equal(s.ids, before[0])
    assert (s.nbytes, s.capacity) == before[1:]
    assert not s.contains(bad[:-1].astype(np.int64)).any()
    if kind == "hash":
        assert int(s._engine.state.sparse.meta[0]) == 5_000  # the undone keys are gone


# --------------------------------------------------------------------------
# containers on every kind
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_containers_keep_their_kind(kind):
    s = SparseSet.from_ids([3, 1, 2], index=kind)
    assert s.kind == kind and s.ids.dtype == KINDS[kind].id_dtype
    for twin in (s.copy(), pickle.loads(pickle.dumps(s)), s | {9}, s & s, s - {1}):
        assert twin.kind == kind
    store = ComponentStore({"hp": "i4"}, index=kind)
    store.add([5, 6], hp=[1, 2])
    again = pickle.loads(pickle.dumps(store))
    assert again.kind == kind and again.get([6])["hp"].tolist() == [2]
    m = SparseMap("f8", index=kind)
    m[7] = 1.5
    assert m.kind == kind and pickle.loads(pickle.dumps(m)).kind == kind
    w = World(index=kind)
    w.register("pos", "f8", shape=(2,))
    e = w.create(3)
    w.add("pos", e[1:], pos=1.0)
    assert w["pos"].kind == kind and w.kind == kind
    assert pickle.loads(pickle.dumps(w))["pos"].kind == kind


@pytest.mark.parametrize("kind", ["paged", "hash"])
def test_wide_ids_in_stores_and_maps(kind):
    ids = np.array([2**40 + 5, 3, 2**47 + 1, 2**31], np.int64)
    store = ComponentStore({"pos": ("f8", 2)}, index=kind)
    assert store.add(ids, pos=np.arange(8.0).reshape(4, 2)) == 4
    assert store.get(2**47 + 1)["pos"].tolist() == [4.0, 5.0]
    store.sort()
    assert store.ids.tolist() == sorted(ids.tolist())
    assert store.get(2**40 + 5)["pos"].tolist() == [0.0, 1.0]
    assert store.discard([3, 2**31]) == 2 and len(store) == 2
    m = SparseMap("i8", index=kind)
    m[2**45] = 7
    assert m[2**45] == 7 and 2**45 in m and 2**45 + 1 not in m


def test_flat_add_past_its_range_names_the_kind_that_takes_it():
    with pytest.raises(ValueError, match=r"2\*\*31\).*index='paged'") as raised:
        SparseSet(index="flat").add([1, 2**40])
    # Scattered wide ids belong in a hash index: the message says so too.
    assert "scattered ids, index='hash' takes any in [0, 2**63)" in str(raised.value)
    with pytest.raises(ValueError, match=r"index='hash' takes ids in \[0, 2\*\*63\)"):
        SparseSet(index="paged").add(2**50)
    with pytest.raises(ValueError, match="no index kind takes"):
        SparseSet(index="hash").add(np.uint64(2**63))
    with pytest.raises(ValueError, match="index='hash'"):
        ComponentStore({"hp": "i4"}, index="flat").add([2**60], hp=1)


@pytest.mark.parametrize("bad", ["tree", "", None, 3, "FLAT"])
def test_unknown_kinds_are_refused(bad):
    with pytest.raises(ValueError, match="not an index kind"):
        SparseSet(index=bad)
    with pytest.raises(ValueError, match="not an index kind"):
        World(index=bad)


@pytest.mark.parametrize("kind", ["paged", "hash"])
def test_capacity_counts_members_for_paged_and_hash(kind):
    s = SparseSet(1_000, index=kind)
    assert s.capacity >= 1_000
    s.reserve(50_000)
    assert s.capacity >= 50_000
    with pytest.raises(ValueError, match="2\\*\\*32 - 1"):
        SparseSet(2**33, index=kind)
    with pytest.raises(TypeError):
        SparseSet(1.5, index=kind)


@pytest.mark.parametrize("kind", list(KINDS))
def test_nbytes_counts_every_array(kind):
    s = SparseSet.from_ids(np.arange(10_000) * 3, index=kind)
    a = s._engine.state
    assert s.nbytes == index_nbytes(a.sparse) + a.dense.nbytes
    store = ComponentStore({"pos": ("f8", 3), "hp": "i4"}, index=kind)
    store.add(np.arange(100), pos=1.0)
    columns = store._engine.state
    assert store.nbytes == store._engine.nbytes + columns._col_pos.nbytes + (
        columns._col_hp.nbytes
    )
    w = World(index=kind)
    w.register("pos", "f8", shape=(3,))
    w.add("pos", w.create(10), pos=0.0)
    assert w.nbytes > w["pos"].nbytes


@pytest.mark.parametrize("kind", list(KINDS))
def test_jit_twin_grows_every_kind_inside_njit(kind):
    top = {"flat": 2**20, "paged": 2**45, "hash": 2**62}[kind]

    @numba.njit
    def fill(js, ids):
        added = 0
        for x in ids:
            added += js.add(x)
        for x in ids[::2]:
            js.remove(x)
        return added, js.size

    s = SparseSet(index=kind)
    ids = np.random.default_rng(5).integers(0, top, 3_000)
    added, size = fill(s.jit, ids)
    distinct = np.unique(ids)
    assert added == distinct.shape[0]
    assert size == len(s) == np.unique(np.setdiff1d(ids, ids[::2])).shape[0]
    assert set(s.ids.tolist()) == set(ids.tolist()) - set(ids[::2].tolist())
    assert s.contains(ids[1::2][~np.isin(ids[1::2], ids[::2])]).all()


# --------------------------------------------------------------------------
# threaded lookups
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("size", [0, 1, 4_095, 4_096, 4_097, 70_001])
def test_shared_lookups_equal_serial(monkeypatch, kind, size):
    """A batch shared out in spans over four threads answers as one call."""
    monkeypatch.setattr(pool, "lookup_threads", lambda: 4)
    rng = np.random.default_rng(size)
    space = {"flat": 10**6, "paged": 2**44, "hash": 2**62}[kind]
    index, dense, n = built_big(kind, rng.integers(0, space, 50_000))
    q = rng.integers(0, space, size)
    q[: size // 2] = dense[rng.integers(0, n, size // 2)]
    tuning = kernels.LOOKUP_TUNING
    for ids in (q, q.astype(np.uint64), np.where(q % 97 == 0, -q, q)):
        for dtype in (np.bool_, np.int64):
            got, want = np.empty(size, dtype), np.empty(size, dtype)
            flag = pool.share_out(
                size,
                lambda start, stop, ids=ids, got=got: kernels.find_all(
                    index, dense, n, ids[start:stop], got[start:stop], *tuning
                ),
            )
            assert flag == kernels.find_all(index, dense, n, ids, want, *tuning)
            np.testing.assert_array_equal(got, want)


def built_big(kind, ids):
    s = SparseSet(index=kind)
    s.add(ids)
    a = s._engine.state
    return a.sparse, a.dense, a.n


@pytest.mark.parametrize("threads", [1, 2])
def test_public_lookups_honour_the_thread_count(threads):
    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("fewer numba threads on this machine")
    rng = np.random.default_rng(9)
    s = SparseSet.from_ids(rng.integers(0, 10**6, 100_000))
    q = rng.integers(0, 10**6, 2 * PARALLEL_THRESHOLD)
    want = np.isin(q, s.ids)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        np.testing.assert_array_equal(s.contains(q), want)
        idx = s.index(q)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(idx >= 0, want)
    np.testing.assert_array_equal(s.ids[idx[want]], q[want])
    with pytest.raises(ValueError, match="non-negative"):
        s.contains(np.concatenate([q, [-5]]))


FRESH_PROCESS = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    # The ticker may hold the GIL this long before the lookup starts.
    sys.setswitchinterval(0.0005)
    from sparseset import SparseSet, kernels
    rng = np.random.default_rng(1)
    s = SparseSet(index="hash")
    s.add(rng.integers(0, 10**6, 50_000))
    a = s._engine.state
    q = rng.integers(0, 10**6, 4_000_000)
    out = np.empty(q.size, bool)
    # Compiled (or loaded) before the clock starts: compiling runs Python.
    kernels.find_all(a.sparse, a.dense, a.n, q[:10], out[:10], *kernels.LOOKUP_TUNING)
    stamps, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            stamps.append(time.perf_counter())

    ticker = threading.Thread(target=tick)
    ticker.start()
    windows = []
    for _ in range(5):
        begin = time.perf_counter()
        kernels.find_all(a.sparse, a.dense, a.n, q, out, *kernels.LOOKUP_TUNING)
        windows.append((begin + 0.002, time.perf_counter() - 0.002))
    stop.set()
    ticker.join()
    inside = sum(1 for t in stamps for begin, end in windows if begin < t < end)
    hits = sum(kernels.find_all.stats.cache_hits.values())
    print(hits, inside, int(out.sum()))
    """
)


@pytest.mark.fresh_process
def test_the_cached_lookup_kernel_releases_the_gil_in_a_fresh_process(tmp_path):
    """Another Python thread runs while ``find_all`` looks a batch up, in
    the process that compiles it and in one that loads it from numba's
    cache (whose index ignores ``nogil``: a stale entry would hold it)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_NUM_THREADS": "2"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", FRESH_PROCESS],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
    first, second = ([int(v) for v in run.stdout.split()] for run in runs)
    assert first[2] == second[2]
    assert second[0] > 0, "the second process compiled instead of loading"
    assert first[1] > 0 and second[1] > 0, "no other thread ran during a lookup"


def test_paged_directory_deepens_only_as_far_as_the_ids_need():
    """One level below 2**24, two below 2**36, three up to 2**48; deepening
    keeps every earlier id's slot."""
    s = SparseSet(index="paged")
    steps = [
        (5, 1),
        (2**24 - 1, 1),
        (2**24, 2),
        (2**36 - 1, 2),
        (2**36, 3),
        (2**48 - 1, 3),
    ]
    added = []
    for x, depth in steps:
        s.add(x)
        added.append(x)
        assert int(s._engine.state.sparse.used[2]) == depth
        assert s.contains(added).all()
        assert s.index(added).tolist() == list(range(len(added)))
    # Ids the directory does not reach yet wrap onto reachable slots: absent.
    shallow = SparseSet.from_ids([1, 4096 + 1], index="paged")
    assert not shallow.contains([2**24 + 1, 2**36 + 1, 2**47 + 4096 + 1]).any()
    # Deepening straight to three levels in one insert, onto the slot a
    # shallower directory's lookup wraps 2**47 + 3 to (3's).
    deep = SparseSet.from_ids([3, 2**47 + 3, 7], index="paged")
    assert int(deep._engine.state.sparse.used[2]) == 3
    assert deep.index([7, 2**47 + 3, 3]).tolist() == [2, 1, 0]

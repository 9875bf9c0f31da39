"""The hash index's layout: buckets of 4 slots compared at once, complemented
keys in a zeroed, line-aligned table, runs that wrap around the table.

What every index kind must do (answer as a dict, grow, survive churn) is
tested in ``test_index_kinds.py``; this module checks the hash layout's own
promises, and that the compiled vector probe agrees with its plain Python
version on any bucket.
"""

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseset import SparseSet, config, kernels
from sparseset.kernels.index import hashed, kinds

NOWHERE = int(kinds.NOWHERE)


@numba.njit
def _compiled_first_stop(table, base, want):
    return hashed.first_stop(table, base, want)


@numba.njit
def _compiled_room(index, n, members):
    return hashed.room(index, n, members, 0)


@numba.njit
def _compiled_lookups(index, ids):
    out = np.empty(ids.shape[0], np.int64)
    for k in range(ids.shape[0]):
        out[k] = kinds.lookup(index, ids[k])
    return out


@numba.njit
def _compiled_insert(index, x, p):
    return kinds.insert(index, x, p)


@numba.njit
def _compiled_erase(index, x):
    kinds.erase(index, x)


def check_runs(index):
    """Every key is reachable: no free slot between its home bucket and it,
    and the count in meta is the number of slots in use."""
    slots = hashed.slots_of(index.table)
    used, keys, _ = hashed.entries(index)
    occupied = np.zeros(slots, bool)
    occupied[used] = True
    for slot, key in zip(used.tolist(), keys.tolist(), strict=True):
        start = hashed.WAYS * int(
            hashed.home(key, index.meta[hashed.SEED], index.meta[hashed.SHIFT])
        )
        path = (start + np.arange((slot - start) % slots)) % slots
        assert occupied[path].all(), (key, start, slot)
    assert int(index.meta[hashed.USED]) == used.shape[0]


def keys_homed_at(index, bucket, count, start=0):
    """``count`` ids whose home is ``bucket`` in ``index``'s table."""
    found, x = [], start
    while len(found) < count:
        if (
            int(hashed.home(x, index.meta[hashed.SEED], index.meta[hashed.SHIFT]))
            == bucket
        ):
            found.append(x)
        x += 1
    return found


# --------------------------------------------------------------------------
# the bucket compare
# --------------------------------------------------------------------------

KEY_WORDS = st.sampled_from([0, -1, -2, -(2**63), 5, 2**63 - 1])


@given(
    keys=st.lists(KEY_WORDS, min_size=8, max_size=8),
    positions=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=8, max_size=8),
    want=KEY_WORDS,
    base=st.sampled_from([0, 4]),
    offset=st.integers(0, 7),
)
def test_first_stop_compiled_agrees_with_python(keys, positions, want, base, offset):
    """Any keys, any positions (a position equal to want or 0 never counts),
    at any alignment of the table in memory: each bucket's keys, then its
    positions."""
    words = np.empty(2 * len(keys) + offset, np.int64)[offset:]
    table = words.reshape(-1, 2 * hashed.WAYS)
    table[:, : hashed.WAYS] = np.reshape(keys, (-1, hashed.WAYS))
    table[:, hashed.WAYS :] = np.reshape(positions, (-1, hashed.WAYS))
    expected = next(
        (w for w in range(hashed.WAYS) if keys[base + w] in (want, hashed.EMPTY)),
        hashed.WAYS,
    )
    assert int(hashed.first_stop(table, base, want)) == expected
    assert int(_compiled_first_stop(table, np.uint64(base), want)) == expected


# --------------------------------------------------------------------------
# the table: zeroed, aligned, complemented keys
# --------------------------------------------------------------------------


@pytest.mark.parametrize("members", [0, 9, 1_000, 300_000])
def test_new_tables_are_free_and_line_aligned(members):
    for index in (
        hashed.empty(members, seed=5),
        hashed.room(hashed.empty(seed=5), 0, members, 0),
        _compiled_room(hashed.empty(seed=5), 0, members),
    ):
        table = index.table
        slots = hashed.slots_for(members, config.HASH_MAX_LOAD_PERCENT)
        assert table.shape == (slots // hashed.WAYS, 2 * hashed.WAYS)
        assert table.flags.c_contiguous
        assert table.ctypes.data % hashed.ALIGN == 0
        assert not table.any()
        assert int(index.meta[hashed.USED]) == 0 and int(index.meta[hashed.SEED]) == 5
        # the shift takes a 64-bit hash to a bucket number
        buckets = table.shape[0]
        assert int(index.meta[hashed.SHIFT]) == 64 - (buckets.bit_length() - 1)


def test_keys_are_stored_complemented_so_zero_is_a_free_slot():
    index = hashed.empty(seed=3)
    ids = [0, 1, 2**63 - 1]
    for p, x in enumerate(ids):
        assert kinds.insert(index, x, p)
    keys = index.table[:, : hashed.WAYS]
    assert sorted(keys[keys != hashed.EMPTY].tolist()) == sorted(~x for x in ids)
    _, stored, positions = hashed.entries(index)
    assert sorted(zip(stored.tolist(), positions.tolist(), strict=True)) == sorted(
        zip(ids, range(3), strict=True)
    )
    assert [int(kinds.lookup(index, x)) for x in ids] == [0, 1, 2]
    # position 0 and id 0 are not "free": only the key word says so
    assert int(kinds.lookup(index, 3)) == NOWHERE


def test_a_table_off_its_cache_lines_works_the_same():
    """A table that is not line-aligned (from elsewhere than this module)
    gives the same answers, only slower."""
    rng = np.random.default_rng(11)
    ids = rng.choice(2**62, 3_000, replace=False)
    aligned = hashed.empty(len(ids), seed=17)
    words = np.zeros(aligned.table.size + 1, np.int64)[1:]
    assert words.ctypes.data % hashed.ALIGN != 0
    shifted = hashed.HashIndex(words.reshape(aligned.table.shape), aligned.meta.copy())
    for index in (aligned, shifted):
        for p, x in enumerate(ids):
            assert _compiled_insert(index, x, p)
        for x in ids[::3]:
            _compiled_erase(index, x)
        check_runs(index)
    np.testing.assert_array_equal(aligned.table, shifted.table)
    queries = np.concatenate([ids, rng.choice(2**62, 1_000)])
    np.testing.assert_array_equal(
        _compiled_lookups(aligned, queries), _compiled_lookups(shifted, queries)
    )


# --------------------------------------------------------------------------
# probe runs across buckets and around the end of the table
# --------------------------------------------------------------------------


@pytest.mark.parametrize("bucket", ["first", "last"])
@given(order=st.randoms(use_true_random=False), compiled=st.booleans())
def test_a_run_spilling_past_its_bucket_erases_and_finds_back(bucket, order, compiled):
    """8 ids homed at one bucket fill it and the next (from the last bucket,
    the next is the first): every erase order leaves every other id found."""
    index = hashed.empty(0, seed=99)  # 16 slots: 4 buckets, up to 8 keys
    last = index.table.shape[0] - 1
    keys = keys_homed_at(index, 0 if bucket == "first" else last, 8)
    insert = _compiled_insert if compiled else kinds.insert
    erase = _compiled_erase if compiled else kinds.erase
    for p, x in enumerate(keys):
        assert insert(index, x, p)
    used = hashed.entries(index)[0]
    spill = [0, 1, 2, 3] if bucket == "first" else [12, 13, 14, 15]
    assert sorted(used.tolist()) == sorted(spill + [(s + 4) % 16 for s in spill])
    check_runs(index)
    positions = dict(zip(keys, range(8), strict=True))
    gone = list(keys)
    order.shuffle(gone)
    for x in gone:
        erase(index, x)
        del positions[x]
        check_runs(index)
        for y, p in positions.items():
            assert int(kinds.lookup(index, y)) == p
        assert int(kinds.lookup(index, x)) == NOWHERE
    assert not index.table[:, : hashed.WAYS].any()


@given(
    data=st.data(),
    ids=st.lists(
        st.one_of(st.integers(0, 200), st.integers(0, 2**63 - 1)),
        unique=True,
        max_size=120,
    ),
)
def test_python_and_compiled_operations_leave_the_same_table(data, ids):
    """The plain Python operations (doctests, NUMBA_DISABLE_JIT) and the
    compiled ones build bit-identical tables and answer alike."""
    python = hashed.empty(len(ids), seed=21)
    compiled = hashed.empty(len(ids), seed=21)
    for p, x in enumerate(ids):
        assert kinds.insert(python, x, p)
        assert _compiled_insert(compiled, x, p)
    for x in data.draw(st.lists(st.sampled_from(ids), max_size=40)) if ids else []:
        kinds.erase(python, x)
        _compiled_erase(compiled, x)
    np.testing.assert_array_equal(python.table, compiled.table)
    np.testing.assert_array_equal(python.meta, compiled.meta)
    check_runs(compiled)
    queries = np.array([*ids, 201, 2**62 + 1], np.int64)
    expected = [int(kinds.lookup(python, x)) for x in queries]
    assert _compiled_lookups(compiled, queries).tolist() == expected


def test_a_set_grown_many_times_keeps_its_runs_intact():
    """Through the containers: growth, churn and an undone batch."""
    rng = np.random.default_rng(4)
    s = SparseSet(index="hash")
    for _ in range(5):
        s.add(rng.integers(0, 2**63, 4_000, dtype=np.int64))
        s.discard(s.ids[::3].copy())
    check_runs(s._engine.state.sparse)
    before = s.ids.copy()
    bad = np.concatenate([rng.integers(0, 2**62, 50_000), [-1]])
    with pytest.raises(ValueError):
        s.add(bad)
    np.testing.assert_array_equal(s.ids, before)
    check_runs(s._engine.state.sparse)
    np.testing.assert_array_equal(s.index(before), np.arange(len(s)))


@pytest.mark.parametrize("load", [10, 50, 90])
def test_a_table_keeps_its_load_limit_as_it_grows(load):
    """The limit is the index's own (``meta[LOAD]``), read by Python and
    compiled code alike: growth keeps it, and the table is as small as it
    allows, never fuller."""
    index = hashed.empty(seed=2, load=load)
    ids = np.arange(3_000, dtype=np.int64) * 104_729
    dense = np.empty(len(ids), np.int64)
    n, stop = 0, 0
    while True:
        n, stop = kernels.upsert(
            index, dense, n, ids, kernels.NO_POSITIONS, stop, *kernels.UPSERT_TUNING
        )
        if stop < 0:
            break
        index = kernels.grown_index(index, dense, n, n + 1, 0)
    slots = hashed.slots_of(index.table)
    assert int(index.meta[hashed.LOAD]) == load
    assert int(index.meta[hashed.USED]) == n == 3_000
    assert slots == hashed.slots_for(3_000, load)
    assert not hashed.over_load(3_000, slots, load)
    assert hashed.capacity(index, dense) == min(3_000, slots * load // 100)
    check_runs(index)
    positions = np.empty(len(ids), np.int64)
    kernels.find_all(index, dense, n, ids, positions, *kernels.LOOKUP_TUNING)
    assert positions.tolist() == list(range(3_000))


def test_a_new_index_takes_the_configured_load():
    index = hashed.empty(seed=1)
    assert int(index.meta[hashed.LOAD]) == config.HASH_MAX_LOAD_PERCENT
    assert index.meta.shape == (hashed.META_LENGTH,)

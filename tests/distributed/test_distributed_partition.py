"""The partition kernels and layouts, without a cluster: ``sparseset.kernels.partition``
and ``sparseset.distributed.layout``.

A split must be a stable counting sort by shard: every shard's run holds
exactly its ids in batch order (local to the block for a range layout),
the tags give every id's shard, and merging per-run answers restores the
batch order. Checked against plain numpy on random batches of every
integer dtype, with bad ids (negative, past a limit) reported at their
first position.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sparseset.distributed.layout import Layout, check_shards, merge
from sparseset.kernels import partition

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def reference_mix(x: int) -> int:
    m = (1 << 64) - 1
    z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def reference_shard(x: int, layout: Layout) -> int:
    if layout.by == "hash":
        return reference_mix(x) % layout.shards
    return min(x // layout.width, layout.shards - 1)


layouts = st.one_of(
    st.integers(1, 9).map(Layout.hash),
    st.builds(Layout.range, st.integers(1, 9), st.integers(0, 300)),
)


@given(
    data=st.data(),
    dtype=st.sampled_from(DTYPES),
    layout=layouts,
)
def test_split_is_a_stable_sort_by_shard_and_merge_undoes_it(data, dtype, layout):
    top = min(np.iinfo(dtype).max, 400)
    ids = data.draw(hnp.arrays(dtype, st.integers(0, 60), elements=st.integers(0, top)))
    split, bad = layout.split(ids)
    assert bad == -1
    shards = [reference_shard(int(x), layout) for x in ids]
    assert split.tags.tolist() == shards
    assert split.starts[0] == 0 and split.starts[-1] == len(ids)
    for k in range(layout.shards):
        expected = [
            int(x) - layout.start(k) for x, s in zip(ids, shards, strict=True) if s == k
        ]
        assert split.run(k).tolist() == expected
        assert split.run(k).dtype == ids.dtype
    # Each run's answer is its ids times 3 (plus the shard): merged back,
    # every position gets its own id's answer.
    answers = [split.run(k).astype(np.int64) * 3 + k for k in range(layout.shards)]
    merged = merge(split, answers, np.int64)
    local = np.array(
        [int(x) - layout.start(s) for x, s in zip(ids, shards, strict=True)], np.int64
    )
    assert merged.tolist() == (local * 3 + np.array(shards, np.int64)).tolist()


def test_hash_layout_matches_splitmix64_on_large_ids():
    ids = np.array([0, 1, 2**31 - 1, 2**48 + 5, 2**63 - 1, 2**64 - 1], np.uint64)
    layout = Layout.hash(7)
    assert layout.shard_of(ids).tolist() == [
        reference_mix(int(x)) % 7 for x in ids.tolist()
    ]


def test_hash_layout_spreads_sequential_and_strided_ids_evenly():
    for ids in (np.arange(80_000), np.arange(0, 80_000 * 64, 64)):
        counts = np.bincount(Layout.hash(8).shard_of(ids), minlength=8)
        assert counts.min() > 0.9 * 10_000 and counts.max() < 1.1 * 10_000


def test_range_layout_puts_ids_past_the_space_in_the_last_shard():
    layout = Layout.range(3, space=30)
    assert layout.shard_of([0, 9, 10, 29, 30, 10**12]).tolist() == [0, 0, 1, 2, 2, 2]
    split, _ = layout.split(np.array([10**12, 25]))
    assert split.run(2).tolist() == [10**12 - 20, 5]


@pytest.mark.parametrize("dtype", ["int8", "int64"])
def test_split_reports_the_first_negative_id(dtype):
    ids = np.array([3, 5, -2, -7, 1], dtype)
    assert Layout.hash(3).split(ids)[1] == 2
    assert Layout.range(3, 9).split(ids)[1] == 2


def test_split_reports_the_first_id_past_the_limit_when_asked():
    ids = np.array([3, 2**31, 2**40, 1], np.int64)
    assert Layout.hash(2).split(ids, limit=2**31)[1] == 1
    assert Layout.hash(2).split(ids)[1] == -1
    huge = np.array([1, 2**63, 2**64 - 1], np.uint64)
    assert Layout.hash(2).split(huge, limit=2**63)[1] == 1


def test_first_positions_marks_each_new_member_once():
    out = np.empty(7, np.bool_)
    count = partition.first_positions(np.array([5, 1, 6, 5, 7, 6, 2]), 5, out)
    assert count == 3
    assert out.tolist() == [True, False, True, False, True, False, False]


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: Layout("tree", 2), ValueError, "by = 'tree'"),
        (lambda: Layout.hash(0), ValueError, "shards = 0"),
        (lambda: Layout.hash(2**16 + 1), ValueError, "shards = 65537"),
        (lambda: Layout.hash(2.0), TypeError, "shards must be an integer"),
        (lambda: Layout.hash(True), TypeError, "shards must be an integer"),
        (lambda: Layout.range(2, -1), ValueError, "space = -1"),
        (lambda: Layout.range(2, 1.5), TypeError, "space must be an integer"),
        (lambda: Layout("hash", 2, 5), ValueError, "no width"),
        (lambda: Layout("range", 2, 0), ValueError, "width = 0"),
    ],
)
def test_bad_layouts_raise_naming_the_value(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_layouts_compare_by_value_and_normalise_numpy_ints():
    assert Layout.hash(np.int64(4)) == Layout.hash(4)
    assert type(Layout.hash(np.int64(4)).shards) is int
    assert Layout.range(4, 100) != Layout.range(4, 101)
    assert check_shards(np.uint8(3)) == 3
